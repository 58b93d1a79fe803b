"""`cudafit plan`: arch lists for mixed hosts and clusters, checked against the toolkit's targets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema

from cudafit.model import CudaVersion, parse_compute_capability
from cudafit.plan import make_plan, toolkit_targets_for

ROOT = Path(__file__).parent.parent
NVCC_13_0 = (Path(__file__).parent / "fakes" / "nvcc_13_0_list_gpu_code.txt").read_text().split()
SCHEMA = json.loads((ROOT / "src/cudafit/schema/plan.json").read_text())


def cc(text: str):  # type: ignore[no-untyped-def]
    return parse_compute_capability(text)


def test_seed_001_mixed_host() -> None:
    plan = make_plan([("RTX 2080", cc("7.5")), ("RTX 3090", cc("8.6"))], targets=NVCC_13_0, toolkit="nvcc 13.0")
    assert plan.torch_cuda_arch_list == "7.5;8.6+PTX"
    assert plan.cmake_cuda_architectures == "75-real;86"
    assert plan.nvcc_flags == (
        "-gencode arch=compute_75,code=sm_75",
        "-gencode arch=compute_86,code=sm_86",
        "-gencode arch=compute_86,code=compute_86",
    )
    no_ptx = make_plan([("a", cc("8.6")), ("b", cc("7.5"))], targets=NVCC_13_0, toolkit="t", ptx=False)
    assert no_ptx.torch_cuda_arch_list == "7.5;8.6"  # the seed's fix: TORCH_CUDA_ARCH_LIST="7.5 8.6"
    jsonschema.validate(plan.to_dict(), SCHEMA)


def test_unbuildable_targets_are_problems() -> None:
    plan = make_plan([("GTX 1080 Ti", cc("6.1"))], targets=NVCC_13_0, toolkit="nvcc 13.0")
    assert plan.problems
    assert "sm_61" in plan.problems[0]
    label, targets = toolkit_targets_for(CudaVersion(12, 6))
    ok = make_plan([("GTX 1080 Ti", cc("6.1"))], targets=targets, toolkit=label)
    assert ok.problems == ()
    assert ok.torch_cuda_arch_list == "6.1+PTX"


def test_arch_specific_only_when_asked() -> None:
    _label, targets = toolkit_targets_for(CudaVersion(13, 0))
    plain = make_plan([("H100", cc("9.0"))], targets=targets, toolkit="13.0")
    assert "a" not in plain.torch_cuda_arch_list
    spec = make_plan([("H100", cc("9.0"))], targets=targets, toolkit="13.0", arch_specific=True)
    assert spec.nvcc_flags[0] == "-gencode arch=compute_90a,code=sm_90a"
    assert "9.0+PTX" in spec.torch_cuda_arch_list  # the a code runs only on 9.0: keep portable PTX


def test_cli() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "cudafit", "plan", "--gpu", "2080", "--gpu", "3090", "--cuda", "13.0", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 0
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["torch_cuda_arch_list"] == "7.5;8.6+PTX"
    p = subprocess.run([sys.executable, "-m", "cudafit", "plan"], capture_output=True, text=True, check=False)
    assert p.returncode == 2
