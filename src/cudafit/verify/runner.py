"""The parent side of ``verify``: one worker process per GPU, a time limit per module, restarts.

The parent never loads libcuda: it starts ``python -m cudafit._verify_worker`` (see that module for the
protocol), sends one module at a time and waits for the answer with a deadline.  A worker that does not
answer in time is killed (that module is a ``timeout``), one that dies is a ``crash``; either way a new
worker is started for the rest.  Workers run with ``CUDA_MODULE_LOADING=EAGER`` (with lazy loading a
driver may defer loading a module's kernels until each is first fetched, so a load could succeed that
a launch would not: https://docs.nvidia.com/cuda/cuda-programming-guide/04-special-topics/lazy-loading.html)
and ``CUDA_CACHE_DISABLE=1`` (a JIT time must be what a first launch pays, not a cache hit, and verify
must not fill the user's JIT cache); ``CUDA_FORCE_PTX_JIT`` is removed (it makes the driver ignore
cubins, which is not how the modules are used).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, Literal

from cudafit.errors import DriverUnavailableError
from cudafit.model import Gpu, JsonDict, parse_compute_capability

__all__ = [
    "Answer",
    "DeviceInfo",
    "Job",
    "Listing",
    "iter_answers",
    "list_devices",
    "worker_command",
    "worker_env",
]

#: Seconds a worker may take to start (interpreter, cuInit, primary context) before it counts as hung.
STARTUP_SECONDS = 120.0


@dataclass(frozen=True)
class DeviceInfo:
    """A CUDA device as the driver enumerates it: the GPU (its ``index`` is the CUDA ordinal under the current
    ``CUDA_VISIBLE_DEVICES``) and where it sits (PCI bus id, UUID)."""

    gpu: Gpu
    pci_bus_id: str | None = None
    uuid: str | None = None

    @property
    def ordinal(self) -> int:
        """The CUDA ordinal the driver gave the device."""
        return self.gpu.index or 0

    @property
    def name(self) -> str:
        """The driver's name for the device (``cuDeviceGetName``)."""
        return self.gpu.name

    def to_dict(self) -> JsonDict:
        """JSON form."""
        return {
            "ordinal": self.ordinal,
            "name": self.name,
            "compute_capability": str(self.gpu.compute_capability),
            "pci_bus_id": self.pci_bus_id,
            "uuid": self.uuid,
        }


def _device_of(d: Mapping[str, Any]) -> DeviceInfo:
    """A device of the worker's ``--list`` answer; one the driver describes oddly is a driver error."""
    try:
        cc = parse_compute_capability(str(d["compute_capability"]))
        return DeviceInfo(Gpu(str(d["name"]), cc, int(d["ordinal"])), d.get("pci_bus_id"), d.get("uuid"))
    except (KeyError, TypeError, ValueError) as err:
        msg = f"the verify worker listed a device it could not describe: {str(d)[:200]}"
        raise DriverUnavailableError("driver-error", msg) from err


@dataclass(frozen=True)
class Listing:
    """What ``--list`` said: the backend (``ctypes`` or ``replay``), the driver, the devices."""

    backend: str
    cuda_version: str | None
    driver_version: str | None
    devices: tuple[DeviceInfo, ...]


@dataclass(frozen=True)
class Job:
    """One module to load: ``size`` bytes at ``offset`` of the file ``path`` (``text``: PTX, NUL appended)."""

    id: int
    path: str
    offset: int
    size: int
    text: bool = False


#: What became of one load (see :class:`Answer`).
Outcome = Literal["answer", "timeout", "crash", "unreadable", "not-recorded", "not-run"]


@dataclass(frozen=True)
class Answer:
    """The driver's answer for one job on one device, or why there is none.

    ``outcome``: ``answer`` (``code``/``name`` hold the CUresult), ``timeout``, ``crash``, ``unreadable``
    (the worker could not read the bytes), ``not-recorded`` (a replay without this module), ``not-run``
    (the device's worker could not be started again).
    """

    job: int
    ordinal: int
    outcome: Outcome
    code: int | None = None
    name: str | None = None
    seconds: float | None = None
    jit_ms: float | None = None
    message: str = ""


def worker_command(*args: str) -> list[str]:
    """The worker's command line: ``python -m cudafit._verify_worker`` run from this very cudafit.

    The directory holding this ``cudafit`` package is appended to the worker's ``sys.path`` (never put in
    front of the standard library), so a cudafit that is imported from a source tree rather than
    installed starts the same code; the interpreter runs isolated (``-I``: no current directory, no
    user site, no ``PYTHON*`` variables).
    """
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    boot = f"import sys; sys.path.append({root!r}); from cudafit._verify_worker import main; sys.exit(main())"
    # -I: isolated mode, so nothing of the directory verify runs in (a project's json.py, say) or of
    # PYTHON* variables is imported: verify never executes code of what it checks.
    return [sys.executable, "-I", "-c", boot, *args]


def worker_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment workers run in (see the module docstring for why each variable)."""
    env = dict(os.environ if base is None else base)
    env["CUDA_MODULE_LOADING"] = "EAGER"
    env["CUDA_CACHE_DISABLE"] = "1"
    env.pop("CUDA_FORCE_PTX_JIT", None)
    return env


def _last_event(text: str) -> JsonDict | None:
    for line in reversed(text.strip().splitlines()):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and "event" in obj:
            return obj
    return None


def list_devices(*, env: Mapping[str, str] | None = None, timeout: float = STARTUP_SECONDS) -> Listing:
    """The driver's CUDA devices, asked in a worker process (``cuInit`` and queries; no context)."""
    try:
        proc = subprocess.run(
            worker_command("--list"),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=worker_env(env),
            check=False,
        )
    except subprocess.TimeoutExpired as err:
        msg = f"the driver did not list its devices within {timeout:g} s"
        raise DriverUnavailableError("driver-error", msg) from err
    except OSError as err:
        raise DriverUnavailableError("worker-failed", f"cannot start the verify worker: {err}") from err
    event = _last_event(proc.stdout)
    if event is None:
        detail = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise DriverUnavailableError("worker-failed", f"the verify worker failed: {detail}")
    if event["event"] == "error":
        raise DriverUnavailableError(str(event.get("kind", "driver-error")), str(event.get("message", "")))
    devices = tuple(_device_of(d) for d in event.get("devices", []))
    if not devices:
        raise DriverUnavailableError("no-gpu", "the driver sees no CUDA GPU (cuDeviceGetCount returned 0)")
    driver = event.get("driver") or {}
    return Listing(str(event.get("backend", "")), driver.get("cuda_version"), driver.get("version"), devices)


class _Worker:
    """One worker process for one device; reads its answers with deadlines."""

    def __init__(self, ordinal: int, env: Mapping[str, str], command: Sequence[str]) -> None:
        self.ordinal = ordinal
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            [*command, "--device", str(ordinal)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=dict(env),
            bufsize=0,
        )
        assert self.proc.stdout is not None
        self._fd = self.proc.stdout.fileno()
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._fd, selectors.EVENT_READ)
        self._buf = b""

    def readline(self, deadline: float) -> bytes | None:
        """One line; ``None`` when the deadline passed, ``b""`` at the end of the output."""
        while b"\n" not in self._buf:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._sel.select(remaining):
                return None
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                return b""
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line + b"\n"

    def next_event(self, deadline: float) -> JsonDict | str:
        """The next protocol event, or ``"timeout"`` / ``"eof"``."""
        while True:
            line = self.readline(deadline)
            if line is None:
                return "timeout"
            if not line:
                return "eof"
            with contextlib.suppress(ValueError):
                obj = json.loads(line)
                if isinstance(obj, dict) and "event" in obj:
                    return obj

    def send(self, job: Job) -> bool:
        """Send a request; ``False`` when the worker is gone."""
        assert self.proc.stdin is not None
        line = json.dumps({"id": job.id, "path": job.path, "offset": job.offset, "size": job.size, "text": job.text})
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return False
        return True

    def death(self) -> str:
        """Why the worker died: its exit status or signal and the end of its stderr."""
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            rc = self.proc.returncode
        if rc is not None and rc < 0:
            try:
                what = f"killed by {signal.Signals(-rc).name}"
            except ValueError:
                what = f"killed by signal {-rc}"
        else:
            what = f"exited with status {rc}"
        tail = self.stderr_tail()
        return f"worker {what}" + (f": {tail}" if tail else "")

    def stderr_tail(self) -> str:
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - 400))
            text = self._stderr.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""
        return text.splitlines()[-1] if text else ""

    def kill(self) -> None:
        """Kill this worker (the process this object started) and reap it."""
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)

    def close(self, deadline: float) -> None:
        """End of input: the worker releases its context and exits; killed if it does not in time."""
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        if self.proc.poll() is None:
            while True:
                event = self.next_event(deadline)
                if not isinstance(event, dict) or event.get("event") == "closed":
                    break
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        self.kill()
        self._sel.close()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._stderr.close()


def _start(ordinal: int, env: Mapping[str, str], command: Sequence[str]) -> tuple[_Worker | None, str]:
    """A ready worker, or (None, why)."""
    try:
        w = _Worker(ordinal, env, command)
    except OSError as err:
        return None, f"cannot start the verify worker: {err}"
    event = w.next_event(time.monotonic() + STARTUP_SECONDS)
    if isinstance(event, dict) and event.get("event") == "ready":
        return w, ""
    if isinstance(event, dict) and event.get("event") == "error":
        why = str(event.get("message", "the driver refused"))
    elif event == "timeout":
        why = f"the worker did not open the device within {STARTUP_SECONDS:g} s"
    else:
        why = w.death()
    w.kill()
    w.close(time.monotonic() + 1)
    return None, why


class _Live:
    """The workers running now, so that an interrupted run can kill them (and only them)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.workers: set[_Worker] = set()

    def add(self, w: _Worker) -> None:
        with self.lock:
            self.workers.add(w)

    def discard(self, w: _Worker) -> None:
        with self.lock:
            self.workers.discard(w)

    def kill_all(self) -> None:
        with self.lock:
            for w in self.workers:
                w.kill()


def _run_device(
    ordinal: int,
    jobs: Sequence[Job],
    timeout: float,
    env: Mapping[str, str],
    command: Sequence[str],
    put: Callable[[Answer], None],
    stop: threading.Event,
    live: _Live,
) -> None:
    """Load ``jobs`` on one device, one at a time, restarting the worker after a timeout or crash."""
    worker: _Worker | None = None
    try:
        for n, job in enumerate(jobs):
            if stop.is_set():
                return
            if worker is None:
                worker, why = _start(ordinal, env, command)
                if worker is None:
                    for rest in jobs[n:]:
                        put(Answer(rest.id, ordinal, "not-run", message=why))
                    return
                live.add(worker)
            answer = _ask(worker, job, ordinal, timeout)
            put(answer)
            if answer.outcome in ("timeout", "crash"):  # the worker is gone (or killed): the next job starts one
                live.discard(worker)
                worker.close(time.monotonic() + 1)
                worker = None
    finally:
        if worker is not None:
            live.discard(worker)
            worker.close(time.monotonic() + 30)


def _ask(worker: _Worker, job: Job, ordinal: int, timeout: float) -> Answer:
    """Send ``job`` and wait up to ``timeout`` for its answer; a worker that does not answer in time is killed."""
    if not worker.send(job):
        return Answer(job.id, ordinal, "crash", message=worker.death())
    event = worker.next_event(time.monotonic() + timeout)
    if isinstance(event, dict) and event.get("event") == "result" and event.get("id") == job.id:
        name = str(event.get("name"))
        if name == "not-recorded":  # a replay that has no answer for this module
            return Answer(job.id, ordinal, "not-recorded", message=str(event.get("log") or ""))
        code = int(event.get("code", -1))
        log = str(event.get("log") or "")
        return Answer(
            job.id, ordinal, "answer", code if code >= 0 else None, name, event.get("seconds"), event.get("jit_ms"), log
        )
    if isinstance(event, dict) and event.get("event") == "unreadable":
        return Answer(job.id, ordinal, "unreadable", message=str(event.get("message", "")))
    if event == "timeout":
        worker.kill()
        return Answer(job.id, ordinal, "timeout", seconds=timeout, message=f"no answer within {timeout:g} s")
    return Answer(job.id, ordinal, "crash", message=worker.death())


def iter_answers(
    jobs_by_device: Mapping[int, Sequence[Job]],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    command: Sequence[str] | None = None,
) -> Iterator[Answer]:
    """Answers from one worker per device, as they come (devices run in parallel)."""
    q: queue.Queue[Answer | None] = queue.Queue()
    stop = threading.Event()
    live = _Live()
    environ = worker_env(env)
    cmd = list(command) if command is not None else worker_command()
    threads = []
    for ordinal, jobs in jobs_by_device.items():

        def work(o: int = ordinal, js: Sequence[Job] = jobs) -> None:
            try:
                _run_device(o, js, timeout, environ, cmd, q.put, stop, live)
            finally:
                q.put(None)

        t = threading.Thread(target=work, name=f"cudafit-verify-{ordinal}", daemon=True)
        threads.append(t)
        t.start()
    running = len(threads)
    try:
        while running:
            item = q.get()
            if item is None:
                running -= 1
                continue
            yield item
    finally:
        stop.set()
        if running:  # interrupted: do not wait for modules still loading
            live.kill_all()
        for t in threads:
            t.join(timeout=60)
