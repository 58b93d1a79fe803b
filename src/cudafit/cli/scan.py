"""``cudafit scan PATH...``: the binary facts of files, directories, wheels, images, .pt2.

Exit codes: 0 every file was read, 1 at least one file (or member) could not be read,
2 usage error, 3 nothing could be analysed.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from cudafit.cli import EXIT_ANALYSIS_FAILED, EXIT_FAILS, EXIT_OK
from cudafit.cli.common import Subparsers

if TYPE_CHECKING:
    from cudafit.report.scan import FileReport
    from cudafit.targets.cache import ScanCache, TextKey
    from cudafit.targets.interface import ScanJob

__all__ = ["configure_parser", "execute"]


def configure_parser(sub: Subparsers) -> None:
    """Register ``scan``."""
    p = sub.add_parser(
        "scan",
        help="list the SASS/PTX embedded in files, directories, wheels, images or .pt2 packages",
        description="Read the CUDA device code embedded in binaries (headers only; nothing is imported or run).",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="file, directory, .whl, image tarball or .pt2")
    p.add_argument("--kernels", action="store_true", help="also list kernels (decompresses cubins)")
    p.add_argument("--all", action="store_true", help="also list files without device code")
    p.add_argument("--json", action="store_true", help="print the cudafit.scan/1 JSON document")
    p.add_argument("--no-cache", action="store_true", help="do not use or update the scan cache")
    p.add_argument(
        "--embedded", action="store_true", help="also read fatbins libraries embed to load themselves (slower)"
    )
    p.set_defaults(func=execute)


def _kernels_for(report: FileReport) -> FileReport:
    """Attach the kernel rows of a report's file (:func:`cudafit.targets.kernels.read_kernels`)."""
    from dataclasses import replace

    from cudafit.targets.kernels import read_kernels

    found = read_kernels(report.facts)
    if found is None:
        return report
    if found.rows is None:
        return replace(report, kernel_error=found.error)
    return replace(report, kernels=found.rows, stub_modules=found.stub_modules, kernel_error=found.error)


def _text_key(cache: ScanCache | None, job: ScanJob) -> TextKey | None:
    """The scan cache's key of a file's rendering (its stat and how it is owned); ``None`` without a cache
    on disk or when the file cannot be stat'ed."""
    import os

    if cache is None or cache.path is None:
        return None
    try:
        st = os.stat(job.path)
    except OSError:
        return None
    return (*cache.key(job.path, st), job.package, job.version, job.runtime_compiled, job.inactive)


def _render_job(job: ScanJob) -> tuple[list[str], tuple[int, int, int, int], list[Any], list[Any]]:
    """Inspect one file and render it as JSON text (runs in worker processes).

    With the scan cache on, an unchanged file's rendering is reused without reading its facts.
    """

    from cudafit.report.scan import FileReport, file_json_texts
    from cudafit.targets.cache import current

    cache = current()
    tkey = _text_key(cache, job)
    hit = cache.get_text(tkey) if cache is not None and tkey is not None else None
    if hit is not None:
        return hit[0], hit[1], [], []
    mark = len(cache.added) if cache is not None else 0
    tmark = len(cache.added_texts) if cache is not None else 0
    item = job.run()
    if item is None:
        texts: list[str] = []
        counts = (0, 0, 0, 0)
    else:
        texts, counts = file_json_texts(FileReport(item.facts, item.package, item.version, item.runtime_compiled))
    if cache is not None and tkey is not None and item is not None and not item.facts.error:
        cache.put_text(tkey, (texts, counts))
    added = cache.added[mark:] if cache is not None else []
    added_texts = cache.added_texts[tmark:] if cache is not None else []
    return texts, counts, added, added_texts


def _has_text(cache: ScanCache | None, job: ScanJob) -> bool:
    """Whether the scan cache already holds this file's rendering (then no worker is needed for it)."""
    key = _text_key(cache, job)
    return cache is not None and key is not None and cache.get_text(key) is not None


def _json_fast(paths: list[str]) -> tuple[str, bool]:
    """``--json`` to a pipe: file objects rendered as text, large trees split over two processes.

    Returns the document and whether any file had an error.
    """
    import os

    from cudafit.report.scan import FileReport, file_json_texts, scan_document_text
    from cudafit.targets import open_target
    from cudafit.targets.cache import current
    from cudafit.targets.interface import TreeTarget
    from cudafit.targets.parallel import map_forked, worth_forking

    texts: list[str] = []
    counts: list[tuple[int, int, int, int]] = []
    cache = current()
    for spec in paths:
        target = open_target(spec)
        if not isinstance(target, TreeTarget):
            for item in target.iter_items():
                t, c = file_json_texts(FileReport(item.facts, item.package, item.version, item.runtime_compiled))
                texts.extend(t)
                counts.append(c)
            continue
        jobs = list(target.iter_jobs())
        if cache is not None and cache.path is not None:
            _ = cache.texts  # load before forking: the workers inherit it
        misses = sum(1 for job in jobs if not _has_text(cache, job))
        if worth_forking(misses):
            weights = []
            for job in jobs:
                try:
                    weights.append(os.stat(job.path).st_size)
                except OSError:
                    weights.append(0)
            results = map_forked(_render_job, jobs, weights)
        else:
            results = [_render_job(job) for job in jobs]
        for t, c, added, added_texts in results:
            texts.extend(t)
            counts.append(c)
            if cache is not None:
                cache.merge(added, added_texts)
        for item in target.iter_nested():  # the wheels of a dist/ directory
            t, c = file_json_texts(FileReport(item.facts, item.package, item.version, item.runtime_compiled))
            texts.extend(t)
            counts.append(c)
    return scan_document_text(texts, counts), any(c[3] for c in counts)


def execute(args: argparse.Namespace) -> int:
    """Scan every PATH and render the facts."""
    from cudafit.progress import with_progress
    from cudafit.report.console import dump_json, make_console
    from cudafit.report.scan import FileReport, render_scan_json, render_scan_json_text, render_scan_text
    from cudafit.targets import open_target
    from cudafit.targets.cache import scan_cache

    if args.json and not args.kernels and not sys.stdout.isatty():
        with scan_cache(enabled=not args.no_cache, embedded=args.embedded):
            text, had_errors = _json_fast(args.paths)
        sys.stdout.write(text + "\n")
        return EXIT_FAILS if had_errors else EXIT_OK
    reports: list[FileReport] = []
    with scan_cache(enabled=not args.no_cache, embedded=args.embedded):
        for spec in args.paths:
            for item in with_progress(open_target(spec).iter_items()):
                reports.append(
                    FileReport(
                        facts=item.facts,
                        package=item.package,
                        version=item.version,
                        runtime_compiled=item.runtime_compiled,
                    )
                )
    if args.kernels:
        reports = [_kernels_for(r) for r in reports]
    if args.json:
        if sys.stdout.isatty():
            dump_json(render_scan_json(reports, with_kernels=args.kernels))  # indented for people
        else:
            sys.stdout.write(render_scan_json_text(reports, with_kernels=args.kernels) + "\n")
    else:
        render_scan_text(reports, make_console(), with_kernels=args.kernels, all_files=args.all)
    doc_errors = any(f.error for r in reports for f in (r.facts, *r.facts.members))
    if not reports:
        print("cudafit: nothing to scan", file=sys.stderr)
        return EXIT_ANALYSIS_FAILED
    if doc_errors:
        return EXIT_FAILS
    return EXIT_OK
