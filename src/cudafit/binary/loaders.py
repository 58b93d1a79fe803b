"""Evidence that a library loads modules itself: the driver entry points it imports, and where it can
keep them (its data sections).

The CUDA runtime registers the fatbins of ``.nv_fatbin``; a library can also hold fatbins or cubins
as plain data and hand them to the driver itself (CUDA Driver API, "Module Management" and "Library
Management": https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MODULE.html,
https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__LIBRARY.html).  TensorFlow 2.20.0's
``libtensorflow_cc.so.2`` keeps 1,149 fatbins of generated elementwise kernels in ``.rodata`` and
imports ``cuModuleLoadData``.  A file that imports one of :data:`MODULE_LOADERS` (an *undefined*
dynamic symbol: a library that defines them, such as a driver shim, does not count) has its data
sections read whole; a file without that evidence pays the import check (:func:`module_loaders`).  ELF
allows no cheaper exact test of the import: ``.gnu.hash`` indexes only defined symbols, and an import does
not name the library defining it (TensorFlow's is its own ``libtensorflow_framework.so.2``, not
``libcuda.so.1``).  But the check runs only where such an import could be bound at all: the gate of
binary/linkage.py (the file's visible dependency tree holds ``libcuda.so*`` or a library defining a
loader), so most files without device code skip it.  A Windows DLL does name the library
(:func:`pe_module_loaders`: imports from ``nvcuda.dll``).
"""

from __future__ import annotations

import operator
import struct
import sys
from array import array

from cudafit.binary._elf import Section
from cudafit.binary.fatbin import Buffer

__all__ = [
    "MODULE_LOADERS",
    "NAME_SPAN",
    "import_name_offsets",
    "is_data_section",
    "loader_names_at",
    "module_loaders",
    "pe_module_loaders",
]

#: Entry points that load a module from memory.  ``cuModuleLoad`` and ``cuLibraryLoadFromFile`` read
#: files, which a scan finds as files (cubins, fatbins) on their own.
MODULE_LOADERS = ("cuModuleLoadData", "cuModuleLoadDataEx", "cuModuleLoadFatBinary", "cuLibraryLoadData")
_NAMES = {name.encode() + b"\0": name for name in MODULE_LOADERS}
_LONGEST = max(len(k) for k in _NAMES)
#: Every loader's name holds one of these.  Searching a string table costs ~0.5 ns a byte for both, the
#: gather ~40 ns an import: up to this many bytes per import, the table is searched first.
_NEEDLES = (b"cuModuleLoad", b"cuLibraryLoadData")
_SEARCH_PER_IMPORT = 64
_HEADS = frozenset(name[:3].encode() for name in MODULE_LOADERS)  # b"cuM", b"cuL"

SHT_DYNSYM = 11
_SHT_PROGBITS = 1
_SHF_ALLOC = 0x2
_SHF_EXECINSTR = 0x4
FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin")


def is_data_section(sec: Section) -> bool:
    """An allocated, non-executable PROGBITS section other than the fatbin sections and unwind tables:
    where a library can keep fatbins it loads itself (.rodata, .ldata, .cask_resource, .data.rel.ro)."""
    return (
        sec.type == _SHT_PROGBITS
        and sec.flags & (_SHF_ALLOC | _SHF_EXECINSTR) == _SHF_ALLOC
        and sec.name not in FATBIN_SECTIONS
        and not sec.name.startswith((".eh_frame", ".gcc_except_table"))
    )


SHT_GNU_HASH = 0x6FFFFFF6
_U32 = "I" if array("I").itemsize == 4 else "L"  # a 4-byte unsigned array code on this platform


def module_loaders(buf: Buffer, sections: list[Section], bits: int) -> tuple[str, ...]:
    """The :data:`MODULE_LOADERS` a file imports, from its ``.dynsym``/``.dynstr`` (absolute in ``buf``).

    Only the imports are looked at: with a ``.gnu.hash`` section only the unhashed head of ``.dynsym``
    (``symoffset``: the hash table holds the defined symbols, which linkers place after the undefined
    ones), so a C++ library with 100,000 exports costs its few thousand imports.  Those are judged
    by the first byte of their names, gathered in one C-level pass (:func:`_first_bytes`; a Python
    loop over them was most of the cost): a loader's name starts with ``c``, and only the imports
    that do (tens to hundreds: ``calloc``, ``cudaMalloc``...) are read further, three bytes first.
    """
    dynsym = next((s for s in sections if s.type == SHT_DYNSYM), None)
    if dynsym is None or not 0 <= dynsym.link < len(sections):
        return ()
    strtab = sections[dynsym.link]
    entsize = 24 if bits == 64 else 16
    count = dynsym.size // entsize
    gnu_hash = next((s for s in sections if s.type == SHT_GNU_HASH), None)
    if gnu_hash is not None and gnu_hash.size >= 16 and gnu_hash.end <= len(buf):
        symoffset = struct.unpack_from("<I", buf, gnu_hash.offset + 4)[0]
        if 0 < symoffset <= count:
            count = symoffset
    if count <= 1:  # the null symbol alone
        return ()
    if strtab.size <= _SEARCH_PER_IMPORT * count and not any(
        buf.find(needle, strtab.offset, strtab.end) >= 0 for needle in _NEEDLES
    ):
        return ()  # a small string table searched whole (C speed) holds no loader's name
    table = bytes(buf[dynsym.offset : dynsym.offset + count * entsize])
    names = _name_column(table, bits)
    if not names:
        return ()
    found: set[str] = set()
    with memoryview(buf) as whole, whole[strtab.offset : strtab.end] as strings:
        firsts = _first_bytes(names, strings)
        if firsts is None:  # a name past the string table: the careful reading below skips it
            return _loaders_by_name(buf, table, strtab, bits)
        shndx_at = 6 if bits == 64 else 14
        at = firsts.find(b"c")
        while at >= 0:  # imports starting with "c": tens to hundreds
            name = names[at]
            if (
                bytes(strings[name : name + 3]) in _HEADS
                and not struct.unpack_from("<H", table, at * entsize + shndx_at)[0]
            ):
                found |= loader_names_at(bytes(strings[name : name + NAME_SPAN]))  # an import (undefined)
            at = firsts.find(b"c", at + 1)
    return tuple(n for n in MODULE_LOADERS if n in found)


def _name_column(table: bytes, bits: int) -> array[int]:
    """``st_name`` of every symbol of a symbol table's bytes (Elf64_Sym: 24 bytes, Elf32_Sym: 16 bytes,
    ``st_name`` first in both), as one C-level strided copy."""
    entsize = 24 if bits == 64 else 16
    column = array(_U32)
    column.frombytes(table[: len(table) - len(table) % entsize])
    if sys.byteorder != "little":  # pragma: no cover - the ELF files read here are little-endian
        column.byteswap()
    return column[0 :: entsize // 4]


def _first_bytes(names: array[int], strings: memoryview) -> bytes | None:
    """The first byte of each name (offsets into ``strings``), gathered by ``operator.itemgetter`` in C
    (a Python loop costs ~0.15 us per import: 0.9 ms for libtorch_python.so's 5,748).  None when a name
    lies past the table (a malformed or cut file)."""
    try:
        if len(names) == 1:
            return bytes((strings[names[0]],))
        return bytes(operator.itemgetter(*names)(strings))
    except IndexError:
        return None


def _loaders_by_name(buf: Buffer, table: bytes, strtab: Section, bits: int) -> tuple[str, ...]:
    """:func:`module_loaders` one import at a time, names past the string table skipped."""
    found: set[str] = set()
    for name_off in import_name_offsets(table, bits):
        if name_off < strtab.size:
            at = strtab.offset + name_off
            if buf[at : at + 2] == b"cu":
                found |= loader_names_at(bytes(buf[at : min(at + NAME_SPAN, strtab.end)]))
    return tuple(n for n in MODULE_LOADERS if n in found)


#: How many bytes of a string table decide whether a name is one of :data:`MODULE_LOADERS`.
NAME_SPAN = _LONGEST


def import_name_offsets(table: bytes, bits: int) -> list[int]:
    """``st_name`` of every undefined symbol (``st_shndx`` 0) of a symbol table's bytes, read as two
    strided arrays (Elf64_Sym: name@0, shndx@6, 24 bytes; Elf32_Sym: name@0, shndx@14, 16 bytes)."""
    entsize = 24 if bits == 64 else 16
    raw = memoryview(table[: len(table) - len(table) % entsize])
    names = raw.cast("I")[0 :: entsize // 4].tolist()
    shndx = raw.cast("H")[(6 if bits == 64 else 14) // 2 :: entsize // 2].tolist()
    return [name for name, section in zip(names, shndx, strict=True) if not section]


def loader_names_at(head: bytes) -> set[str]:
    """The :data:`MODULE_LOADERS` a NUL-terminated name starting ``head`` is (at most one)."""
    return {name for needle, name in _NAMES.items() if head.startswith(needle)}


# --------------------------------------------------------------------------- PE (Windows DLLs)

#: The CUDA driver's library on Windows (CUDA Driver API: "cuda.dll" / nvcuda.dll in System32).
PE_DRIVER_DLL = "nvcuda.dll"
_PE_MAX_DESCRIPTORS = 4096  # import descriptors (one per DLL); a real DLL has tens
_PE_MAX_THUNKS = 1 << 16  # names imported from one DLL
_PE_NAME_MAX = 256


def pe_module_loaders(buf: Buffer, origin: int, size: int, pe_off: int) -> tuple[str, ...]:
    """The :data:`MODULE_LOADERS` a PE file imports from ``nvcuda.dll``, by name, from its import table
    and its delay-load import table (PE/COFF: "The .idata Section" and "Delay-Load Import Tables",
    https://learn.microsoft.com/en-us/windows/win32/debug/pe-format).

    PE imports name their DLL, so unlike ELF only the driver's own imports are read: a few dozen names
    at most.  Reading stops at the first bound a table breaks (bytes only, never an error).
    """
    try:
        return _pe_loaders(buf, origin, size, pe_off)
    except (struct.error, IndexError, ValueError):
        return ()


def _pe_loaders(buf: Buffer, origin: int, size: int, pe_off: int) -> tuple[str, ...]:
    count, opt_size = struct.unpack_from("<2xH12xH", buf, origin + pe_off + 4)
    opt = origin + pe_off + 24
    magic = struct.unpack_from("<H", buf, opt)[0]
    if magic not in (0x10B, 0x20B) or opt_size < (96 if magic == 0x10B else 112):
        return ()
    wide = magic == 0x20B  # PE32+: 8-byte thunks, data directories 16 bytes further
    dirs = opt + (112 if wide else 96)
    ndirs = struct.unpack_from("<I", buf, dirs - 4)[0]
    table = opt + opt_size
    spans: list[tuple[int, int, int, int]] = [
        struct.unpack_from("<8xIIII", buf, table + 40 * i) for i in range(min(count, 96))
    ]

    def at(rva: int) -> int:
        """File offset (absolute in ``buf``) of an RVA, through the section holding it."""
        for vsize, va, raw_size, raw_ptr in spans:
            if va <= rva < va + max(vsize, raw_size) and rva - va < raw_size and raw_ptr + raw_size <= size:
                return origin + raw_ptr + rva - va
        raise ValueError(rva)

    def cstr(rva: int) -> bytes:
        start = at(rva)
        raw = bytes(buf[start : start + _PE_NAME_MAX])
        return raw.split(b"\0", 1)[0]

    found: set[str] = set()

    def names(thunks_rva: int) -> None:
        step, ordinal = (8, 1 << 63) if wide else (4, 1 << 31)
        pos = at(thunks_rva)
        for _ in range(_PE_MAX_THUNKS):
            (thunk,) = struct.unpack_from("<Q" if wide else "<I", buf, pos)
            if not thunk:
                return
            if not thunk & ordinal:  # by name: an RVA to a 2-byte hint and the name
                found.update(loader_names_at(cstr(thunk + 2) + b"\0"))
            pos += step

    for index, entry_size in ((1, 20), (13, 32)):  # the import table, the delay-load import table
        if index >= ndirs:
            continue
        rva, dir_size = struct.unpack_from("<II", buf, dirs + 8 * index)
        if not rva or not dir_size:
            continue
        pos = at(rva)
        for _ in range(_PE_MAX_DESCRIPTORS):
            fields = struct.unpack_from("<5I" if entry_size == 20 else "<8I", buf, pos)
            if not any(fields):
                break
            if entry_size == 20:  # OriginalFirstThunk, TimeDateStamp, ForwarderChain, Name, FirstThunk
                dll, lookup = fields[3], fields[0] or fields[4]
            elif fields[0] & 1:  # Attributes (1: RVAs), DllName, ModuleHandle, IAT, ImportNameTable, ...
                dll, lookup = fields[1], fields[4]
            else:  # pragma: no cover - Visual C++ 6 delay-load tables hold addresses, not RVAs
                dll = lookup = 0
            try:
                if dll and cstr(dll).lower() == PE_DRIVER_DLL.encode():
                    names(lookup)
            except (struct.error, ValueError):  # this DLL's names out of bounds: the others are still read
                pass
            pos += entry_size
    return tuple(n for n in MODULE_LOADERS if n in found)
