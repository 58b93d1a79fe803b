"""Rendering of ``gpus``: the ``cudafit.gpus/1`` documents (names resolved, or a machine's inventory) as text.

Pure functions of the resolutions or of the document; nothing is decided here.  The machine document
itself is :func:`cudafit.probe.inventory_to_dict` (the probe owns its shape; ``--inventory`` reads it back).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from cudafit.report.formats import Renderers

if TYPE_CHECKING:
    from rich.console import Console

    from cudafit.errors import UnknownGpuError
    from cudafit.model import JsonDict
    from cudafit.rules.gpus import GpuResolution

__all__ = [
    "GPUS_SCHEMA",
    "machine_renderers",
    "render_machine",
    "render_resolved",
    "resolve_document",
    "resolve_renderers",
]

GPUS_SCHEMA = "cudafit.gpus/1"


def resolve_document(answers: Sequence[tuple[str, GpuResolution | UnknownGpuError]]) -> JsonDict:
    """The ``cudafit.gpus/1`` resolve document: each query's compute capability, or why it has none."""
    from cudafit.errors import UnknownGpuError

    gpus: list[JsonDict] = []
    errors: list[JsonDict] = []
    for q, r in answers:
        if isinstance(r, UnknownGpuError):
            errors.append({"query": q, "message": r.message, "candidates": list(r.candidates)})
            continue
        gpus.append(
            {
                "query": q,
                "name": r.name,
                "compute_capability": str(r.compute_capability),
                "architecture": r.architecture,
                "source": "declared",
                "matches": [m.name for m in r.matches],
            }
        )
    return {"schema": GPUS_SCHEMA, "mode": "resolve", "gpus": gpus, "errors": errors}


def render_resolved(doc: JsonDict, console: Console) -> None:
    """Text form of a ``cudafit.gpus/1`` resolve document (errors to standard error)."""
    for g in doc["gpus"]:
        extra = f" ({len(g['matches'])} products)" if len(g["matches"]) > 1 else ""
        named = f"{g['name']}, " if g["name"] != f"compute capability {g['compute_capability']}" else ""
        console.print(f"{g['query']}: {named}compute capability {g['compute_capability']}, {g['architecture']}{extra}")
    for e in doc["errors"]:
        print(f"cudafit: {e['message']}", file=sys.stderr)


_COLUMNS = ("nvidia-smi #", "CUDA #", "GPU", "CC", "memory", "PCI bus", "UUID")


def _rows(doc: JsonDict) -> list[tuple[str, ...]]:
    return [
        (
            str(g["index"]),
            "hidden" if g["cuda_index"] is None else str(g["cuda_index"]),
            str(g["name"]),
            g["compute_capability"] or "?",
            f"{g['memory_mib']} MiB" if g["memory_mib"] else "",
            g["pci_bus_id"] or "",
            g["uuid"] or "",
        )
        for g in doc["gpus"]
    ]


def _table_lines(rows: list[tuple[str, ...]]) -> list[str]:
    """The device table as plain lines: one pass for the widths, one to pad (linear in the devices).

    rich's ``Table`` measured every cell through its layout engine (about 1 ms per device: a
    20,000-device inventory took 26 s); the values are plain text, so plain padding is enough.
    """
    widths = [len(c) for c in _COLUMNS]
    for row in rows:
        for k, cell in enumerate(row):
            widths[k] = max(widths[k], len(cell))
    return [" " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def render_machine(doc: JsonDict, console: Console) -> None:
    """Text form of a ``cudafit.gpus/1`` machine document (every value escaped: names come from tools)."""
    from rich.markup import escape

    if doc["status"] == "no-driver":
        # The problems already say "no NVIDIA driver: ..."; the heading must not say it twice.
        why = [p.removeprefix("no NVIDIA driver: ") for p in doc["problems"]]
        console.print("No NVIDIA driver found: " + escape("; ".join(why) or "no GPU backend answered"))
    elif doc["status"] == "no-gpu":
        console.print(f"NVIDIA driver {escape(str(doc['driver_version']))} found, but no GPU.")
    else:
        header, *body = _table_lines([_COLUMNS, *_rows(doc)])
        console.print(header, style="bold", markup=False, highlight=False)
        if body:
            console.file.write("\n".join(body) + "\n")
        cuda = f" (CUDA {doc['cuda_driver_version']})" if doc["cuda_driver_version"] else ""  # nvidia-smi: unknown
        line = f"driver {doc['driver_version'] or '?'}{cuda}, via {doc['source']}"
        console.print(line, markup=False, highlight=False)
        ordering = doc["ordering"]
        if ordering["note"]:
            console.print(("[yellow]estimated:[/yellow] " if ordering["estimated"] else "") + escape(ordering["note"]))
        if doc["problems"]:
            console.file.write("".join(f"note: {p}\n" for p in doc["problems"]))
    for t in doc["toolchains"]:
        where = t["path"] or ""
        state = t["problem"] or (f"version {t['version']}" if t["version"] else "")
        console.print(f"{t['name']}: {state} {where}".rstrip(), markup=False, highlight=False)


def resolve_renderers() -> Renderers:
    """The writers of a resolve document: text (JSON is the document itself)."""
    return Renderers(render_resolved)


def machine_renderers() -> Renderers:
    """The writers of a machine document: text (JSON is the document itself)."""
    return Renderers(render_machine)
