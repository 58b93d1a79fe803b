"""Judge a synthetic 5,000-node fleet against a Python environment and print one Markdown table row.

    python bench/bench_fleet.py [--site-packages DIR] [--nodes 5000] [--classes 30] [--seed 0]

The fleet is built from cudafit's own GPU table (datacenter and workstation products of compute
capability 7.0 and newer) and a set of real Linux driver releases, upgraded pool by pool: each
GPU model runs one to three drivers, nodes carry 1, 2, 4 or 8 GPUs (some with MIG), and node counts
per class are skewed as real pools are.  Judging goes through ``cudafit.fleet.judge_fleet``, the
path ``cudafit check/doctor --fleet`` takes; the scan of the environment is timed separately
(warm page and scan cache: run it twice).  Peak RSS covers the whole process.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from cudafit.fleet.inventory import FleetGpu, FleetInventory, FleetNode, build_inventory
from cudafit.model import parse_driver_version

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
        gpu = FleetGpu(name, parse_cc(cc), count, mig_enabled=mig, mig=(("1g.10gb", 7 * count),) if mig else ())
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


def parse_cc(text: str):  # type: ignore[no-untyped-def]
    from cudafit.model import parse_compute_capability

    return parse_compute_capability(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site-packages", default=TORCH_SITE)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--classes", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from cudafit.fleet.judge import judge_fleet
    from cudafit.report.fleet import fleet_check_document
    from cudafit.targets.cache import scan_cache
    from cudafit.targets.env import EnvironmentTarget

    t0 = time.perf_counter()
    with scan_cache():
        items = list(EnvironmentTarget([args.site_packages]).iter_items())
    t1 = time.perf_counter()
    inv = synthetic_fleet(args.nodes, args.classes, args.seed)
    n_classes = len(inv.classes)
    pairs = len({(cc, c.driver) for c in inv.classes for cc in c.compute_capabilities})
    t2 = time.perf_counter()
    judged = judge_fleet(items, inv, floors=False)
    t3 = time.perf_counter()
    judged = judge_fleet(items, inv, floors=True)
    t4 = time.perf_counter()
    doc = fleet_check_document(judged)
    t5 = time.perf_counter()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    runs = sum(1 for c in judged.classes if c.status in ("native", "jit"))
    print(
        "| nodes | classes | (CC, driver) pairs | scan (warm cache) | inventory + classes | verdict matrix "
        "| matrix + driver floors | JSON | total | peak RSS | pools where the env runs |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print(
        f"| {len(inv.nodes)} | {n_classes} | {pairs} | {t1 - t0:.2f} s | {t2 - t1:.2f} s | {t3 - t2:.2f} s "
        f"| {t4 - t3:.2f} s | {t5 - t4:.2f} s | {(t1 - t0) + (t2 - t1) + (t4 - t3) + (t5 - t4):.2f} s "
        f"| {rss:.0f} MB | {runs} of {n_classes} ({doc['status']}) |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
