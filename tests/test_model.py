"""Value types: parsing, canonical strings, ordering, errors (and the module's doctests)."""

from __future__ import annotations

import doctest
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

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


# The grammar parse_compute_capability implemented with regular expressions before it was
# written by hand for the guard's import budget; the hand parser must accept exactly the same.
_CC_DOTTED = re.compile(r"^(\d{1,2})\.(\d)$")
_ARCH_RE = re.compile(r"^(?:(sm|compute|lto)_?)?(\d{2,3})([af]?)$")


def regex_parse_compute_capability(text: str) -> ComputeCapability:
    s = str(text).strip().lower()
    m = _CC_DOTTED.match(s)
    if m:
        return ComputeCapability(int(m.group(1)), int(m.group(2)))
    m = _ARCH_RE.match(s)
    if m:
        return ComputeCapability.from_arch_number(int(m.group(2)))
    raise ValueParseError(text)


def outcome(fn, text: str) -> object:  # type: ignore[no-untyped-def]
    try:
        return fn(text)
    except ValueParseError:
        return "error"


_CC_ALPHABET = "0123456789.afsmcompulto_ \t\n٣AFSM"


@given(st.text(alphabet=_CC_ALPHABET, max_size=12))
def test_hand_parser_equals_the_regular_expressions(text: str) -> None:
    assert outcome(parse_compute_capability, text) == outcome(regex_parse_compute_capability, text)


_EDGES = "8.6 12.1 123.4 8.66 8. .6 86 100f sm_100a sm__86 compute86 lto_90 sm_1000 sm_8 86af smx86 computesm86"


@pytest.mark.parametrize("text", [*_EDGES.split(), "٨.٦", "sm_٨٦", "8.6.1", "", "sm_", "a", "05"])
def test_hand_parser_edge_cases(text: str) -> None:
    assert outcome(parse_compute_capability, text) == outcome(regex_parse_compute_capability, text)


def test_compute_capability_behaves_like_the_frozen_dataclass_it_was() -> None:
    import copy
    import pickle

    from cudafit import _values

    cc = ComputeCapability(8, 6)
    assert model.ComputeCapability is _values.ComputeCapability  # one class for every layer
    assert repr(cc) == "ComputeCapability(major=8, minor=6)"
    assert cc == ComputeCapability(8, 6)
    assert cc != (8, 6)
    assert hash(cc) == hash((8, 6))
    assert pickle.loads(pickle.dumps(cc)) == cc
    assert copy.deepcopy(cc) == cc
    assert sorted([ComputeCapability(9, 0), cc, ComputeCapability(7, 5)])[0] == ComputeCapability(7, 5)
    assert max(cc, ComputeCapability(12, 0)) == ComputeCapability(12, 0)
    with pytest.raises(TypeError):
        _ = cc < (9, 0)  # type: ignore[operator]
    with pytest.raises(AttributeError, match="cannot assign"):
        cc.major = 9  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del cc.minor  # type: ignore[misc]
    match cc:
        case ComputeCapability(major, minor):
            assert (major, minor) == (8, 6)
