"""How far the text carries: an expert reader's text-only labels beside the classifier, counts only.

Why: the corpus is labelled by each thread's resolution, and some records carry the deciding fact only in the
thread (which GPU, a second card, what the build targeted).  ``reader_labels.jsonl`` (next to the corpus) holds,
for every held-out record and a fixed random 200 of the development part, the label an expert CUDA engineer gave
from the record's ``text`` alone (no thread, no search, no classifier), and whether the text was enough to be sure
(``decidable``).  Scoring the resolution labels against it says how much of the corpus a text classifier can get
right at all, and where the classifier falls short of a reader (tests/fixtures/explain_corpus/README.md).

Prints counts per part and per category only: no record's text or URL, so running it on the held-out part tunes
nothing.

Usage:  python scripts/score_reader.py
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from cudafit.explain import classify  # noqa: E402
from explain_corpus import load, part_of  # noqa: E402

READER = ROOT / "tests" / "fixtures" / "explain_corpus" / "reader_labels.jsonl"


def main() -> int:
    reader = {}
    for line in READER.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            reader[row["url"]] = row
    totals: dict[str, Counter[str]] = defaultdict(Counter)
    per_label: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for rec in load():
        row = reader.get(rec["url"])
        if row is None:
            continue
        part, label = part_of(rec), rec["label"]
        got = classify(rec["text"])[0].category
        sure = bool(row["decidable"])
        for counter in (totals[part], per_label[(part, label)]):
            counter["records"] += 1
            counter["reader right"] += row["reader_label"] == label
            counter["classifier right"] += got == label
            counter["decidable"] += sure
            counter["decidable, reader right"] += sure and row["reader_label"] == label
            counter["decidable, classifier right"] += sure and got == label
    for part, c in sorted(totals.items()):
        n = c["records"]
        print(f"{part}: {n} records")
        for k in ("reader right", "classifier right", "decidable"):
            print(f"  {k:30} {c[k]:4d}  ({c[k] / n:.1%} of all)")
        for k in ("decidable, reader right", "decidable, classifier right"):
            print(f"  {k:30} {c[k]:4d}  ({c[k] / max(1, c['decidable']):.1%} of the decidable)")
    print("\nper category: records / reader right / classifier right / decidable")
    for (part, label), c in sorted(per_label.items()):
        counts = " ".join(f"{c[k]:4d}" for k in ("records", "reader right", "classifier right", "decidable"))
        print(f"  {part:9} {label:24} {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
