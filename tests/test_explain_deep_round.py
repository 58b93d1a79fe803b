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
        ("Device capability changed, invalidating cache", "mixed-gpu"),
        ("RuntimeError: No compiled cutlass_scaled_mm kernel for SM 75. Recompile with the appropriate CUDA arch.",
         "no-kernel-image"),
        # TensorRT's logger tag is the failure beside a statement of the generations a plugin supports
        ("[E] [TRT] INT8 IO is only supported on Turing, Ampere, Hopper and Blackwell for plugin X",
         "capability-guard"),
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
