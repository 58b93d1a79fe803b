"""The explain corpus (tests/fixtures/explain_corpus/): loading, the fixed dev/held-out split, scoring.

The corpus holds real CUDA error messages from public issue threads, each labelled with the category the
thread's resolution points at (see the README next to it).  The split is a pure function of the thread's URL,
so a thread never lands on both sides and adding records never moves old ones: a third is held out to measure
how the classifier generalises, the rest is what it may be developed against.  Records marked
``"held_out": true`` (a batch gathered and committed before the classifier was changed again) are held out
whatever their URL hashes to, so that a whole independent batch measures generalisation, not only the URL-hash
third; records marked ``"held_out": false`` (a batch gathered to develop against) are dev likewise.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudafit.explain import classify

CORPUS = Path(__file__).parent / "fixtures" / "explain_corpus" / "corpus.jsonl"
DEV, HELD_OUT = "dev", "held-out"
# The held-out part's two batches: the URL-hash third, and the records gathered as a held-out batch.
HELD_OUT_HASH, HELD_OUT_BATCH = "held-out (URL third)", "held-out (held_out batch)"


def load() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def split_of(url: str) -> str:
    """``held-out`` for a third of the threads (first SHA-256 byte of the URL divisible by 3), else ``dev``."""
    return HELD_OUT if hashlib.sha256(url.encode()).digest()[0] % 3 == 0 else DEV


def part_of(rec: dict[str, Any]) -> str:
    """The part a record belongs to: ``held-out`` when it is marked ``"held_out": true``, ``dev`` when it is
    marked ``"held_out": false`` (a batch gathered to develop against, so none of it is held out by its hash),
    else :func:`split_of` its URL."""
    marked = rec.get("held_out")
    if marked is None:
        return split_of(rec["url"])
    return HELD_OUT if marked else DEV


@dataclass(frozen=True)
class Score:
    """Top-1 accuracy of :func:`classify` on some records, with the records it got wrong."""

    right: int
    total: int
    # (url, label, predicted); kept out of the repr so that a failing held-out assertion never prints its records
    wrong: tuple[tuple[str, str, str], ...] = field(repr=False)

    @property
    def accuracy(self) -> float:
        return self.right / self.total if self.total else 0.0

    def __str__(self) -> str:
        return f"{self.right}/{self.total} ({self.accuracy:.1%})"


def score(records: list[dict[str, Any]]) -> Score:
    wrong: list[tuple[str, str, str]] = []
    for rec in records:
        got = classify(rec["text"])[0].category
        if got != rec["label"]:
            wrong.append((rec["url"], rec["label"], got))
    return Score(len(records) - len(wrong), len(records), tuple(wrong))


def by_category(records: list[dict[str, Any]]) -> dict[str, Score]:
    """:func:`score` per label, so that a weak category is not hidden by the overall figure."""
    labels = sorted({r["label"] for r in records})
    return {label: score([r for r in records if r["label"] == label]) for label in labels}


def parts(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The records of each part, the held-out part also split into its two batches."""
    return {
        DEV: [r for r in records if part_of(r) == DEV],
        HELD_OUT: [r for r in records if part_of(r) == HELD_OUT],
        HELD_OUT_HASH: [r for r in records if "held_out" not in r and split_of(r["url"]) == HELD_OUT],
        HELD_OUT_BATCH: [r for r in records if r.get("held_out")],
    }


def batches(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The held-out batches by name (``batch``): each was gathered at one point of the classifier's history."""
    names = sorted({r["batch"] for r in records if r.get("held_out") and r.get("batch")})
    return {name: [r for r in records if r.get("held_out") and r.get("batch") == name] for name in names}


def scores() -> dict[str, Score]:
    return {part: score(recs) for part, recs in parts(load()).items()}
