"""The one interface every scan source implements (the pip-audit "dependency source" shape).

:class:`ScanItem`, :class:`ScanJob` and :func:`error_item` are defined below this module (``items``,
``candidate_files``) and named here too: a target's whole vocabulary is importable from its interface."""

from __future__ import annotations

import abc
from collections.abc import Iterator

from cudafit.targets.candidate_files import ScanJob
from cudafit.targets.items import ScanItem, error_item

__all__ = ["PathTarget", "ScanItem", "ScanJob", "Target", "TreeTarget", "error_item"]


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
