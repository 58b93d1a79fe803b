"""``cudafit explain [TEXT | - | --file LOG]``: what a CUDA error message means here, and the fix.

Exit codes: 0 findings were produced (also ``unknown``), 2 usage, 3 the input could not be read.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cudafit.cli import EXIT_ANALYSIS_FAILED, EXIT_OK, EXIT_USAGE

__all__ = ["configure_parser", "execute"]


def configure_parser(sub: Any) -> None:
    """Register ``explain``."""
    p = sub.add_parser(
        "explain",
        help="explain a CUDA error message or log (no kernel image, FATAL kernel ... built for sm75, ...)",
        description="Classify CUDA failure messages, ground them on this machine, and give the cause and fixes.",
    )
    p.add_argument("text", nargs="?", help="the message; '-' reads standard input")
    p.add_argument("--file", metavar="LOG", help="read the message from a log file")
    p.add_argument("--no-probe", action="store_true", help="do not look at this machine's GPUs and packages")
    p.add_argument("--gpu", action="append", default=[], metavar="NAME", help="ground on this GPU (repeatable)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the cudafit.explain/1 JSON document")
    fmt.add_argument("--markdown", action="store_true", help="print Markdown")
    p.set_defaults(func=execute)


def _read(args: argparse.Namespace) -> str | None:
    if args.file:
        with open(args.file, encoding="utf-8", errors="replace") as fh:
            return fh.read(16 * 1024 * 1024)
    if args.text == "-" or (args.text is None and not sys.stdin.isatty()):
        return sys.stdin.read(16 * 1024 * 1024)
    return str(args.text) if args.text is not None else None


def _context(args: argparse.Namespace, packages: list[str]) -> Any:
    from cudafit.explain import Context

    gpus: list[tuple[str, Any]] = []
    driver = None
    if args.gpu:
        from cudafit.probe import declared_inventory

        inv, _errors = declared_inventory(args.gpu)
        gpus += [(d.name, d.compute_capability) for d in inv.devices if d.compute_capability]
    if not args.no_probe:
        from cudafit.probe import probe_machine

        inv = probe_machine()
        gpus += [(d.name, d.compute_capability) for d in inv.cuda_devices if d.compute_capability]
        driver = str(inv.driver_version) if inv.driver_version else None
    archs: dict[str, list[str]] = {}
    if packages and not args.no_probe:
        from cudafit.binary.facts import EntryKind
        from cudafit.targets.env import EnvironmentTarget

        wanted = {p.lower().replace("_", "-") for p in packages}
        for item in EnvironmentTarget.current().iter_items():
            name = (item.package or "").lower().replace("_", "-")
            if name in wanted or (item.package and item.package.lower().replace("-", "_") in packages):
                found = archs.setdefault(item.package.replace("-", "_") if item.package else name, [])
                for m in item.facts.runtime_modules:
                    found.extend(e.arch_name for e in m.entries if e.kind is EntryKind.SASS)
        archs = {k: sorted(set(v)) for k, v in archs.items()}
    return Context(gpus=gpus, packages=archs, driver=driver)


def execute(args: argparse.Namespace) -> int:
    """Run ``explain``."""
    from cudafit.explain import classify, ground
    from cudafit.report.console import dump_json, make_console

    try:
        text = _read(args)
    except OSError as err:
        print(f"cudafit: cannot read {args.file}: {err.strerror or err}", file=sys.stderr)
        return EXIT_ANALYSIS_FAILED
    if not text or not text.strip():
        print("cudafit: give the error message as TEXT, '-' (stdin) or --file LOG", file=sys.stderr)
        return EXIT_USAGE
    findings = classify(text)
    packages = [p for f in findings for p in f.evidence.get("packages", [])]
    findings = ground(findings, _context(args, packages))
    doc: dict[str, Any] = {"schema": "cudafit.explain/1", "findings": [f.to_dict() for f in findings]}
    if args.json:
        dump_json(doc)
    elif args.markdown:
        for f in doc["findings"]:
            sys.stdout.write(f"### {f['category']}: {f['title']}\n\n{f['cause']}\n\n")
            sys.stdout.writelines(f"- {x}\n" for x in f["fixes"])
            sys.stdout.write("\n")
    else:
        console = make_console()
        for i, f in enumerate(doc["findings"]):
            head = "[bold]" + ("Most likely: " if i == 0 and len(doc["findings"]) > 1 else "") + f["title"]
            console.print(f"{head}[/bold] [dim]({f['category']})[/dim]")
            for line in f["evidence"].get("lines", [])[:3]:
                console.print(f"  [dim]> {line}[/dim]", markup=True, highlight=False)
            console.print(f"  cause: {f['cause']}")
            for x in f["fixes"]:
                console.print(f"  fix: {x}")
    return EXIT_OK
