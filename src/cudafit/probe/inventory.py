"""The inventory of a machine's GPUs: frozen data where every missing field says why.

Probing never raises: a missing driver, a broken NVML, a hung ``nvidia-smi`` all become
``problems`` of the inventory, tagged with the backend that met them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from cudafit.model import ComputeCapability, CudaVersion, DriverVersion, JsonDict

__all__ = ["GpuDevice", "Inventory", "Toolchain"]


@dataclass(frozen=True)
class GpuDevice:
    """One physical GPU (or MIG instance) as a backend reported it.

    ``index`` is the backend's own numbering (NVML and nvidia-smi: PCI bus order);
    ``cuda_index`` the ordinal CUDA programs see under the current ``CUDA_VISIBLE_DEVICES`` and
    ``CUDA_DEVICE_ORDER`` (``None`` when the device is hidden from CUDA).
    """

    index: int
    name: str
    compute_capability: ComputeCapability | None
    source: str
    uuid: str | None = None
    pci_bus_id: str | None = None
    memory_mib: int | None = None
    mig_mode: bool | None = None
    mig_devices: tuple[str, ...] = ()
    cuda_index: int | None = None
    limits: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def with_cuda_index(self, cuda_index: int | None) -> GpuDevice:
        """A copy with the CUDA ordinal set."""
        return replace(self, cuda_index=cuda_index)


@dataclass(frozen=True)
class Toolchain:
    """A compiler that produces device code at run time (nvcc for JIT libraries, Triton's ptxas)."""

    name: str
    path: str | None
    version: str | None
    targets: tuple[str, ...] = ()
    problem: str | None = None

    def to_dict(self) -> JsonDict:
        """JSON form."""
        return {
            "name": self.name,
            "path": self.path,
            "version": self.version,
            "targets": list(self.targets),
            "problem": self.problem,
        }


@dataclass(frozen=True)
class Inventory:
    """What this machine (or a declared one) has: GPUs, driver, and why anything is missing."""

    devices: tuple[GpuDevice, ...]
    source: str | None
    driver_version: DriverVersion | None = None
    cuda_driver_version: CudaVersion | None = None
    problems: tuple[str, ...] = ()
    ordering_estimated: bool = False
    ordering_note: str | None = None
    cuda_visible_devices: str | None = None
    cuda_device_order: str | None = None
    toolchains: tuple[Toolchain, ...] = ()

    @property
    def status(self) -> str:
        """``ok``, ``no-gpu`` (a driver answered with no GPU) or ``no-driver``."""
        if self.devices:
            return "ok"
        if self.driver_version is not None:
            return "no-gpu"
        return "no-driver"

    @property
    def cuda_devices(self) -> tuple[GpuDevice, ...]:
        """The devices CUDA programs will see, in CUDA ordinal order."""
        visible = [d for d in self.devices if d.cuda_index is not None]
        return tuple(sorted(visible, key=lambda d: d.cuda_index or 0))
