"""Value types: parsing, canonical strings, ordering, errors (and the module's doctests)."""

from __future__ import annotations

import doctest

import pytest

from cudafit import model
from cudafit.errors import CudafitError, ValueParseError
from cudafit.model import (
    ArchVariant,
    ComputeCapability,
    CudaVersion,
    DriverVersion,
    parse_compute_capability,
    parse_cuda_version,
    parse_driver_version,
    parse_ptx_isa_version,
    parse_ptx_target,
    parse_sm_arch,
)


def test_doctests() -> None:
    assert doctest.testmod(model).failed == 0


@pytest.mark.parametrize("text", ["8.6", "86", "sm_86", "sm86", "compute_86", "SM_86", " 8.6 "])
def test_compute_capability_forms(text: str) -> None:
    assert parse_compute_capability(text) == ComputeCapability(8, 6)


def test_ordering_and_str() -> None:
    assert ComputeCapability(8, 6) < ComputeCapability(8, 9) < ComputeCapability(9, 0) < ComputeCapability(12, 1)
    assert str(parse_sm_arch("sm_100f")) == "sm_100f"
    assert parse_sm_arch("sm_90a").variant is ArchVariant.ARCH_SPECIFIC
    assert str(parse_ptx_target("compute_120f")) == "compute_120f"
    assert parse_ptx_isa_version(".version 8.8") < parse_ptx_isa_version("9.0")
    assert parse_cuda_version("12080") == CudaVersion(12, 8)
    assert parse_cuda_version("cu128") == CudaVersion(12, 8)
    assert parse_cuda_version("13.0.1") > parse_cuda_version("13.0")
    assert str(parse_driver_version("580.65.06")) == "580.65.06"
    assert parse_driver_version("570.26") < parse_driver_version("570.124.06") < DriverVersion((580,))
    assert hash(parse_sm_arch("sm_90a")) == hash(parse_sm_arch("sm_90a"))


@pytest.mark.parametrize(
    ("fn", "text"),
    [
        (parse_compute_capability, "ampere"),
        (parse_sm_arch, "compute_90"),
        (parse_ptx_target, "sm_90"),
        (parse_ptx_isa_version, "nine"),
        (parse_cuda_version, "twelve"),
        (parse_driver_version, "580.x"),
    ],
)
def test_parse_errors_are_clear(fn, text: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueParseError) as info:
        fn(text)
    assert text in str(info.value)
    assert isinstance(info.value, CudafitError)
    assert isinstance(info.value, ValueError)
