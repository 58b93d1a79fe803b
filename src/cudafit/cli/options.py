"""Flags and plumbing shared by ``check`` and ``doctor``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from cudafit.cli import EXIT_ANALYSIS_FAILED, EXIT_FAILS, EXIT_OK, EXIT_USAGE

__all__ = [
    "add_pip_options",
    "add_verdict_options",
    "driver_arg",
    "nothing_readable",
    "pip_args",
    "run_verdicts",
    "unwritable_outputs",
    "write_report",
]


def unwritable_outputs(*paths: str | None) -> str | None:
    """The first report path that cannot be written (checked before the work, so a gate never fails
    after a passing run for want of a directory), as a message; ``None`` when all can be."""
    for path in paths:
        if not path:
            continue
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            return f"cannot write {path}: no such directory {folder}"
        if os.path.isdir(path) or not os.access(path if os.path.exists(path) else folder, os.W_OK):
            return f"cannot write {path}: not a writable file"
    return None


def write_report(path: str, text: str) -> bool:
    """Write a report file; on failure (the folder vanished or filled up during the run: the paths were
    checked before it) say so in one line and return ``False``, so the caller exits non-zero, never 0 and
    never with an "internal error"."""
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as err:
        print(f"cudafit: cannot write {path}: {err.strerror or err}", file=sys.stderr)
        return False
    return True


def driver_arg(text: str) -> str:
    """``--driver VERSION`` checked while the flags are parsed: ``--driver abc`` is a usage error (exit 2),
    not a failure after the scan."""
    from cudafit.errors import ValueParseError
    from cudafit.model import parse_driver_version

    try:
        parse_driver_version(text)
    except ValueParseError as err:
        raise argparse.ArgumentTypeError(err.message) from None
    return text


def nothing_readable(targets: Iterable[dict[str, Any]]) -> bool:
    """Whether every target's files were unreadable (exit code 3: nothing could be analysed)."""
    rows = list(targets)
    return bool(rows) and all(t["unreadable"] and len(t["unreadable"]) >= t["files"] for t in rows)


def add_pip_options(p: argparse.ArgumentParser) -> None:
    """How requirement targets are downloaded (``check``, ``verify``)."""
    p.add_argument(
        "--index-url", help="pip index for requirement targets (e.g. https://download.pytorch.org/whl/cu128)"
    )
    p.add_argument("--extra-index-url", action="append", default=[], help="additional pip index (repeatable)")
    p.add_argument("--python-version", help="target Python for downloads (pip --python-version)")
    p.add_argument("--platform", action="append", default=[], help="target platform tag for downloads (repeatable)")


def pip_args(args: argparse.Namespace) -> list[str]:
    """The ``pip download`` arguments of :func:`add_pip_options`."""
    out: list[str] = []
    if args.index_url:
        out += ["--index-url", args.index_url]
    for u in args.extra_index_url:
        out += ["--extra-index-url", u]
    if args.python_version:
        out += ["--python-version", args.python_version]
    for plat in args.platform:
        out += ["--platform", plat]
    return out


def add_verdict_options(p: argparse.ArgumentParser) -> None:
    """``--gpu``, ``--driver``, output formats, ``--fleet``."""
    p.add_argument(
        "--gpu",
        action="append",
        default=[],
        metavar="NAME",
        help="evaluate for this GPU (repeatable): 'RTX 3090', 'h100', 'sm_86', '8.6' (a name or compute "
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
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument(
        "--json", action="store_true", help="print the cudafit.check/1 JSON document (--fleet: cudafit.fleet-check/1)"
    )
    fmt.add_argument("--markdown", action="store_true", help="print a Markdown report (paste into an issue)")
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


def _gpus_and_machine(args: argparse.Namespace) -> tuple[list[Any], Any, dict[str, Any] | None, list[str]]:
    """(target GPUs, driver, machine summary, errors)."""
    from cudafit.model import Gpu, parse_driver_version
    from cudafit.probe import declared_inventory, inventory_from_file, probe_machine

    errors: list[str] = []
    gpus: list[Any] = []
    machine: dict[str, Any] | None = None
    driver = parse_driver_version(args.driver) if args.driver else None
    if args.inventory or not args.no_probe:
        inv = inventory_from_file(args.inventory) if args.inventory else probe_machine()
        machine = {
            "status": inv.status,
            "source": inv.source,
            "driver_version": str(inv.driver_version) if inv.driver_version else None,
            "problems": list(inv.problems),
            "ordering_estimated": inv.ordering_estimated,
        }
        for d in inv.cuda_devices:
            if d.compute_capability is not None:
                gpus.append(Gpu(d.name, d.compute_capability, d.cuda_index))
        driver = driver or inv.driver_version
    if args.gpu:
        declared, errs = declared_inventory(args.gpu)
        errors.extend(e["message"] for e in errs)
        for d in declared.devices:
            if d.compute_capability is not None:
                gpus.append(Gpu(d.name, d.compute_capability, None))
    return gpus, driver, machine, errors


def _current_sites() -> list[str]:
    from cudafit.targets.env import site_packages_of

    return site_packages_of()


def run_verdicts(
    args: argparse.Namespace,
    items: Iterable[Any],
    *,
    notes: Iterable[str] = (),
    sites: Iterable[str] | None = None,
    verify: Callable[[], dict[str, Any]] | None = None,
    extend: Callable[[dict[str, Any], Sequence[Any], Any], None] | None = None,
) -> int:
    """Evaluate, render, and return the documented exit code.

    ``verify`` (``doctor --verify``) runs after the static verdicts and returns a ``cudafit.verify/1``
    document: it is rendered after the matrix (``--json``: under ``"verify"``), and the exit code is the
    worse of the two (3 when the driver could not be asked).  ``extend`` adds to the document before it
    is rendered and the exit code is read from it (``check``: what a requirement brings in).
    """
    from dataclasses import replace

    problem = unwritable_outputs(getattr(args, "html", None))
    if problem:
        print(f"cudafit: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.nodes_json and not args.fleet:
        args.fleet = "k8s"
    if args.fleet:
        from cudafit.cli.fleet import run_fleet_verdicts

        return run_fleet_verdicts(args, items)

    from cudafit.analysis import analyze
    from cudafit.progress import with_progress
    from cudafit.report.check import check_document, render_html, render_markdown, render_text
    from cudafit.report.console import dump_json, make_console

    gpus, driver, machine, errors = _gpus_and_machine(args)
    if errors:
        for e in errors:
            print(f"cudafit: {e}", file=sys.stderr)
        return EXIT_USAGE
    jit_allowed = os.environ.get("CUDA_DISABLE_PTX_JIT", "0") in ("", "0")
    from cudafit.targets.cache import scan_cache

    with scan_cache(enabled=not args.no_cache, embedded=args.embedded):
        kernels = bool(getattr(args, "kernels", False))
        wiring: dict[str, Any] = {"environ": dict(os.environ), "sites": list(sites)} if sites is not None else {}
        analysis = analyze(
            with_progress(items), gpus, driver=driver, jit_allowed=jit_allowed, kernels=kernels, **wiring
        )
    extra = list(notes)
    if not jit_allowed:
        extra.append("CUDA_DISABLE_PTX_JIT is set: PTX is not counted as usable")
    if machine and machine.get("ordering_estimated"):
        extra.append("CUDA device numbering is estimated (FASTEST_FIRST); see cudafit gpus")
    analysis = replace(analysis, notes=tuple(extra))
    if gpus and any(p.runtime_compiled in ("triton", "nvcc-jit") for p in analysis.packages):
        from cudafit.probe.toolchains import iter_toolchains

        site_list = list(sites) if sites is not None else _current_sites()
        analysis = replace(analysis, toolchains=tuple(iter_toolchains(site_list, os.environ)))
    doc = check_document(analysis, machine=machine, kernels=kernels)
    if extend is not None:
        extend(doc, gpus, driver)
    vdoc = verify() if verify is not None else None
    if vdoc is not None and args.json:
        doc["verify"] = vdoc
    if args.json:
        dump_json(doc)
    elif args.markdown:
        sys.stdout.write(render_markdown(doc))
    else:
        render_text(doc, make_console(), wide=args.wide)
    if vdoc is not None and not args.json:
        from cudafit.cli.verify import render as render_verify

        sys.stdout.write("\n")
        sys.stdout.flush()
        render_verify(vdoc, args)
    written = write_report(args.html, render_html(doc)) if args.html else True
    rc = EXIT_OK
    unreadable = any(t["unreadable"] for t in doc["targets"])
    if any(t["status"] in ("fails", "partial") for t in doc["targets"]) and gpus:
        rc = EXIT_FAILS
    elif unreadable and nothing_readable(doc["targets"]):
        rc = EXIT_ANALYSIS_FAILED
    if vdoc is not None:
        from cudafit.report.verify import verify_exit_code

        rc = max(rc, verify_exit_code(vdoc))
    return rc if written else (rc or EXIT_ANALYSIS_FAILED)
