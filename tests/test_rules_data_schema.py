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
