"""`cudafit verify` on a real GPU (marker `gpu`; skipped where the driver lists no GPU).

Loads the committed nvcc-built fixtures through this machine's driver and checks its answers against
NVIDIA's rules as the oracle states them (tests/driver_oracle.py), for each GPU's compute capability,
and that cudafit's predictions agree.  One command on a GPU machine:

    python3 -m pytest -m gpu tests/test_verify_gpu.py -v

The same assertions run in CI on the answers of the FAKE driver and of every real recording committed
as tests/fakes/recorded_<gpu>_verify.json (scripts/record_probe.py --verify), replayed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from cudafit.binary import inspect_path
from driver_oracle import NO_BINARY, PTX_TOO_NEW, SUCCESS, TEGRA, expected_answer

ROOT = Path(__file__).parent.parent
BIN = Path(__file__).parent / "fixtures" / "bin"
FAKES = Path(__file__).parent / "fakes"
SCHEMA = json.loads((ROOT / "src/cudafit/schema/verify.json").read_text())
#: k_sm90a.cubin: sm_90a only; libptxonly.so: PTX only (compute_75, ISA 9.0); libroles.so: a hole at 9.0
#: and a kernel-less module; libmulti.so: sm_75 .. sm_120 + compute_120.
FIXTURES = ("k_sm90a.cubin", "libptxonly.so", "libroles.so", "libmulti.so")


SOURCES = [
    pytest.param(None, marks=pytest.mark.gpu, id="driver"),
    pytest.param(FAKES / "verify_driver_fake.json", id="fake"),
    *(pytest.param(p, id=p.stem) for p in sorted(FAKES.glob("recorded_*_verify.json"))),
]


@pytest.fixture(scope="module", params=SOURCES)
def real_doc(request: pytest.FixtureRequest) -> dict[str, Any]:
    """``cudafit verify --jit --json`` on the fixtures: this machine's driver (skips without a GPU), or a
    replayed fake or recording."""
    from cudafit.errors import DriverUnavailableError
    from cudafit.verify.runner import list_devices

    env = dict(os.environ)
    env.pop("CUDAFIT_VERIFY_REPLAY", None)
    if request.param is None:
        try:
            list_devices(env=env)
        except DriverUnavailableError as err:
            pytest.skip(f"no GPU to verify on: {err.message}")
    else:
        env["CUDAFIT_VERIFY_REPLAY"] = str(request.param)
    p = subprocess.run(
        [sys.executable, "-m", "cudafit", "verify", *(str(BIN / f) for f in FIXTURES), "--jit", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )
    assert "Traceback" not in p.stderr, p.stderr
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["backend"] == ("ctypes" if request.param is None else "replay")
    return doc


def _cc(g: dict[str, Any]) -> tuple[int, int]:
    major, minor = g["compute_capability"].split(".")
    return int(major), int(minor)


def _modules(doc: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [m for m in doc["modules"] if m["path"].endswith("/" + name)]


def test_every_answer_is_the_one_nvidia_documents(real_doc: dict[str, Any]) -> None:
    driver = tuple(int(x) for x in real_doc["cuda_version"].split("."))
    assert len(driver) == 2
    for name in FIXTURES:
        facts = inspect_path(str(BIN / name))
        for m in _modules(real_doc, name):
            entries = [(e.arch_name, e.code_version) for e in facts.modules[m["module"]].entries]
            for c in m["checks"]:
                g = real_doc["gpus"][c["gpu"]]
                want = expected_answer(entries, _cc(g), driver)  # type: ignore[arg-type]
                got = c["driver"]
                assert got is not None, (name, m["module"], g)
                assert (got["outcome"], got["name"]) == ("answer", want), (name, m["module"], g, got)


def test_the_four_fixtures_by_compute_capability(real_doc: dict[str, Any]) -> None:
    driver = tuple(int(x) for x in real_doc["cuda_version"].split("."))
    for gi, g in enumerate(real_doc["gpus"]):
        cc = _cc(g)
        (cubin,) = _modules(real_doc, "k_sm90a.cubin")
        assert cubin["checks"][gi]["driver"]["name"] == (SUCCESS if cc == (9, 0) else NO_BINARY)
        (multi,) = _modules(real_doc, "libmulti.so")
        multi_runs = cc >= (7, 5) and cc[0] in (7, 8, 9, 10, 12) and cc not in TEGRA
        assert multi["checks"][gi]["driver"]["name"] == (SUCCESS if multi_runs else NO_BINARY)
        (ptx,) = _modules(real_doc, "libptxonly.so")  # compute_75, PTX ISA 9.0 (CUDA 13.0)
        if cc < (7, 5):
            assert ptx["checks"][gi]["driver"]["name"] == NO_BINARY
        else:
            assert ptx["checks"][gi]["driver"]["name"] == (SUCCESS if driver >= (13, 0) else PTX_TOO_NEW)
        roles = _modules(real_doc, "libroles.so")
        assert len(roles) == 5
        if cc == (9, 0):  # the hole: module 2 is sm_75 sm_80 sm_100
            hole = roles[2]["checks"][gi]
            assert hole["predicted"] == {"status": "fails", "reason": "hole-build-skips-gpu"}
            assert hole["driver"]["name"] == NO_BINARY


def test_predictions_agree_with_the_driver(real_doc: dict[str, Any]) -> None:
    """The referee's verdict: every loaded module's answer is the predicted one."""
    assert real_doc["disagreements"] == [], real_doc["disagreements"]
    assert real_doc["status"] == "agree"
    for c in real_doc["counts"]:
        assert c["no_answer"] == 0
