"""explain generalised from its emitters (issue 18 §1): GPU listings, mixed hosts, a/f targets without a prefix,
and the arch-specific families of CUTLASS/CuTe, FlashMLA, FlashInfer, FlashAttention-3, DeepGEMM and vLLM.

Every text below is written from its emitter's format string (the file each docstring or comment names), with
made-up values; none is a corpus record.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest

from cudafit.explain import CATEGORIES, Context, classify, explain_text, extract_facts
from cudafit.explain.extract import iter_arch_names
from cudafit.explain.grounders.base import real_arch
from cudafit.explain.logread import read_log
from cudafit.model import Gpu, parse_compute_capability
from explain_corpus import CORPUS

SCHEMA = json.loads((CORPUS.parent.parent.parent.parent / "src/cudafit/schema/explain.json").read_text())
NO_IMAGE = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def _gpus(text: str) -> list[tuple[str, str]]:
    return [(g["name"], g["compute_capability"]) for g in extract_facts(text).get("gpus", [])]


# (emitter, text, GPUs the facts must hold)
LISTINGS = [
    (  # nvidia-smi -L
        "nvidia-smi -L",
        "GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-0a1b2c3d-aaaa-bbbb-cccc-000000000000)\n"
        "GPU 1: NVIDIA GeForce RTX 2080 Ti (UUID: GPU-0a1b2c3d-aaaa-bbbb-cccc-111111111111)",
        [("NVIDIA GeForce RTX 3090", "8.6"), ("NVIDIA GeForce RTX 2080 Ti", "7.5")],
    ),
    (  # torch.utils.collect_env: nvidia-smi -L without the UUIDs, on the next line when several
        "torch collect_env",
        "Is CUDA available: True\nGPU models and configuration: \nGPU 0: Tesla V100-SXM2-16GB\nGPU 1: Tesla T4\n"
        "Nvidia driver version: 535.104.05",
        [("Tesla V100-SXM2-16GB", "7.0"), ("Tesla T4", "7.5")],
    ),
    (
        "torch collect_env, one GPU",
        "GPU models and configuration: GPU 0: NVIDIA A100-SXM4-80GB",
        [("NVIDIA A100-SXM4-80GB", "8.0")],
    ),
    (  # nvidia-smi's table (driver 450 and 550 layouts, Windows' WDDM)
        "nvidia-smi table",
        "|   0  GeForce GTX 1080    Off  | 00000000:01:00.0  On |                  N/A |\n"
        "|   1  NVIDIA GeForce RTX 4090        On  |   00000000:02:00.0 Off |                  Off |\n"
        "|   2  NVIDIA GeForce RTX 3060   WDDM  | 00000000:03:00.0 Off |                  N/A |",
        [("GeForce GTX 1080", "6.1"), ("NVIDIA GeForce RTX 4090", "8.9"), ("NVIDIA GeForce RTX 3060", "8.6")],
    ),
    (  # deviceQuery.cpp
        "deviceQuery",
        'Device 0: "NVIDIA GeForce RTX 3060 Ti"\n  CUDA Driver Version / Runtime Version          12.2 / 12.0\n'
        "  CUDA Capability Major/Minor version number:    8.6\n",
        [("NVIDIA GeForce RTX 3060 Ti", "8.6")],
    ),
    (  # TensorFlow 2.1-2.4 gpu_device.cc
        "TensorFlow",
        "Found device 0 with properties: \npciBusID: 0000:01:00.0 name: GeForce RTX 2080 Ti computeCapability: 7.5\n"
        "coreClock: 1.545GHz coreCount: 68",
        [("GeForce RTX 2080 Ti", "7.5")],
    ),
    (  # XLA service.cc, as JAX and TensorFlow log it
        "XLA",
        "service.cc:168]   StreamExecutor device (0): NVIDIA GeForce RTX 3070, Compute Capability 8.6\n"
        "service.cc:168]   StreamExecutor device (1): Tesla P40, Compute Capability 6.1",
        [("NVIDIA GeForce RTX 3070", "8.6"), ("Tesla P40", "6.1")],
    ),
    (  # torch.cuda.get_device_properties' repr, with and (before 1.10) without major/minor
        "torch device properties",
        "_CudaDeviceProperties(name='NVIDIA GeForce RTX 3060', major=8, minor=6, total_memory=11938MB)\n"
        "_CudaDeviceProperties(name='Tesla P100-PCIE-16GB', total_memory=16280MB)",
        [("NVIDIA GeForce RTX 3060", "8.6"), ("Tesla P100-PCIE-16GB", "6.0")],
    ),
    (  # sglang check_env
        "sglang check_env",
        "GPU 0,1: NVIDIA H100 80GB HBM3\nGPU 2: NVIDIA GeForce RTX 4090\nGPU 0,1 Compute Capability: 9.0\n"
        "GPU 2 Compute Capability: 8.9",
        [("GPU 0,1", "9.0"), ("GPU 2", "8.9"), ("NVIDIA H100 80GB HBM3", "9.0"), ("NVIDIA GeForce RTX 4090", "8.9")],
    ),
    (
        "vLLM fused-MoE config name",
        "Config file not found at /x/fused_moe/configs/E=64,N=1408,device_name=NVIDIA_GeForce_RTX_4090,"
        "dtype=fp8_w8a8.json",
        [("NVIDIA GeForce RTX 4090", "8.9")],
    ),
    (
        "nvidia-smi -q",
        "GPU 00000000:01:00.0\n    Product Name                          : NVIDIA GeForce RTX 4070 Laptop GPU\n",
        [("NVIDIA GeForce RTX 4070 Laptop GPU", "8.9")],
    ),
    (  # vllm/platforms/cuda.py log_warnings, one line (0.8+) and one name per logger line (earlier)
        "vLLM different devices",
        "WARNING 03-20 23:36:27 [cuda.py:394] Detected different devices in the system: NVIDIA GeForce RTX 4080 "
        "SUPER, NVIDIA GeForce RTX 3060. Please make sure to set `CUDA_DEVICE_ORDER=PCI_BUS_ID` to avoid unexpected "
        "behavior.",
        [("NVIDIA GeForce RTX 4080 SUPER", "8.9"), ("NVIDIA GeForce RTX 3060", "8.6")],
    ),
    (
        "vLLM different devices, one per line",
        "WARNING 02-13 10:47:30 cuda.py:336] Detected different devices in the system: \n"
        "WARNING 02-13 10:47:30 cuda.py:336] NVIDIA A100-SXM4-80GB\nWARNING 02-13 10:47:30 cuda.py:336] Tesla T4\n"
        "WARNING 02-13 10:47:30 cuda.py:336] Please make sure to set `CUDA_DEVICE_ORDER=PCI_BUS_ID` to avoid "
        "unexpected behavior.",
        [("NVIDIA A100-SXM4-80GB", "8.0"), ("Tesla T4", "7.5")],
    ),
    (  # accelerate env / transformers env
        "accelerate env",
        "- PyTorch version (GPU?): 2.5.1+cu124 (True)\n- GPU type: NVIDIA A100-SXM4-80GB\n",
        [("NVIDIA A100-SXM4-80GB", "8.0")],
    ),
    (  # PyTorch Lightning's matmul-precision hint
        "Lightning",
        "You are using a CUDA device ('NVIDIA GeForce RTX 4090') that has Tensor Cores. To properly utilize them, you "
        "should set `torch.set_float32_matmul_precision('medium' | 'high')`",
        [("NVIDIA GeForce RTX 4090", "8.9")],
    ),
    (  # ComfyUI's start-up line
        "ComfyUI",
        "Total VRAM 24564 MB, total RAM 64706 MB\nDevice: cuda:0 NVIDIA GeForce RTX 3090 : cudaMallocAsync\n",
        [("NVIDIA GeForce RTX 3090", "8.6")],
    ),
    (  # nvidia-smi --query-gpu=name,compute_cap --format=csv
        "nvidia-smi --query-gpu csv",
        "name, compute_cap\nNVIDIA GeForce RTX 3090, 8.6\nTesla P40, 6.1\n",
        [("NVIDIA GeForce RTX 3090", "8.6"), ("Tesla P40", "6.1")],
    ),
]


@pytest.mark.parametrize(("emitter", "text", "gpus"), LISTINGS, ids=[e for e, _t, _g in LISTINGS])
def test_gpu_listings_become_gpus_with_their_compute_capability(
    emitter: str, text: str, gpus: list[tuple[str, str]]
) -> None:
    assert _gpus(text) == gpus, emitter


@pytest.mark.parametrize(
    "text",
    [
        "GPU 0: out of memory",  # not a product name
        "GPU 1: 8.6",  # numbers are not names
        "GPU 0: NVIDIA GeForce ...",  # nvidia-smi's truncated name
        "|   0  NVIDIA Quantum Frobnicator 9000  Off  | 00000000:01:00.0 Off |  N/A |",  # unknown to the table
        "Tesla P40, 6.1",  # a CSV row without nvidia-smi's header naming the columns
    ],
)
def test_names_the_gpu_table_does_not_know_are_left_out(text: str) -> None:
    assert "gpus" not in extract_facts(text)


MIXED = "GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-1)\nGPU 1: NVIDIA GeForce RTX 2080 Ti (UUID: GPU-2)\n"


@pytest.mark.parametrize(
    "failure",
    [
        NO_IMAGE,
        "RuntimeError: CUDA error: invalid device function",
        # seed 001's line: a kernel that ran from code built for the other card
        "FATAL: kernel `fmha_cutlassF_f16_aligned_64x128_rf_sm80` is for sm80-sm100, but was built for sm75",
    ],
)
def test_two_compute_capabilities_and_a_per_arch_failure_is_a_mixed_host(failure: str) -> None:
    (top, *_rest) = explain_text(MIXED + failure)
    assert top.category == "mixed-gpu"
    assert top.evidence["host_compute_capabilities"] == ["7.5", "8.6"] or "7.5;8.6" in top.fixes[0]
    assert 'TORCH_CUDA_ARCH_LIST="7.5;8.6"' in top.fixes[0]


def test_one_compute_capability_is_no_mixed_host() -> None:
    same = "GPU 0: NVIDIA GeForce RTX 3090\nGPU 1: NVIDIA GeForce RTX 3080\n"
    assert classify(same + NO_IMAGE)[0].category == "no-kernel-image"


@pytest.mark.parametrize(
    "failure",
    [
        "RuntimeError: FlashAttention only supports Ampere GPUs or newer.",  # a guard, not a per-arch build
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, unhandled system error",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "",
    ],
)
def test_a_mixed_host_without_a_per_arch_failure_is_not_mixed_gpu(failure: str) -> None:
    categories = [f.category for f in classify(MIXED + failure)]
    assert categories[0] != "mixed-gpu"
    if "Ampere" not in failure:
        assert categories == ["unknown"]


# (text, archs the facts hold): a/f targets as build systems and caches write them
UNPREFIXED = [
    ("/root/.cache/flashinfer/0.2.8/120a/cached_ops/batch_prefill/batch_prefill.so", ["sm_120a"]),
    ("/home/u/.cache/flashinfer/75_80_89_90a/generated/x.cu", ["sm_90a"]),
    ("compiling for arch 90a", ["sm_90a"]),
    ('TORCH_CUDA_ARCH_LIST="8.0 9.0a 10.0a"', ["sm_90a", "sm_100a"]),
    ("-DCMAKE_CUDA_ARCHITECTURES=80;90a;120f", ["sm_90a", "sm_120f"]),
    ("device of compute capability 9.0a", ["sm_90a"]),
    ("Hopper (sm90) kernels, the SM100A path", ["sm_90", "sm_100a"]),
    ("CUTLASS_ARCH_MMA_SM90A_ENABLED", ["sm_90a"]),
    # not targets: a C float literal, an 'a' below sm_90a, an arch no GPU has, a short hash directory
    ("float scale = 12.0f; arch 8.0a; archs: 95a; /tmp/12a/x", []),
]


@pytest.mark.parametrize(("text", "archs"), UNPREFIXED)
def test_a_and_f_targets_without_their_prefix(text: str, archs: list[str]) -> None:
    assert list(iter_arch_names(text)) == archs
    assert extract_facts(text).get("archs", []) == archs


def test_an_unprefixed_a_target_beside_no_kernel_image_is_arch_specific_and_grounded() -> None:
    text = NO_IMAGE + "\n  File /root/.cache/flashinfer/0.2.8/120a/cached_ops/norm/norm.so"
    (top, *_r) = explain_text(text, Context(gpus=(Gpu("NVIDIA GB10", parse_compute_capability("12.1")),)))
    assert top.category == "arch-specific-mismatch"
    assert top.evidence["archs"] == ["sm_120a"]
    assert "sm_120a only, which cannot run on NVIDIA GB10 (12.1)" in top.cause


@pytest.mark.parametrize("text", [NO_IMAGE + "\nsm_00a", NO_IMAGE + "\narch 95a", "compiled for sm_90a, done"])
def test_arch_names_alone_or_naming_no_target_are_not_arch_specific(text: str) -> None:
    assert classify(text)[0].category != "arch-specific-mismatch"


@pytest.mark.parametrize(
    "text",
    [
        "ERROR : Arch conditional MMA instruction used without targeting sm_05a compute capability. Aborting.",
        "Arch conditional MMA instruction used without targeting SM00A",
        "ptxas error   : Instruction 'wgmma.fence' not supported on .target 'sm_09'",
    ],
)
def test_arch_numbers_no_gpu_has_in_a_message_never_raise(text: str) -> None:
    for ctx in (None, Context(gpus=(Gpu("T4", parse_compute_capability("7.5")),))):
        findings = explain_text(text, ctx)
        jsonschema.validate({"schema": "cudafit.explain/1", "findings": [f.to_dict() for f in findings]}, SCHEMA)
        assert findings[0].category == "arch-specific-mismatch"
        assert "sm_05a" not in findings[0].cause and "sm_00a" not in findings[0].cause


def test_real_arch_and_the_catalogue_needs_no_workaround() -> None:
    assert real_arch("sm_90a") == "sm_90a" and real_arch("SM100F") == "sm_100f"
    assert real_arch("sm_05a") is None and real_arch("sm_00") is None and real_arch("sm_x") is None
    arch = next(c for c in CATEGORIES if c.id == "arch-specific-mismatch")
    assert not any("[1-9]" in p.regex.pattern or "SM0" in p.regex.pattern for p in arch.patterns)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # CuTe's CUTE_INVALID_CONTROL_PATH messages (include/cute/arch/*.hpp): the macros of cute/arch/config.hpp that
        # only 'a'/'f' targets define, and plain-arch ones that mean code compiled below the atom's arch: a kernel
        # dispatched to a GPU below it (capability-guard) unless a GPU at or above it is named (test_explain_library_
        # families), and the warp shuffle of every arch, whose absence says nothing of the GPU.
        ("Attempting to use wgmma.fence without CUTE_ARCH_MMA_SM90A_ENABLED", "arch-specific-mismatch"),
        ("Trying to use TMEM_LOAD without CUTE_ARCH_TCGEN05_TMEM_ENABLED.", "arch-specific-mismatch"),
        ("Attempting to use SM120_16x8x32_TN without CUTE_ARCH_F8F6F4_MMA_ENABLED", "arch-specific-mismatch"),
        ("Trying to use ldmatrix without CUTE_ARCH_LDSM_SM100A_ENABLED.", "arch-specific-mismatch"),
        ("Trying to use tma without CUTE_ARCH_TMA_SM100_ENABLED.", "arch-specific-mismatch"),
        ("Attempting to use SM80_16x8x8_F32TF32TF32F32_TN without CUTE_ARCH_MMA_SM80_ENABLED", "capability-guard"),
        ("Trying to use __shfl_xor_sync without CUTE_ARCH_WARP_SHUFFLE_ENABLED.", "unknown"),
        # DeepGEMM's device asserts (deep_gemm/include/deep_gemm/impls/sm90_*.cuh, sm100_*.cuh)
        ('Assertion `false and "This kernel only support sm_90a"` failed.', "arch-specific-mismatch"),
        ('Assertion `false and "This kernel only support sm_100f"` failed.', "arch-specific-mismatch"),
        # its host dispatch (csrc/apis/einsum.hpp): kernels for majors 9 and 10 only
        ("RuntimeError: Assertion error (csrc/apis/einsum.hpp:57): Unsupported architecture", "capability-guard"),
        # FlashMLA csrc/api/dense_decode.h, sparse_fwd.h
        ("RuntimeError: Dense decode MLA is only supported on SM90a architecture", "arch-specific-mismatch"),
        (
            "RuntimeError: Sparse Attention Forward Kernel is only supported on SM90a and SM100f architectures.",
            "arch-specific-mismatch",
        ),
        # FlashInfer compilation_context.get_nvcc_flags_list
        ("RuntimeError: No supported CUDA architectures found for major versions [10, 11].", "arch-specific-mismatch"),
        # Thrust's get_ptx_version (NVIDIA/cccl thrust/system/cuda/detail/core/util.h)
        (
            "thrust::system::system_error\n  what():  This program was not compiled for SM 75\n"
            ": cudaErrorInvalidDevice: invalid device ordinal",
            "no-kernel-image",
        ),
        # vLLM scaled_mm_entry.cu: c3x kernels (a/f targets) for >= 9.0, c2x (plain) below, one-capability kernels
        (
            "NotImplementedError: No compiled cutlass_scaled_mm for a compute capability less than CUDA device "
            "capability: 121",
            "arch-specific-mismatch",
        ),
        (
            "NotImplementedError: No compiled cutlass_scaled_mm for a compute capability less than CUDA device "
            "capability: 86",
            "no-kernel-image",
        ),
        (
            "NotImplementedError: No compiled cutlass_scaled_mm for CUDA device capability: 80. "
            "Required capability: 90",
            "capability-guard",
        ),
        # vLLM nvfp4_scaled_mm_entry.cu: Blackwell's FP4 kernels, built for 10.0a/12.0a
        (
            "No compiled nvfp4 mm kernel for SM 103. Recompile with CUDA >= 12.8 and CC >= 100.",
            "arch-specific-mismatch",
        ),
        (
            "No compiled nvfp4 quantization kernel for SM 89. Recompile with the appropriate CUDA arch.",
            "capability-guard",
        ),
    ],
)
def test_arch_specific_families_of_their_emitters(text: str, expected: str) -> None:
    assert classify(text)[0].category == expected


def test_vllm_dispatch_names_the_gpu_capability() -> None:
    text = "No compiled cutlass_scaled_mm for a compute capability less than CUDA device capability: 121"
    assert _gpus(text) == [("GPU", "12.1")]


FA3 = "RuntimeError: FlashAttention-3 only supports Hopper GPUs."  # hopper/flash_api.cpp
FA3_EARLIER = "RuntimeError: FlashAttention only supports Hopper GPUs or newer."
DEEPGEMM_HOPPER = "RuntimeError: Assertion error (csrc/apis/gemm.hpp:40): arch_major == 9"


@pytest.mark.parametrize(
    ("gpu", "message", "expected"),
    [
        # above Hopper: the sm_90a-only build is the cause
        ("GPU 0: NVIDIA GeForce RTX 5090\n", FA3, "arch-specific-mismatch"),
        ("GPU 0: NVIDIA GeForce RTX 5090\n", FA3_EARLIER, "arch-specific-mismatch"),
        ("GPU 0: NVIDIA B200\n", DEEPGEMM_HOPPER, "arch-specific-mismatch"),
        # below Hopper: the guard rightly refuses an older GPU
        ("GPU 0: NVIDIA A100-SXM4-80GB\n", FA3, "capability-guard"),
        ("GPU 0: NVIDIA A100-SXM4-80GB\n", FA3_EARLIER, "capability-guard"),
        ("GPU 0: NVIDIA A100-SXM4-80GB\n", DEEPGEMM_HOPPER, "capability-guard"),
        # no GPU named: the message's own words (one target, or "or newer")
        ("", FA3, "arch-specific-mismatch"),
        ("", FA3_EARLIER, "capability-guard"),
        ("", DEEPGEMM_HOPPER, "capability-guard"),
    ],
)
def test_hopper_only_guards_depend_on_the_gpu(gpu: str, message: str, expected: str) -> None:
    (top, *_r) = explain_text(gpu + message)
    assert top.category == expected
    if expected == "arch-specific-mismatch":
        assert "sm_90a only" in top.cause


def test_torch_28_unsupported_code_warning() -> None:
    """torch/cuda/__init__.py's _warn_unsupported_code (2.8+): the GPU, the CCs the build carries, the verdict."""
    text = (
        "torch/cuda/__init__.py:371: UserWarning: Found GPU0 NVIDIA GeForce GTX TITAN X which is of compute "
        "capability (CC) 5.2.\nThe following list shows the CCs this version of PyTorch was built for and the hardware "
        "CCs it supports:\n- 7.5 which supports hardware CC >=7.5,<8.0\n- 8.0 which supports hardware CC >=8.0,<9.0 "
        "except {8.7}\n- 12.0 which supports hardware CC >=12.0,<13.0\nPlease follow the instructions at "
        "https://pytorch.org/get-started/locally/ to install a PyTorch release that supports one of these CUDA "
        "versions: 12.6\n"
    )
    (top, *_r) = explain_text(text)
    assert top.category == "no-kernel-image"
    assert top.evidence["gpus"] == [{"name": "NVIDIA GeForce GTX TITAN X", "compute_capability": "5.2"}]
    assert top.evidence["build_archs"] == ["sm_75", "sm_80", "sm_120"]
    assert "nothing that runs on NVIDIA GeForce GTX TITAN X (5.2)" in top.cause
    assert classify("Your installed torch==2.9.0+cu130 does not include kernels for this GPU.")[0].category == (
        "no-kernel-image"
    )


def test_a_mixed_host_listed_at_the_start_of_a_long_log_is_kept(tmp_path: Path) -> None:
    """nvidia-smi's table rows of older drivers ("GeForce ...", no "NVIDIA") survive the log reader's keyword scan."""
    head = (
        b"|   0  GeForce RTX 3090    Off  | 00000000:01:00.0  On |                  N/A |\n"
        b"|   1  GeForce GTX 1080    Off  | 00000000:02:00.0 Off |                  N/A |\n"
    )
    noise = b"".join(b"2026-11-20 10:00:01 INFO step %d loss=0.1234 lr=3e-4\n" % i for i in range(20000))
    log = tmp_path / "train.log"
    log.write_bytes(head + noise + NO_IMAGE.encode() + b"\n")
    with log.open("rb") as fh:
        excerpt = read_log(fh)
    (top, *_r) = classify(excerpt.text)
    assert top.category == "mixed-gpu"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("ptxas k.ptx, line 9; error   : Feature 'tcgen05.mma' requires sm_100a", "sm_100a"),
        ("ptxas k.ptx, line 9; error   : Instruction 'tcgen05.alloc' requires .target sm_100f", "sm_100f"),
        (
            "ERROR : Arch conditional MMA instruction used without targeting sm90a compute capability. Aborting.",
            "sm_90a",
        ),
        ("Attempting to use wgmma.fence without CUTE_ARCH_MMA_SM90A_ENABLED", "sm_90a"),
    ],
)
def test_the_target_a_kernel_needs_is_the_one_the_message_names(text: str, want: str) -> None:
    (top, *_r) = explain_text(text)
    assert top.category == "arch-specific-mismatch"
    assert f"uses {want}-only instructions" in top.cause
    number, variant = want[3:-1], want[-1]
    assert f"nvcc -gencode arch=compute_{number}{variant},code={want}" in top.fixes[0]


def test_get_arch_list_is_the_build_archs() -> None:
    text = "2.7.1+cu128\n['sm_75', 'sm_80', 'sm_86', 'sm_90', 'sm_100', 'sm_120', 'compute_120']"
    assert extract_facts(text)["build_archs"] == ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]


def test_names_looked_up_are_bounded() -> None:
    """Each name the GPU table does not know costs a near-miss search: a log full of "GPU 0: ..." lines stays fast."""
    import time

    text = "\n".join(f"GPU 0: step {i} loss 0.{i}" for i in range(2000)) + "\nGPU 1: Tesla T4"
    start = time.perf_counter()
    facts = extract_facts(text)
    assert time.perf_counter() - start < 2.0
    assert facts["gpus"] == [{"name": "Tesla T4", "compute_capability": "7.5"}]  # only names with a product word


def test_a_mixed_host_with_any_unrelated_cuda_error_stays_unknown() -> None:
    """Every CUDA error the inventory calls unrelated (src/cudafit/explain/data/cuda_errors.json), after a listing
    of two compute capabilities: a mixed host is no cause of an out-of-memory or an illegal address."""
    data = json.loads(files("cudafit.explain").joinpath("data/cuda_errors.json").read_text())
    rows = data["runtime"] + data["driver"]
    related = {s for r in rows if r["certainty"] is not None for s in r["strings"]}
    strings = sorted({s for r in rows if r["certainty"] is None for s in r["strings"]} - related)
    assert len(strings) > 100
    # but "invalid argument": a launch configuration or shared-memory size chosen for one card refused on the other
    # (test_explain_mixed_hosts.test_invalid_argument_on_a_host_of_two_capabilities_is_the_mixed_host)
    wrong = [
        s
        for s in strings
        if s != "invalid argument"
        and [f.category for f in classify(f"{MIXED}RuntimeError: CUDA error: {s}")] != ["unknown"]
    ]
    assert not wrong
