"""Recipe for tests/fakes/gfd_nodes.json and gfd_garbage.json: FAKE Kubernetes node lists with NVIDIA GPU
Feature Discovery labels, shaped like `kubectl get nodes -o json`.

No GPU cluster was lent to this project: the label sets follow GFD's documentation and source
(k8s-device-plugin docs/gpu-feature-discovery/README.md "Generated Labels", the MIG 'single' and
'mixed' tables; internal/lm: product = NVML name with spaces as '-', '-MIG-<profile>' under the
single strategy, '-SHARED' when time-sliced, 'nvidia.com/mig-<profile>.*' under mixed; driver labels
cuda.driver.major/.minor/.rev (deprecated) and cuda.driver-version.major/.minor/.revision/.full; family
names as getArchFamily returns them) and published `kubectl describe node` outputs (GPU Operator
blog posts).  Values not in those sources (memory sizes, timestamps) are plausible, not recorded.

    python tests/fakes/make_gfd_nodes.py    # rewrites both files
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
ABOUT = (
    "FAKE node list (kubectl get nodes -o json shape) with GPU Feature Discovery labels reconstructed from GFD's "
    "documentation and source, not recorded on a real cluster; recipe: tests/fakes/make_gfd_nodes.py"
)


def driver_labels(version: str, *, new: bool = True) -> dict[str, str]:
    major, minor, *rest = version.split(".")
    rev = rest[0] if rest else ""
    out = {
        "nvidia.com/cuda.driver.major": major,
        "nvidia.com/cuda.driver.minor": minor,
        "nvidia.com/cuda.driver.rev": rev,
    }
    if new:
        out.update(
            {
                "nvidia.com/cuda.driver-version.major": major,
                "nvidia.com/cuda.driver-version.minor": minor,
                "nvidia.com/cuda.driver-version.revision": rev,
                "nvidia.com/cuda.driver-version.full": version,
            }
        )
    return out


def runtime_labels(cuda: str, *, new: bool = True) -> dict[str, str]:
    major, minor = cuda.split(".")
    out = {"nvidia.com/cuda.runtime.major": major, "nvidia.com/cuda.runtime.minor": minor}
    if new:
        out.update(
            {
                "nvidia.com/cuda.runtime-version.major": major,
                "nvidia.com/cuda.runtime-version.minor": minor,
                "nvidia.com/cuda.runtime-version.full": cuda,
            }
        )
    return out


def gpu_labels(
    product: str, count: int, cc: str, family: str, memory: int, *, mig_capable: bool = False
) -> dict[str, str]:
    major, minor = cc.split(".")
    return {
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.count": str(count),
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/gpu.memory": str(memory),
        "nvidia.com/gpu.family": family,
        "nvidia.com/gpu.compute.major": major,
        "nvidia.com/gpu.compute.minor": minor,
        "nvidia.com/gpu.mode": "compute",
        "nvidia.com/mig.capable": "true" if mig_capable else "false",
        "nvidia.com/gfd.timestamp": "1763900000",
        "feature.node.kubernetes.io/pci-10de.present": "true",
    }


def node(name: str, labels: dict[str, str], gpus: int = 0, instance: str = "") -> dict[str, object]:
    base = {"kubernetes.io/hostname": name, "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"}
    if instance:
        base["node.kubernetes.io/instance-type"] = instance
    capacity = {"cpu": "96", "memory": "1056656876Ki", "pods": "110"}
    if gpus:
        capacity["nvidia.com/gpu"] = str(gpus)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {**base, **labels}},
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            "nodeInfo": {"kubeletVersion": "v1.33.4", "architecture": "amd64"},
        },
    }


def nodes() -> list[dict[str, object]]:
    t4 = {
        **gpu_labels("Tesla-T4", 1, "7.5", "turing", 15360),
        **driver_labels("535.183.01", new=False),
        **runtime_labels("12.2", new=False),
    }
    a100_single = {
        **gpu_labels("NVIDIA-A100-SXM4-80GB-MIG-1g.10gb", 56, "8.0", "ampere", 9984, mig_capable=True),
        "nvidia.com/mig.strategy": "single",
        "nvidia.com/gpu.multiprocessors": "14",
        "nvidia.com/gpu.slices.gi": "1",
        "nvidia.com/gpu.slices.ci": "1",
        "nvidia.com/gpu.engines.copy": "1",
        "nvidia.com/gpu.engines.decoder": "0",
        "nvidia.com/gpu.engines.encoder": "0",
        "nvidia.com/gpu.engines.jpeg": "0",
        "nvidia.com/gpu.engines.ofa": "0",
        **driver_labels("580.65.06"),
        **runtime_labels("13.0"),
    }
    a100_mixed = {
        **gpu_labels("NVIDIA-A100-SXM4-40GB", 8, "8.0", "ampere", 40960, mig_capable=True),
        "nvidia.com/mig.strategy": "mixed",
        "nvidia.com/mig-3g.20gb.count": "4",
        "nvidia.com/mig-3g.20gb.memory": "20096",
        "nvidia.com/mig-3g.20gb.multiprocessors": "42",
        "nvidia.com/mig-3g.20gb.slices.gi": "3",
        "nvidia.com/mig-3g.20gb.slices.ci": "3",
        "nvidia.com/mig-1g.5gb.count": "14",
        "nvidia.com/mig-1g.5gb.memory": "4864",
        "nvidia.com/mig-1g.5gb.multiprocessors": "14",
        "nvidia.com/mig-1g.5gb.slices.gi": "1",
        "nvidia.com/mig-1g.5gb.slices.ci": "1",
        **driver_labels("570.124.06"),
        **runtime_labels("12.8"),
    }
    l4 = lambda drv, cuda: {  # noqa: E731
        **gpu_labels("NVIDIA-L4", 1, "8.9", "ada-lovelace", 23034),
        **driver_labels(drv),
        **runtime_labels(cuda),
    }
    h100 = {
        **gpu_labels("NVIDIA-H100-80GB-HBM3", 8, "9.0", "hopper", 81559),
        **driver_labels("580.65.06"),
        **runtime_labels("13.0"),
    }
    h100_shared = {
        **h100,
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-SHARED",
        "nvidia.com/gpu.replicas": "4",
        "nvidia.com/gpu.sharing-strategy": "time-slicing",
    }
    b200 = {
        **gpu_labels("NVIDIA-B200", 8, "10.0", "blackwell", 183359),
        **driver_labels("580.65.06"),
        **runtime_labels("13.0"),
    }
    return [
        node("cpu-control-1", {"node-role.kubernetes.io/control-plane": ""}),
        node("gpu-t4-1", t4, 1, "g4dn.xlarge"),
        node("gpu-a100-mig-1", a100_single, 56, "p4de.24xlarge"),
        node("gpu-a100-mixed-1", a100_mixed, 0, "p4d.24xlarge"),
        node("gpu-l4-1", l4("570.172.08", "12.8"), 1, "g6.xlarge"),
        node("gpu-l4-2", l4("580.82.07", "13.0"), 1, "g6.xlarge"),
        node("gpu-h100-1", h100, 8, "p5.48xlarge"),
        node("gpu-h100-2", h100, 8, "p5.48xlarge"),
        node("gpu-h100-570-1", {**h100, **driver_labels("570.124.06"), **runtime_labels("12.8")}, 8, "p5.48xlarge"),
        node("gpu-h100-shared-1", h100_shared, 32, "p5.48xlarge"),
        node("gpu-b200-1", b200, 8, "p6-b200.48xlarge"),
        node("gpu-nogfd-1", {}, 4, "g5.12xlarge"),
    ]


def garbage() -> list[dict[str, object]]:
    good = nodes()[6]  # gpu-h100-1
    bad_cc = {**good["metadata"]["labels"], "nvidia.com/gpu.compute.major": "nine"}  # type: ignore[index]
    bad_driver = {**good["metadata"]["labels"], "nvidia.com/cuda.driver-version.full": "latest"}  # type: ignore[index]
    bad_count = {**good["metadata"]["labels"], "nvidia.com/gpu.count": "-8"}  # type: ignore[index]
    return [
        good,
        node("gpu-bad-cc", bad_cc, 8),
        node("gpu-bad-driver", bad_driver, 8),
        node("gpu-bad-count", bad_count, 8),
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-bad-labels", "labels": ["not", "a", "map"]}},
    ]


def write(name: str, items: list[dict[str, object]]) -> None:
    doc = {"_about": ABOUT, "apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}
    (HERE / name).write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    write("gfd_nodes.json", nodes())
    write("gfd_garbage.json", garbage())
