"""`doctor --python`: another interpreter's environment, resolved from its files without running anything of it.

Real venvs (``python -m venv --without-pip``, with and without ``--system-site-packages``) hold a
``.pth`` file and a ``sitecustomize`` that would write a marker file if executed; fake conda and
installation layouts have "interpreters" that are shell scripts writing a marker if run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from cudafit.errors import EnvironmentResolutionError
from cudafit.targets.env import EnvironmentTarget, resolve_environment, site_packages_of

BIN = Path(__file__).parent / "fixtures" / "bin"
VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX venv layout and shell-script interpreters")


def add_distribution(site: Path, name: str = "fakecuda", version: str = "1.0") -> None:
    """A distribution owning one CUDA library (the libmulti.so fixture), as pip would install it."""
    pkg = site / name
    pkg.mkdir(parents=True, exist_ok=True)
    shutil.copy(BIN / "libmulti.so", pkg / "_C.so")
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n")
    (info / "RECORD").write_text(f"{name}/_C.so,,\n{name}-{version}.dist-info/METADATA,,\n")


def add_traps(site: Path, marker: Path) -> None:
    """Code that the target's ``site`` would run at start-up: it must never run."""
    write = f"open({str(marker)!r}, 'a').write('executed\\n')"
    (site / "zz_trap.pth").write_text(f"import os; {write}\n")
    (site / "sitecustomize.py").write_text(write + "\n")


def trap_interpreter(path: Path, marker: Path) -> None:
    """A stand-in "interpreter" that records it was run."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho run >> {marker}\n")
    path.chmod(0o755)


def make_venv(where: Path, *, system_site: bool = False) -> Path:
    args = [sys.executable, "-m", "venv", "--without-pip", str(where)]
    if system_site:
        args.insert(4, "--system-site-packages")
    subprocess.run(args, check=True)
    return where


def venv_site(venv: Path) -> Path:
    return venv / "lib" / f"python{VERSION}" / "site-packages"


def doctor(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    p = subprocess.run(
        [sys.executable, "-m", "cudafit", "doctor", *args, "--no-probe", "--gpu", "8.6", "--json"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )
    assert "Traceback" not in p.stderr, p.stderr
    return p.returncode, (json.loads(p.stdout) if p.stdout.strip() else {}), p.stderr


@posix_only
def test_venv_is_scanned_not_its_base_and_nothing_of_it_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    venv = make_venv(tmp_path / "venv")
    marker = tmp_path / "marker"
    add_distribution(venv_site(venv))
    add_traps(venv_site(venv), marker)

    env = resolve_environment(str(venv / "bin" / "python"), environ={})
    assert env.kind == "venv"
    assert env.version == VERSION
    assert [s.path for s in env.sites] == [str(venv_site(venv))]  # not the base interpreter's
    assert any("include-system-site-packages" in n for n in env.notes)  # why the user site is left out
    assert resolve_environment(str(venv)).sites == env.sites  # the directory works too
    monkeypatch.setenv("PATH", str(venv / "bin"))
    assert resolve_environment("python3").sites == env.sites  # a bare name, looked up on PATH
    monkeypatch.undo()

    rc, doc, _err = doctor("--python", str(venv / "bin" / "python"))
    assert rc == 0
    assert [t["name"] for t in doc["targets"]] == ["fakecuda"]
    assert any(n.startswith(f"scanned {venv_site(venv)}: the venv's own") for n in doc["notes"])
    rc, doc, _err = doctor("--python", str(venv))
    assert [t["name"] for t in doc["targets"]] == ["fakecuda"]
    assert not marker.exists()


@posix_only
def test_venv_with_system_site_packages_adds_the_base_and_the_user_site(tmp_path: Path) -> None:
    venv = make_venv(tmp_path / "venv", system_site=True)
    marker = tmp_path / "marker"
    add_traps(venv_site(venv), marker)
    user_base = tmp_path / "userbase"
    user_site = user_base / "lib" / f"python{VERSION}" / "site-packages"
    user_site.mkdir(parents=True)

    env = resolve_environment(str(venv / "bin" / "python3"), environ={"PYTHONUSERBASE": str(user_base)})
    paths = [s.path for s in env.sites]
    base = sysconfig.get_path("purelib", vars={"base": sys.base_prefix, "platbase": sys.base_prefix})
    assert paths[0] == str(user_site)  # site.main() adds the user site first
    assert paths[1] == str(venv_site(venv))
    assert os.path.realpath(base) in [os.path.realpath(p) for p in paths[2:]]
    reasons = {s.path: s.reason for s in env.sites}
    assert "user site" in reasons[str(user_site)]
    assert all("include-system-site-packages" in reasons[p] for p in paths[2:])

    off = resolve_environment(str(venv), environ={"PYTHONUSERBASE": str(user_base), "PYTHONNOUSERSITE": "1"})
    assert str(user_site) not in [s.path for s in off.sites]
    assert any("PYTHONNOUSERSITE" in n for n in off.notes)

    rc, doc, _err = doctor("--python", str(venv / "bin" / "python"), env={"PYTHONNOUSERSITE": "1"})
    assert rc in (0, 1)  # whatever the base interpreter holds
    scanned = [n for n in doc["notes"] if n.startswith("scanned ")]
    assert scanned[0].startswith(f"scanned {venv_site(venv)}:")
    assert any("include-system-site-packages" in n for n in scanned[1:])
    assert not marker.exists()


@posix_only
def test_conda_environment_from_files_only(tmp_path: Path) -> None:
    conda = tmp_path / "envs" / "cu"
    marker = tmp_path / "marker"
    (conda / "conda-meta").mkdir(parents=True)
    (conda / "conda-meta" / "python-3.12.4-h5148396_1.json").write_text("{}")
    (conda / "conda-meta" / "python-dateutil-2.9.0-pyhd8ed1ab_0.json").write_text("{}")
    site = conda / "lib" / "python3.12" / "site-packages"
    add_distribution(site, "condacuda", "2.0")
    add_traps(site, marker)
    trap_interpreter(conda / "bin" / "python", marker)

    env = resolve_environment(str(conda / "bin" / "python"), environ={"PYTHONUSERBASE": str(tmp_path / "none")})
    assert (env.kind, env.version, env.prefix) == ("conda", "3.12", str(conda))
    assert [s.path for s in env.sites] == [str(site)]
    assert "conda" in env.sites[0].reason

    rc, doc, _err = doctor("--python", str(conda / "bin" / "python"), env={"PYTHONUSERBASE": str(tmp_path)})
    assert rc == 0
    assert [(t["name"], t["version"]) for t in doc["targets"]] == [("condacuda", "2.0")]
    assert not marker.exists()  # neither the "interpreter" nor the .pth ran


@posix_only
def test_installation_through_a_symlink_and_debian_dist_packages(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    prefix = tmp_path / "opt" / "py"
    trap_interpreter(prefix / "bin" / "python3.12", marker)
    (prefix / "lib" / "python3.12").mkdir(parents=True)
    (prefix / "lib" / "python3.12" / "os.py").write_text("")
    site = prefix / "lib" / "python3.12" / "site-packages"
    site.mkdir()
    elsewhere = tmp_path / "usr" / "local" / "bin"
    elsewhere.mkdir(parents=True)
    (elsewhere / "python3").symlink_to(prefix / "bin" / "python3.12")
    env = resolve_environment(str(elsewhere / "python3"), environ={"PYTHONNOUSERSITE": "1"})
    assert (env.kind, env.version, env.prefix) == ("installation", "3.12", str(prefix))
    assert [s.path for s in env.sites] == [str(site)]

    debian = tmp_path / "usr"
    trap_interpreter(debian / "bin" / "python3.11", marker)
    (debian / "lib" / "python3.11").mkdir(parents=True)
    (debian / "lib" / "python3" / "dist-packages").mkdir(parents=True)
    env = resolve_environment(str(debian / "bin" / "python3.11"), environ={"PYTHONNOUSERSITE": "1"})
    assert [s.path for s in env.sites] == [str(debian / "lib" / "python3" / "dist-packages")]
    assert not marker.exists()


def test_windows_layout_and_version_from_the_lib_directory(tmp_path: Path) -> None:
    win = tmp_path / "winvenv"
    (win / "Lib" / "site-packages").mkdir(parents=True)
    (win / "Scripts").mkdir()
    (win / "Scripts" / "python.exe").write_bytes(b"MZ")
    (win / "pyvenv.cfg").write_text("home = C:\\Python312\ninclude-system-site-packages = false\nversion = 3.12.4\n")
    env = resolve_environment(str(win / "Scripts" / "python.exe"), environ={})
    assert (env.kind, env.version) == ("venv", "3.12")
    assert [s.path for s in env.sites] == [str(win / "Lib" / "site-packages")]

    uv = tmp_path / "uvvenv"  # no version key: the one lib/pythonX.Y directory tells
    (uv / "lib" / "python3.13t" / "site-packages").mkdir(parents=True)
    (uv / "pyvenv.cfg").write_text("home = /opt/python/bin\ninclude-system-site-packages = false\n")
    env = resolve_environment(str(uv), environ={})
    assert env.version == "3.13"
    assert [s.path for s in env.sites] == [str(uv / "lib" / "python3.13t" / "site-packages")]


def test_shadowed_distributions_are_scanned_once(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    add_distribution(first, "fakecuda", "2.0")
    add_distribution(second, "FakeCUDA", "1.0")
    add_distribution(second, "other", "1.0")
    target = EnvironmentTarget([str(first), str(second)])
    jobs = list(target.iter_jobs())
    assert sorted((j.package, j.version) for j in jobs) == [("fakecuda", "2.0"), ("other", "1.0")]
    assert any("FakeCUDA 1.0" in n and "shadowed by fakecuda 2.0" in n for n in target.notes())


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda t: t / "missing" / "python", "no such file"),
        (lambda t: t / "notes.txt", "not a Python interpreter"),
        (lambda t: t, "not a Python environment"),
        (lambda t: t / "shims" / "python3", "cannot find the environment"),
    ],
)
def test_not_an_environment_is_a_usage_error(tmp_path: Path, make, message: str) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "notes.txt").write_text("x")
    trap_interpreter(tmp_path / "shims" / "python3", tmp_path / "marker")
    path = str(make(tmp_path))
    with pytest.raises(EnvironmentResolutionError, match=message):
        resolve_environment(path)
    rc, doc, err = doctor("--python", path)
    assert rc == 2
    assert doc == {}
    assert message in err
    assert not (tmp_path / "marker").exists()


def test_site_packages_directory_given_to_python_names_the_right_flag(tmp_path: Path) -> None:
    add_distribution(tmp_path, "fakecuda")
    with pytest.raises(EnvironmentResolutionError, match="use --site-packages"):
        resolve_environment(str(tmp_path))


def test_running_interpreter_sites_include_its_purelib() -> None:
    sites = [os.path.realpath(p) for p in site_packages_of()]
    assert os.path.realpath(sysconfig.get_paths()["purelib"]) in sites
    notes = EnvironmentTarget.current().notes()
    assert any("this interpreter's site-packages" in n for n in notes)
