"""Benchmark: cost of importing cudafit.guard and of cached guard calls.

The promise: import <= 30 ms over a bare interpreter, a cached require_capability / check_binary
call <= 2 us.

Import cost is what a library pays when it adds ``import cudafit.guard``: fresh interpreters,
``python -c "import cudafit.guard"`` against ``python -c pass``, interleaved so that load from
other processes on this shared machine hits both alike, median of N each, the difference
reported as wall-clock time and as the child's CPU time (user + sys, steadier under load).
Python's own ``-X importtime`` figure for ``cudafit.guard`` (cumulative, median of several) is
shown beside it; it omits interpreter work outside the import and adds its own overhead.

Measured in two interpreters:
* a clean venv holding only cudafit's package files, byte-compiled as pip installs them
  (``--without-pip``, so no ``.pth`` of other packages runs at start-up), created in a
  temporary directory: what a user of the library gets;
* this interpreter (``sys.executable``), e.g. the project's editable venv, where no bytecode may
  be cached (``PYTHONDONTWRITEBYTECODE`` set, no ``__pycache__`` in src/) and every run then
  compiles cudafit's sources; the row says which was the case.

The cached calls are timed with timeit against a fake device list (the cached path never touches
the device layer), side by side with the hand-written check a library would otherwise run on
every dispatch (seed 000's regex over compile flags), which is both wrong and slower.

Usage: python bench/bench_guard.py [--runs N] [--no-clean-venv]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

IMPORT = "import cudafit.guard"


def _run(python: str, code: str) -> tuple[float, float]:
    """(wall ms, CPU ms of the child) of one fresh interpreter running ``code``."""
    start = time.perf_counter()
    proc = subprocess.Popen([python, "-c", code])
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        msg = f"{python} -c {code!r} exited with {proc.returncode}"
        raise RuntimeError(msg)
    return wall, (usage.ru_utime + usage.ru_stime) * 1000


def importtime_ms(python: str, module: str = "cudafit.guard") -> float:
    """Python's ``-X importtime`` cumulative figure for ``module``, in ms."""
    err = subprocess.run(
        [python, "-X", "importtime", "-c", f"import {module}"], capture_output=True, text=True, check=True
    ).stderr
    for line in err.splitlines():
        if line.rstrip().endswith(f"| {module}"):
            return int(line.split("|")[1]) / 1000
    return float("nan")


def import_cost(python: str, runs: int) -> dict[str, float]:
    """Median wall and CPU ms of an empty and an importing interpreter, interleaved, and -X importtime."""
    _run(python, IMPORT)  # warm the page cache (and write bytecode where that is allowed)
    empty: list[tuple[float, float]] = []
    loaded: list[tuple[float, float]] = []
    for i in range(runs):
        pair = [(empty, "pass"), (loaded, IMPORT)]
        for samples, code in pair if i % 2 else reversed(pair):
            samples.append(_run(python, code))

    def med(samples: list[tuple[float, float]], k: int) -> float:
        return statistics.median(s[k] for s in samples)

    return {
        "empty_wall": med(empty, 0),
        "wall": med(loaded, 0) - med(empty, 0),
        "cpu": med(loaded, 1) - med(empty, 1),
        "importtime": statistics.median(importtime_ms(python) for _ in range(max(5, runs // 4))),
    }


def bytecode_cached(python: str) -> bool:
    """Whether ``python`` finds cached bytecode for cudafit.guard (else it compiles the source every run)."""
    code = (
        "import importlib.util as u, os; s = u.find_spec('cudafit.guard'); "
        "print(os.path.exists(u.cache_from_source(s.origin)))"
    )
    return subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "True"


def clean_venv(where: Path) -> str:
    """A venv with only cudafit's package files, byte-compiled as pip does; returns its python."""
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(where)], check=True)
    python = str(where / "bin" / "python")
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    shutil.copytree(ROOT / "src" / "cudafit", Path(site) / "cudafit", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([python, "-m", "compileall", "-q", str(Path(site) / "cudafit")], check=True)
    return python


def row(label: str, cost: dict[str, float]) -> str:
    return (
        f"| import, {label} (fresh interpreter, median - empty start-up) | {cost['wall']:.1f} ms "
        f"(CPU {cost['cpu']:.1f} ms; -X importtime {cost['importtime']:.1f} ms) | - | <= 30 ms |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=41, help="interpreter pairs per measurement (default 41)")
    parser.add_argument("--no-clean-venv", action="store_true", help="measure only in this interpreter")
    args = parser.parse_args()

    from cudafit import guard
    from cudafit.guard import DeviceInfo
    from cudafit.model import ComputeCapability

    rows = []
    if not args.no_clean_venv:
        with tempfile.TemporaryDirectory(prefix="cudafit-bench-guard-") as tmp:
            rows.append(row("clean venv", import_cost(clean_venv(Path(tmp) / "venv"), args.runs)))
    cost = import_cost(sys.executable, args.runs)  # its warm-up run writes bytecode where that is allowed
    cached = "bytecode cached" if bytecode_cached(sys.executable) else "no bytecode: sources compiled every run"
    rows.append(row(f"this interpreter, {cached}", cost))

    guard.set_device_provider(lambda: [DeviceInfo(0, "NVIDIA GeForce RTX 3090", ComputeCapability(8, 6))])
    guard.require_capability("7.5")
    so = str(ROOT / "tests" / "fixtures" / "bin" / "libmulti.so")
    guard.check_binary(so)
    n = 200_000
    req_us = min(timeit.repeat(lambda: guard.require_capability("7.5"), number=n, repeat=5)) / n * 1e6
    bin_us = min(timeit.repeat(lambda: guard.check_binary(so), number=n, repeat=5)) / n * 1e6
    flags = ["-gencode=arch=compute_75,code=sm_75", "-gencode=arch=compute_86,code=sm_86"]

    def flag_check() -> bool:  # seed 000's check, run per call as such guards often are
        return all(int(re.search(r"compute_(\d+)", f).group(1)) >= 75 for f in flags)  # type: ignore[union-attr]

    flag_us = min(timeit.repeat(flag_check, number=n, repeat=5)) / n * 1e6
    print("| measure | cudafit.guard | hand-written flag check (seed 000) | target |")
    print("|---|---|---|---|")
    for line in rows:
        print(line)
    print(
        f"| cached `require_capability('7.5')` | {req_us:.2f} µs | {flag_us:.2f} µs (checks the wrong thing) "
        "| <= 2 µs |"
    )
    print(f"| cached `check_binary(libmulti.so)` | {bin_us:.2f} µs | - | <= 2 µs |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
