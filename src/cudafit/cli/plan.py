"""``cudafit plan --gpu NAME...``: TORCH_CUDA_ARCH_LIST, CMAKE_CUDA_ARCHITECTURES and nvcc flags."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cudafit.cli import EXIT_FAILS, EXIT_OK, EXIT_USAGE

__all__ = ["configure_parser", "execute"]


def configure_parser(sub: Any) -> None:
    """Register ``plan``."""
    p = sub.add_parser(
        "plan",
        help="build flags (TORCH_CUDA_ARCH_LIST, CMake, nvcc -gencode) for a set of GPUs",
        description="Plan the arch list that covers these GPUs, checked against what the nvcc can build.",
    )
    p.add_argument("--gpu", action="append", default=[], metavar="NAME", help="a GPU to cover (repeatable)")
    p.add_argument("--nvcc", metavar="PATH", help="check targets against this nvcc (default: CUDA_HOME/PATH)")
    p.add_argument("--cuda", metavar="VERSION", help="plan for this CUDA toolkit version instead of a local nvcc")
    p.add_argument("--arch-specific", action="store_true", help="use 'a' targets (9.0a, 10.0a...) where they exist")
    p.add_argument("--no-ptx", action="store_true", help="no PTX for forward compatibility")
    p.add_argument("--json", action="store_true", help="print the cudafit.plan/1 JSON document")
    p.set_defaults(func=execute)


def _targets(args: argparse.Namespace) -> tuple[str, list[str]]:
    import os

    from cudafit.model import parse_cuda_version
    from cudafit.plan import toolkit_targets_for
    from cudafit.probe.backends import real_runner
    from cudafit.probe.toolchains import find_nvcc

    if args.cuda:
        return toolkit_targets_for(parse_cuda_version(args.cuda))
    env = dict(os.environ)
    if args.nvcc:
        env = {"PATH": os.path.dirname(os.path.abspath(args.nvcc))}
    nvcc = find_nvcc(env, real_runner)
    if nvcc.path and nvcc.targets:
        targets = list(nvcc.targets)
        if nvcc.version:  # --list-gpu-code omits a/f variants; the table knows them
            _label, table = toolkit_targets_for(parse_cuda_version(nvcc.version))
            targets += [t for t in table if t[-1] in "af" and t.rstrip("af") in targets]
        return f"nvcc {nvcc.version} ({nvcc.path})", targets
    label, targets = toolkit_targets_for(None)
    return label + " - no nvcc found", targets


def execute(args: argparse.Namespace) -> int:
    """Run ``plan``."""
    from cudafit.plan import make_plan
    from cudafit.probe import declared_inventory
    from cudafit.report.console import dump_json, make_console

    if not args.gpu:
        print("cudafit: plan needs at least one --gpu NAME", file=sys.stderr)
        return EXIT_USAGE
    inv, errors = declared_inventory(args.gpu)
    if errors:
        for e in errors:
            print(f"cudafit: {e['message']}", file=sys.stderr)
        return EXIT_USAGE
    label, targets = _targets(args)
    gpus = [(d.name, d.compute_capability) for d in inv.devices if d.compute_capability]
    plan = make_plan(gpus, targets=targets, toolkit=label, arch_specific=args.arch_specific, ptx=not args.no_ptx)
    if args.json:
        dump_json(plan.to_dict())
    else:
        console = make_console()
        console.print(f'export TORCH_CUDA_ARCH_LIST="{plan.torch_cuda_arch_list}"', highlight=False)
        console.print(f'-DCMAKE_CUDA_ARCHITECTURES="{plan.cmake_cuda_architectures}"', highlight=False)
        console.print("nvcc " + " ".join(plan.nvcc_flags), highlight=False)
        console.print(f"\nchecked against {plan.toolkit}:")
        for line in plan.explanations:
            console.print(f"  {line}")
        for problem in plan.problems:
            console.print(f"[red]problem:[/red] {problem}")
    return EXIT_FAILS if plan.problems else EXIT_OK
