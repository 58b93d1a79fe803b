"""``cudafit check TARGET...``: verdicts for any target (path, wheel, pip requirement, image, .pt2).

``cudafit check "fbgemm-gpu==1.9.0" --gpu "1080 Ti"`` downloads the wheel (no dependencies, no
build) and says whether it carries code for that GPU, before anyone installs it.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from cudafit.cli.common import Subparsers, add_pip_options, pip_args
from cudafit.cli.options import add_verdict_options, run_verdicts

if TYPE_CHECKING:
    from cudafit.model import DriverVersion, Gpu, JsonDict
    from cudafit.targets.interface import ScanItem, Target

__all__ = ["configure_parser", "execute"]


def configure_parser(sub: Subparsers) -> None:
    """Register ``check``."""
    p = sub.add_parser(
        "check",
        help="verdicts for files, directories, wheels, pip requirements or .pt2 packages",
        description=(
            "Will this wheel, library or package run on these GPUs? (requirements are downloaded, not installed)"
        ),
    )
    p.add_argument(
        "targets",
        nargs="+",
        metavar="TARGET",
        help="what to judge (repeatable): a wheel (x.whl); a directory (its binaries, and the wheels directly in "
        "it, e.g. dist/); a site-packages directory (its installed distributions); a file (.so, .a, .o, .cubin, "
        ".fatbin, .ptx, an executable); an AOTInductor package (.pt2); a container image (a `docker save` "
        ".tar or an OCI layout directory); or a pip requirement ('fbgemm-gpu==1.9.0', 'xformers': downloaded "
        "without dependencies, never installed; unpinned, the version pip resolves now)",
    )
    add_pip_options(p)
    p.add_argument(
        "--no-deps",
        action="store_true",
        help="judge a requirement's own wheel only (by default every distribution with device code that "
        "pip would install for it is judged too, each as its own row, read by HTTP ranges)",
    )
    add_verdict_options(p)
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    """Run ``check``."""
    from cudafit.targets import open_target

    opened: list[Target] = []

    def items() -> Iterator[ScanItem]:
        for spec in args.targets:
            target = open_target(spec, pip_args=pip_args(args))
            opened.append(target)
            yield from target.iter_items()

    def extend(doc: JsonDict, gpus: Sequence[Gpu], driver: DriverVersion | None) -> None:
        """What each requirement brings in: pip's install set, judged row by row (not with --no-deps)."""
        from cudafit.find.deps import attach_dependencies, judge_dependencies, wheel_pins_note
        from cudafit.targets.pip import PipRequirementTarget
        from cudafit.targets.wheel import WheelTarget

        for t in opened:
            if type(t) is WheelTarget and (note := wheel_pins_note(t.path)):
                doc["notes"].append(note)
            if isinstance(t, PipRequirementTarget) and not args.no_deps and t.resolved:
                rows, error = judge_dependencies(t.requirement, t.pip_args, gpus, driver, use_cache=not args.no_cache)
                attach_dependencies(doc, t.requirement, rows, error)

    # read after the analysis consumed the items: what each unpinned requirement resolved to
    notes = (n for t in opened if (n := getattr(t, "note", lambda: None)()))
    return run_verdicts(args, items(), notes=notes, extend=extend)
