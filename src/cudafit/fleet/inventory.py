"""One inventory type for many machines (``cudafit.fleet/1``): nodes, and nodes grouped into classes.

Every source (a file, Ray, Kubernetes) produces :class:`FleetNode` values; nothing downstream
knows where a node came from.  A node's GPU facts are what a single machine's probe reports
(:mod:`cudafit.probe`: name, compute capability, MIG) plus how many of each; its driver is the one
every verdict depends on.  Nodes whose GPU models and driver are identical form a
:class:`NodeClass`: verdicts depend on nothing else, so a 5,000-node fleet of 30 node types is
judged 30 times, not 5,000.  Nodes that could not be described (no answer, no labels, garbage)
stay in the inventory with their status and the reason: they are reported, never dropped.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from cudafit.model import ComputeCapability, DriverVersion, Gpu, JsonDict

if TYPE_CHECKING:
    from cudafit.probe import GpuDevice, Inventory

__all__ = [
    "FLEET_SCHEMA",
    "JUDGED",
    "NODE_STATUSES",
    "FleetGpu",
    "FleetInventory",
    "FleetNode",
    "NodeClass",
    "NodeEnv",
    "build_inventory",
    "iter_classes",
    "node_from_inventory",
]

FLEET_SCHEMA = "cudafit.fleet/1"

#: Node statuses.  Only ``ok`` nodes are judged; every other status says why not.
NODE_STATUSES = {
    "ok": "GPU facts known",
    "no-gpu": "no NVIDIA GPU on the node",
    "unknown-gpu": "the node has GPUs whose model or compute capability is unknown",
    "invalid": "the node's GPU facts are unreadable",
    "timeout": "the node did not answer in time",
    "unreachable": "the probe could not run on the node",
    "dead": "the cluster reports the node dead",
}
JUDGED = "ok"

#: What makes nodes one class: their distinct (model, compute capability) pairs, driver and environment.
ClassKey = tuple[tuple[tuple[str, str], ...], str | None, str | None]


@dataclass(frozen=True)
class FleetGpu:
    """One GPU model on a node: how many, and their MIG state.

    ``mig`` lists MIG instances as ``(profile, count)``; the profile is ``""`` where the source
    does not name it (NVML lists instance UUIDs only).  MIG does not change the compute capability,
    so it is shown, never a reason to judge a node differently.
    """

    name: str
    compute_capability: ComputeCapability | None
    count: int = 1
    mig_enabled: bool | None = None
    mig: tuple[tuple[str, int], ...] = ()

    @property
    def model_key(self) -> tuple[str, str]:
        """What makes two GPUs the same model for grouping (names normalised across sources)."""
        return _model_key(self.name, self.compute_capability)

    @property
    def gpu(self) -> Gpu | None:
        """The GPU a verdict is for (no CUDA ordinal: it stands for every such GPU of the fleet); ``None``
        when the compute capability is unknown (such a node is never judged)."""
        return None if self.compute_capability is None else Gpu(self.name, self.compute_capability)

    def to_dict(self) -> JsonDict:
        """JSON form."""
        return {
            "name": self.name,
            "compute_capability": str(self.compute_capability) if self.compute_capability else None,
            "count": self.count,
            "mig_enabled": self.mig_enabled,
            "mig": [{"profile": p, "count": n} for p, n in self.mig],
        }


@dataclass(frozen=True)
class NodeEnv:
    """A node's own Python environment (``--scan-env``): nodes drift, so each says what it has."""

    python: str
    sites: tuple[str, ...]
    packages: tuple[tuple[str, str], ...]  # (distribution, version), sorted

    @property
    def fingerprint(self) -> str:
        """Short hash of the installed distributions: equal fingerprints, equal environments."""
        text = "\n".join(f"{n}=={v}" for n, v in self.packages)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def to_dict(self) -> JsonDict:
        """JSON form."""
        return {
            "python": self.python,
            "sites": list(self.sites),
            "fingerprint": self.fingerprint,
            "packages": [{"name": n, "version": v} for n, v in self.packages],
        }


@dataclass(frozen=True)
class FleetNode:
    """One machine of the fleet, wherever it was described."""

    name: str
    source: str
    status: str
    gpus: tuple[FleetGpu, ...] = ()
    driver: DriverVersion | None = None
    labels: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)
    problems: tuple[str, ...] = ()
    fix: str | None = None
    node_id: str | None = None
    env: NodeEnv | None = None

    @property
    def judged(self) -> bool:
        """Whether the node's facts are complete enough to judge."""
        return self.status == JUDGED

    @property
    def gpu_count(self) -> int:
        """Physical GPUs on the node (as the source counts them)."""
        return sum(g.count for g in self.gpus)

    def class_key(self, *, with_env: bool = False) -> ClassKey:
        """Identical keys, identical verdicts: the distinct GPU models and the driver (and the env)."""
        models = tuple(sorted({g.model_key for g in self.gpus}))
        env = self.env.fingerprint if with_env and self.env is not None else None
        return models, str(self.driver) if self.driver else None, env

    def to_dict(self) -> JsonDict:
        """JSON form."""
        return {
            "name": self.name,
            "source": self.source,
            "status": self.status,
            "node_id": self.node_id,
            "labels": dict(self.labels),
            "gpus": [g.to_dict() for g in self.gpus],
            "driver_version": str(self.driver) if self.driver else None,
            "problems": list(self.problems),
            "fix": self.fix,
            "env": self.env.to_dict() if self.env else None,
        }


@dataclass(frozen=True)
class NodeClass:
    """Nodes with identical GPU models and driver (and, with ``--scan-env``, environment)."""

    id: str
    gpus: tuple[FleetGpu, ...]  # one per model; ``count`` = GPUs of that model over all the class's nodes
    driver: DriverVersion | None
    nodes: tuple[FleetNode, ...]
    env_fingerprint: str | None = None

    @property
    def name(self) -> str:
        """``H100 80GB HBM3 · 580.65.06`` (models joined by ``+``)."""
        models = " + ".join(_short(g.name) for g in self.gpus)
        env = f" · env {self.env_fingerprint}" if self.env_fingerprint else ""
        return f"{models} · {self.driver or 'driver ?'}{env}"

    @property
    def judged_gpus(self) -> tuple[Gpu, ...]:
        """The class's GPU models as the verdicts name them, one per model (product names kept)."""
        return tuple(gpu for g in self.gpus if (gpu := g.gpu) is not None)

    @property
    def compute_capabilities(self) -> tuple[ComputeCapability, ...]:
        """The distinct compute capabilities of the class's GPUs."""
        return tuple(sorted({g.compute_capability for g in self.gpus if g.compute_capability is not None}))

    @property
    def gpu_count(self) -> int:
        """GPUs over all nodes of the class."""
        return sum(g.count for g in self.gpus)

    @property
    def mig(self) -> bool:
        """Whether any node of the class has MIG enabled."""
        return any(g.mig_enabled for n in self.nodes for g in n.gpus)

    def to_dict(self) -> JsonDict:
        """JSON form (nodes by name)."""
        return {
            "id": self.id,
            "name": self.name,
            "gpus": [
                {"name": g.name, "compute_capability": str(g.compute_capability), "count": g.count} for g in self.gpus
            ],
            "driver_version": str(self.driver) if self.driver else None,
            "env_fingerprint": self.env_fingerprint,
            "node_count": len(self.nodes),
            "gpu_count": self.gpu_count,
            "mig": self.mig,
            "nodes": [n.name for n in self.nodes],
        }


@functools.lru_cache(maxsize=4096)
def _model_key(name: str, cc: ComputeCapability | None) -> tuple[str, str]:
    """Cached: a fleet repeats a few models thousands of times."""
    from cudafit.rules.gpus import normalize_gpu_name

    return normalize_gpu_name(name) or name, str(cc)


def _short(name: str) -> str:
    for prefix in ("NVIDIA-", "NVIDIA ", "Tesla-", "Tesla "):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def iter_classes(nodes: Iterable[FleetNode], *, with_env: bool = False) -> Iterable[NodeClass]:
    """Group the judged nodes into classes, ordered by compute capability, model and driver.

    Ids are ``c1``, ``c2``... in that order, so the same fleet gives the same ids every time.
    """
    groups: dict[ClassKey, list[FleetNode]] = {}
    for n in nodes:
        if n.judged:
            groups.setdefault(n.class_key(with_env=with_env), []).append(n)

    def order(
        item: tuple[ClassKey, list[FleetNode]],
    ) -> tuple[list[ComputeCapability], tuple[tuple[str, str], ...], DriverVersion, str]:
        (models, _driver, env), members = item
        ccs = sorted(ComputeCapability(*map(int, cc.split("."))) for _name, cc in models)
        return ccs, models, members[0].driver or DriverVersion((0,)), env or ""

    for i, ((_models, _drv, env), members) in enumerate(sorted(groups.items(), key=order), start=1):
        merged: dict[tuple[str, str], FleetGpu] = {}
        for n in members:
            for g in n.gpus:
                prev = merged.get(g.model_key)
                merged[g.model_key] = (
                    g if prev is None else FleetGpu(prev.name, prev.compute_capability, prev.count + g.count)
                )
        gpus = tuple(
            FleetGpu(g.name, g.compute_capability, g.count)
            for g in sorted(merged.values(), key=lambda g: (g.compute_capability or ComputeCapability(0, 0), g.name))
        )
        yield NodeClass(f"c{i}", gpus, members[0].driver, tuple(members), env)


@dataclass(frozen=True)
class FleetInventory:
    """A fleet: every node, where the inventory came from, and what could not be asked at all."""

    nodes: tuple[FleetNode, ...]
    source: str
    problems: tuple[str, ...] = ()
    by_env: bool = False  # classes also split by each node's own environment (--scan-env)

    @property
    def classes(self) -> tuple[NodeClass, ...]:
        """The judged nodes grouped into classes (computed once per inventory)."""
        cached: tuple[NodeClass, ...] | None = self.__dict__.get("_classes")
        if cached is None:
            cached = tuple(iter_classes(self.nodes, with_env=self.by_env))
            self.__dict__["_classes"] = cached  # frozen dataclass: a derived value, set once
        return cached

    @property
    def unjudged(self) -> tuple[FleetNode, ...]:
        """Nodes that are not part of any class (no GPU, unknown, unreachable...)."""
        return tuple(n for n in self.nodes if not n.judged)

    def status_counts(self) -> dict[str, int]:
        """Nodes per status."""
        out: dict[str, int] = {}
        for n in self.nodes:
            out[n.status] = out.get(n.status, 0) + 1
        return out

    def to_dict(self) -> JsonDict:
        """``cudafit.fleet/1``."""
        from cudafit import __version__

        return {
            "schema": FLEET_SCHEMA,
            "cudafit_version": __version__,
            "source": self.source,
            "summary": {
                "nodes": len(self.nodes),
                "judged": sum(1 for n in self.nodes if n.judged),
                "classes": len(self.classes),
                "by_status": self.status_counts(),
            },
            "problems": list(self.problems),
            "classes": [c.to_dict() for c in self.classes],
            "nodes": [n.to_dict() for n in self.nodes],
        }


def build_inventory(
    nodes: Sequence[FleetNode], source: str, problems: Sequence[str] = (), *, by_env: bool = False
) -> FleetInventory:
    """An inventory with node names made unique (sources may repeat a hostname)."""
    seen: dict[str, int] = {}
    out: list[FleetNode] = []
    for n in nodes:
        k = seen.get(n.name, 0)
        seen[n.name] = k + 1
        out.append(replace(n, name=f"{n.name}#{k + 1}") if k else n)
    return FleetInventory(tuple(out), source, tuple(problems), by_env)


def node_from_inventory(
    name: str,
    inv: Inventory,
    *,
    source: str,
    labels: Mapping[str, str] | None = None,
    node_id: str | None = None,
    expects_gpu: bool | None = None,
    env: NodeEnv | None = None,
) -> FleetNode:
    """A node from a single machine's probe :class:`~cudafit.probe.Inventory` (``cudafit gpus``).

    ``expects_gpu``: what the cluster says (Ray's ``GPU`` resource, Kubernetes' ``nvidia.com/gpu``
    capacity); a node the cluster counts GPUs on but whose probe found none is ``unknown-gpu``.
    """
    groups: dict[tuple[str, str, bool | None], list[GpuDevice]] = {}
    for d in inv.devices:
        groups.setdefault((d.name, str(d.compute_capability), d.mig_mode), []).append(d)
    gpus = tuple(
        FleetGpu(
            name=devs[0].name,
            compute_capability=devs[0].compute_capability,
            count=len(devs),
            mig_enabled=devs[0].mig_mode,
            mig=(("", sum(len(d.mig_devices) for d in devs)),) if any(d.mig_devices for d in devs) else (),
        )
        for devs in groups.values()
    )
    problems = list(inv.problems)
    status = JUDGED
    fix = None
    if not gpus:
        if expects_gpu:
            status = "unknown-gpu"
            problems.append("the cluster counts GPUs on this node, but its probe found none")
            fix = "check the NVIDIA driver on this node (cudafit gpus there says why NVML cannot see the GPUs)"
        else:
            status = "no-gpu"
    elif any(g.compute_capability is None for g in gpus):
        status = "unknown-gpu"
        problems.append("the probe could not read every GPU's compute capability")
        fix = "run cudafit gpus on the node: its problems say why the GPU could not be queried"
    if status == JUDGED and inv.driver_version is None:
        problems.append("driver version unknown: driver-dependent rules (PTX JIT, CUDA runtime floor) are not applied")
    return FleetNode(
        name=name,
        source=source,
        status=status,
        gpus=gpus,
        driver=inv.driver_version,
        labels=dict(labels or {}),
        problems=tuple(dict.fromkeys(problems)),
        fix=fix,
        node_id=node_id,
        env=env,
    )
