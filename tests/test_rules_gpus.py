"""GPU name resolution over every row and alias of the data, NVML/nvidia-smi forms, ambiguity."""

from __future__ import annotations

import pytest

from cudafit.errors import UnknownGpuError
from cudafit.model import parse_compute_capability
from cudafit.rules.gpus import iter_gpu_specs, resolve_gpu

SPECS = list(iter_gpu_specs())


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_every_gpu_resolves_from_name_nvml_form_and_aliases(spec) -> None:  # type: ignore[no-untyped-def]
    for query in (spec.name, f"NVIDIA {spec.name}", spec.name.upper(), *spec.aliases):
        r = resolve_gpu(query)
        assert r.compute_capability == spec.compute_capability, query
        assert spec in r.matches or len({m.compute_capability for m in r.matches}) == 1


@pytest.mark.parametrize(
    ("query", "cc"),
    [
        ("NVIDIA GeForce RTX 3090", "8.6"),  # NVML / nvidia-smi names
        ("Tesla V100-SXM2-16GB", "7.0"),
        ("NVIDIA A100-SXM4-80GB", "8.0"),
        ("NVIDIA H100 80GB HBM3", "9.0"),
        ("NVIDIA GB10", "12.1"),
        ("NVIDIA GeForce RTX 2080", "7.5"),
        ("NVIDIA GeForce GTX 1080 Ti", "6.1"),
        ("2080", "7.5"),  # what people type
        ("rtx 3090 ti", "8.6"),
        ("1080ti", "6.1"),
        ("a100", "8.0"),
        ("h100 sxm", "9.0"),
        ("jetson orin", "8.7"),
        ("  RTX   3090 ", "8.6"),
        ("sm_86", "8.6"),
        ("8.6", "8.6"),
        ("sm_120", "12.0"),
    ],
)
def test_known_forms(query: str, cc: str) -> None:
    assert resolve_gpu(query).compute_capability == parse_compute_capability(cc)


def test_shared_cc_lists_products() -> None:
    r = resolve_gpu("8.6")
    assert r.name == "compute capability 8.6"
    assert any(m.name == "GeForce RTX 3090" for m in r.matches)


@pytest.mark.parametrize("query", ["rtx 6000", "titan x", "rtx 5000"])
def test_ambiguous_names_list_candidates(query: str) -> None:
    with pytest.raises(UnknownGpuError) as info:
        resolve_gpu(query)
    assert "ambiguous" in info.value.message
    assert len(info.value.candidates) >= 2


def test_unknown_names_suggest_without_guessing() -> None:
    with pytest.raises(UnknownGpuError) as info:
        resolve_gpu("rtx 3099")
    assert "unknown GPU" in info.value.message
    with pytest.raises(UnknownGpuError):
        resolve_gpu("")
    with pytest.raises(UnknownGpuError):
        resolve_gpu("sm_999")
