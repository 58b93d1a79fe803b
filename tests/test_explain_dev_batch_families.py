"""Message families added from the emitters after the session-5 development batch (issue 18).

The development batch (``issue-18-session5-dev`` in tests/fixtures/explain_corpus/) showed which emitters the
catalogue did not know; each family below was then written from the code that prints it (the catalogue cites
the file), and the texts here are those format strings filled in the way the program prints them, not the
corpus records: a family must match every message its emitter can print, and nothing next to it.
"""

from __future__ import annotations

import pytest

from cudafit.explain import classify


def top(text: str) -> str:
    return classify(text)[0].category


# ONNX Runtime's C API (provider_bridge_ort.cc) and usls' engine on a build without the CUDA/TensorRT provider;
# TensorFlow's tf.test.is_built_with_cuda() answering False.
WRONG_BUILD = [
    "onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : "
    "CUDA execution provider is not enabled in this build.",
    "Ort::Exception: TensorRT execution provider is not enabled in this build.",
    "[ONNXRuntimeError] : 1 : FAIL : CUDA and/or ROCM execution provider is either not enabled or not available.",
    "OrtSessionOptionsAppendExecutionProvider_Cuda: Failed to load shared library",
    "RuntimeError: D:\\a\\_work\\1\\s\\onnxruntime\\python\\onnxruntime_pybind_state.cc:857 "
    "onnxruntime::python::CreateExecutionProviderInstance CUDA_PATH is set but CUDA wasnt able to be loaded. Please "
    "install the correct version of CUDA andcuDNN as mentioned in the GPU requirements page",
    "Error: Please compile ONNXRuntime with CUDA",
    "Error: TensorRT EP requires the features: `tensorrt`. \nConsider enabling them by passing, e.g., "
    "`--features tensorrt`",
    ">>> tf.test.is_built_with_cuda()\nFalse",
    "print(tf.test.is_built_with_cuda())  # -> False",
    "tf.test.is_built_with_cuda returns False on my machine",
]


@pytest.mark.parametrize("text", WRONG_BUILD)
def test_builds_without_the_gpu_provider(text: str) -> None:
    assert top(text) == "wrong-framework-build"


@pytest.mark.parametrize(
    "text",
    [
        ">>> tf.test.is_built_with_cuda()\nTrue",
        "Error: Please compile ONNXRuntime with CoreML",
        "OpenVINO execution provider is not enabled in this build.",
    ],
)
def test_builds_with_cuda_or_other_providers_are_not_claimed(text: str) -> None:
    assert top(text) != "wrong-framework-build"


# SageAttention's per-arch asserts (sageattention/core.py): the module for the GPU's arch did not import.
@pytest.mark.parametrize(
    "text",
    [
        "AssertionError: SM80 kernel is not available. make sure you GPUs with compute capability 8.0 or higher.",
        "AssertionError: SM89 kernel is not available. Make sure you GPUs with compute capability 8.9.",
        "Error running sage attention: SM90 kernel is not available. Make sure you GPUs with compute capability 9.0., "
        "using pytorch attention instead.",
    ],
)
def test_sageattention_arch_asserts_are_capability_guards(text: str) -> None:
    assert top(text) == "capability-guard"


# ollama's cudart probe (gpu/gpu_info_cudart.c) when cudaSetDevice returns cudaErrorInsufficientDriver.
@pytest.mark.parametrize(
    "text",
    [
        'level=INFO source=gpu.go:343 msg="Unable to load cudart CUDA management library '
        '/tmp/ollama1/runners/cuda_v11/libcudart.so.11.0: your nvidia driver is too old or missing, please upgrade '
        'to run ollama"',
        'level=DEBUG source=gpu.go:593 msg="Unable to load cudart library /usr/lib/ollama/cuda_v12/libcudart.so.12:'
        ' your nvidia driver is too old or missing.  If you have a CUDA GPU please upgrade to run ollama"',
    ],
)
def test_ollama_cudart_probe_on_an_old_driver(text: str) -> None:
    assert top(text) == "driver-too-old"


# Triton's OutOfResources (runtime/errors.py) in every release's format, cut or whole, and Warp's warning when
# cuda_configure_kernel_shared_memory fails (warp/context.py).
@pytest.mark.parametrize(
    "text",
    [
        'raise OutOfResources(self.metadata.shared, max_shared, "shared memory")\n'
        "triton.runtime.errors.OutOfResources: out of resource: shared memory,",
        "triton.code_gen.OutOfResources: out of resource: shared memoryRequired: 98304Hardware limit: 65536",
        "Warp UserWarning: Failed to configure kernel dynamic shared memory for this device, tried to configure "
        "tile_gemm_cuda_kernel_forward kernel for 165000 bytes, but maximum available is 101376",
    ],
)
def test_shared_memory_over_the_block_limit(text: str) -> None:
    assert top(text) == "shared-memory-limit"


def test_other_triton_resources_are_not_shared_memory() -> None:
    text = "triton.runtime.errors.OutOfResources: out of resource: registers, Required: 300, Hardware limit: 255"
    assert top(text) != "shared-memory-limit"


# nvcc's diagnostic quoted without its "nvcc fatal :" prefix, as CMake, ninja or an issue title repeat it.
@pytest.mark.parametrize(
    "text",
    [
        "Unsupported gpu architecture 'compute_100'",
        "CMake Error: nvcc failed: Unsupported gpu architecture 'sm_120a'",
    ],
)
def test_nvcc_arch_rejection_without_its_prefix(text: str) -> None:
    assert top(text) == "jit-toolchain-too-old"


def test_memory_efficient_attention_fatal_cut_before_its_range() -> None:
    # kernel_forward.h's printf "FATAL: kernel `%s` is for sm%d-sm%d, but was built for sm%d", cut after the name
    text = 'I am getting the error "FATAL: kernel `fmha_cutlassF_f16_aligned_64x128_rf_sm80`" on my new GPU'
    assert top(text) == "ptx-jit-lower-arch"
