"""Benchmark: cost of importing cudafit.guard and of cached guard calls.

Done-when of the guard issue: import <= 30 ms, a cached require_capability / check_binary call
<= 2 us.  The import cost is measured in fresh interpreters (median of N, minus an empty
interpreter's start-up) and as Python's own -X importtime figure; the calls with timeit against a
fake device list (the cached path never touches the device layer).  Side by side: the hand-written
check a library would otherwise run on every dispatch (seed 000's regex over compile flags),
which is both wrong and slower.

Usage: python bench/bench_guard.py
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


def interpreter_ms(code: str, runs: int = 15) -> float:
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        samples.append((time.perf_counter() - t) * 1000)
    return statistics.median(samples)


def importtime_ms() -> float:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import cudafit.guard"], capture_output=True, text=True, check=True
    ).stderr
    for line in out.splitlines():
        if line.rstrip().endswith("| cudafit.guard"):
            return int(line.split("|")[1]) / 1000
    return float("nan")


def main() -> int:
    from cudafit import guard
    from cudafit.guard import DeviceInfo
    from cudafit.model import ComputeCapability

    empty = interpreter_ms("pass")
    with_guard = interpreter_ms("import cudafit.guard")
    self_reported = importtime_ms()
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
    print(
        f"| import (fresh interpreter, median - empty start-up) | {with_guard - empty:.1f} ms "
        f"(-X importtime: {self_reported:.1f} ms) | - | <= 30 ms |"
    )
    print(
        f"| cached require_capability('7.5') | {req_us:.2f} us | {flag_us:.2f} us (checks the wrong thing) | <= 2 us |"
    )
    print(f"| cached check_binary(libmulti.so) | {bin_us:.2f} us | - | <= 2 us |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
