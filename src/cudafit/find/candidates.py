"""What ``find`` judges: the candidate files of an index page and what a candidate's metadata pins.

Candidates are the best wheel per release for the target's tags, non-yanked, newest first, as pip would
rank them; a wheel's CUDA pins (``nvidia-*-cuNN==X``, ``cuda-toolkit[...]==X``) come from its core
metadata, never from an import.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from cudafit.errors import CudafitError
from cudafit.targets.index import IndexFile

if TYPE_CHECKING:
    from packaging.requirements import Requirement
    from packaging.version import Version

__all__ = [
    "NO_KERNELS",
    "cuda_pins",
    "iter_candidates",
    "parse_requirement",
    "version_key",
]

#: Pinned CUDA wheels without kernels of their own (the runtime's floor is judged from the pin itself).
NO_KERNELS = ("nvidia-cuda-runtime", "nvidia-cuda-nvrtc", "cuda-toolkit")


def version_key(version: str) -> tuple[int, Version] | tuple[int, str]:
    """Newest-first order of release strings: PEP 440 versions (local labels aside) above the rest."""
    from packaging.version import InvalidVersion, Version

    try:
        v = Version(version)
    except InvalidVersion:
        return (0, version)
    return (1, Version(v.base_version if v.local else str(v)))


def parse_requirement(text: str) -> Requirement:
    """A PEP 508 requirement, or a :class:`CudafitError` that says why not."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return Requirement(text)
    except InvalidRequirement as err:
        raise CudafitError(f"not a requirement: {text!r} ({err})") from err


def cuda_pins(metadata: bytes | None) -> tuple[tuple[str, ...], str | None]:
    """(pinned nvidia-*-cuNN requirements, the CUDA runtime version pinned) from core metadata."""
    if not metadata:
        return (), None
    import email.parser

    headers = email.parser.BytesHeaderParser().parsebytes(metadata[: 1 << 20])
    pins: list[str] = []
    runtime: str | None = None
    for req in headers.get_all("Requires-Dist") or []:
        text = str(req).split(";")[0].strip()
        toolkit = re.match(r"cuda-toolkit\s*\[([^\]]*)\]\s*==\s*([0-9.]+)", text, re.IGNORECASE)
        if toolkit:  # CUDA 13 wheels: one meta-package, cuda-toolkit[cudart,cublas,...]==13.2.2
            pins.append(f"cuda-toolkit[{toolkit.group(1).replace(' ', '')}]=={toolkit.group(2)}")
            if "cudart" in toolkit.group(1):
                runtime = ".".join(toolkit.group(2).split(".")[:2])
            continue
        m = re.match(r"(nvidia-[a-z0-9-]+?)(-cu(\d+))?\s*(\(?\s*==\s*([^\s,)]+))", text, re.IGNORECASE)
        if not m:
            continue
        pins.append(f"{m.group(1).lower()}{m.group(2) or ''}=={m.group(5)}")
        if m.group(1).lower() == "nvidia-cuda-runtime":
            parts = m.group(5).split(".")
            runtime = ".".join(parts[:2]) if len(parts) >= 2 else None
    return tuple(pins), runtime


def _is_pre(version: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version).is_prerelease
    except InvalidVersion:
        return False


def _requires_python_ok(file: IndexFile, python_version: str) -> bool:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    if not file.requires_python:
        return True
    try:
        return SpecifierSet(file.requires_python).contains(python_version, prereleases=True)
    except InvalidSpecifier:
        return True


def iter_candidates(
    files: Sequence[IndexFile],
    tags: Sequence[str],
    *,
    requirement: Requirement,
    python_version: str,
    pre: bool,
) -> Iterator[IndexFile]:
    """The best wheel per release for these tags: non-yanked, matching the requirement, newest first."""
    rank = {t: i for i, t in enumerate(tags)}
    best: dict[str, tuple[int, IndexFile]] = {}
    for f in files:
        if not f.is_wheel or f.yanked or (not pre and _is_pre(f.version)):
            continue
        if requirement.specifier and not requirement.specifier.contains(f.version, prereleases=True):
            continue
        if not _requires_python_ok(f, python_version):
            continue
        score = min((rank[t] for t in f.tags() if t in rank), default=None)
        if score is None:
            continue
        old = best.get(f.version)
        if old is None or score < old[0]:
            best[f.version] = (score, f)
    for _version, (_score, f) in sorted(best.items(), key=lambda kv: version_key(kv[0]), reverse=True):
        yield f
