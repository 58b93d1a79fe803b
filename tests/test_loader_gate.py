"""The module-loader gate (binary/linkage.py): the import check runs only when an import of the driver's
loader can be bound by the file's visible dependency tree (libcuda.so* by name, or a library defining one).

Libraries are built by ``builders.linked`` (``.dynsym``, ``.gnu.hash``/``.hash``, ``.dynamic``) and laid out
as a directory and as a wheel with the same members: both must give the same facts.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from builders import entry, fatbin, linked
from cudafit.binary import inspect_bytes, inspect_path
from cudafit.binary.linkage import (
    FILE_SYSTEM,
    DynamicInfo,
    MemberView,
    defined_loaders,
    file_gate,
    read_dynamic_info,
    search_dirs,
)
from cudafit.targets.cache import cached_inspect, scan_cache
from cudafit.targets.wheel import WheelTarget

KEPT = fatbin(entry(2, 90))  # a fatbin kept as data in .rodata: loaded only when the import can be bound


def importer(**kw: object) -> bytes:
    return linked(imports=("malloc", "cuModuleLoadData"), data=KEPT, **kw)  # type: ignore[arg-type]


SHIM = linked(defines=("cuModuleLoadData", "cuModuleLoadDataEx", "other"))  # TensorFlow's framework library
PLAIN = linked(defines=("cudaMalloc", "other"))


def lay_out(root: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def as_wheel(tmp_path: Path, files: dict[str, bytes]) -> Path:
    wheel = tmp_path / "pkg-1.0-py3-none-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        zf.writestr("pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
    return wheel


def both_ways(tmp_path: Path, files: dict[str, bytes], member: str) -> tuple[tuple[str, ...], int]:
    """(module_loaders, loaded modules) of ``member`` from the extracted directory, asserted equal to the
    wheel's."""
    tree = tmp_path / "tree"
    lay_out(tree, files)
    on_disk = inspect_path(tree / member)
    with scan_cache(False):
        items = {i.path.split("!", 1)[1]: i for i in WheelTarget(str(as_wheel(tmp_path, files))).iter_items()}
    in_wheel = items[member].facts
    got = (on_disk.module_loaders, len(on_disk.loaded_modules))
    assert (in_wheel.module_loaders, len(in_wheel.loaded_modules)) == got
    assert [m.section for m in in_wheel.modules] == [m.section for m in on_disk.modules]
    assert in_wheel.embedded_sections == on_disk.embedded_sections
    return got


def test_a_sibling_defining_the_loader_opens_the_gate(tmp_path: Path) -> None:
    files = {"pkg/libuser.so": importer(needed=("libshim.so.2", "libc.so.6")), "pkg/libshim.so.2": SHIM}
    assert both_ways(tmp_path, files, "pkg/libuser.so") == (("cuModuleLoadData",), 1)


def test_without_the_sibling_the_gate_is_shut(tmp_path: Path) -> None:
    files = {"pkg/libuser.so": importer(needed=("libshim.so.2",))}
    assert both_ways(tmp_path, files, "pkg/libuser.so") == ((), 0)
    # the exact check (bytes without neighbours, or gate=True) still sees the import
    assert inspect_bytes(files["pkg/libuser.so"], "x.so").module_loaders == ("cuModuleLoadData",)
    assert inspect_path(tmp_path / "tree/pkg/libuser.so", gate=True).module_loaders == ("cuModuleLoadData",)


def test_a_sibling_that_does_not_define_it_keeps_it_shut(tmp_path: Path) -> None:
    files = {"pkg/libuser.so": importer(needed=("libplain.so",)), "pkg/libplain.so": PLAIN}
    assert both_ways(tmp_path, files, "pkg/libuser.so") == ((), 0)


def test_libcuda_needed_opens_it_without_being_there(tmp_path: Path) -> None:
    files = {"pkg/libuser.so": importer(needed=("libcuda.so.1",))}
    assert both_ways(tmp_path, files, "pkg/libuser.so") == (("cuModuleLoadData",), 1)


@pytest.mark.parametrize("tag", ["runpath", "rpath"])
def test_runpath_origin_relative_is_searched(tmp_path: Path, tag: str) -> None:
    user = importer(needed=("libshim.so.2",), **{tag: "/opt/nowhere:$ORIGIN/../lib"})
    files = {"pkg/bin/libuser.so": user, "pkg/lib/libshim.so.2": SHIM}
    assert both_ways(tmp_path, files, "pkg/bin/libuser.so") == (("cuModuleLoadData",), 1)
    unlinked = {"pkg/bin/libuser.so": importer(needed=("libshim.so.2",)), "pkg/lib/libshim.so.2": SHIM}
    assert both_ways(tmp_path / "b", unlinked, "pkg/bin/libuser.so") == ((), 0)


def test_runpath_wins_over_rpath_and_absolute_entries_are_not_followed() -> None:
    assert search_dirs("/a/b", ("$ORIGIN/../lib", "${ORIGIN}", "/usr/lib", "lib", "$LIB/x", "$ORIGINx")) == (
        "/a/b",
        "/a/lib",
    )
    both = linked(needed=("x.so",), runpath="$ORIGIN/r", rpath="$ORIGIN/p")
    info = read_dynamic_info(both)
    assert info is not None and info.runpath == ("$ORIGIN/r",)


def test_transitive_needs_libcuda_or_a_definition(tmp_path: Path) -> None:
    files = {
        "pkg/libuser.so": importer(needed=("libmid.so",)),
        "pkg/libmid.so": linked(needed=("libc.so.6", "libcuda.so.1")),
    }
    assert both_ways(tmp_path, files, "pkg/libuser.so") == (("cuModuleLoadData",), 1)
    deeper = {
        "pkg/libuser.so": importer(needed=("libmid.so",)),
        "pkg/libmid.so": linked(needed=("libdeep.so",), runpath="$ORIGIN/../deep"),
        "deep/libdeep.so": SHIM,
    }
    assert both_ways(tmp_path / "d", deeper, "pkg/libuser.so") == (("cuModuleLoadData",), 1)


def test_a_cycle_ends_and_is_judged(tmp_path: Path) -> None:
    closed = {
        "pkg/libuser.so": importer(needed=("liba.so",)),
        "pkg/liba.so": linked(needed=("libb.so",)),
        "pkg/libb.so": linked(needed=("liba.so", "libuser.so")),
    }
    assert both_ways(tmp_path, closed, "pkg/libuser.so") == ((), 0)
    opened = {**closed, "pkg/libb.so": linked(needed=("liba.so", "libshim.so")), "pkg/libshim.so": SHIM}
    assert both_ways(tmp_path / "o", opened, "pkg/libuser.so") == (("cuModuleLoadData",), 1)


def test_a_cycle_seen_from_inside_does_not_poison_the_kept_answers() -> None:
    """b is first reached while a is on the stack; b's closed answer must not be kept (a -> c opens)."""
    libs = {
        "a.so": linked(needed=("b.so", "c.so")),
        "b.so": linked(needed=("a.so",)),
        "c.so": SHIM,
        "user.so": linked(needed=("a.so",)),
        "user2.so": linked(needed=("b.so",)),
    }
    view = MemberView(libs, lambda name: read_dynamic_info(libs[name]))
    for name in ("user.so", "user2.so"):
        info = read_dynamic_info(libs[name])
        assert info is not None
        assert view.gate(name, info.needed, info.runpath) == "c.so"


@pytest.mark.parametrize("style", ["gnu", "sysv"])
def test_hash_table_lookups(style: str) -> None:
    data = linked(imports=("cuModuleLoadDataEx",), defines=("cuLibraryLoadData", "x", "y"), hash_style=style)
    info = read_dynamic_info(data)
    assert info is not None
    assert info.defines == ("cuLibraryLoadData",)  # the import of cuModuleLoadDataEx is not a definition
    assert read_dynamic_info(linked(defines=("a", "b"), hash_style=style)).defines == ()  # type: ignore[union-attr]


def test_without_a_hash_table_the_library_is_assumed_to_define_them() -> None:
    info = read_dynamic_info(linked(defines=("x",), hash_style=""))
    assert info is not None and info.defines  # unknown: the gate stays open rather than wrongly shut


def test_not_a_library_has_no_dynamic_info() -> None:
    assert read_dynamic_info(b"") is None
    assert read_dynamic_info(b"\x7fELF" + b"\0" * 60) is None
    assert defined_loaders(b"", [], 0, 0, 64) == ()


def test_the_scan_cache_never_serves_facts_of_another_gate_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDAFIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUDAFIT_NO_CACHE", raising=False)
    lay_out(tmp_path, {"pkg/libuser.so": importer(needed=("libshim.so.2",))})
    user = str(tmp_path / "pkg/libuser.so")
    with scan_cache(True):
        assert cached_inspect(user).module_loaders == ()
        assert file_gate(user) is False
    lay_out(tmp_path, {"pkg/libshim.so.2": SHIM})  # the shim arrives; libuser.so itself is unchanged
    os.utime(tmp_path / "pkg")  # (a new directory entry; mtime granularity)
    with scan_cache(True):  # the next scan
        assert file_gate(user) is True
        facts = cached_inspect(user)
    assert facts.module_loaders == ("cuModuleLoadData",) and len(facts.loaded_modules) == 1


def test_the_scan_cache_drops_loaded_modules_when_the_shim_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDAFIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUDAFIT_NO_CACHE", raising=False)
    lay_out(tmp_path, {"pkg/libuser.so": importer(needed=("libshim.so.2",)), "pkg/libshim.so.2": SHIM})
    user = str(tmp_path / "pkg/libuser.so")
    with scan_cache(True):
        assert len(cached_inspect(user).loaded_modules) == 1
    (tmp_path / "pkg/libshim.so.2").unlink()  # the shim goes; libuser.so itself is unchanged (a cache hit)
    os.utime(tmp_path / "pkg")
    with scan_cache(True):
        facts = cached_inspect(user)
    assert facts.module_loaders == () and not facts.loaded_modules


def test_scan_json_renderings_kept_in_the_cache_follow_the_gate(tmp_path: Path) -> None:
    """`scan --json` reuses a file's kept rendering; one whose facts import a loader is rendered again when
    a library that defines the loader arrives beside it (cli/scan.py ``_cached_text``)."""
    import json
    import subprocess
    import sys

    lay_out(tmp_path, {"pkg/libuser.so": importer(needed=("libshim.so.2",))})
    env = {**os.environ, "CUDAFIT_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("CUDAFIT_NO_CACHE", None)

    def loaders() -> list[str]:
        out = subprocess.run(
            [sys.executable, "-m", "cudafit", "scan", str(tmp_path / "pkg"), "--json"],
            capture_output=True, text=True, env=env, check=False,
        ).stdout
        files = json.loads(out)["files"]
        return [n for f in files if f["path"].endswith("libuser.so") for n in f["module_loaders"]]

    assert loaders() == []
    assert loaders() == []  # the kept rendering
    lay_out(tmp_path, {"pkg/libshim.so.2": SHIM})
    os.utime(tmp_path / "pkg")
    assert loaders() == ["cuModuleLoadData"]


def test_a_library_is_read_once_per_identity(tmp_path: Path) -> None:
    lay_out(tmp_path, {"libuser.so": importer(needed=("libplain.so",)), "libplain.so": PLAIN})
    inspect_path(tmp_path / "libuser.so")
    opened = FILE_SYSTEM.opened
    inspect_path(tmp_path / "libuser.so")
    assert FILE_SYSTEM.opened == opened
    lay_out(tmp_path, {"libplain.so": SHIM + b"\0" * 8})  # changed: read again, and now it opens
    os.utime(tmp_path / "libuser.so", ns=(1, 1))  # the user library's own identity changes too
    assert inspect_path(tmp_path / "libuser.so").module_loaders == ("cuModuleLoadData",)
    assert FILE_SYSTEM.opened == opened + 1


def test_segments_and_sections_give_the_same_library() -> None:
    """A real library is read through its program headers (PT_DYNAMIC, as the loader does); the section
    table gives the same DT_NEEDED, search path and definitions (155 real libraries agree too: README)."""
    from cudafit.binary._elf import read_elf_header, read_sections
    from cudafit.binary.linkage import DynamicInfo, dynamic_entries

    data = (Path(__file__).parent / "fixtures" / "bin" / "libloaded.so").read_bytes()
    by_segments = read_dynamic_info(data)
    hdr = read_elf_header(data)
    sections = read_sections(data, hdr)
    needed, runpath = dynamic_entries(data, sections, 0, len(data), 64)
    assert by_segments == DynamicInfo(needed, runpath, defined_loaders(data, sections, 0, len(data), 64))
    assert by_segments is not None and by_segments.needed[0] == "libcuda.so.1" and by_segments.defines == ()


def test_a_wheels_data_members_are_searched_where_pip_installs_them(tmp_path: Path) -> None:
    """``pkg-1.0.data/platlib/...`` is installed beside the wheel's root (PEP 427): a shim there is found."""
    files = {"pkg/libuser.so": importer(needed=("libshim.so.2",)), "pkg-1.0.data/platlib/pkg/libshim.so.2": SHIM}
    with scan_cache(False):
        items = {i.path.split("!", 1)[1]: i for i in WheelTarget(str(as_wheel(tmp_path, files))).iter_items()}
    assert items["pkg/libuser.so"].facts.module_loaders == ("cuModuleLoadData",)
    lay_out(tmp_path / "site", {"pkg/libuser.so": files["pkg/libuser.so"], "pkg/libshim.so.2": SHIM})
    assert inspect_path(tmp_path / "site/pkg/libuser.so").module_loaders == ("cuModuleLoadData",)


def test_a_dense_dependency_graph_is_walked_once_per_library() -> None:
    """40 libraries each needing all the others (no opener): a walk reads each once and ends at once; one
    defining the loader at the far end is still found."""
    import time

    names = [f"l{i}.so" for i in range(40)]
    libs = {n: linked(needed=tuple(m for m in names if m != n)) for n in names}
    reads: list[str] = []

    def read(name: str) -> DynamicInfo | None:
        reads.append(name)
        return read_dynamic_info(libs[name])

    view = MemberView(libs, read)
    started = time.perf_counter()
    assert view.gate("user.so", tuple(names), ()) == ""
    assert time.perf_counter() - started < 2 and sorted(reads) == sorted(names)
    libs["l39.so"] = SHIM
    view = MemberView(libs, lambda name: read_dynamic_info(libs[name]))
    assert view.gate("user.so", ("l0.so",), ()) == "l39.so"
