"""Concrete next steps for a verdict: the command to run, with the numbers filled in.

Fixes only state what the rules and tables establish: the driver a PTX ISA needs (release notes
Table 3), the arch list a rebuild needs (``cudafit plan``), which compute capabilities a CUDA
toolkit major can target at all (``toolkits.json``: CUDA 13 starts at 7.5), how to verify another
build before installing it (``cudafit check``).  Where cudafit cannot know a fact (which future
wheel carries an arch), the fix is the command that finds out.  Every command names the package
that failed; every arch list holds only GPUs the package's toolkit can build for.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cudafit.binary.facts import BinaryFacts
from cudafit.model import ComputeCapability, CudaVersion, Gpu, PtxIsaVersion
from cudafit.plan import ArchTarget, format_arch_targets
from cudafit.rules import tables
from cudafit.rules.ecosystem import CudaVariant, load_ecosystem, normalize_project

if TYPE_CHECKING:
    from cudafit.probe.inventory import Toolchain
    from cudafit.rules.engine import PackageVerdict

__all__ = [
    "CMAKE",
    "OWN_SWITCHES",
    "TORCH_EXTENSION",
    "BuildSwitch",
    "CudaMajor",
    "Fix",
    "arch_list_for",
    "build_switch_of",
    "can_target",
    "cuda_major_of",
    "fixes_for",
    "min_driver_for_ptx_isa",
    "runtime_compile_fixes",
    "sdist_published",
]

_NO_CODE = frozenset(
    {
        "no-compatible-code",
        "built-only-for-other-gpus",
        "partial-modules",
        "hole-build-skips-gpu",
        "hole-file-without-code",
        "hole-library-loaded",
        "library-loaded-all-holes",
    }
)


@dataclass(frozen=True)
class Fix:
    """One fix line with what it is made of, typed: tools act on ``kind`` and the facts, never on ``text``.

    Kinds: ``platform`` (the wheel cannot run on the GPU's machine), ``driver`` (a driver floor:
    ``driver``), ``jit-disabled``, ``untargetable`` (no toolkit of the package's CUDA major targets the GPU;
    ``cuda_major``: the newest major that does), ``find-build`` (a build that carries ``arch``: ``cudafit
    find`` judges the candidates; ``index``: where), ``rebuild`` / ``rebuild-loose`` (``switch``, the arch
    list ``value``),
    ``gap`` (modules without code, a real gap of the build), ``bundled-library`` (``library``), ``jit-cost``.
    """

    kind: str
    package: str
    text: str
    compute_capability: ComputeCapability | None = None
    arch: str | None = None
    cuda_major: int | None = None
    driver: str | None = None
    index: str | None = None
    switch: str | None = None
    value: str | None = None
    library: str | None = None
    alternative: bool = False

    def __str__(self) -> str:
        return ("or " if self.alternative else "") + self.text


@dataclass(frozen=True)
class BuildSwitch:
    """How a project is told which GPUs to build for: an environment variable its build reads, the list's
    spelling (``torch``: ``7.5;8.6+PTX``; ``cmake``: ``75-real;86``; ``numbers``: ``75;86``) and who says so."""

    variable: str
    style: str
    source: str

    def __str__(self) -> str:
        return self.variable

    def value(self, ccs: Sequence[ComputeCapability]) -> str:
        """The arch list for ``ccs`` (PTX of the highest for forward compatibility, where the style has it)."""
        torch, cmake, _flags = format_arch_targets(_with_top_ptx(ccs))
        if self.style == "torch":
            return torch
        if self.style == "cmake":
            return cmake
        return ";".join(str(cc.arch_number) for cc in sorted(set(ccs)))


#: PyTorch C++/CUDA extensions (their files link libc10/libtorch): ``torch.utils.cpp_extension`` reads it.
TORCH_EXTENSION = BuildSwitch(
    "TORCH_CUDA_ARCH_LIST", "torch", "https://pytorch.org/docs/stable/cpp_extension.html (TORCH_CUDA_ARCH_LIST)"
)
#: Any CMake project: the environment variable initialises CMAKE_CUDA_ARCHITECTURES (CMake >= 3.20).
CMAKE = BuildSwitch("CUDAARCHS", "cmake", "https://cmake.org/cmake/help/latest/envvar/CUDAARCHS.html")
#: Projects with their own switch, read by their build scripts (PEP 503 names; a trailing ``*``: a prefix).
OWN_SWITCHES: dict[str, BuildSwitch] = {
    "flash-attn": BuildSwitch(
        "FLASH_ATTN_CUDA_ARCHS", "numbers", "https://github.com/Dao-AILab/flash-attention setup.py"
    ),
    "spconv*": BuildSwitch("CUMM_CUDA_ARCH_LIST", "torch", "https://github.com/FindDefinition/cumm (README)"),
    "cumm*": BuildSwitch("CUMM_CUDA_ARCH_LIST", "torch", "https://github.com/FindDefinition/cumm (README)"),
}
_TORCH_LIBS = re.compile(r"^lib(?:c10|c10_cuda|torch|torch_cuda|torch_cpu|torch_python)\.so$")


def build_switch_of(package: str, files: Iterable[BinaryFacts]) -> BuildSwitch:
    """The switch a rebuild of ``package`` must set: its own (:data:`OWN_SWITCHES`), PyTorch's when its
    binaries are PyTorch extensions (they link libc10/libtorch), else CMake's."""
    name = normalize_project(package)
    for key, switch in OWN_SWITCHES.items():
        if name == key or (key.endswith("*") and name.startswith(key[:-1])):
            return switch
    if any(_TORCH_LIBS.match(n) for f in _iter_units(files) for n in f.needed):
        return TORCH_EXTENSION
    return CMAKE


def sdist_published(package: str, version: str) -> bool | None:
    """Whether PyPI has a source distribution of ``package==version`` (``pip install --no-binary`` needs one).

    Asked once from PyPI's JSON API (https://docs.pypi.org/api/json/) and remembered in cudafit's cache
    directory; ``None`` when it cannot be checked (``CUDAFIT_OFFLINE=1``, no network).
    """
    import json
    import urllib.request

    from cudafit.targets.cache import cache_dir

    key = f"{normalize_project(package)}=={version}"
    path = os.path.join(cache_dir(), "pypi-sdists.json")
    try:
        with open(path, encoding="utf-8") as fh:
            known = json.load(fh)
    except (OSError, ValueError):
        known = {}
    if isinstance(known, dict) and isinstance(known.get(key), bool):
        return bool(known[key])
    if os.environ.get("CUDAFIT_OFFLINE") == "1":
        return None
    url = f"https://pypi.org/pypi/{normalize_project(package)}/{version}/json"
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            doc = json.load(resp)
        found = any(u.get("packagetype") == "sdist" for u in doc.get("urls", []))
    except (OSError, ValueError, AttributeError):
        return None
    known = known if isinstance(known, dict) else {}
    known[key] = found
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(known, fh)
        os.replace(tmp, path)
    except OSError:
        pass
    return found


@dataclass(frozen=True)
class CudaMajor:
    """The CUDA major a package was built with, and the evidence (``libcudart.so.13``, ``PTX ISA 9.0``)."""

    major: int
    evidence: str


def _iter_units(facts: Iterable[BinaryFacts]) -> Iterable[BinaryFacts]:
    for f in facts:
        yield f
        yield from _iter_units(f.members)


_PTX_VERSIONS: dict[int, tuple[weakref.ref[BinaryFacts], tuple[int, int] | None]] = {}


def _max_ptx_version(unit: BinaryFacts) -> tuple[int, int] | None:
    """The newest PTX ISA (as a code version) in a file, remembered per facts object (weakly: nothing is kept
    alive): a fleet asks for the same package's toolkit once per class."""
    hit = _PTX_VERSIONS.get(id(unit))
    if hit is not None and hit[0]() is unit:
        return hit[1]
    from cudafit.binary.facts import EntryKind

    best = max((e.code_version for m in unit.modules for e in m.entries if e.kind is EntryKind.PTX), default=None)
    key = id(unit)
    _PTX_VERSIONS[key] = (weakref.ref(unit, lambda _r: _PTX_VERSIONS.pop(key, None)), best)
    return best


def cuda_major_of(files: Iterable[BinaryFacts]) -> CudaMajor | None:
    """The toolkit major a package's binaries were built with.

    The CUDA runtime a library links (``DT_NEEDED libcudart.so.N``) is its toolkit's major: nvcc
    links the runtime of its own toolkit.  Statically linked runtimes leave no such entry; then the
    PTX ISA of embedded PTX says it (ISA 7.x is CUDA 11, 8.x CUDA 12, 9.x CUDA 13: release notes
    Table 3).  ``None`` when neither is there.  Several majors: the newest, which targets the fewest
    old GPUs, so no suggested arch list holds a GPU one of its files cannot be built for.
    """
    units = list(_iter_units(files))
    linked = {int(m.group(1)) for u in units for n in u.needed if (m := re.match(r"libcudart\.so\.(\d+)", n))}
    if linked:
        top = max(linked)
        return CudaMajor(top, f"libcudart.so.{top}")
    versions = [v for v in (_max_ptx_version(u) for u in units) if v is not None]
    if not versions:
        return None
    isa = PtxIsaVersion(*max(versions))
    t = tables.load_tables()
    emitting = [cuda for cuda in sorted(t.ptx_isa) if t.ptx_isa[cuda] >= isa]
    cuda = emitting[0] if emitting else max(t.ptx_isa)
    return CudaMajor(cuda.major, f"PTX ISA {isa}")


def _toolkits(major: int | None = None) -> list[CudaVersion]:
    return sorted(k for k in tables.load_tables().targets if major is None or k.major == major)


@functools.lru_cache(maxsize=64)
def _toolkit_sms(cuda: CudaVersion) -> frozenset[str]:
    """The ``sm_XY`` names a toolkit builds real code for; cached: a fix asks it for every toolkit and GPU."""
    return frozenset(str(a) for a in tables.load_tables().targets[cuda])


def _toolkits_targeting(ccs: Iterable[ComputeCapability], major: int | None = None) -> list[CudaVersion]:
    """Toolkits in the table (of ``major`` if given) whose nvcc builds real code for every one of ``ccs``."""
    sms = {f"sm_{cc.arch_number}" for cc in ccs}
    return [k for k in _toolkits(major) if sms <= _toolkit_sms(k)]


def can_target(major: int | None, cc: ComputeCapability) -> bool:
    """Whether some toolkit of this CUDA major (any, when ``None``) builds real code for ``cc``."""
    return bool(_toolkits_targeting([cc], major))


def _newest_major_for(cc: ComputeCapability) -> int | None:
    found = _toolkits_targeting([cc])
    return found[-1].major if found else None


def arch_list_for(ccs: Sequence[ComputeCapability], *, ptx: bool = True) -> str:
    """``TORCH_CUDA_ARCH_LIST`` covering ``ccs`` (PTX of the highest for forward compatibility)."""
    return format_arch_targets(_with_top_ptx(ccs, ptx=ptx))[0]


def _with_top_ptx(ccs: Sequence[ComputeCapability], *, ptx: bool = True) -> list[ArchTarget]:
    """SASS for each of ``ccs``, plus PTX of the highest (forward compatibility)."""
    uniq = sorted(set(ccs))
    return [ArchTarget(cc, virtual=ptx and cc == uniq[-1]) for cc in uniq]


def min_driver_for_ptx_isa(isa: PtxIsaVersion) -> tuple[CudaVersion, str] | None:
    """The oldest toolkit emitting ``isa`` and its minimum Linux driver: the driver that can JIT it."""
    t = tables.load_tables()
    for cuda in sorted(t.ptx_isa):
        if t.ptx_isa[cuda] >= isa:
            drv = tables.toolkit_min_driver(cuda)
            if drv is not None:
                return cuda, str(drv)
    return None


def _pytorch_indexes(cc: ComputeCapability, major: int | None, *, oldest_first: bool) -> list[CudaVariant]:
    """The current PyTorch release's CUDA variants whose toolkit can build for ``cc`` (of ``major`` if given)."""
    sm = f"sm_{cc.arch_number}"
    found = [
        v
        for v in load_ecosystem().current_variants
        if (major is None or v.cuda.major == major) and sm in _toolkit_sms(v.cuda)
    ]
    return found if oldest_first else found[::-1]


def _index_hint(package: str, cc: ComputeCapability, major: int | None, *, oldest_first: bool) -> str:
    """``--index-url ...`` for packages installed from PyTorch's per-CUDA indexes, else how to add one."""
    if load_ecosystem().is_on_pytorch_index(package):
        variants = _pytorch_indexes(cc, major, oldest_first=oldest_first)
        if variants:
            more = f" (or {', '.join(v.name for v in variants[1:])})" if len(variants) > 1 else ""
            return f" --index-url {variants[0].index_url}{more}"
    if major is None:
        return " (add --index-url for per-CUDA indexes)"
    return f" (add --index-url of an index with CUDA {major}.x builds)"


_Ccs = list[ComputeCapability]


@dataclass(frozen=True)
class _Case:
    """One cell to fix (a package on a GPU) and what every fix for it must respect, passed as one value
    rather than threaded as eight arguments: the other GPUs a rebuild keeps, their statuses today, the
    package's CUDA major (``None``: unknown) and the switch its build reads."""

    package: str
    version: str | None
    gpu: Gpu
    verdict: PackageVerdict
    all_gpus: Sequence[Gpu]
    distribution: bool
    major: int | None
    statuses: Sequence[str] | None
    switch: BuildSwitch

    @property
    def cc(self) -> ComputeCapability:
        return self.gpu.compute_capability

    @property
    def vendor(self) -> bool:
        """Only NVIDIA or the framework builds it: never a source build."""
        name = normalize_project(self.package)
        return name.startswith("nvidia-") or load_ecosystem().is_binary_only(name)


def fixes_for(
    package: str,
    version: str | None,
    gpu: Gpu,
    verdict: PackageVerdict,
    *,
    all_gpus: Sequence[Gpu],
    distribution: bool = True,
    cuda: CudaMajor | None = None,
    statuses: Sequence[str] | None = None,
    path: str | None = None,
    switch: BuildSwitch | None = None,
) -> list[Fix]:
    """Fixes for ``package`` on ``gpu`` given its PackageVerdict (empty when nothing needs fixing).

    ``cuda`` is the package's toolkit major (:func:`cuda_major_of`); ``statuses`` the package's
    status on each of ``all_gpus`` (a rebuild replaces the build, so it must keep the GPUs that
    run today); ``path`` where its files are (for the command that lists its kernels).
    """
    status = verdict.status.value
    cc = gpu.compute_capability
    out: list[Fix] = []
    wrong = _wrong_platform(path, cc)
    if wrong:  # said first: nothing else matters if the wheel cannot be installed there
        out.append(Fix("platform", package, wrong, cc))
    if status == "jit":
        text = (
            f"runs by PTX JIT on {cc}: the first launch compiles (cached in ~/.nv/ComputeCache), and kernels "
            f"that check __CUDA_ARCH__ take the lower arch's path; a build with sm_{cc.arch_number} avoids both"
        )
        out.append(Fix("jit-cost", package, text, cc, arch=f"sm_{cc.arch_number}"))
    if status not in ("fails", "partial"):
        return out
    floor = _runtime_floor_fix(package, cc, verdict)
    if floor is not None:
        # The runtime cannot start: nothing else matters on this driver, and an arch fix computed under it
        # would change with the driver alone.
        return [*out, floor]
    out += _reason_fixes(package, cc, verdict)
    if {r.code for r in verdict.reasons} & _NO_CODE or not out:  # every failing cell gets a fix, whatever its codes
        major = cuda.major if cuda is not None else None
        case = _Case(package, version, gpu, verdict, all_gpus, distribution, major, statuses, switch or TORCH_EXTENSION)
        out += _no_code_fixes(case)
    return out


def _needed_ptx_isa(verdict: PackageVerdict) -> PtxIsaVersion | None:
    """The newest PTX ISA the package's modules need the driver's JIT to accept."""
    isas = [m.needs_ptx_isa for f in verdict.files for m in f.modules if m.needs_ptx_isa is not None]
    return max(isas) if isas else None


def _runtime_floor_fix(package: str, cc: ComputeCapability, verdict: PackageVerdict) -> Fix | None:
    """The driver fix when the package's CUDA runtime cannot start on this driver (with the JIT's own floor
    when its PTX needs a newer one), or ``None``."""
    floor = next((r.data for r in verdict.reasons if r.code == "driver-too-old-for-runtime" and r.data), None)
    if floor is None or floor.driver_floor is None:
        return None
    isa = _needed_ptx_isa(verdict)
    jit = min_driver_for_ptx_isa(isa) if isa is not None else None
    if jit is not None and int(jit[1].split(".")[0]) >= floor.driver_floor:
        text = (
            f"upgrade the NVIDIA driver to >= {jit[1]} (this package's CUDA {floor.cuda_major} runtime needs "
            f"the {floor.driver_floor} branch, its PTX ISA {isa} that driver's JIT), or install a "
            "build for an older CUDA major"
        )
        return Fix("driver", package, text, cc, cuda_major=floor.cuda_major, driver=jit[1])
    text = (
        f"upgrade the NVIDIA driver to the {floor.driver_floor} branch or newer (this package's CUDA "
        f"{floor.cuda_major} runtime needs it), or install a build for an older CUDA major"
    )
    return Fix("driver", package, text, cc, cuda_major=floor.cuda_major, driver=str(floor.driver_floor))


def _reason_fixes(package: str, cc: ComputeCapability, verdict: PackageVerdict) -> list[Fix]:
    """Fixes named by the verdict's reasons: a driver whose JIT accepts the PTX, PTX JIT left enabled, and
    why library-loaded code fails (said before what would fix it)."""
    codes = {r.code for r in verdict.reasons}
    out: list[Fix] = []
    if "ptx-isa-too-new-for-driver" in codes:
        needed = _needed_ptx_isa(verdict)
        found = min_driver_for_ptx_isa(needed) if needed else None
        if found:
            cuda_v, drv = found
            text = f"upgrade the NVIDIA driver to >= {drv} (CUDA {cuda_v}), whose JIT accepts PTX ISA {needed}"
            out.append(Fix("driver", package, text, cc, driver=drv))
    if "jit-disabled" in codes:
        out.append(Fix("jit-disabled", package, "unset CUDA_DISABLE_PTX_JIT: this package has only PTX for this GPU"))
    if "library-loaded-all-holes" in codes:
        why = next(r.message for r in verdict.reasons if r.code == "library-loaded-all-holes")
        text = f"{why}: the first operation that needs them fails (add --kernels to name them all)"
        out.append(Fix("gap", package, text))
    return out


def _no_code_fixes(case: _Case) -> list[Fix]:
    """Some or all of the package's code has nothing for the GPU: the builds and rebuilds that would."""
    package, cc = case.package, case.cc
    if not can_target(case.major, cc):
        return _untargetable(package, cc, case.major, vendor=case.vendor, distribution=case.distribution)
    if case.verdict.status.value == "partial":
        return _partial_fixes(case)
    sm = f"sm_{cc.arch_number}"
    hint = _index_hint(package, cc, None, oldest_first=False)
    if case.vendor:
        text = f"install a build of {package} that carries {sm} code: cudafit find '{package}' --gpu {cc}"
        return [Fix("find-build", package, text, cc, arch=sm, index=hint.strip() or None)]
    if not case.distribution:
        return [_rebuild(case, loose=True)]
    text = f"find the build of {package} that carries {sm} code: cudafit find '{package}' --gpu {cc}"
    return [
        Fix("find-build", package, text, cc, arch=sm, index=hint.strip() or None),
        dataclasses.replace(_rebuild(case), alternative=True),
    ]


def _partial_fixes(case: _Case) -> list[Fix]:
    """Some modules have no code for the GPU: the gap (in the package or in an NVIDIA library it bundles)
    and, for a distribution that can be rebuilt, the rebuild."""
    package, cc = case.package, case.cc
    reasons = case.verdict.reasons
    holes = [r.data for r in reasons if r.code == "hole-file-without-code" and r.data and r.data.path]
    if holes and all(h.library for h in holes):  # the gap is in a bundled NVIDIA library, not in the package
        libs = ", ".join(dict.fromkeys(f"{h.library} ({h.path})" for h in holes))
        text = (
            f"the NVIDIA library {package} bundles, {libs}, has no code for {cc}: what {package} does with it "
            f"fails here, and rebuilding {package} does not change it; find the build of {package} that bundles "
            f"one with sm_{cc.arch_number} code: cudafit find '{package}' --gpu {cc}"
        )
        library = ", ".join(dict.fromkeys(str(h.library) for h in holes))
        return [Fix("bundled-library", package, text, cc, arch=f"sm_{cc.arch_number}", library=library)]
    files = [h.path for h in holes if h.path]
    within = f" (all of {', '.join(files)})" if files else ""
    text = (
        f"{case.verdict.counts.fails} module(s) of {package} have no code for {cc}{within}: the operations that "
        f"launch their kernels fail with 'no kernel image' on this GPU; add --kernels to this command to name them"
    )
    out = [Fix("gap", package, text, cc, arch=f"sm_{cc.arch_number}")]
    if case.vendor:
        return out  # a vendor/framework binary: nothing to rebuild, but the gap is real
    if case.distribution:
        out.append(_rebuild(case))
    return out


_WHEEL_PLATFORM = re.compile(
    r"-((?:many|musl)?linux[_0-9a-z]*?_(x86_64|i686|aarch64|ppc64le|s390x)|win_amd64|win32|macosx[_0-9a-z]+|any)\.whl$"
)


def _wrong_platform(path: str | None, cc: ComputeCapability) -> str | None:
    """A wheel whose platform cannot run where the GPU is: Jetson (Tegra) GPUs sit in aarch64 machines."""
    m = _WHEEL_PLATFORM.search(os.path.basename((path or "").split("!")[0]))
    if m is None or not tables.is_tegra(cc) or m.group(1) == "any" or m.group(2) == "aarch64":
        return None
    return (
        f"this wheel is built for {m.group(1)}, a Jetson ({cc}) is aarch64: it cannot be installed there; "
        "use an aarch64 (Jetson) build"
    )


def _untargetable(
    package: str, cc: ComputeCapability, major: int | None, *, vendor: bool, distribution: bool
) -> list[Fix]:
    """No toolkit of the package's CUDA major builds for ``cc`` (CUDA 13 dropped everything below 7.5):
    no rebuild of this build can help; a build made with an older major, or another GPU, can."""
    older = _newest_major_for(cc)
    if older is None or major is None:  # major None: only when no toolkit in the table targets cc
        since = _toolkits()[0]
        last = tables.last_cuda_toolkit(cc)
        # the compute-capability table knows the last toolkit of a GPU older than every toolkit of the targets table
        nor = f"CUDA {last} was the last toolkit that could" if last else f"nor can any CUDA toolkit from {since} on"
        if major is None:
            what = f"no CUDA toolkit from {since} on can target {cc}" + (f" (the last was CUDA {last})" if last else "")
            return [Fix("untargetable", package, f"{what}: use another GPU", cc)]
        text = f"CUDA {major} cannot target {cc}, {nor}: use another GPU"
        return [Fix("untargetable", package, text, cc)]
    # One shared line per root cause: every package of a CUDA-13 stack fails on Pascal for this one reason.
    text = f"CUDA {major} cannot target {cc}: use a build made with CUDA {older}.x, or another GPU"
    out = [Fix("untargetable", package, text, cc, cuda_major=older)]
    if not distribution:
        return out
    if vendor and not load_ecosystem().is_on_pytorch_index(package):
        return out  # NVIDIA's libraries come with the framework's CUDA build: the framework's line says which
    hint = _index_hint(package, cc, older, oldest_first=True)
    text = f"find a CUDA {older}.x build of {package} that runs here: cudafit find '{package}' --gpu {cc}"
    out.append(Fix("find-build", package, text, cc, arch=f"sm_{cc.arch_number}", cuda_major=older, index=hint.strip()))
    return out


def _rebuild_gpus(
    case: _Case,
) -> tuple[int | None, list[ComputeCapability], list[ComputeCapability], list[ComputeCapability]]:
    """(the CUDA major assumed, GPUs the rebuild builds for, those that run today besides this one, those no
    toolkit of the major can target)."""
    cc = case.cc
    assumed = case.major
    if assumed is None and not _toolkits_targeting([g.compute_capability for g in case.all_gpus]):
        assumed = _newest_major_for(cc)  # no one toolkit builds for all of them: the newest that builds for this GPU
    kept: _Ccs = []
    left_out: _Ccs = []
    runs: _Ccs = []
    for i, g in enumerate(case.all_gpus):
        other = g.compute_capability
        if can_target(assumed, other):
            kept.append(other)
            if other != cc and case.statuses is not None and case.statuses[i] in ("native", "jit"):
                runs.append(other)
        else:
            left_out.append(other)
    return assumed, sorted(set(kept)), sorted(set(runs) - {cc}), sorted(set(left_out))


def _rebuild(case: _Case, *, loose: bool = False) -> Fix:
    """The source build that adds the GPU and keeps every other GPU that this toolkit major can target.

    A rebuild replaces the installed build, so GPUs that run it today stay in the list (seed 001:
    ``7.5;8.6`` on a 2080 + 3090 host); GPUs no toolkit of the major can target are left out and named.
    """
    package, version, cc, major = case.package, case.version, case.cc, case.major
    assumed, kept, runs, left_out = _rebuild_gpus(case)
    adds = [k for k in kept if k not in runs]
    notes = [f"adds {', '.join(map(str, adds))}"]
    if runs:
        notes[0] += f" and keeps {', '.join(map(str, runs))}, which {'runs' if len(runs) == 1 else 'run'} today"
    if left_out:
        who = f"CUDA {assumed}" if assumed is not None else "no one CUDA toolkit"
        notes.append(f"{who} cannot target {', '.join(map(str, left_out))}")
    toolkit, plan_cuda = _toolkit_phrase(kept, major)
    plan = "cudafit plan" + (f" --cuda {plan_cuda}" if plan_cuda else "") + "".join(f" --gpu {k}" for k in kept)
    notes.append(f"plan: {plan}")
    arch = f"sm_{cc.arch_number}"
    if loose:
        gencode = _gencode(kept)
        text = f"rebuild the binaries in {package}{toolkit} for these GPUs: nvcc {gencode} ({'; '.join(notes)})"
        return Fix("rebuild-loose", package, text, cc, arch=arch, cuda_major=major, value=gencode)
    spec = f"{package}=={version}" if version else package
    value = case.switch.value(kept)
    setting = f'{case.switch.variable}="{value}"'
    sdist = sdist_published(package, version) if version else None
    if sdist is False:  # pip's --no-binary would fail: nothing to build from on the index
        text = (
            f"rebuild {package}{toolkit} for these GPUs from its source repository ({spec} publishes no source "
            f"distribution on PyPI): {setting} ({'; '.join(notes)})"
        )
    else:
        unknown = "" if sdist else f"; whether PyPI has a source distribution of {spec} could not be checked"
        text = (
            f"rebuild {package}{toolkit} for these GPUs: {setting} pip install "
            f"--no-binary {package} --no-build-isolation '{spec}' ({'; '.join(notes)}{unknown})"
        )
    return Fix("rebuild", package, text, cc, arch=arch, cuda_major=major, switch=case.switch.variable, value=value)


def _toolkit_phrase(ccs: Sequence[ComputeCapability], major: int | None) -> tuple[str, CudaVersion | None]:
    """`` with CUDA 13.x`` / `` with CUDA >= 12.8``, and the toolkit ``cudafit plan --cuda`` should check."""
    able = _toolkits_targeting(ccs, major)
    if not able:
        return "", None
    lo = able[0]
    if major is not None:
        first = _toolkits(major)[0]
        return (f" with CUDA {major}.x" if lo == first else f" with CUDA {major}.x >= {lo}"), lo
    if lo == _toolkits()[0]:
        return "", None
    return f" with CUDA >= {lo}", lo


def runtime_compile_fixes(runtime_compiled: str | None, gpu: Gpu, toolchains: Sequence[Toolchain]) -> list[str]:
    """Packages that compile device code at run time need a compiler that knows the GPU's arch.

    Triton compiles with its bundled ptxas (``TRITON_PTXAS_PATH`` overrides it); JIT libraries such as
    flashinfer call nvcc.  A toolchain's targets come from ``nvcc --list-gpu-code`` or, for a ptxas,
    from its version and the toolkit table (fatbin_spec.md §E.7).
    """
    sm = f"sm_{gpu.compute_capability.arch_number}"
    by_name = {t.name: t for t in toolchains}
    nvcc = by_name.get("nvcc")
    out: list[str] = []
    if runtime_compiled == "triton":
        ptxas = by_name.get("triton-ptxas")
        if ptxas is not None and ptxas.targets and sm not in ptxas.targets:
            better = (
                os.path.join(os.path.dirname(nvcc.path), "ptxas")
                if nvcc is not None and nvcc.path and sm in nvcc.targets
                else "<a CUDA toolkit's bin/ptxas that lists " + sm + ">"
            )
            out.append(
                f"Triton's ptxas (CUDA {ptxas.version}) cannot compile for {sm}: export TRITON_PTXAS_PATH={better}"
            )
    elif runtime_compiled == "nvcc-jit":
        if nvcc is None or nvcc.path is None:
            out.append("this package compiles kernels with nvcc at first use: install a CUDA toolkit and set CUDA_HOME")
        elif nvcc.targets and sm not in nvcc.targets:
            out.append(
                f"nvcc {nvcc.version} ({nvcc.path}) cannot target {sm}, which this package's run-time compilation "
                f"needs: install a newer CUDA toolkit and point CUDA_HOME at it"
            )
    return out


def _gencode(ccs: Sequence[ComputeCapability]) -> str:
    return " ".join(format_arch_targets(_with_top_ptx(ccs))[2])
