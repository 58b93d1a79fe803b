"""The audit: every module of every member against every required arch, with NVIDIA's rules.

Per member (a file, or a wheel member), per requirement, per compute capability it must serve:

* SASS requirements: each loadable module's status comes from the verdict engine
  (:meth:`cudafit.rules.engine.PreparedFile.statuses`, module roles included).  ``native`` meets
  it; ``jit`` (only PTX for that CC) does not, unless ``allow_jit``; ``gated`` and ``specialised``
  modules (code the library dispatches on other GPUs, docs/rules.md *Module roles*) are allowed
  only when the policy says so (``allow_specialised``); ``kernel-less`` modules launch nothing and
  need no code; holes never pass.
* PTX requirements: each module needs PTX the driver can JIT for the CC
  (:func:`cudafit.rules.engine.iter_compatible_code`), portable PTX (no ``a``/``f``) unless the
  requirement itself names a variant.  Kernel-less modules are exempt (registration stubs are
  decompressed to tell), specialised/gated ones as above.

Bare cubins, raw fatbins and PTX files (flashinfer-cubin's 15,970 cubins) are loaded by the library
itself (``cuModuleLoadData``), which picks the one built for the GPU: each is per-arch by nature.
They are judged in pools, one per directory (directories named after an arch, ``sm_90/``, are
merged): a pool meets a requirement when one of its files has usable code for it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from cudafit.audit.spec import Requirement
from cudafit.binary.facts import BinaryFacts, EntryKind, Module
from cudafit.model import ArchVariant, ComputeCapability, Gpu
from cudafit.rules.decide import arch_names, canonical, code_of, decide, iter_compatible_code
from cudafit.rules.options import JudgeOptions
from cudafit.rules.pools import AUDIT_POOLS, split_library_loaded
from cudafit.rules.prepared import ModuleStatuses, PreparedFile
from cudafit.rules.roles import STUB_MAX_BYTES, KernelNames
from cudafit.rules.status import Status

if TYPE_CHECKING:
    from cudafit.audit.torch import TorchBuild
    from cudafit.targets.interface import ScanItem

__all__ = [
    "AuditResult",
    "Check",
    "Fix",
    "Gap",
    "MemberResult",
    "Policy",
    "TargetResult",
    "audit_items",
    "iter_members",
]


#: What a gap is (:class:`Gap`); the JSON ``kind`` and the SARIF rule of a finding.
GapKind = Literal["hole", "jit-only", "no-ptx", "specialised", "gated", "no-code", "no-device-code"]
#: A check's, a member's, a target's or the audit's outcome (``allowed``: passes by the policy's allowances;
#: ``error``: could not be read, nothing failed).
Outcome = Literal["pass", "allowed", "fail", "error"]


@dataclass(frozen=True)
class Policy:
    """What an artifact must cover, and which module roles may lack code."""

    requirements: tuple[Requirement, ...]
    specs: tuple[str, ...] = ()
    allow_specialised: bool = False
    allow_jit: bool = False
    torch: TorchBuild | None = None
    config: str | None = None  # the pyproject.toml the policy came from


@dataclass(frozen=True)
class Gap:
    """Modules of one member that do not meet a requirement on one compute capability, grouped by archs.

    ``kind``: ``hole`` (no code, launched here), ``jit-only`` (only PTX JIT for a SASS requirement),
    ``no-ptx``, ``specialised``/``gated`` (code for other GPUs; ``allowed`` by the policy or not),
    ``no-code`` (no file of a pool serves it), ``no-device-code`` (the member has none at all).
    """

    kind: GapKind
    cc: ComputeCapability
    modules: int
    archs: str
    reason: str
    message: str
    allowed: bool = False
    kernels: tuple[str, ...] = ()


@dataclass(frozen=True)
class Check:
    """One requirement on one member: ``pass``, ``allowed`` (passes by the policy's allowances) or ``fail``."""

    requirement: Requirement
    modules: int
    gaps: tuple[Gap, ...]

    @property
    def status(self) -> Outcome:
        """``fail`` when a gap is not allowed; ``allowed`` when every gap is; else ``pass``."""
        if any(not g.allowed for g in self.gaps):
            return "fail"
        return "allowed" if self.gaps else "pass"


@dataclass(frozen=True)
class MemberResult:
    """One file (or wheel member), or one pool of library-loaded files, and its checks."""

    path: str
    kind: Literal["file", "pool"]
    files: int
    modules: int
    sass: tuple[str, ...]
    ptx: tuple[str, ...]
    checks: tuple[Check, ...]
    error: str | None = None

    @property
    def status(self) -> Outcome:
        """``fail``, ``error`` (unreadable, nothing failed), ``pass``."""
        if any(c.status == "fail" for c in self.checks):
            return "fail"
        return "error" if self.error else "pass"


@dataclass(frozen=True)
class Fix:
    """The arch list that meets the policy, in each build system's syntax, checked against the toolkit."""

    torch_cuda_arch_list: str
    cmake_cuda_architectures: str
    nvcc_flags: tuple[str, ...]
    toolkit: str
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class TargetResult:
    """One command-line target (a wheel, a directory's loose binaries, a file)."""

    spec: str
    name: str | None
    version: str | None
    members: tuple[MemberResult, ...]
    missing: tuple[Requirement, ...] = ()
    fix: Fix | None = None
    cuda_major: int | None = None
    notes: tuple[str, ...] = ()

    @property
    def status(self) -> Outcome:
        """``fail`` when a member fails; ``error`` when one could not be read (or there is none); else ``pass``."""
        return _overall(m.status for m in self.members)


@dataclass(frozen=True)
class AuditResult:
    """Everything the renderers need."""

    policy: Policy
    targets: tuple[TargetResult, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def status(self) -> Outcome:
        """``fail`` beats ``error`` beats ``pass`` (no target at all: ``error``)."""
        return _overall(t.status for t in self.targets)

    @property
    def exit_code(self) -> int:
        """0 pass, 1 fail, 3 could not analyse (an unreadable member and nothing failed)."""
        return {"pass": 0, "fail": 1}.get(self.status, 3)


# -- helpers -------------------------------------------------------------------------------------


def _overall(statuses: Iterable[Outcome]) -> Outcome:
    """``fail`` beats ``error`` beats ``pass``; nothing at all is ``error`` (nothing was analysed)."""
    found = set(statuses)
    if "fail" in found:
        return "fail"
    return "error" if "error" in found or not found else "pass"


def _archs(m: Module) -> str:
    code = code_of(m)
    return ", ".join(arch_names(code, EntryKind.SASS) + arch_names(code, EntryKind.PTX))


def _has_ptx_for(module: Module, cc: ComputeCapability, variant: str) -> bool:
    """PTX the driver JITs for ``cc``; portable (plain ``compute_XY``) unless the requirement has a variant."""
    return any(
        c.how == "ptx-jit" and (variant or c.entry.variant is ArchVariant.NONE)
        for c in iter_compatible_code(module, Gpu.of(cc))
    )


def _is_stub(module: Module, names: KernelNames | None) -> bool:
    """A small module whose cubin shows no kernels (registration/device-link stubs need no PTX)."""
    if names is None or sum(e.payload_size for e in module.entries) > STUB_MAX_BYTES:
        return False
    return bool(names(module) == ())


@dataclass
class _Row:
    """One group of gaps being collected: how many modules, and the first kernel names (at most 20)."""

    modules: int = 0
    kernels: list[str] = field(default_factory=list)


#: Gap kinds, most serious first (the order of a check's gaps).
_GAP_ORDER = {"hole": 0, "no-code": 0, "no-device-code": 0, "no-ptx": 1, "jit-only": 2, "specialised": 3}


class _Groups:
    """Gaps of one check, grouped by (kind, cc, archs, reason)."""

    def __init__(self) -> None:
        self.groups: dict[tuple[GapKind, ComputeCapability, str, str], _Row] = {}

    def add(self, kind: GapKind, cc: ComputeCapability, archs: str, reason: str, kernels: Sequence[str] = ()) -> None:
        g = self.groups.setdefault((kind, cc, archs, reason), _Row())
        g.modules += 1
        if kernels and len(g.kernels) < 20:
            g.kernels.extend(k for k in kernels if k not in g.kernels)

    def set(self, kind: GapKind, cc: ComputeCapability, archs: str, reason: str, modules: int) -> None:
        """One group of ``modules`` at once (a pool's files)."""
        self.groups[(kind, cc, archs, reason)] = _Row(modules)

    def gaps(self, req: Requirement, policy: Policy) -> tuple[Gap, ...]:
        out = []
        for (kind, cc, archs, reason), row in self.groups.items():
            allowed = kind in ("specialised", "gated") and policy.allow_specialised
            pool = reason == "library-loaded-code"
            text = _message("pool-no-ptx" if pool and kind == "no-ptx" else kind, cc, row.modules, archs, req)
            out.append(Gap(kind, cc, row.modules, archs, reason, text, allowed, tuple(row.kernels)))
        return tuple(sorted(out, key=lambda g: (_GAP_ORDER.get(g.kind, 4), g.cc, -g.modules)))


def _message(kind: str, cc: ComputeCapability, n: int, archs: str, req: Requirement) -> str:
    what = f"{n} module(s) ({archs})" if archs else f"{n} module(s)"
    sm = f"sm_{cc.arch_number}"
    if kind == "hole":
        return f"{what} have no code for {cc}: their kernels fail with 'no kernel image' (error 209) there"
    if kind == "jit-only":
        return f"{what} run on {cc} only by JIT-compiling PTX: no SASS that runs on {sm} (allow with --allow-jit)"
    if kind == "no-ptx":
        portable = "" if req.variant else "portable "
        return f"{what} have no {portable}PTX a {cc} GPU can JIT-compile ({req.label} asks for it)"
    if kind in ("specialised", "gated"):
        label = "specialised for other GPUs" if kind == "specialised" else "gated to other GPUs (a/f targets)"
        return f"{what} have no code for {cc}, {label} (--allow-specialised accepts them)"
    if kind == "no-device-code":
        return "no CUDA device code at all"
    if kind == "pool-no-ptx":
        return f"none of the {n} file(s) has portable PTX a {cc} GPU can JIT-compile ({archs})"
    return f"none of the {n} file(s) has code for {cc} ({archs})"


# -- members -------------------------------------------------------------------------------------


class _FileAudit:
    """One prepared file's loadable modules against the requirements: module statuses (roles included) are
    asked once per compute capability, whatever the number of requirements naming it."""

    def __init__(self, prepared: PreparedFile, loadable: Sequence[int], names: KernelNames | None) -> None:
        self.prepared = prepared
        self.loadable = loadable
        self.names = names
        self._by_cc: dict[ComputeCapability, ModuleStatuses] = {}
        self.archs_of: dict[int, str] = {}
        for canon, positions in prepared.groups.items():
            text = _archs(canon)
            for pos in positions:
                self.archs_of[pos] = text

    def statuses(self, cc: ComputeCapability) -> ModuleStatuses:
        if cc not in self._by_cc:
            self._by_cc[cc] = self.prepared.module_statuses(cc)
        return self._by_cc[cc]

    def check(self, req: Requirement, policy: Policy) -> Check:
        groups = _Groups()
        for cc in req.ccs:
            self._add_gaps(groups, req, policy.allow_jit, cc)
        return Check(req, len(self.loadable), groups.gaps(req, policy))

    def _add_gaps(self, groups: _Groups, req: Requirement, allow_jit: bool, cc: ComputeCapability) -> None:
        found = self.statuses(cc)
        # A file with no code at all for cc fails there whatever its modules are for (rules: "fails").
        serving = any(found.status[pos] in (Status.NATIVE, Status.JIT) for pos in self.loadable)
        ptx_ok: dict[Module, bool] = {}
        for pos in self.loadable:
            st = found.status[pos]
            d = found.decisions.get(pos)
            kernels = tuple(d.kernels or ()) if d is not None else ()
            archs = self.archs_of[pos]
            if st is Status.KERNEL_LESS:
                continue
            if st in (Status.SPECIALISED, Status.GATED):
                reason = d.reason.code if d is not None else "built-only-for-other-gpus"
                kind: GapKind = "specialised" if st is Status.SPECIALISED else "gated" if serving else "hole"
                groups.add(kind, cc, archs, reason, kernels)
            elif req.kind == "sass":
                if st is Status.JIT and not allow_jit:
                    groups.add("jit-only", cc, archs, "ptx-jit")
                elif st is Status.FAILS:
                    groups.add("hole", cc, archs, d.reason.code if d is not None else "no-compatible-code", kernels)
            else:
                canon = self.prepared.canon_at[pos]
                if canon not in ptx_ok:
                    ptx_ok[canon] = _has_ptx_for(canon, cc, req.variant)
                if not ptx_ok[canon] and not _is_stub(self.prepared.registered[pos].module, self.names):
                    groups.add("no-ptx", cc, archs, "no-compatible-code")


def _audit_file(facts: BinaryFacts, policy: Policy) -> MemberResult:
    """Every loadable module of one file (archive members included) against every requirement."""
    from cudafit.targets.kernels import KernelNameSource

    source = KernelNameSource(facts)
    try:
        prepared = PreparedFile(facts, source)
        code_at = [(pos, code_of(r.module)) for pos, r in enumerate(prepared.registered) if not r.module.relocatable]
        loadable = [pos for pos, code in code_at if code]
        code = [e for _pos, entries in code_at for e in entries]
        sass, ptx = arch_names(code, EntryKind.SASS), arch_names(code, EntryKind.PTX)
        if not loadable:
            return MemberResult(facts.path, "file", 1, 0, sass, ptx, (), facts.error)
        audit = _FileAudit(prepared, loadable, source)
        checks = tuple(audit.check(req, policy) for req in policy.requirements)
        return MemberResult(facts.path, "file", 1, len(loadable), sass, ptx, checks, facts.error)
    finally:
        source.close()


def _audit_pool(key: str, files: Sequence[BinaryFacts], policy: Policy) -> MemberResult:
    """Files a library loads itself, judged together: a requirement is met when one of them serves it."""
    modules = [m for f in files for m in f.modules if code_of(m)]
    distinct: dict[tuple[tuple[EntryKind, int, ArchVariant], ...], Module] = {}
    for m in modules:
        distinct.setdefault(tuple((e.kind, e.arch_number, e.variant) for e in code_of(m)), m)
    code = [e for m in distinct.values() for e in code_of(m)]
    sass, ptx = arch_names(code, EntryKind.SASS), arch_names(code, EntryKind.PTX)
    archs = ", ".join(sass + ptx)
    ungated = JudgeOptions(gating=False)  # the library loads the piece that fits: nothing is gated
    checks = []
    for req in policy.requirements:
        groups = _Groups()
        for cc in req.ccs:
            if req.kind == "ptx":
                if not any(_has_ptx_for(m, cc, req.variant) for m in distinct.values()):
                    groups.set("no-ptx", cc, archs, "library-loaded-code", len(files))
                continue
            found = {decide(canonical(m), cc, ungated).status for m in distinct.values()}
            if Status.NATIVE in found or (Status.JIT in found and policy.allow_jit):
                continue
            kind: GapKind = "jit-only" if Status.JIT in found else "no-code"
            groups.set(kind, cc, archs, "library-loaded-code", len(files))
        checks.append(Check(req, len(modules), groups.gaps(req, policy)))
    errors = [f"{f.path}: {f.error}" for f in files if f.error]
    error = "; ".join(errors[:3]) + (f" (+{len(errors) - 3} more)" if len(errors) > 3 else "") if errors else None
    where = files[0].path if len(files) == 1 else (key or ".")
    return MemberResult(where, "pool", len(files), len(modules), sass, ptx, tuple(checks), error)


def _same(facts: BinaryFacts) -> BinaryFacts:
    return facts


def iter_members(facts: Sequence[BinaryFacts], policy: Policy) -> Iterator[MemberResult]:
    """Members of one target: files one by one, library-loaded files (bare cubins...) in pools
    (:data:`cudafit.rules.pools.AUDIT_POOLS`: one per directory)."""
    split = split_library_loaded(facts, _same, AUDIT_POOLS)
    for f in split.files:
        if f.error and not f.modules:
            yield MemberResult(f.path, "file", 1, 0, (), (), (), f.error)
            continue
        if f.has_device_code:
            yield _audit_file(f, policy)
    for key, files in split.pools:
        yield _audit_pool(key, files, policy)


# -- targets -------------------------------------------------------------------------------------


def _fix(facts: Sequence[BinaryFacts], policy: Policy, missing: Sequence[Requirement]) -> tuple[Fix, int | None]:
    """The policy's arch list in torch/CMake/nvcc syntax, for the toolkit major the target was built with."""
    from cudafit.fixes import cuda_major_of
    from cudafit.model import CudaVersion
    from cudafit.plan import ArchTarget, format_arch_targets, toolkit_targets_for, uncoverable_problem
    from cudafit.rules import tables

    major = cuda_major_of(facts)
    toolkits = sorted(tables.load_tables().targets)
    same = [k for k in toolkits if major is None or k.major == major.major]
    cuda: CudaVersion = (same or toolkits)[-1]
    label, available = toolkit_targets_for(cuda)
    if major is not None:
        label = f"CUDA {major.major}.x (this build's toolkit, from {major.evidence}; targets of {cuda})"
    wanted: dict[tuple[ComputeCapability, str], list[bool]] = {}
    for r in policy.requirements:
        kinds = wanted.setdefault((r.cc, r.variant), [False, False])
        kinds[0 if r.kind == "sass" else 1] = True
    chosen: list[ArchTarget] = []
    problems: list[str] = []
    for (cc, variant), (real, virtual) in sorted(wanted.items()):
        if f"sm_{cc.arch_number}{variant}" not in available:
            who = ", ".join(r.label for r in policy.requirements if r.cc == cc and r.variant == variant)
            problems.append(uncoverable_problem(cc, who, label))
            continue
        chosen.append(ArchTarget(cc, variant, real=real, virtual=virtual))
    torch_list, cmake_list, flags = format_arch_targets(chosen)
    have = sorted(
        {
            e.arch_number
            for f in facts
            for u in (f, *f.members)
            for m in u.runtime_modules
            for e in code_of(m)
            if e.kind is EntryKind.SASS and e.variant is ArchVariant.NONE and e.arch_number >= 10
        }
    )
    extra = [n for n in have if ComputeCapability.from_arch_number(n) not in {t.cc for t in chosen}]
    notes = [
        "modules built with their own arch list (per-file -gencode flags, a CMake target with its own "
        "CUDA_ARCHITECTURES) need these archs too"
    ]
    if extra:
        notes.append(
            "this build also has " + ", ".join(f"sm_{n}" for n in extra) + ": add them to the list to keep native "
            "code for those GPUs"
        )
    if missing:
        notes.insert(0, "adds " + ", ".join(r.label for r in missing))
    fix = Fix(torch_list, cmake_list, flags, label, tuple(problems), tuple(notes))
    return fix, (major.major if major is not None else None)


def audit_items(spec: str, items: Iterable[ScanItem], policy: Policy) -> TargetResult:
    """One target's scan items (``targets`` ScanItems) audited against ``policy``."""
    facts: list[BinaryFacts] = []
    name = version = None
    for item in items:
        facts.append(item.facts)
        name = name or item.package
        version = version or item.version
    if name is None and spec.endswith(".whl"):
        from cudafit.targets.wheel import wheel_name_version

        name, version = wheel_name_version(spec)
    members = list(iter_members(facts, policy))
    notes: list[str] = []
    readable = [f for f in facts if not (f.error and not f.modules)]
    if not any(f.has_device_code for f in readable) and not any(m.error for m in members):
        what = "no CUDA device code at all"
        checks = tuple(
            Check(r, 0, (Gap("no-device-code", r.cc, 0, "", "no-device-code", what),)) for r in policy.requirements
        )
        members.append(MemberResult(spec, "file", len(facts), 0, (), (), checks))
    for f in facts:
        if f.embedded_sections and not f.embedded_modules:
            notes.append(
                f"{f.path} also embeds fatbins it loads itself ({', '.join(f.embedded_sections)}): not audited"
            )
    failed = {c.requirement.key for m in members for c in m.checks if c.status == "fail"}
    missing = tuple(r for r in policy.requirements if r.key in failed)
    fix = major = None
    if missing:
        fix, major = _fix(readable, policy, missing)
    return TargetResult(spec, name, version, tuple(members), missing, fix, major, tuple(notes))


def display_path(path: str) -> str:
    """A path relative to the working directory when it is below it (reports, SARIF URIs)."""
    outer, bang, member = path.partition("!")
    try:
        rel = os.path.relpath(outer)
    except ValueError:
        rel = outer
    if not rel.startswith(".."):
        outer = rel
    return outer + bang + member
