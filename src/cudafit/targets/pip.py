"""Pip requirements: download the wheel (no dependencies, binary only) and scan it.

``cudafit check "fbgemm-gpu==1.9.0" --index-url https://download.pytorch.org/whl/cu128``
answers "which GPUs does this wheel support" before anyone installs it.  pip runs as a
subprocess with ``--no-deps --only-binary=:all:``, so no sdist (and no build backend code) is
ever executed.  Wheels are cached in ``$CUDAFIT_CACHE_DIR`` (default ``~/.cache/cudafit/wheels``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence

from cudafit.targets.interface import ScanItem, Target, error_item
from cudafit.targets.wheel import WheelTarget

__all__ = ["PipRequirementTarget", "cache_dir", "download_wheels"]


def cache_dir() -> str:
    """Where downloaded wheels are kept (``cudafit cache`` shows and clears them)."""
    from cudafit.targets.cache import cache_dir as base

    return os.path.join(base(), "wheels")


class PipRequirementTarget(Target):
    """A requirement string such as ``fbgemm-gpu==1.9.0``."""

    def __init__(self, requirement: str, *, pip_args: Sequence[str] = ()) -> None:
        self.requirement = requirement
        self.pip_args = list(pip_args)
        #: The wheels pip chose for this requirement, once :meth:`iter_items` ran (file names).
        self.resolved: list[str] = []

    def describe(self) -> str:
        return f"pip requirement {self.requirement}"

    def note(self) -> str | None:
        """What an unpinned requirement resolved to, now ("xformers: pip resolved xformers 0.0.33 (...whl)")."""
        if not self.resolved or "==" in self.requirement or self.requirement.endswith(".whl"):
            return None
        from cudafit.targets.wheel import wheel_name_version

        named = [" ".join(x for x in wheel_name_version(w) if x) or w for w in self.resolved]
        return f"{self.requirement}: pip resolved {', '.join(named)} ({', '.join(self.resolved)})"

    def iter_items(self) -> Iterator[ScanItem]:
        wheels, error = download_wheels(self.requirement, self.pip_args)
        if error is not None:
            yield error_item(self.requirement, error, "download-failed")
            return
        self.resolved = [os.path.basename(w) for w in wheels]
        for wheel in wheels:
            yield from WheelTarget(wheel, display=os.path.basename(wheel)).iter_items()


#: pip's lines naming the file it resolved: "Saved ./x.whl" (downloaded now) and "File was already
#: downloaded /d/x.whl" (found in the folder); stable wording since pip 10 (pip/_internal/operations/prepare.py).
_RESOLVED = re.compile(r"^\s*(?:Saved|File was already downloaded)\s+(?P<path>.+\.whl)\s*$")
#: "Downloading torch-2.14.1-...whl (555.1 MB)": the size of the download that follows.
_DOWNLOADING = re.compile(r"^\s*Downloading\s+(?P<name>\S+?\.whl)\s+\((?P<size>[\d.]+)\s*(?P<unit>[kMG]?B)\)")
_UNITS = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}


def download_wheels(requirement: str, pip_args: Sequence[str] = ()) -> tuple[list[str], str | None]:
    """(paths of the wheels pip resolves now, error): ``pip download --no-deps --only-binary=:all:`` into the cache.

    pip runs as a subprocess and only binary wheels are accepted, so no build backend (no code of the
    requirement) ever runs.  Only the wheels pip names in this run count: the folder keeps the wheels of
    earlier runs (an unpinned ``xformers`` downloaded last month), and judging those would judge a version
    pip no longer picks.  On a terminal the download shows its progress (bytes of pip's temporary file).
    """
    dest = os.path.join(cache_dir(), _slug(requirement + " ".join(pip_args)))
    os.makedirs(dest, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--progress-bar",
        "off",
        "-d",
        dest,
        *pip_args,
        requirement,
    ]
    started = time.time()
    rc, lines, failure = _run_pip(cmd, requirement)
    if failure is not None:
        return [], f"pip download failed: {failure}"
    present = {f for f in os.listdir(dest) if f.endswith(".whl")}
    named = [os.path.basename(m.group("path")) for m in map(_RESOLVED.match, lines) if m]
    wheels = [w for w in dict.fromkeys(named) if w in present]
    if not wheels:  # pip's wording changed: the wheels this run wrote, else the only one there
        fresh = [w for w in present if os.path.getmtime(os.path.join(dest, w)) >= started - 1]
        wheels = sorted(fresh) or (sorted(present) if len(present) == 1 else [])
    if rc != 0 or not wheels:
        detail = [line for line in lines if line.strip()]
        errors = [line for line in detail if line.startswith("ERROR")]
        reason = (errors or detail or [f"pip exited with {rc}"])[-1].strip()
        return [], f"pip download failed: {reason}"
    return [os.path.join(dest, w) for w in wheels], None


def _run_pip(cmd: list[str], requirement: str) -> tuple[int, list[str], str | None]:
    """(exit code, output lines, failure to run): pip with its own temporary folder, whose size is the
    progress of a download that pip itself shows only on a terminal it owns."""
    import shutil
    import tempfile
    import threading

    from cudafit.progress import human_bytes, progress

    tmp = tempfile.mkdtemp(prefix="cudafit-pip-")
    lines: list[str] = []
    try:
        env = {**os.environ, "TMPDIR": tmp, "PIP_NO_INPUT": "1"}
        try:
            proc = subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True, env=env
            )
        except OSError as err:
            return -1, [], str(err)
        assert proc.stdout is not None
        reader = threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)
        reader.start()
        deadline = time.monotonic() + 1800
        with progress(f"pip download {requirement}") as bar:
            while proc.poll() is None:
                if time.monotonic() > deadline:
                    proc.kill()
                    proc.wait()
                    return -1, lines, "timed out after 1800 s"
                if bar.shown:
                    bar.update(_download_detail(lines, _tree_size(tmp), human_bytes))
                time.sleep(0.1)
        reader.join(timeout=5)
        return proc.returncode, [line.rstrip("\n") for line in lines], None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _download_detail(lines: Sequence[str], done: int, fmt: Callable[[float], str]) -> str:
    """``torch-2.14.1-...whl: 120.3 MB of 555.1 MB`` from pip's last "Downloading" line and the bytes on disk."""
    for line in reversed(list(lines)):
        m = _DOWNLOADING.match(line)
        if m:
            total = float(m.group("size")) * _UNITS[m.group("unit")]
            return f"{m.group('name')}: {fmt(min(done, total))} of {fmt(total)}"
    return "resolving" if not done else fmt(done)


def _tree_size(root: str) -> int:
    total = 0
    for folder, _dirs, files in os.walk(root):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(folder, f))
            except OSError:
                continue
    return total


def _slug(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:16]
