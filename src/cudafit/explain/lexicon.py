"""The categories' vocabularies, for a line no pattern or form reads.

Each emitter words its check its own way: the forms (:mod:`.forms`) match phrasings, and phrasings written from one
set of emitters match few of another's (tests/fixtures/explain_emitters: tuning the forms on one half of the mined
emitters moved the other half from 144 to 151 of 241).  What the emitters of one category share is not a phrase but
the *kinds of words* on one line: a driver check names the driver, a version and a comparison; a toolchain that does not
know a GPU names a compiler, a target and a refusal; a capability check names the hardware and a requirement or a
refusal.  Those kinds come from the categories' definitions (shared/docs/error_categories.md) and the documents behind
them, not from any one emitter:

* driver-too-old -- CUDA Compatibility: a runtime or code needs a driver of at least a version.
* jit-toolchain-too-old -- NVCC's GPU feature list: a compiler that does not know a target refuses it.
* capability-guard -- the Programming Guide's compute capabilities: a library refusing a GPU below what it needs.
* device-mismatch -- operands of one operation on two devices (PyTorch's CUDA semantics, the other frameworks alike).

A line is read only where every kind is on it and the line itself reports a failure, and only when nothing else in
the text matched and no unrelated failure (out of memory, an illegal address, ...) is named; the finding starts at
the minimum score (classify raises it a point above weaker matches, as every rule that decides does).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from cudafit.explain.forms import COMPAT_DOC, NO_DRIVER, NVCC_ARCH, PG_CC, TORCH_CUDA_SEMANTICS

__all__ = ["VOCABULARIES", "Vocabulary", "iter_vocabulary_lines"]


_GENERATIONS = r"Kepler|Maxwell|Pascal|Volta|Turing|Ampere|Ada|Lovelace|Hopper|Blackwell"
# A compute capability, an SM or a GPU generation (not a bare "GPU": every CUDA message names one).
_HARDWARE = (
    rf"\bcompute[ _-]?capabilit(?:y|ies)\b|\bcompute[ _]cap\b|\bCUDA capability\b|\bcc\s*(?:[<>=:]\s*|\s)\d\.?\d\b|"
    rf"\bsm[_ ]?\d{{2,3}}[af]?\b|\bSM\s?\d{{1,3}}(?:\.\d)?\b|\bsm\s*(?:version|arch)\b|\bGPU arch(?:itecture)?s?\b|"
    rf"\b(?:{_GENERATIONS})\b"
)
# What a check says it needs, or that it refuses.
_REQUIRES = (
    r"\brequire[sd]?\b|\brequirement\b|\bneeds?\b|\bminimum\b|\bat least\b|\bor (?:higher|newer|later|above)\b|"
    r"(?:>=|≥)\s*\d|\d\s*\+(?!\+)|\bonly (?:supports?|supported|available|works?)\b|\bnot supported\b|\bunsupported\b|"
    r"\bdoes(?: not|n'?t) support\b|\bno longer supported\b|\btoo old\b|\bbelow\b|\bless than\b|\blower than\b|"
    r"\bnot (?:compatible|high enough|available on)\b|\bincompatible\b"
)
_DRIVER = r"\bdrivers?\b"
# A version: a driver branch (535.104), a CUDA release (CUDA 12.4, 12.4), or a driver API number (12040).
_VERSION = r"\b\d{3}\.\d{2,3}(?:\.\d+)?\b|\bCUDA\s*\d{1,2}(?:\.\d)?\b|\b1\d\.\d\b|\b\d{1,2}0[0-9]0\b"
_DRIVER_COMPARE = (
    r"\btoo old\b|\boutdated\b|\bolder\b|\binsufficient\b|\bupdate\b|\bupgrade\b|\bnewer\b|\bminimum\b|\bat least\b|"
    r"\brequire[sd]?\b|\bnot support\w*\b|\bdoes(?: not|n'?t) support\b|\bbelow\b|\blower\b|\bor (?:higher|later)\b"
)
_COMPILER = (
    r"\bnvcc\b|\bptxas\b|\bnvrtc\b|\bnvlink\b|\bNVVM\b|\bLLVM\b|\bclang\b|\bNVPTX\b|\bCUDA (?:toolkit|compiler)\b|"
    r"\btoolkit\b|\bcompiler\b"
)
_TARGET = r"\bsm_?\d{2,3}[af]?\b|\bcompute_\d{2,3}[af]?\b|\bgpu-(?:name|architecture|code)\b|\bGPU arch(?:itecture)?\b"
_REFUSES_TARGET = (
    r"\bunsupported\b|\bnot supported\b|\bunknown\b|\binvalid\b|\bnot defined\b|\bnot recogni[sz]ed\b|"
    r"\bdoes(?: not|n'?t) (?:support|know|recogni[sz]e)\b|\bcannot (?:compile|target|generate)\b|\btoo old\b"
)
_DEVICES = (
    r"\bcuda:\d\b|\bcpu:\d\b|\bCUDA:\d\b|\bCPU:\d\b|\bdevice(?:_type)?\s*[=:]?\s*(?:cpu|cuda|gpu)\b|"
    r"\b(?:cpu|cuda|gpu) (?:tensor|array|device)s?\b|\bdevices?\b"
)
_APART = (
    r"\bsame device\b|\bdifferent devices?\b|\bdevice mismatch\b|\bmismatch(?:ed)? devices?\b|"
    r"\bon (?:the )?wrong device\b|\bnot on (?:the )?(?:same|expected|correct) device\b"
)
# No driver at all (the driver forms' veto), a host shared memory, a package not installed, NVML's kernel-module
# mismatch: what these words also appear in and is none of the categories.
_NOT_THE_CATEGORY = re.compile(
    NO_DRIVER + r"|\bNo module named\b|/dev/shm|\bdriver (?:is )?not (?:loaded|found|installed)\b|"
    r"Driver/library version mismatch",
    re.I,
)


@dataclass(frozen=True)
class Vocabulary:
    """The kinds of words every one of which a line of ``category`` holds; ``veto`` the words that rule it out."""

    category: str
    kinds: tuple[re.Pattern[str], ...]
    source: str
    veto: re.Pattern[str] | None = None

    def reads(self, line: str) -> bool:
        return all(k.search(line) for k in self.kinds) and not (self.veto and self.veto.search(line))


def _kinds(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.I) for p in patterns)


# In precedence order: a line that names a compiler, a target and a refusal is the toolchain's; one that names the
# driver, a version and a comparison the driver's; a capability line otherwise (never one naming a compiler or the
# driver).
VOCABULARIES: tuple[Vocabulary, ...] = (
    Vocabulary("jit-toolchain-too-old", _kinds(_COMPILER, _TARGET, _REFUSES_TARGET), NVCC_ARCH),
    Vocabulary(
        "driver-too-old", _kinds(_DRIVER, _VERSION, _DRIVER_COMPARE), COMPAT_DOC, re.compile(r"\bno driver\b", re.I)
    ),
    Vocabulary("capability-guard", _kinds(_HARDWARE, _REQUIRES), PG_CC, re.compile(_COMPILER + "|" + _DRIVER, re.I)),
    Vocabulary("device-mismatch", _kinds(_DEVICES, _APART), TORCH_CUDA_SEMANTICS),
)


def iter_vocabulary_lines(text: str) -> Iterator[tuple[Vocabulary, str]]:
    """Each line (up to 400 characters) that holds every kind of word of a vocabulary, with the first vocabulary in
    precedence order it reads as; nothing where the text says there is no driver or names a host's shared memory."""
    if _NOT_THE_CATEGORY.search(text):
        return
    for raw in text.splitlines():
        line = raw.strip()
        if not line or len(line) > 400:
            continue
        for vocabulary in VOCABULARIES:
            if vocabulary.reads(line):
                yield vocabulary, line
                break
