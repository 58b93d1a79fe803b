"""The forms each category's messages take across emitters: what ``explain`` reads where no emitter's message is.

The catalogue (:mod:`.catalogue`) matches each emitter's exact message; a message of an emitter it does not know yet
-- a new library's guard, a build script's wording, an issue title that says the same in a user's words -- matches none
of them, and the text was ``unknown`` even where its category is plain.  Those messages are not free text: the
libraries that check a GPU all say *who requires what of which hardware* ("requires compute capability >= 8.0", "only
supported on Ampere or newer", "is not supported on this GPU"), the toolchains that do not know a GPU say *which tool
does not know which target*, a kernel that needs more shared memory than a GPU has says *shared memory* beside a
*limit*.  This module holds one regular expression per such form, each generalising the messages of the emitters it
cites (their files, in :mod:`.catalogue`'s ``owner/repo:path`` form) and the NVIDIA document that defines the
failure, so a form is a class of messages, not an example of one.

The forms are a last resort, read by :func:`.classify.classify` only when no category reached the catalogue's
minimum score and the text names no CUDA error the inventory calls unrelated (out of memory, an illegal address,
...) nor such an error's words: a form's finding is never stronger than an emitter's own message, and its
confidence says so.  Two forms read the extracted facts rather than words: a real ``a``/``f`` target beside a
failure and no GPU it covers (NVIDIA's arch-specific rule), and GPUs of two compute capabilities beside a failure
(shared/docs/error_categories.md, mixed-gpu).  Every regular expression is bounded to a line and a few dozen
characters between its parts, so reading stays linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from cudafit.explain.arch_features import line_at

__all__ = [
    "BEST_PRACTICES",
    "BUILD_FORM_NAME",
    "BUILT_ON_A_GPU_RUN_ON_ANOTHER",
    "CUDA_FAILURE",
    "FAILURE",
    "FORMS",
    "MISBEHAVES",
    "MIXED_HOST_STATED",
    "SLOW_WORDS",
    "UNRELATED_WORDS",
    "Form",
    "iter_form_sources",
    "iter_forms",
]

# NVIDIA's documents each form rests on.
PG_COMPAT = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#application-compatibility"
PG_JIT = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#just-in-time-compilation"
PG_SMEM = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#shared-memory"
PG_CC = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#compute-capabilities"
NVCC_ARCH = "https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#gpu-feature-list"
COMPAT_DOC = "https://docs.nvidia.com/deploy/cuda-compatibility/index.html"
# CUDA_DEVICE_ORDER and CUDA_CACHE_MAXSIZE: the environment variables section.
_ENV_VARS = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars"
# No driver at all (libcuda cannot be opened, a stub loaded, version 0.0): not one that is too old.
NO_DRIVER = (
    r"\b(?:could not|cannot|can'?t|failed to|unable to) (?:open|load|find) (?:the )?libcuda|"
    r"\blibcuda\.so[.\d]*:? (?:cannot open|not found|no such file)|\bstub (?:library|libcuda)\b|"
    r"CUDA_ERROR_STUB_LIBRARY|\bdriver(?: version)?:? 0\.0\b|\bno (?:NVIDIA |CUDA )?driver\b"
)
TORCH_CUDA_SEMANTICS = "https://pytorch.org/docs/stable/notes/cuda.html"
AF_DOC = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#feature-availability"
# A package's compiled part is built for one version of what it links against, and ships with it (PyPA, "Packaging
# binary extensions"): a missing compiled part, or one of another version, is a build problem, not the GPU's.
BINARY_EXTENSIONS = "https://packaging.python.org/en/latest/guides/packaging-binary-extensions/"
# The CUDA stack's own parts, whose versions are compared by the toolkit and driver categories, not as a package pair.
_STACK = r"(?:CUDA|cuda\w*|cudart|cuDNN|driver|runtime|nvcc|toolkit|NVML)"
# The name of classify's form of the facts that judges a report's build flags against the GPUs it names (explain's
# grounders tailor the fix to it).
BUILD_FORM_NAME = "build flags without code for a GPU the report names"
BEST_PRACTICES = (
    "https://docs.nvidia.com/cuda/cuda-c-best-practices-guide/index.html#building-for-maximum-compatibility"
)


@dataclass(frozen=True)
class Form:
    """One form a category's messages take: its regular expression (case-insensitive), how much it says, and the
    emitters whose messages it generalises (``owner/repo:path``) with the document behind it (``https://``; at least
    one, which is what a finding from the form cites)."""

    name: str
    category: str
    regex: re.Pattern[str]
    weight: float
    sources: tuple[str, ...]
    alone: bool = True  # the form reports a failure by itself; else it counts only beside one (:data:`FAILURE`)
    # Lower-case words of which the text must hold one (``any_of``) and all (``all_of``) before the regular
    # expression is tried: a substring test over the text costs a fraction of a regex search.
    any_of: tuple[str, ...] = ()
    all_of: tuple[str, ...] = ()
    # CUDA errors (codes) the inventory calls unrelated that this form explains where it matches: cudaFuncSetAttribute
    # and a launch past the shared-memory opt-in maximum return cudaErrorInvalidValue ("invalid argument").
    explains: tuple[int, ...] = ()
    # A text this form is not read in (what else its words say), unless ``rescue`` also matches it.
    veto: re.Pattern[str] | None = None
    rescue: re.Pattern[str] | None = None
    # Whole words of which the text must hold one (after ``any_of``'s cheap substring test): "gpu" inside a progress
    # bar's metric name ("gpu_mem=12.3G") names no GPU.
    context: re.Pattern[str] | None = None

    def may_match(self, lowered: str) -> bool:
        """Whether the lower-cased text holds the words without which this form cannot match."""
        if self.any_of and not any(w in lowered for w in self.any_of):
            return False
        if not all(w in lowered for w in self.all_of):
            return False
        return self.context is None or self.context.search(lowered) is not None

    def vetoed(self, text: str) -> bool:
        """Whether the text says what makes this form's words mean something else."""
        if self.veto is None or not self.veto.search(text):
            return False
        return self.rescue is None or not self.rescue.search(text)


def _f(
    name: str,
    category: str,
    rx: str,
    weight: float,
    *sources: str,
    alone: bool = True,
    any_of: tuple[str, ...] = (),
    all_of: tuple[str, ...] = (),
    explains: tuple[int, ...] = (),
    veto: str | None = None,
    rescue: str | None = None,
    context: str | None = None,
) -> Form:
    def rx_of(pattern: str | None) -> re.Pattern[str] | None:
        return re.compile(pattern, re.I) if pattern else None

    return Form(
        name,
        category,
        re.compile(rx, re.I),
        weight,
        sources,
        alone,
        any_of,
        all_of,
        explains,
        rx_of(veto),
        rx_of(rescue),
        rx_of(context),
    )


# GPU generations, as libraries name them in their checks (NVIDIA's architecture names, PG_CC).
_GEN = r"(?:Kepler|Maxwell|Pascal|Volta|Turing|Ampere|Ada(?:\s+Lovelace)?|Lovelace|Hopper|Blackwell)"
# A piece of hardware a check can name: a capability, an SM, a generation, a data-centre GPU.
_HW = (
    rf"(?:compute[ _]capabilit(?:y|ies)|compute cap\.|CUDA capability|device capability|\bcc\s*[<>=]|"
    rf"\bsm_?\s?\d{{2,3}}[af]?\b|\bSM version\b|"
    rf"\bSM\s?\d{{1,3}}(?:\.\d)?\b|"
    rf"\b{_GEN}\b|\b(?:A100|A800|H100|H800|H20|H200|B200|B300|GB200|L40S?)\b|\bGPU architecture)"
)
# Data types and features that GPUs have from one generation on (the Programming Guide's feature tables, PG_CC).
_FEATURE = (
    r"(?:bf16|bfloat16|fp8|float8\w*|e4m3\w*|e5m2\w*|fp4|nvfp4|mxfp4|int8|int4|tf32|fp16|float16|half|"
    r"tensor ?cores?|wmma|mma|cp\.async|tma|flash[ _-]?attention\w*|paged attention)"
)
_DEVICE = r"(?:GPUs?|devices?|cards?|hardware|graphics cards?|accelerators?)"
_REFUSED = r"(?:not supported|unsupported|not available|not compatible|incompatible)"
_REFUSE = rf"(?:{_REFUSED}|only supported|only available)"
# A report of a failure, in a program's words or a user's.
FAILURE = re.compile(
    r"\b(?:error|errors|\w+Error|\w+Exception|\w*Warning|OutOfResources|fail(?:s|ed|ure|ing)?|crash(?:es|ed|ing)?|exception|abort(?:s|ed)?|assert(?:ion)?|"
    r"dies|died|"
    r"do(?:es)?(?: not|n'?t) (?:work|load|run|start|launch)|not working|only works? (?:if|when)|"
    r"won'?t (?:run|work|start|load)|"
    r"cannot (?:run|load|launch)|"
    r"can'?t (?:run|load|launch|use)|unable to (?:run|load|launch|use)|cannot use|broken|breaks?|broke|garbage|hangs?|"
    r"unavailable)\b"
    r"|\[bug\]"
    # the error and fatal tags of TensorRT's logger, after trtexec's timestamp or not ("[E] [TRT] ...",
    # "[01/29/2024-11:23:45] [E] [TRT] ..."), in capitals only
    r"|(?m-i:^\W{0,3}(?:\[[\d/:.\- ]{6,30}\]\s*)?\[[EF]\]\s)",
    re.I,
)
# A failure of CUDA code, as a mixed host's report says it: GPUs of two capabilities and this are the mixed-gpu form.
CUDA_FAILURE = re.compile(
    r"\b(?:CUDA|cuda\w*|GPU|kernels?|device)\b[^\n]{0,60}?\b(?:errors?|fail\w*|crash\w*|invalid|abort\w*)\b|"
    r"\b(?:errors?|fail\w*|crash\w*|abort\w*)\b[^\n]{0,60}?\b(?:CUDA|cuda|GPU|kernels?|device)\b|"
    r"\bfails? to (?:launch|run|start|load)\b|"
    # a CUDA error by its name alone ("CUDA_ERROR_INVALID_PTX", "cudaErrorInvalidDeviceFunction")
    r"(?-i:\bCUDA_ERROR_[A-Z0-9_]+\b|\bcudaError[A-Z]\w*)",
    re.I,
)
# The words of failures that are not compatibility problems (their own CUDA errors are read from the inventory):
# while any is in the text, no form is read.
UNRELATED_WORDS = re.compile(
    r"\bout of memory\b|\bOOM\b|\billegal (?:memory )?(?:access|address|instruction)\b|\bmisaligned address\b|"
    r"\bdevice-side assert|\bNCCL (?:error|timeout|WARN)|\bwatchdog\b|\bECC\b|\bXid\b|\bsegmentation fault\b|"
    r"\bunspecified launch failure\b|\blaunch timed out\b|/dev/shm|\bDataLoader\b|\balloc(?:ate|ating|ation)\b",
    re.I,
)

# Emitters whose messages each family of forms generalises (the same files :mod:`.catalogue` cites).
_GUARDS = (
    "Dao-AILab/flash-attention:csrc/flash_attn/flash_api.cpp",
    "facebookresearch/xformers:xformers/ops/fmha/common.py",
    "flashinfer-ai/flashinfer:flashinfer/jit/core.py",
    "vllm-project/vllm:vllm/platforms/cuda.py",
    "NVIDIA/TransformerEngine:transformer_engine/pytorch/quantization.py",
    "deepspeedai/DeepSpeed:deepspeed/inference/v2/kernels/ragged_ops/blocked_flash/blocked_flash.py",
    "thu-ml/SageAttention:sageattention/core.py",
    PG_CC,
)
_TOOLCHAINS = (
    "llvm/llvm-project:llvm/lib/MC/MCSubtargetInfo.cpp",
    "llvm/llvm-project:clang/include/clang/Basic/DiagnosticDriverKinds.td",
    "cupy/cupy:cupy/cuda/compiler.py",
    "triton-lang/triton:third_party/nvidia/backend/compiler.py",
    NVCC_ARCH,
)
_BUILDS = (
    "pytorch/pytorch:torch/cuda/__init__.py",
    "ggml-org/llama.cpp:ggml/src/ggml-cuda/common.cuh",
    "ollama/ollama:discover/llama_server.go",
    "Rust-GPU/Rust-CUDA:crates/cust/src/error.rs",
    PG_COMPAT,
)
_CPU_BUILDS = (
    "pytorch/pytorch:torch/cuda/__init__.py",
    "OpenNMT/CTranslate2:src/devices.cc",
    "facebookresearch/detectron2:detectron2/layers/csrc/deformable/deform_conv.h",
    "PaddlePaddle/Paddle:python/paddle/device/__init__.py",
    "tensorflow/tensorflow:tensorflow/python/platform/test.py",
    "jax-ml/jax:jax/_src/xla_bridge.py",
    "https://pytorch.org/get-started/locally/",
)
_DRIVERS = (
    "pytorch/pytorch:torch/cuda/__init__.py",
    "tensorflow/tensorflow:tensorflow/core/common_runtime/gpu/gpu_device.cc",
    COMPAT_DOC,
)
_SMEM = (
    "triton-lang/triton:python/triton/runtime/errors.py",
    "vllm-project/vllm:csrc/moe/moe_align_sum_kernels.cu",
    PG_SMEM,
    "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__EXECUTION.html",
)
_JIT = (
    "microsoft/onnxruntime:onnxruntime/core/providers/cuda/cuda_execution_provider.cc",
    "tensorflow/tensorflow:tensorflow/core/common_runtime/gpu/gpu_device.cc",
    PG_JIT,
    _ENV_VARS,
)
_MIXED = (
    "https://docs.nvidia.com/deeplearning/tensorrt/developer-guide/index.html#advanced",
    "triton-lang/triton:python/triton/runtime/cache.py",
    BEST_PRACTICES,
)
_PTX_NEW = (
    "numba/numba:numba/cuda/cudadrv/driver.py",
    COMPAT_DOC,
    "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html",
)

# Frameworks' own checks that the operands of one operation live on one device (each says so in its own words).
_SAME_DEVICE = (
    # "cross-GPU operations are not allowed by default ... all operands on the same device" (PyTorch, CUDA semantics)
    TORCH_CUDA_SEMANTICS,
    "isl-org/Open3D:cpp/open3d/core/kernel/BinaryEW.cpp",
    "dmlc/dgl:include/dgl/aten/macro.h",
    "apache/tvm:src/runtime/tensor.cc",
    "huggingface/diffusers:src/diffusers/models/attention_dispatch.py",
    "nerfstudio-project/gsplat:gsplat/cuda/csrc/PrimingChainEncoding.cu",
    "cupy/cupy:cupy/random/_bit_generator.pyx",
    "pyg-team/pytorch_geometric:torch_geometric/nn/pool/__init__.py",
)

# What the driver does when a build has no SASS for the GPU, and what the user sees of it (PG_JIT: JIT compilation
# "increases application load time", its output is kept in the compute cache).
_JIT_WORDS = (
    r"(?:\b(?:JIT|just[- ]in[- ]time)[- ]?(?:compil\w*|ing)\b|\bre-?JIT(?:s|ted|ting|-compil\w*)?\b|\bComputeCache\b|"
    r"\bCUDA_CACHE_(?:PATH|MAXSIZE|DISABLE)\b|"
    r"\b(?:generat\w*|compil\w*|build\w*)\s+(?:the\s+)?"
    r"(?:cached\s+)?binar(?:y|ies)(?:\s+code)?\s+for\b|\bprebuilt binaries\b|\bcompil(?:es?|ing) (?:the )?PTX\b)"
)
SLOW_WORDS = (
    r"(?:\b(?:very |extremely |really )?slow\b|\b\d+(?:-\d+|\+)? ?(?:minut\w*|mins?)\b|\blong (?:time|delay)\b|"
    r"\bdelays?\b|分钟|分間|\bstall(?:s|ed|ing)?\b|\bfreez(?:es|ing)\b|"
    r"\bfirst[- ](?:run|start|call|time|launch|iteration|inference|epoch)\b|\bstart[- ]?up\b|\bwar[mn][- ]?up\b|"
    r"\btak(?:es?|ing)\s+(?:a\s+(?:long\s+|lot\s+of\s+)?|some\s+|much\s+)?time\b)"
)
_TOOL = r"(?:nvcc|ptxas|nvrtc|nvlink|fatbinary|LLVM|clang|NVPTX|cuda[ -]?toolkit|CUDA \d+(?:\.\d+)?|toolkit|compiler)"

# The host's shared memory, not the GPU's: /dev/shm of DataLoader workers ("This might be caused by insufficient shared
# memory (shm)", torch/utils/data/_utils/signal_handling.py) and of containers (--shm-size, --ipc=host).
_HOST_SHM = r"DataLoader|/dev/shm|\bshm\b|shm[_-]size|\bbus error|--ipc|multiprocessing|num_workers|\bdocker\b"
# What a program numbers GPUs by, and the words for a numbering.
_INDEXED = r"device|GPU|card|CUDA|cuda device"
_NUMBERING = r"(?:ids?|order(?:ing)?|index(?:es)?|indices|numbering|numbers|ordinals?|enumeration)"
# One GPU by its index: "GPU 1", "gpu1", "GPU #0", "cuda:1", "device 0".
_ONE_GPU = r"(?:GPU|gpu|device|Device|card|cuda:?|ID)\s?#?\d\b"
# A GPU by its product name: "RTX 2080 Ti", "GTX 1080", "Tesla V100", "Quadro P4000", "TITAN X", "A100", the RTX
# A-series workstation cards ("RTX A6000", "A4000") and the T-series small ones ("T400", "T1000").
_GPU_NAME = (
    r"(?:(?:GeForce\s+)?(?:RTX|GTX|GT)\s?\d{3,4}|Tesla\s+\w+|Quadro\s+\w+|TITAN\s?\w*|Jetson\s+\w+|"
    r"\b[AHBLVPK]\d{1,3}[A-Z]?\b|T4\b|\b(?:RTX\s)?A[2-6]000\b|\bT[3-9]00\b|\bT1000\b|NVIDIA\s+[A-Z]\d{1,4}\b|(?<![\w.])\d{4}\s?(?:Ti|Super|SUPER)?\b(?=[^\n]{0,3}(?:\s|$|,|\)|\.)))"
)

# An artefact made on one GPU, by name, and run on another: "engine created on T4 does not load on A10G", "built on a
# machine with an A100 and fails on our T4 servers", "cache from the 3090 box is reused on the 4090".
BUILT_ON_A_GPU_RUN_ON_ANOTHER = (
    rf"\b(?:built|compiled|created|generated|serialized|exported|made|tuned|trained|converted)\s+(?:it\s+|the\s+\w+\s+)?"
    rf"on\s+(?:a\s+|an\s+|my\s+|the\s+|our\s+)?(?:[\w-]+\s+){{0,3}}?\(?{_GPU_NAME}[^\n]{{0,80}}?"
    rf"\b(?:on|to|onto|in)\s+(?:a\s+|an\s+|the\s+|our\s+|my\s+)?(?:[\w-]+\s+){{0,2}}?{_GPU_NAME}"
    rf"|\b(?:engine|plan|cache|image|container|build|binary|wheel|extension|kernels?|artifact|artefact)\s+"
    rf"(?:from|of)\s+(?:the\s+|my\s+|a\s+|an\s+)?{_GPU_NAME}[^\n]{{0,60}}?\b(?:on|to)\s+(?:the\s+|a\s+|an\s+|our\s+)?"
    rf"{_GPU_NAME}"
)

# A host the report itself calls mixed: "multiple GPUs with different architectures", "multiple architectures of
# GPUs", "a bug ... with different GPUs available", "GPUs of different compute capabilities", "heterogeneous GPUs", "a
# mixed GPU setup" (error_categories.md, mixed-gpu: "a host with GPUs of different capability").
MIXED_HOST_STATED = (
    r"\b(?:multiple|several|two|many|mixed|various)\s+(?:\w+\s+)?(?:GPUs|cards|devices)\s+(?:with|of)\s+(?:different|"
    r"mixed|various)\s+(?:architectures?|archs?|compute\s+capabilit\w+|capabilit\w+|generations?|sm\s?versions?)\b"
    r"|\b(?:multiple|several|different|mixed)\s+(?:architectures|archs|generations|compute\s+capabilities)\s+of\s+"
    r"(?:GPUs|cards)\b"
    r"|\bGPUs\s+(?:with|of)\s+different\s+(?:architectures?|archs?|compute\s+capabilit\w+|generations?)\b"
    r"|\bdifferent\s+GPUs\s+(?:available|installed|present|attached|in\s+(?:the|one|a|my|our)\s+"
    r"(?:system|machine|host|server|box|node|computer|pc))\b"
    r"|\bmixed[- ](?:GPU|card)s?\s+(?:setup|system|host|machine|server|node|configuration|environment)\b"
    r"|\bheterogene\w+\s+(?:GPUs|GPU\s+(?:types|models|kinds)|cards|nodes?|cluster|setup|system|machine|host)\b"
)

# Code that runs and misbehaves, and PTX of a named lower arch: a virtual arch ("compute_61"), "PTX for sm_52".
MISBEHAVES = (
    r"\b(?:garbage|gibberish|nonsense|wrong (?:results?|outputs?|answers?|values)|incorrect (?:results?|outputs?|"
    r"values)|all zeros|(?:results?|outputs?|scores?|sums?|values) (?:differ|are off|are wrong|mismatch))\b"
)
_LOWER_PTX = (
    r"(?:\bcompute_\d{2,3}\b|\bPTX\s+(?:code\s+)?(?:for|of|from)\s+(?:an?\s+)?(?:lower|older|sm_?\d{2,3}\b|"
    r"compute_\d{2,3}\b|\d\.\d\b))"
)

FORMS: tuple[Form, ...] = (
    # -- capability-guard: a library's own check of the GPU (PG_CC's features by capability) --------------------
    _f(
        "requires a capability",
        "capability-guard",
        rf"\b(?:requires?|required|needs?|needed|minimum|at least|expects?)\b[^\n]{{0,50}}?{_HW}[^\n]{{0,30}}?"
        rf"(?:>=|≥|\bor (?:higher|newer|later|above|greater)\b|\band (?:higher|newer|later|above)\b|\+|\bor\b|\d)",
        2.0,
        *_GUARDS,
        alone=False,
        any_of=("requir", "need", "minimum", "at least", "expect"),
    ),
    _f(
        # code stating the a/f target (or an instruction only a/f targets have) it needs: "This kernel requires SM90a",
        # "Sparse-MLA SM120 requires sm120a",
        # "tcgen05 requires a compatible datacenter Blackwell GPU", "cannot execute CUDA artifact emitted for sm_90a
        # on sm_120" (cuda-oxide) -- the statement is the failure (PG, feature availability: a/f code runs only there)
        "an a/f target the code requires",
        "arch-specific-mismatch",
        # ("only supported on SM90a" alone is a statement, a document's as well as a program's: not taken)
        r"\b(?:requires?|needs?)\s+(?:an?\s+|the\s+)?(?:sm|SM|compute)_?\s?\d{2,3}[af]\b"
        # code built for an a target and a GPU of another compute capability in one sentence ("... emitted for sm_90a
        # on sm_120"); "built for sm_90a" alone says nothing of the GPU
        r"|\b(?:emitted|built|compiled)\s+for\s+sm_?(\d{2,3})[af]\s+(?:on|to)\s+sm_?(?!\1\b)\d{2,3}\b"
        r"|\b(?:wgmma|tcgen05|setmaxnreg|UMMA|TMEM)\b[^\n]{0,20}?\b(?:requires?|needs?)\b",
        2.0,
        AF_DOC,
        "flashinfer-ai/flashinfer:csrc/nv_internal/tensorrt_llm/kernels/cutlass_kernels/fp8_blockscale_gemm/"
        "fp8_blockscale_gemm_kernel.cuh",
        "NVlabs/cuda-oxide:crates/cuda-host/src/ltoir.rs",
        any_of=("sm", "compute_", "wgmma", "tcgen05", "setmaxnreg", "umma", "tmem"),
        alone=False,
    ),
    _f(
        # a check's own statement of what it needs or refuses, which is the failure itself: "Compute capability must be
        # >= 3.5" (AMReX), "requires SM>=100 (Blackwell), but got SM90" (FlashInfer), "model_format=fp8 requires
        # sm>=9.0" (LMDeploy), "Device major should be in [9, 10], but got 8" (FlashInfer's Triton helpers),
        # "architecture 600 is not supported" (MAGMA).  What only states a floor ("... only supported on Ampere",
        # "5.0+ is required") may be a document's words: the forms above take it beside a failure
        "a capability check's own statement",
        "capability-guard",
        rf"{_HW}\s+(?:must|should|needs?\s+to)\s+be\s+(?:>=|≥|>|at least|greater|higher|newer)"
        # ("requires CUDA_ARCH >= 8.0": a kernel stub compiled below the arch it needs, ktransformers' Marlin)
        r"|\brequires?\s+(?:an?\s+)?(?:SM|sm|CC|cc|compute capability|capability|arch|(?:__)?CUDA_ARCH(?:__)?)\s*"
        r"(?:>=|≥|>)\s*\d"
        r"|\b(?:device\s+major|device\s+minor|compute capability|capability|sm)(?:\s+version)?\s+(?:should|must)"
        r"\s+be\s+(?:in\b|one of\b|>=|≥|>|at least\b)[^\n]{0,30}?\bbut\s+(?:got|found|is|was)\b"
        r"|\b(?:arch(?:itecture)?|SM|sm)\s*(?:[=:]\s*)?\d{2,4}\s+(?:is\s+)?(?:not supported|unsupported)\b",
        2.0,
        *_GUARDS,
        "AMReX-Codes/amrex:Src/Base/AMReX_GpuDevice.cpp",
        "flashinfer-ai/flashinfer:flashinfer/triton/utils.py",
        "InternLM/lmdeploy:lmdeploy/pytorch/check_env/cuda.py",
        "icl-utk-edu/magma:magmablas/hgemm_batched_core.cu",
        # each alternative's own words (a comparison sign, "must be", a refusal): the form is skipped without them
        any_of=("must be", "should be", "need to be", "needs to be", ">", "≥", "not supported", "unsupported"),
    ),
    _f(
        # a refusal and, on its line, the floor it applies: "GPU not supported: minimum compute capability is 6.0
        # (found 5.2)", "device is too old, requires compute capability 7.0" -- the refusal is the failure itself
        "a refusal beside the capability it requires",
        "capability-guard",
        rf"\b{_DEVICE}\s+(?:is\s+|was\s+)?(?:not supported|unsupported|not compatible|incompatible|rejected|refused|"
        rf"too old)\b[^\n]{{0,40}}?\b(?:minimum|at least|requires?|required|needs?)\b[^\n]{{0,30}}?"
        rf"(?:{_HW}|\b\d\.\d\b)",
        2.0,
        *_GUARDS,
        any_of=("support", "compatib", "reject", "refus", "too old"),
    ),
    _f(
        # "does not fully support triton[2.2.0~2.3.1] on device with capability<8", "devices with compute capability
        # >= 8.0 only"
        "a capability compared in a message",
        "capability-guard",
        r"\b(?:devices?|GPUs?|cards?)\s+with\s+(?:(?:a|CUDA)\s+)?(?:compute\s+)?capabilit(?:y|ies)\s*(?:<|>|<=|>=|≥|≤)\s*\d",
        2.0,
        *_GUARDS,
        any_of=("capabilit",),
    ),
    _f(
        "a library's check in a traceback",
        "capability-guard",
        # "self._check_scheme_supported(scheme.get_min_capability())", "_check_if_gpu_supports_dtype(dtype)"
        r"\b_?(?:check|verify|ensure|assert|validate)_\w*?(?:capabilit\w*|supported|supports?_\w+|compute_cap\w*|"
        r"gpu_arch\w*|sm_?version\w*|device_support\w*)\s*\(",
        2.0,
        *_GUARDS,
        alone=False,
        any_of=("check", "verify", "ensure", "assert", "validate"),
    ),
    _f(
        "this GPU is not supported",
        "capability-guard",
        # "your GPU (GTX 1060) is not supported, Volta or newer required"
        r"\b(?:your|this|the|my)\s+(?:GPU|card|device|graphics card)\b[^\n]{0,30}?\b(?:is|are)\s+(?:not|no longer)\s+"
        r"supported\b"
        rf"|\b{_GEN}\s+(?:or|and)\s+(?:newer|later|above|higher)\s+(?:(?:GPUs?|cards?|is|are)\s+)*required\b",
        2.0,
        *_GUARDS,
        any_of=("supported", "required"),
    ),
    _f(
        "a capability below what is required",
        "capability-guard",
        # miners' and tools' own checks: "compute cap. 2.1 (at least 3.0 required)", "Only CUDA devices with SM 5.0 and
        # higher are supported"
        rf"{_HW}[^\n]{{0,20}}?\(?\s*(?:at least|minimum|min\.?)\s+\d+(?:\.\d+)?\s+(?:is\s+)?required\b"
        # "Only SM30 and above are supported at this time, got 120.0"
        rf"|\bonly\s+{_HW}(?:\s*\d+(?:\.\d+)?)?\s+(?:and|or)\s+(?:above|higher|newer|later|up)\s+(?:are|is)\s+supported\b"
        rf"|\bonly\s+(?:\w+\s+){{0,2}}?(?:GPUs?|devices?|cards?)\s+with\s+(?:a\s+)?{_HW}(?:\s*\d+(?:\.\d+)?)?"
        r"[^\n]{0,30}?\b(?:are|is)\s+supported\b"
        # Blender's "CUDA device supported only with compute capability 3.0 or up, found 2.1"
        rf"|\bsupported\s+only\s+(?:on|for|with)\s+(?:a\s+)?{_HW}\s*\d+(?:\.\d+)?\s+(?:or\s+(?:up|higher|above|newer|later)|\+)",
        2.0,
        *_GUARDS,
        any_of=("required", "supported"),
    ),
    _f(
        "only supported on hardware",
        "capability-guard",
        rf"\b(?:only|exclusively)\s+(?:be\s+)?(?:supports?|supported|available|works?|runs?|compatible|implemented|"
        rf"enabled|usable|allowed)\b(?:[^\n]{{0,40}}?\b(?:on|for|with|by|in)\b)?[^\n]{{0,40}}?{_HW}",
        2.0,
        *_GUARDS,
        alone=False,
        any_of=("only",),
    ),
    _f(
        "not supported on this GPU",
        "capability-guard",
        rf"\b{_REFUSED}\s+(?:on|for|by|with|in)\s+(?:this|your|the current|current|the|my|these|older|old|some)?\s*"
        rf"(?:\w+\s+)?(?:{_DEVICE}|architectures?|arch|platform|compute capabilit(?:y|ies)|SMs?\b|sm_?\d+)",
        2.0,
        *_GUARDS,
        any_of=("supported", "not available", "compatible"),
    ),
    _f(
        "hardware is not supported",
        "capability-guard",
        rf"{_HW}[^\n]{{0,40}}?\b(?:(?:is|are|was)\s+)?(?:not|no longer|not yet)\s+supported\b"
        rf"|\b(?:{_DEVICE})\b,?\s+which\s+(?:is|are)\s+(?:not|no longer|not yet)\s+supported\b"
        rf"|\bno supported (?:{_DEVICE}|GPU\(s\))\s+(?:(?:are|were)\s+)?(?:detected|found|present|available)\b"
        # "GPU sm_87 not in supported list [80, 86, 89, 90]"
        rf"|{_HW}[^\n]{{0,20}}?\bnot in (?:the )?(?:list of )?supported\b"
        # miners' "GeForce GTX 650 Ti BOOST (CC 3) is not supported"
        r"|\(CC\s*\d+(?:\.\d)?\)\s+is\s+(?:not|no longer)\s+supported\b"
        rf"|\bunsupported\s+(?:cuda\s+|gpu\s+|nvidia\s+)?(?:arch(?:itecture)?s?|GPUs?|devices?|"
        rf"compute capabilit(?:y|ies)|SMs?|"
        rf"hardware)\b",
        2.0,
        *_GUARDS,
        any_of=("supported",),
    ),
    _f(
        "the GPU is too old",
        "capability-guard",
        rf"\b(?:{_DEVICE}|architecture|compute capability)\b[^\n]{{0,40}}?\b(?:is|are|seems?)?\s*too (?:old|low)\b"
        rf"|\btoo (?:old|low)\b[^\n]{{0,20}}?\b(?:{_DEVICE}|compute capability)\b"
        # hashcat's "This hardware has outdated CUDA compute capability (3.5)", DCGM's "Incompatible CUDA compute
        # capability major version: 12"
        r"|\b(?:outdated|incompatible|unsupported|insufficient)\s+(?:CUDA\s+)?compute\s+capability\b"
        # "not available for computation because it's compute capability is not high enough"
        r"|\bcapability\s+is\s+not\s+high\s+enough\b"
        rf"|\b(?:{_DEVICE}|arch\w*|(?:compute )?capability)\b[^\n]{{0,20}}?\b(?:is|are)\s+"
        r"(?:lower|less|older|below|smaller)\s+"
        r"than\s+(?:it is\s+|what is\s+|the\s+)?(?:required|minimum|supported|needed)"
        r"|\bcapability\s+\d+(?:\.\d+)?,?\s+(?:which\s+)?(?:is\s+)?(?:below|under|lower than|less than)\s+(?:the\s+)?"
        r"(?:minimum|required|supported)",
        2.0,
        *_GUARDS,
        any_of=(
            "too old", "too low", " than ", "below", "under", "outdated", "incompatible", "unsupported", "insufficient",
            "high enough",
        ),
    ),
    _f(
        "a feature the GPU lacks",
        "capability-guard",
        rf"\b{_FEATURE}\b[^\n]{{0,50}}?\b(?:{_REFUSE}|requires?|needs?|is only)\b[^\n]{{0,50}}?"
        rf"(?:\b{_DEVICE}\b|{_HW}|\barch)"
        rf"|\b(?:{_DEVICE})(?:\s*\([^)\n]{{1,40}}\))?\s+(?:does(?: not|n'?t)|cannot|can'?t)\s+(?:support|handle|run)\s+"
        rf"(?:\w+\s+)?{_FEATURE}\b"
        rf"|\b{_FEATURE}\b[^\n]{{0,30}}?\b(?:is|are)\s+not\s+supported\b"
        # "this GPU has no bfloat16 support" (Unsloth)
        rf"|\b(?:{_DEVICE})\s+has\s+no\s+{_FEATURE}\s+support\b",
        2.0,
        *_GUARDS,
        alone=False,
        any_of=("support", "requir", "need", "only", "not available", "compatible", "can"),
        # a hint that names the GPU's features as one possible reason among others (stable-diffusion-webui's NaN check:
        # "This could be either because there's not enough precision ... or because your video card does not support
        # half type"): no check of the GPU refused it
        veto=r"\bcould be (?:either )?because\b|\bNansException\b",
    ),
    _f(
        "the GPU cannot run it",
        "capability-guard",
        rf"\b(?:your|this|the current|my)\s+(?:{_DEVICE})(?:\s*\([^)\n]{{1,40}}\))?\s+"
        r"(?:does(?: not|n'?t)|is not|isn'?t|cannot|can'?t)\s+"
        r"(?:support(?:ed)?|compatible|run)\b",
        1.5,
        *_GUARDS,
        any_of=("not", "n't", "cannot"),
    ),
    # -- jit-toolchain-too-old: a compiler that does not know the GPU's target (NVCC_ARCH, LLVM's CPU table) --------
    _f(
        "a toolchain does not know the target",
        "jit-toolchain-too-old",
        rf"\b{_TOOL}\b[^\n]{{0,60}}?\b(?:does(?: not|n'?t)|cannot|can'?t|not|no)\s+(?:yet\s+)?"
        rf"(?:support|know|recogni[sz]e|target|compile for|generate code for)\w*\b[^\n]{{0,40}}?"
        rf"(?:\bsm_?\d{{2,3}}|\bcompute_\d{{2,3}}|\barch\w*|{_HW}|"
        rf"\b(?:this|the|your) (?:GPU|device))",
        2.5,
        *_TOOLCHAINS,
    ),
    _f(
        "an unknown target",
        "jit-toolchain-too-old",
        r"\b(?:unknown|unsupported|invalid|unrecogni[sz]ed)\s+(?:nvidia\s+|cuda\s+|gpu\s+|target\s+)*"
        # the target right after the words (a GPU's product name there, "Unsupported GPU: Tesla P100", is a guard's)
        r"(?:arch(?:itecture)?|gpu|target|processor|cpu)\b[\s'\"`(:=]{0,4}(?:sm_?\d{2,3}|compute_\d{2,3}|\d{2,3}[af]?\b)"
        r"|\bis not a recogni[sz]ed processor\b"
        # NVHPC's compilers name targets ccXY: "nvc++-Error-Switch -ta with unknown keyword cc89"
        r"|\bunknown (?:keyword|value|sub-?option)\s+['\"`]?cc\d{2,3}\b",
        2.5,
        *_TOOLCHAINS,
        any_of=("unknown", "unsupported", "invalid", "recogni"),
    ),
    # -- ptx-jit-lower-arch: the driver JIT-compiling PTX made for a lower arch (PG_JIT: it costs load time) ----------
    _f(
        "JIT compilation at start-up",
        "ptx-jit-lower-arch",
        rf"{_JIT_WORDS}[\s\S]{{0,300}}?{SLOW_WORDS}|{SLOW_WORDS}[\s\S]{{0,300}}?{_JIT_WORDS}",
        2.0,
        *_JIT,
        any_of=("jit", "just", "binar", "ptx", "computecache", "cuda_cache"),
    ),
    _f(
        # PTX of a lower arch runs on a newer GPU through the JIT, but code that chose its path by the arch it was
        # compiled for (__CUDA_ARCH__) takes the older arch's path there: a fallback that returns nothing, a kernel
        # that misbehaves ("garbage" from ggml's __dp4a kernels built as compute_52 PTX on 6.1+ GPUs); PG_JIT, and
        # the Programming Guide's __CUDA_ARCH__ ("the architecture the code is compiled for", not the GPU it runs on)
        "lower-arch PTX that misbehaves",
        "ptx-jit-lower-arch",
        rf"{MISBEHAVES}[\s\S]{{0,300}}?{_LOWER_PTX}|{_LOWER_PTX}[\s\S]{{0,300}}?{MISBEHAVES}",
        2.0,
        *_JIT,
        "ggml-org/llama.cpp:ggml/src/ggml-cuda/common.cuh",
        any_of=("compute_", "ptx"),
    ),
    _f(
        # CUDA_FORCE_PTX_JIT=1 makes the driver ignore cubins and JIT-compile the PTX (Programming Guide, environment
        # variables): a report that reaches for it, or whose failure it reproduces, is about PTX JIT
        "forcing the PTX JIT",
        "ptx-jit-lower-arch",
        r"\bCUDA_(?:FORCE|DISABLE)_PTX_JIT\b",
        2.0,
        *_JIT,
        any_of=("_ptx_jit",),
    ),
    _f(
        "the compute cache",
        "ptx-jit-lower-arch",
        r"\bCUDA_CACHE_(?:MAXSIZE|PATH|DISABLE)\b|\b(?:CUDA |JIT |the )?compute ?cache\b|\.nv/ComputeCache\b",
        1.5,
        *_JIT,
        alone=False,
        any_of=("cuda_cache", "compute cache", "computecache"),
    ),
    # -- shared-memory-limit: a block asking for more shared memory than the GPU has (PG_SMEM) ---------------------
    _f(
        "shared memory over a limit",
        "shared-memory-limit",
        r"\b(?:shared[ _-]?mem(?:ory)?|smem|sharedMem\w*|MaxDynamicSharedMemorySize)\b[^\n]{0,80}?"
        r"\b(?:exceed\w*|too (?:much|large|big|many)|limits?|out of resources?|required|requested|request\w*|"
        r"max(?:imum)?|insufficient|not enough|more than|larger than|greater than|over|available|"
        r"but (?:the )?(?:device|GPU|hardware) (?:supports|has|allows|only))\b"
        r"|\b(?:exceed\w*|out of resources?|too much|not enough|insufficient|more|large amount of|a lot of)\b"
        r"[^\n]{0,40}?\bshared[ _-]?mem(?:ory)?\b"
        r"|\b(?:requires?|needs?|requested|uses?|asks?(?:\s+\w+)?\s+for|asking(?:\s+\w+)?\s+for|wants?)\s+[\d,]+\s*"
        r"(?:B|bytes|KB|KiB|K)?\s+(?:of\s+)?(?:dynamic\s+)?shared[ _-]?mem",
        2.0,
        *_SMEM,
        alone=False,
        any_of=("shared", "smem"),
        veto=_HOST_SHM,
    ),
    _f(
        "out of shared memory",
        "shared-memory-limit",
        # a report of its own: "Out of shared memory on A6000/4090 when head_dim=128"
        r"\b(?:out of|ran out of|running out of|runs? out of|not enough|insufficient|too little)\s+"
        r"(?:the\s+|GPU\s+|device\s+|on-chip\s+)?shared[ _-]?mem(?:ory)?\b",
        2.0,
        *_SMEM,
        any_of=("shared",),
        veto=_HOST_SHM,
    ),
    _f(
        # a toolkit below the one an arch (or an a/f suffix) needs, as build scripts and JITs check it: "sm100
        # compilation for Flash MLA requires NVCC 12.9 or higher", "packed KDA T=1 on compute capability 10.3
        # requires CUDA 12.9 or newer" (FlashInfer), 'cuda_arch_suffix="f" requires CUDA toolkit 12.9 or higher'
        # (Warp), CMake's arch selector not knowing a generation ("Blackwell is not a valid GPU generation name",
        # Ginkgo)
        "a target that needs a newer toolkit",
        "jit-toolchain-too-old",
        rf"(?:\bsm_?\d{{2,3}}[af]?|\bsm\d{{2,3}}|compute capability \d+\.\d+|cuda_arch_suffix\W{{0,3}}[af]\W{{0,3}})"
        r"[^\n]{0,60}?\brequires?\s+(?:NVCC|nvcc|CUDA(?:\s+toolkit)?|CTK)\s*\d+\.\d+\s*(?:\+|or\s+(?:higher|newer|later|above))"
        rf"|\b{_GEN}\s+is\s+not\s+a\s+valid\s+(?:GPU|CUDA)\s+(?:generation|architecture)",
        2.0,
        *_TOOLCHAINS,
        "deepseek-ai/FlashMLA:setup.py",
        "NVIDIA/warp:warp/_src/context.py",
        "ginkgo-project/ginkgo:cmake/Modules/CudaArchitectureSelector.cmake",
        any_of=("nvcc", "cuda", "ctk", "not a valid"),
        alone=False,
    ),
    # -- driver-too-old: the runtime needs a newer driver (COMPAT_DOC) ------------------------------------------
    _f(
        "the driver is too old",
        "driver-too-old",
        r"\bdrivers?\b[^\n]{0,40}?\b(?:too old|outdated|insufficient|not (?:new|recent) enough|older than|out of date|"
        r"(?:needs?|has) to be (?:updated|upgraded))\b"
        r"|\b(?:requires?|required|needs?|minimum|at least)\b[^\n]{0,20}?\b(?:NVIDIA |Nvidia |GPU |CUDA )?driver"
        r"(?: version)?\s*(?:>=|≥|of|:|version|is)?\s*\d{3}"
        r"|\bdriver(?: version)?\s*\d{3}(?:\.\d+)*\s*(?:or (?:newer|later|higher|above)|\+)"
        r"|\bdriver\b[^\n]{0,30}?\bis not compatible with\b"
        # "my driver is 470, the wheel needs CUDA 12"
        r"|\bdriver\b[^\n]{0,20}?\b\d{3}(?:\.\d+)*\b[^\n]{0,60}?\b(?:needs?|requires?)\s+CUDA\s*\d+"
        # a feature the driver is too old for: "cudaMallocAsync not supported with this CUDA driver/runtime version"
        # (RMM), "cuLinkAddData fails. This is usually caused by stale driver version" (XLA)
        r"|\bnot supported (?:with|by) (?:this|the|your|the installed) (?:CUDA )?driver(?:/runtime)? version\b"
        r"|\bstale (?:NVIDIA |CUDA )?driver\b",
        2.0,
        *_DRIVERS,
        "rapidsai/rmm:cpp/include/rmm/mr/device/cuda_async_memory_resource.hpp",
        "openxla/xla:xla/stream_executor/cuda/cuda_asm_compiler.cc",
        alone=False,
        all_of=("driver",),
        # no driver at all (libcuda cannot be opened, a stub loaded, version 0.0): not one that is too old
        veto=NO_DRIVER,
    ),
    _f(
        # A driver API entry point libcuda does not export (cuCtxCreate_v4, cuMemAllocAsync): bindings that link the
        # versioned entry points of a newer CUDA (cudarc, cust, the runtime's lazy loading) meet a driver older than
        # that CUDA (CUDA Driver API, versioned entry points; cuGetProcAddress); or one looked up by name: "Could not
        # find CUDA driver entry point for cuTensorMapEncodeTiled" (TransformerEngine), "Failed to retrieve
        # cuTensorMapEncodeTiled from libcuda.so.1" (Triton)
        "a driver entry point libcuda lacks",
        "driver-too-old",
        r"\blibcuda\.so(?:\.\d+)*:?\s*undefined symbol:?\s*cu[A-Z]\w+"
        r"|\bundefined symbol:?\s*cu[A-Z]\w*_v\d\b[^\n]{0,40}?\blibcuda\b"
        r"|\bdriver entry point (?:for\s+)?['\"`]?cu[A-Z]\w+"
        r"|\b(?:could not|couldn't|cannot|failed to|unable to)\s+(?:find|retrieve|get|load|resolve|obtain)\s+['\"`]?"
        r"cu[A-Z]\w+['\"`]?\s+(?:from|in)\s+libcuda\b",
        2.25,
        *_DRIVERS,
        "NVIDIA/TransformerEngine:transformer_engine/common/util/cuda_driver.cpp",
        "triton-lang/triton:third_party/nvidia/backend/driver.c",
        "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__DRIVER__ENTRY__POINT.html",
        any_of=("undefined symbol", "entry point", "libcuda"),
        # no driver at all (libcuda cannot be opened): not one that is too old
        veto=NO_DRIVER,
    ),
    _f(
        # a program comparing the driver's CUDA version with the one it was built for, in its own words: "Driver does
        # not support CUDA 12.4 API! Update your nVidia driver!" (xmrig-cuda), "Warp requires CUDA driver 12.8 or
        # higher, but the current driver only supports CUDA 12.2", "Insufficient CUDA driver 9010" (ethminer), "Not
        # supported driver version '11.4' (>= 12.8 required)" (ILGPU), "Driver supports cuda toolkit version 12.2, but
        # the driver needs to support at least 12,3" (NeMo) -- the statement is the failure
        "the driver's CUDA version below the program's",
        "driver-too-old",
        r"\bdriver\b[^\n]{0,30}?\b(?:does\s*n[o']?t|doesn't|not)\s+support\s+CUDA\s*\d+(?:\.\d+)?"
        r"|\brequires?\s+(?:an?\s+)?(?:NVIDIA\s+)?(?:CUDA\s+)?driver\s+(?:version\s+)?\d+\.\d+\s*(?:\+|or\s+(?:higher|newer|later))"
        r"|\bdriver\b[^\n]{0,30}?\bonly\s+supports\s+CUDA\s*\d+"
        r"|\bInsufficient\s+CUDA\s+driver\b"
        r"|\b(?:not\s+supported|unsupported)\s+driver\s+version\b[^\n]{0,30}?\brequired\b"
        r"|\bdriver\s+supports\s+(?:cuda\s+)?(?:toolkit\s+)?version\s+\d+\.\d+,?\s+but\b",
        2.0,
        *_DRIVERS,
        "xmrig/xmrig-cuda:src/cuda_extra.cu",
        "NVIDIA/warp:warp/native/cuda_util.cpp",
        "m4rs-mt/ILGPU:Src/ILGPU/Runtime/Cuda/CudaAccelerator.cs",
        all_of=("driver",),
        any_of=("cuda", "insufficient", "driver version", "driver supports"),
        veto=NO_DRIVER,
        alone=False,
    ),
    # -- ptx-too-new-for-driver: PTX of a newer ISA than the driver's JIT (COMPAT_DOC) ------------------------------
    _f(
        "PTX newer than the driver",
        "ptx-too-new-for-driver",
        r"\bPTX\b[^\n]{0,80}?\b(?:newer|too new|unsupported (?:version|toolchain)|"
        r"not supported by (?:the |this |your )?"
        r"driver|compiled with (?:a )?newer)\b",
        2.0,
        *_PTX_NEW,
        all_of=("ptx",),
    ),
    # -- wrong-framework-build: a CPU-only or other build of the framework (their own "not compiled with" checks) ----
    _f(
        "built without CUDA",
        "wrong-framework-build",
        r"\b(?:not|n'?t|never)\s+(?:been\s+)?(?:compiled|built|installed|configured|linked)\s+with\s+(?:the\s+)?"
        r"(?:CUDA|GPU|cuda|gpu|NVIDIA|cuDNN)\b"
        r"|\b(?:built|compiled)\s+without\s+(?:CUDA|GPU)\b"
        r"|\bCPU[- ]only\s+(?:build|version|wheel|package|install\w*|binary|torch|pytorch|jaxlib|paddle\w*|"
        r"onnxruntime|tensorflow)\b"
        r"|\b(?:CUDA|GPU)\s+(?:support|backend)\s+(?:is\s+)?(?:not|isn'?t)\s+(?:compiled|built|enabled|installed)\b"
        r"|\bis_built_with_cuda\(\)\s*(?:returns?|is|==|->|:)?\s*False\b"
        # "the CPU version of torch", a "+cpu" wheel
        r"|\bCPU(?:[- ]only)?\s+(?:build|version|wheel|package|variant)\s+of\s+(?:torch|pytorch|tensorflow|jax\w*|"
        r"paddle\w*|onnxruntime|faiss)\b|\b(?:torch|torchvision|torchaudio)\W{1,3}\d+\.\d+(?:\.\d+)?\+cpu\b"
        # a version with PyTorch's CPU-wheel tag printed alone ("2.0.1+cpu /home/u/.local/.../torch/__init__.py")
        r"|(?<![\w.])\d+\.\d+\.\d+\+cpu\b"
        # the frameworks listing no GPU: torch's is_available() False, TensorFlow's empty GPU list, JAX's CPU device,
        # ONNX Runtime's CPU provider alone
        # "is_available() returns False", "is_available() é False", "torch.version.cuda 是 None" (any short link word
        # but a negation)
        r"|\bcuda\.is_available\(\)\)?\s*(?:(?!\bnot\b|\bnever\b)[^\n]){0,12}?\bFalse\b"
        r"|\btorch\.version\.cuda\)?\s*(?:(?!\bnot\b)[^\n]){0,12}?\bNone\b"
        # PyTorch's CPU wheel index in an install command or a requirements file
        r"|\bdownload\.pytorch\.org/whl/cpu\b"
        r"|\blist_physical_devices\(\s*['\"]GPU['\"]\s*\)[^\n]{0,30}?(?:\[\]|returns? (?:an )?empty|is empty)"
        r"|\bNum GPUs Available:?\s*0\b|\bjax\.devices\(\)[^\n]{0,40}?\bCpu\w*Device\b"
        r"|\bonly\s+(?:shows?|lists?|has|returns?|finds?|gets?)\s+['\"\[]*CPUExecutionProvider\b",
        2.0,
        *_CPU_BUILDS,
        any_of=(
            "with", "cpu", "support", "backend", "is_built_with_cuda", "is_available", "list_physical", "num gpus",
            "version.cuda",
        ),
    ),
    _f(
        # the same, as builds of other projects say it of themselves: "This pytorch build does not support CUDA"
        # (torch_tensorrt), "CUDA not enabled in this build" (Warp), "This build isn't CUDA enabled" (HeavyDB), "CUDA
        # runtime is not linked into this build" (TVM), "ginkgo CUDA module is not compiled", "Cannot use GPU in
        # CPU-only Caffe", the build switch named off or to be turned on ("-DBUILD_CUDA_MODULE=OFF", "Re-link with
        # USE_CUDA=ON", "rebuild UCX with --with-cuda"), Rust's "the 'cuda' feature is not enabled", "built without
        # GGML CUDA support", two builds installed side by side ("multiple CuPy packages are installed")
        "a build without CUDA, in its own words",
        "wrong-framework-build",
        r"\b(?:this|the|current|installed|your)\s+(?:\w+\s+){0,2}?build\s+(?:does\s*n[o']?t|doesn't|is\s*n[o']?t|isn't)\s+"
        r"(?:support\s+)?(?:CUDA|GPU)\b"
        r"|\b(?:CUDA|GPU|ROCm|HIP)(?:\s+\w+)?\s+(?:is\s+)?(?:not\s+(?:enabled|linked|included|compiled)|disabled)\s+(?:in|into)\s+"
        r"(?:this|the)\s+build\b"
        r"|\bCUDA\s+(?:module|backend|kernels?)\s+(?:is\s+|are\s+)?not\s+(?:compiled|built)\b(?!\s+for\b)"
        r"|\bCUDA extension is not available \(not built\b"
        r"|\bin\s+(?:a\s+)?CPU[- _]only\s+(?-i:[A-Z])\w+(?!\s+mode\b)"
        # a switch named off in a message that says it is needed ("not supported when -DBUILD_CUDA_MODULE=OFF")
        r"|\bwhen\s+-D\w*(?:CUDA|GPU)\w*\s*=\s*(?:OFF|FALSE|0)\b"
        r"|\b(?:re-?compile|re-?build|re-?link|re-?install)\w*\b[^\n]{0,60}?\b(?:-D)?(?:USE|BUILD|WITH|ENABLE|GGML|LLAMA)_"
        r"\w*CUDA\w*\s*=\s*(?:ON|TRUE|1)\b"
        r"|\b(?:re-?compile|re-?build)\w*\b[^\n]{0,40}?\s--with-cuda\b"
        r"|['\"`]cuda['\"`] feature is not enabled\b|\bfeature\s+['\"`]?cuda['\"`]?\s+(?:is\s+)?not\s+enabled\b"
        r"|\b(?:built|compiled|installed|packaged|shipped)\s+without\s+(?:\w+\s+){0,2}?(?:CUDA|GPU)\s+support\b"
        r"|\bcannot use GPU\b[^\n]{0,60}?\bwithout\s+CUDA(?:\s+or\s+\w+)?\s+support\b"
        r"|\bmultiple\s+\w+\s+(?:packages|distributions|installations)\s+(?:are\s+)?installed\b"
        # the framework built for another CUDA major than the code needs: "the installed torch was built for CUDA
        # 12.8" (FlashInfer), "Please install pytorch with CUDA 12.x support" (torch_tensorrt), "Install a CUDA-13
        # torch build"
        r"|\binstalled\s+(?:torch|pytorch|jax\w*|tensorflow|paddle\w*)\s+(?:was\s+)?built\s+for\s+CUDA\s*\d+"
        r"|\bplease\s+(?:re)?install\s+(?:a\s+)?(?:pytorch|torch|jax\w*|tensorflow|paddle\w*)\s+(?:build\s+)?with\s+CUDA\s*\d+"
        r"|\b(?:re)?install\s+a\s+CUDA[- ]?\d+(?:\.\w+)?\s+(?:pytorch|torch|jax\w*|tensorflow|paddle\w*)\s+build\b",
        2.0,
        *_CPU_BUILDS,
        "isl-org/Open3D:cpp/open3d/core/nns/KnnIndex.cpp",
        "apache/tvm:src/backend/cuda/codegen/cuda_fallback_module.cc",
        "NVIDIA/warp:warp/_src/context.py",
        "BVLC/caffe:include/caffe/util/device_alternate.hpp",
        "cupy/cupy:cupy/_environment.py",
        any_of=("build", "compiled", "built", "cpu", "-d", "cuda", "multiple", "install"),
    ),
    _f(
        # The build's own instruction to build the GPU in ("Compile MXNet with USE_CUDA=1 to enable GPU support",
        # MXNet's imperative_utils.h), and ONNX Runtime left with its CPU provider alone: statements a README or a
        # warning also makes, so only beside a failure
        "a build told to enable the GPU",
        "wrong-framework-build",
        r"\b(?:re-?)?(?:compile|build)\b[^\n]{0,60}?\bwith\b[^\n]{0,40}?\bto\s+enable\s+(?:the\s+)?(?:CUDA|GPU)\b"
        r"|\bonly\s+['\"`\[]*CPUExecutionProvider['\"`\]]*\s+(?:is|was)\s+(?:available|listed|shown)\b",
        2.0,
        "apache/mxnet:src/imperative/imperative_utils.h",
        "microsoft/onnxruntime:onnxruntime/python/onnxruntime_inference_collection.py",
        BINARY_EXTENSIONS,
        alone=False,
        any_of=("enable", "cpuexecutionprovider"),
    ),
    _f(
        # A program's own build information saying it has no GPU code (GROMACS' version header, printed in every
        # md.log and by gmx --version: "GPU support:        disabled"), beside a failure: the binary that ran is the
        # CPU build
        "build information without GPU support",
        "wrong-framework-build",
        r"(?m:^)\s*GPU support:\s+disabled\b",
        2.0,
        "gromacs/gromacs:src/gromacs/utility/binaryinformation.cpp",
        "https://manual.gromacs.org/current/install-guide/index.html",
        alone=False,
        any_of=("gpu support",),
    ),
    _f(
        # A program that runs but leaves the GPU idle: the build it loaded has no GPU code path (the CPU package, a
        # build whose CUDA part was skipped), the frameworks' "is_available() is False" seen from outside.
        "the GPU is not used",
        "wrong-framework-build",
        r"\b(?:not|never|isn'?t|doesn'?t|does not|don'?t|do not|is not|are not|aren'?t)\s+(?:being\s+|actually\s+)?"
        r"(?:using|use|used|utili[sz]\w*|running on|run on)\s+(?:the\s+|my\s+|any\s+)?GPUs?\b"
        r"|\bGPUs?\s+(?:is|are|was|were)\s+(?:not|never)\s+(?:being\s+)?(?:used|utili[sz]ed|detected by)\b"
        r"|\b(?:runs?|running|ran|trains?|training|falls? back|falling back|fell back)\s+(?:only\s+)?(?:on|to)\s+"
        r"(?:the\s+)?CPU\s+(?:instead of|rather than|not)\s+(?:the\s+|my\s+)?GPU\b"
        r"|\bno (?:activity|load|usage|utili[sz]ation) on (?:the\s+|my\s+)?GPU\b"
        # "runs on CPU only", "loads the model into system RAM instead of VRAM", "not offloaded to the GPU"
        r"|\b(?:runs?|running|ran|works?|working)\s+(?:only\s+)?on\s+(?:the\s+)?CPU\s+only\b"
        r"|\b(?:loads?|loading|loaded|goes|going|went)\s+(?:\w+\s+){0,2}?(?:in|into|to)\s+(?:the\s+)?(?:system\s+)?RAM\s+"
        r"(?:instead of|rather than|not)\s+(?:the\s+|my\s+)?(?:GPU|VRAM)\b"
        r"|\b(?:not|never|isn'?t|aren'?t)\s+(?:being\s+)?offloaded\s+to\s+(?:the\s+|my\s+)?GPU\b"
        r"|\bGPU\s+(?:does nothing|is idle|stays idle|(?:usage|utili[sz]ation|load)\s+(?:is\s+|stays\s+|remains\s+)?"
        r"(?:at\s+)?0\s?%)",
        2.0,
        *_CPU_BUILDS,
        any_of=("gpu", "vram"),
    ),
    # -- no-kernel-image: a build without code for the GPU (PG_COMPAT) ----------------------------------------------
    _f(
        "a build without code for the GPU",
        "no-kernel-image",
        r"\b(?:no|missing|lacks?|without)\s+(?:[\w-]+\s+){0,2}?(?:SASS|cubins?|kernels?|device code|"
        r"code|binar(?:y|ies)|kernel images?)\s+(?:\w+\s+)?(?:for|built for|compiled for)\s+(?:the\s+)?"
        r"(?:sm_?\d{2,3}|compute_\d{2,3}|SM\s?\d{2,3}|(?:this|your|my|the current|current) (?:GPU|device|arch\w*))"
        r"|\b(?:not|isn'?t|wasn'?t|never)\s+(?:been\s+)?(?:compiled|built)\s+(?:for|with support for)\s+(?:the\s+)?"
        r"(?:sm_?\d{2,3}|compute_\d{2,3}|SM\s?\d{2,3}|(?:this|your|my|the current|current) (?:GPU|device|arch\w*))"
        r"|\b(?:wheel|build|binary|binaries|package|release|image)\b[^\n]{0,40}?\bdoes(?: not|n'?t)\s+"
        r"(?:include|contain|"
        r"ship|have|support|cover)\s+(?:\w+\s+)?(?:code for\s+)?(?:sm_?\d{2,3}|compute_\d{2,3}|SM\s?\d{2,3}|"
        r"(?:this|your|my) GPU|compute capability \d)"
        # "Your GPU (sm_61) is not in the list of architectures this binary was compiled for"
        r"|\bnot (?:in|among|one of) the (?:list of )?(?:supported )?(?:arch\w*|compute capabilit\w*|targets|SMs)\b"
        r"[^\n]{0,60}?\b(?:compiled|built)\b",
        2.0,
        *_BUILDS,
    ),
    # -- mixed-gpu: code made for one GPU run on another (the TensorRT, Triton and best-practices documents) --------
    _f(
        "GPUs of two generations mixed",
        "mixed-gpu",
        r"\bmix(?:ing|ed|es)\s+(?:\w+\s+)?(?:GPUs|cards|graphics cards|GPU (?:generations|architectures|models)|"
        r"architectures|generations)\b"
        r"|\b(?:GPUs|cards) of (?:different|two|mixed) (?:generations|architectures|models)\b",
        2.0,
        *_MIXED,
        alone=False,
        any_of=("mix", " of "),
    ),
    _f(
        "works on one GPU, fails on another",
        "mixed-gpu",
        # "Works on the RTX 3090 but crashes on the GTX 1080", "fails on GPU 1 (V100) but works on GPU 0"
        rf"\bworks?\b[^\n]{{0,30}}?\bon\s+(?:the\s+|my\s+|a\s+|an\s+)?{_GPU_NAME}[^\n]{{0,40}}?\b(?:but|yet|while|however)\b"
        rf"[^\n]{{0,40}}?\b(?:fails?|crash\w*|errors?|not|doesn'?t|breaks?)\b[^\n]{{0,30}}?\bon\s+(?:the\s+|my\s+|a\s+|"
        rf"an\s+)?{_GPU_NAME}"
        rf"|\b(?:fails?|crash\w*|errors?)\b[^\n]{{0,30}}?\bon\s+(?:the\s+|my\s+|a\s+|an\s+)?{_GPU_NAME}[^\n]{{0,40}}?"
        rf"\b(?:but|yet|while|whereas)\b[^\n]{{0,30}}?\bworks?\b[^\n]{{0,30}}?\bon\s+(?:the\s+|my\s+|a\s+|an\s+)?{_GPU_NAME}",
        2.0,
        *_MIXED,
        any_of=("work",),
    ),
    _f(
        "a second, different card",
        "mixed-gpu",
        # "After adding a second card (Tesla P40) next to my 3090", "only works if I hide the K80", "heterogeneous GPUs"
        r"\b(?:add(?:ing|ed)?|install(?:ing|ed)?|put(?:ting)?|plug(?:ging|ged)?)\s+(?:in\s+)?(?:a\s+)?(?:second|another|2nd)\s+"
        r"(?:GPU|card|graphics card)\b"
        rf"|\b(?:only\s+works?|works?\s+only)\b[^\n]{{0,20}}?\bif\s+I\s+(?:hide|disable|remove|unplug)\s+(?:the\s+)?"
        rf"(?:\w+\s+)?(?:GPU|card|{_GPU_NAME})"
        rf"|{MIXED_HOST_STATED}",
        2.0,
        *_MIXED,
        alone=False,
        any_of=("second", "another", "2nd", "hide", "disable", "remove", "unplug", "heterogene", "different", "mixed",
                "multiple", "several"),
    ),
    _f(
        "built on one GPU, run on another",
        "mixed-gpu",
        # "engine created on T4 does not load on A10G", "image was built on a machine with an A100 and fails on our T4",
        # "compiled the engine on my laptop (RTX 3060) and copied it to the Jetson Orin", "cache from the 3090 box is
        # reused on the 4090"
        BUILT_ON_A_GPU_RUN_ON_ANOTHER,
        2.0,
        *_MIXED,
        any_of=("built", "compiled", "created", "generated", "serialized", "exported", "made", "tuned", "trained",
                "converted", " from ", " of "),
    ),
    _f(
        "made on another GPU",
        "mixed-gpu",
        r"\b(?:engine|plan|cache|binary|kernels?|model|library|build)\b[^\n]{0,60}?\b(?:built|compiled|generated|"
        r"created|serialized|tuned|made)\b[^\n]{0,40}?\b(?:on|for|with)\s+(?:a\s+|an\s+)?(?:different|another|other)\s+"
        r"(?:\w+\s+)?(?:GPU|device|card|machine|architecture|node|host)s?\b"
        r"|\bdifferent (?:GPU |CUDA )?(?:arch(?:itecture)?s|compute capabilit(?:y|ies)|GPU models?|GPUs)\b"
        r"|\b(?:built|building|compiled|compiling|generated)\s+(?:it\s+)?(?:on|for)\s+(?:a\s+)?(?:different|another)\s+"
        r"(?:\w+\s+)?(?:GPU|device|card|machine|arch\w*|node|host)s?\b",
        2.0,
        *_MIXED,
        alone=False,
        any_of=("different", "another", "other"),
    ),
    # -- arch-specific-mismatch: code for an a/f target only (PG_COMPAT; CuTe compiles such instructions out) --------
    _f(
        "only for an a/f target",
        "arch-specific-mismatch",
        r"\bonly\s+(?:supports?|supported|available|works?|runs?|compiled|built|for|applicable|valid|exists?)\b"
        r"[^\n]{0,40}?\b(?:sm_?|compute_)\d{2,3}[af]\b|\b(?:sm_?|compute_)\d{2,3}[af][- ]only\b"
        # "This kernel requires sm_90a", "must be compiled for sm_100a"
        r"|\b(?:requires?|needs?|must be (?:built|compiled) (?:for|with))\s+(?:\w+\s+){0,3}?"
        r"(?:sm_?|compute_)\d{2,3}[af]\b",
        2.25,
        "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#feature-availability",
        "deepseek-ai/FlashMLA:setup.py",
        "Dao-AILab/flash-attention:hopper/setup.py",
        alone=False,
        any_of=("only", "requir", "need", "must be"),
    ),
    # -- jit-toolchain-too-old: a toolkit version below the GPU's (NVCC_ARCH: each arch from its first CUDA) --------
    _f(
        "a toolkit that supports only older targets",
        "jit-toolchain-too-old",
        r"\b(?:nvcc|ptxas|nvrtc|CTK|cuda[ -]?toolkit)\b[^\n]{0,20}?\b(?:only\s+)?supports?\s+(?:only\s+|up to\s+)?"
        r"(?:compute capability\s+|sm_?|compute_)?\d"
        r"|\b(?:CTK|nvcc|NVRTC|cuda[ -]?toolkit)\s*(?:<|older than|before|below)\s*\d+\.\d+",
        2.25,
        *_TOOLCHAINS,
        alone=False,
        any_of=("nvcc", "ptxas", "nvrtc", "ctk", "toolkit"),
    ),
    # -- shared-memory-limit: cudaFuncSetAttribute / a launch asking past the opt-in maximum returns invalid argument
    _f(
        "invalid argument beside shared memory",
        "shared-memory-limit",
        # the words, not an identifier: a launch's ``shared_mem=2048`` beside the error is a parameter, not the cause
        r"\binvalid argument\b[\s\S]{0,400}?\bshared[ -]memory\b"
        r"|\bshared[ -]memory\b[\s\S]{0,400}?\binvalid argument\b"
        # cudaFuncSetAttribute is how a kernel opts in to more than 48 KB a block (Programming Guide, shared memory):
        # its invalid argument is a request past the GPU's opt-in maximum
        r"|\bcu(?:da)?FuncSetAttribute\b[^\n]{0,160}?"
        r"\b(?:invalid argument|cudaErrorInvalidValue|CUDA_ERROR_INVALID_VALUE|fail(?:s|ed|ing)?)\b"
        # the same opt-in in the program's words: "Failed to set max dynamic shared size to 131072 bytes" (HeavyDB)
        r"|\bfail\w*\s+to\s+set\s+(?:the\s+)?max(?:imum)?\s+dynamic\s+shared\s+(?:memory\s+)?size\b",
        2.0,
        *_SMEM,
        any_of=("shared", "funcsetattribute"),  # "shared memory", "shared-memory", the opt-in call
        explains=(1,),
    ),
    # -- ptx-too-new-for-driver: before CUDA 11.1 a driver given newer PTX said only "a PTX JIT compilation failed" --
    _f(
        "a PTX JIT failure beside a toolkit release",
        "ptx-too-new-for-driver",
        r"(?:CUDA_ERROR_INVALID_PTX|cudaErrorInvalidPtx|a PTX JIT compilation failed)[\s\S]{0,400}?"
        r"\b(?:compilation tools, release \d+|nvcc|toolkit \d+|driver)\b"
        r"|\b(?:compilation tools, release \d+|toolkit \d+|driver)\b[\s\S]{0,400}?"
        r"(?:CUDA_ERROR_INVALID_PTX|cudaErrorInvalidPtx|a PTX JIT compilation failed)",
        2.0,
        *_PTX_NEW,
        any_of=("invalid_ptx", "invalidptx", "ptx jit compilation failed"),
    ),
    # -- capability-guard: a math library refusing an operation the GPU cannot do (cuBLAS's cublasStatus_t) ---------
    _f(
        "a library refuses the operation",
        "capability-guard",
        r"\bthe requested functionality is not supported\b|\bCUBLAS_STATUS_NOT_SUPPORTED\b",
        1.75,
        "https://docs.nvidia.com/cuda/cublas/index.html#cublasstatus-t",
        "https://docs.nvidia.com/cuda/cublas/index.html#cublasltmatmul",
        any_of=("functionality", "cublas_status"),
    ),
    # -- arch-specific-mismatch: code written for one arch compiled for a target without its features (PTX ISA's
    #    target notes; ptxas: "Feature 'X' requires .target sm_90 or higher") -------------------------------------
    _f(
        "a feature of another target",
        "arch-specific-mismatch",
        # sm_90 and newer: the Hopper and Blackwell features (clusters, TMA, wgmma, tcgen05) that code written for
        # one such target uses, compiled for a target without them
        r"\bFeature '[^'\n]{1,60}' requires \.target sm_(?:9\d|1\d\d)[af]?\b",
        2.5,
        "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#release-notes",
        NVCC_ARCH,
        all_of=(".target",),
    ),
    _f(
        "a feature of a newer generation",
        "capability-guard",
        # below sm_90: a generation's feature (ldmatrix sm_75, bf16 and cp.async sm_80) every later GPU has, which
        # the GPU the code is built for lacks: the code needs a newer GPU
        r"\bFeature '[^'\n]{1,60}' requires \.target sm_[1-8]\d\b|\brequires \.target sm_[1-8]\d or higher\b",
        2.5,
        "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#release-notes",
        NVCC_ARCH,
        all_of=(".target",),
    ),
    # -- ptx-too-new-for-driver: the PTX version itself named as the problem (COMPAT_DOC) ------------------------
    _f(
        "an unsupported PTX version",
        "ptx-too-new-for-driver",
        r"\bunsupported\s+ptx\s+version\b"
        r"|\bptx\s+(?:isa\s+)?version\s+(?:mismatch|unsupported|not supported|too new|is newer)\b",
        2.0,
        *_PTX_NEW,
        all_of=("ptx",),
    ),
    # -- ptx-jit-lower-arch: a CUDA program slow to start (PG_JIT: the JIT adds load time at every start while its
    #    output does not fit the compute cache) ------------------------------------------------------------------
    _f(
        "a CUDA program slow to start",
        "ptx-jit-lower-arch",
        r"\b(?:very |extremely |really |too )?slow\b[^\n]{0,40}?"
        r"\b(?:start\w*|init\w*|load\w*|first (?:run|time|call))\b"
        r"|\b(?:start\w*|init\w*|load\w*|session creation|CreateSession|"
        r"first[- ](?:run|time|call|model|inference|launch))\b"
        r"[^\n]{0,60}?\b(?:slow|long time|ages|forever|delay|\d+(?:\.\d+)?\s*(?:min\w*|seconds))\b"
        r"|\btakes?\b[^\n]{0,30}?\blong time before\b",
        1.75,
        *_JIT,
        any_of=("cuda", "gpu", "nvidia", "device", "geforce", "rtx", "gtx", "tesla", "quadro", "capability"),
        context=r"\b(?:cuda\w*|gpus?|nvidia|devices?|geforce|rtx|gtx|tesla|quadro|capability)\b",
        # loading a model, its weights or data is slow for its own reasons (disk, network, the loader's code), unless
        # the text names what the JIT delays: the CUDA context's or an inference session's start, PTX, the JIT
        veto=r"\b(?:load\w*|download\w*|read\w*)\s+(?:the\s+|a\s+|my\s+|its\s+)?(?:\w+\s+)?"
        r"(?:model|checkpoint|weights|dataset|data|files?)\b|\bdownload"
        # slow transfers are no JIT: a data loader, host-device copies, the PCIe link
        r"|\bdata-?loader\b|\bH2D\b|\bD2H\b|\bPCIe\b|\bcop(?:y|ies)\b",
        rescue=r"\b(?:session|CreateSession|JIT|PTX|cuda init\w*|initiali[sz]\w*|start[- ]?up)\b",
    ),
    # -- driver-too-old: a driver without an entry point the runtime needs (cuGetProcAddress came with CUDA 11.3) --
    _f(
        "a driver without a newer entry point",
        "driver-too-old",
        r"\bFailed to get (?:function|driver entry point)\s+['\"`]?cuGetProcAddress\b"
        r"|\bcuGetProcAddress\b[^\n]{0,40}?\b(?:not found|missing|unavailable|fail\w*)",
        2.0,
        "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__DRIVER__ENTRY__POINT.html",
        COMPAT_DOC,
        all_of=("cugetprocaddress",),
    ),
    # -- mixed-gpu: CUDA's device numbering, fastest first, against nvidia-smi's PCI order (CUDA_DEVICE_ORDER) --------
    # CUDA numbers devices fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID, while nvidia-smi, NVML, NVAPI, the OS and
    # most monitors number them by PCI bus: on a host of two GPU models the same index names two different cards, and a
    # program that takes an index from one numbering and uses it in the other runs on (or reports) the other card.
    _f(
        "CUDA's device order against nvidia-smi's",
        "mixed-gpu",
        rf"\b(?:{_INDEXED})[_ ]?{_NUMBERING}\b[^\n]{{0,80}}?\b(?:nvidia-smi|PCI|NVML|NVAPI)\b"
        r"|\bnvidia-smi\b[^\n]{0,80}?\b(?:order|PCI bus)\b[^\n]{0,80}?\bCUDA\b"
        # "(that's how nvidia-smi numbers them)", "because nvidia-smi lists the 4070 as 1"
        r"|\b(?:nvidia-smi|NVML)\s+(?:numbers|orders|enumerates|indexes|counts)\b"
        r"|\b(?:nvidia-smi|NVML)\s+(?:lists|shows|numbers|labels|reports|calls|has)\s+(?:the\s+|my\s+)?[\w -]{1,30}?"
        r"\s+as\s+(?:GPU\s*|device\s*|index\s*)?#?\d\b"
        r"|\bCUDA_DEVICE_ORDER\s*=\s*['\"]?PCI_BUS_ID\b",
        2.0,
        _ENV_VARS,
        any_of=("nvidia-smi", "pci", "nvml", "nvapi"),
    ),
    _f(
        "two numberings of the GPUs disagree",
        "mixed-gpu",
        # "GPU ID appears to disagree with", "device ordering inconsistent between", "CUDA index mismatch"
        rf"\b(?:{_INDEXED})[_ ]?{_NUMBERING}\b[^\n]{{0,60}}?\b(?:disagree\w*|mismatch\w*|confus\w*|mix-?up|"
        r"incon?sis?tent|(?:do(?:es)?|is|are)\s*(?:not|n'?t)\s+(?:match|matching|correspond|the same|consistent)|"
        r"(?:always\s+)?correspond\w*\s+(?:with|to)|differ\w*|swapped|swopped|reversed|opposite|wrong|incorrect\w*)\b"
        # "GPU0 and GPU1 HWINFO data swopped", "cuda:0 shown as GPU 1 and cuda:1 shown as GPU 0"
        rf"|\b{_ONE_GPU}\b[^\n]{{0,40}}?\b{_ONE_GPU}\b[^\n]{{0,80}}?\b(?:swapped|swopped|reversed|switched|mixed up)\b"
        rf"|\b{_ONE_GPU}\s+(?:is\s+)?(?:shown|displayed|listed|labell?ed|reported|sown)\s+as\s+{_ONE_GPU}\b"
        # "docker and CUDA disagree about what 0 is", "they don't agree on which GPU is 1"
        r"|\b(?:disagree|don'?t agree|do not agree|differ)\w*\s+(?:about|on)\s+(?:what|which)\s+"
        r"(?:GPU\s*|device\s*|card\s*)?#?\d\b"
        # "they seem to get opposite IDs", "does not use the correct CUDA ids"
        r"|\b(?:opposite|swapped|reversed|wrong|incorrect|different)\s+(?:CUDA\s+|GPU\s+|device\s+)?"
        r"(?:ids|IDs|indices|indexes|numbering|order)\b"
        r"|\b(?:not|n'?t)\s+use\s+the\s+(?:correct|right|same)\s+(?:CUDA\s+|GPU\s+|device\s+)?(?:ids?|IDs?|indices)\b",
        2.0,
        _ENV_VARS,
        any_of=("gpu", "device", "cuda", "card"),
    ),
    _f(
        # a program refusing a host of mixed GPUs ("Heterogeneous Nvidia GPU devices not supported", Genesis), or
        # suspecting an artefact built for another GPU ("This may happen if the engine was built ... for a different
        # GPU architecture", chaiNNer's TensorRT loader)
        "a mixed host refused, or an artefact for another GPU",
        "mixed-gpu",
        r"\b(?:heterogene\w+|mixed)\s+(?:\w+\s+){0,2}?(?:GPUs?|devices|cards)\s+(?:are\s+|is\s+)?"
        r"(?:not supported|unsupported)\b"
        r"|\b(?:built|compiled|created|generated|serialized)\b[^\n]{0,60}?\bfor\s+(?:a\s+|another\s+)?"
        r"(?:different|another|other)\s+(?:GPU|device|card)(?:\s+(?:architecture|model))?\b",
        2.0,
        *_MIXED,
        "Genesis-Embodied-AI/Genesis:tests/conftest.py",
        "chaiNNer-org/chaiNNer:backend/src/packages/chaiNNer_tensorrt/tensorrt/io/load_engine.py",
        any_of=("heterogene", "mixed", "different", "another", "other gpu"),
    ),
    _f(
        "the wrong GPU is used",
        "mixed-gpu",
        # "loads model on the wrong GPU", "always defaults to the worst GPU", "training still runs on less powerful GPU"
        r"\b(?:on|to|uses?|using|used|selects?|selected|picks?|picked|chooses|chose|detects?|detected|to use)\s+"
        r"(?:the\s+|a\s+|my\s+)?(?:wrong|other|incorrect|worst|weaker|slower|smaller|less powerful|"
        r"(?:display|primary|secondary|first|second) (?:only )?)\s*(?:GPU|card|graphics card|device)\b"
        r"|\b(?:wrong|incorrect)\s+(?:GPU|card|device)\s+(?:is\s+|was\s+|gets\s+)?"
        r"(?:used|selected|chosen|detected|picked)\b"
        # "I choose RTX 2080 Ti, but the program use my GTX 1080 Ti"
        rf"|\b(?:choose|chose|chosen|select\w*|pick\w*|set)\s+(?:the\s+|my\s+)?{_GPU_NAME}[^\n]{{0,40}}?\bbut\b"
        rf"[^\n]{{0,40}}?\b(?:uses?|used|using|runs? on|picks?)\s+(?:the\s+|my\s+)?{_GPU_NAME}"
        # "the GTX 1080 ti will be selected instead of the stronger RTX 2080"
        r"|\b(?:selected|used|chosen|picked)\s+instead\s+of\s+(?:the\s+|my\s+)?(?:stronger|faster|better|"
        r"more powerful|other|bigger|newer)\b"
        # "Graphiccard wrong detection", "GPUs wrongly ordered"
        r"|\b(?:GPU|graphics ?card|card)s?\s+(?:wrong(?:ly)?|incorrect(?:ly)?)\s+"
        r"(?:detect|select|order|number|identif)\w*"
        # "I specified gpu1. But the actual gpu0 is used", "selected GPU 2 and 3 ... happening on GPU 0 and 1"
        # "I set CUDA_VISIBLE_DEVICES=1 to train on the 3090, but get_device_name(0) says GeForce GTX 1070"
        rf"|\bCUDA_VISIBLE_DEVICES\s*=\s*\d[^\n]{{0,80}}?\b(?:but|yet|however|instead)\b[^\n]{{0,80}}?{_GPU_NAME}"
        rf"|\b(?:specif(?:ied|ying)|select(?:ed|ing)|set(?:ting)?|chose|choos(?:e|ing)|chosen|asked for|pass(?:ed)?)\b"
        rf"[^\n]{{0,30}}?{_ONE_GPU}"
        rf"[^\n]{{0,80}}?\b(?:but|yet|however|instead)\b[^\n]{{0,60}}?{_ONE_GPU}",
        2.0,
        _ENV_VARS,
        # no GPU at all is no wrong GPU
        veto=r"\bno (?:CUDA-capable )?(?:GPU|device)s? (?:found|detected|available)\b",
        any_of=("gpu", "card", "device", "instead", "rtx", "gtx", "tesla", "quadro", "titan"),
    ),
    # -- device-mismatch: the operands of one operation on two devices, or a CPU-only routine given device memory --
    _f(
        "operands on different devices",
        "device-mismatch",
        # "must be on the same device", "should be on the same CUDA device", "to have the same device context as"
        r"\b(?:must|should|need to|needs to|have to|has to|expected to|to)\s+(?:all\s+)?(?:be|reside|live)\s+on\s+"
        r"(?:the\s+)?same\s+(?:CUDA\s+|GPU\s+)?device\b"
        r"|\bto have the same device(?: context| type)? as\b"
        # "are on different devices", "is allocated in a different device", "found two different devices"
        r"|\b(?:are|is|were|was|live|lives|reside|resides)\s+(?:allocated\s+|located\s+)?(?:on|in)\s+"
        r"(?:an?\s+|two\s+)?(?:different|separate|another)\s+(?:CUDA\s+|GPU\s+)?devices?\b"
        # Open3D's "Tensors must have the same device CPU:0, but got CUDA:0"
        r"|\b(?:must|should) have the same device\b"
        # Open3D's "Device mismatch CUDA:0 != CPU:0", "device type mismatch"
        r"|\bdevice(?:[ _]type)?\s+mismatch\b"
        # TVM's "Can not copy across different device types"
        r"|\bacross (?:different|two) device types\b"
        # a routine for one side given the other: "expected CPU tensor but got device_type=1", "must be on the CPU"
        r"|\bexpected (?:a\s+)?(?:CPU|host|CUDA|GPU|device) (?:tensor|array|buffer)s?,? but (?:got|found)\b"
        r"|\b(?:array|tensor|buffer|input)s?\s+must be on the (?:CPU|host)\b",
        2.0,
        *_SAME_DEVICE,
        any_of=("same device", "different", "mismatch", "device type", "expected", "must be on"),
    ),
    # -- session 11, the deep round's families (tests/fixtures/explain_emitters, third-tune half) -------------------
    _f(
        # a package whose compiled part is absent from the install: "apex.optimizers.FusedAdam requires cuda
        # extensions", "Apex was installed without --cpp_ext --cuda_ext", "Need to compile C++ extensions to use all
        # xFormers features", "No such operator xformers::efficient_attention_forward_cutlass", "has not been built
        # with cuBLASMp support" (TransformerEngine), "NCCL not compiled in ... Recompile with
        # -DGGML_CUDA_NCCL=ON", "No module named 'amp_C'", "Cannot import 'detectron2._C'" -- the build that runs lacks
        # the GPU code
        "a compiled part missing from the install",
        "wrong-framework-build",
        r"\b(?:installed|built|compiled|packaged)\s+without\s+(?:its\s+|the\s+)?(?:--?[\w-]*(?:cuda|cpp|ext)[\w-]*|"
        r"(?:C\+\+|CUDA|cpp|native|compiled)\s+(?:extensions?|kernels?|ops)\b)"
        r"|\brequires\s+(?:the\s+)?(?:CUDA|C\+\+|cpp|compiled|native)\s+extensions?\b"
        r"|\bneeds?\s+to\s+(?:compile|build)\s+(?:the\s+)?(?:C\+\+|CUDA|cpp|native)\s+extensions?\b"
        # PyTorch's registry of custom operators: an op library that was not built or not loaded
        r"|\bNo such operator \w+::\w+"
        # vLLM's "vllm._flashmla_C is not available, likely was not compiled due to ..." (a compiled module by its
        # Python name, from the start of the name, case-sensitive; PyTorch's "Torch was not compiled with flash
        # attention" is a warning it prints and goes on past, and advice to install a CUDA build is no failure)
        r"|(?<![\w.])[\w.]{1,80}?(?-i:_C|_cuda\w*)\b[^\n]{0,60}?\b(?:was|were)\s+not\s+compiled\s+(?:due to|because)\b"
        r"|\b(?:has|have)\s+not\s+been\s+(?:built|compiled)\s+with\s+(?:CUDA|GPU|NCCL|NVSHMEM|TensorRT|"
        r"(?-i:cu[A-Z]\w*))\s+support\b"
        r"|\bnot compiled in\b[^\n]{0,80}?\b(?:recompile|rebuild)\b[^\n]{0,40}?(?:CUDA|NCCL|GPU)"
        # a torch extension's compiled module ("detectron2._C", "mmcv._ext", "amp_C", "selective_scan_cuda"),
        # written as Python names it (case-sensitive); torch's own _C missing is a wrong interpreter or directory
        r"|\b(?:No module named|Cannot import)\s+['\"](?!torch\._C['\"])(?-i:(?:[\w.]+\.)?(?:_C|_ext)|amp_C|"
        r"\w+_cuda(?:_ext)?)['\"]"
        # koboldcpp's "CuBLAS library file not found. CPU library will be used."
        r"|\b(?:CUDA|cuBLAS|GPU)\s+(?:\w+\s+){0,2}?not found\b[^\n]{0,40}?\bCPU\s+(?:library|backend|version)\s+"
        r"will be used\b",
        2.0,
        "NVIDIA/apex:apex/optimizers/fused_adam.py",
        "NVIDIA/apex:apex/multi_tensor_apply/multi_tensor_apply.py",
        "facebookresearch/xformers:xformers/_cpp_lib.py",
        "facebookresearch/xformers:xformers/ops/common.py",
        "facebookresearch/detectron2:detectron2/layers/deform_conv.py",
        "NVIDIA/TransformerEngine:transformer_engine/common/comm_gemm/comm_gemm.cpp",
        "ggml-org/llama.cpp:ggml/src/ggml-cuda/ggml-cuda.cu",
        "LostRuins/koboldcpp:koboldcpp.py",
        "vllm-project/vllm:vllm/v1/attention/ops/flashmla.py",
        BINARY_EXTENSIONS,
        any_of=(
            "without", "extension", "no such operator", "not been", "compiled in", "no module named", "cannot import",
            "will be used", "not compiled",
        ),
    ),
    _f(
        # a GPU library shadowed by another copy on the search path: "potentially incompatible library detected in
        # PATH" (Ollama) -- the build that loads is not the one installed
        "another copy of a library on the search path",
        "wrong-framework-build",
        r"\b(?:potentially\s+)?(?:incompatible|conflicting)\s+(?:\w+\s+)?(?:library|libraries|DLLs?|installations?)\s+"
        r"(?:detected|found)\s+(?:in|on)\s+(?:the\s+)?(?:PATH|LD_LIBRARY_PATH|PYTHONPATH|sys\.path)\b"
        # TensorFlow's "Found conflicting TensorFlow installations in this environment: tensorflow 2.16.1,
        # tensorflow-intel 2.15.0" (several distributions installing into one directory)
        r"|\bconflicting\s+(?:TensorFlow|PyTorch|torch|JAX|jaxlib|Paddle\w*|ONNX ?Runtime|onnxruntime\w*|CuPy|cupy\w*)"
        r"\s+installations\b",
        2.0,
        "ollama/ollama:discover/runner.go",
        "tensorflow/tensorflow:tensorflow/python/platform/self_check.py",
        "https://learn.microsoft.com/en-us/windows/win32/dlls/dynamic-link-library-search-order",
        any_of=("path", "conflicting"),
    ),
    _f(
        # a compiled package and the package it was built for, at two versions: "flashinfer-jit-cache version
        # (0.4.1+cu128) does not match flashinfer version (0.5.2)", "jaxlib version 0.4.30 is newer than and
        # incompatible with jax version 0.4.26", "jaxlib is version 0.4.23, but this version of jax requires version
        # >= 0.4.30", "Transformer Engine package version mismatch", ggml's "incompatible API version (backend: 1,
        # current: 2)", TensorRT-LLM's "different TensorRT-LLM version to build engine and run engine"
        "a compiled package at another version than its host",
        "extension-abi-mismatch",
        # (a name starts where no word or hyphen precedes it, so the scan stays linear; the CUDA stack's own parts are
        # no package pair, and the message tells to install packages)
        rf"(?<![\w-])(?!{_STACK}\b)[\w-]+\s+version\s*\(?v?\d+\.\d+[\w.+]*\)?\s+(?:does not|doesn't|do not)\s+match\s+"
        rf"(?:the\s+)?(?!{_STACK}\b)[\w-]+\s+version\b(?=[^\n]{{0,120}}?\b(?:install\w*|packages?)\b)"
        r"|\bis newer than and incompatible with\b"
        r"|\bis version \S+,? but this version of [\w-]+ requires version\b"
        r"|\bpackage version mismatch\b[^\n]{0,40}?\bv?\d+\.\d+"
        r"|\bfailed to (?:initialize|load) (?:backend|plugin)\b[^\n]{0,200}?\bincompatible (?:API|ABI) version\b"
        r"|\bdifferent [\w-]+ versions? to build (?:the\s+)?(?:engine|extension|plugin)s? and (?:to\s+)?run\b"
        r"|\bbroken [\w.-]+ binary extension\b"
        # a compiler whose C++ ABI differs from the one that built the host: Paddle's custom-op builder, "Found that
        # your compiler (g++ == 4.8.5) may be ABI-incompatible with pre-installed Paddle!"
        r"|\bABI[- ]incompatible with (?:the\s+)?(?:pre-?installed|installed)\b",
        2.0,
        "flashinfer-ai/flashinfer:flashinfer/jit/env.py",
        "jax-ml/jax:jax/_src/lib/__init__.py",
        "NVIDIA/TransformerEngine:transformer_engine/common/__init__.py",
        "ggml-org/llama.cpp:ggml/src/ggml-backend-reg.cpp",
        "NVIDIA/TensorRT-LLM:cpp/tensorrt_llm/plugins/gptAttentionCommon/gptAttentionCommon.cpp",
        "PaddlePaddle/Paddle:python/paddle/utils/cpp_extension/extension_utils.py",
        BINARY_EXTENSIONS,
        any_of=("match", "incompatible", "mismatch", "requires version", "to build", "binary extension", "abi"),
        veto=r"\bout of memory\b",
    ),
    _f(
        # a library that refuses, or turns off, a feature for GPU generations it names: "FP8 FMHA cannot be enabled
        # except on Ada or Hopper Arch",
        # "Alibi is not supported for FMHA on Volta" (TensorRT-LLM), "Disabling FlashAttention 3 for compute
        # capability != sm90" (TransformerEngine)
        "a feature refused for the GPU generations a check names",
        "capability-guard",
        rf"\b(?:cannot|can't|can not)\s+be\s+(?:used|enabled|run)\b[^\n]{{0,60}}?\b(?:for|on|except\s+on|with)\s+"
        rf"(?:\w+\s+){{0,2}}?{_GEN}\b"
        rf"|\bnot supported\s+for\s+[\w -]{{1,30}}?\s+on\s+{_GEN}\b"
        rf"|\bDisabl(?:ing|ed?)\b[^\n]{{0,50}}?\bfor\s+(?:compute capability|sm_?\s?\d|SM\s?\d|{_GEN}\b)",
        2.0,
        "NVIDIA/TensorRT-LLM:cpp/tensorrt_llm/plugins/gptAttentionCommon/gptAttentionCommon.cpp",
        "NVIDIA/TransformerEngine:transformer_engine/pytorch/attention/dot_product_attention/utils.py",
        PG_CC,
        # each a statement that needs a failure beside it; vLLM's note that it does not use a backend ("INFO: Cannot
        # use FlashAttention-2 backend for Volta and Turing GPUs") is not taken: "cannot use" counts as a failure word,
        # so the form reads only "cannot be used/enabled/run"
        alone=False,
        any_of=("cannot", "can't", "can not", "not supported", "disabl"),
    ),
    _f(
        # a CUDA kernel handed an operand on the other side, or a routine for one side called on the other: "b_q_weight
        # is not on GPU", "weight tensor is not on GPU!" (detectron2), "Deformable Conv is not supported on CPUs!",
        # "FlashAttention do not support for CPU" (CTranslate2), "Marlin experts can only be loaded on GPU", ggml's
        # "layer 0 is assigned to device CUDA0 but the Flash Attention tensor is assigned to device CPU"
        "an operand or a routine on the wrong side",
        "device-mismatch",
        # (an operand by its kind or its variable name: "the model is not on the GPU" is a note on speed)
        # (a variable name split at its underscores once, [^\W_]+ runs: "\w+_\w+" took the square of a long token)
        r"\b(?:tensors?|weights?|inputs?|arrays?|buffers?|params?|parameters?|[^\W_]+(?:_[^\W_]+)+)\s+(?:is|are)\s+not\s+on\s+"
        r"(?:the\s+)?(?:GPU|CUDA|device)\b"
        # (a routine with no CPU path, not a note that something else is used instead: "FP16 is not supported on
        # CPU; using FP32 instead")
        r"|\b(?:is\s+|are\s+)?(?:not supported|unsupported)\s+on\s+CPUs?\b(?![^\n]{0,40}?\b(?:using|use|instead|fall))"
        r"|\bdo(?:es)?\s*(?:not|n't)\s+support\s+(?:for\s+)?CPUs?\b(?![^\n]{0,40}?\b(?:using|use|instead|fall))"
        r"|\bcan only be (?:loaded|run|used|placed|executed) on (?:the\s+)?(?:GPU|CUDA|CPU)s?\b"
        r"|\bassigned to device \w+ but\b[^\n]{0,60}?\bassigned to device \w+"
        # PyTorch's SDPA: "All tensors need to be on cuda device. Got query on device: cpu"; FastDeploy's "TrtBackend
        # only supports Device::GPU, but now it's Device::CPU"
        r"|\b(?:all\s+)?tensors?\s+(?:need|needs|must|should)\s+(?:to\s+)?be\s+on\s+(?:a\s+)?(?:cuda|gpu|cpu)\s+device\.?\s+"
        r"Got\b"
        r"|\bonly\s+supports?\s+(?:Device::)?(?:GPU|CPU)\b,?\s+but\s+(?:now\s+)?(?:it'?s|it\s+is|got|is|was)\s+"
        r"(?:Device::)?(?:CPU|GPU)\b",
        2.0,
        "kvcache-ai/ktransformers:archive/csrc/ktransformers_ext/cuda/gptq_marlin/gptq_marlin.cu",
        "facebookresearch/detectron2:detectron2/layers/csrc/deformable/deform_conv.h",
        "facebookresearch/detectron2:detectron2/layers/deform_conv.py",
        "OpenNMT/CTranslate2:src/ops/flash_attention_cpu.cc",
        "ggml-org/llama.cpp:src/llama-context.cpp",
        "pytorch/pytorch:aten/src/ATen/native/transformers/cuda/sdp_utils.cpp",
        "PaddlePaddle/FastDeploy:fastdeploy/runtime/backends/tensorrt/trt_backend.cc",
        TORCH_CUDA_SEMANTICS,
        # a README's "the fused kernels can only be used on GPU" is a statement: these count beside a failure
        alone=False,
        any_of=("not on", "cpu", "can only be", "device"),
    ),
    _f(
        # a library's binaries for one CUDA against the framework's: bitsandbytes' "CUDA VERSION MISMATCH", "No prebuilt
        # binary for CUDA 12.9, loading CUDA 12.8 instead", "No compatible CUDA binary found at
        # .../libbitsandbytes_cuda131.so"; Unsloth's "vLLM was built for CUDA 12 but this system has CUDA 13.0"
        "a library built for another CUDA than the framework's",
        "toolkit-mismatch",
        r"\bCUDA version mismatch\b"
        r"|\bno (?:prebuilt|precompiled|compatible) (?:CUDA )?binar(?:y|ies) (?:for|found)\b[^\n]{0,80}?cuda\s*_?\d"
        r"|\bbuilt (?:for|with|against) CUDA\s*\d+(?:\.\d+)?,? but (?:this system|torch|PyTorch|the installed \w+) has "
        r"CUDA\s*\d",
        2.0,
        "bitsandbytes-foundation/bitsandbytes:bitsandbytes/cextension.py",
        "unslothai/unsloth:unsloth/import_fixes.py",
        "https://pytorch.org/docs/stable/cpp_extension.html",
        any_of=("mismatch", "binar", "but"),
        veto=r"\bdriver\b",
    ),
    _f(
        # an artefact keyed by the GPU it was made on, found on another: "Device capability changed, invalidating
        # cache" (Unsloth's autotune cache)
        "a cache made for another GPU's capability",
        "mixed-gpu",
        r"\b(?:device|GPU)\s+(?:compute\s+)?capability\s+(?:has\s+)?changed\b",
        2.0,
        "unslothai/unsloth:unsloth/kernels/moe/autotune_cache.py",
        *_MIXED,
        all_of=("changed",),
        # the program handles it (it drops the cache): a report of it counts beside a failure
        alone=False,
    ),
    _f(
        # a check of the SM in the code's own terms, beside its failure: Paddle's "Currently weightonly linear grad only
        # support arch = 80 or 86", TensorRT's plugins' "Assertion failed: smVersion >= kSM_75"
        "an SM check in the code's own terms",
        "capability-guard",
        r"\bonly\s+supports?\s+(?:arch|sm|SM)\s*(?:(?:=|==|:)\s*)?\d{2,3}(?![\w-])"
        r"|\b(?:sm|SM|m?SM)(?:_?[Vv]ersion)?\s*(?:>=|>)\s*kSM_\d{2,3}\b",
        2.0,
        "PaddlePaddle/Paddle:paddle/phi/kernels/gpu/weight_only_linear_grad_kernel.cu",
        "NVIDIA/TensorRT:plugin/bertQKVToContextPlugin/mhaRunner.cu",
        PG_CC,
        any_of=("only support", "ksm_"),
        alone=False,
    ),
    _f(
        # a run-time compiler found only in versions too old to use: XLA's "Couldn't find a suitable version of ptxas.
        # The following locations were considered: /usr/local/cuda-11.4/bin/ptxas, ..." (XLA prints it too where no
        # ptxas is found at all; the way out is the same: a ptxas of CUDA 11.8 or newer)
        "no compiler of a usable version",
        "jit-toolchain-too-old",
        r"\bfind a suitable version of (?:ptxas|nvcc|nvlink)\b",
        2.0,
        "openxla/xla:xla/stream_executor/cuda/subprocess_compilation.cc",
        NVCC_ARCH,
        any_of=("suitable version",),
    ),
    _f(
        # a library with no compiled kernel for the GPU's SM: vLLM's "No compiled <kernel> for SM <n>. Recompile with
        # the appropriate CUDA arch.", "The trtllm-gen GEMM cubin manifest contains no kernels runnable on sm120"
        # (FlashInfer).  vLLM's nvfp4 kernels for SM 10x/12x are a/f code: the catalogue reads those as arch-specific
        "no compiled kernel for the GPU's SM",
        "no-kernel-image",
        r"\bNo compiled [\w -]{1,40}?\bkernels? for (?:SM|sm_?|compute capability)\s?\d"
        r"|\bno\s+(?:\w+\s+){0,2}?(?:kernels?|cubins?)\s+(?:runnable|compatible|available)\s+(?:on|with|for)\s+"
        r"(?:sm_?\s?\d|SM\s?\d)"
        r"|\bRecompile with the appropriate CUDA arch",
        2.25,
        "vllm-project/vllm:csrc/quantization/fp4/nvfp4_quant_entry.cu",
        "flashinfer-ai/flashinfer:csrc/trtllm_gemm_runner.cu",
        PG_COMPAT,
        any_of=("compiled", "no ", "recompile"),
    ),
)


def iter_forms(text: str, *, logged_as_error: bool = False) -> Iterator[tuple[Form, str]]:
    """Each form that ``text`` takes, with the (first) line it is on, trimmed; a form that is only a statement
    (``alone`` false: "requires compute capability 8.0") counts only where the text also reports a failure -- in its
    words, or by the error level its logger wrote before a line (``logged_as_error``: the prefix cleaning took off,
    :data:`cudafit.explain.extract.LOGGED_AS_ERROR`)."""
    failed = logged_as_error or FAILURE.search(text) is not None
    lowered = text.lower()
    for form in FORMS:
        if not (form.alone or failed) or not form.may_match(lowered) or form.vetoed(text):
            continue
        m = form.regex.search(text)
        if m:
            yield form, line_at(text, m.start(), m.end())


def iter_form_sources() -> Iterator[tuple[str, str, str]]:
    """(category, source, pattern) for every form and each emitter it generalises: ``explain --catalogue``'s rows."""
    for form in FORMS:
        for source in form.sources:
            yield form.category, source, form.regex.pattern
