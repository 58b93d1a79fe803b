"""``cudafit plan``: build flags for a set of GPUs, checked against what the nvcc can build.

For each distinct compute capability: SASS for exactly that CC (native code, no JIT), plus PTX of
the highest CC for forward compatibility (newer GPUs JIT it: CUDA Programming Guide §1.3.4.2).
``a`` variants only when asked: they unlock arch-specific instructions but run only on exactly
that CC (§5.1.2.1).  Each target is checked against the toolkit's real targets (``nvcc
--list-gpu-code``, or the rules table for a stated CUDA version).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cudafit.model import ComputeCapability, CudaVersion

__all__ = ["Plan", "make_plan"]


@dataclass(frozen=True)
class Plan:
    """Flags for three build systems, with what each choice buys and costs, and problems."""

    gpus: tuple[tuple[str, ComputeCapability], ...]
    toolkit: str
    torch_cuda_arch_list: str
    cmake_cuda_architectures: str
    nvcc_flags: tuple[str, ...]
    explanations: tuple[str, ...]
    problems: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """``cudafit.plan/1``."""
        return {
            "schema": "cudafit.plan/1",
            "gpus": [{"name": n, "compute_capability": str(cc)} for n, cc in self.gpus],
            "toolkit": self.toolkit,
            "torch_cuda_arch_list": self.torch_cuda_arch_list,
            "cmake_cuda_architectures": self.cmake_cuda_architectures,
            "nvcc_flags": list(self.nvcc_flags),
            "explanations": list(self.explanations),
            "problems": list(self.problems),
        }


def make_plan(
    gpus: Sequence[tuple[str, ComputeCapability]],
    *,
    targets: Sequence[str],
    toolkit: str,
    arch_specific: bool = False,
    ptx: bool = True,
) -> Plan:
    """Plan flags for ``gpus`` with a toolkit that can build ``targets`` (``sm_XY`` names)."""
    available = set(targets)
    ccs = sorted({cc for _n, cc in gpus})
    problems: list[str] = []
    explain: list[str] = []
    torch_parts: list[str] = []
    cmake_parts: list[str] = []
    flags: list[str] = []
    buildable: list[ComputeCapability] = []
    for cc in ccs:
        n = cc.arch_number
        names = ", ".join(name for name, c in gpus if c == cc)
        suffix = "a" if arch_specific and f"sm_{n}a" in available else ""
        if f"sm_{n}" not in available and not suffix:
            problems.append(
                f"{toolkit} cannot build sm_{n} for {names} ({cc}); use a toolkit whose nvcc --list-gpu-code lists "
                f"sm_{n}"
                + (
                    " (CUDA 12.x for Maxwell/Pascal/Volta: CUDA 13 dropped them)"
                    if cc.major < 7 or n in {70, 72}
                    else ""
                )
            )
            continue
        buildable.append(cc)
        torch_parts.append(f"{cc}{suffix}")
        cmake_parts.append(f"{n}{suffix}-real")
        flags.append(f"-gencode arch=compute_{n}{suffix},code=sm_{n}{suffix}")
        what = f"sm_{n}{suffix}: native code for {names} ({cc}), no JIT at first launch"
        if suffix:
            what += f"; 'a' unlocks arch-specific instructions but this code runs only on exactly {cc}"
        explain.append(what)
    if ptx and buildable:
        top = buildable[-1]
        n = top.arch_number
        torch_parts[-1] += "+PTX" if not torch_parts[-1].endswith("a") else ""
        if torch_parts[-1].endswith("a"):
            torch_parts.append(f"{top}+PTX")
        cmake_parts[-1] = cmake_parts[-1].removesuffix("-real") if cmake_parts[-1] == f"{n}-real" else cmake_parts[-1]
        if cmake_parts[-1] != f"{n}":
            cmake_parts.append(f"{n}-virtual")
        flags.append(f"-gencode arch=compute_{n},code=compute_{n}")
        explain.append(
            f"compute_{n} PTX: GPUs newer than {top} run it by JIT (first-launch compile, cached; kernels see "
            f"__CUDA_ARCH__ = {n}0); costs binary size and build time"
        )
    return Plan(
        gpus=tuple(gpus),
        toolkit=toolkit,
        torch_cuda_arch_list=";".join(torch_parts),
        cmake_cuda_architectures=";".join(cmake_parts),
        nvcc_flags=tuple(flags),
        explanations=tuple(explain),
        problems=tuple(problems),
    )


def toolkit_targets_for(cuda: CudaVersion | None) -> tuple[str, list[str]]:
    """(label, targets) from the rules table: the stated CUDA version, else the newest known."""
    from cudafit.rules import tables

    t = tables.load_tables()
    version = cuda or max(t.targets)
    return f"CUDA {version} (rules table)", [str(s) for s in tables.toolkit_targets(version)]
