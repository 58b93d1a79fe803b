"""What a scan yields: one :class:`ScanItem` per file that may hold device code, and the item that stands for
something that could not be read (:func:`error_item`).  Plain data at the bottom of ``targets``: the scan
cache keys its files by this shape, and every target builds these."""

from __future__ import annotations

from dataclasses import dataclass

from cudafit.binary.facts import BinaryFacts, FileFormat

__all__ = ["ScanItem", "error_item"]


@dataclass(frozen=True)
class ScanItem:
    """One scanned file: where it is, which distribution owns it, and its binary facts.

    ``runtime_compiled`` says how the owning package produces device code at run time when it
    does (``nvcc-jit``, ``triton``, ``per-cuda-version``): those packages are not fully described
    by their shipped binaries.
    """

    package: str | None
    version: str | None
    path: str
    facts: BinaryFacts
    runtime_compiled: str | None = None
    every_kernel_used: bool = False  # e.g. a .pt2 model's cubins: no a/f module is "gated"
    inactive: str | None = None  # why this file is never loaded here (another per-CUDA-version copy is)
    #: Where the bytes are when ``path`` is only a display name (a downloaded wheel's member): ``verify``
    #: hands modules to the driver from there.
    origin: str | None = None
    #: The distribution's ``Requires-Dist`` lines (a wheel's METADATA): pinned compiler wheels say which
    #: NVRTC / nvJitLink / ptxas it will run (:mod:`cudafit.targets.compilers`).
    requires: tuple[str, ...] = ()
    #: Python modules the owning distribution ships (``targets.runtime.python_modules``): code that runs anywhere.
    python_modules: int = 0


def error_item(path: str, message: str, code: str = "target-failed", package: str | None = None) -> ScanItem:
    """An item standing for something that could not be read at all."""
    facts = BinaryFacts(path=path, format=FileFormat.UNREADABLE, size=0, error=message, error_code=code)
    return ScanItem(package=package, version=None, path=path, facts=facts)
