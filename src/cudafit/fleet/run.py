"""``check``/``doctor --fleet``'s use case: judge every node class of an inventory, as one typed result.

The command line loads the inventory (its sources' options are wiring) and renders what this returns; the
pipeline between (whether anything can be judged, each node's own environment with ``--scan-env``, the
scan cache, the placement) lives here so that every front end judges a fleet the same way.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cudafit.fleet.inventory import FleetInventory, FleetNode
    from cudafit.fleet.judge import FleetJudgement
    from cudafit.model import JsonDict
    from cudafit.targets.interface import ScanItem

__all__ = ["INCOMPLETE", "FleetRun", "incomplete_nodes", "run_fleet", "unjudgeable"]

#: Node statuses that leave the fleet's picture incomplete (exit code 1).
INCOMPLETE = ("unknown-gpu", "invalid", "timeout", "unreachable")


@dataclass(frozen=True)
class FleetRun:
    """A fleet judged: the judgement (``None`` with ``why_not`` when nothing could be judged), the
    placement asked for, and the nodes that could not be described (they make the answer incomplete)."""

    inventory: FleetInventory
    judgement: FleetJudgement | None
    placement: JsonDict | None = None
    why_not: str | None = None

    @property
    def incomplete(self) -> tuple[FleetNode, ...]:
        """Nodes whose GPUs could not be described (timeout, no labels, garbage, unreachable)."""
        return incomplete_nodes(self.inventory)


def incomplete_nodes(inv: FleetInventory) -> tuple[FleetNode, ...]:
    """The nodes of ``inv`` whose status leaves the fleet's picture incomplete."""
    return tuple(n for n in inv.nodes if n.status in INCOMPLETE)


def unjudgeable(inv: FleetInventory) -> str | None:
    """Why nothing of ``inv`` can be judged (no nodes, or no node with known GPUs), or ``None``."""
    if not inv.nodes:
        return "; ".join(inv.problems) or "the fleet has no nodes"
    if not inv.classes:
        counts = ", ".join(f"{n} {k}" for k, n in sorted(inv.status_counts().items()))
        return f"no node of the fleet has known GPUs ({counts}): nothing to judge"
    return None


def run_fleet(
    inv: FleetInventory,
    items: Iterable[ScanItem],
    *,
    by_env: bool = False,
    emit_placement: bool = False,
    use_cache: bool = True,
    embedded: bool = False,
) -> FleetRun:
    """Judge ``items`` on every node class of ``inv`` (with ``by_env``, each class's own environment,
    fetched from its Ray nodes: ``items`` is then unused).  ``inv`` must have been loaded with the Ray
    connection kept when ``by_env``; it is closed here when nothing can be judged."""
    from cudafit.analysis import jit_allowed_in
    from cudafit.fleet.judge import judge_fleet
    from cudafit.progress import with_progress
    from cudafit.targets.cache import scan_cache

    why = unjudgeable(inv)
    if why:
        if by_env:
            from cudafit.fleet.ray_source import disconnect

            disconnect()
        return FleetRun(inv, None, why_not=why)
    jit_allowed = jit_allowed_in(os.environ)
    items_by_env = None
    if by_env:
        from cudafit.fleet.ray_source import fetch_env_items

        items_by_env = fetch_env_items(inv)
        items = ()
    with scan_cache(enabled=use_cache, embedded=embedded):
        judgement = judge_fleet(with_progress(items), inv, jit_allowed=jit_allowed, items_by_env=items_by_env)
    placement = None
    if emit_placement:
        from cudafit.fleet.placement import placement as make_placement

        placement = make_placement(judgement)
    return FleetRun(inv, judgement, placement)
