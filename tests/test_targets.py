"""Targets: directories, environments, wheels, container images and .pt2 packages, built from fixtures."""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import zstandard

from cudafit.targets import open_target
from cudafit.targets.image import ImageTarget
from cudafit.targets.pt2 import inspect_pt2
from cudafit.targets.wheel import WheelTarget, wheel_name_version

BIN = Path(__file__).parent / "fixtures" / "bin"


def arches(items) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    return {i.path.split("!")[-1]: sorted({e.arch_name for e in i.facts.entries}) for i in items}


def make_wheel(path: Path, *, broken_member: bool = False) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n\n")
        zf.write(BIN / "libmulti.so", "pkg/_C.so")
        zf.write(BIN / "k_sm90a.cubin", "pkg/cubins/k.cubin")
        zf.write(BIN / "libstatic.a", "pkg/lib/libstatic.a")
        zf.writestr("pkg/__init__.py", "raise SystemExit('never imported')\n")
        if broken_member:
            zf.writestr("pkg/broken.so", b"\x7fELF\x02\x01\x01" + b"\0" * 40)
    return path


def test_wheel_members_are_streamed_and_named(tmp_path: Path) -> None:
    whl = make_wheel(tmp_path / "pkg-1.0-cp311-cp311-linux_x86_64.whl", broken_member=True)
    items = list(WheelTarget(str(whl)).iter_items())
    got = arches(items)
    assert got["pkg/_C.so"][0] == "compute_120"
    assert got["pkg/cubins/k.cubin"] == ["sm_90a"]
    assert {i.package for i in items} == {"pkg"}
    assert items[0].path.startswith(str(whl) + "!")
    broken = next(i for i in items if i.path.endswith("broken.so"))
    assert broken.facts.error is not None  # reported, and the rest is still scanned
    assert wheel_name_version("fbgemm_gpu-1.9.0-cp311-cp311-manylinux_2_28_x86_64.whl") == ("fbgemm-gpu", "1.9.0")


def test_not_a_wheel(tmp_path: Path) -> None:
    bad = tmp_path / "x-1.0-py3-none-any.whl"
    bad.write_bytes(b"not a zip")
    (item,) = WheelTarget(str(bad)).iter_items()
    assert item.facts.error_code == "bad-wheel"


def test_directory_of_bare_cubins_skips_links_and_duplicates(tmp_path: Path) -> None:
    d = tmp_path / "cubins"
    d.mkdir()
    shutil.copy(BIN / "k_sm90a.cubin", d / "a.cubin")
    os.link(d / "a.cubin", d / "hardlink.cubin")
    os.symlink(BIN, d / "outside")
    (d / "notes.txt").write_text("x")
    items = list(open_target(str(d)).iter_items())
    assert [Path(i.path).name for i in items] == ["a.cubin"]


def layer(files: dict[str, bytes | None], compression: str = "gz", modes: dict[str, int] | None = None) -> bytes:
    """A layer tar; None values are directories."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                tf.addfile(info)
                continue
            info.size = len(data)
            info.mode = (modes or {}).get(name, 0o644)
            tf.addfile(info, io.BytesIO(data))
    body = raw.getvalue()
    if compression == "gz":
        return gzip.compress(body)
    if compression == "zst":
        return zstandard.ZstdCompressor().compress(body)
    return body


SITE = "usr/local/lib/python3.11/site-packages/"


def image_layers() -> list[bytes]:
    multi = (BIN / "libmulti.so").read_bytes()
    ptx = (BIN / "libptxonly.so").read_bytes()
    base = layer(
        {
            SITE + "pkg/_C.so": multi,
            SITE + "pkg/old.so": ptx,
            SITE + "gone/_x.so": multi,
            "opt/app/bin/tool": (BIN / "app").read_bytes(),
        },
        "gz",
        modes={"opt/app/bin/tool": 0o755},
    )
    meta = layer(
        {
            SITE + "pkg-2.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: pkg\nVersion: 2.0\n\n",
            SITE + "pkg-2.0.dist-info/RECORD": b"pkg/_C.so,,\npkg/old.so,,\n",
        },
        "none",
    )
    top = layer({SITE + "pkg/.wh.old.so": b"", SITE + "gone/.wh..wh..opq": b"", SITE + "pkg/_C.so": ptx}, "zst")
    return [base, meta, top]


def docker_save(path: Path, layers: list[bytes]) -> Path:
    with tarfile.open(path, "w") as tf:
        names = []
        for i, blob in enumerate(layers):
            name = f"layer{i}/layer.tar"
            info = tarfile.TarInfo(name)
            info.size = len(blob)
            tf.addfile(info, io.BytesIO(blob))
            names.append(name)
        manifest = json.dumps([{"Config": "config.json", "RepoTags": ["x:1"], "Layers": names}]).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(manifest)
        tf.addfile(info, io.BytesIO(manifest))
    return path


def oci_layout(root: Path, layers: list[bytes]) -> Path:
    import hashlib

    blobs = root / "blobs" / "sha256"
    blobs.mkdir(parents=True)

    def put(data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        (blobs / digest).write_bytes(data)
        return "sha256:" + digest

    descs = [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": put(b), "size": len(b)} for b in layers]
    manifest = json.dumps({"schemaVersion": 2, "layers": descs}).encode()
    index = {"schemaVersion": 2, "manifests": [{"digest": put(manifest), "size": len(manifest)}]}
    (root / "index.json").write_text(json.dumps(index))
    (root / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    return root


@pytest.mark.parametrize("kind", ["docker-save", "oci-layout"])
def test_container_image(tmp_path: Path, kind: str) -> None:
    layers = image_layers()
    path = docker_save(tmp_path / "img.tar", layers) if kind == "docker-save" else oci_layout(tmp_path / "oci", layers)
    target = open_target(str(path))
    assert isinstance(target, ImageTarget)
    items = list(target.iter_items())
    got = {i.path.split("!", 1)[1]: i for i in items}
    # the top layer's _C.so (PTX only) wins; old.so and gone/ are whited out
    assert sorted(got) == ["opt/app/bin/tool", SITE + "pkg/_C.so"]
    assert [e.arch_name for e in got[SITE + "pkg/_C.so"].facts.entries] == ["compute_75"]
    assert (got[SITE + "pkg/_C.so"].package, got[SITE + "pkg/_C.so"].version) == ("pkg", "2.0")
    assert got["opt/app/bin/tool"].package is None
    assert got["opt/app/bin/tool"].facts.entries


def test_image_with_a_bad_layer(tmp_path: Path) -> None:
    layers = image_layers()
    layers[1] = b"\x1f\x8b garbage, not gzip"
    items = list(ImageTarget(str(docker_save(tmp_path / "img.tar", layers))).iter_items())
    assert any(i.facts.error_code == "bad-layer" for i in items)
    assert any(i.path.endswith("pkg/_C.so") and not i.facts.error for i in items)


def make_cuda_pt2(path: Path) -> Path:
    """The layout AOTInductor writes for a CUDA model, assembled from nvcc-built fixtures."""
    root = "model/data/aotinductor/model/"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("model/archive_format", "pt2")
        meta = {"AOTI_DEVICE_KEY": "cuda", "AOTI_COMPUTE_CAPABILITY": "90", "AOTI_PLATFORM": "linux"}
        zf.writestr(root + "cabc.wrapper_metadata.json", json.dumps(meta))
        zf.write(BIN / "libbounds.so", root + "cabc.wrapper.so")
        zf.write(BIN / "k_sm90a.cubin", root + "kernel0.cubin")
    return path


def test_cuda_pt2(tmp_path: Path) -> None:
    report = inspect_pt2(str(make_cuda_pt2(tmp_path / "m.pt2")))
    (model,) = report.models
    assert model.device == "cuda"
    assert model.compute_capability == "90"
    assert "sm_90a" in model.cubin_archs
    assert report.problems == ()
    wrong = inspect_pt2(str(tmp_path / "m.pt2"), intended_device="cpu")
    assert any("compiled for cuda but to be run on cpu" in p for p in wrong.problems)


def test_cuda_pt2_without_cubins(tmp_path: Path) -> None:
    path = tmp_path / "nocubin.pt2"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("m/data/aotinductor/model/c_metadata.json", json.dumps({"AOTI_DEVICE_KEY": "cuda"}))
        zf.writestr("m/data/aotinductor/model/c.so", (BIN / "liblz4.so").read_bytes()[:200])
    report = inspect_pt2(str(path))
    assert any("no cubins" in p for p in report.problems)


def test_check_a_pt2_on_gpus(tmp_path: Path) -> None:
    pt2 = make_cuda_pt2(tmp_path / "m.pt2")
    p = subprocess.run(
        [sys.executable, "-m", "cudafit", "check", str(pt2), "--gpu", "h100", "--gpu", "a100", "--json", "--no-probe"],
        capture_output=True,
        text=True,
        check=False,
    )
    doc = json.loads(p.stdout)
    (target,) = doc["targets"]
    assert target["name"] == "pt2:model"
    assert [v["status"] for v in target["verdicts"]] == ["native", "partial"]  # sm_90a cubin: H100 only


TORCH_PYTHON = os.environ.get("CUDAFIT_TORCH_PYTHON")


@pytest.mark.skipif(not TORCH_PYTHON, reason="set CUDAFIT_TORCH_PYTHON to a python with torch to build a real .pt2")
def test_real_cpu_pt2_from_aotinductor(tmp_path: Path) -> None:
    script = Path(__file__).parent.parent / "scripts" / "build_pt2.py"
    out = tmp_path / "cpu_model.pt2"
    subprocess.run([str(TORCH_PYTHON), str(script), str(out)], check=True, timeout=900)
    report = inspect_pt2(str(out), intended_device="cuda")
    (model,) = report.models
    assert model.device == "cpu"
    assert model.shared_objects
    assert any("compiled for cpu but to be run on cuda" in p for p in report.problems)


def test_kernels_of_wheel_members(tmp_path: Path) -> None:
    whl = make_wheel(tmp_path / "pkg-1.0-cp311-cp311-linux_x86_64.whl")
    p = subprocess.run(
        [sys.executable, "-m", "cudafit", "scan", str(whl), "--kernels", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    files = {f["path"].split("!")[1]: f for f in json.loads(p.stdout)["files"]}
    kernels = files["pkg/_C.so"]["kernels"]
    assert {k["name"] for k in kernels} == {"_Z7add_onePfi", "_Z5scalePddi"}
    assert files["pkg/cubins/k.cubin"]["kernels"]
    assert files["pkg/_C.so"]["kernel_error"] is None


def test_missing_paths_are_not_pip_requirements(tmp_path: Path) -> None:
    from cudafit.targets.files import FileTarget
    from cudafit.targets.pip import PipRequirementTarget

    for spec in (str(tmp_path / "gone.so"), "./nope.whl", "model.pt2"):
        target = open_target(spec)
        assert isinstance(target, FileTarget)
        (item,) = target.iter_items()
        assert item.facts.error_code == "io-error"
    assert isinstance(open_target("fbgemm-gpu==1.9.0"), PipRequirementTarget)
