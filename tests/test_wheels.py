"""Wheels (issue 21 items 5, 6, 10; issue 23 zip row): members of any size read like extracted files, the
content-keyed wheel cache, ``cudafit cache``, the ``--kernels`` listing, and every class of bad zip input
becoming that member's ``unreadable`` entry while the rest is judged.

Wheels are built here from the committed fixtures (tests/fixtures/bin, recipe in tests/fixtures/build.sh);
tests/realwheels/test_wheel_members.py runs the same comparisons on real wheels (opt-in).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from cudafit.report.check import kernel_family
from cudafit.targets import wheel as wheel_mod
from cudafit.targets import wheel_members as members_mod
from cudafit.targets.wheel import WheelTarget

BIN = Path(__file__).parent / "fixtures" / "bin"
SCHEMAS = Path(__file__).parent.parent / "src" / "cudafit" / "schema"
CHECK_SCHEMA = json.loads((SCHEMAS / "check.json").read_text())
CACHE_SCHEMA = json.loads((SCHEMAS / "cache.json").read_text())
GPUS = ["T4", "A100", "H100", "B200", "RTX 5090", "GTX 1080 Ti", "Jetson AGX Orin"]
MEMBERS = {
    "pkg/_roles.so": "libroles.so",
    "pkg/_multi.so": "libmulti.so",
    "pkg/lib/libarch_a.so": "libarch_a.so",
    "pkg/lib/libfamily_f.so": "libfamily_f.so",
    "pkg/lib/libzstd.so": "libzstd.so",
    "pkg/cubins/k.cubin": "k_sm90a.cubin",
    "pkg/lib/libstatic.a": "libstatic.a",
    "pkg/bin/app": "app",
}


def build_wheel(path: Path, extra: list[tuple[zipfile.ZipInfo | str, bytes, int]] = (), *, name: str = "pkg") -> Path:  # type: ignore[assignment]
    """A wheel of the fixture binaries, with METADATA and RECORD as pip would install them."""
    record = [f"{m},," for m in MEMBERS] + [f"{name}-1.0.dist-info/METADATA,,", f"{name}-1.0.dist-info/RECORD,,"]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(
            f"{name}-1.0.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n\n" + "x" * 999
        )
        for member, fixture in MEMBERS.items():
            info = zipfile.ZipInfo(member)
            info.external_attr = 0o755 << 16
            zf.writestr(info, (BIN / fixture).read_bytes(), compress_type=zipfile.ZIP_DEFLATED)
        zf.writestr("pkg/__init__.py", "raise SystemExit('never imported')\n")
        for info_or_name, data, compression in extra:
            info = info_or_name if isinstance(info_or_name, zipfile.ZipInfo) else zipfile.ZipInfo(info_or_name)
            info.external_attr = info.external_attr or 0o755 << 16
            zf.writestr(info, data, compress_type=compression)
        zf.writestr(f"{name}-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return path


def pip_extract(whl: Path, dest: Path) -> Path:
    """Unpack the wheel; extension-less files made executable (the directory walk reads only executables
    among them, a wheel's are sniffed whatever their mode)."""
    with zipfile.ZipFile(whl) as zf:
        for info in zf.infolist():
            target = Path(zf.extract(info, dest))
            if target.is_file() and "." not in target.name:
                target.chmod(0o755)
    return dest


def corrupt(path: Path, member: str, start: int = 2, stop: int = 40) -> None:
    """Flip bytes of a member's compressed stream in place (its local header and the directory stay valid)."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(member)
    n, m = struct.unpack_from("<HH", data, info.header_offset + 26)
    begin = info.header_offset + 30 + n + m
    for i in range(begin + start, begin + min(info.compress_size, stop)):
        data[i] ^= 0xA5
    path.write_bytes(bytes(data))


def check_json(cli: Any, *targets: str, kernels: bool = False) -> tuple[int, dict[str, Any]]:
    args = ["check", *targets, "--json", "--no-probe"]
    for g in GPUS:
        args += ["--gpu", g]
    rc, out, _err = cli(*args, *(["--kernels"] if kernels else []))
    doc = json.loads(out)
    jsonschema.validate(doc, CHECK_SCHEMA)
    return rc, doc


def verdicts(doc: dict[str, Any]) -> list[tuple[str, list[tuple[str, dict[str, int], list[str]]]]]:
    """What must not depend on where the bytes came from: per package, per GPU, status, counts, reason codes."""
    return [
        (
            t["name"],
            [(v["status"], v["counts"], sorted(r["code"] for r in v["reasons"])) for v in t["verdicts"]],
        )
        for t in doc["targets"]
    ]


# --------------------------------------------------------------------------- same bytes, same verdict


@pytest.mark.parametrize("spool_all", [False, True], ids=["in-memory", "spooled"])
def test_wheel_and_its_extracted_files_give_identical_verdicts(
    tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch, spool_all: bool
) -> None:
    """Item 5: every member read from the zip (in memory, or spooled as members over 16 MiB are) is judged
    exactly as the installed file; pip's extraction of the same wheel is the reference."""
    whl = build_wheel(tmp_path / "pkg-1.0-py3-none-any.whl")
    site = pip_extract(whl, tmp_path / "site")
    if spool_all:
        monkeypatch.setattr(members_mod, "SPOOL_THRESHOLD", 0)  # read_member_facts lives there
    rc_w, from_wheel = check_json(cli, str(whl), kernels=True)
    rc_x, extracted = check_json(cli, str(site), kernels=True)
    assert verdicts(from_wheel) == verdicts(extracted)
    assert {v["status"] for t in from_wheel["targets"] for v in t["verdicts"]} >= {"native", "partial", "fails"}
    assert rc_w == rc_x == 1

    def kernels(doc: dict[str, Any]) -> list[list[Any]]:
        return [
            sorted((r["path"].split("!")[-1].split("site/")[-1], r["module"], r["kernels"]) for r in v["without_code"])
            for t in doc["targets"]
            for v in t["verdicts"]
        ]

    assert kernels(from_wheel) == kernels(extracted)
    assert all(r["kernels"] is not None for v in from_wheel["targets"][0]["verdicts"] for r in v["without_code"])


def test_spooled_members_keep_kernel_names_and_no_size_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A member above the in-memory limit is spooled to a private file: facts as from disk, kernel names
    readable (there is no size above which they are not), and spooled files without device code are gone."""
    from cudafit.targets import wheel_members
    from cudafit.targets.kernels import KernelNameSource

    monkeypatch.setattr(members_mod, "SPOOL_THRESHOLD", 0)  # read_member_facts lives there
    whl = build_wheel(tmp_path / "pkg-1.0-py3-none-any.whl", [("pkg/bin/notcuda", b"\x7fELF" + b"\0" * 60, 8)])
    items = {i.path.split("!")[1]: i for i in WheelTarget(str(whl)).iter_items()}
    roles = items["pkg/_roles.so"].facts
    source = KernelNameSource(roles)
    try:
        names = [source(m) for m in roles.modules]
    finally:
        source.close()
    assert any(n and "_Z18gemma_rmsnorm_likePff" in n for n in names)
    spooled = set(wheel_members._spooled.values())
    assert spooled and all(Path(p).is_file() for p in spooled)
    assert not any(k[1] == "pkg/bin/notcuda" for k in wheel_members._spooled)  # no device code: deleted


# --------------------------------------------------------------------------- the content-keyed cache


def test_a_recheck_reads_no_member_and_survives_a_copy(
    tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 6: the second check of the same bytes, under another name and mtime, is served from the wheel
    cache (no member is read); a changed member is a miss."""
    monkeypatch.setenv("CUDAFIT_CACHE_DIR", str(tmp_path / "cache"))
    whl = build_wheel(tmp_path / "pkg-1.0-py3-none-any.whl")
    _rc, first = check_json(cli, str(whl))
    copy = tmp_path / "elsewhere" / whl.name
    copy.parent.mkdir()
    shutil.copy(whl, copy)  # new path, inode and mtime: same content

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a member was read although the wheel's scan is cached")

    monkeypatch.setattr(wheel_mod, "read_member_facts", refuse)
    _rc, again = check_json(cli, str(copy))
    assert verdicts(again) == verdicts(first)
    assert again["targets"][0]["path"] == str(copy)
    monkeypatch.undo()
    monkeypatch.setenv("CUDAFIT_CACHE_DIR", str(tmp_path / "cache"))
    changed = build_wheel(tmp_path / "changed" / whl.name if (tmp_path / "changed").mkdir() is None else whl)
    with zipfile.ZipFile(changed, "a") as zf:
        zf.writestr("pkg/_extra.so", (BIN / "libold.so").read_bytes())
    calls: list[str] = []
    real = wheel_mod.read_member_facts

    def spy(zf: Any, info: Any, display: str, **kw: Any) -> Any:
        calls.append(info.filename)
        return real(zf, info, display, **kw)

    monkeypatch.setattr(wheel_mod, "read_member_facts", spy)
    check_json(cli, str(changed))
    assert "pkg/_extra.so" in calls and "pkg/_roles.so" in calls


def test_cache_kinds_of_the_command_are_the_caches() -> None:
    from cudafit.cli.cache import KIND_CHOICES
    from cudafit.targets.cache import KINDS

    assert set(KIND_CHOICES) == set(KINDS) - {"other"}


def test_cache_command_shows_and_clears_what_cudafit_wrote(
    tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("CUDAFIT_CACHE_DIR", str(cache))
    whl = build_wheel(tmp_path / "pkg-1.0-py3-none-any.whl")
    check_json(cli, str(whl), kernels=True)
    (cache / "wheels" / "abc").mkdir(parents=True)
    (cache / "wheels" / "abc" / "x-1.0-py3-none-any.whl").write_bytes(b"w" * 1000)
    (cache / "notes.txt").write_text("not cudafit's")
    rc, out, _ = cli("cache", "--json")
    doc = json.loads(out)
    jsonschema.validate(doc, CACHE_SCHEMA)
    kinds = {e["kind"] for e in doc["entries"]}
    assert {"wheel-scans", "kernel-names", "downloads", "other"} <= kinds
    assert doc["total_bytes"] == sum(e["bytes"] for e in doc["entries"]) > 1000
    rc, out, _ = cli("cache")
    assert rc == 0 and "downloads" in out and "total" in out
    rc, out, _ = cli("cache", "clear", "--kind", "downloads", "--json")
    cleared = json.loads(out)
    jsonschema.validate(cleared, CACHE_SCHEMA)
    assert [e["name"] for e in cleared["entries"]] == ["wheels"] and not (cache / "wheels").exists()
    rc, out, _ = cli("cache", "clear")
    assert rc == 0 and "removed" in out
    assert sorted(p.name for p in cache.iterdir()) == ["notes.txt"]  # only what cudafit writes is removed


# --------------------------------------------------------------------------- --kernels (item 10)


def test_kernel_family_reads_the_mangling() -> None:
    assert kernel_family("_Z5scalePddi") == ("scale", False)
    assert kernel_family(
        "_ZN13pytorch_flash16flash_fwd_kernelI23Flash_fwd_kernel_traitsILi64EEEEvNS_15Flash_fwd_paramsE"
    ) == ("pytorch_flash::flash_fwd_kernel", True)
    assert kernel_family("_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_1fEvEUliE_EEviT1_") == (
        "at::native::elementwise_kernel",
        True,
    )
    assert kernel_family("_ZN12_GLOBAL__N_110local_axpyEPf") == ("(anonymous namespace)::local_axpy", False)
    assert kernel_family("_ZNSt3foo3barIiEEvv") == ("std::foo::bar", True)
    assert kernel_family("plain_c_kernel") == ("plain_c_kernel", False)
    assert kernel_family("_Z999short") == ("_Z999short", False)  # a length past the end: shown as is


def test_kernels_listing_holes_first_in_the_tables_words(tmp_path: Path) -> None:
    """Holes of every package before any information, labelled as the table labels the package on that GPU,
    each kernel family once; specialised and gated modules after, one line per module set."""
    libs = tmp_path / "libs"
    libs.mkdir()
    for f in ("libroles.so", "libmulti.so", "libarch_a.so"):
        shutil.copy(BIN / f, libs / f)
    cmd = [sys.executable, "-m", "cudafit", "check", str(libs), "--kernels", "--no-probe", "--no-cache"]
    for g in ("T4", "A100", "H100", "RTX 5090", "GTX 1080 Ti"):
        cmd += ["--gpu", g]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False, env={"COLUMNS": "250", "PATH": ""})
    assert p.returncode == 1, p.stderr
    out = p.stdout
    table = out.splitlines()[1]  # package  T4  A100  H100  RTX 5090  1080 Ti
    assert "partial" in table and "fails" in table
    holes_at = out.index("Kernels without code for the GPU")
    info_at = out.index("Code for other GPUs")
    assert holes_at < info_at and out.count("Code for other GPUs") == 1
    holes = out[holes_at:info_at]
    assert "fails on 6.1" in holes and "partial on 9.0, 12.0" in holes
    assert "libmulti.so" in holes.split("libroles.so")[0]  # the package that fails comes first
    for name in ("gemma_rmsnorm_like", "common_fill", "newer_only_bf16_path", "(anonymous namespace)::local_axpy"):
        assert holes.count(name) == 1, name
    info = out[info_at:]
    assert info.count("hopper_only_wgmma_like") == 1  # gated on four GPUs: one line names them
    assert "gated module(s) (sm_90a) on 6.1, 7.5, 8.0, 12.0" in info


# --------------------------------------------------------------------------- bad zips (issue 23)


def judged_beside(cli: Any, bad: Path, good: Path) -> dict[str, Any]:
    """``check BAD GOOD``: no internal error, the good wheel judged, the bad item listed as unreadable."""
    rc, doc = check_json(cli, str(bad), str(good), kernels=True)
    assert rc in (0, 1)
    judged = [t for t in doc["targets"] if t["verdicts"] and any(v["counts"]["native"] for v in t["verdicts"])]
    assert judged, doc
    return doc


def unreadable(doc: dict[str, Any]) -> dict[str, str]:
    return {u["path"].split("!")[-1]: u["error"] for t in doc["targets"] for u in t["unreadable"]}


@pytest.fixture
def good(tmp_path: Path) -> Path:
    (tmp_path / "good").mkdir()
    return build_wheel(tmp_path / "good" / "good-1.0-py3-none-any.whl", name="good")


def test_corrupt_deflate_metadata(tmp_path: Path, cli: Any, good: Path) -> None:
    bad = build_wheel(tmp_path / "pkg-1.0-py3-none-any.whl")
    corrupt(bad, "pkg-1.0.dist-info/METADATA")
    doc = judged_beside(cli, bad, good)
    assert "zlib.error" in unreadable(doc)["pkg-1.0.dist-info/METADATA"]
    pkg = next(t for t in doc["targets"] if t["name"] == "pkg")  # named from the file name; members judged
    assert pkg["files"] > 1 and pkg["status"] in ("fails", "partial")


def test_corrupt_deflate_in_the_64_byte_sniff(tmp_path: Path, cli: Any, good: Path) -> None:
    bad = build_wheel(tmp_path / "pkg-1.0-py3-none-any.whl", [("pkg/bin/tool", b"\x7fELF" + bytes(range(256)) * 20, 8)])
    corrupt(bad, "pkg/bin/tool")
    assert "zlib.error" in unreadable(judged_beside(cli, bad, good))["pkg/bin/tool"]


def test_corrupt_lzma_member(tmp_path: Path, cli: Any, good: Path) -> None:
    bad = build_wheel(tmp_path / "pkg-1.0-py3-none-any.whl", [("pkg/_lz.so", (BIN / "libmulti.so").read_bytes(), 14)])
    corrupt(bad, "pkg/_lz.so", start=4, stop=9)  # the LZMA properties: the decoder refuses them
    assert "LZMAError" in unreadable(judged_beside(cli, bad, good))["pkg/_lz.so"]


def test_corrupt_pt2_metadata_json(tmp_path: Path) -> None:
    from cudafit.targets.pt2 import inspect_pt2

    pt2 = tmp_path / "m.pt2"
    with zipfile.ZipFile(pt2, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        base = "m/data/aotinductor/model/"
        zf.writestr(base + "m_metadata.json", json.dumps({"AOTI_DEVICE_KEY": "cuda", "pad": "x" * 500}))
        zf.writestr(base + "deep_metadata.json", "[" * 200_000)
        zf.writestr(base + "m.so", (BIN / "libmulti.so").read_bytes())
        zf.writestr(base + "k.cubin", (BIN / "k_sm90a.cubin").read_bytes())
    corrupt(pt2, base + "m_metadata.json")
    report = inspect_pt2(str(pt2))
    errors = {i.path.split("!")[-1]: i.facts.error for i in report.items if i.facts.error}
    assert "zlib.error" in errors[base + "m_metadata.json"]
    assert "RecursionError" in errors[base + "deep_metadata.json"]
    assert [m.cubin_archs for m in report.models] == [
        ("compute_120", "sm_100", "sm_120", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a")
    ]


def test_kernels_re_read_of_a_corrupt_member_is_a_reason(tmp_path: Path) -> None:
    """The --kernels re-read (scan --kernels, KernelNameSource) of a member that cannot be inflated says why."""
    from cudafit.targets.kernels import read_zip_member

    bad = build_wheel(tmp_path / "pkg-1.0-py3-none-any.whl")
    corrupt(bad, "pkg/_roles.so")
    buf, why = read_zip_member(f"{bad}!pkg/_roles.so")
    assert buf is None and "zlib.error" in why
    buf, why = read_zip_member(f"{bad}!pkg/missing.so")
    assert buf is None and "KeyError" in why
    p = subprocess.run(
        [sys.executable, "-m", "cudafit", "scan", str(bad), "--kernels", "--json", "--no-cache"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "internal error" not in p.stderr and p.returncode in (0, 1, 3)
    files = {f["path"].split("!")[-1]: f for f in json.loads(p.stdout)["files"]}
    assert "zlib.error" in files["pkg/_roles.so"]["error"] and files["pkg/_multi.so"]["kernels"]


def test_patched_version_needed_is_a_bad_wheel_beside_good_ones(tmp_path: Path, cli: Any, good: Path) -> None:
    """zipfile raises NotImplementedError for a "version needed to extract" above 6.3 in the central directory."""
    bad = build_wheel(tmp_path / "pkg-1.0-py3-none-any.whl")
    data = bytearray(bad.read_bytes())
    at = data.index(b"PK\x01\x02")
    data[at + 6] = 99
    bad.write_bytes(bytes(data))
    doc = judged_beside(cli, bad, good)
    (why,) = unreadable(doc).values()
    assert "not a readable wheel: NotImplementedError: zip file version 9.9" in why


def test_member_with_an_empty_name(tmp_path: Path, cli: Any, good: Path) -> None:
    bad = build_wheel(tmp_path / "pkg-1.0-py3-none-any.whl", [(zipfile.ZipInfo(""), b"\x7fELF" + b"\0" * 60, 0)])
    doc = judged_beside(cli, bad, good)
    assert unreadable(doc)[""] == "wheel member with an empty name"
    assert next(t for t in doc["targets"] if t["name"] == "pkg")["files"] > 1


@pytest.mark.parametrize("raw", ["Name: pkgé\n".encode(), b"Name: =?utf-8?q?p=C3=A9?=\n", b"Name: \xff\xfe\n"])
def test_metadata_name_that_is_not_a_distribution_name(tmp_path: Path, raw: bytes) -> None:
    """A non-ASCII (or RFC 2047 encoded) Name is not a distribution name: the file name's is kept."""
    whl = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as zf:
        zf.writestr("pkg-1.0.dist-info/METADATA", b"Metadata-Version: 2.1\n" + raw + b"Version: 1.0\n\n")
        zf.writestr("pkg/_C.so", (BIN / "libmulti.so").read_bytes())
    (item,) = WheelTarget(str(whl)).iter_items()
    assert (item.package, item.version) == ("pkg", "1.0") and item.facts.error is None


def test_cubin_member_cut_short_read_via_kernels(tmp_path: Path, cli: Any, good: Path) -> None:
    """A bare cubin whose ELF stops after 1,000 bytes: its header still says sm_90a, so it is judged; listing
    its kernels fails with a reason (scan --kernels), and check --kernels judges the package beside it."""
    cubin = (BIN / "k_sm90a.cubin").read_bytes()
    bad = build_wheel(tmp_path / "pkg-1.0-py3-none-any.whl", [("pkg/cubins/cut.cubin", cubin[:1000], 8)])
    doc = judged_beside(cli, bad, good)
    pkg = next(t for t in doc["targets"] if t["name"] == "pkg")
    assert pkg["files"] == len(MEMBERS) + 1 and not pkg["unreadable"]
    _rc, out, _ = cli("scan", str(bad), "--kernels", "--json", "--no-cache")
    files = {f["path"].split("!")[-1]: f for f in json.loads(out)["files"]}
    assert files["pkg/cubins/cut.cubin"]["kernel_error"] and files["pkg/cubins/k.cubin"]["kernels"]


def test_spool_directories_of_dead_processes_are_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cudafit killed with SIGKILL leaves its spool directory; the next one that spools removes it (only
    directories of this user's dead cudafit processes)."""
    import tempfile

    from cudafit.targets import wheel_members

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(wheel_members, "_spool_dir", [])
    dead = tmp_path / "cudafit-members-999999999-abc"
    alive = tmp_path / f"cudafit-members-{os.getpid()}-old"
    other = tmp_path / "cudafit-members-x"
    for d in (dead, alive, other):
        d.mkdir()
        (d / "1.member").write_bytes(b"x")
    mine = wheel_members._directory()
    assert not dead.exists() and alive.exists() and other.exists()
    assert Path(mine).parent == tmp_path and Path(mine).name.startswith(f"cudafit-members-{os.getpid()}-")
    wheel_members._cleanup()


def test_json_written_in_pieces_is_byte_identical() -> None:
    """dump_json to a pipe writes a container element at a time (an 88 MB --kernels document never exists as one
    string); the bytes are json.dumps' exactly."""
    import io

    from cudafit.report.console import _write_compact

    docs: list[Any] = [
        {
            "a": [1, {"b": None, "c": [1.5, "xé\n", True]}, []],
            1: {},
            None: "n",
            False: [{}],
            2.5: {"k": [[["d", [1]]]]},
        },
        [],
        {},
        "s",
        3,
        [[[[[[1]]]]]],
    ]
    for doc in docs:
        out = io.StringIO()
        _write_compact(doc, out, 4)
        assert out.getvalue() == json.dumps(doc, separators=(",", ":"))


def test_kernels_listing_orders_holes_across_packages(tmp_path: Path) -> None:
    """Two packages: every hole block (the failing package's first) comes before any information line."""
    partial = tmp_path / "roles-1.0-py3-none-any.whl"
    with zipfile.ZipFile(partial, "w") as zf:
        zf.writestr("roles-1.0.dist-info/METADATA", "Name: roles\nVersion: 1.0\n")
        zf.writestr("roles/_C.so", (BIN / "libroles.so").read_bytes())
    failing = tmp_path / "multi-1.0-py3-none-any.whl"
    with zipfile.ZipFile(failing, "w") as zf:
        zf.writestr("multi-1.0.dist-info/METADATA", "Name: multi\nVersion: 1.0\n")
        zf.writestr("multi/_C.so", (BIN / "libarch_a.so").read_bytes())
        zf.writestr("multi/_D.so", (BIN / "libmulti.so").read_bytes())
    cmd = [sys.executable, "-m", "cudafit", "check", str(partial), str(failing), "--kernels", "--no-probe"]
    wide = {**os.environ, "COLUMNS": "250"}
    p = subprocess.run([*cmd, "--gpu", "H100", "--gpu", "T4"], capture_output=True, text=True, check=False, env=wide)
    out = p.stdout
    holes, info = out.split("Kernels without code for the GPU")[1].split("Code for other GPUs")
    assert holes.index("roles 1.0") < len(holes) and "multi 1.0" not in holes  # multi runs on both
    assert "hopper_only_wgmma_like" in info and "multi 1.0" in info  # libarch_a's sm_90a/100a/120a: gated on 7.5
    p = subprocess.run(
        [*cmd, "--gpu", "GTX 1080 Ti", "--gpu", "H100"], capture_output=True, text=True, check=False, env=wide
    )
    holes = p.stdout.split("Kernels without code for the GPU")[1].split("Code for other GPUs")[0]
    assert holes.index("multi 1.0") < holes.index("roles 1.0")  # fails on 6.1 for both; multi sorts first
    assert "fails on 6.1; partial on 9.0" in holes  # roles: the table's words per GPU


def test_prefixed_stream_gives_back_the_sniffed_bytes_in_any_read_size() -> None:
    """Image layers and remote wheels sniff a member's first 64 bytes, then hand the reader one stream that
    starts at byte 0 again: read in chunks, read whole (the image copy returned only the head on read(-1))
    and read into a buffer, the bytes are the member's."""
    import io

    from cudafit.targets.wheel_members import PrefixedStream

    data = bytes(range(256)) * 3
    chunks = []
    stream = PrefixedStream(data[:64], io.BytesIO(data[64:]))
    while chunk := stream.read(50):
        chunks.append(chunk)
    assert b"".join(chunks) == data and [len(c) for c in chunks[:3]] == [50, 14, 50]
    assert PrefixedStream(data[:64], io.BytesIO(data[64:])).read() == data
    assert PrefixedStream(data[:64], io.BytesIO(data[64:])).read(None) == data
    buf = bytearray(100)
    stream = PrefixedStream(data[:64], io.BytesIO(data[64:]))
    assert stream.readinto(buf) == 64 and bytes(buf[:64]) == data[:64]
    assert stream.readinto(buf) == 100 and bytes(buf) == data[64:164]
