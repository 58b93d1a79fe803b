"""Modules a library loads itself (``Module.loaded``): when none of them has code for a GPU.

Registered modules are loaded lazily, when one of their kernels is launched, so a module without code
is a hole only where the library launches it (rules/roles.py).  A module the library loads itself is
handed to the driver because the library wants its kernels (CUDA Driver API, Module Management:
https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MODULE.html); with code for none of them,
every operation built on those kernels fails at its first use with the load's error
(``CUDA_ERROR_NO_BINARY_FOR_GPU``, or ``CUDA_ERROR_INVALID_PTX`` for arch-specific PTX: TensorFlow
2.20.0 on RTX 50-series GPUs, tensorflow/tensorflow issues 101746 and 99592).  Such a file fails,
whatever its registered modules do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cudafit.binary.facts import EntryKind
from cudafit.model import ArchVariant, ComputeCapability
from cudafit.rules.decide import effective
from cudafit.rules.reasons import Reason, reason
from cudafit.rules.status import Status

if TYPE_CHECKING:
    from cudafit.rules.prepared import FileDecisions, PreparedFile

__all__ = ["all_holes"]

#: How many kernel names a verdict's reason quotes (``--kernels`` lists them all).
_NAMED = 3


def all_holes(prepared: PreparedFile, found: FileDecisions, cc: ComputeCapability) -> Reason | None:
    """The reason a file fails on ``cc`` because every module it loads itself is a hole, else None."""
    positions = prepared.loaded_at
    if not positions:
        return None
    kernels: list[str] = []
    named_modules = 0
    archs: dict[str, None] = {}
    for pos in positions:
        canon = prepared.canon_at[pos]
        decision = found.role_at(pos, canon)
        if effective(found.verdicts[canon], decision)[0] is not Status.FAILS:
            return None
        if decision is not None and decision.kernels and len(kernels) < _NAMED:
            kernels.extend(decision.kernels[: _NAMED - len(kernels)])
            named_modules += 1
        for e in canon.entries:
            name = e.arch_name
            if e.kind is EntryKind.PTX and e.variant is ArchVariant.ARCH_SPECIFIC:
                name += (
                    f" (arch-specific PTX: the driver compiles it for {e.arch_number // 10}.{e.arch_number % 10} only)"
                )
            archs[name] = None
    n = len(positions)
    loaders = ", ".join(prepared.facts.module_loaders) or "the driver API"
    sections = ", ".join(sorted({prepared.registered[pos].module.section or "" for pos in positions}))
    more = n - named_modules
    named = f"; kernels {', '.join(kernels)}" + (f" (and those of {more:,} more modules)" if more else "")
    where = f"({loaders}, from {sections})"
    if n == 1:
        head = f"the one module the library loads itself {where} has no code for {cc}: it holds"
    else:
        head = f"none of the {n:,} modules the library loads itself {where} has code for {cc}: they hold"
    msg = f"{head} {', '.join(archs)}{named if kernels else ''}"
    return reason("library-loaded-all-holes", msg)
