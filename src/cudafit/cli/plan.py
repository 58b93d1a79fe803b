"""``cudafit plan --gpu NAME... [--nvcc PATH | --cuda VERSION]``: arch flags for a set of GPUs.

Prints ``TORCH_CUDA_ARCH_LIST``, ``CMAKE_CUDA_ARCHITECTURES`` and nvcc ``-gencode`` flags, each
target checked against the nvcc given (``--nvcc``), the one a build would find (``CUDA_HOME``,
``PATH``), or the rules table for ``--cuda VERSION`` (the newest toolkit in the table when no
nvcc is found; the output says which).  Exit codes: 0 every GPU covered, 1 the toolkit cannot
build for some GPU, 2 usage (no or unknown GPU, bad version).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from cudafit.cli import EXIT_ANALYSIS_FAILED, EXIT_FAILS, EXIT_OK, EXIT_USAGE
from cudafit.cli.common import (
    MachineUse,
    Subparsers,
    add_format_options,
    add_gpu_option,
    output_format,
    resolve_gpus,
)

if TYPE_CHECKING:
    from cudafit.model import Gpu

__all__ = ["configure_parser", "execute"]


def configure_parser(sub: Subparsers) -> None:
    """Register ``plan``."""
    p = sub.add_parser(
        "plan",
        help="build flags (TORCH_CUDA_ARCH_LIST, CMake, nvcc -gencode) for a set of GPUs",
        description=(
            "Plan the arch list that covers these GPUs, checked against what the nvcc can build. "
            "Exit codes: 0 all GPUs covered, 1 the toolkit cannot build for some GPU, 2 usage."
        ),
    )
    add_gpu_option(p, "a GPU to cover (repeatable): 'RTX 3090', '2080', 'h100', 'sm_86', '8.6'")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--nvcc", metavar="PATH", help="check targets against this nvcc (default: CUDA_HOME, PATH)")
    src.add_argument("--cuda", metavar="VERSION", help="plan for this CUDA toolkit version (rules table), no nvcc")
    p.add_argument(
        "--arch-specific",
        nargs="?",
        const="a",
        choices=["a", "f"],
        help="use 'a' targets (9.0a: exact CC only) or, with 'f', family targets (10.0f) where the toolkit has them",
    )
    p.add_argument("--no-ptx", action="store_true", help="no PTX for forward compatibility")
    from cudafit.cli.fleet import add_fleet_source_options

    add_fleet_source_options(p, placement=False)
    add_format_options(p, "print the cudafit.plan/1 JSON document", "print Markdown (paste into an issue)")
    p.set_defaults(func=execute)


def _targets(args: argparse.Namespace) -> tuple[str, list[str], str | None]:
    """(toolkit label, targets, error)."""
    from cudafit.model import parse_cuda_version
    from cudafit.plan import query_nvcc, toolkit_targets_for
    from cudafit.probe.backends import real_runner

    if args.cuda:
        try:
            label, targets = toolkit_targets_for(parse_cuda_version(args.cuda))
        except ValueError as err:
            return "", [], str(err)
        if not targets:
            return "", [], f"CUDA {args.cuda} predates cudafit's toolkit table"
        return label, targets, None
    exe = args.nvcc
    if exe is None:
        from cudafit.probe.toolchains import find_nvcc

        exe = find_nvcc(dict(os.environ), real_runner).path
    elif not os.path.isfile(exe):
        return "", [], f"no such nvcc: {exe}"
    if exe:
        info = query_nvcc(exe, real_runner)
        if info.targets:
            return f"nvcc {info.version or '?'} ({info.path}; {info.source})", list(info.targets), None
        if args.nvcc:
            return "", [], f"cannot ask {exe} for its targets: {info.problem}"
    label, targets = toolkit_targets_for(None)
    return f"{label}: no nvcc found in CUDA_HOME or on PATH, planned for the newest toolkit known", targets, None


def _fleet_gpus(args: argparse.Namespace) -> tuple[list[Gpu], str | None]:
    """One GPU per GPU model of the fleet's classes: the arch list covers them all."""
    from cudafit.cli.fleet import load_fleet

    args.scan_env = False
    fleet = load_fleet(args)
    seen: dict[tuple[str, str], Gpu] = {}
    for c in fleet.classes:
        for g in c.judged_gpus:
            seen.setdefault((g.name, str(g.compute_capability)), g)
    if not seen:
        return [], "; ".join(fleet.problems) or "no node of the fleet has known GPUs"
    return list(seen.values()), None


def execute(args: argparse.Namespace) -> int:
    """Run ``plan``."""
    from cudafit.plan import make_plan
    from cudafit.report.formats import render
    from cudafit.report.plan import plan_renderers

    if args.nodes_json and not args.fleet:
        args.fleet = "k8s"
    if not args.gpu and not args.fleet:
        print("cudafit: plan needs at least one --gpu NAME (or --fleet SOURCE)", file=sys.stderr)
        return EXIT_USAGE
    choice = resolve_gpus(args.gpu, probe=False, use=MachineUse.INSTEAD)
    if choice.errors:
        for e in choice.errors:
            print(f"cudafit: {e}", file=sys.stderr)
        return EXIT_USAGE
    label, targets, error = _targets(args)
    if error:
        print(f"cudafit: {error}", file=sys.stderr)
        return EXIT_USAGE
    gpus = list(choice.gpus)
    if args.fleet:
        fleet_gpus, problem = _fleet_gpus(args)
        if problem:
            print(f"cudafit: could not analyse the fleet: {problem}", file=sys.stderr)
            return EXIT_ANALYSIS_FAILED
        gpus += fleet_gpus
    plan = make_plan(
        gpus,
        targets=targets,
        toolkit=label,
        arch_specific=args.arch_specific or False,
        ptx=not args.no_ptx,
    )
    render(output_format(args), plan.to_dict(), plan_renderers())
    return EXIT_FAILS if plan.problems else EXIT_OK
