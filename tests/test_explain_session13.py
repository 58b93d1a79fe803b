"""Issue 18, session 13: knowledge that carries to threads explain has not seen -- which GPUs have which hardware
features (NVIDIA's tables), and which GPUs a library's kernels serve -- with neighbours that must keep their
reading."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from cudafit.explain import classify
from cudafit.explain.arch_features import GpuMention
from cudafit.explain.hw_features import HW_FEATURES, iter_features_lacking
from cudafit.model import parse_compute_capability


def _feature(name: str):  # type: ignore[no-untyped-def]
    return next(f for f in HW_FEATURES if f.name.startswith(name))


@pytest.mark.parametrize(
    ("feature", "has", "lacks"),
    [
        # the Programming Guide's throughput table: native FP16 at full rate on 5.3, 6.0, 6.2 and 7.0+, 1/64 on 6.1
        ("fast FP16", ["5.3", "6.0", "6.2", "7.0", "7.5", "12.0"], ["3.5", "5.0", "5.2", "6.1"]),
        ("INT8", ["6.1", "6.2", "7.5", "8.9"], ["5.2", "6.0"]),
        ("tensor cores", ["7.0", "7.2", "7.5", "9.0"], ["6.0", "6.1", "6.2"]),
        ("bfloat16", ["8.0", "8.6", "9.0", "12.1"], ["7.0", "7.5"]),
        ("TF32", ["8.0", "8.7"], ["7.5"]),
        ("FP8", ["8.9", "9.0", "10.0", "12.0"], ["8.0", "8.6", "8.7"]),
        ("FP4", ["10.0", "10.3", "11.0", "12.0", "12.1"], ["8.9", "9.0"]),
    ],
)
def test_feature_tables(feature: str, has: list[str], lacks: list[str]) -> None:
    f = _feature(feature)
    assert [cc for cc in has if not f.has(parse_compute_capability(cc))] == []
    assert [cc for cc in lacks if f.has(parse_compute_capability(cc))] == []


@pytest.mark.parametrize(
    "text",
    [
        # TensorRT's builder when platformHasFastFp16() is false, on a Maxwell 5.2 card
        "platform does not have FP16 support.\nI am using a Geforce GTX 950.",
        # Paddle-TRT's engine.cc on a 6.1 card (FP16 at 1/64 rate)
        "GPU: 1080Ti  cuda: 9.0\nI0623 engine.cc:80] You specify FP16 mode, but the hardware do not support FP16 "
        "speed up, use FP32 instead.",
        "Tesla P100 (6.0): int8 calibration is not supported, falling back",
        "Warning: no tensor cores on GeForce GTX 1080, mixed precision gives no speed-up",
        "this model's FP8 checkpoint cannot run: FP8 not supported on NVIDIA A100-SXM4-80GB",
    ],
)
def test_a_feature_denied_beside_a_gpu_lacking_it_is_a_guard(text: str) -> None:
    assert classify(text)[0].category == "capability-guard"


def test_the_finding_names_the_feature_and_gpu() -> None:
    finding = classify("platform does not have FP16 support.\nI am using a Geforce GTX 950.")[0]
    assert finding.evidence["features_lacking"] == ["fast FP16 arithmetic: Geforce GTX 950 (5.2)"]


@pytest.mark.parametrize(
    "text",
    [
        # the GPU has the feature: the denial is about something else (a CPU path, a build option)
        "platform does not have FP16 support.\nI am using a GeForce RTX 3090.",
        # a denial of the feature with no GPU named: no table to read
        "platform does not have FP16 support.",
        # the feature named, but nothing denies it
        "Running FP16 inference on a GTX 950 gives NaN after 3 steps",
        # an unrelated failure beside the denial
        "CUDA out of memory. Tried to allocate 2.00 GiB\nbf16 not supported, using fp32. GPU: Tesla T4",
        # a person's own words about their card, or a question: no check refused anything
        "my GTX 1080 does not have tensor cores so mixed precision gives no speedup - is that expected?",
        "does the GTX 950 not support fp16?",
    ],
)
def test_neighbours_are_not_this_guard(text: str) -> None:
    gpus = [GpuMention(parse_compute_capability("8.6"), "RTX 3090")]
    if "3090" in text:
        assert list(iter_features_lacking(text, gpus)) == []
    assert classify(text)[0].category != "capability-guard" or "3090" in text


def test_a_mixed_host_with_one_gpu_that_has_the_feature_is_not_read_as_lacking_it() -> None:
    gpus = [
        GpuMention(parse_compute_capability("6.1"), "GTX 1080"),
        GpuMention(parse_compute_capability("8.6"), "RTX 3090"),
    ]
    assert list(iter_features_lacking("bf16 is not supported", gpus)) == []
    assert [f.name for f, _g, _l in iter_features_lacking("bf16 is not supported", gpus[:1])] == ["bfloat16"]


def test_the_fix_is_to_run_without_the_feature() -> None:
    from cudafit.explain import explain_text

    finding = explain_text("GPU: Tesla T4\nRuntimeError: bf16 is not supported on this device")[0]
    assert finding.category == "capability-guard"
    assert "Tesla T4 (7.5) has no bfloat16" in finding.cause
    assert finding.fixes[0].startswith("use float16")
    assert not any("guard is wrong" in fix for fix in finding.fixes)


# -- libraries' ranges of GPUs (src/cudafit/explain/data/library_support.json) --------------------------------------


def test_the_library_table_follows_its_schema_and_cites_a_source_per_row() -> None:
    import json
    from importlib.resources import files

    import jsonschema

    data = json.loads(files("cudafit.explain").joinpath("data/library_support.json").read_text())
    schema = json.loads(files("cudafit.explain").joinpath("data/library_support.schema.json").read_text())
    jsonschema.validate(data, schema)
    from cudafit.explain.libraries import load_library_support

    rows = load_library_support()
    assert len(rows) == len(data["libraries"])
    # a documentation page, or a file of the project's repository ("owner/repo:path")
    assert [r.id for r in rows if not re.match(r"https://|[\w.-]+/[\w.-]+:\S", r.source)] == []


@pytest.mark.parametrize(
    ("library", "serves", "refuses"),
    [
        ("deepgemm", ["9.0", "10.0", "10.3"], ["8.0", "8.9", "12.0", "12.1"]),
        ("flash-attn-2", ["8.0", "8.6", "9.0", "12.0"], ["7.5", "7.0", "6.1"]),
        ("sageattention", ["8.0", "8.6", "8.9", "9.0", "12.0"], ["7.5", "8.7", "10.0"]),
        ("torch-inductor-triton", ["7.0", "7.5"], ["6.1", "5.2"]),
        ("jax-cuda13", ["7.5", "12.0"], ["7.0", "6.1"]),
    ],
)
def test_library_ranges(library: str, serves: list[str], refuses: list[str]) -> None:
    from cudafit.explain.libraries import load_library_support

    row = next(r for r in load_library_support() if r.id == library)
    assert [cc for cc in serves if not row.serves(parse_compute_capability(cc))] == []
    assert [cc for cc in refuses if row.serves(parse_compute_capability(cc))] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # DeepGEMM serves SM90 and SM100 only: its assertion on a 12.0 card, whatever its words
        (
            "File \"deep_gemm/__init__.py\", line 40, in fp8_gemm_nt\nRuntimeError: Assertion error "
            "(csrc/jit_kernels/heuristics/common.hpp:61): Unknown recipe\nGPU: NVIDIA GeForce RTX 5080",
            "capability-guard",
        ),
        # SageAttention's dispatch knows 8.0, 8.6, 8.9, 9.0, 12.0, 12.1 only
        ("sageattn(q, k, v) fails on my Tesla T4 with a RuntimeError", "capability-guard"),
        # torch.compile's Triton backend needs 7.0
        ("torch.compile(model) crashes on a GTX 1080 Ti: BackendCompilerFailed", "capability-guard"),
        # JAX's CUDA 13 wheels start at 7.5: a V100 meets a build without code for it
        (
            "jax[cuda13] 0.7.2\nRuntimeError: jaxlib failed to run the first computation on Tesla V100",
            "no-kernel-image",
        ),
    ],
)
def test_a_failure_beside_a_library_and_a_gpu_outside_its_range(text: str, expected: str) -> None:
    finding = classify(text)[0]
    assert finding.category == expected
    assert "library_range" in finding.evidence


@pytest.mark.parametrize(
    "text",
    [
        # a GPU the library serves: the failure is something else
        "File \"deep_gemm/__init__.py\", line 40\nRuntimeError: Unknown recipe\nGPU: NVIDIA H100 80GB HBM3",
        # no failure: a statement of what the library runs on
        "I use sageattn on a Tesla T4 and an RTX 4090",
        # an unrelated failure beside it
        "torch.compile(model) on a GTX 1080 Ti: CUDA out of memory. Tried to allocate 2.00 GiB",
        # no GPU named
        "File \"deep_gemm/__init__.py\", line 40\nRuntimeError: Assertion error: Unknown recipe",
    ],
)
def test_neighbours_of_a_library_outside_its_range(text: str) -> None:
    assert "library_range" not in classify(text)[0].evidence


@pytest.mark.parametrize(
    "unit",
    ["fp16 ", "bf16 not ", "deep_gemm RTX 5080 error ", "GTX 950 fp16 ", "fp16" + " " * 70],
)
def test_a_long_line_of_features_or_libraries_reads_in_linear_time(unit: str) -> None:
    """Each feature name reads a window around it, never its whole line: a line of a hundred thousand "fp16"s costs
    linear time."""
    _assert_linear(lambda n: classify(unit * (n // len(unit))), 25_000, limit=8.0, floor=0.05)


def _assert_linear(run: Callable[[int], object], n: int, *, limit: float, floor: float) -> None:
    """``run`` on 4n units takes under ``limit`` seconds and under six times what n units take."""
    import time

    def took(size: int) -> float:
        start = time.perf_counter()
        run(size)
        return time.perf_counter() - start

    small, large = took(n), took(4 * n)
    assert large < limit
    assert large < 6 * max(small, floor)


# -- pastes as they arrive: a browser's spaces, HTML, structured logs, runners' line prefixes ------------------------

_PLAIN = [
    # PyTorch's cpp_extension check, wrapped as it prints: a prefix on each line must not break the wrapped sentence
    (
        "RuntimeError:\nThe detected CUDA version (12.4) mismatches the version that was used to compile\n"
        "PyTorch (11.8). Please make sure to use the same CUDA versions.",
        "toolkit-mismatch",
    ),
    (">>> import tensorflow as tf\n>>> tf.test.is_built_with_cuda()\nFalse", "wrong-framework-build"),
    (
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
        "CUDA kernel errors might be asynchronously reported at some other API call",
        "no-kernel-image",
    ),
    (
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU "
        "driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx",
        "driver-too-old",
    ),
    (
        'AssertionError: Torch not compiled with CUDA enabled\n  File "app.py", line 3, in <module>',
        "wrong-framework-build",
    ),
    (
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 131072, Hardware limit: "
        "101376. Reducing block sizes or `num_stages` may help.",
        "shared-memory-limit",
    ),
]


def _lines(prefix: str) -> Callable[[str], str]:
    return lambda text: "\n".join(prefix + line for line in text.split("\n"))


_PASTES: dict[str, Callable[[str], str]] = {
    "no-break spaces": lambda t: t.replace(" ", "\u00a0"),
    "zero-width spaces": lambda t: t.replace(": ", ":\u200b "),
    "double spaces": lambda t: t.replace(" ", "  "),
    "HTML references": lambda t: t.replace('"', "&quot;").replace("'", "&#39;").replace("<", "&lt;"),
    "a JSON log line": lambda t: json.dumps({"level": "error", "ts": 1717, "msg": t}),
    "escaped newlines on one line": lambda t: t.replace("\n", "\\n"),
    "torch.distributed ranks": _lines("[rank3]: "),
    "Ray workers": _lines("(RayWorkerWrapper pid=41235, ip=10.0.0.7) "),
    "vLLM workers": _lines("(VllmWorker rank=1 pid=4321) ERROR 08-30 07:32:02 [multiproc_executor.py:512] "),
    "Docker Compose": _lines("inference-1  | "),
    "kubelet CRI logs": _lines("2024-05-01T10:00:00.123456789Z stderr F "),
    "Python logging": _lines("ERROR:root:"),
    "a Markdown quote": _lines("> "),
    "a quote of a rank's line": _lines("> [rank0]: "),
    "inline code per line": lambda t: "\n".join(f"`{line}`" for line in t.split("\n")),
}


@pytest.mark.parametrize("paste", sorted(_PASTES))
@pytest.mark.parametrize(("text", "expected"), _PLAIN)
def test_a_paste_reads_as_the_plain_message(paste: str, text: str, expected: str) -> None:
    assert classify(text)[0].category == expected
    assert classify(_PASTES[paste](text))[0].category == expected


def test_clean_keeps_what_is_not_a_paste_artefact() -> None:
    from cudafit.explain.extract import clean, extract_facts

    # a Windows path's "\nvidia" is no escaped newline; its separators become "/"
    assert clean("C:\\new\\nvidia\\bin\\nvcc.exe failed") == "C:/new/nvidia/bin/nvcc.exe failed"
    # a backtick inside a line is the message's own (xformers' operator names)
    assert clean("`fa3F@0.0.0` is not supported because:") == "`fa3F@0.0.0` is not supported because:"
    # runs of spaces inside a line are one (a line keeps its indentation); an nvidia-smi row still lists its GPU
    row = "|   0  NVIDIA GeForce RTX 3090    Off |  00000000:01:00.0 Off |                  N/A |"
    assert clean(row).startswith("| 0 NVIDIA GeForce RTX 3090 Off |")
    assert extract_facts(clean(row))["gpus"] == [{"name": "NVIDIA GeForce RTX 3090", "compute_capability": "8.6"}]
    assert clean("  File x.py,  line 3") == "  File x.py, line 3"
    # a shell prompt's ">>>" goes with the quoting
    assert clean(">>> import torch") == "import torch"
    # a JSON line that is not a log's (a list, a number) and a line that only looks like JSON stay as written
    assert clean('[1, 2, "sm_90"]') == '[1, 2, "sm_90"]'
    assert clean("{not json}") == "{not json}"
    # a JSON log line cut short (a log reader keeps a long line's start) still has its escapes undone
    cut = json.dumps({"level": "error", "msg": "RuntimeError: CUDA error\nno kernel image is available for execution"})
    assert clean(cut[:70]).endswith('"msg": "RuntimeError: CUDA error\nno kernel image i')


@pytest.mark.parametrize("unit", ["\\n ", "&quot;", "[rank0]: ", "\u00a0", '{"msg": "\\n"}\n', "> ", "a  "])
def test_cleaning_a_long_paste_takes_linear_time(unit: str) -> None:
    from cudafit.explain.extract import clean

    _assert_linear(lambda n: clean(unit * (n // len(unit))), 250_000, limit=4.0, floor=0.02)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # GPUs named in a user's words ("rtx 4090", "a100 80gb") count as the GPUs the log names
        ("the tcgen05 kernels crash on my rtx 4090 with an error", "arch-specific-mismatch"),
        ("uses wgmma, fails on an a100 80gb with an illegal instruction error", "arch-specific-mismatch"),
        ("CUDA_ERROR_INVALID_PTX on my gtx 1080 ti", "no-kernel-image"),
        # ... but PTX said to be made on another GPU is a mixed host's, not this GPU's missing code
        ("CUDA_ERROR_INVALID_PTX: built on the T4 box, run on the V100 box", "mixed-gpu"),
    ],
)
def test_gpus_in_prose_are_gpus_the_log_names(text: str, expected: str) -> None:
    assert classify(text)[0].category == expected


def test_invalid_ptx_beside_two_gpus_is_a_mixed_host() -> None:
    # a CUDA error named alone is a CUDA failure (forms.CUDA_FAILURE), and GPUs of two capabilities beside one are a
    # mixed host's reading, not one GPU's missing code
    text = "RuntimeError: CUDA_ERROR_INVALID_PTX\nGPU 0: NVIDIA GeForce GTX 1080\nGPU 1: NVIDIA GeForce RTX 3090"
    assert classify(text)[0].category == "mixed-gpu"
    oom = "RuntimeError: CUDA_ERROR_OUT_OF_MEMORY\nGPU 0: NVIDIA GeForce GTX 1080\nGPU 1: NVIDIA GeForce RTX 3090"
    assert classify(oom)[0].category == "unknown"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a terminal or a form that hard-wraps: the emitter's one sentence across lines, a word broken at its hyphen
        ("ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-\nname'", "jit-toolchain-too-old"),
        (
            "Ignoring visible gpu device (device: 0, name: GeForce GTX 770, pci bus id: 0000:01:00.0, compute\n"
            "capability: 3.0) with Cuda compute capability 3.0. The minimum required Cuda\ncapability is 3.5.",
            "no-kernel-image",  # TensorFlow's build carries no kernels below its floor (the corpus' convention)
        ),
    ],
)
def test_a_hard_wrapped_message_reads_as_its_sentence(text: str, expected: str) -> None:
    assert classify(text)[0].category == expected


def test_unwrapping_leaves_a_settled_reading_alone() -> None:
    # xformers' operator list, where every operator refused for capability is refused for another reason too: no
    # capability problem, and joining its reason lines must not make one
    text = (
        "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
        "`fa3F@0.0.0` is not supported because:\nmin(query.shape[-1], value.shape[-1]) < 64\n"
        "requires device with capability > (9, 0) but your GPU has capability (8, 6) (too old)\n"
        "`cutlassF-pt` is not supported because:\n    attn_bias type is <class 'torch.Tensor'>"
    )
    assert classify(text)[0].category == "unknown"


def test_an_error_level_taken_off_a_line_still_reports_a_failure() -> None:
    # a statement-like form counts beside a failure: here the only sign of one is the logger's level
    line = "fastdeploy/runtime/backends/tensorrt/trt_backend.cc(141)::Init\tTrtBackend only supports Device::GPU, "
    line += "but now it's Device::CPU."
    assert classify("[ERROR] " + line)[0].category == "device-mismatch"
    assert classify("2024-05-01 10:00:00,123 - fastdeploy - ERROR - " + line)[0].category == "device-mismatch"
    assert classify("[INFO] " + line)[0].category == "unknown"
    # a warning level too, as a "Warning" in the line's own words would be (forms.FAILURE)
    assert classify("[WARN] " + line)[0].category == "device-mismatch"
    assert classify("W0501 10:00:00.123456  4242 trt_backend.cc:141] " + line)[0].category == "device-mismatch"


# -- the review's reproductions (session 13) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a table's "no" belongs to its own column; a numerical symptom is no check; an install error is an install's
        ("Tesla P4 | INT8: no | FP16: yes", "unknown"),
        ("Loss becomes NaN with fp16 on GTX 1080 Ti; no such problem in fp32", "unknown"),
        ("ImportError: No module named 'apex'. Please install apex to use --fp16. GPU: GTX 1080 Ti", "unknown"),
        # TensorRT's info tag "[I]" and "i.e." are no person's words
        (
            "[I] [TRT] Platform does not have fast FP16 support, i.e. the FP16 flag is ignored. GPU: GTX 1080 Ti",
            "capability-guard",
        ),
        # a form of another category that fits better keeps it
        ("The GPU is not used: bf16 unsupported, falling back to CPU. RTX 2080 Ti", "wrong-framework-build"),
        # a structured log whose message is nested
        (
            '{"level": "error", "ts": 1, "error": {"message": "RuntimeError: CUDA error: no kernel image is '
            'available for execution on the device\\nCUDA kernel errors"}}',
            "no-kernel-image",
        ),
    ],
)
def test_review_readings(text: str, expected: str) -> None:
    assert classify(text)[0].category == expected


@pytest.mark.parametrize(
    "text",
    [
        "ModuleNotFoundError: No module named 'flash_attn'\nGPU: Tesla T4",
        "pip install vllm failed: error: subprocess-exited-with-error, building wheel for vllm. GPU: GTX 1080",
        # a build's targets are not the GPU
        "building flash_attn: nvcc -gencode arch=compute_75,code=sm_75 -c flash_fwd.cu\n"
        "error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1",
        # Triton Inference Server is not Triton the compiler
        "Triton Inference Server fails to start on Tesla P4: error: creating server: Internal - failed to load all "
        "models",
    ],
)
def test_review_library_neighbours(text: str) -> None:
    assert "library_range" not in classify(text)[0].evidence


def test_review_clean_cases() -> None:
    from cudafit.explain.extract import clean

    # escapes are undone left to right: a doubled backslash is a path's, not the start of an escape
    windows = (
        'OSError: [WinError 126] Error loading "C:\\\\Users\\\\me\\\\torch\\\\lib\\\\nvrtc64_112_0.dll"'
        "\\nTraceback (most recent call last)"
    )
    assert clean(windows) == (
        'OSError: [WinError 126] Error loading "C:/Users/me/torch/lib/nvrtc64_112_0.dll"\nTraceback (most recent '
        "call last)"
    )
    # a table's first column is no Docker Compose service
    assert clean("sm_80   | A100 | yes\nsm_75   | T4   | no") == "sm_80 | A100 | yes\nsm_75 | T4 | no"
    # only character references are decoded
    assert clean("see https://x.org/?a=1&copy=2&not=3 &quot;x&quot;") == 'see https://x.org/?a=1&copy=2&not=3 "x"'


def test_review_fix_texts() -> None:
    from cudafit.explain import explain_text

    compiled = explain_text("torch.compile fails with an error on my GTX 1080 Ti")[0]
    assert compiled.fixes[0].startswith("run this work without torch.compile (Inductor's Triton kernels)")
    fp4 = explain_text("ValueError: mxfp4 is not supported on this GPU (NVIDIA A100-SXM4-80GB)")[0]
    assert "BF16" in fp4.fixes[0] and "8.9 and newer" in fp4.fixes[0]


def test_a_library_failure_at_the_start_of_a_long_log_is_found() -> None:
    """The log reader keeps the lines that name a library of the table, so the range reading survives a long log."""
    import io

    from cudafit.explain import logread
    from cudafit.explain.logread import read_log

    head = b'File "deep_gemm/utils/layout.py", line 76, in get_recipe\nRuntimeError: Unknown recipe\n'
    head += b"GPU: NVIDIA GeForce RTX 5080\n"
    noise = b"".join(b"step %d loss=0.1234 lr=3e-4 tok/s=48211\n" % i for i in range(12000))
    assert len(noise) > 4 * logread.TAIL_BYTES
    finding = classify(read_log(io.BytesIO(head + noise)).text)[0]
    assert finding.category == "capability-guard" and "library_range" in finding.evidence
