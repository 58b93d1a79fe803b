"""Fixture wheels and a synthetic torch build for the audit tests (tiny zips built at test time)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import builders as b

ROOT = Path(__file__).parent.parent
BIN = Path(__file__).parent / "fixtures" / "bin"
AUDIT_SCHEMA = json.loads((ROOT / "src/cudafit/schema/audit.json").read_text())
SARIF_SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())


def so(*modules: tuple[tuple[str, ...], ...] | tuple[str, ...], needed: tuple[str, ...] = ()) -> bytes:
    """A host ELF whose ``.nv_fatbin`` holds one fatbin per module, each with the given targets.

    ``sm_80`` is a cubin entry, ``compute_80`` a PTX entry (payloads are zeros: kernel names unreadable).
    """
    blobs = []
    for archs in modules:
        entries = []
        for arch in archs:
            kind = 2 if str(arch).startswith("sm_") else 1
            text = str(arch).split("_", 1)[1]
            flags = b.BASE_FLAGS | (b.FLAG_A if text.endswith("a") else 0) | (b.FLAG_F if text.endswith("f") else 0)
            version = (9, 0) if kind == 1 else (1, 8)
            entries.append(b.entry(kind, int(text.rstrip("af")), flags=flags, code_version=version))
        blobs.append(b.pad8(b.fatbin(*entries)))
    return b.elf([(".nv_fatbin", b"".join(blobs))], needed=needed)


def make_wheel(directory: Path, name: str, version: str, members: dict[str, bytes]) -> Path:
    """A PEP 427 wheel (dist-info with METADATA, WHEEL, RECORD) holding ``members``."""
    path = directory / f"{name.replace('-', '_')}-{version}-cp311-cp311-linux_x86_64.whl"
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, data in members.items():
            zf.writestr(member, data)
        zf.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n")
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n")
        zf.writestr(f"{info}/RECORD", "".join(f"{m},,\n" for m in members) + f"{info}/RECORD,,\n")
    return path


def fixture(name: str) -> bytes:
    return (BIN / name).read_bytes()


#: torch 2.14.1+cu130's build list as read from its libtorch_cuda.so (sm_75 .. sm_120, no PTX),
#: plus per-kernel extras (one sm_89 module, sm_90a / sm_100a kernels) that are not part of it.
TORCH_GENERAL = ("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")


def fake_torch_lib() -> bytes:
    """A synthetic (fake) libtorch_cuda.so with torch 2.14.1+cu130's arch lists, a few modules of each shape."""
    return so(
        TORCH_GENERAL,
        TORCH_GENERAL,
        TORCH_GENERAL,
        (*TORCH_GENERAL, "sm_90a"),
        (*TORCH_GENERAL, "sm_89", "sm_100a", "sm_103f"),
        needed=("libcudart.so.13",),
    )


TORCH_VERSION_PY = "__version__ = '2.14.1+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\n"


def fake_torch_site(root: Path) -> Path:
    """A site-packages directory with a fake torch (torch/version.py, torch/lib/libtorch_cuda.so, dist-info)."""
    site = root / "lib" / "python3.11" / "site-packages"
    (site / "torch" / "lib").mkdir(parents=True)
    (site / "torch" / "lib" / "libtorch_cuda.so").write_bytes(fake_torch_lib())
    (site / "torch" / "version.py").write_text(TORCH_VERSION_PY)
    (site / "torch-2.14.1+cu130.dist-info").mkdir()
    (site / "torch-2.14.1+cu130.dist-info" / "METADATA").write_text("Name: torch\nVersion: 2.14.1+cu130\n\n")
    (root / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.9\n")
    (root / "bin").mkdir()
    (root / "bin" / "python").write_text("")  # never run: the environment is resolved from files
    return site


def run_audit(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    """``cudafit audit ARGS`` in this process (no scan cache): (exit code, stdout, stderr)."""
    import contextlib
    import io
    import os

    from cudafit.cli import main

    out, err = io.StringIO(), io.StringIO()
    before = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(["audit", *args, "--no-cache"])
            except SystemExit as exc:  # argparse usage errors
                rc = int(exc.code or 0)
    finally:
        os.chdir(before)
    return rc, out.getvalue(), err.getvalue()


def run_audit_process(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    """``python -m cudafit audit ARGS`` in a subprocess, as a user runs it."""
    cmd = [sys.executable, "-m", "cudafit", "audit", *args, "--no-cache"]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def audit_json(*args: str, cwd: Path | None = None) -> tuple[int, dict[str, Any]]:
    """The ``cudafit.audit/1`` document, validated against its schema."""
    import jsonschema

    rc, out, err = run_audit(*args, "--json", cwd=cwd)
    assert out, err
    doc = json.loads(out)
    jsonschema.validate(doc, AUDIT_SCHEMA)
    return rc, doc


def missing(doc: dict[str, Any], target: int = 0) -> list[str]:
    """Labels of the requirements a target misses."""
    reqs = doc["policy"]["requirements"]
    return [reqs[i]["label"] for i in doc["targets"][target]["missing"]]
