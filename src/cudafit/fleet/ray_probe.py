"""What runs on each Ray node: cudafit's own probe (NVML, never a CUDA context) and, on request,
a listing or scan of that node's own Python environment.

Kept apart from :mod:`cudafit.fleet.ray_source` so a worker imports only the probe, never the
driver-side code; the driver ships this package to the cluster (``runtime_env`` ``py_modules``),
so every node runs the same cudafit version as the caller.
"""

from __future__ import annotations

import os
import socket
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cudafit.model import JsonDict
    from cudafit.targets.interface import ScanItem

__all__ = ["probe_node", "scan_node_env"]


def _nvml_module() -> Any | None:
    """``pynvml`` (nvidia-ml-py); Ray's vendored copy when cudafit's dependency is not installed there.

    ``None`` lets :func:`cudafit.probe.probe_machine` choose (it honours ``CUDAFIT_FAKE_NVML``).
    """
    if os.environ.get("CUDAFIT_FAKE_NVML"):
        return None
    try:
        import pynvml  # noqa: F401
    except ImportError:
        try:
            from ray._private.thirdparty import pynvml as vendored
        except ImportError:
            return None
        return vendored
    return None


def probe_node(scan_env: bool) -> JsonDict:
    """This node's ``cudafit.gpus/1`` inventory, hostname and (``scan_env``) installed distributions."""
    from cudafit.probe import clear_cache, inventory_to_dict, probe_machine

    clear_cache()  # a worker process is reused: every fleet probe asks NVML afresh
    inv = probe_machine(nvml=_nvml_module())
    out: JsonDict = {
        "hostname": socket.gethostname(),
        "inventory": inventory_to_dict(inv),
        "env": None,
    }
    if scan_env:
        from cudafit.targets.env import iter_distributions, site_packages_of

        sites = site_packages_of()
        packages = sorted({(d.name, d.version) for s in sites for d in iter_distributions(s)})
        out["env"] = {"python": sys.executable, "sites": sites, "packages": [list(p) for p in packages]}
    return out


def scan_node_env(sites: list[str]) -> list[ScanItem]:
    """The scan items (binary facts, metadata and bytes only) of this node's environment."""
    from cudafit.targets.cache import scan_cache
    from cudafit.targets.env import EnvironmentTarget

    with scan_cache():
        return list(EnvironmentTarget(sites).iter_items())
