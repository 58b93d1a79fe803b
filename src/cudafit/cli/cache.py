"""``cudafit cache [show|clear]``: what cudafit keeps in its cache directory, and removing it.

Why: scans, kernel names and wheel scans make re-checks fast (a 0.9 GB torch wheel: 9 s cold, under 1 s
again), and ``check NAME==VERSION`` keeps the wheels it downloads; all of it grows (1.6 GB of wheels
after an afternoon), so a user needs to see it and clear it without hunting for the directory.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from cudafit.cli import EXIT_OK
from cudafit.cli.common import Subparsers, output_format

if TYPE_CHECKING:
    from rich.console import Console

    from cudafit.model import JsonDict

__all__ = ["configure_parser", "execute"]

CACHE_SCHEMA = "cudafit.cache/1"
#: ``targets.cache.KINDS`` but "other" (spelled out: ``--help`` must not import the scan cache; a test keeps
#: them equal).
KIND_CHOICES = ("downloads", "wheel-scans", "kernel-names", "file-scans")


def configure_parser(sub: Subparsers) -> None:
    """Register ``cache``."""
    p = sub.add_parser(
        "cache",
        help="show or clear cudafit's cache (scans, kernel names, wheel scans, downloaded wheels)",
        description=(
            "show: each entry of the cache directory ($CUDAFIT_CACHE_DIR, else $XDG_CACHE_HOME/cudafit, else "
            "~/.cache/cudafit) with its kind and size. clear: delete entries cudafit wrote (all kinds, or --kind)."
        ),
    )
    p.add_argument("action", nargs="?", choices=("show", "clear"), default="show")
    p.add_argument(
        "--kind",
        action="append",
        choices=KIND_CHOICES,
        help="only this kind (repeatable); e.g. --kind downloads clears the downloaded wheels",
    )
    p.add_argument("--json", action="store_true", help="print the cudafit.cache/1 JSON document")
    p.set_defaults(func=execute)


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def execute(args: argparse.Namespace) -> int:
    """Run ``cache``."""
    from cudafit.report.formats import Renderers, render
    from cudafit.targets.cache import cache_dir, clear_cache, iter_cache_parts

    directory = cache_dir()
    kinds = args.kind
    if args.action == "clear":
        parts = clear_cache(kinds)
    else:
        parts = [p for p in iter_cache_parts() if kinds is None or p.kind in kinds]
    entries = [
        {
            "name": p.name,
            "kind": p.kind,
            "description": p.description,
            "path": p.path,
            "bytes": p.size,
            "files": p.files,
            "current": p.current,
        }
        for p in parts
    ]
    doc = {"schema": CACHE_SCHEMA, "directory": directory, "action": args.action, "entries": entries}
    doc["total_bytes"] = sum(p.size for p in parts)
    render(output_format(args), doc, Renderers(_render_text))
    return EXIT_OK


def _render_text(doc: JsonDict, console: Console) -> None:
    """What was removed, or each entry with its size, file count and kind, and the total."""
    out, directory, entries, total = console.file, doc["directory"], doc["entries"], doc["total_bytes"]
    if doc["action"] == "clear":
        n = len(entries)
        out.write(f"removed {n} entr{'y' if n == 1 else 'ies'} of {directory}, {_human(total)}\n")
        return
    if not entries:
        out.write(f"{directory}: empty\n")
        return
    out.write(f"{directory}\n")
    width = max(len(e["name"]) for e in entries)
    for e in entries:
        stale = "" if e["current"] else " (another cudafit version: never read; clear removes it)"
        out.write(
            f"  {e['name']:<{width}}  {_human(e['bytes']):>9}  {e['files']:>6} file(s)  {e['kind']}: "
            f"{e['description']}{stale}\n"
        )
    out.write(f"  {'total':<{width}}  {_human(total):>9}\n")
