"""``cudafit gpus [NAME...]``: resolve GPU names, or show this machine's GPUs.

Without names: the probe inventory (NVML, then nvidia-smi; ``--deep`` adds the CUDA driver API).
On a machine without a driver it says so and exits 0.  With names: each name's compute
capability, or an error that lists candidates (exit 1).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from cudafit.cli import EXIT_FAILS, EXIT_OK
from cudafit.cli.common import Subparsers, output_format

if TYPE_CHECKING:
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
    """Each name's resolution (or its error) as the resolve document, and the exit code."""
    from cudafit.errors import UnknownGpuError
    from cudafit.report.gpus import resolve_document
    from cudafit.rules.gpus import GpuResolution, resolve_gpu

    answers: list[tuple[str, GpuResolution | UnknownGpuError]] = []
    for q in names:
        try:
            answers.append((q, resolve_gpu(q)))
        except UnknownGpuError as err:
            answers.append((q, err))
    doc = resolve_document(answers)
    return doc, (EXIT_FAILS if doc["errors"] else EXIT_OK)


def execute(args: argparse.Namespace) -> int:
    """Run ``gpus``."""
    from cudafit.report.formats import render
    from cudafit.report.gpus import machine_renderers, resolve_renderers

    if args.names:
        doc, code = _resolve(args.names)
        render(output_format(args), doc, resolve_renderers())
        return code
    from cudafit.probe import inventory_from_file, inventory_to_dict, probe_machine

    inv = inventory_from_file(args.inventory) if args.inventory else probe_machine(deep=args.deep, toolchains=True)
    render(output_format(args), inventory_to_dict(inv), machine_renderers())
    return EXIT_OK
