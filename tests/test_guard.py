"""The guard API with a fake device layer: seeds 000 and 002, caching, threads, escape hatch."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from builders import elf, entry, fatbin
from cudafit import guard
from cudafit.guard import UNKNOWN, CapabilityError, DeviceInfo, NoKernelImageError, Unknown
from cudafit.model import ComputeCapability

BIN = Path(__file__).parent / "fixtures" / "bin"
RTX3090 = DeviceInfo(0, "NVIDIA GeForce RTX 3090", ComputeCapability(8, 6))
RTX2080 = DeviceInfo(1, "NVIDIA GeForce RTX 2080", ComputeCapability(7, 5))


@pytest.fixture
def devices() -> Iterator[list[DeviceInfo]]:
    found: list[DeviceInfo] = []
    guard.set_device_provider(lambda: found)
    yield found
    guard.set_device_provider(None)


def old_flashinfer_check(arch_flags: list[str]) -> None:
    """Seed 000, the wrong check: it reads the arch flags torch would compile with, not the device."""
    for flag in arch_flags:
        m = re.search(r"compute_(\d+)", flag)
        if m and int(m.group(1)) < 75:
            msg = "FlashInfer requires sm75+"
            raise RuntimeError(msg)


def test_seed_000_device_check_accepts_what_the_flag_check_refused(devices: list[DeviceInfo]) -> None:
    devices.append(RTX3090)
    flags = ["-gencode=arch=compute_52,code=sm_52", "-gencode=arch=compute_86,code=sm_86"]
    with pytest.raises(RuntimeError, match="requires sm75"):
        old_flashinfer_check(flags)
    assert guard.require_capability("7.5", feature="FlashInfer") == RTX3090


def test_refusal_names_gpu_cc_minimum_and_feature(devices: list[DeviceInfo]) -> None:
    devices.extend([RTX3090, RTX2080])
    with pytest.raises(CapabilityError) as info:
        guard.require_capability("sm_80", device=1, feature="bf16 kernels")
    msg = str(info.value)
    assert "NVIDIA GeForce RTX 2080" in msg
    assert "7.5" in msg
    assert "8.0" in msg
    assert "bf16 kernels" in msg
    assert guard.require_capability((8, 0), device=0) == RTX3090  # per device on mixed hosts


def test_no_device_is_a_clear_error(devices: list[DeviceInfo]) -> None:
    with pytest.raises(CapabilityError, match="no CUDA device"):
        guard.require_capability("7.0")


def test_escape_hatch(devices: list[DeviceInfo], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(guard.SKIP_ENV, "1")
    assert guard.require_capability("9.0") is None


def test_seed_002_shared_memory_without_gpu(devices: list[DeviceInfo]) -> None:
    result = guard.shared_memory_fits(102400)
    assert isinstance(result, Unknown)
    assert not result
    assert guard.max_shared_memory_per_block() is UNKNOWN


def test_shared_memory_from_the_cc_table(devices: list[DeviceInfo]) -> None:
    devices.append(RTX3090)
    assert guard.max_shared_memory_per_block() == 101376
    assert guard.shared_memory_fits(101376) is True
    assert guard.shared_memory_fits(102400) is False


def test_check_binary(devices: list[DeviceInfo], tmp_path: Path) -> None:
    devices.extend([RTX3090, RTX2080])
    assert guard.check_binary(BIN / "libmulti.so") == "native"
    sm75 = tmp_path / "_C.so"
    sm75.write_bytes(elf([(".nv_fatbin", fatbin(entry(2, 75)))]))
    assert guard.check_binary(str(sm75), device=1) == "native"
    with pytest.raises(NoKernelImageError) as info:
        guard.check_binary(str(sm75), device=0)
    assert "sm_75" in str(info.value)
    assert 'TORCH_CUDA_ARCH_LIST="8.6+PTX"' in str(info.value)


def test_cached_calls_and_threads(devices: list[DeviceInfo]) -> None:
    calls = 0

    def provider() -> list[DeviceInfo]:
        nonlocal calls
        calls += 1
        return [RTX3090]

    guard.set_device_provider(provider)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(200):
                guard.require_capability("8.0")
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert calls <= 8  # the device list is built once (at most once per racing thread)


def test_pt2_helper(tmp_path: Path) -> None:
    pkg = tmp_path / "model.pt2"
    so = (BIN / "libmulti.so").read_bytes()
    with zipfile.ZipFile(pkg, "w") as zf:
        zf.writestr("model/data/aotinductor/model/abc_metadata.json", '{"AOTI_DEVICE_KEY": "cuda"}')
        zf.writestr("model/data/aotinductor/model/abc.so", b"\x7fELF" + b"\0" * 60)
        zf.writestr("model/data/aotinductor/model/k.cubin", (BIN / "k_sm90a.cubin").read_bytes())
        zf.writestr("model/data/aotinductor/model/other.so", so)
    ok = guard.check_pt2(str(pkg), device="cuda")
    assert ok.runnable
    assert ok.runner == "AOTIModelContainerRunnerCuda"
    assert ok.cubins_present
    bad = guard.check_pt2(str(pkg), device="cpu")
    assert not bad.runnable
    assert any("compiled for cuda" in p for p in bad.problems)
    assert any("move the inputs to cuda" in f for f in bad.fixes)


def test_import_is_light() -> None:
    code = (
        "import sys, cudafit.guard; print(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('rich', 'pip', 'torch') or m.startswith('cudafit.cli')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# What `import cudafit.guard` may not pull in: each costs milliseconds of the <= 30 ms budget
# (dataclasses + inspect about 20 ms, cudafit.model 12 ms, typing, threading with functools and
# collections, re and enum a few ms each; measured by bench/bench_guard.py) or is a heavy layer.
# Needing one of them on the guard's path is a decision to re-measure, not an accident.
FORBIDDEN_ON_GUARD_IMPORT = {
    "dataclasses",
    "inspect",
    "typing",
    "threading",
    "re",
    "enum",
    "collections",
    "rich",
    "pip",
    "torch",
    "cudafit.model",
}
FORBIDDEN_PACKAGES = ("cudafit.cli", "cudafit.rules", "cudafit.binary", "cudafit.probe", "cudafit.targets")


def test_guard_import_pulls_in_nothing_heavy() -> None:
    """In an isolated interpreter (-I: no user site, no PYTHON* variables; -B: no bytecode written), what it adds."""
    import cudafit

    where = str(Path(cudafit.__file__).parent.parent)
    code = (
        "import sys\n"
        f"sys.path.insert(0, {where!r})\n"
        "before = set(sys.modules)\n"
        "import cudafit.guard\n"
        "print('\\n'.join(sorted(set(sys.modules) - before)))\n"
    )
    out = subprocess.run([sys.executable, "-I", "-B", "-c", code], capture_output=True, text=True, check=True).stdout
    added = set(out.split())
    assert "cudafit.guard" in added  # the import happened here, not before
    assert not added & FORBIDDEN_ON_GUARD_IMPORT, sorted(added & FORBIDDEN_ON_GUARD_IMPORT)
    assert not [m for m in added if m.startswith(FORBIDDEN_PACKAGES)]
