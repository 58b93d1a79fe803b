"""Flags and plumbing shared by ``check`` and ``doctor``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable
from typing import Any

from cudafit.cli import EXIT_ANALYSIS_FAILED, EXIT_FAILS, EXIT_OK, EXIT_USAGE

__all__ = ["add_verdict_options", "run_verdicts"]


def add_verdict_options(p: argparse.ArgumentParser) -> None:
    """``--gpu``, ``--driver``, output formats."""
    p.add_argument(
        "--gpu",
        action="append",
        default=[],
        metavar="NAME",
        help="evaluate for this GPU (repeatable): 'RTX 3090', 'h100', 'sm_86', '8.6'",
    )
    p.add_argument("--driver", metavar="VERSION", help="evaluate for this NVIDIA driver (e.g. 570.124.06)")
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
    fmt.add_argument("--json", action="store_true", help="print the cudafit.check/1 JSON document")
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


def _gpus_and_machine(args: argparse.Namespace) -> tuple[list[Any], Any, dict[str, Any] | None, list[str]]:
    """(target GPUs, driver, machine summary, errors)."""
    from cudafit.model import parse_driver_version
    from cudafit.probe import declared_inventory, inventory_from_file, probe_machine
    from cudafit.rules.engine import TargetGpu

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
                gpus.append(TargetGpu(d.name, d.compute_capability, d.cuda_index))
        driver = driver or inv.driver_version
    if args.gpu:
        declared, errs = declared_inventory(args.gpu)
        errors.extend(e["message"] for e in errs)
        for d in declared.devices:
            if d.compute_capability is not None:
                gpus.append(TargetGpu(d.name, d.compute_capability, None))
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
) -> int:
    """Evaluate, render, and return the documented exit code."""
    from dataclasses import replace

    from cudafit.analysis import analyze
    from cudafit.report.check import check_document, render_html, render_markdown, render_text
    from cudafit.report.console import dump_json, make_console
    from cudafit.report.progress import with_progress

    gpus, driver, machine, errors = _gpus_and_machine(args)
    if errors:
        for e in errors:
            print(f"cudafit: {e}", file=sys.stderr)
        return EXIT_USAGE
    jit_allowed = os.environ.get("CUDA_DISABLE_PTX_JIT", "0") in ("", "0")
    from cudafit.targets.cache import scan_cache

    with scan_cache(enabled=not args.no_cache, embedded=args.embedded):
        kernels = bool(getattr(args, "kernels", False))
        analysis = analyze(with_progress(items), gpus, driver=driver, jit_allowed=jit_allowed, kernels=kernels)
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
    if args.json:
        dump_json(doc)
    elif args.markdown:
        sys.stdout.write(render_markdown(doc))
    else:
        render_text(doc, make_console(), wide=args.wide)
    if args.html:
        with open(args.html, "w", encoding="utf-8") as fh:
            fh.write(render_html(doc))
    unreadable = any(t["unreadable"] for t in doc["targets"])
    if any(t["status"] in ("fails", "partial") for t in doc["targets"]) and gpus:
        return EXIT_FAILS
    if unreadable and not doc["targets"]:
        return EXIT_ANALYSIS_FAILED
    return EXIT_OK
