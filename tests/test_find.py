"""``cudafit find`` against a local index (tests/find_index.py): the answer, what it costs, and every failure
a real index shows — PEP 691 and PEP 503 pages, range requests and a server that ignores them, yanked and
pre-releases, sha256 mismatches, a truncated transfer, a slow server, a broken page — as a clear error
(exit 3), never a traceback and never a wrong "runs"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from tests.find_index import LocalIndex

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "src/cudafit/schema/find.json").read_text())
GPU = "RTX 3090"  # 8.6


@pytest.fixture(scope="module")
def wheels() -> list[tuple[str, str, bytes, bool]]:
    from tests.find_index import demo_wheels

    return demo_wheels()


@pytest.fixture
def index(wheels: list[tuple[str, str, bytes, bool]]) -> Iterator[LocalIndex]:
    with LocalIndex(wheels) as idx:
        yield idx


def run_find(
    index: LocalIndex,
    *extra: str,
    cache: Path,
    requirement: str = "demo",
    driver: str = "580.95.05",
    text: bool = False,
) -> tuple[int, dict[str, Any], str]:
    """``cudafit find`` in a subprocess against the local index: (exit code, JSON document or {}, stderr).

    ``text``: the text report instead of JSON (then returned in place of stderr)."""
    env = {**os.environ, "CUDAFIT_CACHE_DIR": str(cache), "NO_COLOR": "1"}
    cmd = [
        sys.executable, "-m", "cudafit", "find", requirement, "--gpu", GPU, "--driver", driver,
        "--python-version", "3.11", "--platform", "manylinux_2_28_x86_64", "--index-url", index.url,
        *([] if text else ["--json"]), *extra,
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    if text:
        return proc.returncode, {}, proc.stdout
    doc = json.loads(proc.stdout) if proc.stdout.strip() else {}
    if doc:
        jsonschema.validate(doc, SCHEMA)
    return proc.returncode, doc, proc.stderr


def versions(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["version"], c["status"]) for c in doc["candidates"]]


def test_json_index_answer_newest_native_with_jit_newer_named(index: LocalIndex, tmp_path: Path) -> None:
    rc, doc, _ = run_find(index, cache=tmp_path)
    assert rc == 0
    # 2.1 is yanked, 3.0rc1 a pre-release: neither is a candidate; 2.0 runs only by JIT
    assert versions(doc) == [("2.0", "jit"), ("1.5", "fails"), ("1.0", "native")]
    assert doc["answer"]["version"] == "1.0"
    assert doc["jit_newer"] == ["demo 2.0"]
    assert doc["install"]["pip"] == f"pip install 'demo==1.0' --index-url {index.url}"
    # range reads: far less than the wheels' size, a few requests per wheel
    judged = sum(c["size"] for c in doc["candidates"])
    assert 0 < doc["totals"]["bytes_fetched"] < judged * 0.15
    assert index.switches.file_requests <= 3 * len(doc["candidates"])
    assert not any(c["full_download"] for c in doc["candidates"])


def test_a_general_module_without_code_stops_inside_a_member(index: LocalIndex, tmp_path: Path) -> None:
    _rc, doc, _ = run_find(index, cache=tmp_path)
    big = next(c for c in doc["candidates"] if c["version"] == "1.5")
    (member,) = big["members"]
    assert member["name"] == "demo/libbig.so"
    assert member["complete"] is False  # stopped after 16 fatbins, not inflated to the end
    assert "16 of the first 16 fatbins carry sm_70, sm_90 and none has code for 8.6" in big["decided_by"]
    assert member["bytes_fetched"] < member["compressed_size"]
    assert big["verdicts"][0]["status"] == "fails"


def test_html_index_with_pep658_metadata(index: LocalIndex, tmp_path: Path) -> None:
    index.switches.json_pages = False
    rc, doc, _ = run_find(index, cache=tmp_path)
    assert rc == 0
    assert versions(doc) == [("2.0", "jit"), ("1.5", "fails"), ("1.0", "native")]
    assert doc["answer"]["cuda_runtime"] == "12.8"  # from the metadata file served beside the wheel


def test_html_index_without_metadata_reads_it_from_the_wheel(index: LocalIndex, tmp_path: Path) -> None:
    index.switches.json_pages = False
    index.switches.metadata = False
    rc, doc, _ = run_find(index, cache=tmp_path)
    assert rc == 0 and doc["answer"]["cuda_runtime"] == "12.8"


def test_pre_releases_only_when_asked(index: LocalIndex, tmp_path: Path) -> None:
    rc, doc, _ = run_find(index, "--pre", cache=tmp_path)
    assert rc == 0
    assert versions(doc)[0] == ("3.0rc1", "fails")
    assert doc["answer"]["version"] == "1.0"


def test_requirement_specifier_limits_candidates(index: LocalIndex, tmp_path: Path) -> None:
    index.files["demo-1.5.tar.gz"] = b"an sdist is never read"
    rc, doc, _ = run_find(index, cache=tmp_path, requirement="demo>=1.5,<2")
    assert rc == 1  # only 1.5, which fails: no build runs, exit 1
    assert versions(doc) == [("1.5", "fails")]
    assert doc["answer"] is None
    # the way out: a source build with the newest CUDA that can target 8.6, and the flags for it
    (line,) = doc["way_out"]
    assert line.startswith("build demo from its source distribution with CUDA 13.x for 8.6")
    assert "cudafit plan --cuda 13." in line and "--gpu 8.6" in line


def test_server_that_ignores_ranges_gets_a_verified_full_download(index: LocalIndex, tmp_path: Path) -> None:
    index.switches.ignore_ranges = True
    rc, doc, _ = run_find(index, cache=tmp_path)
    assert rc == 0
    assert doc["answer"]["version"] == "1.0"
    assert all(c["full_download"] for c in doc["candidates"])
    assert not list(tmp_path.rglob(".download-*"))  # the temporary copies are gone


@pytest.mark.parametrize(
    ("switches", "message"),
    [
        ({"ignore_ranges": True, "wrong_sha256": True}, "sha256 mismatch"),  # a full download is checked
        ({"wrong_metadata_sha256": True}, "sha256 mismatch"),  # so is the PEP 658 metadata file
        ({"truncate_files": True}, "truncated"),
    ],
    ids=["sha256-full-download", "sha256-metadata", "truncated"],
)
def test_a_bad_transfer_is_an_error_never_a_runs(
    index: LocalIndex, tmp_path: Path, switches: dict[str, bool], message: str
) -> None:
    for name, value in switches.items():
        setattr(index.switches, name, value)
    rc, doc, _ = run_find(index, cache=tmp_path)
    assert rc == 3
    assert doc["answer"] is None
    assert all(c["status"] == "error" and message in c["error"] for c in doc["candidates"])


def test_slow_server_times_out(index: LocalIndex, tmp_path: Path) -> None:
    index.switches.delay = 3.0
    rc, doc, stderr = run_find(index, "--timeout", "0.5", "--no-cache", cache=tmp_path)
    assert rc == 3
    assert "timed out after 0.5 s" in stderr
    assert doc == {}


def test_broken_index_page_is_a_clear_error(index: LocalIndex, tmp_path: Path) -> None:
    index.switches.broken_page = True
    rc, doc, stderr = run_find(index, "--no-cache", cache=tmp_path)
    assert rc == 3
    assert stderr.startswith("cudafit: error: ") and "unreadable index page" in stderr
    assert doc == {}


def test_unreachable_index_is_a_clear_error(tmp_path: Path) -> None:
    class Gone:
        url = "http://127.0.0.1:9/simple/"  # discard port: nothing listens

    rc, _doc, stderr = run_find(Gone(), "--timeout", "2", cache=tmp_path)  # type: ignore[arg-type]
    assert rc == 3
    assert "cannot connect to http://127.0.0.1:9/simple/demo/" in stderr


def test_second_run_is_answered_from_the_sha256_cache_offline(wheels: Any, tmp_path: Path) -> None:
    with LocalIndex(wheels) as idx:
        rc, cold, _ = run_find(idx, cache=tmp_path)
        url = idx.url
    assert rc == 0 and cold["totals"]["bytes_fetched"] > 0

    class Offline:
        pass

    offline = Offline()
    offline.url = url  # type: ignore[attr-defined]  # the server is gone: only the cache answers
    rc, warm, _ = run_find(offline, cache=tmp_path)  # type: ignore[arg-type]
    assert rc == 0
    assert warm["totals"]["bytes_fetched"] == 0
    assert versions(warm) == versions(cold)
    assert all(c["cached"] for c in warm["candidates"])


def test_sibling_wheels_share_member_reads(tmp_path: Path) -> None:
    from tests.find_index import FIXTURES, make_wheel

    multi = (FIXTURES / "libmulti.so").read_bytes()
    built = []
    for tag in ("cp311-cp311-manylinux_2_28_x86_64", "cp312-cp312-manylinux_2_28_x86_64"):
        name, data = make_wheel("demo", "1.0", {"demo/libmulti.so": multi}, tag=tag)
        built.append(("1.0", name, data, False))
    with LocalIndex(built) as idx:
        _rc, first, _ = run_find(idx, cache=tmp_path)
        env_tag = ["--python-version", "3.12"]
        rc, second, _ = run_find(idx, *env_tag, cache=tmp_path)
    assert rc == 0
    assert first["answer"]["filename"].startswith("demo-1.0-cp311")
    assert second["answer"]["filename"].startswith("demo-1.0-cp312")
    (member,) = second["answer"]["members"]
    assert member["cached"] is True  # the cp311 read of the same libmulti.so (same CRC-32 and size)


def test_with_deps_judges_the_answers_pinned_cuda_wheels(tmp_path: Path) -> None:
    from tests.find_index import FIXTURES, make_wheel

    multi = (FIXTURES / "libmulti.so").read_bytes()
    built = []
    name, data = make_wheel("demo", "1.0", {"demo/libmulti.so": multi}, requires=("nvidia-demo-cu12==9.1",))
    built.append(("1.0", name, data, False))
    lib = (FIXTURES / "libarch_a.so").read_bytes()  # sm_90a/100a/120a only: nothing for 8.6
    name, data = make_wheel("nvidia-demo-cu12", "9.1", {"nvidia/demo/lib/libdemo.so.9": lib})
    built.append(("9.1", name, data, False))
    with LocalIndex(built) as idx:
        rc, doc, _ = run_find(idx, "--with-deps", cache=tmp_path)
    assert rc == 1  # the answer itself runs, but its pinned dependency has no code for 8.6
    assert doc["answer"]["cuda_pins"] == ["nvidia-cuda-runtime-cu12==12.8.90", "nvidia-demo-cu12==9.1"]
    (dep,) = doc["dependencies"]
    assert (dep["project"], dep["version"], dep["status"]) == ("nvidia-demo-cu12", "9.1", "fails")


def test_text_output_names_answer_and_install_commands(index: LocalIndex, tmp_path: Path) -> None:
    rc, _doc, out = run_find(index, cache=tmp_path, text=True)
    assert rc == 0
    assert "Answer: demo 1.0" in out
    assert "newer releases run only by JIT compilation of PTX: demo 2.0" in out
    assert f"pip: pip install 'demo==1.0' --index-url {index.url}" in out


def test_no_gpu_is_a_usage_error(tmp_path: Path) -> None:
    env = {**os.environ, "CUDAFIT_CACHE_DIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "cudafit", "find", "demo", "--no-probe"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert "no GPU found" in proc.stderr


def test_cuda_pins_from_metadata_cuda12_and_cuda13_styles() -> None:
    from cudafit.find.candidates import cuda_pins

    cu12 = (
        b"Name: torch\nRequires-Dist: filelock\n"
        b'Requires-Dist: nvidia-cuda-runtime-cu12==12.8.90; platform_system == "Linux"\n'
        b'Requires-Dist: nvidia-cudnn-cu12==9.10.2.21; platform_system == "Linux"\n'
    )
    assert cuda_pins(cu12) == (("nvidia-cuda-runtime-cu12==12.8.90", "nvidia-cudnn-cu12==9.10.2.21"), "12.8")
    cu13 = (
        b"Name: torch\n"
        b'Requires-Dist: cuda-toolkit[cublas,cudart,nvrtc]==13.2.2; platform_system == "Linux"\n'
        b'Requires-Dist: nvidia-cudnn-cu13==9.26.0.51; platform_system == "Linux"\n'
        b'Requires-Dist: triton~=3.9.0; platform_system == "Linux"\n'
    )
    assert cuda_pins(cu13) == (("cuda-toolkit[cublas,cudart,nvrtc]==13.2.2", "nvidia-cudnn-cu13==9.26.0.51"), "13.2")


def test_platform_tags_expand_like_pip() -> None:
    from cudafit.targets.index import python_tags

    tags = python_tags("3.11", ["manylinux_2_28_x86_64"])
    assert tags[0] == "cp311-cp311-manylinux_2_28_x86_64"
    assert "cp311-cp311-manylinux2014_x86_64" in tags and "cp311-abi3-manylinux1_x86_64" in tags
    assert "py3-none-any" in tags
    assert not any("aarch64" in t for t in tags)


def test_driver_below_the_runtime_floor_rejects_without_reading_code(index: LocalIndex, tmp_path: Path) -> None:
    # every demo wheel pins the CUDA 12.8 runtime: driver 470 is below CUDA 12's floor (525)
    rc, doc, _ = run_find(index, cache=tmp_path, driver="470.57.02")
    assert rc == 1 and doc["answer"] is None
    for c in doc["candidates"]:
        assert c["verdicts"][0]["reasons"][0]["code"] == "driver-too-old-for-runtime"
        assert c["members"] == []


def test_small_member_read_through_the_stop_has_the_facts_of_a_file(tmp_path: Path) -> None:
    """A member parsed in memory after the stream locator let it through: the same facts as the file itself."""
    import io as _io

    from tests.find_index import FIXTURES

    from cudafit.binary import inspect_bytes
    from cudafit.targets.remote import _scan_large, _scan_small

    for name in ("libmulti.so", "k_sm90a.cubin", "libstatic.a", "k.fatbin"):
        data = (FIXTURES / name).read_bytes()
        facts = _scan_small(_io.BytesIO(data), name, len(data), lambda _modules: False)
        assert facts == inspect_bytes(data, name), name
        # the large-member path streams to a file on disk and parses that: the same facts again
        copy = tmp_path / name
        assert _scan_large(_io.BytesIO(data), name, len(data), None, str(copy)) == facts, name
        assert copy.read_bytes() == data


def _gpu(name: str) -> Any:
    from cudafit.model import Gpu
    from cudafit.probe import declared_inventory

    (d,) = declared_inventory([name])[0].devices
    return Gpu(d.name, d.compute_capability, None)


def _file(version: str, index_url: str) -> Any:
    from cudafit.targets.index import IndexFile

    name = f"torch-{version}-cp311-cp311-manylinux_2_28_x86_64.whl"
    return IndexFile(
        "torch", version, name, index_url + name, index_url, "ab" * 32, 900_000_000, False, None, True, None
    )


def test_a_variant_whose_cuda_cannot_target_the_gpu_is_rejected_unread(tmp_path: Path) -> None:
    from cudafit.find.judge import CandidateJudge
    from cudafit.model import parse_driver_version
    from cudafit.rules.ecosystem import parse_cuda_variant
    from cudafit.targets.index import IndexClient
    from cudafit.targets.shacache import ShaCache

    cu130 = parse_cuda_variant("cu130")
    judge = CandidateJudge(
        [_gpu("GTX 1080 Ti")],
        parse_driver_version("580.95.05"),
        IndexClient(),
        ShaCache(enabled=False),
        None,
        str(tmp_path),
    )
    result = judge.judge(_file("2.9.1+cu130", cu130.index_url), cu130)  # the URL is never asked
    assert result.status == "fails" and result.bytes_fetched == 0 and result.members == ()
    assert result.verdicts[0]["reasons"][0]["code"] == "cuda-cannot-target"
    assert "CUDA 13.0 cannot target 6.1 (its lowest is sm_75)" in result.verdicts[0]["reasons"][0]["message"]


def test_install_lines_and_uv_auto_for_a_pytorch_index_answer() -> None:
    from cudafit.find import CandidateResult, FindResult, install_lines
    from cudafit.find.way_out import uv_auto
    from cudafit.model import parse_driver_version
    from cudafit.rules.ecosystem import parse_cuda_variant

    cu126 = parse_cuda_variant("cu126")
    gpus = (_gpu("GTX 1080 Ti"),)
    driver = parse_driver_version("580.95.05")
    answer = CandidateResult(_file("2.7.1+cu126", cu126.index_url + "/"), "cu126", "12.6", "native")
    uv = uv_auto(gpus, driver, [answer])
    assert uv["variant"] == "cu130" and uv["runs"] is False  # uv#14742: a 1080 Ti on driver 580 gets cu130
    result = FindResult("torch", "torch", gpus, driver, ("cp311",), (), (answer,), answer, (), 1, 1, uv_auto=uv)
    lines = install_lines(result)
    assert lines["pip"] == "pip install 'torch==2.7.1+cu126' --index-url https://download.pytorch.org/whl/cu126/"
    assert lines["uv"] == "uv pip install 'torch==2.7.1+cu126' --torch-backend=cu126"
    assert '[tool.uv.sources] torch = { index = "pytorch-cu126" }' in lines["uv_project"]


def test_progress_names_the_candidate_and_the_bytes_read(index: LocalIndex, tmp_path: Path) -> None:
    from cudafit.find import find
    from cudafit.targets.index import IndexClient

    index.switches.ignore_ranges = True  # the 70 MB wheel comes whole: several progress lines
    lines: list[str] = []
    result = find(
        "demo==1.5",
        [_gpu(GPU)],
        python_version="3.11",
        platforms=["manylinux_2_28_x86_64"],
        index_urls=[index.url],
        client=IndexClient(use_cache=False),
        use_cache=False,
        progress=lines.append,
    )
    assert result.candidates[0].full_download
    assert lines[0] == "demo-1.5-cp311-cp311-manylinux_2_28_x86_64.whl: reading the central directory"
    assert any(line.endswith("MB read") and " of " in line for line in lines)


def test_verdicts_equal_those_of_check_on_the_same_wheels(
    wheels: list[tuple[str, str, bytes, bool]], tmp_path: Path, cli: Any
) -> None:
    """`find` judges with the engine of `check`: the same wheel gets the same status from both."""
    with LocalIndex(wheels) as idx:
        _rc, doc, _ = run_find(idx, "--pre", cache=tmp_path / "cache")
    by_version = {c["version"]: c for c in doc["candidates"]}
    for version, filename, data, _yanked in wheels:
        if version not in by_version or version == "1.5":  # 1.5 stops early by design: not a full verdict
            continue
        path = tmp_path / filename
        path.write_bytes(data)
        _rc, out, _err = cli("check", str(path), "--gpu", GPU, "--no-probe", "--no-cache", "--json")
        (target,) = json.loads(out)["targets"]
        assert target["verdicts"][0]["status"] == by_version[version]["verdicts"][0]["status"], version


@pytest.mark.parametrize(
    ("entries", "why"),
    [
        (((2, 70), (2, 90)), "and none has code for 8.6"),  # a general list over two generations: a hole
        (((2, 70), (1, 80)), "and none has SASS for 8.6 (JIT at best)"),  # runs by JIT at best: not native
        (((2, 70),), None),  # one arch per fatbin: per-GPU dispatch, the engine's "specialised"
        (((2, 52), (1, 52)), None),  # SASS and PTX of one arch: still one arch (cuSPARSE's first fatbins)
        (((8, 50),), None),  # LTO-IR only: linked by the library, not code the driver loads
        (((8, 50), (2, 70)), None),  # LTO-IR beside one arch: still one arch the driver could load
    ],
)
def test_in_member_stop_needs_a_general_list_without_code(
    entries: tuple[tuple[int, int], ...], why: str | None
) -> None:
    from tests.builders import entry, fatbin

    from cudafit.binary import inspect_bytes
    from cudafit.find.judge import general_without_code

    one = fatbin(*(entry(kind, arch) for kind, arch in entries))
    modules = inspect_bytes(one * 16, "x.fatbin").modules
    assert len(modules) == 16
    found = general_without_code(modules, [_gpu(GPU)], None)
    assert (found is None) if why is None else (found is not None and found.endswith(why)), found


def test_judge_wheel_is_the_reusable_entry_for_one_file(index: LocalIndex, tmp_path: Path) -> None:
    """What a requirement check reuses for a dependency it already resolved: one file, same engine and cache."""
    from cudafit.find import judge_wheel
    from cudafit.targets.index import IndexClient

    client = IndexClient(use_cache=False)
    files = {f.version: f for f in client.project_page(index.url, "demo").files}
    result = judge_wheel(files["1.0"], [_gpu(GPU)], client=client, use_cache=False)
    assert result.status == "native" and 0 < result.bytes_fetched <= files["1.0"].size  # type: ignore[operator]
    assert judge_wheel(files["3.0rc1"], [_gpu(GPU)], client=client, use_cache=False).status == "fails"


def test_a_dependency_row_is_judged_from_all_its_code_not_its_first_fatbins(tmp_path: Path) -> None:
    """A file whose first fatbins are all for newer GPUs (two archs, so they look like a general build) and whose
    general build follows: the early stop that ranks candidates would call it a hole; a verdict shown as a fact
    about a package (check's dependency rows, find --with-deps) reads it all and finds it native (the shape of
    nvidia-cusparse-cu12 12.5.8.93 on a GTX 1080 Ti)."""
    from tests.builders import entry, fatbin
    from tests.find_index import make_wheel

    from cudafit.find import judge_wheel
    from cudafit.find.judge import CandidateJudge
    from cudafit.targets.index import IndexClient
    from cudafit.targets.shacache import ShaCache

    data = fatbin(entry(2, 90), entry(2, 100)) * 20 + fatbin(entry(2, 70), entry(2, 86)) * 25
    name, wheel = make_wheel("specfirst", "1.0", {"specfirst/libspec.so": data, "specfirst/__init__.py": b""})
    with LocalIndex([("1.0", name, wheel, False)]) as idx:
        client = IndexClient(use_cache=False)
        (file,) = client.project_page(idx.url, "specfirst").files
        whole = judge_wheel(file, [_gpu(GPU)], client=client, use_cache=False)
        early = CandidateJudge([_gpu(GPU)], None, client, ShaCache(enabled=False), None, str(tmp_path)).judge(
            file, None
        )
    assert whole.status == "native", whole.decided_by
    assert all(m.complete for m in whole.members)
    assert early.status == "fails"  # the ranking stop alone would have said so: the case this guards
