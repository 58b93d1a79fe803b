"""``cudafit explain [TEXT | - | --file LOG]``: what a CUDA error message means here, and the fix.

The text is classified (:mod:`cudafit.explain`), then grounded on this machine's GPUs, driver
and the installed packages the text names, or on GPUs/driver given with ``--gpu``/``--driver``
or recorded with ``--inventory``.  Exit codes: 0 findings were produced (``unknown`` included),
2 usage (no text), 3 the input could not be read.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, BinaryIO

from cudafit.cli import EXIT_ANALYSIS_FAILED, EXIT_OK, EXIT_USAGE
from cudafit.cli.common import Subparsers, add_format_options, add_gpu_option, output_format

if TYPE_CHECKING:
    from cudafit.explain.context import Context

__all__ = ["configure_parser", "execute"]

# A progress bar for logs at least this large, when standard error is a terminal.
_PROGRESS_BYTES = 8 * 1024 * 1024


def configure_parser(sub: Subparsers) -> None:
    """Register ``explain``."""
    p = sub.add_parser(
        "explain",
        help="explain a CUDA error message or log (no kernel image, FATAL kernel ... built for sm75, ...)",
        description=(
            "Classify CUDA failure messages, ground them on this machine, and give the cause and fixes. "
            "Exit codes: 0 findings produced (also 'unknown'), 2 usage, 3 the input could not be read."
        ),
    )
    p.add_argument("text", nargs="?", help="the message; '-' reads standard input")
    p.add_argument(
        "--file",
        metavar="LOG",
        help="read the message from a log file of any size (streamed, tail first; a progress bar on a terminal)",
    )
    p.add_argument(
        "--catalogue",
        action="store_true",
        help="list the catalogue: each category's patterns and the source file (or NVIDIA document) that emits them",
    )
    add_gpu_option(p, "ground on this GPU (repeatable)")
    p.add_argument("--driver", metavar="VERSION", help="ground on this NVIDIA driver (e.g. 535.104.05)")
    p.add_argument("--inventory", metavar="FILE", help="ground on GPUs and driver recorded by cudafit gpus --json")
    p.add_argument("--no-probe", action="store_true", help="do not look at this machine's GPUs and packages")
    p.add_argument(
        "--site-packages",
        metavar="DIR",
        action="append",
        help="look up the failing kernel in this site-packages (default: this environment, unless --no-probe)",
    )
    p.add_argument("--path", metavar="PATH", help="look up the failing kernel in this file, directory or wheel")
    add_format_options(p, "print the cudafit.explain/1 JSON document", "print Markdown (paste into an issue)")
    p.set_defaults(func=execute)


def _read_stream(fh: BinaryIO, name: str) -> str:
    """The excerpt of a log to classify (:func:`cudafit.explain.logread.read_log`), with progress on a terminal
    (the shared status line of :mod:`cudafit.progress`) for logs of :data:`_PROGRESS_BYTES` or more."""
    from cudafit.explain.logread import read_log
    from cudafit.progress import human_bytes, progress

    try:
        size = os.fstat(fh.fileno()).st_size if fh.seekable() else 0
    except (OSError, ValueError, AttributeError):
        size = 0
    if size < _PROGRESS_BYTES:
        return read_log(fh).text
    with progress(f"explain: reading {name}") as bar:
        total = human_bytes(size)
        return read_log(fh, progress=lambda done: bar.update(f"{human_bytes(done)} of {total}")).text


def _read(args: argparse.Namespace) -> str | None:
    if args.file:
        with open(args.file, "rb") as fh:
            return _read_stream(fh, os.path.basename(args.file))
    if args.text == "-" or (args.text is None and not sys.stdin.isatty()):
        binary = getattr(sys.stdin, "buffer", None)
        if binary is None:  # a text stream without bytes underneath (embedding, tests)
            import io

            binary = io.BytesIO(sys.stdin.read().encode("utf-8", errors="replace"))
        return _read_stream(binary, "standard input")
    return str(args.text) if args.text is not None else None


def _print_catalogue(as_json: bool) -> int:
    """``--catalogue``: every pattern with the place its message is written (the citations of the catalogue)."""
    from cudafit.explain.catalogue import iter_sources
    from cudafit.report.explain import render_catalogue

    render_catalogue(iter_sources(), as_json=as_json)
    return EXIT_OK


def _context(args: argparse.Namespace) -> tuple[Context, tuple[str, ...]]:
    """(Context, usage errors): the GPUs of ``--gpu`` instead of this machine's (``--inventory``, else probed
    unless ``--no-probe``), and the driver of ``--driver``, else the machine's."""
    from cudafit.cli.common import MachineUse, resolve_gpus
    from cudafit.explain.context import Context

    choice = resolve_gpus(
        args.gpu, driver=args.driver, inventory=args.inventory, probe=not args.no_probe, use=MachineUse.INSTEAD
    )
    return Context(gpus=choice.gpus, driver=choice.driver), choice.errors


def execute(args: argparse.Namespace) -> int:
    """Run ``explain``."""
    from cudafit.explain.lookup import Lookup, explain_here
    from cudafit.report.explain import explain_document, explain_renderers
    from cudafit.report.formats import render

    if args.catalogue:
        return _print_catalogue(args.json)
    if args.file and args.text is not None:
        print("cudafit: give the message as TEXT, '-' or --file LOG, not several", file=sys.stderr)
        return EXIT_USAGE
    try:
        text = _read(args)
    except OSError as err:
        print(f"cudafit: cannot read {args.file or 'standard input'}: {err.strerror or err}", file=sys.stderr)
        return EXIT_ANALYSIS_FAILED
    if not text or not text.strip():
        print("cudafit: give the error message as TEXT, '-' (stdin) or --file LOG", file=sys.stderr)
        return EXIT_USAGE
    if args.inventory and not os.path.isfile(args.inventory):
        print(f"cudafit: no such inventory file: {args.inventory}", file=sys.stderr)
        return EXIT_USAGE
    if args.path and not os.path.exists(args.path):
        print(f"cudafit: no such file or directory to look up kernels in: {args.path}", file=sys.stderr)
        return EXIT_USAGE
    context, errors = _context(args)
    if errors:
        for e in errors:
            print(f"cudafit: {e}", file=sys.stderr)
        return EXIT_USAGE
    # Where to look: --path or --site-packages when given, else this environment unless told not to probe.
    look = bool(args.site_packages or args.path or not (args.no_probe or args.inventory))
    lookup = Lookup(tuple(args.site_packages) if args.site_packages else None, args.path) if look else None
    findings = explain_here(text, context, lookup, os.environ)
    render(output_format(args), explain_document(findings), explain_renderers())
    return EXIT_OK
