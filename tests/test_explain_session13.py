"""Issue 18, session 13: knowledge that carries to threads explain has not seen -- which GPUs have which hardware
features (NVIDIA's tables), and which GPUs a library's kernels serve -- with neighbours that must keep their
reading."""

from __future__ import annotations

import pytest

from cudafit.explain import classify
from cudafit.explain.arch_features import GpuMention
from cudafit.explain.hw_features import HW_FEATURES, iter_features_lacking
from cudafit.model import parse_compute_capability


def _feature(name: str):  # type: ignore[no-untyped-def]
    return next(f for f in HW_FEATURES if f.name.startswith(name))


@pytest.mark.parametrize(
    ("feature", "has", "lacks"),
    [
        # the Programming Guide's throughput table: native FP16 at full rate on 5.3, 6.0, 6.2 and 7.0+, 1/64 on 6.1
        ("fast FP16", ["5.3", "6.0", "6.2", "7.0", "7.5", "12.0"], ["3.5", "5.0", "5.2", "6.1"]),
        ("INT8", ["6.1", "6.2", "7.5", "8.9"], ["5.2", "6.0"]),
        ("tensor cores", ["7.0", "7.2", "7.5", "9.0"], ["6.0", "6.1", "6.2"]),
        ("bfloat16", ["8.0", "8.6", "9.0", "12.1"], ["7.0", "7.5"]),
        ("TF32", ["8.0", "8.7"], ["7.5"]),
        ("FP8", ["8.9", "9.0", "10.0", "12.0"], ["8.0", "8.6", "8.7"]),
        ("FP4", ["10.0", "10.3", "11.0", "12.0", "12.1"], ["8.9", "9.0"]),
    ],
)
def test_feature_tables(feature: str, has: list[str], lacks: list[str]) -> None:
    f = _feature(feature)
    assert [cc for cc in has if not f.has(parse_compute_capability(cc))] == []
    assert [cc for cc in lacks if f.has(parse_compute_capability(cc))] == []


@pytest.mark.parametrize(
    "text",
    [
        # TensorRT's builder when platformHasFastFp16() is false, on a Maxwell 5.2 card
        "platform does not have FP16 support.\nI am using a Geforce GTX 950.",
        # Paddle-TRT's engine.cc on a 6.1 card (FP16 at 1/64 rate)
        "GPU: 1080Ti  cuda: 9.0\nI0623 engine.cc:80] You specify FP16 mode, but the hardware do not support FP16 "
        "speed up, use FP32 instead.",
        "Tesla P100 (6.0): int8 calibration is not supported, falling back",
        "Warning: no tensor cores on GeForce GTX 1080, mixed precision gives no speed-up",
        "this model's FP8 checkpoint cannot run: FP8 not supported on NVIDIA A100-SXM4-80GB",
    ],
)
def test_a_feature_denied_beside_a_gpu_lacking_it_is_a_guard(text: str) -> None:
    assert classify(text)[0].category == "capability-guard"


def test_the_finding_names_the_feature_and_gpu() -> None:
    finding = classify("platform does not have FP16 support.\nI am using a Geforce GTX 950.")[0]
    assert finding.evidence["features_lacking"] == ["fast FP16 arithmetic: Geforce GTX 950 (5.2)"]


@pytest.mark.parametrize(
    "text",
    [
        # the GPU has the feature: the denial is about something else (a CPU path, a build option)
        "platform does not have FP16 support.\nI am using a GeForce RTX 3090.",
        # a denial of the feature with no GPU named: no table to read
        "platform does not have FP16 support.",
        # the feature named, but nothing denies it
        "Running FP16 inference on a GTX 950 gives NaN after 3 steps",
        # an unrelated failure beside the denial
        "CUDA out of memory. Tried to allocate 2.00 GiB\nbf16 not supported, using fp32. GPU: Tesla T4",
    ],
)
def test_neighbours_are_not_this_guard(text: str) -> None:
    gpus = [GpuMention(parse_compute_capability("8.6"), "RTX 3090")]
    if "3090" in text:
        assert list(iter_features_lacking(text, gpus)) == []
    assert classify(text)[0].category != "capability-guard" or "3090" in text


def test_a_mixed_host_with_one_gpu_that_has_the_feature_is_not_read_as_lacking_it() -> None:
    gpus = [
        GpuMention(parse_compute_capability("6.1"), "GTX 1080"),
        GpuMention(parse_compute_capability("8.6"), "RTX 3090"),
    ]
    assert list(iter_features_lacking("bf16 is not supported", gpus)) == []
    assert [f.name for f, _g, _l in iter_features_lacking("bf16 is not supported", gpus[:1])] == ["bfloat16"]


def test_the_fix_is_to_run_without_the_feature() -> None:
    from cudafit.explain import explain_text

    finding = explain_text("GPU: Tesla T4\nRuntimeError: bf16 is not supported on this device")[0]
    assert finding.category == "capability-guard"
    assert "Tesla T4 (7.5) has no bfloat16" in finding.cause
    assert finding.fixes[0].startswith("use float16")
    assert not any("guard is wrong" in fix for fix in finding.fixes)
