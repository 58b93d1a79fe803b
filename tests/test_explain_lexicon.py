"""The categories' vocabularies (explain/lexicon.py): a line holding every kind of word of one category, in a text that
reports a failure and that nothing else read, reads as that category at the minimum score."""

from __future__ import annotations

import pytest

from cudafit.explain import classify
from cudafit.explain.catalogue import MIN_SCORE
from cudafit.explain.lexicon import VOCABULARIES, iter_vocabulary_lines


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # wordings no pattern or form holds, each with every kind of its category's words on one line
        ("tvm.error.InternalError: Check failed: (0) is false: Not supported cuda -arch=sm_100", "capability-guard"),
        ("Error: the kernel library refuses this card, Volta is below what it needs", "capability-guard"),
        ("RuntimeError: tensors x and idx live on cuda:0 and cpu, expected the same device", "device-mismatch"),
        ("error: ptxas from the bundled toolkit rejected the target sm_121: unknown", "jit-toolchain-too-old"),
        ("ERROR: host driver 470.82 sits below the CUDA 12.4 floor", "driver-too-old"),
    ],
)
def test_a_line_of_a_vocabulary_reads_as_its_category(text: str, expected: str) -> None:
    finding = classify(text)[0]
    assert finding.category == expected
    assert finding.score == MIN_SCORE  # the weakest reading there is, below a form's and an emitter's
    assert finding.evidence["forms"] == [f"the {expected} vocabulary on one line"]


@pytest.mark.parametrize(
    "text",
    [
        # the words in a statement or a question: no failure reported
        "Volta is below what the kernel library needs",
        "which gpu architecture is unsupported here?",
        # an unrelated failure beside them
        "RuntimeError: CUDA error: out of memory\nError: Volta is below what the kernel library needs",
        # no driver at all is no old driver
        "Error: no NVIDIA driver found; CUDA 12.4 requires driver 550 or newer",
        # the kinds on different lines, or on a line that reports no failure in a log that does
        "RuntimeError: something failed\nVolta\nis below what it needs",
        "INFO moving every tensor to the same device cuda:0\nERROR: job 17 failed",
    ],
)
def test_no_reading_without_every_kind_on_a_failure_line(text: str) -> None:
    assert classify(text)[0].category == "unknown"


def test_the_vocabularies_cite_a_document() -> None:
    assert all(v.source.startswith("https://") for v in VOCABULARIES)
    assert [v.category for v, _line in iter_vocabulary_lines("nvcc: unknown target sm_121")] == [
        "jit-toolchain-too-old"
    ]
