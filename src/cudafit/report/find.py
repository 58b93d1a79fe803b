"""Rendering of ``find``: the ``cudafit.find/1`` document and its text form.

Pure functions of a :class:`~cudafit.find.FindResult`; nothing is decided here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cudafit import __version__
from cudafit.report.matrix import STATUS_COLORS
from cudafit.rules.ecosystem import load_ecosystem

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from cudafit.find import CandidateResult, FindResult
    from cudafit.model import JsonDict

__all__ = ["FIND_SCHEMA", "find_document", "render_text"]

FIND_SCHEMA = "cudafit.find/1"


def _candidate(c: CandidateResult) -> JsonDict:
    return {
        "project": c.file.project,
        "version": c.file.version,
        "filename": c.file.filename,
        "url": c.file.url,
        "index_url": c.file.index_url,
        "sha256": c.file.sha256,
        "size": c.file.size,
        "variant": c.variant,
        "cuda_runtime": c.cuda_runtime,
        "status": c.status,
        "verdicts": list(c.verdicts),
        "members": [m.to_dict() for m in c.members],
        "bytes_fetched": c.bytes_fetched,
        "full_download": c.full_download,
        "cached": c.cached,
        "decided_by": c.decided_by,
        "error": c.error,
        "cuda_pins": list(c.cuda_pins),
    }


def find_document(result: FindResult) -> JsonDict:
    """The ``cudafit.find/1`` document."""
    from cudafit.find import install_lines

    judged = sum(c.file.size or 0 for c in result.candidates)
    return {
        "schema": FIND_SCHEMA,
        "cudafit_version": __version__,
        "requirement": result.requirement,
        "project": result.project,
        "gpus": [{"name": g.name, "compute_capability": str(g.compute_capability)} for g in result.gpus],
        "driver_version": str(result.driver) if result.driver else None,
        "wheel_tag": result.tags[0] if result.tags else None,
        "indexes": [
            {"url": i.url, "variant": i.variant, "candidates": i.files, "error": i.error, "note": i.note}
            for i in result.indexes
        ],
        "candidates": [_candidate(c) for c in result.candidates],
        "answer": _candidate(result.answer) if result.answer is not None else None,
        "install": install_lines(result),
        "jit_newer": [
            f"{c.file.project} {c.file.version}" + (" (at best: reading stopped there)" if c.decided_by else "")
            for c in result.jit_newer
        ],
        "way_out": list(result.way_out),
        "uv_auto": result.uv_auto,
        "dependencies": [_candidate(c) for c in result.deps],
        "totals": {
            "listed": result.listed,
            "listed_size": result.listed_size,
            "judged": len(result.candidates),
            "judged_size": judged,
            "bytes_fetched": result.bytes_fetched,
        },
        "notes": list(result.notes),
    }


def _mb(n: int | None) -> str:
    if n is None:
        return "?"
    return f"{n / 1e6:,.1f} MB" if n < 1e9 else f"{n / 1e9:,.2f} GB"


def render_text(doc: JsonDict, console: Console) -> None:
    """Candidates, the answer, the install commands, uv's auto and the way out."""
    from rich.markup import escape

    head = ", ".join(f"{g['name']} ({g['compute_capability']})" for g in doc["gpus"])
    driver = f", driver {doc['driver_version']}" if doc["driver_version"] else ", driver unknown"
    console.print(f"{escape(doc['requirement'])} on {escape(head)}{driver}, wheels for {doc['wheel_tag']}")
    console.print(_candidates_table(doc))
    _render_indexes(doc, console)
    console.print()
    _render_answer(doc, head, console)
    uv = doc["uv_auto"]
    if uv and uv.get("variant"):
        verdict = {True: "can run here", False: "[red]cannot run here[/]", None: "not judged"}[uv["runs"]]
        auto = f"uv --torch-backend=auto (driver {doc['driver_version']}) picks {uv['variant']}"
        console.print(f"{auto}: {verdict} ({escape(uv['why'])})")
    for d in doc["dependencies"]:
        why = escape(d["error"] or d["decided_by"] or "")
        console.print(f"dependency {escape(d['project'])} {d['version']}: {d['status']} {why}")
    t = doc["totals"]
    console.print(
        f"read {_mb(t['bytes_fetched'])} of {_mb(t['judged_size'])} judged ({t['judged']} wheels; "
        f"{t['listed']} candidates listed, {_mb(t['listed_size'])})"
    )
    for note in doc["notes"]:
        console.print(f"note: {escape(note)}")


def _candidates_table(doc: JsonDict) -> Table:
    """One row per candidate judged: where it comes from, its status on each GPU, what was read, and why."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for col in ("candidate", "index", "CUDA", *(f"{g['name']} {g['compute_capability']}" for g in doc["gpus"])):
        table.add_column(col)
    table.add_column("read", justify="right")
    table.add_column("why")
    for c in doc["candidates"]:
        by_gpu = {v["gpu"]: v for v in c["verdicts"]}
        cells = []
        for i in range(len(doc["gpus"])):
            status = by_gpu[i]["status"] if i in by_gpu else c["status"]
            cells.append(f"[{STATUS_COLORS.get(status, 'white')}]{status}[/]")
        read = "cached" if c["cached"] else f"{_mb(c['bytes_fetched'])} of {_mb(c['size'])}"
        reasons = [r["message"] for v in c["verdicts"] if v["status"] != "native" for r in v["reasons"]]
        why = c["error"] or (reasons[0] if reasons else c["decided_by"] or "")
        table.add_row(
            escape(f"{c['project']} {c['version']}"),
            escape(_index_label(c)),
            escape(c["cuda_runtime"] or "-"),
            *cells,
            read,
            escape(why[:100]),
        )
    return table


def _render_indexes(doc: JsonDict, console: Console) -> None:
    """The indexes' notes, and those not read (one line per error, the variants it hit)."""
    from rich.markup import escape

    failed: dict[str, list[str]] = {}
    for i in doc["indexes"]:
        if i["error"]:
            page = f"{i['url'].rstrip('/')}/{doc['project']}/"
            failed.setdefault(i["error"].replace(page, "its index page"), []).append(i["variant"] or _short(i["url"]))
        elif i["note"]:
            console.print(f"note: {escape(i['note'])}")
    for message, where in failed.items():
        console.print(f"[yellow]not read[/] ({escape(', '.join(where))}): {escape(message)}")


def _render_answer(doc: JsonDict, head: str, console: Console) -> None:
    """The answer with its install commands, or why there is none and the way out."""
    from rich.markup import escape

    ans = doc["answer"]
    if ans is None:
        n = len(doc["candidates"])
        console.print(f"[bold]No published build runs natively on {escape(head)}[/] ({n} candidates judged)")
        for line in doc["way_out"]:
            console.print(f"  {escape(line)}")
        return
    source = escape(_index_label(ans) + (f", CUDA {ans['cuda_runtime']}" if ans["cuda_runtime"] else ""))
    name = escape(f"{ans['project']} {ans['version']}")
    console.print(f"[bold]Answer[/]: {name} ({source}) runs natively on {escape(head)}")
    if doc["jit_newer"]:
        console.print(f"  newer releases run only by JIT compilation of PTX: {escape(', '.join(doc['jit_newer']))}")
    for tool, line in doc["install"].items():
        label = {"pip": "pip", "uv": "uv", "uv_project": "uv project"}.get(tool, tool)
        console.print(f"  {label}: {escape(line)}")


def _index_label(c: JsonDict) -> str:
    """``pypi`` for PyPI, the variant's name for a PyTorch index, else the index's host and path."""
    url = c["index_url"].rstrip("/")
    if url.endswith("pypi.org/simple"):
        return "pypi"
    if c.get("variant") and load_ecosystem().is_pytorch_index(url):
        return f"pytorch {c['variant']}"
    return _short(url)


def _short(url: str) -> str:
    return url.replace("https://", "").rstrip("/")
