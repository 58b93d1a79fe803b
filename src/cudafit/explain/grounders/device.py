"""Grounders of the device a kernel runs on: shared memory over the GPU's limit, tensors on different devices.

Shared memory per block, default and opt-in, per compute capability: CUDA Programming Guide, "Technical
Specifications per Compute Capability" (:func:`cudafit.rules.tables.cc_limits`); ptxas caps static
``__shared__`` arrays at 48 KB on every GPU.
"""

from __future__ import annotations

import re

from cudafit.explain.evidence import SharedMemory
from cudafit.explain.grounders.base import Ground, Grounded, default, describe, lines_of
from cudafit.model import Gpu

__all__ = ["ground_device_mismatch", "ground_shared_memory"]


def _static_shared_memory(out: Grounded, sm: SharedMemory, limits: list[tuple[Gpu, int]]) -> None:
    """Static ``__shared__`` arrays over ptxas' 48 KB: dynamic shared memory with an opt-in, where the GPU has it."""
    out.cause = (
        f"a kernel declares {sm['required']} bytes of static __shared__ memory, {sm['required'] - sm['limit']} "
        f"more than the {sm['limit']} bytes ptxas allows for static shared memory on every GPU"
    )
    fits = [(x, lim) for x, lim in limits if lim >= sm["required"]]
    short = [(x, lim) for x, lim in limits if lim < sm["required"]]
    out.fixes = []
    if fits or not limits:
        where = (
            ", ".join(f"{x.label}: {lim} bytes" for x, lim in fits)
            or "GPUs of compute capability 7.0+"
        )
        out.fixes.append(
            "declare the array as dynamic shared memory (extern __shared__) and opt in to the size before the "
            f"launch: cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, {sm['required']}) "
            f"-- the opt-in maximum per block is larger ({where})"
        )
    for x, lim in short:
        out.fixes.append(
            f"{x.label} allows at most {lim} bytes per block even with the opt-in: use a "
            "smaller tile there"
        )


def ground_shared_memory(g: Ground) -> Grounded:
    """A kernel asked for more shared memory per block than the GPU has (a Triton config tuned elsewhere)."""
    from cudafit.rules import tables

    out = default(g)
    sm = g.ev.get("shared_memory")
    if not sm and "flash-attn" in g.emitters:
        return _flash_attention_backward(out, g)
    if not sm:
        return out
    limits = [
        (x, cl.max_shared_memory_per_block_optin)
        for x in g.gpus
        if (cl := tables.cc_limits(x.compute_capability)) is not None
    ]
    if sm.get("kind") == "static":
        _static_shared_memory(out, sm, limits)
        return out
    same = [
        str(c)
        for c in tables.iter_compute_capabilities()
        if (cl := tables.cc_limits(c)) and cl.max_shared_memory_per_block_optin == sm["limit"]
    ]
    out.cause = (
        f"the kernel asks for {sm['required']} bytes of shared memory per block, {sm['required'] - sm['limit']} "
        f"more than the hardware limit of {sm['limit']} bytes"
        + (f" (the opt-in maximum of compute capability {', '.join(same)})" if same else "")
        + "; Triton autotune configs tuned on a GPU with more shared memory (A100/H100) do this"
    )
    out.fixes = [
        f"use a config that fits {sm['limit']} bytes: fewer pipeline stages (num_stages) or smaller BLOCK "
        f"sizes; shared memory grows with num_stages x block tile",
        *g.finding.fixes[1:],
    ]
    bigger = [x for x, lim in limits if lim >= sm["required"] and x in g.context.gpus]
    if bigger:
        out.fixes.append(f"or run it on {describe(bigger)}, which has enough shared memory")
    return out


def _flash_attention_backward(out: Grounded, g: Ground) -> Grounded:
    """FlashAttention's backward for the largest head dims checks for 8.0 or 9.0: its kernels need their shared memory
    (163 KB and 227 KB a block; 8.6 and 8.9 have 99 KB, Programming Guide's compute capabilities table)."""
    from cudafit.rules import tables

    small = [
        x
        for x in g.gpus
        if (cl := tables.cc_limits(x.compute_capability)) and cl.max_shared_memory_per_block_optin < 163 * 1024
    ]
    which = describe(small) if small else "this GPU"
    out.cause = (
        f"FlashAttention's backward kernels for this head dim need the shared memory of compute capability 8.0 or 9.0 "
        f"(163 KB / 227 KB a block); {which} has less, so the library refuses it"
    )
    out.fixes = [
        "train with attention dropout 0: flash-attn 2.5.5 and later have head-dim-256 backward kernels that fit 8.6 "
        "and 8.9 without dropout (pip install -U flash-attn)",
        "or use a model/config with a head dim of at most 192 (64 for FlashAttention 1.x), or PyTorch's "
        "scaled_dot_product_attention for this layer",
        "or run training on a GPU of compute capability 8.0 or 9.0 (A100/A800, H100/H800)",
    ]
    return out


def _checkpoint_device(out: Grounded, g: Ground, lines: str) -> bool:
    """A checkpoint saved on a CUDA device this process does not have: whether it was one."""
    md = g.ev.get("missing_device")
    if md:
        out.cause = (
            f"the checkpoint's tensors were saved on cuda:{md['index']}, and this process sees "
            f"{md['device_count']} GPU(s) (CUDA_VISIBLE_DEVICES renumbers them from 0)"
        )
        out.fixes = [
            "load onto a device that exists: torch.load(path, map_location='cuda:0') (or 'cpu', then .to(dev))",
        ]
        return True
    if "deserialize object on a CUDA device" in lines:
        out.cause = "the checkpoint's tensors were saved on a CUDA device, and this process has no usable CUDA GPU"
        out.fixes = [
            "load on the CPU: torch.load(path, map_location='cpu'), or install the CUDA build of torch if this "
            "machine has a GPU (cudafit gpus shows whether torch sees it)",
        ]
        return True
    return False


def _operands_apart(out: Grounded, lines: str, devices: list[str]) -> None:
    """Inputs and weights on different devices (torch, JAX), or on two GPUs (device_map='auto')."""
    if re.search(r"Input type \(torch\.", lines):
        on_gpu = re.search(r"Input type \(torch\.cuda", lines) is not None
        out.cause = (
            "the input is on the GPU and the layer's weights are on the CPU (the model was not moved)"
            if on_gpu
            else "the input is on the CPU and the layer's weights are on the GPU"
        )
        out.fixes = ["move the model and its inputs to one device: model.to('cuda') and x.to('cuda')"]
    elif "incompatible devices" in lines:
        out.cause = "a jitted JAX computation got arrays committed to different devices"
        out.fixes = [
            "put the arguments on one device (jax.device_put(x, device)) or give the computation a sharding that "
            "spans those devices"
        ]
    elif len([d for d in devices if d.startswith("cuda")]) > 1:
        out.cause = (
            f"one operation got tensors on {' and '.join(devices)}: the model (or a part of it, e.g. layers that "
            "device_map='auto' placed on another GPU) and its inputs or buffers live on different GPUs"
        )
        out.fixes = [
            f"move everything the operation uses to one device (x.to('{devices[0]}')), or let the framework place "
            "the inputs: with device_map='auto' pass the inputs on the first layer's device (model.device)",
            "use one GPU for the whole model: CUDA_VISIBLE_DEVICES=0 (or torch.cuda.set_device) before it is built",
        ]


def ground_device_mismatch(g: Ground) -> Grounded:
    """Code and data on different devices: a CUDA .pt2 run by the CPU runner, a checkpoint's device, operands."""
    ev, context = g.ev, g.context
    out = default(g)
    lines = lines_of(ev)
    if ev.get("aoti_runner") == "cpu" and ("cuda_errors" in ev or "CUDA" in lines):
        out.cause = (
            "a CUDA-compiled AOTInductor package (.pt2) is run by the CPU runner (AOTIModelContainerRunnerCpu) "
            "with CPU inputs and no cubin directory: the CUDA kernels get host pointers (CUDA error: invalid "
            "argument)"
        )
        out.fixes = [
            "use the CUDA runner for a CUDA-compiled .pt2 (AOTIModelContainerRunnerCuda, with the package's cubin "
            "directory) and move the inputs to cuda (x.to('cuda'))",
            "check the package: cudafit check model.pt2 (shows the device it was compiled for and its cubins)",
        ]
    elif not _checkpoint_device(out, g, lines):
        _operands_apart(out, lines, ev.get("devices", []))
    if not context.gpus and (context.packages or context.driver is not None):
        out.fixes.insert(0, "this machine has no CUDA GPU: run on the CPU (device='cpu'; a .pt2 re-exported for CPU)")
    return out
