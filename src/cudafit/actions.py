"""What to do about verdicts, as values: the actions of ``check``/``doctor`` and the modules without code.

Why a module of its own: the renderers (text, JSON, Markdown, HTML, fleet) must only render, so what is
done about a verdict (which fix, how serious, in which order) is decided here, once, as frozen values
(:class:`Action`, :class:`ModuleGap`) that :mod:`cudafit.analysis` computes and every report reads.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cudafit.model import JsonDict
from cudafit.rules.status import PACKAGE_STATUSES, Status

if TYPE_CHECKING:
    from cudafit.rules.engine import PackageVerdict

__all__ = [
    "WITHOUT_CODE",
    "Action",
    "ActionKind",
    "Advice",
    "ModuleGap",
    "action_rank",
    "group_actions",
    "inside_site",
    "modules_without_code",
]


class ActionKind(str, enum.Enum):
    """How serious an action is: the status of the cell it fixes, or :attr:`RUNTIME` for a run-time compiler's
    problem (no shipped module fails: what the package compiles when it runs does)."""

    FAILS = "fails"
    PARTIAL = "partial"
    RUNTIME = "runtime"
    JIT = "jit"

    @classmethod
    def of_status(cls, status: Status | str) -> ActionKind | None:
        """The kind of an action for a cell with ``status`` (``None``: nothing to do there, e.g. native)."""
        value = Status(status).value
        return cls(value) if value in _STATUS_KINDS else None

    @property
    def rank(self) -> int:
        """Place in the listing, most serious first (see :data:`_ORDER`)."""
        return _ORDER.index(self)


_STATUS_KINDS = frozenset(k.value for k in ActionKind if k is not ActionKind.RUNTIME)


def _order() -> tuple[ActionKind, ...]:
    """Statuses worst first as :data:`~cudafit.rules.status.PACKAGE_STATUSES` orders them; a run-time compiler's
    problem right after ``partial``: it fails only what is compiled at run time, worse than a JIT's cost."""
    kinds = [ActionKind(s.value) for s in reversed(PACKAGE_STATUSES) if s.value in _STATUS_KINDS]
    cut = kinds.index(ActionKind.PARTIAL) + 1
    return (*kinds[:cut], ActionKind.RUNTIME, *kinds[cut:])


_ORDER = _order()


def action_rank(word: str) -> int:
    """The listing place of a table word (``fails``, ``jit`` ...), after every action kind when it is none."""
    try:
        return ActionKind(word).rank
    except ValueError:
        return len(_ORDER)


@dataclass(frozen=True)
class Action:
    """One thing to do on one GPU (an index into ``Analysis.gpus``), for the packages that share it."""

    kind: ActionKind
    packages: tuple[str, ...]
    gpu: int
    message: str

    def to_dict(self) -> JsonDict:
        """The ``actions[]`` row of ``cudafit.check/1``."""
        return {
            "severity": self.kind.value,
            "package": ", ".join(self.packages),
            "gpu": self.gpu,
            "message": self.message,
        }


@dataclass(frozen=True)
class Advice:
    """What to do about an analysis: each package's fix lines (same order as its packages) and the actions."""

    fixes: tuple[tuple[str, ...], ...]
    actions: tuple[Action, ...]


def group_actions(actions: Iterable[Action]) -> tuple[Action, ...]:
    """One action per (GPU, message, kind): packages sharing a root cause are listed together.

    Sorted by the most serious action of its GPU, then GPU, then kind, then the order the fixes came in, so
    an alternative (``or ...``) stays right after the fix it is an alternative to.
    """
    grouped: dict[tuple[int, str, ActionKind], Action] = {}
    for a in actions:
        key = (a.gpu, a.message, a.kind)  # a package is listed under its own status only
        seen = grouped.get(key)
        grouped[key] = a if seen is None else Action(a.kind, (*seen.packages, *a.packages), a.gpu, a.message)
    out = list(grouped.values())
    worst: dict[int, int] = {}
    for a in out:
        worst[a.gpu] = min(worst.get(a.gpu, len(_ORDER)), a.kind.rank)
    order = {id(a): n for n, a in enumerate(out)}
    return tuple(sorted(out, key=lambda a: (worst[a.gpu], a.gpu, a.kind.rank, order[id(a)])))


#: Module statuses that mean "no code for this GPU", in listing order: holes (they fail) first, then code
#: specialised for other GPUs (the library dispatches it there), then code gated to other GPUs' a/f targets.
WITHOUT_CODE: tuple[Status, ...] = (Status.FAILS, Status.SPECIALISED, Status.GATED)


@dataclass(frozen=True)
class ModuleGap:
    """A registered module of a package verdict without code for its GPU (``--kernels``)."""

    path: str
    module: int
    status: Status
    reason: str
    sass: tuple[str, ...]
    ptx: tuple[str, ...]
    kernels: tuple[str, ...] | None

    def to_dict(self) -> JsonDict:
        """The ``verdicts[].without_code[]`` row of ``cudafit.check/1``."""
        return {
            "path": self.path,
            "module": self.module,
            "status": self.status.value,
            "reason": self.reason,
            "sass": list(self.sass),
            "ptx": list(self.ptx),
            "kernels": list(self.kernels) if self.kernels is not None else None,
        }


def modules_without_code(verdict: PackageVerdict) -> tuple[ModuleGap, ...]:
    """The modules of a package verdict that have no code for its GPU, in :data:`WITHOUT_CODE` order."""
    rows = [
        ModuleGap(
            path=m.path or fv.path,
            module=m.index,
            status=m.status,
            reason=m.reasons[0].code if m.reasons else "",
            sass=tuple(m.sass),
            ptx=tuple(m.ptx),
            kernels=tuple(m.kernels) if m.kernels is not None else None,
        )
        for fv in verdict.files
        for m in fv.modules
        if m.status in WITHOUT_CODE and m.index >= 0
    ]
    return tuple(sorted(rows, key=lambda r: WITHOUT_CODE.index(r.status)))


#: A path's part up to and including its site-packages (or dist-packages) folder (at most 400 characters, so that
#: a long run of slashes is not scanned to its end from each of its characters).
_SITE_PREFIX = re.compile(r"(?<![\w-])[^\s'\"(),;]{0,400}?[/\\](?:site|dist)-packages[/\\]")


def inside_site(text: str) -> str:
    """Paths in a message as a user finds them in the package: ``torch/lib/libtorch_cuda_linalg.so``, not
    ``/home/me/venvs/x/lib/python3.11/site-packages/torch/lib/...`` (the ``path`` fields keep the whole path)."""
    return _SITE_PREFIX.sub("", text)
