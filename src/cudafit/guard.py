"""Runtime checks for library authors: correct, cheap enough for every dispatch, never crashing.

Seed 000: FlashInfer refused working GPUs because its "requires sm75+" check read the arch flags
it was *compiled* with, not the device it runs on.  Seed 002: a shared-memory capability check
crashed at import on CPU-only machines.  This module checks the device the work will run on:

* :func:`require_capability` - the GPU's compute capability against a minimum (per device on
  mixed hosts); raises :class:`CapabilityError` naming the GPU, its CC, the minimum and the feature.
* :func:`check_binary` - before a first launch, whether an extension's shared object carries SASS
  or PTX usable on the device (the ``no kernel image`` error, explained in advance).
* :func:`max_shared_memory_per_block` / :func:`shared_memory_fits` - the opt-in limit, or
  :data:`UNKNOWN` (falsy, with a reason) when there is no device: never an exception.
* :func:`check_pt2` - whether an AOTInductor package can run on a device, and how (seed 003).

Devices come from torch only when the caller already initialised CUDA through it; otherwise from
NVML (no CUDA context is created).  Results are cached per (device, question) behind a lock, so
a cached call costs about a microsecond.  ``CUDAFIT_SKIP_CAPABILITY_CHECK=1`` turns
:func:`require_capability` and :func:`check_binary` into no-ops (an escape hatch for unusual
setups; the checks are otherwise authoritative).

Importing this module pulls in neither the CLI, rich, pip, nor dataclasses (a few milliseconds).
"""

from __future__ import annotations

import os
import sys
from _thread import allocate_lock  # = threading.Lock, without importing threading (functools, collections)

from cudafit._values import ComputeCapability, FrozenValue, parse_compute_capability
from cudafit.errors import CudafitError

# The import budget (<= 30 ms, bench/bench_guard.py; tests/test_guard.py lists what may not be
# imported) keeps typing, collections.abc, dataclasses and threading off this path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import ModuleType
    from typing import Protocol, TypeAlias

    from cudafit.model import Gpu

    class _TorchDevice(Protocol):
        """``torch.device("cuda:1")``: what the guard reads of one."""

        @property
        def index(self) -> int | None: ...

    #: A compute capability as callers write it: ``"7.5"``, ``"sm_75"``, ``(7, 5)`` or the value itself.
    Minimum: TypeAlias = str | tuple[int, int] | ComputeCapability
    #: The device meant: ``None`` (the one the work runs on), a CUDA ordinal, ``"cuda:1"`` or a ``torch.device``.
    Device: TypeAlias = int | str | _TorchDevice | None

__all__ = [
    "UNKNOWN",
    "CapabilityError",
    "DeviceInfo",
    "NoKernelImageError",
    "Unknown",
    "check_binary",
    "check_pt2",
    "clear_cache",
    "max_shared_memory_per_block",
    "require_capability",
    "set_device_provider",
    "shared_memory_fits",
]

SKIP_ENV = "CUDAFIT_SKIP_CAPABILITY_CHECK"


class CapabilityError(CudafitError, RuntimeError):
    """The device cannot run the requested work (raised by the guard functions)."""

    code = "capability"


class NoKernelImageError(CapabilityError):
    """A binary has no SASS or PTX usable on the device: the launch would fail with error 209."""

    code = "no-kernel-image"


class Unknown:
    """A falsy "cannot tell" answer, with the reason (e.g. no CUDA device on this machine)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"Unknown({self.reason!r})"


UNKNOWN = Unknown("no CUDA device on this machine")


class DeviceInfo(FrozenValue):
    """A CUDA device as the guard sees it (ordinal under the current CUDA_VISIBLE_DEVICES).

    An immutable value with the semantics of a frozen dataclass, written without one (import cost).
    """

    __slots__ = ("compute_capability", "cuda_index", "max_shared_memory_per_block_optin", "name")
    __match_args__ = ("cuda_index", "name", "compute_capability", "max_shared_memory_per_block_optin")
    cuda_index: int
    name: str
    compute_capability: ComputeCapability
    max_shared_memory_per_block_optin: int | None

    def __init__(
        self,
        cuda_index: int,
        name: str,
        compute_capability: ComputeCapability,
        max_shared_memory_per_block_optin: int | None = None,
    ) -> None:
        self._assign(cuda_index, name, compute_capability, max_shared_memory_per_block_optin)

    @property
    def gpu(self) -> Gpu:
        """The GPU the verdict engine judges (imported here, not at module level: the import budget)."""
        from cudafit.model import Gpu

        return Gpu(self.name, self.compute_capability, self.cuda_index)


class _State:
    """Process-wide guard state (devices found, how to find them), guarded by ``_lock``."""

    devices: tuple[DeviceInfo, ...] | None = None
    provider: Callable[[], Sequence[DeviceInfo]] | None = None


_lock = allocate_lock()
_state = _State()
_capability_cache: dict[tuple[Minimum, int, str | None], tuple[CapabilityError | None, DeviceInfo | None]] = {}
_binary_cache: dict[tuple[str, int], str | CapabilityError] = {}  # (path, CUDA ordinal) -> status or the error


def set_device_provider(provider: Callable[[], Sequence[DeviceInfo]] | None) -> None:
    """Replace how devices are found (tests pass fakes); ``None`` restores the default."""
    with _lock:
        _state.provider = provider
    clear_cache()


def clear_cache() -> None:
    """Forget devices and cached answers (after CUDA_VISIBLE_DEVICES changes, or in tests)."""
    with _lock:
        _state.devices = None
        _capability_cache.clear()
        _binary_cache.clear()


def _torch_devices() -> list[DeviceInfo] | None:
    torch = sys.modules.get("torch")
    try:
        if torch is None or not torch.cuda.is_initialized():
            return None  # never initialise CUDA on the caller's behalf
        out = []
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            optin = getattr(p, "shared_memory_per_block_optin", None)
            out.append(DeviceInfo(i, p.name, ComputeCapability(p.major, p.minor), optin))
        return out
    except Exception:
        return None


def _default_devices() -> list[DeviceInfo]:
    found = _torch_devices()
    if found is not None:
        return found
    from cudafit.probe import probe_machine

    inv = probe_machine()
    return [
        DeviceInfo(d.cuda_index, d.name, d.compute_capability)
        for d in inv.cuda_devices
        if d.cuda_index is not None and d.compute_capability is not None
    ]


def _all_devices() -> tuple[DeviceInfo, ...]:
    devs = _state.devices
    if devs is None:
        found = tuple((_state.provider or _default_devices)())
        with _lock:
            _state.devices = devs = found
    return devs


def _current_index(device: Device) -> int:
    """The CUDA ordinal meant by ``device`` (None: torch's current device if torch is in use, else 0)."""
    if device is None:
        torch = sys.modules.get("torch")
        if torch is not None:
            try:
                if torch.cuda.is_initialized():
                    return int(torch.cuda.current_device())
            except Exception:
                pass
        return 0
    if isinstance(device, int):
        return device
    index = getattr(device, "index", None)  # torch.device("cuda:1")
    if isinstance(index, int):
        return index
    text = str(device)
    if text.startswith("cuda"):
        return int(text.partition(":")[2] or 0)
    msg = f"not a CUDA device: {device!r}"
    raise CapabilityError(msg)


def _device(device: Device) -> DeviceInfo | None:
    index = _current_index(device)
    for d in _all_devices():
        if d.cuda_index == index:
            return d
    return None


def require_capability(minimum: Minimum, device: Device = None, *, feature: str | None = None) -> DeviceInfo | None:
    """Raise :class:`CapabilityError` unless the device's compute capability is at least ``minimum``.

    ``minimum``: ``"7.5"``, ``"sm_75"``, ``(7, 5)`` or a :class:`ComputeCapability`.  ``device``:
    ``None`` (the device the work runs on), a CUDA ordinal, or a ``torch.device``.  Returns the
    device checked (``None`` when skipped by ``CUDAFIT_SKIP_CAPABILITY_CHECK``).
    """
    if os.environ.get(SKIP_ENV, "") not in ("", "0"):
        return None
    index = _current_index(device)
    key = (minimum, index, feature)
    cached = _capability_cache.get(key)
    if cached is None:
        err = _check_capability(minimum, device, feature)
        cached = (err, None if err else _device(device))
        with _lock:
            _capability_cache[key] = cached
    if cached[0] is not None:
        raise cached[0]
    return cached[1]


def _check_capability(minimum: Minimum, device: Device, feature: str | None) -> CapabilityError | None:
    need = ComputeCapability(*minimum) if isinstance(minimum, tuple) else parse_compute_capability(minimum)
    what = f" for {feature}" if feature else ""
    dev = _device(device)
    if dev is None:
        devs = _all_devices()
        where = (
            f"CUDA device {_current_index(device)} does not exist ({len(devs)} visible)"
            if devs
            else "no CUDA device is visible on this machine"
        )
        return CapabilityError(f"compute capability {need} or newer is required{what}, but {where}")
    if dev.compute_capability < need:
        return CapabilityError(
            f"{dev.name} (CUDA device {dev.cuda_index}) has compute capability {dev.compute_capability}; "
            f"{need} or newer is required{what}"
        )
    return None


def check_binary(module_or_path: ModuleType | str | os.PathLike[str], device: Device = None) -> str:
    """Check that an extension's shared object can run on the device; return its status.

    ``module_or_path``: an imported module (its ``__file__``), a torch ops library path, or any path.
    Raises :class:`NoKernelImageError` when no module of the file has usable SASS or PTX, naming the
    archs present and the fix.  Returns ``native``, ``jit``, ``partial`` or ``none``.
    """
    if os.environ.get(SKIP_ENV, "") not in ("", "0"):
        return "skipped"
    path = _path_of(module_or_path)
    index = _current_index(device)
    key = (path, index)
    cached = _binary_cache.get(key)
    if cached is None:
        cached = _evaluate_binary(path, device)
        with _lock:
            _binary_cache[key] = cached
    if isinstance(cached, CapabilityError):
        raise cached
    return cached


def _path_of(module_or_path: ModuleType | str | os.PathLike[str]) -> str:
    """An imported module's file, or the path itself."""
    if isinstance(module_or_path, (str, os.PathLike)):
        return os.fspath(module_or_path)
    file = module_or_path.__file__
    if not file:
        msg = f"expected str, bytes or os.PathLike object, not {type(module_or_path).__name__}"
        raise TypeError(msg)
    return file


def _evaluate_binary(path: str, device: Device) -> str | CapabilityError:
    from cudafit.binary import EntryKind, inspect_path
    from cudafit.rules.engine import evaluate_file
    from cudafit.rules.status import Status

    dev = _device(device)
    if dev is None:
        return CapabilityError(f"cannot check {os.path.basename(path)}: no CUDA device {_current_index(device)}")
    facts = inspect_path(path)
    if facts.error and not facts.modules:
        return CapabilityError(f"cannot read {path}: {facts.error}")
    status = evaluate_file(facts, dev.gpu).status
    if status is not Status.FAILS:
        return str(status.value)  # the public answer is the plain word (``native``...), as documented
    archs = sorted(
        {e.arch_name for m in facts.runtime_modules for e in m.entries if e.kind in (EntryKind.SASS, EntryKind.PTX)}
    )
    cc = dev.compute_capability
    return NoKernelImageError(
        f"{os.path.basename(path)} has no kernel image for {dev.name} (compute capability {cc}): it carries "
        f"{', '.join(archs) or 'no device code'}; launching would fail with 'no kernel image is available for "
        f'execution on the device\'. Rebuild with TORCH_CUDA_ARCH_LIST="{cc}+PTX" (or install a build that '
        f"includes sm_{cc.arch_number}: cudafit check PKG --gpu {cc})"
    )


def max_shared_memory_per_block(device: Device = None) -> int | Unknown:
    """The opt-in shared memory per block of the device, or :data:`UNKNOWN`-like when there is none.

    From torch when the caller initialised CUDA through it (the driver's value), else from the
    compute-capability table (CUDA Programming Guide 13, Table 31) for the device NVML reports.
    """
    dev = _device(device)
    if dev is None:
        devs = _all_devices()
        return UNKNOWN if not devs else Unknown(f"no CUDA device {_current_index(device)} ({len(devs)} visible)")
    if dev.max_shared_memory_per_block_optin:
        return dev.max_shared_memory_per_block_optin
    from cudafit.rules.tables import cc_limits

    lim = cc_limits(dev.compute_capability)
    return (
        lim.max_shared_memory_per_block_optin
        if lim
        else Unknown(f"compute capability {dev.compute_capability} is not in cudafit's table")
    )


def shared_memory_fits(nbytes: int, device: Device = None) -> bool | Unknown:
    """Whether ``nbytes`` of (dynamic, opted-in) shared memory per block fit the device.

    Returns :data:`UNKNOWN` (falsy) instead of raising on a machine without a GPU (seed 002).
    """
    limit = max_shared_memory_per_block(device)
    if isinstance(limit, Unknown):
        return limit
    return nbytes <= limit


class Pt2Check(FrozenValue):
    """Whether a ``.pt2`` AOTInductor package can run on a device, and how (an immutable value)."""

    __slots__ = ("cubins_present", "fixes", "move_inputs_to", "package_device", "problems", "runnable", "runner")
    __match_args__ = ("runnable", "package_device", "runner", "cubins_present", "move_inputs_to", "problems", "fixes")
    runnable: bool
    package_device: str | None
    runner: str | None
    cubins_present: bool
    move_inputs_to: str | None
    problems: tuple[str, ...]
    fixes: tuple[str, ...]

    def __init__(
        self,
        *,
        runnable: bool,
        package_device: str | None,
        runner: str | None,
        cubins_present: bool,
        move_inputs_to: str | None,
        problems: tuple[str, ...],
        fixes: tuple[str, ...],
    ) -> None:
        self._assign(runnable, package_device, runner, cubins_present, move_inputs_to, problems, fixes)


def check_pt2(path: str, device: str = "cuda") -> Pt2Check:
    """Seed 003: the runner type, the cubins, and where the inputs must live for ``device``."""
    from cudafit.targets.pt2 import inspect_pt2

    report = inspect_pt2(path, intended_device=device)
    pkg_device = report.device
    runner = {"cuda": "AOTIModelContainerRunnerCuda", "cpu": "AOTIModelContainerRunnerCpu"}.get(pkg_device or "")
    cubins = any(m.cubins or m.cubin_archs for m in report.models)
    return Pt2Check(
        runnable=not report.problems,
        package_device=pkg_device,
        runner=runner,
        cubins_present=cubins,
        move_inputs_to=pkg_device,
        problems=report.problems,
        fixes=report.fixes,
    )
