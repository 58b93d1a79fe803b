"""Fix lines for the seed scenarios, word for word: right package, right arch list, one heading per GPU.

Facts are built with tests/builders.py (a host .so with one .nv_fatbin and, where the scenario has
one, a DT_NEEDED on libcudart.so.N) and read by the real binary layer; the verdicts come from the
real engine.  tests/realwheels/ checks the same lines on the real fbgemm-gpu 1.9.0 wheel (opt-in).
"""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from builders import BASE_FLAGS, FLAG_A, FLAG_F, elf, entry, fatbin
from cudafit.analysis import analyze
from cudafit.binary import inspect_path
from cudafit.fixes import can_target, cuda_major_of
from cudafit.model import ComputeCapability, Gpu
from cudafit.report.check import check_document, render_text
from cudafit.targets.interface import ScanItem

GTX_1080_TI = Gpu("GeForce GTX 1080 Ti", ComputeCapability(6, 1))
RTX_5090 = Gpu("GeForce RTX 5090", ComputeCapability(12, 0))
H100 = Gpu("NVIDIA H100 SXM5", ComputeCapability(9, 0))
RTX_2080 = Gpu("GeForce RTX 2080", ComputeCapability(7, 5))
RTX_3090 = Gpu("GeForce RTX 3090", ComputeCapability(8, 6))



def lib(path: Path, *archs: tuple[int, int, int], needed: tuple[str, ...] = ()) -> Path:
    """A .so whose one fatbin holds (kind, arch, variant flags) entries; PTX entries carry ISA 9.0."""
    entries = [entry(k, a, flags=BASE_FLAGS | f, code_version=(9, 0) if k == 1 else (1, 8)) for k, a, f in archs]
    path.write_bytes(elf([(".nv_fatbin", fatbin(*entries))], needed=needed))
    return path


def item(path: Path, package: str | None, version: str | None) -> ScanItem:
    return ScanItem(package, version, str(path), inspect_path(str(path)))


def actions(doc: dict[str, object]) -> list[tuple[int, str, str, str]]:
    return [(a["gpu"], a["severity"], a["package"], a["message"]) for a in doc["actions"]]  # type: ignore[attr-defined]


def fbgemm_doc(tmp_path: Path) -> dict[str, object]:
    """fbgemm-gpu 1.9.0 as its wheel is: sm_80, sm_90a, sm_100f SASS, no PTX, linking libcudart.so.13."""
    archs = ((2, 80, 0), (2, 90, FLAG_A), (2, 100, FLAG_F))
    items = [
        item(lib(tmp_path / "fbgemm_gpu_py.so", *archs), "fbgemm_gpu", "1.9.0"),
        item(
            lib(tmp_path / "fbgemm_gpu_tbe_utils.so", *archs, needed=("libc10_cuda.so", "libcudart.so.13")),
            "fbgemm_gpu",
            "1.9.0",
        ),
    ]
    return check_document(analyze(items, [GTX_1080_TI, RTX_5090, H100]))


SEED_004_ACTIONS = [
    (0, "fails", "fbgemm_gpu", "CUDA 13 cannot target 6.1: use a build made with CUDA 12.x, or another GPU"),
    (
        0,
        "fails",
        "fbgemm_gpu",
        "find a CUDA 12.x build of fbgemm_gpu that runs here: cudafit find 'fbgemm_gpu' --gpu 6.1",
    ),
    (
        1,
        "fails",
        "fbgemm_gpu",
        "find the build of fbgemm_gpu that carries sm_120 code: cudafit find 'fbgemm_gpu' --gpu 12.0",
    ),
    (
        1,
        "fails",
        "fbgemm_gpu",
        'or rebuild fbgemm_gpu with CUDA 13.x for these GPUs: TORCH_CUDA_ARCH_LIST="9.0;12.0+PTX" pip install '
        "--no-binary fbgemm_gpu --no-build-isolation 'fbgemm_gpu==1.9.0' (adds 12.0 and keeps 9.0, which runs "
        "today; CUDA 13 cannot target 6.1; plan: cudafit plan --cuda 13.0 --gpu 9.0 --gpu 12.0; whether PyPI has "
        "a source distribution of fbgemm_gpu==1.9.0 could not be checked)",
    ),
]


def test_seed_004_fix_lines(tmp_path: Path) -> None:
    doc = fbgemm_doc(tmp_path)
    (t,) = doc["targets"]  # type: ignore[misc]
    assert [v["status"] for v in t["verdicts"]] == ["fails", "fails", "native"]
    assert actions(doc) == SEED_004_ACTIONS
    assert t["fixes"] == [a[3] for a in SEED_004_ACTIONS]


def test_seed_004_every_command_names_the_package(tmp_path: Path) -> None:
    for _gpu, _sev, _pkg, message in actions(fbgemm_doc(tmp_path)):
        for command in ("cudafit check", "pip install"):
            if command in message:
                assert "fbgemm_gpu" in message.split(command, 1)[1]
        assert "check torch" not in message


def test_seed_004_text_has_one_heading_per_gpu(tmp_path: Path) -> None:
    buf = io.StringIO()
    render_text(fbgemm_doc(tmp_path), Console(file=buf, width=100, color_system=None))
    out = buf.getvalue()
    what = out[out.index("What to do") :]
    assert what.count("GeForce RTX 5090 (12.0)") == 1
    assert what.count("GeForce GTX 1080 Ti (6.1)") == 1
    assert "NVIDIA H100" not in what  # native there: nothing to do
    lines = what.splitlines()
    head = lines.index("  GeForce RTX 5090 (12.0)")
    assert lines[head + 1] == "    fails fbgemm_gpu:"
    assert lines[head + 2].startswith("      find the build of fbgemm_gpu that carries sm_120 code")
    assert any(line.startswith("      or rebuild fbgemm_gpu with CUDA 13.x") for line in lines[head + 3 :])


def test_seed_001_distribution(tmp_path: Path) -> None:
    """libfoo built only for sm_75 (no PTX, static runtime) on a 2080 + 3090 host: the seed's 7.5;8.6."""
    doc = check_document(
        analyze([item(lib(tmp_path / "libfoo.so", (2, 75, 0)), "libfoo", "1.0")], [RTX_2080, RTX_3090])
    )
    assert actions(doc) == [
        (
            1,
            "fails",
            "libfoo",
            "find the build of libfoo that carries sm_86 code: cudafit find 'libfoo' --gpu 8.6",
        ),
        (
            1,
            "fails",
            "libfoo",
            'or rebuild libfoo for these GPUs: CUDAARCHS="75-real;86" pip install --no-binary libfoo '
            "--no-build-isolation 'libfoo==1.0' (adds 8.6 and keeps 7.5, which runs today; "
            "plan: cudafit plan --gpu 7.5 --gpu 8.6; whether PyPI has a source distribution of libfoo==1.0 could "
            "not be checked)",
        ),
    ]


def test_seed_001_loose_binaries(tmp_path: Path) -> None:
    where = tmp_path / "build"
    where.mkdir()
    path = lib(where / "libfoo.so", (2, 75, 0), needed=("libcudart.so.12",))
    doc = check_document(analyze([item(path, None, None)], [RTX_2080, RTX_3090]))
    assert actions(doc) == [
        (
            1,
            "fails",
            str(where),
            f"rebuild the binaries in {where} with CUDA 12.x for these GPUs: nvcc -gencode arch=compute_75,code=sm_75 "
            "-gencode arch=compute_86,code=sm_86 -gencode arch=compute_86,code=compute_86 (adds 8.6 and keeps 7.5, "
            "which runs today; plan: cudafit plan --cuda 12.0 --gpu 7.5 --gpu 8.6)",
        )
    ]


def test_a_cuda12_build_needs_12_8_for_blackwell(tmp_path: Path) -> None:
    path = lib(tmp_path / "libbar.so", (2, 80, 0), (2, 90, 0), needed=("libcudart.so.12", "libc10.so"))
    doc = check_document(analyze([item(path, "bar", "2.0")], [H100, RTX_5090]))
    (rebuild,) = [a[3] for a in actions(doc) if "rebuild" in a[3]]
    assert rebuild.startswith(  # a PyTorch extension (links libc10): PyTorch's switch
        'or rebuild bar with CUDA 12.x >= 12.8 for these GPUs: TORCH_CUDA_ARCH_LIST="9.0;12.0+PTX"'
    )
    assert "plan: cudafit plan --cuda 12.8 --gpu 9.0 --gpu 12.0;" in rebuild


def test_rebuild_lines_name_the_build_switch_and_need_an_sdist(tmp_path: Path) -> None:
    """Item 7 of issue 21: the switch the project's build reads, and --no-binary only with an sdist on the index
    (asked once from PyPI's JSON API, remembered in the cache; here the cache answers)."""
    import json
    import os

    from cudafit.fixes import OWN_SWITCHES, build_switch_of
    from cudafit.targets.cache import cache_dir

    answers = {"fbgemm-gpu==1.9.0": False, "bar==2.0": True}
    os.makedirs(cache_dir(), exist_ok=True)
    with open(os.path.join(cache_dir(), "pypi-sdists.json"), "w", encoding="utf-8") as fh:
        json.dump(answers, fh)
    try:
        doc = fbgemm_doc(tmp_path)
        (rebuild,) = [a[3] for a in actions(doc) if "rebuild" in a[3]]
        assert "--no-binary" not in rebuild
        assert "from its source repository (fbgemm_gpu==1.9.0 publishes no source distribution on PyPI)" in rebuild
        path = lib(tmp_path / "libbar.so", (2, 80, 0), (2, 90, 0), needed=("libcudart.so.12",))
        doc = check_document(analyze([item(path, "bar", "2.0")], [H100, RTX_5090]))
        (rebuild,) = [a[3] for a in actions(doc) if "rebuild" in a[3]]
        assert 'CUDAARCHS="90-real;120" pip install --no-binary bar' in rebuild and "could not" not in rebuild
    finally:
        os.remove(os.path.join(cache_dir(), "pypi-sdists.json"))
    assert build_switch_of("spconv-cu126", []) is OWN_SWITCHES["spconv*"]
    assert build_switch_of("flash_attn", []).variable == "FLASH_ATTN_CUDA_ARCHS"


def test_torch_on_pascal_points_at_the_cuda12_index(tmp_path: Path) -> None:
    path = lib(tmp_path / "libtorch_cuda.so", (2, 75, 0), (2, 80, 0), (2, 90, 0), needed=("libcudart.so.13",))
    doc = check_document(analyze([item(path, "torch", "2.14.1")], [GTX_1080_TI]))
    assert [a[3] for a in actions(doc)] == [
        "CUDA 13 cannot target 6.1: use a build made with CUDA 12.x, or another GPU",
        "find a CUDA 12.x build of torch that runs here: cudafit find 'torch' --gpu 6.1",
    ]


def test_nvidia_libraries_share_the_root_cause_line(tmp_path: Path) -> None:
    items = []
    for name in ("nvidia-cublas", "nvidia-cufft"):
        (tmp_path / name).mkdir()
        items.append(item(lib(tmp_path / name / "lib.so", (2, 75, 0), needed=("libcudart.so.13",)), name, "13.0"))
    doc = check_document(analyze(items, [GTX_1080_TI]))
    assert actions(doc) == [
        (
            0,
            "fails",
            "nvidia-cublas, nvidia-cufft",
            "CUDA 13 cannot target 6.1: use a build made with CUDA 12.x, or another GPU",
        )
    ]


def test_a_gpu_no_known_toolkit_targets(tmp_path: Path) -> None:
    kepler = Gpu("GeForce GTX 680", ComputeCapability(3, 0))
    doc = check_document(analyze([item(lib(tmp_path / "x.so", (2, 75, 0)), "x", "1")], [kepler]))
    assert [a[3] for a in actions(doc)] == [
        "no CUDA toolkit from 11.8 on can target 3.0 (the last was CUDA 10.2): use another GPU"
    ]


def test_cuda_major_evidence(tmp_path: Path) -> None:
    linked = inspect_path(str(lib(tmp_path / "a.so", (2, 80, 0), needed=("libcudart.so.12",))))
    ptx_only = inspect_path(str(lib(tmp_path / "b.so", (1, 80, 0))))
    static = inspect_path(str(lib(tmp_path / "c.so", (2, 80, 0))))
    assert cuda_major_of([linked]) == cuda_major_of([linked, ptx_only]) is not None
    assert (cuda_major_of([linked]).major, cuda_major_of([linked]).evidence) == (12, "libcudart.so.12")  # type: ignore[union-attr]
    assert (cuda_major_of([ptx_only]).major, cuda_major_of([ptx_only]).evidence) == (13, "PTX ISA 9.0")  # type: ignore[union-attr]
    assert cuda_major_of([static]) is None
    assert not can_target(13, ComputeCapability(6, 1))
    assert can_target(12, ComputeCapability(6, 1))
    assert can_target(12, ComputeCapability(12, 0))  # from 12.8
    assert can_target(None, ComputeCapability(3, 5))  # 11.8


def test_a_hole_in_a_bundled_nvidia_library_names_the_library(tmp_path: Path) -> None:
    """torchvision-like: its own extension runs, the nvjpeg it bundles has no code for the GPU: the fix names
    nvjpeg and never asks for a rebuild of the package."""
    libs = tmp_path / "torchvision.libs"
    libs.mkdir()
    own = lib(tmp_path / "_C.so", (2, 75, 0), (2, 86, 0), needed=("libc10.so",))
    nvjpeg = lib(libs / "libnvjpeg-2b1b3b8d.so.12", (2, 75, 0), needed=("libcudart.so.12",))  # skips 8.6
    items = [item(own, "torchvision", "0.23.0"), item(nvjpeg, "torchvision", "0.23.0")]
    doc = check_document(analyze(items, [RTX_3090]))
    (t,) = doc["targets"]  # type: ignore[misc]
    assert t["verdicts"][0]["status"] == "partial"
    (fix,) = t["fixes"]
    assert fix.startswith("the NVIDIA library torchvision bundles, nvjpeg (")
    assert "rebuilding torchvision does not change it" in fix and "pip install" not in fix


def test_a_wheel_for_another_platform_says_so_first(tmp_path: Path) -> None:
    """An x86_64 wheel judged for a Jetson (aarch64): the first fix line says it cannot be installed there."""
    from cudafit.fixes import fixes_for
    from cudafit.rules.engine import evaluate_package

    orin = Gpu("Jetson AGX Orin", ComputeCapability(8, 7))
    facts = inspect_path(str(lib(tmp_path / "core_cc.so", (2, 86, 0))))
    verdict = evaluate_package("spconv-cu126", [facts], orin)
    path = str(tmp_path / "spconv_cu126-2.3.8-cp311-cp311-manylinux_2_28_x86_64.whl")
    fixes = fixes_for("spconv-cu126", "2.3.8", orin, verdict, all_gpus=[orin], path=path)
    assert verdict.status.value == "fails"  # sm_86 is desktop code: not on a Tegra GPU
    assert fixes[0].kind == "platform"
    assert str(fixes[0]).startswith("this wheel is built for manylinux_2_28_x86_64, a Jetson (8.7) is aarch64")
    aarch64 = path.replace("x86_64", "aarch64")
    assert fixes_for("spconv-cu126", "2.3.8", orin, verdict, all_gpus=[orin], path=aarch64)[0].kind != "platform"
    # the fix data is typed: the build to look for, the switch and arch list of a rebuild
    kinds = [(f.kind, f.arch, f.switch, f.value, f.alternative) for f in fixes[1:]]
    assert kinds == [
        ("find-build", "sm_87", None, None, False),
        ("rebuild", "sm_87", "TORCH_CUDA_ARCH_LIST", "8.7+PTX", True),
    ]
