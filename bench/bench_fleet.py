"""Judge a synthetic 5,000-node fleet against a Python environment; print a Markdown table row.

    python bench/bench_fleet.py [--site-packages DIR] [--nodes 5000] [--classes 30] [--seed 0] [--runs 3]

The fleet is built from cudafit's own GPU table (datacenter and workstation products of compute
capability 7.0 and newer) and real Linux driver releases of four branches, upgraded pool by pool:
each GPU model runs one to three drivers, nodes carry 1, 2, 4 or 8 GPUs (some A100/H100 nodes with
MIG), and node counts per class are skewed as real pools are.  It is written as a cudafit.fleet/1
file and judged by the command users run, ``cudafit doctor --site-packages DIR --fleet FILE --json``,
in a fresh process each time (median of --runs, after one warm-up run that fills a private scan
cache).  The breakdown comes from one in-process run of the same steps.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from cudafit.fleet.inventory import FleetGpu, FleetInventory, FleetNode, build_inventory
from cudafit.model import parse_compute_capability, parse_driver_version

TORCH_SITE = "/work/envs/torch/lib/python3.11/site-packages"
# Real Linux driver releases of four branches (NVIDIA's Unix driver archive).
DRIVERS = ("535.247.01", "550.163.01", "570.172.08", "580.65.06")


def synthetic_fleet(nodes: int = 5000, classes: int = 30, seed: int = 0) -> FleetInventory:
    """A deterministic fleet of ``nodes`` nodes in exactly ``classes`` classes (GPU model x driver)."""
    from cudafit.rules.gpus import iter_gpu_specs

    rng = random.Random(seed)
    models = [
        s
        for s in iter_gpu_specs()
        if s.segment in ("datacenter", "workstation") and s.compute_capability.major >= 7 and "/" not in s.name
    ]
    rng.shuffle(models)
    combos: list[tuple[str, str, str]] = []  # (name, cc, driver)
    for spec in models:
        if len(combos) >= classes:
            break
        start = rng.randrange(len(DRIVERS))
        for driver in DRIVERS[start : start + rng.choice((1, 2, 2, 3))]:
            if len(combos) < classes:
                combos.append((spec.name, str(spec.compute_capability), driver))
    weights = [1.0 / (i + 1) ** 0.8 for i in range(len(combos))]
    rng.shuffle(weights)
    picks = rng.choices(range(len(combos)), weights=weights, k=nodes - len(combos)) + list(range(len(combos)))
    out = []
    for i, k in enumerate(picks):
        name, cc, driver = combos[k]
        count = rng.choice((1, 2, 4, 8, 8))
        mig = name.startswith(("NVIDIA A100", "NVIDIA H100")) and rng.random() < 0.2
        gpu = FleetGpu(
            name, parse_compute_capability(cc), count, mig_enabled=mig, mig=(("1g.10gb", 7 * count),) if mig else ()
        )
        out.append(
            FleetNode(
                f"node-{i:05d}",
                "synthetic",
                "ok",
                gpus=(gpu,),
                driver=parse_driver_version(driver),
                labels={"pool": f"pool-{k}"},
            )
        )
    return build_inventory(out, "synthetic")


def _cli(site: str, fleet: str, env: dict[str, str]) -> float:
    t = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "cudafit", "doctor", "--site-packages", site, "--fleet", fleet, "--json"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    wall = time.perf_counter() - t
    if p.returncode not in (0, 1):
        raise SystemExit(f"cudafit failed ({p.returncode}): {p.stderr}")
    return wall


def _phases(site: str, fleet_file: str, floors: bool, env: dict[str, str]) -> dict[str, float]:
    """One in-process run of the command's steps, in a fresh process (cold verdict caches)."""
    here = str(Path(__file__).resolve().parent)
    code = (
        f"import sys, json; sys.path.insert(0, {here!r}); import bench_fleet as b; "
        f"print(json.dumps(b.phase_times({site!r}, {fleet_file!r}, {floors!r})))"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    return json.loads(p.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def phase_times(site: str, fleet_file: str, floors: bool) -> dict[str, float]:
    """Scan (scan cache), read the fleet file and group classes, judge, build the document; peak RSS."""
    from cudafit.fleet.files import load_fleet_file
    from cudafit.fleet.judge import judge_fleet
    from cudafit.report.fleet import fleet_check_document
    from cudafit.targets.cache import scan_cache
    from cudafit.targets.env import EnvironmentTarget

    with scan_cache():  # as the command: the verdicts use what the scan cache holds (module roles' evidence)
        t0 = time.perf_counter()
        items = list(EnvironmentTarget([site]).iter_items())
        t1 = time.perf_counter()
        fleet = load_fleet_file(fleet_file)
        fleet.classes  # noqa: B018 - grouping is part of the cost
        t2 = time.perf_counter()
        judged = judge_fleet(items, fleet, floors=floors)
        t3 = time.perf_counter()
        doc = fleet_check_document(judged)
        t4 = time.perf_counter()
    return {
        "scan": t1 - t0,
        "fleet": t2 - t1,
        "judge": t3 - t2,
        "doc": t4 - t3,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "runs": sum(1 for c in doc["classes"] if c["status"] in ("native", "jit", "none")),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site-packages", default=TORCH_SITE)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--classes", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="cudafit-bench-fleet-")
    os.environ["CUDAFIT_CACHE_DIR"] = os.path.join(tmp, "cache")  # this environment's facts only
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")}
    inv = synthetic_fleet(args.nodes, args.classes, args.seed)
    fleet_file = os.path.join(tmp, "fleet.json")
    with open(fleet_file, "w", encoding="utf-8") as fh:
        json.dump(inv.to_dict(), fh)
    n_classes = len(inv.classes)
    pairs = len({(cc, c.driver) for c in inv.classes for cc in c.compute_capabilities})
    _cli(args.site_packages, fleet_file, env)  # warm-up: fills the private scan cache
    walls = [_cli(args.site_packages, fleet_file, env) for _ in range(args.runs)]

    phases = {floors: _phases(args.site_packages, fleet_file, floors, env) for floors in (False, True)}
    matrix, with_floors = phases[False], phases[True]
    print(
        "| nodes | classes | (CC, driver) pairs | `doctor --fleet` wall (median) | scan (cache) | read fleet + classes "
        "| verdict matrix | matrix + driver floors | JSON document | peak RSS | classes where it runs |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print(
        f"| {len(inv.nodes)} | {n_classes} | {pairs} | {statistics.median(walls):.2f} s "
        f"({', '.join(f'{w:.2f}' for w in walls)}) | {with_floors['scan']:.2f} s | {with_floors['fleet']:.2f} s "
        f"| {matrix['judge']:.2f} s | {with_floors['judge']:.2f} s | {with_floors['doc']:.2f} s "
        f"| {with_floors['rss_mb']:.0f} MB | {with_floors['runs']} of {n_classes} |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
