"""The streaming fatbin locator: find and decode fatbins in a stream of unknown size.

Zip and tar members (wheels, container layers) cannot be mmapped, and a 500 MB member must
not be read into memory.  :func:`scan_stream` walks the stream once through a bounded window:
it searches the fatbin magic on 8-byte boundaries, validates the candidate's headers strictly
(so random bytes do not produce entries), decodes the entry headers and *skips* payloads
without keeping them.  For ELF streams the section header table (normally the last bytes of
the file) and ``.shstrtab`` are recovered from a tail ring buffer, so each fatbin can still be
attributed to ``.nv_fatbin`` or ``__nv_relfatbin`` as with a file on disk.
"""

from __future__ import annotations

import collections
import struct
from collections.abc import Callable, Sequence
from typing import IO, NamedTuple

from cudafit.binary._elf import EM_CUDA, ET_EXEC, ET_REL, ElfHeader, Section, read_elf_header
from cudafit.binary.facts import BinaryFacts, EntryKind, FatbinEntry, FileFormat, Module
from cudafit.binary.fatbin import (
    ENTRY_HEADER_SIZE,
    FATBIN_HEADER_SIZE,
    FATBIN_MAGIC_BYTES,
    decode_entry_header,
    looks_like_fatbin_at,
)
from cudafit.binary.fatbin import _iter_concat_members as iter_concat_members
from cudafit.binary.loaders import (
    MODULE_LOADERS,
    NAME_SPAN,
    SHT_DYNSYM,
    import_name_offsets,
    is_data_section,
    loader_names_at,
    module_loaders,
)
from cudafit.binary.refine import disagreement_notes, refine_entry, wants_payload_head
from cudafit.errors import BinaryFormatError

__all__ = ["EARLY_STOP_NOTE", "StopWhen", "scan_stream"]

#: The note of facts whose scan a ``stop`` callback ended before the end of the stream.
EARLY_STOP_NOTE = "stream scan stopped early"

_CHUNK = 4 * 1024 * 1024
_RING = 8 * 1024 * 1024
_HEAD_WINDOW = (128 << 10) + 4096  # what a payload head read may need (one ZSTD block)
_FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin")


class _Watcher:
    """Keeps, as the stream passes, small copies around ``.shstrtab``'s own name: the section names, when
    the tail ring lost them (a 1 GB library whose ``.strtab`` lies between them and the section table).
    The last few are kept (cubins inside fatbins hold the name too); one ``rfind`` per chunk.
    """

    _SNIPPET = 64 << 10
    _NEEDLE = b"\0.shstrtab\0"

    def __init__(self, start_at: int = 0) -> None:
        self.snippets: collections.deque[tuple[int, bytes]] = collections.deque(maxlen=8)
        #: Bytes before this offset are not searched (the loaded segments, where no section name table is).
        self.start_at = start_at

    def feed(self, at: int, chunk: bytes) -> None:
        if at + len(chunk) <= self.start_at:
            return
        i = chunk.rfind(self._NEEDLE)  # the last of a chunk: a file's own table comes after its cubins'
        if i >= 0:
            lo = max(0, i - self._SNIPPET)
            self.snippets.append((at + lo, bytes(chunk[lo : i + self._SNIPPET])))

    def bytes_at(self, start: int, size: int) -> bytes | None:
        """``size`` bytes at absolute ``start`` from a snippet, or None."""
        for lo, data in self.snippets:
            if lo <= start and start + size <= lo + len(data):
                return data[start - lo : start - lo + size]
        return None


_PT_LOAD = 1


def _loaded_end(head: bytes | bytearray) -> int:
    """Where the loaded segments of an ELF file end (its program headers, in the first bytes): ``.shstrtab``
    is not allocated, so linkers place it after them, with ``.symtab`` and ``.strtab``.  0 when unknown."""
    try:
        if head[4] == 2:
            phoff, phentsize, phnum = struct.unpack_from("<Q", head, 32)[0], *struct.unpack_from("<HH", head, 54)
            layout = struct.Struct("<IIQQQQQQ")
            pick = (0, 2, 5)  # p_type, p_offset, p_filesz
        else:
            phoff, phentsize, phnum = struct.unpack_from("<I", head, 28)[0], *struct.unpack_from("<HH", head, 42)
            layout = struct.Struct("<IIIIIIII")
            pick = (0, 1, 4)
        end = 0
        for i in range(phnum):
            fields = layout.unpack_from(head, phoff + i * phentsize)
            if fields[pick[0]] == _PT_LOAD:
                end = max(end, fields[pick[1]] + fields[pick[2]])
        return end
    except (struct.error, IndexError):  # program headers beyond the head: search everything
        return 0


class _Window:
    """A sliding window over a stream with absolute offsets and a tail ring of dropped bytes."""

    def __init__(self, stream: IO[bytes], initial: bytes | bytearray, watch: _Watcher | None = None) -> None:
        self.stream = stream
        self.buf = bytearray(initial)
        self.start = 0
        self.eof = False
        self.ring: collections.deque[bytes] = collections.deque()
        self.ring_size = 0
        self.watch = watch
        if watch is not None:
            watch.feed(0, bytes(initial))

    def _read(self, n: int) -> bytes:
        chunk = self.stream.read(n) or b""
        if self.watch is not None and chunk:
            self.watch.feed(self.end, chunk)  # every read lands at the window's end
        return chunk

    @property
    def end(self) -> int:
        return self.start + len(self.buf)

    def ensure(self, abs_end: int) -> bool:
        while self.end < abs_end and not self.eof:
            chunk = self._read(max(_CHUNK, abs_end - self.end))
            if not chunk:
                self.eof = True
                break
            self.buf += chunk
        return self.end >= abs_end

    def _remember(self, data: bytes) -> None:
        if not data:
            return
        self.ring.append(data)
        self.ring_size += len(data)
        while self.ring and self.ring_size - len(self.ring[0]) >= _RING:
            self.ring_size -= len(self.ring.popleft())

    def drop_before(self, abs_pos: int) -> None:
        """Forget bytes before ``abs_pos``, reading (and forgetting) from the stream if needed."""
        if abs_pos <= self.start:
            return
        if abs_pos <= self.end:
            cut = abs_pos - self.start
            self._remember(bytes(self.buf[:cut]))
            del self.buf[:cut]
            self.start = abs_pos
            return
        self._remember(bytes(self.buf))
        self.start = self.end
        self.buf = bytearray()
        while self.start < abs_pos and not self.eof:
            chunk = self._read(min(_CHUNK, abs_pos - self.start))
            if not chunk:
                self.eof = True
                break
            self._remember(chunk)
            self.start += len(chunk)

    def drain(self) -> None:
        self.drop_before(self.end)
        while not self.eof:
            chunk = self._read(_CHUNK)
            if not chunk:
                self.eof = True
                break
            self._remember(chunk)
            self.start += len(chunk)

    def tail(self) -> tuple[int, bytes]:
        data = b"".join(self.ring) + bytes(self.buf)
        return self.end - len(data), data


def _parse_at(win: _Window, pos: int, originals: dict[int, FatbinEntry]) -> tuple[Module, int]:
    """Decode the fatbin at absolute ``pos`` (validated already), skipping payloads."""
    win.ensure(pos + FATBIN_HEADER_SIZE)
    _magic, _ver, hsize, fat_size = struct.unpack_from("<IHHQ", win.buf, pos - win.start)
    fat_end = pos + hsize + fat_size
    entries: list[FatbinEntry] = []
    p = pos + hsize
    while p < fat_end:
        if not win.ensure(p + ENTRY_HEADER_SIZE):
            msg = "stream ended inside a fatbin entry header (truncated member?)"
            raise BinaryFormatError(msg, offset=p)
        ehsize = struct.unpack_from("<I", win.buf, p - win.start + 4)[0]
        if fat_end - p < ENTRY_HEADER_SIZE and not any(win.buf[p - win.start : fat_end - win.start]):
            break
        win.ensure(p + max(ehsize, ENTRY_HEADER_SIZE))
        entry, nxt_rel = decode_entry_header(win.buf, p - win.start, fat_end - win.start, base=win.start)
        if entry.kind is EntryKind.CONCAT:
            entries.extend(iter_concat_members(win.buf, entry, p - win.start, win.start))
        elif wants_payload_head(entry):  # the payload's head is the truth (binary/refine.py): read it now
            win.ensure(min(nxt_rel + win.start, entry.payload_offset + _HEAD_WINDOW))
            refined = refine_entry(win.buf, entry, win.start)
            if refined is not entry:  # kept until the section is known: relocatable code is not refined
                originals[entry.offset] = entry
            entries.append(refined)
        else:
            entries.append(entry)
        nxt = nxt_rel + win.start
        win.drop_before(nxt)
        if win.start < nxt:
            msg = "stream ended inside a fatbin entry payload (truncated member?)"
            raise BinaryFormatError(msg, offset=p)
        p = nxt
    return Module(offset=pos, size=fat_end - pos, section=None, entries=tuple(entries)), fat_end


Reopen = Callable[[], IO[bytes]]
_SHDR64 = struct.Struct("<IIQQQQIIQQ")
_SHDR32 = struct.Struct("<IIIIIIIIII")
#: At most this much is read again through ``reopen`` (a ``.dynsym``, a ``.shstrtab``).
_REREAD_MAX = 64 << 20


class _Placed(NamedTuple):
    modules: list[Module]
    fmt: FileFormat
    notes: tuple[str, ...]
    fallbacks: tuple[str, ...]
    loaders: tuple[str, ...]


def _read_again(reopen: Reopen | None, start: int, size: int) -> bytes | None:
    """``size`` bytes at ``start`` of the stream, read again from its beginning (skipping, not keeping)."""
    if reopen is None or size > _REREAD_MAX:
        return None
    try:
        with reopen() as again:
            left = start
            while left > 0:
                got = again.read(min(_CHUNK, left))
                if not got:
                    return None
                left -= len(got)
            data = again.read(size)
    except Exception:  # the member could not be opened again: the caller falls back
        return None
    return data if len(data) == size else None


def _bytes_at(win: _Window, watch: _Watcher, reopen: Reopen | None, start: int, size: int) -> bytes | None:
    tail_start, tail = win.tail()
    if start >= tail_start and start + size <= tail_start + len(tail):
        return tail[start - tail_start : start - tail_start + size]
    return watch.bytes_at(start, size) or _read_again(reopen, start, size)


def _sections_of(hdr: ElfHeader, win: _Window, watch: _Watcher, reopen: Reopen | None, total: int) -> list[Section]:
    """The section table (from the tail ring) with names (tail, snippets, or read again)."""
    tail_start, tail = win.tail()
    if hdr.shoff < tail_start or hdr.shoff >= total:
        raise BinaryFormatError("section header table is not in the tail window")
    fmt = _SHDR64 if hdr.bits == 64 else _SHDR32
    if hdr.shentsize < fmt.size:
        raise BinaryFormatError(f"ELF section header entry size {hdr.shentsize} is smaller than {fmt.size}")
    base = hdr.shoff - tail_start
    shnum = hdr.shnum or fmt.unpack_from(tail, base)[5]
    if base + shnum * hdr.shentsize > len(tail):
        raise BinaryFormatError("section header table runs past the end of the stream")
    raw = [fmt.unpack_from(tail, base + i * hdr.shentsize) for i in range(shnum)]
    shstrndx = raw[0][6] if hdr.shstrndx == 0xFFFF else hdr.shstrndx
    if not 0 < shstrndx < shnum:
        raise BinaryFormatError("no section name table")
    names = _bytes_at(win, watch, reopen, raw[shstrndx][4], raw[shstrndx][5])
    if names is None:
        raise BinaryFormatError("section names are neither in the tail window nor readable again")
    out = []
    for name_off, stype, flags, _addr, off, size, link, info, _align, entsize in raw:
        end = names.find(b"\0", name_off)
        name = names[name_off : end if end >= 0 else len(names)].decode("utf-8", "replace")
        out.append(Section(name, stype, flags, off, size, link, info, entsize))
    return out


def _stream_loaders(
    sections: list[Section], watch: _Watcher, win: _Window, reopen: Reopen | None, bits: int
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(imported module loaders, fallbacks) from ``.dynsym``/``.dynstr``: in the tail, or read again
    through ``reopen`` (both lie near the start of a library, so that costs their offset, not the file)."""
    dynsym = next((s for s in sections if s.type == SHT_DYNSYM), None)
    if dynsym is None or not 0 <= dynsym.link < len(sections):
        return (), ()
    strtab = sections[dynsym.link]
    lo, hi = min(dynsym.offset, strtab.offset), max(dynsym.end, strtab.end)
    tail_start, tail = win.tail()
    if lo >= tail_start and hi <= tail_start + len(tail):
        shifted = [s._replace(offset=s.offset - tail_start) for s in (dynsym, strtab)]
        return module_loaders(tail, [shifted[0]._replace(link=1), shifted[1]], bits), ()
    found = _reread_loaders(reopen, dynsym, strtab, bits) if reopen is not None else None
    if found is None:
        note = (
            "the dynamic symbol table was out of reach of the stream: whether the library imports the driver's "
            "module loader is unknown, so fatbins in its data sections are not judged"
        )
        return (), (note,)
    return found, ()


def _reread_loaders(reopen: Reopen, dynsym: Section, strtab: Section, bits: int) -> tuple[str, ...] | None:
    """The module loaders a stream imports, reading it again up to the end of ``.dynsym``/``.dynstr``.

    Memory stays bounded: ``.dynsym`` is kept (at most :data:`_REREAD_MAX`), ``.dynstr`` only where an
    import's name starts (a few bytes each) when it follows ``.dynsym``, as linkers lay them out; before
    it, it is kept whole under the same bound.  None when that is not possible.
    """
    keep_strings = strtab.offset < dynsym.end
    if dynsym.size > _REREAD_MAX or (keep_strings and strtab.size > _REREAD_MAX):
        return None
    end = max(dynsym.end, strtab.end)
    table = bytearray()
    strings = bytearray()
    wanted: list[int] | None = None
    found: set[str] = set()
    carry = b""
    try:
        with reopen() as again:
            pos = 0
            while pos < end:
                chunk = again.read(min(_CHUNK, end - pos))
                if not chunk:
                    return None
                top = pos + len(chunk)
                table += chunk[max(0, dynsym.offset - pos) : max(0, dynsym.end - pos)]
                if keep_strings:
                    strings += chunk[max(0, strtab.offset - pos) : max(0, strtab.end - pos)]
                elif top > strtab.offset:
                    if wanted is None:  # .dynsym is complete: where the imports' names start
                        wanted = sorted({strtab.offset + o for o in import_name_offsets(bytes(table), bits)})
                    window, base = carry + chunk, pos - len(carry)
                    while wanted and (wanted[0] + NAME_SPAN <= top or top >= strtab.end):
                        at = wanted.pop(0) - base
                        found |= loader_names_at(window[at : at + NAME_SPAN]) if at >= 0 else set()
                    carry = window[-NAME_SPAN:]
                    if not wanted:
                        break  # every import's name was looked at
                pos = top
    except Exception:  # the member could not be read again: the caller falls back
        return None
    if keep_strings:
        for o in import_name_offsets(bytes(table), bits):
            found |= loader_names_at(bytes(strings[o : o + NAME_SPAN]))
    return tuple(n for n in MODULE_LOADERS if n in found)


def _assign_sections(
    head: bytes | bytearray,
    win: _Window,
    modules: list[Module],
    total: int,
    watch: _Watcher,
    reopen: Reopen | None,
    originals: dict[int, FatbinEntry],
) -> _Placed:
    """Attribute located fatbins to ELF sections using the tail ring (and what the watcher kept); fatbins
    in data sections are modules the library loads itself when it imports the driver's module loader;
    others outside the fatbin sections are dropped (as from a file on disk without ``--embedded``)."""
    hdr = read_elf_header(head)
    fmt = {ET_REL: FileFormat.ELF_OBJECT, ET_EXEC: FileFormat.ELF_EXEC}.get(hdr.e_type, FileFormat.ELF_SHARED)
    try:
        sections = _sections_of(hdr, win, watch, reopen, total)
    except (BinaryFormatError, struct.error, IndexError) as err:
        note = f"ELF section table not recoverable from the stream ({err}); all located fatbins assumed runtime-loaded"
        assumed = [Module(m.offset, m.size, ".nv_fatbin", m.entries) for m in modules]
        return _Placed(assumed, fmt, (note,), (note,), ())
    data = [s for s in sections if is_data_section(s)] if hdr.e_type != ET_REL else []
    in_data = [m for m in modules if any(s.offset <= m.offset < s.end for s in data)]
    # The evidence is read only when something in a data section needs it (most files: nothing).
    loaders, fallbacks = _stream_loaders(sections, watch, win, reopen, hdr.bits) if in_data else ((), ())
    spans = [(s.offset, s.end, s.name) for s in sections if s.name in _FATBIN_SECTIONS]
    placed: list[Module] = []
    for wanted in _FATBIN_SECTIONS:
        for m in modules:
            for lo, hi, name in spans:
                if name == wanted and lo <= m.offset < hi:
                    entries = m.entries
                    if originals and name == "__nv_relfatbin":
                        entries = tuple(originals.get(e.offset, e) for e in entries)
                    placed.append(Module(m.offset, m.size, name, entries))
    if loaders:
        for m in in_data:
            sec = next((s for s in data if s.offset <= m.offset < s.end), None)
            if sec is not None:
                placed.append(Module(m.offset, m.size, sec.name, m.entries, True))
    return _Placed(placed, fmt, fallbacks, fallbacks, loaders)


#: Called with the fatbins located so far after each new one; ``True`` stops the scan there.
StopWhen = Callable[[Sequence[Module]], bool]


def scan_stream(
    stream: IO[bytes],
    name: str,
    head: bytes | bytearray,
    *,
    reopen: Reopen | None = None,
    stop: StopWhen | None = None,
) -> BinaryFacts:
    """Locate every fatbin in ``head`` + the rest of ``stream``; never raises for bad input.

    ``reopen`` opens the same bytes again from their start (a zip member): the end of the scan may read
    a ``.dynsym`` or a ``.shstrtab`` again that neither the tail ring nor the watcher kept; without it,
    such facts rest on a fallback (``BinaryFacts.fallbacks``).

    ``stop`` lets a caller that pays for every byte (a wheel read over HTTP) end the scan once the
    fatbins seen so far decide its question: the rest of the stream is then not read, the facts hold
    the fatbins located until then and a note says the scan stopped early.
    """
    stopped = False
    is_elf = head.startswith(b"\x7fELF")
    watch = _Watcher(_loaded_end(head))
    win = _Window(stream, head, watch if is_elf else None)
    modules: list[Module] = []
    originals: dict[int, FatbinEntry] = {}  # entries as their header described them, where the payload won
    error: BinaryFormatError | None = None
    if is_elf and len(head) >= 20 and struct.unpack_from("<H", head, 18)[0] == EM_CUDA:
        error = BinaryFormatError("cubin larger than the in-memory limit; not scanned")
    pos = 0
    while error is None:
        win.ensure(pos + FATBIN_HEADER_SIZE + ENTRY_HEADER_SIZE)
        idx = win.buf.find(FATBIN_MAGIC_BYTES, max(0, pos - win.start))
        if idx < 0:
            if win.eof:
                break
            keep_from = max(pos, win.end - 3)
            win.drop_before(keep_from)
            pos = keep_from
            win.ensure(win.end + _CHUNK)
            continue
        cand = win.start + idx
        if cand % 8:
            pos = cand + 1
            continue
        win.ensure(cand + FATBIN_HEADER_SIZE + ENTRY_HEADER_SIZE)
        rel = cand - win.start
        fat_size = struct.unpack_from("<Q", win.buf, rel + 8)[0] if len(win.buf) >= rel + 16 else 0
        if not looks_like_fatbin_at(win.buf, rel, rel + FATBIN_HEADER_SIZE + fat_size):
            pos = cand + 4
            continue
        win.drop_before(cand)
        try:
            module, end = _parse_at(win, cand, originals)
        except BinaryFormatError as err:
            error = err
            break
        modules.append(module)
        pos = end
        if stop is not None and stop(modules):
            stopped = True
            break
    if not stopped:
        win.drain()
    total = win.end
    notes: tuple[str, ...] = ("scanned as a stream",)
    if stopped:
        notes += (f"{EARLY_STOP_NOTE} after {len(modules)} fatbins ({total} bytes)",)
    fmt = FileFormat.FATBIN if head.startswith(FATBIN_MAGIC_BYTES) else FileFormat.NOT_CUDA
    fallbacks: tuple[str, ...] = ()
    loaders: tuple[str, ...] = ()
    if is_elf:
        try:
            placed = _assign_sections(head, win, modules, total, watch, reopen, originals)
            modules, fmt, fallbacks, loaders = placed.modules, placed.fmt, placed.fallbacks, placed.loaders
            notes += placed.notes
        except BinaryFormatError as err:
            error = error or err
            fmt = FileFormat.UNREADABLE
    elif modules and fmt is FileFormat.NOT_CUDA:
        notes += ("fatbins located by header scan",)
    if error is not None and modules:
        fallbacks += (f"the stream could not be read to its end ({error}): judged on the modules read before",)
    return BinaryFacts(
        path=name,
        format=fmt,
        size=total,
        modules=tuple(modules),
        error=str(error) if error else None,
        error_code=error.code if error else None,
        notes=notes + disagreement_notes(modules),
        embedded_sections=tuple(dict.fromkeys(m.section or "" for m in modules if m.loaded)),
        module_loaders=loaders,
        fallbacks=fallbacks,
    )
