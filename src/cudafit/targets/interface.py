"""The one interface every scan source implements (the pip-audit "dependency source" shape)."""

from __future__ import annotations

import abc
from collections.abc import Iterator
from dataclasses import dataclass

from cudafit.binary.facts import BinaryFacts, FileFormat

__all__ = ["PathTarget", "ScanItem", "ScanJob", "Target", "TreeTarget", "error_item"]


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


@dataclass(frozen=True)
class ScanJob:
    """A file to inspect, with what is known about it before reading it (for parallel scans)."""

    path: str
    package: str | None = None
    version: str | None = None
    runtime_compiled: str | None = None
    inactive: str | None = None
    python_modules: int = 0

    def run(self) -> ScanItem | None:
        """Inspect the file (through the active scan cache); ``None`` when it cannot hold device code."""
        from cudafit.targets.files import inspect_candidate

        item = inspect_candidate(self.path)
        if item is None:
            return None
        return ScanItem(
            package=self.package,
            version=self.version,
            path=item.path,
            facts=item.facts,
            runtime_compiled=self.runtime_compiled,
            inactive=self.inactive,
            python_modules=self.python_modules,
        )


class Target(abc.ABC):
    """A place binaries come from."""

    @abc.abstractmethod
    def describe(self) -> str:
        """A short human description ("wheel fbgemm_gpu-1.9.0-...whl")."""

    @abc.abstractmethod
    def iter_items(self) -> Iterator[ScanItem]:
        """Yield one item per file that may hold device code (and one per problem)."""


class PathTarget(Target):
    """A target named by one path (a file, an image, a ``.pt2``): nothing is read before ``iter_items``."""

    def __init__(self, path: str) -> None:
        self.path = path


class TreeTarget(Target):
    """A target whose files are known before any is read (so a scan can split them over workers)."""

    @abc.abstractmethod
    def iter_jobs(self) -> Iterator[ScanJob]:
        """The candidate files, before any of them is read."""

    def iter_nested(self) -> Iterator[ScanItem]:
        """Items of containers found in the tree (the wheels of a ``dist/`` directory): read by their own
        target after the jobs, never split into jobs."""
        return iter(())

    def iter_items(self) -> Iterator[ScanItem]:
        for job in self.iter_jobs():
            item = job.run()
            if item is not None:
                yield item
        yield from self.iter_nested()


def error_item(path: str, message: str, code: str = "target-failed", package: str | None = None) -> ScanItem:
    """An item standing for something that could not be read at all."""
    facts = BinaryFacts(path=path, format=FileFormat.UNREADABLE, size=0, error=message, error_code=code)
    return ScanItem(package=package, version=None, path=path, facts=facts)
