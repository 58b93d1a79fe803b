"""Record the module shapes of real CUDA libraries for the verdict-table test (tests/test_roles_libraries.py).

What the module-role rules read of a library is small: each registered module's arch list and payload size,
the distinct arch lists of the fatbins it embeds or ships as loose cubins, the libraries each file links, how
many Python modules the distribution ships, and, for the modules whose role is in question, whether they have
kernels and which architectures their names tag.
This script scans installed environments or
unpacked wheels with cudafit itself, runs the verdicts for the GPUs of the table (recording every kernel-name
lookup the rules make) and writes one gzip'd JSON per library under tests/fixtures/libraries/.  The test replays
them without the multi-GB originals; the opt-in real-wheel test checks the same table on the originals.

Per-CUDA-version copies (bitsandbytes) count as cudafit counts them: only the copy the installed torch's CUDA
(or ``BNB_CUDA_VERSION``) selects is recorded.

Usage (the wheels unpacked into directories that hold their ``*.dist-info``):
    python3 scripts/record_library_shapes.py --out tests/fixtures/libraries \\
        vllm-0.33.0=/path/to/unpacked/vllm ... torch-2.14.1-stack=/path/to/venv/lib/python3.11/site-packages
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from typing import Any

#: The GPUs of the verdict table (docs/rules.md, "Real libraries").
TABLE_GPUS = ("GTX 1080 Ti", "V100", "T4", "A100", "RTX 3090", "L4", "H100", "B200", "B300", "RTX 5090")


def record(label: str, site: str) -> dict[str, Any]:
    from cudafit.analysis import analyze
    from cudafit.binary.facts import EntryKind, FileFormat
    from cudafit.model import Gpu
    from cudafit.probe import declared_inventory
    from cudafit.targets import kernels as kernels_mod
    from cudafit.targets.cache import scan_cache
    from cudafit.targets.env import EnvironmentTarget

    inv, errors = declared_inventory(list(TABLE_GPUS))
    if errors:
        sys.exit(f"unknown GPU names: {errors}")
    gpus = [Gpu(d.name, d.compute_capability) for d in inv.devices if d.compute_capability]
    looked: dict[tuple[str, int], tuple[str, ...] | None] = {}
    real_call = kernels_mod.KernelNameSource.__call__

    def recording_call(self: Any, module: Any) -> Any:
        names = real_call(self, module)
        looked[(self.facts.path, module.offset)] = names
        return names

    kernels_mod.KernelNameSource.__call__ = recording_call  # type: ignore[method-assign]
    try:
        with scan_cache(enabled=False):
            items = list(EnvironmentTarget([site]).iter_items())
            analysis = analyze(items, gpus, include_coverage=False)
    finally:
        kernels_mod.KernelNameSource.__call__ = real_call  # type: ignore[method-assign]

    signatures: dict[tuple[Any, ...], int] = {}

    def sig(module: Any) -> int:
        key = tuple(
            sorted(
                {
                    (e.kind.value, e.arch_number, e.variant.value)
                    for e in module.entries
                    if e.kind in (EntryKind.SASS, EntryKind.PTX)
                }
            )
        )
        return signatures.setdefault(key, len(signatures))

    packages = []
    for p in analysis.packages:
        files = []
        loose: dict[int, int] = {}
        inactive = {path for path, _why in p.inactive}  # other per-CUDA-version copies: never loaded here
        for f in p.files:
            if f.path in inactive:
                continue
            rel = os.path.relpath(f.path, site)
            if f.format in (FileFormat.CUBIN, FileFormat.FATBIN):
                for m in f.modules:
                    loose[sig(m)] = loose.get(sig(m), 0) + 1
                continue
            mods = []
            embedded: dict[int, int] = {}
            for unit in (f, *f.members):
                for m in unit.modules:
                    if m.embedded:
                        embedded[sig(m)] = embedded.get(sig(m), 0) + 1
                        continue
                    size = sum(e.payload_size for e in m.entries)
                    mods.append([m.offset, sig(m), size, m.section or "", _kernel_evidence(looked, f.path, m.offset)])
            isas = [
                e.code_version for u in (f, *f.members) for m in u.modules for e in m.entries if e.kind is EntryKind.PTX
            ]
            files.append(
                {
                    "path": rel,
                    "format": f.format.value,
                    "ptx_isa": list(max(isas)) if isas else None,  # the toolkit evidence of static runtimes
                    "needed": list(f.needed),
                    "embedded_sections": list(f.embedded_sections),
                    "modules": mods,
                    "embedded": sorted(embedded.items()),
                }
            )
        packages.append(
            {
                "name": p.name,
                "version": p.version,
                "files": files,
                "loose_cubins": sorted(loose.items()),
                "python_modules": p.python_modules,
            }
        )
    return {
        "library": label,
        "gpus": list(TABLE_GPUS),
        "signatures": [list(map(list, k)) for k in signatures],
        "packages": packages,
    }


def _kernel_evidence(looked: dict[tuple[str, int], Any], path: str, offset: int) -> Any:
    """What the rules read of a module's kernels: "-" (never looked at), None (unreadable), else the arch tags
    of each kernel name (an empty list per untagged kernel; no kernels: an empty list)."""
    from cudafit.rules.roles import kernel_arch_tags

    if (path, offset) not in looked:
        return "-"
    names = looked[(path, offset)]
    if names is None:
        return None
    return sorted({tuple(sorted(kernel_arch_tags(n))) for n in names})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="tests/fixtures/libraries")
    ap.add_argument("pairs", nargs="+", metavar="LABEL=SITE")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for pair in args.pairs:
        label, _, site = pair.partition("=")
        doc = record(label, site)
        path = os.path.join(args.out, f"{label}.json.gz")
        data = json.dumps(doc, separators=(",", ":"), sort_keys=True).encode()
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as fh:
            fh.write(data)  # mtime 0: re-recording the same library gives the same bytes
        print(
            f"{path}: {sum(len(f['modules']) for p in doc['packages'] for f in p['files'])} modules, "
            f"{len(doc['signatures'])} arch lists, {os.path.getsize(path)} bytes"
        )


if __name__ == "__main__":
    main()
