"""Behaviour snapshot of cudafit: run a fixed set of commands, write their outputs, compare two snapshots.

Why: issue 19 redesigns the verdict spine with *no behaviour change*.  This script pins what "behaviour" means:
a fixed, documented list of cudafit commands on committed fixtures and recorded shapes, each run as a
subprocess of ``sys.executable -m cudafit`` (so it measures whatever cudafit the active venv imports), with
stdout (pretty-printed JSON, keys sorted; or text lines), stderr and the exit code written to one file per
command.  ``--compare A B`` prints every difference (command, JSON path, both values) and exits 1 when any.

Usage (run from the root of the checkout to measure, with that checkout's venv active):

    python scripts/snapshot.py --out /tmp/snap            # the default set (160 commands)
    python scripts/snapshot.py --out /tmp/snap --real     # + the real wheels in ~/.cache/cudafit-realwheels
    python scripts/snapshot.py --list                     # the command list, nothing run
    python scripts/snapshot.py --compare /tmp/snapA /tmp/snapB

``--root DIR`` measures another checkout's fixtures (default: the current directory); the cudafit that runs
is always the one ``sys.executable`` imports.

The commands (``--list`` prints them in full):
- ``check --json --no-probe`` on every binary in tests/fixtures/bin with seven GPUs (6.1 to 12.0), and on
  the inputs built from them at run time (a wheel, a directory of loose binaries, a docker-save image, a
  CUDA .pt2); with ``--driver`` (old drivers: PTX too new, CUDA 13 floor), ``--kernels``, ``--embedded``,
  a declared ``--inventory`` file, and text / Markdown / HTML renderings (the renderers are refactored too);
- ``doctor --json --no-probe --site-packages`` on a built environment (declared GPUs, a driver, an
  inventory file written by ``gpus --json`` under the FAKE NVML of tests/fakes/nvml_hosts.json);
- ``scan --json`` (with and without ``--kernels``/``--all``);
- ``audit --json`` (and SARIF, JUnit) on built wheels with several ``--require`` specs and ``--match-torch`` on a
  built torch directory;
- ``explain --json`` on 16 corpus rows of tests/fixtures/explain_corpus/corpus.jsonl (one or two per
  label, chosen by repo and issue number, not all), as message and as ``--file`` log, some with
  ``--gpu``/``--driver``/``--path``; ``explain --catalogue --json``;
- ``plan --json`` (several GPU sets and CUDA versions, ``--no-ptx``, ``--fleet k8s --nodes-json``);
- ``gpus --json`` (names, and the FAKE NVML hosts);
- ``fleet k8s --nodes-json`` on tests/fakes/gfd_nodes.json and ``fleet file`` on a fleet file assembled
  from the FAKE NVML hosts; ``check``/``doctor``/``plan --fleet`` on both (no Ray/k8s cluster is used);
- ``verify --json`` in replay mode (CUDAFIT_VERIFY_REPLAY=tests/fakes/verify_driver_fake*.json: the real
  worker process answers from the FAKE driver; no GPU);
- the recorded library shapes (tests/fixtures/libraries/*.json.gz): the ``cudafit.check/1`` document
  ``check``/``doctor`` would print, built by tests/test_issue21_packages.py's ``document()`` (the replay the
  tests use; it moves with the code it calls) on ten GPUs, and with a 570 driver;
- ``find --json`` (and text) against a local package index on 127.0.0.1 (tests/find_index.py's server,
  serving wheels of project ``demo`` built here from the fixtures: a pre-release, a yanked release, a
  PTX-only build, an old-arch build), for several GPUs and drivers, a specifier and a missing project;
- with ``--real``: ``check --json`` of each real wheel in ~/.cache/cudafit-realwheels (five GPUs).

Inputs: tests/fixtures/bin and tests/fakes are copied into a scratch directory, the built inputs are written
there, and every command runs in it naming its inputs by relative paths (``bin/libmulti.so``): text output
cuts long paths to the terminal's width, so an absolute path under a checkout root of another length would
change the layout of the same answer.

Environment of every command: a fresh empty CUDAFIT_CACHE_DIR per command (no cache hits carried over),
CUDAFIT_OFFLINE=1 (fix lines never ask PyPI), CUDAFIT_FAKE_NVML unset unless the command sets it,
COLUMNS=120 and NO_COLOR=1 for text output; no GPU, no network.

Normalised fields (what legitimately varies between runs and checkouts; everything else is compared):
- absolute paths: the checkout root -> ``<ROOT>``, the run's scratch directory (built inputs, fleet files)
  -> ``<WORK>``, the per-command cache directory -> ``<CACHE>``, the venv prefix (``sys.prefix``) ->
  ``<VENV>``, the home directory -> ``<HOME>``: the base and the refactored checkout live in different
  worktrees and venvs, and the scratch directory is a new temporary directory each run;
- ``cudafit_version`` (every schema) -> ``<VERSION>``, and the ``cudafit X.Y.Z`` / SARIF ``"version"`` of
  cudafit itself in text: a version bump is not a behaviour change;
- timings: ``seconds``, ``jit_ms`` (verify), ``elapsed*``/``*_seconds``/``wall_s`` keys holding numbers
  -> ``<TIME>``; and ``N.N s``/``N ms`` durations in text lines: wall-clock;
- report files (``--html``, ``--junit``; kept under "files"): the HTML context table's host name ->
  ``<HOST>`` and its ``YYYY-MM-DD HH:MM UTC`` stamp -> ``<DATE>`` (where and when the report was made);
- the local index's ``http://127.0.0.1:PORT`` (a free port each run) -> ``<INDEX>``;
- cache state: ``cached`` booleans -> ``<CACHED>`` (hit or miss depends on what ran before, not on what
  was decided; each command has a fresh cache anyway).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SNAPSHOT_FORMAT = "cudafit-snapshot/1"
REALWHEELS = Path.home() / ".cache" / "cudafit-realwheels"

#: Seven GPUs from Pascal to Blackwell: every status and role shows up on some fixture.
GPUS7 = ("GTX 1080 Ti", "T4", "A100", "RTX 3090", "H100", "B200", "RTX 5090")
#: The ten GPUs of docs/rules.md's "Real libraries" table.
GPUS10 = ("GTX 1080 Ti", "V100", "T4", "A100", "RTX 3090", "L4", "H100", "B200", "B300", "RTX 5090")

#: explain corpus rows: (repo, issue number) -> how the text is given.  One or two per label.
EXPLAIN_ROWS: tuple[tuple[str, int, str, tuple[str, ...]], ...] = (
    ("ggml-org/llama.cpp", 6529, "text", ("--gpu", "RTX 3090")),
    ("ggml-org/llama.cpp", 15593, "file", ()),
    ("facebookresearch/xformers", 1251, "text", ("--gpu", "T4")),
    ("Hellod035/LeggedLab", 26, "file", ("--gpu", "RTX 5090")),
    ("pytorch/pytorch", 150733, "text", ()),
    ("triton-lang/triton", 8539, "file", ("--gpu", "RTX 5090")),
    ("pytorch/pytorch", 1557, "file", ()),
    ("daerduoCarey/PyTorchEMD", 11, "file", ()),
    ("NVIDIA/gvdb-voxels", 120, "file", ("--driver", "470.57.02")),
    ("NVIDIA/nvidia-docker", 414, "text", ()),
    ("deepspeedai/DeepSpeed", 3223, "text", ()),
    ("Dao-AILab/flash-attention", 1832, "file", ()),
    ("vllm-project/vllm", 52300, "text", ("--gpu", "V100")),
    ("triton-lang/triton", 8182, "text", ("--gpu", "GTX 1080 Ti")),
    ("SamLynnEvans/Transformer", 27, "file", ()),
    ("GuigsEvt/dgx_spark_config", 5, "text", ("--gpu", "GB10")),
)


@dataclass(frozen=True)
class Command:
    """One snapshot entry: a cudafit command line (or a library-shape replay) and how to read its stdout."""

    name: str
    args: tuple[str, ...]
    fmt: str = "json"  # json | text
    env: tuple[tuple[str, str], ...] = ()
    kind: str = "cli"  # cli | shape
    files: tuple[str, ...] = ()  # report files the command writes (relative to the scratch directory)

    def describe(self) -> str:
        prefix = " ".join(f"{k}={v}" for k, v in self.env)
        what = "cudafit" if self.kind == "cli" else "library-shape"
        return " ".join(x for x in (prefix, what, " ".join(_quote(a) for a in self.args)) if x)


def _quote(a: str) -> str:
    return f"'{a}'" if (not a or any(c in a for c in " ;()|*")) else a


def _gpu_args(gpus: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(x for g in gpus for x in ("--gpu", g))


# ----------------------------------------------------------------------------------------------- inputs


@dataclass
class Inputs:
    """Paths of the checkout's fixtures and of the inputs built from them in the scratch directory."""

    root: Path
    work: Path
    bins: list[str] = field(default_factory=list)
    index: str = "<INDEX>"  # the local package index's base URL while it serves (find)

    @property
    def bin(self) -> Path:
        return self.root / "tests" / "fixtures" / "bin"

    @property
    def fakes(self) -> Path:
        return self.root / "tests" / "fakes"


def _wheel_bytes(
    name: str, version: str, members: dict[str, bytes], *, tag: str = "cp311-cp311-linux_x86_64", requires: str = ""
) -> bytes:
    """A PEP 427 wheel holding ``members`` (fixed timestamps: the bytes are the same every run)."""
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    files = {
        **members,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{requires}\n".encode(),
        f"{info}/WHEEL": f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}\n".encode(),
    }
    files[f"{info}/RECORD"] = ("".join(f"{m},,\n" for m in files) + f"{info}/RECORD,,\n").encode()
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, data in files.items():
            zf.writestr(zipfile.ZipInfo(member, (2020, 1, 1, 0, 0, 0)), data)
    return raw.getvalue()


def _tar(files: dict[str, bytes], mode: str = "w") -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode=mode) as tf:  # type: ignore[call-overload]
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755 if name.endswith("tool") else 0o644
            info.mtime = 0
            tf.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def _image(path: Path, bin_dir: Path) -> Path:
    """A ``docker save`` tarball: two layers, the second removing a file (whiteout) and replacing another."""
    site = "usr/local/lib/python3.11/site-packages/"
    multi = (bin_dir / "libmulti.so").read_bytes()
    ptx = (bin_dir / "libptxonly.so").read_bytes()
    base = gzip.compress(
        _tar({site + "pkg/_C.so": multi, site + "pkg/old.so": ptx, "opt/app/bin/tool": (bin_dir / "app").read_bytes()}),
        mtime=0,
    )
    meta = b"Metadata-Version: 2.1\nName: pkg\nVersion: 2.0\n\n"
    top = _tar(
        {
            site + "pkg-2.0.dist-info/METADATA": meta,
            site + "pkg-2.0.dist-info/RECORD": b"pkg/_C.so,,\npkg/old.so,,\n",
            site + "pkg/.wh.old.so": b"",
            site + "pkg/_C.so": (bin_dir / "libarch_a.so").read_bytes(),
        }
    )
    manifest = json.dumps([{"Config": "config.json", "RepoTags": ["x:1"], "Layers": ["l0/layer.tar", "l1/layer.tar"]}])
    path.write_bytes(_tar({"l0/layer.tar": base, "l1/layer.tar": top, "manifest.json": manifest.encode()}))
    return path


def _pt2(path: Path, bin_dir: Path) -> Path:
    """The layout AOTInductor writes for a CUDA model (sm_90), assembled from the nvcc-built fixtures."""
    root = "model/data/aotinductor/model/"
    meta = {"AOTI_DEVICE_KEY": "cuda", "AOTI_COMPUTE_CAPABILITY": "90", "AOTI_PLATFORM": "linux"}
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in (
            ("model/archive_format", b"pt2"),
            (root + "cabc.wrapper_metadata.json", json.dumps(meta).encode()),
            (root + "cabc.wrapper.so", (bin_dir / "libbounds.so").read_bytes()),
            (root + "kernel0.cubin", (bin_dir / "k_sm90a.cubin").read_bytes()),
        ):
            zf.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data)
    return path


def _site(root: Path, bin_dir: Path) -> Path:
    """A site-packages directory: two distributions with device code (one also a fake torch), one with none."""
    site = root / "lib" / "python3.11" / "site-packages"
    dists = {
        ("torch", "2.14.1+cu130"): {
            "torch/lib/libtorch_cuda.so": "libmulti.so",
            "torch/lib/libtorch_cuda_linalg.so": "libold.so",
        },
        ("mypkg", "1.0"): {
            "mypkg/_C.so": "libroles.so",
            "mypkg/_ptx.so": "libptxonly.so",
            "mypkg/k.cubin": "k_sm90a.cubin",
        },
        ("loaded", "0.1"): {"loaded/_C.so": "libloaded.so", "loaded/a.fatbin": "k.fatbin"},
        ("plainpy", "3.0"): {},
    }
    for (name, version), members in dists.items():
        info = site / f"{name}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n")
        (info / "RECORD").write_text("".join(f"{m},,\n" for m in members))
        for member, fixture in members.items():
            (site / member).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(bin_dir / fixture, site / member)
    (site / "plainpy").mkdir()
    (site / "plainpy" / "__init__.py").write_text("")
    (site / "torch" / "version.py").write_text("__version__ = '2.14.1+cu130'\ndebug = False\ncuda = '13.0'\n")
    (site / "torch" / "__init__.py").write_text("")
    return site


#: The wheels built for the snapshot: member -> (fixture, bytes kept; None: all).  ``broken`` has a truncated
#: library (unreadable: the rest is still judged).
WHEELS: dict[tuple[str, str], dict[str, tuple[str | None, int | None]]] = {
    ("pkg", "1.0"): {
        "pkg/_C.so": ("libmulti.so", None),
        "pkg/_old.so": ("libold.so", None),
        "pkg/_roles.so": ("libroles.so", None),
        "pkg/__init__.py": (None, None),
    },
    ("narrow", "2.0"): {
        "narrow/_C.so": ("libarch_a.so", None),
        "narrow/_f.so": ("libfamily_f.so", None),
        "narrow/_p.so": ("libptxonly.so", None),
    },
    ("broken", "0.1"): {"broken/_C.so": ("libmulti.so", 4000), "broken/_ok.so": ("libplain.so", None)},
}


def build_inputs(inp: Inputs) -> None:
    """Write the built inputs into the scratch directory (deterministic bytes: fixed timestamps)."""
    b = inp.bin
    inp.bins = sorted(p.name for p in b.iterdir() if p.is_file())
    w = inp.work
    # the fixtures are copied into the scratch directory and named by relative paths: text output truncates
    # long paths to the terminal's width, so a checkout root of another length would change the layout
    shutil.copytree(b, w / "bin")
    shutil.copytree(inp.fakes, w / "fakes")
    (w / "wheels").mkdir()
    for (name, version), members in WHEELS.items():
        files = {m: (b / fx).read_bytes()[:cut] if fx else b"" for m, (fx, cut) in members.items()}
        (w / "wheels" / f"{name}-{version}-cp311-cp311-linux_x86_64.whl").write_bytes(
            _wheel_bytes(name, version, files)
        )
    (w / "loose").mkdir()
    for name in ("libmulti.so", "libptxonly.so", "k_sm90a.cubin", "k.fatbin", "libstatic.a", "k_rdc.o"):
        shutil.copyfile(b / name, w / "loose" / name)
    (w / "loose" / "notes.txt").write_text("not a binary")
    (w / "cubins").mkdir()
    shutil.copyfile(b / "k_sm90a.cubin", w / "cubins" / "a.cubin")
    shutil.copyfile(b / "k.fatbin", w / "cubins" / "b.fatbin")
    _image(w / "image.tar", b)
    _pt2(w / "model.pt2", b)
    _site(w / "env", b)
    (w / "garbage.so").write_bytes(b"\x7fELF" + b"\x00" * 60)


def _gpus_doc(inp: Inputs, host: str, node: str | None) -> dict[str, Any]:
    """What ``cudafit gpus --json`` prints on a machine whose NVML is the recorded FAKE host."""
    env = {**_base_env(inp.work / "cache-setup"), "CUDAFIT_FAKE_NVML": f"{inp.fakes / 'nvml_hosts.json'}#{host}"}
    p = subprocess.run(
        [sys.executable, "-m", "cudafit", "gpus", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=inp.root,
        check=False,
        timeout=120,
    )
    doc: dict[str, Any] = json.loads(p.stdout)
    return {**doc, "node": node} if node else doc


#: project ``demo`` on the local index: (version, fixture, yanked); 3.0rc1 is a pre-release.
FIND_WHEELS = (
    ("3.0rc1", "libarch_a.so", False),
    ("2.1", "libmulti.so", True),
    ("2.0", "libptxonly.so", False),
    ("1.5", "libold.so", False),
    ("1.0", "libmulti.so", False),
)


@contextlib.contextmanager
def local_index(inp: Inputs) -> Iterator[None]:
    """Serve project ``demo`` (FIND_WHEELS, CUDA 12.8 runtime pins) on 127.0.0.1 with the checkout's own test
    index (tests/find_index.py), for ``find``; a checkout without it serves nothing (find commands say so)."""
    sys.path.insert(0, str(inp.root))
    try:
        from tests.find_index import LocalIndex  # type: ignore[import-not-found]
    except ImportError:
        yield
        return
    finally:
        sys.path.remove(str(inp.root))
    tag = "cp311-cp311-manylinux_2_28_x86_64"
    pin = 'Requires-Dist: nvidia-cuda-runtime-cu12==12.8.90; platform_system == "Linux"\n'
    wheels = []
    for version, fixture, yanked in FIND_WHEELS:
        members = {f"demo/{fixture}": (inp.bin / fixture).read_bytes(), "demo/__init__.py": b""}
        data = _wheel_bytes("demo", version, members, tag=tag, requires=pin)
        wheels.append((version, f"demo-{version}-{tag}.whl", data, yanked))
    with LocalIndex(wheels) as idx:
        inp.index = idx.url.removesuffix("/simple/")
        yield


def build_fleet_inputs(inp: Inputs) -> None:
    """An inventory file (gpus --json of one FAKE host) and a fleet file (a list of them, one node each)."""
    (inp.work / "inventory_mixed.json").write_text(json.dumps(_gpus_doc(inp, "mixed_2080_3090", None)))
    (inp.work / "inventory_t4.json").write_text(json.dumps(_gpus_doc(inp, "t4_535", None)))
    docs = [
        _gpus_doc(inp, h, n)
        for h, n in (("t4_535", "a"), ("h100x2_580", "b"), ("h100x2_580", "c"), ("mixed_2080_3090", "d"), ("gb10", "e"))
    ]
    docs.append({"schema": "cudafit.gpus/1", "mode": "machine", "node": "z", "gpus": [{"nope": 1}], "errors": []})
    (inp.work / "fleet.json").write_text(json.dumps(docs))


def _explain_inputs(inp: Inputs) -> list[tuple[str, str, tuple[str, ...]]]:
    """(name, text or log path, extra args) of the chosen corpus rows; a missing row is reported, not skipped."""
    corpus = inp.root / "tests" / "fixtures" / "explain_corpus" / "corpus.jsonl"
    rows = {}
    for line in corpus.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            rows[(r["repo"], r["number"])] = r["text"]
    out = []
    (inp.work / "logs").mkdir(exist_ok=True)
    for repo, number, how, extra in EXPLAIN_ROWS:
        name = f"explain-{repo.replace('/', '_')}-{number}"
        text = rows.get((repo, number), f"<corpus row {repo}#{number} missing>")
        if how == "file":
            log = inp.work / "logs" / f"{repo.replace('/', '_')}-{number}.log"
            log.write_text(text + "\n")
            out.append((name + "-file", str(log), ("--file", f"logs/{log.name}", *extra)))
        else:
            out.append((name, text, (text, *extra)))
    return out


# --------------------------------------------------------------------------------------------- commands


def iter_commands(inp: Inputs, real: bool) -> Iterator[Command]:
    """The fixed command list (names are file names; the order is the order of the report)."""
    b, w, f = "bin", ".", "fakes"  # relative to the scratch directory, every command's working directory
    g7 = _gpu_args(GPUS7)
    for name in inp.bins or sorted(p.name for p in inp.bin.iterdir() if p.is_file()):
        yield Command(f"check-{name}", ("check", f"{b}/{name}", *g7, "--json", "--no-probe"))
    built = {
        "wheel-pkg": f"{w}/wheels/pkg-1.0-cp311-cp311-linux_x86_64.whl",
        "wheel-narrow": f"{w}/wheels/narrow-2.0-cp311-cp311-linux_x86_64.whl",
        "wheel-broken": f"{w}/wheels/broken-0.1-cp311-cp311-linux_x86_64.whl",
        "wheels-dir": f"{w}/wheels",
        "loose-dir": f"{w}/loose",
        "cubins-dir": f"{w}/cubins",
        "image": f"{w}/image.tar",
        "pt2": f"{w}/model.pt2",
        "garbage": f"{w}/garbage.so",
    }
    for label, path in built.items():
        yield Command(f"check-{label}", ("check", path, *g7, "--json", "--no-probe"))
    yield Command("check-missing-file", ("check", f"{w}/does-not-exist.so", "--gpu", "T4", "--json", "--no-probe"))
    yield Command(
        "check-several-targets",
        (
            "check",
            f"{b}/libmulti.so",
            f"{b}/libold.so",
            f"{b}/libroles.so",
            "--gpu",
            "V100",
            "--gpu",
            "L4",
            "--json",
            "--no-probe",
        ),
    )
    # drivers: CUDA 13 code and PTX ISA 9.0 on older drivers; a driver new enough
    for drv in ("470.57.02", "535.54.03", "570.124.06", "580.65.06"):
        yield Command(
            f"check-libmulti-driver-{drv}", ("check", f"{b}/libmulti.so", *g7, "--driver", drv, "--json", "--no-probe")
        )
        yield Command(
            f"check-libptxonly-driver-{drv}",
            ("check", f"{b}/libptxonly.so", "--gpu", "8.6", "--gpu", "12.0", "--driver", drv, "--json", "--no-probe"),
        )
    yield Command(
        "check-wheel-pkg-driver", ("check", built["wheel-pkg"], *g7, "--driver", "535.54.03", "--json", "--no-probe")
    )
    for label in ("libmulti.so", "libroles.so", "libarch_a.so", "libloaded.so"):
        yield Command(f"check-{label}-kernels", ("check", f"{b}/{label}", *g7, "--kernels", "--json", "--no-probe"))
    yield Command("check-libloaded-embedded", ("check", f"{b}/libloaded.so", *g7, "--embedded", "--json", "--no-probe"))
    yield Command(
        "check-gb10-sm121",
        ("check", f"{b}/libfamily_f.so", "--gpu", "GB10", "--gpu", "sm_121", "--gpu", "10.3", "--json", "--no-probe"),
    )
    yield Command("check-nogpu", ("check", f"{b}/libmulti.so", "--json", "--no-probe"))
    yield Command(
        "check-inventory",
        ("check", f"{b}/libmulti.so", "--inventory", f"{w}/inventory_mixed.json", "--json", "--no-probe"),
    )
    yield Command("check-bad-gpu", ("check", f"{b}/libmulti.so", "--gpu", "no such gpu 12345", "--json", "--no-probe"))
    yield Command("check-bad-driver", ("check", f"{b}/libmulti.so", "--driver", "banana", "--json", "--no-probe"))
    # text renderings (report/ is refactored too)
    yield Command("check-text-wheel-pkg", ("check", built["wheel-pkg"], *g7, "--no-probe", "--wide"), fmt="text")
    yield Command("check-text-libroles", ("check", f"{b}/libroles.so", *g7, "--no-probe", "--kernels"), fmt="text")
    yield Command("check-markdown-loose", ("check", built["loose-dir"], *g7, "--no-probe", "--markdown"), fmt="text")
    yield Command(
        "check-text-driver", ("check", f"{b}/libmulti.so", *g7, "--driver", "535.54.03", "--no-probe"), fmt="text"
    )
    # doctor
    site = f"{w}/env/lib/python3.11/site-packages"
    yield Command("doctor-site-7gpus", ("doctor", "--site-packages", site, *g7, "--json", "--no-probe"))
    yield Command(
        "doctor-site-driver", ("doctor", "--site-packages", site, *g7, "--driver", "535.54.03", "--json", "--no-probe")
    )
    yield Command(
        "doctor-site-kernels",
        ("doctor", "--site-packages", site, "--gpu", "T4", "--gpu", "RTX 5090", "--kernels", "--json", "--no-probe"),
    )
    yield Command("doctor-site-nogpu", ("doctor", "--site-packages", site, "--json", "--no-probe"))
    yield Command("doctor-python", ("doctor", "--python", f"{w}/env", "--gpu", "8.6", "--json", "--no-probe"))
    yield Command(
        "doctor-inventory",
        ("doctor", "--site-packages", site, "--inventory", f"{w}/inventory_mixed.json", "--json", "--no-probe"),
    )
    yield Command(
        "doctor-inventory-t4",
        ("doctor", "--site-packages", site, "--inventory", f"{w}/inventory_t4.json", "--json", "--no-probe"),
    )
    yield Command("doctor-missing", ("doctor", "--site-packages", f"{w}/nope", "--gpu", "T4", "--json", "--no-probe"))
    yield Command("doctor-text", ("doctor", "--site-packages", site, *g7, "--no-probe", "--wide"), fmt="text")
    # scan
    yield Command("scan-bin", ("scan", b, "--json", "--no-cache"))
    yield Command("scan-bin-kernels-all", ("scan", b, "--kernels", "--all", "--json", "--no-cache"))
    yield Command(
        "scan-built",
        ("scan", built["wheels-dir"], built["image"], built["pt2"], built["garbage"], "--json", "--no-cache"),
    )
    yield Command("scan-text", ("scan", f"{b}/libmulti.so", f"{b}/librdc.so", "--kernels", "--no-cache"), fmt="text")
    # audit
    for label, req in (
        ("torch-list", "7.5 8.0 8.6 9.0 10.0 12.0+PTX"),
        ("cmake", "75;80;90a;120-virtual"),
        ("nvcc", "sm_80 compute_120"),
        ("names", "H100,RTX 4090"),
        ("pascal", "6.1"),
    ):
        yield Command(
            f"audit-wheels-{label}",
            ("audit", built["wheels-dir"], "--require", req, "--no-config", "--json", "--no-cache"),
        )
    yield Command(
        "audit-match-torch",
        (
            "audit",
            built["wheel-pkg"],
            "--match-torch",
            f"{w}/env/lib/python3.11/site-packages",
            "--no-config",
            "--json",
            "--no-cache",
        ),
    )
    yield Command(
        "audit-sarif",
        ("audit", built["wheel-narrow"], "--require", "8.0 9.0 12.0", "--no-config", "--format", "sarif", "--no-cache"),
    )
    yield Command(
        "audit-text", ("audit", built["wheel-pkg"], "--require", "7.5 8.6 9.0", "--no-config", "--no-cache"), fmt="text"
    )
    yield Command(
        "audit-bins",
        (
            "audit",
            f"{b}/libmulti.so",
            f"{b}/libroles.so",
            f"{b}/libold.so",
            "--require",
            "6.1 7.0 8.0 9.0",
            "--no-config",
            "--json",
            "--no-cache",
        ),
    )
    # explain
    for name, _text, args in _explain_inputs(inp) if inp.work.exists() else []:
        yield Command(name, ("explain", *args, "--no-probe", "--json"))
    yield Command(
        "explain-path-wheel",
        (
            "explain",
            "CUDA error: no kernel image is available for execution on the device",
            "--path",
            built["wheel-pkg"],
            "--gpu",
            "GTX 1080 Ti",
            "--no-probe",
            "--json",
        ),
    )
    yield Command("explain-catalogue", ("explain", "--catalogue", "--json"))
    yield Command(
        "explain-text",
        ("explain", "RuntimeError: FlashInfer requires sm75+", "--gpu", "3090", "--no-probe", "--markdown"),
        fmt="text",
    )
    # plan
    yield Command("plan-2080-3090-13.0", ("plan", "--gpu", "2080", "--gpu", "3090", "--cuda", "13.0", "--json"))
    yield Command("plan-1080-3090-13.0", ("plan", "--gpu", "1080 Ti", "--gpu", "3090", "--cuda", "13.0", "--json"))
    yield Command("plan-1080-12.6", ("plan", "--gpu", "1080 Ti", "--cuda", "12.6", "--json"))
    yield Command("plan-7gpus-12.8-noptx", ("plan", *g7, "--cuda", "12.8", "--no-ptx", "--json"))
    yield Command("plan-gb10-13.0", ("plan", "--gpu", "GB10", "--gpu", "H100", "--cuda", "13.0", "--json"))
    yield Command(
        "plan-markdown", ("plan", "--gpu", "2080", "--gpu", "3090", "--cuda", "13.0", "--markdown"), fmt="text"
    )
    yield Command("plan-nvcc-fake", ("plan", "--gpu", "3090", "--nvcc", "/nonexistent/nvcc", "--json"))
    # gpus
    yield Command("gpus-names", ("gpus", "NVIDIA A100-SXM4-80GB", "1080ti", "sm_86", "GB10", "nope 123", "--json"))
    for host in ("mixed_2080_3090", "a100_mig", "gb10", "t4_535", "h100x2_580"):
        env = (("CUDAFIT_FAKE_NVML", f"{f}/nvml_hosts.json#{host}"),)
        yield Command(f"gpus-fake-{host}", ("gpus", "--json"), env=env)
    # fleets (recorded: no cluster)
    nodes = f"{f}/gfd_nodes.json"
    yield Command("fleet-k8s", ("fleet", "k8s", "--nodes-json", nodes, "--json"))
    yield Command("fleet-k8s-garbage", ("fleet", "k8s", "--nodes-json", f"{f}/gfd_garbage.json", "--json"))
    yield Command("fleet-file", ("fleet", "file", f"{w}/fleet.json", "--json"))
    yield Command("fleet-file-text", ("fleet", "file", f"{w}/fleet.json"), fmt="text")
    yield Command("check-fleet-k8s", ("check", built["wheel-pkg"], "--fleet", "k8s", "--nodes-json", nodes, "--json"))
    yield Command(
        "check-fleet-k8s-placement",
        ("check", f"{b}/libmulti.so", "--fleet", "k8s", "--nodes-json", nodes, "--emit-placement"),
        fmt="text",
    )
    yield Command("check-fleet-file", ("check", built["loose-dir"], "--fleet", f"{w}/fleet.json", "--json"))
    yield Command(
        "doctor-fleet-k8s", ("doctor", "--site-packages", site, "--fleet", "k8s", "--nodes-json", nodes, "--json")
    )
    yield Command("plan-fleet-k8s", ("plan", "--fleet", "k8s", "--nodes-json", nodes, "--cuda", "13.0", "--json"))
    # verify, replayed by the real worker from the FAKE driver
    fake = (("CUDAFIT_VERIFY_REPLAY", f"{f}/verify_driver_fake.json"),)
    fake570 = (("CUDAFIT_VERIFY_REPLAY", f"{f}/verify_driver_fake_r570.json"),)
    vfix = tuple(
        f"{b}/{n}"
        for n in (
            "libmulti.so",
            "libptxonly.so",
            "k_sm90a.cubin",
            "libroles.so",
            "libarch_a.so",
            "k.fatbin",
            "librdc.so",
        )
    )
    yield Command("verify-fixtures", ("verify", *vfix, "--modules", "--json", "--no-cache"), env=fake)
    yield Command(
        "verify-jit", ("verify", f"{b}/libptxonly.so", f"{b}/k.fatbin", "--jit", "--json", "--no-cache"), env=fake
    )
    yield Command(
        "verify-r570", ("verify", f"{b}/libptxonly.so", f"{b}/libmulti.so", "--json", "--no-cache"), env=fake570
    )
    yield Command(
        "verify-gpu-index",
        ("verify", f"{b}/k_sm90a.cubin", "--gpu", "2", "--gpu", "0", "--json", "--no-cache"),
        env=fake,
    )
    yield Command("verify-text", ("verify", *vfix[:4], "--no-cache"), fmt="text", env=fake)
    yield Command(
        "doctor-verify",
        ("doctor", "--site-packages", site, "--gpu", "9.0", "--verify", "--json", "--no-probe"),
        env=fake,
    )
    # more renderings: report files (HTML, JUnit) and the text/Markdown forms not covered above
    yield Command(
        "check-html-wheel-pkg",
        ("check", built["wheel-pkg"], *g7, "--no-probe", "--json", "--html", "out-check.html"),
        files=("out-check.html",),
    )
    yield Command(
        "doctor-markdown-html",
        ("doctor", "--site-packages", site, *g7, "--no-probe", "--markdown", "--html", "out-doctor.html"),
        fmt="text",
        files=("out-doctor.html",),
    )
    yield Command(
        "check-fleet-k8s-html",
        (
            "check",
            built["wheel-pkg"],
            "--fleet",
            "k8s",
            "--nodes-json",
            nodes,
            "--markdown",
            "--html",
            "out-fleet.html",
        ),
        fmt="text",
        files=("out-fleet.html",),
    )
    yield Command(
        "audit-junit",
        (
            "audit",
            built["wheels-dir"],
            "--require",
            "7.5 8.6 9.0",
            "--no-config",
            "--json",
            "--junit",
            "out-audit.xml",
            "--no-cache",
        ),
        files=("out-audit.xml",),
    )
    yield Command(
        "gpus-text-fake-mixed",
        ("gpus",),
        fmt="text",
        env=(("CUDAFIT_FAKE_NVML", f"{f}/nvml_hosts.json#mixed_2080_3090"),),
    )
    yield Command("gpus-text-names", ("gpus", "NVIDIA A100-SXM4-80GB", "1080ti", "sm_86", "GB10"), fmt="text")
    yield Command("fleet-k8s-text", ("fleet", "k8s", "--nodes-json", nodes), fmt="text")
    yield Command("plan-text", ("plan", *g7, "--cuda", "12.8"), fmt="text")
    yield Command("verify-markdown", ("verify", *vfix, "--markdown", "--no-cache"), fmt="text", env=fake)
    yield Command(
        "explain-text-log",
        ("explain", "--file", "logs/Hellod035_LeggedLab-26.log", "--gpu", "RTX 5090", "--no-probe"),
        fmt="text",
    )
    yield Command("explain-catalogue-text", ("explain", "--catalogue"), fmt="text")
    yield Command("scan-text-all", ("scan", b, "--all", "--no-cache"), fmt="text")
    # find, against the local index (no network)
    where = ("--python-version", "3.11", "--platform", "manylinux_2_28_x86_64", "--index-url", f"{inp.index}/simple/")
    for label, req, extra in (
        ("3090", "demo", ("--gpu", "RTX 3090", "--driver", "580.95.05")),
        ("3090-pre", "demo", ("--gpu", "RTX 3090", "--driver", "580.95.05", "--pre")),
        ("1080ti", "demo", ("--gpu", "GTX 1080 Ti", "--driver", "580.95.05")),
        ("5090-t4", "demo", ("--gpu", "RTX 5090", "--gpu", "T4", "--driver", "580.95.05")),
        ("old-driver", "demo", ("--gpu", "RTX 3090", "--driver", "525.60.13")),
        (
            "below-2",
            "demo<2",
            (
                "--gpu",
                "A100",
            ),
        ),
        (
            "missing",
            "nosuchproject",
            (
                "--gpu",
                "A100",
            ),
        ),
    ):
        yield Command(f"find-{label}", ("find", req, *extra, *where, "--no-probe", "--json"))
    yield Command(
        "find-text", ("find", "demo", "--gpu", "RTX 3090", "--driver", "580.95.05", *where, "--no-probe"), fmt="text"
    )
    # recorded library shapes
    libs = inp.root / "tests" / "fixtures" / "libraries"
    for p in sorted(libs.glob("*.json.gz")):
        label = p.name.removesuffix(".json.gz")
        yield Command(f"shape-{label}", (label, *GPUS10), kind="shape")
    for label in ("fbgemm-gpu-1.9.0", "torch-2.14.1-stack"):
        yield Command(f"shape-{label}-driver-570", (label, "L4", "H100", "--driver", "570.124.06"), kind="shape")
    if real:
        for wheel in sorted(REALWHEELS.glob("*.whl")):
            yield Command(
                f"real-{wheel.name}",
                (
                    "check",
                    str(wheel),
                    "--gpu",
                    "GTX 1080 Ti",
                    "--gpu",
                    "T4",
                    "--gpu",
                    "A100",
                    "--gpu",
                    "H100",
                    "--gpu",
                    "RTX 5090",
                    "--json",
                    "--no-probe",
                ),
            )


#: The replay of a recorded library shape, run as ``python -c`` in the measured checkout: the tests' own
#: document() (tests/test_issue21_packages.py), so a rename in the refactor moves with the tests.
SHAPE_CODE = """
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/tests", sys.argv[1] + "/tests/fixtures", sys.argv[1] + "/src"]
from tests.test_issue21_packages import document
args = sys.argv[2:]
driver = None
if "--driver" in args:
    i = args.index("--driver"); driver = args[i + 1]; del args[i:i + 2]
print(json.dumps(document(args[0], tuple(args[1:]), driver)))
"""


# ------------------------------------------------------------------------------------------- running


def _base_env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDAFIT_")}
    env.update(
        CUDAFIT_CACHE_DIR=str(cache),
        CUDAFIT_OFFLINE="1",
        COLUMNS="120",
        NO_COLOR="1",
        LC_ALL="C.UTF-8",
        PYTHONHASHSEED="0",
    )
    env.pop("FORCE_COLOR", None)
    return env


@dataclass(frozen=True)
class Tokens:
    """Absolute paths that vary between checkouts and runs, longest first, and their tokens."""

    pairs: tuple[tuple[str, str], ...]

    def apply(self, text: str) -> str:
        for path, token in self.pairs:
            text = text.replace(path, token)
        return text


def _tokens(inp: Inputs, cache: Path) -> Tokens:
    raw = [
        (str(cache), "<CACHE>"),
        (str(inp.work), "<WORK>"),
        (str(inp.root), "<ROOT>"),
        (sys.prefix, "<VENV>"),
        (str(Path.home()), "<HOME>"),
        (inp.index, "<INDEX>"),
    ]
    both = raw + [(os.path.realpath(p), t) for p, t in raw if os.path.realpath(p) != p]
    return Tokens(tuple(sorted(both, key=lambda pt: -len(pt[0]))))


TIME_KEYS = re.compile(r"^(seconds|jit_ms|wall_s|elapsed.*|.*_seconds)$")
TEXT_TIME = re.compile(r"\b\d+(\.\d+)? ?(s|ms|seconds)\b")
HTML_DATE = re.compile(r"\b\d{4}-\d\d-\d\d \d\d:\d\d UTC\b")
TEXT_VERSION = re.compile(r"(cudafit[ /]v?)\d+\.\d+\.\d+\S*")


def normalise(value: Any) -> Any:
    """The JSON document with the listed fields replaced by tokens (see the module docstring)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k == "cudafit_version" and isinstance(v, str):
                out[k] = "<VERSION>"
            elif TIME_KEYS.match(k) and isinstance(v, (int, float)) and not isinstance(v, bool):
                out[k] = "<TIME>"
            elif k == "cached" and isinstance(v, bool):
                out[k] = "<CACHED>"
            else:
                out[k] = normalise(v)
        if out.get("name") == "cudafit" and isinstance(out.get("version"), str):  # SARIF tool.driver
            out["version"] = "<VERSION>"
        return out
    if isinstance(value, list):
        return [normalise(v) for v in value]
    return value


def normalise_text(text: str) -> str:
    text = HTML_DATE.sub("<DATE>", text).replace(f"<td>{platform.node()}</td>", "<td><HOST></td>")
    return TEXT_TIME.sub("<TIME>", TEXT_VERSION.sub(r"\1<VERSION>", text))


def run_one(cmd: Command, inp: Inputs, timeout: float) -> dict[str, Any]:
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=inp.work))
    env = {**_base_env(cache), **dict(cmd.env)}
    if cmd.kind == "shape":
        argv = [sys.executable, "-c", SHAPE_CODE, str(inp.root), *cmd.args]
    else:
        argv = [sys.executable, "-m", "cudafit", *cmd.args]
    start = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=inp.work, timeout=timeout, check=False)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, out, err = -1, "", f"snapshot: timed out after {timeout:.0f} s"
    seconds = time.monotonic() - start
    shutil.rmtree(cache, ignore_errors=True)
    tokens = _tokens(inp, cache)
    written = {}
    for name in cmd.files:
        path = inp.work / name
        text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else "<not written>"
        if name.endswith(".html"):  # one line per tag: a difference names the cell, not the page
            text = re.sub(r">(?=<)", ">\n", text)
        written[name] = normalise_text(tokens.apply(text)).splitlines()
        path.unlink(missing_ok=True)
    out, err = tokens.apply(out), tokens.apply(err)
    stdout: Any
    if cmd.fmt == "json":
        try:
            stdout = normalise(json.loads(out)) if out.strip() else None
        except json.JSONDecodeError:
            stdout = {"<not JSON>": normalise_text(out).splitlines()}
    else:
        stdout = normalise_text(out).splitlines()
    return {
        "format": SNAPSHOT_FORMAT,
        "command": tokens.apply(cmd.describe()),
        "exit_code": rc,
        "stdout": stdout,
        "stderr": normalise_text(err).splitlines(),
        "files": written,
        "_seconds": round(seconds, 2),  # not compared: how long it took here
    }


def snapshot(out_dir: Path, root: Path, real: bool, jobs: int, only: str | None, timeout: float) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cudafit-snapshot-") as tmp:
        inp = Inputs(root.resolve(), Path(tmp).resolve())
        build_inputs(inp)
        build_fleet_inputs(inp)
        with local_index(inp), ThreadPoolExecutor(max_workers=jobs) as pool:
            commands = [c for c in iter_commands(inp, real) if not only or re.search(only, c.name)]
            names = [c.name for c in commands]
            assert len(names) == len(set(names)), "duplicate command names"
            results = list(pool.map(lambda c: run_one(c, inp, timeout), commands))
    for cmd, res in zip(commands, results, strict=True):
        (out_dir / f"{cmd.name}.json").write_text(json.dumps(res, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    index = {
        "format": SNAPSHOT_FORMAT,
        "commands": [c.name for c in commands],
        "seconds": round(time.monotonic() - start, 1),
    }
    (out_dir / "_index.json").write_text(json.dumps(index, indent=1) + "\n")
    slow = sorted(zip(results, names, strict=True), key=lambda rn: -rn[0]["_seconds"])[:5]
    print(f"{len(commands)} commands in {index['seconds']} s -> {out_dir}")
    print("slowest: " + ", ".join(f"{n} {r['_seconds']} s" for r, n in slow))
    return 0


# ------------------------------------------------------------------------------------------- comparing


def _diff(a: Any, b: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k.startswith("_"):
                continue
            if k not in a or k not in b:
                yield f"{path}.{k}", a.get(k, "<absent>"), b.get(k, "<absent>")
            else:
                yield from _diff(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            if i >= len(a) or i >= len(b):
                yield f"{path}[{i}]", a[i] if i < len(a) else "<absent>", b[i] if i < len(b) else "<absent>"
            else:
                yield from _diff(a[i], b[i], f"{path}[{i}]")
    elif a != b or type(a) is not type(b):
        yield path, a, b


def compare(dir_a: Path, dir_b: Path, limit: int) -> int:
    names_a = {p.stem for p in dir_a.glob("*.json") if not p.name.startswith("_")}
    names_b = {p.stem for p in dir_b.glob("*.json") if not p.name.startswith("_")}
    differences = 0
    for name in sorted(names_a - names_b):
        print(f"{name}: only in {dir_a}")
        differences += 1
    for name in sorted(names_b - names_a):
        print(f"{name}: only in {dir_b}")
        differences += 1
    changed = 0
    for name in sorted(names_a & names_b):
        a = json.loads((dir_a / f"{name}.json").read_text())
        b = json.loads((dir_b / f"{name}.json").read_text())
        diffs = list(_diff(a, b, ""))
        if diffs:
            changed += 1
        for i, (path, va, vb) in enumerate(diffs):
            if i == limit:
                print(f"{name}: ... {len(diffs) - limit} more differences")
                break
            print(
                f"{name}: {path}\n    A: {json.dumps(va, ensure_ascii=False)[:400]}\n"
                f"    B: {json.dumps(vb, ensure_ascii=False)[:400]}"
            )
        differences += len(diffs)
    common = len(names_a & names_b)
    if differences:
        print(
            f"DIFFERENT: {differences} differences in {changed} of {common} common commands "
            f"({len(names_a ^ names_b)} in one snapshot only)"
        )
        return 1
    print(f"identical: {common} commands")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--out", type=Path, metavar="DIR", help="run the commands and write one file per command")
    mode.add_argument(
        "--compare",
        nargs=2,
        type=Path,
        metavar=("DIR_A", "DIR_B"),
        help="print every difference between two snapshots; exit 1 when any",
    )
    mode.add_argument("--list", action="store_true", help="print the command list (paths as tokens) and exit")
    parser.add_argument(
        "--root",
        type=Path,
        default=Path.cwd(),
        help="the checkout whose fixtures are used (default: the current directory)",
    )
    parser.add_argument("--real", action="store_true", help="also check the real wheels in " + str(REALWHEELS))
    parser.add_argument("--jobs", type=int, default=2, help="commands run at once (default 2)")
    parser.add_argument("--only", metavar="REGEX", help="only the commands whose name matches")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per command (default 300)")
    parser.add_argument("--limit", type=int, default=20, help="differences printed per command (default 20)")
    args = parser.parse_args(argv)
    if args.compare:
        try:
            return compare(args.compare[0], args.compare[1], args.limit)
        except BrokenPipeError:  # compare ... | head
            return 1
    if args.list:
        with tempfile.TemporaryDirectory(prefix="cudafit-snapshot-") as tmp:
            inp = Inputs(args.root.resolve(), Path(tmp).resolve())
            build_inputs(inp)
            tokens = _tokens(inp, inp.work / "cache")
            for c in iter_commands(inp, args.real):
                print(f"{c.name}: {tokens.apply(c.describe())}")
        return 0
    if not (args.root / "tests" / "fixtures" / "bin").is_dir():
        parser.error(f"{args.root} is not a cudafit checkout (no tests/fixtures/bin); use --root")
    return snapshot(args.out, args.root, args.real, args.jobs, args.only, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
