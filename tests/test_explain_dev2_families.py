"""Message families added from their emitters after the session-5 dev batch for the GPU-context categories.

Each text is what its emitter prints (the format string of the cited file, filled in), not a corpus record:
hashcat's ``nvrtcCompileProgram(): %s`` (src/ext_nvrtc.c) with NVRTC's result names, nvcc's "Unsupported gpu
architecture 'compute_XY'" quoted without its "nvcc fatal :" prefix, and FlashAttention-3's sources, whose build
(hopper/setup.py) is ``-gencode arch=compute_90a,code=sm_90a`` (plus sm_80 and sm_100a cubins) with no PTX.
"""

from __future__ import annotations

import pytest

from cudafit.explain import Context, classify, explain_text
from cudafit.model import Gpu, parse_compute_capability

RTX_5090 = Gpu("NVIDIA GeForce RTX 5090", parse_compute_capability("12.0"))


def test_hashcat_nvrtc_invalid_option_is_an_nvrtc_older_than_the_gpu() -> None:
    # hashcat passes --gpu-architecture=compute_<device sm> and fixed options only (src/backend.c)
    (f,) = explain_text("nvrtcCompileProgram(): NVRTC_ERROR_INVALID_OPTION", Context(gpus=(RTX_5090,)))
    assert f.category == "jit-toolchain-too-old"
    assert "hashcat" in f.evidence["emitters"]
    # the GPU it runs on names the arch NVRTC must know: sm_120 first targeted by CUDA 12.8
    assert "CUDA >= 12.8" in f.cause
    assert any("NVRTC" in x and "LD_LIBRARY_PATH" in x for x in f.fixes), f.fixes
    assert not any("TRITON_PTXAS_PATH" in x for x in f.fixes), f.fixes


@pytest.mark.parametrize(
    "text",
    [
        "nvrtcCompileProgram(): NVRTC_ERROR_COMPILATION",  # the kernel source did not compile
        "nvrtcCompileProgram(): NVRTC_ERROR_OUT_OF_MEMORY",
        "nvrtcCompileProgram failed: NVRTC_ERROR_INVALID_OPTION",  # another program's wording: options unknown
    ],
)
def test_other_nvrtc_results_are_not_claimed(text: str) -> None:
    assert classify(text)[0].category == "unknown"


@pytest.mark.parametrize(
    "text",
    [
        "Unsupported gpu architecture 'compute_100'",
        "error: Unsupported gpu architecture 'sm_120a' with CUDA 12.6",
        "Unsupported gpu architecture 'compute_89' on older nvcc",
    ],
)
def test_nvcc_message_without_its_prefix(text: str) -> None:
    assert classify(text)[0].category == "jit-toolchain-too-old"


def test_nvcc_words_without_the_quoted_arch_are_not_claimed() -> None:
    assert classify("which gpu architecture is unsupported here?")[0].category == "unknown"


@pytest.mark.parametrize(
    "text",
    [
        "CUDA error (/tmp/flash-attention/hopper/flash_fwd_launch_template.h:197): no kernel image is available "
        "for execution on the device",
        "CUDA error (/__w/xformers/xformers/third_party/flash-attention/hopper/flash_bwd_launch_template.h:85): no "
        "kernel image is available for execution on the device",
        'File "flash_attn_interface.py", line 42, in _flash_attn_forward\n    out = flash_attn_3_cuda.fwd(q, k, v)\n'
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
    ],
)
def test_flash_attention_3_kernels_missing_are_arch_specific(text: str) -> None:
    f = classify(text)[0]
    assert f.category == "arch-specific-mismatch"
    assert "Dao-AILab/flash-attention:hopper/setup.py" in f.evidence["sources"]


def test_flash_attention_3_names_alone_are_no_failure() -> None:
    assert classify("import flash_attn_3_cuda  # hopper/flash_fwd_launch_template.h")[0].category == "unknown"


def test_flash_attention_3_guard_on_an_older_gpu_stays_a_guard() -> None:
    # hopper/flash_api.cpp's is_sm90 check refusing an A100 (named by nvidia-smi -L in the same log), with the
    # extension in the traceback: the guard rightly refuses an older GPU, the a-only build is not the cause
    text = (
        "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5f1c0e3a-0000-0000-0000-000000000000)\n"
        'File "flash_attn_interface.py", line 42, in _flash_attn_forward\n    out = flash_attn_3_cuda.fwd(q, k, v)\n'
        "RuntimeError: FlashAttention-3 only supports Hopper GPUs."
    )
    assert classify(text)[0].category == "capability-guard"


def test_tensorrt_plan_is_rebuilt_on_the_gpu_that_loads_it() -> None:
    # TensorRT names the loading GPU first ("expecting") and the plan's build GPU second ("got"): a plan built on an
    # sm_86 GPU and loaded on a T4 (NVIDIA/TensorRT#3130, the maintainer's reading)
    text = (
        "[TRT] [E] 6: The engine plan file is generated on an incompatible device, expecting compute 7.5 got "
        "compute 8.6, please rebuild."
    )
    (f,) = explain_text(text)
    assert f.category == "mixed-gpu"
    assert [g["compute_capability"] for g in f.evidence["gpus"]] == ["7.5"]
    assert "built on a GPU of compute capability 8.6 and is loaded on one of 7.5" in f.cause
    assert "rebuild the engine on the 7.5 GPU" in f.fixes[0]


# nccl-tests' device list (NVIDIA/nccl-tests:src/common.cu: "#   Rank %2d Pid %6d on %10s device %2d [0x%02x] %s")
NCCL_TESTS_K80 = (
    "#   Rank  0 Pid  48592 on    trainer device  0 [0x06] Tesla K80\n"
    "#   Rank  1 Pid  48592 on    trainer device  1 [0x07] Tesla K80\n"
    "trainer: Test CUDA failure common.cu:253 'no kernel image is available for execution on the device'"
)
NCCL_TESTS_MIXED = (
    "#  Rank  0 Group  0 Pid  20143 on     node01 device  0 [0x18] NVIDIA GeForce RTX 3090\n"
    "#   Rank  1 on node01 device  1 [0x3b] NVIDIA GeForce GTX 1080 Ti\n"
    "node01: Test CUDA failure common.cu:892 'no kernel image is available for execution on the device'"
)


def test_nccl_tests_device_list_names_the_gpus() -> None:
    (f,) = classify(NCCL_TESTS_K80)
    assert f.category == "no-kernel-image"
    assert f.evidence["gpus"] == [{"name": "Tesla K80", "compute_capability": "3.7"}]
    mixed = classify(NCCL_TESTS_MIXED)[0]
    assert mixed.category == "mixed-gpu"
    assert {g["compute_capability"] for g in mixed.evidence["gpus"]} == {"8.6", "6.1"}


def test_lc0_device_info_names_the_gpu() -> None:
    # LeelaChessZero/lc0:src/neural/cuda/network_cudnn.cc showDeviceInfo, then its kernel launch check
    text = (
        "GPU: Tesla K80\nGPU memory: 11.173 Gb\nGPU clock frequency: 875.5 MHz\nGPU compute capability: 3.7\n"
        "Unhandled exception in worker thread: CUDA error: no kernel image is available for execution on the "
        "device (../../src/neural/cuda/common_kernels.cu:254)"
    )
    f = classify(text)[0]
    assert f.category == "no-kernel-image"
    assert f.evidence["gpus"] == [{"name": "Tesla K80", "compute_capability": "3.7"}]


@pytest.mark.parametrize(("arch", "keep"), [("compute_35", "CUDA <= 11.8"), ("compute_30", "older CUDA toolkit")])
def test_a_toolkit_refusing_a_dropped_kepler_arch_is_too_new(arch: str, keep: str) -> None:
    # CUDA 12.0 dropped sm_35/37 and 11.0 sm_30: nvcc's refusal of them is a toolkit newer than the arch
    (f,) = explain_text(f"nvcc fatal   : Unsupported gpu architecture '{arch}'")
    assert f.category == "jit-toolchain-too-old"
    assert "no longer targets" in f.cause and "predates" not in f.cause
    assert f"remove {arch} from the build's arch list" in f.fixes[0]
    assert keep in f.fixes[1]


def test_a_toolkit_refusing_a_new_arch_predates_it() -> None:
    (f,) = explain_text("nvcc fatal   : Unsupported gpu architecture 'compute_120'")
    assert "predates compute_120, which needs CUDA >= 12.8" in f.cause


def test_flash_attention_3_finding_names_its_targets_and_the_gpu() -> None:
    text = (
        "CUDA error (/__w/xformers/xformers/third_party/flash-attention/hopper/flash_fwd_launch_template.h:167): no "
        "kernel image is available for execution on the device"
    )
    (f, *_rest) = explain_text(text, Context(gpus=(RTX_5090,)))
    assert "sm_90a, sm_100a (and plain sm_80 cubins) only, which cannot run on NVIDIA GeForce RTX 5090" in f.cause
    assert "FlashAttention-2" in f.fixes[0]
