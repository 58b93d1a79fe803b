"""The failure categories ``cudafit explain`` recognises: ids, patterns with weights and sources, cause, fixes.

Ids and scope are those of shared/docs/error_categories.md.  The patterns are derived from the code
that *emits* each message, not from examples of it: the CUDA runtime's and driver's error strings
(``cudaGetErrorString`` / ``cuGetErrorString``), the compilers' diagnostics (nvcc, ptxas, NVRTC)
and the checks in the frameworks and libraries (PyTorch, Triton/Inductor, JAX, TensorFlow, ONNX
Runtime, CTranslate2, Paddle, TensorRT, ggml, numba, CuPy, bitsandbytes, xformers, flash-attn,
FlashInfer, vLLM, DeepSpeed, detectron2/mmcv, TransformerEngine, DeepGEMM, CUTLASS).  Every pattern
carries its ``source``: the emitting file as ``owner/repo:path`` (GitHub), or NVIDIA's documentation
URL for the strings of closed-source components; the message text is written in that place, so a
pattern matches every message that code can print (placeholders become ``\\S+`` / ``\\d+``), not the
few a corpus happened to hold.

Each pattern adds its weight to its category's score when it matches the cleaned text; a category
needs :data:`MIN_SCORE` to be reported.  Weights say how specific a line is: an emitter's exact
message weighs 3-4, generic words (``AOTI``, ``CUDA_VISIBLE_DEVICES``) ~1 so that they only count
next to a real error.  ``vetoes`` name what a category's weaker patterns must not be confused with
(``/dev/shm`` is not the GPU's shared memory).  Causes and fixes here are the ungrounded defaults;
:func:`cudafit.explain.ground` replaces the placeholders with this machine's facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from cudafit.explain.extract import UNPREFIXED_AF_MENTION
from cudafit.explain.forms import iter_form_sources
from cudafit.rules.ecosystem import load_ecosystem

__all__ = [
    "CATEGORIES",
    "CUT_SHORT_MESSAGES",
    "CUT_SHORT_MIN",
    "DRIVER_JIT",
    "MIN_SCORE",
    "PLAIN_CUTE_ATOM",
    "SOURCE_PROJECTS",
    "TORCH_CUDA",
    "Category",
    "MessageHead",
    "Pattern",
    "category",
    "iter_sources",
    "project_of",
]

MIN_SCORE = 1.5


@dataclass(frozen=True)
class Pattern:
    """A regular expression (case-insensitive), how strongly it points at its category, and its emitter.

    ``source`` is where the message is written: ``owner/repo:path`` or an NVIDIA documentation URL.
    """

    regex: re.Pattern[str]
    weight: float
    source: str
    written: str = ""  # the pattern as written (``regex`` also reads a space as a wrapped line's newline)

    @property
    def shown(self) -> str:
        """The pattern as the catalogue lists it."""
        return self.written or self.regex.pattern


@dataclass(frozen=True)
class Category:
    """One failure category of the catalogue, with its ungrounded cause and fixes.

    ``vetoes``: texts that show a weak match (strongest pattern < 3) is something else.
    """

    id: str
    title: str
    patterns: tuple[Pattern, ...]
    cause: str
    fixes: tuple[str, ...]
    vetoes: tuple[Pattern, ...] = ()


def _wrappable(rx: str) -> str:
    """``rx`` with each literal space (outside a character class, not quantified) also matching a newline: a message
    pasted into an issue or written by a terminal is often wrapped where a space was ("Failed to set the allowed
    dynamic shared\nmemory size"), and it is the same message.  One character for one, so no pattern gains
    overlapping runs (linear time is kept)."""
    if "(?x" in rx:  # a verbose pattern's spaces are not literal
        return rx
    out: list[str] = []
    in_class = escaped = False
    for i, ch in enumerate(rx):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif in_class:
            # a "]" right after "[" or "[^" is a literal member, not the class's end
            in_class = ch != "]" or rx[i - 1] == "[" or rx[i - 2 : i] == "[^"
        elif ch == "[":
            in_class = True
        elif ch == " " and rx[i + 1 : i + 2] not in ("?", "*", "+", "{"):
            out.append("[ \n]")
            continue
        out.append(ch)
    return "".join(out)


def _p(rx: str, weight: float, source: str) -> Pattern:
    return Pattern(re.compile(_wrappable(rx), re.I), weight, source, rx)


# The emitters, by place.  NVIDIA's closed-source strings cite the documentation that lists them.
CUDART = "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html"
CUDRV = "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html"
NVCC = "https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html"
NVRTC = "https://docs.nvidia.com/cuda/nvrtc/index.html"
PTX_ISA = "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html"
PG_ARCH = "https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/compute-capabilities.html"
TRT_HW_COMPAT = "https://docs.nvidia.com/deeplearning/tensorrt/developer-guide/index.html#advanced"
RUST_CUST = "Rust-GPU/Rust-CUDA:crates/cust/src/error.rs"
# CUDA_DEVICE_ORDER: FASTEST_FIRST (the default) numbers devices fastest first, PCI_BUS_ID as nvidia-smi does.
CUDA_ENV_VARS = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars"
COMPAT = "https://docs.nvidia.com/deploy/cuda-compatibility/index.html"
CUDNN = "https://docs.nvidia.com/deeplearning/cudnn/backend/latest/api/cudnn-graph-library.html"
CUBLAS = "https://docs.nvidia.com/cuda/cublas/index.html"
TRT = "https://docs.nvidia.com/deeplearning/tensorrt/latest/getting-started/support-matrix.html"
TORCH_CUDA = "pytorch/pytorch:torch/cuda/__init__.py"
TORCH_C10 = "pytorch/pytorch:c10/cuda/CUDAFunctions.cpp"
TORCH_EXT = "pytorch/pytorch:torch/utils/cpp_extension.py"
TORCH_SER = "pytorch/pytorch:torch/serialization.py"
TORCH_CONV = "pytorch/pytorch:aten/src/ATen/native/Convolution.cpp"
TORCH_ITER = "pytorch/pytorch:aten/src/ATen/TensorIterator.cpp"
TORCH_MEA = "pytorch/pytorch:aten/src/ATen/native/transformers/cuda/mem_eff_attention/kernel_forward.h"
TORCH_INDUCTOR = "pytorch/pytorch:torch/_inductor/exc.py"
TORCH_AOTI = "pytorch/pytorch:torch/csrc/inductor/aoti_runner/model_container_runner_cuda.cpp"
TORCH_DATALOADER = "pytorch/pytorch:torch/utils/data/_utils/signal_handling.py"
TORCH_RNN = "pytorch/pytorch:aten/src/ATen/native/RNN.h"
TORCH_TENSOR_UTILS = "pytorch/pytorch:aten/src/ATen/TensorUtils.cpp"
TORCH_DATA_PARALLEL = "pytorch/pytorch:torch/nn/parallel/data_parallel.py"
TORCH_FAKE_TENSOR = "pytorch/pytorch:torch/_subclasses/fake_tensor.py"
TORCH_INDEXING = "pytorch/pytorch:aten/src/ATen/native/TensorAdvancedIndexing.cpp"
TORCH_PRIMS = "pytorch/pytorch:torch/_prims_common/__init__.py"
TORCH_GENERATOR = "pytorch/pytorch:aten/src/ATen/core/Generator.h"
TRITON_ERRORS = "triton-lang/triton:python/triton/runtime/errors.py"
# Triton's kernel cache: its key carries the GPU's arch since triton#1593; a cubin from another GPU's cache is the
# mixed-gpu reading of Triton's "device kernel image is invalid" (classify._triton_cubin_of_another_gpu).
TRITON_CACHE = "triton-lang/triton:python/triton/runtime/cache.py"
BNB_SETUP = "bitsandbytes-foundation/bitsandbytes:bitsandbytes/cuda_setup/main.py"
TORCH_MEA_DISPATCH = "pytorch/pytorch:aten/src/ATen/native/transformers/cuda/attention.cu"
KOKKOS_CUDA = "kokkos/kokkos:core/src/Cuda/Kokkos_Cuda_Instance.cpp"
FFMPEG_NVENC = "FFmpeg/FFmpeg:libavcodec/nvenc.c"
TEI_CANDLE = "huggingface/text-embeddings-inference:backends/candle/src/lib.rs"
CCCL_PTX = "NVIDIA/cccl:libcudacxx/include/cuda/__ptx/instructions/generated/setmaxnreg.h"
NVHPC = "https://docs.nvidia.com/hpc-sdk/compilers/hpc-compilers-user-guide/index.html"
TORCH_STATIC_LAUNCHER = "pytorch/pytorch:torch/csrc/inductor/static_cuda_launcher.cpp"
TRITON_NVIDIA = "triton-lang/triton:third_party/nvidia/backend/compiler.py"
JAX_BRIDGE = "jax-ml/jax:jax/_src/xla_bridge.py"
JAX_STAGES = "jax-ml/jax:jax/_src/stages.py"
XLA_PTXAS = "openxla/xla:xla/stream_executor/cuda/ptx_compiler_helpers.cc"
TF_GPU = "tensorflow/tensorflow:tensorflow/core/common_runtime/gpu/gpu_device.cc"
ORT_PY = "microsoft/onnxruntime:onnxruntime/python/onnxruntime_inference_collection.py"
ORT_CUDA = "microsoft/onnxruntime:onnxruntime/core/providers/cuda/cuda_call.cc"
ORT_PYBIND = "microsoft/onnxruntime:onnxruntime/python/onnxruntime_pybind_state.cc"
WARP_CONTEXT = "NVIDIA/warp:warp/context.py"
OLLAMA_CUDART = "ollama/ollama:gpu/gpu_info_cudart.c"
SAGEATTN = "thu-ml/SageAttention:sageattention/core.py"
ORT_BRIDGE = "microsoft/onnxruntime:onnxruntime/core/session/provider_bridge_ort.cc"
# usls (Rust, on the ort crate): OrtEngine's build_session bails with its compile_help / feature_help strings.
USLS_ENGINE = "jamjamjon/usls:src/core/ort_engine.rs"
TF_TEST = "tensorflow/tensorflow:tensorflow/python/platform/test.py"
CT2_DEVICES = "OpenNMT/CTranslate2:src/devices.cc"
CT2_CUDA = "OpenNMT/CTranslate2:src/cuda/utils.h"
CT2_TYPES = "OpenNMT/CTranslate2:src/types.cc"
CT2_CUBLAS = "OpenNMT/CTranslate2:src/cuda/cublas_stub.cc"
NUMBA_NVVM = "numba/numba:numba/cuda/cudadrv/nvvm.py"
JAX_PLUGIN = "jax-ml/jax:jax_plugins/cuda/__init__.py"
PADDLE_DEVICE = "PaddlePaddle/Paddle:python/paddle/device/__init__.py"
PADDLE_GPU = "PaddlePaddle/Paddle:paddle/phi/backends/gpu/gpu_resources.cc"
PADDLE_PLACE = "PaddlePaddle/Paddle:paddle/fluid/pybind/place.cc"
GGML_COMMON = "ggml-org/llama.cpp:ggml/src/ggml-cuda/common.cuh"
GGML_CUDA = "ggml-org/llama.cpp:ggml/src/ggml-cuda/ggml-cuda.cu"
NUMBA_DRIVER = "numba/numba:numba/cuda/cudadrv/driver.py"
CUPY_SOFTLINK = "cupy/cupy:cupy_backends/cuda/_softlink.pyx"
SPCONV = "traveller59/spconv:spconv/pytorch/cppcore.py"
SPCONV_OPS = "traveller59/spconv:spconv/csrc/sparse/convops.py"
VLLM_CT = "vllm-project/vllm:vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py"
BNB = "bitsandbytes-foundation/bitsandbytes:bitsandbytes/cextension.py"
XFORMERS = "facebookresearch/xformers:xformers/ops/fmha/common.py"
FLASH_ATTN = "Dao-AILab/flash-attention:csrc/flash_attn/flash_api.cpp"
FLASH_ATTN_V1 = "Dao-AILab/flash-attention:csrc/flash_attn/fmha_api.cpp"
FLASH_ATTN_LAUNCH = "Dao-AILab/flash-attention:csrc/flash_attn/src/flash_fwd_launch_template.h"
FLASHINFER = "flashinfer-ai/flashinfer:flashinfer/jit/core.py"
VLLM = "vllm-project/vllm:vllm/platforms/cuda.py"
VLLM_CONFIG = "vllm-project/vllm:vllm/config/vllm.py"
XLA_DNN = "openxla/xla:xla/stream_executor/cuda/cuda_dnn.cc"
DEEPSPEED_BUILDER = "deepspeedai/DeepSpeed:op_builder/builder.py"
DEEPSPEED_FLASH = "deepspeedai/DeepSpeed:deepspeed/inference/v2/kernels/ragged_ops/blocked_flash/blocked_flash.py"
DETECTRON2 = "facebookresearch/detectron2:detectron2/layers/csrc/deformable/deform_conv.h"
MMCV = "open-mmlab/mmcv:mmcv/ops/csrc/pytorch/deform_conv.cpp"
TE_FP8 = "NVIDIA/TransformerEngine:transformer_engine/pytorch/quantization.py"
TE_COMMON = "NVIDIA/TransformerEngine:transformer_engine/common/ep/ep_backend.cpp"
DEEPGEMM = "deepseek-ai/DeepGEMM:csrc/apis/attention.hpp"
CUTLASS_GMMA = "NVIDIA/cutlass:include/cute/arch/mma_sm90_gmma.hpp"
CUTLASS_KERNEL = "NVIDIA/cutlass:include/cutlass/gemm/kernel/sm90_gemm_tma_warpspecialized.hpp"
CUTE_CONFIG = "NVIDIA/cutlass:include/cute/arch/config.hpp"
THRUST_UTIL = "NVIDIA/cccl:thrust/thrust/system/cuda/detail/core/util.h"
FLASHINFER_ENV = "flashinfer-ai/flashinfer:flashinfer/jit/env.py"
FLASHINFER_CONTEXT = "flashinfer-ai/flashinfer:flashinfer/compilation_context.py"
FLASHMLA_API = "deepseek-ai/FlashMLA:csrc/api/dense_decode.h"
FA3_API = "Dao-AILab/flash-attention:hopper/flash_api.cpp"
VLLM_SCALED_MM = "vllm-project/vllm:csrc/quantization/cutlass_w8a8/scaled_mm_entry.cu"
VLLM_NVFP4 = "vllm-project/vllm:csrc/quantization/fp4/nvfp4_scaled_mm_entry.cu"
# CUTLASS's Status strings (cutlassGetStatusString): kErrorInternal is "Error Internal", what the device-level
# adapters return when the kernel launch itself fails (gemm/device/gemm_universal_adapter.h: cudaGetLastError() !=
# cudaSuccess), kErrorArchMismatch "Error Architecture Mismatch".  vLLM's and sglang's CUTLASS_CHECK raise the
# string alone ("RuntimeError: Error Internal"), CUTLASS's examples print "Got cutlass error: Error Internal at: N".
CUTLASS_STATUS = "NVIDIA/cutlass:include/cutlass/cutlass.h"
VLLM_CUTLASS_CHECK = "vllm-project/vllm:csrc/cutlass_extensions/common.hpp"
# TensorRT-LLM's trtllm-gen runners (and FlashInfer's copy) look their cubins up by a key that includes the SM:
# TLLM_CHECK_WITH_INFO(findIter != mFunctions.end(), "Trtllm-gen kernels not found: " + info).
TRTLLM_GEN = "NVIDIA/TensorRT-LLM:cpp/tensorrt_llm/kernels/trtllmGenKernels/fmha/fmhaKernels.h"
# FlashMLA's setup.py builds -gencode arch=compute_90a,code=sm_90a and compute_100f,code=sm_100f only (earlier
# releases and sgl-kernel's cmake/flashmla.cmake: sm_90a, sm_100a): no plain-arch code, no PTX.
FLASHMLA_BUILD = "deepseek-ai/FlashMLA:setup.py"
# FlashAttention-3's hopper/setup.py builds the extension flash_attn_3_cuda with -gencode arch=compute_90a,code=sm_90a
# (the *_sm90.cu instantiations; *_sm100.cu: compute_100a, *_sm80.cu: sm_80 cubins): no PTX, and no code for a GPU
# outside sm_80-family cubins and the a targets.  Its sources (hopper/flash_fwd_launch_template.h, ...) name it.
FA3_BUILD = "Dao-AILab/flash-attention:hopper/setup.py"
# vLLM's Machete kernels: cuda_archs_loose_intersection(MACHETE_ARCHS "9.0a" "${CUDA_ARCHS}") -- Hopper's a target only.
MACHETE_BUILD = "vllm-project/vllm:CMakeLists.txt"
# hashcat (src/ext_nvrtc.c) reports NVRTC's result as "nvrtcCompileProgram(): %s"; the options it passes are fixed
# but for --gpu-architecture=compute_<the device's sm_major*10+sm_minor> (src/backend.c), so NVRTC's
# NVRTC_ERROR_INVALID_OPTION there is an NVRTC older than the GPU.
HASHCAT_NVRTC = "hashcat/hashcat:src/ext_nvrtc.c"
LLVM_SUBTARGET = "llvm/llvm-project:llvm/lib/MC/MCSubtargetInfo.cpp"
LLVM_NVPTX_SUBTARGET = "llvm/llvm-project:llvm/lib/Target/NVPTX/NVPTXSubtarget.cpp"
CLANG_DRIVER = "llvm/llvm-project:clang/include/clang/Basic/DiagnosticDriverKinds.td"
# Session 6 (the categories other than the GPU-context ones), each family's emitter:
# ONNX Runtime's CUDA provider times its first CUDA call, which makes the driver JIT-compile the build's PTX when the
# library carries no cubin for the GPU: "CUDA took N seconds to start, please see this issue for how to fix it:
# https://github.com/microsoft/onnxruntime/issues/10746" (the first release: "CUDA took more than 30 seconds to start").
ORT_CUDA_FACTORY = "microsoft/onnxruntime:onnxruntime/core/providers/cuda/cuda_provider_factory.cc"
# torch's collect_env prints "CUDA used to build PyTorch: {torch.version.cuda}": None for a CPU-only build ("N/A" and
# a "ROCM used to build PyTorch: 6.x" line for ROCm builds).
TORCH_COLLECT_ENV = "pytorch/pytorch:torch/utils/collect_env.py"
# tf.sysconfig.get_build_info() is generated at build time: {'is_cuda_build': False, ...} for a build without CUDA.
TF_BUILD_INFO = "tensorflow/tensorflow:tensorflow/tools/build_info/gen_build_info.py"
# NVIDIA apex's setup.py (check_cuda_torch_binary_vs_bare_metal) refuses an nvcc whose CUDA differs from torch's.
APEX_SETUP = "NVIDIA/apex:setup.py"
# xformers' _cpp_lib.py (xFormersInvalidLibException): "xFormers can't load C++/CUDA extensions. xFormers was built
# for:\n    PyTorch {torch_version} with CUDA {cuda_version} (you have {torch.__version__})".
XFORMERS_CPP_LIB = "facebookresearch/xformers:xformers/_cpp_lib.py"
# torchvision registers fake kernels for its C++ ops (torch.library.register_fake("torchvision::nms")); when its _C
# library did not load (built for another torch), torch's registration raises "operator torchvision::nms does not
# exist" (earlier releases, torch.ops lookups: "No such operator torchvision::nms").
TORCHVISION_META = "pytorch/vision:torchvision/_meta_registrations.py"
# torchvision/extension.py: _assert_has_ops ("Couldn't load custom C++ ops. This can happen if your PyTorch and
# torchvision versions are incompatible, ...") and _check_cuda_version ("Detected that PyTorch and torchvision were
# compiled with different CUDA major versions. PyTorch has CUDA Version=X and torchvision has CUDA Version=Y.").
TORCHVISION_EXT = "pytorch/vision:torchvision/extension.py"
# torch's SDPA dispatcher, when no attention kernel can run, says why each refused: "Flash attention only supports gpu
# architectures in the range [sm80, sm121]. Attempting to run on a sm 7.5 gpu." (Mem Efficient, CuDNN likewise).
TORCH_SDP = "pytorch/pytorch:aten/src/ATen/native/transformers/cuda/sdp_utils.cpp"
# XLA's (TensorFlow, JAX) stub for libcudart/libcuda, when no driver library loads: "Could not find cuda drivers on your
# machine, GPU will not be used."
XLA_CUDART_STUB = "openxla/xla:xla/tsl/cuda/cudart_stub.cc"
# JAX before jit's sharding rewrite: "primitive arguments must be colocated on the same device, got CpuDevice(0),
# GpuDevice(0)" (xla_primitive_callable).
JAX_XLA = "jax-ml/jax:jax/interpreters/xla.py"
# Ollama's device discovery drops a CUDA GPU whose compute capability its bundled llama-server was not built for
# (slog: "skipping CUDA device — compute capability not in compiled architectures" device=... cc=860 archs="[...]").
OLLAMA_DISCOVER = "ollama/ollama:discover/llama_server.go"
# XLA's LocalExecutable refuses to run an executable compiled for one device on a device whose description differs
# (JAX's and TensorFlow's compilation caches keyed without the GPU model): InvalidArgument "executable is built for
# device CUDA:0 of type "GeForce RTX 2080 Ti"; cannot run it on device CUDA:1 of type "Tesla P100-PCIE-16GB"".
XLA_LOCAL_CLIENT = "openxla/xla:xla/client/local_client.cc"
# Windows' LoadLibrary: ERROR_PROC_NOT_FOUND (127), "The specified procedure could not be found.": the DLL imports a
# function its dependency does not export -- for an extension built against torch, the loader's undefined symbol.
WIN_ERRORS = "https://learn.microsoft.com/en-us/windows/win32/debug/system-error-codes--0-499-"
# A kernel's dynamic shared memory above 48 KB needs the opt-in attribute (cudaFuncSetAttribute / cuFuncSetAttribute
# with cudaFuncAttributeMaxDynamicSharedMemorySize / CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
# a launch asking for more than the function's limit, or an opt-in above the GPU's maximum, fails with
# cudaErrorInvalidValue / CUDA_ERROR_INVALID_VALUE ("invalid argument").
DRV_EXEC = "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__EXEC.html"
PG_SMEM = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#shared-memory"
# CuPy compiles its kernels at run time with NVRTC for min(the GPU's compute capability, the newest arch its NVRTC
# accepts) (_get_arch) and loads the result with the driver: with an NVRTC older than the GPU the module is built for
# an older arch and the load fails (CUDA_ERROR_NO_BINARY_FOR_GPU, "device kernel image is invalid").
CUPY_COMPILER = "cupy/cupy:cupy/cuda/compiler.py"
# Session 6, threads gathered the way the held-out part is (titles, prose quotes, excerpts cut short), each family's
# emitter:
# FlashInfer's backend_requirement decorator raises BackendSupportedError(f"{func.__name__} does not support compute
# capability {capability}") (and f"Backend '{backend}' does not support ..."); its GEMMs check the SM list themselves:
# "gemm_fp8_nt_groupwise is only supported on SM100, SM103 in trtllm backend."
FLASHINFER_UTILS = "flashinfer-ai/flashinfer:flashinfer/utils.py"
FLASHINFER_GEMM = "flashinfer-ai/flashinfer:flashinfer/gemm/gemm_base.py"
# Triton's dtype.to_ir: f"type {self} not supported in this architecture. The supported fp8 dtypes are {...}" (fp8e4nv
# needs sm_89+; sm_80 gets ('fp8e4b15', 'fp8e5')).
TRITON_CORE = "triton-lang/triton:python/triton/language/core.py"
# TensorRT-LLM's CUTLASS runners dispatch on the SM they were given and throw for any other: "[TensorRT-LLM Error]
# [CutlassFp8RowwiseGemmRunner][GEMM Dispatch] Arch unsupported for CUTLASS Fp8 Rowwise GEMM" (int8, mixed-type, FP4,
# fused gated GEMM runners alike).
TRTLLM_CUTLASS = (
    "NVIDIA/TensorRT-LLM:cpp/tensorrt_llm/kernels/cutlass_kernels/fp8_rowwise_gemm/fp8_rowwise_gemm_template.h"
)
# TensorRT-Edge-LLM's kernel build filters its variants by their supported_sms: "No variants in groups {tokens} support
# SM{sm}." (and the note "Skipping N variant(s) not supported on SM{sm}").
TRT_EDGE_CUTEDSL = "NVIDIA/TensorRT-Edge-LLM:kernelSrcs/build_cutedsl.py"
# vLLM's CUTLASS 2.x entry points for sm75/sm80 take int8 only (TORCH_CHECK(a.dtype() == torch::kInt8) in
# cutlass_scaled_mm_sm75_epilogue / cutlass_scaled_mm_sm80_epilogue): an FP8 GEMM reaching them ran on a GPU whose
# FP8 kernels vLLM does not have (below 8.9), the selection let it through.
VLLM_C2X = "vllm-project/vllm:csrc/quantization/cutlass_w8a8/scaled_mm_c2x.cu"
# xformers' cutlass operator refuses float32 backward with head dim > 64 on sm86/sm89 ("Sm86 does not have enough
# shared-memory to run this kernel - see .../issues/517"); the kernel's own check after cudaFuncSetAttribute says
# "This GPU does not have enough shared-memory (kernel requires N kb)" (torch's mem_eff_attention, NATTEN likewise).
XFORMERS_CUTLASS = "facebookresearch/xformers:xformers/ops/fmha/cutlass.py"
# TensorFlow's kernels generated by kernel_gen are embedded per arch (cubins, PTX of the highest); its runtime wrapper
# loads them with CUDA_REPORT_IF_ERROR(cuModuleLoadData(&module, data)), printing "'%s' failed with '%s'": the
# driver JIT-compiling that PTX on a GPU the build has no cubin for.
TF_KERNEL_GEN = "tensorflow/tensorflow:tensorflow/compiler/mlir/tools/kernel_gen/tf_gpu_runtime_wrappers.cc"
# torch.autocast on CUDA with dtype=torch.bfloat16 where torch.cuda.is_bf16_supported() is False (below 8.0):
# "Current CUDA Device does not support bfloat16. Please switch dtype to float16."
TORCH_AUTOCAST = "pytorch/pytorch:torch/amp/autocast_mode.py"
# torch before 1.6 checked each argument's device in checked_dense_tensor_unwrap: "Expected object of device type cuda
# but got device type cpu for argument #2 'mat2' in call to _th_mm" (before 1.2: "Expected object of backend CUDA but
# got backend CPU for argument #2 ...").
TORCH_UTILS_H = "pytorch/pytorch:aten/src/ATen/Utils.h"
# PyTorch's extension tutorial defines CHECK_CUDA(x) TORCH_CHECK(x.device().is_cuda(), #x " must be a CUDA tensor"),
# the macro most CUDA extensions copy: a CPU tensor passed to a CUDA-only op.
EXTENSION_CPP = "pytorch/extension-cpp:cuda/lltm_cuda.cpp"
# nvidia-container-cli refuses to start an image whose NVIDIA_REQUIRE_CUDA the host driver does not meet:
# "requirement error: unsatisfied condition: cuda>=12.9, please update your driver to a newer version, or use an earlier
# cuda container".
NVIDIA_CONTAINER_CLI = "NVIDIA/libnvidia-container:src/cli/dsl.c"
# transformers' TrainingArguments with bf16=True where is_torch_bf16_gpu_available() is False: "Your setup doesn't
# support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0".
HF_TRAINING_ARGS = "huggingface/transformers:src/transformers/training_args.py"
# CuPy's kernels check each array's device (_check_array_device_id): "Array device must be same as the current device:
# array device = 0 while current = 1".
CUPY_KERNEL = "cupy/cupy:cupy/_core/_kernel.pyx"
# bitsandbytes' library built without cuBLASLt (NO_CUBLASLT, the one its loader picks below compute capability 7.5)
# refuses int8 matmul: "ERROR: Your GPU does not support Int8 Matmul!".
BNB_OPS = "bitsandbytes-foundation/bitsandbytes:csrc/ops.cu"

# The root of PyTorch's per-CUDA indexes (``{PYTORCH_INDEX}cu126``), read from the ecosystem table, the one place
# for index URLs: the causes and fixes below are built at import, so the table is read once here.
PYTORCH_INDEX = load_ecosystem().pytorch_index
DLOPEN = "https://man7.org/linux/man-pages/man3/dlopen.3.html"
DEEPGEMM_ASSERT = "deepseek-ai/DeepGEMM:csrc/utils/exception.hpp"
_GPU_ARCHS = r"(Maxwell|Pascal|Volta|Turing|Ampere|Ada|Hopper|Blackwell)"
# A tensor type as torch prints it on the GPU and on the CPU.
_CUDA_T, _CPU_T = r"(?:torch\.cuda\.\w+|CUDA\w*Type)", r"(?:torch\.(?!cuda)\w+|CPU\w*Type)"

# The driver's "invalid argument" (cudaErrorInvalidValue, 1) in each form a log writes it, and what names a kernel's
# dynamic shared memory beyond the default 48 KB: the opt-in attribute's names (runtime, driver, CuPy's
# Function.max_dynamic_shared_size_bytes), the words, or a request of 48 KB and more (shared_mem=N, sharedmem, smem).
_INVALID_VALUE = r"CUDA_ERROR_INVALID_VALUE|cudaErrorInvalidValue|\binvalid argument"
_DYNAMIC_SMEM = (
    r"MaxDynamicSharedMemorySize|MAX_DYNAMIC_SHARED_SIZE_BYTES|max_dynamic_shared_size_bytes|dynamic shared memory|"
    r"\bshared_?mem(?:ory)?\s*=\s*(?:4915[2-9]|491[6-9]\d|49[2-9]\d\d|[5-9]\d{4}|[1-9]\d{5,})\b|"
    r"\bsmem\s*>\s*48\s*kb"
)

# A driver-side JIT (cuLink*/cuModuleLoad*, a PTX JIT error) around a ptxas message: the driver compiled the PTX.
# CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222) is returned by the driver's loader and JIT only (CUDA driver API
# reference: "the PTX was generated by a compiler newer than what is supported by the CUDA driver and PTX JIT
# compiler"), so a ptxas "Unsupported .version" next to it is the driver's JIT, not a toolkit ptxas.
DRIVER_JIT = (
    r"cuLink(?:AddData|AddFile|Complete|Create)\w*|cuModuleLoad\w*|\bLinkerError\b|CUDA_ERROR_INVALID_PTX|"
    r"cudaErrorInvalidPtx|a PTX JIT compilation failed|CUDA_ERROR_UNSUPPORTED_PTX_VERSION|"
    r"cudaErrorUnsupportedPtxVersion|the provided PTX was compiled with an unsupported toolchain"
)

CATEGORIES: tuple[Category, ...] = (
    # Programming Guide 13 §1.3.4 (https://docs.nvidia.com/cuda/cuda-programming-guide/01-introduction/
    # cuda-platform.html): a cubin runs on the same major with an equal or higher minor, PTX on equal or higher.
    Category(
        "no-kernel-image",
        "no kernel image for this GPU",
        (
            _p(r"no kernel image is available for execution on the device", 3, CUDART),
            # the same string's head, as titles and prose quote it ("crashes with 'no kernel image is available'",
            # "has no SM70 kernel image in the official wheel"); the whole string counts once, above
            # (a variant of the whole string, "... for execution this device", ".../operation", counts here)
            _p(
                r"\bno\s+(?:sm_?\d{2,3}[af]?\s+)?kernel\s+image\b(?!\s+is\s+available\s+for\s+execution\s+on\s+the\s+device)",
                2,
                CUDART,
            ),
            _p(r"cudaErrorNoKernelImageForDevice|CUDA_ERROR_NO_BINARY_FOR_GPU", 3, CUDRV),
            # Rust bindings print CUDA_ERROR_NO_BINARY_FOR_GPU as their enum's variant: "Cuda(NoBinaryForGpu)" (cust's
            # CudaError, as rustacuda's; HIP's "hipErrorNoBinaryForGpu" is another vendor and does not match).
            _p(r"\bNoBinaryForGpu\b", 3, RUST_CUST),
            # ptxas (CUDA 13.0's, run here on PTX whose .target is above -arch or its default) -- and the driver's JIT,
            # which compiles for the GPU: PTX made for a higher arch than the GPU has no code it can run (PG: PTX runs
            # on an equal or higher compute capability only).
            _p(r"SM version specified by \.target is higher than default SM version assumed", 2.5, NVCC),
            _p(r"\berror(?: code)?[ :=]*209\b", 2, CUDART),
            # cudaErrorInvalidDeviceFunction (98; 8 before CUDA 10.1): "the requested device function does not exist
            # or is not compiled for the proper device architecture" (CUDA Runtime API, cudaError) -- code missing
            # for this GPU; a second GPU in the log makes it a mixed host (classify: _mixed_host).
            _p(r"invalid device function|cudaErrorInvalidDeviceFunction|\berror(?: code)?[ :=]*98\b", 2, CUDART),
            _p(r"\bCUDA failure 209\b", 3, ORT_CUDA),
            _p(
                r"with CUDA capability sm_\d+\s+is\s+not\s+compatible\s+with\s+the\s+current\s+PyTorch\s+installation",
                3,
                TORCH_CUDA,
            ),
            # the same warning's fixed part, where a paste or an excerpt lost the GPU and capability before it
            _p(r"\bis\s+not\s+compatible\s+with\s+the\s+current\s+PyTorch\s+installation", 2.5, TORCH_CUDA),
            _p(r"PyTorch no longer supports this GPU because it is too old", 3, TORCH_CUDA),
            # _warn_unsupported_code (torch 2.8+): "Your installed torch==2.9.0+cu130 does not include kernels for
            # this GPU", "No published PyTorch CUDA builds for release 2.13.0+cu130 support this GPU", "... to install
            # a PyTorch release that supports one of these CUDA versions: 12.6"
            _p(r"does not include kernels for this GPU", 3, TORCH_CUDA),
            _p(r"No published PyTorch CUDA builds for release \S+ support this GPU", 2, TORCH_CUDA),
            _p(r"to install a PyTorch release that supports one of these CUDA versions", 2, TORCH_CUDA),
            _p(r"Ignoring (?:visible )?gpu device .{0,160}The minimum required Cuda capability is", 3, TF_GPU),
            # cudaErrorSymbolNotFound: the loaded module has no such kernel (bitsandbytes built without the arch).
            _p(r"named symbol not found|cudaErrorSymbolNotFound|CUDA_ERROR_NOT_FOUND", 1.5, CUDART),
            # cudaErrorInvalidSymbol (13): a __constant__/__device__ variable lives in the module loaded for this
            # device; without an image for it there is no module (scripts/record_cuda_errors.py gives the threads)
            _p(r"invalid device symbol|cudaErrorInvalidSymbol|cudaGetSymbolAdd?ress\b[^\n]{0,30}?\bfail", 1.5, CUDART),
            _p(r"device kernel image is invalid|cudaErrorInvalidKernelImage|CUDA_ERROR_INVALID_IMAGE", 2, CUDART),
            _p(
                r"The GPU architecture in your current machine is \w+, which is not compatible with Paddle",
                3,
                PADDLE_GPU,
            ),
            # the same check where the capability is not among the wheel's: "The GPU compute capability in your current
            # machine is 120, which is not supported by Paddle, it is recommended to install the corresponding wheel"
            _p(r"compute capability in your current machine is \d+, which is not supported by Paddle", 3, PADDLE_GPU),
            # spconv: "[WARNING]your gpu arch (8, 6) isn't compiled in prebuilt, may cause invalid device function."
            _p(r"your gpu arch \(\d+, \d+\) isn't compiled in prebuilt", 3, SPCONV),
            _p(r"compute capability not in compiled architectures", 3, OLLAMA_DISCOVER),
            # memory-efficient attention's dispatch (torch, xformers) picks a CUTLASS kernel by the GPU's capability and
            # dtype: TORCH_CHECK(kernel_launched, "cutlassF: no kernel found to launch!") where none is built for them
            _p(r"\bcutlass[FB]: no kernel found to launch\b", 3, TORCH_MEA_DISPATCH),
            # Kokkos runs a probe kernel at start: it cannot launch without code for the GPU ("likely mismatch of
            # architecture"), or reports the archs the build holds against the GPU's
            _p(
                r"Kokkos::Cuda::initialize ERROR:? (?:likely mismatch of architecture|running kernels compiled for "
                r"compute capability)",
                3,
                KOKKOS_CUDA,
            ),
            # NVHPC's OpenACC runtime: "This file was compiled: -acc=gpu -gpu=cc90 / Rebuild this file with
            # -gpu=cc120 to use NVIDIA Tesla GPU 0"
            _p(r"Rebuild (?:this file|the application) with -gpu=cc\d+ to use", 3, NVHPC),
            # vLLM's CUTLASS 2.x kernels (plain sm75/sm80/sm89) missing from the build for the GPU below 9.0.
            _p(
                r"No compiled cutlass_scaled_mm for a compute capability less than CUDA device capability: [1-8]\d\b",
                3,
                VLLM_SCALED_MM,
            ),
            # Thrust/CUB's get_ptx_version finds no code for the device (XGBoost, cuML, CUDA extensions using
            # Thrust): "This program was not compiled for SM 75" with cudaErrorInvalidDevice.
            _p(r"This program was not compiled for SM ?\d{2,3}\b", 3, THRUST_UTIL),
            # libspconv (C++ only) has no NVRTC fallback for a GPU arch outside its prebuilt kernels.
            _p(r"GemmTunerSimple_cached_get_nvrtc_params[\s\S]{0,200}not implemented in c\+\+", 3, SPCONV_OPS),
        ),
        "the binary has neither a cubin for this GPU's compute capability (same major, equal or lower minor) nor "
        "PTX it can JIT-compile (same or lower compute capability): it was built for other GPUs only",
        (
            "see which archs the failing package carries: cudafit doctor (or cudafit scan PATH)",
            "install a build that includes this GPU's arch, verified first with cudafit check 'PKG' --gpu NAME",
            'or rebuild from source with the GPU in the arch list: TORCH_CUDA_ARCH_LIST="<cc>" '
            "(cudafit plan --gpu NAME gives the CMake and nvcc forms)",
        ),
    ),
    # The message is xformers'/PyTorch's memory-efficient attention check of __CUDA_ARCH__ (seed 001).
    Category(
        "ptx-jit-lower-arch",
        "kernel JIT-compiled from PTX built for a lower arch",
        (
            _p(r"FATAL: kernel \S+ is for sm_?\d{2,3}\s*-\s*sm_?\d{2,3},? but was built for sm_?\d{2,3}", 4, TORCH_MEA),
            _p(r"\bbut was built for sm_?\d{2,3}\b", 2, TORCH_MEA),
            # the same printf's head, "FATAL: kernel `%s` is for sm%d-sm%d, ...", as an issue title cuts it
            _p(r"FATAL: kernel `\w+`", 2, TORCH_MEA),
            # ggml (llama.cpp): the kernel's variant for the arch that ran is a stub (NO_DEVICE_CODE).
            _p(r"has no device code compatible with CUDA arch \d+", 4, GGML_COMMON),
            # the same, quoted without its kernel ("no device code compatible with CUDA arch 520")
            _p(r"\bno device code compatible with CUDA arch \d+", 3.5, GGML_COMMON),
            # the same printf ("%s:%d: ERROR: CUDA kernel %s has no device code compatible with CUDA arch %d. ...")
            # where a title or an excerpt ends before the arch
            _p(r"\bCUDA kernel \w+ has no device code compatible\b", 3, GGML_COMMON),
            _p(r"'cuModuleLoadData\(&module, data\)' failed with 'CUDA_ERROR_INVALID_PTX'", 3, TF_KERNEL_GEN),
            _p(r"ggml-cuda was compiled without support for the current GPU architecture", 3, GGML_CUDA),
            # TensorFlow: no SASS for the GPU, the driver JIT-compiles the build's lower-arch PTX.
            _p(r"was not built with CUDA kernel binaries compatible with compute capability", 3, TF_GPU),
            _p(r"\bCUDA took (?:more than )?\d+ seconds to start\b|onnxruntime/issues/10746\b", 3, ORT_CUDA_FACTORY),
        ),
        "the extension has no cubin for the GPU it ran on, so the driver JIT-compiled PTX built for a lower arch; "
        "the kernel checks __CUDA_ARCH__ and refuses to run that lower-arch code path",
        (
            'rebuild the extension for every GPU of the host: TORCH_CUDA_ARCH_LIST="<all ccs>" '
            "(cudafit plan --gpu NAME --gpu NAME)",
            "or run only on the GPU the extension was built for (CUDA_VISIBLE_DEVICES)",
        ),
    ),
    # PG13 §5.1.2.1-5.1.2.2 (https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/
    # compute-capabilities.html): 'a' code runs on exactly one CC, 'f' code on its family (Table 28).
    # An arch name alone counts only when it names a real a/f target (the ``archs`` facts, checked against the
    # compute capability table by :mod:`.extract`; classify drops the category otherwise).
    Category(
        "arch-specific-mismatch",
        "code built only for an arch-specific (a) or family (f) target",
        (
            _p(r"(?<![A-Za-z0-9])(?:sm|compute)_?\d{2,3}a(?![A-Za-z0-9])", 1.5, PG_ARCH),
            _p(r"(?<![A-Za-z0-9])(?:sm|compute)_?\d{3}f(?![A-Za-z0-9])", 1.0, PG_ARCH),
            # The same targets as build systems and caches write them ("arch 90a", TORCH_CUDA_ARCH_LIST="9.0a",
            # CMake's "90a;100a", FlashInfer's JIT cache ~/.cache/flashinfer/120a/).
            _p(UNPREFIXED_AF_MENTION, 1.5, FLASHINFER_ENV),
            # FlashMLA's CUTE_INVALID_CONTROL_PATH("This kernel only supports sm90"), DeepGEMM's device assert "This
            # kernel only support sm_90a" / "sm_100f" (deep_gemm/include/deep_gemm/impls/sm90_*.cuh, sm100_*.cuh).
            _p(r"this kernel only supports? sm_?\d+|only supports? sm_?\d{2,3}[af]?(?![A-Za-z0-9])", 2.5, PG_ARCH),
            # FlashAttention-3 (hopper/flash_api.cpp) checks is_sm90 (major 9 and minor 0) and is built for sm_90a
            # only (hopper/setup.py): "FlashAttention-3 only supports Hopper GPUs." names the one target.  On GPUs all
            # below Hopper it is a guard refusing an older GPU (classify: _hopper_only_guards).
            _p(r"FlashAttention(?:-3)? only supports Hopper GPUs(?! or)", 3, FA3_API),
            # CUTLASS aborts when an 'a'-only instruction (wgmma, tcgen05) was compiled without its 'a' target.
            _p(r"Arch conditional MMA instruction used without targeting", 4, CUTLASS_KERNEL),
            # CCCL's cuda::ptx wrappers call an undefined extern outside the instruction's a/f targets, so ptxas or the
            # linker names them: "__cuda_ptx_setmaxnreg_inc_is_only_supported_on_SM_90a_100a_..." (libcudacxx/include/
            # cuda/__ptx/instructions/generated/*.h)
            _p(r"_is_only_supported_on_SM_\d+[af]", 4, CCCL_PTX),  # the wrapper's suffix alone: linear time
            # CuTe's CUTE_INVALID_CONTROL_PATH("... without CUTE_ARCH_X_ENABLED"): the macros include/cute/arch/
            # config.hpp defines only for 'a'/'f' targets (CUTLASS_ARCH_MMA_SM90A/SM100A/SM120F...): wgmma, tcgen05,
            # TMEM, the block-scaled and f8f6f4 MMAs, the SM100 ldmatrix/stmatrix/256-bit loads, and TMA beyond
            # sm_90.  Not the plain-arch ones (CUTE_ARCH_MMA_SM80_ENABLED, WARP_SHUFFLE): those mean a lower arch.
            _p(
                r"without CUTE_ARCH_(?:\w*SM\d{2,3}[AF]|TCGEN05\w*|M?X?F8F6F4\w*|MXF4\w*|TMA_SM\d{2,3}|STSM_SM90|"
                r"DEVICE_MODIFIABLE_TMA_SM90)_ENABLED|CUTLASS_ARCH_MMA_SM\d{2,3}[AF]_ENABLED",
                4,
                CUTE_CONFIG,
            ),
            # ptxas compiling 'a'-only instructions for the plain target: "Instruction 'wgmma.fence' not supported on
            # .target 'sm_90'", "Feature 'setmaxnreg' requires .target sm_90a or higher".
            _p(r"Instruction '[^'\n]+' not supported on \.target '?sm_\d{2,3}[af]?'?", 3, NVCC),
            _p(r"(?:Feature|Instruction|Modifier) '[^'\n]+' requires (?:\.target )?sm_\d{2,3}[af]\b", 3, NVCC),
            # ptxas 13.0's other target rejections (run here: PTX using wgmma/setmaxnreg/block-scaled mma
            # assembled for other targets): "Feature '.kind::mxf4' not supported on .target 'sm_120'",
            # "Instruction 'wgmma.fence' cannot be compiled for architecture 'sm_120'", and for PTX written for an
            # 'a' target: "PTX with .target 'sm_90a' cannot be compiled for architecture 'sm_90'".
            _p(r"Feature '[^'\n]+' not supported on \.target '?sm_\d{2,3}[af]?'?", 3, NVCC),
            _p(
                r"Instruction '[^'\n]+' cannot be compiled for architecture '?(?:sm|compute)_\d{2,3}[af]?'?",
                3,
                NVCC,
            ),
            _p(r"PTX with \.target '?sm_\d{2,3}[af]'? cannot be compiled for architecture", 4, NVCC),
            # PTX ISA: PTX for an 'a' target "cannot be run on later generation devices": the driver's JIT of it
            # fails on any other GPU (CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed").
            _p(
                r"(?:a PTX JIT compilation failed|CUDA_ERROR_INVALID_PTX|cudaErrorInvalidPtx)[\s\S]{0,600}"
                r"(?<![A-Za-z0-9])(?:sm|compute)_\d{2,3}a(?![A-Za-z0-9])|"
                r"(?<![A-Za-z0-9])(?:sm|compute)_\d{2,3}a(?![A-Za-z0-9])[\s\S]{0,600}"
                r"(?:a PTX JIT compilation failed|CUDA_ERROR_INVALID_PTX|cudaErrorInvalidPtx)",
                3,
                PTX_ISA,
            ),
            # Kernels of a library built for 'a' targets only: weak alone, decisive next to "no kernel image".
            _p(r"\bFlashMLA\b|flash_mla|flash_fwd_mla|splitkv_mla", 1.5, FLASHMLA_BUILD),
            # vLLM's Machete mixed-input GEMMs (wgmma): CMakeLists.txt builds them for "9.0a" only.
            _p(r"\bMachete\w*|\bmachete_(?:mm|prepack)\w*", 1.5, MACHETE_BUILD),
            # FlashAttention-3's own names (the extension flash_attn_3_cuda, its hopper/ sources and _sm90
            # instantiations), also when vendored (xformers' third_party/flash-attention/hopper/).
            _p(
                r"\bflash_attn_3(?:_cuda)?\b|hopper[/\\]flash_(?:fwd|bwd)\w*\.(?:h|cu|cpp)\b|"
                r"flash_(?:fwd|bwd)_hdim\w+_sm90\.cu\b",
                1.5,
                FA3_BUILD,
            ),
            # FlashMLA's dispatch (csrc/api/dense_decode.h, sparse_fwd.h): "Dense decode MLA is only supported on
            # SM90a architecture", "Sparse Attention Forward Kernel is only supported on SM90a and SM100f
            # architectures": its kernels exist for those a/f targets only.
            _p(r"is only supported on SM\d{2,3}[af](?: and SM\d{2,3}[af])* architectures?", 3, FLASHMLA_API),
            # FlashInfer compiles an arch-specific JIT module for the a/f targets of the majors it supports and
            # finds none among the GPU's: "No supported CUDA architectures found for major versions [10, 11]."
            _p(r"No supported CUDA architectures found for major versions", 3, FLASHINFER_CONTEXT),
            # vLLM's CUTLASS 3.x kernels for 9.0 and newer are compiled for a/f targets only (CMakeLists.txt:
            # "9.0a", "10.0a;10.1a;10.3a" or "10.0f;11.0f;12.0f", "12.0a;12.1a"); its dispatcher's refusal on such a
            # GPU ("No compiled cutlass_scaled_mm for a compute capability less than CUDA device capability: 121")
            # is a GPU outside those targets, as is the nvfp4 kernels' ("for SM 103"; built for 10.0a/12.0a).
            _p(
                r"No compiled (?:cutlass_scaled_mm|cutlass_moe\w*|get_cutlass_\w+)\b[^\n]{0,80}?"
                r"capability: (?:9\d|1\d\d)\b",
                3,
                VLLM_SCALED_MM,
            ),
            _p(r"No compiled nvfp4 \w+ kernel for SM 1\d\d\b", 3, VLLM_NVFP4),
            # trtllm-gen cubins exist per a/f target (Sm100a, Sm100f, Sm103a): a lookup that misses for the GPU's SM
            # ("Trtllm-gen kernels not found: sm=103, headDimQk=192, ...") is a build without that target's cubins
            # (the same message without sm= is printed for unsupported head sizes too, and is not matched).
            _p(r"Trtllm-gen kernels not found: (?:[^\n]*?\b)?sm=\d{2,3}\b", 2.5, TRTLLM_GEN),
        ),
        "code compiled for an 'a' target runs only on exactly that compute capability, and 'f' code only on its "
        "family (CUDA Programming Guide §5.1.2): a GPU outside it finds no usable code, and instructions that only "
        "a/f targets have (wgmma, tcgen05, block-scaled mma) exist on no other GPU",
        (
            'build for this GPU\'s own arch-specific target: TORCH_CUDA_ARCH_LIST="<cc>a" (e.g. "10.3a" for a '
            'B300, "12.0a" for an RTX 50xx; nvcc -gencode arch=compute_<cc>a,code=sm_<cc>a), or its family target '
            "<cc>f where the code allows; a plain sm_XY build does not enable these instructions",
            "or use the library's kernels (release, backend or wheel) made for this GPU: cudafit check 'PKG' --gpu "
            "NAME shows the a/f targets a package carries",
            "or run on the GPU the a/f code was built for",
        ),
    ),
    Category(
        "capability-guard",
        "a library's own capability check refused the GPU",
        (
            _p(r"requires\s+sm_?\s?\d{2,3}\s*\+", 3, FLASHINFER),
            _p(
                r"requires?\s+(?:GPUs?|GPU's|devices?)\s+(?:with\s+)?sm_?\s?\d{2,3}\s+or\s+(?:higher|newer|above|later)",
                3,
                FLASHINFER,
            ),
            # xformers' dispatcher: each operator states the capability range it accepts.
            _p(r"requires device with capability\s*[<>=]+\s*\(\d+, \d+\) but your GPU has capability", 3, XFORMERS),
            _p(r"\bbf16 is only supported on A100\+ GPUs", 1, XFORMERS),
            # flash-attn's TORCH_CHECK(is_sm8x || is_sm75) (c10's "Expected X to be true, but got false").
            _p(r"Expected is_sm\d+x?(?:_min)?(?: \|\| is_sm\d+x?)* to be true, but got false", 3, FLASH_ATTN),
            # flash-attn's kernels print FLASH_UNSUPPORTED_ARCH where __CUDA_ARCH__ < 800: the code that ran was built
            # for a GPU below the kernels' range, so the GPU it ran on is one (classify: unless the log names a GPU
            # of 8.0 or newer, which ran such code only by JIT-compiling its PTX).
            _p(r"requires building with sm version sm\d+-sm\d+, but was built for < ?\d+\.\d", 4, FLASH_ATTN_LAUNCH),
            _p(r"not compiled with any CUDA arch <= \d+", 3, GGML_COMMON),
            # GGML_ASSERT(ggml_cuda_has_arch(cc) && "ggml was not compiled with support for this arch")
            _p(r"ggml was not compiled with support for this arch|ggml_cuda_has_arch\(", 3, GGML_CUDA),
            _p(r"No CUDA devices? found with minimum required compute capability", 3, TF_GPU),
            # cuDNN / cuBLAS refusing a GPU without a feature they need.
            _p(r"CUDNN_STATUS_ARCH_MISMATCH|\bERROR: Arch mismatch|\bcudnnStatusArchMismatch\b", 3, CUDNN),
            _p(r"CUBLAS_STATUS_ARCH_MISMATCH", 3, CUBLAS),
            _p(
                rf"(only supports?|requires?|needs?)\s+{_GPU_ARCHS}(\s+Lovelace)?\s+(GPUs?\s+)?"
                r"or\s+(newer|later|above)",
                3,
                FLASH_ATTN,
            ),
            # TransformerEngine: "NCCL EP requires SM_90+ (Hopper or later)", "needs Hopper or later GPU".
            _p(
                rf"requires\s+SM_?\d{{2,3}}\+?\s*(?:\({_GPU_ARCHS}\)\s*)?(?:\(?{_GPU_ARCHS}\s+)?or\s+(later|newer|higher)",
                3,
                TE_COMMON,
            ),
            _p(r"(compute capability|GPU architecture)\s*(>=|of at least|at least|≥)\s*\d", 2, DEEPSPEED_FLASH),
            # TransformerEngine: "Device compute capability 8.9 or higher required for FP8 execution." (earlier
            # releases: "Device compute capability 9.x required for FP8 execution.")
            _p(r"compute capability \d+\.(?:\d+|x)(?: or (?:higher|newer|later|above))? (?:is )?required", 3, TE_FP8),
            _p(r"GPUs with compute capability below \d+(\.\d)? are not supported", 3, VLLM),
            # vLLM's dtype check names the GPU and its capability.
            _p(r"Your .{1,60} GPU has compute capability \d+\.\d+", 2, VLLM),
            # vLLM's quantization check: "... is not supported for the current GPU. Minimum capability: 75. Current
            # capability: 70."
            _p(r"not supported for the current GPU\. Minimum capability: \d+", 4, VLLM_CONFIG),
            # compressed-tensors: ('Quantization scheme is not supported for ', 'the current GPU. Min capability: 80. ')
            _p(r"Quantization scheme is not supported for\W+the current GPU\. Min capability: \d+", 4, VLLM_CT),
            _p(r"requires? (a )?(GPU|device) with compute capability", 2, DEEPSPEED_FLASH),
            # Inductor refuses GPUs below Triton's minimum (GPUTooOldForTriton).
            _p(r"which is too old to be supported by the triton GPU compiler", 4, TORCH_INDUCTOR),
            _p(r"Triton only supports devices of CUDA Capability >= \d", 2, TORCH_INDUCTOR),
            _p(
                r"(?:Flash attention|Mem Efficient Attention|CuDNN attention|cuDNN MHA) only supports gpu "
                r"architectures in the range \[sm\d+, sm\d+\]",
                3,
                TORCH_SDP,
            ),
            # DeepGEMM's DG_HOST_ASSERT(arch_major == 9): "Assertion error (file:line): arch_major == 9".
            _p(r"Assertion error \([^)\n]*\):[^\n]{0,80}\barch_major\s*(?:==|>=)\s*\d+", 3, DEEPGEMM_ASSERT),
            _p(r"Unsupported architecture or scaling factor types", 3, DEEPGEMM),
            # DeepGEMM's dispatch, DG_HOST_UNREACHABLE("Unsupported architecture"): it has kernels for majors 9 and
            # 10 only (csrc/apis/*.hpp), and JIT-compiles them for the GPU's own 'a'/'f' target.
            _p(r"Assertion error \([^)\n]*\): Unsupported architecture\b", 3, DEEPGEMM_ASSERT),
            # FlashAttention-3's earlier "FlashAttention only supports Hopper GPUs or newer." (hopper/flash_api.cpp,
            # an is_sm90 check) is matched by the or-newer pattern above; on GPUs above Hopper its sm_90a-only build
            # is the cause (classify: _hopper_only_guards).
            # vLLM's kernels for one capability, refused below it: "No compiled cutlass_scaled_mm for CUDA device
            # capability: 80. Required capability: 90"; the nvfp4 kernels need Blackwell ("for SM 89 ... CC >= 100").
            _p(r"No compiled [^\n]{0,80}?capability: [1-8]\d\. Required capability: \d+", 3, VLLM_SCALED_MM),
            _p(r"No compiled nvfp4 \w+ kernel for SM [1-9]\d\b", 3, VLLM_NVFP4),
            # numba's met_requirement_for_device: "<CUDA device 0 'b'...'> has compute capability < (3, 5)".
            _p(r"has compute capability < \(?\d", 3, NUMBA_DRIVER),
            _p(r"Target GPU SM \d+ is not supported by this TensorRT release", 4, TRT),
            # CTranslate2 (faster-whisper): float16 needs compute capability >= 7.0, int8 6.1 or >= 7.0.
            _p(r"Requested \w+ compute type, but the target device or backend do not support efficient", 4, CT2_TYPES),
            # numba's NVVM: "GPU compute capability 3.0 is not supported(requires >=3.5)"
            _p(r"GPU compute capability \d+\.\d+ is not supported ?\(requires >= ?\d", 4, NUMBA_NVVM),
            # TensorRT's own table of the SMs a release has kernels for (trtSmToCask): "Unsupported SM: 0x601".
            _p(r"\bUnsupported SM\b|trtSmToCask", 3, TRT),
            # SageAttention asserts that its per-arch extension module imported: assert SM80_ENABLED, "SM80 kernel is
            # not available. make sure you GPUs with compute capability 8.0 or higher." (SM89, SM90: "Make sure you
            # GPUs with compute capability 8.9." / "9.0."); false when the GPU is older or the module was not built.
            _p(
                r"SM\d{2,3} kernel is not available\. Make sure you(?:r)? GPUs? (?:with|have) compute capability",
                4,
                SAGEATTN,
            ),
            # SageAttention's dispatch has kernels for a list of archs: ValueError(f"Unsupported CUDA architecture:
            # {arch}") with arch "sm75", "sm100", ...
            _p(r"Unsupported CUDA architecture:?\s*['\"]?sm_?\d{2,3}", 3, SAGEATTN),
            _p(r"\bdoes not support compute capability \d", 3, FLASHINFER_UTILS),
            # "... is only supported on SM100, SM103 in trtllm backend" (plain SMs; FlashMLA's "SM90a" is an a target)
            _p(r"\bonly supported on SM_?\s?\d{2,3}(?![\dAaFf])", 3, FLASHINFER_GEMM),
            _p(r"\btype fp8\w* not supported in this architecture", 3, TRITON_CORE),
            # (every runner the same way: "Arch unsupported for CUTLASS ...", "Arch unsupported for MoE GEMM")
            _p(r"\bArch unsupported for \w+", 3, TRTLLM_CUTLASS),
            _p(
                r"No variants in groups [^\n]{0,200}? support SM\d+|variant\(s\) not supported on SM\d+",
                3,
                TRT_EDGE_CUTEDSL,
            ),
            _p(r"\bcutlass_scaled_mm_sm(?:75|80)_epilogue\b", 2.5, VLLM_C2X),
            _p(r"\bCUDA Device does not support bfloat16\b", 3, TORCH_AUTOCAST),
            _p(r"\bYour setup doesn'?t support bf16/gpu\b", 2.5, HF_TRAINING_ARGS),
            _p(r"\bYour GPU does not support Int8 Matmul\b", 3, BNB_OPS),
        ),
        "the library checked the GPU's capability itself; such guards are sometimes wrong (FlashInfer's "
        "'requires sm75+', for one, tested the arch flags it was compiled with, not the device it runs on)",
        (
            "compare the guard's minimum with the GPU: cudafit gpus (shows each GPU's compute capability)",
            "if the GPU meets the minimum, the guard is wrong: upgrade the library or report it; library authors can "
            "use cudafit.guard.require_capability, which checks the device (torch.cuda.get_device_capability)",
        ),
    ),
    Category(
        "mixed-gpu",
        "mixed GPUs or device numbering",
        (
            _p(r"CUDA_VISIBLE_DEVICES|CUDA_DEVICE_ORDER", 0.5, CUDART),
            # CUDA numbers devices fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID, nvidia-smi by PCI bus: on a host
            # of different GPUs the two numberings differ, which reports state as "... and nvidia-smi do not match the
            # device number", "not reporting the GPUs in the same order as nvidia-smi".
            _p(
                r"nvidia-smi\b[^.\n]{0,60}?\b(?:do(?:es)?\s+not|don'?t|doesn'?t|not)\s+match(?:ing)?\b[^.\n]{0,40}?"
                r"\b(?:device|gpu)s?\s+(?:numbers?|numbering|index(?:es)?|ids?|order(?:ing)?)"
                r"|\b(?:device|gpu)s?\s+(?:numbers?|numbering|index(?:es)?|ids?|order(?:ing)?)\b[^.\n]{0,60}?"
                r"\b(?:do(?:es)?\s+not|don'?t|doesn'?t|not)\s+match(?:ing)?\b"
                r"|\bnot\b[^.\n]{0,80}?\bin\s+the\s+same\s+order\s+as\s+nvidia-smi"
                r"|\border(?:ing)?\b[^.\n]{0,40}?\b(?:differs?|different)\s+(?:from|than)\s+(?:in\s+)?nvidia-smi",
                2.5,
                CUDA_ENV_VARS,
            ),
            # Two GPUs that "do not work together": a symptom, not a cause -- it counts only where the text names GPUs
            # of two compute capabilities (classify: _mixed_host), whose builds differ (PG: a cubin runs only within its
            # major, on an equal or higher minor).
            _p(
                r"\b(?:do(?:es)?\s*n[o']?t|can\s*n[o']?t|cannot|won'?t|will\s+not)\s+work\s+"
                r"(?:together|in\s+tandem|at\s+the\s+same\s+time|with\s+each\s+other)\b",
                1.0,
                PG_ARCH,
            ),
            # DataParallel's _check_balance warns when the GPUs differ ("There is an imbalance between your GPUs. You
            # may want to exclude GPU 1 ..."): code missing on such a host is missing for one of its models.
            _p(
                r"There is an imbalance between your GPUs[\s\S]{0,3000}"
                r"(?:no kernel image is available|invalid device function|cudaErrorNoKernelImageForDevice)",
                4,
                TORCH_DATA_PARALLEL,
            ),
            # nvcc's --gpu-architecture takes one value (-gencode lists several): two different archs joined into it
            # ("Value 'sm_61,sm_52' is not defined for option 'gpu-architecture'", "Unsupported gpu architecture
            # 'compute_86;compute_75'") are what a build that detects the GPUs of the host puts there when the host
            # has two models -- a single-GPU host, or one model, gives one arch (jittor, tiny-cuda-nn's detection)
            _p(
                r"(?:Value|Unsupported gpu architecture) '(?:sm|compute)_(\d{2,3})[af]?\s*[,;]\s*(?:sm|compute)_"
                r"(?!\1[af]?')\d{2,3}[af]?'",
                4.5,
                NVCC,
            ),
            # Text Embeddings Inference's images are built per compute capability (candle backend, compile-time
            # CUDA_COMPUTE_CAP checked against the device's): the image of another GPU
            _p(r"Runtime compute cap \d+ is not compatible with compile time compute cap \d+", 3.5, TEI_CANDLE),
            # A TensorRT engine is specific to the GPU model it was built on.
            _p(r"engine plan file is generated on an incompatible device", 3.5, TRT),
            # TensorRT's warning when a plan built on one GPU model is deserialized on another (NVIDIA's TensorRT
            # maintainers: build the engine on the hardware that runs it, or with hardware compatibility).
            _p(r"Using an engine plan file across different models of devices is not recommended", 2.5, TRT_HW_COMPAT),
            # a serialized engine failing to deserialize once carried to another GPU or machine: the same device check
            _p(
                r"(?:engine|plan)\b[^\n]{0,60}?\bdeserializ\w*[^\n]{0,80}?\b(?:on|to|in)\s+(?:an?\s+|the\s+)?"
                r"(?:other|another|different)\s+(?:gpu|device|card|machine|host)s?\b",
                3,
                TRT_HW_COMPAT,
            ),
            _p(
                r"executable is built for device \S+ of type \"[^\"\n]+\"; cannot run it on device",
                4,
                XLA_LOCAL_CLIENT,
            ),
        ),
        "code built for one card runs on another of a different compute capability, or device numbers differ "
        "between nvidia-smi (PCI order) and CUDA (fastest first)",
        (
            "see both numberings: cudafit gpus; export CUDA_DEVICE_ORDER=PCI_BUS_ID to make them agree",
            'build for every GPU of the host: TORCH_CUDA_ARCH_LIST="<all ccs>" (cudafit plan --gpu ... --gpu ...)',
        ),
    ),
    # fatbin_spec.md §E.4: a driver JITs PTX only up to its own toolkit's PTX ISA (driver_types.h, CUDA 13.0).
    Category(
        "ptx-too-new-for-driver",
        "PTX newer than the driver's JIT",
        (
            _p(r"(?:the )?provided PTX was compiled with an unsupported toolchain", 4, CUDART),
            # the same string as titles and prose shorten it ("PTX compiled with unsupported toolchain")
            _p(r"\bPTX (?:was |is )?compiled with (?:an )?unsupported toolchain", 3, CUDART),
            _p(r"cudaErrorUnsupportedPtxVersion|CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 4, CUDRV),
            # Rust-CUDA's cust names the same driver error as an enum variant
            _p(r"\bUnsupportedPtxVersion\b", 3, RUST_CUST),
            _p(r"\berror(?: code)?[ :=]*222\b", 2, CUDART),
            _p(r"a PTX JIT compilation failed|cudaErrorInvalidPtx|CUDA_ERROR_INVALID_PTX", 1, CUDRV),
            _p(
                r"driver's CUDA version is [\d.]+ which is older than the (?:PTX compiler|ptxas CUDA) version",
                4,
                XLA_PTXAS,
            ),
            # numba links PTX with the driver (cuLinkAddData): the ptxas message inside is the driver's JIT.
            _p(rf"(?:{DRIVER_JIT})[\s\S]{{0,600}}Unsupported \.version \d+\.\d+", 3, NUMBA_DRIVER),
            # the same two lines in the other order (a title quoting the message, then the link step that printed it)
            _p(rf"Unsupported \.version \d+\.\d+[\s\S]{{0,600}}(?:{DRIVER_JIT})", 3, NUMBA_DRIVER),
            _p(rf"(?:{DRIVER_JIT})[\s\S]{{0,600}}Unsupported \.target '?sm_\d+", 4, CUDRV),
        ),
        "the PTX was generated by a newer CUDA toolkit than the driver supports: its PTX ISA version is newer "
        "than the driver's JIT accepts",
        (
            "upgrade the NVIDIA driver to the minimum of the toolkit that built the package (cudafit doctor names it)",
            "or install a build made with an older CUDA toolkit",
        ),
    ),
    Category(
        "jit-toolchain-too-old",
        "run-time compiler does not know the GPU",
        (
            _p(r"ptxas fatal\s*:?\s*Value '(sm|compute)_\d+[af]?' is not defined for option 'gpu-name'", 4, NVCC),
            # clang's CUDA driver: "GPU arch sm_120 is supported by CUDA versions between 12.8 and 12.9 (inclusive),
            # but installation at /usr/local/cuda is 12.4" (err_drv_cuda_version_unsupported)
            _p(r"GPU arch sm_\d+[af]? is supported by CUDA versions? (?:between|from)\b", 4, CLANG_DRIVER),
            _p(
                r"nvcc fatal\s*:?\s*Unsupported gpu architecture '?(compute|sm)_\d+[af]?"
                r"(?![\daf]|\s*[,;]\s*(?:sm|compute)_)",  # not two archs joined (mixed-gpu)
                4,
                NVCC,
            ),
            # the same diagnostic quoted without nvcc's "nvcc fatal :" prefix (CMake, ninja, an issue title)
            _p(r"Unsupported gpu architecture '(?:compute|sm)_\d+[af]?'", 3, NVCC),
            # its head alone, as an issue title quotes it ("RTX 3090 Unsupported gpu architecture"): weak, the minimum
            _p(r"\bUnsupported gpu architecture\b", 1.5, NVCC),
            # nvcc (and cuobjdump) name the option an unknown arch was given to: "nvcc fatal : Value 'sm_200' is not
            # defined for option 'gpu-code'" (nvcc 13.0, run here), 'gpu-architecture' in earlier releases.
            _p(
                r"Value '(?:sm|compute)_\d+[af]?' is not defined for option '(?:gpu-architecture|gpu-code|gpu-name)'",
                3,
                NVCC,
            ),
            # -arch=native / all / all-major came with nvcc 11.5-11.6 (the nvcc documentation's --gpu-architecture):
            # an older nvcc refuses them as a value, the GPU's own arch unknown to it
            _p(r"Value '(?:native|all|all-major)' is not defined for option 'gpu-architecture'", 3, NVCC),
            # torch.utils.cpp_extension._get_cuda_arch_flags: an arch this torch's table does not know.
            _p(r"Unknown CUDA arch \([^)\n]*\) or GPU not supported", 4, TORCH_EXT),
            # nvrtcGetErrorString(NVRTC_ERROR_INVALID_OPTION): with the arch option in the same log, the option NVRTC
            # refused is the arch (an NVRTC older than the GPU).
            _p(
                r"--gpu-architecture[= ](?:sm|compute)_\d+[af]?[\s\S]{0,400}NVRTC_ERROR_INVALID_OPTION|"
                r"NVRTC_ERROR_INVALID_OPTION[\s\S]{0,400}--gpu-architecture[= ](?:sm|compute)_\d+",
                3,
                NVRTC,
            ),
            # ptxas 13.0 given PTX for a target it does not know (run here): "fatal : Unsupported .target 'sm_150'"
            # (the driver's JIT says the same; ptx-too-new-for-driver claims it when the driver is in the log).
            _p(r"Unsupported \.target '?sm_\d+[af]?'?", 3, NVCC),
            # LLVM's NVPTX backend (Triton, numba, XLA, Julia) older than the GPU: "'sm_120' is not a recognized
            # processor for this target (ignoring processor)", "'+ptx87' is not a recognized feature ...".
            _p(r"'sm_\d+[af]?' is not a recognized processor for this target", 3, LLVM_SUBTARGET),
            _p(r"'\+ptx\d+' is not a recognized feature for this target", 2, LLVM_SUBTARGET),
            # The same back end asked for a PTX ISA older than the target needs (XLA's and clang's pinned ISA on a newer
            # GPU): "PTX version 8.8 does not support target 'sm_107a'. Minimum required PTX version is 9.4".  The
            # toolchain's ISA is what is too old, an 'a' target or not.
            _p(r"PTX version \d+\.\d+ does not support target '?sm_\d+[af]?", 4, LLVM_NVPTX_SUBTARGET),
            # clang's CUDA driver (err_drv_cuda_bad_gpu_arch): "unsupported CUDA gpu architecture: sm_120".
            _p(r"unsupported CUDA gpu architecture: (?:sm|compute)_\d+", 4, CLANG_DRIVER),
            # Triton's ptx_get_version: the ptxas it found predates CUDA 10.
            _p(r"Triton only supports? CUDA 10\.0 or higher", 3, TRITON_NVIDIA),
            _p(r"Unsupported \.version \d+\.\d+; current version is", 3, NVCC),
            _p(r"PTXAS error: Internal Triton PTX codegen error", 1, TRITON_NVIDIA),
            _p(r"You are using ptxas [\d.]+, which is older than [\d.]+", 3, XLA_PTXAS),
            _p(r"ptxas does not support CC \d+\.\d+|ptxas \S* ?too old", 3, TRITON_NVIDIA),
            _p(r"nvrtc: error: invalid value for --gpu-architecture", 3, NVRTC),
            _p(r"nvrtcCompileProgram\(\): NVRTC_ERROR_INVALID_OPTION", 3, HASHCAT_NVRTC),
            # the same result named in a hashcat report without its function: hashcat's only variable option is the arch
            _p(
                r"\bhashcat\b[\s\S]{0,300}NVRTC_ERROR_INVALID_OPTION|NVRTC_ERROR_INVALID_OPTION[\s\S]{0,300}\bhashcat\b",
                3,
                HASHCAT_NVRTC,
            ),
            # ptxas given PTX of an ISA version that predates the target it is asked for.
            _p(r"PTX \.version \d+\.\d+ does not support \.target sm_\d+", 3, NVCC),
            # Triton / Inductor running its bundled ptxas for the GPU's arch and failing.
            _p(r"ptxas['\"]?,.{0,80}--gpu-name=sm_\d+[af]?.{0,200}non-zero exit status", 2, TRITON_NVIDIA),
        ),
        "a compiler used at run time (nvcc for JIT libraries, Triton's bundled ptxas) predates this GPU's arch "
        "or the PTX it is given",
        (
            "point Triton at a newer ptxas: export TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas (a toolkit whose "
            "nvcc --list-gpu-code lists the arch)",
            "or install a CUDA toolkit that targets the GPU and set CUDA_HOME to it "
            "(cudafit gpus lists the nvcc found)",
        ),
    ),
    # Minor-version compatibility: https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html
    Category(
        "driver-too-old",
        "driver older than the CUDA runtime",
        (
            # FFmpeg's NVENC encoders check the driver's NVENC API: "Driver does not support the required nvenc API
            # version. Required: 13.0 Found: 12.2", "The minimum required Nvidia driver for nvenc is 570.0 or newer"
            _p(r"Driver does not support the required nvenc API version", 3, FFMPEG_NVENC),
            _p(r"The minimum required Nvidia driver for nvenc is", 2, FFMPEG_NVENC),
            _p(r"CUDA driver version is insufficient for CUDA runtime version", 4, CUDART),
            _p(r"cudaErrorInsufficientDriver|\berror(?: code)?[ :=]*35\b", 2, CUDART),
            _p(r"CUDA failed with error CUDA driver version is insufficient", 0.5, CT2_CUDA),
            _p(r"The NVIDIA driver on your system is too old", 4, TORCH_C10),
            # the same check as titles and prose shorten it ("NVIDIA driver too old", "driver version is too old")
            _p(r"\bdriver (?:on your system |version )?(?:is |was )?too old\b", 2, TORCH_C10),
            _p(r"API call is not supported in the installed CUDA driver|cudaErrorCallRequiresNewerDriver", 3, CUDART),
            # 804: the forward-compatibility package (cuda-compat) used on a GPU it does not support (GeForce):
            # the container's CUDA needs a newer driver than the host has.
            _p(
                r"forward compatibility was attempted on non supported (?:HW|hardware)|"
                r"cudaErrorCompatNotSupportedOnDevice|CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
                4,
                COMPAT,
            ),
            _p(r"\berror(?: code)?[ :=]*804\b", 2, CUDART),
            # ollama's cudart probe: cudaSetDevice returned cudaErrorInsufficientDriver (35): "your nvidia driver is
            # too old or missing, please upgrade to run ollama" (later: ".  If you have a CUDA GPU please upgrade ...")
            _p(r"your nvidia driver is too old or missing", 4, OLLAMA_CUDART),
            _p(
                r"unsatisfied condition: cuda\s*>=?\s*\d+(?:\.\d+)*|"
                r"please update your driver to a newer version, or use an earlier cuda container",
                4,
                NVIDIA_CONTAINER_CLI,
            ),
            # Paddle compares the CUDA its build used with the one the driver supports (gpu_resources.cc): "The
            # installed Paddle is compiled with CUDA 12.6, but CUDA runtime version in your machine is 12.2, which may
            # cause serious incompatible bug."
            _p(
                r"Paddle is compiled with CUDA [\d.]+, but CUDA runtime version in your machine is [\d.]+",
                3,
                PADDLE_GPU,
            ),
        ),
        "the CUDA runtime the program bundles needs a newer driver than the installed one",
        (
            "upgrade the NVIDIA driver (CUDA 13.x runtimes need >= 580, 12.x >= 525, 11.x >= 450 with minor-version "
            "compatibility)",
            "or install a build of the framework made for an older CUDA major (for PyTorch, a cu126 wheel: "
            f"pip install torch --index-url {PYTORCH_INDEX}cu126)",
        ),
    ),
    Category(
        "device-mismatch",
        "tensors, model or runner on different devices",
        (
            _p(r"Expected all tensors to be on the same device", 4, TORCH_ITER),
            _p(r"Expected .{0,60} to be on (?:the )?(?:cuda|cpu)|is on (?:cpu|cuda:?\d*), but expected", 3, TORCH_ITER),
            # Convolution's check_input_same_type_as_parameters: a CUDA input with CPU weights (or bias) or the reverse,
            # named "torch.cuda.FloatTensor" / "torch.FloatTensor", or "CUDAFloatType" / "CPUFloatType" in the ATen
            # type names of earlier releases.
            _p(
                rf"Input type \({_CUDA_T}\) and (?:weight|bias) type \({_CPU_T}\)|"
                rf"Input type \({_CPU_T}\) and (?:weight|bias) type \({_CUDA_T}\)",
                4,
                TORCH_CONV,
            ),
            # RNN's check_attributes: "Input and parameter tensors are not at the same device, found input tensor at
            # cpu and parameter tensor at cuda:0" (and the same for hidden tensors).
            _p(r"Input and (?:parameter|hidden) tensors are not at the same device", 4, TORCH_RNN),
            # checkSameGPU / checkAllSameGPU
            _p(
                r"Expected tensor for argument #\d+ '\w+' to have the same device as tensor for argument #\d+|"
                r"Tensor for argument #\d+ '\w+' is on (?:CPU|GPU|cuda)",
                3,
                TORCH_TENSOR_UTILS,
            ),
            _p(
                r"module must have its parameters and buffers on device \S+ .{0,40}but found one of them on device",
                4,
                TORCH_DATA_PARALLEL,
            ),
            _p(r"Unhandled FakeTensor Device Propagation for \S+, found two different devices", 3, TORCH_FAKE_TENSOR),
            _p(r"Tensor on device \S+ is not on the expected device \S+", 3, TORCH_PRIMS),
            _p(r"Expected a '\w+' device type for generator but found '\w+'", 3, TORCH_GENERATOR),
            _p(r"indices should be either on cpu or on the same device as the indexed tensor", 3, TORCH_INDEXING),
            # torch.load of storages saved on a CUDA device this process does not have.
            _p(r"Attempting to deserialize object on (?:a )?CUDA device", 4, TORCH_SER),
            # SageAttention's assert q.is_cuda, "Input tensors must be on cuda." (extensions' TORCH_CHECK(x.is_cuda(),
            # "Input tensors must be on CUDA") alike): a CPU tensor reached a CUDA-only kernel.
            _p(r"\bInput tensors? must be on (?:the )?(?:cuda|gpu)\b", 3, SAGEATTN),
            _p(r"\b\w+ must be a CUDA tensor\b", 3, EXTENSION_CPP),
            _p(r"Array device must be same as the current device", 4, CUPY_KERNEL),
            _p(r"Expected object of (?:device type|backend) \w+ but got (?:device type|backend) \w+", 4, TORCH_UTILS_H),
            _p(r"Received incompatible devices for \w+ computation", 4, JAX_STAGES),
            _p(r"primitive arguments must be colocated on the same device", 4, JAX_XLA),
            _p(r"AOTIModelContainerRunner(Cpu|Cuda)|AOTInductor|\bAOTI\b|\.pt2\b", 1, TORCH_AOTI),
            _p(r"CUDA error: invalid argument", 1, CUDART),
        ),
        "an operation got tensors (or a model, or a compiled runner) on different devices, or data saved on a "
        "device this process does not have",
        (
            "put the model and every input on one device before the call: model.to(dev), x.to(dev) (the message "
            "names the devices involved)",
            "loading a checkpoint saved on another GPU: torch.load(path, map_location=dev)",
        ),
    ),
    # PG13 Table 31: opt-in maximum shared memory per block per compute capability.
    Category(
        "shared-memory-limit",
        "kernel needs more shared memory than the GPU has",
        (
            _p(r"out of resource: shared memory, Required: \d+, Hardware limit: \d+", 4, TRITON_ERRORS),
            # OutOfResources(required, limit, name) formats f"out of resource: {name}, Required: ..." (releases
            # before 2.0 wrote "out of resource: shared memoryRequired: ..."): its head names the resource alone
            _p(r"\bout of resource: shared memory", 3, TRITON_ERRORS),
            # FlashAttention 1.x's backward: "FlashAttention backward for head dim > 64 requires A100 or H100 GPUs as
            # the implementation needs a large amount of shared memory" (the sm86/sm89 opt-in maximum is 99 KB, sm80's
            # 163 KB; Programming Guide, compute capabilities table); reports shorten it ("Head dim > 64 backward
            # requires A100 or H100")
            _p(r"\bhead dim > ?\d+ (?:backward )?requires A100 or H100\b", 3, FLASH_ATTN_V1),
            # Inductor's static launcher checks the same before loading a Triton cubin, naming the kernel instead:
            # "out of resource: triton_tem_fused_0 Required: 147456 Hardware limit:101376 Reducing block sizes ..."
            # (Triton's own OutOfResources names "registers" or "tensor memory" the same way: not shared memory)
            _p(
                r"\bout of resource: (?!registers\b|tensor memory\b|threads\b)\w+,?\s+Required: ?\d+,?\s+"
                r"Hardware limit: ?\d+",
                3,
                TORCH_STATIC_LAUNCHER,
            ),
            # Warp, when cuda_configure_kernel_shared_memory fails: "Failed to configure kernel dynamic shared memory
            # for this device, tried to configure {name} kernel for {n} bytes, but maximum available is {max}"
            _p(r"Failed to configure kernel dynamic shared memory for this device", 4, WARP_CONTEXT),
            # cudaErrorInvalidValue / CUDA_ERROR_INVALID_VALUE ("invalid argument") beside the dynamic shared memory
            # opt-in or a launch's request above the 48 KB default: the opt-in attribute was not set, or asked for more
            # than the GPU's opt-in maximum (CuPy's launch(..., shared_mem=N), numba's sharedmem, nvcc's <<<g, b, N>>>).
            _p(
                rf"(?:{_INVALID_VALUE})[\s\S]{{0,400}}?(?:{_DYNAMIC_SMEM})|(?:{_DYNAMIC_SMEM})[\s\S]{{0,400}}?(?:{_INVALID_VALUE})",
                3,
                DRV_EXEC,
            ),
            _p(r"uses too much shared data", 3, NVCC),
            _p(r"\bdoes not have enough shared[- ]memory\b", 4, XFORMERS_CUTLASS),
            _p(r"shared[_ ]mem(ory)?.{0,40}(exceed|too (much|large)|limit)", 1.5, PG_ARCH),
        ),
        "a kernel (often a Triton autotune config) asks for more shared memory per block than this GPU's opt-in "
        "maximum",
        (
            "use smaller block sizes / fewer pipeline stages (num_stages) for this GPU (the limit per compute "
            "capability: cudafit gpus NAME --json, limits.max_shared_memory_per_block_optin)",
            "library authors: cudafit.guard.shared_memory_fits(nbytes) answers without crashing on CPU-only machines",
        ),
        # PyTorch's DataLoader workers share tensors through /dev/shm: "out of shared memory" there is host memory.
        # (also a container's or the workers' share of it: docker, --ipc, num_workers)
        (
            _p(
                r"DataLoader worker|/dev/shm|\bshm\b|Bus error|shm[_-]size|\bdocker\b|--ipc|num_workers",
                0,
                TORCH_DATALOADER,
            ),
        ),
    ),
    Category(
        "wrong-framework-build",
        "the framework build is not the one expected",
        (
            _p(r"Torch not compiled with CUDA enabled", 4, TORCH_CUDA),
            _p(r"torch\.version\.cuda\s*(is|==)\s*None", 3, TORCH_CUDA),
            _p(r"Found no NVIDIA driver on your system", 3, TORCH_C10),
            _p(r"\btorch[ =_\-]*\d+\.\d+(\.\d+)?\+cpu\b", 1, TORCH_CUDA),
            _p(r"was compiled without GPU support", 3, BNB),
            # bitsandbytes found a GPU but no library of its own for the CUDA it detected (or no runtime to load it)
            _p(r"CUDA Setup failed despite GPU being available", 3, BNB),
            # releases before 0.43 (cuda_setup/main.py): no library of its own for the CUDA it detected, so the CPU one
            _p(r"Required library version not found: libbitsandbytes_cuda\d+", 3, BNB_SETUP),
            _p(r"Defaulting to libbitsandbytes_cpu\b", 3, BNB_SETUP),
            _p(r"This CTranslate2 package was not compiled with CUDA support", 4, CT2_DEVICES),
            # detectron2's and mmcv's ops: AT_ERROR("[Detectron2 is |DeformConv is ]not compiled with GPU support")
            _p(r"\bnot compiled with GPU support", 3, DETECTRON2),
            _p(r"\b\w+ is not compiled with GPU support", 0.5, MMCV),
            _p(r"CUDA-enabled jaxlib is not installed", 4, JAX_BRIDGE),
            # xla_bridge's warning where the backend it got is the CPU's (releases before the jaxlib check above): a
            # jaxlib without the CUDA plugin is what prints it on a machine with a GPU
            _p(r"No GPU/TPU found, falling back to CPU", 2, JAX_BRIDGE),
            _p(r"PaddlePaddle is not compiled with CUDA", 4, PADDLE_DEVICE),
            _p(
                r"Cannot use GPU because you have installed CPU version PaddlePaddle|"
                r"Cannot use CUDAPlace in CPU only version",
                4,
                PADDLE_PLACE,
            ),
            _p(r"Specified provider 'CUDAExecutionProvider' is not in available provider names", 3, ORT_PY),
            # the CUDA provider library of onnxruntime-gpu could not load (its CUDA/cuDNN major is missing)
            _p(r"Failed to create CUDAExecutionProvider", 3, ORT_PYBIND),
            # the same function on Windows, when CUDA_PATH is set: ORT_THROW("CUDA_PATH is set but CUDA wasn't able to
            # be loaded. Please install the correct version of CUDA and cuDNN ...") (older releases: "wasnt")
            _p(r"CUDA_PATH is set but CUDA wasn'?t able to be loaded", 3, ORT_PYBIND),
            # ONNX Runtime's C API in a build without the provider: "CUDA execution provider is not enabled in this
            # build." (TensorRT likewise), "CUDA and/or ROCM execution provider is either not enabled or not
            # available.", and the provider library that does not load: "...AppendExecutionProvider_Cuda: Failed to
            # load shared library".
            _p(
                r"\b(?:CUDA|TensorRT) execution provider is not enabled in this build|"
                r"CUDA and/or ROCM execution provider is either not enabled or not available",
                4,
                ORT_BRIDGE,
            ),
            _p(r"AppendExecutionProvider_(?:Cuda|Tensorrt): Failed to load shared library", 3, ORT_BRIDGE),
            # usls: the ort crate reports the CUDA/TensorRT provider unavailable ("Please compile ONNXRuntime with
            # #EP"), or usls was built without the cargo feature ("#EP EP requires the features: `#FEATURE`").
            _p(
                r"Please compile ONNXRuntime with (?:CUDA|TensorRT)|(?:CUDA|TensorRT) EP requires the features",
                3,
                USLS_ENGINE,
            ),
            # tf.test.is_built_with_cuda() is False: a TensorFlow built without CUDA (the CPU wheels, native Windows
            # since 2.11, the aarch64 PyPI wheels).
            _p(r"is_built_with_cuda(?:\(\))?\W{0,80}?(?:returns?\s+|is\s+|==\s*)?False\b", 3, TF_TEST),
            # the same answer as scripts print it after the function's name ("Is built with CUDA: False"), and
            # tf.sysconfig.get_build_info()'s 'is_cuda_build': False (an OrderedDict prints ('is_cuda_build', False)).
            _p(r"\bbuilt with CUDA\W{0,4}(?:is\s*)?:?\s*False\b", 2.5, TF_TEST),
            _p(r"'is_cuda_build'(?::|,)\s*False\b", 3, TF_BUILD_INFO),
            # collect_env of a CPU-only torch (torch.version.cuda is None); ROCm builds print N/A and their ROCm.
            _p(
                r"CUDA used to build PyTorch: None\b(?![\s\S]{0,200}ROCM used to build PyTorch: \d)",
                2.5,
                TORCH_COLLECT_ENV,
            ),
            # get_available_providers() of the CPU-only onnxruntime package: no CUDA provider in the list.
            _p(r"\[\s*'(?:Azure|CPU)ExecutionProvider'(?:\s*,\s*'(?:Azure|CPU)ExecutionProvider')*\s*\]", 1.5, ORT_PY),
            _p(r"CUDA driver library cannot be found", 3, NUMBA_DRIVER),
            # CTranslate2 loads cuBLAS of its CUDA major at run time.
            _p(r"Library (?:lib)?cublas\S* is not found or cannot be loaded", 3, CT2_CUBLAS),
            # JAX's CUDA plugin: a CUDA library older than the one JAX was built against.
            _p(r"Outdated \w+ installation found", 3, JAX_PLUGIN),
            # earlier releases: "Found cuDNN version 8600, but JAX was built against version 8906, which is newer."
            _p(r"but JAX was built against version \d+, which is newer", 3, JAX_PLUGIN),
            # the same check when a component does not load at all: f"Unable to load {name}. Is it installed?"
            _p(r"Unable to load (?:CUDA|cu[A-Z]{2,}\w*|NCCL)\. Is it installed\?", 3, JAX_PLUGIN),
            _p(r"Could not find cuda drivers on your machine, GPU will not be used", 2, XLA_CUDART_STUB),
            # CuPy loads the CUDA libraries of its CUDA major at run time: "CuPy failed to load libnvrtc.so.12: ..."
            _p(r"CuPy failed to load \S+", 3, CUPY_SOFTLINK),
            # TensorFlow could not load a CUDA library of the version it was built for and runs on the CPU.
            _p(r"Cannot dlopen some GPU libraries", 3, TF_GPU),
            # XLA (JAX, TensorFlow): the cuDNN found is older than the one the build was compiled with.
            _p(
                r"Loaded runtime CuDNN library: \S+ (?:\(compatibility version \S+\) )?but source was compiled with",
                4,
                XLA_DNN,
            ),
            # a binary linked against a CUDA runtime/library major that is not installed
            _p(
                r"lib(?:cudart|cublas|cublasLt|cudnn|cufft|curand|cusparse|cusolver|nvrtc)\.so\.\d+(?:\.\d+)?: "
                r"cannot open shared object file",
                3,
                DLOPEN,
            ),
        ),
        "the installed framework (or a library's loader) picked a CPU-only build, a build for another CUDA major whose "
        "runtime is not installed, or found no driver",
        (
            f"install the CUDA build: pip install torch --index-url {PYTORCH_INDEX}cu130 (or cu128, cu126 for older "
            "drivers), after checking it with cudafit check",
            "install the framework and its extensions for one CUDA major: cudafit doctor shows the libcudart major "
            "each package links",
            "check which torch is imported and its CUDA version: cudafit gpus (toolchains section)",
        ),
    ),
    # torch.utils.cpp_extension._check_cuda_version and DeepSpeed's op builder (assert_no_cuda_mismatch) refuse
    # to build with an nvcc whose CUDA major differs from torch.version.cuda.
    Category(
        "toolkit-mismatch",
        "the CUDA toolkit that builds an extension is not the framework's CUDA",
        (
            _p(
                r"The detected CUDA version \(\d+\.\d+\) mismatches the version that was used to compile\s+PyTorch",
                4,
                TORCH_EXT,
            ),
            _p(
                r"Installed CUDA version [\d.]+ does not match the version torch was compiled with",
                4,
                DEEPSPEED_BUILDER,
            ),
            # DeepSpeed's prebuilt ops against the runtime torch's CUDA: "CUDA version mismatch! DeepSpeed ops were
            # compiled and installed with a different version than what is being used at runtime" (op_builder/
            # builder.py; its "PyTorch version mismatch! ..." twin is the extension's ABI)
            _p(r"CUDA version mismatch! DeepSpeed ops were compiled and installed with a different version", 4,
               DEEPSPEED_BUILDER),
            # an extension's own CUDA against torch's (torchvision/extension.py _check_cuda_version, torch_scatter's and
            # torch_sparse's __init__.py): "Detected that PyTorch and torchvision were compiled with different CUDA
            # major versions" -- the toolkit that built the extension is not torch's (the category's definition)
            _p(
                r"Detected that PyTorch and \w+ were compiled with different CUDA (?:major )?versions",
                4,
                TORCHVISION_EXT,
            ),
            _p(r"CUDAMismatchException|CUDA_MISMATCH_MESSAGE", 2, TORCH_EXT),
            # the head of DeepSpeed's message, as titles and summaries quote it
            _p(r"Installed CUDA version [\d.]+ does not match\b", 3, DEEPSPEED_BUILDER),
            _p(r"Cuda extensions are being compiled with a version of Cuda that does\s+not match", 4, APEX_SETUP),
        ),
        "an extension is compiled with a CUDA toolkit (the nvcc on PATH or CUDA_HOME) of another version than the "
        "one PyTorch was built with; the build tools refuse a different CUDA major, and a mixed build can fail at "
        "run time",
        (
            "install the toolkit that matches torch.version.cuda and point CUDA_HOME at it (cudafit gpus lists the "
            "nvcc found and torch's CUDA)",
            "or install the PyTorch build for the toolkit you have: pip install torch --index-url "
            f"{PYTORCH_INDEX}cu<XY> (e.g. cu126 for a CUDA 12.6 toolkit)",
        ),
    ),
    # An extension references C++ symbols (c10::, at::, torch::) of the PyTorch it was compiled against; the
    # dynamic loader reports the first one missing.
    Category(
        "extension-abi-mismatch",
        "a compiled extension was built against another PyTorch",
        (
            _p(r"\.so: undefined symbol: _ZN?K?\d*(?:3c10|2at|5torch)", 4, DLOPEN),
            _p(r"undefined symbol: _Z\w{6,}", 2, DLOPEN),
            # the same on Windows, for an extension module named as torch's build tools name them (_C, *_cuda, *_ext)
            _p(
                r"DLL load failed while importing \w*(?:_C|_cuda|_ext)\w*: The specified procedure could not be found",
                3,
                WIN_ERRORS,
            ),
            _p(r"xFormers can't load C\+\+/CUDA extensions\. xFormers was built for", 4, XFORMERS_CPP_LIB),
            _p(r"PyTorch version mismatch! DeepSpeed ops were compiled and installed with a different version", 4,
               DEEPSPEED_BUILDER),
            _p(r"operator torchvision::\w+ does not exist|No such operator torchvision::\w+", 3, TORCHVISION_META),
            _p(
                r"Couldn't load custom C\+\+ ops\. This can happen if your PyTorch and \w+ versions are incompatible",
                3,
                TORCHVISION_EXT,
            ),
        ),
        "the extension's binary was built against another PyTorch version or C++ ABI (cxx11abi) than the one "
        "installed, so importing it finds a C++ symbol missing: a build/packaging mismatch, not a GPU problem",
        (
            "install the extension build made for the installed torch version and ABI (e.g. flash-attn's "
            "+cu<XY>torch<X.Y>cxx11abiTRUE/FALSE wheels; pin sgl-kernel or vllm to the release built for this torch)",
            "or rebuild it against the installed torch: pip install --no-build-isolation --no-binary PKG PKG",
        ),
    ),
)

# The CUDA runtime's and driver's own errors (issue 18).  Every cudaError_t and CUresult is recorded from
# NVIDIA's headers (driver_types.h, cuda.h) and libcudart's string table by scripts/record_cuda_errors.py
# (explain/data/cuda_errors.json, cudafit.explain.CUDA_ERRORS), each with the category its documentation
# gives it (CUDART / CUDRV: the enum's doc comments).  The patterns below add the related errors the
# sections above lack, in each form a log writes them: runtime name, driver name, cudaGetErrorString's text,
# and the number ("error code N", "CUresult N"); tests/test_explain_cuda_errors.py checks every error of the
# inventory, so an unrelated error (illegal address, out of memory, launch failure, ECC) stays unknown.
_ERROR_NUMBER = r"(?:\berror(?: code)?[ :=]*|\bCUresult[ (=:.]*|\bCUDA failure )"
_CUDA_ERROR_PATTERNS: dict[str, tuple[Pattern, ...]] = {
    "driver-too-old": (
        # 36: "the API call requires a newer CUDA driver than the one currently installed" (the driver's name).
        _p(r"CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", 3, CUDRV),
        # 227 (CUDA 13.5): "loader version is insufficient for Fatbin": the driver predates the fatbin.
        _p(
            r"cudaErrorInsufficientLoaderVersion|CUDA_ERROR_INSUFFICIENT_LOADER_VERSION|"
            r"Loader version is insufficient for fatbin",
            4,
            CUDRV,
        ),
        _p(rf"{_ERROR_NUMBER}(?:36|227)\b", 2, CUDART),
        _p(r"\bCUresult[ (=:.]*804\b", 2, CUDRV),
    ),
    "no-kernel-image": (
        # 221 / 223: the runtime falls back to JIT-compiling PTX only "if an application does not contain a
        # suitable binary for the current device"; with no JIT library, or JIT disabled, nothing runs.
        _p(
            r"cudaErrorJitCompilerNotFound|CUDA_ERROR_JIT_COMPILER_NOT_FOUND|PTX JIT compiler library not found",
            3,
            CUDART,
        ),
        _p(
            r"cudaErrorJitCompilationDisabled|CUDA_ERROR_JIT_COMPILATION_DISABLED|PTX JIT compilation was disabled",
            3,
            CUDART,
        ),
        _p(rf"{_ERROR_NUMBER}(?:221|223)\b", 2, CUDART),
        _p(r"\bCUresult[ (=:.]*209\b", 2, CUDRV),
    ),
    "ptx-too-new-for-driver": (_p(r"\bCUresult[ (=:.]*222\b", 2, CUDRV),),
}
CATEGORIES = tuple(replace(c, patterns=c.patterns + _CUDA_ERROR_PATTERNS.get(c.id, ())) for c in CATEGORIES)

# Issue 18, session 8: emitters beyond the families above, each message confirmed in the file cited (the format
# string as written there, placeholders as \S+ / \d+).  Warnings and notes that say nothing failed weigh <= 1.5, so
# they count only beside a failure; a check that refuses the GPU, a build without CUDA, a shared-memory limit that is
# exceeded weigh 3-4 like the emitters' messages above.
ORT_TRT_CTX = "microsoft/onnxruntime:onnxruntime/core/providers/tensorrt/onnx_ctx_model_helper.cc"
TINYCUDANN_TORCH = "NVlabs/tiny-cuda-nn:bindings/torch/tinycudann/modules.py"
TINYCUDANN_MLP = "NVlabs/tiny-cuda-nn:src/fully_fused_mlp.cu"
TINYCUDANN_SAMPLE = "NVlabs/tiny-cuda-nn:samples/mlp_learning_an_image.cu"
TORCH_TRT_EXEC = "pytorch/TensorRT:core/runtime/execute_engine.cpp"
TORCH_TRT_RUNTIME = "pytorch/TensorRT:core/runtime/runtime.cpp"
TORCH_TRT_ENGINE = "pytorch/TensorRT:core/runtime/TRTEngine.cpp"
TORCH_TRT_PY = "pytorch/TensorRT:py/torch_tensorrt/runtime/_utils.py"
CUTE_DSL_TCGEN05 = "NVIDIA/cutlass:python/CuTeDSL/cutlass/cute/nvgpu/tcgen05/mma.py"
CUTE_DSL_WGMMA = "NVIDIA/cutlass:python/CuTeDSL/cutlass/cute/nvgpu/warpgroup/mma.py"
CUTE_DSL_DIAG = "NVIDIA/cutlass:python/CuTeDSL/cutlass/base_dsl/diagnostics.py"
CUTE_DSL_COMMON = "NVIDIA/cutlass:python/CuTeDSL/cutlass/base_dsl/common.py"
CUTE_DSL_CPASYNC = "NVIDIA/cutlass:python/CuTeDSL/cutlass/cute/nvgpu/cpasync/copy.py"
CUTLASS_PY_CHECK = "NVIDIA/cutlass:python/cutlass_cppgen/utils/check.py"
CUTLASS_EX_AMPERE = "NVIDIA/cutlass:examples/14_ampere_tf32_tensorop_gemm/ampere_tf32_tensorop_gemm.cu"
CUTLASS_EX_HOPPER = "NVIDIA/cutlass:examples/48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu"
CUTLASS_EX_BLACKWELL = "NVIDIA/cutlass:examples/70_blackwell_gemm/70_blackwell_fp16_gemm.cu"
CUDF_GPU_UTILS = "rapidsai/cudf:python/cudf/cudf/utils/gpu_utils.py"
CUDF_NUMBA = "rapidsai/cudf:python/cudf/cudf/utils/_numba.py"
CUDAJL_STATE = "JuliaGPU/CUDA.jl:CUDACore/lib/cudadrv/state.jl"
CUDAJL_COMPILATION = "JuliaGPU/CUDA.jl:CUDACore/src/compiler/compilation.jl"
WARP_CONTEXT_SRC = "NVIDIA/warp:warp/_src/context.py"
WARP_JAX_FFI = "NVIDIA/warp:warp/_src/jax/ffi.py"
XGBOOST_COMMON = "dmlc/xgboost:src/common/common.h"
LIGHTGBM_CUDA = "microsoft/LightGBM:src/treelearner/cuda/cuda_single_gpu_tree_learner.hpp"
LIGHTGBM_GPU = "microsoft/LightGBM:src/treelearner/gpu_tree_learner.h"
DGL_RUNTIME = "dmlc/dgl:src/runtime/c_runtime_api.cc"
TVM_DEVICE_API = "apache/tvm:src/runtime/device_api.cc"
MXNET_STORAGE = "apache/mxnet:src/storage/storage.cc"
THINC_UTIL = "explosion/thinc:thinc/util.py"
CANDLE_ERROR = "huggingface/candle:candle-core/src/error.rs"
TE_RHT = "NVIDIA/TransformerEngine:transformer_engine/common/hadamard_transform/hadamard_transform_cast_fusion.cu"
TE_GROUPED_TMA = "NVIDIA/TransformerEngine:transformer_engine/common/cast/core/grouped_tma.cuh"
TORCH_ATEN_HOOKS = "pytorch/pytorch:aten/src/ATen/detail/CUDAHooksInterface.h"
TORCH_OPERATOR_ENTRY = "pytorch/pytorch:aten/src/ATen/core/dispatch/OperatorEntry.cpp"
TORCH_C10D = "pytorch/pytorch:torch/distributed/distributed_c10d.py"
TORCH_BLAS = "pytorch/pytorch:aten/src/ATen/native/cuda/Blas.cpp"
XLA_TRITON_FUSION = "openxla/xla:xla/backends/gpu/codegen/triton/fusion_emitter.cc"
XLA_NVPTX = "openxla/xla:xla/service/gpu/llvm_gpu_backend/nvptx_backend.cc"
JAX_TRITON_KERNELS = "jax-ml/jax:jaxlib/gpu/triton_kernels.cc"
BLENDER_CUDA = "blender/blender:intern/cycles/device/cuda/device_impl.cpp"
GROMACS_DEVICES = "gromacs/gromacs:src/gromacs/hardware/device_management.cu"
TRITON_SEMANTIC = "triton-lang/triton:python/triton/language/semantic.py"
KMCUDA = "src-d/kmcuda:src/kmcuda.cc"
GGML_MMID = "ggml-org/llama.cpp:ggml/src/ggml-cuda/mmid.cu"
FA4_INTERFACE = "Dao-AILab/flash-attention:flash_attn/cute/interface.py"
FAISS_IVFPQ = "facebookresearch/faiss:faiss/gpu/GpuIndexIVFPQ.cu"
FAISS_IVFSQ = "facebookresearch/faiss:faiss/gpu/GpuIndexIVFScalarQuantizer.cu"
FAISS_RESOURCES = "facebookresearch/faiss:faiss/gpu/StandardGpuResources.cpp"
HVM_CUDA = "HigherOrderCO/HVM:src/hvm.cu"
XMRSTAK_CUDA = "fireice-uk/xmr-stak:xmrstak/backend/nvidia/nvcc_code/cuda_extra.cu"
OPENCV_DNN_CUDA = "opencv/opencv:modules/dnn/src/op_cuda.cpp"
OPENCV_PRIVATE_CUDA = "opencv/opencv:modules/core/include/opencv2/core/private.cuda.hpp"
FFMPEG_MUX = "FFmpeg/FFmpeg:fftools/ffmpeg_mux_init.c"
ACCELERATE = "huggingface/accelerate:src/accelerate/accelerator.py"
NVIDIA_DOCKER_V1 = "https://github.com/NVIDIA/nvidia-docker/wiki/CUDA"
# faiss' loader imports the GPU build's module when it is installed and the CPU one otherwise; the GPU classes exist
# only in the former (the faiss wiki's Troubleshooting page, "No GPU Faiss": "has no attribute
# 'StandardGpuResources'").
FAISS_NO_GPU = "facebookresearch/faiss:faiss/python/loader.py"
CATBOOST_TRAIN = "catboost/catboost:catboost/libs/train_lib/train_model.cpp"
DLIB_PYTHON = "davisking/dlib:tools/python/src/dlib.cpp"
BNB_DIAGNOSTICS = "bitsandbytes-foundation/bitsandbytes:bitsandbytes/diagnostics/cuda.py"
# CUDA.jl's start-up warning: "The NVIDIA driver on this system only supports up to CUDA 11.4.0. For performance
# reasons, it is recommended to upgrade to a driver that supports CUDA 11.8 or higher."
CUDAJL_INIT = "JuliaGPU/CUDA.jl:src/initialization.jl"
# torch's Tensor.numpy() of a CUDA tensor: "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy
# the tensor to host memory first."
TORCH_TENSOR_NUMPY = "pytorch/pytorch:torch/csrc/utils/tensor_numpy.cpp"
# XGBoost's MismatchedDevices warning: a booster on one device, the input data on another.
XGBOOST_ERROR_MSG = "dmlc/xgboost:src/common/error_msg.cc"
# TensorFlow's ValidateDevice: "Trying to access resource X located in device /...GPU:0 from device /...CPU:0".
TF_RESOURCE_MGR = "tensorflow/tensorflow:tensorflow/core/framework/resource_mgr.cc"
# llama.cpp's API: llama_supports_gpu_offload() is false for a build without a GPU backend (llama-cpp-python installed
# without CMAKE_ARGS builds the CPU one).
LLAMA_H = "ggml-org/llama.cpp:include/llama.h"
# FlashAttention 2's backward checks is_sm80 || is_sm90 for the largest head dims: their kernels need the shared memory
# of 8.0 (163 KB a block) and 9.0 (227 KB), which 8.6 and 8.9 (99 KB) lack (Programming Guide, compute capabilities
# table); flash-attn 2.5.5 added smaller kernels for head dim 256 without dropout on those GPUs.
FLASH_ATTN_BWD = "Dao-AILab/flash-attention:csrc/flash_attn/flash_api.cpp"
# cuDF's import check: the driver's CUDA older than the runtime's ("Please update your NVIDIA GPU Driver to support CUDA
# Runtime. Detected CUDA Runtime version : 11080 / Latest version of CUDA supported by current NVIDIA GPU Driver :")
CUDF_GPU_UTILS = "rapidsai/cudf:python/cudf/cudf/utils/gpu_utils.py"
# Triton's launcher: a pointer argument the driver does not know as device memory ("Pointer argument (at 0) cannot be
# accessed from Triton (cpu tensor?)")
TRITON_DRIVER_PY = "triton-lang/triton:third_party/nvidia/backend/driver.py"
# CuPy's ndarray.__array__: "Implicit conversion to a NumPy array is not allowed. Please use `.get()`"
CUPY_CORE = "cupy/cupy:cupy/_core/core.pyx"
# GPUCompiler's validation (CUDA.jl's kernels): a kernel argument that is not isbits; a host Array among them is CPU
# memory handed to a GPU kernel ("passing and using non-bitstype argument ... is of type Array{Float32,1}").
GPUCOMPILER_VALIDATION = "JuliaGPU/GPUCompiler.jl:src/validation.jl"
# Chainer's functions refuse NumPy and CuPy arrays mixed in one call.
CHAINER_LINEAR = "chainer/chainer:chainer/functions/connection/linear.py"
# OpenCV's _InputArray::getMat of a cuda::GpuMat: device memory where host memory was expected.
OPENCV_MATRIX_WRAP = "opencv/opencv:modules/core/src/matrix_wrap.cpp"
# OptiX 7+ lives in the display driver (nvoptix): optixInit returns OPTIX_ERROR_UNSUPPORTED_ABI_VERSION when the
# driver's OptiX predates the SDK's ABI, each SDK release naming its minimum driver.
OPTIX_GUIDE = "https://raytracing-docs.nvidia.com/optix7/guide/index.html#implementation_principles"
# Kokkos' team policies on CUDA: level-0 scratch is the block's shared memory (sharedMemPerBlock): "Kokkos::Impl::
# ParallelFor< Cuda > insufficient shared memory", and "Requested too much scratch memory on level 0" (as LAMMPS'
# KOKKOS package reports quote it)
KOKKOS_TEAM = "kokkos/kokkos:core/src/Cuda/Kokkos_Cuda_Parallel_Team.hpp"
# LAMMPS' package command: "Package gpu command without GPU package installed" (a binary built without the GPU package)
LAMMPS_INPUT = "lammps/lammps:src/input.cpp"
# numba's device arrays: a host array handed to a kernel is copied to and from the device at every launch
NUMBA_DEVICEARRAY = "numba/numba:numba/cuda/cudadrv/devicearray.py"
# torch's from_blob / for_blob: a pointer whose memory lives on another device than the one asked for ("Specified device
# cuda:1 does not match device of data cuda:0"), and c10's CUDA guard given a CPU tensor's device
TORCH_FROM_BLOB = "pytorch/pytorch:aten/src/ATen/templates/Functions.cpp"
TORCH_CUDA_GUARD = "pytorch/pytorch:c10/cuda/impl/CUDAGuardImpl.h"
# llama-cpp-python's tensor_split check: a build without a GPU backend has LLAMA_MAX_DEVICES=1
LLAMA_CPP_PY = "abetlen/llama-cpp-python:llama_cpp/llama.py"
# FFmpeg's NVDEC wrapper asks the GPU's decoder for the codec (cuvidGetDecoderCaps): "Codec hevc_cuvid is not supported"
FFMPEG_CUVID = "FFmpeg/FFmpeg:libavcodec/cuviddec.c"
# Sunshine's NVENC probe: "Provided device doesn't support required NVENC features"
SUNSHINE_NVENC = "LizardByte/Sunshine:src/nvenc/nvenc_base.cpp"
# The Video Codec SDK's NVENCSTATUS 2, NV_ENC_ERR_UNSUPPORTED_DEVICE: "the device passed by the client is not supported"
NVENC_API = "https://docs.nvidia.com/video-technologies/video-codec-sdk/13.0/nvenc-video-encoder-api-prog-guide/index.html"
# TensorRT users' FP16 checks (builder->platformHasFastFp16()): jetson-inference's "platform does not have FP16
# support", Paddle-TRT's "the hardware do not support FP16 speed up, use FP32 instead"
JETSON_TENSORNET = "dusty-nv/jetson-inference:c/tensorNet.cpp"
PADDLE_TRT_ENGINE = "PaddlePaddle/Paddle:paddle/fluid/inference/tensorrt/engine.cc"
# DJL picks a native PyTorch build by CUDA "flavor": with none for the CUDA found it loads the CPU build
DJL_LIBUTILS = "deepjavalibrary/djl:engines/pytorch/pytorch-engine/src/main/java/ai/djl/pytorch/jni/LibUtils.java"
# ONNX Runtime's C API: OrtSessionOptionsAppendExecutionProvider_CUDA exists in the GPU package's library only
ORT_C_API = "microsoft/onnxruntime:include/onnxruntime/core/providers/cuda/cuda_provider_factory.h"
# HOOMD-blue's device check: "No supported GPUs are present on this system", "... does not support HOOMD-blue"
HOOMD_EXEC = "glotzerlab/hoomd-blue:hoomd/ExecutionConfiguration.cc"
# TileLang's generated host wrapper opts each kernel in to its dynamic shared memory: "Failed to set the allowed dynamic
# shared memory size to 151552 with error: ..." is the request past the GPU's opt-in maximum
TILELANG_WRAPPER = "tile-ai/tilelang:tilelang/jit/adapter/wrapper.py"
# CuPy's kernels refuse a host array among their arguments (_preprocess_args): "Unsupported type <class
# 'numpy.ndarray'>"
CUPY_KERNEL_ARGS = "cupy/cupy:cupy/_core/_kernel.pyx"
# candle's kernels compile their bf16 variants only under __CUDA_ARCH__ >= 800: on an older GPU the module loads
# without them ("named symbol not found" when loading cast_f32_bf16): bf16 needs compute capability 8.0
CANDLE_CAST = "huggingface/candle:candle-kernels/src/cast.cu"
# PaddleClas' (and its siblings') check_gpu: "You are using paddlepaddle cpu version! Please try to install
# paddlepaddle-gpu to run model on GPU."
PADDLECLAS_CHECK = "PaddlePaddle/PaddleClas:ppcls/utils/check.py"
# A CuTe atom of a plain arch compiled out (not the a/f-only TMA, STSM and modifiable-TMA macros); group 1: its SM.
PLAIN_CUTE_ATOM = r"without CUTE_ARCH_(?!TMA_|STSM_|DEVICE_MODIFIABLE_)\w*?SM(\d{2,3})(?![AF\d])\w*?_ENABLED"
_LIBRARY_PATTERNS: dict[str, tuple[Pattern, ...]] = {
    "mixed-gpu": (
        # ONNX Runtime's TensorRT EP checks an embedded engine's compute capability against the GPU's.
        _p(r"compute capability of the engine cache doesn'?t match with the GPU'?s compute capability", 4, ORT_TRT_CTX),
        _p(r"However, this GPU doesn'?t match\. The compute capability of the GPU", 4, ORT_TRT_CTX),
        _p(r"Engine was compiled for a different compatibility level", 2, ORT_TRT_CTX),
        _p(r"TensorRT EP could not deserialize engine from cache", 1, ORT_TRT_CTX),
        # vLLM's warning where CUDA's device order (fastest first) may differ from nvidia-smi's.
        _p(r"Detected different devices in the system", 2.5, VLLM),
        _p(r"System has multiple GPUs with different compute capabilities", 3, TINYCUDANN_TORCH),
        _p(r"Could not find compatible tinycudann extension for compute capability", 4, TINYCUDANN_TORCH),
        # Torch-TensorRT's runtime: an engine compiled for one GPU model meeting another.
        _p(r"Configured SM capability \S+ does not match with current device SM capability", 3, TORCH_TRT_EXEC),
        _p(r"Program compiled for .{1,80} but current CUDA device is", 3, TORCH_TRT_EXEC),
        _p(r"No compatible device found on system to run program", 3, TORCH_TRT_RUNTIME),
        _p(r"No compatible device was found for instantiating TensorRT engine", 3, TORCH_TRT_ENGINE),
        _p(r"Could not find a compatible device on the system to run TRT Engine", 3, TORCH_TRT_PY),
        _p(r"engine is being instantiated in a multi-GPU system", 1, TORCH_TRT_RUNTIME),
        _p(r"engine is being instantitated in a multi-GPU system", 1, TORCH_TRT_RUNTIME),
        # torch's cpp_extension builds for the cards visible at build time when TORCH_CUDA_ARCH_LIST is unset: on a
        # host of two capabilities (classify's _mixed_host) the other card has no code
        _p(r"TORCH_CUDA_ARCH_LIST is not set, all archs for visible cards are included", 1, TORCH_EXT),
    ),
    "ptx-jit-lower-arch": (
        _p(r"tinycudann was built for lower compute capability", 2.5, TINYCUDANN_TORCH),
        # Kokkos' start-up check: "running kernels compiled for compute capability 3.5 on device with compute
        # capability 3.7, this will likely reduce potential performance" (a lower arch's code runs there)
        _p(
            r"running kernels compiled for compute capability \d+\.\d+ on device with compute capability \d+\.\d+",
            3,
            KOKKOS_CUDA,
        ),
        # GROMACS' note: no cubin for the GPU, its kernels are JIT-compiled from the build's PTX.
        _p(r"current binary does not include kernels compiled natively for this architecture", 2, GROMACS_DEVICES),
    ),
    "jit-toolchain-too-old": (
        # numba's find_closest_arch when the NVVM it loaded supports no compute capability at all (an NVVM of a
        # cudatoolkit that does not match, or none): the run-time compiler cannot target the GPU
        _p(r"No supported GPU compute capabilities found", 3.5, NUMBA_NVVM),
        _p(r"GPU \(compute capability \d+\.\d+\) is not fully supported by CUDA \d+\.\d+", 3, CUDAJL_STATE),
        # XLA's LLVM back end does not know the GPU and compiles for the newest target it knows.
        _p(r"Unknown compute capability \S+\.? Defaulting to telling LLVM that we'?re compiling for", 2.5, XLA_NVPTX),
    ),
    "driver-too-old": (
        # nvidia-docker 1.0 compares the driver's CUDA with the image's label before starting the container
        _p(r"unsupported CUDA version: driver \d+\.\d+ < image \d+", 4, NVIDIA_DOCKER_V1),
        # numba binds driver functions lazily: one the driver lacks is a driver older than numba needs (not the
        # functions every driver has: a library without cuInit is no driver at all, NUMBA_CUDA_DRIVER pointing at
        # libcudart)
        _p(r"Driver missing function: (?!cuInit\b|cuDriverGetVersion\b|cuDeviceGet\b|cuDeviceGetCount\b)cu\w+", 3,
           NUMBA_DRIVER),
        _p(r"\bNVIDIA Insufficient driver\b", 3, XMRSTAK_CUDA),
        _p(r"\bdriver on this system only supports up to CUDA \d+", 3, CUDAJL_INIT),
        _p(r"Please update your NVIDIA GPU Driver to support CUDA Runtime", 4, CUDF_GPU_UTILS),
        _p(r"Latest version of CUDA supported by current NVIDIA GPU Driver", 3, CUDF_GPU_UTILS),
        _p(r"\bOPTIX_ERROR_UNSUPPORTED_ABI_VERSION\b", 3, OPTIX_GUIDE),
    ),
    "device-mismatch": (
        _p(r"\bdevice mismatch in \w+, lhs: \w+", 3, CANDLE_ERROR),
        _p(r"Specified device \S+ does not match device of data \S+", 3, TORCH_FROM_BLOB),
        _p(r"Unsupported type <class 'numpy\.ndarray'>", 3, CUPY_KERNEL_ARGS),
        _p(r"CUDAGuardImpl initialized with non-CUDA DeviceType", 3, TORCH_CUDA_GUARD),
        _p(r"Host array used in CUDA kernel will incur copy overhead", 2, NUMBA_DEVICEARRAY),
        _p(
            r"passing and using non-bitstype argument[\s\S]{0,300}?\bof type (?:Core\.)?(?:Array|Vector|Matrix)\{",
            3,
            GPUCOMPILER_VALIDATION,
        ),
        _p(r"\bnumpy and cupy must not be used together\b", 4, CHAINER_LINEAR),
        _p(r"You should explicitly call download method for cuda::GpuMat object", 3, OPENCV_MATRIX_WRAP),
        _p(r"Pointer argument \(at \d+\) cannot be accessed from Triton \(cpu tensor\?\)", 4, TRITON_DRIVER_PY),
        _p(r"Implicit conversion to a NumPy array is not allowed", 3, CUPY_CORE),
        # xformers' operator reasons (fmha/common.py): "device=cpu (supported: {'cuda'})"
        _p(r"\bdevice=cpu \(supported: \{'cuda'\}\)", 3, XFORMERS),
        _p(r"can't convert cuda:?\d* device type tensor to numpy", 3, TORCH_TENSOR_NUMPY),
        _p(r"Falling back to prediction using DMatrix due to mismatched devices", 3, XGBOOST_ERROR_MSG),
        _p(r"Trying to access resource [\s\S]{0,200}?located in device \S+ from device \S+", 3, TF_RESOURCE_MGR),
    ),
    "no-kernel-image": (
        _p(r"CUDA binary kernel for this graphics card compute capability \(\d+\.\d+\) not found", 4, BLENDER_CUDA),
        # torch's _check_capability (torch/cuda/__init__.py): "Found GPU0 NVIDIA GB10 which is of cuda capability
        # 12.1. Minimum and Maximum cuda capability supported by this version of PyTorch is (8.0) - (12.0)"; a GPU
        # inside the range's last major is no missing image (classify's _torch_capability_range)
        _p(r"Minimum and Maximum cuda capability supported by this version of PyTorch is", 3, TORCH_CUDA),
        # xmr-stak's arch check against the archs the binary was built for
        _p(r"miner not compiled for the gpu architecture \d+", 4, XMRSTAK_CUDA),
        # OpenCV's DNN CUDA backend: the build's CUDA_ARCH_BIN/CUDA_ARCH_PTX has no code for the device
        _p(r"OpenCV was not built to work with the selected device", 4, OPENCV_DNN_CUDA),
        _p(r"binary does not include support for the CUDA architecture of the GPU", 4, GROMACS_DEVICES),
    ),
    "capability-guard": (
        _p(r"named symbol not found\"?\)?,? when loading \w*bf16\w*", 3.5, CANDLE_CAST),
        _p(r"Codec \w+_cuvid is not supported", 3, FFMPEG_CUVID),
        _p(r"Provided device doesn'?t support required NVENC features", 3, SUNSHINE_NVENC),
        # by name only: "returned error 2" is also what a container without the video driver capability gets
        _p(r"\bNV_ENC_ERR_UNSUPPORTED_DEVICE\b", 2.5, NVENC_API),
        # status lines printed on every start of a GPU without fast FP16, whatever failed after them: hints only
        _p(r"\bplatform does not have FP16 support\b", 1, JETSON_TENSORNET),
        _p(r"the hardware do(?:es)? not support FP16 speed up", 1, PADDLE_TRT_ENGINE),
        _p(r"No supported GPUs are present on this system|\bdoes not support HOOMD-blue\b", 3, HOOMD_EXEC),
        # accelerate's check: bf16 needs torch.cuda.is_bf16_supported() (compute capability 8.0+)
        _p(r"bf16 mixed precision requires PyTorch >= 1\.10 and a supported device", 4, ACCELERATE),
        _p(
            r"A GPU with NVIDIA \w+\W{0,3} \(Compute Capability \d+\.\d+\) or newer architecture is required",
            4,
            CUDF_GPU_UTILS,
        ),
        _p(r"You will need a GPU with NVIDIA \w+\W{0,3} or newer architecture", 4, CUDF_GPU_UTILS),
        # FFmpeg's NVENC wrapper (libavcodec/nvenc.c, nvenc_check_device): "[ GPU #0 - < GeForce GT 630 > has Compute SM
        # 2.1 ]" then "does not support NVENC" below NVENC_CAP (3.0); older releases and the Video Codec SDK samples
        # print "..., NVENC Not Available" on the same line
        _p(
            r"has Compute SM \d+\.\d+(?:, NVENC Not Available| \][^\n]*\n[^\n]{0,80}?does not support NVENC)",
            3.5,
            FFMPEG_NVENC,
        ),
        # cuDF's UDF shims ship as PTX per compute capability (shim_60.ptx, shim_70.ptx ...); _get_ptx_file refuses a
        # GPU below the lowest of them ("... missing the necessary PTX files that are <=50"): RAPIDS' own floor
        _p(r"This cuDF installation is missing the necessary PTX files that are <=\d+", 4, CUDF_NUMBA),
        _p(r"GPU \(compute capability \d+\.\d+\) is not supported by CUDA(?:\.jl| toolkit)", 4, CUDAJL_STATE),
        _p(r"CUDA\.jl requires compute capability \S+ or higher", 4, CUDAJL_COMPILATION),
        _p(r"compute cap\.: \d+\.\d+, ECC: +\w+, stat: incompatible", 3.5, GROMACS_DEVICES),
        _p(r"CUDA backend requires compute capability \d+\.\d+ or up, but found", 4, BLENDER_CUDA),
        _p(r"fp8e4nv data type is not supported on CUDA arch < 89", 4, TRITON_SEMANTIC),
        _p(r"compute capability mismatch for device \d+: wanted \d+\.\d+, have \d+\.\d+", 4, KMCUDA),
        _p(r"Insufficient compute capability \d+ detected\. This program was compiled for >=", 4, TINYCUDANN_SAMPLE),
        _p(r"must be run on a machine with compute capability at least \d+", 4, CUTLASS_EX_AMPERE),
        _p(r"This example requires a GPU of NVIDIA'?s \w+ Architecture", 4, CUTLASS_EX_HOPPER),
        # the examples' own device check, also for an a target (the corpus's convention: a library's check)
        _p(r"This example requires a GPU with compute capability \d+a?\)?\.", 4, CUTLASS_EX_BLACKWELL),
        _p(r"expects arch to be at least sm_\d+, but got", 3.5, CUTE_DSL_CPASYNC),
        _p(
            r"Unable to JIT load the \S+ op due to it not being compatible due to hardware/software issue",
            3,
            DEEPSPEED_BUILDER,
        ),
        _p(r"Unsupported compute capability\. Supported: \d+\.x", 4, FA4_INTERFACE),
        _p(r"Only Hopper supports different V headdim", 3.5, FA3_API),
        _p(r"with CC \d+\.\d+ not supported, need \d+\.\d+\+ compute capability", 4, FAISS_RESOURCES),
        _p(r"Compute capability < 7\.5 detected! Only slow 8-bit matmul is supported", 1.5, BNB_DIAGNOSTICS),
        _p(r"Triton support is only enabled for Ampere GPUs \(compute capability 8\.0\) and up", 4, XLA_TRITON_FUSION),
        _p(r"is only supported on CUDA devices with compute capability = \[", 4, TORCH_BLAS),
        _p(r"RHT fusion is only supported on Blackwell", 3.5, TE_RHT),
        # vLLM's INFO line: FlashAttention-2 is skipped below 8.0 (beside a failure it names the GPU as the cause).
        _p(r"Cannot use FlashAttention-2 backend for Volta and Turing GPUs", 1, VLLM),
        # numba's find_closest_arch raises NvvmSupportError("GPU compute capability %d.%d is not supported (requires
        # >=%d.%d)") for a GPU below the toolkit's lowest target
        _p(r"\bNvvmSupportError\b", 3, NUMBA_NVVM),
        # CuTe's atoms of a plain arch (SM80's mma, SM89's fp8 mma, SM75's ldmatrix) trap when compiled for a lower
        # arch (include/cute/arch/config.hpp defines CUTE_ARCH_MMA_SM80_ENABLED for __CUDA_ARCH__ >= 800): on a GPU
        # below the atom the library dispatched a kernel the GPU cannot run; classify's _plain_cute_atom reads which.
        # (TMA, STSM and the modifiable TMA are a/f-only, the arch-specific patterns above)
        _p(PLAIN_CUTE_ATOM, 3, CUTE_CONFIG),
        # CUTLASS's examples check the device first: "requires a device of compute capability 89", "requires a GPU
        # of NVIDIA's Ampere Architecture or later (compute capability 80 or greater)"
        _p(
            r"\brequires? a (?:device|GPU|card) (?:of|with) (?:a )?(?:compute capability|CC|SM) ?\d",
            3.5,
            CUTLASS_EX_AMPERE,
        ),
    ),
    "arch-specific-mismatch": (
        _p(r"expects arch to be sm_90a, but got", 4, CUTE_DSL_WGMMA),
        _p(r"Unsupported GPU architecture '\w+'\. This kernel is only compatible with", 4, CUTE_DSL_DIAG),
        _p(r"CUDA kernel not compatible with your GPU", 3, CUTE_DSL_COMMON),
        _p(r"tensormap\.replace is architecture-specific", 3.5, TE_GROUPED_TMA),
    ),
    "shared-memory-limit": (
        _p(r"\brequires A100/A800 or H100/H800\b", 3, FLASH_ATTN_BWD),
        _p(r"Requested too much scratch memory on level 0", 3, KOKKOS_TEAM),
        _p(r"Failed to set the allowed dynamic shared memory size to \d+", 3, TILELANG_WRAPPER),
        # torch's SDPA: the flash backward for large head dims needs sm80/sm90's shared memory
        _p(r"Flash attention currently doesn'?t support training with head_dim greater than \d+ on sm86", 3, TORCH_SDP),
        _p(r"ParallelFor< ?Cuda ?> insufficient shared memory", 3, KOKKOS_TEAM),
        _p(r"FullyFusedMLP: insufficient shared memory available on the GPU", 4, TINYCUDANN_MLP),
        _p(r"Configuration uses too much shared memory", 4, CUTLASS_PY_CHECK),
        _p(r"Shared memory size limit exceeded: requested \d+, available: \d+", 4, XLA_TRITON_FUSION),
        _p(r"Shared memory requested \(\d+ b\) exceeds device resources", 4, JAX_TRITON_KERNELS),
        _p(r"GGML_ASSERT\(nbytes_shared <= smpbo\) failed", 4, GGML_MMID),
        _p(r"Device \d+ has \d+ bytes of shared memory, while .{1,80} requires \d+ bytes", 4, FAISS_IVFPQ),
        _p(r"Insufficient shared memory available on the GPU for QT_", 4, FAISS_IVFSQ),
        # HVM (Bend's runtime) asks for the shared memory of an RTX 4090 per block; on GPUs with less the launch fails
        # and it prints "Failed to launch kernels. Error code: %s." (its FAQ: older GPUs have about half the shared
        # memory), older releases the CUDA samples' "Failed to launch kernels (error code %s)!" after "hvm".
        _p(r"HVM-CUDA requires a GPU with at least \d+ KB of L1 cache per SM", 4, HVM_CUDA),
        _p(
            r"Failed to launch kernels\. Error code: (?:invalid argument|invalid configuration argument|"
            r"too many resources requested for launch)",
            3,
            HVM_CUDA,
        ),
        _p(r"\bhvm\b[^\n]{0,80}\n[^\n]{0,20}Failed to launch kernels \(error code invalid argument\)", 3, HVM_CUDA),
    ),
    "wrong-framework-build": (
        _p(r"device requested but this build of Warp does not support CUDA", 4, WARP_CONTEXT_SRC),
        _p(r"Package gpu command without GPU package installed", 3, LAMMPS_INPUT),
        _p(r"Current LLAMA_MAX_DEVICES=1\b", 3, LLAMA_CPP_PY),
        _p(r"No matching cuda flavor for [\w-]+ found", 3, DJL_LIBUTILS),
        _p(r"You are using paddlepaddle cpu version", 4, PADDLECLAS_CHECK),
        _p(r"entry point named '?OrtSessionOptionsAppendExecutionProvider_CUDA'? in DLL", 3, ORT_C_API),
        _p(r"\bllama_supports_gpu_offload\(\)\s*(?:->|returns?|is|==|:)?\s*\n?\s*False\b", 3, LLAMA_H),
        # OpenCV's throw_no_cuda: the cv::cuda functions of a build without them
        _p(
            r"The called functionality is disabled for current build or platform\)? in (?:function '?)?throw_no_cuda",
            4,
            OPENCV_PRIVATE_CUDA,
        ),
        # FFmpeg built without NVENC/NVDEC: the encoder or decoder is unknown to it
        _p(
            r"Unknown (?:encoder|decoder) '(?:h264|hevc|av1|vp[89]|mpeg[124]|vc1|mjpeg)_(?:nvenc|cuvid)'",
            3.5,
            FFMPEG_MUX,
        ),
        _p(r"This Warp build does not include CUDA support", 4, WARP_JAX_FFI),
        _p(r"XGBoost version not compiled with GPU support", 4, XGBOOST_COMMON),
        _p(r"CUDA Tree Learner was not enabled in this build", 4, LIGHTGBM_CUDA),
        _p(r"GPU Tree Learner was not enabled in this build", 3, LIGHTGBM_GPU),
        _p(r"Device API cuda is not enabled\. Please install the cuda version of dgl", 4, DGL_RUNTIME),
        _p(r"Device API cuda is not enabled", 3.5, TVM_DEVICE_API),
        _p(r"Compile with USE_CUDA=1 to enable GPU usage", 4, MXNET_STORAGE),
        _p(r"Cannot use GPU, CuPy is not installed", 3.5, THINC_UTIL),
        _p(r"the candle crate has not been built with cuda support", 4, CANDLE_ERROR),
        _p(r"Cannot initialize CUDA without ATen_cuda library", 4, TORCH_ATEN_HOOKS),
        # the operator has no kernel for the CUDA backend: a CPU-only build of the library that registers it
        _p(r"Could not run '[\w:.]+' with arguments from the 'CUDA' backend", 3, TORCH_OPERATOR_ENTRY),
        _p(r"Distributed package doesn'?t have NCCL built in", 3.5, TORCH_C10D),
        # the GPU classes exist only in GPU builds of faiss (its loader falls back to the CPU build silently)
        _p(r"has no attribute '(?:StandardGpuResources|GpuIndex\w*|index_cpu_to_gpu\w*)'", 4, FAISS_NO_GPU),
        _p(r"Can'?t load GPU learning library\. Module was not compiled", 3, CATBOOST_TRAIN),
        _p(r"\bDLIB_USE_CUDA\b\W{0,12}(?:is\s+|was\s+|returns?\s+|prints?\s+)?False\b", 3.5, DLIB_PYTHON),
    ),
}
CATEGORIES = tuple(replace(c, patterns=c.patterns + _LIBRARY_PATTERNS.get(c.id, ())) for c in CATEGORIES)


@dataclass(frozen=True)
class MessageHead:
    """A fixed run of an emitter's message (no placeholder inside), for texts that end inside it.

    Search excerpts and pasted logs are cut at a length, not at a message's end ("no kernel image is availa"); the
    beginning of a fixed run, at least :data:`CUT_SHORT_MIN` characters of it, at the very end of a text still names
    the message (classify: ``_message_cut_short``).  Each run is matched whole by a pattern of its category, whose
    source it repeats (tests/test_explain_learned_families.py checks both).
    """

    category: str
    message: str
    source: str


CUT_SHORT_MIN = 16
CUT_SHORT_MESSAGES: tuple[MessageHead, ...] = (
    MessageHead("no-kernel-image", "no kernel image is available for execution on the device", CUDART),
    MessageHead("ptx-too-new-for-driver", "the provided PTX was compiled with an unsupported toolchain", CUDART),
    MessageHead("driver-too-old", "CUDA driver version is insufficient for CUDA runtime version", CUDART),
    MessageHead("driver-too-old", "The NVIDIA driver on your system is too old", TORCH_C10),
    MessageHead("driver-too-old", "forward compatibility was attempted on non supported HW", COMPAT),
    MessageHead("wrong-framework-build", "Torch not compiled with CUDA enabled", TORCH_CUDA),
    MessageHead("wrong-framework-build", "This CTranslate2 package was not compiled with CUDA support", CT2_DEVICES),
    MessageHead(
        "wrong-framework-build",
        "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed",
        JAX_BRIDGE,
    ),
    MessageHead(
        "wrong-framework-build", "Cannot use GPU because you have installed CPU version PaddlePaddle", PADDLE_PLACE
    ),
    # torch's "... with CUDA capability sm_120 is not compatible with the current PyTorch installation", fixed part
    MessageHead("no-kernel-image", "is not compatible with the current PyTorch installation", TORCH_CUDA),
    MessageHead("device-mismatch", "Expected all tensors to be on the same device", TORCH_ITER),
    MessageHead("device-mismatch", "Input and parameter tensors are not at the same device", TORCH_RNN),
    MessageHead("driver-too-old", "your nvidia driver is too old or missing", OLLAMA_CUDART),
    MessageHead("wrong-framework-build", "Found no NVIDIA driver on your system", TORCH_C10),
    MessageHead("wrong-framework-build", "PaddlePaddle is not compiled with CUDA", PADDLE_DEVICE),
    MessageHead("wrong-framework-build", "The installed version of bitsandbytes was compiled without GPU support", BNB),
    MessageHead(
        "wrong-framework-build",
        "Specified provider 'CUDAExecutionProvider' is not in available provider names",
        ORT_PY,
    ),
    MessageHead("capability-guard", "which is too old to be supported by the triton GPU compiler", TORCH_INDUCTOR),
    MessageHead("shared-memory-limit", "uses too much shared data", NVCC),
    MessageHead(
        "toolkit-mismatch", "Cuda extensions are being compiled with a version of Cuda that does not match", APEX_SETUP
    ),
    MessageHead(
        "extension-abi-mismatch", "xFormers can't load C++/CUDA extensions. xFormers was built for", XFORMERS_CPP_LIB
    ),
    MessageHead("device-mismatch", "Attempting to deserialize object on a CUDA device", TORCH_SER),
    MessageHead("jit-toolchain-too-old", "nvcc fatal : Unsupported gpu architecture", NVCC),
    MessageHead("jit-toolchain-too-old", "nvrtc: error: invalid value for --gpu-architecture", NVRTC),
    MessageHead("shared-memory-limit", "out of resource: shared memory", TRITON_ERRORS),
    MessageHead("capability-guard", "FlashAttention only supports Ampere GPUs or newer", FLASH_ATTN),
    MessageHead(
        "ptx-jit-lower-arch", "ggml-cuda was compiled without support for the current GPU architecture", GGML_CUDA
    ),
    MessageHead(
        "ptx-jit-lower-arch",
        "TensorFlow was not built with CUDA kernel binaries compatible with compute capability",
        TF_GPU,
    ),
)

# owner/repo -> the project a message comes from, for fixes that name the right framework.
SOURCE_PROJECTS: dict[str, str] = {
    "pytorch/pytorch": "torch",
    "kokkos/kokkos": "kokkos",
    "FFmpeg/FFmpeg": "ffmpeg",
    "triton-lang/triton": "triton",
    "jax-ml/jax": "jax",
    "openxla/xla": "jax",
    "tensorflow/tensorflow": "tensorflow",
    "microsoft/onnxruntime": "onnxruntime",
    "OpenNMT/CTranslate2": "ctranslate2",
    "PaddlePaddle/Paddle": "paddle",
    "ggml-org/llama.cpp": "ggml",
    "numba/numba": "numba",
    "cupy/cupy": "cupy",
    "bitsandbytes-foundation/bitsandbytes": "bitsandbytes",
    "facebookresearch/xformers": "xformers",
    "Dao-AILab/flash-attention": "flash-attn",
    "flashinfer-ai/flashinfer": "flashinfer",
    "vllm-project/vllm": "vllm",
    "deepspeedai/DeepSpeed": "deepspeed",
    "facebookresearch/detectron2": "detectron2",
    "open-mmlab/mmcv": "mmcv",
    "NVIDIA/TransformerEngine": "transformer-engine",
    "deepseek-ai/DeepGEMM": "deepgemm",
    "NVIDIA/cutlass": "cutlass",
    "NVIDIA/TensorRT-LLM": "tensorrt-llm",
    "NVIDIA/cccl": "thrust",
    "deepseek-ai/FlashMLA": "flashmla",
    "llvm/llvm-project": "llvm",
    "traveller59/spconv": "spconv",
    "NVIDIA/warp": "warp",
    "ollama/ollama": "ollama",
    "thu-ml/SageAttention": "sageattention",
    "jamjamjon/usls": "usls",
    "hashcat/hashcat": "hashcat",
    "Rust-GPU/Rust-CUDA": "rust-cuda",
    "NVIDIA/apex": "apex",
    "pytorch/vision": "torchvision",
    "NVIDIA/TensorRT-Edge-LLM": "tensorrt-edge-llm",
    "pytorch/extension-cpp": "torch-extension",
    "NVIDIA/libnvidia-container": "nvidia-container-toolkit",
    "huggingface/transformers": "transformers",
    "NVlabs/tiny-cuda-nn": "tiny-cuda-nn",
    "pytorch/TensorRT": "torch-tensorrt",
    "rapidsai/cudf": "cudf",
    "AMReX-Codes/amrex": "amrex",
    "BVLC/caffe": "caffe",
    "InternLM/lmdeploy": "lmdeploy",
    "NVlabs/cuda-oxide": "cuda-oxide",
    "ginkgo-project/ginkgo": "ginkgo",
    "huggingface/diffusers": "diffusers",
    "huggingface/text-embeddings-inference": "text-embeddings-inference",
    "icl-utk-edu/magma": "magma",
    "isl-org/Open3D": "open3d",
    "m4rs-mt/ILGPU": "ilgpu",
    "nerfstudio-project/gsplat": "gsplat",
    "pyg-team/pytorch_geometric": "torch-geometric",
    "xmrig/xmrig-cuda": "xmrig",
    "Genesis-Embodied-AI/Genesis": "genesis",
    "chaiNNer-org/chaiNNer": "chainner",
    "JuliaGPU/GPUCompiler.jl": "cuda.jl",
    "chainer/chainer": "chainer",
    "lammps/lammps": "lammps",
    "PaddlePaddle/PaddleClas": "paddle",
    "tile-ai/tilelang": "tilelang",
    "LizardByte/Sunshine": "sunshine",
    "dusty-nv/jetson-inference": "jetson-inference",
    "deepjavalibrary/djl": "djl",
    "glotzerlab/hoomd-blue": "hoomd-blue",
    "abetlen/llama-cpp-python": "llama-cpp-python",
    "JuliaGPU/CUDA.jl": "cuda.jl",
    "dmlc/xgboost": "xgboost",
    "microsoft/LightGBM": "lightgbm",
    "dmlc/dgl": "dgl",
    "apache/tvm": "tvm",
    "apache/mxnet": "mxnet",
    "explosion/thinc": "thinc",
    "huggingface/candle": "candle",
    "blender/blender": "blender",
    "gromacs/gromacs": "gromacs",
    "src-d/kmcuda": "kmcuda",
    "facebookresearch/faiss": "faiss",
    "catboost/catboost": "catboost",
    "davisking/dlib": "dlib",
    "HigherOrderCO/HVM": "hvm",
    "fireice-uk/xmr-stak": "xmr-stak",
    "opencv/opencv": "opencv",
    "huggingface/accelerate": "accelerate",
    "kvcache-ai/ktransformers": "ktransformers",
    "rapidsai/rmm": "rmm",
    "unslothai/unsloth": "unsloth",
    "LostRuins/koboldcpp": "koboldcpp",
    "NVIDIA/TensorRT": "tensorrt",
    "PaddlePaddle/FastDeploy": "fastdeploy",
    "blender/cycles": "blender",
}


def project_of(source: str) -> str | None:
    """The project a pattern's ``source`` belongs to (``pytorch/pytorch:torch/...`` -> ``torch``); None for docs."""
    return SOURCE_PROJECTS.get(source.split(":", 1)[0]) if not source.startswith("https://") else None


def iter_sources() -> list[tuple[str, str, str]]:
    """(category, source, pattern) for every pattern of the catalogue, then for every form of :mod:`.forms` and each
    emitter it generalises, then the rows of the knowledge tables (:mod:`.hw_features`, :mod:`.libraries`): what
    ``cudafit explain --catalogue`` lists."""
    # imported here: they read the GPU tables through the extractor, which imports this module
    from cudafit.explain.hw_features import HW_FEATURES
    from cudafit.explain.libraries import load_library_support

    rows = [(c.id, p.source, p.shown) for c in CATEGORIES for p in c.patterns]
    # the knowledge rules: a feature denied beside a GPU without it, a library beside a GPU outside its range
    features = [
        ("capability-guard", f.source, f"denied ({f.words}) beside a GPU without {f.name}: {f.held_by} have it")
        for f in HW_FEATURES
    ]
    libraries = [
        (lib.reading, lib.source, f"a failure beside {lib.names.pattern} and a GPU outside {lib.describe()}")
        for lib in load_library_support()
    ]
    return rows + list(iter_form_sources()) + features + libraries


_BY_ID = {c.id: c for c in CATEGORIES}

UNKNOWN = Category(
    "unknown",
    "not a known CUDA compatibility failure",
    (),
    "none of cudafit's failure categories matches this text with confidence",
    ("run cudafit doctor to check this environment against its GPUs",),
)


def category(cat_id: str) -> Category:
    """A category by id, ``unknown`` included (``KeyError`` for other ids)."""
    return UNKNOWN if cat_id == "unknown" else _BY_ID[cat_id]
