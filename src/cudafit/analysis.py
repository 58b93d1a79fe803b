"""The join: scan items (targets) x GPUs (probe or declared) -> per-package verdicts and fixes.

Like auditwheel's ``analyze_wheel_abi``, this module only combines: binary facts come from
``targets``/``binary``, decisions from ``rules.engine``, and the result is a frozen object that
every renderer (text, JSON, Markdown, HTML) reads without deciding anything itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cudafit.binary.facts import BinaryFacts, EntryKind
from cudafit.model import ComputeCapability, DriverVersion

__all__ = ["Analysis", "PackageResult", "analyze", "worst_status"]

#: Severity order used to summarise one package over several GPUs (worst wins).
_SEVERITY = {"none": 0, "native": 1, "jit": 2, "partial": 3, "fails": 4}


def worst_status(statuses: Iterable[str]) -> str:
    """The most serious status of several (``none`` when there is nothing)."""
    worst = "none"
    for s in statuses:
        if _SEVERITY.get(s, 0) > _SEVERITY[worst]:
            worst = s
    return worst


@dataclass(frozen=True)
class PackageResult:
    """One package (or directory of loose binaries) and its verdict on every GPU."""

    name: str
    version: str | None
    path: str
    files: tuple[BinaryFacts, ...]
    verdicts: tuple[Any, ...]  # rules.engine.PackageVerdict, one per GPU (same order as Analysis.gpus)
    coverage: dict[str, list[str]]
    runtime_compiled: str | None = None
    #: Compilers the package runs at run time (rules.compilers.RuntimeCompiler) and, per GPU, what its
    #: run-time code does there (RuntimeJudgement or None): its own role beside the shipped modules.
    compilers: tuple[Any, ...] = ()
    runtime: tuple[Any, ...] = ()
    unreadable: tuple[BinaryFacts, ...] = ()
    distribution: bool = True  # False: loose binaries grouped by directory
    inactive: tuple[tuple[str, str], ...] = ()  # (path, why it never loads here), left out of the verdicts
    #: (path, what was assumed) of every file read only in part (BinaryFacts.fallbacks): the package's
    #: verdicts rest on those assumptions, and every report says so.
    fallbacks: tuple[tuple[str, tuple[str, ...]], ...] = ()
    python_modules: int = 0  # Python modules the distribution ships: code that runs on any GPU

    @property
    def status(self) -> str:
        """Worst status over the GPUs; ``none`` when the package holds no device code."""
        if not self.verdicts:
            return "none" if not self.has_device_code else "unknown"
        return worst_status(_status_value(v) for v in self.verdicts)

    @property
    def has_device_code(self) -> bool:
        """Whether any file of the package embeds device code."""
        return any(f.has_device_code for f in self.files)


def _status_value(verdict: Any) -> str:
    status = verdict.status
    return str(getattr(status, "value", status))


@dataclass(frozen=True)
class Analysis:
    """Everything ``check`` and ``doctor`` render."""

    gpus: tuple[Any, ...]  # rules.engine.Gpu
    packages: tuple[PackageResult, ...]
    driver: DriverVersion | None
    jit_allowed: bool
    notes: tuple[str, ...] = field(default=())
    toolchains: tuple[Any, ...] = ()  # probe.Toolchain: compilers packages use at run time

    @property
    def failing(self) -> tuple[PackageResult, ...]:
        """Packages with code that fails on at least one GPU (``fails`` or ``partial``)."""
        return tuple(p for p in self.packages if p.status in ("fails", "partial"))


def _coverage(
    files: Sequence[BinaryFacts],
    prepared: Sequence[Any],
    ccs: Sequence[ComputeCapability],
    engine: Any,
    gating: bool,
    pool_loose: bool = True,
    python_modules: int = 0,
) -> dict[str, list[str]]:
    """Which compute capabilities the package's binaries serve natively or by JIT (no GPU needed).

    Each CC is judged like a GPU (module roles included), so the columns agree with the verdicts.
    """
    sass: set[str] = set()
    ptx: set[str] = set()
    for f in files:
        for fact in (f, *f.members):
            for m in fact.runtime_modules:
                for e in m.entries:
                    if e.kind is EntryKind.SASS:
                        sass.add(e.arch_name)
                    elif e.kind is EntryKind.PTX:
                        ptx.add(e.arch_name)
    native: list[str] = []
    jit: list[str] = []
    partial: list[str] = []
    for cc in ccs:
        st, _counts = engine.package_status(
            prepared, cc, gating=gating, pool_loose=pool_loose, python_modules=python_modules
        )
        status = st.value
        if status == "native":
            native.append(str(cc))
        elif status == "jit":
            jit.append(str(cc))
        elif status == "partial":
            partial.append(str(cc))
    from cudafit.report.scan import arch_sort_key

    return {
        "sass": sorted(sass, key=arch_sort_key),
        "ptx": sorted(ptx, key=arch_sort_key),
        "native": native,
        "jit": jit,
        "partial": partial,
    }


def analyze(
    items: Iterable[Any],
    gpus: Sequence[Any],
    *,
    driver: DriverVersion | None = None,
    jit_allowed: bool = True,
    include_coverage: bool = True,
    kernels: bool = False,
    drivers: Sequence[DriverVersion | None] | None = None,
    environ: dict[str, str] | None = None,
    sites: Sequence[str] = (),
) -> Analysis:
    """Group scan items by package and evaluate each package on each GPU.

    ``items`` are ``targets`` scan items (package, version, path, facts, runtime_compiled);
    files outside any distribution are grouped by their directory.  Kernel names are read (one
    cubin per module, remembered in the scan cache) only for modules whose role is in question,
    and with ``kernels`` for every module without code for a GPU (``--kernels``).  ``drivers``
    gives each GPU its own driver (same order as ``gpus``; default: ``driver`` for all): a fleet
    judges many (GPU, driver) pairs with one preparation of the files.  ``environ`` and ``sites``
    (``doctor``) wire the run-time compilers as this environment will (TRITON_PTXAS_PATH, XLA's ptxas).
    """
    if drivers is not None and len(drivers) != len(gpus):
        msg = "analyze: one driver per GPU"
        raise ValueError(msg)
    per_gpu = list(drivers) if drivers is not None else [driver] * len(gpus)
    from cudafit.rules import engine, tables
    from cudafit.targets.kernels import KernelNameSource

    groups: dict[tuple[str, str | None], list[Any]] = {}
    for item in items:
        key_name = item.package or _dir_of(item.path)
        groups.setdefault((key_name, item.version if item.package else None), []).append(item)
    ccs = sorted({ComputeCapability(*map(int, str(c).split("."))) for c in tables.iter_compute_capabilities()})
    from cudafit.targets.compilers import group_compilers, iter_local_ptxas

    compilers = group_compilers(groups, environ=environ, sites=sites)
    local = tuple(iter_local_ptxas(environ)) if environ is not None and compilers else ()
    results: list[PackageResult] = []
    for (name, version), its in sorted(groups.items(), key=lambda kv: kv[0][0].lower()):
        files = tuple(_with_library_loaded_code(i.facts, gpus, ccs if include_coverage else ()) for i in its)
        active = {id(f) for f, i in zip(files, its, strict=True) if not getattr(i, "inactive", None)}
        readable = tuple(f for f in files if (not f.error or f.modules) and id(f) in active)
        unreadable = tuple(f for f in files if f.error)
        runs = compilers.get((name, version), ())
        if not any(f.has_device_code for f in files) and not unreadable and not runs:
            continue  # packages without CUDA code (shipped or made at run time) are not part of the report
        gating = not any(getattr(i, "every_kernel_used", False) for i in its)
        distribution = its[0].package is not None
        pys = max((getattr(i, "python_modules", 0) for i in its), default=0)
        sources = [KernelNameSource(f) for f in readable]
        prepared = [engine.PreparedFile(f, src) for f, src in zip(readable, sources, strict=True)]
        verdicts = tuple(
            engine.evaluate_package(
                name,
                prepared,
                gpu,
                driver=drv,
                jit_allowed=jit_allowed,
                gating=gating,
                pool_loose=distribution,
                python_modules=pys,
            )
            for gpu, drv in zip(gpus, per_gpu, strict=True)
        )
        if kernels:
            verdicts = tuple(_with_kernel_names(v, prepared) for v in verdicts)
        from cudafit.rules.compilers import Wiring, judge_package, with_runtime

        runtime = tuple(
            judge_package(runs, g.compute_capability, Wiring(drv, environ, local), package=name, version=version)
            for g, drv in zip(gpus, per_gpu, strict=True)
        )
        verdicts = tuple(with_runtime(v, j) for v, j in zip(verdicts, runtime, strict=True))
        compiled = next((i.runtime_compiled for i in its if i.runtime_compiled), None)
        if compiled is None and runs:  # the matrix label "(+triton)", "(+xla)", "(+nvrtc)" ... from evidence
            from cudafit.rules.compilers import lead_label

            compiled = lead_label(runs)
        results.append(
            PackageResult(
                name=name,
                version=version,
                path=_common_dir([i.path for i in its]),
                files=files,
                verdicts=verdicts,
                coverage=(
                    _coverage(readable, prepared, ccs, engine, gating, distribution, pys) if include_coverage else {}
                ),
                runtime_compiled=compiled,
                compilers=runs,
                runtime=runtime if runs else (),
                unreadable=unreadable,
                distribution=distribution,
                inactive=tuple((i.path, i.inactive) for i in its if getattr(i, "inactive", None)),
                fallbacks=tuple((f.path, f.fallbacks) for f in files if f.fallbacks),
                python_modules=pys,
            )
        )
        for src in sources:
            src.close()
    return Analysis(gpus=tuple(gpus), packages=tuple(results), driver=driver, jit_allowed=jit_allowed)


def _with_library_loaded_code(facts: BinaryFacts, gpus: Sequence[Any], ccs: Sequence[ComputeCapability]) -> BinaryFacts:
    """The file re-read with the fatbins it embeds to load itself, where they decide the verdict.

    cuFFT registers one kernel-less module and keeps its kernels in 23,983 fatbins in ``.ldata``;
    cuBLASLt, cuDNN and cuSPARSELt keep some in ``.cask_resource``.  When the registered modules alone
    leave the file anything but native or JIT on a GPU asked about or on a compute capability of the
    coverage columns, the embedded fatbins are read too (headers only; cached): the columns then never
    depend on which GPUs were asked about.
    """
    import os

    from cudafit.targets.wheel_members import member_ref

    readable = os.path.isfile(facts.path) or member_ref(facts.path) is not None  # a wheel's member: spooled
    if not facts.embedded_sections or facts.embedded_modules or not readable:
        return facts
    from cudafit.rules import engine
    from cudafit.targets.cache import cached_inspect
    from cudafit.targets.kernels import KernelNameSource

    wanted = list(dict.fromkeys([*ccs, *(g.compute_capability for g in gpus)]))
    source = KernelNameSource(facts)
    try:
        prepared = engine.PreparedFile(facts, source)
        ok = (engine.Status.NATIVE, engine.Status.JIT)
        if all(engine.combine_counts(prepared.counts(cc)) in ok for cc in wanted):
            return facts
    finally:
        source.close()
    full = cached_inspect(facts.path, summary=True)
    return facts if full.error else full


def _with_kernel_names(verdict: Any, prepared: Sequence[Any]) -> Any:
    """The verdict with kernel names filled in for every module without code for its GPU."""
    from dataclasses import replace

    from cudafit.rules.engine import Status

    wanted = (Status.FAILS, Status.SPECIALISED, Status.GATED)
    by_path = {p.facts.path: p for p in prepared}
    files = []
    for fv in verdict.files:
        prep = by_path.get(fv.path)
        if prep is None:  # a pool of library-loaded files: judged as one, no module of its own to name
            files.append(fv)
            continue
        by_pos = {(r.path, r.index): r.module for r in prep.registered}
        mods = []
        for mv in fv.modules:
            module = by_pos.get((mv.path or fv.path, mv.index))
            if mv.status in wanted and mv.kernels is None and prep.kernel_names is not None and module is not None:
                mods.append(replace(mv, kernels=prep.kernel_names(module)))
            else:
                mods.append(mv)
        files.append(replace(fv, modules=tuple(mods)))
    return replace(verdict, files=tuple(files))


def _dir_of(path: str) -> str:
    outer = path.split("!", maxsplit=1)[0]
    import os

    return os.path.dirname(outer) or outer


def _common_dir(paths: Sequence[str]) -> str:
    import os

    outers = [p.split("!")[0] for p in paths]
    if len(outers) == 1:
        return outers[0]
    try:
        return os.path.commonpath(outers)
    except ValueError:
        return outers[0]
