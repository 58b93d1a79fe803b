"""A minimal ELF reader: the file header and the section header table, nothing else.

Large host libraries (``libtorch_cuda.so`` is over 1 GB) must be scanned by touching only
their headers, so this reader works on an ``mmap`` and reads the ELF header, the section
header table and ``.shstrtab``: a few kilobytes, wherever they are.

ELF header and section header layouts: https://refspecs.linuxfoundation.org/elf/gabi4+/ch4.eheader.html
and https://refspecs.linuxfoundation.org/elf/gabi4+/ch4.sheader.html
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from cudafit.binary.fatbin import Buffer
from cudafit.errors import BinaryFormatError

__all__ = [
    "EM_CUDA",
    "ET_DYN",
    "ET_EXEC",
    "ET_REL",
    "ElfHeader",
    "Section",
    "read_elf_header",
    "read_sections",
]

ELF_MAGIC = b"\x7fELF"
EM_CUDA = 190
ET_REL = 1
ET_EXEC = 2
ET_DYN = 3
SHT_NOBITS = 8
_SHN_XINDEX = 0xFFFF

_EHDR64 = struct.Struct("<HHIQQQIHHHHHH")  # from e_type (offset 16)
_EHDR32 = struct.Struct("<HHIIIIIHHHHHH")
_SHDR64 = struct.Struct("<IIQQQQIIQQ")
_SHDR32 = struct.Struct("<IIIIIIIIII")


@dataclass(frozen=True)
class ElfHeader:
    """The fields of the ELF file header that cudafit uses."""

    bits: int
    osabi: int
    abi_version: int
    e_type: int
    machine: int
    flags: int
    shoff: int
    shentsize: int
    shnum: int
    shstrndx: int


class Section(NamedTuple):
    """One section header, with its offset made absolute in the buffer.

    A named tuple, not a frozen dataclass: a library has tens of sections and every scanned file has its
    table read, and a tuple is built in C (a frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__``: ~1.5 us a section, a third of the time of a file without device code).
    """

    name: str
    type: int
    flags: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int

    @property
    def end(self) -> int:
        """Absolute end offset of the section's bytes."""
        return self.offset + self.size


def read_elf_header(buf: Buffer, origin: int = 0, size: int | None = None) -> ElfHeader:
    """Decode the ELF header at ``buf[origin]``.

    Only little-endian files are supported (every CUDA host platform is little-endian);
    others raise :class:`BinaryFormatError`.
    """
    size = len(buf) - origin if size is None else size
    if size < 52 or bytes(buf[origin : origin + 4]) != ELF_MAGIC:
        msg = "not an ELF file (too short or bad magic)"
        raise BinaryFormatError(msg, offset=origin)
    ei_class, ei_data = buf[origin + 4], buf[origin + 5]
    if ei_data != 1:
        msg = f"unsupported ELF byte order (EI_DATA={ei_data}); only little-endian is supported"
        raise BinaryFormatError(msg, offset=origin)
    formats = {2: (_EHDR64, 64), 1: (_EHDR32, 32)}
    if ei_class not in formats:
        msg = f"unsupported ELF class {ei_class}"
        raise BinaryFormatError(msg, offset=origin)
    fmt, bits = formats[ei_class]
    if size < 16 + fmt.size:
        msg = f"truncated ELF{bits} header"
        raise BinaryFormatError(msg, offset=origin)
    fields = fmt.unpack_from(buf, origin + 16)
    e_type, machine, shoff, flags = fields[0], fields[1], fields[5], fields[6]
    shentsize, shnum, shstrndx = fields[10], fields[11], fields[12]
    return ElfHeader(
        bits=bits,
        osabi=buf[origin + 7],
        abi_version=buf[origin + 8],
        e_type=e_type,
        machine=machine,
        flags=flags,
        shoff=shoff,
        shentsize=shentsize,
        shnum=shnum,
        shstrndx=shstrndx,
    )


def read_sections(
    buf: Buffer,
    hdr: ElfHeader,
    origin: int = 0,
    size: int | None = None,
    *,
    only: tuple[str, ...] | None = None,
) -> list[Section]:
    """Read the section header table and resolve names through ``.shstrtab``.

    With ``only``, just the sections of those names are returned (and no other name is decoded:
    static libraries hold thousands of members with dozens of sections each).

    Every offset is bounds-checked against the file (or archive member) size, so a
    truncated or lying header raises :class:`BinaryFormatError` instead of reading garbage.
    """
    size = len(buf) - origin if size is None else size
    if hdr.shoff == 0:
        return []
    fmt = _SHDR64 if hdr.bits == 64 else _SHDR32
    if hdr.shentsize < fmt.size:
        msg = f"ELF section header entry size {hdr.shentsize} is smaller than {fmt.size}"
        raise BinaryFormatError(msg, offset=origin)
    if hdr.shoff + fmt.size > size:
        msg = f"ELF section header table at {hdr.shoff:#x} lies past the end of the file ({size} bytes)"
        raise BinaryFormatError(msg, offset=origin)
    first = fmt.unpack_from(buf, origin + hdr.shoff)
    shnum = hdr.shnum or first[5]  # extended numbering: count in section 0's sh_size
    shstrndx = first[6] if hdr.shstrndx == _SHN_XINDEX else hdr.shstrndx
    if hdr.shoff + shnum * hdr.shentsize > size:
        msg = f"ELF section header table ({shnum} entries) runs past the end of the file"
        raise BinaryFormatError(msg, offset=origin + hdr.shoff)
    table_start = origin + hdr.shoff
    strtab: bytes = b""
    if 0 < shstrndx < shnum:
        s = fmt.unpack_from(buf, table_start + shstrndx * hdr.shentsize)
        s_off, s_size = s[4], s[5]
        if s_off + s_size > size:
            msg = ".shstrtab lies past the end of the file"
            raise BinaryFormatError(msg, offset=origin + hdr.shoff)
        strtab = bytes(buf[origin + s_off : origin + s_off + s_size])
    indices: Sequence[int]
    if only is not None:
        indices = _indices_named(buf, table_start, shnum, hdr.shentsize, strtab, only)
    else:
        indices = range(shnum)
    sections = []
    for i in indices:
        name_off, stype, flags, _addr, off, ssize, link, info, _align, entsize = fmt.unpack_from(
            buf, table_start + i * hdr.shentsize
        )
        end = strtab.find(b"\0", name_off)
        name = strtab[name_off : end if end >= 0 else len(strtab)].decode("utf-8", "replace") if strtab else ""
        sections.append(Section(name, stype, flags, origin + off, ssize, link, info, entsize))
    return sections


def _indices_named(
    buf: Buffer, table_start: int, shnum: int, shentsize: int, strtab: bytes, names: tuple[str, ...]
) -> list[int]:
    """Indices of the sections called one of ``names``, without unpacking every header.

    Every offset in ``.shstrtab`` where a wanted name starts is collected first (linkers may
    share string tails, so all occurrences count); then only the ``sh_name`` words of the table
    are compared, read in one strided pass.
    """
    offsets: set[int] = set()
    for name in names:
        needle = name.encode() + b"\0"
        pos = strtab.find(needle)
        while pos >= 0:
            offsets.add(pos)
            pos = strtab.find(needle, pos + 1)
    if not offsets:
        return []
    table = bytes(buf[table_start : table_start + shnum * shentsize])
    if shentsize % 4 == 0 and sys.byteorder == "little":
        sh_names = memoryview(table).cast("I")[:: shentsize // 4].tolist()
    else:
        sh_names = [struct.unpack_from("<I", table, i * shentsize)[0] for i in range(shnum)]
    return [i for i, n in enumerate(sh_names) if n in offsets]


def section_bounds_ok(section: Section, origin: int, size: int) -> bool:
    """Whether a section with file data lies inside the file (or member)."""
    return section.type == SHT_NOBITS or section.offset + section.size <= origin + size
