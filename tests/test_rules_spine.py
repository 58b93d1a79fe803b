"""The pieces the engine is made of (issue 19): options, module roles, pools, counts, the lazy sequence.

The engine's verdicts are tested in tests/test_rules_engine.py and tests/test_roles*.py; these tests pin the
contracts of the parts so that a refactoring of one cannot silently change what the others rely on.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.test_rules_engine import facts, gpu, module

from cudafit.binary.facts import BinaryFacts, FileFormat
from cudafit.model import parse_driver_version
from cudafit.rules.compilers import RuntimeCompiler, RuntimeJudgement, judge_package, with_runtime
from cudafit.rules.counts import COUNTED, Counts, combine_counts, count_of
from cudafit.rules.lazy import LazySequence
from cudafit.rules.options import DEFAULT_OPTIONS, JudgeOptions
from cudafit.rules.package import PackageVerdict, evaluate_package, judge_files
from cudafit.rules.pools import AUDIT_POOLS, PACKAGE_POOLS, pool_key, split_library_loaded
from cudafit.rules.prepared import PreparedFile, evaluate_file, judge_file
from cudafit.rules.status import PACKAGE_STATUSES, ModuleRole, Status


def test_module_roles_give_their_status() -> None:
    """A hole fails (error 209 at the launch); gated, specialised and kernel-less are statuses of their own."""
    assert ModuleRole.HOLE.status is Status.FAILS
    for role in (ModuleRole.GATED, ModuleRole.SPECIALISED, ModuleRole.KERNEL_LESS):
        assert role.status.value == role.value
        assert role.status not in PACKAGE_STATUSES  # module level only: never a package's verdict


def test_keyword_arguments_build_the_options_once() -> None:
    """The public entry points' keywords and the options value inside rules/ decide alike."""
    f = facts(module("sm_80", "compute_90", isa=(9, 0)), module("sm_90a"))
    driver = parse_driver_version("535.104.05")
    options = JudgeOptions(driver=driver, jit_allowed=False, gating=False)
    for cc in ("8.0", "8.6", "9.0", "12.0"):
        by_keywords = evaluate_file(f, gpu(cc), driver=driver, jit_allowed=False, gating=False)
        by_value = judge_file(PreparedFile(f), gpu(cc), options)
        assert by_keywords == by_value
        assert tuple(by_keywords.modules) == tuple(by_value.modules)
        package = evaluate_package("p", [f], gpu(cc), driver=driver, jit_allowed=False, gating=False)
        assert package == judge_files("p", [PreparedFile(f)], gpu(cc), options)
    assert JudgeOptions() == DEFAULT_OPTIONS
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.gating = True  # type: ignore[misc]


def _file(path: str, fmt: FileFormat) -> BinaryFacts:
    return BinaryFacts(path, fmt, 0, (module("sm_80", section=None),))


def test_package_pools_are_two_or_more_cubins_or_fatbins_of_a_distribution() -> None:
    so = _file("pkg/lib.so", FileFormat.ELF_SHARED)
    cubin = _file("pkg/kernels/sm_80/a.cubin", FileFormat.CUBIN)
    fatbin = _file("pkg/other/b.fatbin", FileFormat.FATBIN)
    ptx = _file("pkg/kernels/c.ptx", FileFormat.PTX)
    one = split_library_loaded([so, cubin, ptx], lambda f: f, PACKAGE_POOLS)
    assert one.files == (so, cubin, ptx) and one.pools == ()  # a lone cubin is judged as the file it is
    two = split_library_loaded([cubin, so, ptx, fatbin], lambda f: f, PACKAGE_POOLS)
    assert two.files == (so, ptx)  # PTX files are judged as files: the driver JIT-compiles their module
    assert two.pools == (("", (cubin, fatbin)),)  # one pool, whatever the directories


def test_audit_pools_are_per_directory_with_arch_directories_merged() -> None:
    so = _file("w.whl!pkg/lib.so", FileFormat.ELF_SHARED)
    a80 = _file("w.whl!pkg/kernels/sm_80/a.cubin", FileFormat.CUBIN)
    a90 = _file("w.whl!pkg/kernels/90a/a.cubin", FileFormat.CUBIN)
    ptx = _file("w.whl!pkg/kernels/c.ptx", FileFormat.PTX)
    lone = _file("w.whl!pkg/other/b.fatbin", FileFormat.FATBIN)
    split = split_library_loaded([a80, so, lone, a90, ptx], lambda f: f, AUDIT_POOLS)
    assert split.files == (so,)
    assert split.pools == (("w.whl!pkg/kernels", (a80, a90, ptx)), ("w.whl!pkg/other", (lone,)))
    assert pool_key("build/sm_100f/k.cubin") == "build"
    assert pool_key("k.cubin") == ""


def test_a_package_pools_its_cubins_only_when_gated_and_a_distribution() -> None:
    """``pool_loose=False`` (a build directory) or ``gating=False`` (a .pt2): each cubin is its own file."""
    cubins = [
        BinaryFacts(f"pkg/{n}.cubin", FileFormat.CUBIN, 0, (module(n, section=None),)) for n in ("sm_80", "sm_90")
    ]
    pooled = evaluate_package("pkg", cubins, gpu("9.0"))
    assert [fv.path for fv in pooled.files] == ["pkg"]
    assert pooled.status is Status.NATIVE
    loose = evaluate_package("pkg", cubins, gpu("9.0"), pool_loose=False)
    assert [fv.path for fv in loose.files] == ["pkg/sm_80.cubin", "pkg/sm_90.cubin"]
    assert loose.status is Status.PARTIAL  # the sm_80 cubin is a file without code for 9.0
    ungated = evaluate_package("pkg", cubins, gpu("9.0"), gating=False)
    assert [fv.path for fv in ungated.files] == ["pkg/sm_80.cubin", "pkg/sm_90.cubin"]


counts_strategy = st.builds(Counts, *[st.integers(0, 5)] * 6)


@given(counts_strategy, st.sampled_from(sorted(COUNTED)), st.sampled_from(sorted(COUNTED)))
def test_moving_counts_keeps_the_total(c: Counts, source: Status, target: Status) -> None:
    moved = c.moved(source, target)
    assert moved.total == c.total
    if source is not target:
        assert moved.of(source) == 0
        assert moved.of(target) == c.of(target) + c.of(source)
    assert count_of([source], 3).of(source) == 3
    assert c + Counts() == c


def test_counts_of_statuses_and_their_combination() -> None:
    c = count_of([Status.NATIVE, Status.FAILS, Status.NONE, Status.KERNEL_LESS, Status.FAILS])
    assert (c.native, c.fails, c.kernel_less, c.total) == (1, 2, 1, 4)  # none is not code
    assert combine_counts(c) is Status.PARTIAL
    assert combine_counts(count_of([Status.KERNEL_LESS])) is Status.NONE
    assert combine_counts(count_of([Status.GATED])) is Status.FAILS
    assert combine_counts(Counts()) is Status.NONE


def test_lazy_sequence_builds_once_on_first_use() -> None:
    calls: list[int] = []

    def build() -> tuple[int, ...]:
        calls.append(1)
        return (1, 2, 3)

    seq = LazySequence(build)
    assert repr(seq) == "LazySequence(not built)" and calls == []
    assert seq == [1, 2, 3] and seq[1] == 2 and seq[1:] == (2, 3) and len(seq) == 3
    assert list(seq) == [1, 2, 3] and hash(seq) == hash((1, 2, 3))
    assert calls == [1]


def _verdict(status: Status) -> PackageVerdict:
    return PackageVerdict("p", gpu("9.0"), status, Counts(), ())


def test_run_time_code_folds_in_the_worse_status_and_never_an_unknown() -> None:
    c = RuntimeCompiler("ptxas")
    unknown = RuntimeJudgement(c, "unknown", "runtime-compiler-version-unknown", "?", "src")
    jit = RuntimeJudgement(c, "jit", "runtime-compiler-ptx", "ptx", "src")
    fails = RuntimeJudgement(c, "fails", "runtime-compiler-too-old", "old", "src")
    assert with_runtime(_verdict(Status.NATIVE), unknown) == _verdict(Status.NATIVE)
    assert with_runtime(_verdict(Status.NATIVE), None) == _verdict(Status.NATIVE)
    assert with_runtime(_verdict(Status.NATIVE), jit).status is Status.JIT
    assert with_runtime(_verdict(Status.PARTIAL), jit).status is Status.PARTIAL
    assert with_runtime(_verdict(Status.NONE), fails).status is Status.FAILS
    assert with_runtime(_verdict(Status.JIT), fails).reasons[-1].code == "runtime-compiler-too-old"


def test_a_compiler_of_unread_version_never_leads_a_package_judgement() -> None:
    """Worst first, but ``unknown`` below ``native``: an unread version must not hide a known answer."""
    from cudafit.model import ComputeCapability, CudaVersion

    known = RuntimeCompiler("ptxas", CudaVersion(12, 8), where="a")
    unread = RuntimeCompiler("nvrtc", where="b")
    j = judge_package((unread, known), ComputeCapability(9, 0))
    assert j is not None
    assert (j.status, j.compiler) == ("native", known)
    assert [o.status for o in j.others] == ["unknown"]
