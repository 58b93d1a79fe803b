"""Recognise packages whose device code is produced at run time, not only shipped.

* nvcc JIT libraries (flashinfer-python compiles kernels with nvcc on first use: the GPU's arch
  must be known to the *installed* nvcc);
* per-CUDA-version copies (bitsandbytes ships ``libbitsandbytes_cuda121.so`` ...
  ``_cuda132.so``; the one matching the installed torch's CUDA version is loaded: that version is
  read from ``torch/version.py`` as text, here, for the env target and the toolchain probe alike).

Recognition uses distribution names and file names only (compilers found from evidence are in
:mod:`cudafit.targets.compilers`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

__all__ = [
    "PER_CUDA_VERSION",
    "python_modules",
    "read_torch_version",
    "runtime_compiled_kind",
    "torch_version_from_text",
]

PER_CUDA_VERSION = re.compile(r"_cuda(\d{3})(?:_nocublaslt)?\.(so|dll)$")


def read_torch_version(sites: Sequence[str]) -> tuple[str | None, str | None]:
    """(torch version, its CUDA version) from ``torch/version.py`` read as text; ``(None, None)`` if absent."""
    for site in sites:
        path = os.path.join(site, "torch", "version.py")
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read(65536)
        except OSError:
            continue
        return torch_version_from_text(text)
    return None, None


def torch_version_from_text(text: str) -> tuple[str | None, str | None]:
    """(``__version__``, ``cuda``) of a ``torch/version.py`` read as text (never imported)."""
    ver = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)", text, re.M)
    cuda = re.search(r"^cuda\s*(?::\s*[^=]+)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
    return (ver.group(1) if ver else None), (cuda.group(1) if cuda else None)


def inactive_reason(filename: str, torch_cuda: str | None, env: dict[str, str] | None = None) -> str | None:
    """Why a per-CUDA-version copy is not the one that loads, or ``None`` when it is (or cannot be told).

    bitsandbytes loads ``libbitsandbytes_cuda<XYZ>`` for the installed torch's CUDA version
    (``BNB_CUDA_VERSION`` overrides it).
    """
    m = PER_CUDA_VERSION.search(filename)
    if not m:
        return None
    override = (env or {}).get("BNB_CUDA_VERSION")
    wanted = override or (torch_cuda.replace(".", "") if torch_cuda else None)
    if not wanted:
        return None
    if m.group(1) == wanted:
        return None
    source = "BNB_CUDA_VERSION" if override else f"torch's CUDA {torch_cuda}"
    return f"per-CUDA-version copy for CUDA {m.group(1)[:-1]}.{m.group(1)[-1]}; the cuda{wanted} copy loads ({source})"


def runtime_compiled_kind(distribution: str | None, filenames: Iterable[str]) -> str | None:
    """``nvcc-jit``, ``per-cuda-version`` or ``None``.

    Triton, XLA, NVRTC and nvJitLink users are found from evidence in their files
    (:mod:`cudafit.targets.compilers`); only pure-Python nvcc JIT libraries, whose wheels hold no binary
    that could say so, are known by name (ecosystem.json ``runtime_compiling``, with its source).
    """
    from cudafit.rules.ecosystem import load_ecosystem

    if distribution and load_ecosystem().runtime_compiler(distribution) == "nvcc-jit":
        return "nvcc-jit"
    if any(PER_CUDA_VERSION.search(f) for f in filenames):
        return "per-cuda-version"
    return None


def python_modules(filenames: Iterable[str]) -> int:
    """How many Python modules a distribution ships besides package markers and tests: code that runs on any
    GPU, so a CUDA extension built only for other GPUs is one path of the package, not all of it."""
    n = 0
    for f in filenames:
        name = f.replace("\\", "/")
        if not name.endswith(".py") or name.endswith("/__init__.py") or name == "__init__.py":
            continue
        if any(part in ("test", "tests", "testing") for part in name.split("/")[:-1]):
            continue
        n += 1
    return n
