"""Hardware features GPUs have from one compute capability on, and the messages that say a GPU lacks one.

A library that turns a feature off, or refuses to run, because the GPU lacks it prints its own words for it:
TensorRT's "platform does not have FP16 support" (``platformHasFastFp16()`` false), Paddle-TRT's "the hardware do
not support FP16 speed up", a trainer's "this GPU does not support bfloat16".  Which GPUs lack the feature is not
a matter of wording but of NVIDIA's tables, so a message that denies a feature *and* names a GPU that, by those
tables, really lacks it is a capability check refusing that GPU -- whatever the library's words -- where the same
words beside a GPU that has the feature say nothing certain.

The compute capabilities of each feature (:data:`HW_FEATURES`), each with the NVIDIA document it comes from:

* fast FP16 arithmetic: the CUDA C++ Programming Guide's throughput table ("Arithmetic Instructions") gives 16-bit
  floating-point add/multiply/multiply-add no native rate on 5.0 and 5.2, a full or double rate on 5.3, 6.0, 6.2
  and 7.0 onwards, and 2 results per clock per SM on 6.1 (1/64 of FP32): TensorRT's ``platformHasFastFp16`` is
  true on exactly the former;
* 4-way INT8 dot product (``dp4a``, what "fast INT8" means before tensor cores): PTX ISA, ``dp4a``: sm_61 and newer;
* tensor cores (warp matrix functions, ``wmma``): Programming Guide, "Warp Matrix Functions": 7.0 and newer;
* bfloat16 and TF32 tensor-core types: Programming Guide, "Warp Matrix Functions", alternate floating point: 8.0
  and newer;
* FP8 (e4m3/e5m2) matrix multiply-accumulate: PTX ISA, ``mma`` with ``.e4m3``/``.e5m2``: sm_89 and newer;
* FP4 (e2m1) matrix multiply: PTX ISA, ``tcgen05.mma`` kind ``f8f6f4``/``mxf4`` (sm_100a family, sm_110a) and
  ``mma`` block-scaled kinds (sm_120a family): compute capability 10.x, 11.x and 12.x only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from cudafit.explain.arch_features import GpuMention, line_at
from cudafit.model import ComputeCapability

__all__ = ["HW_FEATURES", "HwFeature", "feature_named", "iter_features_lacking"]

_PG_THROUGHPUT = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#arithmetic-instructions"
_PG_WMMA = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#warp-matrix-functions"
_PG_WMMA_ALT = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#alternate-floating-point"
_PTX_DP4A = "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#integer-arithmetic-instructions-dp4a"
_PTX_MMA = "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#warp-level-matrix-instructions-mma"
_PTX_TCGEN05 = "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#tcgen05-mma-instructions"


@dataclass(frozen=True)
class HwFeature:
    """A hardware feature, the words messages use for it, and the compute capabilities that have it: every CC from
    ``since`` on and those in ``also``, or only the majors in ``majors`` when that is set."""

    name: str
    words: str
    since: ComputeCapability
    source: str
    # the GPUs that have it, in words, and what a program does without it (the fix a finding offers)
    held_by: str
    instead: str
    also: frozenset[ComputeCapability] = frozenset()
    majors: frozenset[int] = frozenset()

    def has(self, cc: ComputeCapability) -> bool:
        """Whether a GPU of ``cc`` has the feature, by NVIDIA's tables."""
        if self.majors:
            return cc.major in self.majors
        if cc in self.also:
            return True
        return cc >= self.since


def _cc(text: str) -> ComputeCapability:
    major, _, minor = text.partition(".")
    return ComputeCapability(int(major), int(minor))


HW_FEATURES: tuple[HwFeature, ...] = (
    HwFeature(
        "fast FP16 arithmetic",
        r"fp16|float16|half[- ]precision|half type",
        _cc("7.0"),
        _PG_THROUGHPUT,
        "compute capability 5.3, 6.0, 6.2 and 7.0 or newer (6.1 runs FP16 at 1/64 of the FP32 rate)",
        "run in FP32 (turn the FP16 mode off): FP16 brings no speed on this GPU",
        also=frozenset({_cc("5.3"), _cc("6.0"), _cc("6.2")}),
    ),
    HwFeature(
        "INT8 dot product (dp4a)",
        r"int8|dp4a",
        _cc("6.1"),
        _PTX_DP4A,
        "compute capability 6.1 or newer",
        "run in FP32 or FP16 instead of INT8",
    ),
    HwFeature(
        "tensor cores",
        r"tensor ?cores?|wmma",
        _cc("7.0"),
        _PG_WMMA,
        "compute capability 7.0 or newer (not the GeForce GTX 16 series and MX450/MX550, Turing parts without them)",
        "the work runs on the CUDA cores without the tensor-core speed-up: nothing to fix unless the program "
        "requires them",
    ),
    HwFeature(
        "bfloat16",
        r"bf16|bfloat16",
        _cc("8.0"),
        _PG_WMMA_ALT,
        "compute capability 8.0 or newer",
        "use float16 (or float32) instead of bfloat16 on this GPU",
    ),
    HwFeature(
        "TF32",
        r"tf32|tensorfloat-?32",
        _cc("8.0"),
        _PG_WMMA_ALT,
        "compute capability 8.0 or newer",
        "leave TF32 off: it is a speed mode, and float32 gives the same or better results",
    ),
    HwFeature(
        "FP8",
        r"fp8|float8\w*|e4m3\w*|e5m2\w*",
        _cc("8.9"),
        _PTX_MMA,
        "compute capability 8.9 or newer",
        "use a BF16/FP16 model or kernels, or a weight-only FP8 path that dequantises on this GPU (where the "
        "library offers one)",
    ),
    HwFeature(
        "FP4",
        r"fp4|nvfp4|mxfp4|e2m1",
        _cc("10.0"),
        _PTX_TCGEN05,
        "compute capability 10.x, 11.x and 12.x (Blackwell)",
        "use a BF16 model or kernels (FP8 where the GPU has it: 8.9 and newer), or a weight-only FP4 path that "
        "dequantises on this GPU (where the library offers one)",
        majors=frozenset({10, 11, 12}),
    ),
)

# A denial of a feature around its name, within its clause: "does not have FP16 support", "do not support FP16",
# "FP16 is not supported", "no fast FP16", "lacks tensor cores", "FP8 ... unsupported", "not available".  A bare "no"
# or "without" counts only right before the feature ("no bf16 support", "without tensor cores"): "No module named
# 'apex' ... --fp16" and "no such problem in fp32" deny nothing of the GPU.
_DENIAL = (
    r"(?:does(?: not|n'?t)|do(?: not|n'?t)|cannot|can'?t|is not|isn'?t|are not|aren'?t)\s+(?:\w+\s+){0,2}?"
    r"(?:support|have|has|handle|run|use|provide)"
    r"|\bnot (?:supported|available|enabled)\b|\bunsupported\b|\bunavailable\b|\black(?:s|ing)?\b"
)
_DENIED_RIGHT_BEFORE = re.compile(r"\b(?:no|without)\s+(?:(?:native|fast|hardware)\s+)?$", re.I)
_FEATURE_RX = re.compile(
    "|".join(f"(?P<f{i}>\\b(?:{f.words})\\b)" for i, f in enumerate(HW_FEATURES)), re.I
)
_DENIAL_RX = re.compile(_DENIAL, re.I)
# how far a denial may stand from the feature it denies, on the feature's line
_REACH = 60
_CLAUSE_END = re.compile(r"[\n|;,]")
# how many mentions of one feature are read (a long text of feature names costs no more)
_MAX_MENTIONS = 64
# a person's words, not a program's: a question, or the writer's own card ("my GTX 1080 does not have tensor cores,
# is that expected?") -- what they know of their GPU, not a check that refused it
_OWN_WORDS = re.compile(
    r"\?\s*$|\b(?:[Mm]y|[Oo]ur|[Ww]e|[Ww]e're|I'm)\b|(?<![\[\w/.])I(?![\]\w/.'])"
)
# a numerical or training symptom beside the feature ("NaN with fp16"): no check of the GPU
_SYMPTOM = re.compile(r"\b(?:NaNs?|inf|loss|diverg\w*|overflow|underflow|accuracy|precision loss)\b", re.I)


def _denied(text: str, start: int, end: int) -> bool:
    """Whether a denial stands within reach of the feature's name at ``start``-``end``, in its clause (a line, and
    no ``|``, ``;`` or ``,`` between them: a table's "INT8: no | FP16: yes" denies INT8 only); only the window is
    read, so that a long line full of feature names costs linear time."""
    before = text[max(0, start - _REACH) : start]
    before = _CLAUSE_END.split(before)[-1]
    after = _CLAUSE_END.split(text[end : end + _REACH], 1)[0]
    return bool(_DENIAL_RX.search(before) or _DENIAL_RX.search(after) or _DENIED_RIGHT_BEFORE.search(before))


def iter_features_lacking(text: str, gpus: Iterable[GpuMention]) -> Iterator[tuple[HwFeature, GpuMention, str]]:
    """(feature, GPU, line) for each feature the text denies on a line of its own while naming a GPU that lacks it
    by NVIDIA's tables; a GPU that has the feature makes the denial no evidence of a refused GPU, so nothing is
    yielded for that feature then."""
    named = list(gpus)
    if not named:
        return
    seen: set[int] = set()
    read: dict[int, int] = {}
    for m in _FEATURE_RX.finditer(text):
        index = int(next(k for k, v in m.groupdict().items() if v is not None)[1:])
        read[index] = read.get(index, 0) + 1
        if index in seen or read[index] > _MAX_MENTIONS:
            continue
        if not _denied(text, m.start(), m.end()):
            continue
        seen.add(index)
        feature = HW_FEATURES[index]
        if any(feature.has(g.compute_capability) for g in named):
            continue
        line = line_at(text, m.start(), m.end())
        if _OWN_WORDS.search(line) or _SYMPTOM.search(line):
            continue
        yield feature, named[0], line


def feature_named(name: str) -> HwFeature | None:
    """The feature whose name is ``name`` (as a finding's ``features_lacking`` writes it, before the colon)."""
    return next((f for f in HW_FEATURES if f.name == name), None)
