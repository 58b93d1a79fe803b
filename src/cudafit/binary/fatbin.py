"""The fatbin container: a 16-byte header followed by entries (cubins, PTX, LTO-IR).

Layout (all little-endian), from fatbin_spec.md §B, verified against cuobjdump:

* fatbin header (16 bytes): ``u32 magic 0xBA55ED50, u16 version, u16 header_size, u64 fat_size``;
  the next fatbin of a section starts at ``offset + header_size + fat_size``;
* entry header (``header_size`` >= 64 bytes): ``u16 kind, u16 unknown(0x0101), u32 header_size,
  u64 payload_size, u32 compressed_size, u32 options_desc_off, u16 minor, u16 major, u32 arch,
  u32 identifier_off, u32 identifier_len, u64 flags, u64 unknown, u64 uncompressed_size``;
* kind 0x100 (CUDA 13.4+ ``--concat``) holds a table of member headers at entry+64, whose +4
  field is the member's offset inside the decompressed payload (§B.5).

Only headers are read here: arch, ``a``/``f`` variant, PTX ISA (= the PTX entry's code
version) and compression are all in the header, so no question about compatibility needs
decompression (§C.2).
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Iterator

from cudafit.binary.facts import Compression, EntryKind, FatbinEntry, Module
from cudafit.errors import BinaryFormatError
from cudafit.model import ArchVariant

#: What the parsers read: whole files as ``bytes`` or a read-only ``mmap``; offsets are absolute.
Buffer = bytes | bytearray | mmap.mmap

__all__ = [
    "ENTRY_HEADER_SIZE",
    "FATBIN_HEADER_SIZE",
    "FATBIN_MAGIC",
    "FATBIN_MAGIC_BYTES",
    "Buffer",
    "decode_entry_header",
    "iter_modules",
    "looks_like_fatbin_at",
    "parse_fatbin",
]

FATBIN_MAGIC = 0xBA55ED50
FATBIN_MAGIC_BYTES = struct.pack("<I", FATBIN_MAGIC)
FATBIN_HEADER_SIZE = 16
ENTRY_HEADER_SIZE = 64

_FATBIN_HEADER = struct.Struct("<IHHQ")
_ENTRY_HEADER = struct.Struct("<HHIQIIHHIIIQQQ")
_U32_PAIR = struct.Struct("<II")

KIND_PTX = 1
KIND_ELF = 2
KIND_OLDCUBIN = 4
KIND_NVVM = 8
KIND_CONCAT = 0x100
_KINDS = {
    KIND_PTX: EntryKind.PTX,
    KIND_ELF: EntryKind.SASS,
    KIND_OLDCUBIN: EntryKind.SASS,
    KIND_NVVM: EntryKind.LTO,
    KIND_CONCAT: EntryKind.CONCAT,
}

FLAG_LZ4 = 0x2000
FLAG_ZSTD = 0x8000
FLAG_ARCH_SPECIFIC = 0x100000
FLAG_FAMILY = 0x200000

# Sanity bounds used only to reject false positives when locating fatbins in unknown bytes.
_MAX_ARCH = 1500
_UNKNOWN_FIELD = 0x0101


_COMPRESSION = {0: Compression.NONE, FLAG_LZ4: Compression.LZ4, FLAG_ZSTD: Compression.ZSTD}
_VARIANTS = {
    0: ArchVariant.NONE,
    FLAG_ARCH_SPECIFIC: ArchVariant.ARCH_SPECIFIC,
    FLAG_FAMILY: ArchVariant.FAMILY,
    FLAG_ARCH_SPECIFIC | FLAG_FAMILY: ArchVariant.ARCH_SPECIFIC,  # both bits: a wins, as in _variant
}


def _variant(flags: int) -> ArchVariant:
    if flags & FLAG_ARCH_SPECIFIC:
        return ArchVariant.ARCH_SPECIFIC
    if flags & FLAG_FAMILY:
        return ArchVariant.FAMILY
    return ArchVariant.NONE


def _compression(flags: int, offset: int) -> Compression:
    if flags & FLAG_ZSTD and flags & FLAG_LZ4:
        msg = "entry claims both LZ4 and ZSTD compression"
        raise BinaryFormatError(msg, offset=offset)
    if flags & FLAG_ZSTD:
        return Compression.ZSTD
    if flags & FLAG_LZ4:
        return Compression.LZ4
    return Compression.NONE


def _cstring(buf: Buffer, start: int, limit: int, maximum: int = 4096) -> str:
    """Read a NUL-terminated string that must lie inside ``[start, limit)`` (no copy beyond it)."""
    end = min(limit, start + maximum, len(buf))
    if start < 0 or start >= end:
        return ""
    nul = buf.find(b"\0", start, end)
    return bytes(buf[start : nul if nul >= 0 else end]).decode("utf-8", "replace")


def decode_entry_header(
    buf: Buffer, pos: int, end: int, *, base: int = 0, strict: bool = False
) -> tuple[FatbinEntry, int]:
    """Decode the entry header at ``buf[pos]``; return the entry and the offset of the next one.

    ``end`` bounds the enclosing fatbin; ``base`` is added to offsets so they are absolute in
    the scanned file.  ``strict`` applies the extra plausibility checks the locator uses.
    """
    if min(end, len(buf)) - pos < ENTRY_HEADER_SIZE:
        msg = f"truncated fatbin entry header: {min(end, len(buf)) - pos} bytes left, 64 needed"
        raise BinaryFormatError(msg, offset=base + pos)
    (kind, unknown, hsize, psize, csize, optoff, minor, major, arch, idoff, idlen, flags, _unk2, usize) = (
        _ENTRY_HEADER.unpack_from(buf, pos)
    )
    if hsize < ENTRY_HEADER_SIZE or hsize % 8:
        msg = f"fatbin entry header size {hsize} is not a multiple of 8 >= 64"
        raise BinaryFormatError(msg, offset=base + pos)
    nxt = pos + hsize + psize
    if nxt > end:
        msg = f"fatbin entry ({hsize}+{psize} bytes) runs past the end of its fatbin ({end - pos} bytes left)"
        raise BinaryFormatError(msg, offset=base + pos)
    if strict and (unknown != _UNKNOWN_FIELD or kind not in _KINDS or arch > _MAX_ARCH or psize % 8):
        msg = "bytes at this offset are not a fatbin entry header"
        raise BinaryFormatError(msg, offset=base + pos)
    compression = _COMPRESSION.get(flags & (FLAG_LZ4 | FLAG_ZSTD)) or _compression(flags, base + pos)
    if compression is not Compression.NONE and (csize == 0 or csize > psize):
        msg = f"compressed entry declares {csize} compressed bytes in a {psize}-byte payload"
        raise BinaryFormatError(msg, offset=base + pos)
    header_end = pos + hsize
    identifier = ""
    if idoff and idlen:
        if idoff + idlen > hsize + psize:
            msg = "entry identifier lies outside the entry"
            raise BinaryFormatError(msg, offset=base + pos)
        identifier = _cstring(buf, pos + idoff, min(pos + idoff + idlen, nxt), maximum=idlen)
    options = ""
    if optoff and optoff + 8 <= hsize and pos + optoff + 8 <= len(buf):
        ooff, olen = _U32_PAIR.unpack_from(buf, pos + optoff)
        if ooff and ooff < hsize + psize:
            options = _cstring(buf, pos + ooff, min(pos + ooff + max(olen, 1), nxt))
    entry = FatbinEntry(  # positional: this runs for every entry of every library
        _KINDS.get(kind, EntryKind.UNKNOWN),
        arch,
        _VARIANTS[flags & (FLAG_ARCH_SPECIFIC | FLAG_FAMILY)],
        (major, minor),
        flags,
        compression,
        base + pos,
        hsize,
        base + header_end,
        psize,
        csize,
        usize,
        identifier,
        options,
        None,
        kind,
    )
    return entry, nxt


def _iter_concat_members(buf: Buffer, outer: FatbinEntry, pos: int, base: int) -> Iterator[FatbinEntry]:
    """Expand a kind-0x100 entry into its members (fatbin_spec.md §B.5), headers only."""
    table = pos + ENTRY_HEADER_SIZE
    limit = min(pos + outer.header_size, len(buf))
    if table + 8 > limit:
        msg = "concatenated entry has no member table"
        raise BinaryFormatError(msg, offset=base + pos)
    count, table_bytes = _U32_PAIR.unpack_from(buf, table)
    if table_bytes < 8 or table + table_bytes > limit or count > table_bytes // ENTRY_HEADER_SIZE:
        msg = f"concatenated entry member table ({count} members, {table_bytes} bytes) does not fit its header"
        raise BinaryFormatError(msg, offset=base + pos)
    p = table + 8
    table_end = table + table_bytes
    for _ in range(count):
        if p + ENTRY_HEADER_SIZE > table_end:
            msg = "concatenated entry member header runs past the member table"
            raise BinaryFormatError(msg, offset=base + p)
        (
            kind,
            _unk,
            member_off,
            psize,
            csize,
            optoff,
            minor,
            major,
            arch,
            idoff,
            idlen,
            flags,
            _u2,
            usize,
        ) = _ENTRY_HEADER.unpack_from(buf, p)
        desc_end = 0
        options = ""
        if optoff and p + optoff + 8 <= table_end:
            ooff, olen = _U32_PAIR.unpack_from(buf, p + optoff)
            desc_end = ooff + olen + 1
            options = _cstring(buf, p + ooff, min(p + ooff + max(olen, 1), table_end))
        identifier = _cstring(buf, p + idoff, min(p + idoff + idlen, table_end), idlen) if idoff and idlen else ""
        length = max(ENTRY_HEADER_SIZE, (idoff + idlen + 1) if idoff else 0, desc_end if optoff else 0)
        length = (length + 7) & ~7
        yield FatbinEntry(
            kind=_KINDS.get(kind, EntryKind.UNKNOWN),
            arch_number=arch,
            variant=_variant(flags),
            code_version=(major, minor),
            flags=flags,
            compression=Compression.NONE,
            offset=base + p,
            header_size=length,
            payload_offset=member_off,
            payload_size=psize,
            compressed_size=csize,
            uncompressed_size=usize,
            identifier=identifier,
            options=options,
            concat_offset=outer.offset,
            raw_kind=kind,
        )
        p += length


def parse_fatbin(
    buf: Buffer,
    pos: int,
    end: int,
    *,
    section: str | None,
    base: int = 0,
    strict: bool = False,
) -> tuple[Module, int]:
    """Parse one fatbin starting at ``buf[pos]``; return it and the offset just past it."""
    if end - pos < FATBIN_HEADER_SIZE:
        msg = f"truncated fatbin header: {end - pos} bytes left, 16 needed"
        raise BinaryFormatError(msg, offset=base + pos)
    magic, version, hsize, fat_size = _FATBIN_HEADER.unpack_from(buf, pos)
    if magic != FATBIN_MAGIC:
        msg = "missing fatbin magic 0xBA55ED50"
        raise BinaryFormatError(msg, offset=base + pos)
    if hsize < FATBIN_HEADER_SIZE or (strict and (version != 1 or hsize != FATBIN_HEADER_SIZE)):
        msg = f"unsupported fatbin header (version {version}, header size {hsize})"
        raise BinaryFormatError(msg, offset=base + pos)
    start = pos + hsize
    stop = start + fat_size
    if stop > end:
        msg = f"fatbin declares {fat_size} bytes of entries but only {max(0, end - start)} remain"
        raise BinaryFormatError(msg, offset=base + pos)
    entries: list[FatbinEntry] = []
    p = start
    while p < stop:
        if stop - p < ENTRY_HEADER_SIZE and not any(bytes(buf[p:stop])):
            break  # zero padding after the last entry
        entry, nxt = decode_entry_header(buf, p, stop, base=base, strict=strict)
        if entry.kind is EntryKind.CONCAT:
            entries.extend(_iter_concat_members(buf, entry, p, base))
        else:
            entries.append(entry)
        p = nxt
    return Module(offset=base + pos, size=stop - pos, section=section, entries=tuple(entries)), stop


def looks_like_fatbin_at(buf: Buffer, pos: int, end: int) -> bool:
    """Whether a plausible fatbin (header and first entry header) starts at ``pos``."""
    try:
        if min(end, len(buf)) - pos < FATBIN_HEADER_SIZE + ENTRY_HEADER_SIZE:
            return False
        magic, version, hsize, fat_size = _FATBIN_HEADER.unpack_from(buf, pos)
        if magic != FATBIN_MAGIC or version != 1 or hsize != FATBIN_HEADER_SIZE or fat_size < ENTRY_HEADER_SIZE:
            return False
        decode_entry_header(buf, pos + hsize, min(end, pos + hsize + fat_size), strict=True)
    except BinaryFormatError:
        return False
    return True


def iter_modules(
    buf: Buffer,
    start: int,
    end: int,
    *,
    section: str | None,
    base: int = 0,
) -> Iterator[Module]:
    """Yield every fatbin in ``buf[start:end]`` (an ELF section or a raw .fatbin file).

    Consecutive fatbins are normally contiguous, but the walk searches the next magic on an
    8-byte boundary (fatbin_spec.md §B.6) and stops at trailing zero padding.  A malformed
    fatbin raises :class:`BinaryFormatError` after the good ones have been yielded.
    """
    pos = start
    while pos + FATBIN_HEADER_SIZE <= end:
        if bytes(buf[pos : pos + 4]) != FATBIN_MAGIC_BYTES:
            nxt = _find_aligned(buf, pos, end, start)
            if nxt < 0:
                return
            pos = nxt
        module, stop = parse_fatbin(buf, pos, end, section=section, base=base)
        yield module
        pos = start + ((stop - start + 7) & ~7)


def _find_aligned(buf: Buffer, pos: int, end: int, origin: int) -> int:
    """Next offset >= pos holding the fatbin magic, 8-aligned relative to ``origin``; -1 if none."""
    while True:
        idx = buf.find(FATBIN_MAGIC_BYTES, pos, end)
        if idx < 0:
            return -1
        if (idx - origin) % 8 == 0:
            return idx
        pos = idx + 1
