"""Opt-in (CUDAFIT_REAL_WHEELS=1): the verdict table of docs/rules.md ("Real libraries") on the real wheels.

Each wheel is downloaded (pip download --no-deps, cached like the other real-wheel tests), unpacked into a
temporary site-packages and judged by the same path ``doctor`` takes; the torch stack is judged where
``CUDAFIT_TORCH_SITE`` points (a site-packages holding torch 2.14.1 and its nvidia-* wheels).  The result must
equal the table the recorded shapes give in CI (tests/test_roles_libraries.py).
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest
from tests.realwheels.test_real_wheels import download
from tests.test_roles_libraries import documented_table, table_gpus

from cudafit.analysis import analyze
from cudafit.model import Gpu
from cudafit.targets.cache import scan_cache
from cudafit.targets.env import EnvironmentTarget

pytestmark = [
    pytest.mark.realwheels,
    pytest.mark.skipif(os.environ.get("CUDAFIT_REAL_WHEELS") != "1", reason="opt-in: set CUDAFIT_REAL_WHEELS=1"),
]

WHEELS = {
    "vllm-0.33.0": "vllm==0.33.0",
    "sgl-kernel-0.3.21": "sgl-kernel==0.3.21",
    "xformers-0.0.33.post1": "xformers==0.0.33.post1",
    "torch-2.8.0": "torch==2.8.0",
    "torchao-0.18.0": "torchao==0.18.0",
    "flashinfer-cubin-0.6.13": "flashinfer-cubin==0.6.13",
    "fbgemm-gpu-1.9.0": "fbgemm-gpu==1.9.0",
    "onnxruntime-gpu-1.31.1": "onnxruntime-gpu==1.31.1",
    "cupy-cuda13x-14.2.0": "cupy-cuda13x==14.2.0",
    "bitsandbytes-0.50.2": "bitsandbytes==0.50.2",
}


def judge(site: str, gpus: list[Gpu]) -> dict[str, list[str]]:
    with scan_cache():
        analysis = analyze(list(EnvironmentTarget([site]).iter_items()), gpus, include_coverage=False)
    return {f"{p.name} {p.version}": [v.status.value for v in p.verdicts] for p in analysis.packages}


@pytest.mark.parametrize("label", sorted(WHEELS))
def test_real_wheel_matches_the_table(label: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BNB_CUDA_VERSION", "130")  # the table pairs bitsandbytes with torch 2.14.1 (CUDA 13.0)
    with zipfile.ZipFile(download(WHEELS[label])) as zf:
        zf.extractall(tmp_path)
    assert judge(str(tmp_path), table_gpus()) == documented_table()[label]


@pytest.mark.skipif(
    not os.environ.get("CUDAFIT_TORCH_SITE"), reason="set CUDAFIT_TORCH_SITE to torch 2.14.1's site-packages"
)
def test_torch_stack_matches_the_table() -> None:
    got = judge(os.environ["CUDAFIT_TORCH_SITE"], table_gpus())
    assert got == documented_table()["torch-2.14.1-stack"]
