"""Single files and directory trees (e.g. a flashinfer-cubin directory of bare cubins)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

from cudafit.targets.candidate_files import ScanJob, is_candidate_name
from cudafit.targets.interface import PathTarget, TreeTarget
from cudafit.targets.items import ScanItem

__all__ = ["DirectoryTarget", "FileTarget", "is_candidate_name", "iter_candidate_files", "iter_wheel_files"]

# Directories that hold only bytecode or packaging metadata, never device code: not walked.
_METADATA_DIRS = (".dist-info", ".egg-info")


def iter_candidate_files(root: str) -> Iterator[str]:
    """Regular files under ``root`` that may hold device code, in a stable (sorted) order.

    Symlinks are not followed and hard links / duplicate inodes are reported once.  Only the
    candidates and sub-directories are sorted, not every file of the tree.
    """
    seen: set[tuple[int, int]] = set()
    stack = [root]
    while stack:
        d = stack.pop()
        subdirs: list[str] = []
        found: list[tuple[str, os.DirEntry[str], bool]] = []
        try:
            with os.scandir(d) as it:
                for e in it:
                    try:
                        if e.is_symlink():
                            continue
                        if e.is_dir():
                            if e.name != "__pycache__" and not e.name.endswith(_METADATA_DIRS):
                                subdirs.append(e.path)
                            continue
                        if not e.is_file():
                            continue
                    except OSError:
                        continue
                    verdict = is_candidate_name(e.name)
                    if verdict is not False:
                        found.append((e.name, e, verdict is None))
        except OSError:
            continue
        for _name, e, unsure in sorted(found, key=lambda t: t[0]):
            try:
                st = e.stat()
            except OSError:
                yield e.path
                continue
            if unsure and not (st.st_mode & stat.S_IXUSR):
                continue
            key = (st.st_dev, st.st_ino)
            if key in seen:
                continue
            seen.add(key)
            yield e.path
        stack.extend(sorted(subdirs, reverse=True))


def iter_wheel_files(directory: str) -> Iterator[str]:
    """The ``*.whl`` files directly in ``directory`` (a ``dist/`` or wheelhouse), sorted: ``check``, ``scan``
    and ``audit`` of a directory read its wheels as wheels (members, name, version)."""
    try:
        with os.scandir(directory) as it:
            found = sorted(e.path for e in it if e.name.lower().endswith(".whl") and e.is_file())
    except OSError:
        return
    yield from found


class FileTarget(PathTarget):
    """One file on disk."""

    def describe(self) -> str:
        return f"file {self.path}"

    def iter_items(self) -> Iterator[ScanItem]:
        from cudafit.targets.cache import cached_inspect

        facts = cached_inspect(self.path)
        yield ScanItem(package=None, version=None, path=facts.path, facts=facts)


class DirectoryTarget(TreeTarget):
    """Every candidate file below a directory, and (``wheels``) the wheels directly in it."""

    def __init__(self, path: str, *, wheels: bool = True) -> None:
        self.path = path
        self.wheels = wheels

    def describe(self) -> str:
        return f"directory {self.path}"

    def iter_jobs(self) -> Iterator[ScanJob]:
        """The candidate files, before any of them is read."""
        for path in iter_candidate_files(self.path):
            yield ScanJob(path)

    def iter_nested(self) -> Iterator[ScanItem]:
        """The wheels directly in the directory (``check dist/``), each read as a wheel."""
        from cudafit.targets.wheel import WheelTarget

        for wheel in iter_wheel_files(self.path) if self.wheels else ():
            yield from WheelTarget(wheel).iter_items()
