"""Wheels: zip members read like the files they would be once installed, never imported or run.

A member is named ``WHEEL!MEMBER`` (``x.whl!pkg/_C.so``).  Members up to
:data:`~cudafit.targets.wheel_members.SPOOL_THRESHOLD` (16 MiB) are read into memory; larger ones
are inflated once to a private temporary file and read through ``mmap`` by the code that reads
extracted files (``wheel_members``): the wheel and its extracted files give the same facts and
verdicts, kernel names are readable in members of any size, and peak memory stays bounded (torch
2.8.0's 968 MiB ``libtorch_cuda.so`` included).

A wheel's scan is cached by its content: found by a key of its central directory (every member's
CRC-32 and sizes, read in milliseconds), trusted for the (path, size, mtime, inode) it was scanned
under, and for any other file with that key (a copy, a rename, a touch) only once the file's sha256,
taken beside the first scan, matches.  A re-check of the same wheel reads no member at all (torch
2.8.0, 888 MB: 9.4 s cold, 0.5-0.7 s again).

Bad input stays per member: a corrupt deflate/LZMA stream, a bad CRC, an empty member name or
unreadable ``METADATA`` becomes that member's ``unreadable`` item with its reason, and the other
members are still judged.
"""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Iterator
from dataclasses import replace

from cudafit.binary import sniff
from cudafit.targets.candidate_files import is_candidate_name
from cudafit.targets.interface import ScanItem, Target, error_item
from cudafit.targets.runtime import python_modules, runtime_compiled_kind
from cudafit.targets.wheel_members import (
    ARCHIVE_OPEN_ERRORS,
    MEMBER_READ_ERRORS,
    MemberRef,
    archive_key,
    archive_view,
    describe_error,
    gated_member_facts,
    read_member_facts,
    register,
)

__all__ = [
    "WheelTarget",
    "archive_view",
    "file_sha256",
    "gated_member_facts",
    "read_member_facts",
    "wheel_name_version",
]

_WHEEL_NAME = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)(-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl$")
#: PEP 508 distribution names and a loose version shape: anything else in METADATA is not trusted.
_DIST_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,198}[A-Za-z0-9])?$")
_METADATA_DIR = re.compile(r"\.(dist|egg)-info/")
_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+!_-]{0,99}$")


def wheel_name_version(filename: str) -> tuple[str | None, str | None]:
    """(distribution, version) from a wheel file name (PEP 427)."""
    m = _WHEEL_NAME.match(os.path.basename(filename))
    if not m:
        return None, None
    return m.group("name").replace("_", "-"), m.group("version")


class WheelTarget(Target):
    """A ``.whl`` file."""

    def __init__(self, path: str, *, display: str | None = None) -> None:
        self.path = path
        self.display = display or path

    def describe(self) -> str:
        return f"wheel {os.path.basename(self.path)}"

    def iter_items(self) -> Iterator[ScanItem]:
        from cudafit.targets.cache import current

        name, _version = wheel_name_version(self.path)
        try:
            zf = zipfile.ZipFile(self.path)
        except ARCHIVE_OPEN_ERRORS as err:
            yield error_item(self.display, f"not a readable wheel: {describe_error(err)}", "bad-wheel", package=name)
            return
        cache = current()
        mode = bool(cache and cache.embedded)
        with zf:
            infos = zf.infolist()
            try:
                st = os.stat(self.path)
            except OSError:
                cache = None  # vanished while open: scan it, remember nothing
            caching = cache is not None and cache.path is not None
            key = archive_key(st.st_size if caching else 0, infos)
            seen = (os.path.realpath(self.path), st.st_size, st.st_mtime_ns, st.st_ino) if caching else ()
            record = cache.get_archive(key, mode) if cache is not None and caching else None
            if record is not None and cache is not None and seen not in record["stats"]:
                if file_sha256(self.path) != record["sha256"]:  # same directory, other bytes: scan again
                    record = None
                else:  # a copy, a rename or a touch of the same bytes
                    record["stats"] = [*record["stats"][-15:], seen]
                    cache.put_archive(key, mode, record)
            if record is not None:
                yield from self._replay(record["items"], record["sha256"])
                return
            hashing = _Sha256Thread(self.path) if caching else None  # overlaps the inflating
            items = list(self._iter_scanned(zf, infos, mode))
            view = archive_view(zf)
            items = [
                replace(i, facts=gated_member_facts(zf, view, self._member(i), i.facts, i.path, embedded=mode))
                for i in items
            ]
        content = hashing.result() if hashing is not None else key
        for item in items:
            register(item.path, MemberRef(self.path, self._member(item), content))
        if cache is not None and caching and content and not any(i.facts.error for i in items):
            members = [replace(i, path=self._member(i), origin=None) for i in items]
            cache.put_archive(key, mode, {"items": members, "sha256": content, "stats": [seen]})
        yield from items

    def _member(self, item: ScanItem) -> str:
        return item.path[len(self.display) + 1 :]

    def _replay(self, records: list[ScanItem], content: str) -> Iterator[ScanItem]:
        """Items of a cached scan, under this wheel's display name."""
        from cudafit.targets.cache import renamed

        for rec in records:
            member = rec.path
            display = f"{self.display}!{member}"
            register(display, MemberRef(self.path, member, content))
            origin = f"{self.path}!{member}" if self.display != self.path else None
            yield replace(rec, path=display, facts=renamed(rec.facts, display), origin=origin)

    def _iter_scanned(self, zf: zipfile.ZipFile, infos: list[zipfile.ZipInfo], mode: bool) -> Iterator[ScanItem]:
        name, version = wheel_name_version(self.path)
        meta = next((i for i in infos if i.filename.endswith(".dist-info/METADATA")), None)
        requires: tuple[str, ...] = ()
        if meta is not None:
            try:
                name, version, requires = _name_version(zf, meta, name, version)
            except MEMBER_READ_ERRORS as err:
                yield self._bad(meta, f"unreadable wheel metadata: {describe_error(err)}", name, version)
        runtime = runtime_compiled_kind(name, [i.filename for i in infos])
        pys = python_modules(i.filename for i in infos)
        for info in infos:
            if info.filename.endswith("/") or _METADATA_DIR.search(info.filename):
                continue  # directories; packaging metadata (METADATA, RECORD) never holds device code
            if not info.filename:
                yield self._bad(info, "wheel member with an empty name", name, version)
                continue
            verdict = is_candidate_name(info.filename)
            if verdict is False:
                continue
            member = f"{self.display}!{info.filename}"
            try:
                if verdict is None:
                    with zf.open(info) as fh:
                        head = fh.read(64)
                    if sniff(head, info.filename) is None:
                        continue
                facts = read_member_facts(zf, info, member, embedded=mode)
            except MEMBER_READ_ERRORS as err:
                yield self._bad(info, f"unreadable wheel member: {describe_error(err)}", name, version)
                continue
            origin = f"{self.path}!{info.filename}" if self.display != self.path else None
            yield ScanItem(name, version, member, facts, runtime, origin=origin, python_modules=pys, requires=requires)

    def _bad(self, info: zipfile.ZipInfo, message: str, package: str | None, version: str | None) -> ScanItem:
        """A member's ``unreadable`` item, in its package (same name and version as the members judged)."""
        item = error_item(f"{self.display}!{info.filename}", message, "bad-member", package=package)
        return replace(item, version=version)


def file_sha256(path: str) -> str:
    """The sha256 of a file, read 1 MiB at a time ("" when it cannot be read)."""
    import hashlib

    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    except OSError:
        return ""
    return h.hexdigest()


class _Sha256Thread:
    """The wheel's sha256, computed beside the scan (hashlib releases the GIL): the content key of its cache
    entry, so a copy or a touched file is recognised by its bytes, and changed bytes never are."""

    def __init__(self, path: str) -> None:
        import threading

        self._value = ""
        self._thread = threading.Thread(target=self._run, args=(path,), daemon=True, name="cudafit-sha256")
        self._thread.start()

    def _run(self, path: str) -> None:
        self._value = file_sha256(path)

    def result(self) -> str:
        self._thread.join()
        return self._value


def _name_version(
    zf: zipfile.ZipFile, meta: zipfile.ZipInfo, name: str | None, version: str | None
) -> tuple[str | None, str | None, tuple[str, ...]]:
    """``Name``/``Version``/``Requires-Dist`` from the first 64 KiB of METADATA; a name or version that is not
    a plain distribution name or version (non-ASCII, an RFC 2047 ``Header`` object, line noise) keeps what the
    file name says."""
    import email.parser
    import email.policy

    with zf.open(meta) as fh:
        raw = fh.read(65536)
    headers = email.parser.Parser(policy=email.policy.compat32).parsestr(
        raw.decode("utf-8", "replace"), headersonly=True
    )
    got_name = str(headers.get("Name", "") or "").strip()
    got_version = str(headers.get("Version", "") or "").strip()
    if _DIST_NAME.match(got_name):
        name = got_name
    if _VERSION.match(got_version):
        version = got_version
    requires = tuple(str(r).strip() for r in headers.get_all("Requires-Dist") or ())
    return name, version, requires
