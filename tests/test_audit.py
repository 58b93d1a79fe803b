"""`cudafit audit`: fixture wheels that pass and fail each policy form, pyproject policies, --match-torch,
and the JSON / SARIF / JUnit outputs validated against their schemas."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from audit_helpers import (
    SARIF_SCHEMA,
    audit_json,
    fake_torch_lib,
    fake_torch_site,
    fixture,
    make_wheel,
    missing,
    run_audit,
    run_audit_process,
    so,
)
from cudafit.audit.spec import SpecError, parse_require
from cudafit.audit.torch import build_list
from cudafit.binary import inspect_bytes
from cudafit.model import ComputeCapability

# -- the spec grammar ------------------------------------------------------------------------------


def labels(spec: str) -> list[str]:
    return [f"{r.form}:{r.label}" for r in parse_require(spec)]


def test_torch_arch_list_keeps_torch_meaning() -> None:
    assert labels("7.5 8.0;8.6 12.0+PTX") == [
        "torch:7.5",
        "torch:8.0",
        "torch:8.6",
        "torch:12.0",
        "torch:PTX 12.0",
    ]
    # torch's named architectures, expanded as torch.utils.cpp_extension does
    assert labels("Ampere") == ["torch:8.0", "torch:8.6", "torch:PTX 8.6"]
    (hopper,) = parse_require("9.0a")
    assert hopper.ccs == (ComputeCapability(9, 0),) and hopper.variant == "a"
    (fam,) = parse_require("10.0f")  # the 100f family: every member must be served
    assert [str(c) for c in fam.ccs] == ["10.0", "10.3", "10.7"]


def test_cmake_architectures_keep_cmake_meaning() -> None:
    # bare XY = real + virtual (SASS and PTX); -real SASS only; -virtual PTX only
    assert labels("75;80-real;90a;120-virtual") == [
        "cmake:7.5",
        "cmake:PTX 7.5",
        "cmake:8.0",
        "cmake:9.0a",
        "cmake:PTX 9.0a",
        "cmake:PTX 12.0",
    ]


def test_nvcc_names_and_gpu_names() -> None:
    assert labels("sm_80 compute_90") == ["nvcc:8.0", "nvcc:PTX 9.0"]
    assert labels("H100,RTX 4090") == ["gpu:9.0", "gpu:8.9"]
    assert labels("RTX 3090") == ["gpu:8.6"]


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("native", "machine that builds"),
        ("75;all-major", "all supported major"),
        ("all", "all supported"),
        ("8.5", "no GPU has compute capability 8.5"),
        ("7.5a", "from compute capability 9.0 on"),
        ("9.0f", "no 90f family"),
        ("7.5 80", "'80' is not a TORCH_CUDA_ARCH_LIST entry"),
        ("Zorro 9000", "unknown GPU"),
        ("  ", "empty"),
    ],
)
def test_bad_specs_are_rejected_clearly(spec: str, says: str) -> None:
    with pytest.raises(SpecError, match=says):
        parse_require(spec)


# -- policy forms on fixture wheels ----------------------------------------------------------------


@pytest.fixture
def wheels(tmp_path: Path) -> dict[str, Path]:
    """Fixture wheels: libmulti (sm_75..sm_120 + compute_120), an extension built for 8.0/9.0 only, a PTX-only
    library, libroles (one module per role), per-arch fatbins loaded by the library, and a pure wheel."""
    return {
        "multi": make_wheel(tmp_path, "goodext", "1.0", {"goodext/_C.so": fixture("libmulti.so")}),
        "narrow": make_wheel(
            tmp_path,
            "narrowext",
            "2.0",
            {
                "narrowext/_C.so": so(("sm_80", "sm_90"), ("sm_80", "sm_90")),
                "narrowext/other.so": fixture("libmulti.so"),
            },
        ),
        "ptxonly": make_wheel(tmp_path, "ptxext", "1.0", {"ptxext/_C.so": fixture("libptxonly.so")}),
        "roles": make_wheel(tmp_path, "rolesext", "1.0", {"rolesext/_C.so": fixture("libroles.so")}),
        "cubins": make_wheel(
            tmp_path,
            "kernels-cubin",
            "1.0",
            {
                "kernels_cubin/cubins/sm_80/gemm.fatbin": inspect_ready_fatbin(80),
                "kernels_cubin/cubins/sm_90/gemm.fatbin": inspect_ready_fatbin(90),
                "kernels_cubin/cubins/sm_90/attn.cubin": fixture("k_sm90a.cubin"),
            },
        ),
        "pure": make_wheel(tmp_path, "pureext", "1.0", {"pureext/__init__.py": b"x = 1\n"}),
    }


def inspect_ready_fatbin(arch: int) -> bytes:
    import builders as b

    return b.fatbin(b.entry(2, arch))


POLICIES_MULTI_PASSES = [
    "7.5 8.0 8.6 9.0 10.0 12.0+PTX",  # torch
    "Turing;Ampere;Hopper",  # torch names (8.6+PTX, 9.0+PTX: compute_120 serves neither... see below)
    "75-real;80-real;86-real;90-real;100-real;120",  # CMake
    "sm_75 sm_89 compute_120",  # nvcc
    "T4,RTX 4090,H100,B200,RTX 5090",  # GPU names
    "12.0f",  # sm_120 runs on the 120f family (12.0, 12.1)
]


@pytest.mark.parametrize("spec", [p for p in POLICIES_MULTI_PASSES if "Turing" not in p])
def test_each_policy_form_passes(wheels: dict[str, Path], spec: str) -> None:
    rc, doc = audit_json(str(wheels["multi"]), "--require", spec, "--no-config")
    assert rc == 0, doc
    assert doc["status"] == "pass" and doc["targets"][0]["fix"] is None
    assert doc["targets"][0]["name"] == "goodext"


@pytest.mark.parametrize(
    ("spec", "lacks"),
    [
        ("7.5 8.0 9.0", ["7.5"]),  # torch
        ("75-real;80-real", ["7.5"]),  # CMake
        ("sm_75", ["7.5"]),  # nvcc
        ("T4,A100", ["7.5"]),  # GPU names
        ("12.0+PTX", ["12.0", "PTX 12.0"]),  # nothing for 12.0 in _C.so (sm_90 does not run on 12.0)
    ],
)
def test_each_policy_form_fails(wheels: dict[str, Path], spec: str, lacks: list[str]) -> None:
    rc, doc = audit_json(str(wheels["narrow"]), "--require", spec, "--no-config")
    assert rc == 1
    assert missing(doc) == lacks
    (failing,) = [m for m in doc["targets"][0]["members"] if m["status"] == "fail"]
    assert failing["path"].endswith("!narrowext/_C.so")  # other.so (libmulti) meets the policy
    assert failing["sass"] == ["sm_80", "sm_90"]


def test_cmake_bare_arch_needs_ptx_for_it(wheels: dict[str, Path]) -> None:
    """CMake's bare 75 is 75-real + 75-virtual: compute_120 PTX cannot be JIT-compiled for 7.5."""
    rc, doc = audit_json(str(wheels["multi"]), "--require", "75;120", "--no-config")
    assert rc == 1 and missing(doc) == ["PTX 7.5"]
    gap = doc["targets"][0]["members"][0]["checks"][1]["gaps"][0]
    assert gap["kind"] == "no-ptx" and gap["compute_capability"] == "7.5"
    # torch's named Turing is 7.5+PTX: the same gap
    rc, doc = audit_json(str(wheels["multi"]), "--require", "Turing", "--no-config")
    assert rc == 1 and missing(doc) == ["PTX 7.5"]


def test_fix_is_the_policy_in_each_build_system(wheels: dict[str, Path]) -> None:
    _rc, doc = audit_json(str(wheels["narrow"]), "--require", "7.5 8.0 9.0 12.0+PTX", "--no-config")
    fix = doc["targets"][0]["fix"]
    assert fix["torch_cuda_arch_list"] == "7.5;8.0;9.0;12.0+PTX"
    assert fix["cmake_cuda_architectures"] == "75-real;80-real;90-real;120"
    assert fix["nvcc_flags"] == [
        "-gencode arch=compute_75,code=sm_75",
        "-gencode arch=compute_80,code=sm_80",
        "-gencode arch=compute_90,code=sm_90",
        "-gencode arch=compute_120,code=sm_120",
        "-gencode arch=compute_120,code=compute_120",
    ]
    assert fix["problems"] == []
    assert any("sm_86" in n for n in fix["notes"])  # other.so has 8.6/8.9/10.0: keep them


def test_fix_names_what_the_toolkit_cannot_build(tmp_path: Path) -> None:
    """Seed 004's shape: a CUDA 13 build asked for 6.1, which no CUDA 13 toolkit can target."""
    whl = make_wheel(tmp_path, "ext13", "1.0", {"ext13/_C.so": so(("sm_75", "sm_80"), needed=("libcudart.so.13",))})
    rc, doc = audit_json(str(whl), "--require", "6.1 7.5 8.0", "--no-config")
    t = doc["targets"][0]
    assert rc == 1 and missing(doc) == ["6.1"] and t["cuda_major"] == 13
    assert t["fix"]["torch_cuda_arch_list"] == "7.5;8.0"
    (problem,) = t["fix"]["problems"]
    assert "cannot build sm_61" in problem and "CUDA 12" in problem


def test_jit_only_meets_a_sass_requirement_only_when_allowed(wheels: dict[str, Path]) -> None:
    rc, doc = audit_json(str(wheels["ptxonly"]), "--require", "8.0", "--no-config")
    assert rc == 1
    gap = doc["targets"][0]["members"][0]["checks"][0]["gaps"][0]
    assert gap["kind"] == "jit-only" and gap["archs"] == "compute_75"
    rc, _doc = audit_json(str(wheels["ptxonly"]), "--require", "8.0", "--allow-jit", "--no-config")
    assert rc == 0
    rc, _doc = audit_json(str(wheels["ptxonly"]), "--require", "80-virtual", "--no-config")  # PTX 8.0: compute_75 JITs
    assert rc == 0


def test_specialised_and_gated_modules_pass_only_where_declared(wheels: dict[str, Path]) -> None:
    """libroles.so: on 7.5 one module is specialised (8.0+ only) and one gated (sm_90a); on 9.0 one is a hole."""
    rc, doc = audit_json(str(wheels["roles"]), "--require", "7.5 8.0 10.0", "--no-config")
    assert rc == 1 and missing(doc) == ["7.5", "8.0", "10.0"]
    kinds = {g["kind"] for c in doc["targets"][0]["members"][0]["checks"] for g in c["gaps"]}
    assert kinds == {"specialised", "gated"}
    rc, doc = audit_json(str(wheels["roles"]), "--require", "7.5 8.0 10.0", "--allow-specialised", "--no-config")
    assert rc == 0
    assert [c["status"] for c in doc["targets"][0]["members"][0]["checks"]] == ["allowed", "allowed", "allowed"]
    # a hole never passes
    rc, doc = audit_json(str(wheels["roles"]), "--require", "9.0", "--allow-specialised", "--no-config")
    assert rc == 1
    (hole,) = [g for g in doc["targets"][0]["members"][0]["checks"][0]["gaps"] if not g["allowed"]]
    assert hole["kind"] == "hole" and hole["reason"] == "hole-build-skips-gpu"
    assert hole["kernels"] == ["_Z18gemma_rmsnorm_likePff"]


def test_gated_modules_of_a_file_without_code_are_holes(tmp_path: Path) -> None:
    """libarch_a.so has only a-targets: on 8.0 nothing in the file runs, whatever the policy allows."""
    rc, doc = audit_json(str(BIN_FILE("libarch_a.so")), "--require", "8.0", "--allow-specialised", "--no-config")
    assert rc == 1
    assert doc["targets"][0]["members"][0]["checks"][0]["gaps"][0]["kind"] == "hole"
    rc, _ = audit_json(str(BIN_FILE("libarch_a.so")), "--require", "9.0a 10.0 12.0", "--no-config")
    assert rc == 0


def test_family_requirement_needs_every_member(tmp_path: Path) -> None:
    rc, _ = audit_json(str(BIN_FILE("libfamily_f.so")), "--require", "10.0f", "--no-config")
    assert rc == 0  # sm_100f serves 10.0, 10.3, 10.7
    rc, doc = audit_json(str(BIN_FILE("libarch_a.so")), "--require", "10.0f", "--no-config")
    assert rc == 1  # sm_100a runs on 10.0 only
    gaps = doc["targets"][0]["members"][0]["checks"][0]["gaps"]
    assert sorted(g["compute_capability"] for g in gaps) == ["10.3", "10.7"]


def test_ptx_requirement_exempts_kernel_less_stubs() -> None:
    """libdlink.so: a kernel-less device-link stub (sm_80) and the TU (sm_80); only the TU lacks PTX."""
    rc, doc = audit_json(str(BIN_FILE("libdlink.so")), "--require", "8.0+PTX", "--no-config")
    assert rc == 1
    (gap,) = doc["targets"][0]["members"][0]["checks"][1]["gaps"]
    assert gap["kind"] == "no-ptx" and gap["modules"] == 1


def test_library_loaded_cubins_are_judged_as_pools(wheels: dict[str, Path]) -> None:
    """Per-arch fatbins/cubins the library loads itself: the pool meets 8.0 and 9.0 (sm_90a serves 9.0 too)."""
    rc, doc = audit_json(str(wheels["cubins"]), "--require", "8.0 9.0", "--no-config")
    assert rc == 0
    (pool,) = doc["targets"][0]["members"]
    assert pool["kind"] == "pool" and pool["files"] == 3
    assert pool["path"].endswith("!kernels_cubin/cubins")  # sm_80/ and sm_90/ are one pool
    rc, doc = audit_json(str(wheels["cubins"]), "--require", "8.0 10.0", "--no-config")
    assert rc == 1 and missing(doc) == ["10.0"]
    gap = doc["targets"][0]["members"][0]["checks"][1]["gaps"][0]
    assert gap["kind"] == "no-code" and gap["archs"] == "sm_80, sm_90, sm_90a"


def test_pure_wheel_and_unreadable_wheel(wheels: dict[str, Path], tmp_path: Path) -> None:
    rc, doc = audit_json(str(wheels["pure"]), "--require", "8.0", "--no-config")
    assert rc == 1 and doc["targets"][0]["members"][0]["checks"][0]["gaps"][0]["kind"] == "no-device-code"
    broken = tmp_path / "broken-1.0-py3-none-any.whl"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    rc, doc = audit_json(str(broken), "--require", "8.0", "--no-config")
    assert rc == 3 and doc["targets"][0]["status"] == "error"
    rc, _out, err = run_audit(str(tmp_path / "missing.whl"), "--require", "8.0", "--no-config")
    assert rc == 3 and "Traceback" not in err


def test_directory_audits_each_wheel(wheels: dict[str, Path], tmp_path: Path) -> None:
    rc, doc = audit_json(str(tmp_path), "--require", "8.0", "--no-config")
    names = sorted(t["name"] for t in doc["targets"])
    assert names == ["goodext", "kernels-cubin", "narrowext", "ptxext", "pureext", "rolesext"]
    assert rc == 1  # ptxext (JIT only) and pureext (no code) fail 8.0


def test_usage_errors(wheels: dict[str, Path], tmp_path: Path) -> None:
    rc, _out, err = run_audit_process(str(wheels["multi"]), "--no-config")  # the installed entry point
    assert rc == 2 and "nothing to require" in err
    rc, _out, err = run_audit_process(str(wheels["multi"]), "--require", "native", "--no-config")
    assert rc == 2 and "native" in err and "Traceback" not in err


# -- pyproject.toml ---------------------------------------------------------------------------------


def test_pyproject_policy_needs_no_flags(wheels: dict[str, Path], tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "dist").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.cudafit.audit]\nrequire = ["7.5 8.0", "H100"]\nallow-specialised = true\n'
    )
    work = project / "sub" / "dir"
    work.mkdir(parents=True)
    rc, doc = audit_json(str(wheels["roles"]), cwd=work)  # found upwards from the working directory
    pol = doc["policy"]
    assert pol["config"] == str(project / "pyproject.toml")
    assert pol["require"] == ["7.5 8.0", "H100"] and pol["allow_specialised"] is True
    assert [r["label"] for r in pol["requirements"]] == ["7.5", "8.0", "9.0"]
    assert rc == 1 and missing(doc) == ["9.0"]  # the hole on 9.0
    rc, doc = audit_json(str(wheels["roles"]), "--require", "7.5", "--no-allow-specialised", cwd=work)
    assert rc == 1 and doc["policy"]["allow_specialised"] is False  # flags override the file
    rc, doc = audit_json(str(wheels["roles"]), "--require", "7.5", cwd=work)
    assert rc == 0


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ("require = 75\n", "must be a string or a list of strings"),
        ('require = "7.5"\nallow-specialised = "yes"\n', "must be true or false"),
        ('require = "7.5"\nstrict = true\n', "unknown key(s) in [tool.cudafit.audit]: strict"),
        ('require = "all-major"\n', "all-major"),
    ],
)
def test_bad_pyproject_policy_is_a_usage_error(tmp_path: Path, wheels: dict[str, Path], table: str, says: str) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.cudafit.audit]\n" + table)
    rc, _out, err = run_audit(str(wheels["multi"]), cwd=tmp_path)
    assert rc == 2 and says in err, err


# -- --match-torch ----------------------------------------------------------------------------------


def test_torch_build_list_is_what_most_modules_carry() -> None:
    sass, ptx = build_list(inspect_bytes(fake_torch_lib(), "libtorch_cuda.so"))
    assert [str(c) for c in sass] == ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0"]  # not 8.9 (one module)
    assert ptx == ()


def test_match_torch_from_an_environment(tmp_path: Path) -> None:
    site = fake_torch_site(tmp_path / "env")
    narrow = make_wheel(tmp_path, "ext", "1.0", {"ext/_C.so": so(("sm_80", "sm_86", "sm_90", "sm_100"))})
    for spec in (str(site), str(site / "torch"), str(tmp_path / "env" / "bin" / "python"), str(tmp_path / "env")):
        rc, doc = audit_json(str(narrow), "--match-torch", spec, "--no-config")
        assert rc == 1, spec
        assert doc["policy"]["match_torch"]["version"] == "2.14.1+cu130"
        assert doc["targets"][0]["torch"] == "torch 2.14.1+cu130 runs on 7.5 .. 12.0; this wheel lacks 7.5 and 12.0"
    rc, out, _err = run_audit(str(narrow), "--match-torch", str(site), "--no-config")
    assert "torch 2.14.1+cu130 runs on 7.5 .. 12.0; this wheel lacks 7.5 and 12.0" in out
    rc, doc = audit_json(
        str(make_wheel(tmp_path, "wide", "1.0", {"w/_C.so": fixture("libmulti.so")})),
        "--match-torch",
        str(site),
        "--no-config",
    )
    assert rc == 0 and doc["targets"][0]["torch"].endswith("this wheel covers all of it")


def test_match_torch_from_a_torch_wheel(tmp_path: Path) -> None:
    torch_whl = make_wheel(
        tmp_path,
        "torch",
        "2.14.1",
        {"torch/lib/libtorch_cuda.so": fake_torch_lib(), "torch/version.py": b"__version__ = '2.14.1+cu130'\n"},
    )
    ext = make_wheel(tmp_path, "ext", "1.0", {"ext/_C.so": so(("sm_75", "sm_80", "sm_90", "sm_100", "sm_120"))})
    rc, doc = audit_json(str(ext), "--match-torch", str(torch_whl), "--no-config")
    assert rc == 0, doc  # sm_80 serves 8.6
    cpu = make_wheel(tmp_path, "torchcpu", "2.14.1", {"torch/version.py": b"__version__ = '2.14.1+cpu'\n"})
    rc, _out, err = run_audit(str(ext), "--match-torch", str(cpu), "--no-config")
    assert rc == 3 and "CPU-only" in err


def test_match_torch_in_pyproject_is_relative_to_it(tmp_path: Path) -> None:
    fake_torch_site(tmp_path / "env")
    (tmp_path / "pyproject.toml").write_text('[tool.cudafit.audit]\nmatch-torch = "env"\nrequire = "12.0+PTX"\n')
    ext = make_wheel(tmp_path, "ext", "1.0", {"ext/_C.so": fixture("libmulti.so")})
    rc, doc = audit_json(str(ext), cwd=tmp_path)
    assert rc == 0 and doc["policy"]["match_torch"]["sass"][0] == "7.5"
    assert "PTX 12.0" in [r["label"] for r in doc["policy"]["requirements"]]


# -- outputs ----------------------------------------------------------------------------------------


def test_sarif_validates_against_the_official_schema(wheels: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "audit.sarif"
    rc, text, _err = run_audit(
        str(wheels["narrow"]),
        str(wheels["roles"]),
        "--require",
        "7.5 9.0+PTX",
        "--format",
        "sarif",
        "--output",
        str(out),
        "--no-config",
    )
    assert rc == 1 and "FAIL narrowext 2.0" in text  # the text report still goes to stdout
    sarif = json.loads(out.read_text())
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(sarif)
    (run,) = sarif["runs"]
    rules = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert {res["ruleId"] for res in run["results"]} <= rules
    assert {"MissingCode", "MissingPtx", "Specialised"} <= {res["ruleId"] for res in run["results"]}
    assert all(
        res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(".whl") for res in run["results"]
    )
    # a passing audit is a valid SARIF log with no results
    rc, out_text, _ = run_audit(str(wheels["multi"]), "--require", "8.0", "--format", "sarif", "--no-config")
    empty = json.loads(out_text)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(empty)
    assert rc == 0 and empty["runs"][0]["results"] == []


def test_junit_has_one_case_per_member_and_arch(wheels: dict[str, Path], tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    rc, _out, _err = run_audit(str(wheels["narrow"]), "--require", "7.5 8.0 9.0", "--junit", str(report), "--no-config")
    assert rc == 1
    root = ET.parse(report).getroot()
    cases = root.findall(".//testcase")
    assert len(cases) == 2 * 3  # two members x three archs
    failed = [(c.get("classname"), c.get("name")) for c in cases if c.find("failure") is not None]
    assert failed == [(next(c.get("classname") for c in cases if c.get("classname", "").endswith("_C.so")), "7.5")]
    assert root.get("failures") == "1" and root.get("tests") == "6"


def BIN_FILE(name: str) -> Path:
    from audit_helpers import BIN

    return BIN / name


def test_light_cubin_read_agrees_with_read_cubin() -> None:
    """Bare cubins are scanned with headers + .nv.compat only; the a flag must equal the full read's."""
    from cudafit.binary import read_cubin, read_entry_payload
    from cudafit.binary.cubin import cubin_is_arch_specific

    bare = fixture("k_sm90a.cubin")
    assert cubin_is_arch_specific(bare) is True is read_cubin(bare).arch_specific
    for name in ("libmulti.so", "libarch_a.so", "libfamily_f.so"):
        data = fixture(name)
        facts = inspect_bytes(data, name)
        for e in facts.entries:
            if e.kind.value == "sass":
                cubin = read_entry_payload(data, e)
                assert cubin_is_arch_specific(cubin) == read_cubin(cubin).arch_specific, (name, e.arch_name)
