"""The scan cache: hits for unchanged files, misses after a change, a corrupt cache is a cold scan."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from cudafit.targets import cache as cache_mod
from cudafit.targets import open_target
from cudafit.targets.cache import scan_cache

BIN = Path(__file__).parent / "fixtures" / "bin"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("CUDAFIT_CACHE_DIR", str(d))
    return d


def scan(path: Path, enabled: bool = True) -> list[object]:
    with scan_cache(enabled=enabled):
        return [i.facts for i in open_target(str(path)).iter_items()]


def test_second_scan_hits_and_a_change_misses(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lib = tmp_path / "lib" / "libmulti.so"
    lib.parent.mkdir()
    shutil.copy(BIN / "libmulti.so", lib)
    first = scan(lib.parent)
    assert list(cache_dir.glob("scan-*/*"))  # one shard per directory of scanned files
    calls: list[str] = []
    real = cache_mod.ScanCache.put

    def spy(self, path, st, facts, embedded=None):  # type: ignore[no-untyped-def]
        calls.append(path)
        real(self, path, st, facts, embedded)

    monkeypatch.setattr(cache_mod.ScanCache, "put", spy)
    assert scan(lib.parent) == first
    assert calls == []  # served from the cache
    shutil.copy(BIN / "libptxonly.so", lib)
    os.utime(lib, ns=(1, 1))
    changed = scan(lib.parent)
    assert calls  # re-read
    assert changed != first


def test_corrupt_cache_is_a_cold_scan(tmp_path: Path, cache_dir: Path) -> None:
    first = scan(BIN / "libmulti.so")
    (f,) = cache_dir.glob("scan-*/*")
    f.write_bytes(b"garbage")
    assert scan(BIN / "libmulti.so") == first


def test_disabled(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scan(BIN / "libmulti.so", enabled=False)
    monkeypatch.setenv("CUDAFIT_NO_CACHE", "1")
    scan(BIN / "libmulti.so")
    assert not cache_dir.exists()


def test_cached_json_renderings_follow_file_changes(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    tree = tmp_path / "t"
    tree.mkdir()
    shutil.copy(BIN / "libmulti.so", tree / "a.so")
    env = {**os.environ, "CUDAFIT_CACHE_DIR": str(tmp_path / "c")}
    cmd = [sys.executable, "-m", "cudafit", "scan", str(tree), "--json"]

    def archs() -> list[str]:
        doc = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout)
        return [e["arch"] for f in doc["files"] for e in f["entries"]]

    first = archs()
    assert archs() == first  # served from the cache
    assert list((tmp_path / "c").glob("json-scan-*.pickle"))
    shutil.copy(BIN / "libptxonly.so", tree / "a.so")
    os.utime(tree / "a.so", ns=(2, 2))
    assert archs() == ["compute_75"]


def test_shards_per_directory(tmp_path: Path, cache_dir: Path) -> None:
    """Facts of unrelated trees live in other shards: a scan loads only the directories it reads."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        shutil.copy(BIN / "libmulti.so", tmp_path / name / "libmulti.so")
        scan(tmp_path / name)
    assert len(list(cache_dir.glob("scan-*/*"))) == 2
    with scan_cache() as cache:
        assert [i.facts for i in open_target(str(tmp_path / "a")).iter_items()]
        assert len(cache.facts._shards) == 1
