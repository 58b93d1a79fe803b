"""Seed inputs per surface: small well-formed documents and archives the mutations start from.

Built from the committed fixtures (tests/fixtures/bin, tests/fakes) at campaign start, so the seeds
follow the fixtures when they are rebuilt.  Each seed's first byte is the mode byte the surfaces
read (:func:`fuzz.surfaces._split`) where the surface has modes.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import sys
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "tests" / "fixtures" / "bin"
FAKES = ROOT / "tests" / "fakes"

__all__ = ["SEEDS", "fixture", "iter_seeds"]


def fixture(name: str) -> str:
    """Path of a committed binary fixture."""
    return str(BIN / name)


def _bin(name: str) -> bytes:
    return (BIN / name).read_bytes()


def _builders() -> object:
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        import builders
    finally:
        sys.path.pop(0)
    return builders


def _zip(members: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> bytes:
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", compression=compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return raw.getvalue()


def _wheels() -> Iterator[bytes]:
    meta = b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n\n"
    record = b"pkg/k.cubin,,\npkg/_C.so,,\n"
    yield _zip({"pkg-1.0.dist-info/METADATA": meta, "pkg/k.cubin": _bin("k_sm90a.cubin")})
    yield _zip({"pkg-1.0.dist-info/METADATA": meta, "pkg-1.0.dist-info/RECORD": record,
                "pkg/_C.so": _bin("libptxonly.so")}, zipfile.ZIP_DEFLATED)
    yield _zip({"pkg-1.0.dist-info/METADATA": meta, "pkg/k.fatbin": _bin("k.fatbin")[:4096],
                "pkg/k.cubin": _bin("k_sm90a.cubin")}, zipfile.ZIP_LZMA)
    yield _zip({"pkg-1.0.dist-info/METADATA": meta, "pkg/lib.a": _bin("libstatic.a")}, zipfile.ZIP_BZIP2)


def _pt2s() -> Iterator[bytes]:
    root = "model/data/aotinductor/model/"
    meta = json.dumps({"AOTI_DEVICE_KEY": "cuda", "AOTI_COMPUTE_CAPABILITY": "90", "AOTI_PLATFORM": "linux"})
    yield _zip({"model/archive_format": b"pt2", root + "c.wrapper_metadata.json": meta.encode(),
                root + "kernel0.cubin": _bin("k_sm90a.cubin")})
    yield _zip({"model/archive_format": b"pt2", root + "c_metadata.json": meta.encode(),
                root + "c.so": _bin("libptxonly.so")}, zipfile.ZIP_DEFLATED)


def _tar(files: dict[str, bytes], mode: int = 0o644) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = mode
            tf.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def _images() -> Iterator[bytes]:
    import zstandard

    site = "usr/lib/python3/site-packages/"
    layer = _tar({site + "pkg/k.cubin": _bin("k_sm90a.cubin"),
                  site + "pkg-1.0.dist-info/METADATA": b"Name: pkg\nVersion: 1.0\n\n",
                  site + "pkg-1.0.dist-info/RECORD": b"pkg/k.cubin,,\n"})
    top = _tar({site + "pkg/.wh.old.so": b"", site + "gone/.wh..wh..opq": b""})
    manifest = json.dumps([{"Config": "c.json", "Layers": ["l0/layer.tar", "l1/layer.tar"]}]).encode()
    yield _tar({"l0/layer.tar": layer, "l1/layer.tar": gzip.compress(top, mtime=0), "manifest.json": manifest})
    yield _tar({"l0/layer.tar": zstandard.ZstdCompressor().compress(layer), "manifest.json": manifest[:-1] + b"]"})
    blobs: dict[str, bytes] = {}

    def put(data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        blobs["blobs/sha256/" + digest] = data
        return "sha256:" + digest

    ldesc = [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": put(layer), "size": len(layer)}]
    man = json.dumps({"schemaVersion": 2, "layers": ldesc}).encode()
    inner = json.dumps({"schemaVersion": 2, "manifests": [{"digest": put(man), "size": len(man)}]}).encode()
    index = json.dumps({"schemaVersion": 2, "manifests": [{"digest": put(inner), "size": len(inner)}]})
    yield _tar({"oci-layout": b'{"imageLayoutVersion": "1.0.0"}', "index.json": index.encode(), **blobs})


def _fatbin_like() -> Iterator[bytes]:
    b: object = _builders()
    entry: Callable[..., bytes] = b.entry  # type: ignore[attr-defined]
    fatbin: Callable[..., bytes] = b.fatbin  # type: ignore[attr-defined]
    elf: Callable[..., bytes] = b.elf  # type: ignore[attr-defined]
    pe_importing: Callable[..., bytes] = b.pe_importing  # type: ignore[attr-defined]
    import zstandard

    cubin = _bin("k_sm90a.cubin")
    ptx = b".version 8.0\n.target sm_80\n.address_size 64\n\0"
    small = fatbin(entry(2, 80, payload=cubin[:2048]), entry(1, 80, payload=ptx), entry(2, 0, payload=b"\0" * 32))
    yield small
    yield elf([(".nv_fatbin", small), (".nvFatBinSegment", b"\0" * 24)], needed=("libcudart.so.12",))
    z = zstandard.ZstdCompressor().compress(cubin)
    flags = 0x11 | 0x8000
    yield fatbin(entry(2, 90, flags=flags, payload=z, compressed_size=len(z), uncompressed_size=len(cubin)))
    yield cubin
    yield _bin("k.fatbin")[:8192]
    yield _bin("libptxonly.so")
    yield _bin("k_compute100f.ptx")
    # DLLs whose import tables name the driver's module loaders (PE32+ import table, PE32 delay-load table)
    yield pe_importing("nvcuda.dll", ["cuModuleLoadData", "cuLibraryLoadData"])
    yield pe_importing("nvcuda.dll", ["cuModuleLoadDataEx"], delay=True, wide=False)
    yield b"!<arch>\n" + b"x.o/" + b" " * 44 + f"{len(small):<10}".encode() + b"`\n" + small


def _with_modes(seeds: Iterator[bytes], modes: int) -> Iterator[bytes]:
    for s in seeds:
        for m in range(modes):
            yield bytes([m]) + s


def _probe() -> Iterator[bytes]:
    for name in ("nvidia_smi_a100_mig.csv", "nvidia_smi_mixed_2080_3090.csv"):
        text = (FAKES / name).read_bytes()
        yield b"\0" + text
        yield b"\0" + text + b"\x001,0,GPU-1\x00PCI_BUS_ID"
        yield b"\0" + text + b"\x00MIG-GPU-aa/1/0,2\x00FASTEST_FIRST"
    hosts = json.loads((FAKES / "nvml_hosts.json").read_text())
    for host in [v for k, v in hosts.items() if not k.startswith("_")][:4]:
        yield b"\1" + json.dumps(host).encode() + b"\x000,1\x00PCI_BUS_ID"


def _inventories() -> Iterator[bytes]:
    from cudafit.model import ComputeCapability, DriverVersion
    from cudafit.probe import inventory_to_dict
    from cudafit.probe.inventory import GpuDevice, Inventory

    devs = tuple(
        GpuDevice(i, n, ComputeCapability(*cc), "nvml", uuid=f"GPU-{i}", pci_bus_id=f"00000000:0{i}:00.0",
                  memory_mib=24576, mig_mode=False, cuda_index=i)
        for i, (n, cc) in enumerate([("NVIDIA GeForce RTX 3090", (8, 6)), ("NVIDIA H100 80GB HBM3", (9, 0))])
    )
    inv = Inventory(devs, "nvml", DriverVersion((580, 65, 6)), problems=("note",))
    yield b"\0" + json.dumps(inventory_to_dict(inv)).encode()
    yield b"\1" + (FAKES / "nvml_hosts.json").read_bytes()
    hosts = json.loads((FAKES / "nvml_hosts.json").read_text())
    one = next(v for k, v in hosts.items() if not k.startswith("_"))
    yield b"\1" + json.dumps(one).encode()


def _configs() -> Iterator[bytes]:
    from cudafit.fleet.files import load_fleet_file  # noqa: F401 - fails early if the module moved

    gpus_doc = json.loads(next(_inventories())[1:])
    gpus_doc["node"] = "n1"
    yield b"\0" + json.dumps([gpus_doc, {**gpus_doc, "node": "n2", "gpus": []}]).encode()
    fleet = {"schema": "cudafit.fleet/1", "source": "x", "problems": [], "nodes": [
        {"name": "a", "status": "ok", "driver_version": "580.65.06", "labels": {"pool": "a"},
         "gpus": [{"name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "count": 8, "mig_enabled": True,
                   "mig": [{"profile": "1g.10gb", "count": 7}]}],
         "env": {"python": "3.11", "sites": ["/x"], "packages": [{"name": "torch", "version": "2.9"}]}},
        {"name": "b", "status": "timeout", "problems": "slow"}]}
    yield b"\0" + json.dumps(fleet).encode()
    yield b"\1" + (FAKES / "gfd_nodes.json").read_bytes()[:6000] + b"\0pool in (a,b),!x,nvidia.com/gpu.count>1"
    yield b"\1" + (FAKES / "gfd_garbage.json").read_bytes()[:6000]
    yield b"\2" + b"a=b,c!=d,e in (f,g),h notin (i),!j,k,l>3\0a=b,c=x,k=1,l=5"
    toml = b'[tool.cudafit.audit]\nrequire = ["sm_80", "8.6+PTX"]\nallow-jit = true\nmatch-torch = "2.9"\n'
    yield b"\3" + toml
    yield b"\3" + b"[tool.cudafit.audit]\nrequire = \"TORCH_CUDA_ARCH_LIST=7.5;8.0\"\ntorch-index-url = 'x'\n"


def _explains() -> Iterator[bytes]:
    yield b"FATAL: kernel fmha_cutlassF_f16_aligned_64x128_rf_sm80 is for sm80-sm100, but was built for sm75"
    yield b"RuntimeError: CUDA error: no kernel image is available for execution on the device"
    yield b"CUDA driver version is insufficient for CUDA runtime version\ncompute capability 8.6 sm_86 580.65"
    yield b"torch.cuda: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current " \
          b"PyTorch installation. The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70."
    # the paste forms clean() decodes (session 13): a JSON log line, a one-line escaped log, HTML references, the
    # prefixes of runners and loggers, a hard-wrapped sentence, a feature denied beside a GPU, a library's name
    yield b'{"level": "error", "error": {"message": "RuntimeError: CUDA error\\nno kernel image is available"}}'
    yield b'RuntimeError: CUDA error: invalid device function\\nTraceback (most recent call last):\\n  File \\"x\\"'
    yield b"&quot;CUDA error: no kernel image&quot; &lt;sm_61&gt; &#39;x&#39;"
    yield b"[rank0]: (RayWorkerWrapper pid=12, ip=10.0.0.1) ERROR 08-30 07:32:02 [a.py:5] > E   [WARN] app-1  | x"
    yield b"ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-\nname'"
    yield b"platform does not have FP16 support.\nI am using a GeForce GTX 950."
    yield b'File "deep_gemm/utils/layout.py", line 76\nRuntimeError: Unknown recipe\nGPU: NVIDIA GeForce RTX 5080'
    corpus = ROOT / "tests" / "fixtures" / "explain_corpus"
    if corpus.is_dir():
        for p in sorted(corpus.rglob("*"))[:40]:
            if p.is_file() and p.stat().st_size < 8192:
                yield p.read_bytes()


SEEDS: dict[str, Callable[[], Iterator[bytes]]] = {
    "wheel": _wheels,
    "pt2": _pt2s,
    "image": _images,
    "fatbin": lambda: _with_modes(_fatbin_like(), 3),
    "payload": lambda: _with_modes(_fatbin_like(), 2),
    "probe": _probe,
    "inventory": _inventories,
    "config": _configs,
    "explain": _explains,
}


def iter_seeds(surface: str) -> Iterator[bytes]:
    """The seeds of ``surface``."""
    yield from SEEDS[surface]()


def write_seeds(surface: str, directory: str) -> int:
    """Write the seeds of ``surface`` into ``directory`` (libFuzzer's seed corpus); returns how many."""
    os.makedirs(directory, exist_ok=True)
    n = 0
    for data in iter_seeds(surface):
        with open(os.path.join(directory, hashlib.sha1(data).hexdigest()), "wb") as fh:
            fh.write(data)
        n += 1
    return n

