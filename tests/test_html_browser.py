"""Opt-in: the --html report renders in headless Chromium (set CUDAFIT_BROWSER_TESTS=1; needs chromium)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(__file__).parent / "fixtures" / "bin"
BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        os.environ.get("CUDAFIT_BROWSER_TESTS") != "1" or BROWSER is None,
        reason="opt-in: CUDAFIT_BROWSER_TESTS=1 and a chromium binary",
    ),
]


def test_html_report_renders(tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "cudafit",
            "check",
            str(BIN / "libmulti.so"),
            "--gpu",
            "1080 Ti",
            "--gpu",
            "h100",
            "--no-probe",
            "--html",
            str(report),
        ],
        capture_output=True,
        check=False,
    )
    assert BROWSER is not None
    dom = subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", report.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "<table>" in dom
    assert "fails" in dom
    assert "native" in dom
    shot = tmp_path / "shot.png"
    subprocess.run(
        [
            BROWSER,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--screenshot={shot}",
            "--window-size=1200,600",
            report.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.stat().st_size > 1000
