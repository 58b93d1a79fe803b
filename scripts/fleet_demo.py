"""Try the fleet commands without a GPU cluster: a local Ray cluster or Kubernetes API fed with FAKES.

    python scripts/fleet_demo.py ray  check fbgemm_gpu-1.9.0-...whl --emit-placement
    python scripts/fleet_demo.py k8s  doctor --site-packages SITE --emit-placement

``ray``: a 3-node ray.cluster_utils.Cluster on this machine (1 CPU each, no dashboard); each raylet gets its
own CUDAFIT_FAKE_NVML host from tests/fakes/nvml_hosts.json (a T4 on driver 535, an RTX 2080 + RTX 3090 on
570, two H100s on 580) and a ``gpu-pool`` node label.  ``k8s``: a local HTTP server answering
/api/v1/nodes from tests/fakes/gfd_nodes.json (GPU Feature Discovery label sets), reached through a
generated kubeconfig with the real ``kubernetes`` client.  The cudafit command given is run with
``--fleet ray --ray-address ADDR`` or ``--fleet k8s --kubeconfig FILE`` appended (for ``fleet``
commands: ``ray --address ADDR`` / ``k8s --kubeconfig FILE``).  The GPUs are fakes; the verdicts are
cudafit's real ones for those GPUs and drivers.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar
from urllib.parse import parse_qs, urlparse

ROOT = Path(__file__).resolve().parent.parent
FAKES = ROOT / "tests" / "fakes"
RAY_NODES = (("t4_535", "t4"), ("mixed_2080_3090", "rtx"), ("h100x2_580", "h100"))


def _cudafit(args: list[str]) -> int:
    return subprocess.run([sys.executable, "-m", "cudafit", *args], check=False).returncode


def ray_demo(args: list[str]) -> int:
    import ray
    from ray.cluster_utils import Cluster

    def node(i: int) -> dict[str, object]:
        host, pool = RAY_NODES[i]
        return {
            "num_cpus": 1,
            "object_store_memory": 80 * 1024 * 1024,
            "env_vars": {"CUDAFIT_FAKE_NVML": f"{FAKES / 'nvml_hosts.json'}#{host}"},
            "labels": {"gpu-pool": pool},
        }

    cluster = Cluster(initialize_head=True, head_node_args={**node(0), "include_dashboard": False})
    try:
        for i in (1, 2):
            cluster.add_node(**node(i))
        cluster.wait_for_nodes()
        if args[0] == "fleet":
            return _cudafit(["fleet", "ray", "--address", cluster.address, *args[1:]])
        return _cudafit([*args, "--fleet", "ray", "--ray-address", cluster.address])
    finally:
        ray.shutdown()
        cluster.shutdown()


class _Nodes(BaseHTTPRequestHandler):
    items: ClassVar[list[dict[str, object]]] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        url = urlparse(self.path)
        selector = parse_qs(url.query).get("labelSelector", [""])[0]
        items = self.items
        if selector:
            from cudafit.fleet.selectors import parse_label_selector

            match = parse_label_selector(selector)
            items = [n for n in items if match(n["metadata"].get("labels") or {})]  # type: ignore[index,union-attr]
        body = json.dumps({"kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": items}).encode()
        self.send_response(200 if url.path == "/api/v1/nodes" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def k8s_demo(args: list[str]) -> int:
    _Nodes.items = json.loads((FAKES / "gfd_nodes.json").read_text())["items"]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Nodes)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        kubeconfig.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [
                        {"name": "demo", "cluster": {"server": f"http://127.0.0.1:{server.server_address[1]}"}}
                    ],
                    "users": [{"name": "demo", "user": {"token": "demo"}}],
                    "contexts": [{"name": "demo", "context": {"cluster": "demo", "user": "demo"}}],
                    "current-context": "demo",
                }
            )
        )
        where = ["--kubeconfig", str(kubeconfig)]
        cmd = ["fleet", "k8s", *where, *args[1:]] if args[0] == "fleet" else [*args, "--fleet", "k8s", *where]
        try:
            return _cudafit(cmd)
        finally:
            server.shutdown()


def main() -> int:
    if len(sys.argv) < 3 or sys.argv[1] not in ("ray", "k8s"):
        print(__doc__, file=sys.stderr)
        return 2
    return ray_demo(sys.argv[2:]) if sys.argv[1] == "ray" else k8s_demo(sys.argv[2:])


if __name__ == "__main__":
    raise SystemExit(main())
