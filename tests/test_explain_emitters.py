"""explain's catalogue comes from the code that emits each message, and its fixes point the right way (issue 18).

Every pattern cites where its message is written (``owner/repo:path`` or an NVIDIA document); the
messages below are the emitters' own format strings filled in as those programs print them, and the
fixes must fit the emitter: a CTranslate2 error is not fixed by a PyTorch wheel, a CUTLASS kernel that
needs ``sm_90a`` is not fixed by building ``sm_90``, tensors on cuda:0 and cuda:1 are not an
AOTInductor packaging problem, and ptxas' shared-memory sizes are compared with the GPU's limit.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import jsonschema
import pytest

from cudafit.explain import CATEGORIES, Context, classify, explain_text
from cudafit.explain.catalogue import SOURCE_PROJECTS, iter_sources, project_of
from cudafit.explain.ground import KernelGap, ground
from cudafit.model import Gpu, parse_compute_capability, parse_driver_version
from cudafit.rules.status import Status
from explain_corpus import load

SCHEMA = json.loads((Path(__file__).parent.parent / "src/cudafit/schema/explain.json").read_text())
T4 = Gpu("Tesla T4", parse_compute_capability("7.5"))
H100 = Gpu("NVIDIA H100 80GB HBM3", parse_compute_capability("9.0"))
RTX_4090 = Gpu("NVIDIA GeForce RTX 4090", parse_compute_capability("8.9"))


def test_every_pattern_cites_its_emitter() -> None:
    for cat, source, pattern in iter_sources():
        assert re.fullmatch(r"https://\S+|[\w.-]+/[\w.-]+:[\w./+-]+", source), (cat, source, pattern)
        if not source.startswith("https://"):
            repo = source.split(":", 1)[0]
            assert repo in SOURCE_PROJECTS or repo == "deepseek-ai/DeepGEMM", source
    cited = {cat for cat, _s, _p in iter_sources()}
    assert cited == {c.id for c in CATEGORIES}
    # the frameworks and libraries issue 18 names are all among the emitters
    projects = {project_of(s) for _c, s, _p in iter_sources()}
    assert {
        "torch", "triton", "jax", "tensorflow", "onnxruntime", "ctranslate2", "paddle", "ggml", "numba",
        "bitsandbytes", "xformers", "flash-attn", "flashinfer", "vllm", "deepspeed", "detectron2", "mmcv", "cupy",
        "transformer-engine", "deepgemm", "cutlass",
    } <= projects  # fmt: skip
    assert any("tensorrt" in s for _c, s, _p in iter_sources())


def test_findings_carry_the_emitters_that_matched() -> None:
    (f,) = explain_text("ValueError: This CTranslate2 package was not compiled with CUDA support")
    assert f.evidence["sources"] == ["OpenNMT/CTranslate2:src/devices.cc"]
    assert f.evidence["emitters"] == ["ctranslate2"]
    jsonschema.validate({"schema": "cudafit.explain/1", "findings": [f.to_dict()]}, SCHEMA)


# (message as the emitter prints it, category, a phrase the first fix must hold, phrases no fix may hold)
EMITTED = [
    ("ValueError: This CTranslate2 package was not compiled with CUDA support", "wrong-framework-build",
     "ctranslate2", ["pip install torch"]),
    ("RuntimeError: Detectron2 is not compiled with GPU support!", "wrong-framework-build", "detectron2",
     ["pip install torch"]),
    ("RuntimeError: DeformConv is not compiled with GPU support", "wrong-framework-build", "FORCE_CUDA=1",
     ["pip install torch", "detectron2"]),
    ("AssertionError: FAISS was not compiled with GPU support, or loading _swigfaiss_gpu.so failed",
     "wrong-framework-build", "rebuild the package", ["pip install torch", "detectron2"]),
    ("WARNING:jax._src.xla_bridge:An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not "
     "installed. Falling back to cpu.", "wrong-framework-build", "jax[cuda12]", ["pip install torch"]),
    ("ValueError: The device should not be 'gpu', since PaddlePaddle is not compiled with CUDA",
     "wrong-framework-build", "paddlepaddle-gpu", ["pip install torch"]),
    ("UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names.Available "
     "providers: 'AzureExecutionProvider, CPUExecutionProvider'", "wrong-framework-build", "onnxruntime-gpu",
     ["pip install torch"]),
    ("RuntimeError: Found NVIDIA GeForce GTX 1070 which is too old to be supported by the triton GPU compiler, "
     "which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is of "
     "CUDA capability 6.1", "capability-guard", "compute capability >= 7.0", []),
    ("AssertionError: Device compute capability 8.9 or higher required for FP8 execution.", "capability-guard",
     "without FP8", []),
    ("RuntimeError: Assertion error (csrc/apis/gemm.hpp:42): arch_major == 9", "capability-guard", "DeepGEMM", []),
    ('ggml-cuda.cu:340: GGML_ASSERT(ggml_cuda_has_arch(info.devices[id].cc) && "ggml was not compiled with support '
     'for this arch") failed', "capability-guard", "CMAKE_CUDA_ARCHITECTURES", []),
    ("numba.cuda.cudadrv.error.CudaSupportError: <CUDA device 0 'b'Quadro K2000''> has compute capability < (3, 5)",
     "capability-guard", "numba", []),
    ("[TRT] [E] IBuilder::buildSerializedNetwork: Error Code 9: API Usage Error (Target GPU SM 61 is not supported "
     "by this TensorRT release.)", "capability-guard", "TensorRT", []),
    ("RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same",
     "device-mismatch", "model.to('cuda')", ["AOTInductor", "AOTIModelContainerRunner"]),
    ("RuntimeError: Attempting to deserialize object on CUDA device 1 but torch.cuda.device_count() is 1. Please "
     "use torch.load with map_location to map your storages to an existing device.", "device-mismatch",
     "map_location", ["AOTInductor", "AOTIModelContainerRunner"]),
    ("ValueError: Received incompatible devices for jitted computation. Got argument x of f with shape float32[3] "
     "and device ids [0] on platform GPU and argument y of f with shape float32[3] and device ids [1] on platform "
     "GPU", "device-mismatch", "jax.device_put", ["AOTInductor"]),
    ("nvcc fatal unsupported gpu architecture 'compute_86'", "jit-toolchain-too-old", "CUDA >= 11", []),
    ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
     "NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non "
     "supported HW", "driver-too-old", "upgrade the host's NVIDIA driver", []),
    ("numba.cuda.cudadrv.driver.LinkerError: [218] Call to cuLinkAddData results in CUDA_ERROR_INVALID_PTX\n"
     "ptxas application ptx input, line 9; fatal   : Unsupported .version 6.3; current version is '6.1'",
     "ptx-too-new-for-driver", "PTX ISA 6.3 needs a driver", ["TRITON_PTXAS_PATH"]),
    ("[TRT] [E] 6: The engine plan file is generated on an incompatible device, expecting compute 8.6 got compute "
     "7.5, please rebuild.", "mixed-gpu", "rebuild the engine on the 8.6 GPU", []),
    ("ValueError: The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current "
     "capability: 70.", "capability-guard", "compute capability >= 7.5", []),
    ("W tensorflow/core/common_runtime/gpu/gpu_device.cc:2256] Cannot dlopen some GPU libraries. Please make sure the "
     "missing libraries mentioned above are installed properly if you would like to use GPU.", "wrong-framework-build",
     "tensorflow[and-cuda]", ["pip install torch"]),
    ("[WARNING]your gpu arch (8, 6) isn't compiled in prebuilt, may cause invalid device function. available: "
     "{(6, 1), (3, 7), (7, 0), (5, 0), (6, 0), (7, 5), (5, 2)}\ncuda execution failed with error 98 invalid device "
     "function", "no-kernel-image", "cudafit check 'spconv' --gpu 8.6", ["pip install torch"]),
    ("ValueError: Requested float16 compute type, but the target device or backend do not support efficient float16 "
     "computation.", "capability-guard", "compute_type='int8'", ["pip install torch"]),
    ("RuntimeError: Library libcublas.so.12 is not found or cannot be loaded", "wrong-framework-build",
     "nvidia-cublas-cu12", ["pip install torch"]),
    ("numba.cuda.cudadrv.error.NvvmSupportError: GPU compute capability 3.0 is not supported(requires >=3.5)",
     "capability-guard", "numba release", []),
    ("RuntimeError: Unable to initialize backend 'cuda': Outdated cuDNN installation found.\nVersion JAX was built "
     "against: 90300\nMinimum supported: 90100\nInstalled version: 8907", "wrong-framework-build", "jax[cuda12]",
     ["pip install torch"]),
    ("RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Min capability: 80. ', 'Current "
     "capability: 75.')", "capability-guard", "compute capability >= 8.0", []),
    ("CUDA backend failed to initialize: Found cuDNN version 8600, but JAX was built against version 8906, which is "
     "newer.", "wrong-framework-build", "jax[cuda12]", ["pip install torch"]),
    ("RuntimeError: CuPy failed to load nvrtc64_120_0.dll: FileNotFoundError: Could not find module "
     "'nvrtc64_120_0.dll' (or one of its dependencies).", "wrong-framework-build", "cupy-cuda12x[ctk]",
     ["pip install torch"]),
    ("what(): /workspace/libspconv/spconv/src/spconvlib/spconv/csrc/sparse/convops/gemmops/"
     "GemmTunerSimple_cached_get_nvrtc_params.cc(18)\nnot implemented in c++, must be overrided in python!!!",
     "no-kernel-image", "spconv", []),
    ("RuntimeError: CuPy failed to load libnvrtc.so.12: OSError: libnvrtc.so.12: cannot open shared object file: "
     "No such file or directory", "wrong-framework-build", "cupy-cuda12x[ctk]", ["pip install torch"]),
    ("E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:535] Loaded runtime CuDNN library: 9.1.0 but source was "
     "compiled with: 9.3.0.  CuDNN library needs to have matching major version and equal or higher minor version.",
     "wrong-framework-build", "cuDNN 9.3.0 or newer", ["pip install torch"]),
]  # fmt: skip


@pytest.mark.parametrize(("text", "category", "fix", "never"), EMITTED, ids=[e[1] + "-" + e[0][:30] for e in EMITTED])
def test_emitted_messages_get_their_category_and_fitting_fixes(
    text: str, category: str, fix: str, never: list[str]
) -> None:
    (f, *_rest) = explain_text(text)
    assert f.category == category
    assert any(fix in x for x in f.fixes), f.fixes
    for word in never:
        assert not any(word in x for x in f.fixes), (word, f.fixes)


def test_ctranslate2_driver_error_is_not_told_to_install_torch() -> None:
    text = "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version"
    for ctx in (None, Context(driver=parse_driver_version("470.82.01"))):
        (f,) = explain_text(text, ctx)
        assert f.category == "driver-too-old"
        assert f.evidence["emitters"] == ["ctranslate2"]
        assert not any("torch" in x for x in f.fixes), f.fixes
        assert any("ctranslate2==3.24.0" in x for x in f.fixes)
    # the same runtime string from PyTorch still gets PyTorch's indexes
    torch_text = (
        "RuntimeError: CUDA driver version is insufficient for CUDA runtime version\n"
        '  File "/usr/lib/python3/site-packages/torch/cuda/__init__.py", line 298, in _lazy_init'
    )
    (f,) = explain_text(torch_text)
    assert any("download.pytorch.org" in x for x in f.fixes)


def test_cutlass_sm90a_kernel_is_told_to_build_sm90a_not_sm90() -> None:
    text = "ERROR : Arch conditional MMA instruction used without targeting appropriate compute capability. Aborting."
    for ctx in (None, Context(gpus=(H100,))):
        (f,) = explain_text(text, ctx)
        assert f.category == "arch-specific-mismatch"
        assert f.fixes[0].startswith('build it for sm_90a, not sm_90: TORCH_CUDA_ARCH_LIST="9.0a"')
        assert "arch=compute_90a,code=sm_90a" in f.fixes[0]
    # the CuTe form names the target itself; a GPU outside it is told so
    text = 'CUTE_INVALID_CONTROL_PATH("Attempting to use MMA_64x8x16_F16F16F16_SS without CUTE_ARCH_MMA_SM90A_ENABLED")'
    (f,) = explain_text(text, Context(gpus=(RTX_4090,)))
    assert "sm_90a" in f.fixes[0] and "cannot run sm_90a code" in f.cause


def test_ptxas_refusing_wgmma_for_plain_sm90_is_told_to_build_sm90a() -> None:
    for text in (
        "ptxas error   : Instruction 'wgmma.fence' not supported on .target 'sm_90'",
        "ptxas error   : Feature 'setmaxnreg' requires .target sm_90a or higher",
    ):
        (f,) = explain_text(text)
        assert f.category == "arch-specific-mismatch"
        assert "ptxas refuses them" in f.cause
        assert f.fixes[0].startswith('build it for sm_90a, not sm_90: TORCH_CUDA_ARCH_LIST="9.0a"')


def test_tensors_on_two_gpus_are_not_an_aoti_packaging_problem() -> None:
    text = (
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
        "cuda:1! (when checking argument for argument index in method wrapper_CUDA_scatter__value)"
    )
    (f,) = explain_text(text, Context(gpus=(T4, T4)))
    assert f.category == "device-mismatch"
    assert "cuda:0 and cuda:1" in f.cause
    assert not any("AOTI" in x or ".pt2" in x for x in (f.cause, *f.fixes))
    assert "x.to('cuda:0')" in f.fixes[0]


def test_ptxas_shared_memory_sizes_are_compared_with_the_gpu() -> None:
    text = "ptxas error   : Entry function '_Z6kernelPf' uses too much shared data (0x12000 bytes, 0xc000 max)"
    (f,) = explain_text(text, Context(gpus=(T4,)))
    assert f.category == "shared-memory-limit"
    assert f.evidence["shared_memory"] == {"required": 73728, "limit": 49152, "kind": "static"}
    assert "73728 bytes of static __shared__ memory" in f.cause
    assert any("Tesla T4 (7.5) allows at most 65536 bytes" in x for x in f.fixes)
    (f,) = explain_text(text, Context(gpus=(H100,)))
    assert "cudaFuncAttributeMaxDynamicSharedMemorySize, 73728" in f.fixes[0]
    assert "NVIDIA H100 80GB HBM3 (9.0): 232448 bytes" in f.fixes[0]
    # Triton's own limit report against the machine's GPUs
    triton = (
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 196608, Hardware limit: 101376"
    )
    (f,) = explain_text(triton, Context(gpus=(Gpu("NVIDIA GeForce RTX 3090", parse_compute_capability("8.6")), H100)))
    assert "196608 bytes" in f.cause and "101376" in f.cause
    assert any(x.startswith("or run it on NVIDIA H100") for x in f.fixes)


def test_dataloader_shared_memory_is_not_the_gpu() -> None:
    text = (
        "RuntimeError: DataLoader worker (pid 46794) is killed by signal: Bus error. It is possible that dataloader's "
        "workers are out of shared memory. Please try to raise your shared memory limit."
    )
    assert [f.category for f in classify(text)] == ["unknown"]


def test_numba_driver_jit_is_the_driver_and_triton_ptxas_is_the_toolkit() -> None:
    driver = "numba.cuda.cudadrv.driver.LinkerError: [218] Call to cuLinkAddData results in CUDA_ERROR_INVALID_PTX\n"
    ptxas = "ptxas application ptx input, line 9; fatal   : Unsupported .version 6.3; current version is '6.1'"
    assert classify(driver + ptxas)[0].category == "ptx-too-new-for-driver"
    assert classify("triton.runtime.errors.PTXASError: PTXAS error\n" + ptxas)[0].category == "jit-toolchain-too-old"


def _magma_gap(module: int) -> KernelGap:
    return KernelGap(
        package="torch",
        path="/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda_linalg.so",
        module=module,
        compute_capability=parse_compute_capability("7.5"),
        status=Status.FAILS,
        reason="hole-in-arch-list",
        archs=("sm_80", "sm_86", "sm_90", "sm_100", "sm_120"),
        kernels=(f"void magmablas_dgemm_kernel_{module}(int, double const*)", "void dlaswp_kernel(int, double*)"),
    )


LINALG_T4 = """Traceback (most recent call last):
  File "solve.py", line 7, in <module>
    torch.linalg.eigh(a)
RuntimeError: CUDA error: no kernel image is available for execution on the device
Exception raised from magma_queue_create_internal at /pytorch/aten/src/ATen/native/cuda/linalg/MagmaUtils.h:45
frame #3: <unknown function> + 0x1a2b3c (0x7f2a in /venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda_linalg.so)
"""


def test_torch_linalg_on_a_t4_names_the_magma_modules_doctor_reports() -> None:
    """The hole doctor reports (libtorch_cuda_linalg.so's MAGMA modules without 7.5) is the one named."""
    unrelated = KernelGap("torch", "/venv/torch/lib/libtorch_cuda.so", 3, T4.compute_capability, Status.SPECIALISED,
                          "specialised-newer", ("sm_90a",), ("void sm90_xmma_gemm(float*)",))  # fmt: skip
    ctx = Context(gpus=(T4,), kernel_gaps=(unrelated, _magma_gap(11), _magma_gap(12)))
    (f,) = ground(classify(LINALG_T4), ctx)
    assert f.category == "no-kernel-image"
    assert f.evidence["libraries"] == ["libtorch_cuda_linalg.so"]
    assert f.cause.startswith(
        "the failing code is in /venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda_linalg.so"
    )
    assert "its MAGMA modules 11, 12" in f.cause and "nothing for 7.5 (a hole in the build" in f.cause
    assert [m["module"] for m in f.evidence["kernel_matches"]] == [11, 12]
    assert 'preferred_linalg_library("cusolver")' in f.fixes[0]
    assert not any("check which release of torch" in x for x in f.fixes), f.fixes
    assert not any("cu126" in x for x in f.fixes)
    jsonschema.validate({"schema": "cudafit.explain/1", "findings": [f.to_dict()]}, SCHEMA)


@pytest.mark.parametrize(
    "text",
    [
        "FATAL: kernel fmha is for sm0-sm1 but was built for sm1",
        "FATAL: kernel fmha is for sm80-sm00, but was built for sm75",
        "UserWarning: Found GPU0 Tesla T4 which is of cuda capability 8.61.\n"
        "no kernel image is available for execution on the device",
        "compute capability 8.61",
        "requires device with capability <= (1234, 0) but your GPU has capability (7, 5) (too new)",
        "NVIDIA GeForce RTX 999 with CUDA capability sm_00 is not compatible with the current PyTorch installation.\n"
        "The current PyTorch install supports CUDA capabilities sm_8.61 sm_0 sm_1",
    ],
)
def test_malformed_archs_and_capabilities_give_findings_not_errors(text: str) -> None:
    """Issue 23's explain-text row: numbers no GPU has are dropped from the facts, never an internal error."""
    for ctx in (None, Context(gpus=(T4,))):
        findings = explain_text(text, ctx)
        doc = {"schema": "cudafit.explain/1", "findings": [f.to_dict() for f in findings]}
        jsonschema.validate(doc, SCHEMA)
        for f in findings:
            assert "8.61" not in json.dumps(f.evidence.get("gpus", []))
            assert all(re.fullmatch(r"sm_\d{2,3}[af]?", a) for a in f.evidence.get("archs", []))


def test_mutated_corpus_messages_never_raise() -> None:
    """Every number of every corpus message replaced by odd ones (0, 00, 8.61, 999, -1, ...): findings, no error."""
    rng = random.Random(18)
    texts = [r["text"] for r in load()]
    odd = ["0", "1", "00", "8.61", "999", "1234", "-1", "", "0.0", "12.10"]
    for i in range(600):
        text = re.sub(r"\d+(?:\.\d+)?", lambda m: rng.choice([*odd, m.group(0)]), texts[i % len(texts)])
        explain_text(text, Context(gpus=(T4, Gpu("RTX PRO", parse_compute_capability("12.1")))) if i % 2 else None)
