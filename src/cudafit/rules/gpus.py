"""GPU names -> compute capability, without silent guesses.

Accepts what NVML and nvidia-smi report ("NVIDIA GeForce RTX 3090", "Tesla V100-SXM2-16GB",
"NVIDIA H100 80GB HBM3") and what people type ("2080", "1080ti", "h100 sxm", "sm_86", "8.6").
Case, spacing, dashes, vendor/brand words and memory sizes are ignored.  A query that matches
several products resolves only when they all share one compute capability (the products are
listed); otherwise, and for unknown names, :class:`~cudafit.errors.UnknownGpuError` lists the
candidates.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from cudafit.errors import UnknownGpuError, ValueParseError
from cudafit.model import ComputeCapability, parse_compute_capability
from cudafit.rules.tables import load_tables

__all__ = ["GpuResolution", "GpuSpec", "iter_gpu_specs", "normalize_gpu_name", "resolve_gpu"]

# Words that never distinguish products ("NVIDIA GeForce RTX 3090" == "RTX 3090"); "quadro" does
# (Quadro RTX 6000 is 7.5, RTX 6000 Ada 8.9), so it is kept.
_NOISE = {"nvidia", "geforce", "tesla", "corporation", "gpu", "nvgpu"}  # nvgpu: the Jetson driver, "Orin (nvgpu)"
_MEMORY = re.compile(r"^(\d+(\.\d+)?(gb|g|gib)|hbm\w*|gddr\w*)$")
_CC_QUERY = re.compile(r"^(sm|compute|cc)?[ _]?(\d{1,2}\.\d|\d{2,3})[af]?$")


@dataclass(frozen=True)
class GpuSpec:
    """One GPU product of the data table."""

    name: str
    aliases: tuple[str, ...]
    compute_capability: ComputeCapability
    architecture: str
    segment: str
    memory_gb: tuple[float, ...]
    sm_count: int | None
    chip: str


@dataclass(frozen=True)
class GpuResolution:
    """The answer to a query: one compute capability and the products behind it."""

    query: str
    name: str
    compute_capability: ComputeCapability
    architecture: str
    matches: tuple[GpuSpec, ...]


def normalize_gpu_name(text: str, *, drop_memory: bool = False) -> str:
    """Lower-case tokens without vendor words, dashes or (optionally) memory sizes."""
    s = text.lower().replace("(r)", " ").replace("(tm)", " ")
    s = re.sub(r"[-_/,()]+", " ", s)
    tokens = [t for t in s.split() if t not in _NOISE]
    if drop_memory:
        tokens = [t for t in tokens if not _MEMORY.match(t)]
    return " ".join(tokens)


@functools.lru_cache(maxsize=1)
def _specs() -> tuple[GpuSpec, ...]:
    return tuple(
        GpuSpec(
            name=g["name"],
            aliases=tuple(g["aliases"]),
            compute_capability=parse_compute_capability(g["compute_capability"]),
            architecture=g["architecture"],
            segment=g["segment"],
            memory_gb=tuple(g["memory_gb"]),
            sm_count=g["sm_count"],
            chip=g["chip"],
        )
        for g in load_tables().gpus
    )


def iter_gpu_specs() -> Iterator[GpuSpec]:
    """Every GPU product in the data, in table order."""
    yield from _specs()


def _plain(text: str) -> str:
    """Lower case, dashes and punctuation as spaces; vendor words kept (aliases are matched as written)."""
    return " ".join(re.sub(r"[-_/,()]+", " ", text.lower()).split())


@functools.lru_cache(maxsize=1)
def _indexes() -> tuple[dict[str, tuple[GpuSpec, ...]], dict[str, tuple[GpuSpec, ...]]]:
    """(strong, weak) keys.  Strong: canonical names without vendor words (the NVML form) and
    aliases as written.  Weak: aliases without vendor words ("nvidia titan x" -> "titan x"), which
    only count when no less specific reading of the query is ambiguous."""
    strong: dict[str, list[GpuSpec]] = {}
    weak: dict[str, list[GpuSpec]] = {}
    for spec in _specs():
        keys = {normalize_gpu_name(spec.name), normalize_gpu_name(spec.name, drop_memory=True)}
        keys.update(_plain(a) for a in spec.aliases)
        for key in keys:
            if key:
                strong.setdefault(key, []).append(spec)
        for a in spec.aliases:
            key = normalize_gpu_name(a)
            if key and key not in keys:
                weak.setdefault(key, []).append(spec)
    return (
        {k: tuple(dict.fromkeys(v)) for k, v in strong.items()},
        {k: tuple(dict.fromkeys(v)) for k, v in weak.items()},
    )


def _broader(tokens: set[str]) -> tuple[GpuSpec, ...]:
    """Products whose name or an alias contains every token of the query (the query is less specific)."""
    strong, _weak = _indexes()
    found: list[GpuSpec] = []
    for key, specs in strong.items():
        if tokens <= set(normalize_gpu_name(key).split()):
            found.extend(specs)
    return tuple(dict.fromkeys(found))


def _resolution(query: str, matches: tuple[GpuSpec, ...]) -> GpuResolution:
    ccs = {m.compute_capability for m in matches}
    if len(ccs) > 1:
        listed = ", ".join(f"{m.name} ({m.compute_capability})" for m in matches)
        msg = (
            f"GPU name {query!r} is ambiguous: it matches {listed}; "
            "give the full product name or the compute capability"
        )
        raise UnknownGpuError(msg, query=query, candidates=tuple(m.name for m in matches))
    first = matches[0]
    name = first.name if len(matches) == 1 else " / ".join(m.name for m in matches)
    return GpuResolution(query, name, first.compute_capability, first.architecture, matches)


def resolve_gpu(query: str) -> GpuResolution:
    """Resolve a GPU name, alias or compute capability (``sm_86``, ``8.6``) to one compute capability."""
    text = query.strip()
    if not text:
        msg = "empty GPU name"
        raise UnknownGpuError(msg, query=query)
    m = _CC_QUERY.match(text.lower())
    if m:
        try:
            cc = parse_compute_capability(m.group(2))
        except ValueParseError:
            cc = None
        limits = load_tables().limits
        if cc is not None and cc in limits:
            products = tuple(s for s in _specs() if s.compute_capability == cc)
            return GpuResolution(query, f"compute capability {cc}", cc, limits[cc].architecture, products)
    strong, weak = _indexes()
    plain = _plain(text)
    for key in (plain, normalize_gpu_name(text), normalize_gpu_name(text, drop_memory=True)):
        if key in strong:
            return _resolution(query, strong[key])
    tokens = set(normalize_gpu_name(text, drop_memory=True).split())
    broader = _broader(tokens) if tokens else ()
    key = normalize_gpu_name(text, drop_memory=True)
    if key in weak:
        matches = weak[key]
        if len({b.compute_capability for b in (*matches, *broader)}) > 1:
            return _resolution(query, tuple(dict.fromkeys((*matches, *broader))))  # raises: ambiguous
        return _resolution(query, matches)
    # Containment: every token of a known name/alias appears in the query
    # ("a100 sxm4 80gb hbm2e"), preferring the longest such name.
    best: list[tuple[int, GpuSpec]] = []
    for skey, specs in strong.items():
        ktoks = normalize_gpu_name(skey, drop_memory=True).split()
        if ktoks and set(ktoks) <= tokens and any(ch.isdigit() for ch in skey):
            best.extend((len(ktoks), s) for s in specs)
    if best:
        top = max(n for n, _ in best)
        return _resolution(query, tuple(dict.fromkeys(s for n, s in best if n == top)))
    # Less specific than every name ("rtx 6000"): resolve only if all such products agree.
    if broader and any(ch.isdigit() for ch in key):
        return _resolution(query, broader)
    near = difflib.get_close_matches(normalize_gpu_name(text), list(strong), n=5, cutoff=0.6)
    candidates = tuple(dict.fromkeys(s.name for k in near for s in strong[k]))
    hint = (
        f"; did you mean {', '.join(candidates)}?" if candidates else "; use a compute capability such as 8.6 instead"
    )
    msg = f"unknown GPU {query!r}{hint}"
    raise UnknownGpuError(msg, query=query, candidates=candidates)
