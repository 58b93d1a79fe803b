"""``cudafit fleet ray|k8s|file``: a fleet's inventory; ``--fleet SOURCE`` for check, doctor and plan.

``cudafit fleet ray [--ray-address ADDR] [--scan-env] [--fleet-timeout S]`` probes every node of a Ray
cluster, ``cudafit fleet k8s [--kube-context C] [--selector L] [--nodes-json FILE]`` reads GPU Feature Discovery
labels, ``cudafit fleet file FILE`` reads a fleet file; each prints the node classes (``--json``:
``cudafit.fleet/1``).  Exit codes: 0 every node described, 1 some node could not be (timeout, no
labels, garbage, unreachable), 2 usage, 3 the fleet could not be asked at all (cluster
unreachable, empty cluster, unreadable file).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from cudafit.cli import EXIT_ANALYSIS_FAILED, EXIT_FAILS, EXIT_OK, EXIT_USAGE
from cudafit.cli.common import Subparsers, nothing_readable, output_format, write_report

if TYPE_CHECKING:
    from cudafit.fleet.inventory import FleetInventory
    from cudafit.targets.interface import ScanItem

__all__ = ["add_fleet_source_options", "configure_parser", "execute", "load_fleet", "run_fleet_verdicts"]


def configure_parser(sub: Subparsers) -> None:
    """Register ``fleet``."""
    p = sub.add_parser(
        "fleet",
        help="the GPUs and drivers of a Ray or Kubernetes cluster (or a fleet file), grouped into node classes",
        description=(
            "Inventory a fleet: every node's GPUs and driver, grouped into classes of identical facts. "
            "Exit codes: 0 every node described, 1 some node could not be, 2 usage, 3 the fleet could not be asked."
        ),
    )
    fsub = p.add_subparsers(metavar="source", dest="fleet_source")
    ray = fsub.add_parser("ray", help="probe every node of a Ray cluster (NVML, no CUDA context)")
    # The same names as check/doctor/plan --fleet's options (the short forms stay as aliases).
    ray.add_argument(
        "--ray-address",
        "--address",
        dest="ray_address",
        metavar="ADDR",
        help="Ray cluster (default: RAY_ADDRESS, auto)",
    )
    ray.add_argument("--scan-env", action="store_true", help="also list each node's own installed packages")
    _timeout_option(ray, 60.0, "seconds each node has to answer")
    k8s = fsub.add_parser("k8s", help="read NVIDIA GPU Feature Discovery labels of a Kubernetes cluster's nodes")
    _k8s_options(k8s, aliases=True)
    _timeout_option(k8s, 30.0, "seconds for each API request")
    f = fsub.add_parser("file", help="read a fleet file (cudafit.fleet/1, or a list of cudafit.gpus/1)")
    f.add_argument("path", metavar="FILE")
    for sp in (ray, k8s, f):
        sp.add_argument("--json", action="store_true", help="print the cudafit.fleet/1 JSON document")
        sp.set_defaults(func=execute)
    p.set_defaults(func=lambda _args: _usage(p))


def _usage(p: argparse.ArgumentParser) -> int:
    p.print_help(sys.stderr)
    return EXIT_USAGE


def _timeout_option(p: argparse.ArgumentParser, default: float, help_text: str) -> None:
    """``--fleet-timeout S`` (``--timeout``: the old name) of ``fleet ray`` and ``fleet k8s``."""
    p.add_argument(
        "--fleet-timeout", "--timeout", dest="fleet_timeout", type=float, default=default, metavar="S", help=help_text
    )


def _k8s_options(p: argparse.ArgumentParser | argparse._ArgumentGroup, *, aliases: bool) -> None:
    names = ("--kube-context", "--context") if aliases else ("--kube-context",)  # --context: the old name
    p.add_argument(*names, dest="kube_context", metavar="C", help="kubeconfig context")
    p.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig file (default: KUBECONFIG, ~/.kube/config)")
    p.add_argument("--selector", metavar="L", help="only nodes matching this label selector (as kubectl -l)")
    p.add_argument("--nodes-json", metavar="FILE", help="read `kubectl get nodes -o json` output instead of the API")


def add_fleet_source_options(p: argparse.ArgumentParser, *, placement: bool = True) -> None:
    """``--fleet FILE|ray|k8s`` and the options of each source (check, doctor, plan)."""
    g = p.add_argument_group("fleet (judge every node class of a cluster instead of one machine)")
    g.add_argument(
        "--fleet",
        metavar="SOURCE",
        help="FILE (cudafit.fleet/1 or a list of cudafit.gpus/1), 'ray' (a Ray cluster) or 'k8s' (GFD labels)",
    )
    g.add_argument("--ray-address", metavar="ADDR", help="with --fleet ray: the cluster (default: RAY_ADDRESS, auto)")
    g.add_argument("--scan-env", action="store_true", help="with --fleet ray: judge each node's own environment")
    g.add_argument("--fleet-timeout", type=float, metavar="S", help="seconds each node / API request may take")
    _k8s_options(g, aliases=False)
    if placement:
        g.add_argument(
            "--emit-placement",
            action="store_true",
            help="print a Kubernetes nodeAffinity and a Ray label selector for the node classes where it runs",
        )


def load_fleet(args: argparse.Namespace, *, keep_connection: bool = False) -> FleetInventory:
    """The :class:`~cudafit.fleet.inventory.FleetInventory` the arguments name."""
    kind = getattr(args, "fleet_source", None) or args.fleet
    if getattr(args, "nodes_json", None) and kind in (None, "k8s"):
        from cudafit.fleet.k8s_source import inventory_from_nodes_json

        return inventory_from_nodes_json(args.nodes_json, selector=args.selector)
    timeout = getattr(args, "fleet_timeout", None) or getattr(args, "timeout", None)
    if kind == "ray":
        from cudafit.fleet.ray_source import ray_inventory

        address = getattr(args, "ray_address", None) or getattr(args, "address", None)
        return ray_inventory(
            address=address, timeout=timeout or 60.0, scan_env=args.scan_env, keep_connection=keep_connection
        )
    if kind == "k8s":
        from cudafit.fleet.k8s_source import k8s_inventory

        return k8s_inventory(
            context=args.kube_context, selector=args.selector, kubeconfig=args.kubeconfig, timeout=timeout or 30.0
        )
    from cudafit.fleet.files import load_fleet_file

    return load_fleet_file(getattr(args, "path", None) or kind)


def execute(args: argparse.Namespace) -> int:
    """Run ``fleet``."""
    from cudafit.report.fleet import render_inventory_text
    from cudafit.report.formats import Renderers, render

    inv = load_fleet(args)
    doc = inv.to_dict()
    render(output_format(args), doc, Renderers(render_inventory_text))
    if not inv.nodes:
        print(f"cudafit: {'; '.join(inv.problems) or 'the fleet has no nodes'}", file=sys.stderr)
        return EXIT_ANALYSIS_FAILED
    from cudafit.fleet.run import incomplete_nodes

    missing = incomplete_nodes(inv)
    if missing:
        print(
            f"cudafit: {len(missing)} of {len(inv.nodes)} nodes could not be described "
            f"({', '.join(sorted({n.status for n in missing}))})",
            file=sys.stderr,
        )
        return EXIT_FAILS
    return EXIT_OK


def fleet_usage_error(args: argparse.Namespace) -> str | None:
    """Flags that contradict ``--fleet`` (the fleet says which GPUs and drivers there are)."""
    clash = [
        flag
        for flag, value in (("--gpu", args.gpu), ("--inventory", args.inventory), ("--driver", args.driver))
        if value
    ]
    if clash:
        return f"--fleet judges the fleet's own GPUs and drivers: drop {', '.join(clash)}"
    if args.scan_env and args.fleet != "ray":
        return "--scan-env needs --fleet ray (each node scans its own environment)"
    if getattr(args, "verify", False):
        return "--verify loads modules on this machine's GPUs: not with --fleet"
    if getattr(args, "kernels", False):
        return "--kernels lists one machine's kernels: run check/doctor --gpu CC --driver VERSION --kernels for a class"
    return None


def run_fleet_verdicts(args: argparse.Namespace, items: Iterable[ScanItem]) -> int:
    """``check``/``doctor --fleet``: load the fleet, judge it (:func:`cudafit.fleet.run.run_fleet`), render,
    return the exit code."""
    from cudafit.fleet.run import run_fleet
    from cudafit.report.fleet import fleet_check_document, fleet_renderers, render_fleet_html
    from cudafit.report.formats import render

    problem = fleet_usage_error(args)
    if problem:
        print(f"cudafit: {problem}", file=sys.stderr)
        return EXIT_USAGE
    by_env = args.fleet == "ray" and args.scan_env
    inv = load_fleet(args, keep_connection=by_env)
    run = run_fleet(
        inv,
        items,
        by_env=by_env,
        emit_placement=args.emit_placement,
        use_cache=not args.no_cache,
        embedded=args.embedded,
    )
    if run.judgement is None:
        print(f"cudafit: could not analyse the fleet: {run.why_not}", file=sys.stderr)
        return EXIT_ANALYSIS_FAILED
    doc = fleet_check_document(run.judgement, placement=run.placement)
    render(output_format(args), doc, fleet_renderers())
    if args.html and not write_report(args.html, render_fleet_html(doc)):
        return EXIT_ANALYSIS_FAILED
    if any(c["status"] in ("fails", "partial") for c in doc["classes"]) or run.incomplete:
        return EXIT_FAILS
    if nothing_readable(doc["targets"]):
        return EXIT_ANALYSIS_FAILED
    return EXIT_OK
