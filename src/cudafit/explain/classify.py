"""Score every catalogue category on a message and rank the findings, most likely first.

Several categories often match one log (a torch warning *and* the ``no kernel image`` error; an
``sm_90a`` next to ``no kernel image``).  Scores add the weights of matching patterns; a few
precedence rules then pick the root cause: an ``a``/``f`` arch beside ``no kernel image`` is the
sharper diagnosis of the same failure, and the ``FATAL ... built for smXX`` line names the cause
of any ``invalid device function`` around it.  ``unknown`` is returned alone when nothing reaches
:data:`~cudafit.explain.catalogue.MIN_SCORE`: saying so beats guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from cudafit.explain.catalogue import CATEGORIES, MIN_SCORE, UNKNOWN, Category
from cudafit.explain.extract import clean, extract_facts

__all__ = ["Finding", "classify"]

_MAX_LINES = 5


@dataclass(frozen=True)
class Finding:
    """One explanation of the text: category, evidence, cause and fixes, and how sure it is.

    ``evidence`` holds ``lines`` (the matching lines, trimmed) and the extracted facts
    (:func:`cudafit.explain.extract.extract_facts`); ``confidence`` is in [0, 1].
    """

    category: str
    title: str
    confidence: float
    evidence: dict[str, Any]
    cause: str
    fixes: tuple[str, ...]
    score: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON form (one item of ``cudafit.explain/1``'s ``findings``)."""
        return {
            "category": self.category,
            "title": self.title,
            "confidence": self.confidence,
            "evidence": self.evidence,
            "cause": self.cause,
            "fixes": list(self.fixes),
        }


def _confidence(score: float) -> float:
    return round(min(1.0, score / 4.0), 2)


def _finding(cat: Category, score: float, lines: list[str], facts: dict[str, Any]) -> Finding:
    evidence = {"lines": list(dict.fromkeys(lines))[:_MAX_LINES], **facts}
    return Finding(cat.id, cat.title, _confidence(score), evidence, cat.cause, cat.fixes, score)


def _matched_lines(body: str, pattern: re.Pattern[str]) -> list[str]:
    return [line.strip()[:300] for line in body.splitlines() if pattern.search(line)][:3]


def _score(cat: Category, body: str) -> tuple[float, list[str]]:
    score = 0.0
    lines: list[str] = []
    for pat in cat.patterns:
        if pat.regex.search(body):
            score += pat.weight
            lines.extend(_matched_lines(body, pat.regex))
    return score, lines


def classify(text: str) -> list[Finding]:
    """Findings for ``text``, most likely first; a single ``unknown`` finding when none fits."""
    body = clean(text)
    facts = extract_facts(body)
    scores: dict[str, tuple[float, list[str]]] = {}
    for cat in CATEGORIES:
        score, lines = _score(cat, body)
        if score:
            scores[cat.id] = (score, lines)

    def bump(cat_id: str, delta: float) -> None:
        if cat_id in scores:
            scores[cat_id] = (scores[cat_id][0] + delta, scores[cat_id][1])

    # An 'a'/'f' arch alone is not a failure; beside "no kernel image" it is the sharper diagnosis.
    if "arch-specific-mismatch" in scores:
        only = re.search(r"only supports", body, re.I)
        if "no-kernel-image" in scores or "mixed-gpu" in scores:
            bump("arch-specific-mismatch", scores.get("no-kernel-image", (2.0, []))[0])
        elif not only:
            del scores["arch-specific-mismatch"]
    # "FATAL: kernel ... built for smXX" explains an "invalid device function" next to it.
    if "ptx-jit-lower-arch" in scores:
        bump("ptx-jit-lower-arch", 1.0)
    # A guard's message carrying "sm75" is not an arch-specific failure.
    if "capability-guard" in scores and "arch-specific-mismatch" in scores and "no-kernel-image" not in scores:
        del scores["arch-specific-mismatch"]
    # ptxas' "Unsupported .version" is an offline compiler too old for the PTX, not the driver.
    if "jit-toolchain-too-old" in scores and "ptx_isa" in facts:
        bump("ptx-too-new-for-driver", -1.0)

    by_id = {c.id: c for c in CATEGORIES}
    found = [_finding(by_id[cid], s, lines, facts) for cid, (s, lines) in scores.items() if s >= MIN_SCORE]
    found.sort(key=lambda f: -f.score)
    if not found:
        return [Finding(UNKNOWN.id, UNKNOWN.title, 0.0, {"lines": [], **facts}, UNKNOWN.cause, UNKNOWN.fixes)]
    return found


def with_changes(finding: Finding, **changes: Any) -> Finding:
    """A copy of ``finding`` with fields replaced (``confidence`` follows ``score``)."""
    if "score" in changes and "confidence" not in changes:
        changes["confidence"] = _confidence(changes["score"])
    return replace(finding, **changes)
