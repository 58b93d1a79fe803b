"""explain: GPUs named in prose, and the mixed-host vs no-kernel-image decision (issue 18, session 6).

The texts are written from the emitters' formats (nvidia-smi's table and its name truncation, torch's collect_env,
cudaGetErrorString's strings, cust's error enum) and from the ways reports name GPUs ("RTX3080+GTX1660", "a Titan V
(cc=7.0)"), with other GPUs and values than the corpus records.
"""

from __future__ import annotations

import json
from importlib.resources import files

import pytest

from cudafit.explain import classify, explain_text
from cudafit.explain.extract import extract_facts, iter_mentioned_gpus

NO_IMAGE = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"


def _mentioned(text: str) -> list[tuple[str, str]]:
    return list(iter_mentioned_gpus(text))


@pytest.mark.parametrize(
    ("text", "ccs"),
    [
        ("my rig: RTX3080+GTX1660+GTX1650", ["8.6", "7.5"]),  # glued brand and number, several per line
        ("服务器有一张RTX3060和一张GTX1080", ["8.6", "6.1"]),  # CJK text glued to the names
        ("the job runs on a geforce gtx 1080 ti and a quadro p4000", ["6.1"]),  # lower case
        ("it crashes on the 2080 Ti only", ["7.5"]),  # a number with its Ti suffix, no brand
        ("Tesla V100-SXM2-32GB, Tesla P4", ["7.0", "6.1"]),  # memory and form-factor suffixes; a two-letter name
        ("|   1  GeForce GTX 108...  Off  | 00000000:02:00.0 Off |                  N/A |", ["6.1"]),  # cut short
        ("GPU 2 is a 4090 (SM89)", ["8.9"]),  # a bare number with its capability beside it
        ("two cards: quadro k2200 (cc=5.0) and a titan v", ["5.0", "7.0"]),
    ],
)
def test_table_names_are_found_in_prose(text: str, ccs: list[str]) -> None:
    assert sorted({cc for _name, cc in _mentioned(text)}) == sorted(set(ccs))


def test_an_explicit_capability_beside_a_name_is_preferred_to_the_table() -> None:
    # what the report states wins (a name the table reads one way, a capability the user measured)
    assert _mentioned("GeForce GTX 1070 (compute capability 6.2)") == [("GeForce GTX 1070", "6.2")]
    # each name takes the capability written after it, not its neighbour's
    assert _mentioned("GPU #0: GeForce GTX 980, capability: 5.2  GPU #1: GeForce RTX 3070, capability: 8.6") == [
        ("GeForce GTX 980", "5.2"),
        ("GeForce RTX 3070", "8.6"),
    ]


def test_a_capability_a_requirement_states_or_an_arch_further_on_is_not_the_gpus() -> None:
    # a guard's minimum is not the GPU's own capability; the table's stands
    assert _mentioned("my GTX 1080 Ti is refused: the kernel requires compute capability 8.0") == [
        ("GTX 1080 Ti", "6.1")
    ]
    # an arch is the GPU's only right beside its name
    assert _mentioned("Tesla P100 (sm_60)") == [("Tesla P100", "6.0")]
    assert _mentioned("on a Tesla P100 the wheel's sm_70 sm_80 cubins do not load") == [("Tesla P100", "6.0")]


def test_a_product_the_table_lacks_counts_with_its_cc() -> None:
    assert _mentioned("an old nvs-295, cc=1.2") == [("nvs-295", "1.2")]
    assert _mentioned("build-42, cc=8.61") == []  # "8.61" is no capability
    assert _mentioned("nvs-295") == []  # and without one, an unknown name is nothing


@pytest.mark.parametrize(
    "text",
    [
        "loading /data/ckpt/a100/llama-2-7b.safetensors",  # a directory named after a GPU
        "config: configs/h100.yaml, tuned_a100.json",  # file names
        "device_name=NVIDIA_H100_80GB_HBM3",  # an identifier (vLLM's tuning file, read by its own form)
        "Llama-2-70B, Qwen2.5-7B-Instruct, Mixtral-8x7B",  # model sizes
        "torch 2.3.0+cu121, CUDA 12.4, cuDNN 8.9.7, driver 550.54",  # versions
        "step 2080 loss 1080 lr 3090 1080p video, batch 4090",  # bare numbers
        "T4 template, L4 cache, A2 paper size",  # two-letter names without the vendor's form
        "rtx-kernel sm_86 a100x h100_mma",  # inside other tokens
    ],
)
def test_no_gpu_in_paths_sizes_versions_or_tokens(text: str) -> None:
    assert "mentioned_gpus" not in extract_facts(text)


def test_a_training_log_names_no_gpu_in_its_progress_lines() -> None:
    lines = [
        "2026-11-20 10:00:01,123 INFO trainer: step %7d/1000000 loss=0.1234 lr=3.0e-04 grad_norm=1.23 tok/s=48211",
        "Epoch 3:  42%%|####      | %7d/1000000 [01:02<01:24, 9.80it/s, gpu_mem=12.3G, loss=0.123, v_num=0]",
    ]
    log = "\n".join(line % i for i in range(0, 4000, 7) for line in lines)
    assert "mentioned_gpus" not in extract_facts(log)


def test_a_listed_gpu_is_not_mentioned_again() -> None:
    text = "GPU 0: NVIDIA GeForce RTX 3080 (UUID: GPU-1)\nI run it on my RTX 3080 and a GTX 1080\n"
    facts = extract_facts(text)
    assert [g["name"] for g in facts["gpus"]] == ["NVIDIA GeForce RTX 3080"]
    assert [g["name"] for g in facts["mentioned_gpus"]] == ["GTX 1080"]


# ---- the decision


def test_two_prose_gpus_of_two_capabilities_and_missing_code_are_a_mixed_host() -> None:
    text = "two cards in the box (a GTX 1660 Super and an RTX A4000)\n" + NO_IMAGE
    top = explain_text(text)[0]
    assert top.category == "mixed-gpu"
    assert 'TORCH_CUDA_ARCH_LIST="7.5;8.6"' in top.fixes[0]  # every GPU of the host, as doctor's connection words it


def test_a_truncated_table_and_glued_names_make_a_mixed_host() -> None:
    table = (
        "|   0  GeForce GTX 106...  Off  | 00000000:01:00.0 Off |                  N/A |\n"
        "|   1  GeForce RTX 208...  Off  | 00000000:02:00.0 Off |                  N/A |\n"
    )
    assert classify(table + NO_IMAGE)[0].category == "mixed-gpu"
    assert classify("training on RTX2060+GTX1070 fails:\n" + NO_IMAGE)[0].category == "mixed-gpu"


def test_one_capability_named_twice_is_no_mixed_host() -> None:
    assert classify("it worked on a Tesla T4 and fails on my RTX 2070\n" + NO_IMAGE)[0].category == "no-kernel-image"


@pytest.mark.parametrize(
    "failure",
    [
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "NCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported between these two devices",
        "",
    ],
)
def test_prose_gpus_without_missing_code_are_not_mixed_gpu(failure: str) -> None:
    assert [f.category for f in classify("host: GTX 1080 Ti + RTX 3090\n" + failure)] == ["unknown"]


def test_prose_gpus_with_any_unrelated_cuda_error_stay_unknown() -> None:
    """Every CUDA error the inventory calls unrelated, beside two GPUs of two capabilities named in prose."""
    data = json.loads(files("cudafit.explain").joinpath("data/cuda_errors.json").read_text())
    rows = data["runtime"] + data["driver"]
    related = {s for r in rows if r["certainty"] is not None for s in r["strings"]}
    strings = sorted({s for r in rows if r["certainty"] is None for s in r["strings"]} - related)
    host = "my workstation has a Quadro P2000 and an RTX A5000 and they do not work together\n"
    # "invalid argument" (cudaErrorInvalidValue) is what a launch configuration or a shared-memory size chosen for one
    # card gets on the other: beside a host of two capabilities it is the mixed host (the test below)
    wrong = [
        s
        for s in strings
        if s != "invalid argument"
        and [f.category for f in classify(f"{host}RuntimeError: CUDA error: {s}")] != ["unknown"]
    ]
    assert not wrong


def test_invalid_argument_on_a_host_of_two_capabilities_is_the_mixed_host() -> None:
    host = "my workstation has a Quadro P2000 and an RTX A5000\n"
    assert classify(f"{host}RuntimeError: CUDA error: invalid argument")[0].category == "mixed-gpu"
    assert classify("RuntimeError: CUDA error: invalid argument")[0].category == "unknown"


@pytest.mark.parametrize(
    "text",
    [
        # built on one machine, run on another (the build host's GPU named, or none)
        "I compiled the extension on our login node, then submitted the job to a GPU node on another cluster.\n",
        "We built the library locally and copied it to the inference server.\n",
        "compiled it on my laptop (a GTX 1650) and deployed it to the cluster\n",
        "the source build works here but I moved the disk to a different machine\n",
        # works on one of the user's machines, fails on another
        "The binary works on one of our servers (Tesla V100) but it fails on another (Tesla V100S)\n",
    ],
)
def test_a_build_made_for_one_gpu_and_run_on_another_is_mixed_gpu(text: str) -> None:
    for failure in (NO_IMAGE, "cuModuleLoadData failed: CUDA_ERROR_NO_BINARY_FOR_GPU\n"):
        assert classify(text + failure)[0].category == "mixed-gpu", (text, failure)


def test_the_build_hosts_gpu_is_not_called_the_one_without_code() -> None:
    """The GPU of the machine that built the code has code for it: fixes must not be written for it alone."""
    findings = explain_text(
        "compiled it on my workstation (an RTX 4080), then copied it to the lab's server\n" + NO_IMAGE
    )
    assert findings[0].category == "mixed-gpu"
    assert all('TORCH_CUDA_ARCH_LIST="8.9"' not in fix for f in findings for fix in f.fixes)


@pytest.mark.parametrize(
    "text",
    [
        "I built it from source on my machine and it works, but the conda package works as well\n",  # no other machine
        "switched to another GPU (a Tesla V100) and now it works\n",  # the user moved to a GPU the build covers
        "compiled with TORCH_CUDA_ARCH_LIST=7.0 on a server\n",  # a build, no run elsewhere
        "I compiled it on my laptop which has a GTX 1650\n",  # built and run on the same machine, as far as it says
        "built it from source on my machine for the new GPU\n",  # one machine, its new card
    ],
)
def test_a_build_or_a_move_alone_is_not_a_mixed_host(text: str) -> None:
    assert classify(text + NO_IMAGE)[0].category == "no-kernel-image"


@pytest.mark.parametrize(
    "text",
    [
        "the device ids in my script and nvidia-smi do not match on this box",
        "nvidia-smi doesn't match the device index pytorch uses",
        "the program is not listing the cards in the same order as nvidia-smi",
        "GPU ordering in CUDA is different from nvidia-smi here",
    ],
)
def test_cuda_device_order_differing_from_nvidia_smi_is_mixed_gpu(text: str) -> None:
    top = explain_text(text)[0]
    assert top.category == "mixed-gpu"
    assert any("CUDA_DEVICE_ORDER=PCI_BUS_ID" in fix for fix in top.fixes)


def test_gpus_that_do_not_work_together_need_two_capabilities() -> None:
    two = "A Tesla P4 and a Quadro RTX 5000 can not work together in one process\n"
    assert classify(two)[0].category == "mixed-gpu"
    same = "Two RTX 3060 cards do not work together\n"
    assert [f.category for f in classify(same)] == ["unknown"]


def test_rust_bindings_name_the_missing_binary_by_their_enum() -> None:
    """cust/rustacuda print CUDA_ERROR_NO_BINARY_FOR_GPU as ``NoBinaryForGpu``; HIP's error is AMD's."""
    rust = "called `Result::unwrap()` on an `Err` value: Cuda(NoBinaryForGpu)"
    assert classify(rust)[0].category == "no-kernel-image"
    assert classify('"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"')[0].category != (
        "no-kernel-image"
    )


PLAN_WARNING = (
    "[11/02/2025-09:14:03] [TRT] [W] Using an engine plan file across different models of devices is not recommended "
    "and is likely to affect performance or even cause errors.\n"
)


def test_tensorrts_plan_warning_is_a_plan_built_on_another_gpu() -> None:
    top = explain_text(PLAN_WARNING)[0]
    assert top.category == "mixed-gpu"
    # beside an unrelated CUDA error, the error is the cause (the warning is also printed for a spurious mismatch)
    oom = PLAN_WARNING + "Cuda failure: out of memory\n"
    assert [f.category for f in classify(oom)] == ["unknown"]


OLLAMA_DEVICES = (
    'time=2024-09-24T10:00:00.000Z level=INFO source=types.go:107 msg="inference compute" id=GPU-1a2b library=cuda '
    'variant=v12 compute=8.6 driver=12.4 name="NVIDIA GeForce RTX 3060" total="11.7 GiB" available="11.1 GiB"\n'
    'time=2024-09-24T10:00:00.000Z level=INFO source=types.go:107 msg="inference compute" id=GPU-3c4d library=cuda '
    'variant=v11 compute=5.2 driver=12.4 name="Quadro M4000" total="7.9 GiB" available="7.8 GiB"\n'
    'time=2025-10-01T10:00:00.000Z level=INFO source=types.go:42 msg="inference compute" id=0 library=ROCm '
    'compute=gfx1100 name=ROCm0 description="AMD Radeon RX 7900 XTX"\n'
)


def test_ollamas_device_lines_list_the_host() -> None:
    """ollama's "inference compute" lines (discover/types.go): each CUDA device with its capability; ROCm's are not."""
    facts = extract_facts(OLLAMA_DEVICES)
    assert [(g["name"], g["compute_capability"]) for g in facts["gpus"]] == [
        ("NVIDIA GeForce RTX 3060", "8.6"),
        ("Quadro M4000", "5.2"),
    ]
    newer = (
        'msg="inference compute" id=GPU-5e6f filter_id="" library=CUDA compute=12.0 name=CUDA0 '
        'description="NVIDIA GeForce RTX 5070 Ti" libdirs=ollama,cuda_v13 driver=13.0 type=discrete total="15.9 GiB"'
    )
    assert extract_facts(newer)["gpus"] == [{"name": "NVIDIA GeForce RTX 5070 Ti", "compute_capability": "12.0"}]
    failure = "CUDA error: no kernel image is available for execution on the device\n  current device: 1"
    assert classify(OLLAMA_DEVICES + failure)[0].category == "mixed-gpu"


def test_ptx_for_a_higher_arch_than_the_gpu_has_no_code_for_it() -> None:
    """ptxas' own line (CUDA 13.0's ptxas on PTX whose .target is sm_86, assembled for its default sm_75)."""
    line = "ptxas fatal   : SM version specified by .target is higher than default SM version assumed"
    assert classify(line)[0].category == "no-kernel-image"


def test_an_engine_that_fails_to_deserialize_on_another_gpu_was_built_for_the_first() -> None:
    assert classify("TensorRT: the engine fails to deserialize on a different GPU (built on an A10)")[0].category == (
        "mixed-gpu"
    )
    # without another GPU or machine, a deserialization failure says nothing of the host
    assert classify("ERROR: engine.cpp (1407) - Serialization Error in deserialize")[0].category != "mixed-gpu"


@pytest.mark.parametrize(
    "text",
    [
        "[Bug]: the fused MoE kernel crashes with 'no kernel image is available' on a Tesla P4",
        "the 0.9 wheel has no SM75 kernel image for awq_gemm",
    ],
)
def test_the_cuda_strings_head_quoted_in_a_title_is_missing_code(text: str) -> None:
    assert classify(text)[0].category == "no-kernel-image"
