"""Message families added to explain's catalogue from their emitters (issue 18, last line).

Each message below is what its emitter prints, not a corpus record: the ptxas and nvcc lines were produced
by CUDA 13.0's ptxas/nvcc on PTX and flags written to trigger each rejection (wgmma and setmaxnreg are
sm_90a-only, block-scaled ``mma`` is sm_120a/sm_121a-only: the same PTX assembles for the ``a`` target), and
the PyTorch lines are the format strings of the files the catalogue cites, filled in.  The corpus
(tests/test_explain_corpus.py) measures the classifier; these pin each family to its category.
"""

from __future__ import annotations

import pytest

from cudafit.explain import classify

# ptxas 13.0 assembling PTX that uses 'a'-only instructions for other targets.
PTXAS_ARCH_SPECIFIC = [
    "ptxas fatal   : PTX with .target 'sm_90a' cannot be compiled for architecture 'sm_90'",
    "ptxas a.ptx, line 6; error   : Instruction 'wgmma.fence' cannot be compiled for architecture 'sm_120'\n"
    "ptxas fatal   : Ptx assembly aborted due to errors",
    "ptxas b.ptx, line 6; error   : Instruction 'wgmma.fence' not supported on .target 'sm_90'\n"
    "ptxas b.ptx, line 7; error   : Instruction 'setmaxnreg.inc' not supported on .target 'sm_90'",
    "ptxas m.ptx, line 7; error   : Feature '.kind::mxf4' not supported on .target 'sm_120'\n"
    "ptxas m.ptx, line 7; error   : Feature '.block_scale' not supported on .target 'sm_120'\n"
    "ptxas fatal   : Ptx assembly aborted due to errors",
    "ptxas m.ptx, line 7; error   : Instruction 'mma with block scale' not supported on .target 'sm_120'",
]


@pytest.mark.parametrize("text", PTXAS_ARCH_SPECIFIC)
def test_ptxas_target_rejections_are_arch_specific(text: str) -> None:
    assert classify(text)[0].category == "arch-specific-mismatch"


def test_a_only_library_beside_no_kernel_image_is_arch_specific() -> None:
    # FlashMLA is built for sm_90a/sm_100a only (its setup.py); its name alone is no failure
    text = "CUDA error (csrc/flash_fwd_mla_kernel.h:678): no kernel image is available for execution on the device"
    assert classify(text)[0].category == "arch-specific-mismatch"
    assert classify("from flash_mla import flash_mla_with_kvcache")[0].category == "unknown"


# run-time compilers that do not know the arch they are asked for
TOOLCHAIN_TOO_OLD = [
    "nvcc fatal   : Value 'sm_200' is not defined for option 'gpu-code'",  # nvcc 13.0, run here
    "nvcc fatal : Value 'sm_89' is not defined for option 'gpu-architecture'",
    "ptxas fatal   : Value 'sm_200' is not defined for option 'gpu-name'",
    # torch.utils.cpp_extension._get_cuda_arch_flags
    'File "torch/utils/cpp_extension.py", line 1414, in _get_cuda_arch_flags\n'
    "ValueError: Unknown CUDA arch (12.0) or GPU not supported",
    "ValueError: Unknown CUDA arch (9.0+PTX) or GPU not supported",
    # nvrtcGetErrorString(NVRTC_ERROR_INVALID_OPTION) with the arch option of the same compile
    "options: --std=c++17 --gpu-architecture=sm_120\nnvrtcCompileProgram failed: NVRTC_ERROR_INVALID_OPTION",
    # triton/backends/nvidia/compiler.py ptx_get_version
    "RuntimeError: Triton only support CUDA 10.0 or higher, but got CUDA version: 9.2",
    # a toolkit ptxas older than the PTX it is given (ptxas 13.0, run here)
    "ptxas f.ptx, line 1; fatal   : Unsupported .version 9.9; current version is '9.0'",
    "ptxas t.ptx, line 2; fatal   : Unsupported .target 'sm_150'\nptxas fatal   : Ptx assembly aborted due to errors",
    # LLVM's NVPTX backend (llvm/lib/MC/MCSubtargetInfo.cpp) and clang's CUDA driver older than the GPU
    "'sm_120' is not a recognized processor for this target (ignoring processor)",
    "clang: error: unsupported CUDA gpu architecture: sm_120",
]


@pytest.mark.parametrize("text", TOOLCHAIN_TOO_OLD)
def test_runtime_compilers_that_predate_the_arch(text: str) -> None:
    assert classify(text)[0].category == "jit-toolchain-too-old"


def test_nvrtc_invalid_option_alone_is_not_claimed() -> None:
    assert classify("nvrtcCompileProgram failed: NVRTC_ERROR_INVALID_OPTION")[0].category == "unknown"


def test_unsupported_ptx_version_from_the_driver_is_the_driver() -> None:
    # CUDA_ERROR_UNSUPPORTED_PTX_VERSION comes from the driver's loader/JIT only (CUDA driver API reference)
    text = (
        "cuModuleLoadDataEx failed: CUDA_ERROR_UNSUPPORTED_PTX_VERSION log: "
        "ptxas application ptx input, line 9; fatal   : Unsupported .version 8.5; current version is '8.4'"
    )
    assert classify(text)[0].category == "ptx-too-new-for-driver"
    text = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION: ptxas application ptx input, line 9; fatal : Unsupported .version 9.0"
    assert classify(text)[0].category == "ptx-too-new-for-driver"
    text = (
        "cuModuleLoadData: a PTX JIT compilation failed\n"
        "ptxas application ptx input, line 2; fatal : Unsupported .target 'sm_120'"
    )
    assert classify(text)[0].category == "ptx-too-new-for-driver"


def test_driver_jit_of_arch_specific_ptx_is_arch_specific() -> None:
    # PTX ISA: PTX for an 'a' target cannot run on other devices, so the driver cannot JIT it for this GPU
    text = (
        "kernel.ptx (.target sm_90a): cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed"
    )
    assert classify(text)[0].category == "arch-specific-mismatch"


# PyTorch's device checks, by the file that raises each
DEVICE_MISMATCH = [
    # aten/src/ATen/native/RNN.h check_attributes
    "RuntimeError: Input and parameter tensors are not at the same device, found input tensor at cpu and "
    "parameter tensor at cuda:0",
    "RuntimeError: Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden "
    "tensor at cpu",
    # aten/src/ATen/native/Convolution.cpp, ATen type names of earlier releases and the bias variant
    "RuntimeError: Input type (CUDAFloatType) and weight type (CPUFloatType) should be the same",
    "RuntimeError: Input type (torch.FloatTensor) and bias type (torch.cuda.FloatTensor) should be the same",
    # aten/src/ATen/TensorUtils.cpp checkSameGPU
    "RuntimeError: Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 "
    "'weight'; but device 1 does not equal 0 (while checking arguments for cudnn_convolution)",
    # torch/nn/parallel/data_parallel.py
    "RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of "
    "them on device: cpu",
    # torch/_subclasses/fake_tensor.py and torch/_prims_common
    "RuntimeError: Unhandled FakeTensor Device Propagation for aten.mm.default, found two different devices "
    "cuda:0, cpu",
    "Tensor on device cpu is not on the expected device cuda:0!",
    # aten/src/ATen/core/Generator.h check_generator
    "RuntimeError: Expected a 'cuda' device type for generator but found 'cpu'",
    # aten/src/ATen/native/TensorAdvancedIndexing.cpp
    "RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)",
]


@pytest.mark.parametrize("text", DEVICE_MISMATCH)
def test_pytorch_device_checks(text: str) -> None:
    assert classify(text)[0].category == "device-mismatch"


def test_same_device_dtype_mismatch_is_not_a_device_mismatch() -> None:
    text = (
        "RuntimeError: Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same"
    )
    assert classify(text)[0].category == "unknown"


WRONG_BUILD = [
    # onnxruntime_pybind_state.cc: the CUDA provider library of onnxruntime-gpu failed to load
    "[W:onnxruntime:Default, onnxruntime_pybind_state.cc:861 CreateExecutionProviderInstance] Failed to create "
    "CUDAExecutionProvider. Please reference https://onnxruntime.ai/docs/execution-providers/"
    "CUDA-ExecutionProvider.html#requirements to ensure all dependencies are met.",
    # get_available_providers() of the CPU-only onnxruntime package
    ">>> onnxruntime.get_available_providers()\n['AzureExecutionProvider', 'CPUExecutionProvider']",
]


@pytest.mark.parametrize("text", WRONG_BUILD)
def test_onnxruntime_without_its_cuda_provider(text: str) -> None:
    assert classify(text)[0].category == "wrong-framework-build"


def test_unbalanced_data_parallel_host_missing_code_is_mixed() -> None:
    # torch/nn/parallel/data_parallel.py _check_balance, then the failure on one of the GPUs
    text = (
        "UserWarning: There is an imbalance between your GPUs. You may want to exclude GPU 1 which\n"
        "has less than 75% of the memory or cores of GPU 0.\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    )
    assert classify(text)[0].category == "mixed-gpu"
