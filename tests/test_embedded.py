"""Fatbins a library embeds in data sections to load itself (cuFFT: .ldata; cuBLASLt: .cask_resource)."""

from __future__ import annotations

from builders import elf, entry, fatbin
from cudafit.binary import inspect_bytes
from cudafit.model import parse_compute_capability
from cudafit.rules.engine import Status, TargetGpu, evaluate_file, evaluate_package


def library() -> bytes:
    registered = fatbin(entry(2, 75))
    # unaligned, back to back, at the start of a >= 1 MiB data section, as in libcufft's .ldata
    pool = b"\x01\x02\x03" + fatbin(entry(2, 86)) + fatbin(entry(2, 90), entry(1, 90, code_version=(9, 0)))
    pool += b"\0" * ((1 << 20) - len(pool))
    return elf([(".nv_fatbin", registered), (".ldata", pool)])


def gpu(cc: str) -> TargetGpu:
    return TargetGpu(cc, parse_compute_capability(cc))


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
