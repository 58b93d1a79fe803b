"""A Kubernetes node's GPUs and driver from NVIDIA GPU Feature Discovery (GFD) labels.

GFD (part of NVIDIA's k8s-device-plugin and of the GPU Operator) labels each GPU node from NVML,
https://github.com/NVIDIA/k8s-device-plugin/blob/main/docs/gpu-feature-discovery/README.md:

* ``nvidia.com/gpu.product``: the NVML name with spaces as ``-`` (``NVIDIA-H100-80GB-HBM3``); under
  the MIG ``single`` strategy ``<product>-MIG-<profile>`` (``-MIG-INVALID`` when GFD found the MIG
  layout inconsistent); ``-SHARED`` is appended when the GPU is time-sliced;
* ``nvidia.com/gpu.count``, ``nvidia.com/gpu.compute.major`` / ``.minor``, ``nvidia.com/gpu.family``,
  ``nvidia.com/gpu.memory`` (MiB);
* the driver: ``nvidia.com/cuda.driver-version.full`` / ``.major`` / ``.minor`` / ``.revision``, and
  the older (deprecated, still written) ``nvidia.com/cuda.driver.major`` / ``.minor`` / ``.rev``;
* MIG: ``nvidia.com/mig.capable``, ``nvidia.com/mig.strategy`` (``single`` / ``mixed``), and under
  ``mixed`` one ``nvidia.com/mig-<profile>.count`` (and ``.memory``...) per MIG profile.

A node with GPUs but without these labels (GFD not deployed) is ``unknown-gpu`` with the fix;
labels that are present but unreadable make the node ``invalid``, naming each bad label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

import msgspec

from cudafit.documents import DocumentError, K8sNode, convert, decode_json_as, parse_ascii_int
from cudafit.errors import UnknownGpuError, ValueParseError
from cudafit.fleet.inventory import FleetGpu, FleetNode
from cudafit.model import ComputeCapability, DriverVersion, parse_driver_version

__all__ = ["DEPLOY_GFD_FIX", "GFD_PRODUCT", "decode_k8s_node", "driver_label_keys", "node_from_k8s"]

GFD_PRODUCT = "nvidia.com/gpu.product"
_COUNT = "nvidia.com/gpu.count"
_CC = ("nvidia.com/gpu.compute.major", "nvidia.com/gpu.compute.minor")
_MIG_STRATEGY = "nvidia.com/mig.strategy"
_MIXED_COUNT = re.compile(r"^nvidia\.com/mig-(?P<profile>[^/]+)\.count$")
_SINGLE_MIG = re.compile(r"^(?P<base>.+?)-MIG-(?P<profile>.+)$")
_INT = re.compile(r"\A[0-9]{1,9}\Z", re.ASCII)  # labels are text: ASCII digits only, bounded

DEPLOY_GFD_FIX = (
    "deploy NVIDIA GPU Feature Discovery (the NVIDIA GPU Operator includes it) so the node carries "
    "nvidia.com/gpu.product, nvidia.com/gpu.compute.major/.minor and nvidia.com/cuda.driver-version.* labels: "
    "https://github.com/NVIDIA/k8s-device-plugin/tree/main/docs/gpu-feature-discovery"
)


def driver_label_keys(labels: Mapping[str, str]) -> tuple[str, ...]:
    """The label keys that carry this node's driver version, newest form first."""
    if "nvidia.com/cuda.driver-version.full" in labels:
        return ("nvidia.com/cuda.driver-version.full",)
    for prefix, rev in (("nvidia.com/cuda.driver-version.", "revision"), ("nvidia.com/cuda.driver.", "rev")):
        if f"{prefix}major" in labels:
            return tuple(f"{prefix}{p}" for p in ("major", "minor", rev) if f"{prefix}{p}" in labels)
    return ()


def _driver(labels: Mapping[str, str], bad: list[str]) -> DriverVersion | None:
    keys = driver_label_keys(labels)
    if not keys:
        return None
    if len(keys) == 1 and keys[0].endswith(".full"):
        text = labels[keys[0]]
    else:
        parts = [labels[k] for k in keys]
        if not all(_INT.match(p) for p in parts if p != "") or not parts[0]:
            bad.extend(f"{k}={labels[k]!r}" for k in keys if labels[k] != "" and not _INT.match(labels[k]))
            return None
        text = ".".join(p for p in parts if p != "")
    try:
        return parse_driver_version(text)
    except ValueParseError:
        bad.append(f"{keys[0]}={labels[keys[0]]!r}")
        return None


def _int_label(labels: Mapping[str, str], key: str, bad: list[str]) -> int | None:
    value = labels.get(key)
    if value is None:
        return None
    number = parse_ascii_int(value, limit=1_000_000)
    if number is None:
        bad.append(f"{key}={value!r}")
    return number


def _has_gpu_signal(node: K8sNode, labels: Mapping[str, str]) -> bool:
    """Evidence of NVIDIA GPUs without GFD: the device plugin's resource, NFD's PCI vendor label."""
    for part in (node.status.capacity, node.status.allocatable):
        value = parse_ascii_int(str(part.get("nvidia.com/gpu", "0")))
        if value:
            return True
    return (
        labels.get("nvidia.com/gpu.present") == "true"
        or labels.get("feature.node.kubernetes.io/pci-10de.present") == "true"
        or any(k.startswith("nvidia.com/gpu.") for k in labels)
    )


def decode_k8s_node(raw: msgspec.Raw | bytes, *, index: int | None = None) -> K8sNode | DocumentError:
    """One node object's JSON decoded into what cudafit reads of it, or the error naming the field."""
    field = f"items[{index}]" if index is not None else ""
    try:
        return decode_json_as(raw, K8sNode, "node object", field=field)
    except DocumentError as err:
        return err


class _Named(msgspec.Struct):
    metadata: dict[str, object] = {}


def _name_of(obj: object, raw: msgspec.Raw | bytes | None) -> str:
    """The name of a node whose object is malformed, when it still says one."""
    if raw is not None:
        try:
            obj = {"metadata": msgspec.json.decode(raw, type=_Named).metadata}
        except (msgspec.MsgspecError, RecursionError, UnicodeDecodeError):
            return "?"
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else "?"


def node_from_k8s(
    obj: object, *, source: str, index: int | None = None, raw: msgspec.Raw | bytes | None = None
) -> FleetNode:
    """One ``Node`` object (as ``kubectl get nodes -o json`` or the API lists it) -> a fleet node.

    ``obj`` is the object as a dict, or already decoded by :func:`decode_k8s_node` (a
    :class:`K8sNode`, or the :class:`DocumentError` it met; ``raw`` is then its JSON, for the name).
    The object is checked by :mod:`cudafit.documents`: a node whose fields have the wrong type is an
    ``invalid`` node naming the field, never an error that loses the others.
    """
    node: K8sNode | DocumentError
    if isinstance(obj, (K8sNode, DocumentError)):
        node = obj
    else:
        try:
            node = convert(obj, K8sNode, "node object", field=f"items[{index}]" if index is not None else "")
        except DocumentError as err:
            node = err
    if isinstance(node, DocumentError):
        where = f"{node.field}: {node.problem}" if node.field else node.problem
        return FleetNode(_name_of(obj, raw), source, "invalid", problems=(f"malformed node object: {where}",))
    return _node_from_k8s(node, source=source)


def _node_from_k8s(node: K8sNode, *, source: str) -> FleetNode:
    name = node.metadata.name or "?"
    labels = dict(node.metadata.labels)
    ready = next((c.status for c in node.status.conditions if c.type == "Ready"), None)
    problems = ["node is not Ready"] if ready is not None and ready != "True" else []
    product = labels.get(GFD_PRODUCT)
    if product is None:
        if _has_gpu_signal(node, labels):
            problems.append("the node has NVIDIA GPUs but no GPU Feature Discovery labels")
            return FleetNode(name, source, "unknown-gpu", labels=labels, problems=tuple(problems), fix=DEPLOY_GFD_FIX)
        return FleetNode(name, source, "no-gpu", labels=labels, problems=tuple(problems))
    bad: list[str] = []  # "key='value'" of every unreadable label, in the order read
    count = _int_label(labels, _COUNT, bad)
    major, minor = (_int_label(labels, key, bad) for key in _CC)
    driver = _driver(labels, bad)
    gpu = _gpu(product, count, labels, bad, problems)
    if not bad:
        gpu = replace(gpu, compute_capability=_compute_capability(major, minor, gpu.name, bad, problems))
    if bad:
        return FleetNode(
            name,
            source,
            "invalid",
            labels=labels,
            problems=(*problems, "unreadable GPU Feature Discovery labels: " + ", ".join(bad)),
            fix="check the GFD pod on this node (kubectl -n <gfd namespace> logs ...): its labels are not valid",
        )
    if gpu.compute_capability is None:
        return FleetNode(name, source, "unknown-gpu", labels=labels, problems=tuple(problems), fix=DEPLOY_GFD_FIX)
    if driver is None:
        problems.append("no driver version label: driver-dependent rules (PTX JIT, CUDA runtime floor) not applied")
    return FleetNode(name, source, "ok", gpus=(gpu,), driver=driver, labels=labels, problems=tuple(problems))


def _gpu(product: str, count: int | None, labels: Mapping[str, str], bad: list[str], problems: list[str]) -> FleetGpu:
    """The node's GPU model from ``gpu.product`` (time-slicing and MIG suffixes taken off) and its MIG layout,
    compute capability not yet known.  ``count`` 0: not labelled (under the MIG ``single`` strategy
    ``gpu.count`` counts MIG devices, not GPUs)."""
    gpu_name = product.strip()
    mig: list[tuple[str, int]] = []
    mig_enabled: bool | None = None
    if gpu_name.endswith("-SHARED"):
        gpu_name = gpu_name.removesuffix("-SHARED")
        problems.append("GPUs are shared (time-slicing): several pods run on one GPU")
    m = _SINGLE_MIG.match(gpu_name)
    if m:
        gpu_name, profile = m.group("base"), m.group("profile")
        mig_enabled = True
        if profile == "INVALID":
            problems.append("GFD reports an invalid MIG layout for the 'single' strategy (label ...-MIG-INVALID)")
        else:
            mig.append((profile, count or 0))
            count = None
    for key in labels:
        mm = _MIXED_COUNT.match(key)
        if mm and (n := _int_label(labels, key, bad)):
            mig.append((mm.group("profile"), n))
            mig_enabled = True
    strategy = labels.get(_MIG_STRATEGY)
    if strategy not in (None, "none", "single", "mixed"):
        bad.append(f"{_MIG_STRATEGY}={strategy!r}")
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9 ._()/-]*$", gpu_name):
        bad.append(f"{GFD_PRODUCT}={product!r}")
    return FleetGpu(gpu_name, None, count if count is not None else 0, mig_enabled, tuple(sorted(mig)))


def _compute_capability(
    major: int | None, minor: int | None, gpu_name: str, bad: list[str], problems: list[str]
) -> ComputeCapability | None:
    """From GFD's compute labels; without them (old GFD releases) from cudafit's GPU table by product name."""
    if major is not None and minor is not None:
        return ComputeCapability(major, minor)
    if (major is None) != (minor is None):
        bad.append(f"only one of {_CC[0]} / {_CC[1]} is set")
        return None
    from cudafit.rules.gpus import resolve_gpu

    try:
        cc = resolve_gpu(gpu_name).compute_capability
    except UnknownGpuError as err:
        problems.append(f"no compute capability labels and {err.message}")
        return None
    problems.append(f"no {_CC[0]}/.minor labels: compute capability {cc} from cudafit's GPU table")
    return cc
