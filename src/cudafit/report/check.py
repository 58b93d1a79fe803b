"""Rendering of ``check`` and ``doctor``: the packages x GPUs matrix, what to do, and ``cudafit.check/1``.

Pure functions of an :class:`~cudafit.analysis.Analysis`; no decision is taken here.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from cudafit import __version__
from cudafit.actions import action_rank, inside_site
from cudafit.analysis import Analysis, PackageResult
from cudafit.model import JsonDict
from cudafit.report.console import gpu_title
from cudafit.report.formats import Renderers
from cudafit.report.matrix import STATUS_COLORS as _COLORS
from cudafit.report.matrix import coverage_ranges as _ranges

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "CHECK_SCHEMA",
    "cell_title",
    "check_document",
    "check_renderers",
    "html_legend",
    "html_stamp",
    "inside_site",
    "render_html",
    "render_markdown",
    "render_text",
]

CHECK_SCHEMA = "cudafit.check/1"
_HTML_COLORS = {"native": "#2e7d32", "jit": "#f9a825", "partial": "#ef6c00", "fails": "#c62828", "none": "#9e9e9e"}


def check_document(analysis: Analysis, *, kernels: bool = False) -> JsonDict:
    """The ``cudafit.check/1`` document (``doctor`` uses the same schema); ``kernels`` adds, per verdict,
    the modules without code for its GPU with their kernels (``--kernels``)."""
    advice = analysis.advice
    return {
        "schema": CHECK_SCHEMA,
        "cudafit_version": __version__,
        "status": analysis.status.value,
        "driver_version": str(analysis.driver) if analysis.driver else None,
        "jit_allowed": analysis.jit_allowed,
        "machine": analysis.machine.to_dict() if analysis.machine is not None else None,
        "gpus": [
            {"name": g.name, "compute_capability": str(g.compute_capability), "cuda_index": g.index}
            for g in analysis.gpus
        ],
        "targets": [
            _package_row(p, fixes, kernels=kernels) for p, fixes in zip(analysis.packages, advice.fixes, strict=True)
        ],
        "actions": [a.to_dict() for a in advice.actions],
        "notes": list(analysis.notes),
    }


def _package_row(p: PackageResult, fixes: tuple[str, ...], *, kernels: bool) -> JsonDict:
    """One ``targets[]`` row (the JSON key predates the words): a package, its verdict on each GPU, its fixes."""
    return {
        "name": p.name,
        "version": p.version,
        "path": p.path,
        "status": p.status.value,
        "runtime_compiled": p.runtime_compiled,
        "runtime_compilers": [c.to_dict() for c in p.compilers],
        "files": len(p.files),
        "unreadable": [{"path": f.path, "error": f.error} for f in p.unreadable],
        "inactive": [{"path": path, "reason": why} for path, why in p.inactive],
        "fallbacks": [{"path": path, "assumed": list(what)} for path, what in p.fallbacks],
        "coverage": p.coverage,
        "verdicts": [_verdict(p, i, kernels=kernels) for i in range(len(p.verdicts))],
        "fixes": list(fixes),
    }


def _verdict(p: PackageResult, i: int, *, kernels: bool) -> JsonDict:
    """One ``verdicts[]`` row: the package on GPU ``i``."""
    d = p.verdicts[i].to_dict()
    verdict: JsonDict = {
        "gpu": i,
        "status": d["status"],
        "counts": d["counts"],
        "reasons": [{**r, "message": inside_site(r["message"])} for r in d["reasons"]],
    }
    if kernels:
        verdict["without_code"] = [gap.to_dict() for gap in p.without_code[i]]
    judgement = p.runtime[i] if p.runtime else None
    verdict["runtime"] = judgement.to_dict() if judgement is not None else None
    return verdict


def check_renderers(*, wide: bool = False) -> Renderers:
    """How ``check`` and ``doctor`` write their document (``wide``: always the coverage columns)."""
    return Renderers(functools.partial(render_text, wide=wide), render_markdown, render_html)


def _cell(status: str) -> str:
    return f"[{_COLORS.get(status, 'white')}]{status}[/]"


def _gpu_label(g: JsonDict) -> str:
    idx = f"cuda:{g['cuda_index']} " if g.get("cuda_index") is not None else ""
    return idx + gpu_title(g["name"], g["compute_capability"])


def iter_action_groups(doc: JsonDict) -> Iterator[tuple[str, list[tuple[str, str, list[str]]]]]:
    """What to do, per GPU: ``(GPU label, [(severity, packages, [messages...])])``.

    One heading per GPU, under it one entry per package (or packages with the same fixes) with every
    message for it, alternatives included, in order: each package appears once per GPU, under its status.
    """
    by_gpu: dict[int, dict[tuple[str, str], list[str]]] = {}
    for a in doc["actions"]:
        per = by_gpu.setdefault(a["gpu"], {})
        for pkg in a["package"].split(", "):
            msgs = per.setdefault((a["severity"], pkg), [])
            if a["message"] not in msgs:
                msgs.append(a["message"])
    for gpu, per in by_gpu.items():
        merged: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        for (sev, pkg), msgs in per.items():
            merged.setdefault((sev, tuple(msgs)), []).append(pkg)
        yield _gpu_label(doc["gpus"][gpu]), [(sev, ", ".join(pkgs), list(msgs)) for (sev, msgs), pkgs in merged.items()]


def render_text(doc: JsonDict, console: Console, *, wide: bool = False) -> None:
    """Matrix + actions on a terminal (rich; colour only on a TTY / without NO_COLOR)."""
    from rich.markup import escape
    from rich.padding import Padding
    from rich.text import Text

    from cudafit.report.matrix import render_matrix

    machine = doc.get("machine")
    if machine and machine.get("status") != "ok":
        console.print(f"[yellow]No NVIDIA GPU on this machine[/yellow] ({'; '.join(machine.get('problems', []))})")
    if doc["targets"]:
        render_matrix(doc, console, wide=wide)
    else:
        console.print("No CUDA device code found.")
    if not doc["gpus"]:
        console.print(
            "No GPU to judge against: the columns show which compute capabilities each package covers; 'partial' "
            "means some modules lack code there (use --gpu NAME to evaluate for a specific GPU)."
        )
    _render_actions(doc, console)
    listed = any("without_code" in v for t in doc["targets"] for v in t["verdicts"])
    info = [] if listed else list(iter_specialised_lines(doc))  # --kernels summarises them below
    if info:
        console.print("\n[bold]Code for other GPUs[/bold] (information, not failures; --kernels lists it):")
        for line in info:
            console.print(Padding(Text(line), (0, 0, 0, 2), expand=False))
    if listed:
        _render_without_code(doc, console)
    for t in doc["targets"]:
        for u in t["unreadable"]:
            console.print(f"[red]unreadable[/red] {escape(inside_site(u['path']))}: {escape(u['error'])}")
    for line in iter_fallback_lines(doc):
        console.print(f"[yellow]rests on a fallback[/yellow] {escape(line)}")
    for line in iter_dependency_lines(doc):
        console.print(escape(line))
    for n in doc["notes"]:
        console.print(f"note: {escape(n)}")


def _render_actions(doc: JsonDict, console: Console) -> None:
    """What to do, per GPU, most serious first (alternatives on their own lines, indented)."""
    from rich.markup import escape
    from rich.padding import Padding
    from rich.text import Text

    if doc["actions"]:
        console.print("\n[bold]What to do[/bold] (most serious first):")
    for label, entries in iter_action_groups(doc):
        console.print(f"  [bold]{escape(label)}[/bold]")
        for sev, pkg, msgs in entries:
            head = f"{_cell(sev)} {escape(pkg)}:"
            if len(msgs) == 1:
                console.print(Padding(Text.from_markup(f"{head} {escape(msgs[0])}"), (0, 0, 0, 4), expand=False))
                continue
            console.print(Padding(Text.from_markup(head), (0, 0, 0, 4), expand=False))
            for m in msgs:  # alternatives: wrapped lines keep the indent
                console.print(Padding(Text(m), (0, 0, 0, 6), expand=False))


def iter_dependency_lines(doc: JsonDict) -> Iterator[str]:
    """What each requirement brings in: one line per dependency judged (its status per GPU, bytes read)."""
    for t in doc["targets"]:
        rows = t.get("dependencies") or []
        if not rows:
            continue
        name = f"{t['name']} {t['version']}" if t["version"] else t["name"]
        yield f"\nWhat pip installs with {name}, judged by range reads (its status: {t['status']}):"
        for r in rows:
            cells = ", ".join(
                f"{doc['gpus'][v['gpu']]['name']}: {v['status']}" for v in r["verdicts"] if v["gpu"] < len(doc["gpus"])
            )
            state = r["status"] if r["judged"] else f"not judged ({r['error']})"
            read = "from the cache" if r["cached"] else f"{r['bytes_fetched'] / 1e6:.1f} MB read"
            yield f"  {r['name']} {r['version']}: {state}" + (f" [{cells}]" if cells else "") + f"; {read}"


def iter_fallback_lines(doc: JsonDict) -> Iterator[str]:
    """One line per file read only in part: the package whose verdicts rest on it, and what was assumed."""
    for t in doc["targets"]:
        name = f"{t['name']} {t['version']}" if t["version"] else t["name"]
        for f in t.get("fallbacks", ()):
            yield f"{name}: its verdicts rest on {f['path']} read in part: {'; '.join(f['assumed'])}"


def iter_specialised_lines(doc: JsonDict) -> Iterator[str]:
    """One line per package with modules specialised for, or gated to, other GPUs: their counts over
    the GPUs judged (a range when they differ)."""

    def span(values: list[int]) -> str:
        lo, hi = min(values), max(values)
        return f"{lo:,}" if lo == hi else f"{lo:,}-{hi:,}"

    for t in doc["targets"]:
        counts = [v["counts"] for v in t["verdicts"]]
        if not counts or not any(c.get("specialised", 0) or c.get("gated", 0) for c in counts):
            continue
        name = f"{t['name']} {t['version']}" if t["version"] else t["name"]
        parts = []
        for key, label in (("specialised", "specialised for other GPUs"), ("gated", "gated (a/f of other GPUs)")):
            values = [c.get(key, 0) for c in counts]
            if any(values):
                parts.append(f"{span(values)} {label}")
        kl = [c.get("kernel_less", 0) for c in counts]
        if any(kl):
            parts.append(f"{span(kl)} kernel-less")
        yield f"{name}: {', '.join(parts)} module(s) per GPU"


def kernel_family(name: str) -> tuple[str, bool]:
    """(qualified name without template arguments or parameters, whether it is a template instance) of a
    kernel symbol, read from its Itanium mangling (no ``c++filt`` needed); other names are returned as is.

    Why: torch 2.8.0 lacks 6.1 code in 356 modules holding 20,881 kernels, nearly all instances of 600
    templates (``at::native::elementwise_kernel<...>`` alone has 2,836); the family is what a reader
    can act on, and ``--json`` keeps every symbol.
    """
    if not name.startswith("_Z"):
        return name, False
    i, n = 2, len(name)
    nested = name.startswith("N", i)
    if nested:
        i += 1
        while i < n and name[i] in "rVK":  # cv-qualifiers of a member function
            i += 1
    parts: list[str] = []
    if name.startswith("St", i):
        parts.append("std")
        i += 2
    while i < n and name[i].isdigit():
        j = i
        while j < n and name[j].isdigit():
            j += 1
        length = int(name[i:j])
        if length <= 0 or j + length > n:
            return name, False
        part = name[j : j + length]
        parts.append("(anonymous namespace)" if part.startswith("_GLOBAL__N") else part)
        i = j + length
        if not nested:
            break
    if not parts:
        return name, False
    return "::".join(parts), i < n and name[i] == "I"


def _families(kernels: list[str]) -> dict[tuple[str, bool], int]:
    """Distinct kernel symbols counted per family (see :func:`kernel_family`)."""
    counts: dict[tuple[str, bool], int] = {}
    for k in set(kernels):
        fam = kernel_family(k)
        counts[fam] = counts.get(fam, 0) + 1
    return counts


def _family_line(fam: tuple[str, bool], count: int) -> str:
    shown = f"{fam[0]}<…>" if fam[1] else fam[0]
    return f"{shown} ×{count:,}" if count > 1 else shown


def _folded(kernels: list[str]) -> list[str]:
    """One line per kernel family (sorted, each once): ``name<…> ×N`` for template instances."""
    counts = _families(kernels)
    return [_family_line(f, c) for f, c in sorted(counts.items(), key=lambda kv: kv[0][0].lower())]


def _short(path: str, root: str) -> str:
    """A module's file relative to its package's path (a wheel's member name)."""
    if root and path.startswith(root) and len(path) > len(root):
        return path[len(root) :].lstrip("!/") or path
    return path


def _gpu_blocks(doc: JsonDict, gi: int, statuses: tuple[str, ...]) -> list[tuple[str, str, str, list[Any]]]:
    """(table word, package, file, rows) for one GPU."""
    blocks = []
    for t in doc["targets"]:
        for v in t["verdicts"]:
            if v["gpu"] != gi:
                continue
            pkg = f"{t['name']} {t['version']}" if t["version"] else t["name"]
            by_file: dict[str, list[Any]] = {}
            for r in v.get("without_code", ()):
                if r["status"] in statuses:
                    by_file.setdefault(_short(r["path"], t["path"]), []).append(r)
            blocks += [(v["status"], pkg, path, rows) for path, rows in by_file.items()]
    return blocks


def _hole_blocks(doc: JsonDict) -> list[JsonDict]:
    """Holes per (package, file) over all GPUs, the worst table word first: each kernel family once, with
    the GPUs it has no code for."""
    blocks: dict[tuple[str, str], JsonDict] = {}
    for gi, g in enumerate(doc["gpus"]):
        cc = str(g["compute_capability"])
        for word, pkg, path, rows in _gpu_blocks(doc, gi, ("fails",)):
            b = blocks.setdefault(
                (pkg, path), {"pkg": pkg, "path": path, "words": {}, "modules": {}, "families": {}, "unread": 0}
            )
            b["words"].setdefault(word, []).append(cc)
            b["modules"][cc] = len(rows)
            b["unread"] = max(b["unread"], sum(1 for r in rows if r["kernels"] is None))
            b["archs"] = b.get("archs", set()) | {a for r in rows for a in r["sass"] + r["ptx"]}
            for fam, count in _families([k for r in rows for k in r["kernels"] or ()]).items():
                seen = b["families"].setdefault(fam, [0, []])
                seen[0] = max(seen[0], count)
                seen[1].append(cc)
    worst = {key: min(action_rank(w) for w in b["words"]) for key, b in blocks.items()}
    return [blocks[k] for k in sorted(blocks, key=lambda k: (worst[k], k[0].lower(), k[1]))]


def _render_without_code(doc: JsonDict, console: Console) -> None:
    """--kernels: the holes of every package first, in the table's words, one line per kernel family (template
    instances folded, each name once, with the GPUs it lacks code for when not all of the block's); then the
    modules specialised for or gated to other GPUs, summarised (``--json`` lists every module and kernel)."""
    from rich.markup import escape

    holes = _hole_blocks(doc)
    info = list(_iter_information(doc))
    if holes:
        console.print("\n[bold]Kernels without code for the GPU[/bold] (--kernels; --json lists every kernel):")
    for b in holes:
        words = sorted(b["words"].items(), key=lambda kv: action_rank(kv[0]))
        on = "; ".join(f"{_cell(w)} on {', '.join(sorted(ccs, key=_cc_key))}" for w, ccs in words)
        every = [cc for _w, ccs in words for cc in ccs]
        counts = sorted(set(b["modules"].values()))
        modules = f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,}-{counts[-1]:,}"
        archs = ", ".join(sorted(b["archs"], key=_arch_key)) or "nothing"
        console.print(
            f"  {escape(b['pkg'])}: {escape(b['path'])}: {modules} module(s) without code ({on}); built for "
            f"{escape(archs)}",
            highlight=False,
        )
        for fam, (count, ccs) in sorted(b["families"].items(), key=lambda kv: kv[0][0].lower()):
            where = "" if len(ccs) == len(every) else f"  [dim](on {', '.join(sorted(ccs, key=_cc_key))})[/dim]"
            console.print(f"      {escape(_family_line(fam, count))}{where}", highlight=False)
        if b["unread"]:
            console.print(f"      [dim]({b['unread']:,} module(s) whose kernel names could not be read)[/dim]")
    if info:
        console.print("\n[bold]Code for other GPUs[/bold] (information, not failures; --json lists every kernel):")
    for line in info:
        console.print(f"  {escape(line)}", highlight=False)


def _iter_information(doc: JsonDict) -> Iterator[str]:
    """One line per (package, file, status, modules) specialised for or gated to other GPUs, naming the GPUs
    it concerns: a module is summarised once, however many GPUs it is information for."""
    lines: dict[tuple[str, str, str, tuple[int, ...]], tuple[list[str], list[Any]]] = {}
    for gi, g in enumerate(doc["gpus"]):
        for word, pkg, path, rows in _gpu_blocks(doc, gi, ("specialised", "gated")):
            del word
            for status in ("specialised", "gated"):
                these = [r for r in rows if r["status"] == status]
                if these:
                    key = (pkg, path, status, tuple(sorted(r["module"] for r in these)))
                    lines.setdefault(key, ([], these))[0].append(str(g["compute_capability"]))
    for (pkg, path, status, modules), (ccs, rows) in lines.items():
        archs = sorted({a for r in rows for a in r["sass"] + r["ptx"]}, key=_arch_key)
        families = _folded([k for r in rows for k in r["kernels"] or ()])
        more = f", {len(families) - 3:,} more" if len(families) > 3 else ""
        sample = f": {'; '.join(families[:3])}{more}" if families else ""
        yield (
            f"{pkg}: {path}: {len(modules):,} {status} module(s) ({', '.join(archs)}) on "
            f"{', '.join(sorted(set(ccs), key=_cc_key))}{sample}"
        )


def _cc_key(cc: str) -> tuple[int, ...]:
    return tuple(int(x) if x.isdigit() else 0 for x in cc.split("."))


def _arch_key(arch: str) -> tuple[int, str]:
    digits = "".join(c for c in arch if c.isdigit())
    return (int(digits) if digits else 0, arch)


def render_markdown(doc: JsonDict) -> str:
    """The matrix as a Markdown table to paste into an issue."""
    head = ["package", *(_gpu_label(g) for g in doc["gpus"]), "native on CC", "JIT on CC", "partial on CC"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for t in doc["targets"]:
        name = f"{t['name']} {t['version']}" if t["version"] else t["name"]
        cells = [v["status"] for v in t["verdicts"]]
        cov = t["coverage"]
        covs = [_ranges(cov.get(k, [])) for k in ("native", "jit", "partial")]
        lines.append("| " + " | ".join([name, *cells, *covs]) + " |")
    if doc["actions"]:
        lines += ["", "**What to do**", ""]
        for label, entries in iter_action_groups(doc):
            lines.append(f"- {label}")
            for sev, pkg, msgs in entries:
                if len(msgs) == 1:
                    lines.append(f"  - **{sev}** `{pkg}`: {msgs[0]}")
                    continue
                lines.append(f"  - **{sev}** `{pkg}`:")
                lines += [f"    - {m}" for m in msgs]
    fallbacks = list(iter_fallback_lines(doc))
    if fallbacks:
        lines += ["", "**Verdicts resting on a fallback**", "", *(f"- {line}" for line in fallbacks)]
    lines += ["", f"_cudafit {doc['cudafit_version']}, {CHECK_SCHEMA}_"]
    return "\n".join(lines) + "\n"


def _html_fallbacks(doc: JsonDict) -> str:
    lines = list(iter_fallback_lines(doc))
    if not lines:
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
    return f"<h2>Verdicts resting on a fallback</h2><ul>{items}</ul>"


#: What each verdict means, for the HTML legend and the tooltip of a cell that has no reason of its own.
STATUS_MEANINGS = {
    "native": "usable SASS for this GPU",
    "jit": "runs only by JIT-compiling PTX (first-run cost; __CUDA_ARCH__ checks take the lower arch's path)",
    "partial": "some modules are holes: no code for this GPU although the library launches them there",
    "fails": "no code this GPU can run",
    "none": "no loadable device code",
}
#: Reasons that describe other files of a package, never why a cell that runs is native or jit.
_NOT_FOR_RUNNING = ("no-device-code", "relocatable-only", "kernel-less-module")


def cell_title(verdict: JsonDict) -> str:
    """The tooltip of a grid cell: the reasons behind its status, its meaning when it has none."""
    reasons = verdict["reasons"]
    if verdict["status"] in ("native", "jit"):
        reasons = [r for r in reasons if r["code"] not in _NOT_FOR_RUNNING]
    counts = verdict.get("counts") or {}
    tally = ", ".join(f"{n:,} {k.replace('_', '-')}" for k, n in counts.items() if n)
    parts = [r["message"] for r in reasons] or [STATUS_MEANINGS.get(verdict["status"], verdict["status"])]
    return "; ".join(parts) + (f" (modules: {tally})" if tally else "")


def html_stamp() -> list[tuple[str, str]]:
    """Where and when a report was made: ``[("host", ...), ("date", ...)]``."""
    import datetime
    import platform

    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return [("host", platform.node() or "unknown"), ("date", when)]


def _html_context(doc: JsonDict) -> str:
    """Where and when the report was made and for which driver and GPUs: a report read later, elsewhere."""
    esc = html.escape
    machine = doc.get("machine") or {}
    driver = doc.get("driver_version") or machine.get("driver_version")
    gpus = ", ".join(_gpu_label(g) for g in doc["gpus"]) or "none (coverage only)"
    where = "probed on this host" if machine.get("status") == "ok" else "given with --gpu / --inventory"
    rows = [
        *html_stamp(),
        ("driver", driver or "none given (--driver VERSION judges the PTX JIT limit)"),
        ("GPUs", f"{gpus} ({where})" if doc["gpus"] else gpus),
    ]
    return "<table class='ctx'>" + "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows) + "</table>"


def html_legend() -> str:
    """The colour of each verdict and what it means (both HTML reports)."""
    esc = html.escape
    items = "".join(
        f'<tr><td style="background:{_HTML_COLORS[s]};color:#fff">{esc(s)}</td><td>{esc(m)}</td></tr>'
        for s, m in STATUS_MEANINGS.items()
    )
    return f"<h2>Legend</h2><table class='legend'>{items}</table>"


def render_html(doc: JsonDict) -> str:
    """A self-contained HTML page with the matrix as a colour grid, a legend, and where/when it was made."""
    esc = html.escape
    head = "".join(f"<th>{esc(_gpu_label(g))}</th>" for g in doc["gpus"])
    rows = []
    for t in doc["targets"]:
        name = f"{t['name']} {t['version']}" if t["version"] else t["name"]
        cells = "".join(
            f'<td style="background:{_HTML_COLORS.get(v["status"], "#fff")};color:#fff" '
            f'title="{esc(cell_title(v))}">{esc(v["status"])}</td>'
            for v in t["verdicts"]
        )
        cov = t["coverage"]
        covs = "".join(f"<td>{esc(_ranges(cov.get(k, [])))}</td>" for k in ("native", "jit", "partial"))
        rested = "<br><small>rests on a fallback</small>" if t.get("fallbacks") else ""
        rows.append(f"<tr><th title='{esc(t['path'])}'>{esc(name)}{rested}</th>{cells}{covs}</tr>")
    actions = "".join(
        f"<li><b>{esc(a['severity'])}</b> {esc(a['package'])} on {esc(_gpu_label(doc['gpus'][a['gpu']]))}: "
        f"{esc(a['message'])}</li>"
        for a in doc["actions"]
    )
    notes = "".join(f"<li>{esc(n)}</li>" for n in doc["notes"])
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>cudafit report</title><style>"
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:1em}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}table.ctx th{background:#f4f4f4}</style>"
        "</head><body>"
        f"<h1>cudafit report</h1>{_html_context(doc)}<p>status: <b>{esc(doc['status'])}</b></p>"
        f"<table><tr><th>package</th>{head}<th>native on CC</th><th>JIT on CC</th><th>partial on CC</th></tr>"
        f"{''.join(rows)}</table>{html_legend()}"
        f"<h2>What to do</h2><ul>{actions or '<li>nothing</li>'}</ul>"
        f"{_html_fallbacks(doc)}"
        + (f"<h2>Notes</h2><ul>{notes}</ul>" if notes else "")
        + f"<p><small>cudafit {esc(doc['cudafit_version'])}, {CHECK_SCHEMA}</small></p></body></html>\n"
    )
