"""Facts in a pasted CUDA error message or log, extracted from text alone.

Real logs wrap the one line that matters in tracebacks, ANSI colours, timestamps, Windows paths
and other languages' punctuation (shared/docs/error_categories.md), so :func:`clean` normalises
first and every extractor is a plain regular expression over the cleaned text.  The CUDA error
names, codes and strings are those of ``cudaGetErrorName`` / ``cudaGetErrorString`` (libcudart
13.0) and ``cuda.h``: https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html
(fatbin_spec.md §E.5).  Nothing here looks at the machine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CUDA_ERRORS",
    "CudaError",
    "arch_number",
    "clean",
    "extract_facts",
    "iter_cuda_errors",
]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
# "2026-11-20 10:00:01,123", "[2026-11-20T10:00:01.5Z]", "I1120 10:00:01.123456 1234 file.cc:12]" (glog)
_TIMESTAMP = re.compile(
    r"^\s*(?:\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?Z?\]?"
    r"|[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+\s+\S+\])\s*",
    re.M,
)
# Full-width punctuation that Chinese/Japanese write-ups put around the English message.
_WIDE = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "：": ": ", "，": ", ", "（": " (", "）": ") "})


@dataclass(frozen=True)
class CudaError:
    """One CUDA error as the runtime names it (``cudaError_t``), with its driver-API twin."""

    code: int
    name: str
    string: str
    driver_name: str | None = None


# libcudart 13.0's own strings (fatbin_spec.md §E.5), plus the few neighbours logs carry.
CUDA_ERRORS: tuple[CudaError, ...] = (
    CudaError(1, "cudaErrorInvalidValue", "invalid argument", "CUDA_ERROR_INVALID_VALUE"),
    CudaError(35, "cudaErrorInsufficientDriver", "CUDA driver version is insufficient for CUDA runtime version"),
    CudaError(36, "cudaErrorCallRequiresNewerDriver", "API call is not supported in the installed CUDA driver"),
    CudaError(98, "cudaErrorInvalidDeviceFunction", "invalid device function"),
    CudaError(100, "cudaErrorNoDevice", "no CUDA-capable device is detected", "CUDA_ERROR_NO_DEVICE"),
    CudaError(200, "cudaErrorInvalidKernelImage", "device kernel image is invalid", "CUDA_ERROR_INVALID_IMAGE"),
    CudaError(
        209,
        "cudaErrorNoKernelImageForDevice",
        "no kernel image is available for execution on the device",
        "CUDA_ERROR_NO_BINARY_FOR_GPU",
    ),
    CudaError(218, "cudaErrorInvalidPtx", "a PTX JIT compilation failed", "CUDA_ERROR_INVALID_PTX"),
    CudaError(221, "cudaErrorJitCompilerNotFound", "PTX JIT compiler library not found"),
    CudaError(
        222,
        "cudaErrorUnsupportedPtxVersion",
        "the provided PTX was compiled with an unsupported toolchain.",
        "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    ),
    CudaError(
        223,
        "cudaErrorJitCompilationDisabled",
        "PTX JIT compilation was disabled",
        "CUDA_ERROR_JIT_COMPILATION_DISABLED",
    ),
    CudaError(804, "cudaErrorCompatNotSupportedOnDevice", "forward compatibility was attempted on non supported HW"),
)

# A GPU architecture named in a library's guard -> its first compute capability (CUDA
# Programming Guide, compute capabilities table; shared/reference/compute_capabilities.csv).
ARCHITECTURE_MIN_CC: dict[str, str] = {
    "maxwell": "5.0",
    "pascal": "6.0",
    "volta": "7.0",
    "turing": "7.5",
    "ampere": "8.0",
    "ada": "8.9",
    "hopper": "9.0",
    "blackwell": "10.0",
}


def clean(text: str) -> str:
    """Strip ANSI colours and leading timestamps; unify Windows separators and wide punctuation."""
    text = _ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    text = _TIMESTAMP.sub("", text)
    return text.translate(_WIDE).replace("\\\\", "/").replace("\\", "/")


def arch_number(arch: str) -> int:
    """``sm_90a`` / ``compute_120f`` / ``sm80`` -> 90 / 120 / 80."""
    m = re.search(r"(\d{2,3})", arch)
    if not m:
        msg = f"not an arch name: {arch!r}"
        raise ValueError(msg)
    return int(m.group(1))


def _cc_of(number: str) -> str:
    n = int(number)
    return f"{n // 10}.{n % 10}"


def iter_cuda_errors(text: str) -> list[CudaError]:
    """The CUDA errors a text names by runtime/driver name, by string, or by ``error (code) N``."""
    found: list[CudaError] = []
    codes = {int(c) for c in re.findall(r"\berror(?: code)?[ :=]*(\d{1,3})\b", text, re.I)}
    codes |= {int(c) for c in re.findall(r"\bcudaError\w*\s*\(?(\d{1,3})\)?", text)}
    for err in CUDA_ERRORS:
        if (
            err.name in text
            or (err.driver_name and err.driver_name in text)
            or err.string.rstrip(".").lower() in text.lower()
            or err.code in codes
        ):
            found.append(err)
    # "invalid argument" is too common a phrase to stand alone: only as a CUDA error.
    return [
        e
        for e in found
        if e.code != 1
        or re.search(
            r"CUDA error: invalid argument|cudaErrorInvalidValue|"
            r"CUDA_ERROR_INVALID_VALUE",
            text,
        )
    ]


def _uniq(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _sorted_archs(archs: list[str]) -> list[str]:
    return sorted(set(archs), key=lambda a: (arch_number(a), a))


def extract_facts(text: str) -> dict[str, Any]:
    """Facts in ``text`` (cleaned first): a JSON-ready dict with only the keys found.

    Keys: ``archs`` (every sm_/compute_ target named, canonical ``sm_XY[a|f]``), ``arch_range`` and
    ``built_for`` (``FATAL: kernel K is for smA-smB, but was built for smC``), ``kernels``,
    ``operators`` (``torch.ops.ns.op``), ``cuda_errors`` (code, name, string), ``shared_memory``
    (required/limit bytes), ``required_minimum`` (a capability guard's minimum CC), ``packages``
    (from site-/dist-packages paths), ``gpus`` (name and CC from torch's warnings),
    ``build_archs`` (the archs a torch build says it supports), ``driver_cuda_version``,
    ``driver_version``, ``ptx_isa`` (needed/supported from ptxas), ``unsupported_target``,
    ``torch_version``, ``aoti_runner``, ``devices``, ``triton``.
    """
    text = clean(text)
    facts: dict[str, Any] = {}

    archs = [
        f"sm_{num}{var.lower()}"
        for num, var in re.findall(r"(?<![A-Za-z0-9])(?:sm|compute)_?(\d{2,3})([afAF]?)(?![A-Za-z0-9])", text)
    ]
    if archs:
        facts["archs"] = _sorted_archs(archs)
    m = re.search(r"is for sm_?(\d+)\s*-\s*sm_?(\d+),? but was built for sm_?(\d+)", text)
    if m:
        facts["arch_range"] = [f"sm_{m.group(1)}", f"sm_{m.group(2)}"]
        facts["built_for"] = f"sm_{m.group(3)}"

    kernels = re.findall(r"\bkernel[\s`'\"]+([A-Za-z_][\w:<>,]*)", text)
    kernels += re.findall(r"\b(_Z\w{4,})", text)
    kernels = [k for k in kernels if k.lower() not in {"image", "errors", "launch", "is", "the", "for", "in"}]
    if kernels:
        facts["kernels"] = _uniq(kernels)[:10]
    ops = re.findall(r"torch\.ops\.(\w+\.\w+)", text)
    if ops:
        facts["operators"] = _uniq(ops)[:10]

    errors = iter_cuda_errors(text)
    if errors:
        facts["cuda_errors"] = [{"code": e.code, "name": e.name, "string": e.string} for e in errors]

    m = re.search(r"Required:\s*(\d+),\s*Hardware limit:\s*(\d+)", text)
    if m:
        facts["shared_memory"] = {"required": int(m.group(1)), "limit": int(m.group(2))}

    m = re.search(r"requires\s+sm_?\s?(\d{2,3})\s*\+", text, re.I) or re.search(
        r"(?:compute capability|GPU architecture|capability)\s*(?:>=|of at least|at least|≥)\s*(?:sm_?)?(\d+(?:\.\d)?)",
        text,
        re.I,
    )
    if m:
        value = m.group(1)
        facts["required_minimum"] = value if "." in value else _cc_of(value)
    else:
        m = re.search(
            r"(?:only supports?|requires?)\s+(Maxwell|Pascal|Volta|Turing|Ampere|Ada|Hopper|Blackwell)"
            r"(?:\s+Lovelace)?\s+(?:GPUs?\s+)?(?:or\s+(?:newer|later|above))",
            text,
            re.I,
        )
        if m:
            facts["required_minimum"] = ARCHITECTURE_MIN_CC[m.group(1).lower()]
            facts["required_architecture"] = m.group(1).capitalize()

    pkgs = [
        f"nvidia/{sub}" if top == "nvidia" and sub else top
        for top, sub in re.findall(r"(?:site|dist)-packages/([A-Za-z0-9_.\-]+)(?:/([A-Za-z0-9_\-]+)/)?", text)
    ]
    names = [p.split("-")[0] if p.endswith((".dist-info", ".egg-info")) else p for p in pkgs]
    names = [n.removesuffix(".py").removesuffix(".so") for n in names if not n.startswith(("_", "."))]
    names = [n if n.startswith("nvidia/") else n.split(".")[0] for n in names if n]
    if names:
        facts["packages"] = _uniq(names)

    gpus: list[dict[str, str]] = []
    for name, num in re.findall(r"([A-Z][\w \-]*?) with CUDA capability sm_(\d+) is not compatible", text):
        gpus.append({"name": name.strip(), "compute_capability": _cc_of(num)})
    for name, cc in re.findall(r"Found GPU\d+ (.+?) which is of cuda capability (\d+\.\d+)", text, re.I):
        gpus.append({"name": name.strip(), "compute_capability": cc})
    if gpus:
        facts["gpus"] = [dict(t) for t in dict.fromkeys(tuple(g.items()) for g in gpus)]
    m = re.search(r"supports CUDA capabilities ((?:sm_\d+[af]?[\s,]*)+)", text)
    if m:
        facts["build_archs"] = _sorted_archs(re.findall(r"sm_\d+[af]?", m.group(1)))
    m = re.search(r"minimum cuda capability (?:that we )?support(?:ed)? (?:by this library )?is (\d+\.\d+)", text, re.I)
    if m:
        facts["build_min_cc"] = m.group(1)

    m = re.search(r"too old \(found version (\d{4,5})\)", text) or re.search(
        r"driver (?:API )?version[:= ]+(\d{4,5})\b", text, re.I
    )
    if m:
        v = int(m.group(1))
        facts["driver_cuda_version"] = f"{v // 1000}.{(v % 1000) // 10}"
    m = re.search(r"Driver Version:\s*(\d{3,4}(?:\.\d+){1,2})", text)
    if m:
        facts["driver_version"] = m.group(1)

    m = re.search(r"Unsupported \.version (\d+\.\d+); current version is '(\d+\.\d+)'", text)
    if m:
        facts["ptx_isa"] = {"needed": m.group(1), "supported": m.group(2)}
    m = re.search(r"Value '((?:sm|compute)_\d+[af]?)' is not defined for option 'gpu-name'", text) or re.search(
        r"Unsupported gpu architecture '((?:sm|compute)_\d+[af]?)'", text
    )
    if m:
        facts["unsupported_target"] = m.group(1)

    m = re.search(
        r"\btorch(?:\s*==\s*|\s+|[-_ ]version[: ]+|\.__version__\s*[:=]?\s*)"
        r"(\d+\.\d+(?:\.\d+)?\+(?:cu\d+|cpu|rocm[\d.]+))",
        text,
    )
    if m:
        facts["torch_version"] = m.group(1)
    m = re.search(r"AOTIModelContainerRunner(Cpu|Cuda)", text)
    if m:
        facts["aoti_runner"] = m.group(1).lower()
    devs = re.findall(r"\b(cuda:\d+|cpu)\b(?= and | ?!|,|\)| ?$)", text, re.M)
    if devs and re.search(r"same device|device type|on the same", text, re.I):
        facts["devices"] = _uniq(devs)
    if re.search(r"\btriton\b", text, re.I):
        facts["triton"] = True
    return facts
