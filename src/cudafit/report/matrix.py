"""The packages x GPUs matrix of ``check``/``doctor``, laid out for the terminal it is printed on.

Rich shrinks a table that is too wide by wrapping and cutting cells: on a 100-column terminal
that cut ``nvidia-cusparse`` and ``nvidia-cusparselt-cu13`` to the same ``nvidia-cusp…`` and
stacked ``NVIDIA H100 SXM5 (9.0)`` over three lines.  Here the layout is decided before rich sees
it: package names are never cut, GPU headers are short (``H100 9.0``) and stay on one line where
the width allows, then go to two lines (name over CC) widest first, then the GPUs are split over
several tables that each repeat the package column.  The coverage columns are extra: shown where
they fit, or always with ``--wide`` (the table then runs past the terminal instead of wrapping).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from cudafit.model import JsonDict

__all__ = ["STATUS_COLORS", "GpuColumn", "coverage_ranges", "gpu_columns", "render_matrix", "short_gpu_name"]

#: Two spaces between columns: ``box=None``, padding (0, 1), no edge padding.
GAP = 2
STATUS_COLORS = {"native": "green", "jit": "yellow", "partial": "dark_orange", "fails": "red", "none": "dim"}
_COVERAGE = (("native", "native on CC"), ("jit", "JIT on CC"), ("partial", "partial on CC"))

_VENDOR = re.compile(r"^(?:NVIDIA|GeForce|Tesla)\s+", re.IGNORECASE)
_NOTE = re.compile(r"(?<!\s)\s*\([^)]*\)")
# Form factors, memory sizes and marketing words nvidia-smi and the GPU table append to a model name:
# "H100 80GB HBM3", "A100-SXM4-80GB", "H100 PCIe", "H200 NVL", "GH200 Grace Hopper Superchip",
# "RTX 6000 Ada Generation", "RTX PRO 6000 Blackwell Workstation Edition".  A separator run is tried from its
# start only (linear time on a name of many blanks).
_FORM = re.compile(
    r"(?<![\s-])[\s-]+(?:SXM\d*|PCIE|NVL\d*|HBM\d*E?|\d+\s?GB|Grace(?:\s+(?:Hopper|Blackwell))?(?:\s+Ultra)?\s+Superchip|"
    r"Superchip|Generation|Edition|GPU)(?=[\s-]|$)",
    re.IGNORECASE,
)


def short_gpu_name(name: str) -> str:
    """The model in a GPU's name: ``NVIDIA H100 80GB HBM3`` -> ``H100``, ``Tesla T4`` -> ``T4``.

    Drops vendor prefixes (NVIDIA, GeForce, Tesla), parenthesised notes, form factors and memory
    sizes.  Deterministic; names it would empty are returned stripped of vendor prefixes only.
    """
    stripped = name.strip()
    if stripped.lower().startswith("compute capability"):  # --gpu 8.6: the header is "CC 8.6", not "... 8.6 8.6"
        return "CC"
    while True:
        shorter = _VENDOR.sub("", stripped, count=1)
        if shorter == stripped:
            break
        stripped = shorter
    short = _FORM.sub("", _NOTE.sub("", stripped)).strip(" -")
    if " Blackwell " in f" {short} " and not short.startswith("Blackwell"):
        short = re.sub(r"\s+Blackwell\b", "", short)  # "RTX PRO 6000 Blackwell Server" -> "RTX PRO 6000 Server"
    return short or stripped or name


def _vendorless(name: str) -> str:
    out = name.strip()
    while (shorter := _VENDOR.sub("", out, count=1)) != out:
        out = shorter
    return out or name


@dataclass(frozen=True)
class GpuColumn:
    """One column of the matrix: the GPUs it stands for (identical models merge) and its header."""

    indexes: tuple[int, ...]
    header: str  # "H100 9.0", "2x H100 9.0"

    def lines(self, two: bool) -> list[str]:
        """The header on one line, or model over compute capability."""
        if not two or " " not in self.header:
            return [self.header]
        model, cc = self.header.rsplit(" ", 1)
        return [model, cc]


def gpu_columns(doc: JsonDict) -> list[GpuColumn]:
    """The GPU columns of ``doc``: short unique headers; GPUs of one model with equal verdicts merged.

    A header is ``MODEL CC``.  Where two different names shorten to the same header, both fall back
    to their names without vendor prefixes (then to the full names); GPUs with the same name and
    compute capability whose verdicts agree on every package are one column, ``Nx MODEL CC``.
    """
    gpus = doc["gpus"]
    statuses = [tuple(t["verdicts"][i]["status"] for t in doc["targets"]) for i in range(len(gpus))]
    groups: dict[tuple[str, str, tuple[str, ...]], list[int]] = {}
    for i, g in enumerate(gpus):
        groups.setdefault((g["name"], g["compute_capability"], statuses[i]), []).append(i)
    keys = list(groups)
    labels = {k: short_gpu_name(k[0]) for k in keys}
    for shorten in (_vendorless, lambda n: n):
        seen: dict[tuple[str, str], list[tuple[str, str, tuple[str, ...]]]] = {}
        for k in keys:
            seen.setdefault((labels[k], k[1]), []).append(k)
        for clash in seen.values():
            if len({k[0] for k in clash}) > 1:
                for k in clash:
                    labels[k] = shorten(k[0])
    out: list[GpuColumn] = []
    counts: dict[tuple[str, str], int] = {}
    for k in keys:
        counts[(labels[k], k[1])] = counts.get((labels[k], k[1]), 0) + 1
    for k in keys:
        idx = tuple(groups[k])
        base = f"{labels[k]} {k[1]}"
        if counts[(labels[k], k[1])] > 1:  # same model, different verdicts (a per-GPU fact differs): number them
            base = f"{labels[k]} #{gpus[idx[0]].get('cuda_index', idx[0])} {k[1]}"
        out.append(GpuColumn(idx, f"{len(idx)}x {base}" if len(idx) > 1 else base))
    return out


def coverage_ranges(ccs: list[str]) -> str:
    """``7.5 .. 12.1 (14 CCs)``: a coverage list short enough for a cell."""
    if not ccs:
        return "-"
    if len(ccs) <= 3:
        return " ".join(ccs)
    return f"{ccs[0]} .. {ccs[-1]} ({len(ccs)} CCs)"


@dataclass(frozen=True)
class _Layout:
    chunks: tuple[tuple[int, ...], ...]  # GPU columns per table
    two_line: frozenset[int]  # GPU columns whose header goes on two lines
    coverage: bool
    width: int  # widest table, in cells


def _widths(cols: Sequence[GpuColumn], cells: list[list[str]], two: frozenset[int]) -> list[int]:
    out = []
    for c, col in enumerate(cols):
        body = max((len(row[c]) for row in cells), default=0)
        out.append(max(body, *(len(x) for x in col.lines(c in two))))
    return out


def _plan(
    pkg_w: int, cols: Sequence[GpuColumn], cells: list[list[str]], cov_w: list[int], width: int, wide: bool
) -> _Layout:
    """Choose the layout: one table with one-line headers, then two-line headers, then several tables."""
    n = len(cols)
    cov_total = sum(cov_w) + GAP * len(cov_w)
    if n == 0:
        return _Layout((), frozenset(), True, pkg_w + cov_total)
    two: frozenset[int] = frozenset()
    one_w = _widths(cols, cells, two)
    total = pkg_w + sum(one_w) + GAP * n
    if wide:
        return _Layout((tuple(range(n)),), two, True, total + cov_total)
    ws = one_w
    while total > width:
        gains = {c: one_w[c] - _widths(cols, cells, two | {c})[c] for c in range(n) if c not in two}
        best = max(gains, key=lambda c: (gains[c], -c), default=None)
        if best is None or gains[best] <= 0:
            break
        two = two | {best}
        ws = _widths(cols, cells, two)
        total = pkg_w + sum(ws) + GAP * n
    if total <= width:
        cov = total + cov_total <= width
        return _Layout((tuple(range(n)),), two, cov, total + (cov_total if cov else 0))
    # Several tables, each as many GPUs as fit with one-line headers (at least one per table).
    chunks: list[tuple[int, ...]] = []
    current: list[int] = []
    used = pkg_w
    widest = 0
    for c in range(n):
        if current and used + GAP + one_w[c] > width:
            chunks.append(tuple(current))
            widest = max(widest, used)
            current, used = [], pkg_w
        current.append(c)
        used += GAP + one_w[c]
    chunks.append(tuple(current))
    return _Layout(tuple(chunks), frozenset(), False, max(widest, used))


def _package_cell(t: JsonDict) -> tuple[Any, int]:
    from rich.text import Text

    name = f"{t['name']} {t['version']}" if t["version"] else t["name"]
    text = Text(name)
    if t["runtime_compiled"]:
        text.append(f" (+{t['runtime_compiled']})", style="dim")
    return text, text.cell_len


def render_matrix(doc: JsonDict, console: Console, *, wide: bool = False) -> None:
    """Print the matrix on ``console`` in the layout its width allows (see the module docstring)."""
    from rich.table import Table
    from rich.text import Text

    cols = gpu_columns(doc) if doc["gpus"] else []
    names = [_package_cell(t) for t in doc["targets"]]
    pkg_w = max([len("package"), *(w for _, w in names)])
    cells = [[t["verdicts"][col.indexes[0]]["status"] for col in cols] for t in doc["targets"]]
    covs = [[coverage_ranges(t["coverage"].get(k, [])) for k, _ in _COVERAGE] for t in doc["targets"]]
    cov_w = [max(len(head), *(len(row[j]) for row in covs)) for j, (_, head) in enumerate(_COVERAGE)]
    layout = _plan(pkg_w, cols, cells, cov_w, console.width, wide)
    widths = _widths(cols, cells, layout.two_line)
    for n, chunk in enumerate(layout.chunks or ((),)):
        last = n == len(layout.chunks or ((),)) - 1
        table = Table(box=None, header_style="bold", pad_edge=False)
        table.add_column("package", no_wrap=True, min_width=pkg_w)
        for c in chunk:
            table.add_column("\n".join(cols[c].lines(c in layout.two_line)), width=widths[c], no_wrap=True)
        coverage = layout.coverage and last
        if coverage:
            for j, (_, head) in enumerate(_COVERAGE):
                # beside GPU columns a coverage cell never wraps; alone (no GPU) it may, the package name never
                table.add_column(head, min_width=cov_w[j] if chunk else None, no_wrap=bool(chunk))
        for r in range(len(doc["targets"])):
            row: list[Any] = [names[r][0]]
            row += [Text(cells[r][c], style=STATUS_COLORS.get(cells[r][c], "")) for c in chunk]
            if coverage:
                row += covs[r]
            table.add_row(*row)
        if n:
            console.print()
        if layout.width > console.width and chunk:  # --wide, or one GPU wider than the terminal: run past it
            saved = console.width
            console.width = layout.width  # rich clamps print(width=...) to the console's width
            try:
                console.print(table, crop=False)
            finally:
                console.width = saved
        else:
            console.print(table)
    if not wide and doc["gpus"] and not layout.coverage:
        console.print("[dim](--wide adds the coverage columns: native/JIT/partial on CC)[/dim]")
