"""``cudafit check TARGET...``: verdicts for any target (path, wheel, pip requirement, image, .pt2).

``cudafit check "fbgemm-gpu==1.9.0" --gpu "1080 Ti"`` downloads the wheel (no dependencies, no
build) and says whether it carries code for that GPU, before anyone installs it.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

from cudafit.cli.options import add_verdict_options, run_verdicts

__all__ = ["configure_parser", "execute"]


def configure_parser(sub: Any) -> None:
    """Register ``check``."""
    p = sub.add_parser(
        "check",
        help="verdicts for files, directories, wheels, pip requirements or .pt2 packages",
        description=(
            "Will this wheel, library or package run on these GPUs? (requirements are downloaded, not installed)"
        ),
    )
    p.add_argument("targets", nargs="+", metavar="TARGET")
    p.add_argument(
        "--index-url", help="pip index for requirement targets (e.g. https://download.pytorch.org/whl/cu128)"
    )
    p.add_argument("--extra-index-url", action="append", default=[], help="additional pip index (repeatable)")
    p.add_argument("--python-version", help="target Python for downloads (pip --python-version)")
    p.add_argument("--platform", action="append", default=[], help="target platform tag for downloads (repeatable)")
    add_verdict_options(p)
    p.set_defaults(func=execute)


def _pip_args(args: argparse.Namespace) -> list[str]:
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


def execute(args: argparse.Namespace) -> int:
    """Run ``check``."""
    from cudafit.targets import open_target

    def items() -> Iterator[Any]:
        for spec in args.targets:
            yield from open_target(spec, pip_args=_pip_args(args)).iter_items()

    return run_verdicts(args, items())
