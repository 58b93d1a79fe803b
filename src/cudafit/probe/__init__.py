"""This machine's GPUs, driver and run-time compilers, without crashing and without a CUDA context.

Order of backends: NVML (no CUDA context, fork-safe), then ``nvidia-smi`` when NVML cannot load;
the CUDA driver API only with ``deep=True`` (it initialises driver state, so never by default);
torch only when the caller already initialised CUDA through it.  Declared GPUs (``--gpu NAME``)
and inventory files from other machines give the same :class:`Inventory` shape.  Nothing is
probed at import time; results are cached per process (:func:`clear_cache` for tests).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cudafit.probe.inventory import GpuDevice, Inventory, Toolchain

if TYPE_CHECKING:
    from cudafit.model import ComputeCapability, CudaVersion, DriverVersion, JsonDict
    from cudafit.probe.backends import Runner

__all__ = [
    "GpuDevice",
    "Inventory",
    "Toolchain",
    "clear_cache",
    "declared_inventory",
    "inventory_from_dict",
    "inventory_from_file",
    "inventory_to_dict",
    "probe_machine",
]

_CACHE: dict[tuple[object, ...], Inventory] = {}
#: How :func:`cudafit.probe.backends.probe_nvml` says that NVML's shared library is not on this machine.
_NO_NVML_LIBRARY = "libnvidia-ml.so (NVML) not found"


def clear_cache() -> None:
    """Forget cached probe results."""
    _CACHE.clear()


def probe_machine(
    *,
    deep: bool = False,
    toolchains: bool = False,
    env: Mapping[str, str] | None = None,
    nvml: Any | None = None,
    smi_runner: Runner | None = None,
    cuda_lib: Any | None = None,
    sites: Sequence[str] | None = None,
) -> Inventory:
    """Probe this machine.  Every argument after ``toolchains`` injects a backend (tests use fakes): ``nvml``
    a ``pynvml``-shaped module, ``cuda_lib`` a ``libcuda`` handle (both duck-typed: ``Any``)."""
    fake = (os.environ if env is None else env).get("CUDAFIT_FAKE_NVML")
    key = (deep, toolchains, id(env), id(nvml), id(smi_runner), id(cuda_lib), tuple(sites or ()), fake)
    if key in _CACHE:
        return _CACHE[key]
    from cudafit.probe.ordering import assign_cuda_indices

    environ: Mapping[str, str] = os.environ if env is None else env
    devices, driver, cuda, problems, source = _probe_devices(environ, nvml, smi_runner)
    driver_order: list[str] | None = None
    if deep and devices:
        devices, driver_order = _with_driver_limits(devices, cuda_lib, problems)
    if driver_order is None and devices:
        driver_order = _torch_order()  # the caller's own CUDA enumeration, when it already initialised CUDA
    if not devices and driver is None and not any("not found" in p or "not installed" in p for p in problems):
        problems.append("no NVIDIA GPU found")
    devices_t, estimated, note = assign_cuda_indices(devices, environ, driver_order)
    tools: tuple[Toolchain, ...] = ()
    if toolchains:
        from cudafit.probe.toolchains import iter_toolchains

        tools = tuple(iter_toolchains(sites if sites is not None else _default_sites(), environ))
    inv = Inventory(
        devices=devices_t,
        source=source,
        driver_version=driver,
        cuda_driver_version=cuda,
        problems=tuple(dict.fromkeys(problems)),
        ordering_estimated=estimated and len(devices_t) > 1,
        ordering_note=note if devices_t else None,
        cuda_visible_devices=environ.get("CUDA_VISIBLE_DEVICES"),
        cuda_device_order=environ.get("CUDA_DEVICE_ORDER"),
        toolchains=tools,
    )
    _CACHE[key] = inv
    return inv


def _probe_devices(
    environ: Mapping[str, str], nvml: Any | None, smi_runner: Runner | None
) -> tuple[list[GpuDevice], DriverVersion | None, CudaVersion | None, list[str], str | None]:
    """(devices, driver, CUDA driver version, problems, source): NVML (or a recorded host replayed through
    ``CUDAFIT_FAKE_NVML``), then ``nvidia-smi`` where NVML's library exists but answered nothing."""
    from cudafit.probe.backends import probe_nvidia_smi, probe_nvml, real_runner

    nvml_label = "nvml"
    if nvml is None:
        from cudafit.probe.fake import fake_nvml_from_env

        replay = fake_nvml_from_env(environ)
        if replay is not None:  # a recorded host replayed (fleet tests): the source says so
            nvml, nvml_label = replay
    devices, driver, cuda, problems = probe_nvml(nvml)
    if nvml_label != "nvml":
        devices = [replace(d, source=nvml_label) for d in devices]
    source = nvml_label if devices or driver else None
    # A replay never falls back to this machine's nvidia-smi, and neither does a machine without NVML's
    # library: nvidia-smi is built on libnvidia-ml, so it cannot answer there, and a hung one (a wedged
    # kernel module) would cost its whole timeout for nothing.
    no_nvml_library = smi_runner is None and any(_NO_NVML_LIBRARY in p for p in problems)
    if source is None and nvml_label == "nvml" and not no_nvml_library:
        d2, drv2, _c2, p2 = probe_nvidia_smi(smi_runner or real_runner)
        if d2 or drv2:
            devices, driver, source = d2, drv2, "nvidia-smi"
            problems = [*problems, *p2] if not d2 else problems
        else:
            problems = [*problems, *p2]
    return devices, driver, cuda, problems, source


def _with_driver_limits(
    devices: list[GpuDevice], cuda_lib: Any | None, problems: list[str]
) -> tuple[list[GpuDevice], list[str] | None]:
    """The devices with the CUDA driver API's per-device limits, and the driver's ordinal order by PCI bus
    id (``None`` when the driver API answered nothing); its problems are added to ``problems``."""
    from cudafit.probe.backends import probe_cuda_driver

    infos, more = probe_cuda_driver(cuda_lib)
    problems.extend(more)
    if not infos:
        return devices, None
    by_bus = {i.get("pci_bus_id"): i for i in infos}
    enriched = []
    for d in devices:
        info = by_bus.get(d.pci_bus_id)
        limits = {k: int(v) for k, v in (info or {}).items() if k.startswith(("sm_", "max_"))}
        enriched.append(GpuDevice(**{**d.__dict__, "limits": limits}))
    return enriched, [str(i.get("pci_bus_id")) for i in infos]


def _default_sites() -> list[str]:
    import sysconfig

    paths = sysconfig.get_paths()
    return list(dict.fromkeys([paths["purelib"], paths["platlib"]]))


def declared_inventory(names: Sequence[str]) -> tuple[Inventory, list[JsonDict]]:
    """GPUs named by the user (``--gpu NAME``), resolved by the rules' GPU table.

    Returns the inventory and the resolution errors (each with the candidates).
    """
    from cudafit.errors import UnknownGpuError
    from cudafit.rules.gpus import resolve_gpu

    devices: list[GpuDevice] = []
    errors: list[JsonDict] = []
    for name in names:
        try:
            r = resolve_gpu(name)
        except UnknownGpuError as err:
            errors.append({"query": name, "message": err.message, "candidates": list(err.candidates)})
            continue
        devices.append(
            GpuDevice(
                index=len(devices),
                name=r.name,
                compute_capability=r.compute_capability,
                source="declared",
                cuda_index=len(devices),
            )
        )
    return Inventory(devices=tuple(devices), source="declared"), errors


def inventory_from_file(path: str) -> Inventory:
    """An inventory recorded on another machine (``cudafit gpus --json > inv.json``).

    Raises :class:`~cudafit.documents.DocumentError` naming the file and the field that is wrong.
    """
    from cudafit.documents import read_json_file

    where = f"inventory file {path}"
    return inventory_from_dict(read_json_file(path, where), source=f"file:{os.path.basename(path)}", where=where)


def inventory_from_dict(doc: Any, *, source: str, where: str | None = None) -> Inventory:
    """The :class:`Inventory` a ``cudafit.gpus/1`` machine document describes (a fleet file holds many).

    The document is checked by :mod:`cudafit.documents` (types, ranges, values that parse): anything
    wrong is a :class:`~cudafit.documents.DocumentError` naming ``where`` and the field.
    """
    import msgspec

    from cudafit.documents import DocumentError, GpusDocument, convert
    from cudafit.errors import ValueParseError
    from cudafit.model import parse_compute_capability, parse_driver_version

    where = where or source
    parsed = convert(doc, GpusDocument, where)
    devices = []
    ccs: dict[str, ComputeCapability] = {}  # a machine (or a fleet file) repeats a few models many times
    for i, g in enumerate(parsed.gpus):
        text = g.compute_capability
        try:
            cc = (ccs.get(text) or ccs.setdefault(text, parse_compute_capability(text))) if text else None
        except ValueParseError as err:
            raise DocumentError(where, err.message, field=f"gpus[{i}].compute_capability") from err
        devices.append(
            GpuDevice(
                index=g.index if g.index is not None else i,
                name=g.name,
                compute_capability=cc,
                source=source,
                uuid=g.uuid,
                pci_bus_id=g.pci_bus_id,
                memory_mib=g.memory_mib,
                mig_mode=g.mig_mode,
                mig_devices=tuple(g.mig_devices),
                cuda_index=i if g.cuda_index is msgspec.UNSET else g.cuda_index,
            )
        )
    try:
        driver = parse_driver_version(parsed.driver_version) if parsed.driver_version else None
    except ValueParseError as err:
        raise DocumentError(where, err.message, field="driver_version") from err
    return Inventory(devices=tuple(devices), source=source, driver_version=driver, problems=tuple(parsed.problems))


def inventory_to_dict(inv: Inventory) -> JsonDict:
    """The machine-inventory form of ``cudafit.gpus/1``."""
    from cudafit.rules.tables import cc_limits

    gpus = []
    driver = str(inv.driver_version) if inv.driver_version else None
    for d in inv.devices:
        table = cc_limits(d.compute_capability) if d.compute_capability else None
        limits: dict[str, int] = dict(d.limits)
        if table is not None:
            limits.setdefault("max_shared_memory_per_block_optin", table.max_shared_memory_per_block_optin)
            limits.setdefault("max_shared_memory_per_sm", table.max_shared_memory_per_sm)
            limits.setdefault("max_registers_per_thread", table.max_registers_per_thread)
            limits.setdefault("max_threads_per_block", table.max_threads_per_block)
        gpus.append(
            {
                "query": None,
                "name": d.name,
                "compute_capability": str(d.compute_capability) if d.compute_capability else None,
                "source": d.source,
                "index": d.index,
                "cuda_index": d.cuda_index,
                "uuid": d.uuid,
                "pci_bus_id": d.pci_bus_id,
                "memory_mib": d.memory_mib,
                "mig_mode": d.mig_mode,
                "mig_devices": list(d.mig_devices),
                "driver_version": driver,
                "limits": limits,
                "notes": list(d.notes),
            }
        )
    return {
        "schema": "cudafit.gpus/1",
        "mode": "machine",
        "status": inv.status,
        "source": inv.source,
        "driver_version": str(inv.driver_version) if inv.driver_version else None,
        "cuda_driver_version": str(inv.cuda_driver_version) if inv.cuda_driver_version else None,
        "problems": list(inv.problems),
        "ordering": {
            "estimated": inv.ordering_estimated,
            "note": inv.ordering_note,
            "CUDA_VISIBLE_DEVICES": inv.cuda_visible_devices,
            "CUDA_DEVICE_ORDER": inv.cuda_device_order,
        },
        "toolchains": [t.to_dict() for t in inv.toolchains],
        "gpus": gpus,
        "errors": [],
    }


def _torch_order() -> list[str] | None:
    """PCI bus ids in CUDA ordinal order, from torch - only if the caller already initialised CUDA with it
    (asking torch otherwise would initialise CUDA, which probing never does by default)."""
    if not torch_is_initialized():
        return None
    torch = sys.modules["torch"]
    try:
        order = []
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            order.append(f"{int(p.pci_domain_id):08x}:{int(p.pci_bus_id):02x}:{int(p.pci_device_id):02x}.0")
    except Exception:
        return None
    return order


def torch_is_initialized() -> bool:
    """Whether the caller already initialised CUDA through torch (only then may torch be asked)."""
    torch = sys.modules.get("torch")
    try:
        return bool(torch is not None and torch.cuda.is_initialized())
    except Exception:
        return False
