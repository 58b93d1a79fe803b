"""Rendering of ``plan``: the ``cudafit.plan/1`` document as text and Markdown.

Pure functions of the document (:meth:`cudafit.plan.Plan.to_dict`); nothing is decided here.
:func:`arch_settings` is shared with ``audit``'s fix, which spells the same arch list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cudafit.report.formats import Renderers

if TYPE_CHECKING:
    from rich.console import Console

    from cudafit.model import JsonDict

__all__ = ["arch_settings", "plan_renderers", "render_markdown", "render_text"]


def arch_settings(doc: JsonDict) -> tuple[tuple[str, str], ...]:
    """(setting, value) of an arch list in each build system's spelling: the one order plan and audit print."""
    return (
        ("TORCH_CUDA_ARCH_LIST", doc["torch_cuda_arch_list"]),
        ("CMAKE_CUDA_ARCHITECTURES", doc["cmake_cuda_architectures"]),
        ("nvcc", " ".join(doc["nvcc_flags"])),
    )


def render_markdown(doc: JsonDict) -> str:
    """The plan as Markdown: the three settings in a code block, then the reasons and problems."""
    gpus = ", ".join(f"{g['name']} ({g['compute_capability']})" for g in doc["gpus"])
    out = [f"## cudafit plan: {gpus}\n", f"Checked against {doc['toolkit']}.\n", "```sh"]
    out.append(f'export TORCH_CUDA_ARCH_LIST="{doc["torch_cuda_arch_list"]}"')
    out.append(f'cmake -DCMAKE_CUDA_ARCHITECTURES="{doc["cmake_cuda_architectures"]}" ...')
    out.append("nvcc " + " ".join(doc["nvcc_flags"]) + " ...")
    out.append("```\n")
    out.extend(f"- {x}" for x in doc["explanations"])
    if doc["problems"]:
        out.append("\n**Problems:**\n")
        out.extend(f"- {x}" for x in doc["problems"])
    return "\n".join(out) + "\n"


def render_text(doc: JsonDict, console: Console) -> None:
    """The settings as a table (an empty one in red), the export line, the toolkit, reasons and problems."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="cudafit plan", title_justify="left")
    table.add_column("setting")
    table.add_column("value", overflow="fold")
    for setting, value in arch_settings(doc):
        table.add_row(setting, escape(value) or "[red](none)[/red]")
    console.print(table)
    if doc["torch_cuda_arch_list"]:
        console.print(f'\nexport TORCH_CUDA_ARCH_LIST="{escape(doc["torch_cuda_arch_list"])}"', highlight=False)
    console.print(f"\n[dim]checked against {escape(doc['toolkit'])}[/dim]", highlight=False)
    for line in doc["explanations"]:
        console.print(f"  - {escape(line)}", highlight=False)
    for problem in doc["problems"]:
        console.print(f"[bold red]problem:[/bold red] {escape(problem)}", highlight=False)


def plan_renderers() -> Renderers:
    """The writers ``plan`` offers: text and Markdown (JSON is the document itself)."""
    return Renderers(render_text, render_markdown)
