"""The doctor/check matrix on real terminal widths: names never cut, short one-line GPU headers.

The stock-stack report is rebuilt from synthetic libraries (tests/builders.py) with the names and
versions of a torch 2.14.1 CUDA-13 environment and arch sets shaped like theirs, evaluated by the
real engine for the seven GPUs of issue 11, and rendered with rich at 80, 100 and 160 columns.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from builders import BASE_FLAGS, FLAG_A, elf, entry, fatbin
from cudafit.analysis import analyze
from cudafit.binary import inspect_path
from cudafit.model import ComputeCapability, Gpu
from cudafit.report.check import check_document, render_text
from cudafit.report.matrix import gpu_columns, short_gpu_name
from cudafit.targets.interface import ScanItem

ALL = (75, 80, 86, 89, 90, 100, 103, 110, 120)
# (distribution, version, modules: each a tuple of SASS arch numbers, negative = PTX, 900 = sm_90a)
STACK: list[tuple[str, str, list[tuple[int, ...]]]] = [
    ("nvidia-cublas", "13.1.1.3", [(*ALL, -120), (75,), (120, -120)]),
    ("nvidia-cudnn-cu13", "9.24.0.43", [(100,), (75,), (80, 100, 120)]),
    ("nvidia-cufft", "12.0.0.61", [(75,)]),
    ("nvidia-cufile", "1.15.1.6", [(75, 80, 89, -89)]),
    ("nvidia-curand", "10.4.0.35", [(*ALL, -120)]),
    ("nvidia-cusolver", "12.0.4.66", [(*ALL, -120), (90, 100, 120)]),
    ("nvidia-cusparse", "12.6.3.3", [(*ALL, -120), (75, 80)]),
    ("nvidia-cusparselt-cu13", "0.8.1", [(900,), (80, 89, 120)]),
    ("nvidia-nccl-cu13", "2.30.7", [(*ALL, -120)]),
    ("nvidia-nvshmem-cu13", "3.4.5", [(*ALL, -120)]),
    ("torch", "2.14.1", [(*ALL, -120), (80, 86, 89, 90, 100, 120)]),
    ("triton", "3.8.0", [(*ALL, -120)]),
]
GPUS = [
    Gpu("NVIDIA T4", ComputeCapability(7, 5)),
    Gpu("NVIDIA A100 SXM4", ComputeCapability(8, 0)),
    Gpu("NVIDIA L4", ComputeCapability(8, 9)),
    Gpu("NVIDIA H100 SXM5", ComputeCapability(9, 0)),
    Gpu("GeForce RTX 4090", ComputeCapability(8, 9)),
    Gpu("NVIDIA B200", ComputeCapability(10, 0)),
    Gpu("GeForce RTX 5090", ComputeCapability(12, 0)),
]
HEADERS = ["T4 7.5", "A100 8.0", "L4 8.9", "H100 9.0", "RTX 4090 8.9", "B200 10.0", "RTX 5090 12.0"]


def _entries(archs: tuple[int, ...]) -> list[bytes]:
    out = []
    for a in archs:
        if a == 900:
            out.append(entry(2, 90, flags=BASE_FLAGS | FLAG_A))
        elif a < 0:
            out.append(entry(1, -a, code_version=(9, 0)))
        else:
            out.append(entry(2, a))
    return out


@pytest.fixture(scope="module")
def stock_doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("site")
    items = []
    for name, version, modules in STACK:
        pkg = root / name
        pkg.mkdir()
        for n, archs in enumerate(modules):
            path = pkg / f"lib{n}.so"
            path.write_bytes(elf([(".nv_fatbin", fatbin(*_entries(archs)))], needed=("libcudart.so.13",)))
            compiled = "triton" if name == "torch" else None
            items.append(ScanItem(name, version, str(path), inspect_path(str(path)), runtime_compiled=compiled))
    return check_document(analyze(items, GPUS))


def render(doc: dict[str, Any], width: int, *, wide: bool = False) -> str:
    buf = io.StringIO()
    render_text(doc, Console(file=buf, width=width, color_system=None, highlight=False), wide=wide)
    return buf.getvalue()


def matrix_part(out: str) -> list[str]:
    return out.split("\nWhat to do", maxsplit=1)[0].split("\n(--wide", maxsplit=1)[0].splitlines()


@pytest.mark.parametrize("width", [80, 100, 160])
def test_names_whole_and_lines_within_the_terminal(stock_doc: dict[str, Any], width: int) -> None:
    out = render(stock_doc, width)
    assert "…" not in out
    lines = matrix_part(out)
    assert all(len(line.rstrip()) <= width for line in out.splitlines()), out
    assert "--wide adds the coverage columns" in out
    for name, version, _ in STACK:
        full = f"{name} {version}"
        rows = [line for line in lines if re.match(rf"{re.escape(full)}(\s|$)", line)]
        assert rows, f"{full} not whole at {width} columns:\n{out}"
    # cusparse and cusparselt stay two different names
    assert sum(line.startswith("nvidia-cusparse 12.6.3.3") for line in lines) >= 1
    assert sum(line.startswith("nvidia-cusparselt-cu13 0.8.1") for line in lines) >= 1
    assert any("torch 2.14.1 (+triton)" in line for line in lines)


def _one_line_headers(lines: list[str]) -> set[str]:
    return {h for h in HEADERS for line in lines if line.startswith("package") and f"  {h}" in f"  {line}  "}


def test_160_columns_one_table_one_line_headers(stock_doc: dict[str, Any]) -> None:
    lines = matrix_part(render(stock_doc, 160))
    assert sum(line.startswith("package") for line in lines) == 1
    assert _one_line_headers(lines) == set(HEADERS)
    assert "native on CC" not in lines[0]  # 106 columns of matrix + 65 of coverage: no room


def test_coverage_where_there_is_room(stock_doc: dict[str, Any]) -> None:
    lines = matrix_part(render(stock_doc, 180))
    assert _one_line_headers(lines) == set(HEADERS)
    assert "native on CC" in lines[0] and "partial on CC" in lines[0]
    assert any(re.search(r"nvidia-cufile 1\.15\.1\.6 .* 7\.5 \.\. 8\.9 \(5 CCs\)\s+9\.0 \.\. 12\.1", x) for x in lines)


def test_100_columns_one_table_widest_headers_stacked(stock_doc: dict[str, Any]) -> None:
    lines = matrix_part(render(stock_doc, 100))
    header_rows = [n for n, line in enumerate(lines) if line.startswith("package")]
    assert len(header_rows) == 1
    one = _one_line_headers(lines)
    assert one == {"T4 7.5", "A100 8.0", "L4 8.9", "H100 9.0", "B200 10.0"}
    top, bottom = lines[header_rows[0] - 1], lines[header_rows[0]]
    for model, cc in (("RTX 4090", "8.9"), ("RTX 5090", "12.0")):  # model over CC, same column
        col = top.index(model)
        assert bottom[col:].startswith(cc)
    assert "native on CC" not in "\n".join(lines)


def test_80_columns_splits_the_gpus_over_tables(stock_doc: dict[str, Any]) -> None:
    lines = matrix_part(render(stock_doc, 80))
    assert sum(line.startswith("package") for line in lines) == 2  # the package column repeats
    assert _one_line_headers(lines) == set(HEADERS)


def test_wide_shows_coverage_past_the_terminal(stock_doc: dict[str, Any]) -> None:
    out = render(stock_doc, 100, wide=True)
    lines = matrix_part(out)
    assert "native on CC" in lines[0] and "JIT on CC" in lines[0]
    assert _one_line_headers(lines) == set(HEADERS)
    assert "…" not in out
    assert max(len(x.rstrip()) for x in lines) == 171  # past the terminal, as asked
    assert all(len(x.rstrip()) <= 100 for x in out.split("\nWhat to do")[1].splitlines())


@pytest.mark.parametrize(
    ("name", "short"),
    [
        ("NVIDIA T4", "T4"),
        ("Tesla T4", "T4"),
        ("Tesla V100-SXM2-16GB", "V100"),
        ("NVIDIA A100-SXM4-80GB", "A100"),
        ("NVIDIA A100-PCIE-40GB", "A100"),
        ("NVIDIA A100 80GB PCIe", "A100"),
        ("NVIDIA A100 SXM4", "A100"),
        ("NVIDIA H100 SXM5 80GB", "H100"),
        ("NVIDIA H100 80GB HBM3", "H100"),
        ("NVIDIA H100 NVL", "H100"),
        ("NVIDIA H200 NVL", "H200"),
        ("NVIDIA GeForce RTX 4090", "RTX 4090"),
        ("GeForce RTX 5090", "RTX 5090"),
        ("NVIDIA GeForce RTX 3080 Ti Laptop GPU", "RTX 3080 Ti Laptop"),
        ("NVIDIA GH200 Grace Hopper Superchip", "GH200"),
        ("NVIDIA GH200 480GB", "GH200"),
        ("NVIDIA GB300 Grace Blackwell Ultra Superchip", "GB300"),
        ("NVIDIA B300 (Blackwell Ultra)", "B300"),
        ("NVIDIA GB10 (DGX Spark)", "GB10"),
        ("NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada"),
        ("Quadro RTX 6000", "Quadro RTX 6000"),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "RTX PRO 6000 Workstation"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX PRO 6000 Server"),
        ("NVIDIA A100-SXM4-40GB MIG 3g.20gb", "A100 MIG 3g.20gb"),
        ("GeForce GTX TITAN X (Maxwell)", "GTX TITAN X"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA B200", "B200"),
        ("weird", "weird"),
    ],
)
def test_short_gpu_name(name: str, short: str) -> None:
    assert short_gpu_name(name) == short
    assert short_gpu_name(name) == short_gpu_name(name)  # deterministic


def _doc(*gpus: tuple[str, str, int | None], statuses: list[str] | None = None) -> dict[str, Any]:
    statuses = statuses or ["native"] * len(gpus)
    return {
        "gpus": [{"name": n, "compute_capability": cc, "cuda_index": i} for n, cc, i in gpus],
        "targets": [{"verdicts": [{"status": s} for s in statuses]}],
    }


def test_headers_stay_unique() -> None:
    doc = _doc(("NVIDIA H100 PCIe", "9.0", None), ("NVIDIA H100 SXM5", "9.0", None), ("NVIDIA L4", "8.9", None))
    assert [c.header for c in gpu_columns(doc)] == ["H100 PCIe 9.0", "H100 SXM5 9.0", "L4 8.9"]
    doc = _doc(("GeForce RTX 2060", "7.5", None), ("GeForce RTX 2060 12GB", "7.5", None))
    assert [c.header for c in gpu_columns(doc)] == ["RTX 2060 7.5", "RTX 2060 12GB 7.5"]
    # same model, different CC never collides: the CC is part of the header
    doc = _doc(("Quadro RTX 6000", "7.5", None), ("NVIDIA RTX 6000 Ada Generation", "8.9", None))
    assert [c.header for c in gpu_columns(doc)] == ["Quadro RTX 6000 7.5", "RTX 6000 Ada 8.9"]


def test_identical_gpus_are_one_column() -> None:
    doc = _doc(*((("NVIDIA H100 80GB HBM3", "9.0", i)) for i in range(8)), ("NVIDIA L4", "8.9", 8))
    cols = gpu_columns(doc)
    assert [(c.header, c.indexes) for c in cols] == [("8x H100 9.0", tuple(range(8))), ("L4 8.9", (8,))]


def test_no_gpu_report_keeps_names_and_coverage(stock_doc: dict[str, Any]) -> None:
    doc = {**stock_doc, "gpus": [], "actions": []}
    doc["targets"] = [{**t, "verdicts": []} for t in stock_doc["targets"]]
    out = render(doc, 80)
    assert "native on CC" in out
    for name, version, _ in STACK:
        assert any(line.startswith(f"{name} {version}") for line in out.splitlines())


def test_cli_has_wide(tmp_path: Path) -> None:
    from cudafit.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["doctor", "--wide"]).wide is True
    assert parser.parse_args(["check", "x", "--wide"]).wide is True
