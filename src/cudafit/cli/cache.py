"""``cudafit cache [show|clear]``: what cudafit keeps in its cache directory, and removing it.

Why: scans, kernel names and wheel scans make re-checks fast (a 0.9 GB torch wheel: 9 s cold, under 1 s
again), and ``check NAME==VERSION`` keeps the wheels it downloads; all of it grows (1.6 GB of wheels
after an afternoon), so a user needs to see it and clear it without hunting for the directory.
"""

from __future__ import annotations

import argparse

from cudafit.cli import EXIT_OK
from cudafit.cli.common import Subparsers, output_format

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


def execute(args: argparse.Namespace) -> int:
    """Run ``cache``."""
    from cudafit.report.cache import cache_renderers
    from cudafit.report.formats import render
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
    render(output_format(args), doc, cache_renderers())
    return EXIT_OK
