"""Arch-specific (``a``/``f``) code meeting another GPU, from the emitters' own formats (issue 18, session 6).

Three families, each written from the code that prints it, with other plausible values than any corpus record:

* an instruction only ``a``/``f`` targets have (the PTX ISA's target notes, :data:`ARCH_FEATURES`) named beside
  a GPU none of its targets covers;
* a library whose kernels exist for ``a``/``f`` targets only saying which GPUs those are (FlashInfer's
  ``_match_sm_version`` checks, the trtllm-gen runners' ``mSM == kSM_100``, sglang's ``is_sm100_supported()``,
  FlashAttention-4's assertion, DeepGEMM's dispatch): newer or sideways GPUs are arch-specific, older ones and
  listed ones are the library's own guard;
* CUTLASS's ``Error Internal`` (a failed launch) on a GPU of compute capability 9.0 or newer, and trtllm-gen's
  ``kernels not found: sm=N``.

The GPU lines use the formats of the tools that print them (``nvidia-smi -L``, torch's ``_warn_unsupported_code``,
sglang's check_env, ComfyUI's start-up line, ``torch.cuda.get_device_properties``).
"""

from __future__ import annotations

import re

import pytest

from cudafit.explain import classify, explain_text
from cudafit.explain.arch_features import (
    ARCH_FEATURES,
    iter_arch_features,
    iter_gpu_mentions,
    iter_support_claims,
    target_covers,
)
from cudafit.model import ComputeCapability, parse_sm_arch

ARCH, GUARD, UNKNOWN = "arch-specific-mismatch", "capability-guard", "unknown"


def cc(text: str) -> ComputeCapability:
    major, minor = text.split(".")
    return ComputeCapability(int(major), int(minor))


def top(text: str) -> str:
    return classify(text)[0].category


def feature(name: str) -> object:
    return next(f for f in ARCH_FEATURES if f.name == name)


# --- the table: targets from the PTX ISA, coverage from NVIDIA's a/f rule (cudafit.rules.compat) -----------------


@pytest.mark.parametrize(
    ("name", "covered", "not_covered"),
    [
        ("wgmma", ["9.0"], ["8.9", "10.0", "12.0"]),
        ("tcgen05", ["10.0", "10.3", "11.0", "10.7"], ["9.0", "12.0", "12.1"]),
        ("mma.sync .block_scale", ["12.0", "12.1"], ["10.0", "10.3", "11.0"]),
        ("redux.sync .f32", ["10.0", "10.3"], ["11.0", "12.0", "9.0"]),
        ("cvt .e2m1x2", ["10.0", "10.3", "12.0", "12.1", "11.0"], ["9.0", "8.9"]),
        ("setmaxnreg", ["9.0", "10.0", "12.1"], ["8.0", "8.9"]),
        ("tensormap.replace", ["9.0", "11.0", "12.0"], ["8.6"]),
    ],
)
def test_each_instruction_covers_the_gpus_of_its_targets(name: str, covered: list[str], not_covered: list[str]) -> None:
    f = feature(name)
    assert all(f.covers(cc(c)) for c in covered), (str(f), covered)  # type: ignore[attr-defined]
    assert not any(f.covers(cc(c)) for c in not_covered), (str(f), not_covered)  # type: ignore[attr-defined]


def test_targets_follow_the_a_and_f_rules() -> None:
    """'a' code runs on exactly its compute capability, 'f' code on its family (Programming Guide §5.1.2)."""
    assert target_covers(parse_sm_arch("sm_100f"), cc("10.3"))
    assert not target_covers(parse_sm_arch("sm_100a"), cc("10.3"))
    assert not target_covers(parse_sm_arch("sm_120a"), cc("12.1"))
    assert target_covers(parse_sm_arch("sm_120f"), cc("12.1"))
    assert all(f.section.startswith("https://docs.nvidia.com/cuda/parallel-thread-execution/") for f in ARCH_FEATURES)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Instruction 'wgmma.commit_group' not supported on .target 'sm_89'", "wgmma"),
        ('asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;")', "tcgen05"),
        ("using Mma = cute::SM100_MMA_F16BF16_SS; // UMMA", "tcgen05"),
        ("Instruction 'redux.f32' not supported on .target 'sm_90a'", "redux.sync .f32"),
        ("redux.sync.max.abs.NaN.f32 %f1, %f2, 0xffffffff;", "redux.sync .f32"),
        ("LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.redux.sync.fmax.NaN", "redux.sync .f32"),
        ("Instruction 'mma with block scale' not supported on .target 'sm_100a'", "mma.sync .block_scale"),
        (
            "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.f32.e4m3.e4m3.f32.ue8m0",
            "mma.sync .block_scale",
        ),
        ("Instruction 'cvt with .e3m2x2' not supported on .target 'sm_110'", "cvt .e2m1x2"),
        ("cvt.rn.satfinite.relu.e2m3x2.f32 %rs1, %f2, %f3;", "cvt .e2m1x2"),
        ("Feature 'setmaxnreg' requires .target sm_90a or higher", "setmaxnreg"),
        ("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%rd1], 2, %r4;", "tensormap.replace"),
    ],
)
def test_instruction_names_are_found_in_the_forms_tools_print(text: str, name: str) -> None:
    assert [f.name for f, _line in iter_arch_features(text)] == [name]


def test_tensor_memory_leak_is_not_taken_for_an_instruction() -> None:
    """cudaErrorTensorMemoryLeak ("tensor memory not completely freed") is a bug on a GPU that has Tensor Memory."""
    assert not list(iter_arch_features("CUDA error: tensor memory not completely freed"))


# --- the GPUs a message names -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("fails on SM 120 only", ["12.0"]),
        ("built for sm_103a", ["10.3"]),
        ("Blackwell (cc=10.3, `to_int()` = 103)", ["10.3"]),
        ("GPU: NVIDIA GB10, compute capability 12.1", ["12.1"]),
        ("B300 SM10.3 hosts", ["10.3"]),
        ("Compute Capability: 11.0", ["11.0"]),
        ("compute_cap = 12.0", ["12.0"]),
        ("my RTX5080 and a GB300", ["12.0", "10.3"]),
        ("Trtllm-gen kernels not found: sm=100, headDimQk=64", ["10.0"]),
    ],
)
def test_gpu_mentions(text: str, expected: list[str]) -> None:
    assert [str(m.compute_capability) for m in iter_gpu_mentions(text)] == expected


@pytest.mark.parametrize(
    "text",
    [
        "only supported on SM_120+",  # a requirement
        "requires compute capability 8.0 or higher",  # a minimum
        "deep_gemm/include/deep_gemm/common/sm100_utils.cuh",  # a file name
        "mSM == kSM_100",  # a target in code
        "SM 10.x and 11.x",  # a family, not a GPU
        "sm_99 and compute capability 13.7",  # no such GPU
    ],
)
def test_not_gpu_mentions(text: str) -> None:
    assert not list(iter_gpu_mentions(text))


def test_extracted_gpus_come_first() -> None:
    mentions = list(iter_gpu_mentions("on SM 120", [("NVIDIA H20", "9.0")]))
    assert [(m.text, str(m.compute_capability)) for m in mentions] == [("NVIDIA H20", "9.0"), ("SM 120", "12.0")]


# --- family 1: an a/f-only instruction beside a GPU its targets do not cover --------------------------------------

TRACE = (
    "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    "  kernel: cutlass::device_kernel<sm100_gemm_umma_f16_tmem_epilogue>  (UMMA, TMEM accumulators)\n"
)


def test_tmem_kernel_on_consumer_blackwell_is_arch_specific() -> None:
    finding = classify(TRACE + "GPU 0: NVIDIA GeForce RTX 5070 (UUID: GPU-0a1b2c3d-0000-1111-2222-333344445555)")[0]
    assert finding.category == ARCH
    assert any("tensorcore-5th-generation" in s for s in finding.evidence.get("sources", []))


def test_the_same_kernel_on_a_gpu_that_has_tmem_is_only_missing_code() -> None:
    assert top(TRACE + "GPU 0: NVIDIA B200 (UUID: GPU-0a1b2c3d-0000-1111-2222-333344445555)") == "no-kernel-image"


def test_driver_jit_of_block_scaled_mma_on_a_b200() -> None:
    text = (
        "CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed\n"
        "ptxas application ptx input, line 2211; error   : Instruction 'mma with block scale' not supported on "
        ".target 'sm_100'\n"
        "Found GPU0 NVIDIA B200 which is of compute capability (CC) 10.0."
    )
    assert top(text) == ARCH


def test_redux_f32_on_thor() -> None:
    text = (
        "ptxas /tmp/tmpxft_00002d41_00000000-6_reduce.ptx, line 96; error   : Instruction 'redux.f32' not supported "
        "on .target 'sm_110a'\nDevice 0: NVIDIA Thor, compute capability 11.0, VMM: yes"
    )
    assert top(text) == ARCH


def test_an_unrelated_error_in_a_tcgen05_kernel_on_its_own_gpu_stays_unknown() -> None:
    text = (
        "CUDA error: an illegal memory access was encountered\n"
        "  in tcgen05.ld.sync.aligned.32x32b.x8 of fmha_fwd_kernel\n"
        "GPU 0: NVIDIA B300 SXM6 AC (UUID: GPU-11112222-3333-4444-5555-666677778888)"
    )
    assert classify(text)[0].category == UNKNOWN


# --- family 2: what an a/f-only library says it supports, against the GPU ----------------------------------------


# Messages in their emitters' formats (see the comments in the table below for each source).
FLASHINFER_CHECK = "ValueError: mm_fp4 is only supported on SM100, SM103 in trtllm backend."
SGLANG_ASSERT = "    assert is_sm90_supported() or is_sm100_supported()\nAssertionError"
FA4_ASSERT = "AssertionError: Only SM 10.x and 11.x are supported"
DEEPGEMM_DISPATCH = "RuntimeError: Assertion error (csrc/apis/gemm.hpp:214): Unsupported architecture"
VLLM_FLASHMLA = "ValueError: FlashMLA Dense is only supported on Hopper devices."


TRTLLM_RUNNER = (
    "RuntimeError: Error in function 'TllmGenFmhaRunner' at /flashinfer/include/flashinfer/trtllm/fmha/"
    "fmhaRunner.cuh:30: Unsupported architecture"
)
TRTLLM_SINKS = "[TensorRT-LLM][ERROR] Assertion failed: The attention sinks is only supported on SM90"


@pytest.mark.parametrize(
    "message",
    [
        FLASHINFER_CHECK,  # FlashInfer's backend checks (flashinfer/gemm/gemm_base.py)
        "ValueError: group_gemm_fp8_nt_groupwise requires SM100, SM120, or SM121, but got cuda:0",
        TRTLLM_RUNNER,  # the trtllm-gen runners (include/flashinfer/trtllm/fmha/fmhaRunner.cuh)
        SGLANG_ASSERT,  # sglang (python/sglang/srt/utils/common.py): the device's major
        FA4_ASSERT,  # FlashAttention-4 (flash_attn/cute/flash_fwd_sm100.py)
        DEEPGEMM_DISPATCH,  # DeepGEMM's dispatch (csrc/apis/*.hpp): kernels for sm_90a and sm_100a/f
        VLLM_FLASHMLA,  # vLLM's FlashMLA check (vllm/attention/ops/flashmla.py): major 9 only
        TRTLLM_SINKS,  # TensorRT-LLM's SM90-only attention sinks
    ],
)
@pytest.mark.parametrize(
    "gpu_line",
    [
        "",
        "GPU 0: NVIDIA GeForce RTX 5090",  # newer than every target
        "GPU 0 Compute Capability: 8.9",  # older than every target
        "GPU 0: NVIDIA B300 SXM6 AC",  # a 10.3, listed by some of the checks (FlashAttention-4's check is wrong there)
    ],
)
def test_a_librarys_own_check_is_a_capability_guard_whatever_gpu_it_met(message: str, gpu_line: str) -> None:
    """The corpus's convention (shared/docs/error_categories.md, the corpus README): a library's check refusing a
    GPU is capability-guard, on either side of what it accepts, right or wrong."""
    assert top(f"{message}\n{gpu_line}") == GUARD


@pytest.mark.parametrize(
    ("message", "gpu_line", "expected"),
    [
        # FlashMLA's own dispatch names a/f targets: 'f' is a family (sm_100f runs on 10.3), a GPU outside meets
        # an arch-specific build
        (
            "RuntimeError: Sparse Attention Forward Kernel is only supported on SM90a and SM100f architectures",
            "GPU 0: NVIDIA GeForce RTX 5080",
            ARCH,
        ),
        # FlashMLA's device-side CUTE_INVALID_CONTROL_PATH("This kernel only supports sm90"): the kernel ran
        ("This kernel only supports sm90", "Found GPU0 NVIDIA B200 which is of compute capability (CC) 10.0.", ARCH),
        # CuTe DSL's atoms (python/CuTeDSL/cutlass/cute/nvgpu/tcgen05/mma.py): the atom's a/f targets, then the arch
        # the DSL compiles for, the GPU's
        (
            "cutlass.base_dsl.common.DSLRuntimeError: OpError: expects arch to be one of "
            "[Arch.sm_100a, Arch.sm_100f, Arch.sm_103a], but got Arch.sm_121a",
            "",
            ARCH,
        ),
        (
            "OpError: expects arch to be one of ['sm_100a', 'sm_103a'],\nbut got sm_90a",
            "Suggestion: Ensure env CUTE_DSL_ARCH matches your GPU architecture",
            ARCH,
        ),
    ],
)
def test_statements_of_af_targets_against_the_gpu(message: str, gpu_line: str, expected: str) -> None:
    assert top(f"{message}\n{gpu_line}") == expected


def test_a_description_of_a_hopper_only_build_beside_another_gpu() -> None:
    """Not a guard: a build for sm_90a only, which any other GPU lacks, newer or older."""
    text = "the prebuilt FA3 kernel is Hopper-only and fails here ({})"
    assert top(text.format("RTX 4080")) == ARCH
    assert top(text.format("H800")) == UNKNOWN


@pytest.mark.parametrize(
    "text",
    [
        "FlashInfer only supports sm75+ GPUs",
        "this op is only supported on SM80 and newer",
        "only supports SM 90 or above",
    ],
)
def test_a_guards_minimum_is_not_a_list_of_targets(text: str) -> None:
    assert not list(iter_support_claims(text))


def test_a_family_target_in_a_claim_names_its_family() -> None:
    (claim,) = iter_support_claims("is only supported on SM90a and SM100f architectures")
    assert sorted(str(c) for c in claim.ccs) == ["10.0", "10.3", "10.7", "9.0"]


def test_the_sms_a_claim_lists_are_not_taken_for_the_gpu() -> None:
    claims = list(iter_support_claims("is only supported on SM100, SM103 in trtllm backend."))
    assert [sorted(str(c) for c in claim.ccs) for claim in claims] == [["10.0", "10.3"]]
    # a statement of a/f targets with no GPU beside it: the SM90a/SM100f it lists are not taken for the GPU
    assert top("these kernels are only supported on SM90a and SM100f") == UNKNOWN


# --- family 3: CUTLASS's failed launch and trtllm-gen's missing cubins ----------------------------------------------

VLLM_FRAME = "    torch.ops._C.cutlass_scaled_mm(out, a, b, scale_a, scale_b, bias)\nRuntimeError: Error Internal\n"


@pytest.mark.parametrize(
    ("gpu_line", "expected"),
    [
        ("_CudaDeviceProperties(name='NVIDIA GB10', major=12, minor=1, total_memory=122502MB)", ARCH),
        ("_CudaDeviceProperties(name='NVIDIA H200', major=9, minor=0, total_memory=143771MB)", ARCH),
        ("_CudaDeviceProperties(name='NVIDIA GeForce RTX 3090', major=8, minor=6, total_memory=24124MB)", UNKNOWN),
        ("on our Blackwell nodes", ARCH),
    ],
)
def test_cutlass_error_internal(gpu_line: str, expected: str) -> None:
    assert top(VLLM_FRAME + gpu_line) == expected


def test_cutlass_examples_format_and_no_cutlass_no_verdict() -> None:
    assert top("Got cutlass error: Error Internal at: 388\nGPU 0: NVIDIA GeForce RTX 5090") == ARCH
    assert top("Got cutlass error: Error Architecture Mismatch at: 91\nGPU 0: NVIDIA B300") == ARCH
    assert top("grpc: Error Internal\nGPU 0: NVIDIA GeForce RTX 5090") == UNKNOWN


def test_trtllm_gen_kernels_not_found_for_an_sm() -> None:
    assert top("RuntimeError: Trtllm-gen kernels not found: sm=100, qkvLayout=1, maskType=2, headDimQk=64") == ARCH
    # the same message for a head size no cubin has, without the SM, is not taken for a target mismatch
    assert top("RuntimeError: Trtllm-gen kernels not found: qkvLayout=2, maskType=0, headDimQk=512") == UNKNOWN


# --- the fixes point at the GPU's own a target ---------------------------------------------------------------------


def test_fixes_build_the_gpus_own_target_never_a_plain_one() -> None:
    finding = classify(TRACE + "GPU 0: NVIDIA GeForce RTX 5070 (UUID: GPU-0a1b2c3d-0000-1111-2222-333344445555)")[0]
    assert any(re.search(r'TORCH_CUDA_ARCH_LIST="<cc>a"', fix) for fix in finding.fixes)
    assert not any(re.search(r"\b(?:use|install|build)\b[^.;]*\bplain sm_", fix) for fix in finding.fixes)
    grounded = explain_text(VLLM_FRAME + "_CudaDeviceProperties(name='NVIDIA GB10', major=12, minor=1)")
    fixes = " ".join(str(f) for f in grounded[0].fixes) if grounded else ""
    assert "plain sm_" not in re.sub(r"a plain sm_XY build does not enable these instructions", "", fixes)


# --- libraries whose builds are a/f-only, failing beside another GPU ------------------------------------------------


def test_machete_on_an_ada_gpu() -> None:
    """vLLM builds its Machete kernels for 9.0a only (CMakeLists.txt, MACHETE_ARCHS)."""
    text = (
        "Using MacheteLinearKernel for GPTQMarlinLinearMethod\nRuntimeError: CUDA error: operation failed\n"
        "GPU 0: NVIDIA L4"
    )
    assert top(text) == ARCH
    assert top(text.replace("NVIDIA L4", "NVIDIA H100 PCIe")) != ARCH


def test_a_cut_no_kernel_image_beside_flashattention_3s_sources() -> None:
    """Titles and excerpts cut the runtime's string; FlashAttention-3's hopper/ sources name its a/f-only build."""
    text = "CUDA error (/src/flash-attention/hopper/flash_fwd_launch_template.h:201): no kernel image is availa"
    assert top(text) == ARCH
