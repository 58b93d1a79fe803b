"""Probe backends with fakes of NVML, nvidia-smi and libcuda; CUDA ordinals under the env vars."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import jsonschema
import pytest

from cudafit import probe
from cudafit.model import ComputeCapability, CudaVersion, parse_driver_version
from cudafit.probe.backends import probe_cuda_driver, probe_nvidia_smi, probe_nvml
from cudafit.probe.fake import NVMLError, NVMLError_LibraryNotFound, RecordedNvml
from cudafit.probe.inventory import GpuDevice
from cudafit.probe.ordering import assign_cuda_indices
from cudafit.probe.toolchains import find_nvcc
from cudafit.targets.runtime import read_torch_version

FAKES = Path(__file__).parent / "fakes"
HOSTS = json.loads((FAKES / "nvml_hosts.json").read_text())
SCHEMA = json.loads((Path(__file__).parent.parent / "src/cudafit/schema/gpus.json").read_text())


FakeNvml = RecordedNvml  # the package's replay of a recorded host (cudafit.probe.fake)


def smi_runner(text: str, rc: int = 0) -> Any:
    def run(cmd: Sequence[str], timeout: float) -> tuple[int, str, str]:
        assert cmd[0] == "nvidia-smi"
        return (rc, text, "") if rc == 0 else (rc, "", text)

    return run


def missing_runner(cmd: Sequence[str], timeout: float) -> tuple[int, str, str]:
    return 127, "", f"{cmd[0]}: not found"


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    probe.clear_cache()


def test_nvml_mixed_host() -> None:
    devices, driver, cuda, problems = probe_nvml(FakeNvml(HOSTS["mixed_2080_3090"]))
    assert [d.name for d in devices] == ["NVIDIA GeForce RTX 2080", "NVIDIA GeForce RTX 3090"]
    assert [d.compute_capability for d in devices] == [ComputeCapability(7, 5), ComputeCapability(8, 6)]
    assert driver == parse_driver_version("570.124.06")
    assert cuda == CudaVersion(12, 8)
    assert devices[1].memory_mib == 24576
    assert problems == []


def test_nvml_mig_and_unified_memory() -> None:
    devices, _d, _c, _p = probe_nvml(FakeNvml(HOSTS["a100_mig"]))
    assert devices[0].mig_mode is True
    assert len(devices[0].mig_devices) == 2
    assert devices[1].mig_mode is False
    gb10, _d, cuda, _p = probe_nvml(FakeNvml(HOSTS["gb10"]))
    assert gb10[0].memory_mib is None
    assert gb10[0].compute_capability == ComputeCapability(12, 1)
    assert cuda == CudaVersion(13, 0)


def test_nvml_failures_are_data() -> None:
    fake = FakeNvml(None, NVMLError_LibraryNotFound("NVML Shared Library Not Found"))
    devices, driver, _c, problems = probe_nvml(fake)
    assert (devices, driver) == ([], None)
    assert "no NVIDIA driver" in problems[0]
    _d, _v, _c, problems = probe_nvml(FakeNvml(None, OSError("libnvidia-ml.so.1: cannot open")))
    assert problems[0].startswith("NVML error")


def test_nvidia_smi_csv() -> None:
    text = (FAKES / "nvidia_smi_mixed_2080_3090.csv").read_text()
    devices, driver, _c, problems = probe_nvidia_smi(smi_runner(text))
    assert [str(d.compute_capability) for d in devices] == ["7.5", "8.6"]
    assert devices[0].pci_bus_id == "00000000:01:00.0"
    assert driver == parse_driver_version("570.124.06")
    assert problems == []
    mig, _d, _c, _p = probe_nvidia_smi(smi_runner((FAKES / "nvidia_smi_a100_mig.csv").read_text()))
    assert [d.mig_mode for d in mig] == [True, False]


def test_nvidia_smi_failures() -> None:
    _d, _v, _c, problems = probe_nvidia_smi(smi_runner((FAKES / "nvidia_smi_driver_mismatch.txt").read_text(), rc=18))
    assert "version mismatch" in problems[0] or "NVML library version" in problems[0]
    _d, _v, _c, problems = probe_nvidia_smi(missing_runner)
    assert "not found" in problems[0]

    def hung(cmd: Sequence[str], timeout: float) -> tuple[int, str, str]:
        return 124, "", f"nvidia-smi timed out after {timeout:g} s"

    _d, _v, _c, problems = probe_nvidia_smi(hung)
    assert "timed out" in problems[0]


def test_real_runner_timeout_and_missing() -> None:
    from cudafit.probe.backends import real_runner

    assert real_runner(["definitely-not-a-command-xyz"], 1.0)[0] == 127
    t = time.perf_counter()
    rc, _o, err = real_runner([sys.executable, "-c", "import time; time.sleep(5)"], 0.3)
    assert rc == 124
    assert "timed out" in err
    assert time.perf_counter() - t < 3


def test_probe_machine_falls_back_to_smi_and_reports_no_driver() -> None:
    nvml = FakeNvml(None, NVMLError_LibraryNotFound("not found"))
    inv = probe.probe_machine(nvml=nvml, smi_runner=missing_runner, env={})
    assert inv.status == "no-driver"
    assert inv.devices == ()
    assert any("no NVIDIA driver" in p for p in inv.problems)
    text = (FAKES / "nvidia_smi_mixed_2080_3090.csv").read_text()
    inv2 = probe.probe_machine(nvml=FakeNvml(None, NVMLError("x")), smi_runner=smi_runner(text), env={})
    assert inv2.source == "nvidia-smi"
    assert len(inv2.devices) == 2
    doc = probe.inventory_to_dict(inv2)
    jsonschema.validate(doc, SCHEMA)
    assert doc["gpus"][1]["limits"]["max_shared_memory_per_block_optin"] == 101376


def test_probe_is_cached_per_process() -> None:
    fake = FakeNvml(HOSTS["gb10"])
    env: dict[str, str] = {}
    a = probe.probe_machine(nvml=fake, env=env)
    b = probe.probe_machine(nvml=fake, env=env)
    assert a is b
    assert fake.calls.count("init") == 1


# ---------------------------------------------------------------- CUDA ordinals


def mixed() -> list[GpuDevice]:
    devices, _d, _c, _p = probe_nvml(FakeNvml(HOSTS["mixed_2080_3090"]))
    return devices


def ordinals(devices: Sequence[GpuDevice]) -> dict[str, int | None]:
    return {d.name.split()[-1]: d.cuda_index for d in devices}


def test_pci_order() -> None:
    out, estimated, _note = assign_cuda_indices(mixed(), {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
    assert ordinals(out) == {"2080": 0, "3090": 1}
    assert not estimated


def test_fastest_first_is_estimated() -> None:
    out, estimated, note = assign_cuda_indices(mixed(), {})
    assert ordinals(out) == {"2080": 1, "3090": 0}
    assert estimated
    assert "FASTEST_FIRST" in note


@pytest.mark.parametrize(
    ("visible", "expected"),
    [
        ("1", {"2080": None, "3090": 0}),
        ("1,0", {"2080": 1, "3090": 0}),
        ("GPU-a1b2c3d4", {"2080": None, "3090": 0}),  # unique UUID prefix
        ("GPU-5c3a1b2e-8f4d-4a6b-9c1e-2d3f4a5b6c7d,1", {"2080": 0, "3090": 1}),
        ("0,7,1", {"2080": 0, "3090": None}),  # invalid index truncates the list
        ("0,-1,1", {"2080": 0, "3090": None}),
        ("GPU-nope,0", {"2080": None, "3090": None}),
        ("", {"2080": None, "3090": None}),
    ],
)
def test_cuda_visible_devices_forms(visible: str, expected: dict[str, int | None]) -> None:
    out, _est, note = assign_cuda_indices(mixed(), {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": visible})
    assert ordinals(out) == expected
    if visible in ("0,7,1", "0,-1,1", "GPU-nope,0"):
        assert "invalid" in note


def test_mig_ids() -> None:
    devices, _d, _c, _p = probe_nvml(FakeNvml(HOSTS["a100_mig"]))
    out, _e, _n = assign_cuda_indices(devices, {"CUDA_VISIBLE_DEVICES": "MIG-66666666-7777"})
    assert [d.cuda_index for d in out] == [0, None]
    out, _e, note = assign_cuda_indices(devices, {"CUDA_VISIBLE_DEVICES": "MIG-deadbeef"})
    assert [d.cuda_index for d in out] == [None, None]
    assert "invalid" in note


def test_driver_order_wins_and_is_not_estimated() -> None:
    out, estimated, _note = assign_cuda_indices(mixed(), {}, driver_order=["00000000:01:00.0", "00000000:02:00.0"])
    assert ordinals(out) == {"2080": 0, "3090": 1}
    assert not estimated


class FakeLibcuda:
    """ctypes-style libcuda: two devices, CUDA ordinal 0 = the 3090 (bus 2), 1 = the 2080 (bus 1)."""

    ATTRS: ClassVar[dict[int, dict[int, int]]] = {
        0: {16: 82, 97: 101376, 81: 102400, 12: 65536, 1: 1024, 75: 8, 76: 6, 33: 2, 34: 0, 50: 0},
        1: {16: 46, 97: 65536, 81: 65536, 12: 65536, 1: 1024, 75: 7, 76: 5, 33: 1, 34: 0, 50: 0},
    }

    def cuInit(self, flags: int) -> int:
        return 0

    def cuDeviceGetCount(self, ptr: Any) -> int:
        ptr._obj.value = 2
        return 0

    def cuDeviceGet(self, ptr: Any, ordinal: int) -> int:
        ptr._obj.value = ordinal
        return 0

    def cuDeviceGetAttribute(self, ptr: Any, attr: int, dev: Any) -> int:
        ptr._obj.value = self.ATTRS[dev.value][attr]
        return 0

    def cuDeviceGetName(self, buf: Any, size: int, dev: Any) -> int:
        buf.value = [b"NVIDIA GeForce RTX 3090", b"NVIDIA GeForce RTX 2080"][dev.value]
        return 0


def test_deep_probe_uses_driver_order_and_limits() -> None:
    infos, problems = probe_cuda_driver(FakeLibcuda())
    assert problems == []
    assert infos[0]["pci_bus_id"] == "00000000:02:00.0"
    inv = probe.probe_machine(deep=True, nvml=FakeNvml(HOSTS["mixed_2080_3090"]), cuda_lib=FakeLibcuda(), env={})
    assert ordinals(inv.devices) == {"2080": 1, "3090": 0}
    assert not inv.ordering_estimated
    assert inv.devices[1].limits["sm_count"] == 82


def test_toolchains(tmp_path: Path) -> None:
    def runner(cmd: Sequence[str], timeout: float) -> tuple[int, str, str]:
        if cmd[1] == "--version":
            return 0, (FAKES / "nvcc_13_0_version.txt").read_text(), ""
        return 0, (FAKES / "nvcc_13_0_list_gpu_code.txt").read_text(), ""

    bindir = tmp_path / "cuda" / "bin"
    bindir.mkdir(parents=True)
    (bindir / "nvcc").write_text("#!/bin/sh\n")
    nvcc = find_nvcc({"CUDA_HOME": str(tmp_path / "cuda"), "PATH": ""}, runner)
    assert nvcc.version == "13.0"
    assert "sm_121" in nvcc.targets
    assert "sm_61" not in nvcc.targets
    assert find_nvcc({"PATH": str(tmp_path)}, runner).problem is not None
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "version.py").write_text("__version__ = '2.14.1+cu130'\ncuda: Optional[str] = '13.0'\n")
    assert read_torch_version([str(site)]) == ("2.14.1+cu130", "13.0")


def test_cli_on_this_cpu_only_machine_is_fast_and_clean() -> None:
    """Done-when of the probe issue: `cudafit gpus [--json]` exit cleanly, say there is no driver, < 0.3 s."""
    for args in (["gpus"], ["gpus", "--json"]):
        t = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "cudafit", *args], capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - t
        assert p.returncode == 0, p.stderr
        assert "Traceback" not in p.stderr
        if "--json" in args:
            doc = json.loads(p.stdout)
            jsonschema.validate(doc, SCHEMA)
            if doc["status"] == "no-driver":
                assert any("driver" in x for x in doc["problems"])
        assert elapsed < 1.5  # generous for loaded CI machines; measured 0.15-0.2 s here


def test_resolution_json_matches_schema() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "cudafit", "gpus", "rtx 3090", "titan x", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 1
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["gpus"][0]["compute_capability"] == "8.6"
    assert doc["errors"][0]["candidates"]


def test_torch_order_used_only_when_the_caller_initialised_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    props = [
        types.SimpleNamespace(pci_domain_id=0, pci_bus_id=2, pci_device_id=0),  # cuda:0 = the 3090
        types.SimpleNamespace(pci_domain_id=0, pci_bus_id=1, pci_device_id=0),
    ]
    state = {"initialized": False}
    cuda = types.SimpleNamespace(
        is_initialized=lambda: state["initialized"],
        device_count=lambda: 2,
        get_device_properties=lambda i: props[i],
    )
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    inv = probe.probe_machine(nvml=FakeNvml(HOSTS["mixed_2080_3090"]), env={})
    assert inv.ordering_estimated  # torch present but CUDA not initialised: not asked
    probe.clear_cache()
    state["initialized"] = True
    inv = probe.probe_machine(nvml=FakeNvml(HOSTS["mixed_2080_3090"]), env={})
    assert not inv.ordering_estimated
    assert ordinals(inv.devices) == {"2080": 1, "3090": 0}


# ---------------------------------------------------------------- real recordings (scripts/record_probe.py)

RECORDED = sorted(FAKES.glob("recorded_*_nvml.json"))


class RecordedLibcuda(FakeLibcuda):
    """A FAKE libcuda answering with the attributes scripts/record_probe.py recorded on a real machine."""

    def __init__(self, infos: list[dict[str, Any]]) -> None:
        from cudafit.probe.backends import _ATTRS

        self.infos = infos
        self.ids = _ATTRS

    def cuDeviceGetCount(self, ptr: Any) -> int:
        ptr._obj.value = len(self.infos)
        return 0

    def cuDeviceGetAttribute(self, ptr: Any, attr: int, dev: Any) -> int:
        key = next(k for k, v in self.ids.items() if v == attr)
        if key not in self.infos[dev.value]:
            return 1
        ptr._obj.value = self.infos[dev.value][key]
        return 0

    def cuDeviceGetName(self, buf: Any, size: int, dev: Any) -> int:
        buf.value = self.infos[dev.value]["name"].encode()
        return 0


@pytest.mark.parametrize("nvml_file", RECORDED, ids=[p.stem for p in RECORDED])
def test_recorded_gpu_machine(nvml_file: Path) -> None:
    """NVML, nvidia-smi and the driver API recorded on one real machine describe the same GPUs."""
    host = json.loads(nvml_file.read_text())
    assert host["_about"].startswith("RECORDED")
    devices, driver, cuda, problems = probe_nvml(FakeNvml(host))
    assert devices
    assert driver is not None and cuda is not None
    assert problems == []
    smi_file = nvml_file.with_name(nvml_file.name.replace("_nvml.json", "_smi.csv"))
    smi, smi_driver, _c, smi_problems = probe_nvidia_smi(smi_runner(smi_file.read_text()))
    assert smi_problems == []
    assert smi_driver == driver
    assert [(d.name, d.compute_capability, d.pci_bus_id, d.uuid) for d in smi] == [
        (d.name, d.compute_capability, d.pci_bus_id, d.uuid) for d in devices
    ]
    api_file = nvml_file.with_name(nvml_file.name.replace("_nvml.json", "_driver_api.json"))
    infos = json.loads(api_file.read_text())["devices"]
    by_bus = {d.pci_bus_id: d for d in devices}
    for info in infos:
        d = by_bus[info["pci_bus_id"]]
        assert ComputeCapability(info["cc_major"], info["cc_minor"]) == d.compute_capability
    inv = probe.probe_machine(deep=True, nvml=FakeNvml(host), cuda_lib=RecordedLibcuda(infos), env={})
    assert not inv.ordering_estimated
    assert all(d.limits.get("sm_count") for d in inv.devices if d.cuda_index is not None)
    jsonschema.validate(probe.inventory_to_dict(inv), SCHEMA)
