"""Benchmark: what finding library-loaded modules and reading payload heads costs, side by side with the
previous release.

Issue 24 adds three reads to every scan: the module-loader evidence (two ``find`` calls over ``.dynstr``,
and a look-up in ``.dynsym`` on a hit), a census of the data sections of files with that evidence, and the
head (first KB) of every PTX/SASS entry whose header can hide an ``a``/``f`` variant (arch >= 90 without
the bit).  This script times ``inspect_path`` (what every scan, check and doctor does per file, cache off)
on the same files with the previous release (``git archive`` of REV's ``src``, default
:data:`PREVIOUS_RELEASE`, the last commit before issue 24) and with this checkout, in fresh interpreters,
and reports per file the modules found by each, the median time and its noise.  The two trees take turns
(``--rounds`` rounds of ``--runs`` calls per file each), so a busy machine slows both alike; the median
is over every call of every round and the noise is the interquartile range (p25-p75) of those calls.

The import check is gated (binary/linkage.py): it runs only when the file's visible dependency tree holds
``libcuda.so*`` or a library defining a loader.  Per file the table says the gate's answer and how many
libraries it read to decide (once per scan: a scan keeps each library's answer, as the timed calls here do
after the first).  ``--fresh-gate`` forgets those answers before every call (what the first file of a scan
pays: its libraries read again); ``--cold ROOT`` also drops every file under ROOT from the page cache
(``posix_fadvise(POSIX_FADV_DONTNEED)``; no root needed) before every call, a first scan after install.
``--rev main`` compares with the ungated check instead of the release before issue 24.

Usage:
    python bench/bench_loaded.py [--rev REV] [--runs N] [--rounds R] [--fresh-gate] [--cold ROOT] FILE_OR_DIR...
Shared objects under each directory are timed (the largest 40 of each directory, to keep it short).
Results go to bench/results/loaded.json and a Markdown table on stdout.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: The last commit before issue 24 (library-loaded modules, payload heads): the release this is compared with.
PREVIOUS_RELEASE = "f6111cb4018e434090b7c0fd74d153412509ef90"

_TIMER = r"""
import json, os, sys, time
from cudafit.binary import inspect_path
try:  # the gate of the module-loader import check (absent from the previous release)
    from cudafit.binary import linkage
except ImportError:
    linkage = None
runs, fresh, cold_root = int(sys.argv[1]), sys.argv[2] == "1", sys.argv[3]
evict = []
if cold_root:
    for dirpath, _dirs, names in os.walk(cold_root):
        evict += [os.path.join(dirpath, n) for n in names if not os.path.islink(os.path.join(dirpath, n))]


def drop_page_cache():
    for path in evict:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


out = {}
for path in sys.argv[4:]:
    if linkage is not None:
        linkage.forget()
    opened = linkage.FILE_SYSTEM.opened if linkage is not None else 0
    inspect_path(path)  # imports warm, and the page cache unless --cold
    opened = linkage.FILE_SYSTEM.opened - opened if linkage is not None else 0
    gate = linkage.file_gate(path) if linkage is not None else None
    times = []
    for _ in range(runs):
        if (fresh or cold_root) and linkage is not None:
            linkage.forget()  # the gate decides again, reading its libraries, as for the first file of a scan
        if cold_root:
            drop_page_cache()
        t = time.perf_counter()
        facts = inspect_path(path)
        times.append(time.perf_counter() - t)
    loaded = sum(1 for m in facts.modules if getattr(m, "loaded", False))
    out[path] = {"times": times, "modules": len(facts.modules), "loaded": loaded,
                 "error": facts.error, "notes": len(facts.notes), "gate_opened": opened, "gate": gate}
print(json.dumps(out))
"""


def shared_objects(args: list[str], per_dir: int = 40) -> list[str]:
    files: list[str] = []
    for a in args:
        p = Path(a)
        if p.is_file():
            files.append(str(p))
            continue
        found = [f for f in p.rglob("*.so*") if f.is_file() and not f.is_symlink()]
        found.sort(key=lambda f: f.stat().st_size, reverse=True)
        files += [str(f) for f in found[:per_dir]]
    return files


def export_release(rev: str, into: Path) -> Path:
    """The previous release's ``src`` tree, as committed at ``rev``."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True).stdout
    tar = into / "src.tar"
    tar.write_bytes(data)
    with tarfile.open(tar) as tf:
        tf.extractall(into, filter="data")
    return into / "src"


def time_tree(
    src: Path, files: list[str], runs: int, *, fresh: bool = False, cold: str = ""
) -> dict[str, dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    p = subprocess.run(
        [sys.executable, "-c", _TIMER, str(runs), "1" if fresh else "0", cold, *files],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    result: dict[str, dict[str, Any]] = json.loads(p.stdout)
    return result


@dataclass(frozen=True)
class Timing:
    """Median and interquartile range of one tree's calls on one file, in milliseconds."""

    median: float
    p25: float
    p75: float

    @classmethod
    def of(cls, seconds: list[float]) -> Timing:
        q = statistics.quantiles(seconds, n=4) if len(seconds) > 1 else [seconds[0]] * 3
        return cls(statistics.median(seconds) * 1e3, q[0] * 1e3, q[2] * 1e3)

    def __str__(self) -> str:
        digits = 2 if self.median < 10 else 1
        return f"{self.median:.{digits}f} ({self.p25:.{digits}f}-{self.p75:.{digits}f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--rev", default=PREVIOUS_RELEASE, help="the previous release (default: before issue 24)")
    ap.add_argument("--runs", type=int, default=10, help="calls per file per round")
    ap.add_argument("--rounds", type=int, default=2, help="turns each tree takes")
    ap.add_argument(
        "--fresh-gate",
        action="store_true",
        help="forget the gate's kept answers before every call: each call reads the file's libraries again, "
        "as the first file of a scan does (default: kept, as for every later file of a scan)",
    )
    ap.add_argument(
        "--cold",
        metavar="ROOT",
        default="",
        help="before every call, drop every file under ROOT from the page cache (posix_fadvise DONTNEED) and "
        "forget the gate's answers: a first scan after the files were written",
    )
    args = ap.parse_args()
    files = shared_objects(args.paths)
    calls: dict[str, dict[str, list[float]]] = {"before": {f: [] for f in files}, "after": {f: [] for f in files}}
    found: dict[str, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"before": export_release(args.rev, Path(tmp)), "after": ROOT / "src"}
        for _ in range(args.rounds):
            for side, src in trees.items():
                for f, r in time_tree(src, files, args.runs, fresh=args.fresh_gate, cold=args.cold).items():
                    calls[side][f] += r["times"]
                    found.setdefault(side, {})[f] = r
    rows = []
    for f in files:
        b, a = Timing.of(calls["before"][f]), Timing.of(calls["after"][f])
        rows.append(
            {
                "file": f,
                "size": os.path.getsize(f),
                "before_ms": dataclasses.asdict(b),
                "after_ms": dataclasses.asdict(a),
                "ratio": a.median / b.median if b.median else None,
                "modules_before": found["before"][f]["modules"],
                "modules_after": found["after"][f]["modules"],
                "loaded_after": found["after"][f]["loaded"],
                "gate_open": found["after"][f].get("gate"),
                "gate_libraries_read": found["after"][f].get("gate_opened", 0),
            }
        )
    plain = [r for r in rows if not r["modules_before"] and not r["modules_after"]]
    sums = {
        name: (sum(r["before_ms"]["median"] for r in group), sum(r["after_ms"]["median"] for r in group))
        for name, group in (("all", rows), ("without_device_code", plain))
    }
    out = {
        "previous_release": args.rev,
        "runs": args.runs,
        "rounds": args.rounds,
        "fresh_gate": args.fresh_gate,
        "cold": args.cold,
        "files": rows,
        "sums_ms": sums,
    }
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "loaded.json").write_text(json.dumps(out, indent=1) + "\n")
    n = args.runs * args.rounds
    mode = "cold page cache, gate decided again" if args.cold else ("gate decided again" if args.fresh_gate else "warm")
    print(
        f"previous release {args.rev[:10]}; inspect_path per file, cache off, {mode}; median (p25-p75) of {n} calls\n"
    )
    print(
        "| file | MB | before ms | after ms | after/before | modules before -> after (loaded) | gate (libraries read) |"
    )
    print("|---|---:|---:|---:|---:|---|---|")
    for r, f in zip(rows, files, strict=True):
        b, a = Timing.of(calls["before"][f]), Timing.of(calls["after"][f])
        gate = {True: "open", False: "shut", None: "-"}[r["gate_open"]]
        print(
            f"| {Path(f).name} | {r['size'] / 1e6:.0f} | {b} | {a} | {r['ratio']:.2f} | "
            f"{r['modules_before']} -> {r['modules_after']} ({r['loaded_after']}) | "
            f"{gate} ({r['gate_libraries_read']}) |"
        )
    for name, group in (("all", rows), ("without_device_code", plain)):
        sb, sa = sums[name]
        print(f"\n{name.replace('_', ' ')} ({len(group)} files): sum of medians {sb:.1f} ms -> {sa:.1f} ms", end="")
        print(f" ({sa / sb:.2f}x)" if sb else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
