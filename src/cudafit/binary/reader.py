"""Entry points of the binary layer: file, buffer or stream in, :class:`BinaryFacts` out.

Dispatch on the first bytes:

* ``\\x7fELF`` with ``e_machine`` 190 -> a bare cubin; any other ELF -> a host file whose
  ``.nv_fatbin`` (loaded at run time) and ``__nv_relfatbin`` (relocatable, device-link only)
  sections are walked (fatbin_spec.md §A.1, §B.6);
* ``!<arch>\\n`` -> an ar archive (``.a``), each member inspected on its own;
* ``50 ED 55 BA`` -> a raw fatbin;
* PTX text (``.version`` / ``.target`` directives) -> one PTX entry;
* PE (``MZ``) and anything else that is not plain text -> the fatbin *locator*, which finds
  fatbins anywhere in the bytes and validates their headers so random data yields nothing.

Nothing here raises for bad input: problems become ``BinaryFacts.error`` with a stable
``error_code`` while the modules read before the problem are kept.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
import struct
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING

from cudafit.binary._elf import (
    EM_CUDA,
    ET_DYN,
    ET_EXEC,
    ET_REL,
    Section,
    read_elf_header,
    read_sections,
    section_bounds_ok,
)
from cudafit.binary.cubin import cubin_arch, cubin_is_arch_specific
from cudafit.binary.facts import (
    BinaryFacts,
    Compression,
    EntryKind,
    FatbinEntry,
    FileFormat,
    Module,
)
from cudafit.binary.fatbin import (
    FATBIN_MAGIC_BYTES,
    Buffer,
    iter_modules,
    looks_like_fatbin_at,
    parse_fatbin,
)
from cudafit.binary.linkage import dynamic_entries, gate_opener
from cudafit.binary.loaders import is_data_section, module_loaders, pe_module_loaders
from cudafit.binary.refine import disagreement_notes, refine_module
from cudafit.errors import BinaryFormatError
from cudafit.model import ArchVariant, PtxIsaVersion

if TYPE_CHECKING:
    from cudafit.binary.stream import StopWhen

__all__ = [
    "FATBIN_SECTIONS",
    "inspect_bytes",
    "inspect_path",
    "inspect_stream",
    "locate_modules",
    "sniff",
]

#: Sections holding fatbins, in cuobjdump's order: the executable fatbin first (§A.4).
FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin")
_PE_FATBIN_SECTION = ".nv_fatb"  # PE section names are at most 8 bytes
_AR_MAGIC = b"!<arch>\n"
_AR_HEADER = 60
_ELF_MAGIC = b"\x7fELF"
_PTX_VERSION = re.compile(rb"^\s*\.version\s+(\d+)\.(\d+)", re.MULTILINE)
_PTX_TARGET = re.compile(rb"^\s*\.target\s+(sm|compute)_(\d+)([af]?)", re.MULTILINE)
_PTX_SUFFIXES = (".ptx",)

#: Streams up to this size are read into memory and parsed like files; larger ones are
#: streamed through the locator so memory stays bounded.
STREAM_IN_MEMORY_LIMIT = 64 * 1024 * 1024
_CHUNK = 4 * 1024 * 1024


# --------------------------------------------------------------------------- helpers


def _error_facts(
    path: str, fmt: FileFormat, size: int, err: Exception, modules: tuple[Module, ...] = ()
) -> BinaryFacts:
    code = getattr(err, "code", None) or ("io-error" if isinstance(err, OSError) else "invalid-binary")
    message = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
    return BinaryFacts(path=path, format=fmt, size=size, modules=modules, error=message, error_code=code)


def sniff(head: bytes, name: str = "") -> FileFormat | None:
    """Guess from a file's first bytes (>= 64 recommended) and its name whether it may hold device code.

    Cheap enough to run on every file of an environment: returns the probable format, or
    ``None`` for files that cannot hold CUDA device code (Python sources, images, ...).
    """
    if head.startswith(_ELF_MAGIC):
        if len(head) >= 20 and head[5] == 1 and struct.unpack_from("<H", head, 18)[0] == EM_CUDA:
            return FileFormat.CUBIN
        if len(head) >= 18:
            e_type = struct.unpack_from("<H", head, 16)[0] if head[5] == 1 else 0
            return {ET_REL: FileFormat.ELF_OBJECT, ET_EXEC: FileFormat.ELF_EXEC}.get(e_type, FileFormat.ELF_SHARED)
        return FileFormat.ELF_SHARED
    if head.startswith(_AR_MAGIC):
        return FileFormat.ARCHIVE
    if head.startswith(FATBIN_MAGIC_BYTES):
        return FileFormat.FATBIN
    lower = name.lower()
    if lower.endswith(_PTX_SUFFIXES) or (b".version" in head[:4096] and b".target" in head[:4096]):
        return FileFormat.PTX
    if head.startswith(b"MZ") and lower.endswith((".dll", ".pyd", ".exe")):
        return FileFormat.PE
    return None


# --------------------------------------------------------------------------- ELF hosts


#: Libraries embed fatbins they load themselves in data sections: cuFFT ~24 000 in ``.ldata``, cuBLASLt
#: ~380 in ``.cask_resource``.  Any allocated, non-executable PROGBITS section of a linked file qualifies.
_RELEASE_EVERY = 32 << 20  # give walked fatbin pages back every 32 MiB: bounded RSS, few madvise calls
_EMBED_MIN = 1 << 20  # only sections of at least 1 MiB are probed
_EMBED_PROBE = 64 << 10  # ... in their first 64 KiB (cuFFT and cuBLASLt start theirs at offset 0)


def _probe_embedded(buf: Buffer, start: int, search_end: int, end: int) -> bool:
    """Whether a plausible fatbin (bounded by ``end``) starts in ``buf[start:search_end]``.

    Embedded fatbins need not be 8-aligned (cuFFT's are not), so every magic is checked.
    """
    pos = start
    while True:
        idx = buf.find(FATBIN_MAGIC_BYTES, pos, search_end)
        if idx < 0:
            return False
        if looks_like_fatbin_at(buf, idx, end):
            return True
        pos = idx + 1


#: Whether the module-loader import check runs: ``True`` (always: the exact check, for bytes without a
#: location), ``False`` (never), or a function of the file's (DT_NEEDED, search path) (binary/linkage.py).
Gate = bool | Callable[[tuple[str, ...], tuple[str, ...]], bool]


def _elf_facts(
    buf: Buffer, origin: int, size: int, path: str, embedded: bool = False, gate: Gate = True
) -> BinaryFacts:
    hdr = read_elf_header(buf, origin, size)
    if hdr.machine == EM_CUDA:
        return _cubin_facts(buf, origin, size, path)
    fmt = {ET_REL: FileFormat.ELF_OBJECT, ET_EXEC: FileFormat.ELF_EXEC, ET_DYN: FileFormat.ELF_SHARED}.get(
        hdr.e_type, FileFormat.ELF_SHARED
    )
    linked = hdr.e_type in (ET_DYN, ET_EXEC)
    # Objects in static libraries: fatbin sections only (thousands of members; nothing embedded there).
    sections = read_sections(buf, hdr, origin, size, only=None if linked else FATBIN_SECTIONS)
    modules: list[Module] = []
    for wanted in FATBIN_SECTIONS:
        for sec in sections:
            if sec.name != wanted or sec.type == 8 or sec.size == 0:
                continue
            if not section_bounds_ok(sec, origin, size):
                err = BinaryFormatError(
                    f"section {sec.name} ({sec.size} bytes at {sec.offset - origin:#x}) runs past the end of the file"
                )
                return _error_facts(path, fmt, size, err, tuple(modules))
            try:
                released = sec.offset
                for module in iter_modules(buf, sec.offset, sec.end, section=sec.name):
                    # relocatable code is never loaded: its payloads are not read (see binary/refine.py)
                    modules.append(module if module.relocatable else refine_module(buf, module))
                    end = module.offset + module.size
                    if end - released >= _RELEASE_EVERY:
                        _release(buf, released, end)
                        released = end
                _release(buf, released, sec.end)
            except BinaryFormatError as err:
                return _error_facts(path, fmt, size, err, tuple(modules))
    found_in: list[str] = []
    needed, runpath = dynamic_entries(buf, sections, origin, size, hdr.bits) if linked else ((), ())
    # The import check runs only where an import of the loader can be bound (binary/linkage.py).
    opened = linked and (gate(needed, runpath) if callable(gate) else gate)
    loaders = _module_loaders(buf, sections, origin, size, hdr.bits) if opened else ()
    for sec in sections:
        if (
            not linked
            or (sec.size < _EMBED_MIN and not loaders)  # first: most sections are small (no call made)
            or not is_data_section(sec)
            or not section_bounds_ok(sec, origin, size)
        ):
            continue
        if embedded or loaders:
            # The file imports the driver's module loader: its data sections are read whole, at any size
            # (TensorFlow's 1,149 generated-kernel fatbins sit in .rodata); without that evidence, only
            # when asked (--embedded), since cuFFT-like pools are judged from a probe until they matter.
            located = locate_modules(buf, sec.offset, sec.end)
            _release(buf, sec.offset, sec.end)
            if located:
                found_in.append(sec.name)
                modules.extend(Module(m.offset, m.size, sec.name, m.entries, bool(loaders)) for m in located)
        else:
            # A probe, not a census (embedded=True reads them all): cuFFT's .ldata and cuBLASLt's
            # .cask_resource start with a fatbin; cuSPARSELt and cuDNN keep theirs a few MB into
            # .cask_resource (NVIDIA's kernel-resource section), which is searched up to the first hit.
            window = sec.size if sec.name == ".cask_resource" else _EMBED_PROBE
            if _probe_embedded(buf, sec.offset, min(sec.end, sec.offset + window), sec.end):
                found_in.append(sec.name)
    return BinaryFacts(
        path=path,
        format=fmt,
        size=size,
        modules=tuple(modules),
        embedded_sections=tuple(found_in),
        needed=needed,
        module_loaders=loaders,
        notes=disagreement_notes(modules),
    )


def _module_loaders(buf: Buffer, sections: list[Section], origin: int, size: int, bits: int) -> tuple[str, ...]:
    """The driver's module-loading entry points the file imports (binary/loaders.py), when its dynamic
    symbol table lies inside the file."""
    dynsym = next((s for s in sections if s.type == _SHT_DYNSYM), None)
    if dynsym is None or not 0 <= dynsym.link < len(sections):
        return ()
    strtab = sections[dynsym.link]
    if not section_bounds_ok(dynsym, origin, size) or not section_bounds_ok(strtab, origin, size):
        return ()
    if isinstance(buf, mmap.mmap) and hasattr(mmap, "MADV_WILLNEED"):
        # The imports' names are scattered over .dynstr: one read-ahead instead of a fault per page
        # (the file is mapped MADV_RANDOM; libtorch_cuda.so: 39 ms -> 1.4 ms).
        lo = strtab.offset - strtab.offset % mmap.PAGESIZE
        with contextlib.suppress(OSError, ValueError):
            buf.madvise(mmap.MADV_WILLNEED, lo, strtab.end - lo)
    return module_loaders(buf, sections, bits)


_SHT_DYNSYM = 11


def _release(buf: Buffer, start: int, end: int) -> None:
    """Drop the pages of a walked fatbin from our RSS (they stay in the page cache).

    The page cache maps whole (large) folios around every header we touch, so walking the
    thousands of entries of a large library would otherwise grow RSS by ~10 KB per entry.
    """
    if isinstance(buf, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        page = mmap.PAGESIZE
        lo = start - start % page
        with contextlib.suppress(OSError, ValueError):
            buf.madvise(mmap.MADV_DONTNEED, lo, end - lo)


def _cubin_facts(buf: Buffer, origin: int, size: int, path: str) -> BinaryFacts:
    """A bare cubin becomes one module with one SASS entry (variant ``f`` is not recoverable)."""
    hdr = read_elf_header(buf, origin, size)
    arch, arch_specific = cubin_arch(hdr.flags, hdr.abi_version)
    notes: tuple[str, ...] = ()
    try:  # headers and .nv.compat only: kernels are read on demand (KernelNameSource)
        arch_specific = cubin_is_arch_specific(buf, origin, size)
    except BinaryFormatError as err:
        notes = (f"cubin details unreadable: {err}",)
    variant = ArchVariant.ARCH_SPECIFIC if arch_specific else ArchVariant.NONE
    module = _whole_file_module(EntryKind.SASS, arch, variant, (1, hdr.abi_version), origin, size)
    return BinaryFacts(path=path, format=FileFormat.CUBIN, size=size, modules=(module,), notes=notes)


_PE_SECTION = struct.Struct("<8sIIII12xI")
#: PE names are cut to 8 characters: ``.nv_fatbin`` -> ``.nv_fatb`` (registered, kept as is) and
#: ``__nv_relfatbin`` -> ``__nv_rel`` (relocatable: reported under its full name, never loaded).
_PE_FATBIN_SECTIONS = {".nv_fatb": ".nv_fatb", "__nv_rel": "__nv_relfatbin"}
_PE_INITIALIZED_DATA, _PE_CODE, _PE_EXECUTE = 0x40, 0x20, 0x20000000
_PE_NOT_DATA = (".pdata", ".xdata", ".reloc")  # unwind tables and relocations, as .eh_frame for ELF


def _pe_facts(buf: Buffer, origin: int, size: int, path: str) -> BinaryFacts:
    """A Windows PE file (DLL, PYD, EXE): fatbins of the ``.nv_fatb`` section (nvcc's ``.nv_fatbin`` cut to
    PE's 8-character names), plus the same embedded-fatbin probe as for ELF data sections; a file that
    imports the driver's module loader from nvcuda.dll has its initialized-data sections read whole, as
    an ELF file importing it (binary/loaders.py).

    PE/COFF layout: https://learn.microsoft.com/en-us/windows/win32/debug/pe-format
    """
    (pe_off,) = struct.unpack_from("<I", buf, origin + 0x3C)
    if pe_off + 24 > size or bytes(buf[origin + pe_off : origin + pe_off + 4]) != b"PE\0\0":
        return BinaryFacts(path=path, format=FileFormat.NOT_CUDA, size=size)
    _machine, count, _ts, _sym, _nsym, opt_size, _chars = struct.unpack_from("<HHIIIHH", buf, origin + pe_off + 4)
    table = pe_off + 24 + opt_size
    if table + count * 40 > size:
        err = BinaryFormatError("PE section table runs past the end of the file", offset=origin + table)
        return _error_facts(path, FileFormat.PE, size, err)
    loaders = pe_module_loaders(buf, origin, size, pe_off) if opt_size else ()
    modules: list[Module] = []
    found_in: list[str] = []
    for i in range(count):
        raw_name, vsize, _va, raw_size, raw_ptr, chars = _PE_SECTION.unpack_from(buf, origin + table + i * 40)
        name = raw_name.rstrip(b"\0").decode("latin-1")
        length = min(raw_size, vsize) if vsize else raw_size
        start, end = origin + raw_ptr, origin + raw_ptr + length
        if length == 0 or raw_ptr + length > size:
            continue
        if name in _PE_FATBIN_SECTIONS:
            try:
                modules.extend(
                    m if m.relocatable else refine_module(buf, m)
                    for m in iter_modules(buf, start, end, section=_PE_FATBIN_SECTIONS[name])
                )
            except BinaryFormatError as err:
                return _error_facts(path, FileFormat.PE, size, err, tuple(modules))
        elif loaders and chars & (_PE_INITIALIZED_DATA | _PE_CODE | _PE_EXECUTE) == _PE_INITIALIZED_DATA:
            if name not in _PE_NOT_DATA and (located := locate_modules(buf, start, end)):
                found_in.append(name)
                modules.extend(Module(m.offset, m.size, name, m.entries, True) for m in located)
        elif length >= _EMBED_MIN and _probe_embedded(buf, start, min(end, start + _EMBED_PROBE), end):
            found_in.append(name)
    return BinaryFacts(
        path=path,
        format=FileFormat.PE,
        size=size,
        modules=tuple(modules),
        embedded_sections=tuple(found_in),
        module_loaders=loaders,
        notes=disagreement_notes(modules),
    )


def _whole_file_module(
    kind: EntryKind, arch: int, variant: ArchVariant, code_version: tuple[int, int], origin: int, size: int
) -> Module:
    """A bare cubin or PTX file as a one-entry module (``header_size`` 0: the file is the payload)."""
    flags = 0x11 | {ArchVariant.ARCH_SPECIFIC: 0x100000, ArchVariant.FAMILY: 0x200000}.get(variant, 0)
    entry = FatbinEntry(kind, arch, variant, code_version, flags, Compression.NONE, origin, 0, origin, size, 0, 0)
    return Module(offset=origin, size=size, section=None, entries=(entry,))


# --------------------------------------------------------------------------- other formats


def _ptx_facts(buf: Buffer, origin: int, size: int, path: str) -> BinaryFacts:
    head = bytes(buf[origin : origin + min(size, 1 << 20)])
    ver = _PTX_VERSION.search(head)
    tgt = _PTX_TARGET.search(head)
    if not ver or not tgt:
        err = BinaryFormatError("PTX text without a .version and a .target directive")
        return _error_facts(path, FileFormat.PTX, size, err)
    isa = PtxIsaVersion(int(ver.group(1)), int(ver.group(2)))
    variant = ArchVariant(tgt.group(3).decode())
    module = _whole_file_module(EntryKind.PTX, int(tgt.group(2)), variant, (isa.major, isa.minor), origin, size)
    return BinaryFacts(path=path, format=FileFormat.PTX, size=size, modules=(module,), ptx_isa=isa)


def _raw_fatbin_facts(buf: Buffer, origin: int, size: int, path: str) -> BinaryFacts:
    modules: list[Module] = []
    try:
        modules.extend(refine_module(buf, m) for m in iter_modules(buf, origin, origin + size, section=None))
    except BinaryFormatError as err:
        return _error_facts(path, FileFormat.FATBIN, size, err, tuple(modules))
    notes = disagreement_notes(modules)
    return BinaryFacts(path=path, format=FileFormat.FATBIN, size=size, modules=tuple(modules), notes=notes)


def _iter_ar_members(buf: Buffer, origin: int, size: int) -> Iterator[tuple[str, int, int]]:
    """Yield (name, data offset, data size) of each regular member of an ar archive.

    GNU (``/`` symbol table, ``//`` long names, ``/N`` references) and BSD (``#1/N``) naming.
    """
    pos = origin + len(_AR_MAGIC)
    end = origin + size
    longnames = b""
    while pos + _AR_HEADER <= end:
        header = bytes(buf[pos : pos + _AR_HEADER])
        if header[58:60] != b"`\n":
            msg = "corrupt ar member header (bad terminator)"
            raise BinaryFormatError(msg, offset=pos)
        raw_name = header[:16].decode("latin-1").rstrip()
        try:
            msize = int(header[48:58].decode("ascii").strip() or "0")
        except ValueError as err:
            msg = "corrupt ar member header (bad size field)"
            raise BinaryFormatError(msg, offset=pos) from err
        data = pos + _AR_HEADER
        if data + msize > end:
            msg = f"ar member {raw_name!r} ({msize} bytes) runs past the end of the archive"
            raise BinaryFormatError(msg, offset=pos)
        name = raw_name
        if raw_name == "//":
            longnames = bytes(buf[data : data + msize])
        elif raw_name in ("/", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED"):
            pass
        else:
            if raw_name.startswith("#1/"):
                nlen = int(raw_name[3:] or "0")
                name = bytes(buf[data : data + nlen]).rstrip(b"\0").decode("utf-8", "replace")
                data, msize = data + nlen, msize - nlen
            elif raw_name.startswith("/") and raw_name[1:].isdigit():
                idx = int(raw_name[1:])
                stop = longnames.find(b"/\n", idx)
                name = longnames[idx : stop if stop >= 0 else len(longnames)].decode("utf-8", "replace")
            else:
                name = raw_name.rstrip("/")
            yield name, data, msize
        pos = pos + _AR_HEADER + int(header[48:58].decode("ascii").strip() or "0")
        pos += (pos - origin) & 1  # members are 2-byte aligned


def _archive_facts(buf: Buffer, origin: int, size: int, path: str) -> BinaryFacts:
    members: list[BinaryFacts] = []
    try:
        for name, off, msize in _iter_ar_members(buf, origin, size):
            members.append(_inspect_buffer(buf, off, msize, f"{path}!{name}", name))
    except BinaryFormatError as err:
        return BinaryFacts(
            path=path,
            format=FileFormat.ARCHIVE,
            size=size,
            members=tuple(members),
            error=str(err),
            error_code=err.code,
        )
    return BinaryFacts(path=path, format=FileFormat.ARCHIVE, size=size, members=tuple(members))


_LOCATE_WINDOW = 16 * 1024 * 1024
_FOLIO = 2 * 1024 * 1024  # the largest page-cache folio a fault maps (a PMD)


def locate_modules(buf: Buffer, start: int = 0, end: int | None = None) -> list[Module]:
    """Find fatbins anywhere in ``buf[start:end]`` (PE DLLs, unknown containers).

    Each candidate magic must be followed by a plausible fatbin header and a first entry header
    that passes strict checks (the 0x0101 field, a known kind, sane sizes), so random bytes do
    not produce entries.  Fatbins that fail to parse after that are skipped.
    """
    end = len(buf) if end is None else end
    found: list[Module] = []
    pos = start
    while True:
        # Searched a window at a time, and what was searched unmapped: a find over cuFFT's 258 MB .ldata
        # at once maps all of it (peak RSS 312 MB for its wheel, 34 MB of it heap).  A touched page maps
        # its whole page-cache folio, which can reach back before the last release: hence _FOLIO.
        idx = -1
        while pos < end:
            stop = min(end, pos + _LOCATE_WINDOW)
            idx = buf.find(FATBIN_MAGIC_BYTES, pos, min(end, stop + len(FATBIN_MAGIC_BYTES) - 1))
            _release(buf, max(start, pos - _FOLIO), idx if idx >= 0 else stop)
            if idx >= 0:
                break
            pos = stop
        if idx < 0:
            return found
        if looks_like_fatbin_at(buf, idx, end):
            try:
                module, stop = parse_fatbin(buf, idx, end, section=None, strict=True)
            except BinaryFormatError:
                pos = idx + 4
                continue
            found.append(refine_module(buf, module))
            _release(buf, max(start, idx - _FOLIO), stop)
            pos = stop
        else:
            pos = idx + 4


def _inspect_buffer(
    buf: Buffer, origin: int, size: int, path: str, name: str, embedded: bool = False, gate: Gate = True
) -> BinaryFacts:
    head = bytes(buf[origin : origin + min(size, 4096)])
    fmt = sniff(head, name)
    try:
        if head.startswith(_ELF_MAGIC):
            return _elf_facts(buf, origin, size, path, embedded, gate)
        if fmt is FileFormat.ARCHIVE:
            return _archive_facts(buf, origin, size, path)
        if fmt is FileFormat.FATBIN:
            return _raw_fatbin_facts(buf, origin, size, path)
        if fmt is FileFormat.PTX:
            return _ptx_facts(buf, origin, size, path)
        if head.startswith(b"MZ") and size >= 0x40:
            return _pe_facts(buf, origin, size, path)
        return BinaryFacts(path=path, format=FileFormat.NOT_CUDA, size=size)
    except BinaryFormatError as err:
        return _error_facts(path, fmt or FileFormat.UNREADABLE, size, err)
    except (struct.error, IndexError, ValueError, OverflowError, MemoryError) as err:
        # A defect the explicit checks did not anticipate: still a structured error, never a crash.
        wrapped = BinaryFormatError(f"malformed input ({type(err).__name__}: {err})")
        return _error_facts(path, fmt or FileFormat.UNREADABLE, size, wrapped)


# --------------------------------------------------------------------------- public entry points


def inspect_bytes(data: Buffer, name: str, *, embedded: bool = False, gate: bool = True) -> BinaryFacts:
    """Inspect an in-memory buffer; ``name`` is used for display and format hints.

    ``embedded=True`` also collects the fatbins a library embeds in its data sections to load itself
    (slower: whole sections are searched); by default those sections are only probed.  Bytes have no
    neighbours to decide the module-loader gate from (binary/linkage.py): their imports are checked
    (``gate=True``) unless the caller, knowing the archive they come from, says otherwise.
    """
    return _inspect_buffer(data, 0, len(data), name, name, embedded, gate)


def inspect_path(
    path: str | os.PathLike[str], *, name: str | None = None, embedded: bool = False, gate: bool | None = None
) -> BinaryFacts:
    """Inspect a file on disk through a read-only ``mmap``; only headers are touched (see inspect_bytes).

    ``gate``: whether the file's imports of the driver's module loader are checked (binary/linkage.py).
    ``None`` decides from the files around ``path`` (its dependency tree as far as the directory shows it);
    a copy that lives elsewhere (a spooled wheel member, a download) passes ``True`` (check) and lets its
    archive decide, or the answer its archive gave.
    """
    display = name if name is not None else os.fspath(path)
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            size = st.st_size
            chosen: Gate = gate if gate is not None else (lambda n, r: _opened(path, st, n, r))
            if size == 0:
                return BinaryFacts(path=display, format=FileFormat.NOT_CUDA, size=0)
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                # Headers are scattered through files of up to gigabytes: ask the kernel not to map
                # (and count in our RSS) the neighbouring pages of every header we touch.
                if hasattr(mm, "madvise") and hasattr(mmap, "MADV_RANDOM"):
                    mm.madvise(mmap.MADV_RANDOM)
                return _inspect_buffer(mm, 0, size, display, display, embedded, chosen)
    except OSError as err:
        return _error_facts(display, FileFormat.UNREADABLE, 0, err)


def _opened(
    path: str | os.PathLike[str], st: os.stat_result, needed: tuple[str, ...], runpath: tuple[str, ...]
) -> bool:
    """The module-loader gate of a file on disk (binary/linkage.py), by its identity."""
    return bool(gate_opener(os.fspath(path), (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns), needed, runpath))


def inspect_stream(
    stream: IO[bytes],
    name: str,
    size: int | None = None,
    *,
    reopen: Callable[[], IO[bytes]] | None = None,
    stop: StopWhen | None = None,
) -> BinaryFacts:
    """Inspect a stream (a zip or tar member) with memory bounded whatever its size.

    Streams up to :data:`STREAM_IN_MEMORY_LIMIT` are read whole; larger ones go through
    :func:`~cudafit.binary.stream.scan_stream`, which keeps only a bounded window (and calls ``stop``
    after each fatbin it locates, so a caller can end the read once the fatbins seen decide it).
    ``reopen`` (opening the same member again) lets a large ELF member's dynamic symbol table and section
    names be read again when the bounded window lost them, rather than assumed.
    """
    from cudafit.binary.stream import scan_stream

    try:
        if size is not None and size <= STREAM_IN_MEMORY_LIMIT:
            data = _read_exactly(stream, size)
            return inspect_bytes(data, name)
        if size is not None:  # known to be large: stream it from the first bytes on
            return scan_stream(stream, name, _read_exactly(stream, 4096), reopen=reopen, stop=stop)
        head = _read_exactly(stream, STREAM_IN_MEMORY_LIMIT + 1)
        if len(head) <= STREAM_IN_MEMORY_LIMIT:
            return inspect_bytes(head, name)
        return scan_stream(stream, name, head, reopen=reopen, stop=stop)
    except OSError as err:
        return _error_facts(name, FileFormat.UNREADABLE, size or 0, err)
    except Exception as err:  # zlib.error, zipfile.BadZipFile, tarfile.ReadError, EOFError...
        wrapped = BinaryFormatError(f"could not read member ({type(err).__name__}: {err})")
        return _error_facts(name, FileFormat.UNREADABLE, size or 0, wrapped)


def _read_exactly(stream: IO[bytes], size: int) -> bytes | bytearray:
    """Read up to ``size`` bytes; into one preallocated buffer when the stream supports ``readinto``."""
    readinto = getattr(stream, "readinto", None)
    if readinto is not None and size <= STREAM_IN_MEMORY_LIMIT + 1:
        buf = bytearray(size)
        view = memoryview(buf)
        got = 0
        try:
            while got < size:
                n = readinto(view[got : got + _CHUNK])
                if not n:
                    break
                got += n
        except (NotImplementedError, AttributeError):  # a raw stream that only implements read()
            view.release()
            return bytes(buf[:got]) + _read_chunks(stream, size - got)
        view.release()
        if got < size:
            del buf[got:]
        return buf
    return _read_chunks(stream, size)


def _read_chunks(stream: IO[bytes], size: int) -> bytes:
    chunks = []
    left = size
    while left > 0:
        chunk = stream.read(min(left, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
