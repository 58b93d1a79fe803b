"""Modules a library loads itself (issue 24), what the payload says over the entry header, and fallbacks.

The fixture ``libloaded.so`` (tests/fixtures/build.sh) keeps a fatbin as data in ``.rodata`` and imports
``cuModuleLoadData`` to load it, beside a kernel registered from ``.nv_fatbin``; its PTX header says arch
90 while the text says ``.target sm_90a`` (TensorFlow 2.20.0's pattern).  The oracle for the loaded module
is cuobjdump run on the slice of ``.rodata`` holding it (committed dumps, and live when cuobjdump is
installed): cuobjdump reads the header, ``cuobjdump -ptx`` prints the text.
"""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import lz4.block
import pytest
import zstandard
from hypothesis import example, given, settings
from hypothesis import strategies as st

from builders import BASE_FLAGS, entry, fatbin, pe_importing
from cudafit.binary import EntryKind, inspect_bytes, inspect_path, inspect_stream, read_entry_payload
from cudafit.binary import stream as stream_mod
from cudafit.binary._elf import read_elf_header, read_sections
from cudafit.binary.payload import lz4_block_head, zstd_frame_head
from cudafit.model import ArchVariant

FIXTURES = Path(__file__).parent / "fixtures"
LIB = FIXTURES / "bin" / "libloaded.so"
GOLD = FIXTURES / "golden"
ROOT = Path(__file__).parent.parent
CHECK_SCHEMA = json.loads((ROOT / "src/cudafit/schema/check.json").read_text())
SCAN_SCHEMA = json.loads((ROOT / "src/cudafit/schema/scan.json").read_text())

sys.path.insert(0, str(FIXTURES))
from make_expected import parse_cuobjdump_dump  # noqa: E402
from slice_fatbins import iter_slices, section_bounds  # noqa: E402

from test_golden_cuobjdump import _cuobjdump  # noqa: E402


def _rows_from_dump(text: str) -> list[tuple[str, str, list[int], bool]]:
    return [(e["kind"], e["arch"], e["code_version"], e["compressed"]) for e in parse_cuobjdump_dump(text)]


def _header_rows(module: Any) -> list[tuple[str, str, list[int], bool]]:
    """Our entries as the fatbin header names them (what cuobjdump's default dump prints)."""
    rows = []
    for e in module.entries:
        name = e.header_said.split(" ")[0] if e.header_said else e.arch_name
        version = list(e.code_version)
        if e.header_said and e.kind is EntryKind.PTX:
            isa = e.header_said.split("PTX ISA ")[1].rstrip(")")
            version = [int(x) for x in isa.split(".")]
        rows.append((e.kind.value, name, version, e.compression.value != "none"))
    return rows


def _ptx_targets(text: str) -> list[str]:
    return ["compute_" + line.split()[1][3:] for line in text.splitlines() if line.startswith(".target ")]


def test_the_import_is_the_evidence_and_rodata_is_read() -> None:
    facts = inspect_path(LIB)
    assert facts.module_loaders == ("cuModuleLoadData",)
    assert [m.section for m in facts.loaded_modules] == [".rodata"]
    assert [m.section for m in facts.runtime_modules] == [".nv_fatbin"]  # what cuobjdump lists on the .so
    assert facts.embedded_sections == (".rodata",)
    assert not facts.fallbacks


def test_loaded_module_equals_cuobjdump_on_its_slice() -> None:
    """Header facts = cuobjdump's default dump of the slice; the PTX target = ``cuobjdump -ptx``'s text."""
    facts = inspect_path(LIB)
    (module,) = facts.loaded_modules
    data = LIB.read_bytes()
    start, size = section_bounds(data, ".rodata")
    assert iter_slices(data, start, start + size) == [(module.offset, module.size)]
    assert _header_rows(module) == _rows_from_dump((GOLD / "libloaded.so.rodata-0000.cuobjdump.txt").read_text())
    ptx = [e.arch_name for e in module.entries if e.kind is EntryKind.PTX]
    assert ptx == _ptx_targets((GOLD / "libloaded.so.rodata-0000.cuobjdump-ptx.txt").read_text()) == ["compute_90a"]
    # The registered module is untouched and still equals cuobjdump on the whole file.
    (registered,) = facts.runtime_modules
    assert _header_rows(registered) == _rows_from_dump((GOLD / "libloaded.so.cuobjdump.txt").read_text())


def test_ptx_text_wins_and_scan_notes_the_disagreement() -> None:
    facts = inspect_path(LIB)
    (ptx,) = [e for e in facts.loaded_modules[0].entries if e.kind is EntryKind.PTX]
    assert (ptx.arch_number, ptx.variant, ptx.code_version) == (90, ArchVariant.ARCH_SPECIFIC, (9, 0))
    assert ptx.header_said == "compute_90 (PTX ISA 9.0)"
    assert ptx.flags & 0x100000  # the `a` bit, as nvcc would have set it
    assert any(
        "the fatbin header says compute_90 (PTX ISA 9.0), the PTX text says compute_90a" in n for n in facts.notes
    )
    (reg_ptx,) = [e for e in facts.runtime_modules[0].entries if e.kind is EntryKind.PTX]
    assert reg_ptx.header_said == "" and reg_ptx.arch_name == "compute_90"  # text .target sm_90: agrees


@pytest.mark.skipif(_cuobjdump() is None, reason="nvidia-cuda-cuobjdump is not installed")
def test_live_cuobjdump_on_the_slice(tmp_path: Path) -> None:
    tool = _cuobjdump()
    assert tool is not None
    (module,) = inspect_path(LIB).loaded_modules
    blob = tmp_path / "slice.fatbin"
    blob.write_bytes(LIB.read_bytes()[module.offset : module.offset + module.size])
    dump = subprocess.run([tool, str(blob)], capture_output=True, text=True, check=True).stdout
    text = subprocess.run([tool, "-ptx", str(blob)], capture_output=True, text=True, check=True).stdout
    assert _header_rows(module) == _rows_from_dump(dump)
    assert [e.arch_name for e in module.entries if e.kind is EntryKind.PTX] == _ptx_targets(text)


def _patched(tmp_path: Path, edit: Any) -> Path:
    data = bytearray(LIB.read_bytes())
    edit(data)
    out = tmp_path / "libpatched.so"
    out.write_bytes(bytes(data))
    return out


def test_without_the_import_nothing_is_read_from_rodata(tmp_path: Path) -> None:
    """The common file: no import, no census of its data sections (and no change to its facts)."""

    def rename(data: bytearray) -> None:
        i = data.find(b"cuModuleLoadData\0")
        data[i : i + 16] = b"cuModuleLoadXata"

    facts = inspect_path(_patched(tmp_path, rename))
    assert facts.module_loaders == () and facts.loaded_modules == ()
    assert [m.section for m in facts.modules] == [".nv_fatbin"]


def test_a_library_defining_the_loader_does_not_count(tmp_path: Path) -> None:
    """TensorFlow's libtensorflow_framework defines cuModuleLoadData (a driver shim): not evidence."""

    def define(data: bytearray) -> None:
        buf = bytes(data)
        hdr = read_elf_header(buf)
        sections = read_sections(buf, hdr)
        dynsym = next(s for s in sections if s.type == 11)
        dynstr = sections[dynsym.link]
        st_name = buf.find(b"cuModuleLoadData\0", dynstr.offset, dynstr.end) - dynstr.offset
        for off in range(dynsym.offset, dynsym.end, 24):
            if struct.unpack_from("<I", buf, off)[0] == st_name:
                struct.pack_into("<H", data, off + 6, 12)  # st_shndx: defined in some section

    facts = inspect_path(_patched(tmp_path, define))
    assert facts.module_loaders == () and facts.loaded_modules == ()


def _summary(facts: Any) -> list[tuple[Any, ...]]:
    return [(m.offset, m.section, m.loaded, tuple(e.arch_name for e in m.entries)) for m in facts.modules]


def test_a_stream_gives_the_facts_of_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read as a large zip member would be (the bounded window), the facts are those of the file."""
    data = LIB.read_bytes()
    on_disk = inspect_path(LIB)
    monkeypatch.setattr("cudafit.binary.reader.STREAM_IN_MEMORY_LIMIT", 1024)
    facts = inspect_stream(io.BytesIO(data), "libloaded.so", len(data))
    assert "scanned as a stream" in facts.notes
    assert _summary(facts) == _summary(on_disk)
    assert facts.module_loaders == ("cuModuleLoadData",) and not facts.fallbacks


def test_a_stream_reads_the_symbol_table_again_or_says_it_could_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a tail ring too small for .dynsym and .shstrtab: names come from the watcher's copy past the
    loaded segments, the symbol table from reading the member again; without ``reopen``, a fallback."""
    data = LIB.read_bytes()
    on_disk = inspect_path(LIB)
    monkeypatch.setattr("cudafit.binary.reader.STREAM_IN_MEMORY_LIMIT", 1024)
    monkeypatch.setattr(stream_mod, "_RING", 64)
    monkeypatch.setattr(stream_mod, "_CHUNK", 4096)
    again = inspect_stream(io.BytesIO(data), "libloaded.so", len(data), reopen=lambda: io.BytesIO(data))
    assert _summary(again) == _summary(on_disk) and not again.fallbacks
    blind = inspect_stream(io.BytesIO(data), "libloaded.so", len(data))
    assert blind.loaded_modules == () and blind.module_loaders == ()
    assert blind.fallbacks and "dynamic symbol table was out of reach" in blind.fallbacks[0]


def test_a_wheel_and_its_extracted_file_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cudafit.targets.wheel import WheelTarget

    whl = tmp_path / "loadedlib-1.0-py3-none-manylinux_2_17_x86_64.whl"
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(LIB, "loadedlib/libloaded.so")
    monkeypatch.setattr("cudafit.binary.reader.STREAM_IN_MEMORY_LIMIT", 1024)
    monkeypatch.setattr(stream_mod, "_RING", 64)
    (item,) = [i for i in WheelTarget(str(whl)).iter_items() if i.facts.modules]
    assert _summary(item.facts) == _summary(inspect_path(LIB))
    assert not item.facts.fallbacks


def _cli(*args: str) -> str:
    env = {**os.environ, "COLUMNS": "1000"}  # one line per row: text assertions need no unwrapping
    p = subprocess.run([sys.executable, "-m", "cudafit", *args], capture_output=True, text=True, check=False, env=env)
    assert "Traceback" not in p.stderr, p.stderr
    return p.stdout


def _check(*args: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(_cli("check", "--json", "--no-probe", "--no-cache", *args))
    jsonschema.validate(doc, CHECK_SCHEMA)
    return doc


def test_verdicts_judge_the_loaded_module_on_its_own(tmp_path: Path) -> None:
    """8.6: sm_80 SASS; 9.0: the sm_90a PTX JITs there (and only there); 12.0: the registered module
    JITs but the library's own module has no code, so the library fails - named, with its kernels."""
    d = tmp_path / "pkg"
    d.mkdir()
    shutil.copy(LIB, d / "libloaded.so")
    doc = _check("--gpu", "8.6", "--gpu", "9.0", "--gpu", "12.0", str(d))
    (target,) = doc["targets"]
    statuses = [v["status"] for v in target["verdicts"]]
    assert statuses == ["native", "jit", "fails"]
    cov = target["coverage"]  # the columns agree with the verdicts: 12.0 is neither partial nor JIT
    assert "12.0" not in cov["partial"] + cov["jit"] + cov["native"] and "9.0" in cov["jit"]
    reasons = {r["code"]: r["message"] for r in target["verdicts"][2]["reasons"]}
    why = reasons["library-loaded-all-holes"]
    assert "cuModuleLoadData, from .rodata" in why and "compute_90a (arch-specific PTX" in why
    assert "Mul_GPU_DT_FLOAT_kernel" in why
    assert "hole-library-loaded" in reasons
    assert "library-loaded-code" not in reasons  # judged, not "not evaluated"


def test_scan_json_carries_the_evidence(tmp_path: Path) -> None:
    doc = json.loads(_cli("scan", "--json", "--no-cache", str(LIB)))
    jsonschema.validate(doc, SCAN_SCHEMA)
    (f,) = doc["files"]
    assert f["module_loaders"] == ["cuModuleLoadData"] and f["fallbacks"] == []
    assert [(m["section"], m["loaded"]) for m in f["modules"]] == [(".nv_fatbin", False), (".rodata", True)]
    assert any(e["arch"] == "compute_90a" and e["module"] == 1 for e in f["entries"])


# --------------------------------------------------------------------------- partial decompression


@pytest.mark.parametrize("seed", range(20))
def test_lz4_head_is_the_start_of_the_whole(seed: int) -> None:
    rnd = random.Random(seed)
    text = b"".join(
        rnd.choice(
            [
                b".version 8.5\n",
                b".target sm_90a\n",
                b"ld.global.f32 %f1, [%rd1];\n",
                bytes(rnd.randrange(256) for _ in range(7)),
            ]
        )
        for _ in range(rnd.randrange(1, 4000))
    )
    block = lz4.block.compress(text, store_size=False)
    for limit in (0, 1, 64, 1024, len(text) + 10):
        assert lz4_block_head(block, limit) == text[:limit]
        assert lz4_block_head(block[: limit + limit // 4 + 64], limit) == text[:limit]  # never needs more


def test_zstd_head_is_the_start_of_the_whole() -> None:
    text = b"//\n.version 9.0\n.target sm_100f\n" + b"mov.u32 %r1, %tid.x;\n" * 50000
    frame = zstandard.ZstdCompressor().compress(text)
    assert zstd_frame_head(frame, 1024) == text[:1024]


def test_a_large_lz4_ptx_is_read_by_its_head_only() -> None:
    """A 600 KB PTX text whose header lacks the `a` bit: the head (1 KB) decides, and it is right."""
    text = b"//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 8.5\n.target sm_90a\n" + b"\n".join(
        b"  add.s32 %r" + str(i).encode() + b", %r1, %r2;" for i in range(30000)
    )
    text += b"\0"
    block = lz4.block.compress(text, store_size=False)
    e = entry(
        1,
        90,
        flags=BASE_FLAGS | 0x2000,
        payload=block,
        code_version=(8, 5),
        compressed_size=len(block),
        uncompressed_size=len(text),
    )
    facts = inspect_bytes(fatbin(e), "generated.fatbin")
    (ptx,) = facts.entries
    assert ptx.arch_name == "compute_90a" and ptx.header_said == "compute_90 (PTX ISA 8.5)"
    assert read_entry_payload(fatbin(e), ptx) == text  # the whole is still there for those who ask


def test_the_cubin_elf_header_wins_over_the_entry_header() -> None:
    """A ptxas 12.8/12.9 (ABI 8) cubin whose e_flags carry 0x8 (sm_100a, fatbin_spec.md §D.1) in an entry
    without the `a` bit: sm_100a, which 10.3 cannot run (sm_100 could)."""
    buf = (FIXTURES / "bin" / "libold.so").read_bytes()
    sass = next(e for e in inspect_path(FIXTURES / "bin" / "libold.so").entries if e.kind is EntryKind.SASS)
    cubin = bytearray(read_entry_payload(buf, sass))
    cubin[8] = 8  # EI_ABIVERSION: V2 layout, SM in bits 8-15
    struct.pack_into("<I", cubin, 48, 0x06000000 | 100 << 8 | 0x8 | 0x2)
    facts = inspect_bytes(fatbin(entry(2, 100, payload=bytes(cubin), code_version=(1, 8))), "clang.fatbin")
    (got,) = facts.entries
    assert got.arch_name == "sm_100a" and got.header_said == "sm_100"
    assert any("the cubin ELF header says sm_100a" in n for n in facts.notes)
    struct.pack_into("<I", cubin, 48, 0x06000000 | 100 << 8 | 0x2)
    plain = inspect_bytes(fatbin(entry(2, 100, payload=bytes(cubin), code_version=(1, 8))), "plain.fatbin")
    assert plain.entries[0].arch_name == "sm_100" and plain.entries[0].header_said == ""
    struct.pack_into("<I", cubin, 48, 0x06000000 | 90 << 8 | 0x8 | 0x4)
    hopper = inspect_bytes(fatbin(entry(2, 90, payload=bytes(cubin), code_version=(1, 8))), "hopper.fatbin")
    assert hopper.entries[0].header_said == ""  # sm_90 vs sm_90a SASS: no GPU tells them apart; not read


# --------------------------------------------------------------------------- a verdict resting on a fallback


def test_a_verdict_resting_on_a_fallback_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """A large member read without a way back to its symbol table: check (text, Markdown, HTML) and the
    JSON (per file) say that the package's verdicts rest on what was assumed."""
    from cudafit.analysis import analyze
    from cudafit.model import ComputeCapability, Gpu
    from cudafit.report.check import check_document, render_html, render_markdown, render_text
    from cudafit.report.console import make_console
    from cudafit.targets.interface import ScanItem

    data = LIB.read_bytes()
    monkeypatch.setattr("cudafit.binary.reader.STREAM_IN_MEMORY_LIMIT", 1024)
    monkeypatch.setattr(stream_mod, "_RING", 64)
    monkeypatch.setattr(stream_mod, "_CHUNK", 4096)
    facts = inspect_stream(io.BytesIO(data), "pkg.whl!pkg/libloaded.so", len(data))
    assert facts.fallbacks
    item = ScanItem(package="pkg", version="1.0", path=facts.path, facts=facts)
    analysis = analyze([item], [Gpu("12.0", ComputeCapability(12, 0))], include_coverage=False)
    doc = check_document(analysis)
    jsonschema.validate(doc, CHECK_SCHEMA)
    (target,) = doc["targets"]
    assert target["fallbacks"] == [{"path": "pkg.whl!pkg/libloaded.so", "assumed": list(facts.fallbacks)}]
    out = io.StringIO()
    render_text(doc, make_console(out))
    assert "rests on a fallback" in out.getvalue() and "pkg 1.0: its verdicts rest on" in out.getvalue()
    assert "Verdicts resting on a fallback" in render_markdown(doc)
    assert "Verdicts resting on a fallback" in render_html(doc)
    whole = analyze([ScanItem("pkg", "1.0", str(LIB), inspect_path(LIB))], analysis.gpus, include_coverage=False)
    assert check_document(whole)["targets"][0]["fallbacks"] == []


# --------------------------------------------------------------------------- TensorFlow 2.20.0, recorded shape

SHAPE = json.loads((Path(__file__).parent / "data" / "tensorflow-2.20.0.shape.json").read_text())


def _facts_from_shape(path: str, shape: dict[str, Any]) -> Any:
    from cudafit.binary import BinaryFacts, Compression, FatbinEntry, FileFormat, Module

    modules = []
    for g in shape["groups"]:
        entries = []
        for kind, arch, variant, version, overridden in g["entries"]:
            flags = 0x11 | {"a": 0x100000, "f": 0x200000}.get(variant, 0)
            said = f"compute_{arch} (PTX ISA {version[0]}.{version[1]})" if overridden else ""
            entries.append(
                FatbinEntry(
                    EntryKind(kind),
                    arch,
                    ArchVariant(variant),
                    tuple(version),
                    flags,
                    Compression.LZ4,
                    0,
                    64,
                    64,
                    8,
                    8,
                    8,
                    header_said=said,
                )
            )
        modules += [Module(i, 8, g["section"], tuple(entries), g["loaded"]) for i in range(g["count"])]
    return BinaryFacts(
        path=path,
        format=FileFormat.ELF_SHARED,
        size=1,
        modules=tuple(modules),
        module_loaders=tuple(shape["module_loaders"]),
    )


def test_tensorflow_recorded_shape_gives_the_recorded_verdicts() -> None:
    """The shape of TensorFlow 2.20.0's device code (recorded from the real wheel by the opt-in test in
    tests/realwheels/test_loaded_real.py): 1,149 modules loaded from .rodata (sm_60..sm_89 + sm_90a PTX
    under an arch-90 header) beside 248 registered ones.  Pascal to Ada run natively, H100 by JIT of the
    sm_90a PTX, B200 and RTX 5090 fail on the library-loaded modules."""
    from cudafit.model import ComputeCapability
    from cudafit.rules import engine

    files = [_facts_from_shape(p, s) for p, s in SHAPE["files"].items()]
    assert sum(m.loaded for f in files for m in f.modules) == 1149
    got = []
    for cc in SHAPE["verdicts"]["gpus"]:
        gpu = engine.Gpu(cc, ComputeCapability(*map(int, cc.split("."))))
        v = engine.evaluate_package("tensorflow", files, gpu)
        got.append(v.status.value)
        codes = {r.code: r.message for r in v.reasons}
        if v.status is engine.Status.FAILS:
            assert (
                "none of the 1,149 modules the library loads itself (cuModuleLoadData, from .rodata)"
                in codes["library-loaded-all-holes"]
            )
            assert (
                "compute_90a (arch-specific PTX: the driver compiles it for 9.0 only)"
                in codes["library-loaded-all-holes"]
            )
        else:
            assert "library-loaded-all-holes" not in codes
    assert got == SHAPE["verdicts"]["status"]


def test_scan_text_notes_the_disagreement() -> None:
    out = _cli("scan", "--no-cache", str(LIB))
    assert "loaded by the library itself (cuModuleLoadData; 1 fatbin in .rodata)" in out
    assert "the fatbin header says compute_90 (PTX ISA 9.0), the PTX text says compute_90a" in out


def test_relocatable_code_is_not_refined_on_disk_nor_in_a_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """__nv_relfatbin is never loaded: its payloads are not read (the header names it), on disk and from
    a stream alike; the same PTX in .nv_fatbin is read and wins."""
    from builders import elf

    text = b"//\n.version 8.5\n.target sm_90a\n.address_size 64\n" + b"// pad\n" * 20 + b"\0"
    ptx = fatbin(entry(1, 90, payload=text, code_version=(8, 5)))
    data = elf([(".nv_fatbin", ptx), ("__nv_relfatbin", ptx)])
    on_disk = inspect_bytes(data, "lib.so")
    assert [(m.section, m.entries[0].arch_name) for m in on_disk.modules] == [
        (".nv_fatbin", "compute_90a"),
        ("__nv_relfatbin", "compute_90"),
    ]
    monkeypatch.setattr("cudafit.binary.reader.STREAM_IN_MEMORY_LIMIT", 64)
    streamed = inspect_stream(io.BytesIO(data), "lib.so", len(data))
    assert [(m.section, m.entries) for m in streamed.modules] == [(m.section, m.entries) for m in on_disk.modules]


def test_doctor_judges_an_installed_library_loaded_module(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    (site / "loadedlib").mkdir(parents=True)
    info = site / "loadedlib-1.0.dist-info"
    info.mkdir()
    shutil.copy(LIB, site / "loadedlib" / "libloaded.so")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: loadedlib\nVersion: 1.0\n")
    (info / "RECORD").write_text("loadedlib/libloaded.so,,\nloadedlib-1.0.dist-info/METADATA,,\n")
    args = ["doctor", "--site-packages", str(site), "--no-probe", "--no-cache", "--gpu", "12.0", "--gpu", "8.6"]
    doc = json.loads(_cli(*args, "--json", "--kernels"))
    jsonschema.validate(doc, CHECK_SCHEMA)
    (target,) = doc["targets"]
    assert [v["status"] for v in target["verdicts"]] == ["fails", "native"]
    holes = target["verdicts"][0]["without_code"]
    assert any("Mul_GPU_DT_FLOAT_kernel" in json.dumps(h) for h in holes)


@pytest.mark.parametrize("strings_first", [False, True])
def test_reading_the_symbol_table_again_in_either_layout(strings_first: bool) -> None:
    """.dynstr after .dynsym (as linkers lay them out): only the imports' names are looked at; before
    it: kept whole (bounded).  Both find the import."""
    from cudafit.binary._elf import Section

    data = LIB.read_bytes()
    sections = read_sections(data, read_elf_header(data))
    dynsym = next(s for s in sections if s.type == 11)
    dynstr = sections[dynsym.link]
    sym, strs = data[dynsym.offset : dynsym.end], data[dynstr.offset : dynstr.end]
    blob = b"\0" * 100 + (strs + sym if strings_first else sym + strs)
    first, second = (len(strs), len(sym)) if strings_first else (len(sym), len(strs))
    at_sym = 100 + (first if strings_first else 0)
    at_str = 100 + (0 if strings_first else first)
    assert second > 0
    ds = Section(".dynsym", 11, 2, at_sym, len(sym), 1, 0, 24)
    st = Section(".dynstr", 3, 2, at_str, len(strs), 0, 0, 0)
    assert stream_mod._reread_loaders(lambda: io.BytesIO(blob), ds, st, 64) == ("cuModuleLoadData",)


def test_an_image_layer_member_is_read_again_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large library in a container layer: its symbol table is read again from the layer (no fallback)."""
    import gzip
    import tarfile

    from cudafit.targets.image import ImageTarget
    from test_targets import docker_save

    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w") as tf:
        tf.add(str(LIB), "opt/lib/libloaded.so")
    monkeypatch.setattr("cudafit.binary.reader.STREAM_IN_MEMORY_LIMIT", 1024)
    monkeypatch.setattr(stream_mod, "_RING", 64)
    monkeypatch.setattr(stream_mod, "_CHUNK", 4096)
    image = docker_save(tmp_path / "img.tar", [gzip.compress(layer.getvalue())])
    (item,) = [i for i in ImageTarget(str(image)).iter_items() if i.facts.modules]
    assert _summary(item.facts) == _summary(inspect_path(LIB)) and not item.facts.fallbacks


# --------------------------------------------------------------------------- the import check itself

_NAMES_DRAWN = [
    "cuModuleLoadData", "cuModuleLoadDataEx", "cuModuleLoadFatBinary", "cuLibraryLoadData",  # the loaders
    "cuModuleLoad", "cuModuleLoadDat", "cuModuleLoadDataExt", "cuLibraryLoadDataEx", "cuLibraryLoadFromFile",
    "cuMemAlloc", "cuLaunchKernel", "cudaMalloc", "calloc", "c", "cu", "", "_ZN2at6Tensor4sizeEv", "malloc",
]  # fmt: skip


def _reference_loaders(data: Any, dynsym: Any, strtab: Any, count: int, bits: int) -> tuple[str, ...]:
    """What the ELF specification says, one symbol at a time: the names of the undefined symbols
    (st_shndx SHN_UNDEF) among the first ``count``, read up to their NUL inside the string table."""
    entsize, shndx_at = (24, 6) if bits == 64 else (16, 14)
    found = set()
    for i in range(count):
        st_name = struct.unpack_from("<I", data, dynsym.offset + i * entsize)[0]
        shndx = struct.unpack_from("<H", data, dynsym.offset + i * entsize + shndx_at)[0]
        if shndx or st_name >= strtab.size:
            continue
        start = strtab.offset + st_name
        end = data.find(b"\0", start, strtab.end)
        found.add(bytes(data[start:end]).decode("latin-1") if end >= 0 else None)
    from cudafit.binary.loaders import MODULE_LOADERS

    return tuple(n for n in MODULE_LOADERS if n in found)


@given(
    symbols=st.lists(
        st.tuples(st.sampled_from(_NAMES_DRAWN), st.booleans(), st.integers(-3, 3)), min_size=0, max_size=40
    ),
    bits=st.sampled_from([32, 64]),
    hashed=st.integers(0, 41),
    tail_merge=st.booleans(),
    search_first=st.booleans(),
)
@example([("cuLibraryLoadData", False, 0)], 64, 0, False, True)  # one loader alone, each path
@example([("cuModuleLoadFatBinary", False, 0), ("calloc", False, 0)], 32, 0, True, True)
@example([("cuModuleLoadDataEx", False, 0), ("cuModuleLoadData", True, 0)], 64, 0, True, False)
@example([("cuModuleLoadData", False, 3)], 64, 0, False, False)  # past the table: not a name
@settings(max_examples=300, deadline=None)
def test_the_import_check_equals_the_plain_reading(
    symbols: list[tuple[str, bool, int]], bits: int, hashed: int, tail_merge: bool, search_first: bool
) -> None:
    """The string-table search and the C-level gather of first bytes find exactly what reading each
    import's name finds: names starting 'c' that are not loaders, defined loaders (a shim), names that
    are suffixes of others (linkers merge tails), st_name past the table (then the careful reading),
    the .gnu.hash head."""
    from cudafit.binary import loaders as loaders_mod
    from cudafit.binary._elf import Section
    from cudafit.binary.loaders import module_loaders

    strings = bytearray(b"\0")
    offsets: list[int] = []
    for name, _defined, skew in symbols:
        raw = name.encode() + b"\0"
        at = strings.find(raw) if tail_merge else -1
        if at < 0:
            at = len(strings)
            strings += (b"x" if tail_merge and name else b"") + raw  # 'x' + name: the name is its tail
            at += 1 if tail_merge and name else 0
        offsets.append(at + (skew * 1000 if abs(skew) == 3 else 0))  # +-3: past the table (or wraps)
    entsize = 24 if bits == 64 else 16
    table = bytearray(entsize)  # symbol 0: the null symbol
    for (_name, defined, _skew), st_name in zip(symbols, offsets, strict=True):
        entry = bytearray(entsize)
        struct.pack_into("<I", entry, 0, st_name % (1 << 32))
        struct.pack_into("<H", entry, 6 if bits == 64 else 14, 12 if defined else 0)
        table += entry
    count = len(symbols) + 1
    gnu = struct.pack("<IIII", 1, hashed, 1, 6) if 0 < hashed <= count else b""
    data = b"\x7fELF" + bytes(table) + bytes(strings) + gnu + b"\0" * 8
    dynsym = Section(".dynsym", 11, 2, 4, len(table), 1, 0, entsize)
    dynstr = Section(".dynstr", 3, 2, 4 + len(table), len(strings), 0, 0, 0)
    sections = [dynsym, dynstr]
    if gnu:
        sections.append(Section(".gnu.hash", 0x6FFFFFF6, 2, dynstr.end, len(gnu), 0, 0, 0))
    head = hashed if gnu else count
    saved = loaders_mod._SEARCH_PER_IMPORT
    loaders_mod._SEARCH_PER_IMPORT = saved if search_first else 0  # 0: always the gather
    try:
        assert module_loaders(data, sections, bits) == _reference_loaders(data, dynsym, dynstr, head, bits)
    finally:
        loaders_mod._SEARCH_PER_IMPORT = saved


# --------------------------------------------------------------------------- Windows DLLs (PE)


@pytest.mark.parametrize(("delay", "wide"), [(False, True), (True, True), (False, False)])
def test_a_dll_importing_the_loader_from_nvcuda_has_its_data_read(delay: bool, wide: bool) -> None:
    """A DLL names the library of each import: cuModuleLoadData from nvcuda.dll (import table or
    delay-load table, PE32+ or PE32) is the evidence, and its .rdata fatbin is a module it loads itself."""
    facts = inspect_bytes(
        pe_importing("NVCUDA.dll", ["cuCtxGetCurrent", "cuModuleLoadData"], delay=delay, wide=wide), "x.dll"
    )
    assert facts.error is None and facts.module_loaders == ("cuModuleLoadData",)
    assert [(m.section, m.loaded, [e.arch_name for e in m.entries]) for m in facts.modules] == [
        (".rdata", True, ["sm_80"])
    ]


def test_a_dll_without_the_driver_import_keeps_its_data_unread() -> None:
    """The same name imported from another DLL (a shim of its own) is no evidence; nor is another driver
    entry point: .rdata is not read (it is under the 1 MiB probe size)."""
    for blob in (pe_importing("cudart64_12.dll", ["cuModuleLoadData"]), pe_importing("nvcuda.dll", ["cuInit"])):
        facts = inspect_bytes(blob, "x.dll")
        assert facts.error is None and facts.module_loaders == () and facts.modules == ()


@pytest.mark.parametrize("cut", [0x120, 0x180, 0x420, 0x520, 0x6F0])
def test_a_cut_dll_is_read_without_error(cut: int) -> None:
    """Cut anywhere (optional header, section table, import table, names): bytes only, no exception."""
    facts = inspect_bytes(pe_importing("nvcuda.dll", ["cuModuleLoadData"])[:cut], "x.dll")
    assert facts.module_loaders in ((), ("cuModuleLoadData",))


@pytest.mark.parametrize(
    ("head", "said"),
    [
        (b"//\n//\n\n.version 8.5\n.target sm_90a\n.address_size 64\n", ((8, 5), 90, ArchVariant.ARCH_SPECIFIC)),
        (b".version 8.8\n.target sm_100f\n", ((8, 8), 100, ArchVariant.FAMILY)),
        (b".version 8.8\n.target sm_10", None),  # cut inside the arch: sm_10 is not what it says
        (b".version 8.8\n.target sm_100", None),  # cut before a possible a/f
        (b".target sm_90\n.version 8", None),
    ],
)
def test_a_ptx_head_cut_inside_a_directive_is_not_read(head: bytes, said: object) -> None:
    """The first look at a PTX payload is short (128 bytes); a directive it cuts waits for the second."""
    from cudafit.binary.refine import parse_ptx_head

    assert parse_ptx_head(head) == said


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([(False, True), (True, True), (False, False)]),
    st.lists(st.tuples(st.integers(0, 0x1000), st.integers(0, 255)), min_size=1, max_size=16),
    st.integers(0, 0x1800),
)
def test_a_mutated_dll_import_table_is_data_never_an_exception(
    shape: tuple[bool, bool], edits: list[tuple[int, int]], cut: int
) -> None:
    """The PE import and delay-load tables are outside input: any byte of them changed, or the file cut, gives
    facts (modules, or an unreadable error with its code), never an exception."""
    delay, wide = shape
    data = bytearray(pe_importing("nvcuda.dll", ["cuModuleLoadData", "cuLibraryLoadData"], delay=delay, wide=wide))
    for off, value in edits:
        data[off % len(data)] = value
    facts = inspect_bytes(bytes(data[: len(data) - cut % len(data)]), "x.dll")
    assert facts.error is None or facts.error_code

