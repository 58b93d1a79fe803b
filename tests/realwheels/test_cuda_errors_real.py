"""Opt-in (CUDAFIT_REAL_WHEELS=1): the committed CUDA error inventory is what NVIDIA's runtime wheels say.

scripts/record_cuda_errors.py re-reads the enums of driver_types.h / cuda.h and libcudart's string table
from nvidia-cuda-runtime-cu12 12.9.79, nvidia-cuda-runtime 13.0.96 and 13.5.37 (about 3 MB each) and must
produce src/cudafit/explain/data/cuda_errors.json byte for byte; where a CUDA toolkit is installed, its
headers must name no error the recording lacks.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.realwheels,
    pytest.mark.skipif(os.environ.get("CUDAFIT_REAL_WHEELS") != "1", reason="opt-in: set CUDAFIT_REAL_WHEELS=1"),
]

ROOT = Path(__file__).parents[2]
TOOLKIT = Path("/usr/local/cuda/include")


def test_recording_matches_the_committed_inventory() -> None:
    cmd = [sys.executable, str(ROOT / "scripts" / "record_cuda_errors.py"), "--check"]
    if (TOOLKIT / "cuda.h").is_file():
        cmd += ["--include", str(TOOLKIT)]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "up to date" in p.stdout
