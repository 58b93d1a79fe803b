"""The verdict engine against NVIDIA's documented rules, property tests, and the seed scenarios.

Table rows cite the text they come from:
  PG13 §1.3.4.1  https://docs.nvidia.com/cuda/cuda-programming-guide/01-introduction/cuda-platform.html
  PG13 §1.3.4.2  (same page) PTX JIT for "any compute capability equal or higher"
  PG13 §5.1.2    https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/compute-capabilities.html
  PG12 §6.1.2    https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cudafit.binary.facts import BinaryFacts, Compression, EntryKind, FatbinEntry, FileFormat, Module
from cudafit.model import ArchVariant, ComputeCapability, parse_compute_capability, parse_driver_version
from cudafit.rules import tables
from cudafit.rules.engine import Gpu, Status, evaluate_file, evaluate_module, evaluate_package
from cudafit.rules.reasons import REASONS

_ARCH = re.compile(r"^(sm|compute)_(\d+)([af]?)$")


def entry(name: str, isa: tuple[int, int] = (9, 0)) -> FatbinEntry:
    m = _ARCH.match(name)
    assert m, name
    kind = EntryKind.SASS if m.group(1) == "sm" else EntryKind.PTX
    variant = ArchVariant(m.group(3))
    flags = 0x11 | {"a": 0x100000, "f": 0x200000}.get(m.group(3), 0)
    return FatbinEntry(
        kind,
        int(m.group(2)),
        variant,
        (1, 8) if kind is EntryKind.SASS else isa,
        flags,
        Compression.NONE,
        0,
        64,
        64,
        8,
        0,
        0,
    )


def module(*names: str, section: str | None = ".nv_fatbin", isa: tuple[int, int] = (9, 0)) -> Module:
    return Module(0, 0, section, tuple(entry(n, isa) for n in names))


def facts(*modules: Module) -> BinaryFacts:
    return BinaryFacts("lib.so", FileFormat.ELF_SHARED, 0, modules)


def gpu(cc: str) -> Gpu:
    return Gpu(f"GPU {cc}", parse_compute_capability(cc))


# (archs in one module, GPU CC, expected status, rule)
TABLE = [
    (("sm_86",), "8.6", Status.NATIVE, "PG13 §1.3.4.1: exact cubin"),
    (("sm_86",), "8.9", Status.NATIVE, "PG13 §1.3.4.1: sm_86 runs on 8.6 and 8.9"),
    (("sm_86",), "8.0", Status.FAILS, "PG13 §1.3.4.1: not on a lower minor"),
    (("sm_86",), "9.0", Status.FAILS, "PG13 §1.3.4.1: not across majors"),
    (("sm_120",), "12.1", Status.NATIVE, "PG13 §1.3.4.1: sm_120 runs on 12.1"),
    (("sm_100",), "12.0", Status.FAILS, "reference README: sm_100 cubins do not run on 12.x"),
    (("sm_90a",), "9.0", Status.NATIVE, "PG13 §5.1.2.1: a runs on its exact CC"),
    (("sm_90a",), "10.0", Status.FAILS, "PG13 §5.1.2.1: a only on the exact CC"),
    (("sm_100a",), "10.3", Status.FAILS, "PG13 §5.1.2.1: sm_100a not on 10.3"),
    (("sm_120a",), "12.1", Status.FAILS, "verdicts.md: sm_120a runs on 12.0 but not on 12.1"),
    (("sm_100f",), "10.3", Status.NATIVE, "PG13 Table 28: compute_100f family is 10.0, 10.3"),
    (("sm_100f",), "12.0", Status.FAILS, "PG13 §5.1.2.2: f only on family members"),
    (("sm_103f",), "10.0", Status.FAILS, "PG13 Table 28: 103f runs on 10.3 only"),
    (("sm_120f",), "12.1", Status.NATIVE, "PG13 Table 28: 120f runs on 12.0 and 12.1"),
    (("sm_121f",), "12.0", Status.FAILS, "PG13 Table 28: 121f runs on 12.1 only"),
    (("sm_110f",), "11.0", Status.NATIVE, "PG13 Table 28: 110f runs on 11.0"),
    (("compute_75",), "8.6", Status.JIT, "PG13 §1.3.4.2: PTX JIT for equal or higher CC"),
    (("compute_90",), "8.9", Status.FAILS, "PG13 §1.3.4.2: PTX not for a lower CC"),
    (("compute_90a",), "10.0", Status.FAILS, "PG13 §5.1.2.1: compute_90a exact only"),
    (("compute_100f",), "10.3", Status.JIT, "PG13 §5.1.2.2: compute_100f JIT within the family"),
    (("compute_120f",), "10.0", Status.FAILS, "PG13 §5.1.2.2: compute_120f not outside its family"),
    (("sm_80", "compute_80"), "12.0", Status.JIT, "verdicts.md: compute_80 PTX lets 12.0 run by JIT"),
    (("sm_80", "sm_86"), "8.7", Status.FAILS, "PG12 §6.1.2: no binary compatibility for Tegra"),
    (("sm_87",), "8.7", Status.NATIVE, "exact cubin on Tegra"),
    (("sm_80",), "8.6", Status.NATIVE, "PG13 §1.3.4.1: desktop minor compatibility"),
    (("sm_80", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120a"), "10.0", Status.NATIVE, "verdicts.md trap"),
    (("sm_80", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120a"), "10.3", Status.FAILS, "verdicts.md trap"),
]


@pytest.mark.parametrize(("archs", "cc", "expected", "rule"), TABLE)
def test_documented_rules(archs: tuple[str, ...], cc: str, expected: Status, rule: str) -> None:
    verdict = evaluate_file(facts(module(*archs)), gpu(cc))
    assert verdict.status is expected, rule
    for r in verdict.reasons:
        assert r.code in REASONS
        assert r.source.startswith("https://")


def test_best_first_prefers_exact_sass_then_highest_minor_then_ptx() -> None:
    v = evaluate_module(module("compute_80", "sm_80", "sm_86"), gpu("8.6"))
    assert v.chosen == "sm_86"
    v = evaluate_module(module("compute_80", "sm_80", "sm_86"), gpu("8.9"))
    assert v.chosen == "sm_86"
    v = evaluate_module(module("compute_80", "sm_80"), gpu("9.0"))
    assert v.chosen == "compute_80"
    assert v.status is Status.JIT


def test_jit_note_names_the_lower_arch_path() -> None:
    v = evaluate_module(module("sm_75", "compute_75"), gpu("8.6"))
    assert v.status is Status.JIT
    assert "__CUDA_ARCH__" in v.reasons[0].message
    assert "sm_75" in v.reasons[0].message


def test_ptx_isa_newer_than_driver_is_error_222() -> None:
    m = module("compute_75", isa=(9, 0))
    v = evaluate_module(m, gpu("8.6"), driver=parse_driver_version("570.26"))  # 12.8 driver: PTX ISA 8.7
    assert v.status is Status.FAILS
    assert v.reasons[0].code == "ptx-isa-too-new-for-driver"
    ok = evaluate_module(m, gpu("8.6"), driver=parse_driver_version("580.65.06"))  # 13.0: 9.0
    assert ok.status is Status.JIT


def test_driver_older_than_every_table_row() -> None:
    v = evaluate_module(module("compute_75", isa=(8, 0)), gpu("8.6"), driver=parse_driver_version("470.57.02"))
    assert v.reasons[0].code == "ptx-isa-too-new-for-driver"


def test_driver_newer_than_table_is_not_refused() -> None:
    v = evaluate_module(module("compute_75", isa=(9, 9)), gpu("8.6"), driver=parse_driver_version("999.1"))
    assert v.status is Status.JIT
    assert [r.code for r in v.reasons] == ["ptx-jit", "ptx-isa-unverified"]


def test_jit_disabled() -> None:
    v = evaluate_module(module("compute_75"), gpu("8.6"), jit_allowed=False)
    assert v.status is Status.FAILS
    assert v.reasons[0].code == "jit-disabled"
    assert evaluate_module(module("sm_86", "compute_75"), gpu("8.6"), jit_allowed=False).status is Status.NATIVE


def test_relocatable_only_is_never_runnable() -> None:
    verdict = evaluate_file(facts(module("sm_86", section="__nv_relfatbin")), gpu("8.6"))
    assert verdict.status is Status.NONE
    assert verdict.reasons[0].code == "relocatable-only"


def test_per_module_holes_make_partial() -> None:
    """A module built with the file's general list minus this GPU's generation is a hole."""
    both = facts(module("sm_75", "sm_80", "sm_90"), module("sm_75", "sm_90"))
    v = evaluate_file(both, gpu("8.6"))
    assert v.status is Status.PARTIAL
    assert (v.counts.native, v.counts.fails) == (1, 1)
    assert any(r.code == "hole-build-skips-gpu" and "sm_75, sm_90" in r.message for r in v.reasons)


def test_single_generation_module_is_specialised_not_a_hole() -> None:
    """A per-arch module (cuBLAS keeps one sm_75-only module) is dispatched on its generation only."""
    v = evaluate_file(facts(module("sm_80", "sm_86"), module("sm_75")), gpu("8.6"))
    assert v.status is Status.NATIVE
    assert (v.counts.native, v.counts.specialised, v.counts.fails) == (1, 1, 0)
    assert any(r.code == "specialised-generation" for r in v.reasons)


def test_gated_modules_are_not_failures() -> None:
    lib = facts(module("sm_75", "sm_80", "sm_86", "compute_86"), module("sm_90a"), module("sm_90a"))
    v = evaluate_file(lib, gpu("8.9"))
    assert v.status is Status.NATIVE
    assert v.counts.gated == 2
    only_gated = evaluate_file(facts(module("sm_90a")), gpu("8.9"))
    assert only_gated.status is Status.FAILS
    assert only_gated.reasons[0].code == "built-only-for-other-gpus"


def test_package_combines_files() -> None:
    a = facts(module("sm_86"))
    b = BinaryFacts("other.so", FileFormat.ELF_SHARED, 0, (module("sm_75"),))
    v = evaluate_package("pkg", [a, b], gpu("8.6"))
    assert v.status is Status.PARTIAL
    assert v.to_dict()["status"] == "partial"


# ---------------------------------------------------------------------- seeds


def test_seed_001_sm75_only_build_on_3090() -> None:
    """xformers built only for sm_75, run on an RTX 3090 (8.6): fails as SASS; JIT only with compute_75 PTX."""
    assert evaluate_file(facts(module("sm_75")), gpu("8.6")).status is Status.FAILS
    assert evaluate_file(facts(module("sm_75", "compute_75")), gpu("8.6")).status is Status.JIT
    assert evaluate_file(facts(module("sm_75", "sm_86")), gpu("7.5")).status is Status.NATIVE


def test_seed_004_fbgemm_on_1080ti() -> None:
    """A build without sm_61 and without PTX <= 6.1 fails on a GTX 1080 Ti (6.1)."""
    fbgemm = facts(module("sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "compute_90"))
    v = evaluate_file(fbgemm, gpu("6.1"))
    assert v.status is Status.FAILS
    codes = {r.code for m in v.modules for r in m.reasons}
    assert {"no-compatible-code", "sass-major-mismatch", "ptx-newer-than-gpu"} <= codes
    assert evaluate_file(facts(module("sm_70", "compute_60")), gpu("6.1")).status is Status.JIT


def test_fixture_libraries() -> None:
    from cudafit.binary import inspect_path

    b = Path(__file__).parent / "fixtures" / "bin"
    multi = inspect_path(b / "libmulti.so")
    assert evaluate_file(multi, gpu("6.1")).status is Status.FAILS
    assert evaluate_file(multi, gpu("8.9")).status is Status.NATIVE
    assert evaluate_file(inspect_path(b / "libptxonly.so"), gpu("12.0")).status is Status.JIT
    assert evaluate_file(inspect_path(b / "librdc_unlinked.so"), gpu("9.0")).status is Status.NONE
    assert evaluate_file(inspect_path(b / "libold.so"), gpu("7.5")).status is Status.NATIVE  # sm_70 on 7.5


# ---------------------------------------------------------------------- properties

CCS = list(tables.iter_compute_capabilities())
cc_st = st.sampled_from(CCS)


@given(cc_st, cc_st)
def test_plain_sass_runs_iff_same_major_and_lower_or_equal_minor(
    target: ComputeCapability, gpu_cc: ComputeCapability
) -> None:
    v = evaluate_module(module(f"sm_{target.arch_number}"), Gpu("g", gpu_cc))
    expected = target.major == gpu_cc.major and target.minor <= gpu_cc.minor
    if (tables.is_tegra(gpu_cc) or tables.is_tegra(target)) and target != gpu_cc:
        expected = False  # no binary compatibility on Tegra, nor between desktop and Tegra
    assert (v.status is Status.NATIVE) == expected


@given(cc_st, cc_st)
def test_arch_specific_is_exact(target: ComputeCapability, gpu_cc: ComputeCapability) -> None:
    v = evaluate_module(module(f"sm_{target.arch_number}a"), Gpu("g", gpu_cc))
    assert (v.status is Status.NATIVE) == (target == gpu_cc)


@given(cc_st, cc_st)
def test_family_targets_follow_the_table(target: ComputeCapability, gpu_cc: ComputeCapability) -> None:
    v = evaluate_module(module(f"sm_{target.arch_number}f"), Gpu("g", gpu_cc))
    assert (v.status is Status.NATIVE) == (gpu_cc in tables.family_members(target.arch_number))


@given(cc_st, cc_st)
def test_plain_ptx_jits_on_equal_or_higher(target: ComputeCapability, gpu_cc: ComputeCapability) -> None:
    v = evaluate_module(module(f"compute_{target.arch_number}"), Gpu("g", gpu_cc))
    assert (v.status in (Status.JIT, Status.NATIVE)) == (target <= gpu_cc)


@given(cc_st, st.integers(0, 9))
def test_monotonic_in_minor(gpu_cc: ComputeCapability, minor: int) -> None:
    """If sm_XY runs on a desktop GPU X.Z, it runs on every desktop X.Z' with Z' >= Z (Tegra code on none:
    no desktop/Tegra binary compatibility)."""
    target = ComputeCapability(gpu_cc.major, minor)
    runs = evaluate_module(module(f"sm_{target.arch_number}"), Gpu("g", gpu_cc)).status is Status.NATIVE
    if runs:
        for other in CCS:
            desktop = not tables.is_tegra(other) and not tables.is_tegra(target)
            if other.major == gpu_cc.major and other.minor >= gpu_cc.minor and desktop:
                again = evaluate_module(module(f"sm_{target.arch_number}"), Gpu("g", other))
                assert again.status is Status.NATIVE


def test_table_28_families() -> None:
    cc = parse_compute_capability
    assert tables.family_members(100) >= {cc("10.0"), cc("10.3")}
    assert cc("12.0") not in tables.family_members(100)
    assert tables.family_members(103) >= {cc("10.3")}
    assert cc("10.0") not in tables.family_members(103)
    assert tables.family_members(120) == {cc("12.0"), cc("12.1")}
    assert tables.family_members(121) == {cc("12.1")}
    assert tables.family_members(110) == {cc("11.0")}


def test_every_reason_code_is_documented() -> None:
    doc = (Path(__file__).parent.parent / "docs" / "rules.md").read_text()
    for code, info in REASONS.items():
        assert f"`{code}`" in doc, code
        assert info.source.split()[0] in doc, code


def test_a_newer_driver_never_makes_a_package_worse() -> None:
    """fbgemm-gpu on a T4: nothing has code for 7.5; an old driver (no CUDA 13 runtime) must not turn
    'fails' into 'partial' because some files also lack their runtime."""
    from dataclasses import replace

    linked = replace(facts(module("sm_80", "sm_90")), path="a.so", needed=("libcudart.so.13",))
    static = replace(facts(module("sm_80", "sm_90")), path="b.so")
    for drv in ("535.183.01", "580.65.06"):
        v = evaluate_package("pkg", [linked, static], gpu("7.5"), driver=parse_driver_version(drv))
        assert v.status is Status.FAILS, drv
    runs = replace(facts(module("sm_75")), path="c.so")
    new = evaluate_package("pkg", [linked, runs], gpu("7.5"), driver=parse_driver_version("580.65.06"))
    assert new.status is Status.PARTIAL  # c.so runs, a.so has nothing for 7.5
    old = evaluate_package("pkg", [linked, runs], gpu("7.5"), driver=parse_driver_version("535.183.01"))
    # the package loads one CUDA 13 runtime (a.so links it): on 535 it cannot start, for any of its files
    assert old.status is Status.FAILS
    assert [r.code for r in old.reasons][:1] == ["driver-too-old-for-runtime"]
    assert old.reasons[0].data is not None and old.reasons[0].data.driver_floor == 580
