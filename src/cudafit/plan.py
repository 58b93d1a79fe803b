"""``cudafit plan``: build flags for a set of GPUs, checked against what the toolkit can build.

For each distinct compute capability: SASS for exactly that CC (native code, no JIT at first
launch), plus PTX of the highest CC for forward compatibility: "PTX can be JIT compiled at
application runtime for any compute capability equal or higher to the compute capability of the
PTX code" (CUDA Programming Guide 13 §1.3.4.2,
https://docs.nvidia.com/cuda/cuda-programming-guide/01-introduction/cuda-platform.html).
``a``/``f`` variants only when asked: they unlock arch-specific instructions, but ``a`` code runs
only on exactly its CC and ``f`` code only on its family (§5.1.2.1-5.1.2.2,
https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/compute-capabilities.html).
Every target is checked against the toolkit's real targets: ``nvcc --list-gpu-code`` (which omits
a/f variants; the rules table supplies them) or the rules table for a stated CUDA version.

Syntax: ``TORCH_CUDA_ARCH_LIST`` takes ``;``- or space-separated ``X.Y`` with ``+PTX`` to add PTX
(torch.utils.cpp_extension); ``CMAKE_CUDA_ARCHITECTURES`` takes ``XY-real`` (SASS only),
``XY-virtual`` (PTX only) and plain ``XY`` (both)
(https://cmake.org/cmake/help/latest/prop_tgt/CUDA_ARCHITECTURES.html); nvcc takes
``-gencode arch=compute_XY,code=sm_XY`` (SASS) and ``code=compute_XY`` (PTX)
(https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/#options-for-steering-gpu-code-generation).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from cudafit.model import ComputeCapability, CudaVersion, Gpu, JsonDict

__all__ = [
    "ArchTarget",
    "NvccInfo",
    "Plan",
    "format_arch_targets",
    "make_plan",
    "query_nvcc",
    "toolkit_targets_for",
    "toolkits_targeting",
    "uncoverable_problem",
]

Runner = Callable[[Sequence[str], float], "tuple[int, str, str]"]

_RELEASE = re.compile(r"release (\d+\.\d+)")


@dataclass(frozen=True)
class ArchTarget:
    """One entry of a build's arch list: SASS (``real``) and/or PTX (``virtual``) for a compute capability,
    with its ``a``/``f`` variant (``""`` for none)."""

    cc: ComputeCapability
    variant: str = ""
    real: bool = True
    virtual: bool = False


def format_arch_targets(targets: Sequence[ArchTarget]) -> tuple[str, str, tuple[str, ...]]:
    """(``TORCH_CUDA_ARCH_LIST``, ``CMAKE_CUDA_ARCHITECTURES``, nvcc ``-gencode`` flags) for ``targets``, in order.

    torch: ``X.Y`` is SASS, ``+PTX`` adds PTX of the same arch; it has no PTX-only entry, so a PTX-only
    target becomes ``X.Y+PTX`` (plain SASS too).  CMake: ``XY-real``, ``XY-virtual``, plain ``XY`` for
    both.  nvcc: one ``code=sm_XY`` flag per SASS target, then one ``code=compute_XY`` per PTX target.
    """
    torch: list[str] = []
    cmake: list[str] = []
    sass: list[str] = []
    ptx: list[str] = []
    for t in targets:
        n, v = t.cc.arch_number, t.variant
        if t.real and t.virtual:
            torch.append(f"{t.cc}{v}+PTX")
            cmake.append(f"{n}{v}")
        elif t.real:
            torch.append(f"{t.cc}{v}")
            cmake.append(f"{n}{v}-real")
        elif t.virtual:
            torch.append(f"{t.cc}{v}+PTX")
            cmake.append(f"{n}{v}-virtual")
        if t.real:
            sass.append(f"-gencode arch=compute_{n}{v},code=sm_{n}{v}")
        if t.virtual:
            ptx.append(f"-gencode arch=compute_{n}{v},code=compute_{n}{v}")
    return ";".join(torch), ";".join(cmake), tuple(sass + ptx)


@dataclass(frozen=True)
class Plan:
    """Flags for three build systems, what each choice buys and costs, and GPUs left uncovered."""

    gpus: tuple[Gpu, ...]
    toolkit: str
    torch_cuda_arch_list: str
    cmake_cuda_architectures: str
    nvcc_flags: tuple[str, ...]
    explanations: tuple[str, ...]
    problems: tuple[str, ...] = field(default=())

    def to_dict(self) -> JsonDict:
        """``cudafit.plan/1``."""
        return {
            "schema": "cudafit.plan/1",
            "gpus": [{"name": g.name, "compute_capability": str(g.compute_capability)} for g in self.gpus],
            "toolkit": self.toolkit,
            "torch_cuda_arch_list": self.torch_cuda_arch_list,
            "cmake_cuda_architectures": self.cmake_cuda_architectures,
            "nvcc_flags": list(self.nvcc_flags),
            "explanations": list(self.explanations),
            "problems": list(self.problems),
        }


@dataclass(frozen=True)
class NvccInfo:
    """What one nvcc says about itself: version (``13.0``) and real targets (``sm_75``...)."""

    path: str
    version: str | None
    targets: tuple[str, ...]
    source: str
    problem: str | None = None


def toolkits_targeting(sm: str) -> tuple[CudaVersion, ...]:
    """The toolkits of the rules table whose nvcc can build ``sm`` (``sm_61``), oldest first."""
    from cudafit.rules import tables

    return tuple(c for c, t in sorted(tables.load_tables().targets.items()) if sm in {str(x) for x in t})


def toolkit_targets_for(cuda: CudaVersion | None) -> tuple[str, list[str]]:
    """(label, targets) from the rules table: the stated CUDA version, else the newest known."""
    from cudafit.rules import tables

    t = tables.load_tables()
    version = cuda or max(t.targets)
    return f"CUDA {version} (rules table)", [str(s) for s in tables.toolkit_targets(version)]


def query_nvcc(exe: str, runner: Runner) -> NvccInfo:
    """Ask ``exe`` for ``--version`` and ``--list-gpu-code``; the rules table fills what it cannot say.

    ``--list-gpu-code`` omits ``a``/``f`` variants (fatbin_spec.md §E.7): those of the table's
    entry for the same release are added where their base target is listed.  An nvcc without
    ``--list-gpu-code`` gets the table's list for its version.
    """
    from cudafit.model import parse_cuda_version

    rc, out, err = runner([exe, "--version"], 10.0)
    m = _RELEASE.search(out) if rc == 0 else None
    version = m.group(1) if m else None
    if rc != 0:
        return NvccInfo(exe, None, (), "none", (err or out).strip() or f"{exe} --version: exit code {rc}")
    rc, out, err = runner([exe, "--list-gpu-code"], 10.0)
    listed = tuple(t for t in out.split() if re.fullmatch(r"sm_\d+[af]?", t)) if rc == 0 else ()
    table: list[str] = []
    if version:
        _label, table = toolkit_targets_for(parse_cuda_version(version))
    if listed:
        variants = tuple(t for t in table if t[-1] in "af" and t.rstrip("af") in listed and t not in listed)
        return NvccInfo(exe, version, listed + variants, "nvcc --list-gpu-code")
    if table:
        why = (err or out).strip().splitlines()[:1] or [f"exit code {rc}"]
        return NvccInfo(exe, version, tuple(table), f"rules table for CUDA {version} (--list-gpu-code: {why[0]})")
    return NvccInfo(exe, version, (), "none", f"{exe} lists no targets and its version is unknown")


def uncoverable_problem(cc: ComputeCapability, names: str, toolkit: str) -> str:
    """Why ``toolkit`` cannot build code for ``cc`` (used by ``names``), and which toolkit can."""
    sm = f"sm_{cc.arch_number}"
    able = toolkits_targeting(sm)
    # which major release dropped the GPU's generation (the release notes: CUDA 12 dropped Kepler, CUDA 13 Maxwell,
    # Pascal and Volta)
    dropped = {11: " (CUDA 12 dropped Kepler)", 12: " (CUDA 13 dropped Maxwell, Pascal and Volta)"}
    label = names if names == f"compute capability {cc}" else f"{names} ({cc})"
    if able:
        where = f"; the newest toolkit in cudafit's table that targets it is CUDA {able[-1]}"
        where += dropped.get(able[-1].major, "")
        return (
            f"{toolkit} cannot build {sm} for {label}{where}: build for it with that toolkit "
            f"(cudafit plan --cuda {able[-1]} ...), or drop it"
        )
    from cudafit.rules import tables

    last = tables.last_cuda_toolkit(cc)
    if last:
        return (
            f"{toolkit} cannot build {sm} for {label}; CUDA {last} was the last toolkit that targets it (older than "
            f"every toolkit in cudafit's table): build for it with CUDA {last} or older, or drop it"
        )
    return f"{toolkit} cannot build {sm} for {label}; no CUDA toolkit cudafit knows targets it: drop it"


def make_plan(
    gpus: Sequence[Gpu],
    *,
    targets: Sequence[str],
    toolkit: str,
    arch_specific: bool | str = False,
    ptx: bool = True,
) -> Plan:
    """Plan flags for ``gpus`` with a toolkit that can build ``targets`` (``sm_XY[a|f]`` names).

    ``arch_specific``: ``False``, ``"a"`` (or ``True``) for exact-CC targets, ``"f"`` for family
    targets (one ``f`` target covers every GPU of its family in the set).
    """
    from cudafit.rules import tables

    variant = "a" if arch_specific is True else (arch_specific or "")
    available = set(targets)
    ccs = sorted({g.compute_capability for g in gpus})
    problems: list[str] = []
    explain: list[str] = []
    chosen: list[ArchTarget] = []  # one SASS entry per buildable compute capability, lowest first
    covered: set[ComputeCapability] = set()
    for cc in ccs:
        if cc in covered:
            continue
        n = cc.arch_number
        suffix = variant if variant and f"sm_{n}{variant}" in available else ""
        if f"sm_{n}" not in available and not suffix:
            problems.append(uncoverable_problem(cc, _names(gpus, {cc}), toolkit))
            continue
        # an f target also covers the later members of its family in the set
        also = [c for c in ccs if c in tables.family_members(n) and c > cc] if suffix == "f" else []
        covered.update(also)
        chosen.append(ArchTarget(cc, suffix))
        explain.append(_sass_explanation(cc, suffix, _names(gpus, {cc, *also}), ccs))
    if variant and chosen and not any(t.variant for t in chosen):
        explain.append(f"--arch-specific {variant}: the toolkit has no '{variant}' targets for these GPUs")
    if ptx and chosen:
        explain.extend(_add_ptx(chosen))
    elif chosen:
        explain.append("no PTX: only the GPUs listed run this build; a newer GPU fails with 'no kernel image'")
    torch_list, cmake_list, flags = format_arch_targets(chosen)
    return Plan(
        gpus=tuple(gpus),
        toolkit=toolkit,
        torch_cuda_arch_list=torch_list,
        cmake_cuda_architectures=cmake_list,
        nvcc_flags=flags,
        explanations=tuple(explain),
        problems=tuple(problems),
    )


def _names(gpus: Sequence[Gpu], ccs: set[ComputeCapability]) -> str:
    """The names of the GPUs with one of ``ccs``, in the order given (each GPU named as the user did)."""
    return ", ".join(g.name for g in gpus if g.compute_capability in ccs)


def _sass_explanation(cc: ComputeCapability, suffix: str, names: str, ccs: Sequence[ComputeCapability]) -> str:
    """What the SASS entry for ``cc`` (``suffix``: ``""``, ``a`` or ``f``) buys and costs for the set ``ccs``."""
    from cudafit.rules import tables

    what = f"sm_{cc.arch_number}{suffix}: native code for {names} ({cc}), no JIT at first launch"
    if suffix == "a":
        what += (
            f"; 'a' unlocks {cc}-specific instructions (e.g. Hopper wgmma) but this code runs on exactly {cc}, "
            "never on later GPUs"
        )
    elif suffix == "f":
        family = sorted(c for c in tables.family_members(cc.arch_number) if c >= cc)
        also = [c for c in ccs if c in family and c != cc]
        what += (
            f"; 'f' unlocks family-specific instructions and runs on the family {', '.join(map(str, family))}"
            + (f", so it also covers {', '.join(map(str, also))}" if also else "")
            + "; TORCH_CUDA_ARCH_LIST and CMake accept 'f' only in recent releases: check yours"
        )
    elif not tables.is_tegra(cc) and any(c.major == cc.major and c > cc and not tables.is_tegra(c) for c in ccs):
        what += (
            f"; also runs on later {cc.major}.x GPUs, which get their own entry here to use their full instruction set"
        )
    return what + "; costs one more cubin in every fatbin (size) and one more compile pass"


def _add_ptx(chosen: list[ArchTarget]) -> list[str]:
    """Add PTX of the highest entry's compute capability to ``chosen`` (forward compatibility by JIT) and say
    what it buys and costs.  An ``a``/``f`` top entry gets a separate plain PTX entry: its own PTX would
    JIT only on that exact GPU or family."""
    top = chosen[-1].cc
    n = top.arch_number
    out = []
    if not chosen[-1].variant:
        chosen[-1] = ArchTarget(top, real=True, virtual=True)
    else:
        out.append(
            f"TORCH_CUDA_ARCH_LIST has no PTX-only entry: {top}+PTX also adds plain sm_{n} code next to the "
            f"{chosen[-1].variant} code (CMake and nvcc add PTX only)"
        )
        chosen.append(ArchTarget(top, real=False, virtual=True))
    out.append(
        f"compute_{n} PTX: GPUs newer than {top} run it by JIT (a first-launch compile, cached in "
        f"~/.nv/ComputeCache); costs binary size and build time, and kernels JIT-compiled from it see "
        f"__CUDA_ARCH__ = {n}0, so code paths for newer archs stay off (xformers' 'FATAL: kernel ... was "
        "built for sm75')"
    )
    return out
