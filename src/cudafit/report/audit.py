"""Rendering of ``cudafit audit``: text, ``cudafit.audit/1`` JSON, SARIF 2.1.0 and JUnit XML.

Everything is a pure function of the :func:`audit_document` dict, which is built from an
:class:`~cudafit.audit.core.AuditResult` without deciding anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape as xml_escape
from xml.sax.saxutils import quoteattr

from cudafit import __version__
from cudafit.report.formats import Renderers

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from cudafit.audit.core import AuditResult, Fix, Gap, MemberResult, Policy, TargetResult
    from cudafit.model import ComputeCapability, JsonDict

__all__ = ["AUDIT_SCHEMA", "audit_document", "audit_renderers", "render_junit", "render_sarif", "render_text"]

AUDIT_SCHEMA = "cudafit.audit/1"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_NO_IMAGE = "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html"
_COMPAT = "https://docs.nvidia.com/cuda/cuda-programming-guide/01-introduction/cuda-platform.html"
_LAZY = "https://docs.nvidia.com/cuda/cuda-programming-guide/04-special-topics/lazy-loading.html"

#: SARIF rules, one per gap kind (docs/audit.md): id, description, level, the NVIDIA text it rests on.
_RULES = {
    "hole": ("MissingCode", "Modules without code for a required compute capability", "error", _NO_IMAGE),
    "no-code": (
        "MissingCubin",
        "No library-loaded cubin/fatbin serves a required compute capability",
        "error",
        _NO_IMAGE,
    ),
    "no-device-code": ("NoDeviceCode", "The artifact holds no CUDA device code", "error", _NO_IMAGE),
    "jit-only": ("JitOnly", "Only PTX JIT for a required SASS target", "error", _COMPAT),
    "no-ptx": ("MissingPtx", "No forward-compatible PTX for a required PTX target", "error", _COMPAT),
    "specialised": (
        "Specialised",
        "Modules specialised for other GPUs lack code for a required arch",
        "warning",
        _LAZY,
    ),
    "gated": (
        "Gated",
        "Modules built only for a/f targets of other GPUs lack code for a required arch",
        "warning",
        _LAZY,
    ),
    "unreadable": ("Unreadable", "A member could not be read", "error", _NO_IMAGE),
}


def _gap(g: Gap) -> JsonDict:
    return {
        "kind": g.kind,
        "compute_capability": str(g.cc),
        "modules": g.modules,
        "archs": g.archs,
        "reason": g.reason,
        "allowed": g.allowed,
        "message": g.message,
        "kernels": list(g.kernels),
    }


def _member_dict(m: MemberResult, index: dict[tuple[ComputeCapability, str, str], int]) -> JsonDict:
    """One ``targets[].members[]`` row: a member (or library-loaded pool) and its check per requirement."""
    from cudafit.audit.core import display_path

    return {
        "path": display_path(m.path),
        "kind": m.kind,
        "status": m.status,
        "files": m.files,
        "modules": m.modules,
        "sass": list(m.sass),
        "ptx": list(m.ptx),
        "error": m.error,
        "checks": [
            {"requirement": index[c.requirement.key], "status": c.status, "gaps": [_gap(g) for g in c.gaps]}
            for c in m.checks
        ],
    }


def _fix_dict(fix: Fix | None) -> JsonDict | None:
    """The arch list that meets the policy, in each build system's spelling."""
    if fix is None:
        return None
    return {
        "toolkit": fix.toolkit,
        "torch_cuda_arch_list": fix.torch_cuda_arch_list,
        "cmake_cuda_architectures": fix.cmake_cuda_architectures,
        "nvcc_flags": list(fix.nvcc_flags),
        "problems": list(fix.problems),
        "notes": list(fix.notes),
    }


def _target_dict(t: TargetResult, policy: Policy, index: dict[tuple[ComputeCapability, str, str], int]) -> JsonDict:
    """One ``targets[]`` row: a wheel, directory or file, its members and its fix."""
    from cudafit.audit.core import display_path
    from cudafit.audit.torch import describe_gap

    torch_line = None
    if policy.torch is not None:
        torch_keys = {x.key for x in policy.torch.requirements()}
        lacking = [r for r in t.missing if r.key in torch_keys]
        torch_line = describe_gap(policy.torch, lacking, "wheel" if t.spec.endswith(".whl") else "build")
    return {
        "spec": t.spec,
        "path": display_path(t.spec),
        "name": t.name,
        "version": t.version,
        "status": t.status,
        "cuda_major": t.cuda_major,
        "missing": [index[r.key] for r in t.missing],
        "torch": torch_line,
        "members": [_member_dict(m, index) for m in t.members],
        "fix": _fix_dict(t.fix),
        "notes": list(t.notes),
    }


def audit_document(result: AuditResult) -> JsonDict:
    """The ``cudafit.audit/1`` document."""
    policy = result.policy
    reqs = list(policy.requirements)
    index = {r.key: i for i, r in enumerate(reqs)}
    return {
        "schema": AUDIT_SCHEMA,
        "cudafit_version": __version__,
        "status": result.status,
        "exit_code": result.exit_code,
        "policy": {
            "config": policy.config,
            "require": list(policy.specs),
            "allow_specialised": policy.allow_specialised,
            "allow_jit": policy.allow_jit,
            "match_torch": policy.torch.to_dict() if policy.torch is not None else None,
            "requirements": [r.to_dict() for r in reqs],
        },
        "targets": [_target_dict(t, policy, index) for t in result.targets],
        "notes": list(result.notes),
    }


def _labels(doc: JsonDict, indexes: list[int]) -> list[str]:
    return [doc["policy"]["requirements"][i]["label"] for i in indexes]


def iter_failures(doc: JsonDict) -> Iterator[tuple[JsonDict, JsonDict, str, JsonDict | None]]:
    """(target, member, requirement label, gap or None for an unreadable member) for everything that fails."""
    reqs = doc["policy"]["requirements"]
    for t in doc["targets"]:
        for m in t["members"]:
            if m["error"] and m["status"] == "error":
                yield t, m, "", None
            for c in m["checks"]:
                if c["status"] != "fail":
                    continue
                for g in c["gaps"]:
                    if not g["allowed"]:
                        yield t, m, reqs[c["requirement"]]["label"], g


def render_text(doc: JsonDict, console: Console) -> None:
    """The verdict per target, a table of what is missing per member, and the fix."""
    from rich.markup import escape

    _render_policy(doc["policy"], console)
    colours = {"pass": "green", "fail": "red", "error": "yellow"}
    for t in doc["targets"]:
        name = f"{t['name']} {t['version']}" if t["name"] and t["version"] else t["path"]
        verdict = {"pass": "PASS", "fail": "FAIL", "error": "COULD NOT ANALYSE"}[t["status"]]
        console.print(
            f"\n[{colours[t['status']]}]{verdict}[/] {escape(name)} [dim]({escape(t['path'])})[/dim]", highlight=False
        )
        if t["torch"]:
            console.print(f"  {escape(t['torch'])}", highlight=False)
        members = t["members"]
        ok = [m for m in members if m["status"] == "pass"]
        allowed = sum(1 for m in members for c in m["checks"] if c["status"] == "allowed")
        summary = f"  {len(ok)} of {len(members)} member(s) meet the policy"
        if allowed:
            summary += f" ({allowed} check(s) only because gated/specialised modules are allowed)"
        console.print(summary, highlight=False)
        rows = [(m, label, g) for _t, m, label, g in iter_failures({**doc, "targets": [t]})]
        if rows:
            console.print(_missing_table(rows))
        if t["missing"]:
            console.print(f"  missing: {escape(', '.join(_labels(doc, t['missing'])))}", highlight=False)
        if t["fix"]:
            _render_fix(t["fix"], console)
        for n in t["notes"]:
            console.print(f"  note: {escape(n)}", highlight=False)
    for n in doc["notes"]:
        console.print(f"note: {escape(n)}", highlight=False)


def _render_policy(pol: JsonDict, console: Console) -> None:
    """What is required, as asked and as the archs it comes to, and what is allowed."""
    from rich.markup import escape

    asked = [f"'{s}'" for s in pol["require"]]
    if pol["match_torch"]:
        t = pol["match_torch"]
        ptx = "; PTX " + ", ".join(t["ptx"]) if t["ptx"] else ""
        asked.append(f"torch {t['version'] or ''} build list ({', '.join(t['sass'])}{ptx})")
    where = f" (from {pol['config']})" if pol["config"] else ""
    labels = ", ".join(r["label"] for r in pol["requirements"])
    console.print(f"[bold]Policy[/bold]{escape(where)}: require {escape(' + '.join(asked))}", highlight=False)
    console.print(f"        = {escape(labels)}", highlight=False)
    allowances = [
        "gated/specialised modules " + ("allowed" if pol["allow_specialised"] else "not allowed (--allow-specialised)"),
        "PTX JIT " + ("accepted for SASS requirements" if pol["allow_jit"] else "does not meet SASS requirements"),
    ]
    console.print("        " + "; ".join(allowances), highlight=False)


def _missing_table(rows: list[tuple[JsonDict, str, JsonDict | None]]) -> Table:
    """What each failing member lacks, per required arch (an unreadable member says why)."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    table.add_column("member", overflow="fold")
    table.add_column("arch")
    table.add_column("what is missing", overflow="fold")
    for m, label, g in rows:
        member = m["path"].split("!", 1)[-1]
        if m["kind"] == "pool":
            member += " (library-loaded)" if m["files"] == 1 else f"/ ({m['files']} library-loaded files)"
        what = escape(g["message"]) if g is not None else f"[yellow]unreadable[/yellow]: {escape(m['error'])}"
        table.add_row(escape(member), escape(label), what)
    return table


def _render_fix(fix: JsonDict, console: Console) -> None:
    """The rebuild with the policy's arch list, in each build system's spelling."""
    from rich.markup import escape

    from cudafit.report.plan import arch_settings

    console.print(f"  [bold]Fix[/bold]: rebuild with the policy's arch list ({escape(fix['toolkit'])}):")
    if fix["torch_cuda_arch_list"]:
        for setting, value in arch_settings(fix):
            line = f"nvcc {escape(value)}" if setting == "nvcc" else f'{setting}="{escape(value)}"'
            console.print(f"    {line}", highlight=False)
    for p in fix["problems"]:
        console.print(f"    [red]problem:[/red] {escape(p)}", highlight=False)
    for n in fix["notes"]:
        console.print(f"    - {escape(n)}", highlight=False)


def render_sarif(doc: JsonDict) -> JsonDict:
    """A SARIF 2.1.0 log: one result per (member, requirement, gap), located at the artifact."""
    rules = [
        {
            "id": rid,
            "name": rid,
            "shortDescription": {"text": text},
            "helpUri": uri,
            "help": {"text": f"{text}; see docs/audit.md of cudafit for the policy and the fix"},
            "defaultConfiguration": {"level": level},
            "properties": {"cudafit-kind": kind},
        }
        for kind, (rid, text, level, uri) in _RULES.items()
    ]
    index = {kind: i for i, kind in enumerate(_RULES)}
    results = []
    artifacts: dict[str, int] = {}
    for t, m, label, g in iter_failures(doc):
        artifacts.setdefault(t["path"], len(artifacts))
        results.append(_sarif_result(t, m, label, g, index, artifacts[t["path"]]))
    fixes = [
        f'{t["path"]}: TORCH_CUDA_ARCH_LIST="{t["fix"]["torch_cuda_arch_list"]}"' for t in doc["targets"] if t["fix"]
    ]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "cudafit",
                        "version": doc["cudafit_version"],
                        "rules": rules,
                    }
                },
                "artifacts": [{"location": {"uri": uri}} for uri in artifacts],
                "invocations": [
                    {
                        "executionSuccessful": doc["status"] != "error",
                        "exitCode": doc["exit_code"],
                        "toolExecutionNotifications": [{"message": {"text": f}, "level": "note"} for f in fixes],
                    }
                ],
                "results": results,
                "properties": {"cudafit-schema": AUDIT_SCHEMA, "status": doc["status"]},
            }
        ],
    }


def _sarif_result(
    t: JsonDict, m: JsonDict, label: str, g: JsonDict | None, index: dict[str, int], artifact: int
) -> JsonDict:
    """One SARIF result: a member's gap (or its unreadability) for one requirement, located at the artifact."""
    kind = g["kind"] if g is not None else "unreadable"
    rid, _text, level, _uri = _RULES[kind]
    uri = t["path"]
    member = m["path"].split("!", 1)[-1] if "!" in m["path"] else m["path"]
    text = f"{member}: {label}: {g['message']}" if g is not None else f"{member}: unreadable: {m['error']}"
    return {
        "ruleId": rid,
        "ruleIndex": index[kind],
        "level": level,
        "message": {"text": text},
        "locations": [
            {
                "physicalLocation": {"artifactLocation": {"uri": uri, "index": artifact}},
                "logicalLocations": [{"name": member, "kind": "module"}],
            }
        ],
        "partialFingerprints": {"cudafit/v1": f"{t['name'] or uri}|{member}|{label}|{kind}"},
        "properties": {"requirement": label, "archs": g["archs"] if g else "", "modules": g["modules"] if g else 0},
    }


def render_junit(doc: JsonDict) -> str:
    """JUnit XML: one test suite per target, one test case per member x required arch."""
    reqs = doc["policy"]["requirements"]
    suites = []
    total = failures = errors = 0
    for t in doc["targets"]:
        cases = []
        t_fail = t_err = 0
        for m in t["members"]:
            classname = quoteattr(m["path"])
            if m["error"] and not m["checks"]:
                t_err += 1
                cases.append(
                    f'    <testcase classname={classname} name="read">'
                    f"<error message={quoteattr('unreadable: ' + m['error'])}/></testcase>"
                )
                continue
            for c in m["checks"]:
                label = reqs[c["requirement"]]["label"]
                body = ""
                if c["status"] == "fail":
                    t_fail += 1
                    msgs = "\n".join(g["message"] for g in c["gaps"] if not g["allowed"])
                    first = next(g["message"] for g in c["gaps"] if not g["allowed"])
                    body = f'<failure message={quoteattr(first)} type="cudafit.audit">{xml_escape(msgs)}</failure>'
                elif c["status"] == "allowed":
                    msgs = "\n".join(g["message"] for g in c["gaps"])
                    body = f"<system-out>{xml_escape('allowed by the policy: ' + msgs)}</system-out>"
                cases.append(f"    <testcase classname={classname} name={quoteattr(label)}>{body}</testcase>")
        total += len(cases)
        failures += t_fail
        errors += t_err
        suites.append(
            f'  <testsuite name={quoteattr(t["path"])} tests="{len(cases)}" failures="{t_fail}" '
            f'errors="{t_err}" skipped="0">\n' + "\n".join(cases) + "\n  </testsuite>"
        )
    head = (
        f'<?xml version="1.0" encoding="utf-8"?>\n<testsuites name="cudafit audit" tests="{total}" '
        f'failures="{failures}" errors="{errors}">\n'
    )
    return head + "\n".join(suites) + "\n</testsuites>\n"


def audit_renderers() -> Renderers:
    """How ``audit`` writes its document to standard output (``--format text|json|sarif``)."""
    return Renderers(render_text, sarif=render_sarif)
