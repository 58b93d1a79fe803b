"""``cudafit verify [TARGET...]``: ask this machine's driver to load every module, beside the prediction.

The one command that creates a CUDA context, and only in its worker processes (one per GPU; see
:mod:`cudafit.verify.runner`).  Targets are those of ``check``; without one, this environment (as
``doctor``).  Exit codes: 0 every loaded module agrees with the prediction, 1 some disagree or got no
answer (timeout, crash), 2 usage, 3 could not verify (no driver, no GPU).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from cudafit.cli import EXIT_USAGE
from cudafit.cli.common import Subparsers, add_format_options, add_pip_options, output_format, pip_args

if TYPE_CHECKING:
    from cudafit.model import JsonDict
    from cudafit.targets.interface import ScanItem

__all__ = ["add_verify_options", "configure_parser", "execute", "verification_document"]


def _ordinal(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        msg = f"{text!r}: verify loads modules on this machine's GPUs; give a CUDA device index (0, 1, ...)"
        raise argparse.ArgumentTypeError(msg) from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a CUDA device index is 0 or more")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("the time limit must be positive")
    return value


def add_verify_options(p: argparse.ArgumentParser, *, prefix: str = "") -> None:
    """``--jit`` and ``--timeout`` (``doctor`` adds them as ``--verify-jit``/``--verify-timeout``)."""
    p.add_argument(
        f"--{prefix}jit",
        action="store_true",
        dest="verify_jit",
        help="also load modules whose only code for a GPU is PTX, and report the JIT time each costs (can take "
        "minutes on large libraries)",
    )
    p.add_argument(
        f"--{prefix}timeout",
        type=_seconds,
        default=60.0,
        dest="verify_timeout",
        metavar="SECONDS",
        help="time limit per module and GPU (default 60): a worker that does not answer is killed and restarted",
    )


def configure_parser(sub: Subparsers) -> None:
    """Register ``verify``."""
    p = sub.add_parser(
        "verify",
        help="ask this machine's CUDA driver to load every module, beside cudafit's prediction (creates a "
        "CUDA context in worker processes)",
        description="Ground truth: load each module the scan finds on each local GPU (cuModuleLoadDataEx, one "
        "worker process per GPU) and compare the driver's answer with cudafit's prediction.",
    )
    p.add_argument("targets", nargs="*", metavar="TARGET", help="as for check; default: this environment")
    p.add_argument(
        "--gpu",
        action="append",
        default=[],
        type=_ordinal,
        metavar="INDEX",
        help="load on the CUDA device with this ordinal, 0, 1, ... (repeatable; default: every GPU the driver "
        "lists). An index, not a name as for check/doctor --gpu NAME: verify runs on the GPUs that are here",
    )
    add_verify_options(p)
    p.add_argument("--embedded", action="store_true", help="also load the fatbins libraries embed to load themselves")
    p.add_argument("--no-cache", action="store_true", help="do not use or update the scan cache")
    p.add_argument("--modules", action="store_true", help="list every module, not only disagreements and counts")
    add_format_options(p, "print the cudafit.verify/1 JSON document", "print a Markdown report (paste into an issue)")
    add_pip_options(p)
    p.set_defaults(func=execute)


def verification_document(
    args: argparse.Namespace, items: Iterable[ScanItem], *, ordinals: Sequence[int] = (), notes: Iterable[str] = ()
) -> JsonDict:
    """Verify (:func:`cudafit.verify.here.verify_here`) and return its ``cudafit.verify/1`` document (an
    error document when the driver cannot be asked)."""
    from cudafit.report.verify import error_document, verify_document
    from cudafit.verify.here import VerifyFailure, verify_here

    jit = bool(getattr(args, "verify_jit", False))
    timeout = float(getattr(args, "verify_timeout", 60.0))
    result = verify_here(
        items,
        ordinals=ordinals,
        notes=notes,
        jit=jit,
        timeout=timeout,
        use_cache=not getattr(args, "no_cache", False),
        embedded=getattr(args, "embedded", False),
    )
    if isinstance(result, VerifyFailure):
        # a bad ordinal is a usage error, reported before any time limit applies: the default stands
        return error_document(
            result.kind, result.message, jit=jit, timeout=timeout if result.kind != "bad-device" else 60.0
        )
    return verify_document(result)


def render(doc: JsonDict, args: argparse.Namespace) -> None:
    """Write the document as JSON, Markdown or text (errors to stderr unless --json)."""
    from cudafit.report.formats import OutputFormat, render
    from cudafit.report.verify import verify_renderers

    fmt = output_format(args)
    if doc["error"] and fmt is not OutputFormat.JSON:
        print(f"cudafit verify: could not verify: {doc['error']['message']}", file=sys.stderr)
        return
    render(fmt, doc, verify_renderers(modules=bool(getattr(args, "modules", False))))


def execute(args: argparse.Namespace) -> int:
    """Run ``verify``."""
    from cudafit.report.verify import verify_exit_code

    notes: list[str] = []
    if args.targets:
        from cudafit.targets import open_target

        def items() -> Iterable[ScanItem]:
            for spec in args.targets:
                yield from open_target(spec, pip_args=pip_args(args)).iter_items()

        source = items()
    else:
        from cudafit.errors import EnvironmentResolutionError
        from cudafit.targets.env import EnvironmentTarget

        try:
            target = EnvironmentTarget.current(None)
        except EnvironmentResolutionError as err:
            print(f"cudafit: {err.message}", file=sys.stderr)
            return EXIT_USAGE
        notes = list(target.notes())
        source = target.iter_items()
    doc = verification_document(args, source, ordinals=args.gpu, notes=notes)
    render(doc, args)
    if doc["error"] and doc["error"]["kind"] == "bad-device":
        return EXIT_USAGE
    return verify_exit_code(doc)
