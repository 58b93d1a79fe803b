"""Verdict statuses and their one order.

Every layer above ``rules/`` speaks of statuses through this module: a status is a :class:`Status`, never a
bare string, and "which is worse" is asked of :func:`worst` / :func:`severity`, never of a local table. The
order is the rule (as ``packaging.tags.sys_tags()`` yields best first and says so): a package that needs the
driver's JIT is worse off than one with SASS, and one with holes worse than one that JITs everywhere
(docs/verdicts.md, "What each status means").
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

__all__ = ["PACKAGE_STATUSES", "ModuleRole", "Status", "severity", "worst"]


class Status(str, enum.Enum):
    """Verdict statuses (docs/verdicts.md).

    The first five judge a file, a package or a target on one GPU; the three after them are module-level
    roles that never reach a package (they fold into native, partial or none). ``unknown`` is a verdict that
    could not be reached (a dependency the index did not answer for, a compiler whose version is unread).
    """

    NATIVE = "native"  # usable SASS
    JIT = "jit"  # only via PTX JIT
    PARTIAL = "partial"  # some modules have no usable code, others run
    FAILS = "fails"  # nothing usable
    NONE = "none"  # no (loadable) device code
    GATED = "gated"  # module level: built only for a/f targets of other GPUs
    SPECIALISED = "specialised"  # module level: code for other GPUs the library dispatches there
    KERNEL_LESS = "kernel-less"  # module level: no kernels, launches nothing
    UNKNOWN = "unknown"  # could not be judged


class ModuleRole(str, enum.Enum):
    """What a module without usable code for a GPU is for (docs/rules.md, *Module roles*).

    ``gated`` is decided by the per-module decision (every entry an ``a``/``f`` target of other GPUs); the
    other three by :mod:`cudafit.rules.roles` from the file's build lists and kernel names.  A role is not a
    verdict: :attr:`status` is the module status it gives, so the two never need a table between them.
    """

    GATED = "gated"  # built only for a/f targets of other GPUs: the library dispatches it there
    SPECIALISED = "specialised"  # code for other GPUs the library dispatches there
    KERNEL_LESS = "kernel-less"  # no kernels: launches nothing
    HOLE = "hole"  # code the library plausibly launches here, without code for this GPU

    @property
    def status(self) -> Status:
        """The module status of the role: a hole fails (error 209 at the launch); the others are information
        under a status of the same name."""
        return Status.FAILS if self is ModuleRole.HOLE else Status(self.value)


#: Package-level statuses, best first. ``none`` is best (no device code cannot fail); ``unknown`` sits above a
#: clean run and below a known JIT, so an unjudged part is never a silent pass.
PACKAGE_STATUSES: tuple[Status, ...] = (
    Status.NONE,
    Status.NATIVE,
    Status.UNKNOWN,
    Status.JIT,
    Status.PARTIAL,
    Status.FAILS,
)
_RANK = {s: i for i, s in enumerate(PACKAGE_STATUSES)}


def severity(status: Status | str) -> int:
    """The status's place in :data:`PACKAGE_STATUSES` (higher is worse). Module-level roles rank as ``none``:
    they never decide a package on their own."""
    try:
        return _RANK.get(Status(status), 0)
    except ValueError:
        return 0


def worst(statuses: Iterable[Status | str], default: Status = Status.NONE) -> Status:
    """The most serious of ``statuses`` (``default`` when there are none); on a tie the first seen wins."""
    out = default
    for s in statuses:
        st = Status(s)
        if severity(st) > severity(out):
            out = st
    return out
