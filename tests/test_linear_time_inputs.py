"""Parsers of outside input outside explain take linear time on long runs of one character (a scan of every
module-level regex on 8 KB runs, session 12): GPU names from an inventory, selectors, messages with paths."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

import pytest

from cudafit.actions import inside_site
from cudafit.fleet.selectors import parse_label_selector
from cudafit.report.matrix import short_gpu_name


def _ratio(run: Callable[[int], object]) -> tuple[float, float]:
    def took(n: int) -> float:
        start = time.perf_counter()
        run(n)
        return time.perf_counter() - start

    return took(25_000), took(100_000)


@pytest.mark.parametrize(
    "run",
    [
        lambda n: short_gpu_name("NVIDIA A100" + " " * n + "x"),
        lambda n: short_gpu_name("H100" + "-" * n),
        lambda n: inside_site("/" * n),
        lambda n: parse_label_selector("!" + " " * n + "=x"),
    ],
)
def test_long_runs_take_linear_time(run: Callable[[int], object]) -> None:
    try:
        small, large = _ratio(run)
    except ValueError:  # a selector that does not parse still answers in time
        small, large = _ratio(lambda n: _quiet(run, n))
    assert large < 5.0
    assert large < 8 * max(small, 0.02)


def _quiet(run: Callable[[int], object], n: int) -> None:
    with contextlib.suppress(ValueError):
        run(n)
