"""`cudafit gpus --inventory FILE` text vs --json for growing device counts: is the text output linear?

    python bench/bench_gpus.py [--sizes 15000,30000,60000,120000] [--runs 3]

Each size is a cudafit.gpus/1 inventory with that many devices, each with a problem line (the case
issue 23 measured: 60k devices 1.9 s, 120k 5.7 s in text; --json 0.13-0.22 s).  The command runs in a
fresh process each time (median of --runs); the last column is the text time per 1,000 devices,
which stays flat when the output is linear.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def inventory(n: int) -> dict[str, object]:
    """A machine document with ``n`` devices and one problem per device."""
    gpus = [
        {"name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "index": i, "cuda_index": i,
         "uuid": f"GPU-{i:08d}", "pci_bus_id": f"{i // 256:08x}:{i % 256:02x}:00.0", "memory_mib": 81559}
        for i in range(n)
    ]
    problems = [f"NVML: GPU {i} reported [a problem]" for i in range(n)]
    return {"schema": "cudafit.gpus/1", "mode": "machine", "driver_version": "580.65.06",
            "problems": problems, "gpus": gpus}


def run(path: str, *extra: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "cudafit", "gpus", "--inventory", path, *extra],
                       stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="15000,30000,60000,120000")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print("| devices | text | --json | text per 1k devices |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            path = str(Path(tmp) / f"inv{n}.json")
            Path(path).write_text(json.dumps(inventory(n)))
            text = run(path, runs=args.runs)
            js = run(path, "--json", runs=args.runs)
            print(f"| {n:,} | {text:.2f} s | {js:.2f} s | {text / n * 1000 * 1000:.1f} ms |", flush=True)


if __name__ == "__main__":
    main()
