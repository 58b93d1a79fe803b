"""``cudafit cache``'s text: what was removed, or each entry of the cache directory with its size and kind.

Rendered from the ``cudafit.cache/1`` document only (the command builds it), as every other command's text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cudafit.report.formats import Renderers

if TYPE_CHECKING:
    from rich.console import Console

    from cudafit.model import JsonDict

__all__ = ["cache_renderers", "render_text"]


def cache_renderers() -> Renderers:
    """The formats ``cache`` offers: its text, and JSON (the document itself)."""
    return Renderers(render_text)


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def render_text(doc: JsonDict, console: Console) -> None:
    """What was removed, or each entry with its size, file count and kind, and the total."""
    out, directory, entries, total = console.file, doc["directory"], doc["entries"], doc["total_bytes"]
    if doc["action"] == "clear":
        n = len(entries)
        out.write(f"removed {n} entr{'y' if n == 1 else 'ies'} of {directory}, {_human(total)}\n")
        return
    if not entries:
        out.write(f"{directory}: empty\n")
        return
    out.write(f"{directory}\n")
    width = max(len(e["name"]) for e in entries)
    for e in entries:
        stale = "" if e["current"] else " (another cudafit version: never read; clear removes it)"
        out.write(
            f"  {e['name']:<{width}}  {_human(e['bytes']):>9}  {e['files']:>6} file(s)  {e['kind']}: "
            f"{e['description']}{stale}\n"
        )
    out.write(f"  {'total':<{width}}  {_human(total):>9}\n")
