"""Which files may hold device code, decided from the name or the first bytes, and reading one of them.

Below every target: a wheel, an image, an environment and a directory all ask :func:`is_candidate_name`
before reading a member or a file, and a :class:`ScanJob` (a file known before it is read, so a scan can
split the files of a tree over workers) is run by :func:`inspect_candidate`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from cudafit.binary import sniff
from cudafit.targets.items import ScanItem, error_item

__all__ = ["ScanJob", "inspect_candidate", "is_candidate_name"]

_SUFFIXES = (".so", ".a", ".o", ".cubin", ".fatbin", ".ptx", ".dll", ".pyd", ".node")
_SKIP_SUFFIXES = (
    ".py",
    ".pyc",
    ".pyi",
    ".txt",
    ".md",
    ".json",
    ".h",
    ".hpp",
    ".cuh",
    ".cu",
    ".c",
    ".cc",
    ".cpp",
    ".typed",
    ".html",
    ".css",
    ".js",
    ".png",
    ".jpg",
    ".svg",
    ".yaml",
    ".yml",
    ".toml",
    ".cfg",
    ".ini",
    ".rst",
)


def is_candidate_name(name: str) -> bool | None:
    """True: may hold device code by its name; False: certainly not; None: look at its first bytes."""
    lower = name.lower()
    if lower.endswith(_SUFFIXES) or ".so." in lower:
        return True
    if lower.endswith(_SKIP_SUFFIXES) or "." in os.path.basename(lower):
        return False
    return None  # extension-less: an executable may be a CUDA program


def inspect_candidate(path: str, name: str | None = None) -> ScanItem | None:
    """Inspect one file; ``None`` when its first bytes show it cannot hold device code."""
    if is_candidate_name(path) is None:
        try:
            with open(path, "rb") as fh:
                head = fh.read(64)
        except OSError as err:
            return error_item(name or path, err.strerror or str(err), "io-error")
        if sniff(head, path) is None:
            return None
    from cudafit.targets.cache import cached_inspect

    facts = cached_inspect(path, name=name)
    return ScanItem(package=None, version=None, path=facts.path, facts=facts)


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
