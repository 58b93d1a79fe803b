"""Session 6: the emitter families of the categories other than the GPU-context ones (issue 18).

Each message below is written from its emitter's format string (the file the catalogue cites) filled with other
plausible values, not copied from a corpus record: ONNX Runtime's start-up timing of the CUDA provider, the dynamic
shared memory opt-in's "invalid argument", torch.load in a CPU-only torch, TensorFlow's and torch's build reports,
CuPy's run-time compiled modules, an invalid image under a driver too old for compressed fatbins, apex's and
DeepSpeed's toolkit checks, xformers' and torchvision's extension loaders, and hashcat's NVRTC result.
"""

from __future__ import annotations

import pytest

from cudafit.explain import classify


def top(text: str) -> str:
    return classify(text)[0].category


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # onnxruntime/core/providers/cuda/cuda_provider_factory.cc: LOGS_DEFAULT(WARNING) << "CUDA took " << n << ...
        (
            "2026-03-02 09:14:55.0012345 [W:onnxruntime:Default, cuda_provider_factory.cc:214 "
            "onnxruntime::CUDA_Provider::CreateExecutionProviderFactory] CUDA took 187 seconds to start, please see "
            "this issue for how to fix it: https://github.com/microsoft/onnxruntime/issues/10746",
            "ptx-jit-lower-arch",
        ),
        ("[W:onnxruntime:Default] CUDA took more than 30 seconds to start", "ptx-jit-lower-arch"),
        # the opt-in of dynamic shared memory (cudaFuncSetAttribute / cuFuncSetAttribute): CUDA_ERROR_INVALID_VALUE
        (
            "    out = kern((64,), (128,), (a, b, n), shared_mem=65536)\n"
            "cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_INVALID_VALUE: invalid argument",
            "shared-memory-limit",
        ),
        (
            "cudaFuncSetAttribute(gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 233472) returned "
            "cudaErrorInvalidValue",
            "shared-memory-limit",
        ),
        (
            "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 200000) failed: "
            "CUDA_ERROR_INVALID_VALUE",
            "shared-memory-limit",
        ),
        # torch/serialization.py (validate_cuda_device) beside a CPU-only torch: the build is the cause
        (
            "torch 2.6.0+cpu\nRuntimeError: Attempting to deserialize object on a CUDA device but "
            "torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with "
            "map_location=torch.device('cpu') to map your storages to the CPU.",
            "wrong-framework-build",
        ),
        (
            "PyTorch version: 2.7.1+cpu\nIs debug build: False\nCUDA used to build PyTorch: None\n"
            "ROCM used to build PyTorch: N/A\nRuntimeError: Attempting to deserialize object on a CUDA device but "
            "torch.cuda.is_available() is False.",
            "wrong-framework-build",
        ),
        # alone, or with the GPU hidden, the data must be mapped: what the message itself advises
        (
            "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
            "If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu').",
            "device-mismatch",
        ),
        # TensorFlow's build reports: tf.sysconfig.get_build_info(), and scripts printing tf.test.is_built_with_cuda()
        (
            "OrderedDict([('cpu_compiler', '/usr/lib/llvm-18/bin/clang'), ('is_cuda_build', False), "
            "('is_rocm_build', False), ('is_tensorrt_build', False)])",
            "wrong-framework-build",
        ),
        ("{'is_cuda_build': False, 'is_rocm_build': False}", "wrong-framework-build"),
        ("TF version: 2.18.0\nBuilt with CUDA: False\nGPUs: []", "wrong-framework-build"),
        # torch/utils/collect_env.py: "CUDA used to build PyTorch: {torch.version.cuda}"
        (
            "PyTorch version: 2.5.0+cpu\nCUDA used to build PyTorch: None\nROCM used to build PyTorch: N/A\n"
            "Is CUDA available: False",
            "wrong-framework-build",
        ),
        # cupy/cuda/compiler.py: the module CuPy built with its NVRTC is refused by the driver
        (
            '  File "cupy/_core/core.pyx", line 1379, in cupy._core.core._ndarray_base.__add__\n'
            "cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is "
            "available for execution on the device",
            "jit-toolchain-too-old",
        ),
        (
            "cupy.RawModule(code=src).get_function('k')\nCUDA_ERROR_INVALID_SOURCE: device kernel image is invalid",
            "jit-toolchain-too-old",
        ),
        # CUDA_ERROR_INVALID_IMAGE with a driver below what compressed fatbins need (550 for CUDA 12 builds)
        (
            "| NVIDIA-SMI 535.230.02             Driver Version: 535.230.02   CUDA Version: 12.2     |\n"
            "ggml_cuda_compute_forward: ADD failed\nCUDA error: device kernel image is invalid\n"
            "  current device: 0, in function ggml_cuda_compute_forward at ggml/src/ggml-cuda/ggml-cuda.cu:2400",
            "driver-too-old",
        ),
        ("NVIDIA Driver: 530.41.03\nRuntimeError: CUDA error: device kernel image is invalid", "driver-too-old"),
        # NVIDIA/apex setup.py and DeepSpeed's op builder (its head as titles quote it)
        (
            "RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the version "
            "used to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 12.4.",
            "toolkit-mismatch",
        ),
        ("Installed CUDA version 12.6 does not match torch's", "toolkit-mismatch"),
        # xformers/_cpp_lib.py (xFormersInvalidLibException) and torchvision's fake-kernel registration
        (
            "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
            "    PyTorch 2.5.1+cu124 with CUDA 1204 (you have 2.6.0+cu126)\n"
            "    Python  3.12.7 (you have 3.12.7)",
            "extension-abi-mismatch",
        ),
        ("RuntimeError: operator torchvision::roi_align does not exist", "extension-abi-mismatch"),
        ("RuntimeError: No such operator torchvision::deform_conv2d", "extension-abi-mismatch"),
        # torchvision/extension.py: its C++ ops not loaded, or built for another CUDA major than torch
        (
            "RuntimeError: Couldn't load custom C++ ops. This can happen if your PyTorch and torchvision versions are "
            "incompatible, or if you had errors while compiling torchvision from source.",
            "extension-abi-mismatch",
        ),
        (
            "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. "
            "PyTorch has CUDA Version=12.6 and torchvision has CUDA Version=13.0. Please reinstall the torchvision "
            "that matches your PyTorch install.",
            "toolkit-mismatch",  # the toolkit that built the extension is not torch's: the category's definition
        ),
        # torch's SDPA dispatcher explaining why no attention kernel can run on the GPU (sdp_utils.cpp)
        (
            "UserWarning: Flash attention only supports gpu architectures in the range [sm80, sm121]. Attempting to "
            "run on a sm 6.1 gpu.\nRuntimeError: No available kernel. Aborting execution.",
            "capability-guard",
        ),
        # jax_plugins/cuda/__init__.py: f"Unable to load {name}. Is it installed?"; XLA's cudart stub
        (
            "RuntimeError: Unable to use CUDA because of the following issues with CUDA components:\n"
            "Unable to load cuSPARSE. Is it installed?",
            "wrong-framework-build",
        ),
        (
            "I0000 00:00:1790000000.123456   1234 cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU "
            "will not be used.",
            "wrong-framework-build",
        ),
        # paddle/phi/backends/gpu/gpu_resources.cc: the build's CUDA above what the driver supports
        (
            "W0301 10:00:00.000000  4242 gpu_resources.cc:196] WARNING: device: 0. The installed Paddle is compiled "
            "with CUDA 12.6, but CUDA runtime version in your machine is 12.0, which may cause serious incompatible "
            "bug. Please recompile or reinstall Paddle with compatible CUDA version.",
            "driver-too-old",
        ),
        # bitsandbytes/cextension.py: no library of its own for the CUDA it found
        (
            "RuntimeError:\n        CUDA Setup failed despite GPU being available. Please run the following command "
            "to get more information:\n\n        python -m bitsandbytes",
            "wrong-framework-build",
        ),
        # JAX's colocation check and Windows' ERROR_PROC_NOT_FOUND for a torch extension module
        (
            "ValueError: primitive arguments must be colocated on the same device, got GpuDevice(id=1), "
            "GpuDevice(id=0)",
            "device-mismatch",
        ),
        (
            "ImportError: DLL load failed while importing flash_attn_2_cuda: The specified procedure could not be "
            "found.",
            "extension-abi-mismatch",
        ),
        # a guard's "require(s) a GPU with compute capability", and the PTX string quoted without its article
        ("ERROR: this model requires a GPU with Compute Capability 9.0 or higher", "capability-guard"),
        ("cuModuleLoadData failed: provided PTX was compiled with an unsupported toolchain.", "ptx-too-new-for-driver"),
        # hashcat passes NVRTC no option but the arch that varies: its INVALID_OPTION is an NVRTC older than the GPU
        ("hashcat (v6.2.6) starting\n* Device #1: NVRTC_ERROR_INVALID_OPTION", "jit-toolchain-too-old"),
    ],
)
def test_emitter_family(text: str, want: str) -> None:
    assert top(text) == want


@pytest.mark.parametrize(
    ("text", "not_want"),
    [
        # a small dynamic shared memory request: "invalid argument" is something else
        ("kern((1,), (32,), (x,), shared_mem=2048)\nCUDADriverError: CUDA_ERROR_INVALID_VALUE: invalid argument",
         "shared-memory-limit"),
        ("RuntimeError: CUDA error: invalid argument", "shared-memory-limit"),
        # a torch build's missing arch is not CuPy's NVRTC, even with cupy installed beside it
        ("RuntimeError: CUDA error: no kernel image is available for execution on the device", "jit-toolchain-too-old"),
        ("cupy-cuda12x==13.3.0\ntorch==2.7.0+cu126\nRuntimeError: CUDA error: no kernel image is available for "
         "execution on the device", "jit-toolchain-too-old"),
        # an invalid image under a driver new enough for compressed fatbins stays what the message says
        ("| Driver Version: 570.124.06 |\nCUDA error: device kernel image is invalid", "driver-too-old"),
        # ROCm builds of torch print N/A for CUDA
        ("CUDA used to build PyTorch: N/A\nROCM used to build PyTorch: 6.2.41133", "wrong-framework-build"),
        ("CUDA used to build PyTorch: None\nROCM used to build PyTorch: 6.2.41133", "wrong-framework-build"),
        # a Qt or GDAL DLL missing a procedure is no torch extension
        ("ImportError: DLL load failed while importing QtCore: The specified procedure could not be found.",
         "extension-abi-mismatch"),
        # the GPU hidden by CUDA_VISIBLE_DEVICES is not a CPU build
        ("os.environ['CUDA_VISIBLE_DEVICES'] = '3'\nRuntimeError: Attempting to deserialize object on a CUDA device "
         "but torch.cuda.is_available() is False.", "wrong-framework-build"),
    ],
)  # fmt: skip
def test_not_this_family(text: str, not_want: str) -> None:
    assert top(text) != not_want


def test_unrelated_invalid_argument_stays_unknown() -> None:
    assert [(f.category, f.confidence) for f in classify("CUDA error: invalid argument")] == [("unknown", 0.0)]
