"""Compilers that produce device code at run time, found without importing anything.

* nvcc (JIT libraries such as flashinfer build kernels with it): ``$CUDA_HOME/bin/nvcc``, then
  ``PATH``; version from ``nvcc --version``, targets from ``nvcc --list-gpu-code``.
* Triton's bundled ptxas (``triton/backends/nvidia/bin/ptxas``, or ``TRITON_PTXAS_PATH``): a
  ptxas that predates a GPU's arch cannot compile Triton kernels for it; its version is read from
  the binary (it belongs to a scanned package, so it is never run).
* torch's CUDA version, read from ``torch/version.py`` as text (never imported; the reader is
  :func:`cudafit.targets.runtime.read_torch_version`, which the env target needs too).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping, Sequence

from cudafit.probe.backends import Runner, real_runner
from cudafit.probe.inventory import Toolchain
from cudafit.targets.runtime import read_torch_version, torch_version_from_text

__all__ = ["find_nvcc", "find_triton_ptxas", "iter_toolchains", "read_torch_version", "torch_version_from_text"]

_RELEASE = re.compile(r"release (\d+\.\d+)")


def _version(runner: Runner, exe: str) -> tuple[str | None, str | None]:
    rc, out, err = runner([exe, "--version"], 10.0)
    if rc != 0:
        return None, (err or out).strip() or f"exit code {rc}"
    m = _RELEASE.search(out)
    return (m.group(1) if m else None), None


def find_nvcc(env: Mapping[str, str], runner: Runner = real_runner) -> Toolchain:
    """The nvcc a JIT library would use."""
    candidates = [os.path.join(env[k], "bin", "nvcc") for k in ("CUDA_HOME", "CUDA_PATH") if env.get(k)]
    on_path = shutil.which("nvcc", path=env.get("PATH"))
    if on_path:
        candidates.append(on_path)
    exe = next((c for c in candidates if os.path.isfile(c)), None)
    if exe is None:
        return Toolchain("nvcc", None, None, problem="no nvcc in CUDA_HOME or on PATH")
    version, problem = _version(runner, exe)
    targets: tuple[str, ...] = ()
    rc, out, _err = runner([exe, "--list-gpu-code"], 10.0)
    if rc == 0:
        targets = tuple(t for t in out.split() if t.startswith("sm_"))
    return Toolchain("nvcc", exe, version, targets, problem)


def find_triton_ptxas(sites: Sequence[str], env: Mapping[str, str], runner: Runner = real_runner) -> Toolchain | None:
    """Triton's ptxas (``TRITON_PTXAS_PATH`` wins), or ``None`` when Triton is not installed."""
    exe = env.get("TRITON_PTXAS_PATH")
    if not exe:
        for site in sites:
            cand = os.path.join(site, "triton", "backends", "nvidia", "bin", "ptxas")
            if os.path.isfile(cand):
                exe = cand
                break
    if not exe:
        return None
    # Read from the binary's own version string: Triton's ptxas is part of what is scanned, never run.
    from cudafit.targets.compilers import read_cuda_release  # probe -> targets, never the other way

    release = read_cuda_release(exe)
    version = f"{release.major}.{release.minor}" if release is not None else None
    problem = None if release is not None else f"no CUDA release string in {exe}"
    targets: tuple[str, ...] = ()
    if version:
        from cudafit.model import parse_cuda_version
        from cudafit.rules.tables import toolkit_targets

        targets = tuple(str(t) for t in toolkit_targets(parse_cuda_version(version)))
    return Toolchain("triton-ptxas", exe, version, targets, problem)


def iter_toolchains(sites: Sequence[str], env: Mapping[str, str], runner: Runner = real_runner) -> list[Toolchain]:
    """nvcc, Triton's ptxas and torch's CUDA build, as far as they exist."""
    out = [find_nvcc(env, runner)]
    ptxas = find_triton_ptxas(sites, env, runner)
    if ptxas is not None:
        out.append(ptxas)
    torch_version, torch_cuda = read_torch_version(sites)
    if torch_version is not None:
        problem = None if torch_cuda else "CPU-only torch build (torch.version.cuda is None)"
        out.append(Toolchain("torch", None, torch_version, (f"cuda {torch_cuda}",) if torch_cuda else (), problem))
    return out
