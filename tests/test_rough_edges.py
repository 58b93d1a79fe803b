"""Issue 18, sections 2 and 3: what a new user hits first, end to end through the real command.

Exit codes when nothing was read, wheels in directories, unpinned requirements, unwritable outputs,
encodings, pipes and terminals (a real tmux pane where it is about a terminal), help consistency,
progress, the Action's install step, the wording of reports.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import jsonschema
import pytest

from audit_helpers import fixture, make_wheel, so
from terminal import have_tmux, run_in_terminal

ROOT = Path(__file__).parent.parent
BIN = Path(__file__).parent / "fixtures" / "bin"
CHECK_SCHEMA = json.loads((ROOT / "src/cudafit/schema/check.json").read_text())
needs_tmux = pytest.mark.skipif(not have_tmux(), reason="tmux is not installed")


def run(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    e = {**os.environ, "CUDAFIT_NO_CACHE": "1", **(env or {})}
    e.pop("COLUMNS", None) if env is None or "COLUMNS" not in env else None
    p = subprocess.run(
        [sys.executable, "-m", "cudafit", *args],
        capture_output=True,
        text=True,
        encoding=e.get("PYTHONIOENCODING", "utf-8"),
        check=False,
        env=e,
        cwd=cwd,
        timeout=timeout,
    )
    assert "Traceback" not in p.stderr, p.stderr
    assert "internal error" not in p.stderr, p.stderr
    return p


def any_wheel(directory: Path, name: str, version: str, members: dict[str, bytes]) -> Path:
    """A wheel pip installs anywhere (py3-none-any), for a local index."""
    built = make_wheel(directory, name, version, members)
    return built.rename(directory / f"{name.replace('-', '_')}-{version}-py3-none-any.whl")


def simple_index(root: Path, wheels: list[Path]) -> str:
    """A PEP 503 index on disk (file:// URL): one page per project listing its wheels."""
    projects: dict[str, list[Path]] = {}
    root.mkdir(parents=True, exist_ok=True)
    for w in wheels:
        projects.setdefault(w.name.split("-")[0].replace("_", "-").lower(), []).append(w)
    for project, files in projects.items():
        page = root / project
        page.mkdir(parents=True, exist_ok=True)
        links = "".join(f'<a href="{f.resolve().as_uri()}">{html.escape(f.name)}</a>\n' for f in files)
        (page / "index.html").write_text(f"<!doctype html><html><body>\n{links}</body></html>\n")
    (root / "index.html").write_text(
        "<html><body>" + "".join(f'<a href="{p}/">{p}</a>' for p in projects) + "</body></html>"
    )
    return root.resolve().as_uri()


# --- 2. exit codes when nothing was read ---------------------------------------------------------------


@pytest.mark.parametrize("gpu", [(), ("--gpu", "8.6")])
def test_check_exits_3_when_nothing_was_read(tmp_path: Path, gpu: tuple[str, ...]) -> None:
    (tmp_path / "fake.whl").write_text("not a wheel\n")
    real = make_wheel(tmp_path, "ext", "1.0", {"ext/_C.so": fixture("libmulti.so")})
    (tmp_path / "trunc.whl").write_bytes(real.read_bytes()[:300])
    index = simple_index(tmp_path / "simple", [])
    for target in (str(tmp_path / "missing" / "x.so"), str(tmp_path / "fake.whl"), str(tmp_path / "trunc.whl")):
        p = run("check", target, "--no-probe", *gpu)
        assert p.returncode == 3, (target, p.stdout, p.stderr)
        assert "unreadable" in p.stdout
    p = run("check", "no-such-project-xyz", "--index-url", index, "--no-probe", *gpu)
    assert p.returncode == 3, p.stdout + p.stderr
    assert "pip download failed" in p.stdout and "no-such-project-xyz" in p.stdout
    p = run("check", str(tmp_path / "fake.whl"), "--no-probe", "--json", *gpu)
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, CHECK_SCHEMA)
    assert p.returncode == 3 and doc["targets"][0]["unreadable"]
    # one readable target beside the unreadable one: judged, and the exit code is the verdict's
    p = run("check", str(real), str(tmp_path / "fake.whl"), "--no-probe", "--gpu", "8.6")
    assert p.returncode == 0 and "unreadable" in p.stdout


def test_doctor_site_packages_missing_exits_3(tmp_path: Path) -> None:
    p = run("doctor", "--site-packages", str(tmp_path / "nope"), "--no-probe")
    assert p.returncode == 3, p.stdout + p.stderr
    assert "no such directory" in p.stdout
    p = run("doctor", "--site-packages", str(tmp_path / "nope"), "--no-probe", "--gpu", "T4", "--json")
    assert p.returncode == 3
    assert json.loads(p.stdout)["targets"][0]["unreadable"][0]["error"] == "no such directory"
    (tmp_path / "empty").mkdir()  # an environment without CUDA packages is an answer, not a failure
    assert run("doctor", "--site-packages", str(tmp_path / "empty"), "--no-probe").returncode == 0


# --- 2. wheels in a directory ----------------------------------------------------------------------------


def test_check_and_scan_read_the_wheels_of_a_directory(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    dist.mkdir()
    make_wheel(dist, "goodext", "1.0", {"goodext/_C.so": fixture("libmulti.so")})
    make_wheel(dist, "narrowext", "2.0", {"narrowext/_C.so": so(("sm_80", "sm_90"))})
    p = run("check", str(dist), "--no-probe", "--gpu", "T4", "--json")
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, CHECK_SCHEMA)
    assert {(t["name"], t["version"], t["status"]) for t in doc["targets"]} == {
        ("goodext", "1.0", "native"),
        ("narrowext", "2.0", "fails"),
    }
    assert p.returncode == 1
    p = run("scan", str(dist), cwd=tmp_path)
    assert p.returncode == 0
    assert "goodext 1.0" in p.stdout and "narrowext 2.0" in p.stdout
    for extra in ((), ("--kernels",)):
        p = run("scan", str(dist), "--json", *extra)
        files = json.loads(p.stdout)["files"]
        assert sorted(f["package"] for f in files) == ["goodext", "narrowext"], extra
    # audit still counts each wheel once (the directory's loose files are a target of their own)
    p = run("audit", str(dist), "--require", "8.0", "--json", "--no-config")
    assert [t["spec"].rsplit("/", 1)[-1] for t in json.loads(p.stdout)["targets"]] == [
        "goodext-1.0-cp311-cp311-linux_x86_64.whl",
        "narrowext-2.0-cp311-cp311-linux_x86_64.whl",
    ]


# --- 2. an unpinned requirement judges what pip resolves now ---------------------------------------------


def test_unpinned_requirement_judges_only_what_pip_resolves(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    old = any_wheel(wheels, "ext", "1.0", {"ext/_C.so": so(("sm_80",))})  # fails on a T4
    new = any_wheel(wheels, "ext", "2.0", {"ext/_C.so": so(("sm_75", "sm_80"))})
    index = simple_index(tmp_path / "simple", [old, new])
    env = {"CUDAFIT_CACHE_DIR": str(tmp_path / "cache")}
    # an earlier run left ext 1.0 in the download folder of "ext" with this index
    p = run("check", "ext==1.0", "--index-url", index, "--no-probe", "--gpu", "T4", env=env)
    assert p.returncode == 1, p.stdout + p.stderr
    from cudafit.targets.pip import _slug

    folder = tmp_path / "cache" / "wheels" / _slug("ext" + " ".join(["--index-url", index]))
    folder.mkdir(parents=True)
    shutil.copy(old, folder / old.name)
    p = run("check", "ext", "--index-url", index, "--no-probe", "--gpu", "T4", "--json", env=env)
    doc = json.loads(p.stdout)
    assert [(t["name"], t["version"]) for t in doc["targets"]] == [("ext", "2.0")]
    assert p.returncode == 0, p.stdout
    assert any("pip resolved ext 2.0" in n for n in doc["notes"])
    p = run("check", "ext", "--index-url", index, "--no-probe", "--gpu", "T4", env=env)  # now cached: same answer
    assert p.returncode == 0 and "note: ext: pip resolved ext 2.0 (ext-2.0-py3-none-any.whl)" in p.stdout


# --- 2. unwritable outputs are usage errors, before the work ---------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "{lib}", "--no-probe", "--gpu", "8.6", "--html", "{bad}"],
        ["doctor", "--site-packages", "{tmp}", "--no-probe", "--html", "{bad}"],
        ["audit", "{lib}", "--require", "8.6", "--no-config", "-o", "{bad}", "--format", "json"],
        ["audit", "{lib}", "--require", "8.6", "--no-config", "--junit", "{bad}"],
        ["audit", "{lib}", "--require", "8.6", "--no-config", "--output", "{dir}"],
        ["check", "{lib}", "--no-probe", "--gpu", "8.6", "--html", "{dir}"],
        ["check", "{lib}", "--nodes-json", "{nodes}", "--html", "{bad}"],
    ],
)
def test_unwritable_output_is_a_usage_error_before_the_work(tmp_path: Path, argv: list[str]) -> None:
    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps({"items": []}))
    values = {
        "lib": str(BIN / "libmulti.so"),
        "bad": str(tmp_path / "no" / "such" / "dir" / "report.out"),
        "tmp": str(tmp_path),
        "dir": str(tmp_path),
        "nodes": str(nodes),
    }
    args = [a.format(**values) for a in argv]
    p = run(*args)
    assert p.returncode == 2, (args, p.stdout, p.stderr)
    assert "cannot write" in p.stderr
    assert p.stdout == ""  # nothing judged, nothing printed: the analysis never ran


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (a file every write to fails)")
def test_a_report_that_fails_to_write_during_the_run_never_passes() -> None:
    """The paths are checked before the work; a write that still fails (disk full) exits non-zero, one line."""
    lib = str(BIN / "libmulti.so")
    for argv in (
        ["check", lib, "--no-probe", "--gpu", "8.6", "--html", "/dev/full"],
        ["audit", lib, "--require", "8.6", "--no-config", "--junit", "/dev/full"],
        ["audit", lib, "--require", "8.6", "--no-config", "-o", "/dev/full", "--format", "sarif"],
        ["check", lib, "--nodes-json", str(NODES), "--html", "/dev/full"],
    ):
        p = run(*argv)
        assert p.returncode == 3, (argv, p.stdout, p.stderr)
        assert "cannot write /dev/full: No space left on device" in p.stderr


# --- 2. output that cannot be encoded, pipes, COLUMNS, | head --------------------------------------------

_UNICODE_LOG = (
    "RuntimeError: CUDA error: no kernel image is available for execution on the device \u2014 caf\u00e9 \u2265 8.6"
)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_unencodable_output_degrades_to_ascii(tmp_path: Path, encoding: str) -> None:
    for argv in (
        ["explain", _UNICODE_LOG, "--gpu", "6.1"],
        ["check", str(BIN / "libmulti.so"), "--nodes-json", str(_nodes_file(tmp_path))],
    ):
        p = run(*argv, env={"PYTHONIOENCODING": encoding})
        assert p.returncode in (0, 1, 3), (argv, p.stderr)
        assert p.stdout.strip()
        p.stdout.encode(encoding)  # everything that reached the stream is in its encoding
    p = run("explain", _UNICODE_LOG, "--gpu", "6.1", env={"PYTHONIOENCODING": "ascii"})
    assert "-- cafe >= 8.6" in p.stdout


NODES = Path(__file__).parent / "fakes" / "gfd_nodes.json"  # real GFD labels of 12 nodes


def _nodes_file(tmp_path: Path, *names: str) -> Path:
    """The GFD node list (only ``names`` when given): a fleet report whose text carries a middle dot."""
    doc = json.loads(NODES.read_text())
    if names:
        doc["items"] = [n for n in doc["items"] if n["metadata"]["name"] in names]
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(doc))
    return path


def test_piped_output_respects_columns_and_has_no_trailing_spaces(tmp_path: Path) -> None:
    shutil.copy(BIN / "libmulti.so", tmp_path / "libmulti.so")
    for columns in ("60", "100"):
        for argv in (
            ["check", "libmulti.so", "--no-probe", "--gpu", "RTX 3090", "--gpu", "GTX 1080 Ti"],
            ["explain", "CUDA error: no kernel image is available for execution on the device", "--gpu", "6.1"],
            ["check", "libmulti.so", "--nodes-json", str(NODES)],
        ):
            p = run(*argv, env={"COLUMNS": columns}, cwd=tmp_path)
            lines = p.stdout.splitlines()
            assert lines, argv
            assert max(len(line) for line in lines) <= int(columns), (argv, columns, p.stdout)
            assert not [line for line in lines if line != line.rstrip()], argv
    p = run("check", "libmulti.so", "--no-probe", "--gpu", "RTX 3090", cwd=tmp_path)  # no COLUMNS: 200 wide
    assert "native on CC" in p.stdout.splitlines()[0]
    assert not [line for line in p.stdout.splitlines() if line != line.rstrip()]


def test_head_keeps_the_exit_status(tmp_path: Path) -> None:
    lib = str(BIN / "libmulti.so")
    cmd = (
        f"set -o pipefail; {sys.executable} -m cudafit check {lib} --no-probe --gpu 'GTX 1080 Ti' --gpu 'RTX 3090'"
        " --gpu T4 --gpu A100 --gpu H100 --gpu B200 | head -n 1"
    )
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, check=False)
    assert p.returncode == 1, p.stderr  # fails on the 1080 Ti, whatever head did
    assert p.stderr == ""
    # JSON larger than a pipe's buffer: the write meets the closed pipe (before: exit 0 for a failing check)
    dirs = tmp_path / "dirs"
    for i in range(100):
        (dirs / f"d{i}").mkdir(parents=True)
        (dirs / f"d{i}" / "lib.so").write_bytes(fixture("libmulti.so"))
    cmd = f"set -o pipefail; {sys.executable} -m cudafit check {dirs} --no-probe --gpu 6.1 --json | head -c 10"
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, check=False)
    assert p.returncode == 1 and p.stderr == "", p.stderr
    cmd = f"set -o pipefail; {sys.executable} -m cudafit scan {dirs} --json | head -c 10"
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, check=False)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    (dirs / "broken.so").write_bytes(b"\x7fELF" + b"\0" * 10)
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, check=False)
    assert p.returncode == 1 and p.stderr == "", p.stderr  # scan: a file could not be read


@needs_tmux
def test_ascii_terminal_degrades(tmp_path: Path) -> None:
    r = run_in_terminal(
        [sys.executable, "-m", "cudafit", "explain", _UNICODE_LOG, "--gpu", "6.1"],
        tmp_path,
        env={"PYTHONIOENCODING": "ascii", "LC_ALL": "C"},
        width=90,
    )
    assert r.rc == 0, r.screen
    assert "-- cafe >= 8.6" in " ".join(r.screen.split())
    assert "internal error" not in r.screen and "Traceback" not in r.screen


@needs_tmux
def test_terminal_width_is_the_terminals(tmp_path: Path) -> None:
    r = run_in_terminal(
        [sys.executable, "-m", "cudafit", "explain", _UNICODE_LOG.split(" \u2014", maxsplit=1)[0], "--gpu", "6.1"],
        tmp_path,
        width=70,
    )
    assert r.rc == 0
    assert "no kernel image" in r.screen
    # every line the command drew fits the pane (tmux joins wrapped lines with -J: none were wrapped)
    assert max(len(line) for line in r.screen.splitlines()) <= 70


# --- 2. help consistency --------------------------------------------------------------------------------


def test_check_help_documents_target_forms() -> None:
    text = " ".join(run("check", "--help").stdout.split())
    for form in ("wheel", "directory", "requirement", ".pt2", "site-packages", "image", "file"):
        assert form in text, form


def test_gpu_flags_are_explained() -> None:
    verify = " ".join(run("verify", "--help").stdout.split())
    assert "--gpu INDEX" in verify and "CUDA device" in verify and "not a name" in verify
    check = " ".join(run("check", "--help").stdout.split())
    assert "--gpu NAME" in check


def test_fleet_option_names_agree() -> None:
    fleet_opts = set(re.findall(r"--[a-z][a-z-]+", run("fleet", "k8s", "--help").stdout))
    check_opts = set(re.findall(r"--[a-z][a-z-]+", run("check", "--help").stdout))
    for opt in ("--kube-context", "--kubeconfig", "--selector", "--nodes-json", "--fleet-timeout"):
        assert opt in check_opts and opt in fleet_opts, opt
    ray_opts = set(re.findall(r"--[a-z][a-z-]+", run("fleet", "ray", "--help").stdout))
    for opt in ("--ray-address", "--scan-env", "--fleet-timeout"):
        assert opt in ray_opts and opt in check_opts, opt
    # the former names still work
    p = run("fleet", "k8s", "--nodes-json", str(NODES), "--context", "x", "--timeout", "3", "--json")
    assert p.returncode == 1 and json.loads(p.stdout)["schema"] == "cudafit.fleet/1"


@pytest.mark.parametrize("command", ["check", "doctor", "explain"])
def test_bad_driver_is_a_usage_error(command: str) -> None:
    argv = [command, "--driver", "abc"]
    if command == "check":
        argv.append(str(BIN / "libmulti.so"))
    if command == "explain":
        argv.append("no kernel image")
    p = run(*argv, "--no-probe") if command != "explain" else run(*argv)
    assert p.returncode == 2, p.stderr
    assert "not a driver version: 'abc'" in p.stderr


def test_audit_refuses_a_pyproject_that_does_not_parse(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.cudafit.audit\nrequire = 8.0\n")
    p = run("audit", str(BIN / "libmulti.so"), cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "pyproject.toml" in p.stderr and "does not parse" in p.stderr
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')  # no [tool.cudafit.audit]: no policy
    p = run("audit", str(BIN / "libmulti.so"), cwd=tmp_path)
    assert p.returncode == 2 and "nothing to require" in p.stderr


# --- 3. progress (a real terminal), and never on a pipe ----------------------------------------------------


@needs_tmux
def test_audit_of_many_wheels_shows_progress_on_a_terminal_only(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    dist.mkdir()
    for i in range(40):
        make_wheel(dist, f"ext{i}", "1.0", {f"ext{i}/_C.so": fixture("libmulti.so")})
    out = tmp_path / "report.txt"
    argv = [sys.executable, "-m", "cudafit", "audit", str(dist), "--require", "8.0", "--no-config"]
    r = run_in_terminal(argv, tmp_path, stdout_to=out, env={"CUDAFIT_NO_CACHE": "1"})
    assert r.rc == 0, r.screen
    assert re.search(r"audit: \d+ of 40 targets", r.recorded), r.recorded[-2000:]
    assert "PASS ext0 1.0" in out.read_text()
    assert "audit:" not in r.screen  # transient: erased when the work ends
    p = run("audit", str(dist), "--require", "8.0", "--no-config")  # a pipe: no progress at all
    assert p.stderr == ""


@needs_tmux
def test_pip_download_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    big = os.urandom(6_000_000)  # stored, not deflated: a download that takes a moment
    w = any_wheel(wheels, "bigext", "1.0", {"bigext/_C.so": fixture("libmulti.so")})
    with zipfile.ZipFile(w, "a", zipfile.ZIP_STORED) as zf:
        zf.writestr("bigext/data.bin", big)
    index = simple_index(tmp_path / "simple", [w])
    argv = [sys.executable, "-m", "cudafit", "check", "bigext", "--index-url", index, "--no-probe", "--gpu", "T4"]
    r = run_in_terminal(argv, tmp_path, stdout_to=tmp_path / "out.txt", env={"CUDAFIT_CACHE_DIR": str(tmp_path / "c")})
    assert r.rc == 0, r.recorded[-2000:]
    assert "pip download bigext" in r.recorded
    assert "bigext 1.0" in (tmp_path / "out.txt").read_text()


@needs_tmux
def test_match_torch_download_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    from audit_helpers import TORCH_VERSION_PY, fake_torch_lib

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    torch = any_wheel(
        wheels,
        "torch",
        "2.14.1",
        {"torch/lib/libtorch_cuda.so": fake_torch_lib(), "torch/version.py": TORCH_VERSION_PY.encode()},
    )
    with zipfile.ZipFile(torch, "a", zipfile.ZIP_STORED) as zf:
        zf.writestr("torch/lib/padding.bin", os.urandom(4_000_000))
    index = simple_index(tmp_path / "simple", [torch])
    ext = make_wheel(
        tmp_path, "ext", "1.0", {"ext/_C.so": so(("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"))}
    )
    argv = [sys.executable, "-m", "cudafit", "audit", str(ext), "--match-torch", "2.14.1", "--torch-index-url", index]
    argv.append("--no-config")
    r = run_in_terminal(argv, tmp_path, stdout_to=tmp_path / "out.txt", env={"CUDAFIT_CACHE_DIR": str(tmp_path / "c")})
    assert r.rc == 0, (tmp_path / "out.txt").read_text() + r.recorded[-2000:]
    assert "pip download torch==2.14.1" in r.recorded
    assert "torch 2.14.1" in (tmp_path / "out.txt").read_text()


@needs_tmux
def test_explain_path_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(300):
        (tree / f"lib{i}.so").write_bytes(fixture("libmulti.so"))
    log = "RuntimeError: GemmaRMSNorm failed with error code no kernel image is available for execution on the device"
    argv = [sys.executable, "-m", "cudafit", "explain", log, "--path", str(tree), "--gpu", "6.1"]
    r = run_in_terminal(argv, tmp_path, stdout_to=tmp_path / "out.txt", env={"CUDAFIT_NO_CACHE": "1"})
    assert r.rc == 0, r.recorded[-2000:]
    assert "explain: scanning" in r.recorded
    assert "no kernel image" in (tmp_path / "out.txt").read_text()
    assert "explain: scanning" not in r.screen


def test_progress_is_silent_off_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    from cudafit.progress import progress, with_progress

    with progress("work") as p:
        p.update("detail", force=True)
        assert not p.shown
    assert list(with_progress(range(3))) == [0, 1, 2]
    assert capsys.readouterr().err == ""


# --- 3. the Action installs from its own checkout -----------------------------------------------------------


def test_action_install_step_installs_from_the_actions_checkout(tmp_path: Path) -> None:
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text())
    install = action["runs"]["steps"][0]
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}

    # The action's checkout, as the runner makes it (a copy: building in place would write build/ here).
    checkout = tmp_path / "action"
    checkout.mkdir()
    for name in ("pyproject.toml", "README.md", "action.yml"):
        shutil.copy(ROOT / name, checkout / name)
    shutil.copytree(ROOT / "src", checkout / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))

    def expand(text: str) -> str:
        text = re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: inputs[m.group(1)], text)
        return text.replace("${{ github.action_path }}", str(checkout))

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = {**os.environ, "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    env.update({k: expand(str(v)) for k, v in install.get("env", {}).items()})
    p = subprocess.run(
        ["bash", "-c", expand(install["run"])], env=env, cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert p.returncode == 0, p.stdout + p.stderr
    probe = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import cudafit, sys; print(cudafit.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert str(venv) in probe.stdout, probe.stdout  # installed into that interpreter, from the checkout
    version = subprocess.run(
        [str(venv / "bin" / "cudafit"), "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert version.startswith("cudafit ")


# --- 3. gpus does not wait for an nvidia-smi that cannot answer -------------------------------------------


def test_gpus_does_not_wait_for_nvidia_smi_without_nvml(tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    smi = fake / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\necho called >> {tmp_path / 'smi-called'}\nsleep 30\n")
    smi.chmod(0o755)
    env = {"PATH": f"{fake}:{os.environ['PATH']}", "LD_LIBRARY_PATH": str(tmp_path)}
    from cudafit.probe.backends import probe_nvml

    if "libnvidia-ml.so (NVML) not found" not in " ".join(probe_nvml()[3]):
        pytest.skip("this machine has NVML's library")
    start = time.monotonic()
    p = run("gpus", env=env)
    elapsed = time.monotonic() - start
    assert p.returncode == 0
    assert elapsed < 4, elapsed
    assert not (tmp_path / "smi-called").exists()
    assert "No NVIDIA driver found: libnvidia-ml.so (NVML) not found" in p.stdout
    assert "no NVIDIA driver: no NVIDIA driver" not in p.stdout.replace("found: ", "found: no NVIDIA driver: ")


def test_nvidia_smi_still_asked_when_nvml_loads_but_fails() -> None:
    from cudafit.probe import probe_machine

    class Nvml:
        class NVMLError_DriverNotLoaded(Exception):
            pass

        def nvmlInit(self) -> None:
            raise self.NVMLError_DriverNotLoaded

    calls: list[list[str]] = []

    def runner(cmd: list[str], timeout: float) -> tuple[int, str, str]:
        calls.append(list(cmd))
        return 127, "", "not found"

    probe_machine(nvml=Nvml(), smi_runner=runner, env={})
    assert calls and calls[0][0] == "nvidia-smi"


# --- 3. wording --------------------------------------------------------------------------------------------


def test_gpu_given_as_a_compute_capability_is_named_once() -> None:
    lib = str(BIN / "libmulti.so")
    p = run("check", lib, "--no-probe", "--gpu", "8.6", "--gpu", "6.1")
    assert "8.6 8.6" not in p.stdout and "6.1 (6.1)" not in p.stdout
    assert "CC 8.6" in p.stdout.splitlines()[0]
    assert "  compute capability 6.1\n" in p.stdout
    md = run("check", lib, "--no-probe", "--gpu", "8.6", "--markdown").stdout
    assert "| compute capability 8.6 |" in md
    g = run("gpus", "8.6", "RTX 3090").stdout
    assert "8.6: compute capability 8.6, Ampere" in g and "RTX 3090: GeForce RTX 3090, compute capability 8.6" in g


def test_gpus_inventory_without_cuda_version_says_nothing_of_it(tmp_path: Path) -> None:
    inv = {
        "schema": "cudafit.gpus/1",
        "mode": "machine",
        "status": "ok",
        "source": "nvidia-smi",
        "driver_version": "570.124.06",
        "cuda_driver_version": None,
        "problems": [],
        "ordering": {"estimated": False, "note": None, "CUDA_VISIBLE_DEVICES": None, "CUDA_DEVICE_ORDER": None},
        "toolchains": [],
        "gpus": [
            {
                "index": 0,
                "cuda_index": 0,
                "name": "Tesla T4",
                "compute_capability": "7.5",
                "uuid": "GPU-1",
                "pci_bus_id": "00000000:01:00.0",
                "memory_mib": 15360,
                "mig_mode": None,
                "mig_devices": [],
                "source": "nvidia-smi",
                "notes": [],
                "limits": {},
            }
        ],
        "errors": [],
    }
    path = tmp_path / "inv.json"
    path.write_text(json.dumps(inv))
    p = run("gpus", "--inventory", str(path))
    assert p.returncode == 0, p.stderr
    assert "CUDA None" not in p.stdout and "driver 570.124.06, via " in p.stdout


def test_fleet_wording(tmp_path: Path) -> None:
    nodes = _nodes_file(tmp_path, "gpu-t4-1")
    narrow = tmp_path / "narrow.so"
    narrow.write_bytes(so(("sm_80",)))
    for target in (str(BIN / "libmulti.so"), str(narrow)):
        p = run("check", target, "--nodes-json", str(nodes))
        text = p.stdout
        assert "1 nodes" not in text and "1 classes" not in text, text
        assert ": 1 node, 1 judged in 1 class;" in text, text
        assert "fails fails" not in text and "native runs natively" not in text
    assert "fails on: c1 T4 (7.5)" in p.stdout and "(1 node)" in p.stdout
    md = run("check", str(narrow), "--nodes-json", str(nodes), "--markdown").stdout
    assert "- **fails** on: c1" in md and "1 nodes" not in md


def test_html_report_has_legend_host_driver_date_and_honest_tooltips(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    p = run(
        "check",
        str(BIN / "libmulti.so"),
        "--no-probe",
        "--gpu",
        "8.6",
        "--gpu",
        "6.1",
        "--driver",
        "580.65.06",  # libmulti.so is built by CUDA 13.0: its runtime needs the 580 branch
        "--html",
        str(out),
    )
    assert p.returncode == 1
    page = out.read_text()
    assert "legend" in page.lower()
    for status in ("native", "jit", "partial", "fails", "none"):
        assert f">{status}<" in page
    assert "580.65.06" in page
    assert re.search(r"\d{4}-\d{2}-\d{2}", page)
    import socket

    assert html.escape(socket.gethostname()) in page
    titles = re.findall(r'<td style="background:#2e7d32[^"]*"[^>]*title="([^"]*)"', page)
    assert titles and not any("no CUDA device code" in t for t in titles)
    fleet = tmp_path / "fleet.html"
    p = run("check", str(BIN / "libmulti.so"), "--nodes-json", str(NODES), "--html", str(fleet))
    page = fleet.read_text()
    assert "Legend" in page and "host " in page and re.search(r"date \d{4}-\d{2}-\d{2}", page)
    titles = re.findall(r'<td style="background:#2e7d32[^"]*"[^>]*title="([^"]*)"', page)
    assert titles and not any("no CUDA device code" in t for t in titles)


def test_paths_are_shown_inside_site_packages(tmp_path: Path) -> None:
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    pkg = site / "narrowpkg"
    pkg.mkdir(parents=True)
    (pkg / "_C.so").write_bytes(so(("sm_80", "sm_90"), ("sm_80", "sm_90")))
    (pkg / "_D.so").write_bytes(so(("sm_75", "sm_80", "sm_90")))
    info = site / "narrowpkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: narrowpkg\nVersion: 1.0\n\n")
    (info / "RECORD").write_text(
        "narrowpkg/_C.so,,\nnarrowpkg/_D.so,,\nnarrowpkg/broken.so,,\nnarrowpkg-1.0.dist-info/RECORD,,\n"
    )
    (pkg / "broken.so").write_bytes(b"\x7fELF" + b"\0" * 20)
    p = run("doctor", "--site-packages", str(site), "--no-probe", "--gpu", "T4")
    assert "narrowpkg" in p.stdout
    assert "unreadable narrowpkg/broken.so" in p.stdout
    assert str(tmp_path) not in p.stdout.replace(f"note: scanned {site}", ""), p.stdout


# --- the README's exit-code table, row by row ------------------------------------------------------------


def test_readme_exit_code_table(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("### Exit codes") : readme.index("### Pipes, terminals and long work")]
    for code in "0123":
        assert f"| {code} |" in table
    lib = str(BIN / "libmulti.so")
    (tmp_path / "fake.whl").write_text("text\n")
    fake = str(tmp_path / "fake.whl")
    index = simple_index(tmp_path / "simple", [])
    rows = [
        (0, ["scan", str(BIN)]),
        (0, ["gpus", "8.6"]),
        (0, ["explain", "hello"]),
        (0, ["check", lib, "--no-probe"]),
        (1, ["check", lib, "--no-probe", "--gpu", "6.1"]),
        (1, ["scan", fake]),
        (1, ["gpus", "no-such-gpu-xyz"]),
        (1, ["plan", "--gpu", "6.1", "--cuda", "13.0"]),
        (1, ["audit", str(_narrow(tmp_path)), "--require", "7.5", "--no-config"]),
        (2, ["check", lib, "--gpu", "RTX 30"]),
        (2, ["check", lib, "--driver", "abc"]),
        (2, ["check", lib, "--html", str(tmp_path / "no" / "r.html")]),
        (2, ["audit", lib, "--require", "zz", "--no-config"]),
        (3, ["check", str(tmp_path / "missing.so")]),
        (3, ["check", fake, "--gpu", "8.6"]),
        (3, ["doctor", "--site-packages", str(tmp_path / "nope")]),
        (3, ["audit", fake, "--require", "8.0", "--no-config"]),
        (3, ["audit", lib, "--require", "8.0", "--match-torch", "0.0.1", "--torch-index-url", index, "--no-config"]),
    ]
    env = {"CUDAFIT_CACHE_DIR": str(tmp_path / "cache")}
    got = [(run(*argv, "--no-probe", env=env) if argv[0] in ("doctor",) else run(*argv, env=env)) for _, argv in rows]
    assert [p.returncode for p in got] == [code for code, _ in rows], [
        (argv, p.returncode, p.stderr[-300:]) for (code, argv), p in zip(rows, got, strict=True) if p.returncode != code
    ]


def _narrow(tmp_path: Path) -> Path:
    path = tmp_path / "narrow.so"
    path.write_bytes(so(("sm_80",)))
    return path
