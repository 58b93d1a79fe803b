"""explain looks up the failing op/kernel among the modules without code for the GPU (issue 11, part 3)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema

from cudafit.explain import Context
from cudafit.explain.classify import classify
from cudafit.explain.ground import KernelGap, ground, match_kernel_gaps
from cudafit.model import Gpu, parse_compute_capability
from cudafit.rules.status import Status

BIN = Path(__file__).parent / "fixtures" / "bin"
SCHEMA = json.loads((Path(__file__).parent.parent / "src/cudafit/schema/explain.json").read_text())
SGLANG = "RuntimeError: GemmaRMSNorm failed with error code no kernel image is available for execution on the device"


def gap(kernels: tuple[str, ...], status: Status = Status.SPECIALISED, cc: str = "7.5") -> KernelGap:
    return KernelGap(
        "sgl-kernel",
        "sgl_kernel/common_ops.abi3.so",
        12,
        parse_compute_capability(cc),
        status,
        "specialised-newer",
        ("sm_80", "sm_86", "sm_90"),
        kernels,
    )


def test_names_match_without_case_or_punctuation() -> None:
    gaps = [gap(("void gemma_rmsnorm_kernel<float>(float*, int)",)), gap(("fused_add_rmsnorm(float*)",))]
    (hit,) = match_kernel_gaps(["GemmaRMSNorm"], gaps)
    assert hit[1] == ["void gemma_rmsnorm_kernel<float>(float*, int)"]
    assert match_kernel_gaps(["norm.cuh", "kernel", "Add"], gaps) == []  # too short or generic: no guess
    assert match_kernel_gaps(["csrc/gemma_rmsnorm.cu"], gaps)[0][0] is gaps[0]  # a source file by its stem


def test_holes_come_before_specialised_modules() -> None:
    gaps = [gap(("gemma_rmsnorm_a",)), gap(("gemma_rmsnorm_b",), status=Status.FAILS)]
    assert [g.status for g, _ in match_kernel_gaps(["gemma_rmsnorm"], gaps)] == ["fails", "specialised"]


def test_sglang_report_names_the_module_and_its_archs() -> None:
    """sglang: gemma_rmsnorm built for 8.0+ and launched on an RTX 2080 (7.5)."""
    ctx = Context(
        gpus=(Gpu("GeForce RTX 2080", parse_compute_capability("7.5")),),
        kernel_gaps=(gap(("gemma_rmsnorm_kernel(float*)",)),),
    )
    f = ground(classify(SGLANG), ctx)[0]
    assert f.category == "no-kernel-image"
    assert f.cause.startswith("the failing kernel is gemma_rmsnorm_kernel(float*) in sgl_kernel/common_ops.abi3.so")
    assert "sm_80, sm_86, sm_90: nothing for 7.5" in f.cause
    assert f.evidence["kernel_matches"][0]["module"] == 12
    assert f.fixes[0].startswith("sgl-kernel launched this kernel on 7.5")
    # a gap for another GPU does not match
    other = Context(
        gpus=(Gpu("H100", parse_compute_capability("9.0")),), kernel_gaps=(gap(("gemma_rmsnorm_kernel(float*)",)),)
    )
    assert "kernel_matches" not in ground(classify(SGLANG), other)[0].evidence


def _explain_path(tmp_path: Path, text: str) -> dict[str, Any]:
    """``cudafit explain --path`` on a copy of the nvcc-built libroles.so, for an H100: its JSON document."""
    shutil.copy(BIN / "libroles.so", tmp_path / "libroles.so")
    cmd = [sys.executable, "-m", "cudafit", "explain", "--no-probe", "--gpu", "H100", "--path", str(tmp_path)]
    p = subprocess.run(
        [*cmd, "--json", text],
        capture_output=True,
        text=True,
        check=False,
        env={"CUDAFIT_NO_CACHE": "1", "PATH": "/usr/bin:/bin"},
    )
    assert p.returncode == 0, p.stderr
    doc: dict[str, Any] = json.loads(p.stdout)
    return doc


def test_cli_looks_up_a_path(tmp_path: Path) -> None:
    """The nvcc-built libroles.so has gemma_rmsnorm_like in a module built for 7.5, 8.0, 10.0: a hole on an H100."""
    doc = _explain_path(tmp_path, SGLANG)
    jsonschema.validate(doc, SCHEMA)
    (match,) = doc["findings"][0]["evidence"]["kernel_matches"]
    assert (match["status"], match["reason"], match["archs"]) == (
        "fails",
        "hole-build-skips-gpu",
        ["sm_75", "sm_80", "sm_100"],
    )
    assert "gemma_rmsnorm_like" in match["kernels"][0]


def test_cli_missing_path_is_a_usage_error() -> None:
    cmd = [sys.executable, "-m", "cudafit", "explain", "--no-probe", "--gpu", "T4", "--path", "/nonexistent/x", SGLANG]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert p.returncode == 2
    assert "no such file or directory" in p.stderr
    assert "Traceback" not in p.stderr


def test_cli_path_lookup_ignores_the_packages_the_log_names(tmp_path: Path) -> None:
    """With --path the user says where to look: a site-packages path in the log must not filter it away."""
    log = SGLANG + '\n  File "/venv/lib/python3.11/site-packages/mylib/ops.py", line 3, in rmsnorm'
    findings = _explain_path(tmp_path, log)["findings"]
    assert any("kernel_matches" in f["evidence"] for f in findings)
