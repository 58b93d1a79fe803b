"""The GPUs libraries' kernels serve, and the libraries a failure names beside a GPU outside them.

A report often says no more than "DeepGEMM crashes on my RTX 5090" or "sageattn fails with an unspecified launch
failure on an A800": the library's message is vague or missing, but which GPUs the library serves is not a matter
of wording -- its README, its build files and its own checks state it (``data/library_support.json``, one row per
library or feature, each with its source and a quote).  A failure beside a library named there and a GPU outside
its range is that library refusing the GPU (a check of its own, or work dispatched to a GPU it has no kernels for:
``capability-guard``) or, for a wheel whose build lists the architectures it carries, its build lacking code for the
GPU (``no-kernel-image``).

Where a floor moved between releases the table holds the lowest of them, so a row fires only on GPUs below every
release's floor: what a reader would say of the text whichever release the user ran.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

from cudafit.explain.arch_features import GpuMention, line_at
from cudafit.model import ComputeCapability, parse_compute_capability

__all__ = ["LibrarySupport", "iter_libraries_refusing", "library_keywords", "load_library_support"]


@dataclass(frozen=True)
class LibrarySupport:
    """One row of ``data/library_support.json``: the words that name a library (and, for a row about one of its
    features, the feature's words), the compute capabilities it serves, and what a failure outside them is."""

    id: str
    name: str
    words: tuple[str, ...]  # the names as the table writes them
    names: re.Pattern[str]
    features: re.Pattern[str] | None
    min_cc: ComputeCapability | None
    only_majors: frozenset[int]
    only_ccs: frozenset[ComputeCapability]
    reading: str
    scope: str
    source: str

    def serves(self, cc: ComputeCapability) -> bool:
        """Whether the library's kernels serve a GPU of ``cc``."""
        if self.only_ccs:
            return cc in self.only_ccs
        if self.only_majors:
            return cc.major in self.only_majors
        return self.min_cc is not None and cc >= self.min_cc

    def describe(self) -> str:
        """The GPUs it serves, in words ("compute capability 8.0 or newer", "majors 9 and 10 only")."""
        if self.only_ccs:
            return "compute capability " + ", ".join(str(cc) for cc in sorted(self.only_ccs)) + " only"
        if self.only_majors:
            return "compute capability " + " and ".join(f"{m}.x" for m in sorted(self.only_majors)) + " only"
        return f"compute capability {self.min_cc} or newer"


def _words(words: Iterable[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![a-z0-9])(?:{alternatives})(?![a-z0-9])", re.I)


@cache
def load_library_support() -> tuple[LibrarySupport, ...]:
    """The table's rows, in its order."""
    doc = json.loads(files("cudafit.explain").joinpath("data/library_support.json").read_text(encoding="utf-8"))
    rows = []
    for row in doc["libraries"]:
        rows.append(
            LibrarySupport(
                id=row["id"],
                name=row["name"],
                words=tuple(row["names"]),
                names=_words(row["names"]),
                features=_words(row["features"]) if row["features"] else None,
                min_cc=parse_compute_capability(row["min_cc"]) if "min_cc" in row else None,
                only_majors=frozenset(row.get("only_majors", ())),
                only_ccs=frozenset(parse_compute_capability(cc) for cc in row.get("only_ccs", ())),
                reading=row["reading"],
                scope=row["scope"],
                source=row["source"],
            )
        )
    return tuple(rows)


def library_keywords() -> tuple[bytes, ...]:
    """Every name of the table, lower-cased bytes: the log reader keeps the lines that hold one, so that a library's
    name beside a GPU outside its range survives a long log."""
    return tuple(sorted({w.lower().encode() for lib in load_library_support() for w in lib.words}))


# What fails for reasons of its own beside a library's name: an install, a download, a configuration.
_OTHER_FAILURE = re.compile(
    r"No module named|ModuleNotFoundError|cannot import name|\bHTTP\s?(?:Error\s?)?\d{3}\b|\b40[134]\b|"
    r"\bconnect(?:ion)?\b|timed? ?out\b|\bdownload\w*|\bpip install\b|building wheel|subprocess-exited-with-error|"
    r"\bKV cache\b|max(?:imum)?[ _](?:seq|model)[ _]len|\bpermission denied\b|No such file",
    re.I,
)
# how many lines around the library's name its failure may stand
_NEAR = 2


def _failure_near(lines: list[str], at: int, failure: re.Pattern[str]) -> bool:
    """Whether ``failure`` matches on line ``at`` or within :data:`_NEAR` lines of it."""
    return any(failure.search(line) for line in lines[max(0, at - _NEAR) : at + _NEAR + 1])


def iter_libraries_refusing(
    text: str, gpus: Iterable[GpuMention], failure: re.Pattern[str]
) -> Iterator[tuple[LibrarySupport, GpuMention, str]]:
    """(library, GPU, the line naming the library) for each row of the table whose library (and feature) the text
    names, with a ``failure`` on or near that line, while every GPU it names lies outside the library's range; a GPU
    inside the range leaves the row out (the library serves that card, so the failure says nothing of its range),
    and so does a text whose failure is an install's, a download's or a configuration's."""
    named = list(gpus)
    if not named or _OTHER_FAILURE.search(text):
        return
    lines = text.split("\n")
    for lib in load_library_support():
        m = lib.names.search(text)
        if m is None or (lib.features is not None and lib.features.search(text) is None):
            continue
        if any(lib.serves(g.compute_capability) for g in named):
            continue
        if not _failure_near(lines, text.count("\n", 0, m.start()), failure):
            continue
        yield lib, named[0], line_at(text, m.start(), m.end())
