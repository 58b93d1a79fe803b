"""Message families added from the emitters after the session-5 development batch (issue 18).

The development batch (``issue-18-session5-dev`` in tests/fixtures/explain_corpus/) showed which emitters the
catalogue did not know; each family below was then written from the code that prints it (the catalogue cites
the file), and the texts here are those format strings filled in the way the program prints them, not the
corpus records: a family must match every message its emitter can print, and nothing next to it.
"""

from __future__ import annotations

import pytest

from cudafit.explain import classify

# (message as its emitter prints it, category, the emitter the finding must cite)
EMITTED = [
    # ONNX Runtime's C API and Python binding on a build (or an install) without the CUDA/TensorRT provider
    ("onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : "
     "CUDA execution provider is not enabled in this build.", "wrong-framework-build", "provider_bridge_ort.cc"),
    ("Ort::Exception: TensorRT execution provider is not enabled in this build.", "wrong-framework-build",
     "provider_bridge_ort.cc"),
    ("[ONNXRuntimeError] : 1 : FAIL : CUDA and/or ROCM execution provider is either not enabled or not available.",
     "wrong-framework-build", "provider_bridge_ort.cc"),
    ("OrtSessionOptionsAppendExecutionProvider_Cuda: Failed to load shared library", "wrong-framework-build",
     "provider_bridge_ort.cc"),
    ("RuntimeError: D:\\a\\_work\\1\\s\\onnxruntime\\python\\onnxruntime_pybind_state.cc:857 "
     "onnxruntime::python::CreateExecutionProviderInstance CUDA_PATH is set but CUDA wasnt able to be loaded. Please "
     "install the correct version of CUDA andcuDNN as mentioned in the GPU requirements page", "wrong-framework-build",
     "onnxruntime_pybind_state.cc"),
    # usls' engine: the ort crate has no such provider, or usls was built without the cargo feature
    ("Error: Please compile ONNXRuntime with CUDA", "wrong-framework-build", "usls"),
    ("Error: TensorRT EP requires the features: `tensorrt`. \nConsider enabling them by passing, e.g., "
     "`--features tensorrt`", "wrong-framework-build", "usls"),
    # tf.test.is_built_with_cuda() answering False, as a session or a title shows it
    (">>> tf.test.is_built_with_cuda()\nFalse", "wrong-framework-build", "platform/test.py"),
    ("print(tf.test.is_built_with_cuda())  # -> False", "wrong-framework-build", "platform/test.py"),
    ("tf.test.is_built_with_cuda returns False on my machine", "wrong-framework-build", "platform/test.py"),
    # SageAttention's per-arch asserts (sageattention/core.py): the module for the GPU's arch did not import
    ("AssertionError: SM80 kernel is not available. make sure you GPUs with compute capability 8.0 or higher.",
     "capability-guard", "SageAttention"),
    ("AssertionError: SM89 kernel is not available. Make sure you GPUs with compute capability 8.9.",
     "capability-guard", "SageAttention"),
    ("Error running sage attention: SM90 kernel is not available. Make sure you GPUs with compute capability 9.0., "
     "using pytorch attention instead.", "capability-guard", "SageAttention"),
    # ollama's cudart probe when cudaSetDevice returns cudaErrorInsufficientDriver, both releases' wordings
    ('level=INFO source=gpu.go:343 msg="Unable to load cudart CUDA management library '
     "/tmp/ollama1/runners/cuda_v11/libcudart.so.11.0: your nvidia driver is too old or missing, please upgrade "
     'to run ollama"', "driver-too-old", "gpu_info_cudart.c"),
    ('level=DEBUG source=gpu.go:593 msg="Unable to load cudart library /usr/lib/ollama/cuda_v12/libcudart.so.12:'
     ' your nvidia driver is too old or missing.  If you have a CUDA GPU please upgrade to run ollama"',
     "driver-too-old", "gpu_info_cudart.c"),
    # Triton's OutOfResources in every release's format, cut or whole; Warp's warning when configuring fails
    ('raise OutOfResources(self.metadata.shared, max_shared, "shared memory")\n'
     "triton.runtime.errors.OutOfResources: out of resource: shared memory,", "shared-memory-limit", "errors.py"),
    ("triton.code_gen.OutOfResources: out of resource: shared memoryRequired: 98304Hardware limit: 65536",
     "shared-memory-limit", "errors.py"),
    ("Warp UserWarning: Failed to configure kernel dynamic shared memory for this device, tried to configure "
     "tile_gemm_cuda_kernel_forward kernel for 165000 bytes, but maximum available is 101376", "shared-memory-limit",
     "warp/context.py"),
    # nvcc's diagnostic quoted without its "nvcc fatal :" prefix, as CMake, ninja or an issue title repeat it
    ("Unsupported gpu architecture 'compute_100'", "jit-toolchain-too-old", "cuda-compiler-driver-nvcc"),
    ("CMake Error: nvcc failed: Unsupported gpu architecture 'sm_120a'", "jit-toolchain-too-old",
     "cuda-compiler-driver-nvcc"),
    # kernel_forward.h's printf "FATAL: kernel `%s` is for sm%d-sm%d, but was built for sm%d", cut after the name
    ('I am getting the error "FATAL: kernel `fmha_cutlassF_f16_aligned_64x128_rf_sm80`" on my new GPU',
     "ptx-jit-lower-arch", "kernel_forward.h"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "category", "emitter"), EMITTED)
def test_emitted_messages_get_their_category_and_cite_the_emitter(text: str, category: str, emitter: str) -> None:
    (top, *_rest) = classify(text)
    assert top.category == category
    assert any(emitter in source for source in top.evidence["sources"])


# Next to each family: what its emitter prints when nothing is wrong, or for something else.
NOT_CLAIMED = [
    (">>> tf.test.is_built_with_cuda()\nTrue", "wrong-framework-build"),
    ("Error: Please compile ONNXRuntime with CoreML", "wrong-framework-build"),
    ("OpenVINO execution provider is not enabled in this build.", "wrong-framework-build"),
    ("triton.runtime.errors.OutOfResources: out of resource: registers, Required: 300, Hardware limit: 255",
     "shared-memory-limit"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "category"), NOT_CLAIMED)
def test_the_emitters_other_messages_are_not_claimed(text: str, category: str) -> None:
    assert classify(text)[0].category != category
