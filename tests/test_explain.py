"""`cudafit explain`: every catalogue category, noisy logs, unknown, and grounding on a machine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from cudafit.explain import CATEGORIES, Context, classify, extract_facts, ground
from cudafit.model import parse_compute_capability

SCHEMA = json.loads((Path(__file__).parent.parent / "src/cudafit/schema/explain.json").read_text())

# (message, expected category): seed messages and NVIDIA's own strings (fatbin_spec.md §E.5).
CASES = [
    ("RuntimeError: CUDA error: no kernel image is available for execution on the device", "no-kernel-image"),  # 004
    ("cudaErrorNoKernelImageForDevice", "no-kernel-image"),
    (
        "UserWarning: NVIDIA GeForce GTX 1080 Ti with CUDA capability sm_61 is not compatible with the current "
        "PyTorch installation.",
        "no-kernel-image",
    ),
    (
        "FATAL: kernel fmha_cutlassF_f16_aligned_64x128_rf_sm80 is for sm80-sm100, but was built for sm75",
        "ptx-jit-lower-arch",
    ),
    (
        "CUDA error: no kernel image is available for execution on the device\nkernels built for sm_90a only",
        "arch-specific-mismatch",
    ),
    ("RuntimeError: FlashInfer requires sm75+", "capability-guard"),  # seed 000
    ("RuntimeError: FlashAttention only supports Ampere GPUs or newer.", "capability-guard"),
    ("RuntimeError: CUDA error: invalid device function", "mixed-gpu"),
    ("CUDA error: the provided PTX was compiled with an unsupported toolchain.", "ptx-too-new-for-driver"),
    ("ptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'", "jit-toolchain-too-old"),
    ("nvcc fatal   : Unsupported gpu architecture 'compute_120'", "jit-toolchain-too-old"),
    ("CUDA driver version is insufficient for CUDA runtime version", "driver-too-old"),
    ("RuntimeError: The NVIDIA driver on your system is too old (found version 11040).", "driver-too-old"),
    (
        "Error: CUDA error: invalid argument\n  at AOTIModelContainerRunnerCpu::run (model.pt2)",
        "device-mismatch",
    ),  # 003
    ("RuntimeError: Expected all tensors to be on the same device, but found cuda:0 and cpu!", "device-mismatch"),
    (
        "OutOfResources: out of resource: shared memory, Required: 131072, Hardware limit: 101376.",
        "shared-memory-limit",
    ),
    ("AssertionError: Torch not compiled with CUDA enabled", "wrong-framework-build"),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_categories(text: str, expected: str) -> None:
    assert classify(text)[0].category == expected


def test_every_category_has_a_case() -> None:
    assert {c.id for c in CATEGORIES} == {e for _t, e in CASES}


def test_noisy_multiline_log_picks_the_root_cause() -> None:
    log = (
        "\x1b[31m2026-11-20 10:00:01,123 ERROR\x1b[0m Traceback (most recent call last):\n"
        '  File "C:\\\\Users\\\\me\\\\venv\\\\Lib\\\\site-packages\\\\fbgemm_gpu\\\\sparse_ops.py", line 12, in f\n'
        "    torch.ops.fbgemm.block_bucketize_sparse_features(...)\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
        "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    )
    (top, *_rest) = classify(log)
    assert top.category == "no-kernel-image"
    assert top.evidence["packages"] == ["fbgemm_gpu"]


@pytest.mark.parametrize("text", ["KeyError: 'foo'", "ModuleNotFoundError: No module named 'numpy'", "all good"])
def test_unrelated_errors_are_unknown(text: str) -> None:
    (f,) = classify(text)
    assert f.category == "unknown"


def test_facts() -> None:
    facts = extract_facts("FATAL: kernel k_sm80 is for sm80-sm100, but was built for sm75 (error code 209)")
    assert facts["kernel_arch_range"] == ["sm_80", "sm_100"]
    assert facts["built_for"] == "sm_75"
    assert facts["error_codes"] == [209]
    assert extract_facts("Required: 131072, Hardware limit: 101376")["shared_memory_limit"] == 101376


def test_grounding_seed_000_guard_is_wrong_on_a_3090() -> None:
    (f,) = classify("RuntimeError: FlashInfer requires sm75+")
    (g,) = ground([f], Context(gpus=[("GeForce RTX 3090", parse_compute_capability("8.6"))]))
    assert "guard is wrong" in g.cause


def test_grounding_names_missing_archs() -> None:
    text = (
        "site-packages/fbgemm_gpu/x.py\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    )
    ctx = Context(
        gpus=[("GeForce GTX 1080 Ti", parse_compute_capability("6.1"))], packages={"fbgemm_gpu": ["sm_70", "sm_80"]}
    )
    (g,) = ground(classify(text), ctx)
    assert "fbgemm_gpu carries sm_70, sm_80 (none for 6.1)" in g.cause
    assert any('"6.1+PTX"' in x for x in g.fixes)


def test_cli_json_and_exit_codes(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text("CUDA driver version is insufficient for CUDA runtime version\n")
    p = subprocess.run(
        [sys.executable, "-m", "cudafit", "explain", "--file", str(log), "--json", "--no-probe"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 0
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["findings"][0]["category"] == "driver-too-old"
    p = subprocess.run(
        [sys.executable, "-m", "cudafit", "explain", "--file", str(tmp_path / "missing"), "--no-probe"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 3
    p = subprocess.run(
        [sys.executable, "-m", "cudafit", "explain", "-", "--json", "--no-probe"],
        input="KeyError: x",
        capture_output=True,
        text=True,
        check=False,
    )
    assert json.loads(p.stdout)["findings"][0]["category"] == "unknown"
