"""`cudafit explain` classification: every catalogue category, noisy logs, facts, and `unknown`."""

from __future__ import annotations

import pytest

from cudafit.explain import CATEGORIES, CUDA_ERRORS, classify, clean, extract_facts

# (message, expected category): the seeds' messages and NVIDIA's own strings (fatbin_spec.md §E.5).
CASES = [
    ("RuntimeError: CUDA error: no kernel image is available for execution on the device", "no-kernel-image"),  # 004
    ("cudaErrorNoKernelImageForDevice", "no-kernel-image"),
    ("CUDA_ERROR_NO_BINARY_FOR_GPU", "no-kernel-image"),
    (
        "UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
        "PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 "
        "sm_80 sm_86 sm_90.",
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
    ("RuntimeError: This kernel only supports sm120", "arch-specific-mismatch"),
    ("RuntimeError: FlashInfer requires sm75+", "capability-guard"),  # seed 000
    ("RuntimeError: FlashAttention only supports Ampere GPUs or newer.", "capability-guard"),
    # cudaErrorInvalidDeviceFunction: "not compiled for the proper device architecture" (CUDA Runtime API,
    # cudaError): without a second GPU in the log it is code missing for this one
    ("RuntimeError: CUDA error: invalid device function", "no-kernel-image"),
    (
        "GPU 0: NVIDIA GeForce RTX 3090\nGPU 1: NVIDIA GeForce RTX 2080 Ti\n"
        "RuntimeError: CUDA error: invalid device function",
        "mixed-gpu",
    ),
    ("CUDA error: the provided PTX was compiled with an unsupported toolchain.", "ptx-too-new-for-driver"),
    ("CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "ptx-too-new-for-driver"),
    ("ptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'", "jit-toolchain-too-old"),
    ("nvcc fatal   : Unsupported gpu architecture 'compute_120'", "jit-toolchain-too-old"),
    ("ptxas /tmp/k.ptx, line 5; fatal   : Unsupported .version 9.0; current version is '8.8'", "jit-toolchain-too-old"),
    ("CUDA driver version is insufficient for CUDA runtime version", "driver-too-old"),
    ("RuntimeError: The NVIDIA driver on your system is too old (found version 11040).", "driver-too-old"),
    ("Error: CUDA error: invalid argument\n  at AOTIModelContainerRunnerCpu::run (model.pt2)", "device-mismatch"),  # 3
    ("RuntimeError: Expected all tensors to be on the same device, but found cuda:0 and cpu!", "device-mismatch"),
    (
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 131072, Hardware limit: "
        "101376. Reducing block sizes or `num_stages` may help.",
        "shared-memory-limit",
    ),
    ("AssertionError: Torch not compiled with CUDA enabled", "wrong-framework-build"),
    (
        "RuntimeError:\nThe detected CUDA version (12.4) mismatches the version that was used to compile\n"
        "PyTorch (11.8). Please make sure to use the same CUDA versions.",
        "toolkit-mismatch",
    ),
    (
        "ImportError: /venv/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: "
        "undefined symbol: _ZN3c104cuda9SetDeviceEi",
        "extension-abi-mismatch",
    ),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_categories(text: str, expected: str) -> None:
    (top, *_rest) = classify(text)
    assert top.category == expected
    assert 0 < top.confidence <= 1
    assert top.evidence["lines"], "the matching line is quoted as evidence"


def test_every_category_has_a_case() -> None:
    assert {c.id for c in CATEGORIES} == {e for _t, e in CASES}


def _noisy(message: str) -> str:
    """The message inside what real logs wrap it in: colours, timestamps, Windows paths, other errors."""
    lines = message.splitlines()
    stamped = "\n".join(f"\x1b[31m2026-11-20 10:00:0{i},123\x1b[0m {line}" for i, line in enumerate(lines))
    return (
        "I1120 10:00:00.000123 4242 main.cc:12] starting worker\n"
        "Traceback (most recent call last):\n"
        '  File "C:\\Users\\me\\venv\\Lib\\site-packages\\mylib\\run.py", line 12, in <module>\n'
        "    main()\n"
        "WARNING: unrelated: KeyError: 'foo' was ignored\n"
        f"{stamped}\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
        "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
    )


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_noisy_logs_keep_the_category(text: str, expected: str) -> None:
    assert classify(_noisy(text))[0].category == expected


def test_seed_messages_inside_chinese_prose() -> None:
    # seed 001 quotes the line inside Chinese text with full-width punctuation.
    text = (
        '可能会遇到类似"FATAL: kernel fmha_cutlassF_f16_aligned_64x128_rf_sm80 is for sm80-sm100, but was built '
        'for sm75"的错误提示。'
    )
    (top, *_r) = classify(text)
    assert top.category == "ptx-jit-lower-arch"
    assert top.evidence["built_for"] == "sm_75"
    assert classify("表现为系统抛出“FlashInfer requires sm75+”的运行时错误。")[0].category == "capability-guard"


def test_root_cause_wins_over_generic_lines() -> None:
    log = (
        "RuntimeError: CUDA error: invalid device function\n"
        "FATAL: kernel fmha_cutlassF_f16_aligned_64x128_rf_sm80 is for sm80-sm100, but was built for sm75\n"
    )
    ids = [f.category for f in classify(log)]
    assert ids[0] == "ptx-jit-lower-arch"
    assert "no-kernel-image" in ids


def test_a_arch_alone_is_not_a_failure() -> None:
    (f,) = classify("compiling flash_fwd_kernel for sm_90a ... done")
    assert f.category == "unknown"


@pytest.mark.parametrize(
    "text",
    [
        "KeyError: 'foo'",
        "ModuleNotFoundError: No module named 'numpy'",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "OSError: [Errno 98] Address already in use",
        "NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, unhandled system error",
        "CUDA_VISIBLE_DEVICES=0 python train.py",
        "all good",
        "Error: CUDA error: invalid argument",
    ],
)
def test_unrelated_errors_are_unknown(text: str) -> None:
    (f,) = classify(text)
    assert f.category == "unknown"
    assert f.confidence == 0.0


def test_clean_strips_colours_timestamps_and_windows_separators() -> None:
    text = "\x1b[1;31m[2026-11-20T10:00:01.5Z] RuntimeError\x1b[0m at C:\\Users\\me\\x.py（line 3）"
    assert clean(text) == "RuntimeError at C:/Users/me/x.py (line 3) "


NO_IMAGE = "no kernel image is available for execution on the device"


def test_cuda_error_table_has_nvidia_strings() -> None:
    by_code = {e.code: e for e in CUDA_ERRORS}
    assert by_code[209].string == NO_IMAGE
    assert by_code[222].name == "cudaErrorUnsupportedPtxVersion"
    assert by_code[35].string == "CUDA driver version is insufficient for CUDA runtime version"


def test_facts_from_the_seed_001_line() -> None:
    facts = extract_facts("FATAL: kernel k_sm80 is for sm80-sm100, but was built for sm75 (error code 209)")
    assert facts["arch_range"] == ["sm_80", "sm_100"]
    assert facts["built_for"] == "sm_75"
    assert facts["kernels"] == ["k_sm80"]
    assert facts["archs"] == ["sm_75", "sm_80", "sm_100"]
    assert facts["cuda_errors"] == [{"code": 209, "name": "cudaErrorNoKernelImageForDevice", "string": NO_IMAGE}]


def test_facts_from_torch_warnings() -> None:
    text = (
        "/home/u/.venv/lib/python3.11/site-packages/torch/cuda/__init__.py:230: UserWarning:\n"
        "Found GPU0 NVIDIA GeForce GTX 1080 Ti which is of cuda capability 6.1.\n"
        "    PyTorch no longer supports this GPU because it is too old.\n"
        "    The minimum cuda capability supported by this library is 7.5.\n"
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
        "installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 "
        "sm_90.\ntorch 2.5.1+cu124\n"
    )
    facts = extract_facts(text)
    assert facts["gpus"] == [
        {"name": "NVIDIA GeForce RTX 5090", "compute_capability": "12.0"},
        {"name": "NVIDIA GeForce GTX 1080 Ti", "compute_capability": "6.1"},
    ]
    assert facts["build_min_cc"] == "7.5"
    assert facts["build_archs"] == ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
    assert facts["packages"] == ["torch"]
    assert facts["torch_version"] == "2.5.1+cu124"


def test_facts_sizes_driver_ptx_and_packages() -> None:
    assert extract_facts("Required: 131072, Hardware limit: 101376")["shared_memory"] == {
        "required": 131072,
        "limit": 101376,
    }
    assert extract_facts("driver on your system is too old (found version 11040)")["driver_cuda_version"] == "11.4"
    assert extract_facts("| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05 |")["driver_version"] == "535.104.05"
    assert extract_facts("Unsupported .version 9.0; current version is '8.8'")["ptx_isa"] == {
        "needed": "9.0",
        "supported": "8.8",
    }
    facts = extract_facts(
        'File "C:\\\\Users\\\\me\\\\venv\\\\Lib\\\\site-packages\\\\fbgemm_gpu\\\\sparse_ops.py"\n'
        "  /usr/lib/python3/dist-packages/xformers/ops/fmha/cutlass.py\n"
        "  /opt/venv/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so\n"
        "  /opt/venv/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so.9\n"
        "torch.ops.fbgemm.block_bucketize_sparse_features(...)"
    )
    assert facts["packages"] == ["fbgemm_gpu", "xformers", "flash_attn_2_cuda", "nvidia/cudnn"]
    assert facts["operators"] == ["fbgemm.block_bucketize_sparse_features"]
    assert (
        extract_facts("ptxas fatal : Value 'sm_120a' is not defined for option 'gpu-name'")["unsupported_target"]
        == "sm_120a"
    )
    assert extract_facts("FlashAttention only supports Ampere GPUs or newer.")["required_minimum"] == "8.0"
    assert extract_facts("requires a GPU with compute capability >= 8.9")["required_minimum"] == "8.9"
    assert extract_facts("FlashInfer requires sm75+")["required_minimum"] == "7.5"
    assert extract_facts("at AOTIModelContainerRunnerCpu::run")["aoti_runner"] == "cpu"
    assert extract_facts("nothing here") == {}


def test_every_fact_and_evidence_key_is_declared_and_documented() -> None:
    """The typed evidence is the one list of keys: what the extractors and classify produce is declared in
    :class:`~cudafit.explain.evidence.Evidence` (so grounders read it typed) and named in the JSON schema."""
    import json
    import typing
    from pathlib import Path

    from cudafit.explain.evidence import Evidence, Facts
    from explain_corpus import load

    declared = set(typing.get_type_hints(Evidence))
    schema = json.loads((Path(__file__).parent.parent / "src/cudafit/schema/explain.json").read_text())
    evidence_schema = schema["properties"]["findings"]["items"]["properties"]["evidence"]
    documented = set(evidence_schema["properties"]) | {
        k.strip(" ()") for k in evidence_schema["description"].replace(":", ",").split(",")
    }
    seen: set[str] = set()
    for rec in load():
        seen |= set(extract_facts(rec["text"]))
        for f in classify(rec["text"]):
            seen |= set(f.evidence)
    assert seen <= declared, sorted(seen - declared)
    assert set(typing.get_type_hints(Facts)) <= declared
    assert len(seen) >= 25  # grounding adds the rest (kernel matches, a mixed host, the run-time compiler)
    # runtime_compiler (explain/compilers.py) is a cudafit.rules.compilers judgement, described by that schema.
    assert declared - documented == {"runtime_compiler"}


def test_every_grounder_grounds_a_catalogue_category() -> None:
    from cudafit.explain.grounders import GROUNDERS

    assert set(GROUNDERS) <= {c.id for c in CATEGORIES}
    assert len(GROUNDERS) >= 12
