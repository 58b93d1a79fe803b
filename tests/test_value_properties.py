"""Property tests for the value parsers every input reaches: any text gives a value or one ValueParseError.

The fuzz campaign found ``'²'.isdigit()`` and 5,000-digit numbers crashing ``int()`` behind parsers;
these properties state the contract for all text (not the examples): a parser returns a value whose
canonical ``str`` parses back to itself, or raises :class:`ValueParseError` (a ``CudafitError``), never
anything else.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from cudafit.audit.spec import SpecError, parse_require
from cudafit.documents import parse_ascii_int
from cudafit.errors import UnknownGpuError, ValueParseError
from cudafit.model import (
    ComputeCapability,
    parse_compute_capability,
    parse_cuda_version,
    parse_driver_version,
    parse_ptx_isa_version,
    parse_ptx_target,
    parse_sm_arch,
)
from cudafit.rules.gpus import resolve_gpu

# Text near the grammars (digits of every kind, separators, prefixes) and arbitrary text.
_NEAR = st.text(alphabet="0123456789²³¹٣۹.,;+ _-smcomputeltoafPTXcuCUDAv\t", max_size=24)
_ANY = st.text(max_size=40)
_TEXT = st.one_of(_NEAR, _ANY, st.integers(min_value=0, max_value=10**30).map(str), st.just("9" * 5000))


def _value_or_parse_error(parse: Any, text: str) -> Any:
    try:
        return parse(text)
    except ValueParseError:
        return None


_PARSERS = (
    parse_cuda_version,
    parse_driver_version,
    parse_ptx_isa_version,
    parse_sm_arch,
    parse_ptx_target,
    parse_compute_capability,
)


@settings(max_examples=400)
@given(_TEXT)
@example("00")  # found by this property: sm_0 was accepted and printed as a name that does not parse
@example("²²²²")
@example("000")  # found by this property: a driver version 000 printed as "0", which does not parse
@example("0099.1")
def test_value_parsers_return_a_value_that_round_trips_or_a_parse_error(text: str) -> None:
    for parse in _PARSERS:
        value = _value_or_parse_error(parse, text)
        if value is not None:
            assert parse(str(value)) == value  # the canonical form parses back to the same value


@given(st.integers(min_value=0, max_value=12), st.integers(min_value=0, max_value=9))
def test_compute_capability_forms_agree(major: int, minor: int) -> None:
    cc = ComputeCapability(major, minor)
    forms = [f"{major}.{minor}"]
    if major >= 1:
        forms += [f"sm_{major}{minor}", f"compute_{major}{minor}", f"{major}{minor}"]
    for form in forms:
        assert parse_compute_capability(form) == cc


@settings(max_examples=300)
@given(st.one_of(_NEAR, _ANY, st.lists(_NEAR, max_size=6).map(";".join), st.lists(_NEAR, max_size=6).map(" ".join)))
def test_arch_lists_parse_or_raise_a_spec_error(text: str) -> None:
    """``--require`` / TORCH_CUDA_ARCH_LIST / CMake / nvcc lists: requirements, or one SpecError."""
    try:
        reqs = parse_require(text)
    except SpecError:
        return
    for r in reqs:
        assert isinstance(r.cc, ComputeCapability)
        assert r.ccs


@settings(max_examples=300)
@given(st.one_of(_NEAR, _ANY, st.sampled_from(["RTX 3090", "a100", "H100 SXM", "sm_86", "8.6", "1080ti", "²"])))
def test_gpu_names_resolve_or_raise_unknown_gpu(text: str) -> None:
    message = ""
    try:
        r = resolve_gpu(text)
    except UnknownGpuError as err:
        message = err.message
        r = None
    assert message if r is None else isinstance(r.compute_capability, ComputeCapability)


@given(st.one_of(_NEAR, _ANY, st.integers(min_value=0, max_value=10**18).map(str)))
def test_ascii_ints_are_exactly_ascii_digit_strings(text: str) -> None:
    value = parse_ascii_int(text)
    stripped = text.strip()
    ascii_digits = stripped != "" and all("0" <= c <= "9" for c in stripped) and len(stripped) <= 19
    assert (value is not None) == (ascii_digits and int(stripped) <= 1 << 62)
    if value is not None:
        assert value == int(stripped)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
_ITEM = st.fixed_dictionaries(
    {},
    optional={
        "metadata": st.fixed_dictionaries({}, optional={"name": _JSON, "version": _JSON}) | _JSON,
        "download_info": st.fixed_dictionaries(
            {}, optional={"url": _JSON, "archive_info": st.fixed_dictionaries({}, optional={"hashes": _JSON}) | _JSON}
        )
        | _JSON,
    },
)


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries({}, optional={"install": st.lists(_ITEM | _JSON, max_size=5) | _JSON}) | _JSON)
@example({"install": [{"metadata": {"name": "Torch", "version": "2.8.0"}, "download_info": {"url": "https://x/t.whl"}}]})
def test_pip_install_report_of_any_shape_yields_typed_rows_never_raises(doc: Any) -> None:
    """pip's installation report is outside input: any shape gives rows of strings, or none, never an error."""
    from cudafit.find.deps import _iter_report

    for dep in _iter_report(doc):
        assert isinstance(dep.name, str) and dep.name
        assert isinstance(dep.version, str) and isinstance(dep.url, str)
        assert dep.sha256 is None or isinstance(dep.sha256, str)
