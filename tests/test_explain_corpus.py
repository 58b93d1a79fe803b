"""`cudafit explain` on real messages: the corpus of public issue threads, scored on a held-out third.

tests/fixtures/explain_corpus/README.md says how the corpus was collected and labelled.  The classifier was
developed against the dev part only; the held-out part measures whether it generalises (>= 94% top-1), and no
unrelated CUDA error (OOM, illegal address, NCCL, cuDNN, device-side asserts) may be given a category.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from cudafit.explain import CATEGORIES, classify, explain_text, extract_facts
from explain_corpus import (
    DEV,
    HELD_OUT,
    HELD_OUT_BATCH,
    HELD_OUT_HASH,
    batches,
    by_category,
    load,
    part_of,
    parts,
    score,
    split_of,
)

RECORDS = load()
BY_URL = {r["url"]: r for r in RECORDS}
LABELS = {c.id for c in CATEGORIES} | {"unknown"}
# The families issue 11 asks the corpus to span.
PROJECTS = {
    "torch", "vllm", "sglang", "xformers", "flash-attn", "flashinfer", "bitsandbytes", "llama.cpp", "triton", "jax",
    "tensorflow", "onnxruntime", "deepspeed", "ctranslate2", "detectron2", "paddle", "tensorrt", "numba",
    "transformer-engine",
}  # fmt: skip


def test_records_are_well_formed() -> None:
    assert len(RECORDS) >= 290
    assert len(BY_URL) == len(RECORDS), "one record per thread"
    for rec in RECORDS:
        assert {"project", "repo", "number", "url", "text", "label", "resolution", "resolved"} <= rec.keys(), rec
        assert re.fullmatch(rf"https://github\.com/{re.escape(rec['repo'])}/(issues|pull)/{rec['number']}", rec["url"])
        assert rec["label"] in LABELS, rec["url"]
        assert 0 < len(rec["text"]) <= 2000 and rec["resolution"], rec["url"]
        assert not rec.get("unrelated") or rec["label"] == "unknown", rec["url"]


def test_corpus_spans_the_projects_and_categories() -> None:
    assert {r["project"] for r in RECORDS} >= PROJECTS
    assert {r["label"] for r in RECORDS} >= LABELS
    assert sum(1 for r in RECORDS if r.get("unrelated")) >= 20


def test_split_is_a_fixed_third() -> None:
    hashed = [r for r in RECORDS if not r.get("held_out")]
    counts = Counter(split_of(r["url"]) for r in hashed)
    assert 0.25 <= counts[HELD_OUT] / len(hashed) <= 0.42
    assert split_of("https://github.com/sgl-project/sglang/issues/24302") == DEV  # a pure function of the URL
    assert split_of("https://github.com/flashinfer-ai/flashinfer/issues/920") == HELD_OUT


def test_held_out_batch_is_held_out_whatever_its_url_hashes_to() -> None:
    batch = [r for r in RECORDS if r.get("held_out")]
    assert len(batch) >= 60
    assert {part_of(r) for r in batch} == {HELD_OUT}
    assert any(split_of(r["url"]) == DEV for r in batch), "the mark, not the hash, puts these in the held-out part"
    assert sum(1 for r in batch if r.get("unrelated")) >= 10
    for label in ("arch-specific-mismatch", "jit-toolchain-too-old"):
        assert sum(1 for r in batch if r["label"] == label) >= 6, label


# Measured (README of the corpus). The blind session-6 batch scored 111/171 (64.9%) when it was committed, before any
# change; it was split by URL hash into a development half (`issue-18-session6-blind-devhalf`) and a held-out half,
# and every thread a development batch also gathered left its held-out side (64 held-out records remain). After the
# session-6 work, on the same corpus: dev 537/585 (91.8%; 469/585 with the classifier the session started from),
# held-out 343/386 (88.9%; 324/386 before), the blind held-out half 43/64 (37/64 before). The third blind batch
# (`issue-18-session6-blind2`, 134 held-out records, committed before any look at its scores) measured main's
# classifier at 93/134 (69.4%); with it the held-out part is 436/520 (83.8%). Session 7 added development batches
# (each scored before it was tuned on) and a fourth blind batch (`issue-18-session7-blind`, 93 records, committed
# before any look at its scores and read once at the end): on the 613 held-out records the classifier the session
# began with scores 495/613 (80.8%), the session's 518/613 (84.5%; the blind batch 59 -> 65/93, the older 520
# 436 -> 453); development 882/958 (92.1%; 797/958 before). Session 8 added a fifth blind batch
# (`issue-18-session8-blind`, 100 records, committed before any change and read as counts only) and four development
# batches (299 records, each scored when committed): on the 713 held-out records the classifier the session began with
# scores 589/713 (82.6%), the session's 602/713 (84.4%; the blind batch 71 -> 73/100); development 1087 -> 1153/1257
# (91.7%). Session 9 added a sixth blind batch (`issue-18-session9-blind`, 80 records from 70 repositories, mostly
# outside the PyTorch/LLM stack, committed alone and scored once as counts): 42/80 on the classifier the session began
# with, 44/80 on the one it had when the batch was committed; the 793 held-out records 644 -> 652 (82.2%). Floors: the
# measured figures, rounded down.
# A development batch of the same breadth (`issue-18-session9-dev-j`, 60 records) followed: 32/60 on the starting
# classifier, 35/60 when committed; development 1317 records.
# Session 12 added a seventh blind batch (`issue-18-session12-blind`, 81 records from 71 repositories, weighted to the
# six weakest categories, gathered by two helpers blind to the classifier, committed alone and scored once as counts):
# 45/81 on the classifier the session began with and on the one at commit; then split by the URL hash's parity as
# decided before scoring (37 to `issue-18-session12-blind-devhalf`, 44 stay held out): the held-out part is 682/837
# (81.5%).
@pytest.mark.parametrize(("part", "floor"), [(DEV, 0.90), (HELD_OUT, 0.81)])
def test_accuracy(part: str, floor: float) -> None:
    result = score(parts(RECORDS)[part])
    print(f"\nexplain corpus, {part}: {result}")
    if part == DEV:
        detail = "\n".join(f"{u}: {want} -> {got}" for u, want, got in result.wrong)
    else:  # the held-out part is never looked at record by record: counts only
        detail = ", ".join(f"{c} {s.right}/{s.total}" for c, s in by_category(parts(RECORDS)[part]).items())
    assert result.accuracy >= floor, detail


def test_held_out_batches_are_scored_apart() -> None:
    every = parts(RECORDS)
    assert len(every[HELD_OUT]) == len(every[HELD_OUT_HASH]) + len(every[HELD_OUT_BATCH])
    for name in (HELD_OUT_HASH, HELD_OUT_BATCH):
        print(f"\nexplain corpus, {name}: {score(every[name])}")
    named = batches(RECORDS)
    assert sum(len(b) for b in named.values()) == len(every[HELD_OUT_BATCH]), "every held_out record names its batch"
    for name, recs in named.items():
        print(f"explain corpus, held-out batch {name}: {score(recs)}")


def test_every_record_explains_to_valid_json() -> None:
    schema = json.loads((Path(__file__).parent.parent / "src/cudafit/schema/explain.json").read_text())
    for rec in RECORDS:
        doc = {"schema": "cudafit.explain/1", "findings": [f.to_dict() for f in explain_text(rec["text"])]}
        jsonschema.validate(doc, schema)


# The fifth blind batch (`issue-18-session8-blind`, 11 unrelated errors) measured 5 of its unrelated errors given a
# category when it was committed, by the classifier the session began with: the held-out part is never read record by
# record, so those stay counted, and this number may only go down.  The sixth (`issue-18-session9-blind`, 9 unrelated
# errors) measured 3 given a category when it was committed (3 with the session's starting classifier too).  The
# eighth (`issue-18-session13-blind`, 5 unrelated errors, both of those given a category in its held-out half)
# measured 2 given a category when it was committed, with the session's starting classifier too.
HELD_OUT_UNRELATED_MISSES = 10
# Development records the classifier still gives a category, each a message whose words are those of a compatibility
# failure while its thread found another cause: LLVM's NVPTX back end emitting an sm_80 instruction for sm_72 (ptxas:
# "Modifier '.NaN' requires .target sm_80"), cuBLAS' CUBLAS_STATUS_NOT_SUPPORTED from an alignment check on a pointer
# array, error 35 beside a driver that may be new enough.  Known misses, listed so that no other unrelated error may
# join them.
DEV_UNRELATED_MISSES = {
    "https://github.com/JuliaGPU/CUDA.jl/issues/2148",
    "https://github.com/NVIDIA/FasterTransformer/issues/149",
    # error 35 beside driver 550 in a container that did not pass the GPU through: 550 is new enough for the CUDA 12
    # runtime, but which runtime ran is not in the text (explain settles error 35 only for a driver >= every floor)
    "https://github.com/imagegenius/docker-immich/issues/349",
}


def test_unrelated_errors_stay_unknown() -> None:
    unrelated = [r for r in RECORDS if r.get("unrelated")]
    failed = [r for r in unrelated if [(f.category, f.confidence) for f in classify(r["text"])] != [("unknown", 0.0)]]
    # dev records are named; held-out ones only counted (the held-out part is never looked at record by record)
    assert {r["url"] for r in failed if part_of(r) == DEV} <= DEV_UNRELATED_MISSES
    held_out = sum(1 for r in failed if part_of(r) != DEV)
    print(f"\nexplain corpus, held-out unrelated errors given a category: {held_out}")
    assert held_out <= HELD_OUT_UNRELATED_MISSES


# Part 3 of issue 11: the names a failure carries, structured so that they can be joined with the kernels a
# library has no code for.  Dev-part records only.
EXTRACTED = [
    ("https://github.com/sgl-project/sglang/issues/24302", "operators", ["GemmaRMSNorm"]),
    ("https://github.com/microsoft/onnxruntime/issues/22441", "operators", ["Sigmoid"]),
    ("https://github.com/tensorflow/tensorflow/issues/47058", "operators", ["Abs"]),
    ("https://github.com/ZengboJamesWang/Qwen3.5-35B-A3B-openclaw-dgx-spark/issues/3", "operators", ["SCALE"]),
    ("https://github.com/mozilla-ai/llamafile/issues/434", "kernels", ["vec_dot_q4_K_q8_1_impl_vmmq"]),
    ("https://github.com/jax-ml/jax/issues/13570", "kernels", ["broadcast"]),
    (
        "https://github.com/sgl-project/sglang/issues/748",
        "source_files",
        [
            {
                "file": "sampling.cuh",
                "path": "/tmp/build-via-sdist-akw2qk94/flashinfer-0.1.1+cu121torch2.3/include/flashinfer/sampling.cuh",
                "line": 544,
            }
        ],
    ),
    (
        "https://github.com/daerduoCarey/PyTorchEMD/issues/11",
        "source_files",
        [{"file": "emd_kernel.cu", "path": "/home/user/hdd/github/PyTorchEMD/cuda/emd_kernel.cu", "line": 190}],
    ),
    (
        "https://github.com/ggml-org/llama.cpp/issues/4215",
        "source_files",
        [{"file": "ggml-cuda.cu", "path": "/home/user/Documents/devops/llama.cpp/ggml-cuda.cu", "line": 6701}],
    ),
]


@pytest.mark.parametrize(("url", "key", "expected"), EXTRACTED)
def test_failure_names_are_structured_evidence(url: str, key: str, expected: list[object]) -> None:
    assert split_of(url) == DEV
    facts = extract_facts(BY_URL[url]["text"])
    assert facts[key] == expected
    (top, *_rest) = classify(BY_URL[url]["text"])
    assert top.evidence[key] == expected, "the names travel with the finding"


def test_ggml_facts_name_the_arch_that_ran_and_the_build() -> None:
    facts = extract_facts(BY_URL["https://github.com/mozilla-ai/llamafile/issues/434"]["text"])
    assert facts["built_for"] == "sm_60"
    assert facts["build_archs"] == ["sm_50", "sm_60", "sm_70", "sm_80", "sm_90"]
