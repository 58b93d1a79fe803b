"""Record this GPU machine's real answers as test data, named after its GPU.

One command on a machine with NVIDIA GPUs, from the repository root:

    python3 scripts/record_probe.py --verify

writes, under tests/fakes/ (``--out-dir``), for a GPU named e.g. "NVIDIA H100 80GB HBM3" (slug ``h100``;
``--name`` overrides it):

* ``recorded_h100_nvml.json``: NVML's return values in the shape tests/fakes/nvml_hosts.json uses for one
  host (driver, CUDA driver version, per GPU: name, UUID, PCI bus id, compute capability, memory, MIG);
* ``recorded_h100_smi.csv``: ``nvidia-smi --query-gpu=<cudafit's fields> --format=csv,noheader,nounits``;
* ``recorded_h100_driver_api.json``: the CUDA driver API's ordinals and attributes (what ``gpus --deep``
  reads: cuInit and device queries, no context);
* with ``--verify``: ``recorded_h100_verify.json``, the driver's answers when asked to load every module
  of the committed fixtures (tests/fixtures/bin) on each GPU, PTX JIT included, in the replay format
  ``cudafit.verify-replay/1`` (``CUDAFIT_VERIFY_REPLAY=FILE`` replays it).  This part runs
  ``cudafit verify``, so it creates a CUDA context, in its worker processes only.

tests/test_probe.py and tests/test_verify*.py load every ``recorded_*`` file they find.  Nothing is
written outside ``--out-dir``; ``--stdout`` prints everything as one JSON document instead.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import re
import socket
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from cudafit import __version__  # noqa: E402
from cudafit.probe.backends import SMI_FIELDS, probe_cuda_driver, real_runner  # noqa: E402

#: Fixtures whose modules the verify recording loads (every committed binary with loadable modules).
VERIFY_FIXTURES = (
    "libmulti.so",
    "libptxonly.so",
    "k_sm90a.cubin",
    "libroles.so",
    "libarch_a.so",
    "libfamily_f.so",
    "k.fatbin",
    "k_compute100f.ptx",
    "librdc.so",
    "libdlink.so",
    "app",
    "libstatic.a",
    "concat.o",
    "libold.so",
    "libzstd.so",
    "liblz4.so",
    "libplain.so",
    "libbounds.so",
)
_VENDOR_WORDS = {"nvidia", "geforce", "tesla", "quadro"}


def gpu_slug(names: list[str]) -> str:
    """``h100`` for "NVIDIA H100 80GB HBM3", ``rtx_4090`` for "NVIDIA GeForce RTX 4090"; distinct models joined."""
    slugs: list[str] = []
    for name in names:
        words = [w for w in re.split(r"[\s\-_]+", name.lower()) if w and w not in _VENDOR_WORDS]
        kept: list[str] = []
        for w in words:
            kept.append(re.sub(r"[^a-z0-9]", "", w))
            if re.search(r"\d", w):
                break
        slug = "_".join(k for k in kept if k) or "gpu"
        if slug not in slugs:
            slugs.append(slug)
    return "_".join(slugs) or "nogpu"


def _text(value: Any) -> Any:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def record_nvml() -> dict[str, Any]:
    """NVML's values, in tests/fakes/nvml_hosts.json's shape for one host."""
    import pynvml

    pynvml.nvmlInit()
    try:
        host: dict[str, Any] = {
            "driver": _text(pynvml.nvmlSystemGetDriverVersion()),
            "cuda": int(pynvml.nvmlSystemGetCudaDriverVersion()),
            "devices": [],
        }
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            try:
                memory = int(pynvml.nvmlDeviceGetMemoryInfo(h).total)
            except pynvml.NVMLError:
                memory = None
            try:
                mig = [int(x) for x in pynvml.nvmlDeviceGetMigMode(h)]
            except pynvml.NVMLError:
                mig = None
            dev: dict[str, Any] = {
                "name": _text(pynvml.nvmlDeviceGetName(h)),
                "uuid": _text(pynvml.nvmlDeviceGetUUID(h)),
                "busId": _text(pynvml.nvmlDeviceGetPciInfo(h).busId),
                "cc": [int(x) for x in pynvml.nvmlDeviceGetCudaComputeCapability(h)],
                "memory": memory,
                "mig": mig,
            }
            if mig and mig[0]:
                uuids = []
                for k in range(int(pynvml.nvmlDeviceGetMaxMigDeviceCount(h))):
                    try:
                        uuids.append(_text(pynvml.nvmlDeviceGetUUID(pynvml.nvmlDeviceGetMigDeviceHandleByIndex(h, k))))
                    except pynvml.NVMLError:
                        continue
                dev["mig_devices"] = uuids
            host["devices"].append(dev)
    finally:
        pynvml.nvmlShutdown()
    return host


def record_verify(env: dict[str, str] | None = None, driver: str | None = None) -> dict[str, Any]:
    """The driver's answers for every module of the fixtures, on every GPU, as a replay document.

    ``env`` defaults to this process's environment without ``CUDAFIT_VERIFY_REPLAY`` (the real driver);
    ``driver`` to the probed driver version.
    """
    from cudafit.targets import open_target
    from cudafit.targets.cache import scan_cache
    from cudafit.verify import run_verify
    from cudafit.verify.runner import list_devices

    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "CUDAFIT_VERIFY_REPLAY"}
    listing = list_devices(env=env)
    bindir = ROOT / "tests" / "fixtures" / "bin"

    def items() -> Any:
        for name in VERIFY_FIXTURES:
            yield from open_target(str(bindir / name)).iter_items()

    if driver is None and listing.driver_version is None:
        from cudafit.probe import probe_machine

        inv = probe_machine()
        driver = str(inv.driver_version) if inv.driver_version else None
    driver = listing.driver_version or driver
    with scan_cache(enabled=False):
        result = run_verify(items(), listing, jit=True, timeout=300.0, driver_version=driver, env=env)
    results = []
    for m in result.modules:
        t = m.module
        answers: dict[str, Any] = {}
        for d, c in zip(result.gpus, m.checks, strict=True):
            a = c.answer
            if a is None or a.outcome in ("unreadable", "not-run", "not-recorded"):
                continue
            name = {"timeout": "hang", "crash": "crash"}.get(a.outcome, a.name)
            answers[str(d.ordinal)] = {
                "result": name,
                "code": a.code,
                "seconds": a.seconds,
                "jit_ms": a.jit_ms,
                "log": a.message[:500],
                "predicted": c.expectation.status,
                "expected": c.expectation.expected,
            }
        if not answers:
            continue
        data = (Path(t.source).read_bytes())[t.offset : t.offset + t.size]
        rel = os.path.relpath(t.path, bindir)
        results.append(
            {
                "file": rel.replace(os.sep, "/"),
                "module": t.index,
                "archs": t.archs,
                "sha256": hashlib.sha256(data).hexdigest(),
                "answers": answers,
            }
        )
    names = sorted({d.name for d in result.gpus})
    return {
        "schema": "cudafit.verify-replay/1",
        "about": (
            f"RECORDED on a real GPU machine ({', '.join(names)})"
            if listing.backend == "ctypes"
            else f"REPLAYED, not recorded on a GPU ({listing.backend} backend)"
        )
        + " by scripts/record_probe.py --verify: the driver's answers (cuModuleLoadDataEx) for every module of "
        "tests/fixtures/bin, PTX JIT included.",
        "recorded": {
            "date": datetime.date.today().isoformat(),
            "host": socket.gethostname(),
            "cudafit_version": __version__,
            "python": sys.version.split()[0],
        },
        "driver": {"version": driver, "cuda_version": listing.cuda_version},
        "init_error": None,
        "devices": [d.to_dict() for d in result.gpus],
        "results": results,
    }


def main(argv: list[str] | None = None) -> int:
    """Record; returns the exit status (3 when there is no GPU to record)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out-dir", default=str(ROOT / "tests" / "fakes"), help="where the files go")
    parser.add_argument("--name", help="the GPU part of the file names (default: from the GPUs' names)")
    parser.add_argument("--verify", action="store_true", help="also record the driver's answers for the fixtures")
    parser.add_argument("--stdout", action="store_true", help="print one JSON document instead of writing files")
    args = parser.parse_args(argv)
    try:
        host = record_nvml()
    except Exception as err:  # NVMLError_*, a missing library: nothing to record on this machine
        print(f"record_probe: NVML unavailable, nothing recorded: {err}", file=sys.stderr)
        return 3
    if not host["devices"]:
        print("record_probe: NVML lists no GPU, nothing recorded", file=sys.stderr)
        return 3
    slug = args.name or gpu_slug([d["name"] for d in host["devices"]])
    stamp = f"RECORDED with scripts/record_probe.py on {datetime.date.today().isoformat()}, cudafit {__version__}"
    cmd = ["nvidia-smi", f"--query-gpu={','.join(SMI_FIELDS)}", "--format=csv,noheader,nounits"]
    rc, smi, err = real_runner(cmd, 10.0)
    api, problems = probe_cuda_driver()
    docs: dict[str, Any] = {
        f"recorded_{slug}_nvml.json": {"_about": stamp, **host},
        f"recorded_{slug}_smi.csv": smi if rc == 0 else None,
        f"recorded_{slug}_driver_api.json": {"_about": stamp, "devices": api, "problems": problems},
    }
    if rc != 0:
        print(f"record_probe: nvidia-smi failed ({rc}): {err.strip()}", file=sys.stderr)
    if args.verify:
        from cudafit.errors import DriverUnavailableError

        try:
            docs[f"recorded_{slug}_verify.json"] = record_verify()
        except DriverUnavailableError as exc:
            print(f"record_probe: could not record verify: {exc.message}", file=sys.stderr)
            return 3
    if args.stdout:
        print(json.dumps(docs, indent=1))
        return 0
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, doc in docs.items():
        if doc is None:
            continue
        text = doc if isinstance(doc, str) else json.dumps(doc, indent=1) + "\n"
        (out / name).write_text(text, encoding="utf-8")
        print(f"wrote {out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
