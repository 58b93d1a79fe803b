"""explain on the families the third, deep round of mined emitters pointed at (issue 18, session 11).

Each form is checked on an emitter's message it generalises (tests/fixtures/explain_emitters, third-tune half) and
on a near neighbour that is not that failure; the extension-ABI grounder gives a pairing check of another project
its own way out instead of a PyTorch wheel."""

from __future__ import annotations

import pytest

from cudafit.explain import classify, explain_text


def top(text: str) -> str:
    return classify(text)[0].category


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("RuntimeError: apex.optimizers.FusedAdam requires cuda extensions", "wrong-framework-build"),
        (
            "Warning:  multi_tensor_applier fused unscale kernel is unavailable, possibly because apex was installed "
            "without --cuda_ext --cpp_ext. Using Python fallback.",
            "wrong-framework-build",
        ),
        ("RuntimeError: No such operator xformers::efficient_attention_forward_cutlass - did you forget to build "
         "xformers with `python setup.py develop`?", "wrong-framework-build"),
        ("RuntimeError: comm_gemm.cpp:570: Transformer Engine has not been built with cuBLASMp support.",
         "wrong-framework-build"),
        ("Warning: CuBLAS library file not found. CPU library will be used.", "wrong-framework-build"),
        ('level=WARN msg="potentially incompatible library detected in PATH" location=C:\\llama\\ggml-base.dll',
         "wrong-framework-build"),
        ("RuntimeError: jaxlib version 0.4.30 is newer than and incompatible with jax version 0.4.26.",
         "extension-abi-mismatch"),
        ("load_backend: failed to initialize backend from libggml-cuda.so: incompatible API version (backend: 1, "
         "current: 2)", "extension-abi-mismatch"),
        ("[TensorRT-LLM][ERROR] Assertion failed: FP8 FMHA cannot be enabled except on Ada or Hopper Arch.",
         "capability-guard"),
        ("NotImplementedError: marlin_gemm(..) requires CUDA_ARCH >= 8.0", "capability-guard"),
        ("RuntimeError: b_q_weight is not on GPU", "device-mismatch"),
        ("NotImplementedError: Deformable Conv is not supported on CPUs!", "device-mismatch"),
        ("RuntimeError: cuda_driver.cpp:42: Could not find CUDA driver entry point for cuTensorMapEncodeTiled",
         "driver-too-old"),
        ("RuntimeError: Failed to retrieve cuTensorMapEncodeTiled from libcuda.so.1", "driver-too-old"),
        ("RuntimeError: RMM failure at: cuda_async_memory_resource.hpp:93: cudaMallocAsync not supported with this "
         "CUDA driver/runtime version", "driver-too-old"),
        ("bitsandbytes library load error: No compatible CUDA binary found at "
         "/usr/lib/python3.12/site-packages/bitsandbytes/libbitsandbytes_cuda131.so", "toolkit-mismatch"),
        ("Device capability changed, invalidating cache\nRuntimeError: failed to load the cached MoE kernel",
         "mixed-gpu"),
        ("RuntimeError: No compiled cutlass_scaled_mm kernel for SM 75. Recompile with the appropriate CUDA arch.",
         "no-kernel-image"),
        # TensorRT's logger tag is the failure beside a statement of the generations a plugin supports
        ("[E] [TRT] INT8 IO is only supported on Turing, Ampere, Hopper and Blackwell for plugin X",
         "capability-guard"),
        ("[01/29/2024-11:23:45] [E] [TRT] INT8 IO is only supported on Turing, Ampere, Hopper and Blackwell for "
         "plugin X", "capability-guard"),
        ("RuntimeError: flashinfer-jit-cache version (0.4.1+cu128) does not match flashinfer version (0.5.2). Please "
         "install the same version of both packages.", "extension-abi-mismatch"),
        ("ImportError: Cannot import 'detectron2._C', therefore 'deform_conv' is not available.",
         "wrong-framework-build"),
        ("ModuleNotFoundError: No module named 'amp_C'", "wrong-framework-build"),
        # the fourth round's tune half
        ("RuntimeError: vllm._flashmla_C is not available, likely was not compiled due to insufficient nvcc version",
         "wrong-framework-build"),
        ("ImportError: Found conflicting TensorFlow installations in this environment: tensorflow 2.16.1, "
         "tensorflow-intel 2.15.0.", "wrong-framework-build"),
        ("Found that your compiler (g++ == 4.8.5) may be ABI-incompatible with pre-installed Paddle!",
         "extension-abi-mismatch"),
        ("UserWarning: All tensors need to be on cuda device. Got query on device: cpu, key on device: cuda:0",
         "device-mismatch"),
        ("[ERROR] trt_backend.cc(141)::Init TrtBackend only supports Device::GPU, but now it's Device::CPU.",
         "device-mismatch"),
        ("InvalidArgumentError: Currently weightonly linear grad only support arch = 80 or 86.", "capability-guard"),
        ("[TRT] [E] Assertion failed: smVersion >= kSM_75\nmhaRunner.cu:394\nAborting...", "capability-guard"),
        ("NOT_FOUND: Couldn't find a suitable version of ptxas. The following locations were considered: "
         "/usr/local/cuda-11.4/bin/ptxas", "jit-toolchain-too-old"),
    ],
)
def test_a_deep_round_family(text: str, category: str) -> None:
    assert top(text) == category


@pytest.mark.parametrize(
    "text",
    [
        # vLLM's note that it does not use a backend is no failure
        "INFO 08-01 22:09:09 selector.py:217] Cannot use FlashAttention-2 backend for Volta and Turing GPUs.",
        # an ordinary module missing (a wrong interpreter or an unrelated package), not a compiled part
        "ModuleNotFoundError: No module named 'requests'",
        # the driver/library pair of NVML and a CUDA/driver comparison are no package pairing
        "Failed to initialize NVML: Driver/library version mismatch",
        # a statement of a floor, with no failure beside it
        "INT8 IO is only supported on Turing, Ampere, Hopper and Blackwell",
        # an unrelated failure that falls back
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB; falling back to CPU offload",
        # a review's neighbours (session 11): ordinary modules, builds without something that is no GPU's, version
        # pairs of data, the CUDA stack's own versions, notes on running on the CPU, an unsloth cache note, a peer
        # access note, and lower-case tags
        "ModuleNotFoundError: No module named 'torch._C'",
        "ModuleNotFoundError: No module named 'scipy._lib._ccallback_c'",
        "Python has not been built with SSL support",
        "error: did you forget to build the docs? run `make html`",
        "Sphinx extension not compiled successfully",
        "Checkpoint version 3 does not match model version 2",
        "ERROR: tokenizer version 0.15 does not match transformers version 4.36",
        "warning: package version mismatch between numpy and scipy",
        "Vulkan loader: incompatible API version 1.3",
        'warnings.warn("FP16 is not supported on CPU; using FP32 instead")',
        "Running on CPU. Note: 4-bit quantization is not supported on CPU.",
        "Note: the fused kernels can only be used on GPU.",
        "WARNING: The model is not on the GPU; generation will be slow.",
        "Device capability changed, invalidating cache",
        "Shared memory per block: 48 KB, maximum 99 KB (will be set to 64 KB)",
        "The CUDA compute cache is at ~/.nv/ComputeCache. Will switch to a new one.",
        "bf16 is only supported on Ampere and newer; on other GPUs training will switch to fp16.",
        "Peer access is not supported by this driver. Falling back to host copies.",
        "f1000 10:00 frames saved\nThis model requires SM 8.0 or newer",
        # the fourth round's forms' neighbours: a non-GPU module left uncompiled, a statement of supported archs
        "warning: module foo was not compiled due to a missing dependency",
        "This kernel only supports SM 80 and SM 86.",
        # a second review's neighbours: advice, other tools' installations and ABI notes, modules left uncompiled
        # without a GPU word, CUDA versions compared, a README line beside an unrelated failure, 64-bit targets, and
        # PyTorch's flash-attention warning, which it prints and goes on past
        "To enable GPU acceleration, please install the CUDA version of PyTorch from https://pytorch.org/",
        "hint: please use the GPU build (tensorflow[and-cuda]) if you want to train on GPU",
        "Warning: You have conflicting Python installations in /usr/local/bin and /opt/homebrew/bin",
        "warning: gcc 5 is not ABI compatible with gcc 4.9 for std::string",
        "- This release is not ABI compatible with 1.x; rebuild your plugins.",
        "warning: mypkg_ext was not compiled because Cython is not installed; falling back to pure Python",
        "INFO: speedups_c extension was not compiled due to missing headers; pure python version will be used",
        "ERROR: vLLM only supports CUDA 12.1, but the device has CUDA 11.8",
        "FileNotFoundError: data.csv\n# Model card: tensors need to be on a CUDA device for the fused kernel",
        "error: this crate only supports arch 64-bit targets",
        "UserWarning: 1Torch was not compiled with flash attention. (Triggered internally at sdp_utils.cpp:555.)",
    ],
)
def test_a_deep_round_neighbour_stays_unknown(text: str) -> None:
    assert top(text) == "unknown"


def test_a_pairing_check_of_another_project_gets_its_own_fix() -> None:
    (finding,) = explain_text(
        "RuntimeError: jaxlib version 0.4.30 is newer than and incompatible with jax version 0.4.26."
    )
    assert "jaxlib 0.4.30, jax 0.4.26" in finding.cause
    assert "pip install -U jaxlib jax" in finding.fixes[0]
    assert not any("torch" in fix for fix in finding.fixes)


def test_a_pairing_check_names_every_package_it_lists() -> None:
    (finding,) = explain_text(
        "AssertionError: Transformer Engine package version mismatch. Found transformer_engine_torch v2.4.0, "
        "transformer-engine v2.5.0, and transformer_engine_cu12 v2.5.0."
    )
    assert "transformer_engine_cu12 2.5.0" in finding.cause


def test_a_plugin_without_versions_gets_the_generic_pairing_fix() -> None:
    (finding,) = explain_text(
        "load_backend: failed to initialize backend from libggml-cuda.so: incompatible API version (backend: 1, "
        "current: 2)"
    )
    assert finding.category == "extension-abi-mismatch"
    assert not any("torch" in fix for fix in finding.fixes)


def test_a_torch_extension_keeps_the_torch_fix() -> None:
    (finding,) = explain_text(
        "ImportError: /x/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi"
    )
    assert finding.category == "extension-abi-mismatch"
    assert "torch" in finding.fixes[0]


def test_the_cuda_stack_s_own_versions_are_no_package_pair() -> None:
    """Two parts of the CUDA stack at two versions are the toolkit's or the driver's business, never a package
    pairing (extension-abi-mismatch)."""
    for text in (
        "Error: CUDA runtime version 12.4 does not match nvcc version 11.8. Please install a matching toolkit.",
        "cudart version 12.1 does not match the nvcc version 11.8; install the matching packages",
    ):
        assert top(text) != "extension-abi-mismatch", text


def test_the_version_pair_form_reads_in_linear_time() -> None:
    """A name's start is where no word or hyphen precedes it: a long hyphenated token is scanned once (a session-11
    review measured 20 s for 50 KB when every hyphen could start a name)."""
    import time

    from cudafit.explain.forms import FORMS

    (form,) = [f for f in FORMS if f.name == "a compiled package at another version than its host"]
    start = time.perf_counter()
    form.regex.search("a-" * 25_000 + " version")
    assert time.perf_counter() - start < 0.5


@pytest.mark.parametrize(
    "text",
    [
        "x_c " * 3000 + "was not compiled due to",
        "A" * 100_000,
        "only supports sm" + " " * 100_000,
        "only supports arch" + "\t" * 50_000 + "=",
    ],
)
def test_the_fourth_round_s_alternatives_read_in_linear_time(text: str) -> None:
    """A second review measured 94 s and 133 s at 100 KB when a name could start anywhere in a token and two
    optional runs of spaces sat side by side; each alternative now starts where a name starts and has one run."""
    import time

    from cudafit.explain.forms import FORMS

    start = time.perf_counter()
    for form in FORMS:
        if form.name in ("a compiled part missing from the install", "an SM check in the code's own terms"):
            form.regex.search(text)
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize(
    "text",
    [
        "x only supports arch" + "\n" * 20_000,
        "x only supports arch" + " " * 20_000,
        "CUDA error" + " " * 20_000 + "x",
        "error" + "\n" * 20_000 + "x",
        # long tokens: a hyphenated id, a base64url blob, a path without a source file's extension
        "a-" * 32_000,
        "sm_90a-" * 9_000,
        "aB3_-x9Q" * 8_000,
        "/a" * 32_000 + ".cu:12",
        "RTX-3090-" * 7_000 + " cc=8.6",
    ],
)
def test_runs_of_blanks_and_long_tokens_cost_linear_time(text: str) -> None:
    """A run of blank lines or spaces after a keyword, or one long token, was rescanned from each of its positions
    (reviews measured 13.7 s for 20 KB of newlines after "only supports arch" and 95 s for a 10 KB base64url blob):
    the timestamp stripper's leading blanks, the error number's and the arch check's two optional runs, and the
    GPU-name and source-file scans, which started at every hyphen.  Each now reads a run or a token once."""
    import time

    start = time.perf_counter()
    classify(text)
    assert time.perf_counter() - start < 2.0
