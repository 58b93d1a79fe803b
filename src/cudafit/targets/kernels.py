"""Kernel names of single modules, read on demand for the verdict rules and remembered in the scan cache.

The rules ask for a module's kernels only when its role is in question (``rules.roles``); answering
decompresses one cubin of that module (the smallest), never the whole file.  Names are kept in the
scan cache by (file identity, module offset), so a second ``doctor`` decompresses nothing.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cudafit.binary.facts import BinaryFacts, EntryKind, KernelInfo, Module

if TYPE_CHECKING:
    from cudafit.binary.fatbin import Buffer

__all__ = ["FileKernels", "KernelNameSource", "KernelRow", "read_kernels", "read_zip_member", "release_pages"]


def read_zip_member(path: str) -> tuple[Any, str]:
    """The bytes of ``ZIP!MEMBER`` (wheels and .pt2 are zips), of any size, as a read-only ``mmap`` of the
    spooled member (``wheel_members``); else ``(None, why)``.  The caller closes the mapping."""
    from cudafit.targets.wheel_members import local_file

    local, why = local_file(path)
    if local is None:
        return None, why
    try:
        with open(local, "rb") as fh:
            if os.fstat(fh.fileno()).st_size == 0:
                return None, "empty member"
            return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ), ""
    except (OSError, ValueError) as err:
        return None, f"cannot map {path}: {err}"


_FOLIO = 2 * 1024 * 1024  # the largest page-cache folio a fault maps (a PMD)


def release_pages(buf: Any, start: int, end: int) -> None:
    """Unmap the pages of ``[start, end)`` of an mmap from our RSS once read (they stay in the page cache).

    Why: a freshly spooled member sits in the page cache in large folios, and touching one byte maps a
    whole folio; reading one cubin per module of torch's 968 MiB ``libtorch_cuda.so`` otherwise maps
    ~400 MB of it (peak RSS 487 MB, 150 MB after this).  A folio can reach past the range on either
    side, hence the margin of the largest one (2 MiB).
    """
    if isinstance(buf, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED") and end > start:
        lo = max(0, start - _FOLIO)
        lo -= lo % mmap.PAGESIZE
        hi = min(end + _FOLIO, len(buf))
        with contextlib.suppress(OSError, ValueError):
            buf.madvise(mmap.MADV_DONTNEED, lo, hi - lo)


class KernelNameSource:
    """``rules.roles.KernelNames`` for one scanned file: opens the bytes on the first uncached lookup."""

    def __init__(self, facts: BinaryFacts) -> None:
        self.facts = facts
        self._buf: Any = None
        self._opened = False
        self._closers: list[Any] = []
        self._identity: tuple[Any, ...] | None = _identity(facts.path)
        self._memo: dict[int, tuple[str, ...] | None] = {}  # one read per module, whatever the GPUs asked

    def __call__(self, module: Module) -> tuple[str, ...] | None:
        if module.offset not in self._memo:
            self._memo[module.offset] = self._lookup(module)
        return self._memo[module.offset]

    def _lookup(self, module: Module) -> tuple[str, ...] | None:
        from cudafit.targets.cache import current

        cache = current()
        key = (self._identity, module.offset) if self._identity is not None else None
        if cache is not None and key is not None:
            hit = cache.get_kernels(key)
            if hit is not None:
                return tuple(hit)
        names = self._read(module)
        if names is not None and cache is not None and key is not None:
            cache.put_kernels(key, names)
        return names

    def _read(self, module: Module) -> tuple[str, ...] | None:
        from cudafit.binary.cubin import read_cubin
        from cudafit.binary.payload import read_entry_payload
        from cudafit.errors import CudafitError

        sass = [e for e in module.entries if e.kind is EntryKind.SASS]
        if not sass:
            return None
        buf = self._buffer()
        if buf is None:
            return None
        entry = min(sass, key=lambda e: e.uncompressed_size or e.payload_size)
        try:
            if entry.header_size == 0:  # a bare cubin is its own payload
                info = read_cubin(buf, entry.payload_offset, entry.payload_size)
            else:
                info = read_cubin(read_entry_payload(buf, entry))
        except (CudafitError, ValueError, IndexError, struct.error):  # e.g. a cubin whose ELF is cut short
            return None
        finally:
            release_pages(buf, module.offset, module.offset + module.size)
        return tuple(k.name for k in info.kernels)

    def toolkit_release(self, module: Module) -> tuple[int, int] | None:
        """The CUDA release whose ptxas built the module's smallest cubin, from its ``.note.nv.tkinfo``
        ("Cuda compilation tools, release 13.0": CUDA 13 ptxas writes it for every target; older ones often
        not, fatbin_spec.md §D), ``None`` without one.  Evidence of a static CUDA runtime's major."""
        from cudafit.binary.payload import read_entry_payload
        from cudafit.errors import CudafitError

        sass = [e for e in module.entries if e.kind is EntryKind.SASS]
        buf = self._buffer() if sass else None
        if buf is None:
            return None
        entry = min(sass, key=lambda e: e.uncompressed_size or e.payload_size)
        try:
            data = (
                bytes(buf[entry.payload_offset : entry.payload_offset + entry.payload_size])
                if entry.header_size == 0
                else read_entry_payload(buf, entry)
            )
        except (CudafitError, ValueError, IndexError):
            return None
        finally:
            release_pages(buf, module.offset, module.offset + module.size)
        m = _RELEASE.search(data)
        return (int(m.group(1)), int(m.group(2))) if m else None

    def _buffer(self) -> Any:
        if self._opened:
            return self._buf
        self._opened = True
        path = self.facts.path
        if os.path.isfile(path):
            try:
                fh = open(path, "rb")  # noqa: SIM115 - kept open while the mapping lives
                self._closers.append(fh)
                self._buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
                self._closers.insert(0, self._buf)
            except (OSError, ValueError):
                self._buf = None
        else:
            self._buf, _why = read_zip_member(path)
            if self._buf is not None:
                self._closers.insert(0, self._buf)
        return self._buf

    def close(self) -> None:
        """Release the mapping (lookups after this re-open it)."""
        for c in self._closers:
            with contextlib.suppress(Exception):
                c.close()
        self._closers.clear()
        self._buf = None
        self._opened = False


_RELEASE = re.compile(rb"Cuda compilation tools, release (\d+)\.(\d+)")


def _identity(path: str) -> tuple[Any, ...] | None:
    """(real path, size, mtime, inode) of the file on disk that holds ``path`` (``ZIP!MEMBER`` included); for a
    member of a scanned wheel, the wheel's content key instead (renames and copies of the wheel keep its names)."""
    from cudafit.targets.wheel_members import member_ref

    ref = member_ref(path)
    if ref is not None:
        return (f"zip:{ref.key}/{ref.member}",)
    outer, _, member = path.partition("!")
    try:
        st = os.stat(outer)
    except OSError:
        return None
    return (os.path.realpath(outer), member, st.st_size, st.st_mtime_ns, st.st_ino)


@dataclass(frozen=True)
class KernelRow:
    """One kernel of one cubin, for ``scan --kernels``."""

    module: int
    arch: str
    kernel: KernelInfo


@dataclass(frozen=True)
class FileKernels:
    """Every kernel of one file's cubins (``scan --kernels``): the rows, the modules that are device-link
    stubs, and why some cubin (or the whole file) could not be read (``None`` when all were); ``rows`` is
    ``None`` when the file itself could not be opened."""

    rows: tuple[KernelRow, ...] | None = ()
    stub_modules: tuple[int, ...] = ()
    error: str | None = None


def read_kernels(facts: BinaryFacts) -> FileKernels | None:
    """The kernels of every cubin of a file on disk or a ``ZIP!MEMBER`` (decompressing each cubin, one at a
    time, its pages released after reading); ``None`` when the file has no device code to read."""
    if not facts.modules and not facts.members:
        return None
    path = facts.path
    rows: list[KernelRow] = []
    stubs: set[int] = set()
    errors: list[str] = []
    if os.path.isfile(path):
        with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            _collect(mm, facts, rows, stubs, errors)
    else:
        data, problem = read_zip_member(path)
        if data is None:
            return FileKernels(rows=None, error=problem)
        with data:
            _collect(data, facts, rows, stubs, errors)
    return FileKernels(tuple(rows), tuple(sorted(stubs)), "; ".join(errors) or None)


def _collect(buf: Buffer, facts: BinaryFacts, rows: list[KernelRow], stubs: set[int], errors: list[str]) -> None:
    from cudafit.binary.facts import CubinInfo
    from cudafit.binary.kernels import iter_cubins

    for target in (facts, *facts.members):
        for index, entry, info in iter_cubins(buf, target):
            # Unmap what was just read: a 968 MiB library's cubins would otherwise all stay in our RSS.
            release_pages(buf, target.modules[index].offset, entry.payload_offset + entry.payload_size)
            if not isinstance(info, CubinInfo):
                errors.append(f"module {index} {entry.arch_name}: {info}")
                continue
            if info.is_dlink_stub:
                stubs.add(index)
            rows.extend(KernelRow(index, entry.arch_name, k) for k in info.kernels)
