"""Kubernetes label selectors and node-affinity terms, evaluated on a node's labels.

Used to filter ``--nodes-json`` by ``--selector`` the way the API server filters a live listing,
and to check that an emitted placement selects exactly the nodes it should before printing it.
Semantics: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors
(equality- and set-based requirements, comma = AND) and
https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#node-affinity
(``nodeSelectorTerms`` are ORed, a term's ``matchExpressions`` ANDed; ``Gt``/``Lt`` compare integers).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cudafit.errors import ValueParseError

__all__ = ["match_expression", "node_affinity_selects", "parse_label_selector"]

Labels = Mapping[str, str]

_SET = re.compile(r"^\s*(?P<key>[^\s!=,()]+)\s+(?P<op>in|notin)\s*\((?P<values>[^)]*)\)\s*$")
_EQ = re.compile(r"^\s*(?P<key>[^\s!=,()]+)\s*(?P<op>==|=|!=)\s*(?P<value>[^\s,()]*)\s*$")
_EXISTS = re.compile(r"^\s*(?:(?P<neg>!)\s*)?(?P<key>[^\s!=,()]+)\s*$")  # one blank run per gap: linear time


def _split(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    parts: list[str] = []
    depth = 0
    cur = ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p for p in parts if p.strip()]


def parse_label_selector(text: str) -> Callable[[Labels], bool]:
    """A predicate for ``app=web,tier in (a,b),!legacy`` (raises :class:`ValueParseError` on bad syntax)."""
    requirements: list[tuple[str, str, frozenset[str]]] = []  # (operator, key, values)
    for part in _split(text):
        m = _SET.match(part)
        if m:
            values = frozenset(v.strip() for v in m.group("values").split(",") if v.strip())
            requirements.append((m.group("op"), m.group("key"), values))
            continue
        m = _EQ.match(part)
        if m:
            op = "notin" if m.group("op") == "!=" else "in"
            requirements.append((op, m.group("key"), frozenset((m.group("value"),))))
            continue
        m = _EXISTS.match(part)
        if m:
            requirements.append(("absent" if m.group("neg") else "present", m.group("key"), frozenset()))
            continue
        msg = f"not a label selector requirement: {part.strip()!r} (e.g. nvidia.com/gpu.present=true)"
        raise ValueParseError(msg)

    def matches(labels: Labels) -> bool:
        for op, key, values in requirements:
            value = labels.get(key)
            ok = {
                "in": value in values,
                "notin": value not in values,
                "present": key in labels,
                "absent": key not in labels,
            }[op]
            if not ok:
                return False
        return True

    return matches


def match_expression(expr: Mapping[str, Any], labels: Labels) -> bool:
    """One ``matchExpressions`` entry (``In``, ``NotIn``, ``Exists``, ``DoesNotExist``, ``Gt``, ``Lt``)."""
    key, op = expr["key"], expr["operator"]
    values: Sequence[str] = expr.get("values") or ()
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if not present or not labels[key].isdigit():
            return False
        value, bound = int(labels[key]), int(values[0])
        return value > bound if op == "Gt" else value < bound
    msg = f"unknown node selector operator {op!r}"
    raise ValueParseError(msg)


def node_affinity_selects(affinity: Mapping[str, Any], labels: Labels) -> bool:
    """Whether a ``nodeAffinity`` block's required terms admit a node with ``labels``."""
    required = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    return any(
        all(match_expression(e, labels) for e in term.get("matchExpressions") or ())
        for term in required["nodeSelectorTerms"]
    )
