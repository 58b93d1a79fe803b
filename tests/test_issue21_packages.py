"""Issue 21's examples on the real binaries' recorded shapes (tests/fixtures/libraries, recorded from the PyPI
wheels by scripts/record_library_shapes.py): whole-package verdicts, the driver floor, and the table and
"What to do" agreeing.  The opt-in tests/realwheels/test_issue21_real.py checks the same on the wheels."""

from __future__ import annotations

from typing import Any

import pytest
from tests.test_roles_libraries import load, python_modules, replay

from cudafit.analysis import Analysis, PackageResult
from cudafit.model import DriverVersion, parse_driver_version
from cudafit.probe import declared_inventory
from cudafit.report.check import _gpu_label, check_document, iter_action_groups
from cudafit.rules.engine import Gpu, PackageVerdict, Status, evaluate_package


def gpus(*names: str) -> list[Gpu]:
    inv, errors = declared_inventory(list(names))
    assert not errors
    return [Gpu(d.name, d.compute_capability, i) for i, d in enumerate(inv.devices) if d.compute_capability]


def judge(label: str, names: tuple[str, ...], driver: str | None = None) -> dict[str, list[PackageVerdict]]:
    doc = load(label)
    pys = python_modules(doc)
    drv = parse_driver_version(driver) if driver else None
    return {
        name: [evaluate_package(name, files, g, driver=drv, python_modules=pys[name]) for g in gpus(*names)]
        for name, files in replay(doc)
    }


def document(label: str, names: tuple[str, ...], driver: str | None = None) -> dict[str, Any]:
    """The ``cudafit.check/1`` document ``check``/``doctor`` would print for the recorded library."""
    doc = load(label)
    pys = python_modules(doc)
    drv: DriverVersion | None = parse_driver_version(driver) if driver else None
    targets = gpus(*names)
    packages = []
    for name, files in replay(doc):
        verdicts = tuple(evaluate_package(name, files, g, driver=drv, python_modules=pys[name]) for g in targets)
        dist, version = name.rsplit(" ", 1)
        facts = tuple(p.facts for p in files)
        packages.append(PackageResult(dist, version, "/site", facts, verdicts, {}, python_modules=pys[name]))
    return check_document(Analysis(tuple(targets), tuple(packages), drv, True))


def test_1_torch_28_cannot_run_on_pascal() -> None:
    """PyPI's torch 2.8.0 (CUDA 12.8, sm_70..sm_120) on a GTX 1080 Ti: only MAGMA in libtorch_cuda_linalg.so
    has sm_50/sm_60 code, and that file loads libtorch_cuda.so, which has nothing for 6.1: fails."""
    (v,) = judge("torch-2.8.0", ("GTX 1080 Ti",))["torch 2.8.0"]
    assert v.status is Status.FAILS
    assert "needs-failing-file" in {r.code for r in v.reasons}
    doc = document("torch-2.8.0", ("GTX 1080 Ti", "V100"))
    assert [x["status"] for x in doc["targets"][0]["verdicts"]] == ["fails", "native"]
    (fix,) = doc["targets"][0]["fixes"]
    assert fix.startswith("install a build of torch that carries sm_61 code")
    assert "cudafit find 'torch' --gpu 6.1" in fix


def test_2_helper_modules_do_not_decide() -> None:
    """xformers 0.0.33.post1: FlashAttention 3's file has one helper module (prepare_varlen_num_blocks_kernel,
    no arch in its name) beside 152 modules named Sm80/Sm90: on a T4 the file is information, not a hole."""
    (v,) = judge("xformers-0.0.33.post1", ("T4",))["xformers 0.0.33.post1"]
    assert v.status is Status.NATIVE
    fa3 = next(f for f in v.files if f.path.endswith("flash_attn_3/_C.so"))
    assert fa3.status is Status.SPECIALISED and fa3.counts.fails == 0 and fa3.counts.specialised == 153
    assert fa3.reasons[0].code == "specialised-file"


@pytest.mark.parametrize("label", ["fbgemm-gpu-1.9.0", "torch-2.14.1-stack"])
def test_3_driver_floor_is_the_package_s(label: str) -> None:
    """CUDA 13 code on a 570 driver: every package with CUDA 13 evidence fails, with one fix, the driver floor
    (fbgemm links libcudart.so.13; the nvidia-*-cu13 libraries carry CUDA 13 PTX or say cu13 in their name)."""
    verdicts = judge(label, ("L4",), "570.124.06")
    doc = document(label, ("L4",), "570.124.06")
    for t in doc["targets"]:
        name = f"{t['name']} {t['version']}"
        (v,) = verdicts[name]
        if v.status is Status.NONE:
            continue  # nvidia-cuda-runtime: no device code
        assert v.status is Status.FAILS, name
        assert v.reasons[0].code == "driver-too-old-for-runtime" and v.reasons[0].data is not None
        assert (v.reasons[0].data.driver_floor, v.reasons[0].data.cuda_major) == (580, 13)
        assert len(t["fixes"]) == 1 and "580 branch" in t["fixes"][0], name


def test_3_changing_only_the_driver_never_changes_the_arch_asked_for() -> None:
    """torch 2.14.1 (CUDA 13) on an RTX 2080 with driver 535: the fix is the driver, never a build with sm_75
    (the installed torch has it)."""
    old = document("torch-2.14.1-stack", ("RTX 2080",), "535.183.01")
    torch = next(t for t in old["targets"] if t["name"] == "torch")
    assert torch["fixes"] == [
        "upgrade the NVIDIA driver to the 580 branch or newer (this package's CUDA 13 runtime needs it), "
        "or install a build for an older CUDA major"
    ]
    new = document("torch-2.14.1-stack", ("RTX 2080",), "580.65.06")
    torch = next(t for t in new["targets"] if t["name"] == "torch")
    # with 580: the MAGMA file's real gap on 7.5, never "a build that carries sm_75"
    assert torch["verdicts"][0]["status"] == "partial"
    assert not any("carries sm_75" in f for f in torch["fixes"])
    assert torch["fixes"][0].startswith("65 module(s) of torch have no code for 7.5")


@pytest.mark.parametrize(
    ("label", "gpu", "status"),
    [
        ("torchao-0.18.0", "A100", "none"),  # sm_90a + sm_100 extensions beside 500+ Python modules
        ("torchao-0.18.0", "H100", "native"),
        ("vllm-0.33.0", "RTX 2080", "native"),  # FlashAttention 2 (sm_80 + compute_80) is information
        ("xformers-0.0.33.post1", "T4", "native"),  # FlashAttention 3
        ("fbgemm-gpu-1.9.0", "GTX 1080 Ti", "fails"),  # no file of the package has code for 6.1
        ("fbgemm-gpu-1.9.0", "T4", "fails"),
        ("torch-2.14.1-stack", "T4", "partial"),  # MAGMA (sm_80..sm_120, untagged kernels): a real hole
    ],
)
def test_4_other_generation_files_are_information(label: str, gpu: str, status: str) -> None:
    name = {"torch-2.14.1-stack": "torch 2.14.1"}.get(label) or next(iter(judge(label, (gpu,))))
    (v,) = judge(label, (gpu,))[name]
    assert v.status.value == status


def test_11_every_non_native_cell_has_one_fix_entry_under_its_own_status() -> None:
    """doctor --gpu V100 on the torch 2.14.1 stack: nvidia-cufft fails with a fix; nvidia-cusparse is partial
    and listed under partial; each (package, GPU) appears once."""
    names = ("V100", "T4", "GTX 1080 Ti", "H100", "B200")
    doc = document("torch-2.14.1-stack", names)
    groups = dict(iter_action_groups(doc))
    labels = [_gpu_label(g) for g in doc["gpus"]]
    for t in doc["targets"]:
        for v in t["verdicts"]:
            if v["status"] in ("native", "none"):
                continue
            entries = [(sev, msgs) for sev, pkgs, msgs in groups[labels[v["gpu"]]] if t["name"] in pkgs.split(", ")]
            assert len(entries) == 1, (t["name"], v["gpu"], entries)
            assert entries[0][0] == v["status"] and entries[0][1], (t["name"], v["gpu"])
    v100 = groups[labels[0]]
    assert any("nvidia-cufft" in pkgs.split(", ") and sev == "fails" for sev, pkgs, _m in v100)
    assert any("nvidia-cusparse" in pkgs.split(", ") and sev == "partial" for sev, pkgs, _m in v100)


def test_2_a_ptx_only_helper_file_does_not_make_a_package_jit() -> None:
    """A bundled library's tiny PTX-only stub (no SASS for any GPU) beside files with SASS for the GPU is
    information; a large PTX-only file (real kernels run by JIT) still makes the package jit."""
    from cudafit.binary.facts import BinaryFacts, Compression, EntryKind, FatbinEntry, FileFormat, Module
    from cudafit.model import ArchVariant

    def facts(path: str, kind: EntryKind, number: int, size: int) -> BinaryFacts:
        e = FatbinEntry(kind, number, ArchVariant.NONE, (8, 0), 0x11, Compression.NONE, 0, 64, 64, size, 0, 0)
        return BinaryFacts(path, FileFormat.ELF_SHARED, 0, (Module(0, size, ".nv_fatbin", (e,)),))

    (gpu,) = gpus("RTX 3090")
    main = facts("pkg/_C.so", EntryKind.SASS, 86, 1 << 20)
    stub = facts("pkg.libs/libdetect.so", EntryKind.PTX, 52, 4096)
    v = evaluate_package("pkg", [main, stub], gpu)
    assert v.status is Status.NATIVE
    assert [r.code for r in v.reasons] == ["specialised-file"]
    big = facts("pkg.libs/libkernels.so", EntryKind.PTX, 52, 1 << 20)
    assert evaluate_package("pkg", [main, big], gpu).status is Status.JIT


@pytest.mark.parametrize(
    ("label", "name", "status"),
    [
        ("vllm-0.33.0", "vllm 0.33.0", "fails"),  # links libcudart.so.13
        ("xformers-0.0.33.post1", "xformers 0.0.33.post1", "native"),  # CUDA 12 (libcudart.so.12, PTX ISA 8.7)
        ("torch-2.8.0", "torch 2.8.0", "native"),  # CUDA 12.8: 570 is its own driver branch
    ],
)
def test_3_only_cuda_13_packages_need_the_580_branch(label: str, name: str, status: str) -> None:
    (v,) = judge(label, ("L4",), "570.124.06")[name]
    assert v.status.value == status
