"""Judging a fleet: the single-machine verdict path (:func:`cudafit.analysis.analyze`) once per class.

A class is a set of GPU models and one driver, exactly what ``check --gpu ... --driver ...`` judges
on one machine, so each class gets the same :class:`~cudafit.analysis.Analysis` the single-machine
report renders (fixes included).  Nothing here decides a verdict: it only chooses which
(compute capability, driver) pairs to hand to the engine, and reads the statuses back.

Work is shared where the engine's inputs are identical: verdicts depend on a GPU's compute
capability and the driver (``rules.engine``: never on the product name), so each (compute
capability, driver) pair is evaluated once however many classes and nodes share it, and all pairs
go through one ``analyze`` call (``drivers``: each GPU its own driver), which prepares the files
once.  The fleet's GPUs are judged together, as ``check --gpu`` with several GPUs judges them: a
library's embedded fatbins are read when any of them needs it, so such a library's module counts
and reasons can be more detailed than one machine's; statuses and fixes are the same (checked on
the torch 2.14.1 environment, class by class, against ``doctor --gpu CC --driver VERSION``).

The driver floor of a pool is found through the same engine: the lowest driver at which the
target's verdict on the pool's GPUs is as good as with the newest driver cudafit knows.  The
candidates are the drivers where NVIDIA's rules can change a verdict - each toolkit's minimum driver
(PTX JIT, release notes Table 3) and each CUDA major's minimum driver branch (minor-version
compatibility) - plus the fleet's own drivers; a newer driver never JITs less than an older one,
so a binary search over them is exact.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from cudafit.analysis import Analysis, analyze, worst_status
from cudafit.fleet.inventory import FleetInventory, NodeClass
from cudafit.model import ComputeCapability, DriverVersion

__all__ = ["POOL_ORDER", "ClassJudgement", "FleetJudgement", "judge_fleet"]

#: How a target fares on a pool (class), best first.
POOL_ORDER = ("native", "jit", "partial", "fails", "none")
_RANK = {s: i for i, s in enumerate(POOL_ORDER)}
_RANK["none"] = -1  # no device code: nothing can fail
_NO_FLOOR = DriverVersion((0,))


@dataclass(frozen=True)
class ClassJudgement:
    """One node class: its analysis (as ``check`` would render it for one such machine) and summary."""

    cls: NodeClass
    analysis: Analysis
    #: Lowest driver giving the best verdict possible on these GPUs (which may still be ``partial``);
    #: ``None`` when the target sets no floor of its own (best with any driver) or no driver helps.
    driver_floor: DriverVersion | None
    best_status: str  # the verdict with the newest driver cudafit knows

    @property
    def status(self) -> str:
        """Worst package status on this class (``none`` when the target has no device code)."""
        return worst_status(p.status for p in self.analysis.packages)

    @property
    def driver_limited(self) -> bool:
        """Whether a newer driver would give this pool a better verdict."""
        return _RANK.get(self.best_status, 0) < _RANK.get(self.status, 0)


@dataclass(frozen=True)
class FleetJudgement:
    """Every class judged, plus the inventory it came from."""

    inventory: FleetInventory
    classes: tuple[ClassJudgement, ...]
    jit_allowed: bool

    def pools(self, status: str) -> tuple[ClassJudgement, ...]:
        """The classes whose worst package status is ``status``."""
        return tuple(c for c in self.classes if c.status == status)

    @property
    def runs(self) -> tuple[ClassJudgement, ...]:
        """Classes where every package runs (native or by JIT) or holds no device code."""
        return tuple(c for c in self.classes if c.status in ("native", "jit", "none"))

    @property
    def status(self) -> str:
        """Worst status over the classes (``none`` when nothing was judged)."""
        return worst_status(c.status for c in self.classes)


def _targets(cls: NodeClass) -> list[Any]:
    from cudafit.model import Gpu

    return [Gpu(g.name, g.compute_capability) for g in cls.gpus if g.compute_capability is not None]


class _Evaluator:
    """(compute capability, driver) -> per-package verdicts, each pair evaluated once.

    Every ``analyze`` call prepares the target's files (module groups, roles) before judging GPUs, so
    pairs are evaluated in batches: one call for all the pairs known at once, each GPU with its driver.
    """

    def __init__(self, items: Sequence[Any], jit_allowed: bool) -> None:
        self.items = items
        self.jit_allowed = jit_allowed
        self.base: Analysis | None = None
        self.verdicts: dict[tuple[ComputeCapability, DriverVersion | None], tuple[Any, ...]] = {}
        self.floors: dict[ComputeCapability, tuple[DriverVersion | None, str]] = {}

    def _analyze(
        self, items: Sequence[Any], pairs: Sequence[tuple[ComputeCapability, DriverVersion | None]]
    ) -> Analysis:
        from cudafit.model import Gpu

        gpus = [Gpu(f"compute capability {cc}", cc) for cc, _d in pairs]
        drivers = [d for _cc, d in pairs]
        return analyze(items, gpus, drivers=drivers, jit_allowed=self.jit_allowed, include_coverage=False)

    def ensure(self, pairs: Iterable[tuple[ComputeCapability, DriverVersion | None]]) -> None:
        """Evaluate the pairs not done yet, all in one ``analyze`` call (each GPU with its own driver)."""
        todo = [p for p in dict.fromkeys(pairs) if p not in self.verdicts]
        if not todo:
            return
        result = self._analyze(self.items, todo)
        if self.base is None:
            self.base = result
        for i, pair in enumerate(todo):
            self.verdicts[pair] = tuple(p.verdicts[i] for p in result.packages)

    def statuses(self, cc: ComputeCapability, driver: DriverVersion | None) -> list[str]:
        """Each package's status on ``cc`` with ``driver`` (evaluated before: see :meth:`ensure`)."""
        return [_value(v.status) for v in self.verdicts[(cc, driver)]]

    def find_floors(self, ccs: Iterable[ComputeCapability], candidates: Sequence[DriverVersion]) -> None:
        """Driver floor and best status per compute capability (see :meth:`floor`), searched together.

        Verdicts only improve as the driver grows, so a package whose status is the same with the lowest
        and the highest candidate has that status with every candidate: the binary searches evaluate only
        the packages whose status changes (the driver-sensitive ones), and every step of all the searches
        is one ``analyze`` call.
        """
        todo = [cc for cc in dict.fromkeys(ccs) if cc not in self.floors]
        lo_d, hi_d = candidates[0], candidates[-1]
        self.ensure([(cc, d) for cc in todo for d in (lo_d, hi_d)])
        searches: dict[ComputeCapability, tuple[list[int], str, str]] = {}  # cc -> (sensitive, fixed, best)
        for cc in todo:
            low, high = self.statuses(cc, lo_d), self.statuses(cc, hi_d)
            best = worst_status(high)
            sensitive = [k for k, (a, b) in enumerate(zip(low, high, strict=True)) if a != b]
            if best in ("fails", "none"):  # no device code, or no code for these GPUs: no driver helps
                self.floors[cc] = (None, best)
            elif not sensitive:
                self.floors[cc] = (lo_d, best)
            else:
                fixed = worst_status(s for k, s in enumerate(high) if k not in sensitive)
                searches[cc] = (sensitive, fixed, best)
        if not searches:
            return
        assert self.base is not None
        names = [(p.name, p.version) for p in self.base.packages]
        wanted = {k for sensitive, _f, _b in searches.values() for k in sensitive}
        # By path: analyze may have re-read a file with its library-loaded fatbins (a new facts object).
        files = {f.path for k in wanted for f in self.base.packages[k].files}
        subset = [i for i in self.items if i.facts.path in files]
        bounds = {cc: [0, len(candidates) - 1] for cc in searches}  # candidates[hi] gives the best status
        for j, driver in enumerate(candidates):  # pairs judged already (the classes' own drivers) narrow it
            for cc, (sensitive, fixed, best) in searches.items():
                if (cc, driver) in self.verdicts:
                    status = worst_status([fixed, *(self.statuses(cc, driver)[k] for k in sensitive)])
                    if _RANK.get(status, 9) <= _RANK[best]:
                        bounds[cc][1] = min(bounds[cc][1], j)
                    else:
                        bounds[cc][0] = max(bounds[cc][0], j + 1)
        while any(lo < hi for lo, hi in bounds.values()):
            step = [(cc, (lo + hi) // 2) for cc, (lo, hi) in bounds.items() if lo < hi]
            part = self._analyze(subset, [(cc, candidates[mid]) for cc, mid in step])
            for i, (cc, mid) in enumerate(step):
                sensitive, fixed, best = searches[cc]
                got = {(p.name, p.version): _value(p.verdicts[i].status) for p in part.packages}
                status = worst_status([fixed, *(got[names[k]] for k in sensitive)])
                if _RANK.get(status, 9) <= _RANK[best]:
                    bounds[cc][1] = mid
                else:
                    bounds[cc][0] = mid + 1
        for cc, (_lo, hi) in bounds.items():
            self.floors[cc] = (candidates[hi], searches[cc][2])

    def floor(self, cc: ComputeCapability) -> tuple[DriverVersion | None, str]:
        """(driver floor, best status) on ``cc``; ``None`` when no driver helps (after :meth:`find_floors`)."""
        return self.floors[cc]

    def analysis_for(self, cls: NodeClass) -> Analysis:
        """The class's own :class:`Analysis`: its GPU models (names kept) and driver."""

        from cudafit.rules.compilers import Wiring, judge_package

        assert self.base is not None
        gpus = _targets(cls)
        packages = []
        for k, p in enumerate(self.base.packages):
            verdicts = tuple(replace(self.verdicts[(g.compute_capability, cls.driver)][k], gpu=g) for g in gpus)
            runtime = tuple(  # the run-time code's own role, for this class's GPUs (already in the statuses)
                judge_package(p.compilers, g.compute_capability, Wiring(cls.driver), package=p.name, version=p.version)
                for g in gpus
            )
            packages.append(replace(p, verdicts=verdicts, runtime=runtime if p.compilers else ()))
        return Analysis(gpus=tuple(gpus), packages=tuple(packages), driver=cls.driver, jit_allowed=self.jit_allowed)


def _value(status: Any) -> str:
    return str(getattr(status, "value", status))


def _floor_candidates(fleet_drivers: Iterable[DriverVersion]) -> list[DriverVersion]:
    from cudafit.rules import tables

    t = tables.load_tables()
    found = set(t.min_driver.get("linux", {}).values())
    found.update(DriverVersion((int(f["min_driver"]),)) for f in t.minor_version_floors)
    found.update(fleet_drivers)
    # Sentinel below every real driver: a target whose verdict is already best there has no driver floor
    # of its own (any driver that supports the GPU will do).
    return [_NO_FLOOR, *sorted(found)]


def judge_fleet(
    items: Iterable[Any],
    inventory: FleetInventory,
    *,
    jit_allowed: bool = True,
    floors: bool = True,
    items_by_env: Mapping[str, Sequence[Any]] | None = None,
) -> FleetJudgement:
    """Judge ``items`` (scan items of the target) on every class of ``inventory``.

    ``items_by_env``: with ``--scan-env``, each class is judged with the scan of its own nodes'
    environment (by fingerprint) instead of ``items``.
    """
    shared = list(items)
    evaluators: dict[str | None, _Evaluator] = {}

    def evaluator(cls: NodeClass) -> _Evaluator:
        key = cls.env_fingerprint if items_by_env is not None else None
        if key not in evaluators:
            its = shared if key is None or items_by_env is None else list(items_by_env.get(key, ()))
            evaluators[key] = _Evaluator(its, jit_allowed)
        return evaluators[key]

    candidates = _floor_candidates(c.driver for c in inventory.classes if c.driver is not None)
    by_env: dict[str | None, list[NodeClass]] = {}
    for cls in inventory.classes:
        by_env.setdefault(cls.env_fingerprint if items_by_env is not None else None, []).append(cls)
    for classes in by_env.values():  # the matrix and the floors' end points: one analyze call
        ev = evaluator(classes[0])
        pairs = [(cc, c.driver) for c in classes for cc in c.compute_capabilities]
        if floors:
            ends = (candidates[0], candidates[-1])
            pairs += [(cc, d) for c in classes for cc in c.compute_capabilities for d in ends]
        ev.ensure(pairs)
        if floors:
            ev.find_floors((cc for c in classes for cc in c.compute_capabilities), candidates)
    out = []
    for cls in inventory.classes:
        ev = evaluator(cls)
        ccs = cls.compute_capabilities
        floor: DriverVersion | None = None
        if floors:
            per_cc = [ev.floor(cc) for cc in ccs]
            best = worst_status(b for _f, b in per_cc)
            known = [f for f, _b in per_cc if f is not None]
            floor = max(known) if known and len(known) == len(per_cc) else None
            if floor == _NO_FLOOR:
                floor = None
        else:
            best = worst_status(s for cc in ccs for s in ev.statuses(cc, cls.driver))
        out.append(ClassJudgement(cls, ev.analysis_for(cls), floor, best))
    return FleetJudgement(inventory, tuple(out), jit_allowed)
