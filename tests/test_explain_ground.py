"""`cudafit explain` grounding: the seeds' scenarios with explicit machine contexts."""

from __future__ import annotations

import pytest

from cudafit.explain import Context, arch_runs_on, classify, explain_text, ground
from cudafit.model import Gpu, parse_compute_capability, parse_driver_version

RTX_2080 = Gpu("NVIDIA GeForce RTX 2080", parse_compute_capability("7.5"))
RTX_3090 = Gpu("NVIDIA GeForce RTX 3090", parse_compute_capability("8.6"))
GTX_1080_TI = Gpu("NVIDIA GeForce GTX 1080 Ti", parse_compute_capability("6.1"))
A100 = Gpu("NVIDIA A100-SXM4-80GB", parse_compute_capability("8.0"))
T4 = Gpu("Tesla T4", parse_compute_capability("7.5"))
SEED_001 = "FATAL: kernel fmha_cutlassF_f16_aligned_64x128_rf_sm80 is for sm80-sm100, but was built for sm75"
NO_IMAGE = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def test_seed_000_guard_checked_compile_flags_not_the_device() -> None:
    (f,) = explain_text("RuntimeError: FlashInfer requires sm75+", Context(gpus=(RTX_3090,)))
    assert f.category == "capability-guard"
    assert "RTX 3090 (8.6) meets it" in f.cause
    assert "arch flags" in f.cause
    assert "guard is wrong" in f.cause
    assert any("get_device_capability" in x for x in f.fixes)


def test_a_guard_that_is_right() -> None:
    (f,) = explain_text("FlashAttention only supports Ampere GPUs or newer.", Context(gpus=(T4, A100)))
    assert "Tesla T4 (7.5) is below it" in f.cause
    assert "really cannot run" in f.cause
    assert f.fixes[0].startswith(
        "run on a GPU of compute capability >= 8.0: CUDA_VISIBLE_DEVICES=<index of NVIDIA A100"
    )


def test_seed_001_mixed_host_gets_the_arch_list_of_both_gpus() -> None:
    findings = explain_text(SEED_001, Context(gpus=(RTX_2080, RTX_3090)))
    assert [f.category for f in findings] == ["ptx-jit-lower-arch", "mixed-gpu"]
    top = findings[0]
    assert "ran on NVIDIA GeForce RTX 3090 (8.6) from PTX" in top.cause
    assert "__CUDA_ARCH__ is still 750" in top.cause
    assert 'TORCH_CUDA_ARCH_LIST="7.5;8.6"' in top.fixes[0]
    assert "cudafit plan --gpu 7.5 --gpu 8.6" in top.fixes[0]
    assert "mixes NVIDIA GeForce RTX 2080 (7.5), NVIDIA GeForce RTX 3090 (8.6)" in findings[1].cause
    assert any("CUDA_DEVICE_ORDER=PCI_BUS_ID" in x for x in findings[1].fixes)


def test_seed_001_without_a_machine_reads_the_line_alone() -> None:
    (f,) = explain_text(SEED_001)
    assert "GPU of compute capability >= 8.0" in f.cause
    assert 'TORCH_CUDA_ARCH_LIST="7.5;<CC of the GPU that ran it, >= 8.0>"' in f.fixes[0]


def test_seed_003_cpu_runner_for_a_cuda_package() -> None:
    text = (
        "Error: CUDA error: invalid argument\n"
        "terminate called after throwing an instance of 'std::runtime_error'\n"
        "  at torch::inductor::AOTIModelContainerRunnerCpu::run (/tmp/model.pt2)\n"
        "Aborted (core dumped)"
    )
    (f, *_rest) = explain_text(text, Context(gpus=(A100,)))
    assert f.category == "device-mismatch"
    assert "CPU runner (AOTIModelContainerRunnerCpu)" in f.cause
    assert "AOTIModelContainerRunnerCuda" in f.fixes[0]
    assert "x.to('cuda')" in f.fixes[0]


def test_device_mismatch_on_a_machine_without_gpus() -> None:
    text = "RuntimeError: Expected all tensors to be on the same device, but found cuda:0 and cpu!"
    (f,) = explain_text(text, Context(driver=parse_driver_version("580.65.06")))
    assert f.fixes[0].startswith("this machine has no CUDA GPU")


def test_seed_004_no_kernel_image_on_a_1080_ti() -> None:
    text = "site-packages/fbgemm_gpu/sparse_ops.py\n" + NO_IMAGE
    ctx = Context(gpus=(GTX_1080_TI,), packages={"fbgemm-gpu": ("sm_70", "sm_80", "sm_90", "compute_90")})
    (f,) = ground(classify(text), ctx)
    assert f.category == "no-kernel-image"
    assert "fbgemm_gpu carries sm_70, sm_80, sm_90, compute_90 (nothing that runs on 6.1)" in f.cause
    assert "https://download.pytorch.org/whl/cu126" in f.fixes[0]
    assert "cudafit check 'fbgemm_gpu' --gpu 6.1" in f.fixes[1]
    assert f.fixes[2].startswith('or rebuild fbgemm_gpu for these GPUs: TORCH_CUDA_ARCH_LIST="6.1"')


def test_no_rebuild_advice_for_binary_only_packages() -> None:
    text = (
        "/venv/lib/python3.11/site-packages/torch/cuda/__init__.py:1: UserWarning: NVIDIA GeForce RTX 5090 with "
        "CUDA capability sm_120 is not compatible with the current PyTorch installation.\nThe current PyTorch install "
        "supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n" + NO_IMAGE
    )
    (f,) = explain_text(text)
    assert "this PyTorch build carries sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90" in f.cause
    assert "NVIDIA GeForce RTX 5090 (12.0)" in f.cause
    assert not any("--no-binary torch" in x for x in f.fixes)


def test_a_package_that_runs_is_not_blamed() -> None:
    text = "site-packages/fbgemm_gpu/x.py\n" + NO_IMAGE
    (f,) = explain_text(text, Context(gpus=(RTX_3090,), packages={"fbgemm_gpu": ("sm_80",)}))
    assert "fbgemm_gpu carries" not in f.cause  # sm_80 SASS runs on 8.6
    assert "no code for NVIDIA GeForce RTX 3090 (8.6)" in f.cause


@pytest.mark.parametrize(
    ("arch", "cc", "runs"),
    [
        ("sm_80", "8.6", True),
        ("sm_86", "8.0", False),
        ("sm_80", "9.0", False),
        ("compute_80", "9.0", True),
        ("sm_90a", "9.0", True),
        ("sm_90a", "10.0", False),
        ("compute_90a", "10.0", False),
        ("sm_100f", "10.3", True),
        ("sm_100f", "12.0", False),
        ("sm_80", "8.7", False),  # Tegra: no binary compatibility with desktop code
    ],
)
def test_arch_runs_on(arch: str, cc: str, runs: bool) -> None:
    assert arch_runs_on(arch, parse_compute_capability(cc)) is runs


def test_arch_specific_code_on_the_wrong_gpu() -> None:
    text = NO_IMAGE + "\nflash_attn kernels are built for sm_90a"
    (f, *_rest) = explain_text(text, Context(gpus=(Gpu("NVIDIA GeForce RTX 4090", parse_compute_capability("8.9")),)))
    assert f.category == "arch-specific-mismatch"
    assert "built for sm_90a only, which cannot run on NVIDIA GeForce RTX 4090 (8.9)" in f.cause


def test_driver_too_old_with_a_known_driver() -> None:
    ctx = Context(driver=parse_driver_version("535.104.05"))
    (f,) = explain_text("CUDA driver version is insufficient for CUDA runtime version", ctx)
    assert "installed driver: 535.104.05" in f.cause
    assert f.fixes[0] == (
        "upgrade the NVIDIA driver from 535.104.05 to >= 580 for CUDA 13.x runtimes (>= 580.65.06 for the 13.0 GA "
        "toolkit)"
    )
    assert "https://download.pytorch.org/whl/cu126" in f.fixes[1]


def test_driver_too_old_from_torch_message() -> None:
    (f,) = explain_text("The NVIDIA driver on your system is too old (found version 11040).")
    assert "CUDA 11.4 at most" in f.cause
    assert "https://download.pytorch.org/whl/cu118" in f.fixes[1]


def test_ptx_too_new_for_a_known_driver() -> None:
    ctx = Context(driver=parse_driver_version("550.54.14"))
    (f,) = explain_text("CUDA error: the provided PTX was compiled with an unsupported toolchain.", ctx)
    assert "driver 550.54.14 JITs PTX ISA up to 8.4" in f.cause
    assert f.fixes[0].startswith("upgrade the NVIDIA driver from 550.54.14 to >= 555.42.02 (CUDA 12.5)")


def test_triton_ptxas_too_old_gets_triton_ptxas_path() -> None:
    text = (
        "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n"
        "ptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'"
    )
    (f,) = explain_text(text)
    assert "predates sm_120a, which needs CUDA >= 12.8" in f.cause
    assert f.fixes[0].startswith("point Triton at the ptxas of a CUDA >= 12.8 toolkit: export TRITON_PTXAS_PATH=")
    (g,) = explain_text("nvcc fatal   : Unsupported gpu architecture 'compute_110'")
    assert "CUDA >= 13.0" in g.cause
    assert "CUDA_HOME" in g.fixes[0]


def test_shared_memory_limit_names_the_gpus_and_the_excess() -> None:
    text = "out of resource: shared memory, Required: 131072, Hardware limit: 101376."
    (f,) = explain_text(text, Context(gpus=(RTX_3090, A100)))
    assert "29696 more than the hardware limit of 101376 bytes" in f.cause
    assert "8.6" in f.cause
    assert "8.9" in f.cause
    assert f.fixes[-1] == "or run it on NVIDIA A100-SXM4-80GB (8.0), which has enough shared memory"


def test_cpu_torch_gets_the_index_for_the_driver() -> None:
    ctx = Context(driver=parse_driver_version("570.124.06"))
    (f,) = explain_text("AssertionError: Torch not compiled with CUDA enabled", ctx)
    assert "https://download.pytorch.org/whl/cu126" in f.fixes[0]


def test_unknown_stays_unknown_with_a_machine() -> None:
    (f,) = explain_text("KeyError: 'x'", Context(gpus=(RTX_3090,)))
    assert f.category == "unknown"


def test_nvidia_libraries_get_no_rebuild_advice_and_empty_packages_no_blame() -> None:
    text = "/venv/lib/python3.11/site-packages/nvidia/cu13/lib/libcublas.so.13\n" + NO_IMAGE
    (f,) = explain_text(text, Context(gpus=(GTX_1080_TI,), packages={"nvidia/cu13": ()}))
    assert "carries" not in f.cause
    assert "https://download.pytorch.org/whl/cu126" in f.fixes[0]
    assert not any("--no-binary" in x or "cudafit check 'nvidia" in x for x in f.fixes)
    assert "NVIDIA's" in f.fixes[-1]


def test_no_kernel_image_on_a_mixed_host_names_the_mixed_host() -> None:
    findings = explain_text(NO_IMAGE, Context(gpus=(RTX_2080, RTX_3090)))
    assert [f.category for f in findings] == ["no-kernel-image", "mixed-gpu"]
    assert "no code for one of NVIDIA GeForce RTX 2080 (7.5), NVIDIA GeForce RTX 3090 (8.6)" in findings[0].cause
    assert 'TORCH_CUDA_ARCH_LIST="7.5;8.6"' in findings[1].fixes[0]


def test_no_kernel_image_on_two_gpus_of_one_capability_is_no_mixed_host() -> None:
    findings = explain_text(NO_IMAGE, Context(gpus=(T4, RTX_2080)))
    assert [f.category for f in findings] == ["no-kernel-image"]
    assert "one of" not in findings[0].cause
