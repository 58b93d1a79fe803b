"""Fleets: many machines' GPU inventories (a file, a Ray cluster, a Kubernetes cluster) judged per class.

Sources produce one inventory type (:mod:`cudafit.fleet.inventory`, ``cudafit.fleet/1``): nodes
with their GPUs and driver, grouped into classes of identical facts.  :func:`judge_fleet` runs the
single-machine verdict path once per class; :mod:`cudafit.fleet.placement` turns the classes
where a target runs into a Kubernetes node affinity and a Ray label selector.  Ray and Kubernetes
are optional extras (``cudafit[ray]``, ``cudafit[k8s]``), imported only when asked for.
"""

from __future__ import annotations

from cudafit.fleet.inventory import FLEET_SCHEMA, FleetGpu, FleetInventory, FleetNode, NodeClass
from cudafit.fleet.judge import ClassJudgement, FleetJudgement, judge_fleet

__all__ = [
    "FLEET_SCHEMA",
    "ClassJudgement",
    "FleetGpu",
    "FleetInventory",
    "FleetJudgement",
    "FleetNode",
    "NodeClass",
    "judge_fleet",
]
