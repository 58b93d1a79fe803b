"""`cudafit verify` against a FAKE driver (tests/fakes/verify_driver_fake*.json, replayed by the real worker
process): the mapping from predictions to expected answers, agreement counting and ordering, isolation
(a worker that crashes, one that hangs), byte sources (archives, wheels, .pt2, images), the no-driver /
no-GPU paths, and the JSON contract.  The real driver path is in test_verify_gpu.py (marker `gpu`)."""

from __future__ import annotations

import hashlib
import json
import time
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from cudafit.binary import inspect_path
from driver_oracle import expected_answer

ROOT = Path(__file__).parent.parent
BIN = Path(__file__).parent / "fixtures" / "bin"
FAKES = Path(__file__).parent / "fakes"
FAKE = FAKES / "verify_driver_fake.json"
FAKE_R570 = FAKES / "verify_driver_fake_r570.json"
SCHEMA = json.loads((ROOT / "src/cudafit/schema/verify.json").read_text())
CHECK_SCHEMA = json.loads((ROOT / "src/cudafit/schema/check.json").read_text())
FIXTURES = ["libmulti.so", "libptxonly.so", "k_sm90a.cubin", "libroles.so", "libarch_a.so", "k.fatbin", "librdc.so"]


def cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str, replay: Path | None = FAKE
) -> tuple[int, str, str]:
    """Run the CLI in this process (its workers are real subprocesses replaying ``replay``)."""
    from cudafit.cli import main

    if replay is None:
        monkeypatch.delenv("CUDAFIT_VERIFY_REPLAY", raising=False)
    else:
        monkeypatch.setenv("CUDAFIT_VERIFY_REPLAY", str(replay))
    rc = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, out, err


def verify_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str, replay: Path | None = FAKE
) -> tuple[int, dict[str, Any]]:
    rc, out, _err = cli(monkeypatch, capsys, "verify", *args, "--json", replay=replay)
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    return rc, doc


def fixtures(*names: str) -> list[str]:
    return [str(BIN / n) for n in names]


def module(doc: dict[str, Any], name: str, index: int) -> dict[str, Any]:
    return next(m for m in doc["modules"] if m["path"].endswith(name) and m["module"] == index)


def fake_with(tmp_path: Path, changes: dict[tuple[str, int], dict[str, str]], base: Path = FAKE) -> Path:
    """A copy of the fake with some answers replaced: {(file, module): {device: result}}."""
    doc = json.loads(base.read_text())
    for r in doc["results"]:
        for dev, result in changes.get((r["file"], r["module"]), {}).items():
            r["answers"][dev] = {"result": result, "seconds": 0.0004}
    out = tmp_path / "fake.json"
    out.write_text(json.dumps(doc))
    return out


# ---------------------------------------------------------------- the fake itself


def _module_of(file: str, index: int) -> tuple[bytes, Any]:
    name, _, member = file.partition("!")
    facts = inspect_path(str(BIN / name))
    unit = facts if not member else next(m for m in facts.members if m.path.endswith("!" + member))
    m = unit.modules[index]
    return (BIN / name).read_bytes()[m.offset : m.offset + m.size], m


RECORDED = sorted(FAKES.glob("recorded_*_verify.json"))


@pytest.mark.parametrize("fake", [FAKE, FAKE_R570, *RECORDED], ids=["r580", "r570", *(p.stem for p in RECORDED)])
def test_fake_answers_follow_nvidia_rules_and_fixtures(fake: Path) -> None:
    """Every fake answer is what NVIDIA's rules say (independent oracle), for bytes that are the fixtures';
    real recordings (scripts/record_probe.py --verify) are held to the same rules."""
    doc = json.loads(fake.read_text())
    assert doc["about"].startswith(("FAKE", "RECORDED"))
    driver = tuple(int(x) for x in doc["driver"]["cuda_version"].split("."))
    ccs = {str(d["ordinal"]): tuple(int(x) for x in d["compute_capability"].split(".")) for d in doc["devices"]}
    for r in doc["results"]:
        data, m = _module_of(r["file"], r["module"])
        assert hashlib.sha256(data).hexdigest() == r["sha256"], r["file"]
        entries = [(e.arch_name, e.code_version) for e in m.entries]
        for dev, answer in r["answers"].items():
            assert answer["result"] == expected_answer(entries, ccs[dev], driver), (r["file"], r["module"], dev)


# ---------------------------------------------------------------- agreement, mapping, counting


def test_fixtures_agree_with_the_fake_driver(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, doc = verify_json(monkeypatch, capsys, *fixtures(*FIXTURES))
    assert rc == 0
    assert doc["status"] == "agree"
    assert doc["backend"] == "replay"
    assert [g["compute_capability"] for g in doc["gpus"]] == ["9.0", "8.0", "7.5"]
    assert doc["disagreements"] == []
    # libroles.so: each role of docs/rules.md "Module roles", and the answer it implies
    h100, a100, rtx = 0, 1, 2
    hole = module(doc, "libroles.so", 2)["checks"][h100]
    assert (hole["predicted"], hole["expected"]) == (
        {"status": "fails", "reason": "hole-build-skips-gpu"},
        "CUDA_ERROR_NO_BINARY_FOR_GPU",
    )
    assert hole["driver"]["name"] == "CUDA_ERROR_NO_BINARY_FOR_GPU"
    assert module(doc, "libroles.so", 4)["checks"][a100]["predicted"]["status"] == "kernel-less"
    assert module(doc, "libroles.so", 1)["checks"][rtx]["predicted"] == {
        "status": "specialised",
        "reason": "specialised-newer",
    }
    gated = module(doc, "libroles.so", 3)["checks"][a100]
    assert (gated["predicted"]["status"], gated["verdict"]) == ("gated", "agree")
    assert module(doc, "k_sm90a.cubin", 0)["kind"] == "cubin"
    # PTX-only for a GPU: not loaded without --jit; relocatable: never
    ptx = module(doc, "libptxonly.so", 0)["checks"][h100]
    assert (ptx["loaded"], ptx["skip"], ptx["driver"], ptx["serves"]) == (False, "ptx-jit-only", None, "ptx")
    assert (hole["serves"], module(doc, "libmulti.so", 0)["checks"][h100]["serves"]) == (None, "sass")
    assert module(doc, "k.fatbin", 0)["checks"][h100]["skip"] == "ptx-jit-only"
    assert module(doc, "k.fatbin", 0)["checks"][a100]["verdict"] == "agree"
    rel = module(doc, "librdc.so", 1)
    assert rel["section"] == "__nv_relfatbin"
    assert {c["skip"] for c in rel["checks"]} == {"relocatable"}
    # counts add up, per GPU and in total
    for c in doc["counts"]:
        assert c["loaded"] == c["agree"] + c["disagree"] + c["no_answer"]
        assert c["loaded"] + c["skipped"] == len(doc["modules"])
    assert doc["counts"][h100] == {"gpu": 0, "loaded": 9, "agree": 9, "disagree": 0, "no_answer": 0, "skipped": 3}
    assert doc["totals"]["agree"] == sum(c["agree"] for c in doc["counts"])


def test_jit_loads_ptx_only_modules_and_times_them(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, doc = verify_json(monkeypatch, capsys, *fixtures("libptxonly.so", "k.fatbin"), "--jit")
    assert rc == 0
    assert doc["jit"] is True
    c = module(doc, "libptxonly.so", 0)["checks"][0]
    assert (c["loaded"], c["verdict"], c["driver"]["jit_ms"]) == (True, "agree", 41.7)
    rc, out, _err = cli(monkeypatch, capsys, "verify", *fixtures("libptxonly.so", "k.fatbin"), "--jit")
    assert "JIT cost" in out
    assert out.index("52.3 ms") < out.index("41.7 ms")  # slowest first


def test_ptx_newer_than_the_driver_expects_222(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 570 driver (CUDA 12.8) and PTX ISA 9.0: predicted fails (ptx-isa-too-new-for-driver) -> 222, loaded
    without --jit (no JIT happens); modules the fake does not know are 'not-recorded', not agreements."""
    rc, doc = verify_json(monkeypatch, capsys, *fixtures("libptxonly.so", "libmulti.so"), replay=FAKE_R570)
    assert doc["driver_version"] == "570.124.06"
    c = module(doc, "libptxonly.so", 0)["checks"][0]
    assert c["predicted"] == {"status": "fails", "reason": "ptx-isa-too-new-for-driver"}
    assert (c["expected"], c["verdict"]) == ("CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "agree")
    multi = module(doc, "libmulti.so", 0)["checks"][0]
    assert (multi["verdict"], multi["driver"]["outcome"]) == ("no-answer", "not-recorded")
    assert (rc, doc["status"]) == (1, "incomplete")


def test_expectation_mapping() -> None:
    """Predicted status/reason -> expected CUresult, from the module's code alone (roles are shown, not used)."""
    from builders import entry, fatbin
    from cudafit.binary.fatbin import parse_fatbin
    from cudafit.model import ComputeCapability, parse_driver_version
    from cudafit.rules.engine import Gpu, evaluate_module
    from cudafit.verify.plan import expectation_for

    def mod(*entries: bytes, section: str = ".nv_fatbin") -> Any:
        data = fatbin(*entries)
        return parse_fatbin(data, 0, len(data), section=section)[0]

    h100 = Gpu("H100", ComputeCapability(9, 0))
    r580, r570 = parse_driver_version("580.65.06"), parse_driver_version("570.124.06")

    def exp(m: Any, *, driver: Any = r580, jit_allowed: bool = True, jit: bool = False, role: Any = None) -> Any:
        raw = evaluate_module(m, h100, driver=driver, jit_allowed=jit_allowed, gating=False)
        return expectation_for(m, role, raw, jit=jit)

    sass90 = mod(entry(2, 90))
    ptx80 = mod(entry(1, 80, code_version=(9, 0)))
    only75 = mod(entry(2, 75))
    assert exp(sass90).expected == "CUDA_SUCCESS"
    assert (exp(ptx80).expected, exp(ptx80).load, exp(ptx80).skip) == ("CUDA_SUCCESS", False, "ptx-jit-only")
    assert (exp(ptx80, jit=True).load, exp(ptx80, jit=True).skip) == (True, None)
    assert exp(ptx80, driver=r570).expected == "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"
    assert exp(ptx80, jit_allowed=False).expected == "CUDA_ERROR_JIT_COMPILATION_DISABLED"
    assert (exp(only75).expected, exp(only75).reason) == ("CUDA_ERROR_NO_BINARY_FOR_GPU", "no-compatible-code")
    rel = mod(entry(2, 90), section="__nv_relfatbin")
    assert (exp(rel).load, exp(rel).skip) == (False, "relocatable")
    lto = mod(entry(8, 90, code_version=(1, 65)))
    assert (exp(lto).load, exp(lto).skip) == (False, "no-loadable-code")
    # a role verdict is shown as the prediction, the code decides the expected answer: a module the roles
    # call specialised whose PTX the driver can JIT loads (CUDA_SUCCESS), only with --jit
    role = evaluate_module(ptx80, h100, driver=r580)
    import dataclasses

    from cudafit.rules.engine import Status
    from cudafit.rules.reasons import reason

    specialised = dataclasses.replace(role, status=Status.SPECIALISED, reasons=(reason("specialised-newer", "x"),))
    e = exp(ptx80, role=specialised)
    assert (e.status, e.reason, e.expected, e.load) == ("specialised", "specialised-newer", "CUDA_SUCCESS", False)
    gated = mod(entry(2, 100, flags=0x11 | 0x100000))
    assert exp(gated).expected == "CUDA_ERROR_NO_BINARY_FOR_GPU"


def test_disagreements_come_first_with_archs_role_and_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = fake_with(tmp_path, {("libroles.so", 2): {"0": "CUDA_SUCCESS"}, ("k_sm90a.cubin", 0): {"1": "CUDA_SUCCESS"}})
    rc, doc = verify_json(monkeypatch, capsys, *fixtures("k_sm90a.cubin", "libroles.so"), replay=fake)
    assert (rc, doc["status"]) == (1, "disagree")
    first, second = doc["disagreements"]
    assert (first["path"].endswith("k_sm90a.cubin"), first["gpu"]) == (True, 1)  # module order, then GPU
    assert second == {
        "module": second["module"],
        "gpu": 0,
        "path": second["path"],
        "index": 2,
        "sass": ["sm_75", "sm_80", "sm_100"],
        "ptx": [],
        "predicted": "fails",
        "reason": "hole-build-skips-gpu",
        "expected": "CUDA_ERROR_NO_BINARY_FOR_GPU",
        "driver": "CUDA_SUCCESS",
    }
    assert doc["counts"][0]["disagree"] == 1
    rc, out, _err = cli(monkeypatch, capsys, "verify", *fixtures("k_sm90a.cubin", "libroles.so"), replay=fake)
    assert rc == 1
    assert out.index("Disagreements") < out.index("loaded")  # before the counts table
    assert "libroles.so module 2 [sm_75, sm_80, sm_100]" in out
    assert "predicted fails (hole-build-skips-gpu), expected NO_BINARY_FOR_GPU (209); driver: SUCCESS" in out
    rc, md, _err = cli(monkeypatch, capsys, "verify", *fixtures("libroles.so"), "--markdown", replay=fake)
    assert rc == 1
    assert md.startswith("**cudafit verify**")
    assert "`hole-build-skips-gpu`" in md
    assert md.index("**Disagreements**") < md.index("| GPU |")


# ---------------------------------------------------------------- isolation


def test_a_crashing_and_a_hanging_module_do_not_take_the_report_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The worker is killed by a signal on one module and stops answering on another: both are reported,
    the worker is restarted, and every other module still gets its answer."""
    fake = fake_with(tmp_path, {("libroles.so", 1): {"0": "crash"}, ("libroles.so", 3): {"0": "hang"}})
    start = time.monotonic()
    rc, doc = verify_json(monkeypatch, capsys, *fixtures("libroles.so", "libmulti.so"), "--timeout", "1", replay=fake)
    elapsed = time.monotonic() - start
    assert (rc, doc["status"]) == (1, "incomplete")
    crash = module(doc, "libroles.so", 1)["checks"][0]["driver"]
    hang = module(doc, "libroles.so", 3)["checks"][0]["driver"]
    assert crash["outcome"] == "crash"
    assert "SIGKILL" in crash["message"]
    assert (hang["outcome"], hang["seconds"]) == ("timeout", 1.0)
    # the modules after them on the same GPU were answered by restarted workers
    after = [module(doc, "libroles.so", i)["checks"][0]["verdict"] for i in (2, 4)]
    assert after == ["agree", "agree"]
    assert module(doc, "libmulti.so", 0)["checks"][0]["verdict"] == "agree"
    assert doc["counts"][0] == {"gpu": 0, "loaded": 6, "agree": 4, "disagree": 0, "no_answer": 2, "skipped": 0}
    assert doc["counts"][1]["no_answer"] == 0  # the other GPUs' workers were not affected
    assert elapsed < 30


def test_timeout_kills_only_our_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner kills the worker it started (by its own handle) and starts a new one."""
    from cudafit.verify.runner import Job, iter_answers

    fake = fake_with(tmp_path, {("libroles.so", 3): {"0": "hang"}})
    monkeypatch.setenv("CUDAFIT_VERIFY_REPLAY", str(fake))
    data = (BIN / "libroles.so").read_bytes()
    facts = inspect_path(str(BIN / "libroles.so"))
    jobs = [Job(i, str(BIN / "libroles.so"), m.offset, m.size) for i, m in enumerate(facts.modules)]
    assert len(data) > 0
    answers = sorted(iter_answers({0: jobs}, timeout=0.5), key=lambda a: a.job)
    assert [a.outcome for a in answers] == ["answer", "answer", "answer", "timeout", "answer"]
    assert answers[4].name == "CUDA_SUCCESS"


# ---------------------------------------------------------------- where the bytes come from


def test_archive_members_wheels_and_pt2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = tmp_path / "pkg-1.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n\n")
        zf.write(BIN / "libroles.so", "pkg/_roles.so")
    pt2 = tmp_path / "model.pt2"
    with zipfile.ZipFile(pt2, "w") as zf:
        zf.write(BIN / "k_sm90a.cubin", "model/data/aotinductor/model/kernel.cubin")
    rc, doc = verify_json(monkeypatch, capsys, str(wheel), str(pt2), str(BIN / "libstatic.a"))
    assert rc == 0, doc["disagreements"]
    where = [(m["path"].replace(str(tmp_path), "TMP"), m["module"]) for m in doc["modules"]]
    assert sorted(where) == sorted(
        [
            (str(BIN / "libstatic.a!k.o"), 0),
            *((f"TMP/{wheel.name}!pkg/_roles.so", i) for i in range(5)),
            ("TMP/model.pt2!model/data/aotinductor/model/kernel.cubin", 0),
        ]
    )
    assert [c["verdict"] for m in doc["modules"] for c in m["checks"]].count("agree") == 20  # the rest: JIT-only
    pt2_cubin = next(m for m in doc["modules"] if m["path"].endswith("kernel.cubin"))
    # every kernel of a .pt2 model is used: sm_90a on an A100 is a failure, not a gated module
    assert pt2_cubin["checks"][1]["predicted"]["status"] == "fails"
    member = next(m for m in doc["modules"] if m["path"].endswith("libstatic.a!k.o"))
    assert member["checks"][1]["driver"]["name"] == "CUDA_SUCCESS"


@pytest.mark.parametrize("kind", ["docker-save", "oci-layout"])
def test_container_images(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An image's files are copied out of the layer the scan read them from (the top layer's PTX-only
    _C.so shadows the base layer's libmulti.so at the same path)."""
    from test_targets import docker_save, image_layers, oci_layout

    layers = image_layers()
    path = docker_save(tmp_path / "img.tar", layers) if kind == "docker-save" else oci_layout(tmp_path / "oci", layers)
    rc, doc = verify_json(monkeypatch, capsys, str(path), "--jit")
    assert rc == 0, doc
    c = next(m for m in doc["modules"] if m["path"].endswith("pkg/_C.so"))
    assert c["ptx"] == ["compute_75"]
    assert [x["driver"]["name"] for x in c["checks"]] == ["CUDA_SUCCESS"] * 3
    tool = [m for m in doc["modules"] if m["path"].endswith("opt/app/bin/tool")]
    assert [m["checks"][1]["verdict"] for m in tool] == ["agree"] * 3


def test_library_loaded_fatbins_are_loaded_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--embedded: each fatbin a library keeps in .ldata (unaligned, back to back) is handed to the driver on
    its own; one without code for the GPU is code for other GPUs (the library picks), not a hole."""
    from test_embedded import library

    lib = tmp_path / "libx.so"
    lib.write_bytes(library())
    facts = inspect_path(str(lib), embedded=True)
    data = lib.read_bytes()
    sha = [hashlib.sha256(data[m.offset : m.offset + m.size]).hexdigest() for m in facts.modules]
    S, NB = "CUDA_SUCCESS", "CUDA_ERROR_NO_BINARY_FOR_GPU"
    answers = [(NB, S), (NB, NB), (S, NB)]  # sm_75 | sm_86 | sm_90 + compute_90, on 9.0 and 7.5
    replay = _replay_doc(
        tmp_path,
        devices=[
            {"ordinal": 0, "name": "FAKE H100", "compute_capability": "9.0"},
            {"ordinal": 1, "name": "FAKE RTX 2080", "compute_capability": "7.5"},
        ],
        results=[
            {"sha256": h, "answers": {"0": {"result": a}, "1": {"result": b}}}
            for h, (a, b) in zip(sha, answers, strict=True)
        ],
    )
    rc, doc = verify_json(monkeypatch, capsys, str(lib), "--embedded", replay=replay)
    assert (rc, doc["status"]) == (0, "agree")
    rows = [
        (m["section"], [(c["predicted"]["status"], c["predicted"]["reason"]) for c in m["checks"]])
        for m in doc["modules"]
    ]
    assert rows == [
        (".nv_fatbin", [("fails", "no-compatible-code"), ("native", "sass-exact")]),
        (".ldata", [("specialised", "library-loaded-code"), ("specialised", "library-loaded-code")]),
        (".ldata", [("native", "library-loaded-code"), ("specialised", "library-loaded-code")]),
    ]
    assert doc["modules"][1]["offset"] % 8 == 3  # loaded from its unaligned place


def test_bytes_that_cannot_be_found_are_reported(tmp_path: Path) -> None:
    from cudafit.verify.sources import ByteSources

    with ByteSources() as src:
        path, why = src.resolve(str(tmp_path / "gone.whl!pkg/x.so"))
        assert path is None
        assert "not found" in why
        path, why = src.resolve(str(BIN / "libroles.so"))
        assert (path, why) == (str(BIN / "libroles.so"), "")


# ---------------------------------------------------------------- could not verify


def _replay_doc(tmp_path: Path, **fields: Any) -> Path:
    doc = {
        "schema": "cudafit.verify-replay/1",
        "about": "FAKE",
        "driver": {"version": "580.65.06", "cuda_version": "13.0"},
    }
    doc.update(fields)
    out = tmp_path / "replay.json"
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize(
    ("fields", "kind", "words"),
    [
        ({"driver": None}, "no-driver", "no NVIDIA driver"),
        ({"init_error": "CUDA_ERROR_NO_DEVICE"}, "no-gpu", "no CUDA GPU"),
        ({"devices": []}, "no-gpu", "no CUDA GPU"),
        (
            {"devices": [{"ordinal": 0, "name": "H100", "compute_capability": "x.y"}]},
            "driver-error",
            "listed a device it could not describe",
        ),
    ],
)
def test_no_driver_and_no_gpu(
    fields: dict[str, Any],
    kind: str,
    words: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    replay = _replay_doc(tmp_path, **fields)
    rc, out, err = cli(monkeypatch, capsys, "verify", *fixtures("libroles.so"), replay=replay)
    assert (rc, out) == (3, "")
    assert err.startswith("cudafit verify: could not verify:")
    assert words in err
    rc, doc = verify_json(monkeypatch, capsys, *fixtures("libroles.so"), replay=replay)
    assert (rc, doc["status"], doc["error"]["kind"]) == (3, "could-not-verify", kind)


def test_no_driver_on_a_machine_without_libcuda(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real ctypes backend, pointed at a library that does not exist: a message, never a traceback."""
    from cudafit.errors import DriverUnavailableError
    from cudafit.verify.driver import CtypesDriver

    with pytest.raises(DriverUnavailableError) as err:
        CtypesDriver("/nonexistent/libcuda.so.1")
    assert err.value.kind == "no-driver"
    assert "cannot be loaded" in err.value.message
    import ctypes.util

    if ctypes.util.find_library("cuda") is None:  # this machine (CI): no driver at all
        rc, out, err2 = cli(monkeypatch, capsys, "verify", *fixtures("libroles.so"), replay=None)
        assert (rc, out) == (3, "")
        assert "no NVIDIA driver" in err2


def test_gpu_indices_are_usage_errors_when_wrong(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _out, err = cli(monkeypatch, capsys, "verify", *fixtures("libroles.so"), "--gpu", "7")
    assert rc == 2
    assert "no CUDA device 7 (the driver lists 0, 1, 2)" in err
    with pytest.raises(SystemExit) as exc:
        cli(monkeypatch, capsys, "verify", "--gpu", "h100")
    assert exc.value.code == 2
    assert "give a CUDA device index" in capsys.readouterr().err
    rc, doc = verify_json(monkeypatch, capsys, *fixtures("k_sm90a.cubin"), "--gpu", "2", "--gpu", "0")
    assert rc == 0
    assert [g["ordinal"] for g in doc["gpus"]] == [2, 0]
    assert [c["driver"]["name"] for c in doc["modules"][0]["checks"]] == [
        "CUDA_ERROR_NO_BINARY_FOR_GPU",
        "CUDA_SUCCESS",
    ]


def test_the_parent_process_never_loads_libcuda(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only verify's workers talk to the driver: the cudafit process itself never dlopens libcuda."""
    import ctypes

    opened: list[str] = []
    real = ctypes.CDLL

    class Recording(real):  # type: ignore[misc,valid-type]
        def __init__(self, name: Any, *args: Any, **kwargs: Any) -> None:
            opened.append(str(name))
            super().__init__(name, *args, **kwargs)

    monkeypatch.setattr(ctypes, "CDLL", Recording)
    rc, _doc = verify_json(monkeypatch, capsys, *fixtures("libroles.so"))
    assert rc == 0
    assert not [n for n in opened if "libcuda" in n]


# ---------------------------------------------------------------- doctor --verify


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "site-packages"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg" / "_roles.so").write_bytes((BIN / "libroles.so").read_bytes())
    info = site / "pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n\n")
    (info / "RECORD").write_text("pkg/_roles.so,,\npkg-1.0.dist-info/METADATA,,\n")
    return site


def test_doctor_verify(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    site = str(_site(tmp_path))
    rc, out, _err = cli(monkeypatch, capsys, "doctor", "--site-packages", site, "--no-probe", "--verify", "--json")
    doc = json.loads(out)
    jsonschema.validate(doc, CHECK_SCHEMA)
    jsonschema.validate(doc["verify"], SCHEMA)
    assert rc == 0
    assert doc["verify"]["status"] == "agree"
    assert {m["package"] for m in doc["verify"]["modules"]} == {"pkg"}
    rc, out, _err = cli(monkeypatch, capsys, "doctor", "--site-packages", site, "--no-probe", "--verify")
    assert out.index("pkg") < out.index("Driver check")  # after the static matrix
    fake = fake_with(tmp_path, {("libroles.so", 2): {"0": "CUDA_SUCCESS"}})
    rc, out, _err = cli(monkeypatch, capsys, "doctor", "--site-packages", site, "--no-probe", "--verify", replay=fake)
    assert rc == 1
    assert "Disagreements" in out
    rc, out, err = cli(
        monkeypatch,
        capsys,
        "doctor",
        "--site-packages",
        site,
        "--no-probe",
        "--verify",
        replay=_replay_doc(tmp_path, driver=None),
    )
    assert rc == 3
    assert "could not verify" in err
    rc, out, _err = cli(monkeypatch, capsys, "doctor", "--site-packages", site, "--no-probe", "--verify", "--markdown")
    assert "**cudafit verify**" in out


def test_doctor_without_verify_starts_no_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from cudafit.verify import runner

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("doctor without --verify must not ask the driver")

    monkeypatch.setattr(runner, "list_devices", forbidden)
    monkeypatch.setattr(runner, "iter_answers", forbidden)
    rc, out, _err = cli(monkeypatch, capsys, "doctor", "--site-packages", str(_site(tmp_path)), "--no-probe")
    assert rc == 0
    assert "Driver check" not in out


# ---------------------------------------------------------------- the ctypes backend's plumbing


class FakeLibcuda:
    """A FAKE libcuda.so.1 (the functions CtypesDriver calls, in Python): one H100; cubins load, fatbins
    answer 209, PTX text is 'JIT-compiled' in 12.5 ms with a log.  Checks the ctypes plumbing (out
    parameters, JIT option buffers, error names, context retain/release), not the driver."""

    def __init__(self, init: int = 0) -> None:
        self.init = init
        self.calls: list[str] = []
        self.images: list[bytes] = []

    def cuInit(self, flags: int) -> int:
        return self.init

    def cuDriverGetVersion(self, ptr: Any) -> int:
        ptr._obj.value = 13000
        return 0

    def cuDeviceGetCount(self, ptr: Any) -> int:
        ptr._obj.value = 1
        return 0

    def cuDeviceGet(self, ptr: Any, ordinal: int) -> int:
        ptr._obj.value = ordinal
        return 0

    def cuDeviceGetName(self, buf: Any, size: int, dev: int) -> int:
        buf.value = b"NVIDIA H100 80GB HBM3"
        return 0

    def cuDeviceGetAttribute(self, ptr: Any, attr: int, dev: int) -> int:
        ptr._obj.value = {75: 9, 76: 0}[attr]
        return 0

    def cuDeviceGetPCIBusId(self, buf: Any, size: int, dev: int) -> int:
        buf.value = b"0000:1B:00.0"
        return 0

    def cuDeviceGetUuid_v2(self, buf: Any, dev: int) -> int:
        import ctypes

        ctypes.memmove(buf, bytes(range(16)), 16)
        return 0

    def cuDevicePrimaryCtxRetain(self, ptr: Any, dev: int) -> int:
        self.calls.append("retain")
        ptr._obj.value = 0xC0
        return 0

    def cuDevicePrimaryCtxRelease_v2(self, dev: int) -> int:
        self.calls.append("release")
        return 0

    def cuCtxSetCurrent(self, ctx: Any) -> int:
        self.calls.append(f"current {ctx.value:#x}")
        return 0

    def cuModuleLoadDataEx(self, ptr: Any, buf: Any, n: int, options: Any, values: Any) -> int:
        import ctypes

        image = buf.raw
        self.images.append(image)
        assert list(options) == [2, 3, 4, 5, 6]  # wall time, info log + size, error log + size
        if image.startswith(b"\x7fELF"):
            ptr._obj.value = 0x10
            return 0
        if image.startswith(b"//"):
            assert image.endswith(b"\0")  # PTX text reaches the driver NUL-terminated
            ctypes.c_float.from_buffer(values, 0).value = 12.5
            log = b"ptxas info: JIT compiled\0"
            ctypes.memmove(values[1], log, len(log))
            ptr._obj.value = 0x20
            return 0
        log = b"no image for sm_90\0"
        ctypes.memmove(values[3], log, len(log))
        return 209

    def cuModuleUnload(self, module: Any) -> int:
        self.calls.append(f"unload {module.value:#x}")
        return 0

    def cuGetErrorName(self, code: int, ptr: Any) -> int:
        names = {0: b"CUDA_SUCCESS", 209: b"CUDA_ERROR_NO_BINARY_FOR_GPU"}
        if code not in names:
            return 1
        ptr._obj.value = names[code]
        return 0


def test_ctypes_backend_plumbing_with_a_fake_libcuda() -> None:
    from cudafit.errors import DriverUnavailableError
    from cudafit.verify.driver import CtypesDriver

    lib = FakeLibcuda()
    drv = CtypesDriver(lib=lib)
    assert drv.driver_info() == {"cuda_version": "13.0", "version": None}
    (dev,) = drv.devices()
    assert dev == {
        "ordinal": 0,
        "name": "NVIDIA H100 80GB HBM3",
        "compute_capability": "9.0",
        "pci_bus_id": "0000:1b:00.0",
        "uuid": "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f",
    }
    assert lib.calls == []  # listing creates no context
    with pytest.raises(DriverUnavailableError, match="no CUDA device 3"):
        drv.open(3)
    drv.open(0)
    assert lib.calls == ["retain", "current 0xc0"]
    cubin = drv.load((BIN / "k_sm90a.cubin").read_bytes())
    assert (cubin.code, cubin.name, cubin.jit_ms) == (0, "CUDA_SUCCESS", None)
    ptx = drv.load((BIN / "k_compute100f.ptx").read_bytes(), text=True)
    assert (ptx.code, ptx.jit_ms, ptx.log) == (0, 12.5, "ptxas info: JIT compiled")
    fat = drv.load(b"\x50\xed\x55\xba" + bytes(60))
    assert (fat.code, fat.name, fat.log) == (209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no image for sm_90")
    assert drv.error_name(999) == "CUDA_ERROR_UNKNOWN"  # the driver had no name: the table's
    assert drv.error_name(12345) == "CUresult 12345"
    drv.close()
    drv.close()  # released once
    assert lib.calls == ["retain", "current 0xc0", "unload 0x10", "unload 0x20", "release"]
    with pytest.raises(DriverUnavailableError) as err:
        CtypesDriver(lib=FakeLibcuda(init=100))
    assert err.value.kind == "no-gpu"
    with pytest.raises(DriverUnavailableError) as err:
        CtypesDriver(lib=FakeLibcuda(init=34))
    assert (err.value.kind, "stub library" in err.value.message) == ("no-driver", True)


def test_worker_never_imports_from_the_directory_it_runs_in(tmp_path: Path) -> None:
    """A project's own json.py (or any module) in the current directory is never executed by verify."""
    import subprocess

    from cudafit.verify.runner import worker_command, worker_env

    marker = tmp_path / "ran"
    (tmp_path / "json.py").write_text(f"open({str(marker)!r}, 'w').write('x')\nraise SystemExit(7)\n")
    p = subprocess.run(
        [*worker_command("--list")], cwd=tmp_path, env=worker_env(), capture_output=True, text=True, check=False
    )
    assert not marker.exists(), p.stderr
    assert p.returncode != 7
