"""What the sub-commands share: report files, pip options, output formats, and turning GPU flags into GPUs.

The lowest module of ``cudafit.cli``: every command may import it, it imports no command, so commands never
import each other in both directions.
"""

from __future__ import annotations

import argparse
import enum
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from cudafit.report.formats import OutputFormat

if TYPE_CHECKING:
    from cudafit.analysis import MachineSummary
    from cudafit.model import DriverVersion, Gpu, JsonDict

__all__ = [
    "GpuChoice",
    "MachineUse",
    "Subparsers",
    "add_format_options",
    "add_gpu_option",
    "add_pip_options",
    "driver_arg",
    "nothing_readable",
    "output_format",
    "pip_args",
    "resolve_gpus",
    "unwritable_outputs",
    "write_report",
]

#: What ``configure_parser(sub)`` of each command receives.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def unwritable_outputs(*paths: str | None) -> str | None:
    """The first report path that cannot be written (checked before the work, so a gate never fails
    after a passing run for want of a directory), as a message; ``None`` when all can be."""
    for path in paths:
        if not path:
            continue
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            return f"cannot write {path}: no such directory {folder}"
        if os.path.isdir(path) or not os.access(path if os.path.exists(path) else folder, os.W_OK):
            return f"cannot write {path}: not a writable file"
    return None


def write_report(path: str, text: str) -> bool:
    """Write a report file; on failure (the folder vanished or filled up during the run: the paths were
    checked before it) say so in one line and return ``False``, so the caller exits non-zero, never 0 and
    never with an "internal error"."""
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as err:
        print(f"cudafit: cannot write {path}: {err.strerror or err}", file=sys.stderr)
        return False
    return True


def driver_arg(text: str) -> str:
    """``--driver VERSION`` checked while the flags are parsed: ``--driver abc`` is a usage error (exit 2),
    not a failure after the scan."""
    from cudafit.errors import ValueParseError
    from cudafit.model import parse_driver_version

    try:
        parse_driver_version(text)
    except ValueParseError as err:
        raise argparse.ArgumentTypeError(err.message) from None
    return text


def nothing_readable(targets: Iterable[JsonDict]) -> bool:
    """Whether every target's files were unreadable (exit code 3: nothing could be analysed)."""
    rows = list(targets)
    return bool(rows) and all(t["unreadable"] and len(t["unreadable"]) >= t["files"] for t in rows)


def add_pip_options(p: argparse.ArgumentParser) -> None:
    """How requirement targets are downloaded (``check``, ``verify``)."""
    p.add_argument(
        "--index-url", help="pip index for requirement targets (e.g. https://download.pytorch.org/whl/cu128)"
    )
    p.add_argument("--extra-index-url", action="append", default=[], help="additional pip index (repeatable)")
    p.add_argument("--python-version", help="target Python for downloads (pip --python-version)")
    p.add_argument("--platform", action="append", default=[], help="target platform tag for downloads (repeatable)")


def pip_args(args: argparse.Namespace) -> list[str]:
    """The ``pip download`` arguments of :func:`add_pip_options`."""
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


def add_gpu_option(p: argparse.ArgumentParser | argparse._ArgumentGroup, help_text: str) -> None:
    """``--gpu NAME`` (repeatable): a GPU by name or compute capability, resolved by :func:`resolve_gpus`."""
    p.add_argument("--gpu", action="append", default=[], metavar="NAME", help=help_text)


def add_format_options(p: argparse.ArgumentParser, json_help: str, markdown_help: str | None = None) -> None:
    """``--json`` (and ``--markdown``, when the command has it), exclusive; read back by :func:`output_format`."""
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help=json_help)
    if markdown_help is not None:
        fmt.add_argument("--markdown", action="store_true", help=markdown_help)


def output_format(args: argparse.Namespace) -> OutputFormat:
    """The format the flags ask for: ``--json``, ``--markdown``, ``--format NAME``; text otherwise."""
    if getattr(args, "json", False):
        return OutputFormat.JSON
    if getattr(args, "markdown", False):
        return OutputFormat.MARKDOWN
    named = getattr(args, "format", None)
    return OutputFormat(named) if named else OutputFormat.TEXT


class MachineUse(enum.Enum):
    """How the GPUs named with ``--gpu`` and this machine's (probed, or ``--inventory``) combine."""

    ADD = "add"  # check, doctor: the machine's GPUs and the named ones, side by side
    FILL = "fill"  # find: the named GPUs replace the machine's, which still gives the driver
    INSTEAD = "instead"  # explain: the named GPUs replace the machine entirely


@dataclass(frozen=True)
class GpuChoice:
    """The GPUs and driver a command judges for, the machine they came from, and the flags' errors."""

    gpus: tuple[Gpu, ...]
    driver: DriverVersion | None
    machine: MachineSummary | None
    errors: tuple[str, ...] = ()


def resolve_gpus(
    names: Sequence[str],
    *,
    driver: str | None = None,
    inventory: str | None = None,
    probe: bool = True,
    use: MachineUse = MachineUse.ADD,
) -> GpuChoice:
    """``--gpu`` names, ``--driver``, ``--inventory`` and this machine's probe turned into :class:`Gpu` values.

    The machine (the inventory file, else the probe unless ``probe`` is false) is read only when ``use`` needs
    it; a driver given wins over the machine's.  Errors (an unknown GPU name, a bad driver version) are
    returned, never raised: they are usage errors for the command to print.
    """
    from cudafit.analysis import MachineSummary
    from cudafit.errors import ValueParseError
    from cudafit.model import Gpu, parse_driver_version
    from cudafit.probe import declared_inventory, inventory_from_file, probe_machine

    try:
        given = parse_driver_version(driver) if driver else None
    except ValueParseError as err:
        return GpuChoice((), None, None, (err.message,))
    machine_known = bool(inventory) or probe
    read = {
        MachineUse.ADD: machine_known,
        MachineUse.FILL: (not names or given is None) and machine_known,
        MachineUse.INSTEAD: not names and machine_known,
    }[use]
    gpus: list[Gpu] = []
    machine = None
    if read:
        inv = inventory_from_file(inventory) if inventory else probe_machine()
        machine = MachineSummary.of(inv)
        if use is MachineUse.ADD or not names:
            gpus += [Gpu(d.name, d.compute_capability, d.cuda_index) for d in inv.cuda_devices if d.compute_capability]
        given = given or inv.driver_version
    declared, errs = declared_inventory(names) if names else (None, [])
    if declared is not None:
        gpus += [Gpu(d.name, d.compute_capability, None) for d in declared.devices if d.compute_capability]
    return GpuChoice(tuple(gpus), given, machine, tuple(e["message"] for e in errs))
