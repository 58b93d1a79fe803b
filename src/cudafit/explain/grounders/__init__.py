"""One grounder per category: the finding's cause and fixes made concrete with the machine and the text's facts.

Each category of :mod:`cudafit.explain.catalogue` that can say more than its generic cause has one function
here, registered in :data:`GROUNDERS` (category id -> grounder); a category without one keeps its cause and
fixes (:func:`~cudafit.explain.grounders.base.default`).  A new category gets its grounder in the module of its
kind (:mod:`.kernels`, :mod:`.arch`, :mod:`.toolchain`, :mod:`.device`) and one line in the table.
"""

from __future__ import annotations

from collections.abc import Callable

from cudafit.explain.grounders.arch import (
    ground_arch_specific,
    ground_capability_guard,
    ground_mixed_gpu,
    ground_ptx_jit_lower_arch,
)
from cudafit.explain.grounders.base import Ground, Grounded, default
from cudafit.explain.grounders.device import ground_device_mismatch, ground_shared_memory
from cudafit.explain.grounders.kernels import ground_no_kernel_image
from cudafit.explain.grounders.toolchain import (
    ground_driver_too_old,
    ground_extension_abi,
    ground_jit_toolchain,
    ground_ptx_too_new,
    ground_toolkit_mismatch,
    ground_wrong_build,
)

__all__ = ["GROUNDERS", "Ground", "Grounded", "grounder"]

Grounder = Callable[[Ground], Grounded]

GROUNDERS: dict[str, Grounder] = {
    "no-kernel-image": ground_no_kernel_image,
    "ptx-jit-lower-arch": ground_ptx_jit_lower_arch,
    "mixed-gpu": ground_mixed_gpu,
    "capability-guard": ground_capability_guard,
    "toolkit-mismatch": ground_toolkit_mismatch,
    "driver-too-old": ground_driver_too_old,
    "ptx-too-new-for-driver": ground_ptx_too_new,
    "jit-toolchain-too-old": ground_jit_toolchain,
    "shared-memory-limit": ground_shared_memory,
    "device-mismatch": ground_device_mismatch,
    "arch-specific-mismatch": ground_arch_specific,
    "wrong-framework-build": ground_wrong_build,
    "extension-abi-mismatch": ground_extension_abi,
}


def grounder(category: str) -> Grounder:
    """The grounder of ``category``; the generic one (its own cause and fixes) for a category without one."""
    return GROUNDERS.get(category, default)
