"""Package combination: a package's files judged together on one GPU (docs/rules.md, *Files*).

A package's files are not independent: the library loads its loose cubins itself (one pool:
:mod:`cudafit.rules.pools`), a file that loads (``DT_NEEDED``) a file without code for the GPU cannot run
either, a file built only for other GPUs beside files that run is information, and the package loads one
CUDA runtime, whose driver floor is the whole package's.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from cudafit.binary.facts import BinaryFacts
from cudafit.model import ComputeCapability, DriverVersion, Gpu, JsonDict
from cudafit.rules import roles
from cudafit.rules import toolkit as toolkit_mod
from cudafit.rules.counts import Counts, combine, count_of
from cudafit.rules.decide import ModuleVerdict
from cudafit.rules.lazy import LazySequence
from cudafit.rules.options import JudgeOptions
from cudafit.rules.pools import PACKAGE_POOLS, loaded_files_pool, split_library_loaded
from cudafit.rules.prepared import FileVerdict, PreparedFile, judge_file, unscanned_embedded
from cudafit.rules.reasons import Reason, ReasonData, reason
from cudafit.rules.status import Status

__all__ = [
    "PackageVerdict",
    "bundled_nvidia_library",
    "evaluate_package",
    "judge_files",
    "package_status",
]


@dataclass(frozen=True)
class PackageVerdict:
    """One package (or directory of loose binaries) on one GPU."""

    name: str
    gpu: Gpu
    status: Status
    counts: Counts
    files: tuple[FileVerdict, ...]
    reasons: tuple[Reason, ...] = field(default=())

    def to_dict(self) -> JsonDict:
        """JSON form."""
        return {
            "status": self.status.value,
            "counts": self.counts.to_dict(),
            "reasons": [r.to_dict() for r in self.reasons],
            "files": [f.to_dict() for f in self.files if f.status is not Status.NONE],
        }


def _pool_verdict(
    loaded: Sequence[PreparedFile], others: Sequence[FileVerdict], gpu: Gpu, options: JudgeOptions
) -> FileVerdict:
    """The distribution's library-loaded files as one file verdict, at their common directory."""
    code = tuple(dict.fromkeys(c for p in loaded for c in p.code))
    pool = loaded_files_pool(code, len(loaded), gpu, options, any(fv.counts.native for fv in others))
    where = os.path.commonpath([p.facts.path.split("!")[0] for p in loaded]) if loaded else ""
    counts = count_of([pool.status])
    status, summary = combine(counts, False)
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
    options = JudgeOptions(gating=gating, pool_loose=pool_loose)
    v = judge_files("", prepared, Gpu.of(cc), options, python_modules)
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


_RUNS = (Status.NATIVE, Status.JIT, Status.PARTIAL)


def _unreachable_files(registered: Sequence[PreparedFile], out: Sequence[FileVerdict]) -> dict[int, int]:
    """Files that run here but load (``DT_NEEDED``, transitively) a file of the package with holes and no code
    that runs: index -> the index of the file they need."""
    index = {os.path.basename(p.facts.path.split("!")[-1]): i for i, p in enumerate(registered)}
    failing = {i for i in range(len(registered)) if out[i].status is Status.FAILS and out[i].counts.fails}
    needs: dict[int, int] = {}
    changed = True
    while changed:  # transitively: a file loading a file that cannot run cannot run either
        changed = False
        for i, p in enumerate(registered):
            if i in failing or i in needs or out[i].status not in _RUNS:
                continue
            dep = next((j for d in p.facts.needed if (j := index.get(d, i)) in failing or j in needs), None)
            if dep is not None and dep != i:
                needs[i] = dep
                changed = True
    return needs


def _file_roles(
    registered: Sequence[PreparedFile],
    fverdicts: tuple[FileVerdict, ...],
    gpu: Gpu,
    options: JudgeOptions,
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
    failing = {i for i in range(n) if out[i].status is Status.FAILS and out[i].counts.fails}
    needs = _unreachable_files(registered, out)
    for i, dep in needs.items():
        out[i] = _unreachable(out[i], registered[dep].facts.path, cc)
    runners = [i for i in range(n) if out[i].status in _RUNS]
    pool_runs = len(out) > n and out[n].status in (Status.NATIVE, Status.JIT)
    if not (runners or pool_runs or python_modules):
        return tuple(out)
    for i in sorted(failing - set(needs.values())):
        p = registered[i]
        d = roles.classify_file(p.roles, p.role_status(cc, options), cc)
        if d is not None:
            out[i] = _as_information(out[i], d)
    if any(out[i].counts.native for i in runners):
        for i in runners:
            if out[i].status is Status.JIT and not out[i].counts.native:
                p = registered[i]
                d = roles.classify_helper_file(p.roles, p.role_status(cc, options))
                if d is not None:
                    out[i] = _as_information(out[i], d, Status.JIT)
    return tuple(out)


def _unreachable(fv: FileVerdict, core: str, cc: ComputeCapability) -> FileVerdict:
    """A file whose code runs here but which loads a file of its package that has none: its modules are holes."""
    counts = fv.counts.moved(Status.NATIVE, Status.FAILS).moved(Status.JIT, Status.FAILS)
    msg = f"{fv.path} loads {os.path.basename(core)}, which has no code for {cc}"
    why = reason("needs-failing-file", msg, ReasonData(path=fv.path))
    return dataclasses.replace(fv, status=Status.FAILS, counts=counts, reasons=(why, *fv.reasons))


def _as_information(fv: FileVerdict, d: roles.RoleDecision, of: Status = Status.FAILS) -> FileVerdict:
    """A file the package uses on other GPUs (its holes, ``of`` fails) or a helper (its JIT modules, ``of``
    jit): those modules become specialised."""
    moved = fv.counts.of(of)
    counts = fv.counts.moved(of, Status.SPECIALISED)
    why = reason(d.reason.code, f"{fv.path}: {d.reason.message}", ReasonData(path=fv.path, modules=moved))
    modules = fv.modules

    def build() -> tuple[ModuleVerdict, ...]:
        return tuple(
            dataclasses.replace(m, status=Status.SPECIALISED, reasons=(why, *m.reasons)) if m.status is of else m
            for m in modules
        )

    kept = tuple(r for r in fv.reasons if r.code not in ("no-compatible-code", "partial-modules", "ptx-jit"))
    return FileVerdict(fv.path, Status.SPECIALISED, counts, LazySequence(build), (why, *kept))


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
    """Decide a package from all its files' modules (``partial`` when some modules are holes); keyword arguments
    as in :class:`~cudafit.rules.options.JudgeOptions`, and ``python_modules``: how many Python modules it
    ships (code that runs on any GPU)."""
    prepared = tuple(f if isinstance(f, PreparedFile) else PreparedFile(f) for f in files)
    options = JudgeOptions(driver=driver, jit_allowed=jit_allowed, gating=gating, pool_loose=pool_loose)
    return judge_files(name, prepared, gpu, options, python_modules)


def judge_files(
    name: str, prepared: Sequence[PreparedFile], gpu: Gpu, options: JudgeOptions, python_modules: int = 0
) -> PackageVerdict:
    """A package's prepared files on ``gpu``, judged together (see the module's docstring)."""
    split = split_library_loaded(prepared, _facts, PACKAGE_POOLS) if options.gating and options.pool_loose else None
    registered = split.files if split is not None else tuple(prepared)
    fverdicts = tuple(judge_file(f, gpu, options) for f in registered)
    for _key, loaded in split.pools if split is not None else ():
        fverdicts += (_pool_verdict(loaded, fverdicts, gpu, options),)
    if options.gating:
        fverdicts = _file_roles(registered, fverdicts, gpu, options, python_modules)
    counts = sum((fv.counts for fv in fverdicts), Counts())
    relocatable = any(f.relocatable for f in prepared)
    status, summary = unscanned_embedded(prepared, *combine(counts, relocatable))
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
    gaps = _hole_files(coded, gpu) if status is Status.PARTIAL else ()
    detail = _detail(fverdicts, summary, counts)
    # The driver floor is the whole package's: its files load one CUDA runtime (linked, static, or from an
    # nvidia-*-cuNN wheel), and a runtime that cannot start fails every file, whatever their code.
    built = None
    if coded and options.driver is not None:
        built = toolkit_mod.package_build_toolkit(name, (p.floor_toolkit() for p in prepared))
    floor = toolkit_mod.driver_too_old(built, options.driver, f"{name}")
    if floor is not None:
        rest = tuple(r for r in summary + gaps + detail if r.code != "driver-too-old-for-runtime")
        return PackageVerdict(name, gpu, Status.FAILS, counts, fverdicts, (floor, *rest))
    return PackageVerdict(name, gpu, status, counts, fverdicts, summary + gaps + detail)


def _facts(p: PreparedFile) -> BinaryFacts:
    return p.facts


def _hole_files(coded: Sequence[FileVerdict], gpu: Gpu) -> tuple[Reason, ...]:
    """In a ``partial`` package, each file without code beside files that run: a real gap, not a specialisation
    (files that only load such a file say so themselves)."""
    return tuple(
        reason(
            "hole-file-without-code",
            f"{fv.path}: no code for {gpu.compute_capability} ({fv.counts.fails} modules)",
            ReasonData(path=fv.path, modules=fv.counts.fails, library=bundled_nvidia_library(fv.path)),
        )
        for fv in coded
        if fv.status is Status.FAILS and fv.counts.fails and not any(r.code == "needs-failing-file" for r in fv.reasons)
    )


def _detail(fverdicts: Sequence[FileVerdict], summary: tuple[Reason, ...], counts: Counts) -> tuple[Reason, ...]:
    """The files' reasons under the package's summary, each once (no per-file "partial" lines, and no "no device
    code" where the package has some)."""
    return tuple(
        dict.fromkeys(
            r
            for fv in fverdicts
            for r in fv.reasons
            if r.code != "partial-modules" and r not in summary and not (counts.total and r.code == "no-device-code")
        )
    )
