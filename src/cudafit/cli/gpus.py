"""``cudafit gpus [NAME...]``: resolve GPU names, or show this machine's GPUs.

Without names: the probe inventory (NVML, then nvidia-smi; ``--deep`` adds the CUDA driver API).
On a machine without a driver it says so and exits 0.  With names: each name's compute
capability, or an error that lists candidates (exit 1).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from cudafit.cli import EXIT_FAILS, EXIT_OK
from cudafit.cli.common import Subparsers, output_format

if TYPE_CHECKING:
    from rich.console import Console

    from cudafit.model import JsonDict

__all__ = ["configure_parser", "execute"]


def configure_parser(sub: Subparsers) -> None:
    """Register ``gpus``."""
    p = sub.add_parser(
        "gpus",
        help="show this machine's GPUs, or resolve GPU names to compute capabilities",
        description="Without NAME: this machine's GPUs (NVML / nvidia-smi; no CUDA context). With NAME: resolve names.",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="GPU names ('RTX 3090', 'a100', 'sm_86', '8.6')")
    p.add_argument("--deep", action="store_true", help="also ask the CUDA driver API (initialises the driver)")
    p.add_argument("--inventory", metavar="FILE", help="show an inventory recorded on another machine")
    p.add_argument("--json", action="store_true", help="print the cudafit.gpus/1 JSON document")
    p.set_defaults(func=execute)


def _resolve(names: list[str]) -> tuple[JsonDict, int]:
    from cudafit.errors import UnknownGpuError
    from cudafit.rules.gpus import resolve_gpu

    gpus: list[JsonDict] = []
    errors: list[JsonDict] = []
    for q in names:
        try:
            r = resolve_gpu(q)
        except UnknownGpuError as err:
            errors.append({"query": q, "message": err.message, "candidates": list(err.candidates)})
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
    doc = {"schema": "cudafit.gpus/1", "mode": "resolve", "gpus": gpus, "errors": errors}
    return doc, (EXIT_FAILS if errors else EXIT_OK)


def execute(args: argparse.Namespace) -> int:
    """Run ``gpus``."""
    from cudafit.report.formats import Renderers, render

    if args.names:
        doc, code = _resolve(args.names)
        render(output_format(args), doc, Renderers(_render_resolved))
        return code
    from cudafit.probe import inventory_from_file, inventory_to_dict, probe_machine

    inv = inventory_from_file(args.inventory) if args.inventory else probe_machine(deep=args.deep, toolchains=True)
    render(output_format(args), inventory_to_dict(inv), Renderers(_render))
    return EXIT_OK


def _render_resolved(doc: JsonDict, console: Console) -> None:
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


def _render(doc: JsonDict, console: Console) -> None:
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
