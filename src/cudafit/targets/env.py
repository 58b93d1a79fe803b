"""Installed environments: distributions from ``*.dist-info`` (METADATA + RECORD), no imports.

Files are mapped to the distribution whose RECORD lists them; CUDA binaries outside every
RECORD are reported without a package (grouped by directory by the renderers).

Another interpreter's environment (``doctor --python``) is resolved by reading files only, never by
running that interpreter: running it, even with ``-I -S``, either executes the environment's
``site``/``.pth``/``sitecustomize`` code or (``-S``) leaves ``sys.prefix`` at the base interpreter of a
venv and so names the wrong site-packages.  The rules followed are CPython's: PEP 405 for venvs
(``pyvenv.cfg`` next to the unresolved executable or one directory above it;
``include-system-site-packages``), ``site``'s for the user site and the search order, and the
``conda-meta/`` marker of conda environments.
"""

from __future__ import annotations

import csv
import os
import re
import sys
import sysconfig
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from cudafit.errors import EnvironmentResolutionError
from cudafit.targets.files import is_candidate_name, iter_candidate_files
from cudafit.targets.interface import ScanJob, TreeTarget
from cudafit.targets.runtime import python_modules, runtime_compiled_kind

__all__ = [
    "Distribution",
    "EnvironmentTarget",
    "PythonEnvironment",
    "SiteDir",
    "iter_distributions",
    "looks_like_site_packages",
    "resolve_environment",
    "site_packages_of",
]


@dataclass(frozen=True)
class Distribution:
    """An installed distribution, read from its metadata only."""

    name: str
    version: str
    files: tuple[str, ...]  # absolute, normalised paths from RECORD
    python_modules: int = 0  # Python modules in RECORD (targets.runtime.python_modules)


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
        py: list[str] = []
        try:
            with open(os.path.join(base, "RECORD"), encoding="utf-8", errors="replace", newline="") as fh:
                for row in csv.reader(fh):
                    # Only files that can hold device code need an owner; skip the rest cheaply.
                    if row and row[0].endswith(".py"):
                        py.append(row[0])
                    elif row and is_candidate_name(row[0]) is not False:
                        files.append(os.path.normpath(os.path.join(site, row[0])))
        except OSError:
            pass
        yield Distribution(name=name, version=version, files=tuple(files), python_modules=python_modules(py))


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


@dataclass(frozen=True)
class SiteDir:
    """A directory an interpreter imports installed packages from, and why it does."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(frozen=True)
class PythonEnvironment:
    """Where an interpreter's installed packages live, as its own ``site`` module would find them.

    ``sites`` are in that interpreter's search order: a distribution in an earlier directory
    shadows one of the same name in a later directory.
    """

    python: str  # what was given: an interpreter or an environment directory
    prefix: str  # the sys.prefix the interpreter would have
    kind: str  # "venv", "conda" or "installation"
    version: str | None  # "3.11" (None only for a Windows layout, where no path needs it)
    sites: tuple[SiteDir, ...]
    notes: tuple[str, ...] = ()  # what was left out, and why

    def describe(self) -> str:
        """``venv /path (Python 3.11)``."""
        return f"{self.kind} {self.prefix}" + (f" (Python {self.version})" if self.version else "")


_LIB_DIR = re.compile(r"^(?:python|pypy)(\d+\.\d+)t?$")
_VERSION = re.compile(r"(?<!\d)(\d+)\.(\d+)")
_CONDA_PYTHON = re.compile(r"^python-(\d+\.\d+)\.[^-]*-.*\.json$")


def resolve_environment(path: str, environ: Mapping[str, str] | None = None) -> PythonEnvironment:
    """The environment of the interpreter (or environment directory) ``path``, by reading files only.

    Nothing of the target runs: no interpreter, no ``site``, no ``.pth`` file, no ``sitecustomize``.
    ``path``: ``ENV/bin/python[3[.X]]``, ``ENV\\Scripts\\python.exe``, a conda ``ENV/bin/python``, an
    installation's interpreter (symlinks followed, as CPython does to find its prefix), the
    directory ``ENV`` itself, or a bare name looked up on ``PATH``.

    ``environ`` (default ``os.environ``) supplies ``PYTHONNOUSERSITE`` and ``PYTHONUSERBASE``: the
    target reads them from the environment it is started in, taken to be this one (a target
    started with ``-s`` or ``-I`` would leave its user site out; that cannot be known from files).
    The user site is not looked for on Windows layouts nor in macOS framework builds.
    Raises :class:`EnvironmentResolutionError` when ``path`` is not a Python environment.
    """
    environ = os.environ if environ is None else environ
    given = os.path.abspath(os.path.expanduser(path))
    if not os.path.lexists(given) and os.sep not in path and (os.altsep or os.sep) not in path:
        import shutil

        on_path = shutil.which(path)  # a bare name such as python3.11: looked up on PATH, as a shell would
        given = os.path.abspath(on_path) if on_path else given
    if not os.path.lexists(given):
        msg = f"{path}: no such file or directory"
        raise EnvironmentResolutionError(msg)
    if os.path.isdir(given):
        prefix = _environment_root(given)
        names: tuple[str, ...] = ()
        if prefix is None:
            hint = " (it holds installed distributions: use --site-packages)" if looks_like_site_packages(given) else ""
            msg = f"{path} is not a Python environment: no pyvenv.cfg, conda-meta/ or lib/pythonX.Y/ in it{hint}"
            raise EnvironmentResolutionError(msg)
    else:
        name = os.path.basename(given)
        if not name.lower().startswith(("python", "pypy")):
            msg = f"{path} is not a Python interpreter (expected ENV/bin/python or an environment directory)"
            raise EnvironmentResolutionError(msg)
        real = os.path.realpath(given)
        names = (name, os.path.basename(real))
        # PEP 405: pyvenv.cfg next to the executable or one level up, the symlink *not* dereferenced.
        exe_dir = os.path.dirname(given)
        venv = next((d for d in (exe_dir, os.path.dirname(exe_dir)) if os.path.isfile(_cfg_path(d))), None)
        prefix = venv or _environment_root(os.path.dirname(real))
        if prefix is None:
            msg = (
                f"cannot find the environment of {path}: no pyvenv.cfg beside it, and no lib/pythonX.Y/ under "
                f"{os.path.dirname(real)} or its parent (a launcher script such as a pyenv shim? give the real "
                "interpreter, or --site-packages DIR)"
            )
            raise EnvironmentResolutionError(msg)
    return _environment_at(path, prefix, names, environ)


def _cfg_path(directory: str) -> str:
    return os.path.join(directory, "pyvenv.cfg")


def _is_prefix(directory: str) -> bool:
    if os.path.isfile(_cfg_path(directory)) or os.path.isdir(os.path.join(directory, "conda-meta")):
        return True
    if os.path.isdir(os.path.join(directory, "Lib", "site-packages")):
        return True
    return bool(_lib_versions(directory))


def _environment_root(directory: str) -> str | None:
    """``directory`` if it is an environment's prefix, else its parent when it is the ``bin``/``Scripts`` one."""
    if _is_prefix(directory):
        return directory
    parent = os.path.dirname(directory)
    if os.path.basename(directory).lower() in ("bin", "scripts") and _is_prefix(parent):
        return parent
    return None


def _lib_versions(prefix: str) -> dict[str, list[str]]:
    """``{"3.11": ["python3.11"], ...}``: the ``lib/pythonX.Y[t]`` (or ``pypyX.Y``) directories of ``prefix``."""
    found: dict[str, list[str]] = {}
    for lib in ("lib", "lib64"):
        try:
            entries = sorted(os.listdir(os.path.join(prefix, lib)))
        except OSError:
            continue
        for entry in entries:
            m = _LIB_DIR.match(entry)
            if m and os.path.isdir(os.path.join(prefix, lib, entry)) and entry not in found.get(m.group(1), []):
                found.setdefault(m.group(1), []).append(entry)
    return found


def _read_cfg(path: str) -> dict[str, str]:
    """``key = value`` lines of a ``pyvenv.cfg`` (PEP 405), keys lower-cased."""
    out: dict[str, str] = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, eq, value = line.partition("=")
                if eq:
                    out[key.strip().lower()] = value.strip()
    except OSError as err:
        msg = f"cannot read {path}: {err.strerror or err}"
        raise EnvironmentResolutionError(msg) from err
    return out


def _python_version(prefix: str, cfg: Mapping[str, str], names: Sequence[str]) -> str | None:
    """``X.Y`` of the environment's Python, without running it.

    In order: ``pyvenv.cfg`` (``version_info`` as uv and virtualenv write it, ``version`` as venv does),
    ``conda-meta/python-X.Y.Z-*.json``, the interpreter's name (``python3.11``), and the one
    ``lib/pythonX.Y`` directory of the prefix.
    """
    for key in ("version_info", "version"):
        m = _VERSION.match(cfg.get(key, ""))
        if m:
            return f"{m.group(1)}.{m.group(2)}"
    try:
        conda = sorted(os.listdir(os.path.join(prefix, "conda-meta")))
    except OSError:
        conda = []
    for entry in conda:
        cm = _CONDA_PYTHON.match(entry)
        if cm:
            return cm.group(1)
    for name in names:
        m = _VERSION.search(name)
        if m:
            return f"{m.group(1)}.{m.group(2)}"
    versions = _lib_versions(prefix)
    return next(iter(versions)) if len(versions) == 1 else None


def _prefix_sites(prefix: str, version: str | None, *, venv: bool) -> list[str]:
    """The existing site-packages directories ``site`` derives from one prefix.

    ``lib/pythonX.Y[t]/site-packages`` and its ``lib64`` twin (the platlib of Fedora-style
    builds), ``Lib/site-packages`` (Windows layouts); for an installation's prefix also Debian's
    ``dist-packages`` (``local/lib/pythonX.Y``, ``lib/python3``, ``lib/pythonX.Y``), as Debian's ``site`` adds them.
    """
    candidates: list[str] = []
    if version is not None:
        names = _lib_versions(prefix).get(version) or [f"python{version}"]
        for lib in ("lib", "lib64"):
            candidates += [os.path.join(prefix, lib, name, "site-packages") for name in names]
        if not venv:
            candidates += [
                os.path.join(prefix, "local", "lib", f"python{version}", "dist-packages"),
                os.path.join(prefix, "lib", "python3", "dist-packages"),
                os.path.join(prefix, "lib", f"python{version}", "dist-packages"),
            ]
    candidates.append(os.path.join(prefix, "Lib", "site-packages"))
    return _existing_unique(candidates)


def _existing_unique(paths: Sequence[str]) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for p in paths:
        real = os.path.realpath(p)
        if os.path.isdir(p) and real not in seen:
            seen.add(real)
            out.append(p)
    return out


def _base_prefix(cfg: Mapping[str, str]) -> str | None:
    """The prefix of a venv's base interpreter: virtualenv's ``base-prefix``, else from ``home`` (its bin dir)."""
    explicit = cfg.get("base-prefix")
    if explicit and _is_prefix(explicit):
        return explicit
    home = cfg.get("home")
    if not home:
        return None
    for directory in (home, os.path.realpath(home)):
        root = _environment_root(directory)
        if root is not None:
            return root
    return None


def _user_site(prefix: str, version: str | None, environ: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(the user site directory if it exists and is enabled, a note when it is left out on purpose)."""
    if version is None:
        return None, None
    if environ.get("PYTHONNOUSERSITE"):
        return None, "user site-packages not scanned: PYTHONNOUSERSITE is set in this environment"
    base = environ.get("PYTHONUSERBASE") or os.path.join(os.path.expanduser("~"), ".local")
    names = _lib_versions(prefix).get(version) or [f"python{version}"]
    path = os.path.join(base, "lib", names[0], "site-packages")
    return (path if os.path.isdir(path) else None), None


def _environment_at(given: str, prefix: str, names: Sequence[str], environ: Mapping[str, str]) -> PythonEnvironment:
    cfg_file = _cfg_path(prefix)
    cfg = _read_cfg(cfg_file) if os.path.isfile(cfg_file) else {}
    if cfg:
        kind = "venv"
    elif os.path.isdir(os.path.join(prefix, "conda-meta")):
        kind = "conda"
    else:
        kind = "installation"
    version = _python_version(prefix, cfg, names)
    own = _prefix_sites(prefix, version, venv=kind == "venv")
    if not own:
        if version is None:
            msg = (
                f"cannot tell which Python {prefix} is for: no version in pyvenv.cfg, no conda-meta/python-*.json, "
                f"no versioned interpreter name, and not exactly one lib/pythonX.Y/ (give ENV/bin/pythonX.Y, or "
                "--site-packages DIR)"
            )
        else:
            msg = f"{given}: no site-packages directory under {prefix} (looked for lib/python{version}/site-packages)"
        raise EnvironmentResolutionError(msg)
    why = {
        "venv": f"the venv's own site-packages ({cfg_file})",
        "conda": f"the conda environment's site-packages ({os.path.join(prefix, 'conda-meta')})",
        "installation": f"the site-packages of the Python installation at {prefix}",
    }[kind]
    sites = [SiteDir(p, why) for p in own]
    notes: list[str] = []
    user_enabled = True
    if kind == "venv":
        if cfg.get("include-system-site-packages", "false").lower() == "true":
            base = _base_prefix(cfg)
            base_sites = _prefix_sites(base, version, venv=False) if base else []
            home = cfg.get("home")
            reason = f"the base interpreter's (home = {home}), as pyvenv.cfg sets include-system-site-packages"
            sites += [SiteDir(p, reason) for p in base_sites if p not in own]
            if not base_sites:
                notes.append(f"include-system-site-packages is true, but no site-packages of home = {home}")
        else:
            user_enabled = False
            notes.append("user site-packages not scanned: a venv without include-system-site-packages disables it")
    if user_enabled:
        user, note = _user_site(prefix, version, environ)
        if note:
            notes.append(note)
        if user is not None and user not in [s.path for s in sites]:
            # site.main() adds the user site before the prefixes' site-packages: it comes first.
            sites.insert(0, SiteDir(user, "user site-packages (PYTHONUSERBASE or ~/.local), enabled for this Python"))
    return PythonEnvironment(given, prefix, kind, version, tuple(sites), tuple(notes))


def _running_sites() -> list[SiteDir]:
    """This interpreter's site-packages, from its own (already run) ``site`` module, in search order."""
    import site

    found: list[SiteDir] = []
    if site.ENABLE_USER_SITE:  # pip install --user packages are importable too, and come first
        found.append(SiteDir(site.getusersitepackages(), "user site-packages, enabled for this interpreter"))
    try:
        prefix_sites = site.getsitepackages()
    except AttributeError:  # an old virtualenv's replacement site module
        paths = sysconfig.get_paths()
        prefix_sites = [paths["purelib"], paths["platlib"]]
    for p in prefix_sites:
        real = os.path.realpath(p)
        inside_base = sys.base_prefix != sys.prefix and real.startswith(os.path.realpath(sys.base_prefix) + os.sep)
        reason = (
            "the base interpreter's site-packages (include-system-site-packages)"
            if inside_base
            else "this interpreter's site-packages"
        )
        found.append(SiteDir(p, reason))
    unique = set(_existing_unique([d.path for d in found]))
    out: list[SiteDir] = []
    for d in found:
        if d.path in unique:
            unique.discard(d.path)
            out.append(d)
    return out


def site_packages_of(python: str | None = None) -> list[str]:
    """The site-packages directories of ``python`` (default: this interpreter), in search order.

    For another interpreter they are resolved from its files (:func:`resolve_environment`); it is never run.
    """
    dirs = _running_sites() if python is None else list(resolve_environment(python).sites)
    return [d.path for d in dirs]


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class EnvironmentTarget(TreeTarget):
    """One or more site-packages directories, searched in order (an earlier one shadows a later one)."""

    def __init__(
        self, sites: Sequence[str], *, dirs: Sequence[SiteDir] = (), environment: PythonEnvironment | None = None
    ) -> None:
        self.sites = list(sites)
        self.dirs = list(dirs) or [SiteDir(s, "given with --site-packages") for s in self.sites]
        self.environment = environment
        self._owners: tuple[dict[str, Distribution], dict[str, str | None], list[str]] | None = None
        self._python: dict[str, int] = {}  # distribution -> its Python modules (targets.runtime.python_modules)

    @classmethod
    def current(cls, python: str | None = None) -> EnvironmentTarget:
        """The running interpreter's environment, or that of ``python`` (resolved from files, never run)."""
        if python is None:
            dirs = _running_sites()
            return cls([d.path for d in dirs], dirs=dirs)
        env = resolve_environment(python)
        return cls([d.path for d in env.sites], dirs=env.sites, environment=env)

    def describe(self) -> str:
        return "environment " + ", ".join(self.sites)

    def notes(self) -> list[str]:
        """What was scanned and why, what was left out and why (for the report's notes)."""
        out: list[str] = []
        if self.environment is not None:
            out.append(f"environment of {self.environment.python}: {self.environment.describe()}")
        out += [f"scanned {d}" for d in self.dirs]
        if self.environment is not None:
            out += self.environment.notes
        out += self._ownership()[2]
        return out

    def _ownership(self) -> tuple[dict[str, Distribution], dict[str, str | None], list[str]]:
        """(file -> owning distribution, distribution -> run-time compile kind, shadowing notes), once."""
        if self._owners is None:
            owner: dict[str, Distribution] = {}
            runtime: dict[str, str | None] = {}
            first_site: dict[str, tuple[str, Distribution]] = {}
            shadowed: list[str] = []
            for site in self.sites:
                for dist in iter_distributions(site):
                    key = _normalised(dist.name)
                    earlier = first_site.setdefault(key, (site, dist))
                    if earlier[0] != site:
                        shadowed.append(
                            f"not scanned: {dist.name} {dist.version} in {site}, shadowed by "
                            f"{earlier[1].name} {earlier[1].version} in {earlier[0]}"
                        )
                        for f in dist.files:
                            owner.setdefault(f, _SHADOWED)
                        continue
                    for f in dist.files:
                        owner.setdefault(f, dist)
                    runtime[dist.name] = runtime_compiled_kind(dist.name, dist.files)
                    self._python[dist.name] = dist.python_modules
            self._owners = (owner, runtime, shadowed)
        return self._owners

    def iter_jobs(self) -> Iterator[ScanJob]:
        """The candidate files with their distribution, before any of them is read."""
        from cudafit.targets.runtime import inactive_reason, read_torch_version

        _torch, torch_cuda = read_torch_version(self.sites)
        owner, runtime, _shadowed = self._ownership()
        environ = dict(os.environ)
        for site in self.sites:
            for path in iter_candidate_files(site):
                found = owner.get(os.path.normpath(path))
                if found is None:
                    yield ScanJob(path)
                    continue
                if found is _SHADOWED:
                    continue
                kind = runtime.get(found.name)
                inactive = inactive_reason(path, torch_cuda, environ) if kind == "per-cuda-version" else None
                yield ScanJob(path, found.name, found.version, kind, inactive, self._python.get(found.name, 0))


_SHADOWED = Distribution(name="", version="", files=())  # owner of the files of a shadowed distribution
