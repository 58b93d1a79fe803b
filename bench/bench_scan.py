"""Benchmark: `cudafit scan` versus `cuobjdump` on the same files, in one run.

What a user does today to learn which archs an environment carries is run cuobjdump's
default dump on every shared object.  This script does exactly that and runs
`cudafit scan --json` on the same directory, then reports:

* wall time of each (cudafit: cold = first run, warm = best of the next runs, cache off),
* peak RSS of each (per process, from wait4),
* agreement: for every file, the multiset of (kind, arch with a/f suffix) of the entries
  cuobjdump's default dump prints (.nv_fatbin if present, else __nv_relfatbin) equals
  cudafit's.

Usage:
    python bench/bench_scan.py [SITE_PACKAGES]   # default: a torch==2.14.1 venv it creates
Environment: CUDAFIT_BENCH_VENV (venv location, default ~/.cache/cudafit-bench/venv),
CUDAFIT_TOOL_VENV (where cudafit itself is installed from this checkout, as a user would install it;
default ~/.cache/cudafit-bench/tool-venv), CUOBJDUMP (path to cuobjdump; default: the
nvidia-cuda-cuobjdump wheel's).
Results go to bench/results/scan.json and a Markdown table on stdout.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "fixtures"))

from make_expected import parse_cuobjdump_dump  # noqa: E402

TORCH_REQ = "torch==2.14.1"


def find_cuobjdump() -> str:
    env = os.environ.get("CUOBJDUMP")
    if env:
        return env
    try:
        import nvidia  # type: ignore[import-not-found]

        for base in nvidia.__path__:
            for cand in Path(base).glob("cu*/bin/cuobjdump"):
                return str(cand)
    except ImportError:
        pass
    return "cuobjdump"


def ensure_torch_env() -> Path:
    venv = Path(os.environ.get("CUDAFIT_BENCH_VENV", Path.home() / ".cache" / "cudafit-bench" / "venv"))
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    code = "import importlib.metadata as m; print(m.version('torch'))"
    have = subprocess.run([str(py), "-c", code], capture_output=True, text=True, check=False)
    if have.returncode != 0 or have.stdout.strip() != TORCH_REQ.split("==")[1]:
        subprocess.run([str(py), "-m", "pip", "install", "-q", TORCH_REQ], check=True)
    out = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


def ensure_tool() -> list[str]:
    """cudafit installed from this checkout into its own venv, run the way a user runs it."""
    venv = Path(os.environ.get("CUDAFIT_TOOL_VENV", Path.home() / ".cache" / "cudafit-bench" / "tool-venv"))
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(HERE.parent)], check=True)
    return [str(venv / "bin" / "cudafit")]


def shared_objects(root: Path) -> list[Path]:
    out = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            if (name.endswith(".so") or ".so." in name) and p.is_file() and not p.is_symlink():
                out.append(p)
    return sorted(out)


def run_measured(cmd: list[str]) -> tuple[float, float, bytes, int]:
    """Run ``cmd``; return (seconds, peak RSS in MB, stdout, return code)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read() if proc.stdout else b""
    _pid, status, usage = os.wait4(proc.pid, 0)
    secs = time.perf_counter() - t0
    return secs, usage.ru_maxrss / 1024, out, os.waitstatus_to_exitcode(status)


def cudafit_multisets(doc: dict) -> dict[str, collections.Counter]:
    out: dict[str, collections.Counter] = {}
    for f in doc["files"]:
        entries = f["entries"]
        entries = [e for e in entries if not e.get("embedded")]  # cuobjdump reads only the fatbin sections
        runtime = [e for e in entries if not e["relocatable"]]
        chosen = runtime or entries  # cuobjdump: the executable fatbin if present, else the relocatable one
        out[f["path"]] = collections.Counter((e["kind"], e["arch"]) for e in chosen)
    return out


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else ensure_torch_env()
    files = shared_objects(root)
    total_bytes = sum(p.stat().st_size for p in files)
    cudafit = [*ensure_tool(), "scan", str(root), "--json", "--no-cache"]
    env_note = os.environ.get("PYTHONPATH", "")
    runs = [run_measured(cudafit) for _ in range(4)]
    cold = runs[0]
    warm = min(runs[1:], key=lambda r: r[0])
    import tempfile

    with tempfile.TemporaryDirectory() as cache:
        env_cmd = ["env", f"CUDAFIT_CACHE_DIR={cache}", *cudafit[:-1]]  # same scan, cache on
        run_measured(env_cmd)
        cached = min((run_measured(env_cmd) for _ in range(3)), key=lambda r: r[0])
    doc = json.loads(warm[2])
    ours = cudafit_multisets(doc)

    cuobjdump = find_cuobjdump()
    cu_secs = 0.0
    cu_rss = 0.0
    agree = 0
    disagree: list[str] = []
    refused: list[str] = []
    for p in files:
        secs, rss, out, rc = run_measured([cuobjdump, str(p)])
        cu_secs += secs
        cu_rss = max(cu_rss, rss)
        theirs = collections.Counter(
            (e["kind"], e["arch"]) for e in parse_cuobjdump_dump(out.decode("utf-8", "replace"))
        )
        mine = ours.get(str(p), collections.Counter())
        if rc != 0 and not theirs:
            # cuobjdump prints nothing and fails for files without device code
            if mine:
                refused.append(f"{p.relative_to(root)} (cuobjdump rc={rc}; cudafit: {sum(mine.values())} entries)")
            else:
                agree += 1
            continue
        if theirs == mine:
            agree += 1
        else:
            disagree.append(f"{p.relative_to(root)}: cuobjdump {dict(theirs)} cudafit {dict(mine)}")

    result = {
        "root": str(root),
        "files": len(files),
        "bytes": total_bytes,
        "entries": sum(sum(c.values()) for c in ours.values()),
        "cudafit_cold_s": round(cold[0], 3),
        "cudafit_warm_s": round(warm[0], 3),
        "cudafit_peak_rss_mb": round(max(r[1] for r in runs), 1),
        "cuobjdump_s": round(cu_secs, 2),
        "cuobjdump_peak_rss_mb": round(cu_rss, 1),
        "speedup_warm": round(cu_secs / warm[0], 1),
        "cudafit_cached_s": round(cached[0], 3),
        "speedup_cached": round(cu_secs / cached[0], 1),
        "agree": agree,
        "disagree": disagree,
        "cuobjdump_refused": refused,
        "cpu_count": os.cpu_count(),
        "pythonpath": env_note,
    }
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "scan.json").write_text(json.dumps(result, indent=2) + "\n")
    print(
        "| files | size | entries | cudafit cold | cudafit warm | cudafit, scan cache | cuobjdump "
        "| speed-up (warm / cached) | agreement | peak RSS cudafit / cuobjdump |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    print(
        f"| {len(files)} | {total_bytes / 1e9:.2f} GB | {result['entries']} | {cold[0]:.2f} s | {warm[0]:.2f} s "
        f"| {cached[0]:.2f} s | {cu_secs:.1f} s | {result['speedup_warm']}x / {result['speedup_cached']}x "
        f"| {agree}/{len(files)} files identical | {result['cudafit_peak_rss_mb']} MB / {cu_rss:.0f} MB |"
    )
    for line in disagree + refused:
        print("  -", line)
    return 0 if not disagree else 1


if __name__ == "__main__":
    sys.exit(main())
