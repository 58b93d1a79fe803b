"""The verdict engine: binary facts x GPU x driver -> native / jit / partial / fails / none.

NVIDIA's rules, applied per module (one fatbin = one registered CUDA module, so a library whose
second fatbin lacks the arch fails for that fatbin's kernels only):

1. SASS (CUDA Programming Guide 13 §1.3.4.1): a cubin for ``sm_XY`` runs on compute capability
   X.Z iff Z >= Y; never across majors.  ``a`` cubins run only on exactly X.Y (§5.1.2.1), ``f``
   cubins only on their family (§5.1.2.2, Table 28).  Tegra GPUs have no minor-version binary
   compatibility (legacy guide §6.1.2): there a cubin must match exactly.
2. PTX (§1.3.4.2): JIT-compiled for any compute capability >= its target (same ``a``/``f``
   restrictions), if JIT is allowed and the PTX ISA is not newer than the driver's JIT
   (error 222 otherwise; fatbin_spec.md §E.4).
3. Otherwise no kernel image (error 209), raised when a kernel of that module is first used.

Modules whose every entry targets an ``a``/``f`` variant of *other* GPUs are "gated": libraries
dispatch those kernels only on the GPU they were built for, so they are reported, not failed
(docs/verdicts.md).  Other modules without code for a GPU get a role from :mod:`cudafit.rules.roles`:
specialised for other GPUs and kernel-less modules are information, holes make a file ``partial``.
``__nv_relfatbin`` modules are never loaded and never count as code.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from cudafit.binary.facts import BinaryFacts, EntryKind, FatbinEntry, FileFormat, Module
from cudafit.model import (
    ArchVariant,
    ComputeCapability,
    CudaVersion,
    DriverVersion,
    Gpu,
    PtxIsaVersion,
    parse_ptx_target,
    parse_sm_arch,
)
from cudafit.rules import compat, loaded, roles, tables
from cudafit.rules import toolkit as toolkit_mod
from cudafit.rules.reasons import Reason, ReasonData, reason
from cudafit.rules.status import Status

__all__ = [
    "CodeChoice",
    "Counts",
    "FileVerdict",
    "Gpu",
    "ModuleVerdict",
    "PackageVerdict",
    "PreparedFile",
    "Status",
    "arch_runs_on",
    "evaluate_file",
    "evaluate_module",
    "evaluate_package",
    "iter_compatible_code",
]


@dataclass(frozen=True)
class CodeChoice:
    """One usable image for a GPU, with how it would be used."""

    entry: FatbinEntry
    how: str  # "sass-exact" | "sass-compatible" | "ptx-jit"


def _entry_fit(entry: FatbinEntry, cc: ComputeCapability, toolkit: CudaVersion | None) -> compat.Fit:
    """The one compatibility rule (:mod:`cudafit.rules.compat`) for a fatbin entry."""
    if entry.compute_capability is None:
        return None, reason("no-compatible-code", f"{entry.arch_name}: not a compute capability")
    kind = compat.CodeKind.SASS if entry.kind is EntryKind.SASS else compat.CodeKind.PTX
    return compat.code_runs_on(kind, entry.arch_number, entry.variant, cc, toolkit)


def _sass_fit(entry: FatbinEntry, cc: ComputeCapability, toolkit: CudaVersion | None = None) -> compat.Fit:
    """("sass-exact" | "sass-compatible" | None, why not)."""
    return _entry_fit(entry, cc, toolkit)


def _ptx_fit(entry: FatbinEntry, cc: ComputeCapability, toolkit: CudaVersion | None = None) -> Reason | None:
    return _entry_fit(entry, cc, toolkit)[1]


def arch_runs_on(arch: str, cc: ComputeCapability, toolkit: CudaVersion | None = None) -> bool:
    """Whether code named ``sm_86``, ``sm_90a``, ``sm_100f`` or ``compute_80`` (built by ``toolkit``, when known)
    runs on ``cc`` (by JIT for PTX), under the same rule as modules (no driver limit): for texts that name
    archs, such as error logs."""
    if arch.startswith("compute"):
        target = parse_ptx_target(arch)
        return compat.code_runs_on(compat.CodeKind.PTX, target.number, target.variant, cc, toolkit)[0] is not None
    sm = parse_sm_arch(arch)
    return compat.code_runs_on(compat.CodeKind.SASS, sm.number, sm.variant, cc, toolkit)[0] is not None


def _isa_limit(driver: DriverVersion | None) -> tuple[PtxIsaVersion | None, bool]:
    """(max PTX ISA of the driver's JIT, whether that limit is certain)."""
    if driver is None:
        return None, False
    limit = tables.driver_max_ptx_isa(driver)
    newest = max(tables.load_tables().min_driver["linux"].values())
    return limit, not (driver >= newest)


def iter_compatible_code(
    module: Module,
    gpu: Gpu,
    *,
    driver: DriverVersion | None = None,
    jit_allowed: bool = True,
    toolkit: CudaVersion | None = None,
) -> Iterator[CodeChoice]:
    """Yield the usable images of ``module`` for ``gpu``, best first.

    Order (like pypa/packaging's ``sys_tags``): exact SASS; compatible SASS, highest minor
    first; JIT-able PTX, highest target first.  Nothing is yielded for relocatable modules.
    """
    if module.relocatable:
        return
    cc = gpu.compute_capability
    exact: list[FatbinEntry] = []
    compatible: list[FatbinEntry] = []
    ptx: list[FatbinEntry] = []
    isa_limit, certain = _isa_limit(driver)
    for e in module.entries:
        if e.kind is EntryKind.SASS:
            how, _ = _sass_fit(e, cc, toolkit)
            if how == "sass-exact":
                exact.append(e)
            elif how == "sass-compatible":
                compatible.append(e)
        elif e.kind is EntryKind.PTX and jit_allowed and _ptx_fit(e, cc, toolkit) is None:
            isa = e.ptx_isa
            if isa_limit is not None and isa is not None and isa > isa_limit and certain:
                continue
            ptx.append(e)
    for e in exact:
        yield CodeChoice(e, "sass-exact")
    for e in sorted(compatible, key=lambda x: x.arch_number, reverse=True):
        yield CodeChoice(e, "sass-compatible")
    for e in sorted(ptx, key=lambda x: x.arch_number, reverse=True):
        yield CodeChoice(e, "ptx-jit")


@dataclass(frozen=True)
class ModuleVerdict:
    """One module (fatbin) on one GPU."""

    index: int
    section: str | None
    status: Status
    sass: tuple[str, ...]
    ptx: tuple[str, ...]
    chosen: str | None
    reasons: tuple[Reason, ...]
    #: The PTX ISA a driver's JIT must accept for this module to run (its compatible PTX was too new).
    needs_ptx_isa: PtxIsaVersion | None = None
    #: Kernel names read while deciding the module's role (``None``: not read).
    kernels: tuple[str, ...] | None = None
    #: The file (or archive member) the module is in.
    path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "index": self.index,
            "section": self.section,
            "status": self.status.value,
            "sass": list(self.sass),
            "ptx": list(self.ptx),
            "chosen": self.chosen,
            "reasons": [r.to_dict() for r in self.reasons],
        }


def _arch_names(entries: Iterable[FatbinEntry], kind: EntryKind) -> tuple[str, ...]:
    """Distinct arch names of one kind, in arch order (sm_75 before sm_100; sm_90 before sm_90a)."""
    found = {(e.arch_number, e.variant.value, e.arch_name) for e in entries if e.kind is kind}
    return tuple(name for _n, _v, name in sorted(found))


def _signature(module: Module) -> tuple[FatbinEntry, ...]:
    """The module's code with file offsets erased: all a decision depends on (modules repeat a lot)."""
    return tuple(
        FatbinEntry(e.kind, e.arch_number, e.variant, e.code_version, e.flags, e.compression, 0, 0, 0, 0, 0, 0)
        for e in module.entries
        if e.kind in (EntryKind.SASS, EntryKind.PTX)
    )


def evaluate_module(
    module: Module,
    gpu: Gpu,
    *,
    driver: DriverVersion | None = None,
    jit_allowed: bool = True,
    index: int = 0,
    gating: bool = True,
    toolkit: CudaVersion | None = None,
) -> ModuleVerdict:
    """Decide one module: native, jit, gated, fails (or none for relocatable / empty modules).

    Decisions are cached by the module's code signature: a library's thousands of modules
    usually share a handful of arch lists.
    """
    canon = Module(0, 0, "__nv_relfatbin" if module.relocatable else None, _signature(module))
    v = _decide(canon, gpu.compute_capability, driver, jit_allowed, gating, toolkit)
    return ModuleVerdict(index, module.section, v.status, v.sass, v.ptx, v.chosen, v.reasons, v.needs_ptx_isa)


@functools.lru_cache(maxsize=65536)
def _decide(
    module: Module,
    cc: ComputeCapability,
    driver: DriverVersion | None,
    jit_allowed: bool,
    gating: bool = True,
    toolkit: CudaVersion | None = None,
) -> ModuleVerdict:
    """Decide a canonical module.  ``gating=False`` when every kernel is always used (a .pt2 model's
    cubins), so code built only for other GPUs' a/f targets is a failure, not a gated module."""
    gpu = Gpu(str(cc), cc)
    index = 0
    code = [e for e in module.entries if e.kind in (EntryKind.SASS, EntryKind.PTX)]
    sass = _arch_names(code, EntryKind.SASS)
    ptx = _arch_names(code, EntryKind.PTX)
    if module.relocatable:
        r = reason("relocatable-only", "module is in __nv_relfatbin (device-link input), never loaded")
        return ModuleVerdict(index, module.section, Status.NONE, sass, ptx, None, (r,))
    if not code:
        r = reason("no-device-code", "module holds no SASS or PTX (e.g. LTO-IR only)")
        return ModuleVerdict(index, module.section, Status.NONE, sass, ptx, None, (r,))
    best = next(iter_compatible_code(module, gpu, driver=driver, jit_allowed=jit_allowed, toolkit=toolkit), None)
    if best is not None:
        if best.how == "ptx-jit":
            r = reason(
                "ptx-jit",
                f"no cubin for {cc}: the driver JIT-compiles {best.entry.arch_name} PTX on first use; kernels "
                f"that check __CUDA_ARCH__ take the sm_{best.entry.arch_number} path",
            )
            reasons: tuple[Reason, ...] = (r,)
            isa_limit, certain = _isa_limit(driver)
            isa = best.entry.ptx_isa
            if isa_limit is not None and isa is not None and isa > isa_limit and not certain:
                reasons += (
                    reason("ptx-isa-unverified", f"PTX ISA {isa}: driver {driver} is newer than the table's toolkits"),
                )
            return ModuleVerdict(index, module.section, Status.JIT, sass, ptx, best.entry.arch_name, reasons)
        r = reason(best.how, f"{best.entry.arch_name} runs on {cc}")
        return ModuleVerdict(index, module.section, Status.NATIVE, sass, ptx, best.entry.arch_name, (r,))
    # Nothing usable: collect why, and decide between "gated" and "fails".
    why: list[Reason] = []
    blocked_isas: list[PtxIsaVersion] = []
    for e in code:
        if e.kind is EntryKind.SASS:
            _, bad = _sass_fit(e, cc, toolkit)
            if bad is not None:
                why.append(bad)
        else:
            bad = _ptx_fit(e, cc, toolkit)
            if bad is not None:
                why.append(bad)
            elif not jit_allowed:
                why.append(reason("jit-disabled", f"{e.arch_name} PTX would JIT, but PTX JIT is disabled"))
            else:
                isa_limit, _ = _isa_limit(driver)
                if e.ptx_isa is not None:
                    blocked_isas.append(e.ptx_isa)
                why.append(
                    reason(
                        "ptx-isa-too-new-for-driver",
                        f"{e.arch_name} PTX has ISA {e.ptx_isa}; driver {driver} JIT supports up to {isa_limit}",
                    )
                )
    if gating and all(e.variant is not ArchVariant.NONE for e in code):
        archs = ", ".join(sass + ptx)
        r = reason("built-only-for-other-gpus", f"module built only for {archs}: used on those GPUs, not on {cc}")
        return ModuleVerdict(index, module.section, Status.GATED, sass, ptx, None, (r, *why))
    # The error the runtime raises (fatbin_spec.md §E.6): 222 when a compatible PTX exists but its ISA is too
    # new for the driver, 223 when only JIT could help and it is disabled, else 209.
    decisive = next((r for r in why if r.code in ("ptx-isa-too-new-for-driver", "jit-disabled")), None)
    summary = decisive or reason(
        "no-compatible-code", f"no code for {cc}: module has {', '.join(sass + ptx)} (no kernel image, error 209)"
    )
    needs = min(blocked_isas) if blocked_isas and jit_allowed else None
    return ModuleVerdict(index, module.section, Status.FAILS, sass, ptx, None, _dedupe((summary, *why)), needs)


def _dedupe(reasons: Sequence[Reason]) -> tuple[Reason, ...]:
    return tuple(dict.fromkeys(reasons))


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
        return Counts(
            self.native + other.native,
            self.jit + other.jit,
            self.gated + other.gated,
            self.fails + other.fails,
            self.specialised + other.specialised,
            self.kernel_less + other.kernel_less,
        )

    def to_dict(self) -> dict[str, int]:
        """JSON form."""
        return {
            "native": self.native,
            "jit": self.jit,
            "gated": self.gated,
            "fails": self.fails,
            "specialised": self.specialised,
            "kernel_less": self.kernel_less,
        }


_COUNTED = {
    Status.NATIVE: "native",
    Status.JIT: "jit",
    Status.GATED: "gated",
    Status.FAILS: "fails",
    Status.SPECIALISED: "specialised",
    Status.KERNEL_LESS: "kernel_less",
}


#: Module counts per (status, arch names): [how many, the first reason].
Tally = dict[tuple[Status, tuple[str, ...]], list[Any]]


def _count_of(statuses: Iterable[Status]) -> Counts:
    c = dict.fromkeys(_COUNTED.values(), 0)
    for st in statuses:
        key = _COUNTED.get(st)
        if key is not None:
            c[key] += 1
    return Counts(**c)


def combine_counts(counts: Counts) -> Status:
    """The file/package status for module counts (``none`` when there is no loadable code)."""
    return _combine(counts, False)[0]


def _combine(counts: Counts, has_relocatable: bool) -> tuple[Status, tuple[Reason, ...]]:
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


@dataclass(frozen=True)
class FileVerdict:
    """One file (or archive member) on one GPU."""

    path: str
    status: Status
    counts: Counts
    modules: Sequence[ModuleVerdict]
    reasons: tuple[Reason, ...]

    def to_dict(self, *, modules: bool = False) -> dict[str, Any]:
        """JSON form (module verdicts only when asked: large libraries have thousands)."""
        out: dict[str, Any] = {
            "path": self.path,
            "status": self.status.value,
            "counts": self.counts.to_dict(),
            "reasons": [r.to_dict() for r in self.reasons],
        }
        if modules:
            out["modules"] = [m.to_dict() for m in self.modules]
        return out


def _iter_units(facts: BinaryFacts) -> Iterator[BinaryFacts]:
    if facts.modules:
        yield facts
    for member in facts.members:
        yield from _iter_units(member)


class PreparedFile:
    """A file's loadable modules grouped by code, prepared once and judged for many GPUs.

    Libraries hold thousands of modules sharing a few dozen arch lists: each list is decided once
    per GPU (``_decide``), and only modules without code go through :mod:`cudafit.rules.roles`,
    whose kernel-name lookups are remembered here across GPUs.
    """

    def __init__(self, facts: BinaryFacts, kernel_names: roles.KernelNames | None = None) -> None:
        self.facts = facts
        self.kernel_names = kernel_names
        #: (unit path, index in the unit, module) of every module judged on its own: registered ones, and
        #: those the library loads itself (``Module.loaded``), under the same role rules.
        self.registered: list[tuple[str, int, Module]] = [
            (unit.path, i, m)
            for unit in _iter_units(facts)
            for i, m in enumerate(unit.modules)
            if not m.embedded or m.loaded
        ]
        self.relocatable = any(m.relocatable for _p, _i, m in self.registered)
        #: Positions (in ``registered``) of the modules the library loads itself (rules/loaded.py).
        self.loaded_at = [pos for pos, (_p, _i, m) in enumerate(self.registered) if m.loaded]
        self.embedded = [m for unit in _iter_units(facts) for m in unit.modules if m.embedded and not m.loaded]
        #: How many fatbins the library embeds (the facts may keep one per distinct arch list of them).
        self.embedded_total = facts.embedded_total or len(self.embedded)
        #: The embedded fatbins' distinct code (cuFFT's 23,983 share a few dozen arch lists).
        self.embedded_code = tuple(dict.fromkeys(Module(0, 0, None, _signature(m)) for m in self.embedded))
        self.embedded_sections = tuple(sorted({m.section or "" for m in self.embedded}))
        groups: dict[Module, list[int]] = {}
        for pos, (_p, _i, m) in enumerate(self.registered):
            canon = Module(0, 0, "__nv_relfatbin" if m.relocatable else None, _signature(m), m.loaded)
            groups.setdefault(canon, []).append(pos)
        #: Positions (in ``registered``) of the modules of each distinct arch list.
        self.groups = groups
        #: The arch list (canonical module) of each registered position.
        self.canon_at: list[Module] = [Module(0, 0, None, ())] * len(self.registered)
        for canon, positions in groups.items():
            for pos in positions:
                self.canon_at[pos] = canon
        #: Distinct code of the registered modules (a bare cubin's one module, for library-loaded pools).
        self.code = tuple(canon for canon in groups if not canon.relocatable)
        # roles work on the loadable modules: group g of the roles is self.code[g]
        loadable_pos = [pos for canon in self.code for pos in groups[canon]]
        self._loadable_pos = loadable_pos
        role_groups: list[list[int]] = []
        k = 0
        for canon in self.code:
            n = len(groups[canon])
            role_groups.append(list(range(k, k + n)))
            k += n
        self.roles = roles.FileRoles([self.registered[pos][2] for pos in loadable_pos], kernel_names, role_groups)
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
        first = next((m for _p, _i, m in self.registered if not m.relocatable and m.entries), None)
        found = release(first) if release is not None and first is not None else None
        if found:
            where = self.facts.path.rsplit("/", 1)[-1]
            self.toolkit = toolkit_mod.BuildToolkit(
                CudaVersion(*found), f"ptxas of CUDA {found[0]}.{found[1]} in {where}"
            )
        return self.toolkit

    def decide(
        self, canon: Module, cc: ComputeCapability, driver: DriverVersion | None, jit_allowed: bool, gating: bool
    ) -> ModuleVerdict:
        """One arch list of this file on ``cc``, under the compatibility rule of the toolkit that built it."""
        return _decide(canon, cc, driver, jit_allowed, gating, self._era)

    def statuses(
        self, cc: ComputeCapability, driver: DriverVersion | None, jit_allowed: bool, gating: bool
    ) -> tuple[dict[Module, Status], dict[Module, roles.RoleDecision], dict[int, roles.RoleDecision]]:
        """(status per arch list, role decisions per arch list, role decisions per module position that
        differ from their arch list's) on ``cc``."""
        group_status = {canon: self.decide(canon, cc, driver, jit_allowed, gating).status for canon in self.groups}
        by_canon: dict[Module, roles.RoleDecision] = {}
        by_pos: dict[int, roles.RoleDecision] = {}
        if gating and self.code:
            names = [group_status[c].value if group_status[c] in _ROLE_INPUT else "other" for c in self.code]
            by_group, by_module = self.roles.classify(names, cc)
            for g, decision in by_group.items():
                by_canon[self.code[g]] = decision
            for k, decision in by_module.items():
                by_pos[self._loadable_pos[k]] = decision
        return group_status, by_canon, by_pos

    def role_status(
        self, cc: ComputeCapability, driver: DriverVersion | None, jit_allowed: bool, gating: bool
    ) -> list[str]:
        """The engine's verdict per roles group (``native``, ``jit``, ``fails`` or ``other``) on ``cc``."""
        status = {c: self.decide(c, cc, driver, jit_allowed, gating).status for c in self.code}
        return [status[c].value if status[c] in _ROLE_INPUT else "other" for c in self.code]

    def module_statuses(
        self, cc: ComputeCapability, driver: DriverVersion | None = None, jit_allowed: bool = True, gating: bool = True
    ) -> tuple[list[Status], dict[int, roles.RoleDecision]]:
        """Each registered module's status on ``cc`` (roles applied) and its role decision, by position."""
        group_status, by_canon, by_pos = self.statuses(cc, driver, jit_allowed, gating)
        status: list[Status] = [Status.NONE] * len(self.registered)
        decisions: dict[int, roles.RoleDecision] = {}
        for canon, positions in self.groups.items():
            group_decision = by_canon.get(canon)
            for pos in positions:
                d = by_pos.get(pos, group_decision)
                if d is not None:
                    decisions[pos] = d
                status[pos] = _ROLE_STATUS[d.role] if d is not None else group_status[canon]
        return status, decisions

    def tally(
        self, cc: ComputeCapability, driver: DriverVersion | None, jit_allowed: bool, gating: bool
    ) -> tuple[Tally, dict[Module, ModuleVerdict], dict[Module, roles.RoleDecision], dict[int, roles.RoleDecision]]:
        """Module counts per (status, arch list) with the first reason of each, on ``cc``: what counts and
        summaries need, without building a verdict per module (and what building them needs)."""
        _group_status, by_canon, by_pos = self.statuses(cc, driver, jit_allowed, gating)
        decided = {canon: self.decide(canon, cc, driver, jit_allowed, gating) for canon in self.groups}
        tally: Tally = {}
        overrides: dict[Module, int] = {}
        for pos in by_pos:  # modules whose kernel names decided otherwise than their arch list
            overrides[self.canon_at[pos]] = overrides.get(self.canon_at[pos], 0) + 1
        for canon, positions in self.groups.items():
            _tally(tally, decided[canon], by_canon.get(canon), len(positions) - overrides.get(canon, 0))
        for pos, d in by_pos.items():
            _tally(tally, decided[self.canon_at[pos]], d, 1)
        return tally, decided, by_canon, by_pos

    def counts(
        self, cc: ComputeCapability, driver: DriverVersion | None = None, jit_allowed: bool = True, gating: bool = True
    ) -> Counts:
        """Module status counts on ``cc`` without building per-module verdicts (coverage over many CCs)."""
        tally = self.tally(cc, driver, jit_allowed, gating)[0]
        counts = _tally_counts(tally)
        if self.embedded:
            pool = self.pool(Gpu(str(cc), cc), driver, jit_allowed, counts.native > 0)
            counts = counts + _count_of([pool.status])
        return counts

    def pool(self, gpu: Gpu, driver: DriverVersion | None, jit_allowed: bool, native: bool) -> ModuleVerdict:
        """The embedded fatbins as one module; code for other GPUs only, while registered modules run
        natively here (``native``), is a specialisation (the library loads those fatbins on their GPUs)."""
        pool = _embedded_pool(self.embedded_code, self.embedded_total, self.embedded_sections, gpu, driver, jit_allowed)
        return _specialised_pool(pool, native, "registered modules run natively")


#: The engine verdicts the roles take as input (anything else is "other": gated, none).
_ROLE_INPUT = frozenset({Status.NATIVE, Status.JIT, Status.FAILS})

_ROLE_STATUS = {
    roles.Role.SPECIALISED: Status.SPECIALISED,
    roles.Role.KERNEL_LESS: Status.KERNEL_LESS,
    roles.Role.HOLE: Status.FAILS,
}


def evaluate_file(
    facts: BinaryFacts | PreparedFile,
    gpu: Gpu,
    *,
    driver: DriverVersion | None = None,
    jit_allowed: bool = True,
    gating: bool = True,
) -> FileVerdict:
    """Decide one file: its loadable modules combined (archive members included)."""
    prepared = facts if isinstance(facts, PreparedFile) else PreparedFile(facts)
    facts = prepared.facts
    cc = gpu.compute_capability
    tally, decided, by_canon, by_pos = prepared.tally(cc, driver, jit_allowed, gating)
    base = _tally_counts(tally)
    pool = prepared.pool(gpu, driver, jit_allowed, base.native > 0) if prepared.embedded else None
    counts = base + _count_of([pool.status]) if pool is not None else base
    status_, summary = _adjust_for_unscanned_embedded([prepared], *_combine(counts, prepared.relocatable))
    runtime = _runtime_too_new(prepared.floor_toolkit() if driver is not None else None, driver)
    if runtime is not None and status_ is not Status.NONE:
        status_, summary = Status.FAILS, (runtime, *summary)
    detail = tuple(
        Reason(first.code, (f"{n} module(s): " if n > 1 else "") + first.message, first.source, first.data)
        for (st, _archs), (n, first) in tally.items()
        if n and st in _SUMMARISED
    )
    if pool is not None:
        detail += pool.reasons
    broken = loaded.all_holes(prepared, decided, by_canon, by_pos, cc)
    if broken is not None and status_ is not Status.NONE:
        status_, summary = Status.FAILS, (broken, *summary)
    if facts.error:
        detail += (reason("unreadable", f"{facts.path}: {facts.error}"),)

    def build() -> tuple[ModuleVerdict, ...]:
        out: list[ModuleVerdict] = []
        for pos, (path, i, m) in enumerate(prepared.registered):
            v = decided[prepared.canon_at[pos]]
            d = by_pos.get(pos) or by_canon.get(prepared.canon_at[pos])
            out.append(_module_verdict(v, d, i, m, path, None if path == facts.path else path))
        if pool is not None:
            out.append(pool)
        return tuple(out)

    return FileVerdict(facts.path, status_, counts, LazyModules(build), summary + detail)


#: Module statuses a file's summary reasons describe (one reason per arch list).
_SUMMARISED = frozenset({Status.FAILS, Status.GATED, Status.JIT, Status.SPECIALISED, Status.KERNEL_LESS})


def _effective(v: ModuleVerdict, d: roles.RoleDecision | None) -> tuple[Status, Reason]:
    """A module's status and first reason, given its arch list's verdict and its role decision."""
    if d is None or d.reason.code == "no-compatible-code":  # no role, or nothing in the file serves
        return v.status, v.reasons[0]
    return _ROLE_STATUS[d.role], d.reason


def _tally_counts(tally: Tally) -> Counts:
    c = dict.fromkeys(_COUNTED.values(), 0)
    for (st, _archs), (n, _reason) in tally.items():
        key = _COUNTED.get(st)
        if key is not None:
            c[key] += n
    return Counts(**c)


def _tally(tally: Tally, v: ModuleVerdict, d: roles.RoleDecision | None, n: int) -> None:
    if n <= 0:
        return
    st, first = _effective(v, d)
    entry = tally.setdefault((st, v.sass + v.ptx), [0, first])
    entry[0] += n


def _module_verdict(
    v: ModuleVerdict, d: roles.RoleDecision | None, index: int, m: Module, path: str, where: str | None
) -> ModuleVerdict:
    if d is None:
        return ModuleVerdict(
            index, m.section, v.status, v.sass, v.ptx, v.chosen, v.reasons, v.needs_ptx_isa, None, where
        )
    if d.reason.code == "no-compatible-code":  # nothing in the file serves: the engine's why
        return ModuleVerdict(
            index, m.section, v.status, v.sass, v.ptx, None, v.reasons, v.needs_ptx_isa, d.kernels, path
        )
    why = tuple(r for r in v.reasons if r.code not in ("no-compatible-code", "ptx-jit"))
    st = _ROLE_STATUS[d.role]
    return ModuleVerdict(index, m.section, st, v.sass, v.ptx, None, (d.reason, *why), None, d.kernels, path)


class LazyModules(Sequence[ModuleVerdict]):
    """A file's module verdicts, built on first use (reports that only need counts never build them)."""

    __slots__ = ("_build", "_items")

    def __init__(self, build: Callable[[], tuple[ModuleVerdict, ...]]) -> None:
        self._build = build
        self._items: tuple[ModuleVerdict, ...] | None = None

    def _get(self) -> tuple[ModuleVerdict, ...]:
        if self._items is None:
            self._items = self._build()
        return self._items

    @overload
    def __getitem__(self, i: int) -> ModuleVerdict: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[ModuleVerdict, ...]: ...
    def __getitem__(self, i: int | slice) -> ModuleVerdict | tuple[ModuleVerdict, ...]:
        return self._get()[i]

    def __len__(self) -> int:
        return len(self._get())

    def __iter__(self) -> Iterator[ModuleVerdict]:
        return iter(self._get())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(self._get())

    def __repr__(self) -> str:
        return f"LazyModules({len(self)} modules)" if self._items is not None else "LazyModules(not built)"


def _runtime_too_new(
    built: toolkit_mod.BuildToolkit | None, driver: DriverVersion | None, whose: str = "this file"
) -> Reason | None:
    """Step 1 of the decision procedure (fatbin_spec.md §E.6): the CUDA runtime the code was built for must be
    supported by the driver, or every CUDA call fails with error 35 before any kernel matters.  The runtime's
    major is the building toolkit's, however it is linked (:mod:`cudafit.rules.toolkit`)."""
    if driver is None or built is None:
        return None
    floor = tables.runtime_min_driver_branch(built.major)
    if floor is None or driver.major >= floor:
        return None
    data = ReasonData(driver_floor=floor, cuda_major=built.major, evidence=built.evidence)
    return reason(
        "driver-too-old-for-runtime",
        f"{whose} needs the CUDA {built.major} runtime ({built.evidence}): CUDA {built.major}.x needs driver >= "
        f"{floor}, this is {driver} (error 35)",
        data,
    )


def _adjust_for_unscanned_embedded(
    files: Sequence[PreparedFile], status: Status, summary: tuple[Reason, ...]
) -> tuple[Status, tuple[Reason, ...]]:
    """A library that embeds fatbins it loads itself, not scanned: say so, and never claim it fails."""
    where = sorted(
        {s for f in files if not f.embedded for s in f.facts.embedded_sections}
        - {m.section or "" for f in files for _p, _i, m in f.registered if m.loaded}  # judged: loaded modules
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


def _embedded_pool(
    code: Sequence[Module],
    count: int,
    sections: Sequence[str],
    gpu: Gpu,
    driver: DriverVersion | None,
    jit_allowed: bool,
) -> ModuleVerdict:
    """All fatbins a library embeds to load itself, judged as one pool: it picks one that fits the GPU.

    ``code``: the pool's distinct arch lists (canonical modules); ``count``: how many fatbins.
    """
    best = Status.FAILS
    chosen: str | None = None
    for m in code:
        v = _decide(m, gpu.compute_capability, driver, jit_allowed, False)
        if v.status is Status.NATIVE:
            best, chosen = Status.NATIVE, v.chosen
            break
        if v.status is Status.JIT and best is Status.FAILS:
            best, chosen = Status.JIT, v.chosen
    sass = _arch_names([e for m in code for e in m.entries], EntryKind.SASS)
    ptx = _arch_names([e for m in code for e in m.entries], EntryKind.PTX)
    what = f"{count} fatbins the library loads itself ({', '.join(sections)})"
    if best is Status.FAILS:
        msg = f"{what}: none has code for {gpu.compute_capability}"
    else:
        msg = f"{what}: {chosen} serves {gpu.compute_capability}"
    return ModuleVerdict(-1, "embedded", best, sass, ptx, chosen, (reason("library-loaded-code", msg),))


@dataclass(frozen=True)
class PackageVerdict:
    """One package (or directory of loose binaries) on one GPU."""

    name: str
    gpu: Gpu
    status: Status
    counts: Counts
    files: tuple[FileVerdict, ...]
    reasons: tuple[Reason, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "status": self.status.value,
            "counts": self.counts.to_dict(),
            "reasons": [r.to_dict() for r in self.reasons],
            "files": [f.to_dict() for f in self.files if f.status is not Status.NONE],
        }


def _library_loaded_files(
    prepared: Sequence[PreparedFile], pool: bool
) -> tuple[list[PreparedFile], list[PreparedFile]]:
    """(files, library-loaded files): a distribution's bare cubins and raw fatbins (two or more) are not
    registered by any runtime; the library loads the one it picks for the GPU (flashinfer's 15,970
    per-arch cubins), so they are judged as one pool, like fatbins embedded in data sections.  Loose
    files outside a distribution (a build directory) are each judged on their own."""
    loaded = [p for p in prepared if p.facts.format in (FileFormat.CUBIN, FileFormat.FATBIN)] if pool else []
    if len(loaded) < 2:
        return list(prepared), []
    ids = {id(p) for p in loaded}
    return [p for p in prepared if id(p) not in ids], loaded


def _loaded_pool(
    loaded: Sequence[PreparedFile],
    gpu: Gpu,
    driver: DriverVersion | None,
    jit_allowed: bool,
    native_elsewhere: bool,
) -> ModuleVerdict:
    """The library-loaded files as one module; code for other GPUs only, while other files run natively
    here, is a specialisation."""
    code = tuple(dict.fromkeys(c for p in loaded for c in p.code))
    pool = _embedded_pool(code, len(loaded), ("cubin/fatbin files",), gpu, driver, jit_allowed)
    return _specialised_pool(pool, native_elsewhere, "other files run natively")


def _specialised_pool(pool: ModuleVerdict, native_elsewhere: bool, why: str) -> ModuleVerdict:
    """A pool without native code for this GPU beside code that runs natively here: the library loads that
    code on other GPUs (information), as cuBLASLt's ``.cask_resource`` kernels."""
    if pool.status is Status.NATIVE or not native_elsewhere:
        return pool
    note = reason("library-loaded-code", f"{pool.reasons[0].message}; {why}")
    return dataclasses.replace(pool, status=Status.SPECIALISED, reasons=(note,))


def _pool_verdict(
    loaded: Sequence[PreparedFile],
    others: Sequence[FileVerdict],
    gpu: Gpu,
    driver: DriverVersion | None,
    jit_allowed: bool,
) -> FileVerdict:
    pool = _loaded_pool(loaded, gpu, driver, jit_allowed, any(fv.counts.native for fv in others))
    where = os.path.commonpath([p.facts.path.split("!")[0] for p in loaded]) if loaded else ""
    counts = _count_of([pool.status])
    status, summary = _combine(counts, False)
    return FileVerdict(where, status, counts, (pool,), summary + pool.reasons)


def package_status(
    prepared: Sequence[PreparedFile],
    cc: ComputeCapability,
    *,
    gating: bool = True,
    pool_loose: bool = True,
    python_modules: int = 0,
) -> tuple[Status, Counts]:
    """A package's status and module counts on ``cc`` (coverage columns): the verdict a GPU of that compute
    capability gets, so the columns and the verdicts never disagree."""
    v = evaluate_package(
        "", prepared, Gpu(str(cc), cc), gating=gating, pool_loose=pool_loose, python_modules=python_modules
    )
    return v.status, v.counts


#: NVIDIA's libraries as packages bundle them (auditwheel adds a hash: ``libnvjpeg-2b1b3b8d.so.12``).
_NVIDIA_LIBRARY = re.compile(
    r"^lib(nvjpeg|cublasLt|cublas|cufftw|cufft|curand|cusparseLt|cusparse|cusolverMg|cusolver|npp[a-z]*|nvrtc"
    r"|cudnn[a-z_]*|nccl|nvJitLink|cufile|nvshmem[a-z_]*)(?:-[0-9a-f]{8})?\.so(?:\.\d+)*$"
)


def bundled_nvidia_library(path: str) -> str | None:
    """The NVIDIA library a file is (``nvjpeg`` for ``torchvision.libs/libnvjpeg-2b1b3b8d.so.12``), else ``None``."""
    m = _NVIDIA_LIBRARY.match(os.path.basename(path.rsplit("!", maxsplit=1)[-1]))
    return m.group(1) if m else None


def _file_roles(
    registered: Sequence[PreparedFile],
    fverdicts: tuple[FileVerdict, ...],
    gpu: Gpu,
    how: tuple[DriverVersion | None, bool, bool],
    python_modules: int,
) -> tuple[FileVerdict, ...]:
    """The package's files judged together (docs/rules.md, *Files*).

    A file that loads (``DT_NEEDED``) a file of its package without code for the GPU cannot run: torch's
    ``libtorch_cuda_linalg.so`` (MAGMA, ``sm_50`` up) is unreachable on a GTX 1080 Ti when ``libtorch_cuda.so``
    has nothing for 6.1.  A file without code beside files (or Python code) that run is judged by the module
    roles at file level: built for other generations only, it is information (``specialised-file``).
    """
    cc = gpu.compute_capability
    out = list(fverdicts)
    n = len(registered)
    runs = (Status.NATIVE, Status.JIT, Status.PARTIAL)
    index = {os.path.basename(p.facts.path.split("!")[-1]): i for i, p in enumerate(registered)}
    failing = {i for i in range(n) if out[i].status is Status.FAILS and out[i].counts.fails}
    needs: dict[int, int] = {}
    changed = True
    while changed:  # transitively: a file loading a file that cannot run cannot run either
        changed = False
        for i, p in enumerate(registered):
            if i in failing or i in needs or out[i].status not in runs:
                continue
            dep = next((j for d in p.facts.needed if (j := index.get(d, i)) in failing or j in needs), None)
            if dep is not None and dep != i:
                needs[i] = dep
                changed = True
    for i, dep in needs.items():
        out[i] = _unreachable(out[i], registered[dep].facts.path, cc)
    runners = [i for i in range(n) if out[i].status in runs]
    pool_runs = len(out) > n and out[n].status in (Status.NATIVE, Status.JIT)
    if not (runners or pool_runs or python_modules):
        return tuple(out)
    driver, jit_allowed, gating = how
    for i in sorted(failing - set(needs.values())):
        p = registered[i]
        d = roles.classify_file(p.roles, p.role_status(cc, driver, jit_allowed, gating), cc)
        if d is not None:
            out[i] = _as_information(out[i], d)
    if any(out[i].counts.native for i in runners):
        for i in runners:
            if out[i].status is Status.JIT and not out[i].counts.native:
                p = registered[i]
                d = roles.classify_helper_file(p.roles, p.role_status(cc, driver, jit_allowed, gating))
                if d is not None:
                    out[i] = _as_information(out[i], d, Status.JIT)
    return tuple(out)


def _unreachable(fv: FileVerdict, core: str, cc: ComputeCapability) -> FileVerdict:
    """A file whose code runs here but which loads a file of its package that has none: its modules are holes."""
    c = fv.counts
    counts = dataclasses.replace(c, native=0, jit=0, fails=c.fails + c.native + c.jit)
    msg = f"{fv.path} loads {os.path.basename(core)}, which has no code for {cc}"
    why = reason("needs-failing-file", msg, ReasonData(path=fv.path))
    return dataclasses.replace(fv, status=Status.FAILS, counts=counts, reasons=(why, *fv.reasons))


def _as_information(fv: FileVerdict, d: roles.RoleDecision, of: Status = Status.FAILS) -> FileVerdict:
    """A file the package uses on other GPUs (its holes, ``of`` fails) or a helper (its JIT modules, ``of``
    jit): those modules become specialised."""
    c = fv.counts
    moved = c.fails if of is Status.FAILS else c.jit
    counts = dataclasses.replace(c, specialised=c.specialised + moved, **{_COUNTED[of]: 0})
    why = reason(d.reason.code, f"{fv.path}: {d.reason.message}", ReasonData(path=fv.path, modules=moved))
    modules = fv.modules

    def build() -> tuple[ModuleVerdict, ...]:
        return tuple(
            dataclasses.replace(m, status=Status.SPECIALISED, reasons=(why, *m.reasons)) if m.status is of else m
            for m in modules
        )

    kept = tuple(r for r in fv.reasons if r.code not in ("no-compatible-code", "partial-modules", "ptx-jit"))
    return FileVerdict(fv.path, Status.SPECIALISED, counts, LazyModules(build), (why, *kept))


def evaluate_package(
    name: str,
    files: Iterable[BinaryFacts | PreparedFile],
    gpu: Gpu,
    *,
    driver: DriverVersion | None = None,
    jit_allowed: bool = True,
    gating: bool = True,
    pool_loose: bool = True,
    python_modules: int = 0,
) -> PackageVerdict:
    """Decide a package from all its files' modules (``partial`` when some modules are holes).

    ``pool_loose``: the package is a distribution, whose loose cubins/fatbins its library loads itself;
    ``python_modules``: how many Python modules it ships (code that runs on any GPU)."""
    prepared = tuple(f if isinstance(f, PreparedFile) else PreparedFile(f) for f in files)
    registered, loaded = _library_loaded_files(prepared, gating and pool_loose)
    fverdicts = tuple(evaluate_file(f, gpu, driver=driver, jit_allowed=jit_allowed, gating=gating) for f in registered)
    if loaded:
        fverdicts += (_pool_verdict(loaded, fverdicts, gpu, driver, jit_allowed),)
    if gating:
        fverdicts = _file_roles(registered, fverdicts, gpu, (driver, jit_allowed, gating), python_modules)
    counts = sum((fv.counts for fv in fverdicts), Counts())
    relocatable = any(f.relocatable for f in prepared)
    status, summary = _adjust_for_unscanned_embedded(prepared, *_combine(counts, relocatable))
    if python_modules and counts.total and not (counts.fails or counts.native or counts.jit):
        # Code only for other GPUs beside Python code that runs anywhere (torchao's sm_90a/sm_100 extensions on
        # an A100): the package runs here without its CUDA kernels.
        msg = (
            f"the package's CUDA code is all for other GPUs; its Python code ({python_modules} modules) runs on "
            f"{gpu.compute_capability} without it"
        )
        status, summary = Status.NONE, (reason("specialised-file", msg), *summary[1:])
    coded = [fv for fv in fverdicts if fv.status is not Status.NONE]
    if any(r.code == "library-loaded-all-holes" for fv in coded for r in fv.reasons):
        status = Status.FAILS  # the library's own loading path has nothing for this GPU (rules/loaded.py)
    gaps: tuple[Reason, ...] = ()
    if status is Status.PARTIAL:  # a file without code beside files that run: a real gap, not a specialisation
        gaps = tuple(
            reason(
                "hole-file-without-code",
                f"{fv.path}: no code for {gpu.compute_capability} ({fv.counts.fails} modules)",
                ReasonData(path=fv.path, modules=fv.counts.fails, library=bundled_nvidia_library(fv.path)),
            )
            for fv in coded
            if fv.status is Status.FAILS
            and fv.counts.fails
            and not any(r.code == "needs-failing-file" for r in fv.reasons)
        )
    detail = tuple(
        dict.fromkeys(
            r
            for fv in fverdicts
            for r in fv.reasons
            if r.code != "partial-modules" and r not in summary and not (counts.total and r.code == "no-device-code")
        )
    )
    # The driver floor is the whole package's: its files load one CUDA runtime (linked, static, or from an
    # nvidia-*-cuNN wheel), and a runtime that cannot start fails every file, whatever their code.
    built = None
    if coded and driver is not None:
        built = toolkit_mod.package_build_toolkit(name, (p.floor_toolkit() for p in prepared))
    floor = _runtime_too_new(built, driver, f"{name}")
    if floor is not None:
        rest = tuple(r for r in summary + gaps + detail if r.code != "driver-too-old-for-runtime")
        return PackageVerdict(name, gpu, Status.FAILS, counts, fverdicts, (floor, *rest))
    return PackageVerdict(name, gpu, status, counts, fverdicts, summary + gaps + detail)
