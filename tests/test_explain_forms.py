"""The forms messages take across emitters (cudafit.explain.forms): read only where no emitter's message is there.

Each case is a message in a form its category's emitters share but worded as no catalogued emitter words it (a guard
of a library the catalogue does not know, a toolchain's refusal in a build script's words), then its neighbours: the
same words in a text that reports no failure, or beside an error that is not a compatibility problem, stay unknown.
"""

from __future__ import annotations

import time

import pytest

from cudafit.explain import CATEGORIES, classify, clean
from cudafit.explain.catalogue import MIN_SCORE, iter_sources
from cudafit.explain.forms import FORMS, iter_forms


def top(text: str) -> str:
    return classify(text)[0].category


def weak_sources(text: str) -> set[str]:
    """The sources of the catalogue's patterns that match ``text`` (weak ones included)."""
    body = clean(text)
    return {p.source for cat in CATEGORIES for p in cat.patterns if p.regex.search(body)}


FORM_CASES = [
    # capability-guard: a library's own check, in the shapes such checks take
    ("RuntimeError: Marlin kernels need an SM 8.0 or newer device", "capability-guard"),
    ("ValueError: fp8 e4m3 is not supported on this GPU (compute capability 7.5)", "capability-guard"),
    ("NotImplementedError: bfloat16 is only supported on Ampere or newer GPUs", "capability-guard"),
    ("RuntimeError: This GPU architecture is not supported by the fused MoE kernels", "capability-guard"),
    ("AssertionError: paged attention v2 is only available on GPUs with sm_80 or later", "capability-guard"),
    ("error: your GPU is too old to run the optimised kernels", "capability-guard"),
    # jit-toolchain-too-old: a compiler that does not know the target
    ("error: the installed nvcc does not support sm_120, install CUDA 12.8 or newer", "jit-toolchain-too-old"),
    ("CMake Error: Unknown CUDA architecture 'sm_121' requested", "jit-toolchain-too-old"),
    ("RuntimeError: compile failed: NVRTC only supports up to compute_90 here", "jit-toolchain-too-old"),
    # ptx-jit-lower-arch: the driver JIT-compiling a lower arch's PTX at start
    (
        "the first inference takes 3 minutes while the driver is JIT compiling the PTX for this GPU",
        "ptx-jit-lower-arch",
    ),
    ("Startup is very slow on the P40: it spends minutes generating binary code for your GPU", "ptx-jit-lower-arch"),
    (
        "Very slow startup on the GTX 1070: every start takes 3 minutes before the first CUDA kernel",
        "ptx-jit-lower-arch",
    ),
    # loading a model is slow for its own reasons, unless what the JIT delays is named (an inference session's start)
    (
        "Model loading is too slow: creating the InferenceSession takes 102 seconds on the RTX 3070",
        "ptx-jit-lower-arch",
    ),
    # shared-memory-limit
    ("[BUG] grouped GEMM requires 102400 bytes shared memory but device supports 101376", "shared-memory-limit"),
    (
        "RuntimeError: the kernel requested 232448 bytes of shared memory, which exceeds the per-block limit",
        "shared-memory-limit",
    ),
    (
        "RuntimeError: CUDA error: invalid argument\nIt ran once the buffer moved from shared memory to global memory.",
        "shared-memory-limit",
    ),
    # driver-too-old
    ("Error: this build requires NVIDIA driver >= 525.60.13; please upgrade", "driver-too-old"),
    ("failed to start: your GPU driver is outdated for CUDA 12.4 images", "driver-too-old"),
    # ptx-too-new-for-driver
    (
        "failed to load module: the PTX was compiled with a newer toolkit than this driver accepts",
        "ptx-too-new-for-driver",
    ),
    (
        "CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed\nCuda compilation tools, release 12.6, V12.6.77",
        "ptx-too-new-for-driver",
    ),
    # wrong-framework-build
    ("AssertionError: this package was built without CUDA, reinstall the GPU wheel", "wrong-framework-build"),
    ("You are running the CPU-only build of the library; GPU support is not compiled in", "wrong-framework-build"),
    # no-kernel-image
    ("RuntimeError: decode failed: missing prebuilt cubins for sm_110 in this release", "no-kernel-image"),
    ("error: the wheel doesn't include sm_120 kernels", "no-kernel-image"),
    ("unsupported ptx version error when loading the plugin", "ptx-too-new-for-driver"),
    # capability-guard from a math library: cublasStatus_t's CUBLAS_STATUS_NOT_SUPPORTED
    ("cublasLtMatmulAlgoGetHeuristic failed: 'the requested functionality is not supported'", "capability-guard"),
    ("[ERR!] GPU Compute Capability is lower than it is required", "capability-guard"),
    ("GPU compute capability 7.5 is below the minimum required 8.0; falling back to CPU", "capability-guard"),
    # NGC containers' entrypoint check
    (
        "WARNING: Detected NVIDIA GeForce RTX 3090 GPU, which is not yet supported in this version of the container\n"
        "ERROR: No supported GPU(s) detected to run this container",
        "capability-guard",
    ),
    ("ERROR: Device capability v1.1.0 not supported by available toolchain", "capability-guard"),
    # a check whose reason is shared memory is the shared-memory limit (seed 002: the check itself)
    (
        "RuntimeError: this backward kernel requires A100 or H100 GPUs as the implementation needs a large "
        "amount of shared memory.",
        "shared-memory-limit",
    ),
    # mixed-gpu
    ("RuntimeError: the engine was built on a different GPU and fails to deserialize here", "mixed-gpu"),
    (
        "[BUG] RuntimeError: CUDA_ERROR_INVALID_PTX while building for a different arch on shared filesystem",
        "mixed-gpu",
    ),
    (
        "Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6\nDevice 1: NVIDIA GeForce GTX 1070, compute "
        "capability 6.1\nxinfer: kernel launch error on device 1",
        "mixed-gpu",
    ),
    # arch-specific-mismatch: an a/f target beside a failure
    ("RuntimeError: the fused kernel built for sm_90a failed to launch on the RTX 4090", "arch-specific-mismatch"),
    ("Error: DeepEP kernels unavailable on GB10: built for sm_90a and sm_100a only", "arch-specific-mismatch"),
    # targets written as an arch list in prose, "/" between them
    ("DeepEP kernels unavailable on GB10: arch list hardcodes 9.0a/10.0a", "arch-specific-mismatch"),
    ("ValueError: these kernels are only built for sm_100a", "arch-specific-mismatch"),
    # ptxas: code written for a newer target compiled for an older one
    (
        "ptxas /tmp/x.ptx, line 41; error   : Feature '%clusterid' requires .target sm_90 or higher",
        "arch-specific-mismatch",
    ),
]


@pytest.mark.parametrize(("text", "expected"), FORM_CASES)
def test_a_form_names_its_category(text: str, expected: str) -> None:
    finding = classify(text)[0]
    assert finding.category == expected
    # a form's finding is never as sure as an emitter's own message, and cites what it generalises
    assert MIN_SCORE <= finding.score <= 2.5
    assert finding.confidence <= 0.62
    # it cites the documents behind the form (and any weak catalogue pattern that matched too), not the emitters
    # the form generalises: none of them printed it
    sources = finding.evidence.get("sources", [])
    assert any(src.startswith("https://") for src in sources)
    generalised = {src for form in FORMS for src in form.sources if not src.startswith("https://")}
    assert not any(src in generalised and src not in weak_sources(text) for src in sources)


NEIGHBOURS = [
    # statements, no failure reported
    "these kernels are only supported on SM90a and SM100f",
    "Marlin kernels need an SM 8.0 or newer device.",
    "  Total amount of shared memory per block:       49152 bytes\n  Maximum shared memory per multiprocessor: 102400",
    "GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-1)\nGPU 1: NVIDIA GeForce GTX 1080 Ti (UUID: GPU-2)",
    "the first epoch is slow because the dataset is read from disk",
    "ERROR: package requires torch>=2.1 and python>=3.9",
    "pip install is very slow to start on this network, the download takes minutes",
    "Is it normal that the first run takes 2 minutes just to load the model?\nDevice: cuda:0 NVIDIA GeForce RTX 3070",
    # an error that is not a compatibility problem, beside a form's words
    "GPU 0: NVIDIA GeForce RTX 3090\nGPU 1: NVIDIA GeForce GTX 1070\nRuntimeError: CUDA error: out of memory",
    "RuntimeError: bf16 is only supported on Ampere GPUs\nRuntimeError: CUDA error: an illegal memory access was "
    "encountered",
    "RuntimeError: DataLoader worker (pid 123) is killed: insufficient shared memory (shm)",
    "Multiple GPU allocate compute buffer error\nDevice 0: NVIDIA GeForce RTX 3090 Ti, compute capability 8.6\n"
    "Device 1: NVIDIA GeForce GTX 1070, compute capability 6.1",
    # an a target on the GPU it is for is no mismatch
    "RuntimeError: the wgmma kernel built for sm_90a failed on the H100 with a wrong result",
]


@pytest.mark.parametrize("text", NEIGHBOURS)
def test_a_form_s_neighbours_stay_unknown(text: str) -> None:
    assert top(text) == "unknown"


def test_an_emitter_s_own_message_outranks_every_form() -> None:
    """The forms are read only when the catalogue finds nothing: torch's own message keeps its category and score."""
    text = "RuntimeError: CUDA error: no kernel image is available for execution on the device\nmy GPU is too old?"
    finding = classify(text)[0]
    assert finding.category == "no-kernel-image"
    assert finding.score >= 3


def test_every_form_is_listed_with_the_emitters_it_generalises() -> None:
    rows = iter_sources()
    for form in FORMS:
        assert any(src.startswith("https://") for src in form.sources), form.name  # what its findings cite
        assert {(form.category, s, form.regex.pattern) for s in form.sources} <= set(rows)


def test_iter_forms_reads_statements_only_beside_a_failure() -> None:
    assert [f.name for f, _line in iter_forms("FP8 requires Hopper")] == []
    assert [f.name for f, _line in iter_forms("RuntimeError: FP8 requires Hopper")] == ["a feature the GPU lacks"]


def test_forms_read_in_linear_time() -> None:
    """The forms' words without their endings, every line of them, cost time linear in the text's size, not the
    quadratic time an unbounded gap between a form's parts would: four times the text costs about four times as much
    (quadratic would be sixteen).  The absolute cost grows with each form (a megabyte of this worst case: 0.4 s with
    the first forms, 2.4 s with session 11's on a 2-core machine); a log reaches the forms only through
    :func:`~cudafit.explain.logread.read_log`'s excerpt, a few hundred kilobytes at most, and the 100 MB log of
    bench/ takes about 3 s in all, so the ceiling here only catches a pathological form."""
    line = "shared memory requires only supported on too old driver ptx jit " * 30 + "\n"
    timings = []
    for lines in (150, 600):
        start = time.perf_counter()
        list(iter_forms(line * lines))
        timings.append(time.perf_counter() - start)
    assert timings[1] < 6 * timings[0], timings
    assert timings[1] < 8.0, timings


# ggml's NO_DEVICE_CODE (ggml/src/ggml-cuda/common.cuh) prints __CUDA_ARCH__ (the arch of the code that ran) and
# __CUDA_ARCH_LIST__ (what the build holds): the GPU's own arch's stub is a dispatch the guard convention covers, a
# lower arch's code on a newer GPU is lower-arch code.
GGML = "ERROR: CUDA kernel flash_attn_ext_f16 has no device code compatible with CUDA arch {ran}. ggml-cuda.cu was "
GGML += "compiled for: {archs}"


@pytest.mark.parametrize(
    ("gpu", "ran", "archs", "expected"),
    [
        ("", 610, "610,750", "capability-guard"),  # 6.1 code, not the newest: it ran on a 6.1 GPU
        ("", 600, "500,600,700,800,900", "ptx-jit-lower-arch"),  # 6.0 code may have run on a 6.1 or 6.2 GPU
        ("", 520, "520", "ptx-jit-lower-arch"),  # the build's only (lowest) arch: lower-arch PTX on a newer GPU
        ("", 860, "520,610,860", "ptx-jit-lower-arch"),  # the newest arch's code: any newer GPU runs it too
        ("GPU 0: NVIDIA GeForce GTX 1080 Ti\n", 610, "610", "capability-guard"),  # the GPU's own arch
        ("GPU 0: NVIDIA GeForce RTX 3090\n", 610, "520,610", "ptx-jit-lower-arch"),  # a newer GPU ran 6.1 code
    ],
)
def test_ggml_no_device_code_is_read_by_the_arch_that_ran(gpu: str, ran: int, archs: str, expected: str) -> None:
    assert top(gpu + GGML.format(ran=ran, archs=archs)) == expected


def test_a_form_s_finding_names_its_forms_in_valid_json() -> None:
    import json
    from pathlib import Path

    import jsonschema

    from cudafit.explain import explain_text

    schema = json.loads((Path(__file__).parent.parent / "src/cudafit/schema/explain.json").read_text())
    (finding,) = explain_text("RuntimeError: Marlin kernels need an SM 8.0 or newer device")
    assert finding.evidence["forms"] == ["requires a capability"]
    jsonschema.validate({"schema": "cudafit.explain/1", "findings": [finding.to_dict()]}, schema)
    # an emitter's own message is no form's
    (torch,) = explain_text("RuntimeError: CUDA error: no kernel image is available for execution on the device")
    assert "forms" not in torch.evidence


# xformers' dispatcher (xformers/ops/fmha/dispatch.py) lists every operator it tried with its reasons: a capability
# reason is the cause only where an operator is refused for capability alone.
XF_HEAD = "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"


def test_xformers_capability_alone_is_the_guard() -> None:
    text = XF_HEAD + (
        "`fa3F@2.8.0` is not supported because:\n"
        "    requires device with capability > (8, 0) but your GPU has capability (7, 5) (too old)\n"
        "    bf16 is only supported on A100+ GPUs\n"
        "`cutlassF-pt` is not supported because:\n"
        "    bf16 is only supported on A100+ GPUs\n"
        "Device: cuda:0 NVIDIA GeForce RTX 2070 SUPER : cudaMallocAsync"
    )
    assert top(text) == "capability-guard"


def test_xformers_capability_beside_a_shape_reason_is_no_guard() -> None:
    text = XF_HEAD + (
        "`fa3F@0.0.0` is not supported because:\n"
        "    min(query.shape[-1], value.shape[-1]) < 64\n"
        "    requires device with capability > (9, 0) but your GPU has capability (8, 9) (too old)\n"
        "`cutlassF-pt` is not supported because:\n"
        "    attn_bias.stride(-2) % 8 != 0 (attn_bias.stride() = (1984032, 248004, 498, 1))\n"
        "HINT: To use an `attn_bias` with a sequence length that is not a multiple of 8, ..."
    )
    # and no form guesses "too old" from the same line either
    assert classify(text)[0].category == "unknown"


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("I have a 3090 and a 1080 Ti", ["1080 Ti", "RTX 3090"]),
        ("2x 3090, 1x 1080", ["RTX 3090", "GTX 1080"]),
        ("the 2080 works but my 1070 fails", ["RTX 2080", "GTX 1070"]),
        ("a 1080p video at step 1080", []),  # a resolution, a step: no GPU
        ("found 4 GPUs, batch of 4096", []),
    ],
)
def test_a_geforce_named_by_its_number_alone(text: str, names: list[str]) -> None:
    from cudafit.explain import extract_facts

    facts = extract_facts(clean(text))
    assert [g["name"] for g in facts.get("mentioned_gpus", [])] == names


def test_a_mixed_host_named_in_prose_beside_a_cuda_failure() -> None:
    assert top("I have a 3090 and a 1070 in the box; the kernel launch fails with a CUDA error on the second") == (
        "mixed-gpu"
    )


# Families of emitters outside the ML stack (issue-18-session7-dev-d), each from the file that prints it.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Kokkos::Cuda::initialize ERROR: likely mismatch of architecture", "no-kernel-image"),
        (
            "Accelerator Fatal Error:\nThis file was compiled: -acc=gpu -gpu=cc90\n"
            "Rebuild this file with -gpu=cc120 to use NVIDIA Tesla GPU 0",
            "no-kernel-image",
        ),
        (
            "[h264_nvenc @ 0x55] Driver does not support the required nvenc API version. Required: 13.0 Found: 12.2",
            "driver-too-old",
        ),
        ("nvc++-Error-Switch -ta with unknown keyword cc89", "jit-toolchain-too-old"),
        ("Warp CUDA error: Failed to get function cuGetProcAddress", "driver-too-old"),
        (
            "Error: CUDA driver 8.0.0 is not compatible with any supported CUDA toolkit (11.4.4, 12.3.1)",
            "driver-too-old",
        ),
        ("no kernel image is available for execution this device", "no-kernel-image"),  # the string, reworded
        ("ptxas x.ptx, line 126; error   : Feature 'ldmatrix' requires .target sm_75 or higher", "capability-guard"),
        (
            "Creating a GPU session with device_id does not correspond to the device ID from nvidia-smi output",
            "mixed-gpu",
        ),
        ("UserWarning: you will need a GPU with NVIDIA Pascal or newer architecture", "capability-guard"),
    ],
)
def test_families_beyond_the_ml_stack(text: str, expected: str) -> None:
    assert top(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # a stub libcuda (CUDA_ERROR_STUB_LIBRARY, 34) or none at all is no driver that is too old
        "Warp CUDA error: Failed to get driver entry point 'cuDriverGetVersion' (CUDA error 34)\n"
        "Warp CUDA warning: Unable to determine CUDA driver version",
        "Warp CUDA error: Could not open libcuda.so.\n"
        "   CUDA Toolkit 12.8, Driver 0.0 (insufficient CUDA driver version!)",
        # a phrase that only starts like a message is no message cut short
        "Unable to determine CUDA driver version",
    ],
)
def test_no_driver_is_no_old_driver(text: str) -> None:
    assert top(text) == "unknown"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a ROCm build of torch beside an NVIDIA GPU (torch/cuda/__init__.py's "HIP initialization" warning)
        (
            "[Bug]: Cuda with RTX 3060\n/site-packages/torch/cuda/__init__.py:88: UserWarning: HIP initialization: "
            "Unexpected error",
            "wrong-framework-build",
        ),
        ("CUDA SETUP: Defaulting to libbitsandbytes_cpu.so...", "wrong-framework-build"),
        ("RuntimeError: cutlassF: no kernel found to launch!", "no-kernel-image"),
        ("nvcc fatal   : Value 'native' is not defined for option 'gpu-architecture'", "jit-toolchain-too-old"),
    ],
)
def test_families_of_desktop_software(text: str, expected: str) -> None:
    assert top(text) == expected


def test_a_rocm_build_on_an_amd_gpu_is_no_wrong_build() -> None:
    assert top("UserWarning: HIP initialization: Unexpected error from hipGetDeviceCount()") == "unknown"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # xformers' reasons are its own expressions; the reporter's words after the list take nothing away
        (
            "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
            "`fa3F@0.0.0` is not supported because:\n"
            "requires device with capability > (9, 0) but your GPU has capability (8, 9) (too old)\n"
            "RTX 4090, ComfyUI portable, forcing xformers op=fa3",
            "capability-guard",
        ),
        # ... while a real second reason (a dtype no GPU runs) still does
        (
            "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
            "`fa3F@0.0.0` is not supported because:\n"
            "requires device with capability > (9, 0) but your GPU has capability (8, 9) (too old)\n"
            "dtype=torch.float32 (supported: {torch.bfloat16, torch.float16})\n"
            "any idea?",
            "unknown",
        ),
        # a refusal with the floor it applies on its line is a guard, in any program's words
        ("GPU not supported: minimum compute capability is 6.0 (found 5.2)", "capability-guard"),
        ("Device is too old, requires compute capability 7.0 or newer", "capability-guard"),
        ("device not supported: requires at least 8 GB of memory", "unknown"),
        # cuDF's UDF shims (python/cudf/cudf/utils/_numba.py): no PTX at or below the GPU's capability
        ("RuntimeError: This cuDF installation is missing the necessary PTX files that are <=50.", "capability-guard"),
        # two different archs joined into nvcc's one --gpu-architecture value: a detection of a host's two GPU models
        ("nvcc fatal   : Value 'sm_61,sm_52' is not defined for option 'gpu-architecture'", "mixed-gpu"),
        ("nvcc fatal : Unsupported gpu architecture 'compute_86;compute_75'", "mixed-gpu"),
        ("nvcc fatal : Unsupported gpu architecture 'compute_120'", "jit-toolchain-too-old"),
        ("nvcc fatal   : Value 'sm_86,sm_86' is not defined for option 'gpu-architecture'", "unknown"),
        # the RTX A-series and T-series cards by name, as the wrong card a job got on a mixed host
        (
            "I start training with CUDA_VISIBLE_DEVICES=1 so it uses the A6000, but torch.cuda.get_device_name(0) "
            "prints 'NVIDIA T400' and it OOMs at 2 GB.",
            "mixed-gpu",
        ),
    ],
)
def test_reasons_and_cards_by_their_emitters_words(text: str, expected: str) -> None:
    assert top(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # operands on two devices, in frameworks' own words (Open3D, DGL, TVM, CuPy, diffusers)
        ("RuntimeError: [Open3D Error] BinaryEW.cpp:37: Device mismatch CUDA:0 != CPU:0.", "device-mismatch"),
        ("RuntimeError: SpSpMM: lhs_mat and rhs_mat should be on the same device", "device-mismatch"),
        ("Check failed: Can not copy across different device types directly.", "device-mismatch"),
        ("RuntimeError: This Generator state is allocated in a different device", "device-mismatch"),
        ("ValueError: Query, key, and value must be on the same device.", "device-mismatch"),
        # a build without CUDA saying so of itself, or the switch that would add it
        ("ERROR:torch_tensorrt._utils:This pytorch build does not support CUDA", "wrong-framework-build"),
        ("Warp 1.9.0 initialized:\n   CUDA not enabled in this build", "wrong-framework-build"),
        ("GPU Tensor is not supported when -DBUILD_CUDA_MODULE=OFF. Please recompile Open3d", "wrong-framework-build"),
        (
            "thread 'main' panicked: BURN_DEVICE=cuda requested, but the 'cuda' feature is not enabled.",
            "wrong-framework-build",
        ),
        ("RuntimeError: llama-cpp-python was built without GGML CUDA support.", "wrong-framework-build"),
        ("CuPy may not function correctly because multiple CuPy packages are installed", "wrong-framework-build"),
        # a capability check's own statement of what it needs, which is the failure
        ("Compute capability must be >= 3.5", "capability-guard"),
        ("Quantized moe_a2a_combine requires SM>=100 (Blackwell), but got SM90", "capability-guard"),
        ("flashinfer.utils.GPUArchitectureError: Device major should be in [9, 10], but got 8", "capability-guard"),
        ("magmablas_hgemm_batched: architecture 600 is not supported", "capability-guard"),
        (
            "[h264_nvenc @ 0x55] [ GPU #0 - < GeForce GT 630 > has Compute SM 2.1 ]\n"
            "[h264_nvenc @ 0x55] does not support NVENC",
            "capability-guard",
        ),
        # an a/f target the code needs, or CCCL's wrapper outside an instruction's targets
        ("RuntimeError: This kernel requires SM90a", "arch-specific-mismatch"),
        ("This kernel requires SM90a", "unknown"),  # a statement alone: no failure reported
        ("Error: cannot execute CUDA artifact emitted for sm_90a on sm_120", "arch-specific-mismatch"),
        (
            "ptxas fatal   : Unresolved extern function '__cuda_ptx_setmaxnreg_inc_is_only_supported_on_SM_90a_100a__'",
            "arch-specific-mismatch",
        ),
        # a driver below the CUDA the program was built for, in the program's words; no driver at all is not that
        ("CUDA error: Driver does not support CUDA 12.4 API! Update your nVidia driver!", "driver-too-old"),
        ("INFO: CUDA 12.4 requires NVIDIA driver 550.54 or newer", "unknown"),
        (
            "Warp CUDA error: Warp requires CUDA driver 12.8 or higher, but the current driver only supports CUDA 12.2",
            "driver-too-old",
        ),
        ("System.NotSupportedException: Not supported driver version '11.4' (>= 12.8 required)", "driver-too-old"),
        (
            "Warp CUDA error: Could not open libcuda.so.\n   CUDA Toolkit 12.8, Driver 0.0 (insufficient CUDA driver "
            "version!)",
            "unknown",
        ),
        # a toolkit below what an arch needs, as build scripts and compilers say it
        ("AssertionError: sm100 compilation for Flash MLA requires NVCC 12.9 or higher.", "jit-toolchain-too-old"),
        (
            "clang++: error: GPU arch sm_120 is supported by CUDA versions between 12.8 and 12.9 (inclusive), but "
            "installation at /usr/local/cuda is 12.4",
            "jit-toolchain-too-old",
        ),
        (
            "CMake Error at cmake/Modules/CudaArchitectureSelector.cmake:267 (message):\n"
            "  Blackwell is not a valid GPU generation name",
            "jit-toolchain-too-old",
        ),
        # an image built for another GPU's compute capability (Text Embeddings Inference)
        (
            "Could not start backend: Runtime compute cap 75 is not compatible with compile time compute cap 80",
            "mixed-gpu",
        ),
        # an extension's CUDA against torch's is the toolkit's; the same check of torch's version is the ABI's
        (
            "RuntimeError: CUDA version mismatch! DeepSpeed ops were compiled and installed with a different "
            "version than what is being used at runtime.",
            "toolkit-mismatch",
        ),
        (
            "RuntimeError: PyTorch version mismatch! DeepSpeed ops were compiled and installed with a different "
            "version than what is being used at runtime.",
            "extension-abi-mismatch",
        ),
        # a framework built for another CUDA major than the code needs; a ROCm runtime missing from a build
        (
            "MoEEpConfigError: nccl_ep requires CUDA 13: ... but the installed torch was built for CUDA 12.8.",
            "wrong-framework-build",
        ),
        ("Please install pytorch with CUDA 12.x support", "wrong-framework-build"),
        ("RuntimeError: ROCm runtime is not linked into this build; cannot launch kernels.", "wrong-framework-build"),
        # a host of mixed GPUs refused, an artefact suspected of being built for another GPU
        ("AssertionError: Heterogeneous Nvidia GPU devices not supported.", "mixed-gpu"),
        (
            "RuntimeError: Failed to deserialize TensorRT engine from C:\\m\\x.engine. This may happen if the engine "
            "was built with an incompatible TensorRT version or for a different GPU architecture.",
            "mixed-gpu",
        ),
        # the shared-memory opt-in refused, in the program's words
        ("Failed to set max dynamic shared size to 131072 bytes (Error code: 1)", "shared-memory-limit"),
        # ... and their neighbours: a statement alone, an a target for its own GPU
        ("these kernels are only supported on SM90a and SM100f", "unknown"),
        ("compiled for sm_90a on sm_90", "unknown"),
    ],
)
def test_forms_mined_from_the_emitters(text: str, expected: str) -> None:
    assert top(text) == expected
