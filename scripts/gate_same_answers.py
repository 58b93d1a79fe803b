"""Same answers with and without the module-loader gate (binary/linkage.py), on real wheels and directories.

The gate skips the import check of a file whose dependency tree, as far as the scan sees it, holds neither
``libcuda.so*`` nor a library defining one of the driver's module loaders: an import there could not be
bound (ELF gABI symbol lookup), so the census of its data sections would judge modules the library cannot
load.  This script checks that claim where it matters: for every ELF file of every wheel (and directory)
given, the facts read with the imports always checked (``gate=True``, the release before the gate) and with
the gate (what a scan now does: the archive decides for a wheel's members, the file system for a directory)
are compared on ``module_loaders`` and the number of library-loaded modules.  A file whose loader imports the
gate drops is listed with its DT_NEEDED and search path: the lead decides from the ELF rules.

Usage:
    python scripts/gate_same_answers.py [--json OUT] WHEEL_OR_DIR...
    (default: every Linux wheel in ~/.cache/cudafit-realwheels and its extracted TensorFlow directory)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudafit.binary import BinaryFacts, inspect_path
from cudafit.binary.linkage import FILE_SYSTEM, DynamicInfo, read_dynamic_info, read_file_info
from cudafit.targets.wheel_members import (
    MEMBER_READ_ERRORS,
    SPOOL_THRESHOLD,
    archive_view,
    discard,
    gated_member_facts,
    read_member_facts,
    spool,
)

REAL = Path.home() / ".cache" / "cudafit-realwheels"


@dataclass
class Tally:
    """What one tree (a wheel or a directory) gave with and without the gate."""

    name: str
    files: int = 0
    gate_open: int = 0
    importing: int = 0
    loaded_without: int = 0
    loaded_with: int = 0
    libraries_read: int = 0
    dropped: list[dict[str, Any]] = field(default_factory=list)
    differ: list[str] = field(default_factory=list)
    importers: list[dict[str, Any]] = field(default_factory=list)

    def add(self, path: str, exact: BinaryFacts, gated: BinaryFacts, opener: str, info: DynamicInfo | None) -> None:
        self.files += 1
        self.gate_open += bool(opener)
        self.importing += bool(exact.module_loaders)
        self.loaded_without += len(exact.loaded_modules)
        self.loaded_with += len(gated.loaded_modules)
        if exact.module_loaders:
            self.importers.append(
                {
                    "file": path,
                    "imports": list(exact.module_loaders),
                    "opened_by": opener,
                    "loaded": len(exact.loaded_modules),
                }
            )
        if exact.module_loaders and not gated.module_loaders:
            self.dropped.append(
                {
                    "file": path,
                    "imports": list(exact.module_loaders),
                    "loaded": len(exact.loaded_modules),
                    "needed": list(info.needed) if info else [],
                    "runpath": list(info.runpath) if info else [],
                }
            )
        if (exact.module_loaders, len(exact.loaded_modules)) != (gated.module_loaders, len(gated.loaded_modules)):
            self.differ.append(path)


def _is_elf(head: bytes) -> bool:
    return head[:4] == b"\x7fELF" and not (len(head) >= 20 and head[18:20] == b"\xbe\x00")  # not a cubin


def tally_wheel(path: Path) -> Tally:
    out = Tally(path.name)
    with zipfile.ZipFile(path) as zf:
        view = archive_view(zf)
        read: list[tuple[str, BinaryFacts, DynamicInfo | None]] = []
        for info in zf.infolist():
            if info.is_dir():
                continue
            try:
                with zf.open(info) as fh:
                    head = fh.read(64)
                if not _is_elf(head):
                    continue
                display = f"{path.name}!{info.filename}"
                if info.file_size <= SPOOL_THRESHOLD:
                    exact = read_member_facts(zf, info, display, gate=True)
                    with zf.open(info) as fh:
                        dyn = read_dynamic_info(fh.read())
                else:  # inflated once, read twice
                    local = spool(zf, info)
                    exact = inspect_path(local, name=display, gate=True)
                    dyn = read_file_info(local)
                    discard(str(path), info.filename)
            except MEMBER_READ_ERRORS as err:
                print(f"  unreadable {info.filename}: {err}", file=sys.stderr)
                continue
            view.seed(info.filename, dyn)  # the gate reads no member twice
            read.append((info.filename, exact, dyn))
        for member, exact, dyn in read:
            opener = view.gate(member, dyn.needed, dyn.runpath) if dyn is not None else ""
            gated = gated_member_facts(zf, view, member, exact, exact.path)
            out.add(f"{path.name}!{member}", exact, gated, opener, dyn)
        out.libraries_read = view.opened
    return out


def tally_directory(root: Path) -> Tally:
    out = Tally(str(root))
    before = FILE_SYSTEM.opened
    for dirpath, _dirs, files in os.walk(root):
        for name in sorted(files):
            p = os.path.join(dirpath, name)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            with open(p, "rb") as fh:
                if not _is_elf(fh.read(64)):
                    continue
            exact = inspect_path(p, gate=True)
            gated = inspect_path(p)  # the gate decides from the directory
            dyn = read_file_info(p)
            st = os.stat(p)
            identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            opener = (
                FILE_SYSTEM.opener(
                    os.path.dirname(os.path.abspath(p)),
                    dyn.needed,
                    dyn.runpath,
                    key=os.path.abspath(p),
                    identity=identity,
                )
                if dyn is not None
                else ""
            )
            out.add(p, exact, gated, opener, dyn)
    out.libraries_read = FILE_SYSTEM.opened - before
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--json", help="write every tally here")
    args = ap.parse_args()
    paths = [Path(p) for p in args.paths] or [
        *sorted(p for p in REAL.glob("*.whl") if "win_" not in p.name and "macosx" not in p.name),
        REAL / "tensorflow-2.20.0-extracted",
    ]
    tallies: list[Tally] = []
    for p in paths:
        t0 = time.perf_counter()
        tally = tally_directory(p) if p.is_dir() else tally_wheel(p)
        tallies.append(tally)
        print(
            f"{tally.name}: {tally.files} ELF files, gate open {tally.gate_open}, importing a loader "
            f"{tally.importing}, loaded modules {tally.loaded_without} -> {tally.loaded_with}, dropped "
            f"{len(tally.dropped)}, differ {len(tally.differ)} ({time.perf_counter() - t0:.1f} s)",
            flush=True,
        )
    wheels = [t for t in tallies if t.name.endswith(".whl")]
    for group, name in ((wheels, "wheels"), ([t for t in tallies if t not in wheels], "directories")):
        if not group:
            continue
        files = sum(t.files for t in group)
        print(
            f"\n{name}: {len(group)}, ELF files {files}; gate open {sum(t.gate_open for t in group)}; importing a "
            f"loader {sum(t.importing for t in group)}; loaded modules without the gate "
            f"{sum(t.loaded_without for t in group)}, with it {sum(t.loaded_with for t in group)}; imports dropped "
            f"{sum(len(t.dropped) for t in group)}; files whose answers differ {sum(len(t.differ) for t in group)}"
        )
    for t in tallies:
        for row in t.importers:
            print(
                f"  importer {row['file']}: {','.join(row['imports'])}, opened by {row['opened_by'] or '-'}, "
                f"{row['loaded']} loaded modules"
            )
        for row in t.dropped:
            print(f"  DROPPED {row['file']}: needed {row['needed']} runpath {row['runpath']}")
    if args.json:
        Path(args.json).write_text(json.dumps([t.__dict__ for t in tallies], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
