"""Placement that keeps a workload where it runs: a Kubernetes ``nodeAffinity`` and a Ray selector.

Built from the labels the nodes really carry (GFD labels, Ray node labels), never from names
cudafit reconstructs, and checked before it is printed: a candidate is kept only if, evaluated on
every node of the inventory (judged or not), it selects exactly the nodes of the classes where the
target runs.  The most general exact form wins (a product list before product+driver pairs, a
shared label before node ids); when only node names or ids are exact, the output says that such
a placement does not follow new nodes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from cudafit.fleet.gfd import GFD_PRODUCT, driver_label_keys
from cudafit.fleet.inventory import FleetNode
from cudafit.fleet.selectors import node_affinity_selects

if TYPE_CHECKING:
    from cudafit.fleet.judge import FleetJudgement
    from cudafit.model import JsonDict

__all__ = ["kubernetes_affinity", "placement", "ray_selector", "ray_selector_selects"]

_RAY_VALUE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$")
_RAY_ACCEL = "ray.io/accelerator-type"
_RAY_NODE = "ray.io/node-id"


def _affinity(terms: list[list[JsonDict]]) -> JsonDict:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]
            }
        }
    }


def _in(key: str, values: Iterable[str]) -> JsonDict:
    return {"key": key, "operator": "In", "values": sorted(set(values))}


def _exact(selects: Callable[[Mapping[str, str]], bool], nodes: Sequence[FleetNode], want: set[str]) -> bool:
    return {n.name for n in nodes if selects(n.labels)} == want


def kubernetes_affinity(nodes: Sequence[FleetNode], runs: set[str]) -> tuple[JsonDict | None, str]:
    """(``affinity`` block, note) selecting exactly the nodes named in ``runs``."""
    chosen = [n for n in nodes if n.name in runs]
    if not chosen:
        return None, "the target runs on no node of this fleet: nothing to select"
    if any(GFD_PRODUCT not in n.labels for n in chosen):
        hosts = [n.labels.get("kubernetes.io/hostname", n.name) for n in chosen]
        aff = _affinity([[_in("kubernetes.io/hostname", hosts)]])
        if _exact(lambda lb: node_affinity_selects(aff, lb), nodes, runs):
            return aff, "by hostname: some nodes carry no GFD labels, so new nodes are not covered"
        return None, "no exact selector: the nodes carry neither GFD labels nor hostnames"
    products: dict[str, list[FleetNode]] = {}
    for n in chosen:
        products.setdefault(n.labels[GFD_PRODUCT], []).append(n)
    others = [n for n in nodes if n.name not in runs]
    whole = sorted(p for p in products if not any(o.labels.get(GFD_PRODUCT) == p for o in others))
    split = sorted(p for p in products if p not in whole)
    terms: list[list[JsonDict]] = [[_in(GFD_PRODUCT, whole)]] if whole else []
    for p in split:  # the product runs with some drivers only: pin those drivers
        keys = driver_label_keys(products[p][0].labels)
        if not keys or any(driver_label_keys(n.labels) != keys for n in products[p]):
            terms = []
            break
        terms.append([_in(GFD_PRODUCT, [p]), *(_in(k, (n.labels[k] for n in products[p])) for k in keys)])
    if terms:
        aff = _affinity(terms)
        if _exact(lambda lb: node_affinity_selects(aff, lb), nodes, runs):
            note = "GFD product labels" + (" and driver versions" if split else "")
            return aff, f"by {note}: new nodes of these pools are covered"
    hosts = [n.labels.get("kubernetes.io/hostname", n.name) for n in chosen]
    aff = _affinity([[_in("kubernetes.io/hostname", hosts)]])
    if _exact(lambda lb: node_affinity_selects(aff, lb), nodes, runs):
        return aff, "by hostname: GFD labels do not separate these nodes from others, so new nodes are not covered"
    return None, "no exact node affinity: GFD labels and hostnames do not separate these nodes"


def _ray_value_selects(value: str, label: str | None) -> bool:
    """Ray label-selector value semantics (``v``, ``!v``, ``in(a,b)``, ``!in(a,b)``), for checking."""
    neg = value.startswith("!")
    body = value[1:] if neg else value
    if body.startswith("in(") and body.endswith(")"):
        hit = label in body[3:-1].split(",")
    else:
        hit = label == body
    return not hit if neg else hit


def ray_selector_selects(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """Whether a Ray ``label_selector`` (keys ANDed) admits a node with ``labels``."""
    return all(_ray_value_selects(v, labels.get(k)) for k, v in selector.items())


def _ray_predicate(selector: Mapping[str, str]) -> Callable[[Mapping[str, str]], bool]:
    return lambda labels: ray_selector_selects(selector, labels)


def ray_selector(nodes: Sequence[FleetNode], runs: set[str]) -> tuple[JsonDict | None, str]:
    """(``{"label_selector": ..., "resources": ...}``, note) selecting exactly the nodes in ``runs``.

    Values are written ``in(a,b)`` without spaces: Ray 2.60 keeps a space as part of the next value.
    """
    alive = [n for n in nodes if n.status != "dead"]
    chosen = [n for n in alive if n.name in runs]
    if not chosen:
        return None, "the target runs on no node of this fleet: nothing to select"
    keys = [_RAY_ACCEL, *sorted({k for n in chosen for k in n.labels if not k.startswith("ray.io/")})]
    for key in keys:
        if not all(key in n.labels for n in chosen):
            continue
        values = sorted({n.labels[key] for n in chosen})
        if not all(_RAY_VALUE.match(v) for v in values):
            continue
        sel = {key: values[0] if len(values) == 1 else f"in({','.join(values)})"}
        if _exact(_ray_predicate(sel), alive, runs):
            out: JsonDict = {"label_selector": sel, "resources": None}
            if key == _RAY_ACCEL and len(values) == 1:
                # Ray gives every GPU node an accelerator_type:<type> resource; a sliver of it pins the type.
                out["resources"] = {f"accelerator_type:{values[0]}": 0.001}
            return out, f"by the node label {key}: new nodes with that label are covered"
    ids = sorted(n.node_id or n.labels.get(_RAY_NODE, "") for n in chosen)
    if all(ids):
        sel = {_RAY_NODE: ids[0] if len(ids) == 1 else f"in({','.join(ids)})"}
        if _exact(_ray_predicate(sel), alive, runs):
            return (
                {"label_selector": sel, "resources": None},
                "by node id: no node label separates these nodes (give pools a label, e.g. ray start "
                "--labels cudafit.io/pool=...); node ids change when a node restarts",
            )
    return None, "no exact Ray selector for these nodes"


def placement(judgement: FleetJudgement) -> JsonDict:
    """Placement for the classes where the target runs (``cudafit.fleet-check/1`` form)."""
    classes = judgement.runs
    runs = {n.name for c in classes for n in c.cls.nodes}
    nodes = judgement.inventory.nodes
    out: JsonDict = {"classes": [c.cls.id for c in classes], "node_count": len(runs)}
    if any(GFD_PRODUCT in n.labels or "kubernetes.io/hostname" in n.labels for n in nodes):
        aff, note = kubernetes_affinity(nodes, runs)
        out["kubernetes"] = {"affinity": aff, "note": note}
    if any(n.source == "ray" or _RAY_NODE in n.labels for n in nodes):
        sel, note = ray_selector(nodes, runs)
        out["ray"] = {**(sel or {"label_selector": None, "resources": None}), "note": note}
    if "kubernetes" not in out and "ray" not in out:
        out["note"] = (
            "the fleet's nodes carry no Kubernetes or Ray labels (a file of cudafit.gpus/1 documents): "
            "nothing to place by"
        )
    return out
