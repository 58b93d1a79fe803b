"""Every CUDA runtime and driver error of the recorded inventory against ``explain`` (issue 18).

The inventory (src/cudafit/explain/data/cuda_errors.json) is recorded from NVIDIA's runtime wheels by
scripts/record_cuda_errors.py: each ``cudaError_t`` and ``CUresult`` with its name, code, libcudart string,
doc comment and the category its documentation gives it.  Here each error is written in the forms logs
use -- "CUDA error: <string>", the runtime name, the driver name, "error code N", "CUresult N" -- and
classified: an error whose code names a category must get it, one that depends on context may get one of
its candidates or ``unknown``, and every unrelated error must stay ``unknown``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from cudafit.explain import CATEGORIES, CUDA_ERRORS, classify, extract_facts
from cudafit.explain.extract import iter_cuda_errors

ROOT = Path(__file__).parent.parent
DATA: dict[str, Any] = json.loads(files("cudafit.explain").joinpath("data/cuda_errors.json").read_text())
ROWS: list[dict[str, Any]] = DATA["runtime"] + DATA["driver"]
CATEGORY_IDS = {c.id for c in CATEGORIES}


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("record_cuda_errors", ROOT / "scripts" / "record_cuda_errors.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses resolve their annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def _allowed(row: dict[str, Any]) -> set[str]:
    """The categories ``row``'s error may be classified as on its own."""
    if row["certainty"] == "code":
        return {row["categories"][0]}
    if row["certainty"] == "context":
        return {*row["categories"], "unknown"}
    return {"unknown"}


# A string two codes share (200 and 300: "device kernel image is invalid") may be either error.
_BY_STRING: dict[str, set[str]] = {}
for _row in ROWS:
    for _s in _row["strings"]:
        _BY_STRING.setdefault(_s, set()).update(_allowed(_row))


def _forms(row: dict[str, Any]) -> list[tuple[str, str, set[str]]]:
    """(form, text, allowed categories) of every way a log writes ``row``'s error."""
    allowed = _allowed(row)
    driver = not row["name"].startswith("cudaError")
    out = [("name", f"RuntimeError: {row['name']}", allowed)]
    out += [("string", f"RuntimeError: CUDA error: {s}", _BY_STRING[s]) for s in row["strings"]]
    if driver:
        out.append(("CUresult", f"cuModuleLoadData failed: CUresult {row['code']}", allowed))
    else:
        out.append(("error code", f"kernel launch failed with error code {row['code']}", allowed))
    return out


CASES = [
    pytest.param(form, text, allowed, id=f"{row['name']}-{form}") for row in ROWS for form, text, allowed in _forms(row)
]


@pytest.mark.parametrize(("form", "text", "allowed"), CASES)
def test_every_inventory_error_classifies_by_its_documentation(form: str, text: str, allowed: set[str]) -> None:
    got = classify(text)[0].category
    assert got in allowed, f"{form}: {text!r} -> {got}, documented as {sorted(allowed)}"


def test_the_inventory_is_complete_and_its_decisions_are_the_scripts() -> None:
    """Counts of CUDA 12.9 + 13.0 + 13.5, the anchors of error_categories.md, and no hand edit of a decision."""
    assert DATA["releases"] == ["12.9.79", "13.0.96", "13.5.37"]
    assert len(DATA["runtime"]) == 138
    assert len(DATA["driver"]) == 105
    assert all(r["strings"] for r in DATA["runtime"])  # libcudart has a string for every cudaError_t
    by_name = {r["name"]: r for r in ROWS}
    assert by_name["CUDA_ERROR_NO_BINARY_FOR_GPU"]["runtime_name"] == "cudaErrorNoKernelImageForDevice"
    assert by_name["cudaErrorCompatNotSupportedOnDevice"]["strings"] == [
        "forward compatibility was attempted on non supported HW"
    ]
    decisions = _script().DECISIONS
    for row in DATA["runtime"]:
        decision = decisions.get(row["name"])
        assert row["related"] is (decision is not None), row["name"]
        if decision is not None:
            assert tuple(row["categories"]) == decision.categories
            assert row["certainty"] == decision.certainty
            assert set(row["categories"]) <= CATEGORY_IDS
            assert row["why"].startswith("doc: ")


def test_inventory_follows_its_schema() -> None:
    schema = json.loads(files("cudafit.explain").joinpath("data/cuda_errors.schema.json").read_text())
    jsonschema.validate(DATA, schema)
    assert set(schema["$defs"]["category"]["enum"]) <= CATEGORY_IDS


def test_related_errors_per_category() -> None:
    """The decisions, counted: what the report of issue 18 quotes."""
    related: dict[str, list[int]] = {}
    for row in DATA["runtime"]:
        for cat in row["categories"][:1] if row["certainty"] == "code" else ():
            related.setdefault(cat, []).append(row["code"])
    assert related == {
        "driver-too-old": [35, 36, 227, 804],
        "no-kernel-image": [209, 221, 223],
        "ptx-too-new-for-driver": [222],
    }
    context = sorted(r["code"] for r in DATA["runtime"] if r["certainty"] == "context")
    assert context == [9, 13, 98, 200, 218, 500]


def test_cuda_errors_covers_every_runtime_and_driver_name() -> None:
    names = {n for e in CUDA_ERRORS for n in (e.name, e.driver_name) if n}
    assert names == {r["name"] for r in ROWS}
    by_code = {e.code: e for e in CUDA_ERRORS if e.name.startswith("cudaError")}
    assert by_code[9].certainty == "context"
    assert by_code[9].categories == ("shared-memory-limit",)
    assert not by_code[700].related


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        (
            "numba.cuda.cudadrv.driver.CudaAPIError: [222] Call to cuLinkAddData results in "
            "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
            [222],
        ),
        (
            "cupy_backends.cuda.api.driver.CUDADriverError: CUDA_ERROR_INVALID_IMAGE: device kernel image is invalid",
            [200],
        ),
        ("RuntimeError: CUDA error: device kernel image is invalid", [200, 300]),  # the string alone: either code
        ("THCudaCheck FAIL file=x.cu line=66 error=209 : no kernel image is available", [209]),
        ("cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime version", [35]),
        ("CUDA failure 804: forward compatibility was attempted on non supported HW ; GPU=0", [804]),
        ("cuCtxCreate returned CUresult 916", [916]),  # a driver code the runtime does not have
        ("RuntimeError: CUDA error: out of memory", [2]),
        ("cudaErrorNotMappedAsArray", [212]),  # not cudaErrorNotMapped (211)
        # not CUDA errors: a build step's exit status, host memory, a number without CUDA on its line
        ("make[2]: *** [CMakeFiles/k.dir/kernel.cu.o] Error 1", []),
        ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory", []),
        ("DataLoader worker (pid 12) is killed: out of memory", []),
        ("Traceback: error 2 while reading config", []),
        ("error 202", []),  # 202 is CUresult only
        ("cuInit: CUresult 35", []),  # 35 is cudaError_t only (cudaErrorInsufficientDriver)
    ],
)
def test_errors_are_recognised_in_the_forms_logs_use(text: str, codes: list[int]) -> None:
    assert [e.code for e in iter_cuda_errors(text)] == codes


def test_context_errors_are_decided_by_the_log_around_them() -> None:
    """invalid device function / invalid PTX alone are not enough; with their context they are."""
    assert classify("RuntimeError: CUDA error: invalid configuration argument")[0].category == "unknown"
    lower_ptx = "FATAL: kernel fmha is for sm80-sm100, but was built for sm75\nCUDA error: invalid device function"
    assert classify(lower_ptx)[0].category == "ptx-jit-lower-arch"
    a_target = "ptxas sm_90a\nRuntimeError: CUDA error: a PTX JIT compilation failed"
    assert classify(a_target)[0].category == "arch-specific-mismatch"


def test_new_patterns_and_their_facts() -> None:
    """The errors the catalogue lacked: their finding cites NVIDIA's documentation and names the error."""
    text = "RuntimeError: CUDA error: PTX JIT compiler library not found"
    finding = classify(text)[0]
    assert finding.category == "no-kernel-image"
    assert finding.evidence["sources"] == ["https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html"]
    assert extract_facts(text)["cuda_errors"] == [
        {"code": 221, "name": "cudaErrorJitCompilerNotFound", "string": "PTX JIT compiler library not found"}
    ]
    assert classify("cuLibraryLoadData: CUDA_ERROR_INSUFFICIENT_LOADER_VERSION")[0].category == "driver-too-old"


def test_doc_comments_are_read_from_the_headers() -> None:
    header = (
        "enum __device_builtin__ cudaError\n{\n    /**\n     * The API call returned with no errors.\n     */\n"
        "    cudaSuccess = 0,\n    /**\n     * \\deprecated\n     * This error return is deprecated as of CUDA 3.1."
        '\n     * See ::cudaDeviceProp and \\ref ::cudaDevAttrX "cudaDevAttrX".\n     */\n'
        "    cudaErrorOld = 23\n    /**\n     * Last.\n     */\n    , cudaErrorBase = 10000\n};\n"
    )
    parsed = _script().parse_enum(header, "enum __device_builtin__ cudaError\n", "\n};")
    assert parsed == [
        ("cudaSuccess", 0, "The API call returned with no errors.", False),
        (
            "cudaErrorOld",
            23,
            "This error return is deprecated as of CUDA 3.1. See cudaDeviceProp and cudaDevAttrX.",
            True,
        ),
        ("cudaErrorBase", 10000, "Last.", False),
    ]
