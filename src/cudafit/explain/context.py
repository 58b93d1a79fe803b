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

__all__ = ["GAP_STATUSES", "Context", "KernelGap", "normalise_package"]

#: The statuses of a module without code for a GPU, likeliest culprit first: a hole (the build skips the GPU),
#: then code the library builds only for other GPUs, then a/f code gated to other GPUs.  These are module
#: roles, not package statuses, so :data:`cudafit.rules.status.PACKAGE_STATUSES` does not order them.
GAP_STATUSES: tuple[Status, ...] = (Status.FAILS, Status.SPECIALISED, Status.GATED)


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
