"""Issue 18: message families of libraries beyond the ML stack and of engines' runtimes, each in its emitter's form.

Every text is the emitter's format string (the file the catalogue cites) with its placeholders filled in as the
program fills them; the test says the family is recognised, stands alone where it reports a failure, and counts
only beside a failure where it is a warning or a note.
"""

from __future__ import annotations

import pytest

from cudafit.explain import classify
from cudafit.explain.catalogue import iter_sources

FAMILIES = [
    # mixed-gpu: engines and builds made on another GPU, hosts of several GPUs
    ("mixed-gpu", "onnxruntime", "[TensorRT EP] The compute capability of the engine cache doesn't match with the "
     "GPU's compute capability. The compute capability of the engine cache: 86. The compute capability of the GPU: 89"),
    ("mixed-gpu", "onnxruntime", "[TensorRT EP] However, this GPU doesn't match. The compute capability of the "
     "GPU: 75"),
    ("mixed-gpu", "vllm", "WARNING cuda.py:95] Detected different devices in the system: NVIDIA GeForce RTX 3090, "
     "NVIDIA GeForce RTX 2080 Ti. Please make sure to set `CUDA_DEVICE_ORDER=PCI_BUS_ID` to avoid unexpected "
     "behavior."),
    ("mixed-gpu", "tiny-cuda-nn", "UserWarning: System has multiple GPUs with different compute capabilities: "
     "[86, 75]. Using compute capability 75 for best compatibility. This may result in suboptimal performance."),
    ("mixed-gpu", "tiny-cuda-nn", "OSError: Could not find compatible tinycudann extension for compute capability 89."),
    ("mixed-gpu", "torch-tensorrt", "WARNING: [Torch-TensorRT] - Configured SM capability 8.6 does not match with "
     "current device SM capability 7.5 (Device(ID: 0, Name: Tesla T4, SM Capability: 7.5)). Switching device context"),
    ("mixed-gpu", "torch-tensorrt", "ERROR: [Torch-TensorRT] - No compatible device found on system to run program."
     "\n Program targets Device(ID: 0, Name: NVIDIA A100, SM Capability: 8.0)"),
    ("mixed-gpu", "torch-tensorrt", "RuntimeError: No compatible device was found for instantiating TensorRT engine"),
    # ptx-jit-lower-arch and the toolchains that do not know the GPU
    ("ptx-jit-lower-arch", "tiny-cuda-nn", "UserWarning: tinycudann was built for lower compute capability (75) than "
     "the system's (86). Performance may be suboptimal."),
    ("jit-toolchain-too-old", "cuda.jl", "Your NVIDIA GeForce RTX 5090 GPU (compute capability 12.0) is not fully "
     "supported by CUDA 12.6. Some functionality may be broken. Ensure you are using the latest version of CUDA.jl"),
    ("jit-toolchain-too-old", "jax", "W external/xla/xla/service/gpu/llvm_gpu_backend/nvptx_backend.cc:118] Unknown "
     "compute capability 12.0. Defaulting to telling LLVM that we're compiling for sm_90a\nXlaRuntimeError: INTERNAL: "
     "Failed to load in-memory CUBIN"),
    # no-kernel-image
    ("no-kernel-image", "blender", "CUDA binary kernel for this graphics card compute capability (12.0) not found."),
    ("no-kernel-image", "gromacs", "WARNING: The gmx binary does not include support for the CUDA architecture of the "
     "GPU ID #0 (compute capability 3.5)."),
    # capability-guard: the libraries' own checks
    ("capability-guard", "cudf", "RuntimeError: A GPU with NVIDIA Volta™ (Compute Capability 7.0) or newer "
     "architecture is required.\nDetected GPU 0: Tesla P100-PCIE-16GB\nDetected Compute Capability: 6.0"),
    ("capability-guard", "cudf", "UnsupportedCUDAError: You will need a GPU with NVIDIA Pascal™ or newer architecture"
     "\nDetected GPU 0: GeForce GTX 980"),
    ("capability-guard", "cuda.jl", "Your NVIDIA GeForce GTX 750 Ti GPU (compute capability 5.0) is not supported by "
     "CUDA toolkit 13+. Please use a device with at least capability 7.5, or use an older CUDA toolkit."),
    ("capability-guard", "cuda.jl", "ERROR: CUDA.jl requires compute capability sm_50 or higher"),
    ("capability-guard", "gromacs", "#0: NVIDIA Tesla K10.G1.8GB, compute cap.: 3.0, ECC: no, stat: incompatible"),
    ("capability-guard", "blender", "CUDA backend requires compute capability 3.0 or up, but found 2.1."),
    ("capability-guard", "triton", "AssertionError: fp8e4nv data type is not supported on CUDA arch < 89"),
    ("capability-guard", "kmcuda", "compute capability mismatch for device 0: wanted 6.1, have 8.6\n>>>> you may want "
     "to build kmcuda with -DCUDA_ARCH=86 (refer to \"Building\" in README.md)"),
    ("capability-guard", "tiny-cuda-nn", "Warning: Insufficient compute capability 61 detected. This program was "
     "compiled for >=75 and may thus behave unexpectedly."),
    ("capability-guard", "cutlass", "Ampere Tensor Core operations must be run on a machine with compute capability at "
     "least 80."),
    ("capability-guard", "cutlass", "This example requires a GPU of NVIDIA's Hopper Architecture (compute capability "
     "90)."),
    ("capability-guard", "cutlass", "This example requires a GPU with compute capability 100a)."),
    ("capability-guard", "tilelang", "[BUG] T.gemm() fails on SM75 (Turing/T4) with \"SM80_16x8x16_F32F16F16F32_TN "
     "without CUTE_ARCH_MMA_SM80_ENABLED\""),
    ("ptx-jit-lower-arch", "cutlass", "Assertion `0 && \"Attempting to use SM80_16x8x16_F32F16F16F32_TN without "
     "CUTE_ARCH_MMA_SM80_ENABLED\"` failed.\nGPU: NVIDIA H100 80GB HBM3"),
    ("capability-guard", "onnxruntime", "[  FAILED  ] MoETest.MoETest_Gelu\nArch unsupported for MoE GEMM"),
    ("capability-guard", "cutlass", "This example requires a device of compute capability 89."),
    ("capability-guard", "cutlass", "OpError: expects arch to be at least sm_90, but got sm_80"),
    ("capability-guard", "deepspeed", "RuntimeError: Unable to JIT load the fp_quantizer op due to it not being "
     "compatible due to hardware/software issue. FP Quantizer is using an untested triton version"),
    ("capability-guard", "flash-attn", "AssertionError: Unsupported compute capability. Supported: 9.x, 10.x, 11.x, "
     "12.x"),
    ("capability-guard", "flash-attn", "RuntimeError: Only Hopper supports different V headdim"),
    ("capability-guard", "faiss", "Faiss assertion 'prop.major >= 3' failed: Device id 0 with CC 2.1 not supported, "
     "need 3.0+ compute capability"),
    ("capability-guard", "jax", "INTERNAL: Triton support is only enabled for Ampere GPUs (compute capability 8.0) and "
     "up, but got compute capability 7.5."),
    ("capability-guard", "torch", "RuntimeError: torch._scaled_grouped_mm is only supported on CUDA devices with "
     "compute capability = [9.0, 10.0], or ROCm MI300+"),
    ("capability-guard", "transformer-engine", "RuntimeError: RHT fusion is only supported on Blackwell."),
    # arch-specific-mismatch: a/f-only code meeting another GPU
    ("arch-specific-mismatch", "cutlass", "OpError: expects arch to be sm_90a, but got sm_120a"),
    ("arch-specific-mismatch", "cutlass", "DSLRuntimeError: Unsupported GPU architecture 'sm_120a'. This kernel is "
     "only compatible with: sm_100a, sm_103a."),
    ("arch-specific-mismatch", "transformer-engine", "RuntimeError: tensormap.replace is architecture-specific. "
     "Try recompiling with sm_XXXa instead of sm_XXX."),
    # shared-memory-limit
    ("shared-memory-limit", "tiny-cuda-nn", "FullyFusedMLP: insufficient shared memory available on the GPU. Reduce "
     "`n_neurons` or use `CutlassMLP` (better compatibility but slower) instead."),
    ("shared-memory-limit", "cutlass", "Configuration uses too much shared memory. Consider reducing stage count or "
     "tile shape. Details: Mainloop uses 32768 bytes of shared memory per stage, and 4 stages for a total of 131072"),
    ("shared-memory-limit", "jax", "RESOURCE_EXHAUSTED: Shared memory size limit exceeded: requested 131072, "
     "available: 101376"),
    ("shared-memory-limit", "jax", "Shared memory requested (180224 b) exceeds device resources (101376 b)."),
    ("shared-memory-limit", "ggml", "/app/ggml/src/ggml-cuda/mmid.cu:161: GGML_ASSERT(nbytes_shared <= smpbo) failed"),
    ("shared-memory-limit", "faiss", "Device 0 has 49152 bytes of shared memory, while 8 bits per code and 64 "
     "sub-quantizers requires 65536 bytes. Consider useFloat16LookupTables and/or reduce parameters"),
    ("shared-memory-limit", "faiss", "GpuIndexIVFScalarQuantizer: Insufficient shared memory available on the GPU "
     "for QT_8bit or QT_4bit with 4096 dimensions; maximum dimensions possible is 3072"),
    # wrong-framework-build: builds without CUDA
    ("wrong-framework-build", "warp", "RuntimeError: \"cuda\" device requested but this build of Warp does not "
     "support CUDA"),
    ("wrong-framework-build", "warp", "RuntimeError: This Warp build does not include CUDA support"),
    ("wrong-framework-build", "xgboost", "xgboost.core.XGBoostError: [10:12:01] src/common/common.h:41: XGBoost "
     "version not compiled with GPU support."),
    ("wrong-framework-build", "lightgbm", "[LightGBM] [Fatal] CUDA Tree Learner was not enabled in this build. Please "
     "recompile with CMake option -DUSE_CUDA=1 (NVIDIA GPUs) or -DUSE_ROCM=1 (AMD GPUs)"),
    ("wrong-framework-build", "dgl", "dgl._ffi.base.DGLError: Device API cuda is not enabled. Please install the cuda "
     "version of dgl."),
    ("wrong-framework-build", "tvm", "TVMError: Check failed: allow_missing: Device API cuda is not enabled."),
    ("wrong-framework-build", "mxnet", "MXNetError: Compile with USE_CUDA=1 to enable GPU usage"),
    ("wrong-framework-build", "thinc", "ValueError: Cannot use GPU, CuPy is not installed"),
    ("wrong-framework-build", "candle", "Error: the candle crate has not been built with cuda support"),
    ("wrong-framework-build", "torch", "RuntimeError: Cannot initialize CUDA without ATen_cuda library. PyTorch splits "
     "its backend into two shared libraries"),
    ("wrong-framework-build", "torchvision", "NotImplementedError: Could not run 'torchvision::nms' with arguments "
     "from the 'CUDA' backend. This could be because the operator doesn't exist for this backend"),
    ("wrong-framework-build", "torch", "RuntimeError: Distributed package doesn't have NCCL built in"),
]


@pytest.mark.parametrize(("category", "project", "text"), FAMILIES, ids=[f"{c}-{p}-{i}" for i, (c, p, _t) in
                                                                         enumerate(FAMILIES)])
def test_family_is_recognised(category: str, project: str, text: str) -> None:
    top = classify(text)[0]
    assert top.category == category, (top.category, top.evidence.get("lines"))
    assert top.evidence.get("sources"), "a finding cites where its message is written"


@pytest.mark.parametrize(
    "text",
    [
        # warnings and notes that report no failure by themselves
        "Detected this engine is being instantitated in a multi-GPU system with multi-device safe mode disabled.",
        "INFO: Cannot use FlashAttention-2 backend for Volta and Turing GPUs.",
        "TensorRT EP could not deserialize engine from cache: /tmp/trt/model.engine",
    ],
)
def test_a_note_alone_is_no_finding(text: str) -> None:
    assert classify(text)[0].category == "unknown"


def test_every_new_family_cites_a_file_of_its_project() -> None:
    cited = {source for _cat, source, _rx in iter_sources()}
    for source in (
        "NVlabs/tiny-cuda-nn:bindings/torch/tinycudann/modules.py",
        "pytorch/TensorRT:core/runtime/runtime.cpp",
        "rapidsai/cudf:python/cudf/cudf/utils/gpu_utils.py",
        "JuliaGPU/CUDA.jl:CUDACore/lib/cudadrv/state.jl",
        "gromacs/gromacs:src/gromacs/hardware/device_management.cu",
        "facebookresearch/faiss:faiss/gpu/StandardGpuResources.cpp",
    ):
        assert source in cited


MORE_FAMILIES = [
    ("driver-too-old", "nvidia-docker | 2017/10/13 08:33:01 Error: unsupported CUDA version: driver 8.0 < image "
     "9.0.176"),
    ("driver-too-old", "numba.cuda.cudadrv.error.CudaDriverError: Driver missing function: cuDeviceGetUuid"),
    ("driver-too-old", "WARNING: NVIDIA Insufficient driver!"),
    ("no-kernel-image", "WARNING: NVIDIA GPU 0: miner not compiled for the gpu architecture 30."),
    ("no-kernel-image", "error: (-216:No CUDA support) OpenCV was not built to work with the selected device. Please "
     "check CUDA_ARCH_PTX or CUDA_ARCH_BIN in your build configuration. in function 'initCUDABackend'"),
    ("wrong-framework-build", "OpenCV Error: The function/feature is not implemented (The called functionality is "
     "disabled for current build or platform) in throw_no_cuda, file private.cuda.hpp, line 101"),
    ("wrong-framework-build", "[vost#0:0 @ 0x55] Unknown encoder 'hevc_nvenc'"),
    ("capability-guard", "ValueError: bf16 mixed precision requires PyTorch >= 1.10 and a supported device."),
    ("capability-guard", "libcudnn.cudnnStatusArchMismatch"),
    ("ptx-jit-lower-arch", "Kokkos::Cuda::initialize WARNING: running kernels compiled for compute capability 3.5 on "
     "device with compute capability 3.7 , this will likely reduce potential performance."),
]


@pytest.mark.parametrize(("category", "text"), MORE_FAMILIES)
def test_more_families(category: str, text: str) -> None:
    assert classify(text)[0].category == category


def test_a_library_without_cuinit_is_no_old_driver() -> None:
    assert classify("CudaDriverError: driver missing function: cuInit.")[0].category == "unknown"
