"""What every grounder starts from and answers with, and the small phrases they share.

A grounder (one per category, :data:`cudafit.explain.grounders.GROUNDERS`) reads a :class:`Ground` (the
finding, the machine's :class:`~cudafit.explain.context.Context` and the GPUs to reason about) and returns a
:class:`Grounded` (cause, fixes, evidence, and findings the machine adds).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cudafit.explain.classify import Finding
from cudafit.explain.context import Context
from cudafit.explain.evidence import Evidence
from cudafit.explain.extract import arch_number
from cudafit.model import ComputeCapability, Gpu, parse_compute_capability, parse_sm_arch

__all__ = [
    "Ground",
    "Grounded",
    "arch_list",
    "arch_runs_on",
    "basename",
    "cc_of_arch",
    "default",
    "describe",
    "gpus_of",
    "lines_of",
    "plan_command",
    "real_arch",
]


def arch_runs_on(arch: str, cc: ComputeCapability) -> bool:
    """Whether code for ``arch`` (``sm_86``, ``sm_90a``, ``sm_100f``, ``compute_80``) can run on ``cc``:
    the verdict engine's rules (``rules.engine.arch_runs_on``); a name that is not an arch runs nowhere."""
    from cudafit.rules.engine import arch_runs_on as engine_arch_runs_on

    try:
        return engine_arch_runs_on(arch, cc)
    except ValueError:
        return False


def cc_of_arch(arch: str) -> ComputeCapability:
    """``sm_75`` / ``compute_90a`` -> 7.5 / 9.0 (for names :func:`real_arch` accepts; facts are checked so)."""
    return ComputeCapability.from_arch_number(arch_number(arch))


def real_arch(name: str) -> str | None:
    """``name`` when it is a target a compute capability has (``sm_90a``), else ``None``: a message's own text
    ("targeting sm_05a", "SM00A") can name numbers that are no compute capability, and a grounder that read
    them as one would fail."""
    try:
        parsed = parse_sm_arch(name)
        ComputeCapability.from_arch_number(parsed.number)
    except ValueError:
        return None
    return str(parsed)


def buildable(ccs: Sequence[ComputeCapability]) -> tuple[list[ComputeCapability], list[ComputeCapability]]:
    """(the GPUs one build can cover, those left out): a GPU no toolkit of the table targets is left out beside GPUs
    one does (no build covers both); when none is targetable, all are kept, and the fixes say why."""
    from cudafit.plan import toolkits_targeting

    kept = [cc for cc in ccs if toolkits_targeting(f"sm_{cc.arch_number}")]
    if not kept:
        return list(ccs), []
    return kept, [cc for cc in ccs if cc not in kept]


def arch_list(ccs: Sequence[ComputeCapability]) -> str:
    """``TORCH_CUDA_ARCH_LIST`` for these compute capabilities: each once, lowest first, ``;``-separated."""
    return ";".join(str(c) for c in sorted(set(ccs)))


def describe(gpus: Sequence[Gpu]) -> str:
    """``Tesla T4 (7.5), NVIDIA A100 (8.0)``."""
    return ", ".join(g.label for g in gpus)


def plan_command(ccs: Sequence[ComputeCapability]) -> str:
    """The ``cudafit plan`` command that gives the build flags for these compute capabilities."""
    return "cudafit plan " + " ".join(f"--gpu {c}" for c in sorted(set(ccs)))


def basename(path: str) -> str:
    """The file name of a path written with either separator."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def lines_of(evidence: Evidence) -> str:
    """The matching lines as one string, for the grounders' own finer patterns."""
    return " ".join(evidence.get("lines", []))


def gpus_of(finding: Finding, context: Context) -> tuple[Gpu, ...]:
    """The GPUs to reason about: the machine's, else those the text describes (a log's "compute capability
    8.61" names no GPU we can reason about and is left out)."""
    if context.gpus:
        return context.gpus
    out: list[Gpu] = []
    for g in finding.evidence.get("gpus", []):
        try:
            out.append(Gpu(g["name"], parse_compute_capability(g["compute_capability"])))
        except ValueError:
            continue
    return tuple(out)


@dataclass(frozen=True)
class Ground:
    """What every grounder starts from: the finding, the machine, and the GPUs (machine's, else the text's)."""

    finding: Finding
    context: Context
    gpus: tuple[Gpu, ...]

    @property
    def ev(self) -> Evidence:
        """The finding's evidence (typed: :class:`cudafit.explain.evidence.Evidence`)."""
        return self.finding.evidence

    @property
    def ccs(self) -> list[ComputeCapability]:
        """The compute capability of each GPU, in order."""
        return [g.compute_capability for g in self.gpus]

    @property
    def plan(self) -> str | None:
        """``TORCH_CUDA_ARCH_LIST`` for the GPUs, ``None`` without GPUs.  A GPU no toolkit of cudafit's table can
        target (Kepler's 3.0, Fermi) is left out beside GPUs one can: no single build covers both, and the fixes say
        what that GPU can run instead."""
        if not self.ccs:
            return None
        kept, _left_out = buildable(self.ccs)
        return arch_list(kept)

    @property
    def emitters(self) -> list[str]:
        """The projects whose messages matched, strongest pattern first."""
        return list(self.ev.get("emitters", []))


@dataclass
class Grounded:
    """A grounder's answer: cause, fixes, evidence (changed or not) and findings the machine adds."""

    cause: str
    fixes: list[str]
    evidence: Evidence
    extra: list[Finding] = field(default_factory=list)


def default(g: Ground) -> Grounded:
    """The category's own cause and fixes, to be refined (or kept where nothing is known)."""
    return Grounded(g.finding.cause, list(g.finding.fixes), g.ev)
