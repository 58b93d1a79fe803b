"""Ray: one probe task pinned to every alive node, through Ray's own scheduling.

``cudafit fleet ray [--address ADDR]`` (optional extra ``cudafit[ray]``) connects as a Ray driver,
lists the nodes (``ray.nodes()``), and runs :func:`cudafit.fleet.ray_probe.probe_node` once on each
alive node with ``NodeAffinitySchedulingStrategy(node_id, soft=False)``: the task runs on that node
or not at all.  It asks for ``num_cpus=0, num_gpus=0`` so busy CPUs and GPUs never hold it back, and
probes with NVML only (no CUDA context, nothing allocated on the GPUs).  Every node gets the same
deadline (``--timeout``); a node that has not answered by then is reported ``timeout``, a task that
failed ``unreachable`` with Ray's reason, and dead nodes from ``ray.nodes()`` are listed ``dead``:
none is dropped.  The caller's cudafit is shipped with the job (``runtime_env`` ``py_modules``) so
the nodes need no cudafit install and run the same version.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cudafit.errors import FleetError
from cudafit.fleet.inventory import FleetInventory, FleetNode, NodeEnv, build_inventory, node_from_inventory

if TYPE_CHECKING:
    from cudafit.targets.interface import ScanItem

__all__ = ["disconnect", "fetch_env_items", "ray_inventory"]


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as err:
        msg = "the Ray source needs Ray: pip install 'cudafit[ray]'"
        raise FleetError(msg) from err
    return ray


def _check_reachable(address: str, timeout: float) -> None:
    """A connect to the GCS port first: ``ray.init`` retries an unreachable address for minutes."""
    if address in ("auto", "local") or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        msg = f"not a Ray address: {address!r} (expected HOST:PORT, ray://HOST:PORT or auto)"
        raise FleetError(msg)
    try:
        with socket.create_connection((host, int(port)), timeout=min(timeout, 10.0)):
            pass
    except OSError as err:
        msg = f"cannot reach the Ray cluster at {address}: {err.strerror or err}"
        raise FleetError(msg) from err


_OWNED = {"connection": False}  # whether cudafit opened this process's Ray connection (and so closes it)


def _connect(ray: Any, address: str | None, timeout: float) -> bool:
    """Connect (unless this process already is a Ray driver); True when we connected."""
    if ray.is_initialized():
        return False
    addr = address or os.environ.get("RAY_ADDRESS") or "auto"
    _check_reachable(addr, timeout)
    import logging

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # this cudafit, shipped to the nodes

    try:
        ray.init(
            address=addr,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
            configure_logging=False,
            runtime_env={"py_modules": [package]},
            namespace="cudafit-fleet",
        )
    except ConnectionError as err:
        msg = f"cannot connect to a Ray cluster at {addr}: {err}"
        raise FleetError(msg) from err
    except Exception as err:  # ray raises RuntimeError/ValueError for bad addresses and version mismatches
        msg = f"cannot connect to the Ray cluster at {addr}: {type(err).__name__}: {err}"
        raise FleetError(msg) from err
    _OWNED["connection"] = True
    return True


def disconnect() -> None:
    """Close the Ray connection if cudafit opened it (a caller's own connection stays open)."""
    if _OWNED["connection"]:
        _OWNED["connection"] = False
        ray = _import_ray()
        ray.shutdown()


def _names(nodes: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Hostnames where they are unique, ``host/nodeid8`` where several nodes share one (local clusters)."""
    hosts = [str(n.get("NodeManagerHostname") or n.get("NodeManagerAddress") or "?") for n in nodes]
    out = {}
    for n, h in zip(nodes, hosts, strict=True):
        nid = str(n["NodeID"])
        out[nid] = h if hosts.count(h) == 1 else f"{h}/{nid[:8]}"
    return out


def _node_from_answer(
    name: str, nid: str, answer: Mapping[str, Any], labels: Mapping[str, str], gpus: float
) -> FleetNode:
    from cudafit.probe import inventory_from_dict

    probed_by = answer["inventory"].get("source") or "no GPU backend answered"
    source = f"ray ({probed_by})"  # "ray (nvml)"; a replayed fake says "ray (fake-nvml (...))"
    env = None
    raw_env = answer.get("env")
    if raw_env:
        env = NodeEnv(
            python=str(raw_env["python"]),
            sites=tuple(raw_env["sites"]),
            packages=tuple(sorted((str(p[0]), str(p[1])) for p in raw_env["packages"])),
        )
    inv = inventory_from_dict(answer["inventory"], source=source)
    return node_from_inventory(
        name, inv, source=source, labels=labels, node_id=nid, expects_gpu=gpus > 0 or None, env=env
    )


def _pinned(remote: Any, node_id: str, **options: Any) -> Any:
    """The remote function ``remote`` (made once: Ray exports each one) as a task that runs on ``node_id`` or not
    at all, holding no CPU or GPU, never retried."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    strategy = NodeAffinitySchedulingStrategy(node_id=node_id, soft=False)
    return remote.options(num_cpus=0, num_gpus=0, max_retries=0, scheduling_strategy=strategy, **options)


def _probe_all(ray: Any, nodes: Sequence[Mapping[str, Any]], timeout: float, scan_env: bool) -> dict[str, Any]:
    """Node id -> the probe's answer, or the exception its task raised; nodes that did not answer within
    ``timeout`` (one deadline for all) are absent, their tasks cancelled."""
    from cudafit.fleet.ray_probe import probe_node

    remote = ray.remote(probe_node)
    refs: dict[Any, str] = {}
    for n in nodes:
        if n.get("Alive"):
            refs[_pinned(remote, n["NodeID"], name="cudafit-probe").remote(scan_env)] = n["NodeID"]
    deadline = time.monotonic() + timeout
    ready, pending = ray.wait(list(refs), num_returns=len(refs), timeout=max(timeout, 0.0)) if refs else ([], [])
    answers: dict[str, Any] = {}
    for ref in ready:
        try:
            answers[refs[ref]] = ray.get(ref, timeout=max(deadline - time.monotonic(), 1.0))
        except Exception as err:  # RayTaskError, WorkerCrashedError, NodeDiedError, TaskUnschedulableError...
            answers[refs[ref]] = err
    for ref in pending:
        with contextlib.suppress(Exception):  # best effort: the node is reported as timed out either way
            ray.cancel(ref, force=True)
    return answers


def _node_of(n: Mapping[str, Any], name: str, answer: Any, timeout: float) -> FleetNode:
    """One node of ``ray.nodes()`` with its probe's answer (``None``: none in time): every node is reported."""
    nid = str(n["NodeID"])
    labels = {str(k): str(v) for k, v in (n.get("Labels") or {}).items()}
    if not n.get("Alive"):
        why = "Ray lists the node as dead"
        if n.get("DeathReasonMessage"):
            why += f": {n['DeathReasonMessage']}"
        return FleetNode(name, "ray", "dead", labels=labels, problems=(why,), node_id=nid)
    if answer is None:
        return FleetNode(
            name,
            "ray",
            "timeout",
            labels=labels,
            problems=(f"no answer from the probe within {timeout:g} s",),
            fix="the node may be overloaded or its NVML hung: run cudafit gpus on it, or raise --timeout",
            node_id=nid,
        )
    if isinstance(answer, BaseException):
        msg = str(answer).strip().splitlines()
        problem = f"the probe task failed: {type(answer).__name__}: {msg[-1] if msg else ''}"
        return FleetNode(name, "ray", "unreachable", labels=labels, problems=(problem,), node_id=nid)
    gpus = float((n.get("Resources") or {}).get("GPU", 0) or 0)
    return _node_from_answer(name, nid, answer, labels, gpus)


def ray_inventory(
    *, address: str | None = None, timeout: float = 60.0, scan_env: bool = False, keep_connection: bool = False
) -> FleetInventory:
    """Probe every alive node of the Ray cluster at ``address`` (``auto`` / ``RAY_ADDRESS`` by default)."""
    ray = _import_ray()
    connected = _connect(ray, address, timeout)
    try:
        nodes = list(ray.nodes())
        names = _names(nodes)
        answers = _probe_all(ray, nodes, timeout, scan_env)
        out = [_node_of(n, names[str(n["NodeID"])], answers.get(str(n["NodeID"])), timeout) for n in nodes]
        where = address or os.environ.get("RAY_ADDRESS") or "auto"
        return build_inventory(out, f"ray:{where}", by_env=scan_env)
    finally:
        if connected and not keep_connection:
            disconnect()


def fetch_env_items(inv: FleetInventory, *, timeout: float = 600.0) -> dict[str, list[ScanItem]]:
    """Scan each distinct node environment once, on a node that has it: fingerprint -> scan items.

    Needs the Ray connection :func:`ray_inventory` kept open (``keep_connection=True``); closes it
    if cudafit opened it.
    """
    ray = _import_ray()
    from cudafit.fleet.ray_probe import scan_node_env

    try:
        remote = ray.remote(scan_node_env)
        refs: dict[str, Any] = {}
        for n in inv.nodes:
            if n.judged and n.env is not None and n.env.fingerprint not in refs and n.node_id:
                refs[n.env.fingerprint] = _pinned(remote, n.node_id).remote(list(n.env.sites))
        out: dict[str, list[ScanItem]] = {}
        for fp, ref in refs.items():
            try:
                out[fp] = ray.get(ref, timeout=timeout)
            except Exception as err:
                msg = f"scanning the environment {fp} on its node failed: {type(err).__name__}: {err}"
                raise FleetError(msg) from err
        return out
    finally:
        disconnect()
