"""What is known about the machine a message came from: its GPUs, driver, packages and their code gaps.

Built by the caller (``cudafit explain`` probes this machine or reads ``--gpu``/``--inventory``; tests pass
explicit objects) and read by the grounders (:mod:`cudafit.explain.grounders`).  Every field is optional:
without a context, the facts of the text itself still ground a finding.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from cudafit.model import ComputeCapability, DriverVersion, Gpu
from cudafit.rules.status import Status

__all__ = ["Context", "KernelGap", "normalise_package"]


def normalise_package(package: str) -> str:
    """A package name as logs and site-packages directories write it: lower case, ``_`` for ``-``."""
    return package.lower().replace("-", "_")


@dataclass(frozen=True)
class KernelGap:
    """A module of an installed package without code for a GPU, with its kernels (from ``check --kernels``)."""

    package: str
    path: str
    module: int
    compute_capability: ComputeCapability
    status: Status  # fails (a hole) | specialised | gated
    reason: str
    archs: tuple[str, ...]
    kernels: tuple[str, ...]  # readable (demangled) names where c++filt is installed, else mangled


@dataclass(frozen=True)
class Context:
    """What is known about the machine the message came from.

    ``gpus``: the GPUs, in CUDA order; ``packages``: package name (as imported, e.g. ``fbgemm_gpu``) -> the
    archs its binaries carry (``sm_80``, ``compute_90``...); ``driver``: the NVIDIA driver version;
    ``kernel_gaps``: modules without code for the GPUs, with their kernels (looked up in an environment or a
    path).
    """

    gpus: tuple[Gpu, ...] = ()
    packages: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    driver: DriverVersion | None = None
    kernel_gaps: tuple[KernelGap, ...] = ()

    def __post_init__(self) -> None:
        # Names are looked up as logs write them (fbgemm-gpu and fbgemm_gpu are one package).
        object.__setattr__(self, "packages", {normalise_package(k): tuple(v) for k, v in self.packages.items()})
