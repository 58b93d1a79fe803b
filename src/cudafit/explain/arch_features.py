"""Arch-specific instructions, the targets that have them, and the GPUs a message names.

An ``a`` target (``sm_90a``) runs on exactly one compute capability and an ``f`` target (``sm_100f``) on its
family only (CUDA Programming Guide §5.1.2; :func:`cudafit.rules.compat.code_runs_on`).  Some PTX instructions
exist *only* on such targets: ``wgmma`` only on ``sm_90a``, ``tcgen05`` (Tensor Memory, UMMA) only on the
``sm_100a``/``sm_103a``/``sm_110a`` family, the block-scaled ``mma.sync`` only on ``sm_120a``/``sm_121a``.  A
kernel using one can never run on a GPU outside those targets, whatever it is rebuilt with, so a failure
message that names such an instruction beside a GPU none of its targets covers is an arch-specific mismatch
(:data:`ARCH_FEATURES`, from the PTX ISA's "Target ISA notes" of each instruction).

Libraries whose kernels are built for ``a``/``f`` targets only say so when they refuse a GPU: FlashInfer's
"is only supported on SM100, SM103", the trtllm-gen runners' ``mSM == kSM_100 || mSM == kSM_103``, sglang's
``is_sm100_supported()``, DeepGEMM's "Unsupported architecture" -- the library's own check, a capability guard
(the corpus's convention: a library's check refusing a GPU is ``capability-guard`` whichever side of it the GPU
is, shared/docs/error_categories.md).  Others state the ``a``/``f`` targets the kernels are built for ("SM90a and
SM100f", CuTe DSL's "expects arch to be one of [sm_100a, ...]", "Hopper-only"): a GPU outside those meets an
arch-specific build.  :func:`iter_support_claims` reads both, with the compute capabilities they name.

The GPUs come from :func:`iter_gpu_mentions`: the extractor's ``gpus`` facts, "SM 120" / "sm_103a" / "cc=10.3" /
"compute capability 12.1", and product names ("RTX 5090", "GB300") looked up in cudafit's GPU table.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from cudafit.explain.extract import _table_cc
from cudafit.model import ComputeCapability, SmArch, parse_compute_capability, parse_sm_arch
from cudafit.rules import compat, tables

__all__ = [
    "ARCH_FEATURES",
    "ArchFeature",
    "GpuMention",
    "SupportClaim",
    "iter_arch_features",
    "iter_gpu_mentions",
    "iter_support_claims",
    "line_at",
    "names_blackwell",
    "target_covers",
]

_PTX = "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html"


def target_covers(target: SmArch, cc: ComputeCapability) -> bool:
    """Whether code built for ``target`` runs on ``cc`` (NVIDIA's rule, :func:`cudafit.rules.compat.code_runs_on`)."""
    return compat.code_runs_on(compat.CodeKind.SASS, target.number, target.variant, cc)[0] is not None


@dataclass(frozen=True)
class ArchFeature:
    """A PTX instruction (or the hardware feature it drives) that only ``a``/``f`` targets have.

    ``pattern`` finds its names in a log (ptxas, CuTe and library names); ``targets`` are the targets the PTX
    ISA's "Target ISA notes" list for it; ``section`` is that part of the PTX ISA.
    """

    name: str
    pattern: str
    targets: tuple[SmArch, ...]
    section: str

    def __str__(self) -> str:
        return f"{self.name} ({', '.join(str(t) for t in self.targets)})"

    def covers(self, cc: ComputeCapability) -> bool:
        """Whether a GPU of compute capability ``cc`` has this instruction (some target of it runs there)."""
        return any(target_covers(t, cc) for t in self.targets)


def _targets(*names: str) -> tuple[SmArch, ...]:
    return tuple(parse_sm_arch(n) for n in names)


# Every a/f target from sm_90a on (setmaxnreg and tensormap.replace have no plain target, but all of these).
_EVERY_AF = _targets(
    "sm_90a", "sm_100a", "sm_101a", "sm_103a", "sm_110a", "sm_120a", "sm_121a", "sm_100f", "sm_110f", "sm_120f"
)

# The targets of each instruction as the PTX ISA's "Target ISA notes" list them (PTX ISA 9.x; sm_101a was renamed
# sm_110a in PTX ISA 9.0, both are listed).  CCCL's cuda::ptx wrappers repeat the same lists per instruction
# (NVIDIA/cccl:docs/libcudacxx/ptx/instructions/generated/*.rst, e.g. tcgen05_alloc.rst, tensormap_replace.rst).
ARCH_FEATURES: tuple[ArchFeature, ...] = (
    # Warpgroup MMA: "wgmma.mma_async ... requires sm_90a" (§9.7.15, Asynchronous Warpgroup Level Matrix
    # Multiply-Accumulate); CUTLASS calls its Hopper MMA atoms "GMMA" (include/cute/arch/mma_sm90_gmma.hpp).
    ArchFeature(
        "wgmma",
        r"\bwgmma(?:\.\w+)*|\bSM90_\w*GMMA\w*|\bGMMA::|\bwarpgroup[- ]level MMA\b",
        _targets("sm_90a"),
        f"{_PTX}#asynchronous-warpgroup-level-matrix-instructions",
    ),
    # 5th-generation tensor core instructions and the Tensor Memory they use (§9.7.16, TensorCore 5th Generation
    # Family Instructions: sm_100a, sm_101a/sm_110a, sm_103a and the sm_100f/sm_110f families).  CUTLASS names the
    # tcgen05 MMA "UMMA" (include/cute/arch/mma_sm100_umma.hpp) and Tensor Memory "TMEM".  The words "tensor memory"
    # alone are not taken: the runtime's cudaErrorTensorMemoryLeak ("tensor memory not completely freed") is a
    # program's bug on a GPU that has Tensor Memory, not a mismatch.
    ArchFeature(
        "tcgen05",
        r"\btcgen05(?:\.\w+)*|\bTMEM\b|\bUMMA\b",
        _targets("sm_100a", "sm_101a", "sm_103a", "sm_110a", "sm_100f", "sm_103f", "sm_110f"),
        f"{_PTX}#tensorcore-5th-generation-family-instructions",
    ),
    # redux.sync with .f32 min/max (§9.7.13.11, Parallel Synchronization and Communication Instructions:
    # redux.sync): "requires sm_100a", family sm_100f from PTX ISA 8.8.  ptxas calls it 'redux.f32', LLVM's NVPTX
    # backend llvm.nvvm.redux.sync.fmin/fmax.
    ArchFeature(
        "redux.sync .f32",
        r"\bredux(?:\.sync)?(?:\.(?:min|max|abs|NaN))*\.f32\b|\bredux\.sync\.f(?:min|max)\b",
        _targets("sm_100a", "sm_101a", "sm_100f"),
        f"{_PTX}#parallel-synchronization-and-communication-instructions-redux-sync",
    ),
    # Block-scaled warp-level MMA, mma.sync ... .kind::mxf4/.kind::mxf4nvf4/.kind::mxf8f6f4 .block_scale (§9.7.14.5,
    # mma): sm_120a, sm_121a and the sm_120f family.  ptxas: "Instruction 'mma with block scale' not supported".
    ArchFeature(
        "mma.sync .block_scale",
        r"\bmma with block scale\b|\bmma\.sync[\w.:]*?\.(?:block_scale|kind::mxf\w+)",
        _targets("sm_120a", "sm_121a", "sm_120f"),
        f"{_PTX}#warp-level-matrix-instructions-mma",
    ),
    # FP4/FP6 conversions, cvt with .e2m1x2/.e2m3x2/.e3m2x2/.ue8m0x2 (§9.7.9.21, cvt): sm_100a, sm_101a, sm_103a,
    # sm_120a, sm_121a and the sm_100f/sm_110f/sm_120f families.
    ArchFeature(
        "cvt .e2m1x2",
        r"\bcvt(?:\.\w+)*\.(?:e2m1x2|e2m3x2|e3m2x2|ue8m0x2)\b|\bcvt with \.(?:e2m1x2|e2m3x2|e3m2x2|ue8m0x2)\b",
        _targets("sm_100a", "sm_101a", "sm_103a", "sm_110a", "sm_120a", "sm_121a", "sm_100f", "sm_110f", "sm_120f"),
        f"{_PTX}#data-movement-and-conversion-instructions-cvt",
    ),
    # setmaxnreg (§9.7.19.x, Miscellaneous Instructions: setmaxnreg): sm_90a, sm_100a/f, sm_103a/f, sm_110a/f,
    # sm_120a/f, sm_121a/f -- every a/f target, no plain one.
    ArchFeature(
        "setmaxnreg",
        r"\bsetmaxnreg(?:\.\w+)*",
        _EVERY_AF,
        f"{_PTX}#miscellaneous-instructions-setmaxnreg",
    ),
    # tensormap.replace (§9.7.9.26, Data Movement and Conversion Instructions: tensormap.replace): the same a/f list.
    ArchFeature(
        "tensormap.replace",
        r"\btensormap\.replace(?:\.\w+)*",
        _EVERY_AF,
        f"{_PTX}#data-movement-and-conversion-instructions-tensormap-replace",
    ),
)

_FEATURE_RX = re.compile("|".join(f"(?P<f{i}>{f.pattern})" for i, f in enumerate(ARCH_FEATURES)), re.I)


def line_at(text: str, start: int, end: int) -> str:
    """The line (or lines) holding ``text[start:end]``, trimmed to 300 characters: what a finding quotes."""
    lo = text.rfind("\n", 0, start) + 1
    hi = text.find("\n", end)
    return text[lo : hi if hi >= 0 else None].strip()[:300]


def iter_arch_features(text: str) -> Iterator[tuple[ArchFeature, str]]:
    """(feature, the line naming it) for every arch-specific instruction the text names, each feature once."""
    seen: set[int] = set()
    for m in _FEATURE_RX.finditer(text):
        index = int(next(k for k, v in m.groupdict().items() if v is not None)[1:])
        if index not in seen:
            seen.add(index)
            yield ARCH_FEATURES[index], line_at(text, m.start(), m.end())


@dataclass(frozen=True)
class GpuMention:
    """A GPU a message names, its compute capability, and the words that named it."""

    compute_capability: ComputeCapability
    text: str

    def __str__(self) -> str:
        return f"{self.text} ({self.compute_capability})"


# "SM 120", "sm_103a", "SM_101", "sm120", CuTe DSL's "Arch.sm_121a" (not "sm100_utils", not "kSM_100"),
# TensorRT-LLM's "sm=103"; a trailing "+" ("SM_120+") is a requirement, not a GPU.
_SM_MENTION = re.compile(r"(?:(?<![\w.])|(?<=Arch\.))(?:sm|SM)(?:[ _]|=)?(\d{2,3})([af]?)(?![\w+]|\.[\dxX])")
# "cc=10.3", "CC 12.0", "compute capability 12.1", "Compute Capability: 12.0", "compute_cap = 12.0",
# "compute capability (12, 0)"; not a minimum ("compute capability 8.0 or higher").
# "SM10.3", "SM 12.1" (not "SM 10.x")
_SM_DOTTED = re.compile(r"(?<![\w.])SM\s?(\d{1,2})\.(\d)(?![\d.x])")
_CC_MENTION = re.compile(
    r"\b(?:cc|compute[ _]cap(?:ability)?)\s*(?:[:=]\s*|\(CC\)\s*|is\s+|of\s+)?\(?(\d{1,2})(?:\.|,\s*)(\d)\)?"
    r"(?!\d|\s*(?:or (?:higher|newer|later|above)|\+|and (?:above|newer)))",
    re.I,
)
# Product names as people and tools write them: "RTX 5090", "RTX5080", "RTX PRO 6000", "GB10", "B300", "H100",
# "A100-SXM4", "L40S", "Jetson Thor", "DGX Spark"; each is looked up in cudafit's GPU table (ambiguous or unknown
# names are left out).
_PRODUCT = re.compile(
    r"\b(?:RTX\s?(?:PRO\s?)?\d{4}(?:\s?(?:Ti|SUPER|D))?|GTX\s?\d{3,4}(?:\s?Ti)?|G[BH]\d{2,3}|[ABHL]\d{2,3}S?"
    r"|Jetson(?:\s(?:AGX|Orin|Thor|Nano))+|DGX\sSpark|Tesla\s[A-Z]\d{1,3})\b"
)
_MAX_PRODUCT_LOOKUPS = 16


def _product_cc(name: str) -> ComputeCapability | None:
    """The table's compute capability for a product name, through the extractor's own cached look-up."""
    cc = _table_cc(name)
    return parse_compute_capability(cc) if cc else None


def _known(cc: ComputeCapability) -> bool:
    return tables.cc_limits(cc) is not None


def _cc_of_number(number: str) -> ComputeCapability | None:
    n = int(number)
    cc = ComputeCapability(n // 10, n % 10)
    return cc if _known(cc) else None


def iter_gpu_mentions(text: str, gpus: Iterable[tuple[str, str]] = ()) -> Iterator[GpuMention]:
    """The GPUs ``text`` names: ``gpus`` (the extractor's (name, "X.Y") facts) first, then SM numbers, compute
    capabilities and product names; each compute capability once, only those cudafit's table knows."""
    seen: set[ComputeCapability] = set()

    def fresh(cc: ComputeCapability | None) -> bool:
        if cc is None or cc in seen:
            return False
        seen.add(cc)
        return True

    for name, value in gpus:
        major, _, minor = value.partition(".")
        if major.isdigit() and minor.isdigit():
            cc = ComputeCapability(int(major), int(minor))
            if _known(cc) and fresh(cc):
                yield GpuMention(cc, name)
    for m in _SM_MENTION.finditer(text):
        by_number = _cc_of_number(m.group(1))
        if by_number is not None and fresh(by_number):
            yield GpuMention(by_number, m.group(0))
    for m in (*_SM_DOTTED.finditer(text), *_CC_MENTION.finditer(text)):
        written = ComputeCapability(int(m.group(1)), int(m.group(2)))
        if _known(written) and fresh(written):
            yield GpuMention(written, m.group(0))
    names = dict.fromkeys(m.group(0) for m in _PRODUCT.finditer(text))
    for name in list(names)[:_MAX_PRODUCT_LOOKUPS]:
        product = _product_cc(name)
        if product is not None and fresh(product):
            yield GpuMention(product, name)


_BLACKWELL = re.compile(r"\bBlackwell\b", re.I)


def names_blackwell(text: str) -> bool:
    """Whether the text calls its GPU a Blackwell (compute capability 10.x, 11.x or 12.x, which one unknown)."""
    return bool(_BLACKWELL.search(text))


@dataclass(frozen=True)
class SupportClaim:
    """A message stating the GPUs a library's kernels exist for.

    ``ccs``: those compute capabilities; ``guard``: the library's own check refused the GPU (an exception or
    assertion naming plain SMs or majors), as opposed to a statement of the a/f targets its kernels are built for
    ("SM90a and SM100f", CuTe DSL's target list, "Hopper-only"); ``source``: where the message is written;
    ``span``: where it is in the text (the SM numbers inside it are the claim's, not the GPU's; a claim found in a
    longer context, such as trtllm-gen's "Unsupported architecture", spans the claim only).
    """

    ccs: frozenset[ComputeCapability]
    guard: bool
    line: str
    source: str
    span: tuple[int, int]


def _major(*majors: int) -> frozenset[ComputeCapability]:
    return frozenset(cc for cc in tables.iter_compute_capabilities() if cc.major in majors)


def _covered_by(*targets: str) -> frozenset[ComputeCapability]:
    built = _targets(*targets)
    return frozenset(cc for cc in tables.iter_compute_capabilities() if any(target_covers(t, cc) for t in built))


def _numbers(group: str) -> frozenset[ComputeCapability]:
    """The compute capabilities of "SM100, SM103" or "SM90a and SM100f": an 'f' target names its family."""
    ccs: set[ComputeCapability] = set()
    for number, variant in re.findall(r"(\d{2,3})([af]?)", group):
        if variant == "f":
            ccs |= tables.family_members(int(number))
        elif (cc := _cc_of_number(number)) is not None:
            ccs.add(cc)
    return frozenset(ccs)


FLASHINFER_GEMM = "flashinfer-ai/flashinfer:flashinfer/gemm/gemm_base.py"
FLASHINFER_FMHA = "flashinfer-ai/flashinfer:include/flashinfer/trtllm/fmha/fmhaRunner.cuh"
SGLANG_UTILS = "sgl-project/sglang:python/sglang/srt/utils/common.py"
FA4_SM100 = "Dao-AILab/flash-attention:flash_attn/cute/flash_fwd_sm100.py"
DEEPGEMM_API = "deepseek-ai/DeepGEMM:csrc/apis/gemm.hpp"
FA3_HOPPER = "Dao-AILab/flash-attention:hopper/setup.py"
VLLM_FLASHMLA = "vllm-project/vllm:vllm/attention/ops/flashmla.py"
CUTE_DSL_MMA = "NVIDIA/cutlass:python/CuTeDSL/cutlass/cute/nvgpu/tcgen05/mma.py"

_SM = r"(?i:sm)_?\s?\d{2,3}[af]?(?![\w.])"
_SMS = rf"{_SM}(?:(?:,\s*|\s*/\s*|,?\s+(?:or|and)\s+){_SM})*"
# ... not a minimum: "only supports sm75+", "only supported on SM80 and newer" are guards' floors, not a build's targets
_NOT_A_MINIMUM = r"(?!\+|\s*(?:and|or)\s+(?:above|newer|later|higher|up)\b)"
# (regex, how its groups give the compute capabilities, guard?, source)
_CLAIMS: tuple[tuple[re.Pattern[str], str, bool, str], ...] = (
    # FlashInfer's backend checks (_match_sm_version): "gemm_fp8_nt_groupwise is only supported on SM100, SM103 in
    # trtllm backend.", "... requires SM100, SM120, or SM121, but got cuda:0"; TensorRT-LLM's "The attention sinks
    # is only supported on SM90" has the same form.
    (re.compile(rf"\b(?:is )?only supported on ({_SMS}){_NOT_A_MINIMUM}|\brequires ({_SMS}),? but got\b"),
     "numbers", True, FLASHINFER_GEMM),
    # vLLM's FlashMLA check (is_device_capability_family(90)): "FlashMLA Dense is only supported on Hopper devices."
    (re.compile(r"\bis only supported on Hopper(?: devices| GPUs)?\b(?!,? (?:and|or) (?:newer|later|above|Blackwell))"),
     "hopper", True, VLLM_FLASHMLA),
    # CuTe DSL's MMA/copy atoms: OpError(f"expects arch to be one of {self.admissible_archs}, but got {arch}") --
    # the atom's a/f targets, then the arch the DSL compiles for (the GPU's, unless CUTE_DSL_ARCH says otherwise).
    (re.compile(r"expects arch to be one of (?P<claim>\[[^\]\n]*\])\s*,?\s*but got\b"), "numbers", False, CUTE_DSL_MMA),
    # The trtllm-gen runners: FLASHINFER_CHECK(mSM == kSM_100 || mSM == kSM_103, "Unsupported architecture").
    (re.compile(r"==\s*kSM_(\d{2,3})(?:\s*\|\|\s*\w+\s*==\s*kSM_\d{2,3})*"), "numbers", True, FLASHINFER_FMHA),
    # sglang: is_sm100_supported() / is_sm90_supported() check the device's major (device_capability_majors=[10]).
    (re.compile(r"\bis_sm(\d{2,3})_supported\(\)(?:\s*(?:or|and)\s*(?:not\s+)?is_sm(\d{2,3})_supported\(\))*"),
     "majors", True, SGLANG_UTILS),
    # flash-attn-4: assert sm_100 <= arch <= sm_110f, "Only SM 10.x and 11.x are supported"
    (re.compile(r"\bOnly SM (\d{1,2})\.x(?:(?:,| and| or) (\d{1,2})\.x)* (?:are|is) supported"), "majors", True,
     FA4_SM100),
    # DeepGEMM's dispatch: DG_HOST_UNREACHABLE("Unsupported architecture") -- kernels for sm_90a and sm_100a/f only.
    (re.compile(r"Assertion error \([^)\n]*\): Unsupported architecture\b"), "deepgemm", True, DEEPGEMM_API),
    # trtllm-gen kernels (FlashInfer's and TensorRT-LLM's runners) are cubins for sm_100a/sm_103a (sm_100f) only.
    (re.compile(r"(?i:trtllm|TllmGen)[\s\S]{0,400}?(?P<claim>\bUnsupported architecture\b)"), "trtllm", True,
     FLASHINFER_FMHA),
    # A build described as Hopper-only (FlashAttention-3's sm_90a build, hopper/setup.py): not a guard.
    (re.compile(r"\bHopper[- ]only\b", re.I), "hopper", False, FA3_HOPPER),
)  # fmt: skip


def iter_support_claims(text: str) -> Iterator[SupportClaim]:
    """The statements in ``text`` of which GPUs a library's kernels are for (see the module docstring)."""
    for rx, kind, checks, source in _CLAIMS:
        for m in rx.finditer(text):
            named = m.groupdict()
            groups = " ".join(g for g in m.groups() if g)
            guard = checks
            if kind == "numbers":
                ccs = _numbers(groups)
                # a list of a/f targets ("SM90a and SM100f", CuTe DSL's [sm_100a, ...]) describes what the kernels
                # are built for, whatever prints it: the build, not a guard, is what a GPU outside it meets
                guard = checks and not re.search(r"\d[af]\b", groups)
            elif kind == "majors":
                majors = [int(g) for g in re.findall(r"\d+", groups)]
                ccs = _major(*[n // 10 if n >= 20 else n for n in majors])
            elif kind == "deepgemm":
                ccs = _covered_by("sm_90a", "sm_100f")
            elif kind == "trtllm":
                ccs = _covered_by("sm_100a", "sm_103a", "sm_100f")
            else:  # "hopper": a build or check for sm_90a, compute capability 9.0
                ccs = _covered_by("sm_90a")
            if ccs:
                span = m.span("claim") if named.get("claim") else m.span()
                yield SupportClaim(ccs, guard, line_at(text, *span), source, span)
