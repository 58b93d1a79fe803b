"""Judging a fleet: the single-machine verdict path (:func:`cudafit.analysis.analyze`) once per class.

A class is a set of GPU models and one driver, exactly what ``check --gpu ... --driver ...`` judges
on one machine, so each class gets the same :class:`~cudafit.analysis.Analysis` the single-machine
report renders (fixes included).  Nothing here decides a verdict: it only chooses which
(compute capability, driver) pairs to hand to the engine, and reads the statuses back.

Work is shared where the engine's inputs are identical: verdicts depend on a GPU's compute
capability and the driver (``rules.engine``: never on the product name), so classes with the same
driver are evaluated in one ``analyze`` call over their distinct compute capabilities, and each
(compute capability, driver) pair is evaluated once however many classes and nodes share it.

The driver floor of a pool is found through the same engine: the lowest driver at which the
target's verdict on the pool's GPUs is as good as with the newest driver cudafit knows.  The
candidates are the drivers where NVIDIA's rules can change a verdict - each toolkit's minimum driver
(PTX JIT, release notes Table 3) and each CUDA major's minimum driver branch (minor-version
compatibility) - plus the fleet's own drivers; a newer driver never JITs less than an older one,
so a binary search over them is exact.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
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
    from cudafit.rules.engine import TargetGpu

    return [TargetGpu(g.name, g.compute_capability) for g in cls.gpus if g.compute_capability is not None]


class _Evaluator:
    """(compute capability, driver) -> per-package verdicts, each pair evaluated once."""

    def __init__(self, items: Sequence[Any], jit_allowed: bool) -> None:
        self.items = items
        self.jit_allowed = jit_allowed
        self.base: Analysis | None = None
        self.verdicts: dict[tuple[ComputeCapability, DriverVersion | None], tuple[Any, ...]] = {}
        self.floors: dict[tuple[Any, ...], tuple[DriverVersion | None, str]] = {}

    def ensure(self, ccs: Iterable[ComputeCapability], driver: DriverVersion | None) -> None:
        """Evaluate the pairs not done yet (one ``analyze`` call for all of them)."""
        from cudafit.rules.engine import TargetGpu

        todo = sorted({cc for cc in ccs if (cc, driver) not in self.verdicts})
        if not todo:
            return
        gpus = [TargetGpu(f"compute capability {cc}", cc) for cc in todo]
        result = analyze(self.items, gpus, driver=driver, jit_allowed=self.jit_allowed, include_coverage=False)
        if self.base is None:
            self.base = result
        for i, cc in enumerate(todo):
            self.verdicts[(cc, driver)] = tuple(p.verdicts[i] for p in result.packages)

    def status(self, ccs: Sequence[ComputeCapability], driver: DriverVersion | None) -> str:
        """The target's worst status over ``ccs`` with ``driver``."""
        self.ensure(ccs, driver)
        return worst_status(_value(v.status) for cc in ccs for v in self.verdicts[(cc, driver)])

    def floor(self, cc: ComputeCapability, candidates: Sequence[DriverVersion]) -> tuple[DriverVersion | None, str]:
        """(driver floor, best status) of the target on ``cc``, memoised per compute capability.

        Verdicts only improve as the driver grows, so a package whose status is the same with the lowest
        and the highest candidate has that status with every candidate: the binary search evaluates only
        the packages whose status changes (the driver-sensitive ones), usually a few of many.
        """
        key = (cc, tuple(candidates))
        if key in self.floors:
            return self.floors[key]
        low = [_value(v.status) for v in self._at(cc, candidates[0])]
        high = [_value(v.status) for v in self._at(cc, candidates[-1])]
        best = worst_status(high)
        sensitive = [k for k, (a, b) in enumerate(zip(low, high, strict=True)) if a != b]
        if best in ("fails", "none"):  # no device code, or no code for these GPUs: no driver helps
            result: tuple[DriverVersion | None, str] = (None, best)
        elif not sensitive:
            result = (candidates[0], best)
        else:
            fixed = worst_status(s for k, s in enumerate(high) if k not in sensitive)
            assert self.base is not None
            files = {id(f) for k in sensitive for f in self.base.packages[k].files}
            subset = [i for i in self.items if id(i.facts) in files]

            def status_at(driver: DriverVersion) -> str:
                from cudafit.rules.engine import TargetGpu

                gpu = TargetGpu(f"compute capability {cc}", cc)
                part = analyze(subset, [gpu], driver=driver, jit_allowed=self.jit_allowed, include_coverage=False)
                return worst_status([fixed, *(p.status for p in part.packages)])

            result = (_floor(status_at, candidates, best), best)
        self.floors[key] = result
        return result

    def _at(self, cc: ComputeCapability, driver: DriverVersion) -> tuple[Any, ...]:
        self.ensure([cc], driver)
        return self.verdicts[(cc, driver)]

    def analysis_for(self, cls: NodeClass) -> Analysis:
        """The class's own :class:`Analysis`: its GPU models (names kept) and driver."""

        assert self.base is not None
        gpus = _targets(cls)
        packages = []
        for k, p in enumerate(self.base.packages):
            verdicts = tuple(replace(self.verdicts[(g.compute_capability, cls.driver)][k], gpu=g) for g in gpus)
            packages.append(replace(p, verdicts=verdicts))
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


def _floor(status_at: Callable[[DriverVersion], str], candidates: Sequence[DriverVersion], best: str) -> DriverVersion:
    """The lowest candidate whose status is ``best`` (the highest candidate's): a binary search."""
    lo, hi = 0, len(candidates) - 1  # invariant: candidates[hi] gives the best status
    while lo < hi:
        mid = (lo + hi) // 2
        if _RANK.get(status_at(candidates[mid]), 9) <= _RANK[best]:
            hi = mid
        else:
            lo = mid + 1
    return candidates[hi]


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

    by_driver: dict[tuple[str | None, DriverVersion | None], set[ComputeCapability]] = {}
    for cls in inventory.classes:
        key = (cls.env_fingerprint if items_by_env is not None else None, cls.driver)
        by_driver.setdefault(key, set()).update(cls.compute_capabilities)
    for cls in inventory.classes:  # one analyze call per (environment, driver)
        todo = by_driver.pop((cls.env_fingerprint if items_by_env is not None else None, cls.driver), None)
        if todo:
            evaluator(cls).ensure(todo, cls.driver)
    candidates = _floor_candidates(c.driver for c in inventory.classes if c.driver is not None)
    out = []
    for cls in inventory.classes:
        ev = evaluator(cls)
        floor: DriverVersion | None = None
        ccs = cls.compute_capabilities
        if floors:
            best = ev.status(ccs, candidates[-1])
            per_cc = [ev.floor(cc, candidates) for cc in ccs]
            known = [f for f, _b in per_cc if f is not None]
            floor = max(known) if known and len(known) == len(per_cc) else None
            if floor == _NO_FLOOR:
                floor = None
        else:
            best = ev.status(ccs, cls.driver)
        out.append(ClassJudgement(cls, ev.analysis_for(cls), floor, best))
    return FleetJudgement(inventory, tuple(out), jit_allowed)
