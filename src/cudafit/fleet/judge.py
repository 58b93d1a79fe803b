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

The driver floor of a class is found through the same engine: the lowest driver at which the
target's verdict on the class's GPUs is as good as with the newest driver cudafit knows.  The
candidates are the drivers where NVIDIA's rules can change a verdict - each toolkit's minimum driver
(PTX JIT, release notes Table 3) and each CUDA major's minimum driver branch (minor-version
compatibility) - plus the fleet's own drivers; a newer driver never JITs less than an older one,
so a binary search over them is exact.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from cudafit.analysis import Analysis, analyze
from cudafit.fleet.inventory import FleetInventory, NodeClass
from cudafit.model import ComputeCapability, DriverVersion, Gpu
from cudafit.rules.status import Status, severity, worst

if TYPE_CHECKING:
    from cudafit.rules.engine import PackageVerdict
    from cudafit.targets.interface import ScanItem

__all__ = ["RUNS", "ClassJudgement", "FleetJudgement", "judge_fleet"]

#: Class statuses where every package runs (natively or by JIT) or holds no device code.
RUNS = frozenset({Status.NATIVE, Status.JIT, Status.NONE})
_NO_FLOOR = DriverVersion((0,))
Pair = tuple[ComputeCapability, DriverVersion | None]  # what a verdict depends on: never the product name


@dataclass(frozen=True)
class ClassJudgement:
    """One node class: its analysis (as ``check`` would render it for one such machine) and summary."""

    cls: NodeClass
    analysis: Analysis
    #: Lowest driver giving the best verdict possible on these GPUs (which may still be ``partial``);
    #: ``None`` when the target sets no floor of its own (best with any driver) or no driver helps.
    driver_floor: DriverVersion | None
    best_status: Status  # the verdict with the newest driver cudafit knows

    @property
    def status(self) -> Status:
        """Worst package status on this class (``none`` when the target has no device code)."""
        return worst(p.status for p in self.analysis.packages)

    @property
    def driver_limited(self) -> bool:
        """Whether a newer driver would give this class a better verdict."""
        return severity(self.best_status) < severity(self.status)


@dataclass(frozen=True)
class FleetJudgement:
    """Every class judged, plus the inventory it came from."""

    inventory: FleetInventory
    classes: tuple[ClassJudgement, ...]
    jit_allowed: bool

    @property
    def runs(self) -> tuple[ClassJudgement, ...]:
        """Classes where every package runs (native or by JIT) or holds no device code."""
        return tuple(c for c in self.classes if c.status in RUNS)

    @property
    def status(self) -> Status:
        """Worst status over the classes (``none`` when nothing was judged)."""
        return worst(c.status for c in self.classes)


@dataclass
class _Search:
    """A binary search for one compute capability's driver floor over the candidate drivers.

    Only the driver-sensitive packages (``sensitive``: their status differs between the lowest and the
    highest candidate) are evaluated; ``fixed`` is the worst status of the others, ``best`` the status to
    reach.  ``candidates[hi]`` always gives ``best``; the floor is found when ``lo == hi``.
    """

    sensitive: list[int]
    fixed: Status
    best: Status
    lo: int
    hi: int

    def narrow(self, j: int, statuses: Iterable[Status]) -> None:
        """Candidate ``j`` gives these statuses to the sensitive packages: move the bounds."""
        if severity(worst([self.fixed, *statuses])) <= severity(self.best):
            self.hi = min(self.hi, j)
        else:
            self.lo = max(self.lo, j + 1)


class _Evaluator:
    """(compute capability, driver) -> per-package verdicts, each pair evaluated once.

    Every ``analyze`` call prepares the target's files (module groups, roles) before judging GPUs, so
    pairs are evaluated in batches: one call for all the pairs known at once, each GPU with its driver.
    """

    def __init__(self, items: Sequence[ScanItem], jit_allowed: bool) -> None:
        self.items = items
        self.jit_allowed = jit_allowed
        self.base: Analysis | None = None
        self.verdicts: dict[Pair, tuple[PackageVerdict, ...]] = {}
        self.floors: dict[ComputeCapability, tuple[DriverVersion | None, Status]] = {}

    def _analyze(self, items: Sequence[ScanItem], pairs: Sequence[Pair]) -> Analysis:
        gpus = [Gpu(f"compute capability {cc}", cc) for cc, _d in pairs]
        drivers = [d for _cc, d in pairs]
        return analyze(items, gpus, drivers=drivers, jit_allowed=self.jit_allowed, include_coverage=False)

    def ensure(self, pairs: Iterable[Pair]) -> None:
        """Evaluate the pairs not done yet, all in one ``analyze`` call (each GPU with its own driver)."""
        todo = [p for p in dict.fromkeys(pairs) if p not in self.verdicts]
        if not todo:
            return
        result = self._analyze(self.items, todo)
        if self.base is None:
            self.base = result
        for i, pair in enumerate(todo):
            self.verdicts[pair] = tuple(p.verdicts[i] for p in result.packages)

    def statuses(self, cc: ComputeCapability, driver: DriverVersion | None) -> list[Status]:
        """Each package's status on ``cc`` with ``driver`` (evaluated before: see :meth:`ensure`)."""
        return [v.status for v in self.verdicts[(cc, driver)]]

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
        searches: dict[ComputeCapability, _Search] = {}
        for cc in todo:
            search = self._search(cc, lo_d, hi_d, len(candidates))
            if search is not None:
                searches[cc] = search
        if searches:
            self._bisect(searches, candidates)
        for cc, search in searches.items():
            self.floors[cc] = (candidates[search.hi], search.best)

    def _search(self, cc: ComputeCapability, lo_d: DriverVersion, hi_d: DriverVersion, n: int) -> _Search | None:
        """The search ``cc`` needs, or ``None`` when its floor is known from the two ends (set here)."""
        low, high = self.statuses(cc, lo_d), self.statuses(cc, hi_d)
        best = worst(high)
        sensitive = [k for k, (a, b) in enumerate(zip(low, high, strict=True)) if a != b]
        if best in (Status.FAILS, Status.NONE):  # no device code, or no code for these GPUs: no driver helps
            self.floors[cc] = (None, best)
        elif not sensitive:
            self.floors[cc] = (lo_d, best)
        else:
            fixed = worst(s for k, s in enumerate(high) if k not in sensitive)
            return _Search(sensitive, fixed, best, 0, n - 1)
        return None

    def _bisect(self, searches: Mapping[ComputeCapability, _Search], candidates: Sequence[DriverVersion]) -> None:
        """Run the searches to the end: pairs judged already (the classes' own drivers) narrow them first."""
        assert self.base is not None
        names = [(p.name, p.version) for p in self.base.packages]
        wanted = {k for s in searches.values() for k in s.sensitive}
        # By path: analyze may have re-read a file with its library-loaded fatbins (a new facts object).
        files = {f.path for k in wanted for f in self.base.packages[k].files}
        subset = [i for i in self.items if i.facts.path in files]
        for j, driver in enumerate(candidates):
            for cc, s in searches.items():
                if (cc, driver) in self.verdicts:
                    s.narrow(j, (self.statuses(cc, driver)[k] for k in s.sensitive))
        while any(s.lo < s.hi for s in searches.values()):
            step = [(cc, (s.lo + s.hi) // 2) for cc, s in searches.items() if s.lo < s.hi]
            part = self._analyze(subset, [(cc, candidates[mid]) for cc, mid in step])
            for i, (cc, mid) in enumerate(step):
                got = {(p.name, p.version): p.verdicts[i].status for p in part.packages}
                searches[cc].narrow(mid, (got[names[k]] for k in searches[cc].sensitive))

    def floor(self, cc: ComputeCapability) -> tuple[DriverVersion | None, Status]:
        """(driver floor, best status) on ``cc``; ``None`` when no driver helps (after :meth:`find_floors`)."""
        return self.floors[cc]

    def analysis_for(self, cls: NodeClass) -> Analysis:
        """The class's own :class:`Analysis`: its GPU models (names kept) and driver."""

        from cudafit.rules.compilers import Wiring, judge_package

        assert self.base is not None
        gpus = cls.judged_gpus
        packages = []
        for k, p in enumerate(self.base.packages):
            verdicts = tuple(replace(self.verdicts[(g.compute_capability, cls.driver)][k], gpu=g) for g in gpus)
            runtime = tuple(  # the run-time code's own role, for this class's GPUs (already in the statuses)
                judge_package(p.compilers, g.compute_capability, Wiring(cls.driver), package=p.name, version=p.version)
                for g in gpus
            )
            packages.append(replace(p, verdicts=verdicts, runtime=runtime if p.compilers else ()))
        return Analysis(gpus=gpus, packages=tuple(packages), driver=cls.driver, jit_allowed=self.jit_allowed)


def _floor_candidates(fleet_drivers: Iterable[DriverVersion]) -> list[DriverVersion]:
    from cudafit.rules import tables

    t = tables.load_tables()
    found = set(t.min_driver.get("linux", {}).values())
    found.update(DriverVersion((int(f["min_driver"]),)) for f in t.minor_version_floors)
    found.update(fleet_drivers)
    # Sentinel below every real driver: a target whose verdict is already best there has no driver floor
    # of its own (any driver that supports the GPU will do).
    return [_NO_FLOOR, *sorted(found)]


def _class_floor(ev: _Evaluator, ccs: Sequence[ComputeCapability]) -> tuple[DriverVersion | None, Status]:
    """(driver floor, best status) of a class: the highest of its GPUs' floors, ``None`` when one has none."""
    per_cc = [ev.floor(cc) for cc in ccs]
    best = worst(b for _f, b in per_cc)
    known = [f for f, _b in per_cc if f is not None]
    floor = max(known) if known and len(known) == len(per_cc) else None
    return (None if floor == _NO_FLOOR else floor), best


def judge_fleet(
    items: Iterable[ScanItem],
    inventory: FleetInventory,
    *,
    jit_allowed: bool = True,
    floors: bool = True,
    items_by_env: Mapping[str, Sequence[ScanItem]] | None = None,
) -> FleetJudgement:
    """Judge ``items`` (scan items of the target) on every class of ``inventory``.

    ``items_by_env``: with ``--scan-env``, each class is judged with the scan of its own nodes'
    environment (by fingerprint) instead of ``items``.
    """
    shared = list(items)

    def env_of(cls: NodeClass) -> str | None:
        return cls.env_fingerprint if items_by_env is not None else None

    by_env: dict[str | None, list[NodeClass]] = {}
    for cls in inventory.classes:
        by_env.setdefault(env_of(cls), []).append(cls)
    candidates = _floor_candidates(c.driver for c in inventory.classes if c.driver is not None)
    evaluators: dict[str | None, _Evaluator] = {}
    for key, classes in by_env.items():  # the matrix and the floors' end points: one analyze call
        its = shared if key is None or items_by_env is None else list(items_by_env.get(key, ()))
        ev = evaluators[key] = _Evaluator(its, jit_allowed)
        pairs: list[Pair] = [(cc, c.driver) for c in classes for cc in c.compute_capabilities]
        if floors:
            ends = (candidates[0], candidates[-1])
            pairs += [(cc, d) for c in classes for cc in c.compute_capabilities for d in ends]
        ev.ensure(pairs)
        if floors:
            ev.find_floors((cc for c in classes for cc in c.compute_capabilities), candidates)
    out = []
    for cls in inventory.classes:
        ev = evaluators[env_of(cls)]
        if floors:
            floor, best = _class_floor(ev, cls.compute_capabilities)
        else:
            floor, best = None, worst(s for cc in cls.compute_capabilities for s in ev.statuses(cc, cls.driver))
        out.append(ClassJudgement(cls, ev.analysis_for(cls), floor, best))
    return FleetJudgement(inventory, tuple(out), jit_allowed)
