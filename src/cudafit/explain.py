"""``cudafit explain``: classify CUDA failure messages and say the cause and the fix.

Categories and ids are those of shared/docs/error_categories.md.  Text is cleaned first (ANSI
colours, timestamps, Windows paths), facts are extracted (arch numbers, kernel names, error codes,
sizes, package names from site-packages paths), every category is scored by the patterns that
match, and findings come out most likely first; ``unknown`` when nothing matches with confidence.
:func:`ground` then uses this machine's GPUs and packages, when given, to make causes and fixes
concrete.  NVIDIA's error strings and codes: fatbin_spec.md §E.5 (cudaGetErrorString of
libcudart 13.0).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["CATEGORIES", "Context", "Finding", "classify", "extract_facts", "ground"]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_TIMESTAMP = re.compile(r"^\s*\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}[.,\d]*\]?\s*", re.M)


@dataclass(frozen=True)
class Pattern:
    """A regular expression and how strongly it points at a category."""

    regex: re.Pattern[str]
    weight: float


@dataclass(frozen=True)
class Category:
    """One failure category of the catalogue."""

    id: str
    title: str
    patterns: tuple[Pattern, ...]
    cause: str
    fixes: tuple[str, ...]


def _p(rx: str, weight: float) -> Pattern:
    return Pattern(re.compile(rx, re.I), weight)


CATEGORIES: tuple[Category, ...] = (
    Category(
        "no-kernel-image",
        "no kernel image for this GPU",
        (
            _p(r"no kernel image is available for execution on the device", 3),
            _p(r"cudaErrorNoKernelImageForDevice|CUDA_ERROR_NO_BINARY_FOR_GPU", 3),
            _p(r"\berror (?:code )?209\b", 2),
            _p(r"with CUDA capability sm_\d+ is not compatible with the current PyTorch installation", 3),
        ),
        "the binary has no cubin for this GPU's compute capability and no PTX it can JIT-compile "
        "(built for older or newer GPUs only)",
        (
            "see which archs the failing package carries: cudafit doctor (or cudafit scan PATH)",
            "install a build that includes this GPU's arch, verified first with cudafit check 'PKG==VER' --gpu NAME",
            'or rebuild from source with the GPU in the arch list: TORCH_CUDA_ARCH_LIST="<cc>" '
            "(cudafit plan --gpu NAME)",
        ),
    ),
    Category(
        "ptx-jit-lower-arch",
        "kernel JIT-compiled from PTX for a lower arch",
        (
            _p(r"FATAL: kernel \S+ is for sm\d+-sm\d+, but was built for sm\d+", 4),
            _p(r"\bbut was built for sm_?\d+", 2),
        ),
        "the extension has no cubin for this GPU, so the driver JIT-compiled PTX built for a lower arch; the "
        "kernel checks __CUDA_ARCH__ and refuses to run that lower-arch path",
        (
            'rebuild the extension for every GPU of the host: TORCH_CUDA_ARCH_LIST="<all ccs>" '
            "(cudafit plan --gpu NAME --gpu NAME)",
            "or run on the GPU the extension was built for (CUDA_VISIBLE_DEVICES)",
        ),
    ),
    Category(
        "arch-specific-mismatch",
        "code built only for an arch-specific (a) or family (f) target",
        (
            _p(r"\bsm_?\d{2,3}a\b", 1.5),
            _p(r"\bsm_?\d{3}f\b", 1.0),
            _p(r"this kernel only supports sm_?\d+|only supports? sm_?\d{2,3}a?\b", 2.5),
        ),
        "code compiled for an 'a' target runs only on exactly that compute capability, 'f' code only on its "
        "family (CUDA Programming Guide §5.1.2)",
        (
            "use a build that also carries plain sm_XY or PTX code for this GPU (cudafit check 'PKG==VER' --gpu NAME)",
            "or run on the GPU the a/f code was built for",
        ),
    ),
    Category(
        "capability-guard",
        "a library's own capability check refused the GPU",
        (
            _p(r"requires\s+sm_?\s?\d{2,3}\s*\+", 3),
            _p(r"(only supports|requires)\s+(Turing|Ampere|Ada|Hopper|Blackwell|Volta)\s+GPUs?\s+or\s+newer", 3),
            _p(r"(compute capability|GPU architecture)\s+(>=|of at least|at least)\s*\d", 2),
            _p(r"requires (a )?(GPU|device) with compute capability", 2),
        ),
        "the library checked the GPU's capability itself; such guards are sometimes wrong (seed 000: "
        "FlashInfer tested the arch flags it was compiled with, not the device it runs on)",
        (
            "compare the guard's minimum with the GPU: cudafit gpus (shows each GPU's compute capability)",
            "if the GPU meets the minimum, the guard is wrong: upgrade the library or report it; library authors "
            "can use cudafit.guard.require_capability, which checks the device",
        ),
    ),
    Category(
        "mixed-gpu",
        "mixed GPUs or device numbering",
        (
            _p(r"invalid device function|cudaErrorInvalidDeviceFunction|\berror (code )?98\b", 2),
            _p(r"CUDA_VISIBLE_DEVICES|CUDA_DEVICE_ORDER", 0.5),
        ),
        "code built for one card runs on another of a different compute capability, or device numbers differ "
        "between nvidia-smi (PCI order) and CUDA (fastest first)",
        (
            "see both numberings: cudafit gpus; export CUDA_DEVICE_ORDER=PCI_BUS_ID to make them agree",
            'build for every GPU of the host: TORCH_CUDA_ARCH_LIST="<all ccs>" (cudafit plan --gpu ... --gpu ...)',
        ),
    ),
    Category(
        "ptx-too-new-for-driver",
        "PTX newer than the driver's JIT",
        (
            _p(r"the provided PTX was compiled with an unsupported toolchain", 4),
            _p(r"cudaErrorUnsupportedPtxVersion|CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 4),
            _p(r"\berror (code )?222\b", 2),
        ),
        "the PTX was generated by a newer CUDA toolkit than the driver supports (its PTX ISA is too new for the "
        "driver's JIT)",
        (
            "upgrade the NVIDIA driver to the minimum of the toolkit that built the package (cudafit doctor names it)",
            "or install a build made with an older CUDA toolkit",
        ),
    ),
    Category(
        "jit-toolchain-too-old",
        "run-time compiler does not know the GPU",
        (
            _p(r"ptxas fatal\s*:\s*Value 'sm_\d+[af]?' is not defined for option 'gpu-name'", 4),
            _p(r"nvcc fatal\s*:\s*Unsupported gpu architecture 'compute_\d+[af]?'", 4),
            _p(r"ptxas.*Unsupported \.version", 2),
        ),
        "a compiler used at run time (nvcc for JIT libraries, Triton's bundled ptxas) predates this GPU's arch",
        (
            "point Triton at a newer ptxas: export TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas (a toolkit that "
            "lists the arch in nvcc --list-gpu-code)",
            "or install a CUDA toolkit that targets the GPU and set CUDA_HOME to it "
            "(cudafit gpus lists the nvcc found)",
        ),
    ),
    Category(
        "driver-too-old",
        "driver older than the CUDA runtime",
        (
            _p(r"CUDA driver version is insufficient for CUDA runtime version", 4),
            _p(r"cudaErrorInsufficientDriver|\berror (code )?35\b", 2),
            _p(r"The NVIDIA driver on your system is too old", 4),
        ),
        "the CUDA runtime the program bundles needs a newer driver than the installed one",
        (
            "upgrade the NVIDIA driver (CUDA 13.x needs >= 580, 12.x >= 525 with minor-version compatibility)",
            "or install a build of the framework made for an older CUDA (e.g. a cu126 PyTorch wheel)",
        ),
    ),
    Category(
        "device-mismatch",
        "tensors, model or runner on different devices",
        (
            _p(r"Expected all tensors to be on the same device", 4),
            _p(r"AOTIModelContainerRunnerCpu|AOTIModelContainerRunnerCuda|AOTI|AOTInductor|\.pt2\b", 1.5),
            _p(r"CUDA error: invalid argument", 1.5),
            _p(r"(input|tensor).{0,40}\bon (cpu|cuda)\b", 1),
        ),
        "the model was compiled for one device type and run with a runner or inputs of another (seed 003: a "
        "CUDA-compiled AOTInductor package run by the CPU runner with CPU inputs and no cubin directory)",
        (
            "use the runner of the package's device (AOTIModelContainerRunnerCuda for CUDA packages) and give it "
            "the cubin directory; move the inputs to cuda (x.to('cuda'))",
            "check the package: cudafit check model.pt2 (shows the device it was compiled for and its cubins)",
        ),
    ),
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
            "use smaller block sizes / fewer pipeline stages for this GPU (the limit per compute capability: "
            "cudafit gpus NAME --json, limits.max_shared_memory_per_block_optin)",
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
        ),
        "the installed framework is a CPU-only build (or another CUDA major than expected), or no driver is present",
        (
            "install the CUDA build: pip install torch --index-url https://download.pytorch.org/whl/cu130 (or cu128, "
            "cu126 for older drivers), after checking it with cudafit check",
            "check which torch is imported and its CUDA version: cudafit gpus (toolchains section)",
        ),
    ),
)

_BY_ID = {c.id: c for c in CATEGORIES}
_MIN_SCORE = 1.5


@dataclass(frozen=True)
class Finding:
    """One explanation: category, the evidence found, the cause, and fixes."""

    category: str
    title: str
    score: float
    evidence: dict[str, Any]
    cause: str
    fixes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "category": self.category,
            "title": self.title,
            "confidence": round(min(1.0, self.score / 4), 2),
            "evidence": self.evidence,
            "cause": self.cause,
            "fixes": list(self.fixes),
        }


@dataclass(frozen=True)
class Context:
    """What is known about the machine: GPUs (name, compute capability), packages and their archs, driver."""

    gpus: Sequence[tuple[str, Any]] = ()
    packages: dict[str, list[str]] = field(default_factory=dict)
    driver: str | None = None


def clean(text: str) -> str:
    """Strip ANSI colours and leading timestamps; normalise Windows separators."""
    text = _ANSI.sub("", text)
    text = _TIMESTAMP.sub("", text)
    return text.replace("\\\\", "/").replace("\\", "/")


def extract_facts(text: str) -> dict[str, Any]:
    """Facts in a log: archs, arch ranges, kernel names, error codes, sizes, packages."""
    facts: dict[str, Any] = {}
    archs = sorted(
        set(re.findall(r"\b(?:sm|compute)_?(\d{2,3}[af]?)\b", text, re.I)), key=lambda a: int(a.rstrip("af"))
    )
    if archs:
        facts["archs"] = [f"sm_{a}" for a in archs]
    m = re.search(r"is for sm(\d+)-sm(\d+), but was built for sm(\d+)", text)
    if m:
        facts["kernel_arch_range"] = [f"sm_{m.group(1)}", f"sm_{m.group(2)}"]
        facts["built_for"] = f"sm_{m.group(3)}"
    kernels = re.findall(r"kernel\s+([A-Za-z_][\w:<>,]*)", text)
    if kernels:
        facts["kernels"] = sorted(set(kernels))[:10]
    codes = re.findall(r"\b(cuda(?:Error\w+)|CUDA_ERROR_\w+)\b", text)
    if codes:
        facts["error_names"] = sorted(set(codes))
    nums = re.findall(r"\berror (?:code )?(\d{1,4})\b", text, re.I)
    if nums:
        facts["error_codes"] = sorted({int(n) for n in nums})
    m = re.search(r"Required: (\d+), Hardware limit: (\d+)", text)
    if m:
        facts["shared_memory_required"] = int(m.group(1))
        facts["shared_memory_limit"] = int(m.group(2))
    m = re.search(r"requires\s+sm_?\s?(\d{2,3})\s*\+", text, re.I)
    if m:
        facts["required_minimum"] = f"sm_{m.group(1)}"
    pkgs = re.findall(r"(?:site|dist)-packages/([A-Za-z0-9_\-.]+?)(?:/|\.py|$)", text)
    if pkgs:
        facts["packages"] = sorted({p.split("-")[0] for p in pkgs if not p.endswith(".dist-info")})
    m = re.search(r"with CUDA capability sm_(\d+)", text)
    if m:
        facts["gpu_capability"] = f"sm_{m.group(1)}"
    return facts


def _matched_lines(text: str, pattern: re.Pattern[str]) -> list[str]:
    return [line.strip()[:300] for line in text.splitlines() if pattern.search(line)][:3]


def classify(text: str) -> list[Finding]:
    """Score every category on ``text``; most likely first, ``unknown`` alone when none is confident."""
    body = clean(text)
    facts = extract_facts(body)
    scored: list[Finding] = []
    for cat in CATEGORIES:
        score = 0.0
        lines: list[str] = []
        for pat in cat.patterns:
            if pat.regex.search(body):
                score += pat.weight
                lines.extend(_matched_lines(body, pat.regex))
        if (
            cat.id == "arch-specific-mismatch"
            and score
            and not re.search(r"no kernel image|only supports|cudaErrorNoKernelImage", body, re.I)
        ):
            score = 0.0  # an 'a' arch alone is not a failure
        if score >= _MIN_SCORE:
            evidence = {"lines": list(dict.fromkeys(lines))[:5], **facts}
            scored.append(Finding(cat.id, cat.title, score, evidence, cat.cause, cat.fixes))
    # An arch-specific log is a sharper diagnosis of the same "no kernel image" error.
    ids = {f.category for f in scored}
    if "arch-specific-mismatch" in ids and "no-kernel-image" in ids:
        scored = [replace(f, score=f.score + 2) if f.category == "arch-specific-mismatch" else f for f in scored]
    scored.sort(key=lambda f: -f.score)
    if not scored:
        return [
            Finding(
                "unknown",
                "not a known CUDA compatibility failure",
                0.0,
                facts,
                "none of cudafit's failure categories matches this text with confidence",
                ("run cudafit doctor to check this environment against its GPUs",),
            )
        ]
    return scored


def ground(findings: Sequence[Finding], context: Context) -> list[Finding]:
    """Make causes and fixes concrete with the machine's GPUs and packages (when known)."""
    from cudafit.fixes import arch_list_for
    from cudafit.model import parse_compute_capability

    ccs = [cc for _n, cc in context.gpus]
    out: list[Finding] = []
    for f in findings:
        cause = f.cause
        fixes = list(f.fixes)
        if ccs:
            plan = arch_list_for(ccs)
            gpus = ", ".join(f"{n} ({cc})" for n, cc in context.gpus)
            fixes = [x.replace("<all ccs>", plan).replace("<cc>", plan) for x in fixes]
            cause += f". This machine has: {gpus}"
        if f.category == "capability-guard" and "required_minimum" in f.evidence and ccs:
            need = parse_compute_capability(f.evidence["required_minimum"])
            ok = [f"{n} ({cc})" for n, cc in context.gpus if cc >= need]
            if ok:
                cause = (
                    f"the guard requires {f.evidence['required_minimum']}, and {', '.join(ok)} meets it: the check "
                    "looked at something other than the device (e.g. the arch flags the library was compiled with, "
                    "as in seed 000), so the guard is wrong"
                )
        lacking = []
        for pkg in f.evidence.get("packages", []):
            archs = context.packages.get(pkg)
            if archs is not None and ccs:
                missing = [str(cc) for cc in ccs if f"sm_{cc.arch_number}" not in archs]
                if missing:
                    lacking.append(
                        f"{pkg} carries {', '.join(archs) or 'no device code'} (none for {', '.join(missing)})"
                    )
        if lacking:
            cause += "; " + "; ".join(lacking)
        if context.driver and f.category in ("ptx-too-new-for-driver", "driver-too-old"):
            cause += f". Installed driver: {context.driver}"
        out.append(replace(f, cause=cause, fixes=tuple(fixes)))
    return out


def category(cat_id: str) -> Category:
    """A category by id (KeyError for unknown ids)."""
    return _BY_ID[cat_id]
