"""Concrete next steps for a verdict: the command to run, with the numbers filled in.

Fixes only state what the rules and tables establish: the driver a PTX ISA needs (release notes
Table 3), the arch list a rebuild needs (``cudafit plan``), how to verify another build before
installing it (``cudafit check``).  Where cudafit cannot know a fact (which future wheel carries
an arch), the fix is the command that finds out.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

from cudafit.model import ComputeCapability, CudaVersion, PtxIsaVersion
from cudafit.rules import tables

__all__ = ["arch_list_for", "fixes_for", "min_driver_for_ptx_isa", "runtime_compile_fixes"]

PYTORCH_INDEX = "https://download.pytorch.org/whl/"


def arch_list_for(ccs: Sequence[ComputeCapability], *, ptx: bool = True) -> str:
    """``TORCH_CUDA_ARCH_LIST`` covering ``ccs`` (PTX of the highest for forward compatibility)."""
    uniq = sorted(set(ccs))
    parts = [str(cc) for cc in uniq]
    if ptx and parts:
        parts[-1] += "+PTX"
    return ";".join(parts)


def min_driver_for_ptx_isa(isa: PtxIsaVersion) -> tuple[CudaVersion, str] | None:
    """The oldest toolkit emitting ``isa`` and its minimum Linux driver: the driver that can JIT it."""
    t = tables.load_tables()
    for cuda in sorted(t.ptx_isa):
        if t.ptx_isa[cuda] >= isa:
            drv = tables.toolkit_min_driver(cuda)
            if drv is not None:
                return cuda, str(drv)
    return None


def _torch_index_hint(cc: ComputeCapability) -> str:
    if cc < ComputeCapability(7, 5):
        return (
            f"compute capability {cc} needs a PyTorch build made with CUDA 12.x or older (CUDA 13 toolkits cannot "
            f"target it): e.g. pip install torch --index-url {PYTORCH_INDEX}cu126, after verifying it with "
            f"cudafit check torch --index-url {PYTORCH_INDEX}cu126 --gpu {cc}"
        )
    return (
        f"pick the PyTorch CUDA build that carries code for {cc}: verify with "
        f"cudafit check torch --index-url {PYTORCH_INDEX}cu130 --gpu {cc} (or cu128, cu126) before installing"
    )


def fixes_for(
    package: str,
    version: str | None,
    gpu: Any,
    verdict: Any,
    *,
    all_gpus: Sequence[Any],
    distribution: bool = True,
) -> list[str]:
    """Fixes for ``package`` on ``gpu`` given its PackageVerdict (empty when nothing needs fixing)."""
    status = verdict.status.value
    codes = {r.code for r in verdict.reasons}
    cc: ComputeCapability = gpu.compute_capability
    out: list[str] = []
    if status in ("fails", "partial"):
        if "driver-too-old-for-runtime" in codes:
            branch = next(r.message for r in verdict.reasons if r.code == "driver-too-old-for-runtime")
            m = re.search(r"needs driver >= (\d+)", branch)
            if m:
                out.append(
                    f"upgrade the NVIDIA driver to the {m.group(1)} branch or newer (this package's CUDA "
                    f"runtime needs it), or install a build for an older CUDA major"
                )
        if "ptx-isa-too-new-for-driver" in codes:
            isas = [m.needs_ptx_isa for f in verdict.files for m in f.modules if m.needs_ptx_isa is not None]
            needed = max(isas) if isas else None
            found = min_driver_for_ptx_isa(needed) if needed else None
            if found:
                cuda, drv = found
                out.append(f"upgrade the NVIDIA driver to >= {drv} (CUDA {cuda}), whose JIT accepts PTX ISA {needed}")
        if "jit-disabled" in codes:
            out.append("unset CUDA_DISABLE_PTX_JIT: this package has only PTX for this GPU")
        if codes & {"no-compatible-code", "built-only-for-other-gpus", "partial-modules", "hole-build-skips-gpu"}:
            plan = arch_list_for([g.compute_capability for g in all_gpus])
            name = package.lower()
            lowest = _lowest_arch(verdict)
            if cc < ComputeCapability(7, 5) and lowest is not None and lowest >= 75:
                # Builds whose code starts at Turing leave pre-Turing GPUs out; CUDA 13 toolkits cannot target
                # them at all (fatbin_spec.md §E.7).  One root cause for every package of such a stack: the same
                # text groups them in the report.
                out.append(
                    f"this stack's code starts at sm_75 or later, and CUDA 13 toolkits cannot target compute "
                    f"capability {cc} at all: use builds made with an older CUDA 12.x that include it, e.g. "
                    f"PyTorch's cu126 index; verify before installing: "
                    f"cudafit check torch --index-url {PYTORCH_INDEX}cu126 --gpu {cc}"
                )
            elif status == "partial" and (name.startswith("nvidia-") or name in _BINARY_ONLY):
                pass  # vendor libraries specialise modules per arch and dispatch them: nothing for the user to do
            elif status == "partial":
                c = verdict.counts
                out.append(
                    f"{c.fails} of {c.total} modules have no code for {cc} (see the reasons for their archs): their "
                    f"kernels fail with 'no kernel image' if called; list them with cudafit scan --kernels"
                )
            elif name.startswith("nvidia-") or name in _BINARY_ONLY:
                if name in ("torch", "pytorch"):
                    out.append(_torch_index_hint(cc))
                else:
                    out.append(
                        f"install a build of {package} that carries sm_{cc.arch_number} code; check candidates "
                        f"first: cudafit check '{package}' --gpu {cc} (add --index-url for per-CUDA indexes)"
                    )
            elif not distribution:
                out.append(
                    f"rebuild these binaries with code for {cc}: nvcc {_gencode(all_gpus)} (cudafit plan --gpu ...)"
                )
            else:
                spec = f"{package}=={version}" if version else package
                out.append(
                    f"check which release carries sm_{cc.arch_number} code before installing: "
                    f"cudafit check '{package}' --gpu {cc} (add --index-url for per-CUDA indexes)"
                )
                out.append(
                    f'or rebuild it for these GPUs: TORCH_CUDA_ARCH_LIST="{plan}" pip install --no-binary '
                    f"{package} --no-build-isolation '{spec}' (see cudafit plan --gpu ...)"
                )
    elif status == "jit":
        out.append(
            f"runs by PTX JIT on {cc}: the first launch compiles (cached in ~/.nv/ComputeCache), and kernels "
            f"that check __CUDA_ARCH__ take the lower arch's path; a build with sm_{cc.arch_number} avoids both"
        )
    return out


# Distributions only NVIDIA or the framework can rebuild: never suggest a source build for them.
_BINARY_ONLY = {"torch", "pytorch", "triton", "pytorch-triton", "tensorrt", "tensorrt-cu12", "tensorrt-cu13"}


def _lowest_arch(verdict: Any) -> int | None:
    """The lowest SASS/PTX arch number in the package's loadable modules."""
    nums = [
        int("".join(ch for ch in a.split("_", 1)[1] if ch.isdigit()))
        for f in verdict.files
        for m in f.modules
        if m.status.value != "none"
        for a in (*m.sass, *m.ptx)
    ]
    return min(nums) if nums else None


def runtime_compile_fixes(runtime_compiled: str | None, gpu: Any, toolchains: Sequence[Any]) -> list[str]:
    """Packages that compile device code at run time need a compiler that knows the GPU's arch.

    Triton compiles with its bundled ptxas (``TRITON_PTXAS_PATH`` overrides it); JIT libraries such as
    flashinfer call nvcc.  A toolchain's targets come from ``nvcc --list-gpu-code`` or, for a ptxas,
    from its version and the toolkit table (fatbin_spec.md §E.7).
    """
    cc: ComputeCapability = gpu.compute_capability
    sm = f"sm_{cc.arch_number}"
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


def _gencode(gpus: Sequence[Any]) -> str:
    ccs = sorted({g.compute_capability for g in gpus})
    flags = [f"-gencode arch=compute_{c.arch_number},code=sm_{c.arch_number}" for c in ccs]
    top = ccs[-1].arch_number
    flags.append(f"-gencode arch=compute_{top},code=compute_{top}")
    return " ".join(flags)
