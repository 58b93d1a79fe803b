"""The one compatibility rule (rules/compat.py), asked for every (arch, variant, compute capability, toolkit era)
of the tables, against NVIDIA's rules written out independently here; and every caller gives its answer."""

from __future__ import annotations

import itertools

import pytest

from cudafit.binary.facts import BinaryFacts, Compression, EntryKind, FatbinEntry, FileFormat, Module
from cudafit.explain.ground import arch_runs_on as ground_arch_runs_on
from cudafit.model import ArchVariant, ComputeCapability, CudaVersion
from cudafit.rules import compat, roles, tables
from cudafit.rules.engine import Gpu, PreparedFile, Status, arch_runs_on, evaluate_file

CCS = list(tables.iter_compute_capabilities())
#: Eras: unknown (the strict rule), CUDA 12.8 (Tegra apart), 13.0 (Thor joins SBSA), 13.2 (Orin too).
ERAS = (None, CudaVersion(12, 8), CudaVersion(13, 0), CudaVersion(13, 2))
# Tegra K1 (3.2, Jetson TK1) through Thor.
TEGRA = {ComputeCapability(3, 2), ComputeCapability(5, 3), ComputeCapability(6, 2), ComputeCapability(7, 2),
         ComputeCapability(8, 7), ComputeCapability(10, 1), ComputeCapability(11, 0)}  # fmt: skip
#: NVIDIA's CUDA 13.0 Jetson Thor post (Thor joins the SBSA toolkit, Orin excepted); PyTorch 2.14.1 (Orin, 13.2).
JOINS = {ComputeCapability(11, 0): CudaVersion(13, 0), ComputeCapability(8, 7): CudaVersion(13, 2)}


def tegra(cc: ComputeCapability, era: CudaVersion | None) -> bool:
    return cc in TEGRA and not (era is not None and cc in JOINS and era >= JOINS[cc])


def expected(kind: str, target: ComputeCapability, variant: ArchVariant, cc: ComputeCapability, era: object) -> bool:
    assert era is None or isinstance(era, CudaVersion)
    if variant is ArchVariant.ARCH_SPECIFIC:
        return target == cc
    if variant is ArchVariant.FAMILY:
        return cc in tables.family_members(target.arch_number)
    if kind == "ptx":
        return target <= cc
    if target == cc:
        return True
    if tegra(target, era) or tegra(cc, era):
        return False
    return target.major == cc.major and target.minor <= cc.minor


CASES = list(itertools.product(("sass", "ptx"), CCS, list(ArchVariant), CCS, ERAS))


def test_the_tables_know_the_tegra_parts() -> None:
    assert {cc for cc in CCS if tables.is_tegra(cc)} == TEGRA


def test_every_case_of_the_tables() -> None:
    wrong = []
    for kind, target, variant, cc, era in CASES:
        k = compat.CodeKind(kind)
        got = compat.code_runs_on(k, target.arch_number, variant, cc, era)[0] is not None
        if got != expected(kind, target, variant, cc, era):
            wrong.append((kind, str(target), variant.value, str(cc), str(era)))
    assert not wrong, wrong[:20]
    assert len(CASES) == 2 * len(CCS) * 3 * len(CCS) * len(ERAS)


@pytest.mark.parametrize(("arch", "cc"), [("sm_72", "7.5"), ("sm_87", "8.8"), ("sm_87", "8.9"),
                                          ("sm_101", "10.3"), ("sm_101", "10.7"), ("sm_80", "8.7")])  # fmt: skip
def test_no_binary_compatibility_between_desktop_and_tegra(arch: str, cc: str) -> None:
    """The five pairs the three copies disagreed on (issue 21 item 8), and desktop code on Orin."""
    c = ComputeCapability(*map(int, cc.split(".")))
    assert not arch_runs_on(arch, c)
    assert not ground_arch_runs_on(arch, c)
    fit = compat.code_runs_on(compat.CodeKind.SASS, int(arch[3:]), ArchVariant.NONE, c)
    assert fit[1] is not None and fit[1].code == "tegra-no-binary-compat"


def test_the_era_comes_from_the_binary() -> None:
    """sm_80 on Orin: no before CUDA 13.2 (PyTorch's table), yes from it; the engine reads the era from the
    file's own PTX ISA (CUDA 13.2 emits ISA 9.2)."""
    orin = ComputeCapability(8, 7)
    assert not arch_runs_on("sm_80", orin, CudaVersion(13, 0))
    assert arch_runs_on("sm_80", orin, CudaVersion(13, 2))
    isa = tables.toolkit_ptx_isa(CudaVersion(13, 2))
    assert isa is not None

    def file(ptx_isa: tuple[int, int]) -> BinaryFacts:
        sass = FatbinEntry(EntryKind.SASS, 80, ArchVariant.NONE, (1, 8), 0x11, Compression.NONE, 0, 64, 64, 8, 0, 0)
        ptx = FatbinEntry(EntryKind.PTX, 90, ArchVariant.NONE, ptx_isa, 0x11, Compression.NONE, 0, 64, 64, 8, 0, 0)
        return BinaryFacts("x.so", FileFormat.ELF_SHARED, 0, (Module(0, 64, ".nv_fatbin", (sass, ptx)),))

    gpu = Gpu("Orin", orin)
    assert evaluate_file(PreparedFile(file((isa.major, isa.minor))), gpu).status is Status.NATIVE
    assert evaluate_file(PreparedFile(file((9, 0))), gpu).status is Status.FAILS  # CUDA 13.0: Orin still apart


def test_roles_use_the_same_rule() -> None:
    """The roles' build-list coverage is the set of compute capabilities the rule says a SASS list runs on."""
    for number in (72, 80, 87, 101, 110):
        cov = roles._sass_coverage((("sass", number, ""),))
        assert cov == {cc for cc in CCS if arch_runs_on(f"sm_{number}", cc)}
