"""``python -m cudafit._verify_worker``: the one process in which cudafit creates a CUDA context.

``cudafit verify`` starts one worker per GPU so that a driver fault or a hung JIT takes down this
process, never the report: the parent kills and restarts a worker that stops answering or dies, and
reports that module as a timeout or a crash.

Protocol, one JSON object per line:

* ``--list``: prints ``{"event": "devices", "backend", "driver", "devices": [...]}`` and exits; it calls
  ``cuInit`` and device queries only (no context).
* ``--device N``: retains device N's primary context, prints ``{"event": "ready", "backend", "driver",
  "device"}``, then answers each request ``{"id", "path", "offset", "size", "text"}`` read from stdin
  (the module's bytes are ``size`` bytes at ``offset`` of the file ``path``; ``text`` appends the NUL a
  PTX text needs) with ``{"event": "result", "id", "code", "name", "seconds", "jit_ms", "log"}``.  At
  the end of its input it releases the context (the driver destroys it) and exits 0.
* A driver that cannot be asked gives ``{"event": "error", "kind", "message"}`` and exit status 3.

The protocol goes to a duplicate of the original stdout; file descriptor 1 is pointed at stderr so
that anything a library prints cannot corrupt it.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from cudafit.model import JsonDict
    from cudafit.verify.driver import CtypesDriver, ReplayDriver

__all__ = ["main"]


def _emit(out: IO[str], obj: JsonDict) -> None:
    out.write(json.dumps(obj) + "\n")
    out.flush()


def _read(path: str, offset: int, size: int, files: dict[str, int]) -> bytes:
    fd = files.get(path)
    if fd is None:
        fd = os.open(path, os.O_RDONLY)
        files[path] = fd
    data = os.pread(fd, size, offset)
    if len(data) != size:
        msg = f"{path}: {size} bytes at {offset} requested, {len(data)} read"
        raise OSError(msg)
    return data


def _serve(driver: CtypesDriver | ReplayDriver, out: IO[str], requests: IO[str]) -> None:
    files: dict[str, int] = {}
    try:
        for line in requests:
            if not line.strip():
                continue
            req = json.loads(line)
            try:
                image = _read(req["path"], int(req["offset"]), int(req["size"]), files)
            except OSError as err:
                _emit(out, {"event": "unreadable", "id": req["id"], "message": str(err)})
                continue
            outcome = driver.load(image, text=bool(req.get("text")))
            if outcome.simulate == "crash":  # a replayed crash: die as a faulting driver would
                os.kill(os.getpid(), signal.SIGKILL)
            if outcome.simulate == "hang":
                while True:
                    time.sleep(3600)
            _emit(
                out,
                {
                    "event": "result",
                    "id": req["id"],
                    "code": outcome.code,
                    "name": outcome.name,
                    "seconds": round(outcome.seconds, 6),
                    "jit_ms": outcome.jit_ms,
                    "log": outcome.log,
                },
            )
    finally:
        for fd in files.values():
            os.close(fd)


def main(argv: list[str] | None = None) -> int:
    """Run the worker (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m cudafit._verify_worker")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--list", action="store_true", help="list the CUDA devices (no context) and exit")
    what.add_argument("--device", type=int, metavar="ORDINAL", help="load modules on this CUDA device")
    args = parser.parse_args(argv)
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    from cudafit.errors import DriverUnavailableError
    from cudafit.verify.driver import make_driver

    try:
        driver = make_driver()
        info = driver.driver_info()
        if args.list:
            _emit(out, {"event": "devices", "backend": driver.backend, "driver": info, "devices": driver.devices()})
            return 0
        device = driver.open(args.device)
    except DriverUnavailableError as err:
        _emit(out, {"event": "error", "kind": err.kind, "message": err.message})
        return 3
    _emit(out, {"event": "ready", "backend": driver.backend, "driver": info, "device": device})
    try:
        _serve(driver, out, sys.stdin)
    finally:
        driver.close()
    _emit(out, {"event": "closed"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
