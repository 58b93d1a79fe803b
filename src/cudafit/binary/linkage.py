"""The gate of the module-loader import check: can a file's imports of :data:`MODULE_LOADERS` be bound at all?

Why: :func:`~cudafit.binary.loaders.module_loaders` looks at every undefined ``.dynsym`` entry of a linked
file (a C++ library has thousands), and that made every scan of a file without device code several times
slower (libtorch_python.so 0.12 -> 0.60 ms).  A cheaper exact test of the *import* does not exist (ELF hash
tables index only defined symbols, and an import does not name the library that defines it), but whether it
*can be bound* is cheap to decide from what the scan already reads (DT_NEEDED).

The rule (ELF gABI, "Dynamic Linking", "Shared Object Dependencies" and the symbol-lookup order:
https://refspecs.linuxfoundation.org/elf/gabi4+/ch5.dynamic.html; ld.so(8) for DT_RUNPATH, DT_RPATH and
``$ORIGIN``: https://man7.org/linux/man-pages/man8/ld.so.8.html): an undefined symbol of a library is bound
by a library of the process's global scope or of the library's own dependency tree (what its DT_NEEDED
entries load, breadth-first, transitively).  The driver's entry points are defined by the driver
(``libcuda.so.1``, CUDA Driver API: https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MODULE.html)
or by a library that re-exports them (TensorFlow 2.20.0's ``libtensorflow_framework.so.2``, a dlopen shim
that *defines* ``cuModuleLoadData``; ``libtensorflow_cc.so.2`` imports it from there, not from libcuda).
So the import check runs (the gate is *open*) only when the file's dependency tree, as far as the scan can
see it, holds

* a library named ``libcuda.so*`` (the driver itself; it need not be visible), or
* a visible library that defines one of :data:`MODULE_LOADERS` (a ``.gnu.hash`` / ``.hash`` look-up of four
  names: the bloom filter answers most), at any depth up to :data:`MAX_DEPTH`, cycles visited once.

"Visible" means found where the file's own loader would look and the scan can look too: the file's own
directory (a sibling already loaded under its soname satisfies a DT_NEEDED) and its DT_RUNPATH entries (or
DT_RPATH's when it has no DT_RUNPATH) relative to ``$ORIGIN``; in a wheel or an archive, the members at
those paths (:class:`MemberView`).  Absolute entries name the target machine's file system, not the scanned
tree, and are not followed (a wheel and its extracted directory must agree); neither are system libraries.

Documented limit: an import bound through the process's *global* scope only (the driver preloaded with
``RTLD_GLOBAL``, ``LD_PRELOAD``, or the main program linking ``-lcuda`` while the library itself names no
provider) is not seen: such a library has its data sections probed, not read whole, unless scanned with
``--embedded``.  ``scripts/gate_same_answers.py`` measures what the gate changes on real wheels.

A library's answer is kept for the process, keyed by its identity (device, inode, size, mtime): a changed
file is read again, and every scan (targets/cache.py ``scan_cache``) starts afresh (:func:`forget`), so a
library added next to a file is seen by the next scan; the scan cache keys cached facts by the answer.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import posixpath
import struct
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from cudafit.binary._elf import Section, read_elf_header, read_sections, section_bounds_ok
from cudafit.binary.fatbin import Buffer
from cudafit.binary.loaders import MODULE_LOADERS, SHT_DYNSYM
from cudafit.errors import BinaryFormatError

__all__ = [
    "DRIVER_PREFIX",
    "MAX_DEPTH",
    "DynamicInfo",
    "FileSystemView",
    "MemberView",
    "defined_loaders",
    "dynamic_entries",
    "file_gate",
    "forget",
    "gate_opener",
    "installed_path",
    "is_driver",
    "read_dynamic_info",
    "read_file_info",
    "search_dirs",
]

#: The driver's library: any ``libcuda.so*`` in DT_NEEDED opens the gate without being visible.
DRIVER_PREFIX = "libcuda.so"
#: Levels of DT_NEEDED followed below the file (torch's deepest chain: libtorch_python -> libtorch ->
#: libtorch_cuda -> libc10_cuda -> libc10, 4).
MAX_DEPTH = 16
#: Libraries looked at for one file at most (a dependency tree of thousands is not a real one).
MAX_LIBRARIES = 1024

_SHT_HASH = 5
_SHT_DYNAMIC = 6
_SHT_GNU_HASH = 0x6FFFFFF6
_DT_NULL, _DT_NEEDED, _DT_RPATH, _DT_RUNPATH = 0, 1, 15, 29
_WANTED_TAGS = frozenset((_DT_NEEDED, _DT_RPATH, _DT_RUNPATH))
_MAX_DYNAMIC = 1 << 16  # .dynamic entries read at most (a real one has tens)
_MAX_CHAIN = 1 << 16  # hash-chain steps per name at most


def is_driver(name: str) -> bool:
    """Whether a DT_NEEDED entry names the CUDA driver (``libcuda.so.1``, ``libcuda.so``, a path to one)."""
    return DRIVER_PREFIX in name and posixpath.basename(name).startswith(DRIVER_PREFIX)  # `in`: C speed


@dataclass(frozen=True)
class DynamicInfo:
    """What the gate needs of one library: its DT_NEEDED, its search path, the loaders it defines."""

    needed: tuple[str, ...]
    #: DT_RUNPATH entries (DT_RPATH's when there is no DT_RUNPATH), as written (``$ORIGIN/../lib``).
    runpath: tuple[str, ...]
    #: The :data:`MODULE_LOADERS` it defines (in its hash table); all of them when it has no hash table.
    defines: tuple[str, ...]

    def __str__(self) -> str:
        parts = [f"needed={','.join(self.needed)}", f"runpath={':'.join(self.runpath)}"]
        return " ".join([*parts, f"defines={','.join(self.defines)}"])


# --------------------------------------------------------------------------- reading one library


def dynamic_entries(
    buf: Buffer, sections: list[Section], origin: int, size: int, bits: int
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(DT_NEEDED names, search path) from ``.dynamic`` and its string table; what was readable of a
    malformed table.  The search path is DT_RUNPATH's entries, else DT_RPATH's (ld.so(8): DT_RPATH is
    ignored when DT_RUNPATH is present)."""
    dyn = next((s for s in sections if s.type == _SHT_DYNAMIC), None)
    if dyn is None or not 0 <= dyn.link < len(sections) or not section_bounds_ok(dyn, origin, size):
        return (), ()
    strtab = sections[dyn.link]
    if not section_bounds_ok(strtab, origin, size):
        return (), ()
    entry = struct.Struct("<qQ" if bits == 64 else "<iI")
    stop = min(dyn.end, dyn.offset + _MAX_DYNAMIC * entry.size)
    raw_table = bytes(buf[dyn.offset : stop - (stop - dyn.offset) % entry.size])
    wanted: list[tuple[int, int]] = []
    for tag, val in entry.iter_unpack(raw_table):  # one C-level unpacking of the (tens of) entries
        if not tag:  # DT_NULL ends the table
            break
        if tag in _WANTED_TAGS:
            wanted.append((tag, val))
    return _named(buf, strtab, wanted)


def _named(buf: Buffer, strtab: Section, entries: Iterable[tuple[int, int]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(DT_NEEDED names, search path) of ``.dynamic`` entries whose strings are in ``strtab``: DT_RUNPATH's
    entries, else DT_RPATH's (ld.so(8): DT_RPATH is ignored when DT_RUNPATH is present)."""
    needed: list[str] = []
    paths: dict[int, str] = {}
    base, top, size = strtab.offset, strtab.end, strtab.size
    for tag, val in entries:
        if val >= size or tag not in _WANTED_TAGS:
            continue
        end = buf.find(b"\0", base + val, top)
        text = bytes(buf[base + val : end if end >= 0 else top]).decode("utf-8", "replace")
        if tag == _DT_NEEDED:
            needed.append(text)
        else:
            paths.setdefault(tag, text)
    raw = paths.get(_DT_RUNPATH, paths.get(_DT_RPATH, ""))
    return tuple(needed), tuple(p for p in raw.split(":") if p)


def _gnu_hash(name: bytes) -> int:
    h = 5381
    for c in name:
        h = (h * 33 + c) & 0xFFFFFFFF
    return h


def _sysv_hash(name: bytes) -> int:
    h = 0
    for c in name:
        h = ((h << 4) + c) & 0xFFFFFFFF
        g = h & 0xF0000000
        if g:
            h ^= g >> 24
        h &= ~g & 0xFFFFFFFF
    return h


_WANTED = tuple((n, n.encode() + b"\0", _gnu_hash(n.encode()), _sysv_hash(n.encode())) for n in MODULE_LOADERS)


class _Symbols:
    """``.dynsym`` and its string table, bounds-checked: is symbol ``i`` a definition named ``want``?"""

    def __init__(self, buf: Buffer, dynsym: Section, strtab: Section, bits: int) -> None:
        self.buf, self.dynsym, self.strtab = buf, dynsym, strtab
        self.entsize = 24 if bits == 64 else 16
        self.shndx_at = 6 if bits == 64 else 14
        self.count = dynsym.size // self.entsize

    def is_definition(self, index: int, want: bytes) -> bool:
        if not 0 < index < self.count:
            return False
        at = self.dynsym.offset + index * self.entsize
        (name,) = struct.unpack_from("<I", self.buf, at)
        (shndx,) = struct.unpack_from("<H", self.buf, at + self.shndx_at)
        if not shndx or name >= self.strtab.size:  # SHN_UNDEF: an import, not a definition
            return False
        start = self.strtab.offset + name
        return bytes(self.buf[start : min(start + len(want), self.strtab.end)]) == want


def _gnu_defines(buf: Buffer, table: Section, syms: _Symbols, bits: int) -> set[str]:
    """Look-up in a ``.gnu.hash`` table (the GNU hash section as glibc's ``dl-lookup.c`` reads it: bloom
    filter, bucket, chain of hashes whose low bit ends it)."""
    nbuckets, symoffset, bloom_size, shift = struct.unpack_from("<4I", buf, table.offset)
    word = 8 if bits == 64 else 4
    wbits = word * 8
    bloom = table.offset + 16
    buckets = bloom + bloom_size * word
    chain = buckets + nbuckets * 4
    if not nbuckets or not bloom_size or chain > table.end:
        return set()
    found: set[str] = set()
    for name, want, h, _ in _WANTED:
        (mask_word,) = struct.unpack_from("<Q" if word == 8 else "<I", buf, bloom + ((h // wbits) % bloom_size) * word)
        mask = (1 << (h % wbits)) | (1 << ((h >> shift) % wbits))
        if mask_word & mask != mask:
            continue  # the bloom filter says no: the common answer
        index = struct.unpack_from("<I", buf, buckets + (h % nbuckets) * 4)[0]
        if index < symoffset:
            continue
        for _ in range(_MAX_CHAIN):
            at = chain + (index - symoffset) * 4
            if at + 4 > table.end:
                break
            (value,) = struct.unpack_from("<I", buf, at)
            if value | 1 == h | 1 and syms.is_definition(index, want):
                found.add(name)
                break
            if value & 1:
                break
            index += 1
    return found


def _sysv_defines(buf: Buffer, table: Section, syms: _Symbols) -> set[str]:
    """Look-up in a SysV ``.hash`` table (gABI "Hash Table"): bucket, then the chain of symbol indices."""
    nbucket, nchain = struct.unpack_from("<2I", buf, table.offset)
    chains = table.offset + 8 + nbucket * 4
    if not nbucket or chains + nchain * 4 > table.end:
        return set()
    found: set[str] = set()
    for name, want, _, h in _WANTED:
        index = struct.unpack_from("<I", buf, table.offset + 8 + (h % nbucket) * 4)[0]
        for _ in range(min(nchain, _MAX_CHAIN)):
            if not 0 < index < nchain:
                break
            if syms.is_definition(index, want):
                found.add(name)
                break
            index = struct.unpack_from("<I", buf, chains + index * 4)[0]
    return found


def defined_loaders(buf: Buffer, sections: list[Section], origin: int, size: int, bits: int) -> tuple[str, ...]:
    """The :data:`MODULE_LOADERS` a library defines, from its hash table (``.gnu.hash`` first, ``.hash``
    else).  A library without a readable symbol or hash table gets all of them: what it defines is unknown,
    and the gate is kept open rather than wrongly shut."""
    dynsym = next((s for s in sections if s.type == SHT_DYNSYM), None)
    tables = [s for s in sections if s.type in (_SHT_GNU_HASH, _SHT_HASH) and s.size >= 16]
    if dynsym is None or not 0 <= dynsym.link < len(sections) or not tables:
        return MODULE_LOADERS if dynsym is not None else ()
    strtab = sections[dynsym.link]
    if not all(section_bounds_ok(s, origin, size) for s in (dynsym, strtab, *tables)):
        return MODULE_LOADERS
    syms = _Symbols(buf, dynsym, strtab, bits)
    table = next((s for s in tables if s.type == _SHT_GNU_HASH), tables[0])
    try:
        found = _gnu_defines(buf, table, syms, bits) if table.type == _SHT_GNU_HASH else _sysv_defines(buf, table, syms)
    except (struct.error, IndexError, ValueError, OverflowError):
        return MODULE_LOADERS
    return tuple(n for n in MODULE_LOADERS if n in found)


def read_dynamic_info(buf: Buffer, origin: int = 0, size: int | None = None) -> DynamicInfo | None:
    """The :class:`DynamicInfo` of a linked ELF file in ``buf``; None for anything else (not ELF, a cubin, an
    object file, a file whose tables are unreadable).  Never raises for bad input.

    Read as the dynamic loader reads it: the program headers, ``PT_DYNAMIC`` and the tables its tags point
    at (a few hundred bytes near the start of the file; libtorch_cuda.so: ~25 us); the section table
    (at the end of the file, tens of headers) only when those are missing.
    """
    size = len(buf) - origin if size is None else size
    try:
        hdr = read_elf_header(buf, origin, size)
        if hdr.e_type not in (2, 3) or hdr.machine == 190:  # ET_EXEC, ET_DYN; EM_CUDA
            return None
        found = _by_segments(buf, origin, size, hdr.bits)
        if found is not None:
            return found
        sections = read_sections(buf, hdr, origin, size)
        needed, runpath = dynamic_entries(buf, sections, origin, size, hdr.bits)
        defines = defined_loaders(buf, sections, origin, size, hdr.bits)
    except (BinaryFormatError, struct.error, IndexError, ValueError, OverflowError):
        return None
    return DynamicInfo(needed, runpath, defines)


_PT_LOAD, _PT_DYNAMIC = 1, 2
_DT_HASH, _DT_STRTAB, _DT_SYMTAB, _DT_STRSZ, _DT_GNU_HASH = 4, 5, 6, 10, 0x6FFFFEF5
_PHDR64 = struct.Struct("<IIQQQQQQ")  # p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align
_PHDR32 = struct.Struct("<IIIIIIII")  # p_type, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_flags, p_align
_MAX_PHDRS = 256


def _by_segments(buf: Buffer, origin: int, size: int, bits: int) -> DynamicInfo | None:
    """:func:`read_dynamic_info` from the program headers (gABI "Program Header", "Dynamic Section"); None
    when there is no ``PT_DYNAMIC`` or its tables are not in the file (the caller reads the sections)."""
    if bits == 64:
        (phoff,) = struct.unpack_from("<Q", buf, origin + 32)
        phentsize, phnum = struct.unpack_from("<HH", buf, origin + 54)
        layout, fields = _PHDR64, (0, 2, 3, 5)  # type, offset, vaddr, filesz
    else:
        (phoff,) = struct.unpack_from("<I", buf, origin + 28)
        phentsize, phnum = struct.unpack_from("<HH", buf, origin + 42)
        layout, fields = _PHDR32, (0, 1, 2, 4)
    if phentsize < layout.size or not 0 < phnum <= _MAX_PHDRS or phoff + phnum * phentsize > size:
        return None
    loads: list[tuple[int, int, int]] = []  # (vaddr, offset, filesz)
    dynamic: tuple[int, int] | None = None
    for i in range(phnum):
        row = layout.unpack_from(buf, origin + phoff + i * phentsize)
        ptype, offset, vaddr, filesz = (row[f] for f in fields)
        if offset + filesz > size:
            continue
        if ptype == _PT_LOAD:
            loads.append((vaddr, offset, filesz))
        elif ptype == _PT_DYNAMIC:
            dynamic = (offset, filesz)
    if dynamic is None:
        return None

    def span(vaddr: int) -> tuple[int, int] | None:
        """(absolute offset, bytes up to the end of its segment in the file) of a virtual address."""
        for v, off, filesz in loads:
            if v <= vaddr < v + filesz:
                return origin + off + vaddr - v, filesz - (vaddr - v)
        return None

    entry = struct.Struct("<qQ" if bits == 64 else "<iI")
    start, length = origin + dynamic[0], min(dynamic[1], _MAX_DYNAMIC * entry.size)
    tags: dict[int, int] = {}
    strings: list[tuple[int, int]] = []
    for tag, val in entry.iter_unpack(bytes(buf[start : start + length - length % entry.size])):
        if tag == _DT_NULL:
            break
        if tag in _WANTED_TAGS:
            strings.append((tag, val))
        else:
            tags.setdefault(tag, val)
    strtab = span(tags.get(_DT_STRTAB, -1))
    if strtab is None:
        return None
    strsz = min(tags.get(_DT_STRSZ, strtab[1]), strtab[1])
    dynstr = Section(".dynstr", 3, 0, strtab[0], strsz, 0, 0, 0)
    needed, runpath = _named(buf, dynstr, strings)
    symtab = span(tags.get(_DT_SYMTAB, -1))
    gnu, sysv = span(tags.get(_DT_GNU_HASH, -1)), span(tags.get(_DT_HASH, -1))
    if symtab is None:
        return DynamicInfo(needed, runpath, ())
    if gnu is None and sysv is None:
        return DynamicInfo(needed, runpath, MODULE_LOADERS)  # what it defines is unknown: kept open
    dynsym = Section(".dynsym", SHT_DYNSYM, 0, symtab[0], symtab[1], 2, 0, 0)
    syms = _Symbols(buf, dynsym, dynstr, bits)
    if gnu is not None:
        found = _gnu_defines(buf, Section(".gnu.hash", _SHT_GNU_HASH, 0, gnu[0], gnu[1], 1, 0, 0), syms, bits)
    else:
        assert sysv is not None
        found = _sysv_defines(buf, Section(".hash", _SHT_HASH, 0, sysv[0], sysv[1], 1, 0, 0), syms)
    return DynamicInfo(needed, runpath, tuple(n for n in MODULE_LOADERS if n in found))


# --------------------------------------------------------------------------- where the loader looks


def search_dirs(directory: str, runpath: Iterable[str]) -> tuple[str, ...]:
    """The directories a library in ``directory`` with this search path is linked against, that the scan can
    see: its own directory, then each ``$ORIGIN``-relative entry (``$ORIGIN`` and ``${ORIGIN}``).  Entries with
    other tokens (``$LIB``, ``$PLATFORM``), absolute or relative to the working directory are left out."""
    out = [directory]
    for entry in runpath:
        for token in ("${ORIGIN}", "$ORIGIN"):
            if entry.startswith(token):
                rest = entry[len(token) :]
                if "$" not in rest and (not rest or rest.startswith("/")):
                    out.append(posixpath.normpath(directory + rest) if directory else posixpath.normpath("." + rest))
                break
    return tuple(dict.fromkeys(out))


class LinkView:
    """The tree a scan sees, as the gate needs it: names in a directory, and one library's facts.

    Subclasses answer :meth:`listing` and :meth:`info`; answers of whole dependency trees are kept per
    library (:meth:`opener`), keyed by :meth:`identity`.
    """

    def __init__(self) -> None:
        #: Per library: what its dependency tree (not the library itself) opens, by its identity.
        self._answers: dict[str, tuple[object, str]] = {}
        self.opened = 0  # libraries read (for the bench and the same-answers script)
        self._lock = threading.Lock()

    def listing(self, directory: str) -> frozenset[str]:
        """The names in ``directory`` (empty when it is not there)."""
        raise NotImplementedError

    def info(self, path: str) -> DynamicInfo | None:
        """The library at ``path`` (None: not a readable linked ELF file)."""
        raise NotImplementedError

    def identity(self, path: str) -> object:
        """What changes when the file at ``path`` changes (None: it cannot be read)."""
        return path

    def join(self, directory: str, name: str) -> str:
        return posixpath.join(directory, name) if directory else name

    def dirname(self, path: str) -> str:
        return posixpath.dirname(path)

    def find(self, name: str, dirs: tuple[str, ...]) -> str | None:
        """Where a DT_NEEDED name is, searched in ``dirs`` in order (names with a ``/`` are not searched)."""
        if "/" in name:
            return None
        for d in dirs:
            if name in self.listing(d):
                return self.join(d, name)
        return None

    def opener(
        self,
        directory: str,
        needed: tuple[str, ...],
        runpath: tuple[str, ...],
        *,
        key: str | None = None,
        identity: object = None,
    ) -> str:
        """What opens the gate of a library in ``directory`` with these DT_NEEDED and search path: the
        driver's name, or the visible library that defines a loader (``""``: closed).  With ``key`` and
        ``identity``, the answer is kept for that library."""
        driver = next((n for n in needed if DRIVER_PREFIX in n and is_driver(n)), None)
        if driver is not None:
            return driver
        if key is not None:
            with self._lock:
                kept = self._answers.get(key)
            if kept is not None and kept[0] == identity:
                return kept[1]
        self.begin()
        answer, complete = self._walk(directory, needed, runpath, [key] if key else [], 0, set())
        if key is not None and (answer or complete):
            with self._lock:
                self._answers[key] = (identity, answer)
        return answer

    def _walk(
        self,
        directory: str,
        needed: tuple[str, ...],
        runpath: tuple[str, ...],
        stack: list[str],
        depth: int,
        visited: set[str],
    ) -> tuple[str, bool]:
        """(opener, whether the answer is complete): a tree cut by the depth bound, by a cycle back into the
        stack or by a library already walked in this walk is not kept when closed (another start may see
        more of it).  Each library is walked once per walk (``visited``): what a dense graph costs is its
        size, not its paths."""
        dirs = search_dirs(directory, runpath)
        complete = True
        for name in needed:
            if is_driver(name):
                return name, True
            path = self.find(name, dirs)
            if path is None:
                continue
            if path in stack:
                complete = False
                continue
            info = self.info(path)
            if info is None:
                continue
            if info.defines:
                return name, True
            # What its own tree opens (kept, as for a file scanned first: the same question of it)
            identity = self.identity(path)
            with self._lock:
                kept = self._answers.get(path)
            if kept is not None and kept[0] == identity:
                if kept[1]:
                    return kept[1], True
                continue
            if path in visited or depth + 1 >= MAX_DEPTH or len(visited) >= MAX_LIBRARIES:
                complete = False
                continue
            visited.add(path)
            below, whole = self._walk(self.dirname(path), info.needed, info.runpath, [*stack, path], depth + 1, visited)
            if below or whole:
                with self._lock:
                    self._answers[path] = (identity, below)
            if below:
                return below, True
            complete &= whole
        return "", complete

    def begin(self) -> None:
        """A walk starts (a view may check what it keeps once per walk rather than once per look)."""

    def forget(self) -> None:
        """Drop every kept answer (a new scan sees the tree as it is now)."""
        with self._lock:
            self._answers.clear()


class FileSystemView(LinkView):
    """Files on disk: directory listings and libraries read through ``mmap`` (headers, ``.dynamic`` and the
    hash table only), each kept while its identity (device, inode, size, mtime) is unchanged."""

    def __init__(self) -> None:
        super().__init__()
        self._listings: dict[str, tuple[object, frozenset[str]]] = {}
        self._infos: dict[str, tuple[object, DynamicInfo | None]] = {}
        #: Identities taken during the current walk: a directory or library looked at again in the same
        #: walk (torch: 6 search directories for each of ~20 libraries) is not stat'ed again.
        self._seen: dict[str, object] = {}

    def begin(self) -> None:
        self._seen = {}

    def _stat_key(self, path: str) -> object:
        seen = self._seen
        if path in seen:
            return seen[path]
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            key: object = None
        else:
            key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        seen[path] = key
        return key

    def identity(self, path: str) -> object:
        return self._stat_key(path)

    def join(self, directory: str, name: str) -> str:
        return os.path.join(directory, name)

    def dirname(self, path: str) -> str:
        return os.path.dirname(path)

    def forget(self) -> None:
        super().forget()
        with self._lock:
            self._listings.clear()
            self._infos.clear()

    def listing(self, directory: str) -> frozenset[str]:
        key = self._stat_key(directory)
        with self._lock:
            kept = self._listings.get(directory)
        if kept is not None and kept[0] == key:
            return kept[1]
        names: frozenset[str] = frozenset()
        if key is not None:
            with contextlib.suppress(OSError):
                names = frozenset(os.listdir(directory))
        with self._lock:
            self._listings[directory] = (key, names)
        return names

    def info(self, path: str) -> DynamicInfo | None:
        key = self._stat_key(path)
        with self._lock:
            kept = self._infos.get(path)
        if kept is not None and kept[0] == key:
            return kept[1]
        found = read_file_info(path) if key is not None else None
        self.opened += 1
        with self._lock:
            self._infos[path] = (key, found)
        return found


def read_file_info(path: str) -> DynamicInfo | None:
    """The :class:`DynamicInfo` of a file on disk (None: unreadable or not a linked ELF file)."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size < 64:
                return None
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                if hasattr(mm, "madvise") and hasattr(mmap, "MADV_RANDOM"):
                    mm.madvise(mmap.MADV_RANDOM)
                return read_dynamic_info(mm, 0, size)
    except (OSError, ValueError):
        return None


def installed_path(member: str) -> str:
    """Where pip installs a wheel member: ``NAME.data/purelib/...`` and ``NAME.data/platlib/...`` go to the
    same directory as the wheel's root (PEP 427, "Installing a wheel"), so they are searched from there."""
    parts = member.split("/", 2)
    if len(parts) == 3 and parts[0].endswith(".data") and parts[1] in ("purelib", "platlib"):
        return parts[2]
    return member


class MemberView(LinkView):
    """Members of an archive (a wheel's zip), placed where they are installed (:func:`installed_path`);
    ``read`` gives a member's :class:`DynamicInfo` by its name in the archive (inflating it as the archive
    requires), asked once per member."""

    def __init__(self, names: Iterable[str], read: Callable[[str], DynamicInfo | None]) -> None:
        super().__init__()
        self._raw: dict[str, str] = {}
        dirs: dict[str, set[str]] = {}
        for name in names:
            if name and not name.endswith("/"):
                placed = installed_path(name)
                self._raw.setdefault(placed, name)
                head, _, tail = placed.rpartition("/")
                dirs.setdefault(head, set()).add(tail)
        self._dirs = {d: frozenset(n) for d, n in dirs.items()}
        self._read = read
        self._infos: dict[str, DynamicInfo | None] = {}

    def listing(self, directory: str) -> frozenset[str]:
        return self._dirs.get(directory, frozenset())

    def seed(self, member: str, info: DynamicInfo | None) -> None:
        """Give a member's facts read already (a scan that inflated it), so the gate does not read it again."""
        self._infos[installed_path(member)] = info

    def info(self, path: str) -> DynamicInfo | None:
        """The library installed at ``path`` (a member's name in the archive is accepted too)."""
        path = installed_path(path)
        if path not in self._infos:
            self.opened += 1
            self._infos[path] = self._read(self._raw.get(path, path))
        return self._infos[path]

    def gate(self, member: str, needed: tuple[str, ...], runpath: tuple[str, ...]) -> str:
        """The opener for a member (see :meth:`LinkView.opener`), from where it is installed."""
        placed = installed_path(member)
        return self.opener(posixpath.dirname(placed), needed, runpath, key=placed, identity=placed)


#: The process's view of the file system (each library read once while unchanged).
FILE_SYSTEM = FileSystemView()
_file_gates: dict[tuple[str, object], bool | None] = {}
_file_gates_lock = threading.Lock()


#: (path as given, identity) -> opener: the answer for a file asked again, without normalising its path
#: (a dict look-up; ``abspath`` alone costs more than the rest of the gate).
_openers: dict[tuple[str, object], str] = {}


def gate_opener(path: str, identity: object, needed: tuple[str, ...], runpath: tuple[str, ...]) -> str:
    """The opener for a file on disk (see :meth:`LinkView.opener`), kept for the process by its identity."""
    found = _openers.get((path, identity))
    if found is not None:
        return found
    where = os.path.abspath(path)
    answer = FILE_SYSTEM.opener(os.path.dirname(where), needed, runpath, key=where, identity=identity)
    if len(_openers) > 100_000:
        _openers.clear()
    _openers[(path, identity)] = answer
    return answer


def forget() -> None:
    """Start afresh: a scan (targets/cache.py ``scan_cache``) re-reads the libraries around the files it scans,
    so a library added or removed since the last scan in this process is seen."""
    FILE_SYSTEM.forget()
    _openers.clear()
    with _file_gates_lock:
        _file_gates.clear()


def file_gate(path: str, st: os.stat_result | None = None) -> bool | None:
    """Whether the module-loader gate of the file at ``path`` is open (None: not a linked ELF file, or
    unreadable), kept for the process by the file's identity.  What the scan cache keys facts by: facts
    read under one answer are never served under the other (a library that defines the loader was added
    next to the file, or removed)."""
    try:
        st = st if st is not None else os.stat(path)
    except (OSError, ValueError):
        return None
    identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    where = os.path.abspath(path)
    with _file_gates_lock:
        if (where, identity) in _file_gates:
            return _file_gates[(where, identity)]
    info = read_file_info(path)
    answer = None if info is None else bool(gate_opener(where, identity, info.needed, info.runpath))
    with _file_gates_lock:
        if len(_file_gates) > 100_000:
            _file_gates.clear()
        _file_gates[(where, identity)] = answer
    return answer
