"""cubins: device ELF files (``e_machine`` 190, EM_CUDA), fatbin_spec.md §D.

What a cubin says about itself:

* its SM: ``e_flags & 0xff`` for ABI version 7 (ptxas <= 12.x, sm < 100), else
  ``(e_flags >> 8) & 0xff`` (ABI 8, "V2");
* ``a`` targets: ``e_flags & 0x800`` (V1), ``e_flags & 0x8`` (ptxas 12.8/12.9 V2), or the
  ``.nv.compat`` record EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET = 1 (ptxas 13.x); ``f`` is not
  recoverable from the cubin at all (only the fatbin header records it);
* kernels: ``.symtab`` FUNC symbols with ``st_other & 0x10`` (STO_CUDA_ENTRY), of any binding
  (internal-linkage kernels are LOCAL);
  static shared memory = size of ``.nv.shared.<kernel>``; registers from EIATTR_REGCOUNT in
  ``.nv.info``; ``__launch_bounds__`` from EIATTR_MAX_THREADS in ``.nv.info.<kernel>``;
* device-link stubs (kernel-less cubins nvlink adds to every ``-shared`` build): top e_flags
  byte 0x05, and no FUNC symbols.
"""

from __future__ import annotations

import struct

from cudafit.binary._elf import EM_CUDA, ElfHeader, Section, read_elf_header, read_sections
from cudafit.binary.facts import CubinInfo, KernelInfo
from cudafit.binary.fatbin import Buffer
from cudafit.errors import BinaryFormatError

__all__ = ["cubin_arch", "cubin_is_arch_specific", "read_cubin"]

_SYM64 = struct.Struct("<IBBHQQ")
_STT_FUNC = 2
_STO_CUDA_ENTRY = 0x10
_SHT_SYMTAB = 2
_SHT_NV_INFO = 0x70000000
_SHT_NV_COMPAT = 0x70000086
_EIATTR_REGCOUNT = 0x2F
_EIATTR_MAX_THREADS = 0x05
_EICOMPAT_ACCELERATOR = 0x09
_NOTE_CUINFO = 0x3E8
_NOTE_TKINFO = 0x7D0


def cubin_arch(flags: int, abi_version: int) -> tuple[int, bool]:
    """Return (SM number, arch-specific) decoded from ``e_flags`` (fatbin_spec.md §D.1)."""
    if abi_version >= 8:
        return (flags >> 8) & 0xFF, bool(flags & 0x8)
    return flags & 0xFF, bool(flags & 0x800)


def _iter_records(data: bytes) -> list[tuple[int, int, bytes]]:
    """Decode ``.nv.info`` / ``.nv.compat`` records: (format, attribute, payload)."""
    out: list[tuple[int, int, bytes]] = []
    p = 0
    while p + 4 <= len(data):
        fmt, attr = data[p], data[p + 1]
        if fmt == 4:
            (size,) = struct.unpack_from("<H", data, p + 2)
            out.append((fmt, attr, data[p + 4 : p + 4 + size]))
            p += 4 + size
        elif fmt in (1, 2, 3):
            out.append((fmt, attr, data[p + 2 : p + 4]))
            p += 4
        else:
            break  # unknown format: stop rather than guess
    return out


def _notes(data: bytes) -> list[tuple[str, int, bytes]]:
    out: list[tuple[str, int, bytes]] = []
    p = 0
    while p + 12 <= len(data):
        namesz, descsz, ntype = struct.unpack_from("<III", data, p)
        p += 12
        name = data[p : p + namesz].rstrip(b"\0").decode("latin-1")
        p += (namesz + 3) & ~3
        desc = data[p : p + descsz]
        p += (descsz + 3) & ~3
        out.append((name, ntype, desc))
    return out


def _cubin_header(data: Buffer, origin: int, size: int) -> ElfHeader:
    hdr = read_elf_header(data, origin, size)
    if hdr.machine != EM_CUDA:
        msg = f"not a cubin: e_machine is {hdr.machine}, expected {EM_CUDA} (EM_CUDA)"
        raise BinaryFormatError(msg, offset=origin)
    return hdr


def _compat_says_arch_specific(payload: bytes) -> bool:
    """The ``.nv.compat`` record EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET = 1 (ptxas 13.x ``a`` cubins)."""
    return any(attr == _EICOMPAT_ACCELERATOR and value[:1] == b"\x01" for _f, attr, value in _iter_records(payload))


def cubin_is_arch_specific(data: Buffer, origin: int = 0, size: int | None = None) -> bool:
    """Whether a cubin is built for an ``a`` target, reading only the headers and ``.nv.compat``.

    The part of :func:`read_cubin` a scan needs for a bare cubin (flashinfer-cubin has 15,970): no
    symbol table, no kernels, no section name other than ``.nv.compat`` decoded.
    """
    size = len(data) - origin if size is None else size
    hdr = _cubin_header(data, origin, size)
    _arch, specific = cubin_arch(hdr.flags, hdr.abi_version)
    for sec in read_sections(data, hdr, origin, size, only=(".nv.compat",)):
        if sec.type != 8 and sec.end <= origin + size and _compat_says_arch_specific(bytes(data[sec.offset : sec.end])):
            specific = True
    return specific


def read_cubin(data: Buffer, origin: int = 0, size: int | None = None) -> CubinInfo:
    """Describe a (decompressed) cubin: target, kernels and their static resources."""
    size = len(data) - origin if size is None else size
    hdr = _cubin_header(data, origin, size)
    arch, arch_specific = cubin_arch(hdr.flags, hdr.abi_version)
    virtual: int | None = (hdr.flags >> 16) & 0xFF if hdr.abi_version < 8 else None
    sections = read_sections(data, hdr, origin, size)

    def body(sec: Section) -> bytes:
        if sec.type == 8 or sec.end > origin + size:
            return b""
        return bytes(data[sec.offset : sec.end])

    by_name = {s.name: s for s in sections}
    toolkit = ""
    for sec in sections:
        if sec.name == ".nv.compat" or sec.type == _SHT_NV_COMPAT:
            arch_specific = arch_specific or _compat_says_arch_specific(body(sec))
        elif sec.name.startswith(".note.nv"):
            for _name, ntype, desc in _notes(body(sec)):
                if ntype == _NOTE_CUINFO and len(desc) >= 4:
                    virtual = struct.unpack_from("<H", desc, 2)[0]
                elif ntype == _NOTE_TKINFO:
                    text = desc.replace(b"\0", b" ").decode("latin-1")
                    start = text.find("Cuda compilation tools")
                    toolkit = text[start:].split(",")[1].strip() if start >= 0 and "," in text[start:] else ""

    symtab = next((s for s in sections if s.type == _SHT_SYMTAB), None)
    names_by_index: dict[int, str] = {}
    kernels: list[str] = []
    has_func = False
    if symtab is not None and 0 <= symtab.link < len(sections):
        strtab = body(sections[symtab.link])
        raw = body(symtab)
        for i in range(len(raw) // _SYM64.size):
            name_off, info, other, _shndx, _value, _sz = _SYM64.unpack_from(raw, i * _SYM64.size)
            if info & 0xF != _STT_FUNC:
                continue
            has_func = True
            end = strtab.find(b"\0", name_off)
            name = strtab[name_off : end if end >= 0 else len(strtab)].decode("utf-8", "replace")
            names_by_index[i] = name
            # Any binding: kernels with internal linkage (anonymous namespaces, static, many CUTLASS
            # instantiations) are STB_LOCAL entries, and cuobjdump lists them as functions too.
            if other & _STO_CUDA_ENTRY:
                kernels.append(name)

    registers: dict[str, int] = {}
    info_sec = by_name.get(".nv.info")
    if info_sec is not None:
        for fmt, attr, payload in _iter_records(body(info_sec)):
            if fmt == 4 and attr == _EIATTR_REGCOUNT and len(payload) >= 8:
                sym, regs = struct.unpack_from("<II", payload)
                if sym in names_by_index:
                    registers[names_by_index[sym]] = regs

    infos = []
    for name in kernels:
        shared = by_name.get(f".nv.shared.{name}")
        max_threads: tuple[int, int, int] | None = None
        kinfo = by_name.get(f".nv.info.{name}")
        if kinfo is not None:
            for fmt, attr, payload in _iter_records(body(kinfo)):
                if fmt == 4 and attr == _EIATTR_MAX_THREADS and len(payload) >= 12:
                    x, y, z = struct.unpack_from("<III", payload)
                    max_threads = (x, y, z)
        infos.append(
            KernelInfo(
                name=name,
                static_shared_bytes=shared.size if shared is not None else 0,
                registers=registers.get(name),
                max_threads=max_threads,
            )
        )
    stub = (hdr.flags >> 24) == 0x05 or not has_func
    return CubinInfo(
        arch_number=arch,
        abi_version=hdr.abi_version,
        elf_type=hdr.e_type,
        arch_specific=arch_specific,
        virtual_arch_number=virtual,
        kernels=tuple(infos),
        is_dlink_stub=stub and not kernels,
        toolkit=toolkit,
    )
