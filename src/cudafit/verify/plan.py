"""What ``verify`` asks the driver, and what each answer should be: the prediction side, no driver involved.

For every module the scan located (a fatbin of ``.nv_fatbin``, a fatbin a library embeds to load itself, a
bare cubin or PTX file, a ``.pt2`` cubin) and every GPU, the module's predicted status and reason code come
from the verdict engine, and the driver's answer they imply from the module's *code alone*
(:func:`cudafit.rules.engine.evaluate_module` without module roles, i.e. the decision procedure of
docs/rules.md):

* a usable cubin, or PTX the driver can JIT -> ``CUDA_SUCCESS``;
* PTX that would serve but whose ISA is newer than the driver's JIT -> ``CUDA_ERROR_UNSUPPORTED_PTX_VERSION``;
* PTX only, with JIT disabled (``CUDA_DISABLE_PTX_JIT``) -> ``CUDA_ERROR_JIT_COMPILATION_DISABLED``;
* nothing for the GPU -> ``CUDA_ERROR_NO_BINARY_FOR_GPU``.  This covers holes, gated, specialised and
  kernel-less modules without code: the driver refuses to load them, which checks the binary facts; the
  role (whether the library ever launches them here) is a separate claim the driver cannot referee.

Modules the driver never loads at run time are not loaded: relocatable ``__nv_relfatbin`` fatbins
(device-link input) and modules without SASS or PTX (LTO-IR only).  Modules whose only usable code for a
GPU is PTX are loaded only with ``--jit``: JIT-compiling a large library's PTX can take minutes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from cudafit.binary.facts import BinaryFacts, EntryKind, FatbinEntry, Module
from cudafit.model import DriverVersion
from cudafit.rules.status import Status
from cudafit.verify.cuda_errors import result_name

if TYPE_CHECKING:
    from cudafit.analysis import Analysis
    from cudafit.rules.engine import ModuleVerdict

__all__ = ["SKIP_MEANINGS", "Expectation", "ModuleLoad", "expectation_for", "iter_module_loads", "module_kind"]

#: The CUresult a module's code alone implies when the driver refuses it, by the decisive reason code;
#: any other refusal is CUDA_ERROR_NO_BINARY_FOR_GPU (209).
_REFUSALS = {"ptx-isa-too-new-for-driver": result_name(222), "jit-disabled": result_name(223)}

#: How a module's bytes are handed to the driver: a fatbin, a bare cubin, or PTX text (NUL-terminated).
ModuleKind = Literal["fatbin", "cubin", "ptx"]

#: Why a module is not loaded on a GPU (the ``skip`` of an :class:`Expectation`).
Skip = Literal["relocatable", "no-loadable-code", "ptx-jit-only"]
SKIP_MEANINGS: dict[str, str] = {
    "relocatable": "__nv_relfatbin: device-link input, never loaded at run time",
    "no-loadable-code": "no SASS or PTX the driver could load (LTO-IR only, or no entries)",
    "ptx-jit-only": "only PTX serves this GPU: not JIT-compiled without --jit",
}


@dataclass(frozen=True)
class Expectation:
    """One module on one GPU: the predicted status and reason code, and the driver answer they imply."""

    status: Status  # native | jit | fails | gated | specialised | kernel-less | none
    reason: str  # the reason code (docs/rules.md)
    expected: str | None  # the CUresult name the driver should return; None when the module is not loaded
    load: bool
    skip: Skip | None = None  # why the module is not loaded
    serves: Literal["sass", "ptx"] | None = None  # the code the driver should use (ptx: a JIT); None: nothing


@dataclass(frozen=True)
class ModuleLoad:
    """One module as verify loads it: where its bytes are, its code, and one :class:`Expectation` per GPU."""

    package: str
    version: str | None
    path: str  # the file (or archive member) holding the module
    index: int  # position among the modules of that file or member
    section: str | None
    kind: ModuleKind
    source: str  # the scanned item whose byte stream ``offset`` counts in
    origin: str | None  # where ``source``'s bytes really are, when ``source`` is a display name
    offset: int
    size: int
    sass: tuple[str, ...]
    ptx: tuple[str, ...]
    expectations: tuple[Expectation, ...]

    @property
    def archs(self) -> str:
        """``sm_75, sm_80, compute_80``: the module's code, for reports."""
        return ", ".join(self.sass + self.ptx) or "-"


def module_kind(module: Module) -> ModuleKind:
    """``cubin``/``ptx`` for a bare file (its one entry is the whole file), else ``fatbin``."""
    if len(module.entries) == 1 and module.entries[0].header_size == 0:
        return "ptx" if module.entries[0].kind is EntryKind.PTX else "cubin"
    return "fatbin"


def expectation_for(module: Module, role: ModuleVerdict | None, raw: ModuleVerdict, *, jit: bool) -> Expectation:
    """The expectation for ``module`` from its verdict with roles (``role``; ``None`` for library-loaded
    fatbins, which are judged as a pool, not one by one) and its verdict from code alone (``raw``:
    ``evaluate_module(..., gating=False)``)."""
    shown = role if role is not None else raw
    status = shown.status
    reason = shown.reasons[0].code if shown.reasons else ""
    if role is None and module.embedded and not module.loaded:
        # The library picks one of its embedded fatbins for the GPU (engine: the pool): one without code
        # for it is code for other GPUs, as `check` reports the pool, not a hole.
        reason = "library-loaded-code"
        if raw.status in (Status.FAILS, Status.GATED):
            status = Status.SPECIALISED
    if module.relocatable:
        return Expectation(status, reason, None, False, "relocatable")
    if raw.status is Status.NONE:
        return Expectation(status, reason, None, False, "no-loadable-code")
    if raw.status is Status.NATIVE:
        return Expectation(status, reason, result_name(0), True, serves="sass")
    if raw.status is Status.JIT:
        return Expectation(status, reason, result_name(0), jit, None if jit else "ptx-jit-only", serves="ptx")
    decisive = raw.reasons[0].code if raw.reasons else ""
    return Expectation(status, reason, _REFUSALS.get(decisive, result_name(209)), True)


def _iter_units(facts: BinaryFacts) -> Iterator[BinaryFacts]:
    if facts.modules:
        yield facts
    for member in facts.members:
        yield from _iter_units(member)


def iter_module_loads(
    analysis: Analysis,
    origins: Mapping[str, str | None],
    *,
    driver: DriverVersion | None,
    jit_allowed: bool,
    jit: bool,
) -> Iterator[ModuleLoad]:
    """Every module of the analysed packages, with its expectation on each of ``analysis.gpus``.

    ``origins`` maps a scanned item's path to where its bytes are when that path is only a display
    name (a downloaded wheel); files the verdicts leave out (another per-CUDA-version copy) are skipped.
    """
    from cudafit.rules.engine import evaluate_module

    gpus = analysis.gpus
    for p in analysis.packages:
        if not p.verdicts:
            continue
        roles: list[dict[tuple[str, int], ModuleVerdict]] = []
        for v in p.verdicts:
            roles.append({(mv.path or fv.path, mv.index): mv for fv in v.files for mv in fv.modules if mv.index >= 0})
        judged = {fv.path for fv in p.verdicts[0].files}
        for facts in p.files:
            if facts.path not in judged:
                continue
            for unit in _iter_units(facts):
                for i, m in enumerate(unit.modules):
                    expectations = []
                    for gi, gpu in enumerate(gpus):
                        raw = evaluate_module(m, gpu, driver=driver, jit_allowed=jit_allowed, gating=False)
                        role = None if m.embedded and not m.loaded else roles[gi].get((unit.path, i))
                        expectations.append(expectation_for(m, role, raw, jit=jit))
                    code = [e for e in m.entries if e.kind in (EntryKind.SASS, EntryKind.PTX)]
                    yield ModuleLoad(
                        package=p.name,
                        version=p.version,
                        path=unit.path,
                        index=i,
                        section=m.section,
                        kind=module_kind(m),
                        source=facts.path,
                        origin=origins.get(facts.path),
                        offset=m.offset,
                        size=m.size,
                        sass=_names(code, EntryKind.SASS),
                        ptx=_names(code, EntryKind.PTX),
                        expectations=tuple(expectations),
                    )


def _names(entries: Sequence[FatbinEntry], kind: EntryKind) -> tuple[str, ...]:
    found = {(e.arch_number, e.variant.value, e.arch_name) for e in entries if e.kind is kind}
    return tuple(name for _n, _v, name in sorted(found))
