"""Rendering of fleets: the inventory (``cudafit.fleet/1``) and the per-class verdict matrix
(``cudafit.fleet-check/1``: ``check``/``doctor --fleet``) as a rich table, Markdown and HTML.

Pure functions of a :class:`~cudafit.fleet.inventory.FleetInventory` or
:class:`~cudafit.fleet.judge.FleetJudgement`.  Each class's verdicts and fixes come from
:func:`cudafit.report.check.check_document` on that class's analysis: the same text one machine of
that class would get from ``check``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cudafit import __version__
from cudafit.actions import action_rank
from cudafit.model import JsonDict
from cudafit.report.check import _HTML_COLORS, _cell, cell_title, html_legend, html_stamp  # as one machine's
from cudafit.report.console import gpu_title, plural
from cudafit.report.formats import Renderers
from cudafit.rules.status import PACKAGE_STATUSES, Status

if TYPE_CHECKING:
    from rich.console import Console

    from cudafit.fleet.judge import ClassJudgement, FleetJudgement

__all__ = [
    "FLEET_CHECK_SCHEMA",
    "fleet_check_document",
    "fleet_renderers",
    "render_fleet_html",
    "render_fleet_markdown",
    "render_fleet_text",
    "render_inventory_text",
    "to_yaml",
]

FLEET_CHECK_SCHEMA = "cudafit.fleet-check/1"
#: The classes grouped by their status, in the order of :data:`~cudafit.rules.status.PACKAGE_STATUSES` (best
#: first) but ``none`` last: a class without device code is the least interesting line of the summary.
_CLASS_GROUPS = (*(s for s in PACKAGE_STATUSES if s not in (Status.NONE, Status.UNKNOWN)), Status.NONE)
# Printed after the status word itself ("fails on: ..."), so the label never repeats it.
_GROUP_LABELS = {
    Status.NATIVE: "on",
    Status.JIT: "(only by PTX JIT) on",
    Status.PARTIAL: "(some kernels fail) on",
    Status.FAILS: "on",
    Status.NONE: "(no device code) on",
}
_NOT_JUDGED_IS_PROBLEM = ("unknown-gpu", "invalid", "timeout", "unreachable")


def _gpus_text(gpus: list[JsonDict]) -> str:
    parts = []
    for g in gpus:
        name = g["name"]
        for prefix in ("NVIDIA-", "NVIDIA ", "Tesla-", "Tesla "):
            if name.startswith(prefix):
                name = name[len(prefix) :]
        parts.append(f"{name} ({g['compute_capability']})")
    return " + ".join(parts)


def fleet_check_document(judgement: FleetJudgement, *, placement: JsonDict | None = None) -> JsonDict:
    """``cudafit.fleet-check/1``: targets once, then each class with its verdicts and driver floor, and the classes
    grouped by status (the ``pools`` key)."""
    from cudafit.report.check import check_document

    inv = judgement.inventory
    docs = [(cj, check_document(cj.analysis)) for cj in judgement.classes]
    keep = ("name", "version", "path", "runtime_compiled", "files", "unreadable", "inactive")
    # the first class's targets that has any (with --scan-env, each class judges its own environment)
    targets = next(([{k: t[k] for k in keep} for t in doc["targets"]] for _cj, doc in docs if doc["targets"]), [])
    classes = [_class_dict(cj, doc) for cj, doc in docs]
    by_status = {status.value: [c["id"] for c in classes if c["status"] == status] for status in _CLASS_GROUPS}
    unjudged = [{"name": n.name, "status": n.status, "problems": list(n.problems), "fix": n.fix} for n in inv.unjudged]
    notes = []
    if not judgement.jit_allowed:
        notes.append("CUDA_DISABLE_PTX_JIT is set: PTX is not counted as usable")
    return {
        "schema": FLEET_CHECK_SCHEMA,
        "cudafit_version": __version__,
        "status": judgement.status.value if judgement.classes else "none",
        "jit_allowed": judgement.jit_allowed,
        "fleet": {
            "source": inv.source,
            "nodes": len(inv.nodes),
            "judged": sum(1 for n in inv.nodes if n.judged),
            "classes": len(inv.classes),
            "by_status": inv.status_counts(),
            "problems": list(inv.problems),
        },
        "targets": targets,
        "classes": classes,
        "pools": by_status,
        "unjudged": unjudged,
        "placement": placement,
        "notes": notes,
    }


def _class_dict(cj: ClassJudgement, doc: JsonDict) -> JsonDict:
    """One ``classes[]`` row: the class, its status and driver floor, and its ``check`` verdicts and actions."""
    c: JsonDict = cj.cls.to_dict()
    c.update(
        {
            "status": cj.status.value,
            "best_status": cj.best_status.value,
            "driver_floor": str(cj.driver_floor) if cj.driver_floor else None,
            "driver_limited": cj.driver_limited,
            "gpus_judged": doc["gpus"],
            "verdicts": [
                {"target": k, "status": t["status"], "by_gpu": t["verdicts"], "fixes": t["fixes"]}
                for k, t in enumerate(doc["targets"])
            ],
            "actions": doc["actions"],
        }
    )
    return c


def _floor_text(c: JsonDict) -> str:
    if c["driver_floor"]:
        floor = str(c["driver_floor"])
    elif c["best_status"] in ("fails", "none"):
        floor = "none helps" if c["best_status"] == "fails" else "-"
    else:
        floor = "any"
    return floor + (" (upgrade)" if c["driver_limited"] else "")


def _class_row(c: JsonDict, targets: list[JsonDict]) -> list[str]:
    groups: dict[str, list[str]] = {}
    for v in c["verdicts"]:
        if v["status"] not in ("native", "none"):
            groups.setdefault(v["status"], []).append(targets[v["target"]]["name"])
    odd = [f"{s}: {', '.join(groups[s])}" for s in ("fails", "partial", "jit") if s in groups]
    floor = _floor_text(c)
    return [
        c["id"],
        _gpus_text(c["gpus"]),
        c["driver_version"] or "?",
        str(c["node_count"]),
        c["status"],
        floor,
        "; ".join(odd) or "-",
    ]


def _group_lines(doc: JsonDict) -> list[tuple[str, str, str]]:
    """(status, label, the classes with that status and their node count), one per status that has classes."""
    by_id = {c["id"]: c for c in doc["classes"]}
    out = []
    for group in _CLASS_GROUPS:
        status, label = group.value, _GROUP_LABELS[group]
        ids = doc["pools"][status]
        if ids:
            listed = ", ".join(f"{i} {_gpus_text(by_id[i]['gpus'])} · {by_id[i]['driver_version'] or '?'}" for i in ids)
            nodes = sum(by_id[i]["node_count"] for i in ids)
            out.append((status, label, f"{listed} ({plural(nodes, 'node')})"))
    return out


def _actions(doc: JsonDict) -> list[tuple[str, str, str, str]]:
    """(severity, package, where, message), one per distinct message, classes joined."""
    seen: dict[tuple[str, str], list[str]] = {}
    sev: dict[tuple[str, str], str] = {}
    for c in doc["classes"]:
        for a in c["actions"]:
            key = (a["package"], a["message"])
            g = c["gpus_judged"][a["gpu"]]
            where = f"{c['id']} {gpu_title(g['name'], g['compute_capability'])} · {c['driver_version'] or '?'}"
            seen.setdefault(key, [])
            if where not in seen[key]:
                seen[key].append(where)
            sev[key] = a["severity"]
    rows = [(sev[k], k[0], "; ".join(v), k[1]) for k, v in seen.items()]
    rows.sort(key=lambda r: (action_rank(r[0]), r[1]))
    return rows


def render_fleet_text(doc: JsonDict, console: Console) -> None:
    """The class matrix, the classes grouped by status, what to do, and the nodes that were not judged."""
    from rich.markup import escape
    from rich.table import Table

    f = doc["fleet"]
    console.print(
        f"[bold]Fleet[/bold] {escape(f['source'])}: {plural(f['nodes'], 'node')}, {f['judged']} judged in "
        f"{plural(f['classes'], 'class')}; target: {escape(_targets_text(doc['targets']))}"
    )
    table = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("class", "GPUs (CC)", "driver", "nodes", "verdict", "driver floor", "not native"):
        table.add_column(col, overflow="fold")
    for c in doc["classes"]:
        row = [escape(x) for x in _class_row(c, doc["targets"])]
        row[4] = _cell(c["status"])
        table.add_row(*row)
    if doc["classes"]:
        console.print(table)
    for status, label, text in _group_lines(doc):
        console.print(f"  {_cell(status)} {label}: {escape(text)}")  # "fails on: c2 ..."
    actions = _actions(doc)
    if actions:
        console.print("\n[bold]What to do[/bold] (most serious first):")
        for severity, package, where, message in actions:
            console.print(f"  {_cell(severity)} {escape(package)} on {escape(where)}: {escape(message)}")
    _render_unjudged(doc["unjudged"], console)
    for p in f["problems"]:
        console.print(f"[red]problem:[/red] {escape(p)}")
    if doc.get("placement"):
        render_placement_text(doc["placement"], console)
    for n in doc["notes"]:
        console.print(f"note: {escape(n)}")


def _targets_text(targets: list[JsonDict]) -> str:
    if not targets:
        return "no CUDA code"
    if len(targets) > 3:
        return f"{len(targets)} packages with CUDA code ({_target_name(targets[0])}, ... {_target_name(targets[-1])})"
    return ", ".join(_target_name(t) for t in targets)


def _target_name(t: JsonDict) -> str:
    return f"{t['name']} {t['version']}" if t["version"] else t["name"]


def _render_unjudged(unjudged: list[JsonDict], console: Console) -> None:
    from rich.markup import escape

    shown = [u for u in unjudged if u["status"] != "no-gpu"]
    if not shown:
        return
    console.print(f"\n[bold]Not judged[/bold] ({len(shown)} node{'s' if len(shown) != 1 else ''}):")
    for u in shown:
        color = "red" if u["status"] in _NOT_JUDGED_IS_PROBLEM else "dim"
        why = "; ".join(u["problems"]) or u["status"]
        console.print(f"  [{color}]{u['status']}[/] {escape(u['name'])}: {escape(why)}")
        if u["fix"]:
            console.print(f"    fix: {escape(u['fix'])}")


def render_placement_text(placement: JsonDict, console: Console) -> None:
    """The nodeAffinity block (YAML) and the Ray options, ready to paste."""
    from rich.markup import escape

    console.print(
        f"\n[bold]Placement[/bold]: classes {', '.join(placement['classes']) or '(none)'} "
        f"({placement['node_count']} node{'s' if placement['node_count'] != 1 else ''})"
    )
    if placement.get("note"):
        console.print(f"# {escape(placement['note'])}")
    k8s = placement.get("kubernetes")
    if k8s is not None:
        console.print(f"# Kubernetes pod spec ({escape(k8s['note'])})")
        if k8s["affinity"]:
            console.print(escape(to_yaml({"affinity": k8s["affinity"]})), highlight=False, soft_wrap=True)
    ray = placement.get("ray")
    if ray is not None:
        console.print(f"# Ray ({escape(ray['note'])})")
        if ray["label_selector"]:
            opts = f"label_selector={json.dumps(ray['label_selector'])}"
            console.print(escape(f"@ray.remote({opts})"), highlight=False, soft_wrap=True)
        if ray.get("resources"):
            console.print(escape(f"@ray.remote(resources={json.dumps(ray['resources'])})"), highlight=False)


def render_fleet_markdown(doc: JsonDict) -> str:
    """The class matrix as Markdown (paste into an issue or a runbook)."""
    f = doc["fleet"]
    lines = [
        f"**Fleet** `{f['source']}`: {plural(f['nodes'], 'node')}, {f['judged']} judged in "
        f"{plural(f['classes'], 'class')}; "
        f"target: {_targets_text(doc['targets'])}",
        "",
        "| class | GPUs (CC) | driver | nodes | verdict | driver floor | not native |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in doc["classes"]:
        row = _class_row(c, doc["targets"])
        row[4] = f"**{row[4]}**"
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.extend(f"- **{status}** {label}: {text}" for status, label, text in _group_lines(doc))
    actions = _actions(doc)
    if actions:
        lines += ["", "**What to do**", ""]
        lines.extend(f"- **{s}** `{p}` on {w}: {m}" for s, p, w, m in actions)
    shown = [u for u in doc["unjudged"] if u["status"] != "no-gpu"]
    if shown:
        lines += ["", "**Not judged**", ""]
        lines.extend(f"- `{u['name']}` {u['status']}: {'; '.join(u['problems'])}" for u in shown)
    lines += ["", f"_cudafit {doc['cudafit_version']}, {FLEET_CHECK_SCHEMA}_"]
    return "\n".join(lines) + "\n"


def render_fleet_html(doc: JsonDict) -> str:
    """A self-contained page: classes x packages as a colour grid."""
    esc = html.escape
    head = "".join(f"<th>{esc(_target_name(t))}</th>" for t in doc["targets"])
    rows = []
    for c in doc["classes"]:
        cells = "".join(
            f'<td style="background:{_HTML_COLORS.get(v["status"], "#fff")};color:#fff" '
            f'title="{esc(" | ".join(cell_title(g) for g in v["by_gpu"]))}">{esc(v["status"])}</td>'
            for v in c["verdicts"]
        )
        label = f"{c['id']} {_gpus_text(c['gpus'])} · {c['driver_version'] or '?'} ({plural(c['node_count'], 'node')})"
        rows.append(f"<tr><th>{esc(label)}</th>{cells}<td>{esc(_floor_text(c))}</td></tr>")
    groups = "".join(f"<li><b>{esc(s)}</b> {esc(label)}: {esc(text)}</li>" for s, label, text in _group_lines(doc))
    actions = "".join(f"<li><b>{esc(s)}</b> {esc(p)} on {esc(w)}: {esc(m)}</li>" for s, p, w, m in _actions(doc))
    unjudged = "".join(
        f"<li>{esc(u['name'])} <b>{esc(u['status'])}</b>: {esc('; '.join(u['problems']))}</li>"
        for u in doc["unjudged"]
        if u["status"] != "no-gpu"
    )
    f = doc["fleet"]
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>cudafit fleet report</title><style>"
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}</style></head><body>"
        f"<h1>cudafit fleet report</h1><p>{esc(f['source'])}: {plural(f['nodes'], 'node')}, {f['judged']} judged "
        f"in {plural(f['classes'], 'class')}; status <b>{esc(doc['status'])}</b>; "
        + ", ".join(f"{k} {esc(v)}" for k, v in html_stamp())
        + "</p>"
        f"<table><tr><th>class</th>{head}<th>driver floor</th></tr>{''.join(rows)}</table>{html_legend()}"
        f"<h2>Pools</h2><ul>{groups or '<li>none</li>'}</ul>"
        f"<h2>What to do</h2><ul>{actions or '<li>nothing</li>'}</ul>"
        f"<h2>Not judged</h2><ul>{unjudged or '<li>none</li>'}</ul>"
        f"<p><small>cudafit {esc(doc['cudafit_version'])}, {FLEET_CHECK_SCHEMA}</small></p></body></html>\n"
    )


def render_inventory_text(doc: JsonDict, console: Console) -> None:
    """``cudafit fleet ...``: one row per class, then the nodes that were not judged."""
    from rich.markup import escape
    from rich.table import Table

    s = doc["summary"]
    counts = ", ".join(f"{n} {k}" for k, n in sorted(s["by_status"].items()))
    console.print(
        f"[bold]Fleet[/bold] {escape(doc['source'])}: {plural(s['nodes'], 'node')} ({escape(counts or 'none')}), "
        f"{s['classes']} classes"
    )
    table = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("class", "GPUs (CC)", "GPUs", "driver", "nodes", "MIG", "env", "example nodes"):
        table.add_column(col, overflow="fold")
    for c in doc["classes"]:
        names = c["nodes"][:3]
        more = f" +{len(c['nodes']) - 3}" if len(c["nodes"]) > 3 else ""
        table.add_row(
            c["id"],
            escape(_gpus_text(c["gpus"])),
            str(c["gpu_count"] or "?"),  # 0: not labelled (MIG 'single' labels count MIG devices)
            escape(c["driver_version"] or "?"),
            str(c["node_count"]),
            "yes" if c["mig"] else "-",
            escape(c["env_fingerprint"] or "-"),
            escape(", ".join(names) + more),
        )
    if doc["classes"]:
        console.print(table)
    _render_unjudged(
        [
            {"name": n["name"], "status": n["status"], "problems": n["problems"], "fix": n["fix"]}
            for n in doc["nodes"]
            if n["status"] != "ok"
        ],
        console,
    )
    for p in doc["problems"]:
        console.print(f"[red]problem:[/red] {escape(p)}")


def to_yaml(value: Any, indent: int = 0) -> str:
    """Block YAML for the JSON-like values placement produces (strings quoted, so nothing is retyped)."""
    pad = "  " * indent
    if isinstance(value, Mapping):
        lines = []
        for k, v in value.items():
            if isinstance(v, (Mapping, list)) and v:
                lines.append(f"{pad}{k}:\n{to_yaml(v, indent + 1)}")
            else:
                lines.append(f"{pad}{k}: {_scalar(v)}")
        return "\n".join(lines)
    if isinstance(value, list):
        lines = []
        for v in value:
            if isinstance(v, (Mapping, list)) and v:
                body = to_yaml(v, indent + 1)
                lines.append(f"{pad}- {body.lstrip()}")
            else:
                lines.append(f"{pad}- {_scalar(v)}")
        return "\n".join(lines)
    return pad + _scalar(value)


def _scalar(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, (Mapping, list)):
        return "{}" if isinstance(v, Mapping) else "[]"
    return json.dumps(v) if isinstance(v, str) else str(v)


def fleet_renderers() -> Renderers:
    """How ``check``/``doctor --fleet`` write their document."""
    return Renderers(render_fleet_text, render_fleet_markdown, render_fleet_html)
