"""`cudafit scan --json`: the schema contract, and the fast text renderer equals the dict renderer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema

from builders import elf, entry, fatbin
from cudafit.binary import inspect_bytes, inspect_path
from cudafit.report.scan import FileReport, render_scan_json, render_scan_json_text

ROOT = Path(__file__).parent.parent
BIN = Path(__file__).parent / "fixtures" / "bin"
SCHEMA = json.loads((ROOT / "src/cudafit/schema/scan.json").read_text())


def test_fast_text_equals_dicts_on_every_fixture() -> None:
    reports = [FileReport(inspect_path(p)) for p in sorted(BIN.iterdir())]
    odd = elf([(".nv_fatbin", fatbin(entry(2, 80, identifier='k"\\\u00e9\u2603\t.cu'.encode())))])
    reports.append(FileReport(inspect_bytes(odd, 'we"ird\\name.so'), package="p\u00e9", version="1"))
    reports.append(FileReport(inspect_bytes(odd[:-30], "broken.so")))
    as_dict = render_scan_json(reports)
    as_text = json.loads(render_scan_json_text(reports))
    assert as_text == as_dict
    jsonschema.validate(as_dict, SCHEMA)


def test_cli_json_validates_and_reports_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.so"
    bad.write_bytes(elf([(".nv_fatbin", fatbin(entry(2, 80)))])[:-30])
    p = subprocess.run(
        [sys.executable, "-m", "cudafit", "scan", str(BIN), str(bad), "--json", "--kernels"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 1  # a file could not be read
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["summary"]["errors"] == 1
    by_name = {Path(f["path"]).name: f for f in doc["files"]}
    assert by_name["bad.so"]["error"]
    bounds = by_name["libbounds.so"]
    assert {(k["arch"], k["static_shared_bytes"]) for k in bounds["kernels"]} == {("sm_80", 48000), ("sm_90", 49024)}
    p = subprocess.run(
        [sys.executable, "-m", "cudafit", "scan", str(BIN / "libmulti.so"), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 0
    assert json.loads(p.stdout)["files"][0]["entries"][0]["arch"] == "sm_75"


def test_demangle() -> None:
    import shutil

    from cudafit.binary.kernels import demangle

    got = demangle(["_Z7add_onePfi", "plain_c_kernel"])
    if shutil.which("c++filt"):
        assert got == {"_Z7add_onePfi": "add_one(float*, int)"}
    else:
        assert got == {}
