"""Driver backends of the verify worker: the real CUDA driver through ctypes, and a replay of recorded answers.

These classes run only inside ``python -m cudafit._verify_worker``: the one place in cudafit that
creates a CUDA context.  Nothing here is imported by the rest of cudafit.

Why ctypes on ``libcuda.so.1`` and not NVIDIA's ``cuda-bindings`` (docs/verify.md has the long form):
``verify`` must run against whatever driver the machine has, old ones included (an old driver is where
``CUDA_ERROR_UNSUPPORTED_PTX_VERSION`` happens); a ``cuda-bindings`` major needs a matching driver
(12.x: 525.60.13+, 13.x: 580.65+) and has its own Python floor (12.9.11: 3.11+), cudafit's is 3.10.
The fourteen functions used here (``cuInit``, ``cuDeviceGet*``, ``cuDevicePrimaryCtxRetain``/``Release``,
``cuModuleLoadDataEx``, ``cuModuleUnload``, ``cuGetErrorName``) are exported by every libcuda since
CUDA 11 with the same C signatures (cuda.h), and ``cuda-bindings`` itself loads the same ``libcuda.so.1``.

``cuModuleLoadDataEx`` rather than ``cuLibraryLoadData``: it exists in every driver, takes the same
images (a cubin, a fatbin, NUL-terminated PTX: cuda.h), reports the JIT's wall time and logs through
its options, and loads into the one context the worker owns, which is then released.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cudafit.errors import DriverUnavailableError
from cudafit.verify.cuda_errors import result_code, result_name

if TYPE_CHECKING:
    from cudafit.model import JsonDict

__all__ = ["CtypesDriver", "LoadOutcome", "ReplayDriver", "make_driver"]

# CUjit_option values (cuda.h): the JIT reports its wall time and writes its logs into our buffers.
_CU_JIT_WALL_TIME = 2
_CU_JIT_INFO_LOG_BUFFER = 3
_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4
_CU_JIT_ERROR_LOG_BUFFER = 5
_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
_LOG_BYTES = 4096
# CUdevice_attribute values (cuda.h)
_ATTR_CC_MAJOR = 75
_ATTR_CC_MINOR = 76
_CUDA_ERROR_STUB_LIBRARY = 34
_CUDA_ERROR_NO_DEVICE = 100


@dataclass(frozen=True)
class LoadOutcome:
    """What one load returned: the CUresult (or a replayed ``crash``/``hang``), how long it took, the JIT's log."""

    code: int
    name: str
    seconds: float
    jit_ms: float | None = None
    log: str = ""
    simulate: str | None = None  # replay only: "crash" | "hang" (what the recorded run met)


class CtypesDriver:
    """The CUDA driver API through ctypes: device listing without a context, loads in a primary context."""

    backend = "ctypes"

    def __init__(self, library: str = "libcuda.so.1", *, lib: Any = None) -> None:
        """``lib`` replaces the loaded library (tests pass a fake with libcuda's functions)."""
        if lib is None:
            try:
                lib = ctypes.CDLL(library)
            except OSError as err:
                msg = f"no NVIDIA driver: {library} cannot be loaded ({err})"
                raise DriverUnavailableError("no-driver", msg) from err
        self.lib: Any = lib
        self._device: int | None = None
        self._context_held = False
        self._declare()
        rc = self.lib.cuInit(0)
        if rc == _CUDA_ERROR_STUB_LIBRARY:
            raise DriverUnavailableError(
                "no-driver", f"{library} is the CUDA toolkit's stub library, not a driver (CUDA_ERROR_STUB_LIBRARY)"
            )
        if rc == _CUDA_ERROR_NO_DEVICE:
            visible = os.environ.get("CUDA_VISIBLE_DEVICES")
            extra = f" (CUDA_VISIBLE_DEVICES={visible!r})" if visible is not None else ""
            raise DriverUnavailableError(
                "no-gpu", f"the driver sees no CUDA GPU: cuInit returned CUDA_ERROR_NO_DEVICE{extra}"
            )
        if rc != 0:
            raise DriverUnavailableError("driver-error", f"cuInit failed with {self.error_name(rc)}")

    def _declare(self) -> None:
        c_int_p = ctypes.POINTER(ctypes.c_int)
        sig: dict[str, tuple[Any, ...]] = {
            "cuInit": (ctypes.c_uint,),
            "cuDriverGetVersion": (c_int_p,),
            "cuDeviceGetCount": (c_int_p,),
            "cuDeviceGet": (c_int_p, ctypes.c_int),
            "cuDeviceGetName": (ctypes.c_char_p, ctypes.c_int, ctypes.c_int),
            "cuDeviceGetAttribute": (c_int_p, ctypes.c_int, ctypes.c_int),
            "cuDeviceGetPCIBusId": (ctypes.c_char_p, ctypes.c_int, ctypes.c_int),
            "cuDevicePrimaryCtxRetain": (ctypes.POINTER(ctypes.c_void_p), ctypes.c_int),
            "cuCtxSetCurrent": (ctypes.c_void_p,),
            "cuModuleLoadDataEx": (
                ctypes.POINTER(ctypes.c_void_p),
                ctypes.c_void_p,
                ctypes.c_uint,
                ctypes.POINTER(ctypes.c_int),
                ctypes.POINTER(ctypes.c_void_p),
            ),
            "cuModuleUnload": (ctypes.c_void_p,),
            "cuGetErrorName": (ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)),
        }
        # cuDevicePrimaryCtxRelease became _v2 in CUDA 11 (cuda.h maps the name); older drivers have the plain one.
        release = "cuDevicePrimaryCtxRelease_v2" if hasattr(self.lib, "cuDevicePrimaryCtxRelease_v2") else None
        sig[release or "cuDevicePrimaryCtxRelease"] = (ctypes.c_int,)
        for name, args in sig.items():
            try:
                fn = getattr(self.lib, name)
            except AttributeError as err:
                raise DriverUnavailableError("driver-error", f"libcuda lacks a function verify needs: {name}") from err
            if hasattr(type(fn), "argtypes"):  # a ctypes function (a test's fake library passes Python ones)
                fn.argtypes = list(args)
                fn.restype = ctypes.c_int
        self._release = getattr(self.lib, release or "cuDevicePrimaryCtxRelease")
        self._uuid = getattr(self.lib, "cuDeviceGetUuid_v2", None) or getattr(self.lib, "cuDeviceGetUuid", None)

    def error_name(self, code: int) -> str:
        """The driver's own name for ``code`` (cuGetErrorName), else the table's."""
        out = ctypes.c_char_p()
        try:
            if self.lib.cuGetErrorName(code, ctypes.byref(out)) == 0 and out.value:
                return out.value.decode("ascii", "replace")
        except (OSError, ctypes.ArgumentError):
            pass
        return result_name(code)

    def _check(self, rc: int, what: str) -> None:
        if rc != 0:
            raise DriverUnavailableError("driver-error", f"{what} failed with {self.error_name(rc)}")

    def driver_info(self) -> JsonDict:
        """The CUDA version the driver implements (cuDriverGetVersion: 13000 = 13.0)."""
        v = ctypes.c_int(0)
        self._check(self.lib.cuDriverGetVersion(ctypes.byref(v)), "cuDriverGetVersion")
        return {"cuda_version": f"{v.value // 1000}.{(v.value % 1000) // 10}", "version": None}

    def devices(self) -> list[JsonDict]:
        """Every CUDA ordinal with its name, compute capability, PCI bus id and UUID (no context)."""
        count = ctypes.c_int(0)
        self._check(self.lib.cuDeviceGetCount(ctypes.byref(count)), "cuDeviceGetCount")
        return [self._describe(i) for i in range(count.value)]

    def _describe(self, ordinal: int) -> JsonDict:
        dev = ctypes.c_int(0)
        self._check(self.lib.cuDeviceGet(ctypes.byref(dev), ordinal), f"cuDeviceGet({ordinal})")
        name = ctypes.create_string_buffer(256)
        self._check(self.lib.cuDeviceGetName(name, 256, dev.value), "cuDeviceGetName")
        major, minor = ctypes.c_int(0), ctypes.c_int(0)
        self._check(
            self.lib.cuDeviceGetAttribute(ctypes.byref(major), _ATTR_CC_MAJOR, dev.value), "cuDeviceGetAttribute"
        )
        self._check(
            self.lib.cuDeviceGetAttribute(ctypes.byref(minor), _ATTR_CC_MINOR, dev.value), "cuDeviceGetAttribute"
        )
        bus = ctypes.create_string_buffer(64)
        pci = bus.value.decode() if self.lib.cuDeviceGetPCIBusId(bus, 64, dev.value) == 0 else None
        uuid = None
        if self._uuid is not None:
            raw = ctypes.create_string_buffer(16)
            if self._uuid(raw, dev.value) == 0:
                h = raw.raw.hex()
                uuid = f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        return {
            "ordinal": ordinal,
            "name": name.value.decode("utf-8", "replace"),
            "compute_capability": f"{major.value}.{minor.value}",
            "pci_bus_id": pci.lower() if pci else None,
            "uuid": uuid,
        }

    def open(self, ordinal: int) -> JsonDict:
        """Retain the device's primary context and make it current: the only CUDA context cudafit creates."""
        count = ctypes.c_int(0)
        self._check(self.lib.cuDeviceGetCount(ctypes.byref(count)), "cuDeviceGetCount")
        if not 0 <= ordinal < count.value:
            raise DriverUnavailableError("bad-device", f"no CUDA device {ordinal}: the driver sees {count.value}")
        info = self._describe(ordinal)
        dev = ctypes.c_int(0)
        self._check(self.lib.cuDeviceGet(ctypes.byref(dev), ordinal), "cuDeviceGet")
        ctx = ctypes.c_void_p()
        self._check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev.value), "cuDevicePrimaryCtxRetain")
        self._device, self._context_held = dev.value, True
        self._check(self.lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        return info

    def load(self, image: bytes, *, text: bool = False) -> LoadOutcome:
        """``cuModuleLoadDataEx`` on ``image`` (``text``: PTX, which the driver wants NUL-terminated); the
        module is unloaded again at once."""
        if text:
            image += b"\0"
        buf = ctypes.create_string_buffer(image, len(image))
        info_log = ctypes.create_string_buffer(_LOG_BYTES)
        error_log = ctypes.create_string_buffer(_LOG_BYTES)
        options = (ctypes.c_int * 5)(
            _CU_JIT_WALL_TIME,
            _CU_JIT_INFO_LOG_BUFFER,
            _CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
            _CU_JIT_ERROR_LOG_BUFFER,
            _CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        )
        values = (ctypes.c_void_p * 5)(
            None, ctypes.addressof(info_log), _LOG_BYTES, ctypes.addressof(error_log), _LOG_BYTES
        )
        module = ctypes.c_void_p()
        start = time.perf_counter()
        rc = self.lib.cuModuleLoadDataEx(ctypes.byref(module), buf, 5, options, values)
        seconds = time.perf_counter() - start
        if rc == 0:
            self.lib.cuModuleUnload(module)
        # CU_JIT_WALL_TIME: the driver overwrites the option's slot with a float (milliseconds).
        jit_ms = float(ctypes.c_float.from_buffer(values, 0).value)
        log = (error_log.value or info_log.value).decode("utf-8", "replace").strip()
        return LoadOutcome(rc, self.error_name(rc), seconds, jit_ms if jit_ms > 0 else None, log[:2000])

    def close(self) -> None:
        """Release the primary context: with its last reference gone the driver destroys it (cuda.h)."""
        if self._context_held and self._device is not None:
            self._release(self._device)
            self._context_held = False


class ReplayDriver:
    """Answers recorded on a real GPU (``scripts/record_probe.py --verify``), or a fake written for tests.

    A replay file (``cudafit.verify-replay/1``) lists the machine's driver and devices and, per module
    (by the SHA-256 of the bytes the driver was given), the answer of each device.  A module the file
    does not know is answered ``not-recorded``.  ``driver: null`` replays a machine without a driver and
    ``init_error`` one whose driver sees no GPU.  A recorded ``crash`` or ``hang`` is replayed as such
    (the worker dies or stops answering), so a recorded run renders as it happened.
    """

    backend = "replay"

    def __init__(self, path: str) -> None:
        try:
            with open(path, encoding="utf-8") as fh:
                self.doc: JsonDict = json.load(fh)
        except (OSError, ValueError) as err:
            raise DriverUnavailableError("driver-error", f"replay file {path}: {err}") from err
        if self.doc.get("schema") != "cudafit.verify-replay/1":
            raise DriverUnavailableError("driver-error", f"replay file {path}: not a cudafit.verify-replay/1 document")
        if self.doc.get("driver") is None:
            raise DriverUnavailableError("no-driver", "no NVIDIA driver: libcuda.so.1 cannot be loaded (replayed)")
        init_error = self.doc.get("init_error")
        if init_error == "CUDA_ERROR_NO_DEVICE":
            raise DriverUnavailableError("no-gpu", "the driver sees no CUDA GPU: cuInit returned CUDA_ERROR_NO_DEVICE")
        if init_error:
            raise DriverUnavailableError("driver-error", f"cuInit failed with {init_error}")
        self.answers: dict[str, Mapping[str, Any]] = {r["sha256"]: r["answers"] for r in self.doc.get("results", [])}
        self.ordinal: int | None = None

    def driver_info(self) -> JsonDict:
        d = self.doc["driver"]
        return {"cuda_version": d.get("cuda_version"), "version": d.get("version")}

    def devices(self) -> list[JsonDict]:
        return [dict(d) for d in self.doc.get("devices", [])]

    def open(self, ordinal: int) -> JsonDict:
        devices = self.devices()
        if not 0 <= ordinal < len(devices):
            raise DriverUnavailableError("bad-device", f"no CUDA device {ordinal}: the driver sees {len(devices)}")
        self.ordinal = ordinal
        return devices[ordinal]

    def load(self, image: bytes, *, text: bool = False) -> LoadOutcome:
        """The recorded answer for these bytes (the module as stored in its file) on the open device."""
        digest = hashlib.sha256(image).hexdigest()
        answer = self.answers.get(digest, {}).get(str(self.ordinal))
        if answer is None:
            return LoadOutcome(-1, "not-recorded", 0.0, log=f"no recorded answer for module sha256 {digest[:16]}")
        name = str(answer["result"])
        if name in ("crash", "hang"):
            return LoadOutcome(-1, name, 0.0, simulate=name)
        code = result_code(name)
        return LoadOutcome(
            code if code is not None else int(answer.get("code", -1)),
            name,
            float(answer.get("seconds", 0.0)),
            answer.get("jit_ms"),
            str(answer.get("log", "")),
        )

    def close(self) -> None:
        self.ordinal = None


def make_driver(env: Mapping[str, str] | None = None) -> CtypesDriver | ReplayDriver:
    """``CUDAFIT_VERIFY_REPLAY=FILE`` replays a recording; otherwise the real driver."""
    environ = os.environ if env is None else env
    replay = environ.get("CUDAFIT_VERIFY_REPLAY")
    if replay:
        return ReplayDriver(replay)
    return CtypesDriver()
