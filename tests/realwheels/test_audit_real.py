"""Opt-in (CUDAFIT_REAL_WHEELS=1): ``cudafit audit`` on the real fbgemm-gpu 1.9.0 wheel against torch 2.14.1.

Seed 004 before a user meets it: the publisher's CI audits the wheel it built against the torch it is used
with, and learns which GPUs torch runs on that the wheel does not.  The torch build comes from
``CUDAFIT_TORCH_SITE`` (a site-packages with torch 2.14.1 installed, e.g. /work/envs/torch/lib/python3.11/
site-packages) or, without it, from ``pip download torch==2.14.1`` (about 1 GB, cached).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import jsonschema
import pytest
from tests.realwheels.test_real_wheels import download

pytestmark = [
    pytest.mark.realwheels,
    pytest.mark.skipif(os.environ.get("CUDAFIT_REAL_WHEELS") != "1", reason="opt-in: set CUDAFIT_REAL_WHEELS=1"),
]


def test_fbgemm_gpu_against_torch_2_14_1() -> None:
    from audit_helpers import AUDIT_SCHEMA

    whl = download("fbgemm-gpu==1.9.0")
    torch = os.environ.get("CUDAFIT_TORCH_SITE", "2.14.1")
    cmd = [sys.executable, "-m", "cudafit", "audit", str(whl), "--match-torch", torch, "--no-config", "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, AUDIT_SCHEMA)
    torch_build = doc["policy"]["match_torch"]
    assert torch_build["version"].startswith("2.14.1")
    assert torch_build["sass"] == ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0"]
    (target,) = doc["targets"]
    assert target["torch"].endswith("runs on 7.5 .. 12.0; this wheel lacks 7.5 and 12.0")
    failing = {m["path"].split("!")[1] for m in target["members"] if m["status"] == "fail"}
    assert "fbgemm_gpu/fbgemm_gpu_py.so" in failing
    assert target["fix"]["torch_cuda_arch_list"] == "7.5;8.0;8.6;9.0;10.0;12.0"


def test_fbgemm_gpu_against_the_seed_004_list() -> None:
    """The GTX 1080 Ti of seed 004 (6.1): CUDA 13 cannot build it, and the fix says which toolkit can."""
    whl = download("fbgemm-gpu==1.9.0")
    cmd = [sys.executable, "-m", "cudafit", "audit", str(whl), "--require", "6.1 7.5 8.0 8.6 9.0 10.0 12.0+PTX"]
    p = subprocess.run([*cmd, "--no-config", "--json"], capture_output=True, text=True, check=False)
    assert p.returncode == 1, p.stderr
    (target,) = json.loads(p.stdout)["targets"]
    reqs = json.loads(p.stdout)["policy"]["requirements"]
    assert [reqs[i]["label"] for i in target["missing"]] == ["6.1", "7.5", "12.0", "PTX 12.0"]
    (problem,) = target["fix"]["problems"]
    assert "cannot build sm_61" in problem and "CUDA 12.9" in problem
