"""Module counts and the one rule that turns them into a file's or a package's status.

A file (or a package) is ``native`` when every loadable module with kernels runs natively, ``jit`` when some
need the driver's JIT, ``partial`` when some are holes beside modules that run, ``fails`` when nothing runs,
and ``none`` when there is nothing to launch (docs/verdicts.md, "What each status means").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from cudafit.rules.reasons import Reason, reason
from cudafit.rules.status import Status

__all__ = ["COUNTED", "Counts", "combine", "combine_counts", "count_of"]

#: The module statuses a :class:`Counts` counts (its fields, ``-`` spelled ``_``); ``none`` modules are not code.
COUNTED = frozenset({Status.NATIVE, Status.JIT, Status.GATED, Status.FAILS, Status.SPECIALISED, Status.KERNEL_LESS})


def _field(status: Status) -> str:
    return status.value.replace("-", "_")


@dataclass(frozen=True)
class Counts:
    """How many loadable modules ended in each status (``fails``: holes, modules the library plausibly
    launches here without code for this GPU)."""

    native: int = 0
    jit: int = 0
    gated: int = 0
    fails: int = 0
    specialised: int = 0
    kernel_less: int = 0

    @property
    def total(self) -> int:
        """All loadable modules with code."""
        return self.native + self.jit + self.gated + self.fails + self.specialised + self.kernel_less

    def __add__(self, other: Counts) -> Counts:
        return Counts(**{k: v + getattr(other, k) for k, v in self.to_dict().items()})

    def of(self, status: Status) -> int:
        """How many modules ended in ``status`` (one of :data:`COUNTED`)."""
        return int(getattr(self, _field(status)))

    def moved(self, source: Status, target: Status, n: int | None = None) -> Counts:
        """These counts with ``n`` modules (all, when ``None``) moved from ``source`` to ``target``."""
        k = self.of(source) if n is None else n
        if source is target:
            return self
        changes = {_field(source): self.of(source) - k, _field(target): self.of(target) + k}
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, int]:
        """JSON form."""
        return dataclasses.asdict(self)  # the fields, in their order


def count_of(statuses: Iterable[Status], n: int = 1) -> Counts:
    """The counts of modules of ``statuses`` (``n`` each); statuses that are not counted are skipped."""
    c = dict.fromkeys((_field(s) for s in COUNTED), 0)
    for st in statuses:
        if st in COUNTED:
            c[_field(st)] += n
    return Counts(**c)


def combine_counts(counts: Counts) -> Status:
    """The file/package status for module counts (``none`` when there is no loadable code)."""
    return combine(counts, False)[0]


def combine(counts: Counts, has_relocatable: bool) -> tuple[Status, tuple[Reason, ...]]:
    """The status for module counts and the reasons that summarise it (``has_relocatable``: the only device code
    may be in ``__nv_relfatbin``, which is never loaded)."""
    relevant = counts.total - counts.kernel_less
    if counts.total == 0:
        if has_relocatable:
            return Status.NONE, (reason("relocatable-only", "device code only in __nv_relfatbin: never loaded"),)
        return Status.NONE, (reason("no-device-code", "no CUDA device code"),)
    if relevant == 0:
        msg = f"only kernel-less module(s) ({counts.kernel_less}): nothing to launch"
        return Status.NONE, (reason("kernel-less-module", msg),)
    runnable = counts.native + counts.jit
    if counts.fails == 0 and runnable == 0:
        msg = f"all {relevant} module(s) are built only for other GPUs"
        return Status.FAILS, (reason("built-only-for-other-gpus", msg),)
    if counts.fails and runnable:
        msg = f"{counts.fails} of {relevant} module(s) have no code for this GPU; {runnable} run"
        return Status.PARTIAL, (reason("partial-modules", msg),)
    if counts.fails:
        return Status.FAILS, ()
    return (Status.JIT if counts.jit else Status.NATIVE), ()
