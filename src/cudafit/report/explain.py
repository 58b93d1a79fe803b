"""Rendering of ``explain``: the ``cudafit.explain/1`` findings as text and Markdown, and the catalogue.

Pure functions of the document (or of the catalogue's rows); nothing is decided here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cudafit.report.formats import Renderers

if TYPE_CHECKING:
    from rich.console import Console

    from cudafit.explain.classify import Finding
    from cudafit.model import JsonDict

__all__ = [
    "EXPLAIN_SCHEMA",
    "explain_document",
    "explain_renderers",
    "render_catalogue",
    "render_markdown",
    "render_text",
]

EXPLAIN_SCHEMA = "cudafit.explain/1"


def explain_document(findings: Sequence[Finding]) -> JsonDict:
    """The ``cudafit.explain/1`` document: the findings, most likely first."""
    return {"schema": EXPLAIN_SCHEMA, "findings": [f.to_dict() for f in findings]}


def _fact(value: object) -> str:
    """A fact as short text: error dicts as "209 cudaErrorNoKernelImageForDevice", lists comma-joined."""
    if isinstance(value, list):
        return ", ".join(_fact(v) for v in value)
    if isinstance(value, dict):
        if "kernels" in value and "path" in value:  # a kernel match: where it is and what it was built for
            return f"{value['path']} module {value['module']} ({' '.join(value['archs'])}): {value['kernels'][0]}"
        if "code" in value and "name" in value:
            return f"{value['code']} {value['name']}"
        if "path" in value:  # a source file: "path/to/norm.cuh:113"
            return f"{value['path']}:{value['line']}" if "line" in value else str(value["path"])
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return str(value)


def render_markdown(doc: JsonDict) -> str:
    """The findings as Markdown for an issue: one section per finding, evidence quoted."""
    out: list[str] = ["## cudafit explain\n"]
    for i, f in enumerate(doc["findings"]):
        lead = "Most likely: " if i == 0 and len(doc["findings"]) > 1 else ""
        out.append(f"### {lead}{f['title']} (`{f['category']}`, confidence {f['confidence']:.2f})\n")
        lines = f["evidence"].get("lines", [])
        if lines:
            out.append("```")
            out.extend(lines)
            out.append("```")
        facts = {k: v for k, v in f["evidence"].items() if k != "lines"}
        if facts:
            out.append("Facts: " + "; ".join(f"{k}: `{_fact(v)}`" for k, v in facts.items()))
            out.append("")
        out.append(f"**Cause:** {f['cause']}\n")
        out.extend(f"- {x}" for x in f["fixes"])
        out.append("")
    return "\n".join(out) + "\n"


def render_text(doc: JsonDict, console: Console) -> None:
    """Each finding: title and confidence, up to three evidence lines, the facts, the cause and the fixes."""
    from rich.markup import escape
    from rich.table import Table

    findings = doc["findings"]
    for i, f in enumerate(findings):
        lead = "Most likely: " if i == 0 and len(findings) > 1 else ""
        colour = "yellow" if f["category"] == "unknown" else "red" if i == 0 else "magenta"
        console.print(
            f"[bold {colour}]{escape(lead + f['title'])}[/] [dim]({f['category']}, "
            f"confidence {f['confidence']:.2f})[/dim]",
            highlight=False,
        )
        for line in f["evidence"].get("lines", [])[:3]:
            console.print(f"  [dim]> {escape(line)}[/dim]", highlight=False)
        facts = {k: v for k, v in f["evidence"].items() if k != "lines"}
        if facts:
            table = Table(show_header=False, box=None, padding=(0, 1, 0, 2), expand=False)
            for k, v in facts.items():
                table.add_row(f"[dim]{escape(k)}[/dim]", escape(_fact(v)))
            console.print(table)
        console.print(f"  [bold]cause:[/bold] {escape(f['cause'])}", highlight=False)
        for n, x in enumerate(f["fixes"], 1):
            console.print(f"  [bold green]fix {n}:[/bold green] {escape(x)}", highlight=False)
        console.print()


def explain_renderers() -> Renderers:
    """The writers ``explain`` offers: text and Markdown (JSON is the document itself)."""
    return Renderers(render_text, render_markdown)


def render_catalogue(rows: Sequence[tuple[str, str, str]], *, as_json: bool) -> None:
    """``--catalogue``: each category, then its sources and patterns (or one JSON row per pattern)."""
    from cudafit.report.console import dump_json

    if as_json:
        dump_json([{"category": c, "source": s, "pattern": p} for c, s, p in rows])
        return
    for cat in dict.fromkeys(c for c, _s, _p in rows):
        print(cat)
        for _c, src, pattern in (r for r in rows if r[0] == cat):
            print(f"  {src}\n      {pattern}")
