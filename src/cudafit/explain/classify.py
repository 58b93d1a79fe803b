"""Score every catalogue category on a message and rank the findings, most likely first.

Several categories often match one log (a torch warning *and* the ``no kernel image`` error; an
``sm_90a`` next to ``no kernel image``).  Scores add the weights of matching patterns; a few
precedence rules then pick the root cause: an ``a``/``f`` arch beside ``no kernel image`` is the
sharper diagnosis of the same failure, and the ``FATAL ... built for smXX`` line names the cause
of any ``invalid device function`` around it.  ``unknown`` is returned alone when nothing reaches
:data:`~cudafit.explain.catalogue.MIN_SCORE`: saying so beats guessing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from cudafit.audit.spec import parse_require
from cudafit.errors import CudafitError
from cudafit.explain.arch_features import (
    GpuMention,
    iter_arch_features,
    iter_gpu_mentions,
    iter_support_claims,
    line_at,
    names_blackwell,
    target_covers,
)
from cudafit.explain.builds import iter_build_targets, serves
from cudafit.explain.catalogue import (
    CATEGORIES,
    CUDART,
    CUDRV,
    CUT_SHORT_MESSAGES,
    CUT_SHORT_MIN,
    CUTLASS_STATUS,
    DRIVER_JIT,
    FA3_API,
    FA3_BUILD,
    FLASH_ATTN_BWD,
    FLASH_ATTN_LAUNCH,
    FLASHMLA_BUILD,
    GGML_COMMON,
    KOKKOS_CUDA,
    MACHETE_BUILD,
    MIN_SCORE,
    PLAIN_CUTE_ATOM,
    TORCH_CUDA,
    TORCH_SER,
    TRITON_CACHE,
    UNKNOWN,
    VLLM_CUTLASS_CHECK,
    XFORMERS,
    Category,
    project_of,
)
from cudafit.explain.evidence import Evidence, Facts
from cudafit.explain.extract import CUDA_ERRORS, LOGGED_AS_ERROR, arch_number, clean, extract_facts
from cudafit.explain.forms import (
    AF_DOC,
    BEST_PRACTICES,
    BUILD_FORM_NAME,
    BUILT_ON_A_GPU_RUN_ON_ANOTHER,
    CUDA_FAILURE,
    FAILURE,
    MISBEHAVES,
    MIXED_HOST_STATED,
    SLOW_WORDS,
    UNRELATED_WORDS,
    iter_forms,
)
from cudafit.explain.hw_features import iter_features_lacking
from cudafit.explain.lexicon import VOCABULARIES, iter_vocabulary_lines
from cudafit.explain.libraries import iter_libraries_refusing
from cudafit.model import (
    ComputeCapability,
    CudaVersion,
    JsonDict,
    parse_compute_capability,
    parse_cuda_version,
    parse_sm_arch,
)
from cudafit.rules.tables import load_tables, toolkit_min_driver

__all__ = ["HOPPER_ONLY", "Finding", "classify"]

_MAX_LINES = 5


@dataclass(frozen=True)
class Finding:
    """One explanation of the text: category, evidence, cause and fixes, and how sure it is.

    ``evidence`` holds ``lines`` (the matching lines, trimmed), ``sources`` (the emitters whose messages
    matched: ``owner/repo:path`` or NVIDIA documentation URLs, see :mod:`.catalogue`), ``emitters`` (their
    projects, e.g. ``ctranslate2``) and the extracted facts (:func:`cudafit.explain.extract.extract_facts`);
    ``confidence`` is in [0, 1].
    """

    category: str
    title: str
    confidence: float
    evidence: Evidence
    cause: str
    fixes: tuple[str, ...]
    score: float = 0.0

    def to_dict(self) -> JsonDict:
        """JSON form (one item of ``cudafit.explain/1``'s ``findings``)."""
        return {
            "category": self.category,
            "title": self.title,
            "confidence": self.confidence,
            "evidence": self.evidence,
            "cause": self.cause,
            "fixes": list(self.fixes),
        }


def _confidence(score: float) -> float:
    return round(min(1.0, score / 4.0), 2)


def _evidence(lines: Sequence[str], sources: Sequence[str], facts: Facts) -> Evidence:
    """The matching lines (each once, five at most), the sources and their projects, then the text's facts."""
    evidence: Evidence = {"lines": list(dict.fromkeys(lines))[:_MAX_LINES]}
    if sources:
        evidence["sources"] = list(dict.fromkeys(sources))
        emitters = [p for p in dict.fromkeys(project_of(s) for s in sources) if p]
        if emitters:
            evidence["emitters"] = emitters
    # Facts are Evidence's own keys; mypy cannot merge two TypedDicts, hence the one cast.
    return cast("Evidence", {**evidence, **facts})


def _finding(cat: Category, score: float, lines: list[str], facts: Facts, sources: Sequence[str]) -> Finding:
    evidence = _evidence(lines, sources, facts)
    return Finding(cat.id, cat.title, _confidence(score), evidence, cat.cause, cat.fixes, score)


def _matched_lines(body: str, pattern: re.Pattern[str]) -> list[str]:
    """The lines a pattern matches; a match spanning lines (a wrapped message) is quoted as those lines joined."""
    lines = [line.strip()[:300] for line in body.splitlines() if pattern.search(line)]
    if not lines:
        for m in pattern.finditer(body):
            start = body.rfind("\n", 0, m.start()) + 1
            end = body.find("\n", m.end())
            lines.append(" ".join(part.strip() for part in body[start : end if end >= 0 else None].splitlines())[:300])
    return lines[:3]


@dataclass(frozen=True)
class _Match:
    """How one category matched: summed weight, quoted lines, its strongest pattern, where it last matched,
    and the sources of the patterns that matched, strongest first."""

    score: float
    lines: tuple[str, ...]
    strongest: float
    last: int
    sources: tuple[str, ...]


def _score(cat: Category, body: str) -> _Match | None:
    score, strongest, last = 0.0, 0.0, -1
    lines: list[str] = []
    sources: list[tuple[float, str]] = []
    for pat in cat.patterns:
        hits = list(pat.regex.finditer(body))
        if hits:
            score += pat.weight
            strongest = max(strongest, pat.weight)
            last = max(last, hits[-1].start())
            lines.extend(_matched_lines(body, pat.regex))
            sources.append((pat.weight, pat.source))
    if not score:
        return None
    # A weak match that a veto explains otherwise (/dev/shm for "shared memory") is not this category.
    if strongest < 3 and any(v.regex.search(body) for v in cat.vetoes):
        return None
    ordered = tuple(src for _w, src in sorted(sources, key=lambda ws: -ws[0]))
    return _Match(score, tuple(lines), strongest, last, ordered)


def _distinct_ccs(facts: Facts) -> set[str]:
    """The compute capabilities of the GPUs the text lists (``gpus``) or names in prose (``mentioned_gpus``)."""
    return {g["compute_capability"] for g in [*facts.get("gpus", []), *facts.get("mentioned_gpus", [])]}


@dataclass
class _Scoring:
    """The categories' scores (and quoted lines) while the precedence rules adjust them, with what they read."""

    scores: dict[str, tuple[float, list[str]]]
    matches: dict[str, _Match]
    facts: Facts
    body: str
    # a rule found the text to be no compatibility failure (what matched means something else): no form is read
    settled: bool = False
    # a logger wrote an error level before a line (taken off by cleaning): the text reports a failure
    logged_as_error: bool = False

    def bump(self, cat_id: str, delta: float) -> None:
        if cat_id in self.scores:
            self.scores[cat_id] = (self.scores[cat_id][0] + delta, self.scores[cat_id][1])


# Libraries whose builds are a/f-only, and their targets (the build files the catalogue cites): FlashMLA's setup.py
# (sm_90a, sm_100f), FlashAttention-3's hopper/setup.py (sm_90a, sm_100a; its sm_80 cubins are optional), vLLM's
# Machete (9.0a).
_AF_ONLY_BUILDS: dict[str, tuple[str, ...]] = {
    FLASHMLA_BUILD: ("sm_90a", "sm_100f"),
    FA3_BUILD: ("sm_90a", "sm_100a"),
    MACHETE_BUILD: ("sm_90a",),
}
# "no kernel image" as titles and excerpts cut it ("... no kernel image is availa")
_MISSING_IMAGE = re.compile(r"\bno kernel image\b", re.I)
_FAILED = re.compile(r"\b(?:error|fail(?:s|ed|ure)?|crash(?:es|ed)?|exception|abort(?:s|ed)?)\b", re.I)


def _arch_specific_beside_missing_image(s: _Scoring) -> None:
    """An 'a'/'f' arch alone is not a failure; beside "no kernel image" it is the sharper diagnosis.  Matched
    by names only, it needs a real a/f target among the facts ("sm_00a" or "95a" name none).  A library whose build
    is a/f-only (:data:`_AF_ONLY_BUILDS`) failing beside a GPU none of its targets covers is the same diagnosis."""
    if "arch-specific-mismatch" not in s.scores:
        return
    match = s.matches["arch-specific-mismatch"]
    built_af_only = set(_AF_ONLY_BUILDS) & set(match.sources)  # libraries whose builds are a/f-only
    real = any(a[-1] in "af" for a in s.facts.get("archs", [])) or bool(built_af_only)
    if match.strongest < 2.5 and not real:
        del s.scores["arch-specific-mismatch"]
        return
    if ("no-kernel-image" in s.scores or "mixed-gpu" in s.scores) and _newer_than_every_target(s):
        # a GPU of a newer major than every target the build lists (sm_121 beside "sm_80 ... sm_90 sm_90a"): the
        # build predates the GPU, and its a target is no more the cause than its plain ones
        del s.scores["arch-specific-mismatch"]
    elif "no-kernel-image" in s.scores or "mixed-gpu" in s.scores:
        s.bump("arch-specific-mismatch", s.scores.get("no-kernel-image", (2.0, []))[0])
    elif built_af_only and (_MISSING_IMAGE.search(s.body) or _outside_af_build(s, built_af_only)):
        s.bump("arch-specific-mismatch", 1.5)
    elif s.matches["arch-specific-mismatch"].strongest < 2.5:  # only arch names, no failure of their own
        del s.scores["arch-specific-mismatch"]


def _newer_than_every_target(s: _Scoring) -> bool:
    """Whether every GPU the text names has a higher major than every target of the build's own list (torch's
    "supports CUDA capabilities ...", the build flags), with a plain target among them: a GPU the whole build
    predates.  Arch names elsewhere in the text (a kernel's "_sm100") are no list of the build."""
    flags = [f"sm_{t.cc.arch_number}{t.variant}" for t in iter_build_targets(s.body)]
    names = [*s.facts.get("build_archs", []), *flags]
    archs = [parse_sm_arch(a) for a in names]
    if not archs or all(a.variant.value for a in archs):
        return False
    ccs = [parse_compute_capability(cc) for cc in _distinct_ccs(s.facts)]
    top = max(a.number // 10 for a in archs)
    return bool(ccs) and all(cc.major > top for cc in ccs)


def _outside_af_build(s: _Scoring, libraries: set[str]) -> bool:
    """Whether the log reports a failure beside a GPU that none of these a/f-only builds' targets covers."""
    if not _FAILED.search(s.body):
        return False
    targets = [parse_sm_arch(t) for lib in libraries for t in _AF_ONLY_BUILDS[lib]]
    return any(not any(target_covers(t, g.compute_capability) for t in targets) for g in _gpus_named(s))


# Kokkos' start-up check names both capabilities: "running kernels compiled for compute capability 3.5 (< 5.0) on device
# with compute capability 5.0" (core/src/Cuda/Kokkos_Cuda_Instance.cpp).
_KOKKOS_CCS = re.compile(
    r"running kernels compiled for compute capability (\d+)\.(\d)[^\n]{0,20}? on device with compute capability "
    r"(\d+)\.(\d)"
)


_FA_BACKWARD_CHECK = re.compile(r"Expected is_sm80(?:\s*\|\|\s*is_sm90)? to be true")
# the flash_attn package (its modules, its extension, its name), not torch's own copy under aten/.../cuda/flash_attn/
_FLASH_ATTN_PACKAGE = re.compile(r"(?<!cuda/)\bflash_attn(?:_cuda|_2_cuda|_interface)?\b(?!/flash_api)|\bflash-attn\b")


def _errors_that_name_their_category(s: _Scoring) -> None:
    """A CUDA error whose code alone names its category (the recorded decisions: 35 insufficient driver, 209 no kernel
    image, 222 unsupported PTX version, ...), named in a form no pattern reads ("cudaGetDeviceCount returned 35"):
    it counts as the catalogue's "error N" does."""
    for err in CUDA_ERRORS:
        if err.certainty != "code" or not err.categories or err.code not in _named_codes(s.facts):
            continue
        cat_id = err.categories[0]
        if cat_id not in s.scores:
            s.scores[cat_id] = (2.0, [f"{err.name} ({err.code})"])
            s.matches[cat_id] = _Match(2.0, (f"{err.name} ({err.code})",), 2.0, -1, (CUDART,))


def _flash_attention_backward_check(s: _Scoring) -> None:
    """FlashAttention's own TORCH_CHECK(is_sm80 || is_sm90) guards the backward kernels of the larger head dims, which
    need the shared memory a block gets on 8.0 and 9.0 (163 KB, 227 KB) and not on 8.6/8.9 (99 KB; Programming Guide,
    compute capabilities table): from the flash_attn package it is the shared-memory limit (seed 002's kind of check);
    the same words from torch's own kernels stay a capability guard."""
    if "capability-guard" not in s.scores or not _FA_BACKWARD_CHECK.search(s.body):
        return
    if _FLASH_ATTN_PACKAGE.search(s.body):
        _reclassify(s, "capability-guard", "shared-memory-limit", [FLASH_ATTN_BWD])


def _kokkos_compiled_below_the_device(s: _Scoring) -> None:
    """Kokkos' check of the arch it was compiled for against the device's: compiled below the device, the device runs
    the lower arch's code (its PTX JIT-compiled, or cubins of a lower minor), which Kokkos refuses or warns about
    (ptx-jit-lower-arch); compiled above it, the device has no code at all (no-kernel-image), and "compiled for
    compute capability 0.0" is Kokkos' probe kernel that found no image to launch (no-kernel-image, kokkos#1944)."""
    m = _KOKKOS_CCS.search(s.body)
    if not m or "no-kernel-image" not in s.scores:
        return
    built = (int(m.group(1)), int(m.group(2)))
    device = (int(m.group(3)), int(m.group(4)))
    if (0, 0) < built < device:  # 0.0: Kokkos' probe kernel had no image to run, so it read no arch at all
        _reclassify(s, "no-kernel-image", "ptx-jit-lower-arch", [KOKKOS_CUDA])


def _range_check_refusal(s: _Scoring) -> None:
    """ "FATAL: kernel K is for smA-smB, but was built for smC": with C below the range the driver JIT-compiled
    lower-arch PTX; with C above it the kernel was compiled for this GPU and its own range check refused it,
    i.e. the library dispatched a kernel not meant for this GPU (a guard/dispatch problem)."""
    if "ptx-jit-lower-arch" not in s.scores:
        return
    rng, built = s.facts.get("arch_range"), s.facts.get("built_for")
    if rng and built and arch_number(built) > arch_number(rng[1]):
        score, lines = s.scores.pop("ptx-jit-lower-arch")
        old = s.scores.get("capability-guard", (0.0, []))
        s.scores["capability-guard"] = (max(score, old[0]) + 1.0, lines + old[1])
    else:
        s.bump("ptx-jit-lower-arch", 1.0)  # it explains an "invalid device function" next to it


_FA_UNSUPPORTED_ARCH = re.compile(r"requires building with sm version sm(\d+)-sm\d+, but was built for <", re.I)


def _flash_attention_stub_on_a_newer_gpu(s: _Scoring) -> None:
    """flash-attn's FLASH_UNSUPPORTED_ARCH ("requires building with sm version sm80-sm90, but was built for < 8.0")
    says the code that ran was compiled for an arch below the kernels' range.  A GPU below the range runs such code as
    its own (the kernel was dispatched to a GPU it is not for: capability-guard); a GPU in the range runs it only by
    JIT-compiling PTX of the lower arch (PG_JIT: ptx-jit-lower-arch).  Every GPU the log names at or above the range
    decides the latter."""
    m = _FA_UNSUPPORTED_ARCH.search(s.body)
    if not m or "capability-guard" not in s.scores:
        return
    low = int(m.group(1))
    # a kernel's printf repeats: every copy's range, and the build's own targets (-gencode ... sm_75), name no GPU
    masked = _FA_UNSUPPORTED_ARCH.sub(" ", s.body)
    ccs = [g.compute_capability for g in _gpus_beside_targets(s, s.facts.get("archs", []), masked)]
    if ccs and all(cc.major * 10 + cc.minor >= low for cc in ccs):
        _reclassify(s, "capability-guard", "ptx-jit-lower-arch", [FLASH_ATTN_LAUNCH])


def _ggml_stub_of_the_gpus_own_arch(s: _Scoring) -> None:
    """ggml's NO_DEVICE_CODE prints ``__CUDA_ARCH__``, the arch of the code that ran, and ``__CUDA_ARCH_LIST__``, the
    archs it was compiled for (ggml/src/ggml-cuda/common.cuh).  The driver runs the build's best code at or below the
    GPU's capability (SASS of a lower minor of its major, else PTX).  Code of the GPU's own arch that is a stub is a
    kernel dispatched to a GPU it was not meant for (capability-guard, the corpus's convention); code of a lower arch
    ran on a newer GPU (ptx-jit-lower-arch).  A GPU named decides.  Without one, code for an X.Y with a minor above 0
    that is not the newest compiled arch ran on that X.Y (the GPUs between it and the next compiled arch would be of
    its major and a higher minor: 6.2, 8.7, Jetsons); X.0 code may have run on any X.Y, and the newest arch's code on
    any newer GPU, so those keep the lower-arch reading."""
    if "ptx-jit-lower-arch" not in s.scores or GGML_COMMON not in s.matches["ptx-jit-lower-arch"].sources:
        return
    built, archs = s.facts.get("built_for"), s.facts.get("build_archs")
    if not built or not archs:
        return
    ran = arch_number(built)
    compiled = [arch_number(a) for a in archs]
    ccs = {int(str(g.compute_capability).replace(".", "")) for g in _gpus_named(s)}
    if (ccs and ccs == {ran}) or (not ccs and ran % 10 and ran < max(compiled)):
        _move(s, "ptx-jit-lower-arch", "capability-guard")


# xformers' dispatcher (xformers/ops/fmha/dispatch.py, _run_priority_list): "No operator found for `NAME` with inputs:"
# then, per operator, "`OP` is not supported because:" and one reason a line.
_XFORMERS_OP = re.compile(r"^\s*`[^`\n]+` is not supported because:\s*$", re.M)
_XFORMERS_CAPABILITY = re.compile(r"requires device with capability|only supported on A100|\bcapability\b", re.I)
# A reason as xformers words it (xformers/ops/fmha/common.py, not_supported_reasons, and each operator's override in
# fmha/flash.py, cutlass.py, triton_splitk.py, flash3.py): an expression on the inputs ("dtype=...", "attn_bias type
# is ...", "query.shape[-1] != ...", "max(...) > 256", "dropout > 0.0", "has custom scale"), the capability bounds,
# "bf16 is only supported on A100+ GPUs", "operator wasn't built ...", "unsupported embed per head: 512", "SmXY does
# not have enough shared-memory ...", "Only work on pre-MLIR triton", "triton is not available".  A line in other words
# is the reporter's, after the list: it neither adds a reason nor takes the capability one away.
_XFORMERS_REASON = re.compile(
    # an expression on the inputs, at the start of the line
    r"^(?:[a-z_][\w.]*(?:\[[^\]\n]*\])?(?:\([^)\n]*\))?(?:\[[^\]\n]*\])?\s*(?:[<>=!%]|type\b)|(?:max|min)\(|dropout\b)"
    # or one of xformers' phrases anywhere in it
    r"|has custom scale|requires device with capability|bf16 is only supported"
    r"|operator (?:wasn't built|not available|does not support)|Sm\d+ does not have enough shared"
    r"|Only (?:work|supports)\b|triton is not available|xFormers wasn't build|requires (?:a )?GPU with|\brequires\b"
    r"|not supported|unsupported|must be equal|Got head_dim",
    re.I,
)
# The reporter's own words after the list: a sentence of theirs ("It is a Colab T4.", "any idea?").
_PROSE = re.compile(r"(?:it|this|that|i|i'm|my|we|our|any|please|thanks?|hi|hello|so|but)\b|.*\?\s*$", re.I)
# Where an operator's reasons end: another message, a log line (a date, a clock, a progress bar, a level, a
# "Device: cuda:0 ..." label), a hint.
_NOT_A_REASON = re.compile(
    r"^(?:\d{4}-\d{2}-\d{2}|\d{2}:\d{2}|Epoch\b|\[|HINT\b|Traceback\b|File\s|(?:WARNING|INFO|ERROR|DEBUG)\b|"
    r"\w+(?:Error|Exception):|[A-Z][\w ]{0,30}:\s)"
)


def _xformers_capability_beside_other_reasons(s: _Scoring) -> None:
    """xformers lists every operator it tried and each one's reasons.  A capability reason is the cause only where an
    operator is refused for capability alone (a GPU that has it would run that operator); where every operator
    refused for capability is also refused for another reason (a head size, a bias's stride, a dtype), no GPU would
    run it and the refusal is no capability problem: the guard's lines do not decide."""
    match = s.matches.get("capability-guard")
    if "capability-guard" not in s.scores or match is None or set(match.sources) - {XFORMERS}:
        return
    heads = list(_XFORMERS_OP.finditer(s.body))
    if not heads:
        return
    blocks = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(s.body)
        reasons: list[str] = []
        for raw in s.body[head.end() : end].splitlines()[1:]:  # [0]: the rest of the header's line
            line = raw.strip()
            if not line or len(line) > 200 or _NOT_A_REASON.match(line) or len(reasons) >= 12:
                break
            if _PROSE.match(line) or not _XFORMERS_REASON.search(line):  # the reporter's own words after the list
                break
            reasons.append(line)
        blocks.append(reasons)
    refused = [b for b in blocks if any(_XFORMERS_CAPABILITY.search(ln) for ln in b)]
    if refused and all(any(not _XFORMERS_CAPABILITY.search(ln) for ln in b) for b in refused):
        del s.scores["capability-guard"]
        s.settled = True


# CUDA_ERROR_STUB_LIBRARY (34): "the CUDA driver that the application has loaded is a stub library" (cuda.h)
# The toolkit's stub libcuda (lib64/stubs/libcuda.so, for linking only) named as the one loaded or on the library path.
_STUB = re.compile(
    r"CUDA_ERROR_STUB_LIBRARY|\bstub library\b|\bCUDA error 34\b|\(CUDA error 34\)|[/\\]stubs[/\\]libcuda\.so", re.I
)


def _stub_library_is_no_old_driver(s: _Scoring) -> None:
    """A process that loaded the toolkit's stub libcuda gets error 34 from every driver call, and programs that then
    cannot read the driver's version call it missing or too old: the driver is not old, none is loaded."""
    if "driver-too-old" in s.scores and (_STUB.search(s.body) or 34 in _named_codes(s.facts)):
        del s.scores["driver-too-old"]
        s.settled = True


# XLA's and TensorFlow's driver wrapper: "failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error" (cuda_driver.cc).
_CUINIT_FAILED = re.compile(r"failed call to cuInit: (\w+)")


def _cuda_build_whose_cuinit_failed(s: _Scoring) -> None:
    """A build that calls cuInit is a CUDA build: its fall-back to the CPU ("No GPU/TPU found, falling back to CPU")
    follows the driver's answer, not a CPU-only package.  cuInit's error decides: a driver-version error is the
    driver's category (its own patterns), one the inventory calls unrelated (CUDA_ERROR_UNKNOWN after a suspend, a
    device in a bad state) is no compatibility failure."""
    m = _CUINIT_FAILED.search(s.body)
    if not m or "wrong-framework-build" not in s.scores:
        return
    del s.scores["wrong-framework-build"]
    error = next((e for e in CUDA_ERRORS if m.group(1) in (e.name, e.driver_name)), None)
    if error is not None and not error.related:
        s.settled = True


# A machine without a GPU, in its users' words: a CPU cluster or node, CPU training, "no GPU".
_CPU_MACHINE = re.compile(
    r"\bCPU[- ](?:only\s+)?(?:cluster|machine|node|server|host|training|instance)s?\b|\bcpu\s*(?:训练|集群|版本|机器)"
    r"|\b(?:no|without\s+(?:a\s+)?|doesn'?t have\s+(?:a\s+)?)GPUs?\b(?! (?:found|detected))",
    re.I,
)


def _cuda_build_on_a_machine_without_gpu(s: _Scoring) -> None:
    """"CUDA driver version is insufficient for CUDA runtime version" (error 35) where the report says the machine has
    no GPU: with no driver loaded the runtime reports the driver as insufficient (cudaErrorInsufficientDriver, CUDA
    Runtime API, error types), and the cause is the CUDA build installed on a CPU machine (the CPU build is the fix),
    not a driver to upgrade."""
    if "driver-too-old" in s.scores and _CPU_MACHINE.search(s.body) and not _gpus_named(s):
        _move(s, "driver-too-old", "wrong-framework-build")


# NVIDIA Warp's start-up line: "CUDA Toolkit 12.8, Driver 12.2" (warp/context.py): a toolkit newer than the driver's
# CUDA cannot have its modules loaded (their PTX is too new for the driver's JIT).
_WARP_VERSIONS = re.compile(r"CUDA Toolkit (\d+)\.(\d+), Driver (\d+)\.(\d+)")
_WARP_CONTEXT = "NVIDIA/warp:warp/_src/context.py"


def _toolkit_newer_than_driver(s: _Scoring) -> None:
    """A toolkit newer than the CUDA its driver supports: code it compiles to PTX needs a driver of that CUDA or newer
    to JIT-compile it (https://docs.nvidia.com/deploy/cuda-compatibility/: minor-version compatibility does not cover
    PTX made by a newer toolkit), so the driver is too old for the modules Warp builds."""
    m = _WARP_VERSIONS.search(s.body)
    if not m or s.settled:
        return
    toolkit, driver = (int(m.group(1)), int(m.group(2))), (int(m.group(3)), int(m.group(4)))
    # "Driver 0.0": no driver loaded at all (libcuda could not be opened), not an old one
    if driver > (0, 0) and toolkit > driver and not any(score >= 3 for score, _l in s.scores.values()):
        _decide(s, "driver-too-old", [line_at(s.body, m.start(), m.end())], [_WARP_CONTEXT], 3.0)


# The CUDA versions a program reports of its runtime and of the driver: cudaRuntimeGetVersion / cudaDriverGetVersion
# printed (12060, 11040), GROMACS' log header ("CUDA driver: 11.60", "CUDA runtime: 12.40").
_RUNTIME_VERSION = re.compile(r"cudaRuntimeGetVersion\W{0,8}(\d{4,5})\b|\bCUDA runtime:\s+(\d{1,2})\.(\d)\d?\b")
_DRIVER_CUDA_VERSION = re.compile(r"cudaDriverGetVersion\W{0,8}(\d{4,5})\b|\bCUDA driver:\s+(\d{1,2})\.(\d)\d?\b")


def _cuda_version_of(m: re.Match[str]) -> tuple[int, int]:
    if m.group(1):
        number = int(m.group(1))
        return number // 1000, (number % 1000) // 10
    return int(m.group(2)), int(m.group(3))


def _runtime_newer_than_the_driver(s: _Scoring) -> None:
    """A runtime of a newer CUDA major than the driver's, both as the program reports them: minor-version
    compatibility runs a runtime on any driver of its own major's floor, never across majors
    (https://docs.nvidia.com/deploy/cuda-compatibility/), so the driver is too old for the runtime that loaded."""
    if s.settled or any(score >= 3 for score, _l in s.scores.values()):
        return
    runtime, driver = _RUNTIME_VERSION.search(s.body), _DRIVER_CUDA_VERSION.search(s.body)
    if runtime is None or driver is None:
        return
    if _cuda_version_of(runtime)[0] > _cuda_version_of(driver)[0]:
        lines = [line_at(s.body, m.start(), m.end()) for m in (runtime, driver)]
        _decide(s, "driver-too-old", lines, ["https://docs.nvidia.com/deploy/cuda-compatibility/"], 3.0)


def _insufficient_with_a_new_driver(s: _Scoring) -> None:
    """"CUDA driver version is insufficient for CUDA runtime version" (error 35) beside a driver branch at or above the
    floor of every CUDA major the tables know (minor-version compatibility: 11.x runs on 450+, 12.x on 525+, 13.x on
    580+; https://docs.nvidia.com/deploy/cuda-compatibility/): no runtime finds that driver too old, so the runtime
    did not reach it (a container without the GPU passed through, the toolkit's stub libcuda): no driver to upgrade.
    (A lower branch may be new enough for the runtime that ran, but which runtime ran is not in nvidia-smi's "CUDA
    Version", the driver's own; the rule reads none.)"""
    if "driver-too-old" not in s.scores or 35 not in _named_codes(s.facts):
        return
    branch = _driver_branch(s)
    if branch is not None and branch >= max(int(f["min_driver"]) for f in load_tables().minor_version_floors):
        del s.scores["driver-too-old"]
        s.settled = True


def _named_codes(facts: Facts) -> set[int]:
    return {c["code"] for c in facts.get("cuda_errors", [])}


# A PyTorch (or its index's) build for AMD's ROCm: "torch==2.0.1+rocm5.4.2", ".../whl/rocm5.4.2", and torch's own
# "HIP initialization: ..." warning, the ROCm twin of "CUDA initialization" (torch/cuda/__init__.py).
_ROCM_BUILD = re.compile(r"\+rocm\d|/whl/rocm\d|\bHIP initialization:", re.I)
_ROCM_BUILD_DOC = "https://pytorch.org/get-started/locally/"


# The frameworks' own words for "no GPU this build can use" (torch's is_available() False, webui's start-up check).
_NO_USABLE_GPU = re.compile(
    r"\bTorch is not able to use GPU\b|is_available\(\)[^\n]{0,20}\bFalse\b|\bNo HIP GPUs are available\b", re.I
)


def _rocm_build_beside_an_nvidia_gpu(s: _Scoring) -> None:
    """A ROCm build of the framework runs on AMD GPUs only: beside an NVIDIA GPU the log names, or beside the framework
    saying it can use no GPU at all, it is the wrong build (the install page's compute platform was ROCm, not CUDA)."""
    if _ROCM_BUILD.search(s.body) and (_gpus_named(s) or _NO_USABLE_GPU.search(s.body)):
        line = next((ln.strip()[:300] for ln in s.body.splitlines() if _ROCM_BUILD.search(ln)), "")
        _decide(s, "wrong-framework-build", [line], [_ROCM_BUILD_DOC])


def _hopper_only_guards(s: _Scoring) -> None:
    """FlashAttention-3's ``is_sm90`` check (hopper/flash_api.cpp: major 9 and minor 0) and DeepGEMM's
    ``arch_major == 9`` guard libraries whose kernels are built for sm_90a only (hopper/setup.py, DeepGEMM's JIT):
    on GPUs all above Hopper the 'a'-only build is the cause (arch-specific), on GPUs all below Hopper the guard
    rightly refuses an older GPU (capability-guard); without GPUs the message's own words decide."""
    if not re.search(HOPPER_ONLY, s.body):
        return
    majors = {int(g["compute_capability"].split(".")[0]) for g in s.facts.get("gpus", [])}
    if not majors:
        return
    if min(majors) >= 10 and "capability-guard" in s.scores:
        _move(s, "capability-guard", "arch-specific-mismatch")
    elif (
        max(majors) < 9
        and "arch-specific-mismatch" in s.scores
        and set(s.matches["arch-specific-mismatch"].sources) <= {FA3_API, FA3_BUILD}
    ):
        _move(s, "arch-specific-mismatch", "capability-guard")


def _move(s: _Scoring, src: str, dst: str) -> None:
    """Category ``src``'s score and lines go to ``dst`` (the root cause a precedence rule found), half a point up."""
    score, lines = s.scores.pop(src)
    old = s.scores.get(dst, (0.0, []))
    s.scores[dst] = (max(score, old[0]) + 0.5, lines + old[1])


HOPPER_ONLY = r"FlashAttention(?:-3)? only supports Hopper GPUs|\barch_major\s*==\s*9\b"


def _reclassify(s: _Scoring, src: str, dst: str, sources: Sequence[str]) -> None:
    """A rule read the emitter's message as ``dst``'s, not ``src``'s (the category its pattern names): ``src``'s lines
    go to ``dst``, which ranks first (:func:`_decide`) and cites ``sources`` (what the rule rests on)."""
    _score, lines = s.scores.pop(src)
    _decide(s, dst, lines, sources, 3.0)


_PLAIN_CUTE_ATOM = re.compile(PLAIN_CUTE_ATOM)


def _plain_cute_atom(s: _Scoring) -> None:
    """A CuTe atom of a plain arch that trapped ("Attempting to use SM80_16x8x16_F32F16F16F32_TN without
    CUTE_ARCH_MMA_SM80_ENABLED"): the code ran was compiled for an arch below the atom's (CuTe's config.hpp enables
    the atom from that __CUDA_ARCH__ on).  On a GPU below the atom the library dispatched a kernel that GPU cannot
    run (capability-guard, the pattern's category); on GPUs all at or above it a lower arch's code ran there
    (ptx-jit-lower-arch)."""
    m = _PLAIN_CUTE_ATOM.search(s.body)
    if not m or "capability-guard" not in s.scores:
        return
    atom = ComputeCapability.from_arch_number(int(m.group(1)))
    ccs = [g.compute_capability for g in _gpus_named(s)]
    if ccs and min(ccs) >= atom:
        _reclassify(s, "capability-guard", "ptx-jit-lower-arch", s.matches["capability-guard"].sources)


_TORCH_RANGE = re.compile(
    # (lines between: a log excerpt repeats a line beside the one after it, logread's kept pairs)
    r"cuda capability (\d+)\.(\d+)\.?[^()]{0,300}?Minimum and Maximum cuda capability supported by this version of "
    r"PyTorch is[^()]{0,200}?\((\d+)\.(\d+)\)\s*-\s*\((\d+)\.(\d+)\)"
)


def _torch_capability_range(s: _Scoring) -> None:
    """torch's range warning compares the GPU with its lowest and highest compiled arch only; a GPU above the highest
    but of its major runs that arch's cubins (SASS runs on a higher minor of its major, Programming Guide §1.3.4), so
    the warning is torch's own check being too strict (capability-guard: sm_120 code on a GB10, 12.1); a GPU below the
    lowest, or of a newer major, has no code (no-kernel-image, the pattern's category)."""
    m = _TORCH_RANGE.search(s.body)
    if not m or "no-kernel-image" not in s.scores:
        return
    gpu, high = (int(m.group(1)), int(m.group(2))), (int(m.group(5)), int(m.group(6)))
    if gpu[0] == high[0] and gpu > high:
        _reclassify(s, "no-kernel-image", "capability-guard", [TORCH_CUDA])


def _guard_naming_an_arch(s: _Scoring) -> None:
    """A guard's message carrying "sm75" is not an arch-specific failure."""
    if "capability-guard" in s.scores and "arch-specific-mismatch" in s.scores and "no-kernel-image" not in s.scores:
        del s.scores["arch-specific-mismatch"]


def _gpus_named(s: _Scoring, text: str | None = None) -> list[GpuMention]:
    """The GPUs the log names (:func:`~cudafit.explain.arch_features.iter_gpu_mentions`), the extracted ``gpus``
    facts first; ``text`` replaces the body where parts of it name targets rather than GPUs."""
    facts = [(g["name"], g["compute_capability"]) for g in s.facts.get("gpus", [])]
    if text is None:
        facts += [(g["name"], g["compute_capability"]) for g in s.facts.get("mentioned_gpus", [])]
    return list(iter_gpu_mentions(s.body if text is None else text, facts))


def _gpus_listed(s: _Scoring) -> list[GpuMention]:
    """The GPUs the text lists or names in prose (the ``gpus`` and ``mentioned_gpus`` facts) -- none of a build's
    targets ("-gencode arch=compute_75,code=sm_75"), which :func:`_gpus_named` also reads as SM names."""
    listed = [*s.facts.get("gpus", []), *s.facts.get("mentioned_gpus", [])]
    return list(iter_gpu_mentions("", [(g["name"], g["compute_capability"]) for g in listed]))


def _gpus_beside_targets(s: _Scoring, targets: Sequence[str], text: str | None = None) -> list[GpuMention]:
    """The GPUs the log names (:func:`_gpus_named`) that are not one of the build's ``targets`` written as an SM
    name ("sm_75" in a -gencode flag names a target, not a GPU)."""
    names = {re.sub(r"[^a-z0-9]", "", t.lower()) for t in targets}
    return [g for g in _gpus_named(s, text) if re.sub(r"[^a-z0-9]", "", g.text.lower()) not in names]


def _decide(s: _Scoring, cat_id: str, lines: Sequence[str], sources: Sequence[str], floor: float = 3.0) -> None:
    """A rule found ``cat_id`` to be the root cause: it ranks first (a point above every other category, so that a
    later rule's half-point promotion of a plain "no kernel image", _mixed_host's, stays below it; at least
    ``floor``), quoting ``lines`` and citing ``sources``."""
    others = [score for cid, (score, _lines) in s.scores.items() if cid != cat_id]
    score = max([floor, *(o + 1.0 for o in others)])
    old_lines = s.scores.get(cat_id, (0.0, []))[1]
    s.scores[cat_id] = (score, list(lines) + old_lines)
    old = s.matches.get(cat_id)
    s.matches[cat_id] = _Match(
        score,
        tuple(lines) + (old.lines if old else ()),
        max(score, old.strongest if old else 0.0),
        old.last if old else -1,
        tuple(dict.fromkeys((*sources, *(old.sources if old else ())))),
    )


def _arch_feature_beside_gpu(s: _Scoring) -> None:
    """An instruction only 'a'/'f' targets have (wgmma: sm_90a; tcgen05/TMEM/UMMA: the sm_100a family; block-scaled
    mma.sync: sm_120a/sm_121a; redux.sync .f32; FP4 cvt; the PTX ISA's target notes, :data:`.ARCH_FEATURES`) named
    beside a GPU none of those targets covers: no build can give that GPU the kernel, the code is arch-specific."""
    features = list(iter_arch_features(s.body))
    if not features:
        return
    gpus = _gpus_named(s)
    missing = [(f, line) for f, line in features if any(not f.covers(g.compute_capability) for g in gpus)]
    if missing:
        _decide(s, "arch-specific-mismatch", [line for _f, line in missing], [f.section for f, _l in missing], 3.5)


def _af_build_refusal(s: _Scoring) -> None:
    """A library's statement of the GPUs its kernels are for (:func:`.iter_support_claims`).  Its own check refusing
    the GPU ("is only supported on SM100, SM103", ``mSM == kSM_100``, ``is_sm100_supported()``, DeepGEMM's and the
    trtllm-gen runners' "Unsupported architecture", FlashAttention-4's "Only SM 10.x and 11.x are supported") is a
    capability guard, right or wrong, whatever GPU it met; a statement of the a/f targets the kernels are built for
    ("SM90a and SM100f", CuTe DSL's target list, "Hopper-only") beside a GPU outside them is an arch-specific
    build meeting another GPU."""
    claims = list(iter_support_claims(s.body))
    if not claims:
        return
    masked = s.body
    for claim in claims:  # the SM numbers a claim lists are targets, not the GPU
        lo, hi = claim.span
        masked = masked[:lo] + " " * (hi - lo) + masked[hi:]
    gpus = [g.compute_capability for g in _gpus_named(s, masked)]
    arch = [c for c in claims if not c.guard and any(cc not in c.ccs for cc in gpus)]
    guards = [c for c in claims if c.guard]
    found = arch or guards
    if found:
        cat_id = "arch-specific-mismatch" if arch else "capability-guard"
        _decide(s, cat_id, [c.line for c in found], [c.source for c in found])


_CUTLASS_STATUS = re.compile(r"\bError (?:Internal|Architecture Mismatch)\b|\bFailed to launch the CUTLASS kernel\b")
_CUTLASS_NAME = re.compile(r"cutlass", re.I)


def _cutlass_launch_on_af_gpu(s: _Scoring) -> None:
    """CUTLASS's "Error Internal" (kErrorInternal: the kernel launch failed) or "Error Architecture Mismatch" from a
    CUTLASS kernel on a GPU of compute capability 9.0 or newer: CUTLASS's kernels for those GPUs use wgmma/tcgen05/
    block-scaled MMA and are built for 'a'/'f' targets only (include/cute/arch/config.hpp enables them for
    sm_90a, sm_100a/f, sm_120a/f), so a launch that fails there is a kernel built for another of those targets."""
    if not (_CUTLASS_STATUS.search(s.body) and _CUTLASS_NAME.search(s.body)):
        return
    ccs = [g.compute_capability for g in _gpus_named(s)]
    if any(cc.major >= 9 for cc in ccs) or (not ccs and names_blackwell(s.body)):
        lines = [line.strip()[:300] for line in s.body.splitlines() if _CUTLASS_STATUS.search(line)]
        _decide(s, "arch-specific-mismatch", lines[:3], [CUTLASS_STATUS, VLLM_CUTLASS_CHECK])


def _offline_or_driver_jit(s: _Scoring) -> None:
    """ptxas' "Unsupported .version" is an offline compiler too old for the PTX, not the driver -- unless the
    message came out of the driver's own JIT (numba's cuLinkAddData, cuModuleLoadData): then it is the driver."""
    if "jit-toolchain-too-old" in s.scores and "ptx_isa" in s.facts:
        if re.search(DRIVER_JIT, s.body, re.I):
            s.bump("jit-toolchain-too-old", -2.0)
        else:
            s.bump("ptx-too-new-for-driver", -1.0)


def _build_dropped_the_arch(s: _Scoring) -> None:
    """A build-time "nvcc fatal: Unsupported gpu architecture" followed by a run-time "no kernel image": the
    build was made to pass by dropping the GPU's arch, and the run is what fails now."""
    if (
        "no-kernel-image" in s.scores
        and "jit-toolchain-too-old" in s.scores
        and s.matches["no-kernel-image"].strongest >= 3  # the run-time error itself, not a weak hint
        and s.matches["no-kernel-image"].last > s.matches["jit-toolchain-too-old"].last
    ):
        s.scores["no-kernel-image"] = (s.scores["jit-toolchain-too-old"][0] + 0.5, s.scores["no-kernel-image"][1])


_MIXED_HOST_STATED = re.compile(MIXED_HOST_STATED, re.I)


def _guard_on_a_mixed_host(s: _Scoring) -> None:
    """A capability guard that refused a GPU in a report that calls its host mixed ("multiple GPUs with different
    architectures", "a bug in the capability test with different GPUs available") or says the GPUs' numberings were
    mixed up: the guard judged one card of a
    mixed host -- the one the process was given by device order, or the one a native build targeted -- and the
    report's point is the mix (error_categories.md, mixed-gpu: "device order confuses which card is used";
    CUDA_DEVICE_ORDER, CUDA Programming Guide, environment variables).  GPUs of two capabilities listed beside a guard
    are not enough: the guard may be right about the card the user meant to use (test_explain_generalise)."""
    if "capability-guard" not in s.scores or max(s.scores, key=lambda c: s.scores[c][0]) != "capability-guard":
        return
    stated = _MIXED_HOST_STATED.search(s.body)
    if stated and _FLEET.search(s.body[max(0, stated.start() - 60) : stated.start()]):
        stated = None  # "our cluster has different GPUs available": a fleet, not the host that ran
    line = line_at(s.body, stated.start(), stated.end()) if stated else None
    if line is None:
        # a report that the GPUs' two numberings were mixed up ("-gpu_id 1, that's how nvidia-smi numbers them"):
        # the guard refused the card the index named in the other numbering
        line = next((ln for form, ln in iter_forms(s.body) if form.name in _NUMBERING_FORMS), None)
    if line is not None:
        _move(s, "capability-guard", "mixed-gpu")
        s.scores["mixed-gpu"][1].insert(0, line)
        _adopt_mentioned_gpus(s)


_FLEET = re.compile(r"\b(?:cluster|partitions?|fleet|pool|nodes|queue|datacenter|data center)\b", re.I)
_NUMBERING_FORMS = frozenset({"CUDA's device order against nvidia-smi's", "two numberings of the GPUs disagree"})


def _mixed_host(s: _Scoring) -> None:
    """A log that names GPUs of two or more compute capabilities, with a failure that a build for every GPU of
    the host explains: the mixed host is the cause (shared/docs/error_categories.md, mixed-gpu: "code built for one
    card runs on another"; seed 001, a 2080 and a 3090).  Those failures are code missing for the GPU that ran
    ("no kernel image", "invalid device function", and the other mixed-gpu lines) and a kernel that ran from
    code built for another arch ("... but was built for sm75", ggml's "no device code compatible with CUDA arch
    520"); a guard refusing a GPU, or an 'a'/'f' target, is not one."""
    if len(_distinct_ccs(s.facts)) < 2:
        return
    missing: list[str] = [cid for cid in ("no-kernel-image", "mixed-gpu") if cid in s.scores]
    if "ptx-jit-lower-arch" in s.scores and "built_for" in s.facts:
        missing.append("ptx-jit-lower-arch")
    if missing:
        best = max(s.scores[cid][0] for cid in missing)
        s.scores["mixed-gpu"] = (best + 0.5, [line for cid in missing for line in s.scores[cid][1]])
        _adopt_mentioned_gpus(s)


def _names_unrelated_error(facts: Facts) -> bool:
    """Whether the text names a CUDA error the inventory calls unrelated (out of memory, an illegal address, ...)."""
    return bool(_unrelated_errors(facts))


def _unrelated_errors(facts: Facts) -> set[int]:
    """The codes of the CUDA errors the text names that the inventory calls unrelated."""
    named = _named_codes(facts)
    return {e.code for e in CUDA_ERRORS if e.code in named and not e.related}


def _adopt_mentioned_gpus(s: _Scoring) -> None:
    """Once the log is read as a mixed host, the GPUs it names in prose are that host's: they join ``gpus`` so that
    the fixes name every compute capability (TORCH_CUDA_ARCH_LIST="<all ccs>", grounders/arch.py)."""
    mentioned = s.facts.pop("mentioned_gpus", [])
    if mentioned:
        s.facts["gpus"] = [*s.facts.get("gpus", []), *mentioned]


# "Code built for one card runs on another" (shared/docs/error_categories.md, mixed-gpu), as reports put it: a build
# made on one machine or for its GPU ("compiled it on my desktop which has an rtx 3060", "built on the login node",
# "builds code for the local GPU architecture", a source build carried to "a different machine") and a run elsewhere
# ("copied it to my old PC", "on another machine/node/GPU", "a different remote GPU"), or code that "works on" one
# machine and fails "on another".  The words are the category's own and those of the threads' resolutions as a class
# (NVIDIA's CUDA C++ Best Practices Guide, "Building for Maximum Compatibility": code built for the build machine's GPU
# with -arch=native does not cover other GPUs, https://docs.nvidia.com/cuda/cuda-c-best-practices-guide/).
_MACHINE = r"(?:machine|computer|desktop|laptop|pc|node|server|host|workstation|cluster|box|instance|vm)s?"
_ELSEWHERE = (
    rf"(?:(?:another|a different|different|other|second|remote|target|old)\s+(?:\w+\s+)?{_MACHINE}"
    r"|(?:another|a different|different|other|second)\s+(?:\w+\s+)?(?:gpu|card)s?)"
)
_BUILT_ON_A_GPU = re.compile(BUILT_ON_A_GPU_RUN_ON_ANOTHER, re.I)
BUILT_ON_ONE_RUN_ON_ANOTHER = re.compile(
    rf"\b(?:built|compiled|build|compile|compiling|compilation|building)\b[^.\n]{{0,80}}?"
    rf"(?:\b(?:on|in)\s+(?:(?:a|an|the|this|that|my|our|one)\s+)?(?:\w+\s+)?{_MACHINE}\b|\blocally\b|\blocal\s+gpu\b)"
    rf"[\s\S]{{0,400}}?(?:\b{_ELSEWHERE}\b|\b(?:copied|moved|transferred|deployed)\b)"
    rf"|\bworks?\b[^\n]{{0,40}}?\bon\s+(?:one|some)\s+of\s+(?:my|our|the)\s+[^\n]{{0,160}}?"
    rf"\b(?:fails?|failed|error|crash\w*)\b[^\n]{{0,20}}?\bon\s+(?:another|a different|the other)\b"
    rf"|\b(?:source\s+build|built\s+from\s+source|build\s+from\s+source|compiled\s+from\s+source)\b[\s\S]{{0,300}}?"
    rf"\b{_ELSEWHERE}\b|\b{_ELSEWHERE}\b[\s\S]{{0,300}}?\b(?:source\s+build|built\s+from\s+source|compiled\s+from\s+source)\b",
    re.I,
)


def _built_for_another_gpu(s: _Scoring) -> None:
    """Code missing for the GPU that ran, in a report that says the code was built on one machine (or for its GPU) and
    run on another: the mixed-gpu cause, with one GPU named or none ("compiled it on my desktop, which has an RTX
    3060", then CUDA_ERROR_NO_BINARY_FOR_GPU).  A weak hint of missing code ("named symbol not found") is not enough."""
    if "no-kernel-image" not in s.scores or s.matches["no-kernel-image"].strongest < 2:
        return
    if s.scores.get("mixed-gpu", (0.0, []))[0] >= s.scores["no-kernel-image"][0]:
        return  # already the mixed host (_mixed_host)
    if not BUILT_ON_ONE_RUN_ON_ANOTHER.search(s.body) and not _BUILT_ON_A_GPU.search(s.body):
        return
    # The GPUs named stay mentioned only: one may be the build machine's, which has the code (not the one that failed).
    score, lines = s.scores["no-kernel-image"]
    old = s.scores.get("mixed-gpu", (0.0, []))
    s.scores["mixed-gpu"] = (max(score, old[0]) + 0.5, lines + old[1])


def _unrelated_error_over_a_mixed_host(s: _Scoring) -> None:
    """A mixed host that only a statement or a warning names (device order, "do not work together", TensorRT's plan
    warning), beside a CUDA error the inventory calls unrelated (out of memory, an illegal address): the error is the
    cause, and the mixed host is no finding of its own."""
    match = s.matches.get("mixed-gpu")
    weak = match is not None and match.strongest < 3 and "mixed-gpu" in s.scores and "no-kernel-image" not in s.scores
    if weak and _names_unrelated_error(s.facts):
        del s.scores["mixed-gpu"]


# A torch that cannot use CUDA at all: its own error, collect_env's "None", or a "+cpu" version.
CPU_ONLY_TORCH = (
    r"Torch not compiled with CUDA enabled|CUDA used to build PyTorch: None\b|torch\.version\.cuda\s*(?:is|==)\s*None|"
    r"\b\d+\.\d+(?:\.\d+)?\+cpu\b"
)


def _cuda_extension_under_a_cpu_torch(s: _Scoring) -> None:
    """An extension built for a CUDA torch that cannot load (xformers' "xFormers was built for: PyTorch 2.1.0+cu121
    ... (you have 2.1.0+cpu)", xformers/_cpp_lib.py) in a process whose torch is a CPU build: the torch installed is
    the wrong build (pip resolved the CPU wheel), which no rebuild of the extension fixes."""
    if "extension-abi-mismatch" not in s.scores:
        return
    if max(s.scores, key=lambda c: s.scores[c][0]) == "extension-abi-mismatch" and re.search(CPU_ONLY_TORCH, s.body):
        _move(s, "extension-abi-mismatch", "wrong-framework-build")


def _cpu_build_loading_cuda_data(s: _Scoring) -> None:
    """torch.load's "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False"
    (torch/serialization.py, validate_cuda_device) says only that this process has no CUDA: on a machine without a
    GPU, or with CUDA_VISIBLE_DEVICES hiding it, the data must be mapped (map_location, device-mismatch, what the
    message itself advises); with a CPU-only torch in the same log the build is the cause (wrong-framework-build)."""
    if "device-mismatch" not in s.scores or TORCH_SER not in s.matches["device-mismatch"].sources:
        return
    if re.search(CPU_ONLY_TORCH, s.body):
        _move(s, "device-mismatch", "wrong-framework-build")


# CuPy (or an NVRTC program) compiling at run time: the module it loads is its own NVRTC's output.  CuPy's own
# modules, classes and version, not a package list naming cupy-cuda12x beside another library's failure.
RUNTIME_COMPILED = (
    r"cupy_backends|\bcupy\.(?:cuda|_core)\b|cupy/_core|\bCUDADriverError\b|\bRaw(?:Kernel|Module)\b|\bCuPy v?\d|"
    r"nvrtcCompileProgram|NVRTC_ERROR_\w+|[/\\]nvrtc[/\\]"
)


def _runtime_compiled_module_rejected(s: _Scoring) -> None:
    """A driver refusing a module CuPy just compiled (CUDA_ERROR_NO_BINARY_FOR_GPU, "device kernel image is invalid"):
    CuPy builds each kernel with NVRTC for min(the GPU's compute capability, the newest arch its NVRTC accepts)
    (cupy/cuda/compiler.py, _get_arch), so the code is missing for this GPU because the NVRTC is older than the GPU,
    not because a package left the arch out (CuPy on sm_120 with an NVRTC before 12.8)."""
    if "no-kernel-image" not in s.scores or not set(s.matches["no-kernel-image"].sources) <= {CUDART, CUDRV}:
        return
    if not re.search(RUNTIME_COMPILED, s.body):
        return
    limits = load_tables().limits
    named = [limits.get(parse_compute_capability(cc)) for cc in _distinct_ccs(s.facts)]
    version = _toolkit_named(_NAMED_TOOLKIT, s.body)
    known = [lim for lim in named if lim is not None]
    if version and named and len(known) == len(named) and all(
        parse_cuda_version(lim.first_cuda_toolkit) <= version
        and (lim.last_cuda_toolkit is None or version <= parse_cuda_version(lim.last_cuda_toolkit))
        for lim in known
    ):
        # the run-time compiler of a toolkit that targets the GPU built the module for that GPU: no arch can be
        # missing from it, so the refusal is the module's own fault (an over-long generated kernel, say), not a
        # compatibility failure
        del s.scores["no-kernel-image"]
        s.matches.pop("no-kernel-image", None)
        s.settled = True
        return
    if named and len(known) == len(named) and all(
        parse_cuda_version(lim.first_cuda_toolkit) <= _NVRTC_OF_EVERY_CUPY for lim in known
    ):
        # every NVRTC CuPy has used (CUDA 10.2 on) knows these GPUs: the NVRTC is not older than the GPU; a GPU a
        # newer toolkit dropped (Kepler under CUDA 12) is too old for it instead, which is no kernel image
        return
    _move(s, "no-kernel-image", "jit-toolchain-too-old")


_NVRTC_OF_EVERY_CUPY = CudaVersion(10, 0)  # CuPy's NVRTCs are CUDA 10.2 and later: they know every GPU of 10.0


def _toolkit_named(rx: re.Pattern[str], body: str) -> CudaVersion | None:
    """The toolkit version the first match of ``rx`` names: its first pair of (major, minor) groups that matched."""
    m = rx.search(body)
    if m is None:
        return None
    groups = m.groups()
    return next((CudaVersion(int(a), int(b)) for a, b in zip(groups[::2], groups[1::2], strict=True) if a), None)


# "device kernel image is invalid" is CUDA_ERROR_INVALID_IMAGE (200; 300, CUDA_ERROR_INVALID_SOURCE, prints the same
# string): "the device kernel image is invalid. This can also indicate an invalid CUDA module" (cuda.h), an image
# the driver cannot read, unlike a fatbin without code for the GPU (209, no kernel image).
INVALID_IMAGE = r"device kernel image is invalid|cudaErrorInvalidKernelImage|CUDA_ERROR_INVALID_(?:IMAGE|SOURCE)"
# The driver's version as reports write it: "Driver Version: 535.104", issue templates' "**NVIDIA Driver Version**:
# 516.94", and a label before the number ("Driver Version: device A: 536.23", "host 1: 525.60"), the first one
# counting.
_DRIVER_VERSION = re.compile(r"\bDriver(?: Version)?[*_`\s]*[:=]?[^\n]{0,24}?(?<![\w.])v?(\d{3})\.\d+", re.I)


def _driver_branch(s: _Scoring) -> int | None:
    """The driver's branch (535 of 535.104.05): nvidia-smi's "Driver Version:" fact, else the first driver version the
    text writes ("Nvidia Driver: v550.78", "**NVIDIA Driver Version**: 516.94")."""
    version = s.facts.get("driver_version")
    m = re.match(r"(\d{3})\.", version) if version else _DRIVER_VERSION.search(s.body)
    return int(m.group(1)) if m else None
# Compressed fatbins need driver 550.54.14+ for CUDA 12 builds and 580+ for CUDA 13 (rapids-cmake's fatbin compression
# levels, https://docs.rapids.ai/api/rapids-cmake/stable/command/rapids_cuda_enable_fatbin_compression; ollama raised
# its minimum driver to 550 for its compressed CUDA libraries, ollama/ollama#12258).
COMPRESSED_FATBIN_MIN_DRIVER = 550


# Triton's launcher reports the driver's error when it loads a cubin: "Triton Error [CUDA]: device kernel image is
# invalid" (third_party/nvidia/backend/driver.c).
_TRITON_INVALID_IMAGE = re.compile(r"Triton Error \[CUDA\]: device kernel image is invalid", re.I)


def _triton_cubin_of_another_gpu(s: _Scoring) -> None:
    """Triton compiles every kernel for the GPU it runs on (the target is the current device's compute capability),
    so a cubin that GPU cannot load came from its cache, compiled on another GPU: the cache key had no arch before
    triton#1593, and a cache directory shared across nodes or machines still carries other GPUs' cubins.  A driver too
    old for the image is the other reading, where the log says so (_image_the_driver_cannot_load runs first)."""
    if "no-kernel-image" not in s.scores or not _TRITON_INVALID_IMAGE.search(s.body):
        return
    if "driver-too-old" in s.scores or "ptx-too-new-for-driver" in s.scores:
        return
    _reclassify(s, "no-kernel-image", "mixed-gpu", [TRITON_CACHE])


def _image_the_driver_cannot_load(s: _Scoring) -> None:
    """An invalid image with a driver below what compressed fatbins need: the driver is too old to read the image."""
    if "no-kernel-image" not in s.scores or s.matches["no-kernel-image"].strongest >= 3:
        return
    if not re.search(INVALID_IMAGE, s.body):
        return
    branch = _driver_branch(s)
    toolkit = _toolkit_named(_NAMED_TOOLKIT, s.body)
    if toolkit and toolkit < _COMPRESSION_MODES_FROM:
        return  # a build of a toolkit before the compression modes: its images are no newer format than the driver's
    if branch is not None and branch < COMPRESSED_FATBIN_MIN_DRIVER:
        _move(s, "no-kernel-image", "driver-too-old")


# The toolkit a log names as its platform ("Platform: CUDA Toolkit 10.1, Driver: 418.67"); nvcc's fatbin compression
# modes (the images older drivers cannot read) came with CUDA 12.4 (nvcc --compress-mode).
_NAMED_TOOLKIT = re.compile(r"\bCUDA\s+Toolkit\s+(\d{1,2})\.(\d)\b", re.I)
_COMPRESSION_MODES_FROM = CudaVersion(12, 4)


def _cut_short_regex(message: str) -> re.Pattern[str]:
    """A line that ends inside ``message``: its first CUT_SHORT_MIN characters, then as many of the next ones as the
    line has, then only what a cut leaves (an ellipsis, closing quotes or backticks, spaces).  Runs of spaces match
    runs of spaces ("nvcc fatal   : ..."); the head must start a word."""
    units = [r"[ \t]+" if ch == " " else re.escape(ch) for ch in message]
    rest = ""
    for unit in reversed(units[CUT_SHORT_MIN:]):
        rest = f"(?:{unit}{rest})?"
    head = "".join(units[:CUT_SHORT_MIN])
    return re.compile(rf"(?<![A-Za-z0-9_]){head}{rest}[ \t.\u2026\"'`)\]]*$", re.I | re.M)


_CUT_SHORT = tuple((head, _cut_short_regex(head.message)) for head in CUT_SHORT_MESSAGES)
_CUT_SHORT_WEIGHT = 2.5


def _message_cut_short(s: _Scoring) -> None:
    """A line that ends inside an emitter's fixed message (a search excerpt or a paste cut at a length: "no kernel
    image is availa", "nvcc fatal : Unsupported gpu ar", then maybe the GPU and driver lines of the same report) names
    that message: its category scores as a clear pattern would, unless one of its patterns already matched
    (catalogue.CUT_SHORT_MESSAGES).  Each head is one regular expression led by a fixed string: linear time."""
    if s.settled:
        return
    for head, rx in _CUT_SHORT:
        if head.category in s.scores:
            continue
        m = rx.search(s.body)
        if m and not _a_phrase_of_its_own(head.message, m.group()):
            start = s.body.rfind("\n", 0, m.start()) + 1
            line = s.body[start : m.end()].strip()[:300]
            s.scores[head.category] = (_CUT_SHORT_WEIGHT, [line])
            # the rules read a scored category's match: it is this head's, with its emitter as the source
            s.matches[head.category] = _Match(_CUT_SHORT_WEIGHT, (line,), _CUT_SHORT_WEIGHT, m.start(), (head.source,))


_CUT_AT_A_WORD_MIN = 24


def _a_phrase_of_its_own(message: str, piece: str) -> bool:
    """A short piece of a message that ends where one of its words ends, with no ellipsis after it ("Unable to
    determine CUDA driver version"), is a phrase of the line's own: a cut inside a word ("CUDA driver version is
    insuffi"), an ellipsis, or a longer piece ("FlashAttention only supports Ampere GPUs or") is the message cut."""
    text = piece.rstrip(" \t.\u2026\"'`)]")
    if len(piece) > len(text) and ("\u2026" in piece[len(text) :] or "..." in piece[len(text) :]):
        return False  # an ellipsis: cut
    n = len(" ".join(text.split()))
    at_word_end = n >= len(message) or not message[n].isalnum()
    return at_word_end and n < _CUT_AT_A_WORD_MIN


# Where forms of several categories are read, the one whose cause is the most specific wins a tie: an a/f target or a
# toolchain names the cause outright, a GPU listing or a missing build is what a guard or a mixed host also shows.
_FORM_ORDER = (
    "arch-specific-mismatch",
    "jit-toolchain-too-old",
    "shared-memory-limit",
    "driver-too-old",
    "ptx-too-new-for-driver",
    "wrong-framework-build",
    "toolkit-mismatch",
    "extension-abi-mismatch",
    "ptx-jit-lower-arch",
    "capability-guard",
    "mixed-gpu",
    "no-kernel-image",
    "device-mismatch",
)
_FORM_CAP = 2.5  # a form's finding stays below an emitter's own message (weight 3-4): confidence 0.62 at most
_AF_FORM = AF_DOC
_AF_FORM_NAME, _MIXED_FORM_NAME = "an a/f target beside a failure", "GPUs of two compute capabilities beside a failure"


def _af_target_beside_failure(s: _Scoring) -> float:
    """The weight of a real 'a'/'f' target named beside a failure: an a target runs on its own compute capability
    only, an f target on its family (Programming Guide, feature availability); with a GPU named that none of the
    targets covers the mismatch is plain, with no GPU named it is the likeliest reading, and a GPU they cover is no
    mismatch at all."""
    targets = [parse_sm_arch(a) for a in s.facts.get("archs", []) if a[-1] in "af"]
    if not targets or not FAILURE.search(s.body):
        return 0.0
    if len({t.number // 10 for t in targets}) > 1:
        # a/f targets of two families ("sm100f cubins for sm120a builds"): no GPU runs code of both, so beside a
        # failure one family's code met the other's GPU (the SM names are the targets, not GPUs to check them on)
        return 2.25
    # the targets' own SM names ("sm_90a") are no GPU; GPUs named in prose ("the 4090") are
    named = _gpus_beside_targets(s, [str(t) for t in targets])
    ccs = [g.compute_capability for g in named]
    for g in s.facts.get("mentioned_gpus", []):
        try:
            ccs.append(parse_compute_capability(g["compute_capability"]))
        except ValueError:
            continue
    if not ccs:
        return 2.25
    if any(not any(target_covers(t, cc) for t in targets) for cc in ccs):
        return 2.75
    return 0.0


def _ptx_the_named_gpu_cannot_jit(s: _Scoring) -> None:
    """CUDA_ERROR_INVALID_PTX (218, "a PTX JIT compilation failed") and nothing else, on a GPU the report names: the
    driver could not compile the program's PTX for that GPU -- PTX made for a higher compute capability, or using
    instructions the GPU does not have -- so the program carries no code this GPU can run (Programming Guide,
    application compatibility: PTX runs on its own and higher compute capabilities only).  Without a GPU named the
    error says too little (a PTX file that was never built fails the same way)."""
    if s.settled or any(score >= MIN_SCORE for score, _lines in s.scores.values()):
        return
    named = 218 in _named_codes(s.facts) or _INVALID_PTX.search(s.body) is not None
    gpus = _gpus_named(s)
    # GPUs of two compute capabilities, or PTX said to be made on another GPU: the other card's code is as likely,
    # a mixed host's reading (the forms')
    if not named or _unrelated_errors(s.facts) - {218} or len({g.compute_capability for g in gpus}) != 1:
        return
    if _BUILT_ON_A_GPU.search(s.body):
        return
    line = next((ln.strip()[:300] for ln in s.body.splitlines() if _INVALID_PTX.search(ln)), "")
    _decide(s, "no-kernel-image", [line], [CUDRV], 2.0)


_INVALID_PTX = re.compile(r"INVALID_PTX|InvalidPtx|a PTX JIT compilation failed", re.I)


_INVALID_VALUE = 1  # cudaErrorInvalidValue, "invalid argument"
_OUT_OF_MEMORY = 2  # cudaErrorMemoryAllocation, "out of memory"
_OOM_WORDS = frozenset({"out of memory", "oom", "allocate", "allocating", "allocation"})
# The forms that say a job ran on another card than meant (the numberings, the wrong GPU used).
_WRONG_CARD_FORMS = frozenset(
    {"CUDA's device order against nvidia-smi's", "two numberings of the GPUs disagree", "the wrong GPU is used"}
)
_BUILD_FLAGS_DOC = "https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#gpu-feature-list"
_PG_COMPAT = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#application-compatibility"


# What the driver's JIT of lower-arch PTX shows besides a failure: slow first starts, the compute cache, wrong output.
_JIT_SIGNS_RX = re.compile(
    rf"{SLOW_WORDS}|{MISBEHAVES}|\bhangs?\b|\bComputeCache\b|\bslower\b|\bNaNs?\b|\b\d{{2,}}(?:-\d+)?\s?(?:s|sec|secs|seconds)\b",
    re.I,
)


def _build_without_code_for_a_named_gpu(s: _Scoring) -> str | None:
    """The build flags a report pastes (``-gencode``, ``-arch=sm_XY``, ``TORCH_CUDA_ARCH_LIST``,
    ``CMAKE_CUDA_ARCHITECTURES``: :mod:`.builds`) judged against the GPUs it names by the rules' own function
    (cubins of the same major and an equal or lower minor, PTX of an equal or lower arch; Programming Guide,
    application compatibility): where no target runs on any GPU named, the build has no code for the GPU
    (``no-kernel-image``); where it runs on one GPU named and not another, the host or the two machines are mixed
    (``mixed-gpu``); where a GPU runs it only by the driver JIT-compiling PTX of a lower arch, that JIT is the
    mechanism (``ptx-jit-lower-arch``: slow first starts, and code that picked its path by ``__CUDA_ARCH__`` taking
    the older arch's path).  ``a``/``f`` targets are left to the a/f form; a build with cubins for every GPU named
    says nothing."""
    targets = [t for t in iter_build_targets(s.body) if not t.variant]
    # the cubins a build lists of itself (torch.cuda.get_arch_list() printed, torch's "supports CUDA capabilities")
    for arch in s.facts.get("build_archs", []):
        if arch[-1].isdigit():
            try:
                targets += parse_require(arch)
            except CudafitError:
                continue  # an arch no table knows (sm_20, sm_30): nothing to judge it by
    if not targets:
        return None
    ccs = set()
    for cc in _distinct_ccs(s.facts):
        try:
            ccs.add(parse_compute_capability(cc))
        except ValueError:
            continue
    served = {cc: serves(targets, cc) for cc in ccs}
    missing = [cc for cc, how in served.items() if how is None]
    if missing:
        return "mixed-gpu" if len(missing) < len(ccs) else "no-kernel-image"
    # a PTX-only build runs on every GPU through the driver's JIT; with cubins, a GPU only the JIT of lower-arch PTX
    # serves (PG_JIT)
    ptx_only = not ccs and all(t.kind == "ptx" for t in targets)
    if ptx_only and not _JIT_SIGNS_RX.search(s.body):
        return None  # a PTX-only build with no GPU named says nothing of a plain failure (a compile error, say)
    if ptx_only or "ptx-jit" in served.values():
        return "ptx-too-new-for-driver" if _driver_older_than_the_build(s) else "ptx-jit-lower-arch"
    return None


# The toolkit a build was made with, as reports write it: "builds the wheel with CUDA 12.9", "nvcc V12.6",
# ".../cuda-12.4/bin/nvcc" (nvidia-smi's "CUDA Version" is the driver's, not a build's).
_BUILD_TOOLKIT = re.compile(
    r"\b(?:built|builds?|building|compiled|compiles?|compiling)\b[^\n]{0,40}?\bwith\s+(?:CUDA|nvcc)\s+(\d{2})\.(\d)\b"
    r"|\bnvcc\s+(?:V|release\s+)?(\d{2})\.(\d)\b|/cuda-(\d{2})\.(\d)/",
    re.I,
)


def _driver_older_than_the_build(s: _Scoring) -> bool:
    """Whether the driver the text names is older than the minimum driver of the toolkit the build was made with
    (CUDA Toolkit release notes, Table 3): its JIT cannot read that toolkit's PTX (CUDA compatibility guide: PTX from
    a newer toolkit needs a driver of that toolkit or newer)."""
    toolkit = _toolkit_named(_BUILD_TOOLKIT, s.body)
    branch = _driver_branch(s)
    if toolkit is None or branch is None:
        return False
    floor = toolkit_min_driver(toolkit)
    return floor is not None and branch < floor.parts[0]


def _forms_when_nothing_matched(s: _Scoring) -> None:
    """No category reached the minimum score: read the forms messages take across emitters (:mod:`.forms`), and the
    two forms of the facts (an a/f target beside a failure; GPUs of two compute capabilities beside one), unless the
    text names an error that is not a compatibility problem.  What the catalogue's weak patterns found adds in."""
    if s.settled or any(score >= MIN_SCORE for score, _lines in s.scores.values()):
        return
    words = {m.group(0).lower() for m in UNRELATED_WORDS.finditer(s.body)}
    # running out of memory is what a job put on the wrong card of a mixed host meets (the smaller one): beside a
    # report that the GPUs' numbering picked the other card it is that card's symptom, not a cause of its own
    wrong_card_only = bool(words) and words <= _OOM_WORDS
    if words and not wrong_card_only:
        return
    unrelated = _unrelated_errors(s.facts) - ({_OUT_OF_MEMORY} if wrong_card_only else set())
    forms = [
        (form, line)
        for form, line in iter_forms(s.body, logged_as_error=s.logged_as_error)
        if unrelated <= set(form.explains)
    ]
    if wrong_card_only:
        forms = [(form, line) for form, line in forms if form.name in _WRONG_CARD_FORMS]
        if not forms:
            return
    cuda_failure = CUDA_FAILURE.search(s.body)
    # GPUs of two capabilities beside a CUDA failure; an "invalid argument" (cudaErrorInvalidValue: a parameter out of
    # the acceptable range) among them is what a launch configuration or a shared-memory size chosen for one card
    # gets on the other
    two_ccs = (
        not wrong_card_only
        and cuda_failure is not None
        and len(_distinct_ccs(s.facts)) >= 2
        and unrelated <= {_INVALID_VALUE}
    )
    if unrelated and not forms and not two_ccs:
        return
    names: dict[str, list[str]] = {}
    votes: dict[str, tuple[float, list[str], list[str]]] = {
        cid: (score, list(lines), list(s.matches[cid].sources) if cid in s.matches else [])
        for cid, (score, lines) in s.scores.items()
    }

    def vote(cat_id: str, weight: float, line: str, sources: Sequence[str], name: str) -> None:
        old = votes.get(cat_id, (0.0, [], []))
        votes[cat_id] = (old[0] + weight, [line, *old[1]], [*sources, *old[2]])
        names.setdefault(cat_id, []).append(name)

    failure = FAILURE.search(s.body)
    af_weight = 0.0 if wrong_card_only else _af_target_beside_failure(s)
    if af_weight and failure and not unrelated:
        line = line_at(s.body, failure.start(), failure.end())
        vote("arch-specific-mismatch", af_weight, line, [_AF_FORM], _AF_FORM_NAME)
    if cuda_failure is not None and two_ccs:
        line = line_at(s.body, cuda_failure.start(), cuda_failure.end())
        vote("mixed-gpu", 2.0, line, [BEST_PRACTICES], _MIXED_FORM_NAME)
    built_for_others = None if wrong_card_only else _build_without_code_for_a_named_gpu(s)
    if built_for_others and not unrelated:
        # a failure, or for code the driver must JIT-compile, what that JIT costs or breaks (slow starts, garbage)
        signs = [failure] if built_for_others != "ptx-jit-lower-arch" else [failure, *_JIT_SIGNS_RX.finditer(s.body)]
        sign = next((m for m in signs if m is not None), None)
        if sign is not None:
            line = line_at(s.body, sign.start(), sign.end())
            vote(built_for_others, 2.25, line, [_BUILD_FLAGS_DOC, _PG_COMPAT], BUILD_FORM_NAME)
    for form, line in forms:
        # the finding cites the documents behind the form, not the emitters it generalises: none of them printed
        # this text, and the grounders tailor fixes to the emitters a finding names
        vote(form.category, form.weight, line, [src for src in form.sources if src.startswith("https://")], form.name)
    if "shared-memory-limit" in votes and "capability-guard" in votes and "shared-memory-limit" in names:
        # a check that gives shared memory as its reason ("requires A100 or H100 GPUs as the implementation needs a
        # large amount of shared memory") is the shared-memory limit (error_categories.md: seed 002, the check itself)
        del votes["capability-guard"]
    ranked = [(total, -_FORM_ORDER.index(cid), cid) for cid, (total, _l, _s) in votes.items() if cid in _FORM_ORDER]
    if not ranked:
        return
    total, _order, cat_id = max(ranked)
    if total < MIN_SCORE:
        return
    _total, lines, sources = votes[cat_id]
    _decide(s, cat_id, lines[:3], sources, min(total, _FORM_CAP))
    s.facts["forms"] = list(dict.fromkeys(names[cat_id]))
    if cat_id == "mixed-gpu" or BUILD_FORM_NAME in names[cat_id]:
        _adopt_mentioned_gpus(s)  # the GPUs the finding judged: its fixes name their compute capabilities


def _feature_the_named_gpu_lacks(s: _Scoring) -> None:
    """A line denies a hardware feature (FP16, bfloat16, FP8, tensor cores, ...) while the text names a GPU that
    lacks it by NVIDIA's tables (:mod:`.hw_features`): a check of that GPU turned the feature off or refused it
    (TensorRT's ``platformHasFastFp16``, Paddle-TRT's FP16 check), whatever its words -- unless the text names an
    unrelated failure.  Where nothing matched it decides; where a capability guard already leads, it names the
    feature and the GPU for the finding's fix."""
    if s.settled or UNRELATED_WORDS.search(s.body) or _unrelated_errors(s.facts):
        return
    ranked = sorted(((score, cid) for cid, (score, _lines) in s.scores.items() if score >= MIN_SCORE), reverse=True)
    if ranked and ranked[0][1] != "capability-guard":
        return
    lacking = list(iter_features_lacking(s.body, _gpus_named(s)))
    if not lacking:
        return
    # the GPU and the feature it lacks: what the guard's finding names and its fix (run without the feature)
    s.facts["features_lacking"] = [f"{f.name}: {g}" for f, g, _line in lacking]
    if not ranked:
        _decide(s, "capability-guard", [line for _f, _g, line in lacking], [f.source for f, _g, _l in lacking], 2.0)


# any line: where a logger wrote an error level (LOGGED_AS_ERROR), every line of the text is near a failure
_ANY_LINE = re.compile("")

_LINE_FAILURE = re.compile(
    r"\b(?:error|errors|fail(?:s|ed|ure|ing)?|fatal|abort(?:s|ed)?|exception|crash(?:es|ed)?|cannot|can'?t|unable)\b"
    r"|\w+(?:Error|Exception)\b",
    re.I,
)


def _vocabulary_when_nothing_matched(s: _Scoring) -> None:
    """Nothing matched, not even a form: a line that reports a failure and holds every kind of word of a category's
    vocabulary (:mod:`.lexicon`) reads as that category -- at the minimum score, or a point above the weak ones that
    matched (:func:`_decide`) -- unless the text names an unrelated failure (in a long log, words of a category on
    an informational line say nothing of the failure).  Where lines of several categories are found, the category
    of most lines wins (ties: the vocabularies' precedence)."""
    if s.settled or any(score >= MIN_SCORE for score, _lines in s.scores.values()):
        return
    if UNRELATED_WORDS.search(s.body) or _unrelated_errors(s.facts):
        return
    if not FAILURE.search(s.body):  # words of a category in a statement, a question, a document: no failure reported
        return
    found: dict[str, list[str]] = {}
    sources: dict[str, str] = {}
    for vocabulary, line in iter_vocabulary_lines(s.body):
        if not _LINE_FAILURE.search(line):  # the line itself reports the failure (a warning does not)
            continue
        found.setdefault(vocabulary.category, []).append(line)
        sources[vocabulary.category] = vocabulary.source
    if not found:
        return
    order = [v.category for v in VOCABULARIES]
    cat_id = max(found, key=lambda c: (len(found[c]), -order.index(c)))
    _decide(s, cat_id, found[cat_id][:3], [sources[cat_id]], MIN_SCORE)
    s.facts["forms"] = [f"the {cat_id} vocabulary on one line"]


def _library_outside_its_range(s: _Scoring) -> None:
    """Nothing matched, not even a form: a failure beside a library whose kernels serve a range of GPUs that every
    GPU the text names lies outside (:mod:`.libraries`, each range from the library's README, build files or
    check) is that library refusing the GPU, or its build lacking code for it -- unless the text names an unrelated
    failure."""
    if s.settled or any(score >= MIN_SCORE for score, _lines in s.scores.values()):
        return
    if UNRELATED_WORDS.search(s.body) or _unrelated_errors(s.facts):
        return
    found = list(iter_libraries_refusing(s.body, _gpus_listed(s), _ANY_LINE if s.logged_as_error else FAILURE))
    if found:
        lib, gpu, line = found[0]
        s.facts["library_range"] = f"{lib.name} serves {lib.describe()} ({lib.scope}); {gpu} is outside it"
        _decide(s, lib.reading, [line], [lib.source], MIN_SCORE)


# The precedence rules, applied in this order after the patterns' weights are summed: each picks the root
# cause where several categories match one log.
_PRECEDENCE: tuple[Callable[[_Scoring], None], ...] = (
    _errors_that_name_their_category,
    _arch_specific_beside_missing_image,
    _range_check_refusal,
    _kokkos_compiled_below_the_device,
    _flash_attention_backward_check,
    _flash_attention_stub_on_a_newer_gpu,
    _ggml_stub_of_the_gpus_own_arch,
    _xformers_capability_beside_other_reasons,
    _stub_library_is_no_old_driver,
    _insufficient_with_a_new_driver,
    _cuda_build_whose_cuinit_failed,
    _toolkit_newer_than_driver,
    _runtime_newer_than_the_driver,
    _rocm_build_beside_an_nvidia_gpu,
    _hopper_only_guards,
    _plain_cute_atom,
    _torch_capability_range,
    _guard_naming_an_arch,
    _arch_feature_beside_gpu,
    _af_build_refusal,
    _cutlass_launch_on_af_gpu,
    _offline_or_driver_jit,
    _build_dropped_the_arch,
    _guard_on_a_mixed_host,
    _mixed_host,
    _built_for_another_gpu,
    _unrelated_error_over_a_mixed_host,
    _cpu_build_loading_cuda_data,
    _cuda_extension_under_a_cpu_torch,
    _runtime_compiled_module_rejected,
    _image_the_driver_cannot_load,
    _triton_cubin_of_another_gpu,
    _message_cut_short,
    _cuda_build_on_a_machine_without_gpu,
    _ptx_the_named_gpu_cannot_jit,
    _forms_when_nothing_matched,
    _feature_the_named_gpu_lacks,
    _vocabulary_when_nothing_matched,
    _library_outside_its_range,
    _guard_on_a_mixed_host,  # again: a guard read from its form alone ("... only supported on GPUs with compute capab")
)


def _classified(body: str, logged_as_error: bool) -> tuple[list[Finding], Facts, bool]:
    """The findings above the minimum score for a cleaned ``body`` (none when nothing fits), its facts, and whether
    a rule settled that it is no compatibility failure."""
    facts = extract_facts(body)
    matches = {cat.id: m for cat in CATEGORIES if (m := _score(cat, body)) is not None}
    scores: dict[str, tuple[float, list[str]]] = {cid: (m.score, list(m.lines)) for cid, m in matches.items()}
    scoring = _Scoring(scores, matches, facts, body, logged_as_error=logged_as_error)
    for rule in _PRECEDENCE:
        rule(scoring)

    by_id = {c.id: c for c in CATEGORIES}
    sources = {cid: m.sources for cid, m in matches.items()}
    found = [
        _finding(by_id[cid], s, lines, facts, sources.get(cid, ()))
        for cid, (s, lines) in scores.items()
        if s >= MIN_SCORE
    ]
    found.sort(key=lambda f: -f.score)
    return found, facts, scoring.settled


# A line broken inside a sentence, as a hard-wrapping terminal, mail client or form breaks it: it ends in a word (no
# closing punctuation) and the next one goes on in lower case or with a number, unindented.
_WRAPPED = re.compile(r"(?<=[\w,()/'\"])\n(?=[a-z0-9(])")
# ... or a word broken at its hyphen ("gpu-\nname", "site-\npackages")
_WRAPPED_HYPHEN = re.compile(r"(?<=\w-)\n(?=[a-z0-9])")
# how much text is read a second time, unwrapped (a pasted message, not a log: a log's lines are its own)
_UNWRAP_MAX = 16_384


def classify(text: str) -> list[Finding]:
    """Findings for ``text``, most likely first; a single ``unknown`` finding when none fits.  A text that nothing
    fits is read once more with its hard-wrapped lines joined (:data:`_WRAPPED`): "no kernel image is available
    for\nexecution on the device" is the runtime's one sentence."""
    body = clean(text)
    logged_as_error = LOGGED_AS_ERROR.search(text) is not None
    found, facts, settled = _classified(body, logged_as_error)
    if not found and not settled and len(body) <= _UNWRAP_MAX:
        unwrapped = _WRAPPED.sub(" ", _WRAPPED_HYPHEN.sub("", body))
        if unwrapped != body:
            found, _facts, _settled = _classified(unwrapped, logged_as_error)
    if not found:
        return [Finding(UNKNOWN.id, UNKNOWN.title, 0.0, _evidence((), (), facts), UNKNOWN.cause, UNKNOWN.fixes)]
    return found
