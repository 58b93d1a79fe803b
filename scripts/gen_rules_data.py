"""Regenerate src/cudafit/rules/data/*.json from the reference CSVs and NVIDIA's tables.

Inputs:
* ../shared/reference/gpus.csv and compute_capabilities.csv (GPU products and per-CC limits,
  each row with its sources; see ../shared/reference/README.md);
* scripts/reference/legacy_gpus.csv and legacy_compute_capabilities.csv (this project's own: the GPUs of compute
  capability 3.5 and below that NVIDIA's legacy list names and the shared table lacks, and the CCs below 3.5, each
  row with its sources; see scripts/reference/README.md), appended after the shared rows;
* the toolkit tables below, transcribed from NVIDIA documentation as cited in
  ../shared/docs/fatbin_spec.md §E.3, §E.4 and §E.7 (each table carries its source URL into
  the JSON).

Usage: python scripts/gen_rules_data.py [REFERENCE_DIR]
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "cudafit" / "rules" / "data"
AS_OF = "2026-11-22"
SCHEMA_VERSION = 1

RELEASE_NOTES = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html"
MINOR_COMPAT = "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"
PTX_UTILS = (
    "NVIDIA cuda-python cuda_bindings/cuda/bindings/utils/_ptx_utils.py (official PTX ISA <-> CUDA release table)"
)
PG13_CC = "https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/compute-capabilities.html"

# Release notes Table 3, "CUDA Toolkit and Corresponding Driver Versions" (GA releases), Linux x86_64.  The rows
# before 11.8 are the same table's older rows (the release notes of CUDA 11.x keep them: 7.0.28 ... 11.7 GA; 11.0's
# GA is 11.0.2, 8.0's the first, 8.0.44); a driver older than 11.8's JIT-compiles only its own toolkit's PTX ISA.
MIN_DRIVER_LINUX = {
    "7.0": "346.46",
    "7.5": "352.31",
    "8.0": "367.48",
    "9.0": "384.81",
    "9.1": "390.46",
    "9.2": "396.26",
    "10.0": "410.48",
    "10.1": "418.39",
    "10.2": "440.33",
    "11.0": "450.51.05",
    "11.1": "455.23",
    "11.2": "460.27.03",
    "11.3": "465.19.01",
    "11.4": "470.42.01",
    "11.5": "495.29.05",
    "11.6": "510.39.01",
    "11.7": "515.43.04",
    "11.8": "520.61.05",
    "12.0": "525.60.13",
    "12.1": "530.30.02",
    "12.2": "535.54.03",
    "12.3": "545.23.06",
    "12.4": "550.54.14",
    "12.5": "555.42.02",
    "12.6": "560.28.03",
    "12.8": "570.26",
    "12.9": "575.51.03",
    "13.0": "580.65.06",
    "13.1": "590.44.01",
    "13.2": "595.45.04",
    "13.3": "610.43.02",
}
# Same table, Windows column (exists up to 12.9; "N/A" from 13.0).
MIN_DRIVER_WINDOWS = {
    "7.0": "347.62",
    "7.5": "353.66",
    "8.0": "369.30",
    "9.0": "385.54",
    "9.1": "391.29",
    "9.2": "397.44",
    "10.0": "411.31",
    "10.1": "418.96",
    "10.2": "441.22",
    "11.0": "451.48",
    "11.1": "456.38",
    "11.2": "460.82",
    "11.3": "465.89",
    "11.4": "471.11",
    "11.5": "496.04",
    "11.6": "511.23",
    "11.7": "516.01",
    "11.8": "520.06",
    "12.0": "527.41",
    "12.1": "531.14",
    "12.2": "536.25",
    "12.3": "545.84",
    "12.4": "551.61",
    "12.5": "555.85",
    "12.6": "560.76",
    "12.8": "570.65",
    "12.9": "576.02",
}
# PTX ISA version of each toolkit: cuda-python's official map (8.6 -> 12.7 ...) and the maximum
# `.version` each ptxas accepts, verified in fatbin_spec.md §E.4 (12.6 ptxas: 8.5).
PTX_ISA = {
    # the PTX ISA document's release history: 4.2 with CUDA 7.0 ... 6.5 with 10.2
    "7.0": "4.2",
    "7.5": "4.3",
    "8.0": "5.0",
    "9.0": "6.0",
    "9.1": "6.1",
    "9.2": "6.2",
    "10.0": "6.3",
    "10.1": "6.4",
    "10.2": "6.5",
    "11.0": "7.0",
    "11.1": "7.1",
    "11.2": "7.2",
    "11.3": "7.3",
    "11.4": "7.4",
    "11.5": "7.5",
    "11.6": "7.6",
    "11.7": "7.7",
    "11.8": "7.8",
    "12.0": "8.0",
    "12.1": "8.1",
    "12.2": "8.2",
    "12.3": "8.3",
    "12.4": "8.4",
    "12.5": "8.5",
    "12.6": "8.5",
    "12.7": "8.6",
    "12.8": "8.7",
    "12.9": "8.8",
    "13.0": "9.0",
    "13.1": "9.1",
    "13.2": "9.2",
    "13.3": "9.3",
    "13.4": "9.4",
    "13.5": "9.5",
}
# `ptxas --help` / `nvcc --list-gpu-code` real targets per toolkit (fatbin_spec.md §E.7).
_T120 = "50 52 53 60 61 62 70 72 75 80 86 87 89 90 90a"
_T128 = _T120 + " 100 100a 101 101a 120 120a"
_T129 = _T128 + " 100f 101f 103 103a 103f 120f 121 121a 121f"
_T130 = "75 80 86 87 88 89 90 90a 100 100a 100f 103 103a 103f 110 110a 110f 120 120a 120f 121 121a 121f"
TARGETS = {
    "11.8": "35 37 50 52 53 60 61 62 70 72 75 80 86 87 89 90",
    "12.0": _T120,
    "12.4": _T120,
    "12.6": _T120,
    "12.8": _T128,
    "12.9": _T129,
    "13.0": _T130,
    "13.1": _T130,
    "13.2": _T130,
    "13.3": _T130,
    "13.4": _T130 + " 107 107a 107f",
    "13.5": _T130 + " 107 107a 107f",
}
# Minor-version compatibility (compatibility guide and release notes Table 2).
MINOR_FLOORS = [
    {"toolkit_major": 13, "min_driver": "580", "upper_driver": None},
    {"toolkit_major": 12, "min_driver": "525", "upper_driver": "580"},
    {"toolkit_major": 11, "min_driver": "450", "upper_driver": "525"},
]
# CCs of Tegra (integrated) GPUs: binary compatibility "is not supported for Tegra" (legacy PG 12 §6.1.2).
TEGRA_CCS = ["3.2", "5.3", "6.2", "7.2", "8.7", "10.1", "11.0"]
TEGRA_SOURCE = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility"


def _split(cell: str) -> list[str]:
    return [c.strip() for c in cell.split(";") if c.strip()]


def _cc_key(cc: str) -> tuple[int, int]:
    major, minor = cc.split(".")
    return int(major), int(minor)


def _num(cell: str) -> int | None:
    return int(cell) if cell.strip() else None


LEGACY = ROOT / "scripts" / "reference"


def _rows(reference: Path, name: str) -> list[dict[str, str]]:
    """The shared table's rows, then this project's legacy rows (which the shared table lacks)."""
    rows: list[dict[str, str]] = []
    for path in (reference / name, LEGACY / f"legacy_{name}"):
        with open(path, newline="", encoding="utf-8") as fh:
            rows.extend(csv.DictReader(fh))
    return rows


def build(reference: Path) -> dict[str, dict[str, object]]:
    gpus = []
    for row in _rows(reference, "gpus.csv"):
        gpus.append(
            {
                "name": row["name"],
                "aliases": _split(row["aliases"]),
                "compute_capability": row["compute_capability"],
                "architecture": row["architecture"],
                "segment": row["segment"],
                "memory_gb": [float(m) for m in _split(row["memory_gb"])],
                "sm_count": _num(row["sm_count"]),
                "chip": row["chip"],
                "verified": row["verified"],
                "source": row["source"],
            }
        )
    ccs = []
    for row in sorted(_rows(reference, "compute_capabilities.csv"), key=lambda r: _cc_key(r["compute_capability"])):
        ccs.append(
            {
                "compute_capability": row["compute_capability"],
                "architecture": row["architecture"],
                "first_cuda_toolkit": row["first_cuda_toolkit"],
                "last_cuda_toolkit": row["last_cuda_toolkit"] or None,
                "max_shared_memory_per_block_optin": int(row["max_shared_memory_per_block_optin_bytes"]),
                "max_shared_memory_per_sm": int(row["max_shared_memory_per_sm_bytes"]),
                "max_static_shared_memory_per_block": int(row["default_static_shared_per_block_bytes"]),
                "max_registers_per_thread": int(row["max_registers_per_thread"]),
                "registers_per_sm": int(row["registers_per_sm"]),
                "max_registers_per_block": int(row["max_registers_per_block"]),
                "max_threads_per_block": int(row.get("max_threads_per_block") or 1024),
                "max_threads_per_sm": int(row["max_threads_per_sm"]),
                "max_warps_per_sm": int(row["max_warps_per_sm"]),
                "max_blocks_per_sm": int(row["max_blocks_per_sm"]),
                "has_arch_specific_variant": row["has_arch_specific_variant"] == "yes",
                "family": row["family"] or None,
                "runs_family_targets": _split(row["runs_family_targets"]),
                "tegra": row["compute_capability"] in TEGRA_CCS,
                "source": row["source"],
            }
        )
    common = {"schema_version": SCHEMA_VERSION, "as_of": AS_OF}
    return {
        "gpus.json": {
            **common,
            "source": (
                "../shared/reference/gpus.csv and scripts/reference/legacy_gpus.csv (see their READMEs for the keys)"
            ),
            "gpus": gpus,
        },
        "compute_capabilities.json": {
            **common,
            "source": f"{PG13_CC} Tables 28-32; legacy guides; ../shared/reference/compute_capabilities.csv; "
            "scripts/reference/legacy_compute_capabilities.csv",
            "tegra_source": TEGRA_SOURCE,
            "compute_capabilities": ccs,
        },
        "toolkits.json": {
            **common,
            "sources": {
                "min_driver": f"{RELEASE_NOTES} Table 3",
                "ptx_isa": PTX_UTILS + "; ptxas maximum .version verified per wheel (fatbin_spec.md §E.4)",
                "targets": "ptxas --help / nvcc --list-gpu-code per toolkit (fatbin_spec.md §E.7)",
                "minor_version_floors": MINOR_COMPAT,
            },
            "min_driver": {"linux": MIN_DRIVER_LINUX, "windows": MIN_DRIVER_WINDOWS},
            "ptx_isa": PTX_ISA,
            "targets": {k: v.split() for k, v in TARGETS.items()},
            "minor_version_floors": MINOR_FLOORS,
        },
    }


def main() -> int:
    reference = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "reference"
    OUT.mkdir(parents=True, exist_ok=True)
    for name, doc in build(reference).items():
        (OUT / name).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {OUT / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
