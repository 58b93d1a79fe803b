"""The fork-based map: order, weights, a failing child recomputed in the parent; scan --json through it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cudafit.targets.parallel import map_forked

BIN = Path(__file__).parent / "fixtures" / "bin"
pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def square(x: int) -> int:
    return x * x


def test_order_is_kept() -> None:
    items = list(range(50))
    assert map_forked(square, items, weights=[50 - i for i in items], workers=3) == [x * x for x in items]


def test_a_failing_child_is_recomputed() -> None:
    parent = os.getpid()

    def flaky(x: int) -> int:
        if os.getpid() != parent:
            raise RuntimeError("worker broke")
        return x + 1

    assert map_forked(flaky, list(range(40)), weights=[1] * 40) == list(range(1, 41))


def test_scan_json_fast_path_equals_the_dict_renderer(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    for i in range(40):  # enough files for the parallel path
        d = tree / f"d{i % 4}"
        d.mkdir(parents=True, exist_ok=True)
        shutil.copy(BIN / ["libmulti.so", "libptxonly.so", "libstatic.a", "k_sm90a.cubin"][i % 4], d / f"f{i}.so")
    env = {**os.environ, "CUDAFIT_CACHE_DIR": str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "cudafit", "scan", str(tree), "--json"]
    fast = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout
    cached = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout  # from the merged cache
    assert json.loads(fast) == json.loads(cached)
    assert list((tmp_path / "cache").glob("scan-*/*"))
    code = (
        "import json, sys; from cudafit.targets import open_target; "
        "from cudafit.report.scan import FileReport, render_scan_json; "
        "items = open_target(sys.argv[1]).iter_items(); "
        "print(json.dumps(render_scan_json([FileReport(i.facts, i.package, i.version, i.runtime_compiled) "
        "for i in items])))"
    )
    slow = subprocess.run([sys.executable, "-c", code, str(tree)], capture_output=True, text=True, check=True).stdout
    assert json.loads(fast) == json.loads(slow)
    assert json.loads(fast)["summary"]["files"] == 50  # 40 files + 10 archive members
