"""The prepared file: a file's loadable modules grouped by code once, then judged for many GPUs.

Libraries hold thousands of modules sharing a few dozen arch lists: each list is decided once per GPU
(:func:`cudafit.rules.decide.decide`), and only modules without code go through :mod:`cudafit.rules.roles`,
whose kernel-name lookups are remembered here across GPUs.  A file's verdict (:func:`judge_file`) combines
its module counts (:mod:`cudafit.rules.counts`), the pool of fatbins it loads itself (:mod:`cudafit.rules.pools`)
and the driver floor of the runtime it was built for (:func:`cudafit.rules.toolkit.driver_too_old`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from cudafit.binary.facts import BinaryFacts, Module
from cudafit.model import ComputeCapability, CudaVersion, DriverVersion, Gpu, JsonDict
from cudafit.rules import loaded, roles
from cudafit.rules import toolkit as toolkit_mod
from cudafit.rules.counts import Counts, combine, count_of
from cudafit.rules.decide import ModuleVerdict, canonical, decide, effective
from cudafit.rules.lazy import LazySequence
from cudafit.rules.options import DEFAULT_OPTIONS, JudgeOptions
from cudafit.rules.pools import embedded_pool, specialised_pool
from cudafit.rules.reasons import Reason, reason
from cudafit.rules.status import Status

__all__ = [
    "FileDecisions",
    "FileVerdict",
    "ModuleStatuses",
    "PreparedFile",
    "Registered",
    "Tally",
    "evaluate_file",
    "judge_file",
    "unscanned_embedded",
]


@dataclass(frozen=True)
class FileVerdict:
    """One file (or archive member) on one GPU."""

    path: str
    status: Status
    counts: Counts
    modules: Sequence[ModuleVerdict]
    reasons: tuple[Reason, ...]

    def to_dict(self, *, modules: bool = False) -> JsonDict:
        """JSON form (module verdicts only when asked: large libraries have thousands)."""
        out: JsonDict = {
            "path": self.path,
            "status": self.status.value,
            "counts": self.counts.to_dict(),
            "reasons": [r.to_dict() for r in self.reasons],
        }
        if modules:
            out["modules"] = [m.to_dict() for m in self.modules]
        return out


@dataclass(frozen=True)
class Registered:
    """A module judged on its own: registered by a runtime, or loaded by the library itself (``Module.loaded``),
    both under the same role rules.  ``path`` is its unit (the file, or an archive member), ``index`` its place
    among the unit's modules."""

    path: str
    index: int
    module: Module


#: Module counts per (status, arch names): how many, and the first reason.
Tally = dict[tuple[Status, tuple[str, ...]], tuple[int, Reason]]


@dataclass(frozen=True)
class FileDecisions:
    """One file's decisions on one GPU: the verdict of each arch list (canonical module), and the role
    decisions per arch list and per module position (those that differ from their arch list's)."""

    verdicts: dict[Module, ModuleVerdict]
    by_canon: dict[Module, roles.RoleDecision]
    by_pos: dict[int, roles.RoleDecision]

    def role_at(self, pos: int, canon: Module) -> roles.RoleDecision | None:
        """The role decision of the module at ``pos`` (of arch list ``canon``), if it has one."""
        return self.by_pos.get(pos) or self.by_canon.get(canon)


@dataclass(frozen=True)
class ModuleStatuses:
    """Each registered module's status on one GPU (roles applied), and its role decision, by position."""

    status: tuple[Status, ...]
    decisions: dict[int, roles.RoleDecision]


def _iter_units(facts: BinaryFacts) -> Iterator[BinaryFacts]:
    if facts.modules:
        yield facts
    for member in facts.members:
        yield from _iter_units(member)


class PreparedFile:
    """A file's loadable modules grouped by code, prepared once and judged for many GPUs."""

    def __init__(self, facts: BinaryFacts, kernel_names: roles.KernelNames | None = None) -> None:
        self.facts = facts
        self.kernel_names = kernel_names
        units = list(_iter_units(facts))
        #: Every module judged on its own (:class:`Registered`), in file order.
        self.registered: list[Registered] = [
            Registered(unit.path, i, m)
            for unit in units
            for i, m in enumerate(unit.modules)
            if not m.embedded or m.loaded
        ]
        self.relocatable = any(r.module.relocatable for r in self.registered)
        #: Positions (in ``registered``) of the modules the library loads itself (rules/loaded.py).
        self.loaded_at = [pos for pos, r in enumerate(self.registered) if r.module.loaded]
        self.embedded = [m for unit in units for m in unit.modules if m.embedded and not m.loaded]
        #: How many fatbins the library embeds (the facts may keep one per distinct arch list of them).
        self.embedded_total = facts.embedded_total or len(self.embedded)
        #: The embedded fatbins' distinct code (cuFFT's 23,983 share a few dozen arch lists).
        self.embedded_code = tuple(dict.fromkeys(canonical(m) for m in self.embedded))
        self.embedded_sections = tuple(sorted({m.section or "" for m in self.embedded}))
        groups: dict[Module, list[int]] = {}
        for pos, r in enumerate(self.registered):
            groups.setdefault(canonical(r.module, keep_loaded=True), []).append(pos)
        #: Positions (in ``registered``) of the modules of each distinct arch list.
        self.groups = groups
        #: The arch list (canonical module) of each registered position.
        self.canon_at: list[Module] = [Module(0, 0, None, ())] * len(self.registered)
        for canon, positions in groups.items():
            for pos in positions:
                self.canon_at[pos] = canon
        #: Distinct code of the registered modules (a bare cubin's one module, for library-loaded pools).
        self.code = tuple(canon for canon in groups if not canon.relocatable)
        # The roles work on the loadable modules, grouped alike: group g of the roles is self.code[g].
        self._loadable_pos = [pos for canon in self.code for pos in groups[canon]]
        role_groups: list[list[int]] = []
        start = 0
        for canon in self.code:
            role_groups.append(list(range(start, start + len(groups[canon]))))
            start += len(groups[canon])
        self.roles = roles.FileRoles(
            [self.registered[pos].module for pos in self._loadable_pos], kernel_names, role_groups
        )
        built = toolkit_mod.build_toolkit(facts)
        #: The toolkit that built the file (a lower bound from its facts), ``None`` when nothing says.
        self.toolkit: toolkit_mod.BuildToolkit | None = built
        self._era: CudaVersion | None = built.version if built is not None else None
        self._cubin_asked = False

    def floor_toolkit(self) -> toolkit_mod.BuildToolkit | None:
        """The building toolkit for the driver floor: the facts' evidence, else (asked once, only when a driver
        is known) the ptxas release noted in one of its cubins, through the ``kernel_names`` source."""
        if self.toolkit is not None or self._cubin_asked:
            return self.toolkit
        self._cubin_asked = True
        release = getattr(self.kernel_names, "toolkit_release", None)
        first = next((r.module for r in self.registered if not r.module.relocatable and r.module.entries), None)
        found = release(first) if release is not None and first is not None else None
        if found:
            where = self.facts.path.rsplit("/", 1)[-1]
            self.toolkit = toolkit_mod.BuildToolkit(
                CudaVersion(*found), f"ptxas of CUDA {found[0]}.{found[1]} in {where}"
            )
        return self.toolkit

    def decide(self, canon: Module, cc: ComputeCapability, options: JudgeOptions) -> ModuleVerdict:
        """One arch list of this file on ``cc``, under the compatibility rule of the toolkit that built it."""
        return decide(canon, cc, options, self._era)

    def decisions(self, cc: ComputeCapability, options: JudgeOptions) -> FileDecisions:
        """The verdict of every arch list on ``cc``, and the role decisions of the modules without code."""
        verdicts = {canon: self.decide(canon, cc, options) for canon in self.groups}
        by_canon: dict[Module, roles.RoleDecision] = {}
        by_pos: dict[int, roles.RoleDecision] = {}
        if options.gating and self.code:
            by_group, by_module = self.roles.classify([verdicts[c].status for c in self.code], cc)
            for g, decision in by_group.items():
                by_canon[self.code[g]] = decision
            for k, decision in by_module.items():
                by_pos[self._loadable_pos[k]] = decision
        return FileDecisions(verdicts, by_canon, by_pos)

    def role_status(self, cc: ComputeCapability, options: JudgeOptions) -> list[Status]:
        """The decision's status per roles group (:attr:`code`) on ``cc``: what the file-level roles read."""
        return [self.decide(c, cc, options).status for c in self.code]

    def module_statuses(self, cc: ComputeCapability, options: JudgeOptions = DEFAULT_OPTIONS) -> ModuleStatuses:
        """Each registered module's status on ``cc`` (roles applied) and its role decision, by position."""
        found = self.decisions(cc, options)
        status: list[Status] = [Status.NONE] * len(self.registered)
        decisions: dict[int, roles.RoleDecision] = {}
        for canon, positions in self.groups.items():
            for pos in positions:
                d = found.role_at(pos, canon)
                if d is not None:
                    decisions[pos] = d
                status[pos] = d.role.status if d is not None else found.verdicts[canon].status
        return ModuleStatuses(tuple(status), decisions)

    def tally(self, found: FileDecisions) -> Tally:
        """Module counts per (status, arch list) with the first reason of each: what counts and summaries
        need, without building a verdict per module."""
        tally: Tally = {}
        overrides: dict[Module, int] = {}
        for pos in found.by_pos:  # modules whose kernel names decided otherwise than their arch list
            overrides[self.canon_at[pos]] = overrides.get(self.canon_at[pos], 0) + 1
        for canon, positions in self.groups.items():
            _tally(tally, found.verdicts[canon], found.by_canon.get(canon), len(positions) - overrides.get(canon, 0))
        for pos, d in found.by_pos.items():
            _tally(tally, found.verdicts[self.canon_at[pos]], d, 1)
        return tally

    def counts(self, cc: ComputeCapability, options: JudgeOptions = DEFAULT_OPTIONS) -> Counts:
        """Module status counts on ``cc`` without building per-module verdicts (coverage over many CCs)."""
        counts = _tally_counts(self.tally(self.decisions(cc, options)))
        if self.embedded:
            pool = self.pool(Gpu.of(cc), options, counts.native > 0)
            counts = counts + count_of([pool.status])
        return counts

    def pool(self, gpu: Gpu, options: JudgeOptions, native: bool) -> ModuleVerdict:
        """The embedded fatbins as one module; code for other GPUs only, while registered modules run
        natively here (``native``), is a specialisation (the library loads those fatbins on their GPUs)."""
        pool = embedded_pool(self.embedded_code, self.embedded_total, self.embedded_sections, gpu, options)
        return specialised_pool(pool, native, "registered modules run natively")


def unscanned_embedded(
    files: Sequence[PreparedFile], status: Status, summary: tuple[Reason, ...]
) -> tuple[Status, tuple[Reason, ...]]:
    """A library that embeds fatbins it loads itself, not scanned: say so, and never claim it fails."""
    where = sorted(
        {s for f in files if not f.embedded for s in f.facts.embedded_sections}
        - {r.module.section or "" for f in files for r in f.registered if r.module.loaded}  # judged: loaded modules
    )
    if not where:
        return status, summary
    note = reason(
        "library-loaded-code",
        f"the library also embeds fatbins in {', '.join(where)} and loads them itself; they are not evaluated "
        "(scan with --embedded to include them)",
    )
    if status is Status.FAILS:
        status = Status.PARTIAL  # its own loader may well have code for this GPU
    return status, (note, *summary)


def evaluate_file(
    facts: BinaryFacts | PreparedFile,
    gpu: Gpu,
    *,
    driver: DriverVersion | None = None,
    jit_allowed: bool = True,
    gating: bool = True,
) -> FileVerdict:
    """Decide one file: its loadable modules combined (archive members included); keyword arguments as in
    :class:`~cudafit.rules.options.JudgeOptions`."""
    prepared = facts if isinstance(facts, PreparedFile) else PreparedFile(facts)
    return judge_file(prepared, gpu, JudgeOptions(driver=driver, jit_allowed=jit_allowed, gating=gating))


#: Module statuses a file's summary reasons describe (one reason per arch list).
_SUMMARISED = frozenset({Status.FAILS, Status.GATED, Status.JIT, Status.SPECIALISED, Status.KERNEL_LESS})


def judge_file(prepared: PreparedFile, gpu: Gpu, options: JudgeOptions) -> FileVerdict:
    """One prepared file on ``gpu``: its loadable modules combined, its embedded pool, its driver floor and the
    modules it loads itself (:func:`cudafit.rules.loaded.all_holes`)."""
    facts = prepared.facts
    cc = gpu.compute_capability
    found = prepared.decisions(cc, options)
    tally = prepared.tally(found)
    base = _tally_counts(tally)
    pool = prepared.pool(gpu, options, base.native > 0) if prepared.embedded else None
    counts = base + count_of([pool.status]) if pool is not None else base
    status, summary = unscanned_embedded([prepared], *combine(counts, prepared.relocatable))
    driver = options.driver
    runtime = toolkit_mod.driver_too_old(prepared.floor_toolkit() if driver is not None else None, driver)
    if runtime is not None and status is not Status.NONE:
        status, summary = Status.FAILS, (runtime, *summary)
    detail = tuple(
        Reason(first.code, (f"{n} module(s): " if n > 1 else "") + first.message, first.source, first.data)
        for (st, _archs), (n, first) in tally.items()
        if n and st in _SUMMARISED
    )
    if pool is not None:
        detail += pool.reasons
    broken = loaded.all_holes(prepared, found, cc)
    if broken is not None and status is not Status.NONE:
        status, summary = Status.FAILS, (broken, *summary)
    if facts.error:
        detail += (reason("unreadable", f"{facts.path}: {facts.error}"),)

    def build() -> tuple[ModuleVerdict, ...]:
        out: list[ModuleVerdict] = []
        for pos, r in enumerate(prepared.registered):
            canon = prepared.canon_at[pos]
            where = None if r.path == facts.path else r.path
            out.append(_module_verdict(found.verdicts[canon], found.role_at(pos, canon), r, where))
        if pool is not None:
            out.append(pool)
        return tuple(out)

    return FileVerdict(facts.path, status, counts, LazySequence(build), summary + detail)


def _tally_counts(tally: Tally) -> Counts:
    return sum((count_of([st], n) for (st, _archs), (n, _reason) in tally.items()), Counts())


def _tally(tally: Tally, v: ModuleVerdict, d: roles.RoleDecision | None, n: int) -> None:
    if n <= 0:
        return
    st, first = effective(v, d)
    key = (st, v.sass + v.ptx)
    seen, kept = tally.get(key, (0, first))
    tally[key] = (seen + n, kept)


def _module_verdict(v: ModuleVerdict, d: roles.RoleDecision | None, r: Registered, where: str | None) -> ModuleVerdict:
    """The verdict of one registered module: its arch list's, with its role (and the kernel names read) applied."""
    m = r.module
    if d is None:
        return ModuleVerdict(
            r.index, m.section, v.status, v.sass, v.ptx, v.chosen, v.reasons, v.needs_ptx_isa, None, where
        )
    if d.reason.code == "no-compatible-code":  # nothing in the file serves: the engine's why
        return ModuleVerdict(
            r.index, m.section, v.status, v.sass, v.ptx, None, v.reasons, v.needs_ptx_isa, d.kernels, r.path
        )
    why = tuple(x for x in v.reasons if x.code not in ("no-compatible-code", "ptx-jit"))
    st = d.role.status
    return ModuleVerdict(r.index, m.section, st, v.sass, v.ptx, None, (d.reason, *why), None, d.kernels, r.path)
