"""The explain probes (tests/fixtures/explain_probes): reports written from NVIDIA's mechanisms by writers who never saw
the classifier, as a breadth check beside the corpus of real threads.  Floors are the measured figures rounded down;
the README says which sets were blind when first scored."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from cudafit.explain import classify

PROBES = [
    json.loads(line)
    for line in (Path(__file__).parent / "fixtures" / "explain_probes" / "probes.jsonl").read_text("utf-8").splitlines()
    if line.strip()
]
FLOORS = {"a": 0.90, "b": 0.93, "c": 0.87, "d": 0.87, "e": 0.83, "f": 0.84}


def test_the_probes_are_what_the_readme_says() -> None:
    assert len(PROBES) == 1040
    assert Counter(p["set"] for p in PROBES) == {"a": 140, "b": 160, "c": 180, "d": 180, "e": 180, "f": 200}
    assert all(set(p) == {"set", "text", "category", "why", "verbatim"} for p in PROBES)


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_probe_set_accuracy(name: str) -> None:
    rows = [p for p in PROBES if p["set"] == name]
    wrong = [(p["category"], classify(p["text"])[0].category) for p in rows]
    right = sum(want == got for want, got in wrong)
    misses = Counter((want, got) for want, got in wrong if want != got)
    assert right / len(rows) >= FLOORS[name], f"{name}: {right}/{len(rows)}; misses {misses.most_common(8)}"


def test_probes_of_unrelated_failures_stay_unknown() -> None:
    rows = [p for p in PROBES if p["category"] == "unknown"]
    given = [(p["set"], classify(p["text"])[0].category) for p in rows if classify(p["text"])[0].category != "unknown"]
    assert not given
