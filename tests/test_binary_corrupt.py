"""The binary layer on built and corrupted inputs: every problem is a structured error.

Inputs come from tests/builders.py (fatbin_spec.md §B layouts); each corruption is applied to
a known-good input so the test fails if the parser silently accepts it or crashes.
"""

from __future__ import annotations

import io
import resource
import struct
from pathlib import Path

import lz4.block
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import BASE_FLAGS, FLAG_A, FLAG_F, FLAG_LZ4, FLAG_ZSTD, ar, elf, entry, fatbin, linked
from cudafit.binary import (
    BinaryFacts,
    Compression,
    EntryKind,
    FileFormat,
    inspect_bytes,
    inspect_path,
    inspect_stream,
    read_entry_payload,
    sniff,
)
from cudafit.binary.linkage import DynamicInfo, MemberView, read_dynamic_info, search_dirs
from cudafit.binary.loaders import MODULE_LOADERS
from cudafit.binary.payload import decompress
from cudafit.binary.reader import locate_modules
from cudafit.binary.stream import scan_stream
from cudafit.errors import BinaryFormatError, DecompressionError


def good_fatbin() -> bytes:
    return fatbin(
        entry(2, 80),
        entry(2, 90, flags=BASE_FLAGS | FLAG_A),
        entry(1, 100, flags=BASE_FLAGS | FLAG_F, code_version=(9, 0), payload=b".version 9.0\n\0"),
    )


def good_so(*fatbins: bytes, rel: bytes | None = None) -> bytes:
    sections = [(".text", b"\x90" * 32), (".nv_fatbin", b"".join(fatbins))]
    if rel is not None:
        sections.append(("__nv_relfatbin", rel))
    return elf(sections)


def kinds_archs(facts: BinaryFacts) -> list[tuple[str, str]]:
    return [(e.kind.value, e.arch_name) for e in facts.entries]


def test_built_library_is_read() -> None:
    facts = inspect_bytes(good_so(good_fatbin(), good_fatbin()), "lib.so")
    assert facts.error is None
    assert facts.format is FileFormat.ELF_SHARED
    assert len(facts.modules) == 2
    assert kinds_archs(facts)[:3] == [("sass", "sm_80"), ("sass", "sm_90a"), ("ptx", "compute_100f")]
    ptx = facts.entries[2]
    assert str(ptx.ptx_isa) == "9.0"


def test_relocatable_section_is_marked() -> None:
    facts = inspect_bytes(good_so(fatbin(entry(2, 80)), rel=fatbin(entry(2, 90))), "lib.so")
    assert [m.section for m in facts.modules] == [".nv_fatbin", "__nv_relfatbin"]
    assert [m.relocatable for m in facts.modules] == [False, True]
    assert len(facts.runtime_modules) == 1


def test_zero_padding_between_and_after_fatbins() -> None:
    blob = fatbin(entry(2, 75)) + b"\0" * 64 + fatbin(entry(2, 86)) + b"\0" * 40
    facts = inspect_bytes(good_so(blob), "lib.so")
    assert facts.error is None
    assert kinds_archs(facts) == [("sass", "sm_75"), ("sass", "sm_86")]


def test_identifier_is_read() -> None:
    facts = inspect_bytes(good_so(fatbin(entry(2, 80, identifier=b"k.cu"))), "lib.so")
    assert facts.entries[0].identifier == "k.cu"


@pytest.mark.parametrize("cut", [1, 17, 40, 100, 200])
def test_truncated_library_is_an_error_not_a_crash(cut: int) -> None:
    data = good_so(good_fatbin())
    facts = inspect_bytes(data[: len(data) - cut], "lib.so")
    assert facts.error is not None
    assert facts.error_code == "invalid-binary"


def test_lying_fat_size_keeps_earlier_modules() -> None:
    bad = fatbin(entry(2, 90), fat_size=10_000)
    facts = inspect_bytes(good_so(fatbin(entry(2, 80)) + bad), "lib.so")
    assert facts.error is not None and "declares" in facts.error
    assert kinds_archs(facts) == [("sass", "sm_80")]


def test_lying_payload_size() -> None:
    facts = inspect_bytes(good_so(fatbin(entry(2, 80, payload_size=1 << 40))), "lib.so")
    assert facts.error is not None and "runs past" in facts.error


def test_bad_entry_header_size() -> None:
    facts = inspect_bytes(good_so(fatbin(entry(2, 80, header_size=60))), "lib.so")
    assert facts.error is not None and "multiple of 8" in facts.error


def test_both_compressions_claimed() -> None:
    e = entry(2, 80, flags=BASE_FLAGS | FLAG_LZ4 | FLAG_ZSTD, compressed_size=8, uncompressed_size=16)
    facts = inspect_bytes(good_so(fatbin(e)), "lib.so")
    assert facts.error is not None and "LZ4 and ZSTD" in facts.error


def test_compressed_size_larger_than_payload() -> None:
    e = entry(1, 80, flags=BASE_FLAGS | FLAG_ZSTD, compressed_size=4096, uncompressed_size=16)
    facts = inspect_bytes(good_so(fatbin(e)), "lib.so")
    assert facts.error is not None and "compressed bytes" in facts.error


def test_section_past_end_of_file() -> None:
    data = bytearray(good_so(good_fatbin()))
    # Patch the .nv_fatbin section header's sh_size (section index 2).
    shoff = struct.unpack_from("<Q", data, 40)[0]
    struct.pack_into("<Q", data, shoff + 2 * 64 + 32, 1 << 32)
    facts = inspect_bytes(bytes(data), "lib.so")
    assert facts.error is not None and "past the end" in facts.error


def test_section_table_past_end_of_file() -> None:
    data = bytearray(good_so(good_fatbin()))
    struct.pack_into("<Q", data, 40, 1 << 40)
    facts = inspect_bytes(bytes(data), "lib.so")
    assert facts.error is not None


def test_zero_length_fatbin_section() -> None:
    facts = inspect_bytes(elf([(".nv_fatbin", b"")]), "lib.so")
    assert facts.error is None
    assert facts.modules == ()


def test_overlapping_offsets_identifier_outside_entry() -> None:
    e = bytearray(entry(2, 80, identifier=b"k.cu"))
    struct.pack_into("<I", e, 32, 1 << 20)  # identifier_off far outside
    facts = inspect_bytes(good_so(fatbin(bytes(e))), "lib.so")
    assert facts.error is not None and "identifier" in facts.error


def test_big_endian_and_bad_class_are_unsupported() -> None:
    data = bytearray(good_so(good_fatbin()))
    data[5] = 2
    facts = inspect_bytes(bytes(data), "lib.so")
    assert facts.error is not None and "little-endian" in facts.error
    data[5], data[4] = 1, 7
    assert inspect_bytes(bytes(data), "lib.so").error is not None


def test_elf32_host_is_read() -> None:
    data = elf([(".nv_fatbin", fatbin(entry(2, 61)))], bits=32, machine=3)
    facts = inspect_bytes(data, "lib32.so")
    assert facts.error is None
    assert kinds_archs(facts) == [("sass", "sm_61")]


def test_archive_members_and_a_corrupt_member() -> None:
    good = elf([(".nv_fatbin", fatbin(entry(2, 80)))], e_type=1)
    bad = good[:-30]
    facts = inspect_bytes(ar([("a.o", good), ("b.o", bad), ("c.o", good)]), "lib.a")
    assert facts.format is FileFormat.ARCHIVE
    assert [m.path for m in facts.members] == ["lib.a!a.o", "lib.a!b.o", "lib.a!c.o"]
    assert [m.error is None for m in facts.members] == [True, False, True]
    assert facts.has_device_code


def test_archive_with_lying_member_size() -> None:
    data = bytearray(ar([("a.o", b"x" * 10)]))
    data[8 + 48 : 8 + 58] = b"9999999   "
    facts = inspect_bytes(bytes(data), "lib.a")
    assert facts.error is not None and "runs past" in facts.error


def test_raw_fatbin_and_ptx_files() -> None:
    raw = inspect_bytes(good_fatbin(), "x.fatbin")
    assert raw.format is FileFormat.FATBIN and len(raw.entries) == 3
    ptx = inspect_bytes(b"//\n.version 8.8\n.target sm_90a\n.address_size 64\n", "k.ptx")
    assert ptx.format is FileFormat.PTX
    assert kinds_archs(ptx) == [("ptx", "compute_90a")]
    assert str(ptx.ptx_isa) == "8.8"
    broken = inspect_bytes(b"// nothing here\n", "k.ptx")
    assert broken.error is not None


def test_sniff() -> None:
    assert sniff(good_so(good_fatbin())[:64], "x.so") is FileFormat.ELF_SHARED
    assert sniff(b"!<arch>\n" + b"\0" * 56, "x.a") is FileFormat.ARCHIVE
    assert sniff(good_fatbin()[:64], "x.fatbin") is FileFormat.FATBIN
    assert sniff(b"import os\n", "x.py") is None
    assert sniff(b"\x89PNG\r\n", "x.png") is None


def test_missing_and_empty_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    missing = inspect_path(tmp_path / "nope.so")
    assert missing.error is not None and missing.error_code == "io-error"
    empty = tmp_path / "empty.so"
    empty.write_bytes(b"")
    assert inspect_path(empty).error is None
    assert inspect_path(tmp_path).error is not None  # a directory


# --------------------------------------------------------------------------- compression


def compressed_entry(kind: int, image: bytes, how: str) -> bytes:
    if how == "zstd":
        comp = zstandard.ZstdCompressor().compress(image)
        flag = FLAG_ZSTD
    else:
        comp = lz4.block.compress(image, store_size=False)
        flag = FLAG_LZ4
    return entry(
        kind,
        80,
        flags=BASE_FLAGS | flag,
        payload=comp,
        compressed_size=len(comp),
        uncompressed_size=len(image),
    )


@pytest.mark.parametrize("how", ["zstd", "lz4"])
def test_payload_roundtrip(how: str) -> None:
    image = b".version 9.0\n.target sm_80\n" * 50 + b"\0"
    data = good_so(fatbin(compressed_entry(1, image, how)))
    facts = inspect_bytes(data, "lib.so")
    (e,) = facts.entries
    assert e.compression is Compression(how)
    assert read_entry_payload(data, e) == image


def test_decompression_bomb_is_refused_with_bounded_memory() -> None:
    image = b"\0" * (64 * 1024 * 1024)
    comp = zstandard.ZstdCompressor().compress(image)  # ~2 KB expanding to 64 MiB
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(DecompressionError):
        decompress(comp, Compression.ZSTD, 4096)  # the header lies: declares 4 KiB
    with pytest.raises(DecompressionError):
        decompress(comp, Compression.ZSTD, 1 << 40)  # declares more than the limit
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 16


def test_corrupt_compressed_payloads() -> None:
    with pytest.raises(DecompressionError):
        decompress(b"\x28\xb5\x2f\xfd garbage", Compression.ZSTD, 100)
    with pytest.raises(DecompressionError):
        decompress(b"\xff" * 32, Compression.LZ4, 100)
    with pytest.raises(DecompressionError):
        decompress(b"abc", Compression.LZ4, 0)


# --------------------------------------------------------------------------- locator and streams


def test_locator_ignores_random_bytes_and_finds_real_fatbins() -> None:
    noise = bytes(range(256)) * 64
    fake = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 64) + b"\xff" * 64  # magic, but no valid entry
    real = good_fatbin()
    blob = noise + fake + noise + real + noise
    modules = locate_modules(blob)
    assert [len(m.entries) for m in modules] == [3]


class NonSeekable(io.RawIOBase):
    def __init__(self, data: bytes, chunk: int = 7919) -> None:
        self._data = memoryview(data)
        self._pos = 0
        self._chunk = chunk

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        n = self._chunk if n < 0 else min(n, self._chunk)
        out = bytes(self._data[self._pos : self._pos + n])
        self._pos += len(out)
        return out


def test_stream_scan_matches_mmap_scan() -> None:
    data = good_so(good_fatbin(), b"\0" * 24 + good_fatbin(), rel=fatbin(entry(2, 90)))
    direct = inspect_bytes(data, "lib.so")
    streamed = scan_stream(NonSeekable(data[100:]), "lib.so", data[:100])  # type: ignore[arg-type]
    assert streamed.error is None
    assert [(m.section, kinds_archs(BinaryFacts("", FileFormat.ELF_SHARED, 0, (m,)))) for m in streamed.modules] == [
        (m.section, kinds_archs(BinaryFacts("", FileFormat.ELF_SHARED, 0, (m,)))) for m in direct.modules
    ]


def test_stream_scan_truncated_member() -> None:
    data = good_so(fatbin(entry(2, 80, payload=b"\1" * 4096)))
    cut = data[:200]
    facts = scan_stream(NonSeekable(b""), "lib.so", cut)  # type: ignore[arg-type]
    assert facts.error is not None


def test_inspect_stream_small_member_uses_buffer_path() -> None:
    data = good_so(good_fatbin())
    facts = inspect_stream(io.BytesIO(data), "w.whl!lib.so", len(data))
    assert facts.error is None and len(facts.entries) == 3


class Exploding(io.RawIOBase):
    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        raise OSError(5, "Input/output error")


def test_inspect_stream_io_error() -> None:
    facts = inspect_stream(Exploding(), "w.whl!lib.so", 100)  # type: ignore[arg-type]
    assert facts.format is FileFormat.UNREADABLE and facts.error_code == "io-error"


# --------------------------------------------------------------------------- fuzzing


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_flipped_bytes_never_raise(data: st.DataObject) -> None:
    base = bytearray(good_so(good_fatbin(), good_fatbin(), rel=fatbin(entry(2, 90))))
    flips = data.draw(st.lists(st.tuples(st.integers(0, len(base) - 1), st.integers(0, 255)), max_size=8))
    for pos, value in flips:
        base[pos] = value
    cut = data.draw(st.integers(0, len(base)))
    blob = bytes(base[:cut])
    facts = inspect_bytes(blob, "fuzz.so")
    assert isinstance(facts, BinaryFacts)
    for e in facts.entries:
        assert e.kind in EntryKind
    streamed = scan_stream(NonSeekable(blob[64:]), "fuzz.so", blob[:64])  # type: ignore[arg-type]
    assert isinstance(streamed, BinaryFacts)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=4096))
def test_fuzz_random_bytes_never_raise(blob: bytes) -> None:
    for name in ("x.so", "x.a", "x.ptx", "x.fatbin", "x.dll"):
        assert isinstance(inspect_bytes(blob, name), BinaryFacts)
    assert isinstance(inspect_bytes(b"\x7fELF" + blob, "x.so"), BinaryFacts)
    assert isinstance(inspect_bytes(b"!<arch>\n" + blob, "x.a"), BinaryFacts)
    assert isinstance(inspect_bytes(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(blob)) + blob, "x.fatbin"), BinaryFacts)


_LIBRARIES = {
    style: linked(
        needed=("libmid.so", "libcuda.so.1"),
        runpath="$ORIGIN/../lib:${ORIGIN}",
        imports=("malloc", "cuModuleLoadData"),
        defines=("cuLibraryLoadData", "other"),
        hash_style=style,
    )
    for style in ("gnu", "sysv")
}
#: A real shared object (program headers, PT_DYNAMIC): the gate reads libraries through their segments.
_LIBRARIES["segments"] = (Path(__file__).parent / "fixtures" / "bin" / "libloaded.so").read_bytes()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_dynamic_section_and_hash_tables_never_raise(data: st.DataObject) -> None:
    """The module-loader gate's parsers (binary/linkage.py: ``.dynamic``, DT_RUNPATH, ``.gnu.hash`` and
    ``.hash`` look-ups) on mutated and cut libraries: an answer or None, never an exception, and the gate
    over a tree of such libraries always ends."""
    base = bytearray(_LIBRARIES[data.draw(st.sampled_from(sorted(_LIBRARIES)))])
    for pos, value in data.draw(st.lists(st.tuples(st.integers(0, len(base) - 1), st.integers(0, 255)), max_size=8)):
        base[pos] = value
    blob = bytes(base[: data.draw(st.integers(0, len(base)))])
    info = read_dynamic_info(blob)
    assert info is None or isinstance(info, DynamicInfo)
    if info is not None:
        assert set(info.defines) <= set(MODULE_LOADERS)
        view = MemberView({"lib/libmid.so": 0, "pkg/libuser.so": 0}, lambda _name: read_dynamic_info(blob))
        assert isinstance(view.gate("pkg/libuser.so", info.needed, info.runpath), str)
    assert isinstance(inspect_bytes(blob, "fuzz.so"), BinaryFacts)
    runpath = data.draw(st.text(max_size=40))
    assert all(isinstance(d, str) for d in search_dirs("pkg", runpath.split(":")))


def test_binary_error_carries_offset() -> None:
    err = BinaryFormatError("bad", offset=0x40)
    assert "0x40" in str(err)


def test_pe_dll_fatbins_and_corruption() -> None:
    from builders import pe

    dll = pe(
        [
            (".text", b"\x90" * 64),
            (".nv_fatb", good_fatbin()),
            ("__nv_rel", fatbin(entry(2, 75))),
            (".rdata", b"x" * 100),
        ]
    )
    facts = inspect_bytes(dll, "torch_cuda.dll")
    assert facts.format is FileFormat.PE
    assert facts.error is None
    assert [m.section for m in facts.modules] == [".nv_fatb", "__nv_relfatbin"]
    assert facts.modules[1].relocatable
    assert kinds_archs(facts)[:2] == [("sass", "sm_80"), ("sass", "sm_90a")]
    assert len(facts.runtime_modules) == 1
    assert sniff(dll[:64], "x.pyd") is FileFormat.PE
    broken = inspect_bytes(dll[:300], "x.dll")
    assert isinstance(broken, BinaryFacts)
    assert inspect_bytes(b"MZ" + b"\0" * 100, "notpe.dll").format is FileFormat.NOT_CUDA
