"""`cudafit plan`: arch lists for mixed hosts and clusters, checked against the toolkit's targets."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import jsonschema
import pytest

from cudafit.cli import main
from cudafit.model import ComputeCapability, CudaVersion, Gpu, parse_compute_capability
from cudafit.plan import make_plan, query_nvcc, toolkit_targets_for, toolkits_targeting

ROOT = Path(__file__).parent.parent
FAKES = Path(__file__).parent / "fakes"
# Recorded from /usr/local/cuda/bin/nvcc 13.0 (V13.0.88).
NVCC_13_0 = (FAKES / "nvcc_13_0_list_gpu_code.txt").read_text().split()
SCHEMA = json.loads((ROOT / "src/cudafit/schema/plan.json").read_text())


def cc(text: str) -> ComputeCapability:
    return parse_compute_capability(text)


def fake_nvcc_13_0(list_gpu_code_rc: int = 0):  # type: ignore[no-untyped-def]
    """A runner that answers like the recorded nvcc 13.0 (fake: replays real output)."""
    calls: list[list[str]] = []

    def run(cmd: Sequence[str], timeout: float) -> tuple[int, str, str]:
        calls.append(list(cmd))
        if cmd[1] == "--version":
            return 0, (FAKES / "nvcc_13_0_version.txt").read_text(), ""
        if list_gpu_code_rc:
            return list_gpu_code_rc, "", "nvcc fatal   : Unknown option '--list-gpu-code'"
        return 0, (FAKES / "nvcc_13_0_list_gpu_code.txt").read_text(), ""

    return run, calls


def test_seed_001_mixed_host() -> None:
    plan = make_plan([Gpu("RTX 2080", cc("7.5")), Gpu("RTX 3090", cc("8.6"))], targets=NVCC_13_0, toolkit="nvcc 13.0")
    assert plan.torch_cuda_arch_list == "7.5;8.6+PTX"
    assert plan.cmake_cuda_architectures == "75-real;86"
    assert plan.nvcc_flags == (
        "-gencode arch=compute_75,code=sm_75",
        "-gencode arch=compute_86,code=sm_86",
        "-gencode arch=compute_86,code=compute_86",
    )
    assert plan.problems == ()
    no_ptx = make_plan([Gpu("a", cc("8.6")), Gpu("b", cc("7.5"))], targets=NVCC_13_0, toolkit="t", ptx=False)
    assert no_ptx.torch_cuda_arch_list == "7.5;8.6"  # the seed's fix: TORCH_CUDA_ARCH_LIST="7.5 8.6"
    assert no_ptx.cmake_cuda_architectures == "75-real;86-real"
    assert "a newer GPU fails with 'no kernel image'" in no_ptx.explanations[-1]
    jsonschema.validate(plan.to_dict(), SCHEMA)


def test_cluster_list_dedupes_and_sorts() -> None:
    gpus = [Gpu("H100", cc("9.0")), Gpu("A100", cc("8.0")), Gpu("A100 #2", cc("8.0")), Gpu("L4", cc("8.9"))]
    plan = make_plan(gpus, targets=NVCC_13_0, toolkit="nvcc 13.0")
    assert plan.torch_cuda_arch_list == "8.0;8.9;9.0+PTX"
    assert plan.cmake_cuda_architectures == "80-real;89-real;90"
    assert "native code for A100, A100 #2 (8.0)" in plan.explanations[0]
    assert "also runs on later 8.x GPUs" in plan.explanations[0]


def test_unbuildable_targets_are_problems() -> None:
    plan = make_plan([Gpu("GTX 1080 Ti", cc("6.1"))], targets=NVCC_13_0, toolkit="nvcc 13.0")
    assert plan.torch_cuda_arch_list == ""
    (problem,) = plan.problems
    assert "nvcc 13.0 cannot build sm_61 for GTX 1080 Ti (6.1)" in problem
    assert "CUDA 12.9" in problem
    assert "cudafit plan --cuda 12.9" in problem
    label, targets = toolkit_targets_for(CudaVersion(12, 6))
    ok = make_plan([Gpu("GTX 1080 Ti", cc("6.1"))], targets=targets, toolkit=label)
    assert ok.problems == ()
    assert ok.torch_cuda_arch_list == "6.1+PTX"
    assert toolkits_targeting("sm_61")[-1] == CudaVersion(12, 9)
    assert toolkits_targeting("sm_88") == tuple(c for c in toolkits_targeting("sm_75") if c >= CudaVersion(13, 0))


def test_arch_specific_only_when_asked() -> None:
    _label, targets = toolkit_targets_for(CudaVersion(13, 0))
    plain = make_plan([Gpu("H100", cc("9.0"))], targets=targets, toolkit="13.0")
    assert "a" not in plain.torch_cuda_arch_list
    spec = make_plan([Gpu("H100", cc("9.0"))], targets=targets, toolkit="13.0", arch_specific="a")
    assert spec.nvcc_flags == (
        "-gencode arch=compute_90a,code=sm_90a",
        "-gencode arch=compute_90,code=compute_90",
    )
    assert spec.torch_cuda_arch_list == "9.0a;9.0+PTX"  # the a code runs only on 9.0: keep portable PTX
    assert spec.cmake_cuda_architectures == "90a-real;90-virtual"
    assert any("runs on exactly 9.0" in x for x in spec.explanations)
    # nvcc 13.0's list has no a-variants (nvcc --list-gpu-code omits them): plain code, and it says so.
    listed_only = make_plan([Gpu("H100", cc("9.0"))], targets=NVCC_13_0, toolkit="13.0", arch_specific=True)
    assert listed_only.torch_cuda_arch_list == "9.0+PTX"
    assert any("no 'a' targets" in x for x in listed_only.explanations)


def test_family_targets_cover_the_family() -> None:
    _label, targets = toolkit_targets_for(CudaVersion(13, 0))
    gpus = [Gpu("B200", cc("10.0")), Gpu("B300", cc("10.3")), Gpu("H100", cc("9.0"))]
    plan = make_plan(gpus, targets=targets, toolkit="13.0", arch_specific="f")
    assert plan.nvcc_flags == (
        "-gencode arch=compute_90,code=sm_90",  # there is no sm_90f
        "-gencode arch=compute_100f,code=sm_100f",
        "-gencode arch=compute_100,code=compute_100",
    )
    assert "native code for B200, B300 (10.0)" in plan.explanations[1]
    assert "also covers 10.3" in plan.explanations[1]


def test_query_nvcc_with_recorded_output() -> None:
    run, calls = fake_nvcc_13_0()
    info = query_nvcc("/opt/cuda/bin/nvcc", run)
    assert calls == [["/opt/cuda/bin/nvcc", "--version"], ["/opt/cuda/bin/nvcc", "--list-gpu-code"]]
    assert info.version == "13.0"
    assert info.source == "nvcc --list-gpu-code"
    assert info.targets[: len(NVCC_13_0)] == tuple(NVCC_13_0)
    assert "sm_90a" in info.targets  # from the table: --list-gpu-code omits a/f variants
    assert "sm_100f" in info.targets
    run, _calls = fake_nvcc_13_0(list_gpu_code_rc=1)
    old = query_nvcc("nvcc", run)
    assert old.source.startswith("rules table for CUDA 13.0 (--list-gpu-code: nvcc fatal")
    assert "sm_75" in old.targets
    assert "sm_61" not in old.targets

    def broken(cmd: Sequence[str], timeout: float) -> tuple[int, str, str]:
        return 127, "", "not found"

    assert query_nvcc("nvcc", broken).problem == "not found"


def test_cli_json_markdown_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--gpu", "2080", "--gpu", "3090", "--cuda", "13.0", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, SCHEMA)
    assert doc["torch_cuda_arch_list"] == "7.5;8.6+PTX"
    assert doc["toolkit"] == "CUDA 13.0 (rules table)"
    assert main(["plan", "--gpu", "2080", "--gpu", "3090", "--cuda", "13.0", "--no-ptx", "--markdown"]) == 0
    md = capsys.readouterr().out
    assert 'export TORCH_CUDA_ARCH_LIST="7.5;8.6"' in md
    assert "nvcc -gencode arch=compute_75,code=sm_75 -gencode arch=compute_86,code=sm_86 ..." in md
    assert main(["plan", "--gpu", "1080 Ti", "--gpu", "3090", "--cuda", "13.0", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["torch_cuda_arch_list"] == "8.6+PTX"
    assert "sm_61" in doc["problems"][0]
    assert main(["plan", "--gpu", "1080 Ti", "--cuda", "12.6", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["torch_cuda_arch_list"] == "6.1+PTX"
    assert main(["plan", "--gpu", "2080", "--gpu", "3090", "--cuda", "13.0"]) == 0
    text = capsys.readouterr().out
    assert 'export TORCH_CUDA_ARCH_LIST="7.5;8.6+PTX"' in text
    assert "checked against CUDA 13.0 (rules table)" in text
    assert main(["plan"]) == 2
    assert main(["plan", "--gpu", "no such gpu 12345", "--cuda", "13.0"]) == 2
    assert main(["plan", "--gpu", "3090", "--cuda", "banana"]) == 2
    assert main(["plan", "--gpu", "3090", "--nvcc", "/nonexistent/nvcc"]) == 2
    capsys.readouterr()


NVCC = Path("/usr/local/cuda/bin/nvcc")


@pytest.mark.skipif(not NVCC.is_file(), reason="needs a real nvcc")
def test_cli_with_a_real_nvcc(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--gpu", "2080", "--gpu", "3090", "--nvcc", str(NVCC), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["toolkit"].startswith("nvcc ")
    assert doc["torch_cuda_arch_list"] == "7.5;8.6+PTX"
