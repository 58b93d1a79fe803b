"""Fatbins a library embeds in data sections to load itself (cuFFT: .ldata; cuBLASLt: .cask_resource)."""

from __future__ import annotations

from pathlib import Path

from builders import elf, entry, fatbin
from cudafit.binary import inspect_bytes
from cudafit.model import parse_compute_capability
from cudafit.rules.engine import Gpu, Status, evaluate_file, evaluate_package


def library() -> bytes:
    registered = fatbin(entry(2, 75))
    # unaligned, back to back, at the start of a >= 1 MiB data section, as in libcufft's .ldata
    pool = b"\x01\x02\x03" + fatbin(entry(2, 86)) + fatbin(entry(2, 90), entry(1, 90, code_version=(9, 0)))
    pool += b"\0" * ((1 << 20) - len(pool))
    return elf([(".nv_fatbin", registered), (".ldata", pool)])


def gpu(cc: str) -> Gpu:
    return Gpu(cc, parse_compute_capability(cc))


def test_probe_finds_them_without_reading_them() -> None:
    facts = inspect_bytes(library(), "libx.so")
    assert facts.embedded_sections == (".ldata",)
    assert facts.embedded_modules == ()
    v = evaluate_file(facts, gpu("8.6"))
    assert v.status is Status.PARTIAL  # the registered sm_75 module fails; the library's own code is unknown
    assert v.reasons[0].code == "library-loaded-code"
    p = evaluate_package("x", [facts], gpu("8.6"))
    assert p.status is Status.PARTIAL


def test_embedded_scan_judges_the_pool() -> None:
    facts = inspect_bytes(library(), "libx.so", embedded=True)
    assert [m.section for m in facts.embedded_modules] == [".ldata", ".ldata"]
    assert [e.arch_name for m in facts.embedded_modules for e in m.entries] == ["sm_86", "sm_90", "compute_90"]
    assert facts.runtime_modules[0].entries[0].arch_name == "sm_75"
    on_3090 = evaluate_file(facts, gpu("8.6"))
    assert on_3090.status is Status.PARTIAL
    assert any(r.code == "library-loaded-code" and "sm_86 serves 8.6" in r.message for r in on_3090.reasons)
    on_h100 = evaluate_file(facts, gpu("9.0"))
    assert on_h100.counts.native == 1  # the pool; the registered sm_75 module fails
    on_2080 = evaluate_file(facts, gpu("7.5"))
    # The registered module runs natively and the pool only holds code for other GPUs: the library loads
    # those fatbins on their GPUs (a specialisation, reported), as cuBLASLt's .cask_resource kernels.
    assert on_2080.status is Status.NATIVE
    assert on_2080.counts.specialised == 1
    assert any(r.code == "library-loaded-code" and "none has code for 7.5" in r.message for r in on_2080.reasons)


def test_small_or_executable_sections_are_not_probed() -> None:
    small = elf([(".nv_fatbin", fatbin(entry(2, 75))), (".rodata", fatbin(entry(2, 86)))])
    assert inspect_bytes(small, "liby.so").embedded_sections == ()
    obj = elf([(".ldata", fatbin(entry(2, 86)) + b"\0" * (1 << 20))], e_type=1)
    assert inspect_bytes(obj, "x.o").embedded_sections == ()


def test_coverage_columns_do_not_depend_on_the_gpus_asked_about(tmp_path: Path) -> None:
    """Issue 21 item 11: with --gpu 7.5 (where the registered module runs) the embedded fatbins used to stay
    unread, so the coverage columns were computed from other facts than without --gpu; they are read for the
    columns whatever the GPUs."""
    from cudafit.analysis import _with_library_loaded_code, analyze
    from cudafit.rules import tables
    from cudafit.targets.cache import scan_cache
    from cudafit.targets.files import FileTarget

    path = tmp_path / "libx.so"
    path.write_bytes(library())
    ccs = list(tables.iter_compute_capabilities())
    with scan_cache(enabled=False):
        (item,) = FileTarget(str(path)).iter_items()
        for gpus in ([], [gpu("7.5")], [gpu("9.0")]):
            assert len(_with_library_loaded_code(item.facts, gpus, ccs).embedded_modules) == 2
        assert _with_library_loaded_code(item.facts, [gpu("7.5")], ()).embedded_modules == ()  # no columns
        columns = [analyze([item], gpus).packages[0].coverage for gpus in ([], [gpu("7.5")], [gpu("9.0")])]
    assert columns[0] == columns[1] == columns[2]
