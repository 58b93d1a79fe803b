"""``no-kernel-image``: which binary has no code for the GPU, and which kernel of it failed.

The names a log gives for the failing code (kernels, operators, source files, shared libraries) are joined
with the modules without code for the GPU (:class:`~cudafit.explain.context.KernelGap`, the holes ``doctor``
reports); packages the text names are checked against the archs they carry; a build's own arch list or
minimum CC is quoted.  A pre-Turing GPU needs a cu126 (or older) PyTorch build: PyTorch's CUDA 12.8+ builds
carry sm_75 and newer only, and CUDA 13 toolkits cannot target compute capabilities below 7.5 (13.0 release
notes, fatbin_spec.md §E.7).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cudafit.actions import WITHOUT_CODE
from cudafit.explain.context import KernelGap, normalise_package
from cudafit.explain.evidence import Evidence, KernelMatch
from cudafit.explain.forms import BUILD_FORM_NAME
from cudafit.explain.grounders.arch import mixed_host_finding
from cudafit.explain.grounders.base import (
    Ground,
    Grounded,
    arch_runs_on,
    basename,
    describe,
    plan_command,
)
from cudafit.model import ComputeCapability
from cudafit.rules import tables
from cudafit.rules.ecosystem import load_ecosystem
from cudafit.rules.status import Status

__all__ = ["ground_no_kernel_image", "match_kernel_gaps"]

_TURING = ComputeCapability(7, 5)
#: Packages (as logs write them, ``_`` for ``-``) whose missing kernels explain blames on their maintainers
#: ("report it upstream") instead of advising ``TORCH_CUDA_ARCH_LIST=... pip install --no-binary``.  Not the
#: ecosystem table's ``binary_only`` (:meth:`cudafit.rules.ecosystem.Ecosystem.is_binary_only`, "no source
#: build exists, never suggest one"), on purpose: the table's question is whether a build from source exists,
#: explain's is whether *that torch-style rebuild* is the advice to give.  jax and cupy publish sdists
#: (jax-0.10.2.tar.gz, pure Python, no device code of its own; cupy-14.2.0.tar.gz, built with
#: CUPY_NVCC_GENERATE_CODE, not TORCH_CUDA_ARCH_LIST), so they are not binary-only, yet the rebuild line would be
#: wrong for them; jaxlib has no sdist (its build is XLA's build/build.py).  The table's pytorch and
#: tensorrt-cu12/-cu13 are absent here: explain has always given them the rebuild line, and adding them would
#: change its output.
_NO_REBUILD_ADVICE = frozenset({"torch", "triton", "pytorch_triton", "tensorrt", "jax", "jaxlib", "cupy"})
_GENERIC_NAMES = frozenset({"kernel", "kernels", "forward", "backward", "launch", "device", "global", "cuda"})


def _name_key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _library(name: str) -> str:
    """``libtorch_cuda_linalg.so.12`` -> ``libtorch_cuda_linalg.so``."""
    return name.split(".so", 1)[0] + ".so"


def _name_keys(names: Sequence[str]) -> tuple[list[str], set[str]]:
    """(comparison keys of the code names, shared libraries named), see :func:`match_kernel_gaps`."""
    keys: list[str] = []
    libraries: set[str] = set()
    for n in names:
        base = basename(n)
        if re.fullmatch(r"lib[\w+.-]*\.so(?:\.\d+)*", base):
            libraries.add(_library(base))
            continue
        stem = base.split(".", 1)[0] if "." in base else n
        k = _name_key(stem)
        for key in (k, re.sub(r"(utils?|helpers?|kernels?|impl|common)$", "", k)):
            if len(key) >= 5 and key not in _GENERIC_NAMES:
                keys.append(key)
    return keys, libraries


def match_kernel_gaps(names: Sequence[str], gaps: Sequence[KernelGap]) -> list[tuple[KernelGap, list[str]]]:
    """The modules without code whose kernels a log's op, kernel or source-file name points at.

    Names are compared without case and punctuation (``GemmaRMSNorm`` matches ``gemma_rmsnorm_kernel``);
    source files by their stem, also without a helper suffix (``MagmaUtils.h`` -> ``magma``); a shared
    library a traceback names (``libtorch_cuda_linalg.so``) matches every module of that file; names
    shorter than 5 characters or generic words are ignored.  Holes first, then specialised, then gated.
    """
    keys, libraries = _name_keys(names)
    out = []
    for gap in gaps:
        in_library = _library(basename(gap.path)) in libraries
        hit = [k for k in gap.kernels if in_library or any(key in _name_key(k) for key in keys)]
        if hit:
            out.append((gap, hit))
    rank = {s: i for i, s in enumerate(WITHOUT_CODE)}
    out.sort(key=lambda gh: rank.get(gh[0].status, len(rank)))
    return out


def _gap_names(ev: Evidence) -> list[str]:
    """The names a log gives for the failing code: kernels, operators, source files and shared libraries."""
    return [
        *ev.get("kernels", []),
        *ev.get("operators", []),
        *(sf["file"] for sf in ev.get("source_files", [])),
        *ev.get("libraries", []),
    ]


def _is_magma(gap: KernelGap) -> bool:
    return "linalg" in basename(gap.path) or any("magma" in k.lower() for k in gap.kernels)


def _package_notes(g: Ground) -> tuple[list[str], list[str]]:
    """("pkg carries X (nothing for 6.1)" lines, packages lacking code) for packages named in the text, then
    what a build says of itself (its arch list, its minimum CC)."""
    notes: list[str] = []
    lacking: list[str] = []
    for pkg in g.ev.get("packages", []):
        archs = g.context.packages.get(normalise_package(pkg))
        if not archs or not g.gpus:  # unknown, or no device code at all: not the one that failed
            continue
        missing = [str(cc) for cc in g.ccs if not any(arch_runs_on(a, cc) for a in archs)]
        if missing:
            lacking.append(pkg)
            notes.append(
                f"{pkg} carries {', '.join(archs) or 'no device code'} (nothing that runs on {', '.join(missing)})"
            )
    build = g.ev.get("build_archs")
    if build and g.ccs:
        missing = [
            x.label
            for x in g.gpus
            if not any(arch_runs_on(a, x.compute_capability) for a in build)
        ]
        if missing:
            who = {"spconv": "spconv", "ggml": "ggml"}.get(g.emitters[0] if g.emitters else "", "PyTorch")
            notes.append(f"this {who} build carries {' '.join(build)}: nothing that runs on {', '.join(missing)}")
    if g.ev.get("build_min_cc"):
        notes.append(f"this build supports compute capability {g.ev['build_min_cc']} and newer only (its own check)")
    return notes, lacking


def _kernel_match(gap: KernelGap, hit: list[str]) -> KernelMatch:
    return {
        "package": gap.package,
        "path": gap.path,
        "module": gap.module,
        "compute_capability": str(gap.compute_capability),
        "status": gap.status.value,
        "reason": gap.reason,
        "archs": list(gap.archs),
        "kernels": hit[:5],
    }


def _match_note(matched: list[tuple[KernelGap, list[str]]]) -> str:
    """Where the failing code is: the kernel's module, or every module of the library a traceback names."""
    first, hit = matched[0]
    role = {Status.FAILS: "a hole in the build", Status.GATED: "arch-specific code of other GPUs"}.get(
        first.status, "code the package builds only for other GPUs"
    )
    built = f"{', '.join(first.archs)}: nothing for {first.compute_capability} ({role}, {first.reason})"
    same_file = [x for x, _h in matched if x.path == first.path and x.status == first.status]
    if len(same_file) > 1:  # a library named by the traceback: all its modules without code for the GPU
        modules = ", ".join(str(x.module) for x in same_file[:8]) + (" ..." if len(same_file) > 8 else "")
        what = "MAGMA modules" if _is_magma(first) else "modules"
        return (
            f"the failing code is in {first.path} ({first.package}): its {what} {modules} ({hit[0]}, ...) are built "
            f"for {built}"
        )
    return f"the failing kernel is {hit[0]} in {first.path} (module {first.module}, {first.package}), built for {built}"


def _match_fixes(first: KernelGap) -> list[str]:
    """What to do about the module that failed: MAGMA's way around, then a rebuild or a report upstream."""
    fixes: list[str] = []
    name = basename(first.path)
    if _is_magma(first):
        fixes.append(
            f"these are MAGMA kernels of {name}: make torch.linalg use cuSOLVER/cuBLAS instead, "
            'which carry this GPU: torch.backends.cuda.preferred_linalg_library("cusolver") before the call'
        )
    cc = first.compute_capability
    hole = " (cudafit doctor reports it as a hole)" if first.status is Status.FAILS else ""
    if normalise_package(first.package) in _NO_REBUILD_ADVICE:
        fixes.append(
            f"{first.package}'s {name} has no code for {cc}{hole}: only its maintainers can rebuild it, so report "
            "it upstream with `cudafit check --kernels` output, and avoid the op on this GPU meanwhile"
        )
    else:
        fixes.append(
            f"{first.package} launched this kernel on {cc} although its module has no code there{hole}: rebuild "
            f"{first.package} with {cc} in its arch list for {name}, or avoid the op on this GPU; report it "
            "upstream with `cudafit check --kernels` output"
        )
    return fixes


# Emitters of programs that do not run on PyTorch: a PyTorch index is no fix for their failures.
_NOT_TORCH = frozenset(
    {
        "blender", "candle", "catboost", "ctranslate2", "cuda.jl", "cudf", "cupy", "dlib", "faiss", "ffmpeg", "ggml",
        "gromacs", "hashcat", "hvm", "jax", "kmcuda", "kokkos", "lightgbm", "mxnet", "numba", "ollama", "opencv",
        "paddle", "rust-cuda", "tensorflow", "thrust", "tvm", "usls", "warp", "xgboost", "xmr-stak",
    }
)  # fmt: skip


def _torch_ruled_out(g: Ground) -> bool:
    """Whether the failure is plainly not PyTorch's: a program whose own build flags lack the GPU, or messages only of
    programs that do not run on PyTorch (issue 18: a CTranslate2 error is no PyTorch wheel's)."""
    if BUILD_FORM_NAME in g.ev.get("forms", []):
        return True
    return bool(g.emitters) and all(e in _NOT_TORCH for e in g.emitters)


def _pre_turing_torch_fix(cc: ComputeCapability) -> str:
    """The PyTorch index for a GPU below Turing: the newest index whose wheels carry code the GPU runs (the ecosystem
    table's PyTorch arch floor per index: sm_75 from CUDA 12.8, sm_50 before, sm_37 for 11.8), one of the current
    release's where there is one (cu126 from Maxwell on).  Below every index (Kepler sm_30 and sm_35, Fermi, Tesla)
    no PyTorch index can help: the fix says which toolkit last targeted the GPU instead of naming an index whose
    builds cannot run there."""
    fits = [v for v in load_ecosystem().cuda_variants if v.torch_builds_run_on(cc)]  # newest CUDA first
    variant = next((v for v in fits if v.current_release), fits[0] if fits else None)
    if variant is not None:
        return (
            f"compute capability {cc} needs a PyTorch build made with CUDA {variant.cuda} or older (PyTorch's builds "
            f"for newer CUDA start above it, and CUDA 13 toolkits cannot target it): pip install torch --index-url "
            f"{variant.index_url} (verify first: cudafit check torch --index-url {variant.index_url} --gpu {cc})"
        )
    last = tables.last_cuda_toolkit(cc)
    toolkit = f"CUDA {last} was the last toolkit that targets it" if last else "no toolkit in cudafit's table does"
    return (
        f"no PyTorch CUDA index serves compute capability {cc}: {toolkit}, and every index's builds start above it "
        "(the CUDA 11.8 ones at sm_37); current PyTorch cannot use this GPU: run on a newer GPU, or on the CPU build"
    )


def _package_fixes(g: Ground, named: list[str], holes: set[str]) -> list[str]:
    """Which release carries code for the GPUs (and a rebuild, where one is possible) for the packages named."""
    fixes: list[str] = []
    for pkg in [p for p in named if not p.startswith("nvidia/")][:2]:
        if normalise_package(pkg) in holes:
            continue  # every release is built the same way: hunting for another one does not help
        fixes.append(
            f"check which release of {pkg} carries code for {g.plan or 'this GPU'} before installing: "
            f"cudafit check '{pkg}' --gpu {g.ccs[0] if g.ccs else 'NAME'} (add --index-url for per-CUDA indexes)"
        )
        if g.plan and normalise_package(pkg) not in _NO_REBUILD_ADVICE:
            fixes.append(
                f'or rebuild {pkg} for these GPUs: TORCH_CUDA_ARCH_LIST="{g.plan}" pip install --no-binary {pkg} '
                f"--no-build-isolation {pkg} (CMake and nvcc forms: {plan_command(g.ccs)})"
            )
    return fixes


def ground_no_kernel_image(g: Ground) -> Grounded:
    """The binary that has no code for the GPU (a matched module, a named package, the build's own list)."""
    ev = g.ev
    notes, lacking = _package_notes(g)
    matched = match_kernel_gaps(
        _gap_names(ev), [x for x in g.context.kernel_gaps if not g.ccs or x.compute_capability in g.ccs]
    )
    fixes: list[str] = []
    holes: set[str] = set()
    if matched:
        ev = ev.copy()
        ev["kernel_matches"] = [_kernel_match(x, hit) for x, hit in matched[:5]]
        notes.insert(0, _match_note(matched))
        first = matched[0][0]
        if first.status is Status.FAILS:
            holes.add(normalise_package(first.package))
        fixes += _match_fixes(first)
    mixed = len(set(g.ccs)) > 1
    if g.gpus and not notes:
        which = f"one of {describe(g.gpus)} (the one it ran on)" if mixed else describe(g.gpus)
        notes.append(
            f"the binary has no code for {which}: no cubin of the same major with an equal or lower "
            "minor, and no PTX of an equal or lower compute capability"
        )
    old = [cc for cc in g.ccs if cc < _TURING]
    if old and not holes and not _torch_ruled_out(g):
        fixes.append(_pre_turing_torch_fix(min(old)))
    fixes += _package_fixes(g, lacking or ev.get("packages", []) or [e for e in g.emitters if e != "torch"], holes)
    if not fixes and g.plan and BUILD_FORM_NAME in ev.get("forms", []):
        # the report's own build flags lack the GPU: the flags to add, in each tool's form
        fixes.append(
            f"rebuild with code for {describe(g.gpus)}: add it to the build's arch list "
            f'(TORCH_CUDA_ARCH_LIST="{g.plan}"; CMake and nvcc forms: {plan_command(g.ccs)})'
        )
    if any(p.startswith("nvidia/") for p in ev.get("packages", [])):
        fixes.append(
            "the failing library is one of NVIDIA's (site-packages/nvidia/...): it comes with the framework's CUDA "
            "major, so pick the framework build for a CUDA major that supports this GPU (cudafit doctor)"
        )
    cause = "; ".join(notes) if notes else g.finding.cause
    out = Grounded(cause, fixes or list(g.finding.fixes), ev)
    if mixed:
        # A host of several compute capabilities: the usual way a build that works on one card has no code for
        # the other (built on, or with arch auto-detection for, one of them; seed 001's host).
        out.extra.append(mixed_host_finding(g.finding, g.gpus))
    return out
