"""Module roles (rules/roles.py): each rule on synthetic modules, with a fake kernel-name source."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests.test_rules_engine import module

from cudafit.binary.facts import BinaryFacts, FileFormat, Module
from cudafit.model import parse_compute_capability
from cudafit.rules import roles
from cudafit.rules.engine import Gpu, PreparedFile, Status, evaluate_file, evaluate_package

BIN = Path(__file__).parent / "fixtures" / "bin"


def lib(*mods: Module, path: str = "lib.so") -> BinaryFacts:
    # distinct offsets: kernel names are looked up per module
    placed = tuple(Module(i * 4096, 4096, m.section, m.entries) for i, m in enumerate(mods))
    return BinaryFacts(path, FileFormat.ELF_SHARED, 0, placed)


def names_by_index(table: dict[int, tuple[str, ...] | None]) -> Callable[[Module], tuple[str, ...] | None]:
    """A fake kernel-name source: module offset // 4096 -> names; records every lookup."""
    seen: list[int] = []

    def lookup(m: Module) -> tuple[str, ...] | None:
        seen.append(m.offset // 4096)
        return table.get(m.offset // 4096, ("kernel",))

    lookup.seen = seen  # type: ignore[attr-defined]
    return lookup


def gpu(cc: str) -> Gpu:
    return Gpu(cc, parse_compute_capability(cc))


GENERAL = ("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")


def statuses(facts: BinaryFacts, cc: str, names: Callable[[Module], tuple[str, ...] | None] | None = None) -> list[str]:
    v = evaluate_file(PreparedFile(facts, names), gpu(cc))
    return [m.status.value for m in v.modules]


@pytest.mark.parametrize(
    ("extra", "cc", "status", "code"),
    [
        (("sm_100",), "9.0", "specialised", "specialised-generation"),  # cuBLASLt's 780 sm_100-only modules
        (("sm_75",), "8.6", "specialised", "specialised-generation"),  # cuDNN's 57 sm_75-only modules
        (("sm_120", "compute_120"), "9.0", "specialised", "specialised-generation"),
        (("sm_80", "sm_86", "sm_90", "sm_100", "sm_120"), "7.5", "specialised", "specialised-newer"),
        (("sm_89", "sm_120f", "compute_120"), "9.0", "specialised", "specialised-other-build"),  # cuBLASLt fp8
        (("sm_90", "sm_100"), "12.0", "specialised", "specialised-other-build"),  # datacenter-only pair
        (("sm_75", "sm_80", "sm_86", "sm_100", "sm_120"), "9.0", "fails", "hole-build-skips-gpu"),  # skips 9.0
        (("sm_75", "sm_80", "sm_86", "sm_90", "sm_100"), "12.0", "fails", "hole-build-skips-gpu"),  # stops short
        (("sm_75", "sm_90", "sm_100", "sm_120"), "8.6", "fails", "hole-build-skips-gpu"),  # skips Ampere
        (("sm_90a",), "8.6", "gated", "built-only-for-other-gpus"),
    ],
)
def test_role_rules(extra: tuple[str, ...], cc: str, status: str, code: str) -> None:
    facts = lib(module(*GENERAL), module(*GENERAL), module(*extra))
    v = evaluate_file(PreparedFile(facts, names_by_index({})), gpu(cc))
    assert [m.status.value for m in v.modules] == ["native", "native", status]
    assert v.modules[2].reasons[0].code == code
    assert v.status.value == ("partial" if status == "fails" else "native")


def test_names_decide_only_candidate_holes() -> None:
    """Kernel names are read only for modules that look like holes (and, to find stubs, serving ones)."""
    facts = lib(module(*GENERAL), module("sm_100"), module("sm_75", "sm_80", "sm_100", "sm_120"))
    lookup = names_by_index({2: ("sm80_xmma_gemm_bf16_kernel", "ampere_sgemm_128x64")})
    assert statuses(facts, "9.0", lookup) == ["native", "specialised", "specialised"]
    assert sorted(set(lookup.seen)) == [0, 2]  # the serving module (stub check) and the candidate hole
    v = evaluate_file(PreparedFile(facts, lookup), gpu("9.0"))
    assert v.modules[2].reasons[0].code == "specialised-named"
    assert v.modules[2].kernels == ("sm80_xmma_gemm_bf16_kernel", "ampere_sgemm_128x64")


def test_a_kernel_naming_this_gpu_keeps_the_hole() -> None:
    facts = lib(module(*GENERAL), module("sm_75", "sm_80", "sm_100", "sm_120"))
    lookup = names_by_index({1: ("sm80_xmma_gemm", "generic_rmsnorm_kernel")})
    assert statuses(facts, "9.0", lookup) == ["native", "fails"]


def test_kernel_less_module_is_not_a_hole() -> None:
    """A library whose only gap is a kernel-less (link/registration) module is native."""
    facts = lib(module(*GENERAL), module("sm_75", "sm_90", "sm_100", "sm_120"))
    v = evaluate_file(PreparedFile(facts, names_by_index({1: ()})), gpu("8.6"))
    assert v.status is Status.NATIVE
    assert (v.counts.native, v.counts.kernel_less) == (1, 1)
    assert v.modules[1].reasons[0].code == "kernel-less-module"


def test_registration_stub_is_not_code_for_the_gpu() -> None:
    """An extension built for 8.0+ with nvcc's sm_75 registration stub: on a T4 nothing runs."""
    facts = lib(module("sm_75"), module("sm_80", "sm_90"), module("sm_80", "sm_90"))
    v = evaluate_file(PreparedFile(facts, names_by_index({0: ()})), gpu("7.5"))
    assert v.status is Status.FAILS
    assert [m.status.value for m in v.modules] == ["kernel-less", "fails", "fails"]
    # Without names (a member too large to re-read) the stub counts as code: honest about the unknown.
    unknown = evaluate_file(PreparedFile(facts, None), gpu("7.5"))
    assert unknown.status is Status.NATIVE


def test_unknown_names_keep_a_candidate_hole() -> None:
    facts = lib(module(*GENERAL), module("sm_75", "sm_80", "sm_100", "sm_120"))
    assert statuses(facts, "9.0", None) == ["native", "fails"]


def test_file_without_code_beside_files_that_run_is_a_gap() -> None:
    """libtorch_cuda_linalg.so's MAGMA modules (sm_80..sm_120) on a T4, beside libtorch_cuda.so (sm_75..)."""
    main = lib(module(*GENERAL), path="libtorch_cuda.so")
    linalg = lib(*(module("sm_80", "sm_86", "sm_90", "sm_100", "sm_120") for _ in range(3)), path="linalg.so")
    v = evaluate_package("torch", [main, linalg], gpu("7.5"))
    assert v.status is Status.PARTIAL
    assert v.counts.fails == 3
    gap = [r for r in v.reasons if r.code == "hole-file-without-code"]
    assert gap and "linalg.so" in gap[0].message
    assert evaluate_package("torch", [main, linalg], gpu("8.0")).status is Status.NATIVE


def test_only_kernel_less_modules_is_none() -> None:
    facts = lib(module("sm_75"))
    v = evaluate_file(PreparedFile(facts, names_by_index({0: ()})), gpu("8.0"))
    assert v.status is Status.NONE


@pytest.mark.parametrize(
    ("name", "tags"),
    [
        ("sm80_xmma_gemm_bf16bf16_bf16f32", {80}),
        ("cublasLt_fused_imma_dgemm_kernel_sm90", {90}),
        ("fmhaSm100fKernel_QBfloat16KvE4m3", {100}),
        ("_ZN7cutlass6KernelI48cutlass_80_simt_sgemm_grouped_128x128_8x4EEvNT_6ParamsE", {80}),
        ("_ZN7cutlass4arch4Sm90E", {90}),
        ("volta_cgemm_int8_32x32_cc", {70}),
        ("_ZN3cub43CUB_300001_SM_750_800_860_890_900_1000_12006detail11EmptyKernelIvEEvv", set()),
        ("asm80_not_a_tag", set()),
        ("_Z18zlacpy_conj_kerneliP7double2iS0_i", set()),
    ],
)
def test_kernel_arch_tags(name: str, tags: set[int]) -> None:
    assert roles.kernel_arch_tags(name) == frozenset(tags)


def test_libroles_fixture_end_to_end() -> None:
    """libroles.so (tests/fixtures/build.sh): five nvcc-built modules, one per role, judged with real kernel
    names read from the cubins (the kernel-less module and the hole are told apart by decompressing them)."""
    import json
    import subprocess
    import sys

    import jsonschema
    from tests.test_cli_check import BIN, SCHEMA

    lib = str(BIN / "libroles.so")
    gpus = ["T4", "A100", "H100", "B200", "RTX 5090"]
    cmd = [sys.executable, "-m", "cudafit", "check", lib, "--json", "--kernels", "--no-probe", "--no-cache"]
    for g in gpus:
        cmd += ["--gpu", g]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, SCHEMA)
    (target,) = doc["targets"]
    by_gpu = {doc["gpus"][v["gpu"]]["compute_capability"]: v for v in target["verdicts"]}
    assert {cc: v["status"] for cc, v in by_gpu.items()} == {
        "7.5": "native",  # the 8.0+ module is specialised, the sm_90a one gated
        "8.0": "native",  # the kernel-less module (general list minus 8.x) launches nothing
        "9.0": "partial",  # the general list minus 9.0: a hole
        "10.0": "native",
        "12.0": "fails",  # nothing for 12.0 and no PTX
    }
    assert by_gpu["8.0"]["counts"]["kernel_less"] == 1
    assert by_gpu["7.5"]["counts"]["specialised"] == 1
    (hole,) = [r for r in by_gpu["9.0"]["without_code"] if r["status"] == "fails"]
    assert hole["reason"] == "hole-build-skips-gpu"
    assert hole["sass"] == ["sm_75", "sm_80", "sm_100"]
    assert hole["kernels"] == ["_Z18gemma_rmsnorm_likePff"]
    spec = [r for r in by_gpu["7.5"]["without_code"] if r["status"] == "specialised"]
    assert spec[0]["kernels"] == ["_Z20newer_only_bf16_pathPf"]
    # internal-linkage kernels (anonymous namespace: STB_LOCAL entries) are kernels too
    common = [r for r in by_gpu["12.0"]["without_code"] if r["module"] == 0]
    assert any("local_axpy" in k for k in common[0]["kernels"])


def test_kernels_listing_with_a_library_loaded_pool(tmp_path: Path) -> None:
    """--kernels on a distribution that ships loose cubins (pooled) next to a library."""
    import subprocess
    import sys
    import zipfile

    whl = tmp_path / "pool-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as zf:
        zf.writestr("pool-1.0.dist-info/METADATA", "Name: pool\nVersion: 1.0\n")
        zf.writestr("pool-1.0.dist-info/RECORD", "")
        zf.write(BIN / "libroles.so", "pool/libroles.so")
        zf.write(BIN / "k_sm90a.cubin", "pool/cubins/a.cubin")
        zf.write(BIN / "k_sm90a.cubin", "pool/cubins/b.cubin")
    cmd = [sys.executable, "-m", "cudafit", "check", str(whl), "--gpu", "H100", "--no-probe", "--no-cache", "--kernels"]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert "internal error" not in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert "gemma_rmsnorm_like" in p.stdout
