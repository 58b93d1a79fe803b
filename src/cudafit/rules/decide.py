"""The per-module decision: one fatbin's code x one GPU x the options -> native / jit / gated / fails / none.

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
(docs/verdicts.md).  ``__nv_relfatbin`` modules are never loaded and never count as code.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cudafit.binary.facts import EntryKind, FatbinEntry, Module
from cudafit.model import (
    ArchVariant,
    ComputeCapability,
    CudaVersion,
    DriverVersion,
    Gpu,
    JsonDict,
    PtxIsaVersion,
    parse_ptx_target,
    parse_sm_arch,
)
from cudafit.rules import compat, tables
from cudafit.rules.options import DEFAULT_OPTIONS, JudgeOptions
from cudafit.rules.reasons import Reason, reason
from cudafit.rules.status import Status

if TYPE_CHECKING:
    from cudafit.rules.roles import RoleDecision

__all__ = [
    "CodeChoice",
    "ModuleVerdict",
    "arch_names",
    "arch_runs_on",
    "canonical",
    "code_of",
    "decide",
    "effective",
    "evaluate_module",
    "iter_compatible_code",
]


@dataclass(frozen=True)
class CodeChoice:
    """One usable image for a GPU, with how it would be used."""

    entry: FatbinEntry
    how: str  # "sass-exact" | "sass-compatible" | "ptx-jit"


def _entry_fit(entry: FatbinEntry, cc: ComputeCapability, toolkit: CudaVersion | None) -> compat.Fit:
    """The one compatibility rule (:mod:`cudafit.rules.compat`) for a fatbin entry: (how it runs, why not)."""
    if entry.compute_capability is None:
        return None, reason("no-compatible-code", f"{entry.arch_name}: not a compute capability")
    kind = compat.CodeKind.SASS if entry.kind is EntryKind.SASS else compat.CodeKind.PTX
    return compat.code_runs_on(kind, entry.arch_number, entry.variant, cc, toolkit)


def arch_runs_on(arch: str, cc: ComputeCapability, toolkit: CudaVersion | None = None) -> bool:
    """Whether code named ``sm_86``, ``sm_90a``, ``sm_100f`` or ``compute_80`` (built by ``toolkit``, when known)
    runs on ``cc`` (by JIT for PTX), under the same rule as modules (no driver limit): for texts that name
    archs, such as error logs."""
    if arch.startswith("compute"):
        target = parse_ptx_target(arch)
        return compat.code_runs_on(compat.CodeKind.PTX, target.number, target.variant, cc, toolkit)[0] is not None
    sm = parse_sm_arch(arch)
    return compat.code_runs_on(compat.CodeKind.SASS, sm.number, sm.variant, cc, toolkit)[0] is not None


@dataclass(frozen=True)
class _IsaLimit:
    """The newest PTX ISA a driver's JIT compiles, and whether the table knows that for sure (a driver newer
    than every toolkit in the table may know a newer ISA than the table can say)."""

    isa: PtxIsaVersion | None
    certain: bool

    def blocks(self, isa: PtxIsaVersion | None) -> bool:
        """Whether PTX of ``isa`` is newer than the limit (certain or not)."""
        return self.isa is not None and isa is not None and isa > self.isa


def _isa_limit(driver: DriverVersion | None) -> _IsaLimit:
    if driver is None:
        return _IsaLimit(None, False)
    newest = max(tables.load_tables().min_driver["linux"].values())
    return _IsaLimit(tables.driver_max_ptx_isa(driver), not (driver >= newest))


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
    limit = _isa_limit(driver)
    for e in module.entries:
        if e.kind is EntryKind.SASS:
            how, _ = _entry_fit(e, cc, toolkit)
            if how == "sass-exact":
                exact.append(e)
            elif how == "sass-compatible":
                compatible.append(e)
        elif e.kind is EntryKind.PTX and jit_allowed and _entry_fit(e, cc, toolkit)[1] is None:
            if limit.certain and limit.blocks(e.ptx_isa):
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

    def to_dict(self) -> JsonDict:
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


def code_of(module: Module) -> tuple[FatbinEntry, ...]:
    """The module's code: its SASS and PTX entries (LTO-IR and other kinds run nowhere by themselves)."""
    return tuple(e for e in module.entries if e.kind in (EntryKind.SASS, EntryKind.PTX))


def arch_names(entries: Iterable[FatbinEntry], kind: EntryKind) -> tuple[str, ...]:
    """Distinct arch names of one kind, in arch order (sm_75 before sm_100; sm_90 before sm_90a)."""
    found = {(e.arch_number, e.variant.value, e.arch_name) for e in entries if e.kind is kind}
    return tuple(name for _n, _v, name in sorted(found))


def _signature(module: Module) -> tuple[FatbinEntry, ...]:
    """The module's code with file offsets erased: all a decision depends on (modules repeat a lot)."""
    return tuple(
        FatbinEntry(e.kind, e.arch_number, e.variant, e.code_version, e.flags, e.compression, 0, 0, 0, 0, 0, 0)
        for e in code_of(module)
    )


def canonical(module: Module, *, keep_loaded: bool = False) -> Module:
    """The module as a decision sees it (its code, offsets erased, relocatable or not): the cache key that
    thousands of a library's modules share.  ``keep_loaded`` keeps whether the library loads it itself
    (the roles treat those apart)."""
    section = "__nv_relfatbin" if module.relocatable else None
    if keep_loaded:
        return Module(0, 0, section, _signature(module), module.loaded)
    return Module(0, 0, section, _signature(module))


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
    options = JudgeOptions(driver=driver, jit_allowed=jit_allowed, gating=gating)
    v = decide(canonical(module), gpu.compute_capability, options, toolkit)
    return ModuleVerdict(index, module.section, v.status, v.sass, v.ptx, v.chosen, v.reasons, v.needs_ptx_isa)


def decide(
    module: Module, cc: ComputeCapability, options: JudgeOptions = DEFAULT_OPTIONS, toolkit: CudaVersion | None = None
) -> ModuleVerdict:
    """Decide a canonical module (:func:`canonical`) on ``cc``, under the compatibility rule of ``toolkit`` (the
    one that built it, when known).  ``options.gating=False`` when every kernel is always used (a .pt2 model's
    cubins), so code built only for other GPUs' a/f targets is a failure, not a gated module."""
    return _decide(module, cc, options.driver, options.jit_allowed, options.gating, toolkit)


@functools.lru_cache(maxsize=65536)
def _decide(
    module: Module,
    cc: ComputeCapability,
    driver: DriverVersion | None,
    jit_allowed: bool,
    gating: bool,
    toolkit: CudaVersion | None,
) -> ModuleVerdict:
    """:func:`decide`, cached on what the decision depends on (not on the options that only packages read)."""
    code = code_of(module)
    sass = arch_names(code, EntryKind.SASS)
    ptx = arch_names(code, EntryKind.PTX)
    if module.relocatable:
        r = reason("relocatable-only", "module is in __nv_relfatbin (device-link input), never loaded")
        return ModuleVerdict(0, module.section, Status.NONE, sass, ptx, None, (r,))
    if not code:
        r = reason("no-device-code", "module holds no SASS or PTX (e.g. LTO-IR only)")
        return ModuleVerdict(0, module.section, Status.NONE, sass, ptx, None, (r,))
    gpu = Gpu.of(cc)
    best = next(iter_compatible_code(module, gpu, driver=driver, jit_allowed=jit_allowed, toolkit=toolkit), None)
    if best is not None:
        return _runs(module, best, cc, driver, sass, ptx)
    why, blocked = _why_not(code, cc, driver, jit_allowed, toolkit)
    if gating and all(e.variant is not ArchVariant.NONE for e in code):
        archs = ", ".join(sass + ptx)
        r = reason("built-only-for-other-gpus", f"module built only for {archs}: used on those GPUs, not on {cc}")
        return ModuleVerdict(0, module.section, Status.GATED, sass, ptx, None, (r, *why))
    # The error the runtime raises (fatbin_spec.md §E.6): 222 when a compatible PTX exists but its ISA is too
    # new for the driver, 223 when only JIT could help and it is disabled, else 209.
    decisive = next((r for r in why if r.code in ("ptx-isa-too-new-for-driver", "jit-disabled")), None)
    summary = decisive or reason(
        "no-compatible-code", f"no code for {cc}: module has {', '.join(sass + ptx)} (no kernel image, error 209)"
    )
    needs = min(blocked) if blocked and jit_allowed else None
    return ModuleVerdict(0, module.section, Status.FAILS, sass, ptx, None, _dedupe((summary, *why)), needs)


def _runs(
    module: Module,
    best: CodeChoice,
    cc: ComputeCapability,
    driver: DriverVersion | None,
    sass: tuple[str, ...],
    ptx: tuple[str, ...],
) -> ModuleVerdict:
    """The verdict of a module with usable code: native, or jit (noting a PTX ISA the table cannot confirm)."""
    name = best.entry.arch_name
    if best.how != "ptx-jit":
        return ModuleVerdict(
            0, module.section, Status.NATIVE, sass, ptx, name, (reason(best.how, f"{name} runs on {cc}"),)
        )
    r = reason(
        "ptx-jit",
        f"no cubin for {cc}: the driver JIT-compiles {name} PTX on first use; kernels "
        f"that check __CUDA_ARCH__ take the sm_{best.entry.arch_number} path",
    )
    reasons: tuple[Reason, ...] = (r,)
    limit = _isa_limit(driver)
    isa = best.entry.ptx_isa
    if limit.blocks(isa) and not limit.certain:
        reasons += (reason("ptx-isa-unverified", f"PTX ISA {isa}: driver {driver} is newer than the table's toolkits"),)
    return ModuleVerdict(0, module.section, Status.JIT, sass, ptx, name, reasons)


def _why_not(
    code: Sequence[FatbinEntry],
    cc: ComputeCapability,
    driver: DriverVersion | None,
    jit_allowed: bool,
    toolkit: CudaVersion | None,
) -> tuple[list[Reason], list[PtxIsaVersion]]:
    """Why no entry of a module without usable code runs on ``cc``, and the PTX ISAs the driver's JIT refused."""
    why: list[Reason] = []
    blocked: list[PtxIsaVersion] = []
    for e in code:
        bad = _entry_fit(e, cc, toolkit)[1]
        if bad is not None:
            why.append(bad)
        elif e.kind is EntryKind.SASS:
            continue
        elif not jit_allowed:
            why.append(reason("jit-disabled", f"{e.arch_name} PTX would JIT, but PTX JIT is disabled"))
        else:
            if e.ptx_isa is not None:
                blocked.append(e.ptx_isa)
            limit = _isa_limit(driver).isa
            why.append(
                reason(
                    "ptx-isa-too-new-for-driver",
                    f"{e.arch_name} PTX has ISA {e.ptx_isa}; driver {driver} JIT supports up to {limit}",
                )
            )
    return why, blocked


def _dedupe(reasons: Sequence[Reason]) -> tuple[Reason, ...]:
    return tuple(dict.fromkeys(reasons))


def effective(v: ModuleVerdict, d: RoleDecision | None) -> tuple[Status, Reason]:
    """A module's status and first reason, given its arch list's verdict and its role decision."""
    if d is None or d.reason.code == "no-compatible-code":  # no role, or nothing in the file serves
        return v.status, v.reasons[0]
    return d.role.status, d.reason
