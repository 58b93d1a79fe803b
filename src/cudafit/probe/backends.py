"""Probe backends: NVML (default), nvidia-smi (fallback), the CUDA driver API (``--deep``).

Each backend takes its system interface as an argument so tests drive it with recorded real
outputs (``tests/fakes``): the ``pynvml`` module (nvidia-ml-py), a command runner for
nvidia-smi, a ``libcuda`` handle for the driver API.  None of them raises; each returns
``(devices, driver, cuda_driver, problems)``.

* NVML creates no CUDA context and is fork-safe: https://docs.nvidia.com/deploy/nvml-api/
* nvidia-smi query format: ``nvidia-smi --help-query-gpu``.
* The driver API (``cuInit``) initialises driver state in the process; it runs only on request.
  Attributes: https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html (CUdevice_attribute).
"""

from __future__ import annotations

import contextlib
import csv
import ctypes
import io
import re
import subprocess
from collections.abc import Callable, Sequence
from typing import Any

from cudafit.documents import parse_ascii_int
from cudafit.errors import ValueParseError
from cudafit.model import ComputeCapability, CudaVersion, DriverVersion, parse_compute_capability, parse_driver_version
from cudafit.probe.inventory import GpuDevice

__all__ = ["SMI_FIELDS", "ProbeResult", "probe_cuda_driver", "probe_nvidia_smi", "probe_nvml", "real_runner"]

ProbeResult = tuple[list[GpuDevice], DriverVersion | None, CudaVersion | None, list[str]]
Runner = Callable[[Sequence[str], float], tuple[int, str, str]]

SMI_FIELDS = (
    "index",
    "name",
    "uuid",
    "pci.bus_id",
    "compute_cap",
    "memory.total",
    "driver_version",
    "mig.mode.current",
)


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


#: NVML's own limit is far lower (a node holds a few dozen GPUs and their MIG instances).
_MAX_DEVICES = 4096


def _ascii_int(text: str, default: int) -> int:
    """An index as nvidia-smi prints it (ASCII digits; ``'²'.isdigit()`` is true but ``int('²')`` fails)."""
    value = parse_ascii_int(text, limit=1_000_000)
    return default if value is None else value


def _driver(text: str) -> DriverVersion | None:
    try:
        return parse_driver_version(text)
    except ValueParseError:
        return None


def _nvml_error_text(nvml: Any, err: Exception) -> str:
    name = type(err).__name__
    if "LibraryNotFound" in name:
        return "no NVIDIA driver: libnvidia-ml.so (NVML) not found"
    if "DriverNotLoaded" in name:
        return "NVIDIA driver not loaded (NVML: Driver Not Loaded)"
    if "NoPermission" in name:
        return "NVML: insufficient permissions to query the GPUs"
    return f"NVML error: {err}"


def probe_nvml(nvml: Any | None = None) -> ProbeResult:
    """Query NVML; ``nvml`` is the ``pynvml`` module or a fake with the same functions."""
    problems: list[str] = []
    if nvml is None:
        try:
            import pynvml as nvml_mod  # nvidia-ml-py
        except ImportError:
            return [], None, None, ["NVML unavailable: the nvidia-ml-py package is not installed"]
        nvml = nvml_mod
    try:
        nvml.nvmlInit()
    except Exception as err:  # NVMLError_* subclasses, OSError from a broken library
        return [], None, None, [_nvml_error_text(nvml, err)]
    devices: list[GpuDevice] = []
    driver: DriverVersion | None = None
    cuda: CudaVersion | None = None
    try:
        try:
            driver = _driver(_text(nvml.nvmlSystemGetDriverVersion()))
        except Exception as err:
            problems.append(f"NVML: driver version unavailable: {err}")
        try:
            v = int(nvml.nvmlSystemGetCudaDriverVersion())
            cuda = CudaVersion(v // 1000, (v % 1000) // 10)
        except Exception as err:
            problems.append(f"NVML: CUDA driver API version unavailable: {err}")
        count = int(nvml.nvmlDeviceGetCount())
        if not 0 <= count <= _MAX_DEVICES:  # a value, not a loop bound: a broken library cannot hang the probe
            problems.append(f"NVML: implausible device count {count}; only the first {_MAX_DEVICES} are read")
            count = max(0, min(count, _MAX_DEVICES))
        for i in range(count):
            try:
                devices.append(_nvml_device(nvml, i))
            except Exception as err:
                problems.append(f"NVML: GPU {i} could not be queried: {err}")
    except Exception as err:
        problems.append(f"NVML error: {err}")
    finally:
        with contextlib.suppress(Exception):  # shutting down a library that failed is best effort
            nvml.nvmlShutdown()
    return devices, driver, cuda, problems


def _nvml_device(nvml: Any, i: int) -> GpuDevice:
    h = nvml.nvmlDeviceGetHandleByIndex(i)
    notes: list[str] = []
    name = _text(nvml.nvmlDeviceGetName(h))
    uuid = _text(nvml.nvmlDeviceGetUUID(h))
    bus = _text(nvml.nvmlDeviceGetPciInfo(h).busId)
    cc: ComputeCapability | None
    try:
        major, minor = nvml.nvmlDeviceGetCudaComputeCapability(h)
        cc = ComputeCapability(int(major), int(minor))
    except Exception as err:
        cc = None
        notes.append(f"compute capability unavailable: {err}")
    memory: int | None
    try:
        memory = int(nvml.nvmlDeviceGetMemoryInfo(h).total) // (1024 * 1024)
    except Exception:
        memory = None
    mig: bool | None = None
    mig_uuids: list[str] = []
    try:
        current, _pending = nvml.nvmlDeviceGetMigMode(h)
        mig = bool(current)
    except Exception:
        mig = None  # not supported on this GPU
    if mig:
        try:
            for k in range(int(nvml.nvmlDeviceGetMaxMigDeviceCount(h))):
                try:
                    mh = nvml.nvmlDeviceGetMigDeviceHandleByIndex(h, k)
                except Exception:
                    continue
                mig_uuids.append(_text(nvml.nvmlDeviceGetUUID(mh)))
        except Exception as err:
            notes.append(f"MIG devices unavailable: {err}")
    return GpuDevice(
        index=i,
        name=name,
        compute_capability=cc,
        source="nvml",
        uuid=uuid,
        pci_bus_id=_normalize_bus(bus),
        memory_mib=memory,
        mig_mode=mig,
        mig_devices=tuple(mig_uuids),
        notes=tuple(notes),
    )


_HEX = re.compile(r"[0-9a-f]{1,8}", re.ASCII)


def _normalize_bus(bus: str) -> str:
    """``00000000:01:00.0`` (NVML, nvidia-smi) and ``0000:01:00.0`` (driver API) compare equal."""
    bus = bus.strip().lower()
    if bus.count(":") == 2:
        domain, rest = bus.split(":", 1)
        if _HEX.fullmatch(domain):  # anything else is kept as the tool wrote it (and matches nothing)
            return f"{int(domain, 16):08x}:{rest}"
    return bus


def real_runner(cmd: Sequence[str], timeout: float) -> tuple[int, str, str]:
    """Run a command; never raises (127 = not found, 124 = timed out)."""
    try:
        p = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        return 127, "", f"{cmd[0]}: not found"
    except subprocess.TimeoutExpired:
        return 124, "", f"{cmd[0]} timed out after {timeout:g} s"
    except OSError as err:
        return 126, "", f"{cmd[0]}: {err}"
    return p.returncode, p.stdout, p.stderr


def probe_nvidia_smi(runner: Runner = real_runner, timeout: float = 5.0) -> ProbeResult:
    """Query ``nvidia-smi --query-gpu=... --format=csv,noheader,nounits``."""
    cmd = ["nvidia-smi", f"--query-gpu={','.join(SMI_FIELDS)}", "--format=csv,noheader,nounits"]
    rc, out, err = runner(cmd, timeout)
    if rc != 0:
        detail = (err or out).strip().splitlines()
        reason = detail[-1] if detail else f"exit code {rc}"
        if rc == 127:
            reason = "nvidia-smi not found (no NVIDIA driver installed?)"
        return [], None, None, [f"nvidia-smi: {reason}"]
    devices: list[GpuDevice] = []
    driver: DriverVersion | None = None
    problems: list[str] = []
    try:
        rows = list(csv.reader(io.StringIO(out.replace("\0", ""))))
    except csv.Error as err:  # a field larger than csv's limit: the output is not what nvidia-smi writes
        return [], None, None, [f"nvidia-smi: unreadable output ({err})"]
    for row in rows:
        if not row or not row[0].strip():
            continue
        cells = [c.strip() for c in row]
        if len(cells) < len(SMI_FIELDS):
            problems.append(f"nvidia-smi: unexpected row {row!r}")
            continue
        index, name, uuid, bus, cap, mem, drv, mig = cells[: len(SMI_FIELDS)]
        try:
            cc: ComputeCapability | None = parse_compute_capability(cap)
        except ValueParseError:
            cc = None
        driver = driver or _driver(drv)
        devices.append(
            GpuDevice(
                index=_ascii_int(index, len(devices)),
                name=name,
                compute_capability=cc,
                source="nvidia-smi",
                uuid=uuid or None,
                pci_bus_id=_normalize_bus(bus) if bus else None,
                memory_mib=parse_ascii_int(mem, limit=1 << 40),
                mig_mode={"enabled": True, "disabled": False}.get(mig.lower()),
            )
        )
    return devices, driver, None, problems


# CUdevice_attribute values (cuda.h)
_ATTRS = {
    "sm_count": 16,  # CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    "max_registers_per_block": 12,
    "max_shared_memory_per_sm": 81,  # MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
    "max_shared_memory_per_block_optin": 97,
    "max_threads_per_block": 1,
    "cc_major": 75,
    "cc_minor": 76,
    "pci_bus": 33,
    "pci_device": 34,
    "pci_domain": 50,
}


def probe_cuda_driver(lib: Any | None = None) -> tuple[list[dict[str, int | str]], list[str]]:
    """CUDA ordinals with their attributes, from the driver API (``cuInit`` runs: only with ``--deep``).

    Returns a list in CUDA ordinal order (the driver's own order under the current
    ``CUDA_VISIBLE_DEVICES``/``CUDA_DEVICE_ORDER``) and problems.
    """
    if lib is None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as err:
            return [], [f"CUDA driver API unavailable: libcuda.so.1 not loadable ({err})"]
    try:
        rc = lib.cuInit(0)
        if rc != 0:
            return [], [f"CUDA driver API: cuInit failed with error {rc}"]
        count = ctypes.c_int(0)
        if lib.cuDeviceGetCount(ctypes.byref(count)) != 0:
            return [], ["CUDA driver API: cuDeviceGetCount failed"]
        out: list[dict[str, int | str]] = []
        for ordinal in range(count.value):
            dev = ctypes.c_int(0)
            lib.cuDeviceGet(ctypes.byref(dev), ordinal)
            info: dict[str, int | str] = {"cuda_index": ordinal}
            for key, attr in _ATTRS.items():
                val = ctypes.c_int(0)
                if lib.cuDeviceGetAttribute(ctypes.byref(val), attr, dev) == 0:
                    info[key] = val.value
            name = ctypes.create_string_buffer(256)
            if lib.cuDeviceGetName(name, 256, dev) == 0:
                info["name"] = name.value.decode("utf-8", "replace")
            if {"pci_domain", "pci_bus", "pci_device"} <= info.keys():
                info["pci_bus_id"] = f"{info['pci_domain']:08x}:{info['pci_bus']:02x}:{info['pci_device']:02x}.0"
            out.append(info)
    except (OSError, AttributeError, ctypes.ArgumentError) as err:
        return [], [f"CUDA driver API error: {err}"]
    return out, []
