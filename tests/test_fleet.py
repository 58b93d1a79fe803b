"""Fleets without a cluster: fleet files, the FAKE NVML selected by the environment, classes, judging
through the single-machine path, placement choices, exit codes, and the 5,000-node synthetic fleet."""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from builders import elf, entry, fatbin
from cudafit import probe
from cudafit.errors import FleetError
from cudafit.fleet.files import inventory_from_document, load_fleet_file
from cudafit.fleet.inventory import FleetGpu, FleetNode, build_inventory
from cudafit.fleet.judge import judge_fleet
from cudafit.fleet.placement import ray_selector
from cudafit.model import ComputeCapability, parse_driver_version

ROOT = Path(__file__).parent.parent
FAKES = Path(__file__).parent / "fakes"
HOSTS = FAKES / "nvml_hosts.json"
FLEET_SCHEMA = json.loads((ROOT / "src/cudafit/schema/fleet.json").read_text())
CHECK_SCHEMA = json.loads((ROOT / "src/cudafit/schema/fleet_check.json").read_text())
FLEET_CHECK = json.loads((ROOT / "src/cudafit/schema/check.json").read_text())


@pytest.fixture(autouse=True)
def _fresh_probe_cache() -> None:
    probe.clear_cache()


def machine_doc(host: str, node: str) -> dict[str, Any]:
    """What `cudafit gpus --json` prints on a machine whose NVML is the recorded FAKE host."""
    inv = probe.probe_machine(env={"CUDAFIT_FAKE_NVML": f"{HOSTS}#{host}"})
    return {**probe.inventory_to_dict(inv), "node": node}


def lib(path: Path, *code: tuple[int, int]) -> Path:
    """A .so with one fatbin: (kind, arch) entries, kind 2 = SASS, 1 = PTX (ISA 9.0)."""
    entries = [entry(k, a, code_version=(9, 0) if k == 1 else (1, 8)) for k, a in code]
    path.write_bytes(elf([(".nv_fatbin", fatbin(*entries))]))
    return path


# ------------------------------------------------------------------ the fake NVML and fleet files


def test_fake_nvml_is_selected_by_the_environment_and_says_so(tmp_path: Path) -> None:
    inv = probe.probe_machine(env={"CUDAFIT_FAKE_NVML": f"{HOSTS}#h100x2_580"})
    assert inv.source == "fake-nvml (nvml_hosts.json#h100x2_580)"
    assert [d.source for d in inv.devices] == ["fake-nvml (nvml_hosts.json#h100x2_580)"] * 2
    assert [str(d.compute_capability) for d in inv.devices] == ["9.0", "9.0"]
    assert str(inv.driver_version) == "580.65.06"
    probe.clear_cache()
    one = tmp_path / "recorded_t4_nvml.json"  # the single-host shape scripts/record_probe.py writes
    one.write_text(json.dumps({"_about": "FAKE", **json.loads(HOSTS.read_text())["t4_535"]}))
    inv = probe.probe_machine(env={"CUDAFIT_FAKE_NVML": str(one)})
    assert inv.source == "fake-nvml (recorded_t4_nvml.json#recorded_t4_nvml)"
    assert [d.name for d in inv.devices] == ["Tesla T4"]
    bad = probe.probe_machine(env={"CUDAFIT_FAKE_NVML": f"{HOSTS}#nope"})
    assert bad.devices == ()
    assert any("no host 'nope'" in p for p in bad.problems)
    assert not any("nvidia-smi" in p for p in bad.problems)  # a replay never falls back to the real machine


def test_fleet_file_of_machine_documents(tmp_path: Path, cli: Any) -> None:
    docs = [machine_doc("t4_535", "a"), machine_doc("h100x2_580", "b"), machine_doc("h100x2_580", "c")]
    docs.append({"schema": "cudafit.gpus/1", "mode": "machine", "node": "d", "gpus": [{"nope": 1}], "errors": []})
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(docs))
    inv = load_fleet_file(str(path))
    assert [(n.name, n.status) for n in inv.nodes] == [("a", "ok"), ("b", "ok"), ("c", "ok"), ("d", "invalid")]
    assert "not a cudafit.gpus/1 machine document" in inv.nodes[3].problems[0]
    assert [(c.id, [n.name for n in c.nodes]) for c in inv.classes] == [("c1", ["a"]), ("c2", ["b", "c"])]
    assert inv.classes[1].gpu_count == 4
    doc = inv.to_dict()
    jsonschema.validate(doc, FLEET_SCHEMA)
    again = inventory_from_document(json.loads(json.dumps(doc)), source="x")  # cudafit.fleet/1 reads back
    assert again.to_dict()["classes"] == doc["classes"]
    rc, out, err = cli("fleet", "file", str(path))
    assert rc == 1
    assert "invalid d: not a cudafit.gpus/1 machine document" in out
    assert "1 of 4 nodes could not be described (invalid)" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "is not JSON"),
        ('{"schema": "cudafit.check/1"}', "not a fleet file"),
        ('{"schema": "cudafit.fleet/1", "nodes": 3}', "needs a 'nodes' list"),
    ],
)
def test_unreadable_fleet_files_exit_3(tmp_path: Path, cli: Any, content: str, message: str) -> None:
    path = tmp_path / "f.json"
    path.write_text(content)
    rc, out, err = cli("check", str(tmp_path), "--fleet", str(path))
    assert (rc, out) == (3, "")
    assert message in err
    rc, _out, err = cli("fleet", "file", str(tmp_path / "missing.json"))
    assert rc == 3
    assert "cannot read fleet file" in err


def test_empty_and_unjudgeable_fleets_exit_3(tmp_path: Path, cli: Any) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"schema": "cudafit.fleet/1", "source": "x", "nodes": []}))
    rc, _out, err = cli("check", str(tmp_path), "--fleet", str(empty))
    assert rc == 3
    assert "could not analyse the fleet: the fleet has no nodes" in err
    unknown = tmp_path / "unknown.json"
    nodes = [{"name": "n1", "status": "unknown-gpu", "gpus": [], "problems": ["no labels"]}]
    unknown.write_text(json.dumps({"schema": "cudafit.fleet/1", "source": "x", "nodes": nodes}))
    rc, _out, err = cli("check", str(tmp_path), "--fleet", str(unknown))
    assert rc == 3
    assert "no node of the fleet has known GPUs (1 unknown-gpu)" in err


# ------------------------------------------------------------------ judging = the single-machine path per class


def node(name: str, gpu: str, cc: str, driver: str, labels: dict[str, str] | None = None) -> FleetNode:
    g = FleetGpu(gpu, ComputeCapability(*map(int, cc.split("."))), 1)
    return FleetNode(name, "test", "ok", gpus=(g,), driver=parse_driver_version(driver), labels=labels or {})


def test_each_class_gets_what_check_says_for_one_such_machine(tmp_path: Path, cli: Any) -> None:
    target = lib(tmp_path / "libx.so", (2, 80), (1, 90))
    fleet = build_inventory(
        [
            node("a", "NVIDIA A100-SXM4-80GB", "8.0", "570.124.06"),
            node("b", "NVIDIA H100 80GB HBM3", "9.0", "570.124.06"),
            node("c", "NVIDIA H100 80GB HBM3", "9.0", "580.65.06"),
            node("d", "Tesla T4", "7.5", "580.65.06"),
        ],
        "test",
    )
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(fleet.to_dict()))
    rc, out, _err = cli("check", str(target), "--fleet", str(path), "--json")
    assert rc == 1
    doc = json.loads(out)
    jsonschema.validate(doc, CHECK_SCHEMA)
    for c in doc["classes"]:
        gpu = c["gpus"][0]
        _rc, single, _e = cli(
            "check", str(target), "--gpu", gpu["compute_capability"], "--driver", c["driver_version"], "--json",
            "--no-probe",
        )  # fmt: skip
        one = json.loads(single)
        jsonschema.validate(one, FLEET_CHECK)
        (t,) = one["targets"]
        (v,) = c["verdicts"]
        assert v["status"] == t["status"]
        assert [(x["status"], x["counts"], x["reasons"]) for x in v["by_gpu"]] == [
            (x["status"], x["counts"], x["reasons"]) for x in t["verdicts"]
        ]
        assert v["fixes"] == t["fixes"]
    # PTX ISA 9.0: built by CUDA 13, whose runtime needs a 580 driver: the 570 classes fail with that floor
    assert {c["nodes"][0]: c["status"] for c in doc["classes"]} == {
        "d": "fails",
        "a": "fails",
        "b": "fails",
        "c": "jit",
    }
    (a,) = [c for c in doc["classes"] if c["nodes"][0] == "a"]
    assert a["verdicts"][0]["by_gpu"][0]["reasons"][0]["code"] == "driver-too-old-for-runtime"


def test_each_environment_is_judged_on_its_own_classes(tmp_path: Path) -> None:
    from cudafit.fleet.inventory import NodeEnv
    from cudafit.targets import open_target

    old = list(open_target(str(lib(tmp_path / "old.so", (2, 80)))).iter_items())
    new = list(open_target(str(lib(tmp_path / "new.so", (2, 80), (2, 90)))).iter_items())
    env_old = NodeEnv("/py", ("/site",), (("mylib", "1.0"),))
    env_new = NodeEnv("/py", ("/site",), (("mylib", "2.0"),))
    h100 = node("x", "NVIDIA H100 80GB HBM3", "9.0", "580.65.06")
    from dataclasses import replace

    inv = build_inventory(
        [replace(h100, name="x", env=env_old), replace(h100, name="y", env=env_new)], "t", by_env=True
    )
    assert len(inv.classes) == 2  # same GPUs and driver, different environments
    judged = judge_fleet([], inv, items_by_env={env_old.fingerprint: old, env_new.fingerprint: new})
    assert {c.cls.nodes[0].name: c.status for c in judged.classes} == {"x": "fails", "y": "native"}


def test_ray_placement_prefers_a_shared_label_and_falls_back_to_node_ids() -> None:
    h100, acc, nid = "NVIDIA H100 80GB HBM3", "ray.io/accelerator-type", "ray.io/node-id"
    nodes = [
        node("a", h100, "9.0", "580.65.06", {acc: "H100", nid: "n1"}),
        node("b", h100, "9.0", "580.65.06", {acc: "H100", nid: "n2"}),
        node("c", "NVIDIA L4", "8.9", "580.65.06", {acc: "L4", nid: "n3"}),
    ]
    sel, note = ray_selector(nodes, {"a", "b"})
    assert sel == {"label_selector": {"ray.io/accelerator-type": "H100"}, "resources": {"accelerator_type:H100": 0.001}}
    assert "ray.io/accelerator-type" in note
    sel, note = ray_selector(nodes, {"a"})  # only one of the H100 nodes: no label separates them
    assert sel == {"label_selector": {"ray.io/node-id": "n1"}, "resources": None}
    assert "node ids change" in note
    sel, _note = ray_selector(nodes, {"a", "c", "b"})
    assert sel is not None
    assert sel["label_selector"] == {
        "ray.io/accelerator-type": "in(H100,L4)"
    }  # no space: Ray reads it as part of a value


def test_exit_0_when_it_runs_everywhere(tmp_path: Path, cli: Any) -> None:
    target = lib(tmp_path / "liby.so", (2, 75), (2, 80), (2, 90))  # no PTX: no CUDA 13 evidence for the 535 node
    fleet = build_inventory(
        [node("a", "Tesla T4", "7.5", "535.183.01"), node("b", "NVIDIA H100 80GB HBM3", "9.0", "580.65.06")], "t"
    )
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(fleet.to_dict()))
    rc, out, _err = cli("check", str(target), "--fleet", str(path))
    assert rc == 0
    assert "native on: c1 T4 (7.5) · 535.183.01, c2 H100 80GB HBM3 (9.0) · 580.65.06 (2 nodes)" in out


# ------------------------------------------------------------------ scale


def bench_module() -> Any:
    spec = importlib.util.spec_from_file_location("bench_fleet", ROOT / "bench" / "bench_fleet.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_synthetic_5000_node_fleet_is_judged_once_per_class(tmp_path: Path) -> None:
    from cudafit.report.fleet import fleet_check_document
    from cudafit.targets import open_target

    fleet = bench_module().synthetic_fleet(5000, 30, seed=0)
    assert len(fleet.nodes) == 5000
    assert len(fleet.classes) == 30
    assert sum(len(c.nodes) for c in fleet.classes) == 5000
    items = list(open_target(str(lib(tmp_path / "libz.so", (2, 80), (2, 90), (1, 90)))).iter_items())
    t = time.perf_counter()
    judged = judge_fleet(items, fleet)
    doc = fleet_check_document(judged)
    assert time.perf_counter() - t < 5  # generous for CI; bench/bench_fleet.py measures the torch environment
    jsonschema.validate(doc, CHECK_SCHEMA)
    assert sum(c["node_count"] for c in doc["classes"]) == 5000


def test_analyze_with_a_driver_per_gpu_equals_one_call_per_driver(tmp_path: Path) -> None:
    from cudafit.analysis import analyze
    from cudafit.model import Gpu
    from cudafit.targets import open_target

    items = list(open_target(str(lib(tmp_path / "libd.so", (2, 80), (1, 90)))).iter_items())
    h100 = Gpu("H100", ComputeCapability(9, 0))
    old, new = parse_driver_version("570.124.06"), parse_driver_version("580.65.06")
    both = analyze(items, [h100, h100], drivers=[old, new], include_coverage=False)
    for i, driver in enumerate((old, new)):
        alone = analyze(items, [h100], driver=driver, include_coverage=False)
        assert both.packages[0].verdicts[i] == alone.packages[0].verdicts[0]
    assert [v.status.value for v in both.packages[0].verdicts] == ["fails", "jit"]
    with pytest.raises(ValueError, match="one driver per GPU"):
        analyze(items, [h100], drivers=[old, new])


def test_driver_floors_equal_a_linear_scan_of_every_candidate(tmp_path: Path) -> None:
    """The binary searches (sensitive packages only, narrowed by the classes' own drivers) find what
    judging the target with every candidate driver, lowest first, finds."""
    from cudafit.analysis import analyze, worst_status
    from cudafit.fleet.judge import _floor_candidates
    from cudafit.model import Gpu
    from cudafit.targets import open_target

    (tmp_path / "a").mkdir()
    old_ptx = lib(tmp_path / "a" / "liba.so", (2, 80), (1, 80))  # compute_80 PTX with ISA 9.0: needs 580.65
    (tmp_path / "b").mkdir()
    sass = lib(tmp_path / "b" / "libb.so", (2, 75), (2, 86), (2, 90))
    items = [i for t in (old_ptx, sass) for i in open_target(str(t)).iter_items()]
    fleet = build_inventory(
        [
            node("t4", "Tesla T4", "7.5", "535.183.01"),
            node("l4", "NVIDIA L4", "8.9", "570.124.06"),
            node("h100a", "NVIDIA H100 80GB HBM3", "9.0", "570.124.06"),
            node("h100b", "NVIDIA H100 80GB HBM3", "9.0", "580.65.06"),
            node("b200", "NVIDIA B200", "10.0", "580.65.06"),
        ],
        "t",
    )
    judged = judge_fleet(items, fleet)
    candidates = _floor_candidates(c.driver for c in fleet.classes if c.driver is not None)
    rank = {"native": 0, "jit": 1, "partial": 2, "fails": 3, "none": -1}
    for cj in judged.classes:
        gpus = [Gpu(g.name, g.compute_capability) for g in cj.cls.gpus]

        def status_at(driver: Any, gpus: list[Any] = gpus) -> str:
            a = analyze(items, gpus, driver=driver, include_coverage=False)
            return worst_status(p.status for p in a.packages)

        best = status_at(candidates[-1])
        assert cj.best_status == best
        if best in ("fails", "none"):
            assert cj.driver_floor is None
            continue
        first = next(d for d in candidates if rank[status_at(d)] <= rank[best])
        assert cj.driver_floor == (None if first == candidates[0] else first), cj.cls.name
    floors = {cj.cls.nodes[0].name: str(cj.driver_floor) for cj in judged.classes}
    assert floors["h100a"] == "580.65.06"  # compute_80 PTX of ISA 9.0 on 9.0: CUDA 13.0's minimum driver


def test_malformed_node_entries_are_invalid_nodes_not_errors() -> None:
    """Garbage in one node marks that node (naming the field), nothing else; the document's own fields
    of the wrong type are one error naming the field."""
    from cudafit.fleet.gfd import node_from_k8s

    good = {"name": "n0", "status": "no-gpu", "problems": "abc"}
    doc = {"schema": "cudafit.fleet/1", "nodes": [good, {"name": "n1", "status": "no-gpu", "fix": {"x": 1}}]}
    inv = inventory_from_document(doc, source="f.json")
    ok, bad = inv.nodes
    assert (ok.status, ok.problems) == ("no-gpu", ("abc",))
    assert bad.status == "invalid"
    assert "nodes[1].fix: expected str | null, got object" in bad.problems[0]
    with pytest.raises(FleetError, match=r"f.json: problems: expected str \| array \| null, got int"):
        inventory_from_document({**doc, "problems": 5}, source="f.json")
    for garbage in ({"metadata": "x"}, {"metadata": {"name": "n2"}, "status": [1]}, {"status": {"conditions": [1]}}):
        n = node_from_k8s(garbage, source="k8s")
        assert n.status in ("invalid", "no-gpu"), garbage
