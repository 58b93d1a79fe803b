"""A small byte-level builder for fatbins, host ELF files and ar archives.

Used to build well-formed inputs and then corrupt them precisely (truncations, lying sizes,
flipped bytes, overlapping offsets, decompression bombs), following fatbin_spec.md §B.
"""

from __future__ import annotations

import struct

FLAG_64 = 0x1
FLAG_LINUX = 0x10
BASE_FLAGS = FLAG_64 | FLAG_LINUX
FLAG_LZ4 = 0x2000
FLAG_ZSTD = 0x8000
FLAG_A = 0x100000
FLAG_F = 0x200000


def pad8(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 8)


def entry(
    kind: int = 2,
    arch: int = 80,
    *,
    flags: int = BASE_FLAGS,
    payload: bytes = b"\0" * 16,
    code_version: tuple[int, int] = (1, 8),
    compressed_size: int = 0,
    uncompressed_size: int = 0,
    identifier: bytes = b"",
    unknown: int = 0x0101,
    payload_size: int | None = None,
    header_size: int | None = None,
) -> bytes:
    """One entry header + payload (payload padded to 8)."""
    extra = b""
    idoff = idlen = 0
    if identifier:
        idoff, idlen = 64, len(identifier)
        extra = pad8(identifier + b"\0")
    hsize = header_size if header_size is not None else 64 + len(extra)
    body = pad8(payload)
    psize = len(body) if payload_size is None else payload_size
    major, minor = code_version
    head = struct.pack(
        "<HHIQIIHHIIIQQQ",
        kind,
        unknown,
        hsize,
        psize,
        compressed_size,
        0,
        minor,
        major,
        arch,
        idoff,
        idlen,
        flags,
        0,
        uncompressed_size,
    )
    head += extra
    head += b"\0" * max(0, hsize - len(head))
    return head + body


def fatbin(*entries: bytes, fat_size: int | None = None, version: int = 1) -> bytes:
    body = b"".join(entries)
    size = len(body) if fat_size is None else fat_size
    return struct.pack("<IHHQ", 0xBA55ED50, version, 16, size) + body


def elf(
    sections: list[tuple[str, bytes]],
    *,
    e_type: int = 3,
    machine: int = 62,
    bits: int = 64,
    flags: int = 0,
    osabi: int = 0,
    abi_version: int = 0,
    needed: tuple[str, ...] = (),
) -> bytes:
    """A minimal little-endian ELF: header, section data, .shstrtab, section header table.

    ``needed`` adds ``.dynstr`` and a ``.dynamic`` (SHT_DYNAMIC, linked to it) with one DT_NEEDED
    per name, as a shared library linking ``libcudart.so.13`` carries (64-bit only).
    """
    types = [1] * len(sections)
    links = [0] * len(sections)
    if needed:
        dynstr = b"\0"
        dyn = b""
        for lib in needed:
            dyn += struct.pack("<qQ", 1, len(dynstr))
            dynstr += lib.encode() + b"\0"
        dyn += struct.pack("<qQ", 0, 0)
        sections = [*sections, (".dynstr", dynstr), (".dynamic", dyn)]
        types += [3, 6]
        links += [0, len(sections) - 1]  # section indexes start at 1 (0 is the null header)
    return _assemble(sections, types, links, e_type, machine, bits, flags, osabi, abi_version)


def _assemble(
    sections: list[tuple[str, bytes]],
    types: list[int],
    links: list[int],
    e_type: int,
    machine: int,
    bits: int,
    flags: int,
    osabi: int,
    abi_version: int,
) -> bytes:
    """Header, section data (8-aligned), ``.shstrtab`` and the section header table."""
    names = b"\0"
    name_offs = []
    for name, _ in sections:
        name_offs.append(len(names))
        names += name.encode() + b"\0"
    shstr_name = len(names)
    names += b".shstrtab\0"
    ehsize = 64 if bits == 64 else 52
    data = bytearray(b"\0" * ehsize)
    offsets = []
    for _, blob in sections:
        data += b"\0" * (-len(data) % 8)
        offsets.append(len(data))
        data += blob
    data += b"\0" * (-len(data) % 8)
    shstr_off = len(data)
    data += names
    data += b"\0" * (-len(data) % 8)
    shoff = len(data)
    shent = 64 if bits == 64 else 40
    fmt = "<IIQQQQIIQQ" if bits == 64 else "<IIIIIIIIII"
    shdrs = [struct.pack(fmt, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)]
    for (_name, blob), noff, off, typ, link in zip(sections, name_offs, offsets, types, links, strict=True):
        shdrs.append(struct.pack(fmt, noff, typ, 2, 0, off, len(blob), link, 0, 8, 0))
    shdrs.append(struct.pack(fmt, shstr_name, 3, 0, 0, shstr_off, len(names), 0, 0, 1, 0))
    data += b"".join(shdrs)
    ident = b"\x7fELF" + bytes([2 if bits == 64 else 1, 1, 1, osabi, abi_version]) + b"\0" * 7
    shnum = len(shdrs)
    if bits == 64:
        hdr = ident + struct.pack(
            "<HHIQQQIHHHHHH", e_type, machine, 1, 0, 0, shoff, flags, 64, 0, 0, shent, shnum, shnum - 1
        )
    else:
        hdr = ident + struct.pack(
            "<HHIIIIIHHHHHH", e_type, machine, 1, 0, 0, shoff, flags, 52, 0, 0, shent, shnum, shnum - 1
        )
    data[: len(hdr)] = hdr
    return bytes(data)


def gnu_hash(name: bytes) -> int:
    """The GNU symbol hash (``dl_new_hash``: h = h * 33 + c from 5381)."""
    h = 5381
    for c in name:
        h = (h * 33 + c) & 0xFFFFFFFF
    return h


def linked(
    *,
    needed: tuple[str, ...] = (),
    runpath: str = "",
    rpath: str = "",
    imports: tuple[str, ...] = (),
    defines: tuple[str, ...] = (),
    hash_style: str = "gnu",
    data: bytes = b"",
) -> bytes:
    """A 64-bit shared library as the dynamic linker sees it: ``.dynsym`` (the null symbol, ``imports``
    undefined, then ``defines`` defined in ``.text``), ``.dynstr``, a ``.gnu.hash`` (``hash_style="gnu"``:
    one bucket, one bloom word) or SysV ``.hash`` (``"sysv"``) or none (``""``) over them, and a ``.dynamic``
    with DT_NEEDED, DT_RUNPATH and DT_RPATH entries.  ``data`` becomes ``.rodata`` (a fatbin kept as data)."""
    dynstr = b"\0"

    def string(text: str) -> int:
        nonlocal dynstr
        at = len(dynstr)
        dynstr += text.encode() + b"\0"
        return at

    text_index = 1  # .text: the first section
    syms = [struct.pack("<IBBHQQ", 0, 0, 0, 0, 0, 0)]
    syms += [struct.pack("<IBBHQQ", string(n), 0x12, 0, 0, 0, 0) for n in imports]  # GLOBAL FUNC, undefined
    syms += [struct.pack("<IBBHQQ", string(n), 0x12, 0, text_index, 0x1000, 16) for n in defines]
    dyn = b"".join(struct.pack("<qQ", 1, string(n)) for n in needed)
    if runpath:
        dyn += struct.pack("<qQ", 29, string(runpath))
    if rpath:
        dyn += struct.pack("<qQ", 15, string(rpath))
    dyn += struct.pack("<qQ", 0, 0)
    symoffset = 1 + len(imports)
    sections: list[tuple[str, bytes]] = [(".text", b"\xc3" * 16), (".dynsym", b"".join(syms)), (".dynstr", dynstr)]
    types, links = [1, 11, 3], [0, 3, 0]
    if hash_style == "gnu":
        hashes = [gnu_hash(n.encode()) for n in defines]
        shift = 6
        bloom = 0
        for h in hashes:
            bloom |= (1 << (h % 64)) | (1 << ((h >> shift) % 64))
        chain = [h & ~1 for h in hashes]
        if chain:
            chain[-1] |= 1
        table = struct.pack("<4I", 1, symoffset, 1, shift) + struct.pack("<Q", bloom)
        table += struct.pack("<I", symoffset if defines else 0) + b"".join(struct.pack("<I", c) for c in chain)
        sections.append((".gnu.hash", table))
        types.append(0x6FFFFFF6)
        links.append(2)
    elif hash_style == "sysv":
        count = len(syms)
        chain = [i + 1 if 0 < i < count - 1 else 0 for i in range(count)]  # every symbol in bucket 0
        table = struct.pack("<II", 1, count) + struct.pack("<I", 1 if count > 1 else 0)
        table += b"".join(struct.pack("<I", c) for c in chain)
        sections.append((".hash", table))
        types.append(5)
        links.append(2)
    if data:
        sections.append((".rodata", data))
        types.append(1)
        links.append(0)
    sections.append((".dynamic", dyn))
    types.append(6)
    links.append(3)
    return _assemble(sections, types, links, 3, 62, 64, 0, 0, 0)


def ar(members: list[tuple[str, bytes]]) -> bytes:
    out = b"!<arch>\n"
    for name, blob in members:
        header = f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{644:<8}{len(blob):<10}`\n".encode()
        assert len(header) == 60
        out += header + blob + (b"\n" if len(blob) % 2 else b"")
    return out


def pe(sections: list[tuple[str, bytes]]) -> bytes:
    """A minimal PE file: DOS stub with e_lfanew, PE signature, COFF header, section table, raw data."""
    pe_off = 0x80
    table = pe_off + 24  # no optional header
    data_start = table + 40 * len(sections)
    data_start += -data_start % 0x200
    out = bytearray(b"MZ" + b"\0" * (pe_off - 2))
    struct.pack_into("<I", out, 0x3C, pe_off)
    out += b"PE\0\0" + struct.pack("<HHIIIHH", 0x8664, len(sections), 0, 0, 0, 0, 0x2022)
    raw = bytearray()
    headers = b""
    for name, blob in sections:
        ptr = data_start + len(raw)
        headers += struct.pack("<8sIIIIIIHHI", name.encode()[:8], len(blob), 0x1000, len(blob), ptr, 0, 0, 0, 0, 0)
        raw += blob + b"\0" * (-len(blob) % 0x200)
    out += headers
    out += b"\0" * (data_start - len(out))
    return bytes(out + raw)


def pe_importing(dll: str, names: list[str], *, delay: bool = False, wide: bool = True) -> bytes:
    """A PE file importing ``names`` from ``dll`` (import table, or delay-load table) and holding an
    sm_80 fatbin in ``.rdata``: the layout of PE/COFF ("The .idata Section", "Delay-Load Import Tables",
    https://learn.microsoft.com/en-us/windows/win32/debug/pe-format), every RVA resolved by its section."""
    pe_off, opt_size, idata_rva, rdata_rva = 0x80, 240 if wide else 224, 0x1000, 0x2000
    step = 8 if wide else 4
    thunks = 0x100  # name table at idata+0x100, hint/names after it, the DLL name at +0x300
    hint_names = b""
    table = b""
    for name in names:
        table += struct.pack("<Q" if wide else "<I", idata_rva + 0x200 + len(hint_names))
        hint_names += b"\0\0" + name.encode() + b"\0" + b"\0" * (len(name) % 2)
    table += b"\0" * step
    if delay:  # Attributes=1 (RVAs), DllName, ModuleHandle, IAT, INT, BoundIAT, UnloadIAT, TimeDateStamp
        descriptors = struct.pack("<8I", 1, idata_rva + 0x300, 0, idata_rva + thunks, idata_rva + thunks, 0, 0, 0)
        descriptors += b"\0" * 32
    else:  # OriginalFirstThunk, TimeDateStamp, ForwarderChain, Name, FirstThunk
        descriptors = struct.pack("<5I", idata_rva + thunks, 0, 0, idata_rva + 0x300, idata_rva + thunks)
        descriptors += b"\0" * 20
    idata = bytearray(0x400)
    idata[: len(descriptors)] = descriptors
    idata[thunks : thunks + len(table)] = table
    idata[0x200 : 0x200 + len(hint_names)] = hint_names
    idata[0x300 : 0x300 + len(dll) + 1] = dll.encode() + b"\0"
    rdata = b"\x11" * 0x40 + fatbin(entry(2, 80)) + b"\0" * 0x40
    rdata += b"\0" * (-len(rdata) % 0x200)
    opt = bytearray(opt_size)
    struct.pack_into("<H", opt, 0, 0x20B if wide else 0x10B)
    dirs = 112 if wide else 96
    struct.pack_into("<I", opt, dirs - 4, 16)
    struct.pack_into("<II", opt, dirs + 8 * (13 if delay else 1), idata_rva, len(descriptors))
    out = bytearray(b"MZ" + b"\0" * (pe_off - 2))
    struct.pack_into("<I", out, 0x3C, pe_off)
    out += b"PE\0\0" + struct.pack("<HHIIIHH", 0x8664, 2, 0, 0, 0, opt_size, 0x2022) + opt
    raw = 0x400
    for name, rva, blob, chars in ((".idata", idata_rva, idata, 0xC0000040), (".rdata", rdata_rva, rdata, 0x40000040)):
        out += struct.pack("<8sIIIIIIHHI", name.encode(), len(blob), rva, len(blob), raw, 0, 0, 0, 0, chars)
        raw += len(blob)
    out += b"\0" * (0x400 - len(out))
    return bytes(out + idata + rdata)
