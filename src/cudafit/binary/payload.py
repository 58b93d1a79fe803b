"""On-demand access to entry payloads, with bounded decompression.

Compatibility questions never need this (the headers answer them); kernel names,
registers and shared memory do.  Compression (fatbin_spec.md §C.2):

* ZSTD (flag 0x8000): a standard zstd frame of ``compressed_size`` bytes;
* LZ4 (flag 0x2000): a raw LZ4 *block* of exactly ``compressed_size`` bytes (passing the
  8-byte padded payload fails);
* the declared ``uncompressed_size`` bounds the output: a stream that expands beyond it, or a
  declaration above ``max_size``, is refused (decompression-bomb guard).
"""

from __future__ import annotations

import io

from cudafit.binary.facts import Compression, FatbinEntry
from cudafit.binary.fatbin import Buffer, decode_entry_header
from cudafit.errors import BinaryFormatError, DecompressionError

__all__ = ["DEFAULT_MAX_PAYLOAD", "decompress", "read_entry_payload"]

#: Refuse to inflate any single entry beyond this many bytes (the largest real cubins are a few
#: tens of MB).
DEFAULT_MAX_PAYLOAD = 512 * 1024 * 1024


def decompress(
    data: bytes, compression: Compression, uncompressed_size: int, *, max_size: int = DEFAULT_MAX_PAYLOAD
) -> bytes:
    """Decompress one payload, never producing more than ``uncompressed_size`` bytes."""
    if compression is Compression.NONE:
        return data
    if uncompressed_size <= 0:
        msg = "compressed entry does not declare its uncompressed size"
        raise DecompressionError(msg)
    if uncompressed_size > max_size:
        msg = f"entry declares {uncompressed_size} uncompressed bytes, above the {max_size}-byte limit"
        raise DecompressionError(msg)
    try:
        if compression is Compression.ZSTD:
            import zstandard

            # A bounded read: a frame whose own header claims gigabytes cannot make us allocate them.
            with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)) as reader:
                out = reader.read(uncompressed_size + 1)
            if len(out) > uncompressed_size:
                msg = f"ZSTD payload expands to more than the declared {uncompressed_size} bytes"
                raise DecompressionError(msg)
        else:
            import lz4.block

            out = lz4.block.decompress(data, uncompressed_size=uncompressed_size)
    except DecompressionError:
        raise
    except Exception as err:  # zstd.ZstdError, lz4.block.LZ4BlockError, MemoryError...
        msg = f"{compression.value} payload could not be decompressed: {err}"
        raise DecompressionError(msg) from err
    if len(out) != uncompressed_size:
        msg = f"{compression.value} payload decompressed to {len(out)} bytes, header declares {uncompressed_size}"
        raise DecompressionError(msg)
    return bytes(out)


def read_entry_payload(buf: Buffer, entry: FatbinEntry, *, max_size: int = DEFAULT_MAX_PAYLOAD) -> bytes:
    """Return the exact image of ``entry`` (a cubin, or PTX text ending in NUL).

    ``buf`` is the buffer the entry was read from (offsets in the entry are absolute in it).
    Members of concatenated entries are cut out of their parent's decompressed payload.
    """
    if entry.concat_offset is not None:
        parent, _ = decode_entry_header(buf, entry.concat_offset, len(buf))
        whole = read_entry_payload(buf, parent, max_size=max_size)
        start, stop = entry.payload_offset, entry.payload_offset + entry.payload_size
        if stop > len(whole):
            msg = "concatenated member lies outside its parent's payload"
            raise BinaryFormatError(msg, offset=entry.offset)
        return whole[start:stop]
    start = entry.payload_offset
    if start + entry.payload_size > len(buf):
        msg = "entry payload lies past the end of the file"
        raise BinaryFormatError(msg, offset=entry.offset)
    if entry.compression is Compression.NONE:
        return bytes(buf[start : start + entry.payload_size])
    raw = bytes(buf[start : start + entry.compressed_size])
    return decompress(raw, entry.compression, entry.uncompressed_size, max_size=max_size)
