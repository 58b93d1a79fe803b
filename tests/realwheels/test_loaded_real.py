"""Opt-in (CUDAFIT_REAL_WHEELS=1): TensorFlow 2.20.0's modules it loads itself, on the real wheel.

Downloads tensorflow 2.20.0 (620 MB; cached like the other real-wheel tests) and extracts it (1.4 GB, under
the cache directory, once).  Checks that:

* the wheel and the extracted directory give identical verdicts on nine GPUs (6.1 ... 12.0), and those are
  the verdicts recorded in tests/data/tensorflow-2.20.0.shape.json (RTX 5090 and B200 fail naming the
  library-loaded kernels and their sm_90a PTX; H100 runs);
* the recorded shape is still what the wheel holds (``CUDAFIT_RECORD=1`` rewrites it);
* sliced out of ``.rodata`` (tests/fixtures/slice_fatbins.py), the first 40 fatbins equal cuobjdump's dump
  of each slice, and their PTX targets equal the ``.target`` lines of ``cuobjdump -ptx``.
"""

from __future__ import annotations

import collections
import json
import mmap
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from tests.realwheels.test_real_wheels import CACHE, download

from cudafit.binary import EntryKind, inspect_path

pytestmark = [
    pytest.mark.realwheels,
    pytest.mark.skipif(os.environ.get("CUDAFIT_REAL_WHEELS") != "1", reason="opt-in: set CUDAFIT_REAL_WHEELS=1"),
]

FIXTURES = Path(__file__).parent.parent / "fixtures"
SHAPE_FILE = Path(__file__).parent.parent / "data" / "tensorflow-2.20.0.shape.json"
SHAPE: dict[str, Any] = json.loads(SHAPE_FILE.read_text())
GPUS = SHAPE["verdicts"]["gpus"]

sys.path.insert(0, str(FIXTURES))
from make_expected import parse_cuobjdump_dump  # noqa: E402
from slice_fatbins import iter_slices, section_bounds  # noqa: E402


@pytest.fixture(scope="module")
def wheel() -> Path:
    return download("tensorflow==2.20.0")


@pytest.fixture(scope="module")
def extracted(wheel: Path) -> Path:
    root = CACHE / "tensorflow-2.20.0-extracted"
    if not (root / ".complete").exists():
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(root)
        (root / ".complete").write_text("")
    return root


def _check(target: Path) -> dict[str, Any]:
    args = [sys.executable, "-m", "cudafit", "check", "--json", "--no-probe", "--no-cache"]
    for g in GPUS:
        args += ["--gpu", g]
    p = subprocess.run([*args, str(target)], capture_output=True, text=True, check=False)
    assert "Traceback" not in p.stderr, p.stderr
    doc: dict[str, Any] = json.loads(p.stdout)
    return doc


def test_wheel_and_directory_agree_on_nine_gpus(wheel: Path, extracted: Path) -> None:
    from_wheel = _check(wheel)["targets"][0]
    from_dir = _check(extracted)["targets"][0]
    statuses = [v["status"] for v in from_wheel["verdicts"]]
    assert statuses == [v["status"] for v in from_dir["verdicts"]] == SHAPE["verdicts"]["status"]
    for doc in (from_wheel, from_dir):
        for cc, v in zip(GPUS, doc["verdicts"], strict=True):
            why = {r["code"]: r["message"] for r in v["reasons"]}
            if cc in ("10.0", "12.0"):
                assert "compute_90a (arch-specific PTX" in why["library-loaded-all-holes"]
                assert (
                    "1,149 modules the library loads itself (cuModuleLoadData, from .rodata)"
                    in why["library-loaded-all-holes"]
                )
    for doc in (from_wheel, from_dir):  # the kernels are named from their cubins' symbol tables
        named = {r["code"]: r["message"] for r in doc["verdicts"][-1]["reasons"]}["library-loaded-all-holes"]
        assert "Cast_GPU_DT_BOOL_DT_INT8_kernel" in named
    assert from_wheel["fallbacks"] == [] and from_dir["fallbacks"] == []


def test_recorded_shape_is_what_the_wheel_holds(extracted: Path) -> None:
    files: dict[str, Any] = {}
    for p in sorted(extracted.rglob("*")):
        if not p.is_file() or p.is_symlink() or p.name == ".complete":
            continue
        f = inspect_path(p)
        if not f.modules:
            continue
        groups: collections.Counter[tuple[Any, ...]] = collections.Counter()
        for m in f.modules:
            sig = tuple(
                (e.kind.value, e.arch_number, e.variant.value, tuple(e.code_version), bool(e.header_said))
                for e in m.entries
            )
            groups[(m.section, m.loaded, sig)] += 1
        files[str(p.relative_to(extracted))] = {
            "module_loaders": list(f.module_loaders),
            "needed_cudart": [n for n in f.needed if n.startswith("libcudart")],
            "groups": [
                {
                    "section": s,
                    "loaded": ld,
                    "count": n,
                    "entries": [[k, a, v, list(cv), hs] for k, a, v, cv, hs in sig],
                }
                for (s, ld, sig), n in groups.most_common()
            ],
        }
    if os.environ.get("CUDAFIT_RECORD") == "1":
        SHAPE_FILE.write_text(json.dumps({**SHAPE, "files": files}, indent=1) + "\n")
    assert files == SHAPE["files"]


def _cuobjdump() -> str:
    import nvidia

    for base in nvidia.__path__:
        for cand in Path(base).glob("cu*/bin/cuobjdump"):
            return str(cand)
    pytest.skip("nvidia-cuda-cuobjdump is not installed")


def test_sliced_blobs_equal_cuobjdump(extracted: Path, tmp_path: Path) -> None:
    lib = extracted / "tensorflow" / "libtensorflow_cc.so.2"
    tool = _cuobjdump()
    # mapped, not read: a 1 GB bytes object in pytest would count in the RSS of every process forked after it
    with open(lib, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        _compare_slices(data, lib, tool, tmp_path)


def _compare_slices(data: mmap.mmap, lib: Path, tool: str, tmp_path: Path) -> None:
    start, size = section_bounds(data, ".rodata")
    slices = iter_slices(data, start, start + size)
    facts = inspect_path(lib)
    loaded = {m.offset: m for m in facts.loaded_modules}
    assert len(slices) == len(loaded) == 1149
    for n, (off, length) in enumerate(slices[:40]):
        module = loaded[off]
        assert module.size == length
        blob = tmp_path / f"{n:04d}.fatbin"
        blob.write_bytes(data[off : off + length])
        dump = subprocess.run([tool, str(blob)], capture_output=True, text=True, check=True).stdout
        text = subprocess.run([tool, "-ptx", str(blob)], capture_output=True, text=True, check=True).stdout
        header = [
            (e.kind.value, (e.header_said or e.arch_name).split(" ")[0], e.compression.value != "none")
            for e in module.entries
        ]
        assert header == [(r["kind"], r["arch"], r["compressed"]) for r in parse_cuobjdump_dump(dump)]
        targets = ["compute_" + ln.split()[1][3:] for ln in text.splitlines() if ln.startswith(".target ")]
        assert [e.arch_name for e in module.entries if e.kind is EntryKind.PTX] == targets == ["compute_90a"]


def test_the_import_check_equals_reading_every_import(extracted: Path) -> None:
    """On every ELF file of the wheel (81: shims defining the loaders, C++ libraries with 10,000 imports,
    small Python extensions), the check (string-table search or C-level gather, binary/loaders.py) finds
    what reading each undefined symbol's name finds; only libtensorflow_cc.so.2 imports a loader."""
    from cudafit.binary._elf import read_elf_header, read_sections
    from cudafit.binary.loaders import module_loaders

    sys.path.insert(0, str(Path(__file__).parent.parent))
    from test_loaded_modules import _reference_loaders

    found = {}
    for path in sorted(extracted.rglob("*.so*")):
        if not path.is_file():
            continue
        with path.open("rb") as fh:
            if fh.read(4) != b"\x7fELF":
                continue
            buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        with buf:
            hdr = read_elf_header(buf, 0, len(buf))
            sections = read_sections(buf, hdr, 0, len(buf))
            dynsym = next((s for s in sections if s.type == 11), None)
            if dynsym is None:
                continue
            count = dynsym.size // (24 if hdr.bits == 64 else 16)
            gnu = next((s for s in sections if s.type == 0x6FFFFFF6), None)
            head = int.from_bytes(buf[gnu.offset + 4 : gnu.offset + 8], "little") if gnu else count
            expected = _reference_loaders(buf, dynsym, sections[dynsym.link], head, hdr.bits)
            assert module_loaders(buf, sections, hdr.bits) == expected, path
            found[path.name] = expected
    assert len(found) > 50
    assert {name: got for name, got in found.items() if got} == {"libtensorflow_cc.so.2": ("cuModuleLoadData",)}
