"""Message families added from their emitters' format strings (session 6, lead): each message below is the
emitter's format filled with other values than any corpus record, and must get its category and cite its source."""

from __future__ import annotations

import pytest

from cudafit.explain import classify
from cudafit.explain.catalogue import OLLAMA_DISCOVER, XLA_LOCAL_CLIENT

CASES = [
    # ollama discover/llama_server.go: slog.Info("skipping CUDA device — compute capability not in compiled
    # architectures", "device", description, "cc", cc, "archs", cudaArchs, "libDirs", libDirs)
    (
        'time=2026-03-02T10:11:12.000Z level=INFO source=llama_server.go:212 msg="skipping CUDA device — compute '
        'capability not in compiled architectures" device="NVIDIA GeForce GTX 1060 6GB" cc=610 '
        'archs="[750 800 860 890 900 1000 1200]" libDirs="[/usr/lib/ollama /usr/lib/ollama/cuda_v13]"',
        "no-kernel-image",
        OLLAMA_DISCOVER,
    ),
    (
        "skipping CUDA device - compute capability not in compiled architectures device=Orin cc=870",
        "no-kernel-image",
        OLLAMA_DISCOVER,
    ),
    # xla/client/local_client.cc, LocalExecutable::ValidateExecutionOptions: InvalidArgument("executable is built
    # for device %s of type \"%s\"; cannot run it on device %s of type \"%s\"")
    (
        'jaxlib.xla_extension.XlaRuntimeError: INVALID_ARGUMENT: executable is built for device CUDA:1 of type '
        '"NVIDIA GeForce RTX 3090"; cannot run it on device CUDA:0 of type "NVIDIA GeForce GTX 1080 Ti"',
        "mixed-gpu",
        XLA_LOCAL_CLIENT,
    ),
]


@pytest.mark.parametrize(("text", "category", "source"), CASES)
def test_emitted_messages_get_their_category_and_cite_the_emitter(text: str, category: str, source: str) -> None:
    (top, *_rest) = classify(text)
    assert top.category == category
    assert source in top.evidence.get("sources", [])


@pytest.mark.parametrize(
    "text",
    [
        # the same words outside the emitters' sentences are not these failures
        "the compiled architectures list is printed at start-up: archs=[750 800 860]",
        "executable is built for device CUDA:0",
    ],
)
def test_fragments_alone_are_not_these_failures(text: str) -> None:
    assert classify(text)[0].category == "unknown"
