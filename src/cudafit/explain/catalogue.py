"""The failure categories ``cudafit explain`` recognises: ids, patterns with weights, cause, fixes.

Ids and scope are those of shared/docs/error_categories.md.  Each pattern adds its weight to its
category's score when it matches the cleaned text; a category needs :data:`MIN_SCORE` to be
reported.  Weights say how specific a line is: NVIDIA's exact strings (``cudaGetErrorString``,
fatbin_spec.md §E.5, https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html)
and the seeds' messages weigh 3-4, generic words (``AOTI``, ``CUDA_VISIBLE_DEVICES``) weigh ~1 so
that they only count next to a real error.  Causes and fixes here are the ungrounded defaults;
:func:`cudafit.explain.ground` replaces the placeholders with this machine's facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["CATEGORIES", "MIN_SCORE", "Category", "Pattern", "category"]

MIN_SCORE = 1.5


@dataclass(frozen=True)
class Pattern:
    """A regular expression (case-insensitive) and how strongly it points at its category."""

    regex: re.Pattern[str]
    weight: float


@dataclass(frozen=True)
class Category:
    """One failure category of the catalogue, with its ungrounded cause and fixes."""

    id: str
    title: str
    patterns: tuple[Pattern, ...]
    cause: str
    fixes: tuple[str, ...]


def _p(rx: str, weight: float) -> Pattern:
    return Pattern(re.compile(rx, re.I), weight)


PYTORCH_INDEX = "https://download.pytorch.org/whl/"

CATEGORIES: tuple[Category, ...] = (
    # Programming Guide 13 §1.3.4 (https://docs.nvidia.com/cuda/cuda-programming-guide/01-introduction/
    # cuda-platform.html): a cubin runs on the same major with an equal or higher minor, PTX on equal or higher.
    Category(
        "no-kernel-image",
        "no kernel image for this GPU",
        (
            _p(r"no kernel image is available for execution on the device", 3),
            _p(r"cudaErrorNoKernelImageForDevice|CUDA_ERROR_NO_BINARY_FOR_GPU", 3),
            _p(r"\berror(?: code)?[ :=]*209\b", 2),
            _p(r"with CUDA capability sm_\d+ is not compatible with the current PyTorch installation", 3),
            _p(r"PyTorch no longer supports this GPU because it is too old", 3),
            # TensorFlow's check against the compute capabilities it was built for.
            _p(r"Ignoring (?:visible )?gpu device .{0,160}The minimum required Cuda capability is", 3),
            # cudaErrorSymbolNotFound: the loaded module has no such kernel (bitsandbytes built without the arch).
            _p(r"named symbol not found|cudaErrorSymbolNotFound|CUDA_ERROR_NOT_FOUND", 1.5),
            _p(r"device kernel image is invalid|cudaErrorInvalidKernelImage|CUDA_ERROR_INVALID_IMAGE", 2),
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
            _p(r"FATAL: kernel \S+ is for sm_?\d+\s*-\s*sm_?\d+,? but was built for sm_?\d+", 4),
            _p(r"\bbut was built for sm_?\d+", 2),
            # ggml (llama.cpp): the kernel's variant for the arch that ran is a stub (NO_DEVICE_CODE).
            _p(r"has no device code compatible with CUDA arch \d+", 4),
            _p(r"ggml-cuda was compiled without support for the current GPU architecture", 3),
            # TensorFlow: no SASS for the GPU, the driver JIT-compiles the build's lower-arch PTX.
            _p(r"was not built with CUDA kernel binaries compatible with compute capability", 3),
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
    Category(
        "arch-specific-mismatch",
        "code built only for an arch-specific (a) or family (f) target",
        (
            _p(r"(?<![A-Za-z0-9])(?:sm|compute)_?\d{2,3}a(?![A-Za-z0-9])", 1.5),
            _p(r"(?<![A-Za-z0-9])(?:sm|compute)_?\d{3}f(?![A-Za-z0-9])", 1.0),
            _p(r"this kernel only supports sm_?\d+|only supports? sm_?\d{2,3}a?(?![A-Za-z0-9])", 2.5),
            # CUTLASS aborts when an 'a'-only instruction is compiled without its 'a' target (or runs elsewhere).
            _p(r"Arch conditional MMA instruction used without targeting appropriate compute capability", 4),
        ),
        "code compiled for an 'a' target runs only on exactly that compute capability, and 'f' code only on its "
        "family (CUDA Programming Guide §5.1.2): a GPU outside it finds no usable code",
        (
            "use a build that also carries plain sm_XY or PTX code for this GPU (cudafit check 'PKG' --gpu NAME)",
            "or run on the GPU the a/f code was built for",
        ),
    ),
    Category(
        "capability-guard",
        "a library's own capability check refused the GPU",
        (
            _p(r"requires\s+sm_?\s?\d{2,3}\s*\+", 3),
            _p(
                r"requires?\s+(?:GPUs?|GPU's|devices?)\s+(?:with\s+)?sm_?\s?\d{2,3}\s+or\s+(?:higher|newer|above|later)",
                3,
            ),
            # xformers' dispatcher: each operator states the capability range it accepts.
            _p(r"requires device with capability\s*[<>=]+\s*\(\d+, \d+\) but your GPU has capability", 3),
            _p(r"\bbf16 is only supported on A100\+ GPUs", 1),
            # flash-attn 1.x's TORCH_CHECK(is_sm8x || is_sm75).
            _p(r"Expected is_sm\d+x?(?: \|\| is_sm\d+x?)* to be true, but got false", 3),
            _p(r"not compiled with any CUDA arch <= \d+", 3),
            _p(r"No CUDA device found with minimum required compute capability", 3),
            # cuDNN / cuBLAS refusing a GPU without a feature they need.
            _p(r"CUDNN_STATUS_ARCH_MISMATCH|CUBLAS_STATUS_ARCH_MISMATCH|\bERROR: Arch mismatch", 3),
            _p(
                r"(only supports?|requires?)\s+(Maxwell|Pascal|Volta|Turing|Ampere|Ada|Hopper|Blackwell)"
                r"(\s+Lovelace)?\s+(GPUs?\s+)?or\s+(newer|later|above)",
                3,
            ),
            _p(r"(compute capability|GPU architecture)\s*(>=|of at least|at least|≥)\s*\d", 2),
            _p(r"GPUs with compute capability below \d+(\.\d)? are not supported", 3),
            # vLLM's dtype check names the GPU and its capability.
            _p(r"Your .{1,60} GPU has compute capability \d+\.\d+", 2),
            _p(r"requires (a )?(GPU|device) with compute capability", 2),
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
            _p(r"invalid device function|cudaErrorInvalidDeviceFunction|\berror(?: code)?[ :=]*98\b", 2),
            _p(r"CUDA_VISIBLE_DEVICES|CUDA_DEVICE_ORDER", 0.5),
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
            _p(r"the provided PTX was compiled with an unsupported toolchain", 4),
            _p(r"cudaErrorUnsupportedPtxVersion|CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 4),
            _p(r"\berror(?: code)?[ :=]*222\b", 2),
            _p(r"a PTX JIT compilation failed|cudaErrorInvalidPtx|CUDA_ERROR_INVALID_PTX", 1),
            _p(r"driver's CUDA version is [\d.]+ which is older than the (?:PTX compiler|ptxas CUDA) version", 4),
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
            _p(r"ptxas fatal\s*:\s*Value '(sm|compute)_\d+[af]?' is not defined for option 'gpu-name'", 4),
            _p(r"nvcc fatal\s*:\s*Unsupported gpu architecture '(compute|sm)_\d+[af]?'", 4),
            _p(r"Unsupported \.version \d+\.\d+; current version is", 3),
            _p(r"PTXAS error: Internal Triton PTX codegen error", 1),
            _p(r"You are using ptxas [\d.]+, which is older than [\d.]+", 3),
            _p(r"ptxas does not support CC \d+\.\d+|ptxas \S* ?too old", 3),
            _p(r"nvrtc: error: invalid value for --gpu-architecture", 3),
            # Triton / Inductor running its bundled ptxas for the GPU's arch and failing.
            _p(r"ptxas['\"]?,.{0,80}--gpu-name=sm_\d+[af]?.{0,200}non-zero exit status", 2),
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
            _p(r"CUDA driver version is insufficient for CUDA runtime version", 4),
            _p(r"cudaErrorInsufficientDriver|\berror(?: code)?[ :=]*35\b", 2),
            _p(r"The NVIDIA driver on your system is too old", 4),
            _p(r"API call is not supported in the installed CUDA driver|cudaErrorCallRequiresNewerDriver", 3),
        ),
        "the CUDA runtime the program bundles needs a newer driver than the installed one",
        (
            "upgrade the NVIDIA driver (CUDA 13.x runtimes need >= 580, 12.x >= 525, 11.x >= 450 with minor-version "
            "compatibility)",
            "or install a build of the framework made for an older CUDA major (e.g. a cu126 PyTorch wheel: "
            f"pip install torch --index-url {PYTORCH_INDEX}cu126)",
        ),
    ),
    Category(
        "device-mismatch",
        "tensors, model or runner on different devices",
        (
            _p(r"Expected all tensors to be on the same device", 4),
            _p(r"Expected .{0,60} to be on (?:the )?(?:cuda|cpu)|is on (?:cpu|cuda:?\d*), but expected", 3),
            _p(r"AOTIModelContainerRunner(Cpu|Cuda)|AOTInductor|\bAOTI\b|\.pt2\b", 1),
            _p(r"CUDA error: invalid argument", 1),
        ),
        "the model was compiled for one device type and run with a runner or inputs of another (e.g. a "
        "CUDA-compiled AOTInductor package run by the CPU runner with CPU inputs and no cubin directory)",
        (
            "use the CUDA runner for a CUDA-compiled .pt2 (AOTIModelContainerRunnerCuda, with the package's cubin "
            "directory) and move the inputs to cuda (x.to('cuda'))",
            "check the package: cudafit check model.pt2 (shows the device it was compiled for and its cubins)",
        ),
    ),
    # PG13 Table 31: opt-in maximum shared memory per block per compute capability.
    Category(
        "shared-memory-limit",
        "kernel needs more shared memory than the GPU has",
        (
            _p(r"out of resource: shared memory, Required: \d+, Hardware limit: \d+", 4),
            _p(r"uses too much shared data", 3),
            _p(r"shared[_ ]mem(ory)?.{0,40}(exceed|too (much|large)|limit)", 1.5),
        ),
        "a kernel (often a Triton autotune config) asks for more shared memory per block than this GPU's opt-in "
        "maximum",
        (
            "use smaller block sizes / fewer pipeline stages (num_stages) for this GPU (the limit per compute "
            "capability: cudafit gpus NAME --json, limits.max_shared_memory_per_block_optin)",
            "library authors: cudafit.guard.shared_memory_fits(nbytes) answers without crashing on CPU-only machines",
        ),
    ),
    Category(
        "wrong-framework-build",
        "the framework build is not the one expected",
        (
            _p(r"Torch not compiled with CUDA enabled", 4),
            _p(r"torch\.version\.cuda\s*(is|==)\s*None", 3),
            _p(r"Found no NVIDIA driver on your system", 3),
            _p(r"\btorch[ =_\-]*\d+\.\d+(\.\d+)?\+cpu\b", 1),
            _p(r"was compiled without GPU support", 3),
            # a binary linked against a CUDA runtime/library major that is not installed
            _p(
                r"lib(?:cudart|cublas|cublasLt|cudnn|cufft|curand|cusparse|cusolver|nvrtc)\.so\.\d+(?:\.\d+)?: "
                r"cannot open shared object file",
                3,
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
            _p(r"The detected CUDA version \(\d+\.\d+\) mismatches the version that was used to compile\s+PyTorch", 4),
            _p(r"Installed CUDA version [\d.]+ does not match the version torch was compiled with", 4),
            _p(r"CUDAMismatchException|CUDA_MISMATCH_MESSAGE", 2),
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
    # An extension references C++ symbols (c10::, at::, torch::) of the PyTorch it was compiled against.
    Category(
        "extension-abi-mismatch",
        "a compiled extension was built against another PyTorch",
        (
            _p(r"\.so: undefined symbol: _ZN?K?\d*(?:3c10|2at|5torch)", 4),
            _p(r"undefined symbol: _Z\w{6,}", 2),
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
