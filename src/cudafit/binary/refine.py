"""The payload is the truth, the entry header a hint: PTX ``.version``/``.target`` and cubin ``e_flags``.

A fatbin entry header names an arch number and sets flag bit 20 (``a``) or 21 (``f``) for
arch-specific and family-specific targets (fatbin_spec.md §B.2).  Fatbins assembled outside
nvcc's own pipeline need not set them: TensorFlow 2.20.0's generated kernels carry PTX whose
header says arch 90 without bit 20 while the text reads ``.target sm_90a`` - arch-specific PTX,
which the driver JITs for no GPU but 9.0 (PTX ISA manual, "Target ISA notes":
https://docs.nvidia.com/cuda/parallel-thread-execution/#ptx-module-directives-target).

So for the entries where the header can hide a variant that matters - PTX with arch >= 90 (``a``
and ``f`` targets begin with sm_90a), SASS with arch >= 100 (see :func:`wants_payload_head`), no
variant bit set - the first KB of the payload is read (decompressing only what it needs,
:func:`~cudafit.binary.payload.read_payload_head`):

* PTX: ``.version`` and ``.target`` are the truth (``.target sm_90a`` -> ``compute_90a``);
* SASS: the cubin's ELF ``e_flags`` ``a`` bit (``0x800`` for ABI 7, ``0x8`` for ptxas 12.8/12.9
  ABI 8, fatbin_spec.md §D.1).  ``f`` is not recorded in a cubin at all (§D.1), and ptxas 13.x
  records ``a`` only in ``.nv.compat``, past the head: for those the header stays the word.

An entry the payload overrode keeps what the header said in ``header_said`` (scan notes it).
An unreadable head leaves the entry as the header describes it: the header is still a hint.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable

from cudafit.binary.cubin import cubin_arch
from cudafit.binary.facts import EntryKind, FatbinEntry, Module
from cudafit.binary.fatbin import FLAG_ARCH_SPECIFIC, FLAG_FAMILY, Buffer
from cudafit.binary.payload import read_payload_head
from cudafit.errors import BinaryFormatError
from cudafit.model import ArchVariant

__all__ = ["disagreement_notes", "parse_ptx_head", "refine_entry", "wants_payload_head"]

_VERSION = re.compile(rb"^[ \t]*\.version[ \t]+(\d+)\.(\d+)", re.MULTILINE)
_TARGET = re.compile(rb"^[ \t]*\.target[ \t]+(?:sm|compute)_(\d+)([af]?)", re.MULTILINE)
_EM_CUDA = 190
_VARIANT_FLAG = {ArchVariant.ARCH_SPECIFIC: FLAG_ARCH_SPECIFIC, ArchVariant.FAMILY: FLAG_FAMILY}
#: a and f targets exist from sm_90a on (PTX ISA 8.0): below, a header without a variant bit is complete.
_FIRST_VARIANT_ARCH = 90
_FIRST_SASS_ARCH = 100
_ELF_HEAD = 64
#: PTX in fatbins has its comment block emptied ("//" lines): ``.target`` ends within ~50 bytes (spconv,
#: onnxruntime-gpu 1.22.0, TensorFlow 2.20.0: 2,132 of 2,132 PTX heads); a longer preamble gets a second look.
_PTX_FIRST_LOOK = 128


def wants_payload_head(entry: FatbinEntry) -> bool:
    """Whether the payload may say more than this entry's header (cheap: runs for every entry).

    SASS for sm_90 is left alone: 9.0 is the only GPU of major 9, where sm_90 and sm_90a cubins both
    run, so the ``a`` bit could rename it but never change a verdict (a cubin head costs a decompression).
    """
    if entry.variant is not ArchVariant.NONE or entry.concat_offset is not None:
        return False
    if entry.kind is EntryKind.PTX:
        return entry.arch_number >= _FIRST_VARIANT_ARCH
    return entry.kind is EntryKind.SASS and entry.arch_number >= _FIRST_SASS_ARCH


def parse_ptx_head(head: bytes) -> tuple[tuple[int, int], int, ArchVariant] | None:
    """(``.version``, ``.target`` arch number, variant) from the start of a PTX text; None without both."""
    ver = _VERSION.search(head)
    tgt = _TARGET.search(head)
    if ver is None or tgt is None or max(ver.end(), tgt.end()) == len(head):
        return None  # a directive cut by the end of the head ("sm_1" of sm_100) is not read
    return (int(ver.group(1)), int(ver.group(2))), int(tgt.group(1)), ArchVariant(tgt.group(2).decode())


def refine_entry(buf: Buffer, entry: FatbinEntry, base: int = 0) -> FatbinEntry:
    """``entry`` as its payload describes it (see the module docstring); ``base``: offset of ``buf[0]``."""
    try:
        if entry.kind is EntryKind.PTX:
            # a first look of 128 bytes (see _PTX_FIRST_LOOK), then 1 KB.
            said = parse_ptx_head(read_payload_head(buf, entry, _PTX_FIRST_LOOK, base=base))
            if said is None:
                said = parse_ptx_head(read_payload_head(buf, entry, base=base))
            if said is None:
                return entry
            version, arch, variant = said
        else:
            head = read_payload_head(buf, entry, _ELF_HEAD, base=base)
            if len(head) < 52 or head[:4] != b"\x7fELF" or struct.unpack_from("<H", head, 18)[0] != _EM_CUDA:
                return entry
            arch, specific = cubin_arch(struct.unpack_from("<I", head, 48)[0], head[8])
            version = entry.code_version
            variant = ArchVariant.ARCH_SPECIFIC if specific else ArchVariant.NONE
    except BinaryFormatError:  # DecompressionError included: the header stays the word
        return entry
    if (arch, variant, version) == (entry.arch_number, entry.variant, entry.code_version):
        return entry
    flags = entry.flags & ~(FLAG_ARCH_SPECIFIC | FLAG_FAMILY) | _VARIANT_FLAG.get(variant, 0)
    return entry._replace(
        arch_number=arch, variant=variant, code_version=version, flags=flags, header_said=_said(entry)
    )


def _said(entry: FatbinEntry) -> str:
    if entry.kind is EntryKind.PTX:
        return f"{entry.arch_name} (PTX ISA {entry.code_version[0]}.{entry.code_version[1]})"
    return entry.arch_name


def refine_module(buf: Buffer, module: Module, base: int = 0) -> Module:
    """``module`` with every entry that :func:`wants_payload_head` refined from its payload."""
    wanted = [wants_payload_head(e) for e in module.entries]  # once per entry: modules hold thousands
    if not any(wanted):
        return module
    entries = tuple(refine_entry(buf, e, base) if w else e for e, w in zip(module.entries, wanted, strict=True))
    return Module(module.offset, module.size, module.section, entries)


def disagreement_notes(modules: Iterable[Module]) -> tuple[str, ...]:
    """One scan note per (header, payload) disagreement: ``1149 PTX entries: the header says ...``."""
    seen: dict[tuple[str, str, str], int] = {}
    for m in modules:
        for e in m.entries:
            if e.header_said:
                now = e.arch_name
                if e.kind is EntryKind.PTX:
                    now = f"{now} (PTX ISA {e.code_version[0]}.{e.code_version[1]})"
                key = (e.kind.value, e.header_said, now)
                seen[key] = seen.get(key, 0) + 1
    return tuple(
        f"{n} {kind.upper() if kind == 'ptx' else 'SASS'} entr{'y' if n == 1 else 'ies'}: the fatbin header says "
        f"{said}, the {'PTX text' if kind == 'ptx' else 'cubin ELF header'} says {now} (the payload wins)"
        for (kind, said, now), n in seen.items()
    )
