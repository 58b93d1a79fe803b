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
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from cudafit.audit.spec import Requirement
from cudafit.binary.facts import BinaryFacts, EntryKind, FileFormat, Module
from cudafit.model import ArchVariant, ComputeCapability

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

#: Files a library loads itself, one per arch: judged as pools.
_LOADED_FORMATS = (FileFormat.CUBIN, FileFormat.FATBIN, FileFormat.PTX)
_ARCH_DIR = re.compile(r"^(?:sm|compute|arch)?[_-]?\d{2,3}[af]?$", re.I)


@dataclass(frozen=True)
class Policy:
    """What an artifact must cover, and which module roles may lack code."""

    requirements: tuple[Requirement, ...]
    specs: tuple[str, ...] = ()
    allow_specialised: bool = False
    allow_jit: bool = False
    torch: Any = None  # audit.torch.TorchBuild
    config: str | None = None  # the pyproject.toml the policy came from


@dataclass(frozen=True)
class Gap:
    """Modules of one member that do not meet a requirement on one compute capability, grouped by archs.

    ``kind``: ``hole`` (no code, launched here), ``jit-only`` (only PTX JIT for a SASS requirement),
    ``no-ptx``, ``specialised``/``gated`` (code for other GPUs; ``allowed`` by the policy or not),
    ``no-code`` (no file of a pool serves it), ``no-device-code`` (the member has none at all).
    """

    kind: str
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
    def status(self) -> str:
        """``fail`` when a gap is not allowed; ``allowed`` when every gap is; else ``pass``."""
        if any(not g.allowed for g in self.gaps):
            return "fail"
        return "allowed" if self.gaps else "pass"


@dataclass(frozen=True)
class MemberResult:
    """One file (or wheel member), or one pool of library-loaded files, and its checks."""

    path: str
    kind: str  # "file" | "pool"
    files: int
    modules: int
    sass: tuple[str, ...]
    ptx: tuple[str, ...]
    checks: tuple[Check, ...]
    error: str | None = None

    @property
    def status(self) -> str:
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
    def status(self) -> str:
        """``fail`` when a member fails; ``error`` when one could not be read (or there is none); else ``pass``."""
        return _overall(m.status for m in self.members)


@dataclass(frozen=True)
class AuditResult:
    """Everything the renderers need."""

    policy: Policy
    targets: tuple[TargetResult, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def status(self) -> str:
        """``fail`` beats ``error`` beats ``pass`` (no target at all: ``error``)."""
        return _overall(t.status for t in self.targets)

    @property
    def exit_code(self) -> int:
        """0 pass, 1 fail, 3 could not analyse (an unreadable member and nothing failed)."""
        return {"pass": 0, "fail": 1}.get(self.status, 3)


# -- helpers -------------------------------------------------------------------------------------


def _overall(statuses: Iterable[str]) -> str:
    """``fail`` beats ``error`` beats ``pass``; nothing at all is ``error`` (nothing was analysed)."""
    found = set(statuses)
    if "fail" in found:
        return "fail"
    return "error" if "error" in found or not found else "pass"


def _code(m: Module) -> list[Any]:
    return [e for e in m.entries if e.kind in (EntryKind.SASS, EntryKind.PTX)]


def _names(entries: Iterable[Any], kind: EntryKind) -> tuple[str, ...]:
    found = {(e.arch_number, e.variant.value, e.arch_name) for e in entries if e.kind is kind}
    return tuple(name for _n, _v, name in sorted(found))


def _archs(m: Module) -> str:
    code = _code(m)
    return ", ".join(_names(code, EntryKind.SASS) + _names(code, EntryKind.PTX))


def _gpu(cc: ComputeCapability) -> Any:
    from cudafit.model import Gpu

    return Gpu(str(cc), cc)


def _has_ptx_for(module: Module, cc: ComputeCapability, variant: str) -> bool:
    """PTX the driver JITs for ``cc``; portable (plain ``compute_XY``) unless the requirement has a variant."""
    from cudafit.rules.engine import iter_compatible_code

    return any(
        c.how == "ptx-jit" and (variant or c.entry.variant is ArchVariant.NONE)
        for c in iter_compatible_code(module, _gpu(cc))
    )


def _is_stub(module: Module, names: Any) -> bool:
    """A small module whose cubin shows no kernels (registration/device-link stubs need no PTX)."""
    from cudafit.rules.roles import STUB_MAX_BYTES

    if names is None or sum(e.payload_size for e in module.entries) > STUB_MAX_BYTES:
        return False
    return bool(names(module) == ())


class _Groups:
    """Gaps of one check, grouped by (kind, cc, archs, reason)."""

    def __init__(self) -> None:
        self.groups: dict[tuple[str, ComputeCapability, str, str], list[Any]] = {}

    def add(self, kind: str, cc: ComputeCapability, archs: str, reason: str, kernels: Sequence[str] = ()) -> None:
        g = self.groups.setdefault((kind, cc, archs, reason), [0, []])
        g[0] += 1
        if kernels and len(g[1]) < 20:
            g[1].extend(k for k in kernels if k not in g[1])

    def gaps(self, req: Requirement, policy: Policy) -> tuple[Gap, ...]:
        out = []
        for (kind, cc, archs, reason), (n, kernels) in self.groups.items():
            allowed = kind in ("specialised", "gated") and policy.allow_specialised
            pool = reason == "library-loaded-code"
            text = _message("pool-no-ptx" if pool and kind == "no-ptx" else kind, cc, n, archs, req)
            out.append(Gap(kind, cc, n, archs, reason, text, allowed, tuple(kernels)))
        order = {"hole": 0, "no-code": 0, "no-device-code": 0, "no-ptx": 1, "jit-only": 2, "specialised": 3}
        return tuple(sorted(out, key=lambda g: (order.get(g.kind, 4), g.cc, -g.modules)))


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


def _audit_file(facts: BinaryFacts, policy: Policy) -> MemberResult:
    """Every loadable module of one file (archive members included) against every requirement."""
    from cudafit.rules.engine import PreparedFile, Status
    from cudafit.targets.kernels import KernelNameSource

    source = KernelNameSource(facts)
    try:
        prepared = PreparedFile(facts, source)
        loadable = [pos for pos, (_p, _i, m) in enumerate(prepared.registered) if not m.relocatable and _code(m)]
        code = [e for _p, _i, m in prepared.registered if not m.relocatable for e in _code(m)]
        sass, ptx = _names(code, EntryKind.SASS), _names(code, EntryKind.PTX)
        if not loadable:
            return MemberResult(facts.path, "file", 1, 0, sass, ptx, (), facts.error)
        by_cc: dict[ComputeCapability, tuple[list[Any], dict[int, Any]]] = {}

        def statuses(cc: ComputeCapability) -> tuple[list[Any], dict[int, Any]]:
            if cc not in by_cc:
                by_cc[cc] = prepared.module_statuses(cc, None, True, True)
            return by_cc[cc]

        archs_of: dict[int, str] = {}
        canon_of: dict[int, Module] = {}
        for canon, positions in prepared.groups.items():
            text = _archs(canon)
            for pos in positions:
                archs_of[pos] = text
                canon_of[pos] = canon
        checks = []
        for req in policy.requirements:
            groups = _Groups()
            for cc in req.ccs:
                status, decisions = statuses(cc)
                # A file with no code at all for cc fails there whatever its modules are for (engine: "fails").
                serving = any(status[pos] in (Status.NATIVE, Status.JIT) for pos in loadable)
                ptx_ok: dict[Module, bool] = {}
                for pos in loadable:
                    st = status[pos]
                    d = decisions.get(pos)
                    kernels = tuple(d.kernels or ()) if d is not None else ()
                    if st is Status.KERNEL_LESS:
                        continue
                    if st is Status.GATED and not serving:
                        groups.add("hole", cc, archs_of[pos], "built-only-for-other-gpus", kernels)
                        continue
                    if st in (Status.SPECIALISED, Status.GATED):
                        reason = d.reason.code if d is not None else "built-only-for-other-gpus"
                        groups.add(st.value, cc, archs_of[pos], reason, kernels)
                        continue
                    if req.kind == "sass":
                        if st is Status.JIT and not policy.allow_jit:
                            groups.add("jit-only", cc, archs_of[pos], "ptx-jit")
                        elif st is Status.FAILS:
                            reason = d.reason.code if d is not None else "no-compatible-code"
                            groups.add("hole", cc, archs_of[pos], reason, kernels)
                        continue
                    canon = canon_of[pos]
                    if canon not in ptx_ok:
                        ptx_ok[canon] = _has_ptx_for(canon, cc, req.variant)
                    if not ptx_ok[canon] and not _is_stub(prepared.registered[pos][2], source):
                        groups.add("no-ptx", cc, archs_of[pos], "no-compatible-code")
            checks.append(Check(req, len(loadable), groups.gaps(req, policy)))
        return MemberResult(facts.path, "file", 1, len(loadable), sass, ptx, tuple(checks), facts.error)
    finally:
        source.close()


def _pool_key(path: str) -> str:
    """The directory of a library-loaded file, arch-named directories (``sm_90``, ``100a``) left out."""
    outer, bang, member = path.rpartition("!")
    inner = member if bang else path
    parts = [p for p in inner.replace("\\", "/").split("/")[:-1] if not _ARCH_DIR.match(p)]
    return (outer + "!" if bang else "") + "/".join(parts)


def _audit_pool(key: str, files: Sequence[BinaryFacts], policy: Policy) -> MemberResult:
    """Files a library loads itself, judged together: a requirement is met when one of them serves it."""
    from cudafit.rules.engine import Status, evaluate_module

    modules = [m for f in files for m in f.modules if _code(m)]
    distinct: dict[tuple[tuple[EntryKind, int, ArchVariant], ...], Module] = {}
    for m in modules:
        distinct.setdefault(tuple((e.kind, e.arch_number, e.variant) for e in _code(m)), m)
    code = [e for m in distinct.values() for e in _code(m)]
    sass, ptx = _names(code, EntryKind.SASS), _names(code, EntryKind.PTX)
    archs = ", ".join(sass + ptx)
    checks = []
    for req in policy.requirements:
        groups = _Groups()
        for cc in req.ccs:
            if req.kind == "ptx":
                if not any(_has_ptx_for(m, cc, req.variant) for m in distinct.values()):
                    groups.groups[("no-ptx", cc, archs, "library-loaded-code")] = [len(files), []]
                continue
            found = {evaluate_module(m, _gpu(cc), gating=False).status for m in distinct.values()}
            if Status.NATIVE in found or (Status.JIT in found and policy.allow_jit):
                continue
            kind = "jit-only" if Status.JIT in found else "no-code"
            groups.groups[(kind, cc, archs, "library-loaded-code")] = [len(files), []]
        checks.append(Check(req, len(modules), groups.gaps(req, policy)))
    errors = [f"{f.path}: {f.error}" for f in files if f.error]
    error = "; ".join(errors[:3]) + (f" (+{len(errors) - 3} more)" if len(errors) > 3 else "") if errors else None
    where = files[0].path if len(files) == 1 else (key or ".")
    return MemberResult(where, "pool", len(files), len(modules), sass, ptx, tuple(checks), error)


def iter_members(facts: Sequence[BinaryFacts], policy: Policy) -> Iterator[MemberResult]:
    """Members of one target: files one by one, library-loaded files (bare cubins...) in pools."""
    pools: dict[str, list[BinaryFacts]] = {}
    for f in facts:
        if f.format in _LOADED_FORMATS:
            pools.setdefault(_pool_key(f.path), []).append(f)
            continue
        if f.error and not f.modules:
            yield MemberResult(f.path, "file", 1, 0, (), (), (), f.error)
            continue
        if f.has_device_code:
            yield _audit_file(f, policy)
    for key, files in pools.items():
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
            for e in _code(m)
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


def audit_items(spec: str, items: Iterable[Any], policy: Policy) -> TargetResult:
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
