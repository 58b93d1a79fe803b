"""scripts/record_probe.py: the files it writes are the ones the probe and verify tests load.

The recording itself needs a GPU machine (owed where none was lent); here its conversions run on the
fakes: NVML values round-trip into the host shape FakeNvml replays, and a verify recording made through
the replay backend replays to the same answers.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parent.parent
FAKES = Path(__file__).parent / "fakes"


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("record_probe", ROOT / "scripts" / "record_probe.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("names", "slug"),
    [
        (["NVIDIA H100 80GB HBM3"], "h100"),
        (["NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"], "h100"),
        (["NVIDIA GeForce RTX 4090"], "rtx_4090"),
        (["NVIDIA A100-SXM4-80GB"], "a100"),
        (["NVIDIA GeForce RTX 2080", "NVIDIA GeForce RTX 3090"], "rtx_2080_rtx_3090"),
        (["NVIDIA RTX PRO 6000 Blackwell Server Edition"], "rtx_pro_6000"),
        (["NVIDIA L4"], "l4"),
    ],
)
def test_file_names_follow_the_gpu(names: list[str], slug: str) -> None:
    assert _script().gpu_slug(names) == slug


def test_nvml_recording_has_the_shape_the_probe_tests_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    from cudafit.probe.backends import probe_nvml
    from test_probe import HOSTS, FakeNvml

    host = HOSTS["a100_mig"]
    fake = FakeNvml(host)
    fake.NVMLError = Exception  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    recorded = _script().record_nvml()
    assert recorded == {k: v for k, v in host.items() if not k.startswith("_")}
    devices, driver, _cuda, problems = probe_nvml(FakeNvml(json.loads(json.dumps(recorded))))
    assert (len(devices), str(driver), problems) == (2, "580.65.06", [])


def test_verify_recording_replays_to_the_same_answers(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "CUDAFIT_VERIFY_REPLAY": str(FAKES / "verify_driver_fake.json")}
    doc = _script().record_verify(env=env)
    assert doc["schema"] == "cudafit.verify-replay/1"
    assert doc["about"].startswith("REPLAYED")
    assert [d["compute_capability"] for d in doc["devices"]] == ["9.0", "8.0", "7.5"]
    fake = {r["sha256"]: r for r in json.loads((FAKES / "verify_driver_fake.json").read_text())["results"]}
    recorded = {r["sha256"]: r for r in doc["results"]}
    assert set(fake) <= set(recorded)  # every module the fake answers was loaded and recorded
    for sha, r in fake.items():
        got = recorded[sha]
        assert (got["file"], got["module"]) == (r["file"], r["module"])
        assert {d: a["result"] for d, a in got["answers"].items()} == {d: a["result"] for d, a in r["answers"].items()}
    unknown = [r for sha, r in recorded.items() if sha not in fake]
    assert unknown == []  # not-recorded answers are not written as answers
