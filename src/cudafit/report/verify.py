"""Rendering of ``verify``: prediction beside the driver's answer, disagreements first, and ``cudafit.verify/1``.

Pure functions of a :class:`~cudafit.verify.VerifyResult` (or of the document built from it); nothing
is decided here except the order things are shown in.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from cudafit import __version__
from cudafit.report.formats import Renderers
from cudafit.verify.cuda_errors import result_code, short_name
from cudafit.verify.plan import SKIP_MEANINGS

if TYPE_CHECKING:
    from rich.console import Console

    from cudafit.model import JsonDict
    from cudafit.verify import Check, ModuleResult, VerifyResult
    from cudafit.verify.plan import ModuleLoad

__all__ = [
    "ROLE_NOTE",
    "VERIFY_SCHEMA",
    "error_document",
    "render_markdown",
    "render_text",
    "verify_document",
    "verify_exit_code",
    "verify_renderers",
]

VERIFY_SCHEMA = "cudafit.verify/1"
ROLE_NOTE = (
    "Modules without code for a GPU (holes, gated, specialised, kernel-less) are expected to be refused "
    "(NO_BINARY_FOR_GPU): that checks the binary facts; whether a library launches them there is a claim "
    "a load cannot test."
)
#: Show the per-module table without ``--modules`` up to this many modules.
MODULE_TABLE_LIMIT = 60
#: Loads without an answer listed in text (every disagreement is always listed).
NO_ANSWER_LIMIT = 20
_MARK = {"agree": "ok", "disagree": "DISAGREES", "no-answer": "no answer", "skipped": "skipped"}
_COLOR = {"agree": "green", "disagree": "red", "no-answer": "yellow", "skipped": "dim"}


def _gpu_dict(d: Any) -> JsonDict:
    return d.to_dict() if hasattr(d, "to_dict") else dict(d)


def _check_dict(gi: int, c: Check) -> JsonDict:
    """One ``modules[].checks[]`` row: the prediction for GPU ``gi`` beside the driver's answer."""
    e, a = c.expectation, c.answer
    driver = None
    if a is not None:
        driver = {
            "outcome": a.outcome,
            "code": a.code,
            "name": a.name if a.outcome == "answer" else None,
            "seconds": a.seconds,
            "jit_ms": a.jit_ms,
            "message": a.message,
        }
    return {
        "gpu": gi,
        "predicted": {"status": e.status.value, "reason": e.reason},
        "expected": e.expected,
        "serves": e.serves,
        "loaded": e.load,
        "skip": e.skip,
        "verdict": c.verdict,
        "driver": driver,
    }


def _disagreement(k: int, gi: int, t: ModuleLoad, c: Check) -> JsonDict:
    """One ``disagreements[]`` row: module ``k`` on GPU ``gi``, where the driver answered otherwise."""
    e, a = c.expectation, c.answer
    return {
        "module": k,
        "gpu": gi,
        "path": t.path,
        "index": t.index,
        "sass": list(t.sass),
        "ptx": list(t.ptx),
        "predicted": e.status.value,
        "reason": e.reason,
        "expected": e.expected,
        "driver": a.name if a is not None else None,
    }


def _module_dict(m: ModuleResult) -> JsonDict:
    """One ``modules[]`` row: where the module is, its archs, and its check on each GPU."""
    t = m.module
    return {
        "package": t.package,
        "version": t.version,
        "path": t.path,
        "module": t.index,
        "section": t.section,
        "kind": t.kind,
        "offset": t.offset,
        "size": t.size,
        "sass": list(t.sass),
        "ptx": list(t.ptx),
        "checks": [_check_dict(gi, c) for gi, c in enumerate(m.checks)],
    }


def verify_document(result: VerifyResult) -> JsonDict:
    """The ``cudafit.verify/1`` document of a :class:`~cudafit.verify.VerifyResult`."""
    modules = [_module_dict(m) for m in result.modules]
    disagreements = [
        _disagreement(k, gi, m.module, c)
        for k, m in enumerate(result.modules)
        for gi, c in enumerate(m.checks)
        if c.verdict == "disagree"
    ]
    counts = [{"gpu": gi, **result.counts(gi)} for gi in range(len(result.gpus))]
    totals = {k: sum(c[k] for c in counts) for k in ("loaded", "agree", "disagree", "no_answer", "skipped")}
    if totals["disagree"]:
        status = "disagree"
    elif totals["no_answer"]:
        status = "incomplete"
    else:
        status = "agree"
    return {
        "schema": VERIFY_SCHEMA,
        "cudafit_version": __version__,
        "status": status,
        "error": None,
        "backend": result.backend,
        "driver_version": result.driver_version,
        "cuda_version": result.cuda_version,
        "jit": result.jit,
        "jit_allowed": result.jit_allowed,
        "timeout_s": result.timeout,
        "gpus": [_gpu_dict(d) for d in result.gpus],
        "counts": counts,
        "totals": totals,
        "disagreements": disagreements,
        "modules": modules,
        "unreadable": [{"path": p, "error": e} for p, e in result.unreadable],
        "notes": list(result.notes),
    }


def error_document(kind: str, message: str, *, jit: bool = False, timeout: float = 60.0) -> JsonDict:
    """The document when nothing could be verified (no driver, no GPU...): exit status 3."""
    return {
        "schema": VERIFY_SCHEMA,
        "cudafit_version": __version__,
        "status": "could-not-verify",
        "error": {"kind": kind, "message": message},
        "backend": None,
        "driver_version": None,
        "cuda_version": None,
        "jit": jit,
        "jit_allowed": True,
        "timeout_s": timeout,
        "gpus": [],
        "counts": [],
        "totals": {"loaded": 0, "agree": 0, "disagree": 0, "no_answer": 0, "skipped": 0},
        "disagreements": [],
        "modules": [],
        "unreadable": [],
        "notes": [],
    }


def verify_exit_code(doc: JsonDict) -> int:
    """0 every loaded module agreed; 1 some disagreed or got no answer; 3 nothing could be verified."""
    return {"agree": 0, "disagree": 1, "incomplete": 1}.get(doc["status"], 3)


def _gpu_label(g: JsonDict) -> str:
    return f"cuda:{g['ordinal']} {g['name']} ({g['compute_capability']})"


def _answer(name: str | None) -> str:
    """``NO_BINARY_FOR_GPU (209)``; ``SUCCESS`` for success."""
    if not name:
        return "-"
    code = result_code(name)
    short = short_name(name)
    return short if code in (0, None) else f"{short} ({code})"


def _where(m: JsonDict) -> str:
    archs = ", ".join(m["sass"] + m["ptx"]) or "-"
    return f"{m['path']} module {m['module']} [{archs}]"


def _driver_text(c: JsonDict) -> str:
    d = c["driver"]
    if d is None:
        return "not loaded"
    if d["outcome"] == "answer":
        return _answer(d["name"])
    return f"{d['outcome']}" + (f" ({d['message']})" if d["message"] else "")


def iter_no_answers(doc: JsonDict) -> Iterator[tuple[JsonDict, JsonDict]]:
    """(module, check) of every load that got no answer (timeout, crash, unreadable, not recorded)."""
    for m in doc["modules"]:
        for c in m["checks"]:
            if c["verdict"] == "no-answer":
                yield m, c


def iter_jit_costs(doc: JsonDict) -> Iterator[tuple[JsonDict, JsonDict]]:
    """(module, check) of every PTX-only load (``--jit``), slowest first: what a first launch pays."""
    rows = [
        (m, c)
        for m in doc["modules"]
        for c in m["checks"]
        if c["serves"] == "ptx" and c["driver"] is not None and c["driver"]["outcome"] == "answer"
    ]
    rows.sort(key=lambda mc: -(mc[1]["driver"]["jit_ms"] or (mc[1]["driver"]["seconds"] or 0) * 1000))
    yield from rows


def _cell(c: JsonDict) -> str:
    pred = c["predicted"]["status"]
    if c["verdict"] == "skipped":
        return f"{pred}, not loaded"
    return f"{pred} -> {_driver_text(c)} {_MARK[c['verdict']]}"


def render_text(doc: JsonDict, console: Console, *, modules: bool = False) -> None:
    """Disagreements first, then the counts per GPU and (small runs or ``--modules``) every module."""
    from rich.markup import escape

    if doc["error"]:
        console.print(f"[red]could not verify[/red]: {escape(doc['error']['message'])}")
        return
    _render_header(doc, console)
    _render_disagreements(doc, console)
    _render_no_answers(doc, console)
    _render_counts(doc, console)
    if modules or len(doc["modules"]) <= MODULE_TABLE_LIMIT:
        _render_modules(doc, console)
    elif doc["modules"]:
        console.print(f"\n{len(doc['modules'])} modules: --modules lists each one (--json has them all).")
    if any(c["expected"] == "CUDA_ERROR_NO_BINARY_FOR_GPU" for m in doc["modules"] for c in m["checks"]):
        console.print(f"[dim]{ROLE_NOTE}[/dim]")
    skipped: dict[str, int] = {}
    for m in doc["modules"]:
        for c in m["checks"]:
            if c["skip"]:
                skipped[c["skip"]] = skipped.get(c["skip"], 0) + 1
    for why, n in skipped.items():
        console.print(f"not loaded: {n} module-GPU pair(s): {SKIP_MEANINGS.get(why, why)}")
    _render_jit_costs(doc, console)
    for u in doc["unreadable"]:
        console.print(f"[red]unreadable[/red] {escape(u['path'])}: {escape(u['error'])}")
    for n in doc["notes"]:
        console.print(f"note: {escape(n)}")
    _render_summary(doc, console)


def _render_header(doc: JsonDict, console: Console) -> None:
    from rich.markup import escape

    drv = doc["driver_version"] or "version unknown"
    cuda = f" (CUDA {doc['cuda_version']})" if doc["cuda_version"] else ""
    console.print(
        f"[bold]Driver check[/bold]: cudafit's predictions beside the driver's answers (cuModuleLoadDataEx), "
        f"driver {escape(drv)}{escape(cuda)}, {len(doc['gpus'])} GPU(s), {doc['timeout_s']:g} s per module"
        + ("" if doc["backend"] != "replay" else " [yellow](replayed answers, not this machine's driver)[/yellow]")
    )


def _render_disagreements(doc: JsonDict, console: Console) -> None:
    from rich.markup import escape

    dis = doc["disagreements"]
    if dis:
        console.print(f"\n[bold red]Disagreements[/bold red] ({len(dis)}):")
    for d in dis:
        g = doc["gpus"][d["gpu"]]
        archs = ", ".join(d["sass"] + d["ptx"]) or "-"
        where = escape(f"{d['path']} module {d['index']} [{archs}]")
        console.print(
            f"  {escape(_gpu_label(g))}: {where}\n"
            f"    predicted {d['predicted']} ({d['reason']}), expected {_answer(d['expected'])}; "
            f"driver: [red]{_answer(d['driver'])}[/red]",
            highlight=False,
        )


def _render_no_answers(doc: JsonDict, console: Console) -> None:
    from rich.markup import escape

    missing = list(iter_no_answers(doc))
    if not missing:
        return
    console.print(f"\n[bold yellow]No answer[/bold yellow] ({len(missing)}):")
    for m, c in missing[:NO_ANSWER_LIMIT]:
        console.print(
            f"  {escape(_gpu_label(doc['gpus'][c['gpu']]))}: {escape(_where(m))}: {escape(_driver_text(c))}",
            highlight=False,
        )
    if len(missing) > NO_ANSWER_LIMIT:
        console.print(f"  ... {len(missing) - NO_ANSWER_LIMIT} more (--json lists all)")


def _render_counts(doc: JsonDict, console: Console) -> None:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=None, box=None, pad_edge=False, show_edge=False)
    for col in ("GPU", "loaded", "agree", "disagree", "no answer", "not loaded"):
        table.add_column(col, justify="left" if col == "GPU" else "right")
    for c in doc["counts"]:
        table.add_row(
            escape(_gpu_label(doc["gpus"][c["gpu"]])),
            str(c["loaded"]),
            f"[green]{c['agree']}[/green]",
            f"[red]{c['disagree']}[/red]" if c["disagree"] else "0",
            str(c["no_answer"]),
            str(c["skipped"]),
        )
    console.print()
    console.print(table)


def _render_jit_costs(doc: JsonDict, console: Console) -> None:
    from rich.markup import escape

    jit = list(iter_jit_costs(doc))
    if not jit:
        return
    console.print("\n[bold]JIT cost[/bold] (what a first launch pays, JIT cache off):")
    for m, c in jit[:20]:
        d = c["driver"]
        ms = d["jit_ms"] if d["jit_ms"] is not None else (d["seconds"] or 0) * 1000
        console.print(
            f"  {ms:10.1f} ms  {escape(_gpu_label(doc['gpus'][c['gpu']]))}: {escape(_where(m))}", highlight=False
        )
    if len(jit) > 20:
        console.print(f"  ... {len(jit) - 20} more (--json lists all)")


def _render_summary(doc: JsonDict, console: Console) -> None:
    t = doc["totals"]
    if not t["loaded"]:
        console.print("\nnothing was loaded: no module to check on these GPUs")
        return
    verdict = {
        "agree": "[green]all agree[/green]",
        "disagree": "[red]DISAGREE[/red]",
        "incomplete": "[yellow]incomplete[/yellow]",
    }
    console.print(
        f"\n{verdict[doc['status']]}: {t['agree']} of {t['loaded']} loads agree with the prediction"
        + (f", {t['disagree']} disagree" if t["disagree"] else "")
        + (f", {t['no_answer']} without an answer" if t["no_answer"] else "")
    )


def _render_modules(doc: JsonDict, console: Console) -> None:
    from rich.markup import escape
    from rich.table import Table

    if not doc["modules"]:
        console.print("\nNo CUDA module found to load.")
        return
    console.print("\n[bold]Modules[/bold] (per GPU: predicted status -> the driver's answer):")
    table = Table(box=None, pad_edge=False, show_edge=False)
    table.add_column("file")
    table.add_column("module", justify="right")
    table.add_column("archs")
    for g in doc["gpus"]:
        table.add_column(escape(_gpu_label(g)))
    for m in doc["modules"]:
        cells = [f"[{_COLOR[c['verdict']]}]{escape(_cell(c))}[/]" for c in m["checks"]]
        table.add_row(escape(m["path"]), str(m["module"]), escape(", ".join(m["sass"] + m["ptx"]) or "-"), *cells)
    console.print(table)


def render_markdown(doc: JsonDict) -> str:
    """The report as Markdown (paste into an issue): disagreements, counts, every module."""
    if doc["error"]:
        return f"**cudafit verify could not verify**: {doc['error']['message']}\n"
    gpus = doc["gpus"]
    lines = [
        f"**cudafit verify** — driver {doc['driver_version'] or 'unknown'}"
        + (f" (CUDA {doc['cuda_version']})" if doc["cuda_version"] else "")
        + f", status **{doc['status']}**",
        "",
    ]
    if doc["disagreements"]:
        lines += ["**Disagreements**", ""]
        for d in doc["disagreements"]:
            archs = ", ".join(d["sass"] + d["ptx"]) or "-"
            lines.append(
                f"- {_gpu_label(gpus[d['gpu']])}: `{d['path']}` module {d['index']} ({archs}): predicted "
                f"{d['predicted']} (`{d['reason']}`), expected `{d['expected']}`, driver `{d['driver']}`"
            )
        lines.append("")
    missing = list(iter_no_answers(doc))
    if missing:
        lines += ["**No answer**", ""]
        lines += [f"- {_gpu_label(gpus[c['gpu']])}: `{_where(m)}`: {_driver_text(c)}" for m, c in missing]
        lines.append("")
    lines += ["| GPU | loaded | agree | disagree | no answer | not loaded |", "|---|---|---|---|---|---|"]
    for c in doc["counts"]:
        lines.append(
            f"| {_gpu_label(gpus[c['gpu']])} | {c['loaded']} | {c['agree']} | {c['disagree']} | "
            f"{c['no_answer']} | {c['skipped']} |"
        )
    if doc["modules"]:
        head = ["file", "module", "archs", *(_gpu_label(g) for g in gpus)]
        lines += ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for m in doc["modules"]:
            cells = [_cell(c) for c in m["checks"]]
            lines.append(
                f"| `{m['path']}` | {m['module']} | {', '.join(m['sass'] + m['ptx']) or '-'} | "
                + " | ".join(cells)
                + " |"
            )
    lines += ["", f"_{ROLE_NOTE}_", "", f"_cudafit {doc['cudafit_version']}, {VERIFY_SCHEMA}_"]
    return "\n".join(lines) + "\n"


def verify_renderers(*, modules: bool = False) -> Renderers:
    """How ``verify`` (and ``doctor --verify``) writes its document (``modules``: every module, not only
    disagreements and counts)."""
    return Renderers(functools.partial(render_text, modules=modules), render_markdown)
