"""The verdict table of real CUDA libraries (docs/rules.md, "Real libraries"), replayed from recorded shapes.

tests/fixtures/libraries/*.json.gz were recorded from the real wheels and the stock torch 2.14.1 environment by
scripts/record_library_shapes.py: each registered module's arch list and payload size, the arch lists of embedded
fatbins and loose cubins, the CUDA runtime each file links, and, for the modules the rules looked at, whether they
hold kernels and which architectures their names tag.
The engine judges the replay exactly as it judged the originals; the opt-in real-wheel test checks the originals.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cudafit.binary.facts import BinaryFacts, Compression, EntryKind, FatbinEntry, FileFormat, Module
from cudafit.model import ArchVariant
from cudafit.probe import declared_inventory
from cudafit.rules.engine import Gpu, PreparedFile, evaluate_package

HERE = Path(__file__).parent
LIBS = HERE / "fixtures" / "libraries"
DOCS = HERE.parent / "docs" / "rules.md"

GPUS = ("GTX 1080 Ti", "V100", "T4", "A100", "RTX 3090", "L4", "H100", "B200", "B300", "RTX 5090")


def load(label: str) -> dict[str, Any]:
    with gzip.open(LIBS / f"{label}.json.gz", "rt", encoding="utf-8") as fh:
        doc: dict[str, Any] = json.load(fh)
    return doc


def _entries(signature: list[list[Any]], size: int, ptx_isa: Any = None) -> tuple[FatbinEntry, ...]:
    """The entries of a recorded arch list; PTX gets the file's recorded ISA (recordings without one: 9.0, the
    CUDA 13.0 stack they were made from)."""
    each = max(size // max(len(signature), 1), 1)
    isa = tuple(ptx_isa) if ptx_isa else (9, 0)
    out = []
    for kind, number, variant in signature:
        k = EntryKind.SASS if kind == "sass" else EntryKind.PTX
        out.append(
            FatbinEntry(
                k,
                number,
                ArchVariant(variant),
                isa if k is EntryKind.PTX else (1, 8),
                0x11,
                Compression.NONE,
                0,
                64,
                64,
                each,
                0,
                0,
            )
        )
    return tuple(out)


def _names(evidence: Any) -> tuple[str, ...] | None:
    """Kernel names standing for the recorded evidence: one per distinct tag set ("k_sm80"; "k" untagged)."""
    if not isinstance(evidence, list):
        return None  # never looked at, or unreadable
    return tuple("k" + "".join(f"_sm{t}" for t in tags) for tags in evidence)


def python_modules(doc: dict[str, Any]) -> dict[str, int]:
    """Python modules per recorded package (0 where the recording predates them: judged as binaries only)."""
    return {f"{p['name']} {p['version']}": p.get("python_modules", 0) for p in doc["packages"]}


def replay(doc: dict[str, Any]) -> Iterator[tuple[str, list[PreparedFile]]]:
    """Each recorded package as prepared files whose kernel-name lookups answer from the recording."""
    sigs = doc["signatures"]
    for pkg in doc["packages"]:
        files: list[PreparedFile] = []
        for f in pkg["files"]:
            modules = [
                Module(off, size, section or None, _entries(sigs[si], size, f.get("ptx_isa")))
                for off, si, size, section, _n in f["modules"]
            ]
            for si, count in f["embedded"]:
                entries = _entries(sigs[si], 4096, f.get("ptx_isa"))
                modules += [Module(1 << 40, 4096, ".ldata", entries)] * count
            names = {off: _names(n) for off, _si, _s, _sec, n in f["modules"]}
            facts = BinaryFacts(
                f["path"],
                FileFormat(f["format"]),
                0,
                tuple(modules),
                needed=tuple(f["needed"]),
                embedded_sections=tuple(f["embedded_sections"]),
            )
            files.append(PreparedFile(facts, lambda m, names=names: names.get(m.offset)))
        for si, count in pkg["loose_cubins"]:
            entries = _entries(sigs[si], 4096)
            for i in range(count):
                facts = BinaryFacts(f"cubins/{si}-{i}.cubin", FileFormat.CUBIN, 0, (Module(0, 4096, None, entries),))
                files.append(PreparedFile(facts))
        yield f"{pkg['name']} {pkg['version']}", files


def table_gpus() -> list[Gpu]:
    inv, errors = declared_inventory(list(GPUS))
    assert not errors
    return [Gpu(d.name, d.compute_capability) for d in inv.devices if d.compute_capability]


def documented_table() -> dict[str, dict[str, list[str]]]:
    """library -> package -> statuses, parsed from docs/rules.md's "Real libraries" table."""
    text = DOCS.read_text()
    section = text.split("## Real libraries", 1)[1].split("\n## ", 1)[0]
    out: dict[str, dict[str, list[str]]] = {}
    for line in section.splitlines():
        m = re.match(r"^\| `([^`]+)` \| `([^`]+)` \|(.*)\|$", line)
        if m:
            out.setdefault(m.group(1), {})[m.group(2)] = [c.strip() for c in m.group(3).split("|")]
    return out


RECORDED = sorted(p.name.removesuffix(".json.gz") for p in LIBS.glob("*.json.gz"))


@pytest.mark.parametrize("label", RECORDED)
def test_verdict_table_of_real_libraries(label: str) -> None:
    documented = documented_table()
    assert label in documented, f"{label} is recorded but not in docs/rules.md's table"
    gpus = table_gpus()
    doc = load(label)
    pys = python_modules(doc)
    got = {
        name: [evaluate_package(name, files, g, python_modules=pys[name]).status.value for g in gpus]
        for name, files in replay(doc)
    }
    assert got == documented[label]


def test_every_documented_library_is_recorded() -> None:
    assert set(documented_table()) == set(RECORDED)
    assert len(RECORDED) >= 9  # the eight libraries of issue 11 and the torch stack
