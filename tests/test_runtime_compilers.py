"""Run-time compilers (issue 25): one recorded-shape test per compiler family, built in the test.

The shapes are those of the real files (tests/realwheels/test_runtime_compilers_real.py checks them on
the PyPI wheels): Triton's ``triton/backends/nvidia/bin/ptxas`` (and ``ptxas-blackwell`` with the arch
switch of its ``compiler.py``) carrying ``Cuda compilation tools, release 12.4, V12.4.99``; CuPy's
extension NEEDing ``libnvrtc.so.12`` with nvidia-cuda-nvrtc-cu12's ``libnvrtc.so.12`` as the provider; a
library with LTO-IR NEEDing ``libnvJitLink.so.12`` and pinning nvidia-nvjitlink-cu12; a JIT package
shipping ``bin/nvcc``; jax-cuda12-pjrt's ``xla_cuda_plugin.so`` with its LLVM NVPTX processor table.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from builders import elf, entry, fatbin, pad8
from cudafit.analysis import analyze
from cudafit.model import ComputeCapability, Gpu, parse_cuda_version
from cudafit.report.check import check_document
from cudafit.rules.compilers import RuntimeCompiler, judge_compiler, parse_runtime_compiler
from cudafit.targets import open_target
from cudafit.targets.compilers import read_cuda_release, read_llvm_targets
from cudafit.targets.env import EnvironmentTarget

ROOT = Path(__file__).parent.parent
SCHEMA = json.loads((ROOT / "src/cudafit/schema/check.json").read_text())
RTX5090 = Gpu("GeForce RTX 5090", ComputeCapability(12, 0))
RTX4090 = Gpu("GeForce RTX 4090", ComputeCapability(8, 9))
H100 = Gpu("H100", ComputeCapability(9, 0))
B200 = Gpu("B200", ComputeCapability(10, 0))

TRITON_32_SWITCH = ""  # Triton 3.2: one ptxas for every arch
TRITON_33_SWITCH = 'def get_ptxas(arch: int):\n    name = "ptxas-blackwell" if arch >= 100 else "ptxas"\n'
TRITON_39_SWITCH = (
    "def get_ptxas(arch: int) -> knobs.NvidiaTool:\n    if arch < 90:\n        return knobs.nvidia.ptxas\n"
    "    return knobs.nvidia.ptxas_blackwell\n"
)


def compiler_binary(release: str, padding: int = 0) -> bytes:
    """An executable ELF whose .rodata holds the version string ptxas/nvcc/libnvrtc print (as recorded)."""
    text = f"Cuda compilation tools, release {release}, V{release}.99\0".encode()
    return elf([(".rodata", b"\0" * padding + text)], e_type=2)


def wheel(tmp: Path, name: str, version: str, members: dict[str, bytes], requires: tuple[str, ...] = ()) -> Path:
    path = tmp / f"{name.replace('-', '_')}-{version}-cp311-cp311-linux_x86_64.whl"
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, data in members.items():
            zf.writestr(member, data)
        zf.writestr(f"{info}/METADATA", meta + "\n")
        zf.writestr(f"{info}/RECORD", "".join(f"{m},,\n" for m in members))
    return path


def install(site: Path, name: str, version: str, members: dict[str, bytes]) -> None:
    """An installed distribution: files plus a dist-info whose RECORD owns them."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n")
    (info / "RECORD").write_text("".join(f"{m},,\n" for m in members))
    for member, data in members.items():
        path = site / member
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if isinstance(data, bytes) and data[:4] == b"\x7fELF":
            path.chmod(0o755)


def triton_members(ptxas: str, second: str | None = None, switch: str = TRITON_32_SWITCH) -> dict[str, bytes]:
    out = {
        "triton/backends/nvidia/bin/ptxas": compiler_binary(ptxas),
        "triton/backends/nvidia/compiler.py": switch.encode(),
    }
    if second:
        out["triton/backends/nvidia/bin/ptxas-blackwell"] = compiler_binary(second)
    return out


def judge(target: Any, *gpus: Gpu, **kw: Any) -> dict[str, Any]:
    analysis = analyze(target.iter_items(), gpus, **kw)
    doc = check_document(analysis)
    jsonschema.validate(doc, SCHEMA)
    return doc


def row(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in doc["targets"] if t["name"] == name)


def statuses(doc: dict[str, Any], name: str) -> list[str]:
    return [v["status"] for v in row(doc, name)["verdicts"]]


# ptxas in a wheel (Triton) ---------------------------------------------------------------------------------


def test_triton_ptxas_12_4_fails_on_rtx_5090_and_b200_runs_on_4090(tmp_path: Path) -> None:
    whl = wheel(tmp_path, "triton", "3.2.0", triton_members("12.4"))
    doc = judge(open_target(str(whl)), RTX5090, RTX4090, B200)
    assert statuses(doc, "triton") == ["fails", "native", "fails"]
    t = row(doc, "triton")
    (comp,) = t["runtime_compilers"]
    assert (comp["family"], comp["cuda_version"], comp["user"], comp["evidence"]) == (
        "ptxas",
        "12.4",
        "triton",
        "bundled",
    )
    first = t["verdicts"][0]["runtime"]
    assert first["status"] == "fails" and "CUDA 12.4" in first["message"] and "sm_120" in first["message"]
    assert "Value 'sm_120' is not defined for option 'gpu-name'" in first["message"]
    assert any("TRITON_PTXAS_PATH=" in f and "CUDA 12.4" in f for f in t["fixes"])
    assert any("triton>=3.3.0" in f for f in t["fixes"])  # measured: 3.3.0's ptxas-blackwell is CUDA 12.8
    assert not any("rebuild" in f or "--no-binary" in f for f in t["fixes"])  # Triton ships no device code


@pytest.mark.parametrize(("switch", "h100_ptxas"), [(TRITON_33_SWITCH, "ptxas"), (TRITON_39_SWITCH, "ptxas-blackwell")])
def test_triton_two_ptxas_picked_by_the_arch_its_compiler_py_switches_at(
    tmp_path: Path, switch: str, h100_ptxas: str
) -> None:
    whl = wheel(tmp_path, "triton", "3.3.0", triton_members("12.4", "12.8", switch))
    doc = judge(open_target(str(whl)), RTX5090, H100, RTX4090)
    assert statuses(doc, "triton") == ["native", "native", "native"]
    used = [v["runtime"]["compiler"] for v in row(doc, "triton")["verdicts"]]
    assert used[0] == "ptxas 12.8" and used[2] == "ptxas 12.4"
    assert used[1] == ("ptxas 12.8" if h100_ptxas == "ptxas-blackwell" else "ptxas 12.4")


def test_second_ptxas_too_old_names_triton_ptxas_blackwell_path(tmp_path: Path) -> None:
    whl = wheel(tmp_path, "triton", "3.3.0", triton_members("12.4", "12.8", TRITON_33_SWITCH))
    # sm_121 (DGX Spark): CUDA 12.9 added it, so the 12.8 ptxas-blackwell cannot (triton-lang/triton#8539 shape)
    doc = judge(open_target(str(whl)), Gpu("GB10", ComputeCapability(12, 1)))
    t = row(doc, "triton")
    assert statuses(doc, "triton") == ["fails"]
    assert any(f.split(": ", 1)[1].startswith("export TRITON_PTXAS_BLACKWELL_PATH=") for f in t["fixes"])


def test_cli_check_triton_wheel_exit_codes(tmp_path: Path) -> None:
    whl = wheel(tmp_path, "triton", "3.2.0", triton_members("12.4"))
    base = [sys.executable, "-m", "cudafit", "check", str(whl), "--no-probe"]
    bad = subprocess.run([*base, "--gpu", "RTX 5090"], capture_output=True, text=True, check=False)
    assert bad.returncode == 1, bad.stderr
    assert "TRITON_PTXAS_PATH" in bad.stdout and "12.4" in bad.stdout
    ok = subprocess.run([*base, "--gpu", "RTX 4090"], capture_output=True, text=True, check=False)
    assert ok.returncode == 0 and "native" in ok.stdout, ok.stdout


def test_doctor_torch_compile_follows_the_installed_triton_and_triton_ptxas_path(tmp_path: Path) -> None:
    site = tmp_path / "site"
    install(site, "triton", "3.2.0", triton_members("12.4"))
    install(site, "torch", "2.6.0", {"torch/lib/libc10.so": elf([(".text", b"\0" * 16)]), "torch/version.py": b""})
    env: dict[str, str] = {"PATH": ""}
    doc = judge(EnvironmentTarget([str(site)]), RTX5090, RTX4090, environ=env, sites=[str(site)])
    assert statuses(doc, "torch") == ["fails", "native"]
    msg = row(doc, "torch")["verdicts"][0]["runtime"]["message"]
    assert msg.startswith("torch.compile (triton 3.2.0's ptxas)") and "CUDA 12.4" in msg
    newer = tmp_path / "cuda-12.8" / "bin" / "ptxas"
    newer.parent.mkdir(parents=True)
    newer.write_bytes(compiler_binary("12.8"))
    env["TRITON_PTXAS_PATH"] = str(newer)
    doc = judge(EnvironmentTarget([str(site)]), RTX5090, environ=env, sites=[str(site)])
    assert statuses(doc, "torch") == ["native"] and statuses(doc, "triton") == ["native"]
    assert row(doc, "torch")["verdicts"][0]["runtime"]["where"] == f"TRITON_PTXAS_PATH={newer}"


# NVRTC by soname (CuPy) --------------------------------------------------------------------------------------


def cupy_members() -> dict[str, bytes]:
    return {
        "cupy/cuda/jitify.cpython-311-x86_64-linux-gnu.so": elf([(".text", b"\0" * 16)], needed=("libnvrtc.so.12",))
    }


def test_nvrtc_by_soname_version_from_the_installed_provider(tmp_path: Path) -> None:
    site = tmp_path / "site"
    install(site, "cupy-cuda12x", "13.4.1", cupy_members())
    install(
        site, "nvidia-cuda-nvrtc-cu12", "12.4.127", {"nvidia/cuda_nvrtc/lib/libnvrtc.so.12": compiler_binary("12.4")}
    )
    doc = judge(EnvironmentTarget([str(site)]), RTX5090, H100, environ={"PATH": ""}, sites=[str(site)])
    assert statuses(doc, "cupy-cuda12x") == ["fails", "native"]
    assert "nvidia-cuda-nvrtc-cu12" not in [t["name"] for t in doc["targets"]]  # the provider is not judged
    t = row(doc, "cupy-cuda12x")
    assert "CuPy's NVRTC" in t["verdicts"][0]["runtime"]["message"]
    assert "CUDA_ERROR_NO_BINARY_FOR_GPU" not in t["verdicts"][0]["runtime"]["message"]  # says what happens instead
    assert any("nvidia-cuda-nvrtc-cu12>=12.8" in f for f in t["fixes"])
    assert any("CUPY_COMPILE_WITH_PTX=1" in f for f in t["fixes"])
    ptx = judge(
        EnvironmentTarget([str(site)]),
        RTX5090,
        environ={"PATH": "", "CUPY_COMPILE_WITH_PTX": "1"},
        sites=[str(site)],
    )
    assert statuses(ptx, "cupy-cuda12x") == ["jit"]


def test_nvrtc_soname_alone_is_unknown_and_pinned_requirement_decides(tmp_path: Path) -> None:
    loose = wheel(tmp_path, "cupy-cuda12x", "13.4.1", cupy_members())
    doc = judge(open_target(str(loose)), RTX5090, H100)
    assert statuses(doc, "cupy-cuda12x") == ["none", "native"]  # 12.x: every 12.x NVRTC targets sm_90
    runtime = row(doc, "cupy-cuda12x")["verdicts"][0]["runtime"]
    assert runtime["status"] == "unknown" and "must be CUDA >= 12.8" in runtime["message"]
    assert any(a["severity"] == "runtime" for a in doc["actions"])
    pinned = wheel(
        tmp_path / "pinned" if (tmp_path / "pinned").mkdir() is None else tmp_path,
        "somejit",
        "1.0",
        {"somejit/_ext.so": elf([(".text", b"\0" * 16)], needed=("libnvrtc.so.12",))},
        requires=("nvidia-cuda-nvrtc-cu12==12.4.127", "nvidia-cuda-nvrtc-cu12==12.9.86; extra == 'new'"),
    )
    doc = judge(open_target(str(pinned)), RTX5090)
    assert statuses(doc, "somejit") == ["fails"]
    assert row(doc, "somejit")["runtime_compilers"][0]["evidence"] == "needed+requirement"


# nvJitLink with LTO fragments ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("pin", "expected"), [("12.4.127", "fails"), ("12.8.93", "native")])
def test_nvjitlink_with_lto_fragments(tmp_path: Path, pin: str, expected: str) -> None:
    fb = fatbin(entry(8, 80), entry(2, 120))  # LTO-IR for sm_80 and SASS for sm_120
    lib = elf([(".nv_fatbin", pad8(fb))], needed=("libnvJitLink.so.12",))
    whl = wheel(tmp_path, "ltolib", "1.0", {"ltolib/_C.so": lib}, requires=(f"nvidia-nvjitlink-cu12=={pin}",))
    doc = judge(open_target(str(whl)), RTX5090)
    assert statuses(doc, "ltolib") == [expected]
    (comp,) = row(doc, "ltolib")["runtime_compilers"]
    assert comp["family"] == "nvjitlink" and "lto-ir" in comp["evidence"] and comp["cuda_version"] == pin[:4]


# nvcc JIT ------------------------------------------------------------------------------------------------------


def test_bundled_nvcc_for_jit(tmp_path: Path) -> None:
    whl = wheel(tmp_path, "jitpkg", "0.1", {"jitpkg/cuda/bin/nvcc": compiler_binary("12.6"), "jitpkg/__init__.py": b""})
    doc = judge(open_target(str(whl)), RTX5090, RTX4090)
    assert statuses(doc, "jitpkg") == ["fails", "native"]
    assert any("CUDA >= 12.8 CUDA toolkit and point CUDA_HOME" in f for f in row(doc, "jitpkg")["fixes"])


# XLA ------------------------------------------------------------------------------------------------------------


XLA_MARKER = b". Defaulting to telling LLVM that we're compiling for sm_\0"  # as in every XLA GPU build seen


def xla_plugin(*targets: str) -> bytes:
    table = b"\0" + b"\0".join(t.encode() for t in targets) + b"\0" + XLA_MARKER
    fb = fatbin(entry(2, 90), entry(1, 90, code_version=(8, 3), payload=b".version 8.3\n.target sm_90\n"))
    return elf([(".nv_fatbin", pad8(fb)), (".rodata", table)])


def test_xla_llvm_table_decides_and_doctor_finds_its_ptxas(tmp_path: Path) -> None:
    old = {"jax_plugins/xla_cuda12/xla_cuda_plugin.so": xla_plugin("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a")}
    doc = judge(open_target(str(wheel(tmp_path, "jax-cuda12-pjrt", "0.4.30", old))), RTX5090, B200, H100)
    assert statuses(doc, "jax-cuda12-pjrt") == ["fails", "fails", "native"]
    assert any(
        "jax-cuda12-pjrt >= 0.5.1" in f for f in row(doc, "jax-cuda12-pjrt")["fixes"]
    )  # measured: 0.5.1 knows sm_120a
    site = tmp_path / "site"
    new = {"jax_plugins/xla_cuda12/xla_cuda_plugin.so": xla_plugin("sm_90", "sm_90a", "sm_100", "sm_120", "sm_120a")}
    install(site, "jax-cuda12-pjrt", "0.5.3", new)
    install(site, "nvidia-cuda-nvcc-cu12", "12.4.131", {"nvidia/cuda_nvcc/bin/ptxas": compiler_binary("12.4")})
    doc = judge(EnvironmentTarget([str(site)]), RTX5090, H100, environ={"PATH": ""}, sites=[str(site)])
    # LLVM knows sm_120 but the ptxas XLA finds (CUDA 12.4) does not: XLA falls back to the driver
    assert statuses(doc, "jax-cuda12-pjrt") == ["jit", "native"]
    assert row(doc, "jax-cuda12-pjrt")["verdicts"][0]["runtime"]["code"] == "runtime-compiler-driver-fallback"


# readers and values ------------------------------------------------------------------------------------------------


def test_version_string_across_a_chunk_boundary_and_in_a_wheel_member(tmp_path: Path) -> None:
    path = tmp_path / "ptxas"
    path.write_bytes(compiler_binary("12.8", padding=(1 << 20) - 100))
    assert read_cuda_release(str(path)) == parse_cuda_version("12.8")
    whl = wheel(tmp_path, "x", "1", {"x/bin/ptxas": path.read_bytes()})
    assert read_cuda_release(f"{whl}!x/bin/ptxas") == parse_cuda_version("12.8")
    assert read_cuda_release(str(tmp_path / "missing")) is None
    script = tmp_path / "wrapper"
    script.write_text(f'#!/bin/sh\nexec {path} "$@"\n')
    assert read_cuda_release(str(script)) == parse_cuda_version("12.8")
    plugin = tmp_path / "xla_cuda_plugin.so"
    plugin.write_bytes(xla_plugin("sm_90a", "sm_100", "sm_90"))
    assert read_llvm_targets(str(plugin)) == ("sm_90", "sm_90a", "sm_100")
    marker = XLA_MARKER.decode().strip(". \0")
    assert read_llvm_targets(str(plugin), marker) == ("sm_90", "sm_90a", "sm_100")
    cpu_only = tmp_path / "xla_extension.so"  # a CPU jaxlib: LLVM's NVPTX table, no XLA GPU compiler
    cpu_only.write_bytes(elf([(".rodata", b"\0sm_90\0sm_90a\0")]))
    assert read_llvm_targets(str(cpu_only), marker) == ()


def test_value_objects_round_trip() -> None:
    for text in ("ptxas 12.4", "nvrtc 12.x", "nvjitlink 13.0"):
        assert str(parse_runtime_compiler(text)) == text
    from cudafit.errors import ValueParseError

    with pytest.raises(ValueParseError):
        parse_runtime_compiler("gcc 12")
    c = RuntimeCompiler("ptxas", parse_cuda_version("12.4"), arch_below=100)
    assert c.used_for(ComputeCapability(9, 0)) and not c.used_for(ComputeCapability(10, 0))
    assert judge_compiler(c, ComputeCapability(12, 0)).status == "fails"


def test_compilers_data_matches_its_schema() -> None:
    data = ROOT / "src/cudafit/rules/data"
    schema = json.loads((data / "compilers.schema.json").read_text())
    doc = json.loads((data / "compilers.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(doc, schema)
    broken = {**doc, "families": {**doc["families"], "ptxas": {**doc["families"]["ptxas"], "source": "nowhere"}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_unreadable_compiler_member_does_not_crash(tmp_path: Path) -> None:
    whl = wheel(tmp_path, "triton", "3.2.0", {"triton/backends/nvidia/bin/ptxas": b"\x7fELF" + b"\0" * 8})
    doc = judge(open_target(str(whl)), RTX5090)
    assert os.path.basename(row(doc, "triton")["path"]).startswith("triton")


# explain -> the compiler ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("ptxas fatal : Value 'sm_120' is not defined for option 'gpu-name'", "Triton's ptxas"),
        ("nvrtc: error: invalid value for --gpu-architecture (-arch)", "NVRTC"),
        ("cupy.cuda.driver.CUDADriverError: CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is available", "NVRTC"),
    ],
)
def test_explain_names_the_compiler_its_version_and_the_switch(tmp_path: Path, text: str, needle: str) -> None:
    from cudafit.explain import classify
    from cudafit.explain.compilers import ground_compilers
    from cudafit.model import Gpu

    site = tmp_path / "site"
    install(site, "triton", "3.2.0", triton_members("12.4"))
    install(
        site, "nvidia-cuda-nvrtc-cu12", "12.4.127", {"nvidia/cuda_nvrtc/lib/libnvrtc.so.12": compiler_binary("12.4")}
    )
    gpus = (Gpu("GeForce RTX 5090", ComputeCapability(12, 0)),)
    findings = ground_compilers(classify(text), gpus, [str(site)], {"PATH": ""})
    top = next(f for f in findings if "runtime_compiler" in f.evidence)
    assert needle in top.cause and "CUDA 12.4" in top.cause
    assert top.fixes[0].startswith(
        "export TRITON_PTXAS_PATH=" if needle.startswith("Triton") else "install a CUDA >= 12.8"
    )
    on_4090 = ground_compilers(classify(text), (Gpu("RTX 4090", ComputeCapability(8, 9)),), [str(site)], {"PATH": ""})
    if "sm_120" not in text:  # the message names no arch: the GPU decides, and 12.4 targets sm_89
        assert not any("runtime_compiler" in f.evidence for f in on_4090)


# fleet --------------------------------------------------------------------------------------------------------------


def test_fleet_classes_get_the_run_time_verdict(tmp_path: Path, cli: Any) -> None:
    from cudafit.fleet.inventory import FleetGpu, FleetNode, build_inventory
    from cudafit.model import parse_driver_version

    def node(name: str, gpu: str, cc: tuple[int, int]) -> FleetNode:
        g = FleetGpu(gpu, ComputeCapability(*cc), 1)
        return FleetNode(name, "test", "ok", gpus=(g,), driver=parse_driver_version("580.65.06"))

    fleet = build_inventory([node("a", "NVIDIA GeForce RTX 5090", (12, 0)), node("b", "NVIDIA H100", (9, 0))], "test")
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(fleet.to_dict()))
    whl = wheel(tmp_path, "triton", "3.2.0", triton_members("12.4"))
    rc, out, _err = cli("check", str(whl), "--fleet", str(path), "--json")
    assert rc == 1
    doc = json.loads(out)
    jsonschema.validate(doc, json.loads((ROOT / "src/cudafit/schema/fleet_check.json").read_text()))
    by_cc = {c["gpus"][0]["compute_capability"]: c["verdicts"][0] for c in doc["classes"]}
    assert {cc: v["status"] for cc, v in by_cc.items()} == {"12.0": "fails", "9.0": "native"}
    assert by_cc["12.0"]["by_gpu"][0]["runtime"]["message"].endswith("'sm_120' is not defined for option 'gpu-name'")
    assert any("TRITON_PTXAS_PATH" in f for f in by_cc["12.0"]["fixes"])
    assert by_cc["9.0"]["by_gpu"][0]["runtime"]["status"] == "native"


def test_warp_static_nvrtc_falls_back_to_ptx(tmp_path: Path) -> None:
    """warp-lang 1.9.1's warp/bin/warp.so carries NVRTC 12.8 (its release string); sm_121 came with 12.9."""
    from cudafit.model import parse_driver_version

    whl = wheel(tmp_path, "warp-lang", "1.9.1", {"warp/bin/warp.so": compiler_binary("12.8")})
    gb10 = Gpu("GB10", ComputeCapability(12, 1))
    doc = judge(open_target(str(whl)), RTX5090, gb10, driver=parse_driver_version("580.65.06"))
    assert statuses(doc, "warp-lang") == ["native", "jit"]
    old = judge(open_target(str(whl)), gb10, driver=parse_driver_version("560.28.03"))  # CUDA 12.6: ISA 8.5 < 8.7
    assert statuses(old, "warp-lang") == ["fails"]
    assert row(old, "warp-lang")["verdicts"][0]["runtime"]["code"] == "runtime-ptx-too-new"


def test_torch_wheel_alone_judges_the_triton_it_pins_and_its_nvrtc_falls_back_to_ptx(tmp_path: Path) -> None:
    """torch 2.8.0's shape: libcaffe2_nvrtc.so NEEDs libnvrtc.so.12, METADATA pins nvidia-cuda-nvrtc-cu12==12.8.93
    and triton==3.4.0 (whose ptxas was measured as CUDA 12.8); nvJitLink is only a requirement."""
    members = {
        "torch/lib/libcaffe2_nvrtc.so": elf([(".text", b"\0" * 16)], needed=("libnvrtc.so.12",)),
        "torch/lib/libc10_cuda.so": elf([(".nv_fatbin", pad8(fatbin(entry(2, 120), entry(2, 90))))]),
    }
    requires = (
        "nvidia-cuda-nvrtc-cu12==12.8.93; platform_system == 'Linux'",
        "nvidia-nvjitlink-cu12==12.8.93; platform_system == 'Linux'",
        'triton==3.4.0; platform_system == "Linux" and platform_machine == "x86_64"',
    )
    whl = wheel(tmp_path, "torch", "2.8.0", members, requires)
    gb10 = Gpu("GB10", ComputeCapability(12, 1))
    doc = judge(open_target(str(whl)), RTX5090, gb10)
    t = row(doc, "torch")
    assert sorted((c["family"], c["user"], c["cuda_version"]) for c in t["runtime_compilers"]) == [
        ("nvrtc", "torch", "12.8"),
        ("ptxas", "torch.compile", "12.8"),
    ]
    assert statuses(doc, "torch") == ["native", "fails"]
    runtime = t["verdicts"][1]["runtime"]
    assert runtime["user"] == "torch.compile" and "triton 3.4.0" in runtime["message"]
    assert any("triton>=3.6.0" in f for f in t["fixes"])  # measured: 3.6.0's ptxas-blackwell is CUDA 12.9
    nvrtc = judge_compiler(
        next(
            RuntimeCompiler(**{**c, "cuda": parse_cuda_version("12.8")}) for c in [{"family": "nvrtc", "user": "torch"}]
        ),
        ComputeCapability(12, 1),
    )
    assert nvrtc.status == "jit"  # torch clamps the arch and compiles to PTX (jit_utils.cpp)


def test_corrupt_compiler_member_in_a_wheel_is_no_crash(tmp_path: Path) -> None:
    whl = wheel(tmp_path, "triton", "3.2.0", triton_members("12.4"))
    data = bytearray(whl.read_bytes())
    with zipfile.ZipFile(whl) as zf:
        info = zf.getinfo("triton/backends/nvidia/bin/ptxas")
    start = info.header_offset + 30 + len(info.filename) + 40
    data[start : start + 64] = bytes(64)  # garbage in the deflate stream
    whl.write_bytes(bytes(data))
    assert read_cuda_release(f"{whl}!triton/backends/nvidia/bin/ptxas") is None
    doc = judge(open_target(str(whl)), RTX5090)  # the member is reported, nothing raises
    assert doc["targets"]


def test_nvcc_jit_library_judged_with_the_nvcc_it_will_find(tmp_path: Path) -> None:
    """flashinfer-jit-cache's shape (a JIT library by its documented name, ecosystem.json runtime_compiling):
    doctor reads the release of the nvcc of CUDA_HOME (never runs it); check, without an environment, cannot tell."""
    site = tmp_path / "site"
    lib = elf([(".nv_fatbin", pad8(fatbin(entry(2, 90), entry(2, 120))))])
    install(site, "flashinfer-jit-cache", "0.5.3", {"flashinfer_jit_cache/jit_cache/norm.so": lib})
    toolkit = tmp_path / "cuda-12.6"
    (toolkit / "bin").mkdir(parents=True)
    (toolkit / "bin" / "nvcc").write_bytes(compiler_binary("12.6"))
    env = {"PATH": "", "CUDA_HOME": str(toolkit)}
    doc = judge(EnvironmentTarget([str(site)]), RTX5090, H100, environ=env, sites=[str(site)])
    assert statuses(doc, "flashinfer-jit-cache") == ["fails", "native"]
    t = row(doc, "flashinfer-jit-cache")
    assert t["verdicts"][0]["runtime"]["where"] == str(toolkit / "bin" / "nvcc")
    assert any("CUDA_HOME" in f for f in t["fixes"])
    env["CUDA_HOME"] = str(tmp_path / "none")
    unknown = judge(EnvironmentTarget([str(site)]), RTX5090, environ=env, sites=[str(site)])
    assert row(unknown, "flashinfer-jit-cache")["verdicts"][0]["runtime"]["status"] == "unknown"


def test_explain_cli_grounds_on_the_site_packages_compiler(tmp_path: Path, cli: Any) -> None:
    site = tmp_path / "site"
    install(site, "triton", "3.2.0", triton_members("12.4"))
    text = "ptxas fatal : Value 'sm_120' is not defined for option 'gpu-name'"
    rc, out, _err = cli("explain", text, "--site-packages", str(site), "--gpu", "RTX 5090", "--no-probe", "--json")
    assert rc == 0
    doc = json.loads(out)
    jsonschema.validate(doc, json.loads((ROOT / "src/cudafit/schema/explain.json").read_text()))
    (f,) = doc["findings"]
    assert f["evidence"]["runtime_compiler"]["cuda_version"] == "12.4"
    assert f["cause"].startswith("Triton's ptxas from ") and "(CUDA 12.4) cannot target sm_120" in f["cause"]
    assert f["fixes"][0].startswith("export TRITON_PTXAS_PATH=")


def test_xla_on_a_gpu_its_llvm_does_not_know() -> None:
    """Below sm_90 XLA's fallback PTX (the newest sm its LLVM knows) is assembled by ptxas for the GPU; from
    sm_90 on it is an 'a' target that never compiles for another GPU (cantinilab/stories#5 shape)."""
    old_llvm = RuntimeCompiler("xla", user="xla", llvm_targets=("sm_75", "sm_80", "sm_86"))
    assert judge_compiler(old_llvm, ComputeCapability(8, 9)).status == "native"  # sm_86 PTX -> ptxas sm_89
    hopper = RuntimeCompiler("xla", user="xla", llvm_targets=("sm_86", "sm_89", "sm_90", "sm_90a"))
    j = judge_compiler(hopper, ComputeCapability(12, 0))
    assert j.status == "fails" and "'sm_90a' cannot be compiled to future architecture" in j.message


@pytest.mark.parametrize("switch", [TRITON_33_SWITCH, TRITON_39_SWITCH], ids=["triton-3.3", "triton-3.9"])
def test_triton_two_ptxas_same_verdicts_from_wheel_and_extracted_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, switch: str
) -> None:
    """Issue 24 on triton 3.3.x: the directory found ``ptxas-blackwell`` and ``compiler.py`` relative to the
    working directory, so the 12.4 ``ptxas`` was judged for sm_120 and the RTX 5090 "failed"."""
    members = triton_members("12.4", "12.8", switch)
    whl = wheel(tmp_path, "triton", "3.3.0", members)
    site = tmp_path / "site"
    install(site, "triton", "3.3.0", members)  # as pip extracts it (ELF files executable)
    decoy = tmp_path / "cwd"  # a working directory with another Triton layout must not be read
    (decoy / "triton/backends/nvidia").mkdir(parents=True)
    (decoy / "triton/backends/nvidia/compiler.py").write_text(TRITON_32_SWITCH)
    monkeypatch.chdir(decoy)
    gpus = (RTX5090, H100, RTX4090)

    def used(target: Any, **kw: Any) -> list[tuple[str, str]]:
        doc = judge(target, *gpus, **kw)
        return [(v["status"], v["runtime"]["compiler"]) for v in row(doc, "triton")["verdicts"]]

    from_wheel, from_dir = used(open_target(str(whl))), used(open_target(str(site)))
    installed = used(EnvironmentTarget([str(site)]), environ={"PATH": ""}, sites=[str(site)])  # doctor
    assert from_wheel == from_dir == installed
    assert from_dir[0] == ("native", "ptxas 12.8") and from_dir[2] == ("native", "ptxas 12.4")
