"""Flags and plumbing shared by ``check`` and ``doctor``: their options, and :func:`run_verdicts`, which wires
the flags to :func:`cudafit.analysis.run_check` and renders the result."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from cudafit.cli import EXIT_ANALYSIS_FAILED, EXIT_FAILS, EXIT_OK, EXIT_USAGE
from cudafit.cli.common import (
    add_format_options,
    add_gpu_option,
    driver_arg,
    nothing_readable,
    output_format,
    resolve_gpus,
    unwritable_outputs,
    write_report,
)
from cudafit.report.formats import OutputFormat

if TYPE_CHECKING:
    from cudafit.model import DriverVersion, Gpu, JsonDict
    from cudafit.targets.interface import ScanItem

__all__ = ["add_verdict_options", "run_verdicts"]


def add_verdict_options(p: argparse.ArgumentParser) -> None:
    """``--gpu``, ``--driver``, output formats, ``--fleet``."""
    add_gpu_option(
        p,
        "evaluate for this GPU (repeatable): 'RTX 3090', 'h100', 'sm_86', '8.6' (a name or compute "
        "capability, present or not; verify --gpu takes the ordinal of a GPU that is here)",
    )
    p.add_argument(
        "--driver", metavar="VERSION", type=driver_arg, help="evaluate for this NVIDIA driver (e.g. 570.124.06)"
    )
    p.add_argument("--no-probe", action="store_true", help="do not look for this machine's GPUs")
    p.add_argument(
        "--inventory",
        metavar="FILE",
        help="evaluate for the GPUs and driver recorded on another machine (cudafit gpus --json > FILE)",
    )
    p.add_argument("--no-cache", action="store_true", help="do not use or update the scan cache")
    p.add_argument(
        "--embedded", action="store_true", help="also judge fatbins libraries embed to load themselves (slower)"
    )
    add_format_options(
        p,
        "print the cudafit.check/1 JSON document (--fleet: cudafit.fleet-check/1)",
        "print a Markdown report (paste into an issue)",
    )
    p.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report")
    p.add_argument(
        "--kernels",
        action="store_true",
        help="list, per GPU, the kernels of every module without code for it (holes first, then code "
        "specialised for other GPUs), grouped by module with the archs it has (decompresses those modules)",
    )
    p.add_argument(
        "--wide",
        action="store_true",
        help="always show the coverage columns (native/JIT/partial on CC), even past the terminal's width",
    )
    from cudafit.cli.fleet import add_fleet_source_options

    add_fleet_source_options(p)


def run_verdicts(
    args: argparse.Namespace,
    items: Iterable[ScanItem],
    *,
    notes: Iterable[str] = (),
    sites: Iterable[str] | None = None,
    verify: Callable[[], JsonDict] | None = None,
    extend: Callable[[JsonDict, Sequence[Gpu], DriverVersion | None], None] | None = None,
) -> int:
    """Resolve the GPUs, judge (:func:`cudafit.analysis.run_check`), render, and return the documented exit code.

    ``verify`` (``doctor --verify``) runs after the static verdicts and returns a ``cudafit.verify/1``
    document: it is rendered after the matrix (``--json``: under ``"verify"``), and the exit code is the
    worse of the two (3 when the driver could not be asked).  ``extend`` adds to the document before it
    is rendered and the exit code is read from it (``check``: what a requirement brings in).
    """
    from cudafit.analysis import CheckRequest, run_check
    from cudafit.report.check import check_document

    problem = unwritable_outputs(args.html)
    if problem:
        print(f"cudafit: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.nodes_json and not args.fleet:
        args.fleet = "k8s"
    if args.fleet:
        from cudafit.cli.fleet import run_fleet_verdicts

        return run_fleet_verdicts(args, items)
    choice = resolve_gpus(args.gpu, driver=args.driver, inventory=args.inventory, probe=not args.no_probe)
    if choice.errors:
        for e in choice.errors:
            print(f"cudafit: {e}", file=sys.stderr)
        return EXIT_USAGE
    request = CheckRequest(
        gpus=choice.gpus,
        driver=choice.driver,
        machine=choice.machine,
        environ=dict(os.environ),
        sites=tuple(sites) if sites is not None else None,
        kernels=args.kernels,
        use_cache=not args.no_cache,
        embedded=args.embedded,
    )
    doc = check_document(run_check(items, request, notes), kernels=args.kernels)
    if extend is not None:
        extend(doc, choice.gpus, choice.driver)
    return _render(args, doc, verify() if verify is not None else None)


def _render(args: argparse.Namespace, doc: JsonDict, vdoc: JsonDict | None) -> int:
    """Write the document (and ``doctor --verify``'s) in the format asked, the HTML file, and the exit code."""
    from cudafit.report.check import check_renderers, render_html
    from cudafit.report.formats import render

    fmt = output_format(args)
    if vdoc is not None and fmt is OutputFormat.JSON:
        doc["verify"] = vdoc
    render(fmt, doc, check_renderers(wide=args.wide))
    if vdoc is not None and fmt is not OutputFormat.JSON:
        from cudafit.cli.verify import render as render_verify

        sys.stdout.write("\n")
        sys.stdout.flush()
        render_verify(vdoc, args)
    written = write_report(args.html, render_html(doc)) if args.html else True
    rc = EXIT_OK
    if any(t["status"] in ("fails", "partial") for t in doc["targets"]) and doc["gpus"]:
        rc = EXIT_FAILS
    elif any(t["unreadable"] for t in doc["targets"]) and nothing_readable(doc["targets"]):
        rc = EXIT_ANALYSIS_FAILED
    if vdoc is not None:
        from cudafit.report.verify import verify_exit_code

        rc = max(rc, verify_exit_code(vdoc))
    return rc if written else (rc or EXIT_ANALYSIS_FAILED)
