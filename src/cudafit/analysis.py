"""The join: scan items (targets) x GPUs (probe or declared) -> per-package verdicts, fixes and actions.

Like auditwheel's ``analyze_wheel_abi``, this module only combines: binary facts come from
``targets``/``binary``, decisions from ``rules.engine``, fix lines from :mod:`cudafit.fixes`, and the result
is a frozen object (verdicts, and what to do about them: :attr:`Analysis.advice`) that every renderer (text,
JSON, Markdown, HTML) reads without deciding anything itself.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from cudafit.actions import (
    Action,
    ActionKind,
    Advice,
    ModuleGap,
    group_actions,
    inside_site,
    modules_without_code,
)
from cudafit.binary.facts import BinaryFacts, EntryKind, arch_sort_key
from cudafit.model import ComputeCapability, CudaVersion, DriverVersion, Gpu, JsonDict
from cudafit.probe.inventory import Inventory, Toolchain
from cudafit.rules.compilers import RuntimeCompiler, RuntimeJudgement
from cudafit.rules.engine import PackageVerdict, PreparedFile
from cudafit.rules.status import Status, worst
from cudafit.targets.interface import ScanItem

__all__ = [
    "Analysis",
    "CheckRequest",
    "MachineSummary",
    "PackageResult",
    "analyze",
    "jit_allowed_in",
    "run_check",
    "worst_status",
]


def worst_status(statuses: Iterable[str]) -> str:
    """The most serious status of several (``none`` when there is nothing); ``unknown`` is passed over.

    Kept for callers that still speak in strings; new code asks :func:`cudafit.rules.status.worst`.
    """
    return worst(s for s in statuses if s != Status.UNKNOWN).value


@dataclass(frozen=True)
class PackageResult:
    """One package (or directory of loose binaries) and its verdict on every GPU."""

    name: str
    version: str | None
    path: str
    files: tuple[BinaryFacts, ...]
    verdicts: tuple[PackageVerdict, ...]  # one per GPU (same order as Analysis.gpus)
    coverage: dict[str, list[str]]
    runtime_compiled: str | None = None
    #: Compilers the package runs at run time and, per GPU, what its run-time code does there (or None): its
    #: own role beside the shipped modules.
    compilers: tuple[RuntimeCompiler, ...] = ()
    runtime: tuple[RuntimeJudgement | None, ...] = ()
    unreadable: tuple[BinaryFacts, ...] = ()
    distribution: bool = True  # False: loose binaries grouped by directory
    inactive: tuple[tuple[str, str], ...] = ()  # (path, why it never loads here), left out of the verdicts
    #: (path, what was assumed) of every file read only in part (BinaryFacts.fallbacks): the package's
    #: verdicts rest on those assumptions, and every report says so.
    fallbacks: tuple[tuple[str, tuple[str, ...]], ...] = ()
    python_modules: int = 0  # Python modules the distribution ships: code that runs on any GPU

    @property
    def status(self) -> Status:
        """Worst status over the GPUs; ``none`` when the package holds no device code."""
        if not self.verdicts:
            return Status.UNKNOWN if self.has_device_code else Status.NONE
        return worst(v.status for v in self.verdicts)

    @property
    def has_device_code(self) -> bool:
        """Whether any file of the package embeds device code."""
        return any(f.has_device_code for f in self.files)

    @functools.cached_property
    def without_code(self) -> tuple[tuple[ModuleGap, ...], ...]:
        """Per GPU, the modules without code for it (holes, then specialised, then gated)."""
        return tuple(modules_without_code(v) for v in self.verdicts)


@dataclass(frozen=True)
class MachineSummary:
    """Where the GPUs of a verdict came from when a machine was read (probed here, or an inventory file)."""

    status: str
    source: str | None
    driver_version: DriverVersion | None
    problems: tuple[str, ...]
    ordering_estimated: bool

    @classmethod
    def of(cls, inv: Inventory) -> MachineSummary:
        """The summary of a probed or recorded inventory."""
        return cls(inv.status, inv.source, inv.driver_version, inv.problems, inv.ordering_estimated)

    def to_dict(self) -> JsonDict:
        """The ``machine`` object of ``cudafit.check/1``."""
        return {
            "status": self.status,
            "source": self.source,
            "driver_version": str(self.driver_version) if self.driver_version else None,
            "problems": list(self.problems),
            "ordering_estimated": self.ordering_estimated,
        }


@dataclass(frozen=True)
class Analysis:
    """Everything ``check`` and ``doctor`` render."""

    gpus: tuple[Gpu, ...]
    packages: tuple[PackageResult, ...]
    driver: DriverVersion | None
    jit_allowed: bool
    notes: tuple[str, ...] = field(default=())
    toolchains: tuple[Toolchain, ...] = ()  # compilers packages use at run time
    machine: MachineSummary | None = None  # the machine read for the GPUs (None: only declared ones)

    @property
    def failing(self) -> tuple[PackageResult, ...]:
        """Packages with code that fails on at least one GPU (``fails`` or ``partial``)."""
        return tuple(p for p in self.packages if p.status in (Status.FAILS, Status.PARTIAL))

    @property
    def status(self) -> Status:
        """The worst package status; ``none`` without a GPU (coverage only: nothing was judged)."""
        return worst(p.status for p in self.packages) if self.gpus else Status.NONE

    @functools.cached_property
    def advice(self) -> Advice:
        """What to do: each package's fix lines and the actions, grouped and most serious first."""
        fixes: list[tuple[str, ...]] = []
        actions: list[Action] = []
        for p in self.packages:
            own: list[str] = []
            for gpu, kind, message in _iter_fix_lines(self, p):
                if message not in own:
                    own.append(message)
                if kind is not None:
                    actions.append(Action(kind, (p.name,), gpu, message))
            fixes.append(tuple(own))
        return Advice(tuple(fixes), group_actions(actions))


def jit_allowed_in(environ: Mapping[str, str]) -> bool:
    """Whether the driver may JIT-compile PTX: ``CUDA_DISABLE_PTX_JIT=1`` forbids it (CUDA Programming Guide,
    "CUDA Environment Variables"), so PTX-only code then fails."""
    return environ.get("CUDA_DISABLE_PTX_JIT", "0") in ("", "0")


@dataclass(frozen=True)
class CheckRequest:
    """What ``check`` and ``doctor`` ask of :func:`run_check`, given once (the CLI resolves the GPUs)."""

    gpus: tuple[Gpu, ...]
    driver: DriverVersion | None = None
    machine: MachineSummary | None = None
    environ: Mapping[str, str] = field(default_factory=dict)
    #: The environment's site-packages (``doctor``): its run-time compilers are wired as it will run them.
    sites: tuple[str, ...] | None = None
    kernels: bool = False  # read the kernel names of every module without code (``--kernels``)
    use_cache: bool = True
    embedded: bool = False  # also read the fatbins libraries embed to load themselves


def run_check(items: Iterable[ScanItem], request: CheckRequest, notes: Iterable[str] = ()) -> Analysis:
    """Judge ``items`` as ``check``/``doctor`` do: the analysis (read through the scan cache, with a progress
    line on a terminal), its notes, and the local compilers of packages that compile at run time.

    ``notes`` is read after the items (a requirement's resolved version is known only then).
    """
    from cudafit.progress import with_progress
    from cudafit.targets.cache import scan_cache

    jit_allowed = jit_allowed_in(request.environ)
    with scan_cache(enabled=request.use_cache, embedded=request.embedded):
        analysis = analyze(
            with_progress(items),
            request.gpus,
            driver=request.driver,
            jit_allowed=jit_allowed,
            kernels=request.kernels,
            environ=dict(request.environ) if request.sites is not None else None,
            sites=request.sites or (),
        )
    extra = list(notes)
    if not jit_allowed:
        extra.append("CUDA_DISABLE_PTX_JIT is set: PTX is not counted as usable")
    if request.machine is not None and request.machine.ordering_estimated:
        extra.append("CUDA device numbering is estimated (FASTEST_FIRST); see cudafit gpus")
    analysis = replace(analysis, notes=tuple(extra), machine=request.machine)
    if request.gpus and any(p.runtime_compiled in ("triton", "nvcc-jit") for p in analysis.packages):
        from cudafit.probe.toolchains import iter_toolchains
        from cudafit.targets.env import site_packages_of

        sites = list(request.sites) if request.sites is not None else site_packages_of()
        analysis = replace(analysis, toolchains=tuple(iter_toolchains(sites, request.environ)))
    return analysis


def _iter_fix_lines(analysis: Analysis, p: PackageResult) -> Iterator[tuple[int, ActionKind | None, str]]:
    """(GPU index, action kind or ``None`` for a fix line alone, message) of a package, GPU by GPU: the verdict's
    fixes (of the cell's status), its run-time compilers' actions, then what this machine's toolchain lacks for
    a package whose compilers are not known."""
    from cudafit.fixes import build_switch_of, cuda_major_of, fixes_for, runtime_compile_fixes

    cuda = cuda_major_of(p.files)
    switch = build_switch_of(p.name, p.files)
    statuses = [v.status.value for v in p.verdicts]
    for i, v in enumerate(p.verdicts):
        gpu = analysis.gpus[i]
        kind = ActionKind.of_status(v.status)
        for fixed in fixes_for(
            p.name,
            p.version,
            gpu,
            v,
            all_gpus=analysis.gpus,
            distribution=p.distribution,
            cuda=cuda,
            statuses=statuses,
            path=p.path,
            switch=switch,
        ):
            yield i, kind, inside_site(str(fixed))  # the typed fix (fixes.Fix) is for tools; reports carry its line
        judgement = p.runtime[i] if p.runtime else None
        if judgement is not None and judgement.status != "native":
            rkind = ActionKind.of_status(judgement.status) or ActionKind.RUNTIME
            for fix in judgement.actions:
                yield i, rkind, fix
        if not p.compilers:  # with compilers, the run-time code is judged from them, not the local toolchain
            for fix in runtime_compile_fixes(p.runtime_compiled, gpu, analysis.toolchains):
                yield i, ActionKind.RUNTIME, fix


def _coverage(
    files: Sequence[BinaryFacts],
    prepared: Sequence[PreparedFile],
    ccs: Sequence[ComputeCapability],
    gating: bool,
    pool_loose: bool = True,
    python_modules: int = 0,
) -> dict[str, list[str]]:
    """Which compute capabilities the package's binaries serve natively or by JIT (no GPU needed).

    Each CC is judged like a GPU (module roles included), so the columns agree with the verdicts.
    """
    from cudafit.rules import engine

    archs: dict[EntryKind, set[str]] = {EntryKind.SASS: set(), EntryKind.PTX: set()}
    for f in files:
        for fact in (f, *f.members):
            for m in fact.runtime_modules:
                for e in m.entries:
                    archs.get(e.kind, set()).add(e.arch_name)
    columns: dict[Status, list[str]] = {Status.NATIVE: [], Status.JIT: [], Status.PARTIAL: []}
    for cc in ccs:
        st, _counts = engine.package_status(
            prepared, cc, gating=gating, pool_loose=pool_loose, python_modules=python_modules
        )
        columns.get(st, []).append(str(cc))
    return {
        "sass": sorted(archs[EntryKind.SASS], key=arch_sort_key),
        "ptx": sorted(archs[EntryKind.PTX], key=arch_sort_key),
        **{status.value: ccs_of for status, ccs_of in columns.items()},
    }


@dataclass(frozen=True)
class _Judging:
    """What every package of one analysis is judged with (the arguments of :func:`analyze`, resolved once)."""

    gpus: tuple[Gpu, ...]
    drivers: tuple[DriverVersion | None, ...]  # one per GPU
    jit_allowed: bool
    kernels: bool
    ccs: tuple[ComputeCapability, ...]  # coverage columns (empty: none)
    environ: Mapping[str, str] | None
    local: tuple[tuple[str, CudaVersion], ...]  # this machine's ptxas binaries (rules.compilers.Wiring.local)


def analyze(
    items: Iterable[ScanItem],
    gpus: Sequence[Gpu],
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
    from cudafit.rules import tables
    from cudafit.targets.compilers import group_compilers, iter_local_ptxas

    groups: dict[tuple[str, str | None], list[ScanItem]] = {}
    for item in items:
        key_name = item.package or _dir_of(item.path)
        groups.setdefault((key_name, item.version if item.package else None), []).append(item)
    ccs = sorted({ComputeCapability(*map(int, str(c).split("."))) for c in tables.iter_compute_capabilities()})
    compilers = group_compilers(groups, environ=environ, sites=sites)
    judging = _Judging(
        gpus=tuple(gpus),
        drivers=tuple(drivers) if drivers is not None else (driver,) * len(gpus),
        jit_allowed=jit_allowed,
        kernels=kernels,
        ccs=tuple(ccs) if include_coverage else (),
        environ=environ,
        local=tuple(iter_local_ptxas(environ)) if environ is not None and compilers else (),
    )
    results = [
        result
        for (name, version), its in sorted(groups.items(), key=lambda kv: kv[0][0].lower())
        if (result := _judge_package(judging, name, version, its, compilers.get((name, version), ()))) is not None
    ]
    return Analysis(gpus=tuple(gpus), packages=tuple(results), driver=driver, jit_allowed=jit_allowed)


def _judge_package(
    judging: _Judging, name: str, version: str | None, its: Sequence[ScanItem], runs: tuple[RuntimeCompiler, ...]
) -> PackageResult | None:
    """One package's result, or ``None`` when it holds no CUDA code (shipped or made at run time)."""
    from cudafit.targets.kernels import KernelNameSource

    files = tuple(_with_library_loaded_code(i.facts, judging.gpus, judging.ccs) for i in its)
    active = {id(f) for f, i in zip(files, its, strict=True) if not i.inactive}
    readable = tuple(f for f in files if (not f.error or f.modules) and id(f) in active)
    unreadable = tuple(f for f in files if f.error)
    if not any(f.has_device_code for f in files) and not unreadable and not runs:
        return None
    gating = not any(i.every_kernel_used for i in its)
    distribution = its[0].package is not None
    pys = max((i.python_modules for i in its), default=0)
    sources = [KernelNameSource(f) for f in readable]
    prepared = [PreparedFile(f, src) for f, src in zip(readable, sources, strict=True)]
    verdicts, runtime = _verdicts(judging, name, version, prepared, runs, gating=gating, pool=distribution, pys=pys)
    compiled = next((i.runtime_compiled for i in its if i.runtime_compiled), None)
    if compiled is None and runs:  # the matrix label "(+triton)", "(+xla)", "(+nvrtc)" ... from evidence
        from cudafit.rules.compilers import lead_label

        compiled = lead_label(runs)
    coverage = _coverage(readable, prepared, judging.ccs, gating, distribution, pys) if judging.ccs else {}
    for src in sources:
        src.close()
    return PackageResult(
        name=name,
        version=version,
        path=_common_dir([i.path for i in its]),
        files=files,
        verdicts=verdicts,
        coverage=coverage,
        runtime_compiled=compiled,
        compilers=runs,
        runtime=runtime if runs else (),
        unreadable=unreadable,
        distribution=distribution,
        inactive=tuple((i.path, i.inactive) for i in its if i.inactive),
        fallbacks=tuple((f.path, f.fallbacks) for f in files if f.fallbacks),
        python_modules=pys,
    )


def _verdicts(
    judging: _Judging,
    name: str,
    version: str | None,
    prepared: Sequence[PreparedFile],
    runs: tuple[RuntimeCompiler, ...],
    *,
    gating: bool,
    pool: bool,
    pys: int,
) -> tuple[tuple[PackageVerdict, ...], tuple[RuntimeJudgement | None, ...]]:
    """(package verdict, run-time code's judgement) on each GPU, the run-time code folded into the verdict."""
    from cudafit.rules import engine
    from cudafit.rules.compilers import Wiring, judge_package, with_runtime

    pairs = tuple(zip(judging.gpus, judging.drivers, strict=True))
    verdicts = tuple(
        engine.evaluate_package(
            name,
            prepared,
            gpu,
            driver=drv,
            jit_allowed=judging.jit_allowed,
            gating=gating,
            pool_loose=pool,
            python_modules=pys,
        )
        for gpu, drv in pairs
    )
    if judging.kernels:
        verdicts = tuple(_with_kernel_names(v, prepared) for v in verdicts)
    wirings = [Wiring(drv, judging.environ, judging.local) for _g, drv in pairs]
    runtime = tuple(
        judge_package(runs, g.compute_capability, w, package=name, version=version)
        for (g, _d), w in zip(pairs, wirings, strict=True)
    )
    return tuple(with_runtime(v, j) for v, j in zip(verdicts, runtime, strict=True)), runtime


def _with_library_loaded_code(facts: BinaryFacts, gpus: Sequence[Gpu], ccs: Sequence[ComputeCapability]) -> BinaryFacts:
    """The file re-read with the fatbins it embeds to load itself, where they decide the verdict.

    cuFFT registers one kernel-less module and keeps its kernels in 23,983 fatbins in ``.ldata``;
    cuBLASLt, cuDNN and cuSPARSELt keep some in ``.cask_resource``.  When the registered modules alone
    leave the file anything but native or JIT on a GPU asked about or on a compute capability of the
    coverage columns, the embedded fatbins are read too (headers only; cached): the columns then never
    depend on which GPUs were asked about.
    """
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
        ok = (Status.NATIVE, Status.JIT)
        if all(engine.combine_counts(prepared.counts(cc)) in ok for cc in wanted):
            return facts
    finally:
        source.close()
    full = cached_inspect(facts.path, summary=True)
    return facts if full.error else full


def _with_kernel_names(verdict: PackageVerdict, prepared: Sequence[PreparedFile]) -> PackageVerdict:
    """The verdict with kernel names filled in for every module without code for its GPU."""
    from cudafit.actions import WITHOUT_CODE

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
            if (
                mv.status in WITHOUT_CODE
                and mv.kernels is None
                and prep.kernel_names is not None
                and module is not None
            ):
                mods.append(replace(mv, kernels=prep.kernel_names(module)))
            else:
                mods.append(mv)
        files.append(replace(fv, modules=tuple(mods)))
    return replace(verdict, files=tuple(files))


def _dir_of(path: str) -> str:
    outer = path.split("!", maxsplit=1)[0]
    return os.path.dirname(outer) or outer


def _common_dir(paths: Sequence[str]) -> str:
    outers = [p.split("!")[0] for p in paths]
    if len(outers) == 1:
        return outers[0]
    try:
        return os.path.commonpath(outers)
    except ValueError:
        return outers[0]
