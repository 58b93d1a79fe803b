"""GPUs below compute capability 3.5 (scripts/reference/): the old cards whose owners meet "no kernel image" most.

Their names resolve, their compute capabilities carry limits and toolkits, the rules judge code for them the same way
as for newer GPUs, and a fix never sends such a GPU to a PyTorch index whose builds cannot run on it."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from cudafit.explain import explain_text
from cudafit.explain.grounders.kernels import _pre_turing_torch_fix
from cudafit.model import ArchVariant, ComputeCapability
from cudafit.rules import tables
from cudafit.rules.compat import CodeKind, code_runs_on
from cudafit.rules.gpus import UnknownGpuError, resolve_gpu

LEGACY = Path(__file__).resolve().parent.parent / "scripts" / "reference"


@pytest.mark.parametrize(
    ("query", "cc"),
    [
        ("GeForce GTX 680", "3.0"),
        ("gtx680", "3.0"),
        ("NVIDIA GRID K520", "3.0"),
        ("k520", "3.0"),
        ("Quadro K4000", "3.0"),
        ("Tesla M2075", "2.0"),
        ("GeForce GT 730", "3.5"),
        ("GT 730 DDR3", "2.1"),
        ("GeForce GTX 280", "1.3"),
        ("Jetson TK1", "3.2"),
        ("Quadro M1000M", "5.0"),  # on NVIDIA's list, missing from the shared table
        ("P3000", "6.1"),
        ("Orin (nvgpu)", "8.7"),  # torch's device name on a Jetson: the driver's name in brackets
        ("3.0", "3.0"),
        ("sm_21", "2.1"),
    ],
)
def test_legacy_names_and_capabilities_resolve(query: str, cc: str) -> None:
    assert str(resolve_gpu(query).compute_capability) == cc


def test_a_name_two_dies_share_is_ambiguous_not_guessed() -> None:
    with pytest.raises(UnknownGpuError, match="ambiguous"):
        resolve_gpu("GT 640")


def test_every_legacy_row_is_in_the_packaged_tables_with_a_source() -> None:
    t = tables.load_tables()
    packaged = {g["name"]: g for g in t.gpus}
    with open(LEGACY / "legacy_gpus.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) > 200
    for row in rows:
        assert packaged[row["name"]]["compute_capability"] == row["compute_capability"]
        assert row["source"]
    aliases = [a for g in t.gpus for a in g["aliases"]]
    assert len(aliases) == len(set(aliases))  # an alias names one product


def test_legacy_limits_and_toolkits() -> None:
    kepler, fermi, tesla = (tables.cc_limits(ComputeCapability(*cc)) for cc in ((3, 0), (2, 1), (1, 3)))
    assert kepler is not None and fermi is not None and tesla is not None
    assert (kepler.max_registers_per_thread, kepler.max_threads_per_sm, kepler.last_cuda_toolkit) == (63, 2048, "10.2")
    assert (fermi.max_static_shared_memory_per_block, fermi.max_threads_per_sm, fermi.last_cuda_toolkit) == (
        49152,
        1536,
        "8.0",
    )
    assert (tesla.max_static_shared_memory_per_block, tesla.max_threads_per_block) == (16384, 512)
    assert tables.is_tegra(ComputeCapability(3, 2))


def test_code_for_a_legacy_gpu_is_judged_by_the_same_rules() -> None:
    gtx680 = ComputeCapability(3, 0)
    assert code_runs_on(CodeKind.SASS, 30, ArchVariant.NONE, gtx680)[0] == "sass-exact"
    why = code_runs_on(CodeKind.SASS, 35, ArchVariant.NONE, gtx680)[1]
    assert why is not None and why.code == "sass-minor-too-high"  # a K40 build does not run on a GTX 680
    assert code_runs_on(CodeKind.PTX, 30, ArchVariant.NONE, ComputeCapability(3, 5))[0] == "ptx-jit"
    why = code_runs_on(CodeKind.SASS, 30, ArchVariant.NONE, ComputeCapability(3, 2))[1]
    assert why is not None and why.code == "tegra-no-binary-compat"


@pytest.mark.parametrize(
    ("cc", "expected", "absent"),
    [
        (ComputeCapability(6, 1), "whl/cu126", "no PyTorch CUDA index"),
        (ComputeCapability(3, 7), "whl/cu118", "cu126"),
        # PyTorch's CUDA 11.8 wheels carry sm_37, not sm_35: no index for a GTX 780
        (ComputeCapability(3, 5), "no PyTorch CUDA index", "--index-url"),
        (ComputeCapability(3, 0), "CUDA 10.2 was the last toolkit", "--index-url"),
        (ComputeCapability(2, 0), "CUDA 8.0 was the last toolkit", "--index-url"),
    ],
)
def test_the_pytorch_fix_names_an_index_whose_builds_can_run_there(
    cc: ComputeCapability, expected: str, absent: str
) -> None:
    fix = _pre_turing_torch_fix(cc)
    assert expected in fix
    assert absent not in fix


def test_explain_names_a_legacy_gpu_and_sends_it_to_no_index() -> None:
    text = (
        "GPU 0: NVIDIA GeForce GTX 680\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    )
    finding = explain_text(text)[0]
    assert finding.category == "no-kernel-image"
    assert finding.evidence.get("gpus") == [{"name": "NVIDIA GeForce GTX 680", "compute_capability": "3.0"}]
    fixes = " ".join(finding.fixes)
    assert "download.pytorch.org" not in fixes
    assert "CUDA 10.2 was the last toolkit" in fixes
