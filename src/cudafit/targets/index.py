"""Package indexes (PEP 503 HTML, PEP 691 JSON, PEP 658 metadata) through a maintained client.

``cudafit find`` and requirement checks need an index's file list: names, URLs, sha256 digests, yanked
flags, ``Requires-Python`` and whether the core metadata is served on its own.  Pages are fetched and
parsed by `pypi-simple <https://pypi.org/project/pypi-simple/>`_ (JSON where the index serves it, HTML
otherwise: PyTorch's indexes are HTML only); no index format is parsed here.  A parsed page is kept in
the cache for ``CUDAFIT_INDEX_TTL`` seconds (default 3600) so a second run needs no network, and an
index that cannot be reached falls back to the last page read, with a note saying how old it is.
Wheel compatibility uses ``packaging``'s tags, the same rules pip applies.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from cudafit.targets.remote import DEFAULT_TIMEOUT, RemoteError, describe_network_error

__all__ = [
    "IndexClient",
    "IndexFile",
    "IndexPage",
    "python_tags",
]


@dataclass(frozen=True)
class IndexFile:
    """One file of a project page: what the index says about it, before any byte of it is read."""

    project: str
    version: str
    filename: str
    url: str
    index_url: str
    sha256: str | None
    size: int | None
    yanked: bool
    requires_python: str | None
    has_metadata: bool
    metadata_sha256: str | None

    def __str__(self) -> str:
        return self.filename

    @property
    def is_wheel(self) -> bool:
        """Whether the file is a wheel (sdists are never read: reading one could mean building it)."""
        return self.filename.endswith(".whl")

    def tags(self) -> frozenset[str]:
        """The wheel's tags (``cp311-cp311-manylinux_2_28_x86_64`` ...), empty for other files."""
        from packaging.utils import InvalidWheelFilename, parse_wheel_filename

        if not self.is_wheel:
            return frozenset()
        try:
            return frozenset(str(t) for t in parse_wheel_filename(self.filename)[3])
        except InvalidWheelFilename:
            return frozenset()


@dataclass(frozen=True)
class IndexPage:
    """A project page: its files, where it came from, and a note when it is a cached copy."""

    project: str
    index_url: str  # the Simple API root asked (https://pypi.org/simple/)
    files: tuple[IndexFile, ...]
    #: When the page was read from the index (``time.time()``); a cached copy keeps the time of its read.
    fetched_at: float
    note: str | None = None  # set on a cached copy used because the index could not be read

    @property
    def age(self) -> float:
        """Seconds since the page was read from its index (a cached copy is kept ``CUDAFIT_INDEX_TTL``)."""
        return time.time() - self.fetched_at


def python_tags(python_version: str | None = None, platforms: Sequence[str] = ()) -> list[str]:
    """The wheel tags an interpreter accepts, most preferred first.

    Defaults to this interpreter (``packaging.tags.sys_tags``); with ``python_version``/``platforms``
    the tags of that CPython on those platforms, manylinux platforms expanded to the older glibc
    versions they include (``manylinux_2_28_x86_64`` also takes ``manylinux_2_17``/``manylinux2014``),
    as pip does for ``--platform``.
    """
    from packaging import tags

    if python_version is None and not platforms:
        return [str(t) for t in tags.sys_tags()]
    version = tuple(int(x) for x in (python_version or "{}.{}".format(*__import__("sys").version_info)).split(".")[:2])
    plats = _expand_platforms(platforms) if platforms else list(tags.platform_tags())
    out = [str(t) for t in tags.cpython_tags(version, platforms=plats)]
    out += [str(t) for t in tags.compatible_tags(version, platforms=plats)]
    return out


def _expand_platforms(platforms: Iterable[str]) -> list[str]:
    import re

    legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
    out: list[str] = []
    for plat in platforms:
        m = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)", plat)
        if not m:
            out.append(plat)
            continue
        major, minor, arch = int(m.group(1)), int(m.group(2)), m.group(3)
        for glibc in range(minor, -1, -1):
            out.append(f"manylinux_{major}_{glibc}_{arch}")
            if major == 2 and glibc in legacy:
                out.append(f"{legacy[glibc]}_{arch}")
    return list(dict.fromkeys(out))


def _cache_path(index_url: str, project: str) -> str:
    from cudafit.targets.cache import cache_dir

    key = hashlib.sha256(f"{index_url.rstrip('/')}/{project}".encode()).hexdigest()[:24]
    return os.path.join(cache_dir(), "index", f"{key}.json")


class IndexClient:
    """Reads project pages of one or more indexes (``pypi-simple``), with a page cache.

    ``timeout`` bounds every connection and every wait for bytes; ``ttl`` is how long a cached page is
    used without asking the index again (0: always ask; the cached page is still the fallback).
    """

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        session: Any = None,
        ttl: float | None = None,
        use_cache: bool = True,
    ) -> None:
        self.timeout = timeout
        self._session = session
        env_ttl = os.environ.get("CUDAFIT_INDEX_TTL")
        self.ttl = ttl if ttl is not None else float(env_ttl) if env_ttl and env_ttl.isdigit() else 3600.0
        self.use_cache = use_cache

    @property
    def session(self) -> Any:
        """The HTTP session, made on first use (a run answered from the caches never imports ``requests``)."""
        if self._session is None:
            from cudafit.targets.remote import make_session

            self._session = make_session()
        return self._session

    def project_page(self, index_url: str, project: str) -> IndexPage:
        """The project's files on ``index_url`` (a Simple API root such as ``https://pypi.org/simple/``).

        Raises :class:`~cudafit.targets.remote.RemoteError` when the index cannot be read and no
        cached copy exists; a project the index does not know gives an empty page.
        """
        from cudafit.rules.ecosystem import normalize_project

        project = normalize_project(project)
        cached = self._load(index_url, project) if self.use_cache else None
        if cached is not None and cached.age < self.ttl:
            return cached
        failed = self._load_failure(index_url, project) if self.use_cache and cached is None else None
        if failed is not None:
            raise RemoteError(failed)
        try:
            page = self._fetch(index_url, project)
        except RemoteError as err:
            if cached is None:
                if self.use_cache:
                    self._save_failure(index_url, project, err.message)
                raise
            return replace(cached, note=f"{index_url}: {err.message}; using the page read {_age(cached.age)} ago")
        if self.use_cache:
            self._save(page)
            with contextlib.suppress(OSError):
                os.unlink(_cache_path(index_url, project) + ".failed")
        return page

    def _fetch(self, index_url: str, project: str) -> IndexPage:
        from pypi_simple import NoSuchProjectError, PyPISimple, UnsupportedContentTypeError, UnsupportedRepoVersionError

        client = PyPISimple(endpoint=index_url if index_url.endswith("/") else index_url + "/", session=self.session)
        errors = _network_errors()
        try:
            page = client.get_project_page(project, timeout=self.timeout)
        except NoSuchProjectError:
            return IndexPage(project, index_url, (), time.time())
        except (UnsupportedContentTypeError, UnsupportedRepoVersionError) as err:
            raise RemoteError(f"{index_url} is not a package index ({err})") from err
        except ValueError as err:  # malformed JSON or HTML the client could not read (requests' JSON error too)
            raise RemoteError(f"unreadable index page {index_url.rstrip('/')}/{project}/: {err}") from err
        except errors as err:
            raise RemoteError(describe_network_error(f"{index_url.rstrip('/')}/{project}/", err, self.timeout)) from err
        files = []
        for pkg in page.packages:
            if pkg.version is None:
                continue
            files.append(
                IndexFile(
                    project=project,
                    version=pkg.version,
                    filename=pkg.filename,
                    url=pkg.url,
                    index_url=index_url,
                    sha256=pkg.digests.get("sha256"),
                    size=pkg.size,
                    yanked=bool(pkg.is_yanked),
                    requires_python=pkg.requires_python,
                    has_metadata=bool(pkg.has_metadata),
                    metadata_sha256=(pkg.metadata_digests or {}).get("sha256"),
                )
            )
        return IndexPage(project, index_url, tuple(files), time.time())

    def metadata(self, file: IndexFile) -> bytes:
        """The wheel's core metadata served beside it (PEP 658/714), checked against its digest."""
        from pypi_simple import DigestMismatchError, DistributionPackage, NoDigestsError, NoMetadataError

        pkg = DistributionPackage(
            filename=file.filename,
            url=file.url,
            project=file.project,
            version=file.version,
            package_type="wheel",
            digests={"sha256": file.sha256} if file.sha256 else {},
            requires_python=file.requires_python,
            has_sig=None,
            is_yanked=file.yanked,
            has_metadata=file.has_metadata,
            metadata_digests={"sha256": file.metadata_sha256} if file.metadata_sha256 else None,
        )
        from pypi_simple import PyPISimple

        client = PyPISimple(endpoint=file.index_url, session=self.session)
        try:
            return bytes(client.get_package_metadata_bytes(pkg, verify=True, timeout=self.timeout))
        except DigestMismatchError as err:
            raise RemoteError(f"sha256 mismatch for the metadata of {file.filename}: {err}") from err
        except NoDigestsError:
            return bytes(client.get_package_metadata_bytes(pkg, verify=False, timeout=self.timeout))
        except NoMetadataError as err:
            raise RemoteError(f"{file.filename}: the index serves no metadata file") from err
        except _network_errors() as err:
            raise RemoteError(describe_network_error(file.url + ".metadata", err, self.timeout)) from err

    def _load_failure(self, index_url: str, project: str) -> str | None:
        """A failure to read this page remembered for ``min(ttl, 600)`` s, so a second run stays offline-fast."""
        try:
            with open(_cache_path(index_url, project) + ".failed", encoding="utf-8") as fh:
                doc = json.load(fh)
            age = time.time() - float(doc["at"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if age >= min(self.ttl, 600.0):
            return None
        return f"{doc['message']} ({_age(age)} ago; not asked again before {min(self.ttl, 600.0):.0f} s)"

    def _save_failure(self, index_url: str, project: str, message: str) -> None:
        path = _cache_path(index_url, project) + ".failed"
        with contextlib.suppress(OSError):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                json.dump({"at": time.time(), "message": message}, fh)

    def _load(self, index_url: str, project: str) -> IndexPage | None:
        try:
            with open(_cache_path(index_url, project), encoding="utf-8") as fh:
                doc = json.load(fh)
            files = tuple(IndexFile(**f) for f in doc["files"])
            return IndexPage(project, index_url, files, float(doc["fetched_at"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _save(self, page: IndexPage) -> None:
        import tempfile

        path = _cache_path(page.index_url, page.project)
        with contextlib.suppress(OSError):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".index-")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"fetched_at": page.fetched_at, "files": [asdict(f) for f in page.files]}, fh)
            os.replace(tmp, path)


def _network_errors() -> tuple[type[BaseException], ...]:
    import requests
    import urllib3

    return (requests.RequestException, urllib3.exceptions.HTTPError, OSError)


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
