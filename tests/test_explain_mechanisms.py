"""Issue 18: rules read from a mechanism rather than an emitter's exact words, with the texts they must not take.

Each case is written from the mechanism its docstring in :mod:`cudafit.explain` names (CUDA's device numbering, a
program leaving the GPU idle, Triton compiling for the GPU it runs on, a CUDA build whose cuInit failed, CuTe's
plain-arch atoms, a/f targets of two families), not copied from the corpus.
"""

from __future__ import annotations

import pytest

from cudafit.explain import classify
from cudafit.explain.extract import iter_cuda_errors


def top(text: str) -> str:
    return classify(text)[0].category


@pytest.mark.parametrize(
    "text",
    [
        "The trainer runs on the wrong GPU: nvidia-smi shows the load on the GTX 1070, not the RTX 3090",
        "Device numbering disagrees with nvidia-smi on my host with a 4090 and a 3060",
        "GPU index mismatch between the monitor (NVML) and the CUDA device index",
        "GPU0 and GPU1 temperatures are swapped in the dashboard",
        "cuda:0 shown as GPU 1 in the overlay",
        "I selected GPU 1 in the settings, but the render still happens on GPU 0",
        "With two cards the app always defaults to the weaker card",
        "The 1070 is selected instead of the stronger 2080 Ti",
        "export CUDA_DEVICE_ORDER=PCI_BUS_ID fixed the numbering",
    ],
)
def test_two_numberings_of_the_gpus(text: str) -> None:
    assert top(text) == "mixed-gpu"


@pytest.mark.parametrize(
    "text",
    [
        "I set CUDA_VISIBLE_DEVICES=1 but the training uses the GPU anyway",
        "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity)",
        "Which GPU should I buy for training?",
        "No CUDA GPUs are available, the wrong GPU driver maybe",
    ],
)
def test_what_is_no_numbering_problem(text: str) -> None:
    assert top(text) != "mixed-gpu"


@pytest.mark.parametrize(
    "text",
    [
        "face_recognition is not using the GPU, the CPU load goes to 100%",
        "Training runs on the CPU instead of the GPU after pip install",
        "GPU usage is 0% while the model trains",
        "There is no activity on my GPU during inference",
        "print(dlib.DLIB_USE_CUDA)\nFalse",
        "AttributeError: module 'faiss' has no attribute 'StandardGpuResources'",
        "CatboostError: Can't load GPU learning library. Module was not compiled or driver  is incompatible with "
        "package",
    ],
)
def test_a_build_that_leaves_the_gpu_idle(text: str) -> None:
    assert top(text) == "wrong-framework-build"


def test_a_cuda_build_whose_cuinit_failed_is_no_cpu_build() -> None:
    fallback = "No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)"
    assert top(fallback) == "wrong-framework-build"
    unknown = "E external/xla/xla/stream_executor/cuda/cuda_driver.cc:268] failed call to cuInit: CUDA_ERROR_UNKNOWN"
    assert classify(f"{unknown}: unknown error\n{fallback}")[0].category == "unknown"
    compat = "failed call to cuInit: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: forward compatibility was attempted"
    assert top(f"{compat} on non supported HW\n{fallback}") == "driver-too-old"


def test_a_rocm_torch_that_cannot_use_a_gpu() -> None:
    text = (
        "RuntimeError: Torch is not able to use GPU; add --skip-torch-cuda-test to COMMANDLINE_ARGS\n"
        "Looking in indexes: https://download.pytorch.org/whl/rocm6.0\nCollecting torch==2.3.1+rocm6.0"
    )
    assert top(text) == "wrong-framework-build"


def test_triton_compiles_for_the_gpu_it_runs_on() -> None:
    text = "RuntimeError: Triton Error [CUDA]: device kernel image is invalid"
    (f, *_rest) = classify(text)
    assert f.category == "mixed-gpu"
    assert "triton-lang/triton:python/triton/runtime/cache.py" in f.evidence.get("sources", [])
    # the same words from another program are the image missing for the GPU
    assert top("CUDA error: device kernel image is invalid\n  current device: 0") != "mixed-gpu"


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("Out of shared memory on RTX 4090 when head_dim=256", "shared-memory-limit"),
        ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
         "unknown"),
        ("RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error. It is possible that dataloader's "
         "workers are out of shared memory.", "unknown"),
        ("OutOfMemoryError: out of resource: triton_tem_fused_mm_1\nRequired: 114688 Hardware limit:101376 Reducing "
         "block sizes or `num_stages` may help.", "shared-memory-limit"),
        ("Error reading result from hvm. Output :\nFailed to launch kernels (error code invalid argument)!",
         "shared-memory-limit"),
        ("Failed to launch kernels. Error code: invalid argument.", "shared-memory-limit"),
    ],
)
def test_shared_memory_of_the_gpu_not_the_host(text: str, category: str) -> None:
    assert top(text) == category


@pytest.mark.parametrize(
    ("text", "category"),
    [
        # a/f targets of two families beside a failure: no GPU runs code of both
        ("kernels for sm100f picked on an sm120a build\nRuntimeError: GEMM launch failed", "arch-specific-mismatch"),
        ("constraint failed: tcgen05 instructions are only applicable on nVidia Blackwell (sm_100a, sm_101a) hardware.",
         "arch-specific-mismatch"),
        # one a target and a GPU it covers is no mismatch
        ("built with -arch=sm_90a for the H100\nNVIDIA H100 80GB HBM3\nRuntimeError: CUDA error: out of memory",
         "unknown"),
        ("numba.cuda.cudadrv.error.NvvmSupportError: GPU compute capability 3.0 is not supported (requires >=3.5)",
         "capability-guard"),
    ],
)
def test_targets_and_checks(text: str, category: str) -> None:
    assert top(text) == category


def test_a_log_level_before_a_date_is_no_cuda_error() -> None:
    assert iter_cuda_errors("ERROR 08-30 07:32:02 [model_rpc.py:95] ptxas /tmp/x.ptx, line 180; error") == []
    assert [e.code for e in iter_cuda_errors("cuda runtime error (209) : no kernel image")] == [209]


def test_a_progress_bar_names_no_gpu() -> None:
    noise = "".join(f"Epoch 3: {i}/100 [01:02<01:24, gpu_mem=12.3G, loss=0.{i}]\n" for i in range(20))
    assert top("Loading the tokenizer takes a long time, 10 minutes\n" + noise) == "unknown"


def test_a_numbering_problem_is_fixed_by_the_numbering_not_a_rebuild() -> None:
    from cudafit.explain import explain_text

    (f, *_rest) = explain_text("I selected GPU 1 in the settings, but the render still happens on GPU 0")
    assert f.category == "mixed-gpu"
    assert "fastest first" in f.cause
    assert f.fixes[0].startswith("export CUDA_DEVICE_ORDER=PCI_BUS_ID")
    assert not any("TORCH_CUDA_ARCH_LIST" in x for x in f.fixes)


def test_triton_cache_fixes() -> None:
    from cudafit.explain import explain_text

    (f, *_rest) = explain_text("RuntimeError: Triton Error [CUDA]: device kernel image is invalid")
    assert "Triton's cache" in f.cause
    assert "rm -rf ~/.triton/cache" in f.fixes[0]


def test_a_build_without_cuda_named_by_no_framework_gets_no_torch_wheel() -> None:
    from cudafit.explain import explain_text

    (f, *_rest) = explain_text("face_recognition is not using the GPU, the CPU load goes to 100%")
    assert f.category == "wrong-framework-build"
    assert not any("pip install torch" in x for x in f.fixes)
    (g, *_rest) = explain_text("AttributeError: module 'faiss' has no attribute 'StandardGpuResources'")
    assert "faiss-gpu" in g.fixes[0]


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("ERROR: CUDA device 0 (GeForce GTX 780) has compute capability 3.5, which is below the minimum 5.0",
         "capability-guard"),
        ("RuntimeError: This kernel requires sm_90a", "arch-specific-mismatch"),
        # a GPU's product name after "unsupported GPU" is a guard's word, not a compiler's unknown target
        ("RuntimeError: Unsupported GPU: Tesla P100", "capability-guard"),
    ],
)
def test_more_forms_of_a_check(text: str, category: str) -> None:
    assert top(text) == category


@pytest.mark.parametrize(
    "text",
    [
        "torch.cuda.is_available() returns False even though nvidia-smi shows my RTX 3080",
        "print(torch.cuda.is_available())\nFalse",
        "pip installed the CPU version of torch (2.3.0+cpu)",
        "onnxruntime only shows CPUExecutionProvider",
        "tensorflow does not see my GPU: tf.config.list_physical_devices('GPU') returns []",
        "jax.devices() only shows CpuDevice",
    ],
)
def test_a_framework_that_lists_no_gpu(text: str) -> None:
    assert top(text) == "wrong-framework-build"


@pytest.mark.parametrize(
    "text",
    [
        "Your GPU (sm_61) is not in the list of architectures this binary was compiled for: sm_70 sm_75 sm_80",
        "this build does not include code for compute capability 12.0",
    ],
)
def test_a_build_that_names_what_it_lacks(text: str) -> None:
    assert top(text) == "no-kernel-image"


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("Can't use CUDA device 0: compute cap. 2.1 (at least 3.0 required)", "capability-guard"),
        ("Only CUDA devices with SM 5.0 and higher are supported\n#0 GeForce GTX 650 Ti | SM version: 3.0",
         "capability-guard"),
        ("Error while mixing GPUs: a GTX 680 and a GTX 590 on the same rig", "mixed-gpu"),
        # error 35 on a machine with no GPU: the CUDA build is the wrong one, not the driver
        ("Training on our CPU cluster fails: CUDA driver version is insufficient for CUDA runtime version",
         "wrong-framework-build"),
        ("CUDA driver version is insufficient for CUDA runtime version", "driver-too-old"),
        # Warp's start-up line: a toolkit newer than the driver's CUDA; "Driver 0.0" is no driver at all
        ("Warp 1.8.0 initialized:\n   CUDA Toolkit 12.8, Driver 12.2\nCUDA Error 900 during graph capture",
         "driver-too-old"),
        ("Warp CUDA error: Could not open libcuda.so.\n   CUDA Toolkit 12.8, Driver 0.0", "unknown"),
    ],
)
def test_checks_and_machines_in_users_words(text: str, category: str) -> None:
    assert top(text) == category


def test_ptx_a_named_gpu_cannot_jit() -> None:
    # the JIT failing for the GPU the report names: PTX for a higher arch, no code that GPU runs
    text = 'a error runnig Cere 0.90 - error "ErrorInvalidPtx".\n-CUDA device 0: NVIDIA GeForce GTX 1060 6GB'
    assert top(text) == "no-kernel-image"
    # alone the error says too little (a PTX file that was never built fails the same way)
    assert top("GVDB CUDA ERROR: Launch status: a PTX JIT compilation failed\nCall: cuModuleLoad") == "unknown"


def test_an_id_chosen_in_one_numbering_lands_on_another_card() -> None:
    text = "selecting ID 2, it says that it is 4090. However, on booting, the card is identified as my 3060 in ID 0."
    assert top(text) == "mixed-gpu"


@pytest.mark.parametrize(
    ("text", "category"),
    [
        # torch's range warning: a GPU above the highest arch but of its major runs that arch's cubins
        ("Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.\n    Minimum and Maximum cuda capability supported "
         "by this version of PyTorch is\n    (8.0) - (12.0)", "capability-guard"),
        ("Found GPU0 NVIDIA GeForce RTX 5090 which is of cuda capability 12.0.\n    Minimum and Maximum cuda "
         "capability supported by this version of PyTorch is\n    (5.0) - (9.0)", "no-kernel-image"),
        # error 35 beside a driver no CUDA runtime finds too old: the runtime did not reach the driver
        ("CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version\nNvidia Driver: v580.78",
         "unknown"),
        ("CUDA driver version is insufficient for CUDA runtime version\nDriver Version: 470.82.01\ntorch 2.3.0+cu121",
         "driver-too-old"),
        # a library's check named by the traceback
        ("ERROR  self._check_scheme_supported(scheme.get_min_capability())\nValueError: unsupported scheme",
         "capability-guard"),
        ("AssertionError: Only SM30 and above are supported at this time, got 120.0.", "capability-guard"),
        # two numberings in users' words
        ("Theano GPU order incosistent with nvidia?", "mixed-gpu"),
        ("Device index confusion: they seem to get opposite IDs depending if I use cuda directly", "mixed-gpu"),
        ("I choose RTX 2080 Ti, but the program use my GTX 1080 Ti.", "mixed-gpu"),
        # the host's shared memory in a container
        ("an error about shared memory limited occurs while training, i am training on docker", "unknown"),
        ("NVENC fails\nRequired: NVENC API 13.0\nFound: 12.2\nMinimum required Nvidia driver is 570.0 or newer",
         "driver-too-old"),
    ],
)
def test_round_three(text: str, category: str) -> None:
    assert top(text) == category


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("Works on the RTX 3090 but crashes on the GTX 1080 in the same box", "mixed-gpu"),
        ("After adding a second card (Tesla P40) next to my 3090, llama.cpp crashes", "mixed-gpu"),
        ("heterogeneous GPUs: one K80 and one V100, the program only works if I hide the K80", "mixed-gpu"),
        ("TensorRT engine created on T4 does not load on A10G", "mixed-gpu"),
        ("torch.compile cache from the 3090 box is reused on the 4090 and crashes", "mixed-gpu"),
        ("The docker image was built on a machine with an A100 and fails on our T4 servers: no kernel image",
         "mixed-gpu"),
        ("Error: your GPU (GTX 1060) is not supported, Volta or newer required", "capability-guard"),
        # an a target's own SM name is no GPU; the GPU named in prose is
        ("The FlashMLA kernels (sm_90a) do not work on the 4090", "arch-specific-mismatch"),
        # one GPU, no second: no mixed host
        ("I'm adding a second card next month, which power supply do I need?", "unknown"),
    ],
)
def test_users_words_for_hosts_and_checks(text: str, category: str) -> None:
    assert top(text) == category


# -- session 9: a symbol of a module never loaded, GPUs as reports spell them, a host the report calls mixed ----------


@pytest.mark.parametrize(
    "text",
    [
        "cudaMemcpyToSymbol(d_table, ...) failed: invalid device symbol",
        "Cuda error 13 at kernels.cu:88 (invalid device symbol). Built on my workstation, fails on the cluster's nodes",
        "error: cudaErrorInvalidSymbol while uploading the constants",
    ],
)
def test_a_symbol_of_a_module_that_was_never_loaded(text: str) -> None:
    """cudaErrorInvalidSymbol: a __constant__ variable lives in the module loaded for this device; without an image
    for the device there is none (scripts/record_cuda_errors.py), weak evidence of missing code."""
    (finding, *_rest) = classify(text)
    assert finding.category == "no-kernel-image"
    assert finding.score < 3.0  # a context error, never as sure as cudaErrorNoKernelImageForDevice


def test_invalid_device_symbol_is_context_only() -> None:
    (err,) = [e for e in iter_cuda_errors("invalid device symbol") if e.code == 13]
    assert err.certainty == "context" and err.categories == ("no-kernel-image",)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Threadripper + RTX1080ti + RTX1660ti", [("RTX1080ti", "6.1"), ("RTX1660ti", "7.5")]),  # brand swapped, glued
        ("works on the GTX 3090, not on the other box", [("GTX 3090", "8.6")]),
        ("my rig: 2x5090 and a 3060", [("RTX 5090", "12.0"), ("RTX 3060", "8.6")]),
        ("Dual 4090s on one board", [("RTX 4090", "8.9")]),
        # someone else's card is not the host's
        ("my GPU is a Tesla T4, while yours is an A100", [("Tesla T4", "7.5")]),
        ("you used an H100; I have a Tesla V100", [("Tesla V100", "7.0")]),
    ],
)
def test_gpus_as_reports_spell_them(text: str, expected: list[tuple[str, str]]) -> None:
    from cudafit.explain.extract import iter_mentioned_gpus

    assert list(iter_mentioned_gpus(text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Build fails on a system with multiple GPUs with different architectures: only sm70 and above is supported",
        "Bug in the capability check with different GPUs installed\nValueError: Bfloat16 is only supported on GPUs "
        "with compute capability of at least 8.0. Your GPU has compute capability 7.5.",
        "We run a mixed GPU setup. RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
    ],
)
def test_a_guard_on_a_host_the_report_calls_mixed(text: str) -> None:
    assert top(text) == "mixed-gpu"


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
        "Two identical cards. ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
        "Your GPU has compute capability 7.5.",
        "several GPUs with the same architecture. RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
    ],
)
def test_a_guard_without_a_mixed_host_stays_a_guard(text: str) -> None:
    assert top(text) == "capability-guard"


@pytest.mark.parametrize(
    ("text", "category"),
    [
        # lower-arch PTX taking the older arch's path (__CUDA_ARCH__) on a newer GPU
        ("The model produces garbage on sm_86 when the library is built only for compute_61 PTX", "ptx-jit-lower-arch"),
        ("Only PTX for compute_50 is in the build and the RTX 3060 gives wrong results", "ptx-jit-lower-arch"),
        ("Startup hangs for minutes on a new GPU while CUDA is compiling PTX to cubin", "ptx-jit-lower-arch"),
        # a GPU named with its model in parentheses, refusing a feature
        ("RuntimeError: Your GPU (Tesla T4) does not support bf16", "capability-guard"),
        ("this device (GTX 1080, sm_61) cannot run FP8 kernels", "capability-guard"),
        # a program that leaves the GPU idle: the build it loaded has no GPU path
        ("installed from pip, it runs on CPU only and the layers are not offloaded to GPU", "wrong-framework-build"),
        ("The model loads into system RAM instead of VRAM", "wrong-framework-build"),
        # a FlashAttention 1.x backward refused for shared memory, as reports shorten it
        ("Head dim > 64 backward requires A100 or H100", "shared-memory-limit"),
        ("FlashAttention backward for head dim > 64 requires A100 or H100 GPUs", "shared-memory-limit"),
    ],
)
def test_forms_from_my_own_phrasings(text: str, category: str) -> None:
    assert top(text) == category


@pytest.mark.parametrize(
    "text",
    [
        # PTX and a misbehaviour with no lower arch named: no JIT of lower-arch PTX
        "The PTX docs say wrong results are possible with fast-math",
        "PTX garbage collection in the compiler takes long",
        "I inspected the PTX and the kernel returns wrong values for negative inputs",
        # the GPU left idle beside an error of another kind
        "RuntimeError: CUDA error: out of memory. The model loads into system RAM instead of VRAM",
    ],
)
def test_forms_that_must_not_fire_without_their_cause(text: str) -> None:
    assert top(text) == "unknown"


# -- a report's build flags judged against the GPUs it names (explain/builds.py, rules.compat.code_runs_on) ----------


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("GPU: NVIDIA GeForce RTX 3090\nnvcc flags: -gencode arch=compute_61,code=sm_61\nkernel launch failed",
         "no-kernel-image"),  # sm_61 SASS cannot run on 8.6 and there is no PTX
        ("Tesla V100. I compiled with CMAKE_CUDA_ARCHITECTURES=86. The program crashes at the first kernel with a CUDA "
         "error.", "no-kernel-image"),  # 8.6 code (SASS and PTX) runs on nothing below 8.6
        ('TORCH_CUDA_ARCH_LIST="8.0;8.6" build, running on a GTX 1080 Ti: RuntimeError: CUDA error in my_ext_kernel',
         "no-kernel-image"),
        ("compiled with -arch=sm_52, my GTX 1650 runs it fine but my Tesla K80 fails", "mixed-gpu"),
        # -arch=sm_75 embeds compute_75 PTX: an 8.9 GPU runs it only through the driver's JIT (seed 001's mechanism)
        ("Built with -arch=sm_75; on my RTX 4090 the extension fails with an error", "ptx-jit-lower-arch"),
        ("OpenCV built with CUDA_ARCH_BIN=7.5 CUDA_ARCH_PTX=7.5. On the RTX 4080 the first call takes 45 s",
         "ptx-jit-lower-arch"),
        ("TORCH_CUDA_ARCH_LIST=6.1+PTX build of the ops; on the A100 the first run hangs for 10 minutes",
         "ptx-jit-lower-arch"),
    ],
)  # fmt: skip
def test_build_flags_without_code_for_a_named_gpu(text: str, category: str) -> None:
    assert top(text) == category


@pytest.mark.parametrize(
    "text",
    [
        # sm_80 cubins run on 8.9 (same major, lower minor): the build covers the GPU, the failure is another's
        'TORCH_CUDA_ARCH_LIST="8.0;8.6+PTX", RTX 4090: the op fails with an error',
        "TORCH_CUDA_ARCH_LIST=8.6 on the RTX 3090 and everything works",
    ],
)
def test_build_flags_that_cover_the_gpu_say_nothing(text: str) -> None:
    assert top(text) == "unknown"


def test_build_flags_read_in_each_tools_meaning() -> None:
    from cudafit.explain.builds import iter_build_targets

    def labels(text: str) -> list[str]:
        return [r.label for r in iter_build_targets(text)]

    assert labels('TORCH_CUDA_ARCH_LIST="8.0;8.6+PTX"') == ["8.0", "8.6", "PTX 8.6"]
    assert labels('-DCMAKE_CUDA_ARCHITECTURES="75;86-real"') == ["7.5", "PTX 7.5", "8.6"]
    assert labels("-gencode=arch=compute_86,code=[sm_86,compute_86]") == ["8.6", "PTX 8.6"]
    assert labels("nvcc -arch=sm_52 x.cu") == ["5.2", "PTX 5.2"]
    assert labels("-arch=native -march=native CMAKE_CUDA_ARCHITECTURES=all") == []


def test_a_build_form_for_a_program_of_its_own_gets_no_pytorch_wheel() -> None:
    from cudafit.explain import explain_text

    text = "Tesla K80. I compiled with CMAKE_CUDA_ARCHITECTURES=86 and the program fails with a CUDA error"
    (f,) = explain_text(text)
    assert f.category == "no-kernel-image"
    assert not any("download.pytorch.org" in fix for fix in f.fixes)
    assert 'TORCH_CUDA_ARCH_LIST="3.7"' in f.fixes[0]


@pytest.mark.parametrize(
    ("text", "category"),
    [
        # the JIT forced or its cache named beside a failure or a slow start
        ("Same binary with CUDA_FORCE_PTX_JIT=1 reproduces the crash on the 3090", "ptx-jit-lower-arch"),
        ("every pod restart re-JITs for ~6 minutes on the L4", "ptx-jit-lower-arch"),
        # a GPU that CUDA 12's NVRTC dropped is too old for CuPy's kernels, not a NVRTC too old for the GPU
        ("cupy-cuda12x on a Tesla K40m:\ncupy_backends.cuda.api.runtime.CUDARuntimeError: "
         "cudaErrorNoKernelImageForDevice: no kernel image is available for execution on the device",
         "no-kernel-image"),
        # an a-target list after "build list" beside a missing image on a GPU outside it
        ("RuntimeError: no kernel image is available for execution on the device (RTX PRO 6000 Blackwell)\n"
         "The AOT build list was 8.0;8.9;9.0a;10.0a.", "arch-specific-mismatch"),
    ],
)  # fmt: skip
def test_jit_cache_and_targets_from_my_own_phrasings(text: str, category: str) -> None:
    assert top(text) == category


@pytest.mark.parametrize(
    ("text", "category"),
    [
        # CUDA.jl's start-up warning (src/initialization.jl)
        ("Warning: The NVIDIA driver on this system only supports up to CUDA 11.4.0.", "driver-too-old"),
        # torch's Tensor.numpy() of a CUDA tensor (torch/csrc/utils/tensor_numpy.cpp)
        ("TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
         "memory first.", "device-mismatch"),
        # XGBoost's MismatchedDevices (src/common/error_msg.cc)
        ("WARNING: error_msg.cc:58: Falling back to prediction using DMatrix due to mismatched devices. XGBoost is "
         "running on: cuda:0, while the input data is on: cpu.", "device-mismatch"),
        # TensorFlow's ValidateDevice (tensorflow/core/framework/resource_mgr.cc)
        ("InvalidArgumentError: Trying to access resource Resource-2-at-0x55 located in device "
         "/job:localhost/replica:0/task:0/device:GPU:0 from device /job:localhost/replica:0/task:0/device:CPU:0",
         "device-mismatch"),
        # llama.cpp's API reporting a build without a GPU backend
        (">>> llama_cpp.llama_supports_gpu_offload()\nFalse", "wrong-framework-build"),
        # an extension built for a CUDA torch under a CPU torch: the torch is the wrong build
        ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
         "    PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.1.0+cpu)", "wrong-framework-build"),
        # FlashAttention 2's backward check for head dims whose kernels need 8.0/9.0's shared memory
        ("RuntimeError: FlashAttention backward for head dim > 192 with dropout requires A100/A800 or H100/H800",
         "shared-memory-limit"),
    ],
)  # fmt: skip
def test_emitters_found_by_my_own_probes(text: str, category: str) -> None:
    assert top(text) == category


def test_flash_attention_backward_gets_its_own_fixes() -> None:
    from cudafit.explain import explain_text

    (f,) = explain_text("RuntimeError: FlashAttention backward for head dim > 192 requires A100/A800 or H100/H800")
    assert "dropout 0" in f.fixes[0] and "num_stages" not in " ".join(f.fixes)


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("cudf.errors.UnsupportedCUDAError: Please update your NVIDIA GPU Driver to support CUDA Runtime.\n"
         "Detected CUDA Runtime version : 11080", "driver-too-old"),
        ("ValueError: Pointer argument (at 0) cannot be accessed from Triton (cpu tensor?)", "device-mismatch"),
        ("TypeError: Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy "
         "array explicitly.", "device-mismatch"),
        ("`cutlassF-pt` is not supported because:\n    device=cpu (supported: {'cuda'})", "device-mismatch"),
        ("numba.cuda.cudadrv.error.NvvmSupportError: No supported GPU compute capabilities found. Please check your "
         "cudatoolkit version matches your CUDA version.", "jit-toolchain-too-old"),
        ("Error: UnsupportedPtxVersion\nlet module = Module::from_ptx(PTX, &[])?;", "ptx-too-new-for-driver"),
        ("Expected symbol in library: /lib/x86_64-linux-gnu/libcuda.so.1: undefined symbol: cuCtxCreate_v4",
         "driver-too-old"),
        ("$ python -c 'import torch; print(torch.__version__)'\n2.0.1+cpu", "wrong-framework-build"),
    ],
)  # fmt: skip
def test_more_emitters_found_by_my_own_probes(text: str, category: str) -> None:
    assert top(text) == category


@pytest.mark.parametrize(
    ("text", "category"),
    [
        # a GPU newer than every target of the build's own list: no code, whatever a target among them is
        ("NVIDIA GB10 with CUDA capability sm_121 is not compatible with the current PyTorch installation.\n"
         "The current PyTorch install supports CUDA capabilities sm_50 sm_80 sm_86 sm_89 sm_90 sm_90a.",
         "no-kernel-image"),
        # an a-only build beside a GPU outside it: the kernel name's "_sm100" is no list of the build
        ("RuntimeError: CUDA error: no kernel image is available for execution on the device\n  in "
         "cutlass_scaled_mm_sm100 ...\nbuild env: TORCH_CUDA_ARCH_LIST='9.0a;10.0a'\nGPU: RTX 5090",
         "arch-specific-mismatch"),
        # a project's own arch variable
        ('TransformerEngine built with NVTE_CUDA_ARCHS="90a". On the L4: CUDA Error: no kernel image is available for '
         "execution on the device", "arch-specific-mismatch"),
        # GROMACS' PTX-only target and candle's PTX kernels on a newer GPU, beside a slow start / a failure
        ("GROMACS built with GMX_CUDA_TARGET_COMPUTE=70 (no SM list) on an H100 node: mdrun sits ~4 minutes before "
         "step 0", "ptx-jit-lower-arch"),
        ("-gencode arch=compute_60,code=compute_60 (PTX only). On H100 the first step takes 4+ minutes",
         "ptx-jit-lower-arch"),
    ],
)  # fmt: skip
def test_build_lists_of_their_own(text: str, category: str) -> None:
    assert top(text) == category


@pytest.mark.parametrize(
    "text",
    [
        # Blender names the GPU's capability in its own message: with a second card listed, the host is mixed
        "[Bug] Cycles fails with both GPUs enabled\nCUDA: GeForce GTX 680 + GeForce RTX 3070 both ticked.\n"
        '"CUDA binary kernel for this graphics card compute capability (3.0) not found."',
        # GROMACS refuses the card an nvidia-smi index named in CUDA's numbering
        "#0: NVIDIA GeForce RTX 3080, compute cap.: 8.6, ECC:  no, stat: compatible\n"
        "#1: NVIDIA GeForce GTX 780, compute cap.: 3.5, ECC:  no, stat: incompatible\n"
        "I passed -gpu_id 1 thinking it was the 3080 (that's how nvidia-smi numbers them).",
    ],
)
def test_mixed_hosts_from_my_own_phrasings(text: str) -> None:
    assert top(text) == "mixed-gpu"


@pytest.mark.parametrize(
    ("text", "category"),
    [
        # guards in their own words
        ("CUDA device supported only with compute capability 3.0 or up, found 2.1.", "capability-guard"),
        ("* Device #1: This hardware has outdated CUDA compute capability (3.5).", "capability-guard"),
        ("[[pulse_test]] Incompatible CUDA compute capability major version: 12", "capability-guard"),
        # OptiX lives in the driver
        ("Optix call (optixInit()) failed with code OPTIX_ERROR_UNSUPPORTED_ABI_VERSION (line 574)", "driver-too-old"),
        # host memory handed to device code, per library
        ("KernelError: passing and using non-bitstype argument\n      .x is of type Array{Float32,1} which is not "
         "isbits.", "device-mismatch"),
        ("ValueError: numpy and cupy must not be used together\ntype(W): <class 'cupy.core.core.ndarray'>",
         "device-mismatch"),
        ("error: (-213:The function/feature is not implemented) You should explicitly call download method for "
         "cuda::GpuMat object in function 'getMat_'", "device-mismatch"),
        # ggml's message quoted without its kernel
        ('Na RTX 4060 modelos q8_0 dão "no device code compatible with CUDA arch 520" e aborta.', "ptx-jit-lower-arch"),
        # torch's own listing of a session: the build's cubins against the GPU's capability
        (">>> torch.cuda.get_device_capability()\n(6, 1)\n>>> torch.cuda.get_arch_list()\n"
         "['sm_75', 'sm_80', 'sm_86', 'sm_90', 'sm_100', 'sm_120']\nFirst forward fails.", "no-kernel-image"),
        ("kohya venv on Windows, RTX 4070. torch.version.cuda -> None, nvidia-smi works", "wrong-framework-build"),
        ("nvidia-smi:\n|   0  NVIDIA GeForce GTX 1070      | 00000000:01:00.0 |\n|   1  NVIDIA GeForce RTX 3090      | "
         "00000000:02:00.0 |\nI set CUDA_VISIBLE_DEVICES=1 to train on the 3090, but get_device_name(0) says GeForce "
         "GTX 1070 and bf16 autocast errors out.", "mixed-gpu"),
    ],
)  # fmt: skip
def test_probe_round_c_and_d(text: str, category: str) -> None:
    assert top(text) == category


def test_a_name_with_its_arch_beside_it_is_a_gpu() -> None:
    from cudafit.explain.extract import iter_mentioned_gpus

    assert list(iter_mentioned_gpus("Deployed on GCP L4 (sm_89)")) == [("L4", "8.9")]


@pytest.mark.parametrize(
    ("text", "category"),
    [
        # Kokkos compiled below the device (lower-arch code runs) against its probe finding no image (0.0)
        ("Kokkos::Cuda::initialize ERROR: running kernels compiled for compute capability 3.5 (< 5.0) on device with "
         "compute capability 5.0 (>=5.0), this would give incorrect results!", "ptx-jit-lower-arch"),
        ("Kokkos::Cuda::initialize ERROR: running kernels compiled for compute capability 0.0 (< 5.0) on device with "
         "compute capability 5.0 (>=5.0), this would give incorrect results!", "no-kernel-image"),
        # cuobjdump's own listing of a library beside a slow first call on a newer GPU
        ("cuml on a DGX Spark (GB10): the first fit takes ~4 minutes.\nELF file    1: libcuml++.1.sm_80.cubin\n"
         "ELF file    2: libcuml++.2.sm_90.cubin\nPTX file    1: libcuml++.3.sm_90.ptx", "ptx-jit-lower-arch"),
        # PTX-only builds, a misbehaviour or a slow start in other words and languages
        ("aligner built with -arch=compute_35 only (PTX). On an RTX 3090 the scores differ from the CPU reference",
         "ptx-jit-lower-arch"),
        ("RTX 4070: el primer paso tarda ~3 minutos. El makefile tiene -gencode arch=compute_60,code=compute_60",
         "ptx-jit-lower-arch"),
        # a CPU build in other words
        ("Jetson Orin: torch.cuda.is_available() 是 False，torch.version.cuda 是 None", "wrong-framework-build"),
        ("requirements.txt has --extra-index-url https://download.pytorch.org/whl/cpu and torch==2.4.0",
         "wrong-framework-build"),
    ],
)  # fmt: skip
def test_probe_round_c_and_d_mechanisms(text: str, category: str) -> None:
    assert top(text) == category


def test_a_negated_is_available_is_no_cpu_build() -> None:
    assert top("torch.cuda.is_available() is not False here; the kernel fails with an illegal address") == "unknown"


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("gmx mdrun -nb gpu fails asking for a GPU; md.log header says\nGPU support:        disabled",
         "wrong-framework-build"),
        ("lmp -sf gpu -pk gpu 1 -in in.lj:\nERROR: Package gpu command without GPU package installed",
         "wrong-framework-build"),
        ("Kokkos::parallel_for<Cuda>: Requested too much scratch memory on level 0. Requested: 114688, Maximum: 98304",
         "shared-memory-limit"),
        ("Error: device mismatch in matmul, lhs: Cuda { gpu_id: 0 }, rhs: Cpu", "device-mismatch"),
        ("NumbaPerformanceWarning: Host array used in CUDA kernel will incur copy overhead to/from device.",
         "device-mismatch"),
        ("cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, 163840) returns invalid argument",
         "shared-memory-limit"),
        ("the kernel asks for 114688 B of shared memory per block, the device opt-in max is 101376 B, so it dies",
         "shared-memory-limit"),
    ],
)  # fmt: skip
def test_probe_round_c_emitters(text: str, category: str) -> None:
    assert top(text) == category


def test_a_cpu_build_header_alone_is_no_finding() -> None:
    # GROMACS prints its build information in every log: without a failure it says nothing
    assert top("GROMACS version:    2022\nGPU support:        disabled\nSIMD instructions:  AVX2_256") == "unknown"


@pytest.mark.parametrize(
    "text",
    [
        # the numbering put the job on the smaller card, which runs out of memory: the OOM is the symptom
        "nvidia-smi lists the 3090 as 1, so I set CUDA_VISIBLE_DEVICES=1, but CUDA's device order differs from "
        "nvidia-smi and the job lands on the GTX 1660 and OOMs",
        "docker --gpus device=0 gives the L4 but on the host CUDA_VISIBLE_DEVICES=0 gives the H100: docker and CUDA "
        "disagree about what 0 is, and the job fails",
        # two GeForce numbers joined as one host's cards
        "torchrun on my home box (3090 + 2080 Ti): rank1 fails with CUDA error: no kernel image is available for "
        "execution on the device",
    ],
)
def test_wrong_card_of_a_mixed_host(text: str) -> None:
    assert top(text) == "mixed-gpu"


@pytest.mark.parametrize(
    "text",
    [
        "host: GTX 1080 Ti + RTX 3090\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "the 1920x1080 + 2080 frames: CUDA out of memory",
    ],
)
def test_out_of_memory_without_a_numbering_mix_up_stays_unknown(text: str) -> None:
    assert top(text) == "unknown"


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("AOTInductor package loaded on cuda:1:\nException in aoti_torch: Specified device cuda:1 does not match "
         "device of data cuda:0", "device-mismatch"),
        ("running the package: CUDAGuardImpl initialized with non-CUDA DeviceType: cpu", "device-mismatch"),
        ("ValueError: Attempt to split tensors that exceed maximum supported devices. Current LLAMA_MAX_DEVICES=1",
         "wrong-framework-build"),
        ("RuntimeError: Attention triton kernel does not fully support triton[2.2.0~2.3.1] on device with "
         "capability<8.", "capability-guard"),
        # the JIT's signs: stalls and seconds, NaN, 'slower', the compute cache, the JIT forced or disabled
        ("Built with TORCH_CUDA_ARCH_LIST=\"7.5+PTX\" on the T4 CI box. On the A100 it is ~6x slower.",
         "ptx-jit-lower-arch"),
        ("apex built with TORCH_CUDA_ARCH_LIST=\"6.0;7.0+PTX\". On the A100 nodes loss goes NaN after 2k steps.",
         "ptx-jit-lower-arch"),
        ("Windows 11, RTX 4070: the app freezes ~4 min at startup and %APPDATA%\\NVIDIA\\ComputeCache grows to 400 MB",
         "ptx-jit-lower-arch"),
        ("With CUDA_DISABLE_PTX_JIT=1 our binary fails right away on the H100", "ptx-jit-lower-arch"),
        # a PTX-only build is JIT-compiled on every GPU
        ("we ship CMAKE_CUDA_ARCHITECTURES=70-virtual only; the first launch in each process stalls 40-90 s",
         "ptx-jit-lower-arch"),
        # an a target named after 'from ... to'
        ("switched CMAKE_CUDA_ARCHITECTURES from 90 to 90a-real; our CI runner's GPU tests started failing",
         "arch-specific-mismatch"),
    ],
)  # fmt: skip
def test_probe_round_e(text: str, category: str) -> None:
    assert top(text) == category


@pytest.mark.parametrize(
    ("text", "category"),
    [
        # a PTX-only build from a toolkit whose minimum driver is above the driver named: the JIT cannot read it
        ("CI builds the wheel with CUDA 12.9 and CMAKE_CUDA_ARCHITECTURES=90-virtual (PTX only). On the H100 cluster "
         "(driver 550.90.07) the first kernel launch fails", "ptx-too-new-for-driver"),
        # the same build on a driver new enough: the JIT runs, and its cost is the finding
        ("CI builds the wheel with CUDA 12.9 and CMAKE_CUDA_ARCHITECTURES=90-virtual (PTX only). On the H100 cluster "
         "(driver 575.51) the first kernel launch stalls for 40 s", "ptx-jit-lower-arch"),
        # slow host-device copies are no JIT; a hedged hint naming the GPU's features is no guard
        ("GPU on a riser cable: PCIe Generation Current 1 / Max 4. Training is data-loader bound and H2D copies take "
         "forever.", "unknown"),
        ("NansException: A tensor with NaNs was produced in Unet. This could be either because there's not enough "
         "precision to represent the picture, or because your video card does not support half type.", "unknown"),
    ],
)  # fmt: skip
def test_probe_round_e_drivers_and_vetoes(text: str, category: str) -> None:
    assert top(text) == category


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("20220208 11:16:31 ERROR: Can't start miner, GeForce GTX 650 Ti BOOST (CC 3) is not supported",
         "capability-guard"),
        ("RuntimeError: No supported GPUs are present on this system.", "capability-guard"),
        ("Notice: GPU id 0 is not available for computation because it's compute capability is not high enough",
         "capability-guard"),
        ("[hevc_cuvid @ 00000193dfc7c780] Codec hevc_cuvid is not supported.", "capability-guard"),
        ("Provided device doesn't support required NVENC features", "capability-guard"),
        ("WARN ai.djl.pytorch.jni.LibUtils - No matching cuda flavor for linux-x86_64 found: cu121.",
         "wrong-framework-build"),
        ("System.EntryPointNotFoundException: Unable to find an entry point named "
         "'OrtSessionOptionsAppendExecutionProvider_CUDA' in DLL 'onnxruntime'.", "wrong-framework-build"),
        ("Flash attention currently doesn't support training with head_dim greater than 64 on sm86 or newer",
         "shared-memory-limit"),
        ("File \".../flash_attn/flash_attn_interface.py\", line 42, in _flash_attn_backward\n"
         "RuntimeError: Expected is_sm80 || is_sm90 to be true, but got false.", "shared-memory-limit"),
        ("This file was compiled: -acc=gpu -gpu=cc60 -gpu=cc70\nRebuild the application with -gpu=cc86 to use "
         "NVIDIA Tesla GPU 0", "no-kernel-image"),
        ("NVIDIA GeForce GTX 1060 with Max-Q Design with CUDA capability sm_61 is\nnot compatible with the current "
         "PyTorch installation.", "no-kernel-image"),
    ],
)  # fmt: skip
def test_dev_j_emitters(text: str, category: str) -> None:
    assert top(text) == category


@pytest.mark.parametrize(
    "text",
    [
        # a status line of every start on a GPU without fast FP16 says nothing of what failed after it
        "platform does not have FP16 support.\nRuntimeError: CUDA error: an illegal memory access was encountered",
        # torch's own kernels with the same words stay a guard (no flash_attn package)
        "RuntimeError: Expected is_sm80 to be true, but got false. (scaled_dot_product_attention backward)",
    ],
)
def test_dev_j_what_must_not_change(text: str) -> None:
    assert top(text) in ("unknown", "capability-guard")


@pytest.mark.parametrize(
    ("text", "category"),
    [
        # an API call and what it returned is the error of that number
        ("GKE node pool on driver 535; our app logs: cudaGetDeviceCount returned 35", "driver-too-old"),
        ("built with -arch=compute_86 (PTX only); at every launch cuModuleLoadData returning 222",
         "ptx-too-new-for-driver"),
        ("tvm.error.InternalError: Failed to set the allowed dynamic shared memory size to 196608",
         "shared-memory-limit"),
        ("cuFuncSetAttribute returning CUDA_ERROR_INVALID_VALUE for a kernel asking for 0x20000 bytes",
         "shared-memory-limit"),
        ("y = x * mask\nTypeError: Unsupported type <class 'numpy.ndarray'>", "device-mismatch"),
        ('the TensorRT plugin prints "GPU sm_87 not in supported list [80, 86, 89, 90], falling back to CPU"',
         "capability-guard"),
    ],
)  # fmt: skip
def test_probe_round_f(text: str, category: str) -> None:
    assert top(text) == category


def test_a_bf16_kernel_missing_from_a_module_is_the_gpus_lack_of_bf16() -> None:
    # candle compiles its bf16 kernels only for compute capability 8.0 and up (candle-kernels/src/cast.cu)
    text = 'Error: DriverError(CUDA_ERROR_NOT_FOUND, "named symbol not found") when loading cast_f32_bf16'
    assert top(text) == "capability-guard"
    assert top('Error: DriverError(CUDA_ERROR_NOT_FOUND, "named symbol not found") when loading affine_f32') != (
        "capability-guard"
    )


# -- the review of session 9's diff: what its rules must not take ------------------------------------------------


@pytest.mark.parametrize(
    ("text", "category"),
    [
        # only a CUDA call's name returns a CUDA error: curl and a cursor do not
        ("curl returned 35", "unknown"),
        ("The cursor returns 209 rows", "unknown"),
        # a fleet with different GPUs is no mixed host: the guard stays a guard
        ("Our cluster has different GPUs available, I requested a V100. RuntimeError: FlashAttention only supports "
         "Ampere GPUs or newer.", "capability-guard"),
        # an arch no table knows in torch's own list (sm_30) does not stop the rest from being judged
        ("The current PyTorch install supports CUDA capabilities sm_30 sm_35 sm_50.\nGPU: RTX 3090 fails",
         "no-kernel-image"),
        # a PTX-only build with no GPU named and a plain compile error is no JIT finding
        ('nvcc -arch=compute_75 foo.cu\nerror: identifier "__nv_bfloat16" is undefined', "unknown"),
        # torch's own copy of FlashAttention (aten/.../cuda/flash_attn/) keeps the guard
        ('File "/opt/pytorch/aten/src/ATen/native/transformers/cuda/flash_attn/flash_api.cpp"\n'
         "RuntimeError: Expected is_sm80 || is_sm90 to be true, but got false.", "capability-guard"),
        # torch's OOM ("Tried to allocate") beside a numbering mix-up is the wrong card, whatever the build flags say
        ("nvidia-smi numbers them differently; I set CUDA_VISIBLE_DEVICES=1 but the job lands on the GTX 1660 built "
         "with -arch=sm_61: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "mixed-gpu"),
    ],
)  # fmt: skip
def test_review_findings(text: str, category: str) -> None:
    assert top(text) == category


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        ("CMAKE_CUDA_ARCHITECTURES=75;86", ["7.5", "PTX 7.5", "8.6", "PTX 8.6"]),
        ("set(CMAKE_CUDA_ARCHITECTURES 75 86)", ["7.5", "PTX 7.5", "8.6", "PTX 8.6"]),
        ("TORCH_CUDA_ARCH_LIST=7.5 8.6 are the archs", ["7.5", "8.6"]),
    ],
)
def test_unquoted_arch_lists_are_read_whole(text: str, labels: list[str]) -> None:
    from cudafit.explain.builds import iter_build_targets

    assert [r.label for r in iter_build_targets(text)] == labels


def test_a_gpu_only_the_jit_serves_gets_the_arch_list_and_the_cache() -> None:
    from cudafit.explain import explain_text

    (f,) = explain_text('Built with TORCH_CUDA_ARCH_LIST="7.5+PTX" on the T4 CI box. On the A100 it is ~6x slower.')
    assert f.category == "ptx-jit-lower-arch"
    assert 'TORCH_CUDA_ARCH_LIST="8.0"' in f.fixes[0] and "cudafit plan --gpu 8.0" in f.fixes[0]
    assert "CUDA_CACHE_PATH" in f.fixes[1]


@pytest.mark.parametrize(
    ("text", "category"),
    [
        # a runtime of a newer CUDA major than the driver's, as the program reports both
        (">>> torch.cuda.is_available()\nFalse\ncudaRuntimeGetVersion -> 12060, cudaDriverGetVersion -> 11040",
         "driver-too-old"),
        ("md.log header:\n  CUDA driver:        11.60\n  CUDA runtime:       12.40\nno compatible GPUs",
         "driver-too-old"),
        ("  CUDA driver:        12.20\n  CUDA runtime:       12.40", "unknown"),  # one major: minor compatibility
        ("ERROR: You are using paddlepaddle cpu version! Please try to install paddlepaddle-gpu to run model on GPU.",
         "wrong-framework-build"),
        ("cudaFuncSetAttribute fails for the split-KV kernel; the compiled instance wants 106,752 bytes",
         "shared-memory-limit"),
        ("the GLU compile fails asking XLA for 114688 B of shared memory", "shared-memory-limit"),
    ],
)  # fmt: skip
def test_probe_round_f_versions_and_sizes(text: str, category: str) -> None:
    assert top(text) == category
