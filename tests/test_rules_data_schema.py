"""The rule data files against their JSON Schema (rules/data/rules_data.schema.json)."""

from __future__ import annotations

import copy
import json
from importlib import resources
from typing import Any

import pytest
from jsonschema import Draft202012Validator

DATA = resources.files("cudafit.rules").joinpath("data")
FILES = ("gpus", "compute_capabilities", "toolkits")


def _schema(stem: str) -> dict[str, Any]:
    root = json.loads(DATA.joinpath("rules_data.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(root)
    return {**root, "$ref": f"#/$defs/{stem}"}


def _doc(stem: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(DATA.joinpath(f"{stem}.json").read_text(encoding="utf-8"))
    return doc


@pytest.mark.parametrize("stem", FILES)
def test_packaged_data_matches_its_schema(stem: str) -> None:
    errors = [e.message for e in Draft202012Validator(_schema(stem)).iter_errors(_doc(stem))]
    assert errors == []


def _break(stem: str, doc: dict[str, Any]) -> None:
    if stem == "gpus":
        doc["gpus"][0]["compute_capability"] = "sm_35"  # not the dotted form the loader expects
    elif stem == "compute_capabilities":
        doc["compute_capabilities"][0]["runs_family_targets"] = ["100"]  # family tags end in 'f'
    else:
        doc["min_driver"]["linux"]["12.8"] = "five-seventy"


@pytest.mark.parametrize("stem", FILES)
def test_schema_refuses_a_broken_file(stem: str) -> None:
    doc = copy.deepcopy(_doc(stem))
    _break(stem, doc)
    assert list(Draft202012Validator(_schema(stem)).iter_errors(doc))
    doc = copy.deepcopy(_doc(stem))
    doc["schema_version"] = 2
    assert list(Draft202012Validator(_schema(stem)).iter_errors(doc))


# -- the ecosystem table (ecosystem.json has its own schema: it is read by rules.ecosystem) ----------------


def _ecosystem_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(DATA.joinpath("ecosystem.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return schema


def test_ecosystem_table_matches_schema_and_toolkits() -> None:
    from cudafit.model import parse_driver_version
    from cudafit.rules.ecosystem import load_ecosystem

    assert list(Draft202012Validator(_ecosystem_schema()).iter_errors(_doc("ecosystem"))) == []
    eco = load_ecosystem()
    # uv's auto picks from the driver alone: cu130 on 580, cu129 on 570 (astral-sh/uv#14742)
    assert eco.uv_auto_pick(parse_driver_version("580.95.05")).name == "cu130"  # type: ignore[union-attr]
    assert eco.uv_auto_pick(parse_driver_version("570.86.10")).name == "cu129"  # type: ignore[union-attr]
    assert eco.is_torch_ecosystem("FBGEMM_GPU")
    assert [v.name for v in eco.current_variants] == ["cu126", "cu128", "cu130"]  # oldest CUDA first
    assert all(v.index_url == eco.pytorch_index + v.name for v in eco.cuda_variants)
    assert eco.runtime_compiler("FlashInfer_Python") == "nvcc-jit" and eco.runtime_compiler("torch") is None
    assert eco.is_binary_only("TensorRT-cu12") and not eco.is_binary_only("fbgemm-gpu")
    assert eco.is_on_pytorch_index("fbgemm_gpu") and not eco.is_on_pytorch_index("triton")
    # a fix names the current release's oldest build of a CUDA major (widest GPU reach), else that major's newest
    picks = [getattr(eco.torch_build_for(m), "name", None) for m in (13, 12, 11, 10)]
    assert picks == ["cu130", "cu126", "cu118", None]
    # PyTorch's index by its host (find labels those candidates by variant), not by a substring of the URL
    assert eco.is_pytorch_index("https://download.pytorch.org/whl/cu126") and eco.is_pytorch_index(
        "HTTPS://Download.PyTorch.org/whl/nightly/cu130/"
    )
    assert not eco.is_pytorch_index("https://pypi.org/simple/") and not eco.is_pytorch_index(
        "https://mirror.example/download.pytorch.org/whl/cu126"
    )


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("sources", "binary_only"), "the vendor's word"),  # a source must name a URL
        (("cuda_variants", 0, "current_release"), "yes"),
        (("pytorch_index",), "https://download.pytorch.org/whl"),  # the root ends in '/': names are appended
        (("binary_only", 0), "Torch"),  # PEP 503 normalised names only
    ],
)
def test_ecosystem_schema_refuses_a_broken_table(path: tuple[str | int, ...], value: object) -> None:
    doc = copy.deepcopy(_doc("ecosystem"))
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    assert list(Draft202012Validator(_ecosystem_schema()).iter_errors(doc))


def test_ecosystem_sections_each_have_a_source() -> None:
    """Every section of facts names where it comes from (a URL), as the other rule data does."""
    schema = _ecosystem_schema()
    doc = _doc("ecosystem")
    facts = set(schema["required"]) - {"schema_version", "as_of", "sources", "pypi_index", "pytorch_index"}
    facts = facts - {"cuda_variants"} | {"pytorch_indexes", "driver_floors", "lowest_arch", "current_release"}
    assert facts <= set(doc["sources"]) and facts <= set(schema["properties"]["sources"]["required"])
    assert all("https://" in text for text in doc["sources"].values())
    del doc["sources"]["runtime_compiling"]
    assert list(Draft202012Validator(schema).iter_errors(doc))


def _load_patched(monkeypatch: pytest.MonkeyPatch, doc: dict[str, Any]) -> None:
    from cudafit.rules import ecosystem

    class Patched:
        def __init__(self, text: str) -> None:
            self.text = text

        def joinpath(self, *_a: str) -> Patched:
            return self

        def read_text(self, encoding: str = "utf-8") -> str:
            return self.text

    monkeypatch.setattr(ecosystem.resources, "files", lambda _pkg: Patched(json.dumps(doc)))
    ecosystem.load_ecosystem.cache_clear()
    try:
        ecosystem.load_ecosystem()
    finally:
        monkeypatch.undo()
        ecosystem.load_ecosystem.cache_clear()


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        # cu130 cannot target sm_50: toolkits.json says sm_75
        (("cuda_variants", 0, "lowest_arch"), "sm_50", "lowest arch"),
        (("cuda_variants", 0, "driver_floor"), "570.26", "minor-version floor"),
        (("cuda_variants", 0, "index_url"), "https://example.org/whl/cu130", "not under pytorch_index"),
        (("pytorch_index_projects",), ["torch", "jax"], "outside torch_ecosystem"),
        (("cuda_variants", 0, "current_release"), "yes", "malformed"),  # the loader decodes strictly too
        (("runtime_compiling", "triton"), "ptxas", "malformed"),
        (("schema_version",), 2, "schema_version"),
    ],
)
def test_ecosystem_table_is_checked_on_load(
    monkeypatch: pytest.MonkeyPatch, path: tuple[str | int, ...], value: object, message: str
) -> None:
    from cudafit.errors import RuleDataError

    doc = copy.deepcopy(_doc("ecosystem"))
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(RuleDataError, match=message):
        _load_patched(monkeypatch, doc)
