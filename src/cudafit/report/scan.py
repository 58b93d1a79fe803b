"""Rendering of ``cudafit scan``: binary facts as JSON (``cudafit.scan/1``) or a text table.

Archs are named as cuobjdump's default dump names them (``sm_90a``, ``sm_100f``,
``compute_120``), keeping the ``f`` suffix that ``cuobjdump --list-elf`` drops.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cudafit import __version__
from cudafit.binary.facts import BinaryFacts, EntryKind, FatbinEntry, arch_sort_key
from cudafit.targets.kernels import KernelRow

if TYPE_CHECKING:
    from rich.console import Console

    from cudafit.model import ArchVariant, JsonDict

__all__ = [
    "SCAN_SCHEMA",
    "FileReport",
    "entry_to_dict",
    "render_scan_json",
    "render_scan_text",
]

SCAN_SCHEMA = "cudafit.scan/1"


@dataclass(frozen=True)
class FileReport:
    """What the scan command knows about one file: its facts, its package, optional kernels."""

    facts: BinaryFacts
    package: str | None = None
    version: str | None = None
    runtime_compiled: str | None = None
    kernels: tuple[KernelRow, ...] | None = None
    stub_modules: tuple[int, ...] = ()
    kernel_error: str | None = None


@functools.lru_cache(maxsize=4096)
def _names(kind: EntryKind, arch: int, variant: ArchVariant, code_version: tuple[int, int]) -> tuple[str, str | None]:
    """(arch name, PTX ISA) of an entry; cached: a large environment repeats a few dozen of them."""
    probe = FatbinEntry(kind, arch, variant, code_version, 0, None, 0, 0, 0, 0, 0, 0)  # type: ignore[arg-type]
    isa = probe.ptx_isa
    return probe.arch_name, str(isa) if isa else None


def entry_to_dict(entry: FatbinEntry, module_index: int, relocatable: bool, embedded: bool = False) -> JsonDict:
    """One entry in the ``cudafit.scan/1`` shape."""
    arch, ptx_isa = _names(entry.kind, entry.arch_number, entry.variant, entry.code_version)
    return {
        "module": module_index,
        "kind": entry.kind.value,
        "arch": arch,
        "relocatable": relocatable,
        "embedded": embedded,
        "compression": entry.compression.value,
        "code_version": list(entry.code_version),
        "ptx_isa": ptx_isa,
        "debug": entry.debug,
        "bits": 64 if entry.is_64bit else 32,
        "identifier": entry.identifier,
        "options": entry.options,
        "payload_size": entry.payload_size,
        "compressed_size": entry.compressed_size,
        "uncompressed_size": entry.uncompressed_size,
        "concatenated": entry.concat_offset is not None,
        "flags": entry.flags,
    }


def _iter_flat(report: FileReport) -> Iterable[tuple[BinaryFacts, FileReport]]:
    yield report.facts, report
    for member in report.facts.members:
        yield from _iter_flat(FileReport(member, report.package, report.version, report.runtime_compiled))


def _file_to_dict(facts: BinaryFacts, report: FileReport, with_kernels: bool, *, entries: bool = True) -> JsonDict:
    entry_list = (
        [entry_to_dict(e, i, m.relocatable, m.embedded) for i, m in enumerate(facts.modules) for e in m.entries]
        if entries
        else None
    )
    out: JsonDict = {
        "path": facts.path,
        "format": facts.format.value,
        "size": facts.size,
        "package": report.package,
        "version": report.version,
        "runtime_compiled": report.runtime_compiled,
        "error": facts.error,
        "error_code": facts.error_code,
        "notes": list(facts.notes),
        "embedded_sections": list(facts.embedded_sections),
        "needed": list(facts.needed),
        "module_loaders": list(facts.module_loaders),
        "fallbacks": list(facts.fallbacks),
        "modules": [
            {
                "index": i,
                "section": m.section,
                "embedded": m.embedded,
                "loaded": m.loaded,
                "offset": m.offset,
                "size": m.size,
                "entries": len(m.entries),
            }
            for i, m in enumerate(facts.modules)
        ],
        "entries": entry_list,
    }
    if entry_list is None:
        del out["entries"]  # rendered as text by render_scan_json_text
    if facts.ptx_isa is not None:
        out["ptx_isa"] = str(facts.ptx_isa)
    if with_kernels and report.facts is facts:
        out["kernel_error"] = report.kernel_error
        out["dlink_stub_modules"] = list(report.stub_modules)
        out["kernels"] = [
            {
                "module": row.module,
                "arch": row.arch,
                "name": row.kernel.name,
                "static_shared_bytes": row.kernel.static_shared_bytes,
                "registers": row.kernel.registers,
                "max_threads": list(row.kernel.max_threads) if row.kernel.max_threads else None,
            }
            for row in (report.kernels or ())
        ]
    return out


def render_scan_json(reports: Sequence[FileReport], *, with_kernels: bool = False) -> JsonDict:
    """The ``cudafit.scan/1`` document; archive members are listed as their own files."""
    files = [_file_to_dict(f, r, with_kernels) for rep in reports for f, r in _iter_flat(rep)]
    with_code = sum(1 for f in files if f["entries"])
    errors = sum(1 for f in files if f["error"])
    return {
        "schema": SCAN_SCHEMA,
        "cudafit_version": __version__,
        "files": files,
        "summary": {
            "files": len(files),
            "with_device_code": with_code,
            "errors": errors,
            "entries": sum(len(f["entries"]) for f in files),
        },
    }


_ENTRY_TEMPLATE = (
    '{"module":%d,"kind":"%s","arch":"%s","relocatable":%s,"embedded":%s,"compression":"%s",'
    '"code_version":[%d,%d],"ptx_isa":%s,"debug":%s,"bits":%d,"identifier":%s,"options":%s,'
    '"payload_size":%d,"compressed_size":%d,"uncompressed_size":%d,"concatenated":%s,"flags":%d}'
)
_BOOL = {True: "true", False: "false"}


def _entries_text(facts: BinaryFacts) -> str:
    """The ``entries`` array of one file as JSON text, without building a dict per entry.

    Equivalent to ``json.dumps([entry_to_dict(...)...])`` (a test checks it): large environments
    hold tens of thousands of entries and this is the hot path of ``scan --json``.  Every string
    that is not one of cudafit's own identifiers goes through ``json.dumps``.
    """
    parts = []
    for i, m in enumerate(facts.modules):
        reloc = _BOOL[m.relocatable]
        emb = _BOOL[m.embedded]
        for e in m.entries:
            arch, ptx_isa = _names(e.kind, e.arch_number, e.variant, e.code_version)
            parts.append(
                _ENTRY_TEMPLATE
                % (
                    i,
                    e.kind.value,
                    arch,
                    reloc,
                    emb,
                    e.compression.value,
                    e.code_version[0],
                    e.code_version[1],
                    f'"{ptx_isa}"' if ptx_isa else "null",
                    _BOOL[bool(e.flags & 0x2)],
                    64 if e.flags & 0x1 else 32,
                    json.dumps(e.identifier) if e.identifier else '""',
                    json.dumps(e.options) if e.options else '""',
                    e.payload_size,
                    e.compressed_size,
                    e.uncompressed_size,
                    _BOOL[e.concat_offset is not None],
                    e.flags,
                )
            )
    return "[" + ",".join(parts) + "]"


def file_json_texts(report: FileReport, *, with_kernels: bool = False) -> tuple[list[str], tuple[int, int, int, int]]:
    """One report (and its archive members) as ``cudafit.scan/1`` file objects in JSON text, and
    (files, entries, files with device code, errors) for the summary."""
    texts = []
    n_files = with_code = errors = n_entries = 0
    for facts, r in _iter_flat(report):
        d = _file_to_dict(facts, r, with_kernels, entries=False)
        count = sum(len(m.entries) for m in facts.modules)
        n_files += 1
        n_entries += count
        with_code += bool(count)
        errors += bool(facts.error)
        head = json.dumps(d, separators=(",", ":"))
        texts.append(head[:-1] + ',"entries":' + _entries_text(facts) + "}")
    return texts, (n_files, n_entries, with_code, errors)


def scan_document_text(file_texts: Sequence[str], counts: Sequence[tuple[int, int, int, int]]) -> str:
    """Assemble the ``cudafit.scan/1`` document from file texts and their counts."""
    n_files = sum(c[0] for c in counts)
    summary = {
        "files": n_files,
        "with_device_code": sum(c[2] for c in counts),
        "errors": sum(c[3] for c in counts),
        "entries": sum(c[1] for c in counts),
    }
    return (
        '{"schema":'
        + json.dumps(SCAN_SCHEMA)
        + ',"cudafit_version":'
        + json.dumps(__version__)
        + ',"files":['
        + ",".join(file_texts)
        + '],"summary":'
        + json.dumps(summary, separators=(",", ":"))
        + "}"
    )


def render_scan_json_text(reports: Sequence[FileReport], *, with_kernels: bool = False) -> str:
    """:func:`render_scan_json` as compact JSON text, built without a dict per entry (fast path)."""
    texts: list[str] = []
    counts = []
    for rep in reports:
        t, c = file_json_texts(rep, with_kernels=with_kernels)
        texts.extend(t)
        counts.append(c)
    return scan_document_text(texts, counts)


def summarize_archs(facts: BinaryFacts) -> tuple[list[str], list[str], list[str], bool]:
    """(SASS archs, PTX targets with ISA, LTO targets, only-relocatable) for the text view."""
    runtime = facts.runtime_modules
    mods = runtime or facts.modules
    sass = sorted({e.arch_name for m in mods for e in m.entries if e.kind is EntryKind.SASS}, key=arch_sort_key)
    ptx = sorted(
        {f"{e.arch_name} (PTX {e.ptx_isa})" for m in mods for e in m.entries if e.kind is EntryKind.PTX},
        key=arch_sort_key,
    )
    lto = sorted({e.arch_name for m in mods for e in m.entries if e.kind is EntryKind.LTO}, key=arch_sort_key)
    return sass, ptx, lto, bool(facts.modules) and not runtime


def render_scan_text(
    reports: Sequence[FileReport], console: Console, *, with_kernels: bool = False, all_files: bool = False
) -> None:
    """A readable table per file (only files with device code or errors unless ``all_files``)."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    table.add_column("file", overflow="fold")
    table.add_column("package")
    table.add_column("modules", justify="right")
    table.add_column("SASS")
    table.add_column("PTX")
    shown = 0
    hidden = 0
    for rep in reports:
        for facts, r in _iter_flat(rep):
            if facts.error:
                table.add_row(facts.path, _pkg(r), "-", f"[red]unreadable: {facts.error}[/red]", "")
                shown += 1
                continue
            if not facts.modules and not all_files:
                hidden += 1
                continue
            sass, ptx, lto, reloc_only = summarize_archs(facts)
            extra = _extra_notes(facts, r, lto, reloc_only)
            n_mod = len(facts.runtime_modules) or len(facts.modules)
            table.add_row(
                facts.path,
                _pkg(r),
                str(n_mod) if facts.modules else "-",
                " ".join(sass) or ("-" if facts.modules else "no device code"),
                " ".join(ptx + extra) or "-",
            )
            shown += 1
    console.print(table)
    for rep in reports:  # what the payload said over the entry header, and reads that rest on a fallback
        for facts, _r in _iter_flat(rep):
            for note in facts.notes:
                if note.endswith("(the payload wins)"):
                    console.print(f"note: {escape(facts.path)}: {escape(note)}")
            for what in facts.fallbacks:
                console.print(f"[yellow]fallback[/yellow] {escape(facts.path)}: {escape(what)}")
    if with_kernels:
        for rep in reports:
            _render_kernels(rep, console)
    if hidden:
        console.print(f"({hidden} file(s) without device code not shown; --all lists them)")


def _extra_notes(facts: BinaryFacts, r: FileReport, lto: list[str], reloc_only: bool) -> list[str]:
    """The PTX column's additions: LTO-IR, relocatable-only code, run-time compilation, library-loaded fatbins."""
    extra = []
    if lto:
        extra.append("LTO-IR: " + " ".join(lto))
    if reloc_only:
        extra.append("[yellow]relocatable only (__nv_relfatbin): never loaded at run time[/yellow]")
    if r.runtime_compiled:
        extra.append(f"compiles at run time: {r.runtime_compiled}")
    emb = facts.embedded_modules
    if emb and facts.loaded_modules:
        archs = sorted({e.arch_name for m in emb for e in m.entries}, key=arch_sort_key)
        where = ", ".join(dict.fromkeys(m.section or "" for m in emb))
        plural = "s" if len(emb) > 1 else ""
        extra.append(
            f"loaded by the library itself ({', '.join(facts.module_loaders)}; {len(emb)} fatbin{plural} in "
            f"{where}): " + " ".join(archs)
        )
    elif emb:
        archs = sorted({e.arch_name for m in emb for e in m.entries}, key=arch_sort_key)
        extra.append(f"library-loaded ({len(emb)} fatbins): " + " ".join(archs))
    elif facts.embedded_sections:
        extra.append(f"embeds fatbins in {', '.join(facts.embedded_sections)} (see --embedded)")
    return extra


def _pkg(r: FileReport) -> str:
    if not r.package:
        return ""
    return f"{r.package} {r.version}" if r.version else r.package


def _render_kernels(rep: FileReport, console: Console) -> None:
    from rich.table import Table

    from cudafit.binary.kernels import demangle

    if rep.kernel_error:
        console.print(f"{rep.facts.path}: kernels unreadable: {rep.kernel_error}")
    if not rep.kernels and not rep.stub_modules:
        return
    table = Table(title=rep.facts.path, box=None, header_style="bold", title_justify="left")
    names = demangle([row.kernel.name for row in rep.kernels or ()])
    for col in ("module", "arch", "kernel", "regs", "static smem", "max threads"):
        table.add_column(col, justify="right" if col in ("module", "regs", "static smem") else "left")
    for row in rep.kernels or ():
        k = row.kernel
        table.add_row(
            str(row.module),
            row.arch,
            names.get(k.name, k.name),
            "?" if k.registers is None else str(k.registers),
            "?" if k.static_shared_bytes is None else str(k.static_shared_bytes),
            "x".join(map(str, k.max_threads)) if k.max_threads else "-",
        )
    console.print(table)
    if rep.stub_modules:
        console.print(f"  kernel-less device-link stub modules: {', '.join(map(str, rep.stub_modules))}")
