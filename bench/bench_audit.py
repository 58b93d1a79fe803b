"""``cudafit audit`` on a wheel of ~16,000 bare cubins, side by side with ``unzip -t`` on the same wheel.

The issue's target: auditing 10,000 bare cubins of a wheel finishes within 1.5x of ``unzip -t`` (which
inflates and CRC-checks every member, as the audit must: a cubin's ``a`` flag is in a section at its end).
The wheel is flashinfer-cubin 0.6.13 (15,970 cubins, 458 MB; ``pip download flashinfer-cubin==0.6.13
--no-deps``), given as the first argument or found in ``$CUDAFIT_REAL_WHEELS_DIR``.  Both commands run
with the page cache warm, alternately, ``--runs`` times; the table gives the minimum and the median.

    python bench/bench_audit.py [WHEEL] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

DEFAULT = "flashinfer_cubin-0.6.13-py3-none-any.whl"
REQUIRE = "9.0 10.0 10.3 12.0"


def _find_wheel(given: str | None) -> Path:
    if given:
        return Path(given)
    for d in (
        os.environ.get("CUDAFIT_REAL_WHEELS_DIR"),
        "/work/data/wheels",
        Path.home() / ".cache/cudafit-realwheels",
    ):
        if d and (Path(d) / DEFAULT).is_file():
            return Path(d) / DEFAULT
    sys.exit(f"no {DEFAULT}: pip download flashinfer-cubin==0.6.13 --no-deps -d DIR, then pass its path")


def _time(cmd: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start, p.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheel", nargs="?")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    wheel = _find_wheel(args.wheel)
    unzip = shutil.which("unzip")
    if unzip is None:
        sys.exit("unzip is not installed")
    cudafit = shutil.which("cudafit") or sys.exit("cudafit is not on PATH (pip install -e .)")
    with zipfile.ZipFile(wheel) as zf:
        cubins = sum(1 for i in zf.infolist() if i.filename.endswith(".cubin"))
        inflated = sum(i.file_size for i in zf.infolist())
    with open(wheel, "rb") as fh:  # warm the page cache for both
        while fh.read(1 << 24):
            pass
    audit_cmd = [str(cudafit), "audit", str(wheel), "--require", REQUIRE, "--no-config", "--no-cache", "--json"]
    unzip_cmd = [unzip, "-tq", str(wheel)]
    times: dict[str, list[float]] = {"unzip -t": [], "cudafit audit": []}
    for _ in range(args.runs):
        t, rc = _time(unzip_cmd)
        assert rc == 0, "unzip -t failed"
        times["unzip -t"].append(t)
        t, rc = _time(audit_cmd)
        assert rc in (0, 1), f"cudafit audit exited {rc}"
        times["cudafit audit"].append(t)
    size = wheel.stat().st_size
    print(
        f"{wheel.name}: {size / 1e6:.0f} MB, {cubins:,} cubins, {inflated / 1e9:.2f} GB inflated; --require '{REQUIRE}'"
    )
    print("| command | min | median | runs |")
    print("|---|---|---|---|")
    for name, ts in times.items():
        print(f"| {name} | {min(ts):.2f} s | {statistics.median(ts):.2f} s | {len(ts)} |")
    ratio_min = min(times["cudafit audit"]) / min(times["unzip -t"])
    ratio_med = statistics.median(times["cudafit audit"]) / statistics.median(times["unzip -t"])
    print(f"\ncudafit audit / unzip -t: {ratio_min:.2f}x (min), {ratio_med:.2f}x (median); target <= 1.5x")


if __name__ == "__main__":
    main()
