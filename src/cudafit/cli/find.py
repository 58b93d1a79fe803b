"""``cudafit find REQUIREMENT``: which release, from which index, runs on these GPUs.

Reads candidates' device code over HTTP ranges (never a whole wheel unless the server ignores ranges),
judges them with the engine of ``check``, newest first, and prints the answer with the pip and uv
commands that install it.  Exit codes: 0 a build runs natively on every GPU; 1 none does (or only by
JIT, or ``--with-deps`` finds a pinned CUDA dependency that does not); 2 usage; 3 no answer, and an
index, a wheel or the network failed (so "none runs" is not proven).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from cudafit.cli import EXIT_ANALYSIS_FAILED, EXIT_FAILS, EXIT_OK, EXIT_USAGE
from cudafit.cli.common import MachineUse, Subparsers, add_gpu_option, output_format, resolve_gpus

if TYPE_CHECKING:
    from cudafit.model import JsonDict

__all__ = ["configure_parser", "execute"]


def configure_parser(sub: Subparsers) -> None:
    """Register ``find``."""
    p = sub.add_parser(
        "find",
        help="which release, from which index, runs on these GPUs (reads candidates' device code by HTTP ranges)",
        description=(
            "Which build of REQUIREMENT runs on these GPUs? Judges candidate wheels newest first from their own "
            "device code, read by HTTP range requests (PyPI, and PyTorch's CUDA indexes for torch-ecosystem "
            "projects), and prints the install commands for pip and uv."
        ),
    )
    p.add_argument("requirement", metavar="REQUIREMENT", help="a project name or requirement: torch, 'torch<2.9'")
    add_gpu_option(p, "judge for this GPU (repeatable; default: this machine's)")
    p.add_argument("--driver", metavar="VERSION", help="judge for this NVIDIA driver (default: this machine's)")
    p.add_argument("--python-version", metavar="X.Y", help="target Python (default: this interpreter)")
    p.add_argument("--platform", action="append", default=[], metavar="TAG", help="target platform tag (repeatable)")
    p.add_argument(
        "--index-url",
        action="append",
        default=[],
        metavar="URL",
        help="ask this Simple API index instead of PyPI (+ PyTorch's); repeatable",
    )
    p.add_argument("--pre", action="store_true", help="include pre-releases")
    p.add_argument("--with-deps", action="store_true", help="also judge the answer's pinned nvidia-*-cuNN wheels")
    p.add_argument("--max-candidates", type=int, metavar="N", help="judge at most N candidates")
    p.add_argument("--timeout", type=float, default=20.0, metavar="S", help="network time-out in seconds (20)")
    p.add_argument("--no-cache", action="store_true", help="do not use or update the index and sha256 caches")
    p.add_argument("--no-probe", action="store_true", help="do not look for this machine's GPUs")
    p.add_argument("--json", action="store_true", help="print the cudafit.find/1 JSON document")
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    """Run ``find``."""
    from cudafit.find import find
    from cudafit.report.find import find_document, render_text
    from cudafit.report.formats import Renderers, render
    from cudafit.targets.index import IndexClient

    choice = resolve_gpus(args.gpu, driver=args.driver, probe=not args.no_probe, use=MachineUse.FILL)
    if choice.errors:
        for e in choice.errors:
            print(f"cudafit: {e}", file=sys.stderr)
        return EXIT_USAGE
    if not choice.gpus:
        print("cudafit: no GPU found on this machine: name one with --gpu (e.g. --gpu 'RTX 4090')", file=sys.stderr)
        return EXIT_USAGE
    from cudafit.progress import progress

    with progress(f"cudafit find {args.requirement}") as line:  # a status line on a terminal, nothing elsewhere
        result = find(
            args.requirement,
            list(choice.gpus),
            driver=choice.driver,
            python_version=args.python_version,
            platforms=args.platform,
            index_urls=args.index_url,
            pre=args.pre,
            with_deps=args.with_deps,
            client=IndexClient(timeout=args.timeout, use_cache=not args.no_cache),
            use_cache=not args.no_cache,
            progress=line.update if line.shown else None,
            max_candidates=args.max_candidates,
        )
    doc = find_document(result)
    render(output_format(args), doc, Renderers(render_text))
    return exit_code(doc)


def exit_code(doc: JsonDict) -> int:
    """0: an answer runs natively; 1: none does (or, with --with-deps, a pinned dependency does not);
    3: an index, a wheel or the network failed and no answer was found, so "none runs" is not proven."""
    if doc["answer"] is not None:
        # --with-deps: a pinned CUDA dependency without code for a GPU makes the install fail all the same
        return EXIT_FAILS if any(d["status"] in ("fails", "partial") for d in doc["dependencies"]) else EXIT_OK
    if any(c["status"] == "error" for c in doc["candidates"]) or any(i["error"] for i in doc["indexes"]):
        return EXIT_ANALYSIS_FAILED
    return EXIT_FAILS
