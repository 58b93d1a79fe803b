"""``cudafit doctor``: this machine's GPUs x this environment's CUDA packages, and what to do.

On a machine without a GPU it still reports which compute capabilities each installed CUDA
package covers, and says that no GPU was found; ``--gpu NAME`` evaluates for GPUs that are not
here, ``--driver VERSION`` for another driver.  ``--python PATH`` checks another interpreter's
environment, resolved from its files (:func:`cudafit.targets.env.resolve_environment`); the notes
say which site-packages directories were scanned and why.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from cudafit.cli import EXIT_USAGE
from cudafit.cli.common import Subparsers
from cudafit.cli.options import add_verdict_options, run_verdicts

if TYPE_CHECKING:
    from cudafit.model import JsonDict
    from cudafit.targets.interface import ScanItem

__all__ = ["configure_parser", "execute"]


def configure_parser(sub: Subparsers) -> None:
    """Register ``doctor``."""
    p = sub.add_parser(
        "doctor",
        help="check this environment's CUDA packages against this machine's GPUs (the main job)",
        description="Will the CUDA kernels installed here run on this machine's GPUs? Reads binaries only.",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--python",
        metavar="PATH",
        help="check the environment of this interpreter (ENV/bin/python) or environment directory: venv, conda, "
        "installation; read from files, the interpreter is never run",
    )
    where.add_argument("--site-packages", metavar="DIR", action="append", help="check this site-packages directory")
    add_verdict_options(p)
    p.add_argument(
        "--verify",
        action="store_true",
        help="then ask this machine's driver to load every module on each local GPU, beside the prediction "
        "(cudafit verify; creates a CUDA context in worker processes)",
    )
    from cudafit.cli.verify import add_verify_options

    add_verify_options(p, prefix="verify-")
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    """Run ``doctor``."""
    from cudafit.errors import EnvironmentResolutionError
    from cudafit.targets.env import EnvironmentTarget

    try:
        target = EnvironmentTarget(args.site_packages) if args.site_packages else EnvironmentTarget.current(args.python)
    except EnvironmentResolutionError as err:  # --python PATH that is not an environment: a usage error
        print(f"cudafit: {err.message}", file=sys.stderr)
        return EXIT_USAGE
    items: Iterable[ScanItem] = target.iter_items()
    missing = [d for d in args.site_packages or () if not os.path.isdir(d)]
    if missing:  # a typo in a CI gate's path must not pass on nothing: reported, and exit 3 when nothing else
        from cudafit.targets.interface import error_item

        # "DIR/": loose files are grouped by their folder, so the row is named DIR, not DIR's parent
        gone = (error_item(os.path.join(d, ""), "no such directory", "io-error") for d in missing)
        items = itertools.chain(gone, items)
    verify = None
    if args.verify:
        from cudafit.cli.verify import verification_document

        def verify() -> JsonDict:  # the same files again: the scan cache makes the second read cheap
            return verification_document(args, target.iter_items(), notes=target.notes())

    return run_verdicts(args, items, notes=target.notes(), sites=target.sites, verify=verify)
