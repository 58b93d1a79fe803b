"""Compilers a package runs at run time, and whether they can make code for a GPU (no compiler is run).

Much device code is made on the user's machine: Triton compiles every kernel with the ptxas it bundles,
XLA writes PTX with its own LLVM and assembles it with a ptxas it finds, CuPy compiles with NVRTC,
nvJitLink links LTO-IR, JIT libraries call nvcc.  Such a compiler cannot target a GPU newer than its
CUDA release ("ptxas fatal : Value 'sm_120' is not defined for option 'gpu-name'"), so the package
installs, imports, finds the GPU and dies on its first kernel.  This module knows each compiler's
reach from its CUDA version and the toolkit table (``toolkits.json`` targets, fatbin_spec.md §E.7),
and the conventions of the big users from ``compilers.json`` (each entry with its source).

>>> str(parse_runtime_compiler("ptxas 12.4"))
'ptxas 12.4'
>>> parse_runtime_compiler("nvrtc 12.x").cuda_major
12
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from importlib import resources
from typing import TYPE_CHECKING, Literal

from cudafit.errors import RuleDataError, ValueParseError
from cudafit.model import ComputeCapability, CudaVersion, DriverVersion, JsonDict, parse_cuda_version
from cudafit.rules.reasons import Reason
from cudafit.rules.status import Status, severity, worst

if TYPE_CHECKING:
    from cudafit.rules.package import PackageVerdict

__all__ = [
    "FAMILIES",
    "RuntimeCompiler",
    "RuntimeJudgement",
    "Wiring",
    "compilers_data",
    "first_toolkit_targeting",
    "judge_compiler",
    "judge_package",
    "lead_label",
    "parse_runtime_compiler",
    "release_compilers",
    "with_runtime",
]

#: What a run-time compiler's judgement can be: a package status, or ``unknown`` (its release is not known here).
RuntimeStatus = Literal["native", "jit", "fails", "unknown"]

FAMILIES = ("ptxas", "nvcc", "nvrtc", "nvjitlink", "nvptxcompiler", "xla")


@functools.lru_cache(maxsize=1)
def compilers_data() -> JsonDict:
    """``compilers.json`` (validated by its schema in the tests; the shape is checked here cheaply)."""
    try:
        text = resources.files("cudafit.rules").joinpath("data").joinpath("compilers.json").read_text(encoding="utf-8")
        doc = json.loads(text)
    except (OSError, ValueError) as err:
        msg = f"rule data file compilers.json is missing or not JSON: {err}"
        raise RuleDataError(msg) from err
    if not isinstance(doc, dict) or doc.get("schema_version") != 1 or set(doc.get("families", {})) != set(FAMILIES):
        msg = "rule data file compilers.json: schema_version 1 with every compiler family expected"
        raise RuleDataError(msg)
    return doc


@dataclass(frozen=True)
class RuntimeCompiler:
    """One compiler a package will run, and how cudafit knows (``evidence``, ``where``).

    ``cuda`` is the compiler's CUDA release when read from its own version string, a pinned
    requirement or a versioned file name; ``cuda_major`` alone when only a soname says it
    (``libnvrtc.so.12``).  ``arch_from``/``arch_below`` bound the GPUs it is used for (Triton picks
    ``ptxas-blackwell`` from an arch number up).  ``llvm_targets`` are the ``sm_XY`` an XLA build's own
    LLVM knows.  ``user`` names the convention that runs it (``triton``, ``torch.compile``, ``xla``,
    ``cupy``), empty for a plain library use.
    """

    family: str
    cuda: CudaVersion | None = None
    cuda_major: int | None = None
    where: str = ""
    evidence: str = ""
    user: str = ""
    arch_from: int | None = None
    arch_below: int | None = None
    llvm_targets: tuple[str, ...] = ()
    name: str = ""  # the file name when it matters (``ptxas-blackwell``)

    def __str__(self) -> str:
        if self.family == "xla":
            top = self.llvm_targets[-1] if self.llvm_targets else "?"
            return f"xla llvm<={top}"
        if self.cuda is not None:
            return f"{self.family} {self.cuda}"
        return f"{self.family} {self.cuda_major}.x" if self.cuda_major is not None else f"{self.family} ?"

    @property
    def version_text(self) -> str:
        """``CUDA 12.4`` / ``CUDA 12.x`` / ``unknown version``."""
        if self.cuda is not None:
            return f"CUDA {self.cuda}"
        return f"CUDA {self.cuda_major}.x" if self.cuda_major is not None else "unknown version"

    def used_for(self, cc: ComputeCapability) -> bool:
        """Whether the package uses this compiler for a GPU of compute capability ``cc``."""
        n = cc.arch_number
        return (self.arch_from is None or n >= self.arch_from) and (self.arch_below is None or n < self.arch_below)

    def to_dict(self) -> JsonDict:
        """JSON form (``cudafit.check/1`` ``targets[].runtime_compilers[]``)."""
        return {
            "family": self.family,
            "name": self.name or self.family,
            "cuda_version": str(self.cuda) if self.cuda is not None else None,
            "cuda_major": self.cuda.major if self.cuda is not None else self.cuda_major,
            "where": self.where,
            "evidence": self.evidence,
            "user": self.user or None,
            "arch_from": self.arch_from,
            "arch_below": self.arch_below,
            "llvm_targets": list(self.llvm_targets),
        }


_TEXT = re.compile(r"^(?P<family>[a-z]+)\s+(?:(?P<major>\d+)\.x|(?P<cuda>\d+\.\d+(?:\.\d+)?))$")


def parse_runtime_compiler(text: str) -> RuntimeCompiler:
    """Parse ``ptxas 12.4`` or ``nvrtc 12.x`` (the canonical ``str`` of a non-XLA compiler)."""
    m = _TEXT.match(text.strip().lower())
    if not m or m.group("family") not in FAMILIES:
        msg = f"not a run-time compiler: {text!r} (expected e.g. 'ptxas 12.4' or 'nvrtc 12.x')"
        raise ValueParseError(msg)
    if m.group("major"):
        return RuntimeCompiler(m.group("family"), cuda_major=int(m.group("major")))
    return RuntimeCompiler(m.group("family"), cuda=parse_cuda_version(m.group("cuda")))


@dataclass(frozen=True)
class RuntimeJudgement:
    """What a package's run-time code does on one GPU: its own role beside the shipped modules.

    ``status`` is ``native`` (the compiler makes SASS for the GPU), ``jit`` (it makes PTX the driver
    compiles), ``fails`` (it cannot target the GPU) or ``unknown`` (its version is not known here:
    the environment decides, nothing is counted).
    """

    compiler: RuntimeCompiler
    status: RuntimeStatus
    code: str
    message: str
    source: str
    fixes: tuple[str, ...] = ()
    #: The package's other run-time compilers for this GPU, each judged (their fixes are listed too).
    others: tuple[RuntimeJudgement, ...] = ()

    @property
    def actions(self) -> tuple[str, ...]:
        """What to do, the first line with the cause (``Triton's ptxas (CUDA 12.4) cannot target sm_120: export
        TRITON_PTXAS_PATH=...``), alternatives after it."""
        own: tuple[str, ...] = ()
        if self.fixes:
            cause = self.message.split(": ")[0].split("; ")[0]
            own = (f"{cause}: {self.fixes[0]}", *self.fixes[1:])
        return own + tuple(a for o in self.others for a in o.actions)

    def to_dict(self) -> JsonDict:
        """JSON form (``verdicts[].runtime``)."""
        return {
            "status": self.status,
            "compiler": str(self.compiler),
            "family": self.compiler.family,
            "cuda_version": str(self.compiler.cuda) if self.compiler.cuda is not None else None,
            "where": self.compiler.where,
            "user": self.compiler.user or None,
            "code": self.code,
            "message": self.message,
            "source": self.source,
            "fixes": list(self.fixes),
            "others": [o.to_dict() for o in self.others],
        }


@dataclass(frozen=True)
class Wiring:
    """What the machine adds to a compiler's reach: its driver (which PTX ISA it JIT-compiles), the
    environment variables conventions read (``CUPY_COMPILE_WITH_PTX``), and the ptxas binaries of its
    toolkits with their release (named in fixes instead of a placeholder; ``doctor``)."""

    driver: DriverVersion | None = None
    environ: Mapping[str, str] | None = None
    local: tuple[tuple[str, CudaVersion], ...] = ()


NO_WIRING = Wiring()


def _arch_numbers(cuda: CudaVersion) -> set[int]:
    """The arch numbers the ptxas/nvcc of CUDA release ``cuda`` can build SASS for."""
    from cudafit.rules.tables import toolkit_targets

    return {t.number for t in toolkit_targets(cuda)}


def first_toolkit_targeting(cc: ComputeCapability, major: int | None = None) -> CudaVersion | None:
    """The oldest CUDA release (of ``major``, when given) whose ptxas/nvcc can target ``cc``."""
    from cudafit.rules.tables import load_tables

    for cuda in sorted(load_tables().targets):
        if major is not None and cuda.major != major:
            continue
        if cc.arch_number in _arch_numbers(cuda):
            return cuda
    return None


def _newest_of_major(major: int) -> CudaVersion | None:
    from cudafit.rules.tables import load_tables

    same = [c for c in load_tables().targets if c.major == major]
    return max(same) if same else None


def _oldest_of_major(major: int) -> CudaVersion | None:
    from cudafit.rules.tables import load_tables

    same = [c for c in load_tables().targets if c.major == major]
    return min(same) if same else None


def _llvm_knows(targets: tuple[str, ...], cc: ComputeCapability) -> bool:
    return any(re.sub(r"[af]$", "", t.removeprefix("sm_")) == str(cc.arch_number) for t in targets)


def judge_compiler(
    compiler: RuntimeCompiler,
    cc: ComputeCapability,
    wiring: Wiring = NO_WIRING,
    *,
    package: str = "",
    version: str | None = None,
) -> RuntimeJudgement:
    """Whether ``compiler`` can make code for a GPU of compute capability ``cc`` (never runs it).

    SASS-making compilers (ptxas, nvcc, NVRTC to a cubin, nvJitLink, nvPTXCompiler) need the GPU among
    the targets of their CUDA release; XLA additionally needs the GPU's ``sm_XY`` in its own LLVM.  CuPy
    compiles for ``min(GPU arch, NVRTC's newest)``, so an NVRTC that predates the GPU gives a cubin for an
    older arch (CUDA_ERROR_NO_BINARY_FOR_GPU), unless ``CUPY_COMPILE_WITH_PTX`` makes it PTX the driver JITs.
    """
    data = compilers_data()
    fam = data["families"][compiler.family]
    sm = f"sm_{cc.arch_number}"
    who = _who(compiler, package, version)
    if compiler.family == "xla":
        return _judge_xla(compiler, cc, who, package, wiring)
    cuda = compiler.cuda or _release_that_decides(compiler, cc)
    if cuda is None:
        return _version_unknown(compiler, cc, who, package, wiring)
    if cc.arch_number in _arch_numbers(cuda):
        return RuntimeJudgement(
            compiler,
            "native",
            "runtime-compiler-targets-gpu",
            f"{who} ({compiler.version_text}) compiles for {sm}",
            fam["source"],
        )
    first = first_toolkit_targeting(cc)
    added = f" (CUDA {first} added it)" if first is not None else ""
    cupy_ptx = compiler.user == "cupy" and (wiring.environ or {}).get("CUPY_COMPILE_WITH_PTX", "") not in ("", "0")
    if cupy_ptx or data["conventions"].get(compiler.user, {}).get("ptx_fallback"):
        return _ptx_for_driver(compiler, cc, wiring.driver, who, data)
    base = f"{who} ({compiler.version_text}) cannot target {sm}{added}"
    if compiler.user == "cupy":
        base += "; CuPy then compiles for the newest arch its NVRTC knows, a cubin this GPU cannot load"
    return RuntimeJudgement(
        compiler,
        "fails",
        "runtime-compiler-too-old",
        f"{base}: {fam['error'].replace('XY', str(cc.arch_number))}",
        fam["source"],
        tuple(_fixes(compiler, cc, package, wiring.local)),
    )


def _judge_xla(
    compiler: RuntimeCompiler, cc: ComputeCapability, who: str, package: str, wiring: Wiring
) -> RuntimeJudgement:
    """XLA's own LLVM writes the PTX: the GPU's ``sm_XY`` must be among its targets, or a fallback below it."""
    src = compilers_data()["conventions"]["xla"]["source"]
    sm = f"sm_{cc.arch_number}"
    top = compiler.llvm_targets[-1] if compiler.llvm_targets else None
    if top is None:
        return RuntimeJudgement(compiler, "unknown", "runtime-compiler-unknown", f"{who}: targets unknown", src)
    if _llvm_knows(compiler.llvm_targets, cc):
        return RuntimeJudgement(
            compiler, "native", "runtime-compiler-targets-gpu", f"{who} compiles for {sm} (its LLVM knows it)", src
        )
    # An unknown GPU: XLA tells LLVM the newest sm it knows below the GPU ("Defaulting to telling LLVM that
    # we're compiling for sm_XY") and has ptxas assemble that PTX for the GPU.  From sm_90 on XLA asks for
    # the arch-specific target, and 'a' PTX never compiles for another GPU ("ptxas fatal : Program with
    # .target 'sm_90a' cannot be compiled to future architecture").
    below = [int(re.sub(r"\D", "", t)) for t in compiler.llvm_targets if int(re.sub(r"\D", "", t)) < cc.arch_number]
    fallback = max(below) if below else None
    if fallback is not None and fallback < 90:
        return RuntimeJudgement(
            compiler,
            "native",
            "runtime-compiler-targets-gpu",
            f"{who} writes sm_{fallback} PTX for {sm} (the newest its LLVM knows); the ptxas it finds makes the cubin",
            src,
        )
    what = (
        f'it would write sm_{fallback}a PTX, which ptxas cannot compile for {sm} ("Program with .target '
        f"'sm_{fallback}a' cannot be compiled to future architecture\")"
        if fallback is not None
        else "it has no target below it"
    )
    return RuntimeJudgement(
        compiler,
        "fails",
        "runtime-compiler-too-old",
        f"{who} cannot compile for {sm}: its LLVM knows targets up to {top}; {what}",
        src,
        tuple(_fixes(compiler, cc, package, wiring.local)),
    )


def _release_that_decides(compiler: RuntimeCompiler, cc: ComputeCapability) -> CudaVersion | None:
    """For a compiler known only by its CUDA major: a release of that major that answers for all of them (the
    newest when none targets the GPU, the oldest when all do); ``None`` when the exact version matters."""
    if compiler.cuda_major is None:
        return None
    newest = _newest_of_major(compiler.cuda_major)
    oldest = _oldest_of_major(compiler.cuda_major)
    if newest is not None and cc.arch_number not in _arch_numbers(newest):
        return newest  # no release of that major targets the GPU: the exact version does not matter
    if oldest is not None and cc.arch_number in _arch_numbers(oldest):
        return oldest  # every release of that major targets the GPU
    return None


def _version_unknown(
    compiler: RuntimeCompiler, cc: ComputeCapability, who: str, package: str, wiring: Wiring
) -> RuntimeJudgement:
    """A compiler whose release decides and is not known here: the installed one decides (``unknown``)."""
    data = compilers_data()
    if data["conventions"].get(compiler.user, {}).get("ptx_fallback"):
        return RuntimeJudgement(
            compiler,
            "unknown",
            "runtime-compiler-version-unknown",
            f"{who} ({compiler.version_text}): the installed one decides whether it makes a cubin or PTX "
            f"for the driver ({compiler.where})",
            data["conventions"][compiler.user]["source"],
        )
    first = first_toolkit_targeting(cc, compiler.cuda_major)
    need = f" must be CUDA >= {first} to target sm_{cc.arch_number}" if first is not None else ""
    return RuntimeJudgement(
        compiler,
        "unknown",
        "runtime-compiler-version-unknown",
        f"{who} ({compiler.version_text}){need}; the installed one decides ({compiler.where})",
        data["families"][compiler.family]["source"],
        tuple(_fixes(compiler, cc, package, wiring.local)) if need else (),
    )


def _ptx_for_driver(
    compiler: RuntimeCompiler, cc: ComputeCapability, driver: DriverVersion | None, who: str, data: JsonDict
) -> RuntimeJudgement:
    """NVRTC writes PTX and the driver JIT-compiles it, if it knows the PTX ISA: CuPy with
    CUPY_COMPILE_WITH_PTX=1, Warp on its own for a GPU its NVRTC cannot target."""
    from cudafit.rules.tables import driver_max_ptx_isa, toolkit_ptx_isa

    src = data["conventions"][compiler.user]["source"]
    why = "CUPY_COMPILE_WITH_PTX" if compiler.user == "cupy" else "its NVRTC cannot target the GPU"
    isa = toolkit_ptx_isa(compiler.cuda) if compiler.cuda is not None else None
    limit = driver_max_ptx_isa(driver) if driver is not None else None
    if isa is not None and limit is not None and isa > limit:
        return RuntimeJudgement(
            compiler,
            "fails",
            "runtime-ptx-too-new",
            f"{who} writes PTX ISA {isa} ({why}) but driver {driver} JIT-compiles at most {limit}",
            src,
            (f"update the NVIDIA driver to one that supports CUDA {compiler.cuda}",),
        )
    return RuntimeJudgement(
        compiler,
        "jit",
        "runtime-compiler-ptx",
        f"{who} ({compiler.version_text}) writes PTX ({why}) that the driver JIT-compiles for sm_{cc.arch_number}",
        src,
    )


def _who(compiler: RuntimeCompiler, package: str, version: str | None) -> str:
    owner = f"{package} {version}" if package and version else package
    label = {
        "triton": f"Triton's {compiler.name or 'ptxas'}",
        "torch.compile": f"torch.compile ({compiler.where.split(': ')[0]}'s {compiler.name or 'ptxas'})"
        if compiler.evidence != "environment"
        else f"torch.compile (Triton's ptxas from {compiler.where})",
        "xla": "XLA" if compiler.family == "xla" else "the ptxas XLA finds",
        "cupy": "CuPy's NVRTC",
        "warp": "Warp's NVRTC (linked into warp.so)",
        "torch": "torch's NVRTC (jiterator)",
        "nvcc-jit": "the nvcc this JIT library runs"
        if compiler.evidence != "environment"
        else f"nvcc {compiler.where}",
    }.get(
        compiler.user,
        {"nvrtc": "NVRTC", "nvjitlink": "nvJitLink", "nvptxcompiler": "nvPTXCompiler"}.get(
            compiler.family, compiler.family
        ),
    )
    if compiler.evidence == "environment" and compiler.user == "triton":
        return f"{label} from {compiler.where}"
    if compiler.user in ("triton", "xla", "cupy", "warp") and owner and compiler.evidence != "environment":
        return f"{label} in {owner}"
    return label


def release_compilers(dist: str, version: str) -> tuple[RuntimeCompiler, ...] | None:
    """The compilers a measured release of ``dist`` ships (compilers.json ``releases``), with the arch
    bounds of its own selection; ``None`` when that release was not measured."""
    conv = compilers_data()["conventions"]["triton"]
    for row in compilers_data()["releases"].get(dist, []):
        if row["version"] != version:
            continue
        if "llvm_targets_up_to" in row:
            top = row["llvm_targets_up_to"]
            return (RuntimeCompiler("xla", user="xla", llvm_targets=(top,), where=f"{dist} {version}"),)
        second = row.get("second_from_arch", conv["second_from_arch_default"] if len(row["compilers"]) > 1 else None)
        out = []
        for name, cuda in row["compilers"].items():
            is_second = name == "ptxas-blackwell"
            out.append(
                RuntimeCompiler(
                    "ptxas",
                    parse_cuda_version(cuda),
                    where=f"{dist} {version}: {conv['ptxas_second' if is_second else 'ptxas']} (measured)",
                    evidence="measured-release",
                    user="triton",
                    name=name,
                    arch_from=second if is_second else None,
                    arch_below=second if not is_second and second is not None else None,
                )
            )
        return tuple(out)
    return None


def _reaches(c: RuntimeCompiler, cc: ComputeCapability) -> bool:
    """Whether a compiler of known version/targets can make code for ``cc`` (no fixes, no messages)."""
    if c.family == "xla":
        return bool(c.llvm_targets) and int(re.sub(r"\D", "", c.llvm_targets[-1])) >= cc.arch_number
    return c.cuda is not None and cc.arch_number in _arch_numbers(c.cuda)


def _release_fix(dist: str, cc: ComputeCapability) -> str | None:
    """The first measured release of ``dist`` whose compiler (as its own convention picks it) targets ``cc``."""
    for row in compilers_data()["releases"].get(dist, []):
        compilers = release_compilers(dist, row["version"]) or ()
        used = [c for c in compilers if c.used_for(cc)]
        if used and all(_reaches(c, cc) for c in used):
            return str(row["version"])
    return None


def _fixes(
    compiler: RuntimeCompiler, cc: ComputeCapability, package: str, local: tuple[tuple[str, CudaVersion], ...] = ()
) -> list[str]:
    """The real switches: an environment variable the package reads, a newer release, a toolkit on the path.

    ``local`` are the ptxas binaries on this machine with their CUDA release (``doctor``): one that targets
    the GPU is named instead of a placeholder.
    """
    first = first_toolkit_targeting(cc)
    able = next((path for path, cuda in local if cc.arch_number in _arch_numbers(cuda)), None)
    need = f"CUDA >= {first}" if first is not None else "a newer CUDA"
    major = compiler.cuda.major if compiler.cuda is not None else compiler.cuda_major or (first.major if first else 12)
    out: list[str] = []
    sm = f"sm_{cc.arch_number}"
    if compiler.user in ("triton", "torch.compile"):
        conv = compilers_data()["conventions"]["triton"]
        var = conv["env_second"] if compiler.name == "ptxas-blackwell" else conv["env"]
        out.append(
            f"export {var}={able}"
            if able
            else f"export {var}=<the bin/ptxas of a {need} toolkit> (e.g. /usr/local/cuda/bin/ptxas; check it "
            f"first: ptxas --version)"
        )
        release = _release_fix("triton", cc)
        if release is not None:
            out.append(
                f"or install a Triton whose ptxas targets {sm}: pip install 'triton>={release}' (with a torch that "
                f"pins it); cudafit check triton=={release} --gpu {sm} shows it"
            )
    elif compiler.user == "xla":
        if compiler.family == "xla":
            release = _release_fix("jax-cuda12-pjrt", cc)
            pin = f" (jax-cuda12-pjrt >= {release} knows {sm}; cudafit check jax-cuda12-pjrt=={release} shows it)"
            out.append(f"upgrade JAX: pip install -U 'jax[cuda{major}]'" + (pin if release else ""))
        else:
            data_dir = os.path.dirname(os.path.dirname(able)) if able else f"<a {need} toolkit>"
            out.append(
                f"give XLA a {need} ptxas: pip install 'nvidia-cuda-nvcc-cu{major}>={first}' or "
                f"XLA_FLAGS=--xla_gpu_cuda_data_dir={data_dir}"
            )
    elif compiler.family == "nvrtc":
        out.append(f"install a {need} NVRTC: pip install 'nvidia-cuda-nvrtc-cu{major}>={first}'")
        if compiler.user == "cupy":
            out.append("or export CUPY_COMPILE_WITH_PTX=1 (CuPy then writes PTX the driver JIT-compiles)")
    elif compiler.family == "nvjitlink":
        out.append(f"install a {need} nvJitLink: pip install 'nvidia-nvjitlink-cu{major}>={first}'")
    elif compiler.family == "nvcc":
        out.append(
            f"export CUDA_HOME={os.path.dirname(os.path.dirname(able))} (a {need} toolkit of this machine)"
            if able
            else f"install a {need} CUDA toolkit and point CUDA_HOME (and PATH) at it"
        )
    else:
        out.append(f"install a {need} ptxas: pip install 'nvidia-cuda-nvcc-cu{major}>={first}' (or a toolkit on PATH)")
    return out


_LEAD = {"torch.compile": 0, "triton": 1, "xla": 2}


def judge_package(
    compilers: tuple[RuntimeCompiler, ...],
    cc: ComputeCapability,
    wiring: Wiring = NO_WIRING,
    *,
    package: str = "",
    version: str | None = None,
) -> RuntimeJudgement | None:
    """The package's run-time code on one GPU: the worst of the compilers it uses for that GPU.

    ``None`` when it uses none for it.  XLA needs both its LLVM and the ptxas it finds; a ptxas that is
    too old makes XLA fall back to the driver (its "ptxas does not support CC" path), so that pair is
    ``jit`` when XLA's LLVM knows the GPU.
    """
    used = [c for c in compilers if c.used_for(cc)]
    if not used:
        return None
    judged = [judge_compiler(c, cc, wiring, package=package, version=version) for c in used]
    xla = next((j for j in judged if j.compiler.family == "xla"), None)
    if xla is not None and xla.status == "native":
        out = []
        for j in judged:
            if j.compiler.user == "xla" and j.compiler.family == "ptxas" and j.status == "fails":
                j = RuntimeJudgement(  # noqa: PLW2901
                    j.compiler,
                    "jit",
                    "runtime-compiler-driver-fallback",
                    j.message.split(":")[0] + "; XLA falls back to the driver to compile its PTX",
                    compilers_data()["conventions"]["xla"]["source"],
                    j.fixes,
                )
            out.append(j)
        judged = out
    # Worst first; on a tie the compiler of the main compile path (torch.compile, Triton, XLA) leads.
    judged.sort(key=lambda j: (-_badness(j), _LEAD.get(j.compiler.user, len(_LEAD))))
    return replace(judged[0], others=tuple(judged[1:])) if len(judged) > 1 else judged[0]


def _badness(j: RuntimeJudgement) -> int:
    """How bad a judgement is, in the package order (rules/status.py); ``unknown`` counts least here, below
    ``native``: a compiler whose version is unread must not hide one known to fail or to need the driver."""
    return -1 if j.status == "unknown" else severity(j.status)


def lead_label(compilers: tuple[RuntimeCompiler, ...]) -> str | None:
    """A short label for the package's run-time compilation (the matrix's "(+torch.compile)"): the main
    compile path first (torch.compile, Triton, XLA), else the first convention or family."""
    if not compilers:
        return None
    lead = min(compilers, key=lambda c: _LEAD.get(c.user, len(_LEAD)))
    return lead.user or lead.family


def with_runtime(verdict: PackageVerdict, judgement: RuntimeJudgement | None) -> PackageVerdict:
    """A ``PackageVerdict`` with the run-time code's status folded in (the worse wins) and its reason added."""
    if judgement is None or judgement.status == "unknown":
        return verdict
    status = worst([verdict.status, Status(judgement.status)])
    reason = Reason(judgement.code, judgement.message, judgement.source)
    return replace(verdict, status=status, reasons=(*verdict.reasons, reason))
