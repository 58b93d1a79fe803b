"""`cudafit explain` on the command line: input forms, formats, schema, exit codes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
import pytest

from builders import elf, entry, fatbin
from cudafit.cli import main
from cudafit.explain.lookup import package_archs

SCHEMA = json.loads((Path(__file__).parent.parent / "src/cudafit/schema/explain.json").read_text())
SEED_001 = "FATAL: kernel fmha_cutlassF_f16_aligned_64x128_rf_sm80 is for sm80-sm100, but was built for sm75"


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, dict]:  # type: ignore[type-arg]
    rc = main(argv)
    out = capsys.readouterr().out
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    return rc, doc


def test_file_json_grounded_on_declared_gpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "log.txt"
    log.write_bytes(("\x1b[31mERROR\x1b[0m " + SEED_001 + "\r\n").encode())
    rc, doc = _json(capsys, ["explain", "--file", str(log), "--json", "--gpu", "2080", "--gpu", "3090"])
    assert rc == 0
    assert [f["category"] for f in doc["findings"]] == ["ptx-jit-lower-arch", "mixed-gpu"]
    assert 'TORCH_CUDA_ARCH_LIST="7.5;8.6"' in doc["findings"][0]["fixes"][0]
    assert doc["findings"][0]["evidence"]["built_for"] == "sm_75"


def test_stdin_and_unknown(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("KeyError: x"))
    rc, doc = _json(capsys, ["explain", "-", "--json", "--no-probe"])
    assert rc == 0
    assert [f["category"] for f in doc["findings"]] == ["unknown"]


def test_positional_text_with_driver(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explain", "CUDA driver version is insufficient for CUDA runtime version", "--driver", "535.104.05"]
    rc, doc = _json(capsys, [*argv, "--no-probe", "--json"])
    assert rc == 0
    assert "535.104.05" in doc["findings"][0]["cause"]


def test_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["explain", "RuntimeError: FlashInfer requires sm75+", "--gpu", "3090", "--no-probe", "--markdown"])
    out = capsys.readouterr().out
    assert rc == 0
    assert out.startswith("## cudafit explain\n")
    assert "### a library's own capability check refused the GPU (`capability-guard`, confidence 0.75)" in out
    assert "```\nRuntimeError: FlashInfer requires sm75+\n```" in out
    assert "**Cause:** the guard requires compute capability 7.5" in out


def test_terminal_text_escapes_brackets(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    rc = main(["explain", "[worker0] RuntimeError: CUDA error: invalid device function [/bold]", "--no-probe"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "[worker0] RuntimeError: CUDA error: invalid device function [/bold]" in out
    assert "\x1b[" not in out
    assert "fix 1:" in out


def test_exit_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--file", str(tmp_path / "missing"), "--no-probe"]) == 3
    assert main(["explain", "--file", str(tmp_path), "--no-probe"]) == 3  # a directory
    monkeypatch.setattr("sys.stdin", io.StringIO("   \n"))
    assert main(["explain", "-", "--no-probe"]) == 2
    assert main(["explain", "x", "--file", str(tmp_path / "a"), "--no-probe"]) == 2
    assert main(["explain", "x", "--gpu", "no such gpu 12345", "--no-probe"]) == 2
    assert main(["explain", "x", "--driver", "banana", "--no-probe"]) == 2
    capsys.readouterr()


def test_package_archs_reads_only_the_named_packages(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    (site / "fbgemm_gpu").mkdir(parents=True)
    (site / "other").mkdir()
    lib = elf([(".nv_fatbin", fatbin(entry(2, 70), entry(2, 80), entry(1, 90, code_version=(8, 0))))])
    (site / "fbgemm_gpu" / "fbgemm_gpu_py.so").write_bytes(lib)
    (site / "other" / "x.so").write_bytes(lib)
    (site / "nocode").mkdir()
    (site / "nocode" / "y.so").write_bytes(elf([(".text", b"\0" * 16)]))
    found = package_archs(["fbgemm-gpu", "nocode"], sites=[str(site)])
    assert found == {"fbgemm_gpu": ("compute_90", "sm_70", "sm_80")}


def test_catalogue_lists_every_pattern_with_its_emitter(capsys: pytest.CaptureFixture[str]) -> None:
    from cudafit.explain import CATEGORIES

    assert main(["explain", "--catalogue", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["category"] for r in rows} == {c.id for c in CATEGORIES}
    assert all(r["source"] and r["pattern"] for r in rows)
    assert {"category": "wrong-framework-build", "source": "OpenNMT/CTranslate2:src/devices.cc",
            "pattern": "This CTranslate2 package was not compiled with CUDA support"} in rows  # fmt: skip
    assert main(["explain", "--catalogue"]) == 0
    text = capsys.readouterr().out
    assert "  OpenNMT/CTranslate2:src/devices.cc\n" in text


def test_a_gpu_given_by_its_compute_capability_is_not_named_twice(capsys: pytest.CaptureFixture[str]) -> None:
    """`--gpu 6.1` names the GPU "compute capability 6.1": the cause says so once, not "... 6.1 (6.1)"."""
    rc = main(["explain", "CUDA error: no kernel image is available for execution on the device", "--gpu", "6.1"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "compute capability 6.1" in out
    assert "6.1 (6.1)" not in out
