"""Issue 18, session 12: what the seventh blind batch's development half showed explain could not read, each read
from its emitter's source or NVIDIA's documents, with neighbours that must keep their reading."""

from __future__ import annotations

import re

import pytest

from cudafit.explain import classify
from cudafit.explain.catalogue import _wrappable

_FA_STUB = "FATAL: FlashAttention requires building with sm version sm80-sm90, but was built for < 8.0!"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # LLVM's NVPTXSubtarget: the PTX ISA the toolchain pins is older than the target needs; an 'a' target changes
        # nothing (XLA in CUDA-12 jaxlib on a Rubin GPU)
        (
            "LLVM Fatal Error while compiling target binary for module: jit_iota\n"
            "Reason: PTX version 8.8 does not support target 'sm_107a'.\nMinimum required PTX version is 9.4.",
            "jit-toolchain-too-old",
        ),
        ("LLVM ERROR: PTX version 7.8 does not support target 'sm_90a'.", "jit-toolchain-too-old"),
        # a message wrapped where a space was is the same message (TileLang's host wrapper)
        (
            "tvm.error.InternalError: Failed to set the allowed dynamic shared\nmemory size to 196608 [192 KB]",
            "shared-memory-limit",
        ),
        # MXNet's imperative_utils.h: the message tells how to build the GPU in
        (
            "src/imperative/./imperative_utils.h:90: GPU support is disabled. Compile MXNet with USE_CUDA=1 to "
            "enable GPU support.\nmxnet.base.MXNetError: Operator _ones is not implemented for GPU.",
            "wrong-framework-build",
        ),
        # ONNX Runtime's CPU package over the GPU one: only the CPU provider is left
        (
            "installing onnxruntime over onnxruntime-gpu breaks it: only `CPUExecutionProvider` is available",
            "wrong-framework-build",
        ),
        # Triton's exception class names a failure although its name ends in neither Error nor Exception
        (
            "some autotune configs exceed the shared-memory hardware limit of the H20 and trigger Triton "
            "`OutOfResources`",
            "shared-memory-limit",
        ),
        # the JIT's start-up cost (Programming Guide, just-in-time compilation), in a user's words
        (
            "It sometimes takes time on booting the CUDA program.\n"
            "It was caused by first-time JIT compilation of PTX into cubin.",
            "ptx-jit-lower-arch",
        ),
        # flash-attn's FLASH_UNSUPPORTED_ARCH: code built below the kernels' range ran; with no GPU named, or one
        # below the range, on a GPU it is not for; on a GPU in the range only by JIT-compiling lower-arch PTX
        (_FA_STUB, "capability-guard"),
        ("GPU 0: Tesla T4\n" + _FA_STUB, "capability-guard"),
        ("GPU 0: NVIDIA GeForce RTX 3090\n" + _FA_STUB, "ptx-jit-lower-arch"),
    ],
)
def test_session12_forms(text: str, expected: str) -> None:
    assert classify(text)[0].category == expected


@pytest.mark.parametrize(
    "text",
    [
        # a PTX ISA version stated, no target refused
        "the wheel ships PTX version 8.8 for sm_90a and sm_100a",
        # a build instruction for something that is not the GPU
        "error: compile with -O3 to enable the fast path",
        # the user's own build, made with CUDA, then an unrelated failure
        "I compiled MXNet with USE_CUDA=1 and training fails with CUDA error: out of memory",
        # the CPU provider listed beside the CUDA one
        "available providers: CUDAExecutionProvider, CPUExecutionProvider; the model still fails to load",
        # slowness with no JIT in sight
        "Training takes time on my GPU and then fails with a NaN loss",
        # two words of a message on two lines of a log, not one message wrapped
        "ERROR: could not set\nthe allowed fan speed",
        # install advice and provider notes with no failure beside them (review)
        "Install the NVIDIA Container Toolkit to enable GPU support in Docker containers.",
        "pip install cupy-cuda12x to enable GPU acceleration",
        "When only 'CPUExecutionProvider' is available, inference will run on CPU (expected on macOS).",
    ],
)
def test_session12_neighbours_stay_unknown(text: str) -> None:
    assert classify(text)[0].category == "unknown"


def test_a_wrappable_pattern_keeps_classes_quantifiers_and_escapes() -> None:
    assert _wrappable("a ?b [ x]c\\ d e") == "a ?b[ \n][ x]c\\ d[ \n]e"
    assert _wrappable("x {2}y [^ ]+") == "x {2}y[ \n][^ ]+"
    # "]" first in a class is a member, so the blank after it is still inside the class
    assert _wrappable("a []x ]b [^] ]c") == "a[ \n][]x ]b[ \n][^] ]c"
    assert _wrappable("(?x) a b") == "(?x) a b"  # a verbose pattern's blanks are not literal
    rx = re.compile(_wrappable(r"dynamic shared memory size to \d+"))
    assert rx.search("dynamic shared\nmemory size to 4096")
    assert not rx.search("dynamic shared\n\nmemory size to 4096")  # one character for one


def test_the_logs_own_driver_grounds_a_driver_finding() -> None:
    """nvidia-smi's header in the log names the driver: with no --driver, the fixes are that driver's, and a driver
    below every runtime floor is not sent to a CUDA 12 PyTorch index it cannot run."""
    from cudafit.explain import explain_text

    old = explain_text(
        "cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version\n"
        "| NVIDIA-SMI 418.67       Driver Version: 418.67       CUDA Version: 10.1     |"
    )[0]
    assert old.category == "driver-too-old"
    assert "the log's driver: 418.67" in old.cause
    fixes = " ".join(old.fixes)
    assert "download.pytorch.org" not in fixes and ">= 525 runs CUDA 12.x builds" in fixes
    r535 = explain_text(
        "RuntimeError: CUDA driver version is insufficient for CUDA runtime version\nDriver Version: 535.104.05"
    )[0]
    assert any("keep driver 535.104.05" in f and "cu126" in f for f in r535.fixes)
    ptx = explain_text("the provided PTX was compiled with an unsupported toolchain.\nDriver Version: 535.104.05")[0]
    assert ptx.category == "ptx-too-new-for-driver"
    assert "JITs PTX ISA up to 8.2" in ptx.cause


@pytest.mark.parametrize(
    ("gpu", "expected", "absent"),
    [
        # Kepler stops at the 470 branch: CUDA 11 at most; a 3.7 card has the cu118 index (PyTorch's 11.8 wheels
        # carry sm_37), a 3.5 or 3.0 card none
        ("Tesla K80", "upgrade to that branch and run a CUDA 11.x build", ">= 580"),
        ("NVIDIA GeForce GTX 780", "no PyTorch index builds for it", "pip install"),
        ("NVIDIA GeForce GTX 680", "no PyTorch index builds for it", ">= 525"),
        # Fermi stops at 390: no CUDA 11+ runtime at all
        ("GeForce GTX 580", "no CUDA 11+ runtime runs on it", "pip install"),
    ],
)
def test_a_driver_fix_stops_at_the_gpus_last_driver_branch(gpu: str, expected: str, absent: str) -> None:
    from cudafit.explain import explain_text

    finding = explain_text(
        "cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version\n"
        f"Driver Version: 418.67\nGPU 0: {gpu}"
    )[0]
    fixes = " ".join(finding.fixes)
    assert expected in fixes and absent not in fixes
    assert any("deprecation-schedule" in src for src in finding.evidence["sources"])


def test_a_gpu_the_580_branch_supports_keeps_the_upgrade() -> None:
    from cudafit.explain import explain_text

    finding = explain_text(
        "cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version\n"
        "Driver Version: 470.82\nGPU 0: NVIDIA GeForce GTX 1080"
    )[0]
    assert finding.fixes[0].startswith("upgrade the NVIDIA driver from 470.82 to >= 580")


def test_a_model_size_is_no_geforce_laptop_part() -> None:
    """"800M", "410m" are model sizes as often as GeForce 800M / 410M: a bare number names the part only with its
    vendor word ("GeForce 800M")."""
    from cudafit.explain.extract import iter_mentioned_gpus

    text = "Training the 800M model on my RTX 3090:\nRuntimeError: CUDA error: no kernel image is available"
    assert [cc for _n, cc in iter_mentioned_gpus(text)] == ["8.6"]
    assert classify(text)[0].category == "no-kernel-image"
    assert list(iter_mentioned_gpus("GPU 0: NVIDIA GeForce 940M (UUID: GPU-1)")) == [("NVIDIA GeForce 940M", "5.0")]


def test_the_flash_attention_stub_ignores_its_own_copies_and_the_build_flags() -> None:
    twice = _FA_STUB + "\n" + _FA_STUB
    assert classify(twice)[0].category == "capability-guard"
    a100 = "GPU 0: NVIDIA A100-SXM4-40GB\n" + _FA_STUB + "\nnvcc -gencode arch=compute_75,code=sm_75"
    assert classify(a100)[0].category == "ptx-jit-lower-arch"


def test_a_host_with_a_gpu_no_toolkit_targets_builds_for_the_others() -> None:
    from cudafit.explain import explain_text

    text = (
        "GPU 0: NVIDIA GeForce GTX 680\nGPU 1: NVIDIA GeForce RTX 3090\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    )
    mixed = next(f for f in explain_text(text) if f.category == "mixed-gpu")
    assert 'TORCH_CUDA_ARCH_LIST="8.6"' in mixed.fixes[0] and "targets 3.0" in mixed.fixes[0]


def test_plan_and_check_name_the_last_toolkit_of_a_legacy_gpu() -> None:
    from cudafit.fixes import _untargetable
    from cudafit.model import ComputeCapability
    from cudafit.plan import uncoverable_problem

    kepler = uncoverable_problem(ComputeCapability(3, 0), "compute capability 3.0", "nvcc 13.0")
    assert "CUDA 10.2 was the last toolkit" in kepler and "that toolkit" not in kepler and "3.0 (3.0)" not in kepler
    k40 = uncoverable_problem(ComputeCapability(3, 5), "Tesla K40", "nvcc 13.0")
    assert "CUDA 12 dropped Kepler" in k40
    fix = _untargetable("torch", ComputeCapability(2, 1), 11, vendor=False, distribution=True)[0]
    assert "CUDA 8.0 was the last toolkit" in fix.text


@pytest.mark.parametrize("unit", [" ", "_", "a_", "inference compute a"])
def test_one_long_line_reads_in_linear_time(unit: str) -> None:
    """One long line of blanks or of one word: the nvidia-smi -q "GPU type:" listing took its square (550 s for a
    megabyte of spaces), mmcv's "\\w+ is not compiled with GPU support", a variable name's "\\w+_\\w+" and ollama's
    key=value fields the square of a long token (89 s, 74 s, 51 s for 100 KB; review of session 12)."""
    import time

    def took(n: int) -> float:
        start = time.perf_counter()
        classify(unit + unit[-1] * n if len(unit) > 2 else unit * (n // len(unit)))
        return time.perf_counter() - start

    small, large = took(25_000), took(100_000)
    assert large < 8.0
    assert large < 6 * max(small, 0.05)
