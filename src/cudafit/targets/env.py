"""Installed environments: distributions from ``*.dist-info`` (METADATA + RECORD), no imports.

Files are mapped to the distribution whose RECORD lists them; CUDA binaries outside every
RECORD are reported without a package (grouped by directory by the renderers).
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import sysconfig
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from cudafit.errors import TargetError
from cudafit.targets.files import is_candidate_name, iter_candidate_files
from cudafit.targets.interface import ScanJob, TreeTarget
from cudafit.targets.runtime import runtime_compiled_kind

__all__ = [
    "Distribution",
    "EnvironmentTarget",
    "iter_distributions",
    "looks_like_site_packages",
    "site_packages_of",
]


@dataclass(frozen=True)
class Distribution:
    """An installed distribution, read from its metadata only."""

    name: str
    version: str
    files: tuple[str, ...]  # absolute, normalised paths from RECORD


def looks_like_site_packages(path: str) -> bool:
    """Whether ``path`` holds installed distributions (any ``*.dist-info`` directory)."""
    try:
        with os.scandir(path) as it:
            return any(e.name.endswith(".dist-info") and e.is_dir() for e in it)
    except OSError:
        return False


def iter_distributions(site: str) -> Iterator[Distribution]:
    """Every ``*.dist-info`` in ``site`` with its RECORD file list (unreadable ones are skipped)."""
    try:
        names = sorted(os.listdir(site))
    except OSError:
        return
    for entry in names:
        if not entry.endswith(".dist-info"):
            continue
        base = os.path.join(site, entry)
        try:
            name, version = _name_version(os.path.join(base, "METADATA"))
        except OSError:
            continue
        name = name or entry.split("-")[0]
        files: list[str] = []
        try:
            with open(os.path.join(base, "RECORD"), encoding="utf-8", errors="replace", newline="") as fh:
                for row in csv.reader(fh):
                    # Only files that can hold device code need an owner; skip the rest cheaply.
                    if row and is_candidate_name(row[0]) is not False:
                        files.append(os.path.normpath(os.path.join(site, row[0])))
        except OSError:
            pass
        yield Distribution(name=name, version=version, files=tuple(files))


def _name_version(path: str) -> tuple[str, str]:
    """``Name`` and ``Version`` from a METADATA file's header block (RFC 822 style, core metadata)."""
    name = version = ""
    with open(path, "rb") as fh:
        for raw in fh:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if not line:
                break  # end of the header block: the description follows
            if line.startswith("Name:") and not name:
                name = line[5:].strip()
            elif line.startswith("Version:") and not version:
                version = line[8:].strip()
            if name and version:
                break
    return name, version


def site_packages_of(python: str | None = None) -> list[str]:
    """The purelib/platlib directories of ``python`` (default: this interpreter).

    For another interpreter this runs ``python -c 'import sysconfig; ...'``: it executes that
    interpreter's standard library only, never code from the scanned packages (``-I`` isolates it
    from the environment's ``sitecustomize``/``PYTHONPATH``; ``-S`` skips ``site``).
    """
    if python is None:
        import site

        paths = sysconfig.get_paths()
        found = [paths["purelib"], paths["platlib"]]
        if site.ENABLE_USER_SITE:  # pip install --user packages are importable too
            found.append(site.getusersitepackages())
    else:
        code = "import sysconfig; p = sysconfig.get_paths(); print(p['purelib']); print(p['platlib'])"
        try:
            out = subprocess.run(
                [python, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=30, check=True
            )
        except (OSError, subprocess.SubprocessError) as err:
            msg = f"could not ask {python} for its site-packages: {err}"
            raise TargetError(msg) from err
        found = out.stdout.split()
    result: list[str] = []
    for p in found:
        if os.path.isdir(p) and os.path.realpath(p) not in {os.path.realpath(r) for r in result}:
            result.append(p)
    return result


class EnvironmentTarget(TreeTarget):
    """One or more site-packages directories."""

    def __init__(self, sites: Sequence[str]) -> None:
        self.sites = list(sites)

    @classmethod
    def current(cls, python: str | None = None) -> EnvironmentTarget:
        """The running interpreter's environment, or that of ``python``."""
        return cls(site_packages_of(python))

    def describe(self) -> str:
        return "environment " + ", ".join(self.sites)

    def iter_jobs(self) -> Iterator[ScanJob]:
        """The candidate files with their distribution, before any of them is read."""
        from cudafit.probe.toolchains import read_torch_version
        from cudafit.targets.runtime import inactive_reason

        _torch, torch_cuda = read_torch_version(self.sites)
        owner: dict[str, Distribution] = {}
        runtime: dict[str, str | None] = {}
        for site in self.sites:
            for dist in iter_distributions(site):
                for f in dist.files:
                    owner.setdefault(f, dist)
                runtime[dist.name] = runtime_compiled_kind(dist.name, dist.files)
        environ = dict(os.environ)
        for site in self.sites:
            for path in iter_candidate_files(site):
                found = owner.get(os.path.normpath(path))
                if found is None:
                    yield ScanJob(path)
                    continue
                kind = runtime.get(found.name)
                inactive = inactive_reason(path, torch_cuda, environ) if kind == "per-cuda-version" else None
                yield ScanJob(path, found.name, found.version, kind, inactive)


def current_python() -> str:
    """The interpreter running cudafit."""
    return sys.executable
