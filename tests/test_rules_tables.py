"""The packaged data tables: validated on load, invariants, and the lookups the engine uses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cudafit.model import ComputeCapability, CudaVersion, PtxIsaVersion, parse_driver_version, parse_sm_arch
from cudafit.rules import tables

ROOT = Path(__file__).parent.parent


def test_tables_load_and_carry_sources() -> None:
    t = tables.load_tables()
    assert len(t.gpus) >= 200
    assert ComputeCapability(12, 1) in t.limits
    assert t.sources["min_driver"].startswith("https://docs.nvidia.com/")
    for name in ("gpus.json", "compute_capabilities.json", "toolkits.json"):
        doc = json.loads((ROOT / "src/cudafit/rules/data" / name).read_text())
        assert doc["schema_version"] == tables.SCHEMA_VERSION
        assert doc["as_of"]


def test_limits_match_the_programming_guide() -> None:
    lim = tables.cc_limits(ComputeCapability(8, 6))
    assert lim is not None
    assert lim.max_shared_memory_per_block_optin == 101376  # PG13 Table 31: 99 KB
    h100 = tables.cc_limits(ComputeCapability(9, 0))
    assert h100 is not None
    assert h100.max_shared_memory_per_block_optin == 232448  # 227 KB
    g80 = tables.cc_limits(ComputeCapability(1, 0))  # the legacy rows (scripts/reference): 16 KB, 512 threads
    assert g80 is not None and (g80.max_static_shared_memory_per_block, g80.max_threads_per_block) == (16384, 512)
    assert tables.cc_limits(ComputeCapability(1, 4)) is None  # no such compute capability


def test_driver_ptx_isa_recipe() -> None:
    """driver -> newest toolkit whose minimum it meets -> that toolkit's PTX ISA (fatbin_spec.md §E.4)."""
    assert tables.driver_max_ptx_isa(parse_driver_version("580.65.06")) == PtxIsaVersion(9, 0)
    assert tables.driver_max_ptx_isa(parse_driver_version("575.51.03")) == PtxIsaVersion(8, 8)
    assert tables.driver_max_ptx_isa(parse_driver_version("560.35.03")) == PtxIsaVersion(8, 5)
    # the table's rows before 11.8 (release notes Table 3 and the PTX ISA release history): a 470 driver is CUDA
    # 11.4's and JITs ISA 7.4 at most, a 418 driver CUDA 10.1's (6.4); before them only a bound was known (7.7)
    assert tables.driver_max_ptx_isa(parse_driver_version("470.57.02")) == PtxIsaVersion(7, 4)
    assert tables.driver_max_ptx_isa(parse_driver_version("418.67")) == PtxIsaVersion(6, 4)
    assert tables.toolkit_for_driver(parse_driver_version("390.116")) == CudaVersion(9, 1)
    assert tables.toolkit_min_driver(CudaVersion(13, 0)) == parse_driver_version("580.65.06")
    assert tables.toolkit_min_driver(CudaVersion(12, 0), "windows") == parse_driver_version("527.41")


def test_toolkit_targets() -> None:
    assert parse_sm_arch("sm_61") not in tables.toolkit_targets(CudaVersion(13, 0))
    assert parse_sm_arch("sm_61") in tables.toolkit_targets(CudaVersion(12, 9))
    assert parse_sm_arch("sm_107f") in tables.toolkit_targets(CudaVersion(13, 5))
    assert parse_sm_arch("sm_100f") in tables.toolkit_targets(CudaVersion(12, 9))
    assert tables.toolkit_targets(CudaVersion(10, 0)) == ()


def test_invalid_data_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from cudafit.errors import RuleDataError

    real = tables._load

    def broken(name: str) -> dict:  # type: ignore[type-arg]
        doc = real(name)
        if name == "toolkits.json":
            doc["ptx_isa"]["13.5"] = "7.0"  # a newer toolkit with an older ISA
        return doc

    tables.load_tables.cache_clear()
    monkeypatch.setattr(tables, "_load", broken)
    with pytest.raises(RuleDataError):
        tables.load_tables()
    monkeypatch.setattr(tables, "_load", real)
    tables.load_tables.cache_clear()
    assert tables.load_tables()


@pytest.mark.skipif(not (ROOT.parent / "shared" / "reference" / "gpus.csv").exists(), reason="needs ../shared")
def test_data_is_regenerated_by_the_script(tmp_path: Path) -> None:
    code = (
        "import sys, json; sys.path.insert(0, 'scripts'); import gen_rules_data as g; "
        "from pathlib import Path; d = g.build(Path('../shared/reference')); "
        "print(json.dumps(d))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    built = json.loads(out)
    for name, doc in built.items():
        assert json.loads((ROOT / "src/cudafit/rules/data" / name).read_text()) == doc


def test_an_old_driver_jits_only_its_own_toolkits_ptx(tmp_path: Path) -> None:
    """PTX ISA 7.4 (CUDA 11.4) on an 8.6 GPU: a 470 driver (CUDA 11.4) JIT-compiles it; a 460 driver (CUDA 11.2, ISA
    7.2 at most) cannot, although it runs CUDA 11 runtimes.  Before the table had the rows below 11.8, the 460 driver
    read as JIT-capable (the bound 7.7); a 418 driver (CUDA 10.1) now says 6.4 as well as its runtime floor."""
    from builders import BASE_FLAGS, elf, entry, fatbin
    from cudafit.analysis import analyze
    from cudafit.binary import inspect_path
    from cudafit.model import Gpu
    from cudafit.rules.status import Status
    from cudafit.targets.interface import ScanItem

    so = tmp_path / "k.so"
    so.write_bytes(elf([(".nv_fatbin", fatbin(entry(1, 80, flags=BASE_FLAGS, code_version=(7, 4))))]))
    item = ScanItem("k", "1", str(so), inspect_path(str(so)))
    gpu = [Gpu("GeForce RTX 3090", ComputeCapability(8, 6))]

    def verdict(driver: str) -> tuple[Status, list[str]]:
        v = analyze([item], gpu, driver=parse_driver_version(driver)).packages[0].verdicts[0]
        return v.status, [r.code for r in v.reasons]

    assert verdict("470.57.02")[0] is Status.JIT
    status, codes = verdict("460.27.03")
    assert status is Status.FAILS and "ptx-isa-too-new-for-driver" in codes
    assert "ptx-isa-too-new-for-driver" in verdict("418.67")[1]
