"""``cudafit doctor``: this machine's GPUs x this environment's CUDA packages, and what to do.

On a machine without a GPU it still reports which compute capabilities each installed CUDA
package covers, and says that no GPU was found; ``--gpu NAME`` evaluates for GPUs that are not
here, ``--driver VERSION`` for another driver.
"""

from __future__ import annotations

import argparse
from typing import Any

from cudafit.cli.options import add_verdict_options, run_verdicts

__all__ = ["configure_parser", "execute"]


def configure_parser(sub: Any) -> None:
    """Register ``doctor``."""
    p = sub.add_parser(
        "doctor",
        help="check this environment's CUDA packages against this machine's GPUs (the main job)",
        description="Will the CUDA kernels installed here run on this machine's GPUs? Reads binaries only.",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument("--python", metavar="PATH", help="check the environment of this interpreter")
    where.add_argument("--site-packages", metavar="DIR", action="append", help="check this site-packages directory")
    add_verdict_options(p)
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    """Run ``doctor``."""
    from cudafit.targets.env import EnvironmentTarget

    target = EnvironmentTarget(args.site_packages) if args.site_packages else EnvironmentTarget.current(args.python)
    notes = [f"scanned {target.describe()}"]
    return run_verdicts(args, target.iter_items(), notes=notes, sites=target.sites)
