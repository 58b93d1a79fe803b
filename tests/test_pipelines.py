"""The application-layer functions cli/ wires (issue 19): fleet.run.run_fleet, verify.here.verify_here and
targets.kernels.read_kernels, called directly — no argparse, no rendering — and checked against what the
commands that wire them print, so the two cannot drift apart."""

from __future__ import annotations

import contextlib
import io
import json
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from cudafit.binary import inspect_path
from cudafit.fleet.inventory import FleetGpu, FleetNode, build_inventory
from cudafit.fleet.run import run_fleet
from cudafit.model import ComputeCapability, parse_driver_version
from cudafit.targets import open_target
from cudafit.targets.kernels import read_kernels
from cudafit.verify import VerifyResult
from cudafit.verify.here import VerifyFailure, verify_here

TESTS = Path(__file__).parent
BIN = TESTS / "fixtures" / "bin"
FAKE = TESTS / "fakes" / "verify_driver_fake.json"


def _node(name: str, cc: str, status: str = "ok") -> FleetNode:
    gpus = (FleetGpu("NVIDIA H100 80GB HBM3", ComputeCapability(*map(int, cc.split("."))), 1),) if cc else ()
    return FleetNode(name, "test", status, gpus=gpus, driver=parse_driver_version("580.65.06"))


def test_run_fleet_says_why_nothing_can_be_judged() -> None:
    empty = run_fleet(build_inventory([], "test"), [])
    assert empty.judgement is None
    assert empty.why_not == "the fleet has no nodes"
    unknown = run_fleet(build_inventory([_node("n1", "", "unknown-gpu")], "test"), [])
    assert unknown.judgement is None
    assert unknown.why_not == "no node of the fleet has known GPUs (1 unknown-gpu): nothing to judge"
    assert [n.name for n in unknown.incomplete] == ["n1"]


def test_run_fleet_judges_each_class_and_places_only_where_it_runs() -> None:
    inv = build_inventory([_node("a", "9.0"), _node("b", "9.0"), _node("t", "7.5"), _node("x", "", "timeout")], "test")
    items = list(open_target(str(BIN / "k_sm90a.cubin")).iter_items())
    run = run_fleet(inv, items, emit_placement=True, use_cache=False)
    assert run.judgement is not None
    statuses = {c.cls.nodes[0].name: c.status.value for c in run.judgement.classes}
    assert statuses == {"a": "native", "t": "fails"}  # sm_90a SASS: Hopper only
    assert run.placement is not None
    assert run.placement["node_count"] == 2
    assert [n.name for n in run.incomplete] == ["x"]


def test_verify_here_reports_a_bad_ordinal_and_puts_the_targets_notes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDAFIT_VERIFY_REPLAY", str(FAKE))
    monkeypatch.delenv("CUDA_DISABLE_PTX_JIT", raising=False)
    items = list(open_target(str(BIN / "k_sm90a.cubin")).iter_items())
    bad = verify_here(items, ordinals=[7], use_cache=False)
    assert isinstance(bad, VerifyFailure)
    assert (bad.kind, bad.message) == ("bad-device", "no CUDA device 7 (the driver lists 0, 1, 2)")
    monkeypatch.setenv("CUDA_DISABLE_PTX_JIT", "1")
    result = verify_here(items, ordinals=[0], notes=["from the target"], use_cache=False)
    assert isinstance(result, VerifyResult)
    assert result.notes[0] == "from the target"
    assert result.notes[1].startswith("CUDA_DISABLE_PTX_JIT is set")
    assert not result.jit_allowed
    assert [d.ordinal for d in result.gpus] == [0]


def test_read_kernels_matches_scan_kernels_json(tmp_path: Path) -> None:
    from cudafit.cli import main

    facts = inspect_path(str(BIN / "libmulti.so"))
    found = read_kernels(facts)
    assert found is not None and found.rows and found.error is None
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["scan", str(BIN / "libmulti.so"), "--kernels", "--json", "--no-cache"]) == 0
    (f,) = json.loads(buf.getvalue())["files"]
    assert [(r.module, r.arch, r.kernel.name) for r in found.rows] == [
        (k["module"], k["arch"], k["name"]) for k in f["kernels"]
    ]
    assert list(found.stub_modules) == f["dlink_stub_modules"]
    text = tmp_path / "README.txt"
    text.write_text("no device code here\n")
    plain = inspect_path(str(text))  # nothing to read
    assert not plain.modules and not plain.members
    assert read_kernels(plain) is None


def test_read_kernels_of_a_member_that_cannot_be_opened_has_no_rows(tmp_path: Path) -> None:
    whl = tmp_path / "x-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as zf:
        zf.write(BIN / "libmulti.so", "x/libmulti.so")
    facts = inspect_path(str(BIN / "libmulti.so"))
    gone = replace(facts, path=f"{tmp_path / 'missing.whl'}!x/libmulti.so")
    found = read_kernels(gone)
    assert found is not None
    assert found.rows is None
    assert found.error
