"""``cudafit audit WHEEL|DIR|FILE... --require SPEC``: an arch-coverage gate for the CI that builds CUDA wheels.

Like auditwheel for the manylinux policy: one command that says whether an artifact meets a policy
("code for 7.5 .. 12.0, PTX for 12.0", or "at least what torch 2.14.1 covers"), which member lacks
what, and the arch list that fixes it.  The policy comes from the flags or from
``[tool.cudafit.audit]`` in the nearest ``pyproject.toml`` (flags override it).

Exit codes: 0 the policy is met, 1 it is not, 2 usage (no or unreadable policy, unknown GPU name),
3 could not analyse (an unreadable target or member and nothing failed, a torch build not found).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from cudafit.cli import EXIT_ANALYSIS_FAILED, EXIT_USAGE
from cudafit.cli.common import Subparsers, output_format, unwritable_outputs, write_report
from cudafit.report.formats import OutputFormat

if TYPE_CHECKING:
    from cudafit.audit.core import Policy
    from cudafit.model import JsonDict

__all__ = ["configure_parser", "execute"]


def configure_parser(sub: Subparsers) -> None:
    """Register ``audit``."""
    p = sub.add_parser(
        "audit",
        help="does a built wheel/library meet an arch-coverage policy? (for CI; exit 1 when not)",
        description=(
            "Check that every module of every member has code for every required architecture (NVIDIA's "
            "compatibility rules), and print the arch list that fixes what is missing. Exit codes: 0 pass, "
            "1 fail, 2 usage, 3 could not analyse."
        ),
    )
    p.add_argument(
        "targets", nargs="+", metavar="WHEEL|DIR|FILE", help="wheels, directories (their *.whl and binaries), files"
    )
    p.add_argument(
        "--require",
        action="append",
        default=[],
        metavar="SPEC",
        help="required archs (repeatable): TORCH_CUDA_ARCH_LIST '7.5 8.0 8.6 9.0 10.0 12.0+PTX', "
        "CMAKE_CUDA_ARCHITECTURES '75;80;90a;120-virtual', nvcc 'sm_80 compute_120', or GPU names 'H100,RTX 4090'",
    )
    p.add_argument(
        "--match-torch",
        nargs="?",
        const="",
        default=None,
        metavar="VERSION|PATH",
        help="also require what a torch build covers: a version (pip download), a torch wheel, site-packages, "
        "torch directory or python executable; no value: this environment's torch",
    )
    p.add_argument(
        "--torch-index-url",
        metavar="URL",
        help="where --match-torch VERSION comes from (an index URL, or cu126/cu128/cu130 for PyTorch's)",
    )
    p.add_argument(
        "--allow-specialised",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="modules the verdict rules call gated or specialised (code the library dispatches on other GPUs) "
        "may lack code for a required arch (default: no; holes never pass)",
    )
    p.add_argument(
        "--allow-jit",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="PTX the driver JIT-compiles meets a SASS requirement (default: no)",
    )
    cfg = p.add_mutually_exclusive_group()
    cfg.add_argument("--config", metavar="PYPROJECT", help="read [tool.cudafit.audit] from this file")
    cfg.add_argument("--no-config", action="store_true", help="ignore pyproject.toml")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--format", choices=["text", "json", "sarif"], default=None, help="output format (default text)")
    fmt.add_argument("--json", action="store_true", help="print the cudafit.audit/1 JSON document")
    p.add_argument(
        "-o", "--output", metavar="FILE", help="write the --format output to FILE (text still goes to stdout)"
    )
    p.add_argument("--junit", metavar="FILE", help="also write JUnit XML (one test case per member x required arch)")
    p.add_argument("--index-url", help="pip index for requirement targets")
    p.add_argument("--no-cache", action="store_true", help="do not use or update the scan cache")
    p.set_defaults(func=execute)


def _policy(args: argparse.Namespace) -> Policy:
    """The policy from the flags over ``[tool.cudafit.audit]``; raises SpecError / TorchError."""
    from cudafit.audit import make_policy
    from cudafit.audit.policy import FilePolicy, find_pyproject, load_policy
    from cudafit.audit.torch import find_torch_build

    config = None if args.no_config else (args.config or find_pyproject())
    file = load_policy(config) if config else FilePolicy(path="")
    base = os.path.dirname(os.path.abspath(config)) if config else None
    specs = list(args.require) or list(file.require)
    allow_specialised = args.allow_specialised if args.allow_specialised is not None else bool(file.allow_specialised)
    allow_jit = args.allow_jit if args.allow_jit is not None else bool(file.allow_jit)
    index_url = args.torch_index_url or file.torch_index_url
    torch = None
    if args.match_torch is not None:
        torch = find_torch_build(args.match_torch, index_url=index_url)
    elif file.match_torch not in (None, False):
        spec = "" if file.match_torch is True else str(file.match_torch)
        torch = find_torch_build(spec, index_url=index_url, base=base)
    return make_policy(specs, allow_specialised=allow_specialised, allow_jit=allow_jit, torch=torch, config=config)


def execute(args: argparse.Namespace) -> int:
    """Run ``audit``."""
    from cudafit.audit import SpecError, run_audit
    from cudafit.audit.torch import TorchError
    from cudafit.errors import EnvironmentResolutionError
    from cudafit.report.audit import audit_document, audit_renderers, render_text
    from cudafit.report.console import make_console
    from cudafit.report.formats import OutputFormat, render
    from cudafit.targets.cache import scan_cache

    problem = unwritable_outputs(args.output, args.junit)
    if problem:
        print(f"cudafit: {problem}", file=sys.stderr)
        return EXIT_USAGE
    try:
        with scan_cache(enabled=not args.no_cache):
            policy = _policy(args)
            pip_args = ["--index-url", args.index_url] if args.index_url else []
            result = run_audit(args.targets, policy, pip_args=pip_args)
    except (SpecError, EnvironmentResolutionError) as err:
        print(f"cudafit: error: {err.message}", file=sys.stderr)
        return EXIT_USAGE
    except TorchError as err:
        print(f"cudafit: error: {err.message}", file=sys.stderr)
        return EXIT_ANALYSIS_FAILED
    doc = audit_document(result)
    fmt = output_format(args)
    written = True
    if not args.output:
        render(fmt, doc, audit_renderers())
    else:
        if fmt is not OutputFormat.TEXT:  # a file of JSON/SARIF: the text report still goes to the log
            render_text(doc, make_console())
        written = write_report(args.output, _page(fmt, doc))
    if args.junit:
        from cudafit.report.audit import render_junit

        written = write_report(args.junit, render_junit(doc)) and written
    rc = int(result.exit_code)
    return rc if written else (rc or EXIT_ANALYSIS_FAILED)  # a gate whose report is missing never passes


def _page(fmt: OutputFormat, doc: JsonDict) -> str:
    """The ``--output FILE`` text: the text report as printed, or indented JSON (the document, or SARIF)."""
    import io
    import json

    from cudafit.report.audit import render_sarif, render_text
    from cudafit.report.console import make_console

    if fmt is OutputFormat.TEXT:
        page = io.StringIO()
        render_text(doc, make_console(page))
        return page.getvalue()
    return json.dumps(doc if fmt is OutputFormat.JSON else render_sarif(doc), indent=2) + "\n"
