"""Grounders of code built for other GPUs: PTX JIT-compiled from a lower arch, a mixed host, a capability guard,
arch-specific (``a``/``f``) code.

SASS runs within a major on an equal or higher minor; PTX on an equal or higher CC; ``a`` code only on its CC,
``f`` code on its family (CUDA Programming Guide 13 §1.3.4 and §5.1.2,
https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/compute-capabilities.html).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cudafit.explain.catalogue import FA3_BUILD, TRITON_CACHE, category
from cudafit.explain.classify import HOPPER_ONLY, Finding
from cudafit.explain.extract import arch_number
from cudafit.explain.forms import BUILD_FORM_NAME
from cudafit.explain.grounders.base import (
    Ground,
    Grounded,
    arch_list,
    arch_runs_on,
    buildable,
    cc_of_arch,
    default,
    describe,
    lines_of,
    plan_command,
    real_arch,
)
from cudafit.explain.grounders.projects import project_fixes
from cudafit.explain.hw_features import feature_named
from cudafit.model import Gpu, parse_compute_capability
from cudafit.rules import tables

__all__ = [
    "ground_arch_specific",
    "ground_capability_guard",
    "ground_mixed_gpu",
    "ground_ptx_jit_lower_arch",
    "mixed_host_finding",
]


def mixed_host_finding(f: Finding, gpus: Sequence[Gpu]) -> Finding:
    """The ``mixed-gpu`` finding a host of several compute capabilities adds to ``f`` (or makes of it)."""
    ccs = [g.compute_capability for g in gpus]
    kept, left_out = buildable(ccs)
    plan = arch_list(kept)
    build = f'build for every GPU of the host: TORCH_CUDA_ARCH_LIST="{plan}" ({plan_command(kept)})'
    if left_out:
        build = (
            f'build for the GPUs a current CUDA toolkit targets: TORCH_CUDA_ARCH_LIST="{plan}" ({plan_command(kept)}); '
            f"no toolkit from {min(tables.load_tables().targets)} on targets {arch_list(left_out)}, so no one build "
            "runs on every GPU of this host"
        )
    base = category("mixed-gpu")
    score = max(f.score - 1.0, 2.0) if f.category != "mixed-gpu" else f.score
    return Finding(
        base.id,
        base.title,
        round(min(1.0, score / 4.0), 2),
        {**f.evidence, "host_compute_capabilities": sorted({str(c) for c in ccs})},
        f"this host mixes {describe(gpus)}: code built for one of them runs (or is JIT-compiled) on the other",
        (
            build,
            "or pin the process to one kind of GPU: CUDA_VISIBLE_DEVICES=<indexes>, with export "
            "CUDA_DEVICE_ORDER=PCI_BUS_ID so that the indexes match nvidia-smi (cudafit gpus shows both)",
        ),
        score,
    )


def _ggml_stub(g: Ground, ran_arch: str) -> Grounded:
    """ggml: "CUDA kernel K has no device code compatible with CUDA arch 520. ggml-cuda.cu was compiled for: 520"."""
    out = default(g)
    kernel = (g.ev.get("kernels") or ["the kernel"])[0]
    build = g.ev.get("build_archs") or []
    above = [x for x in g.gpus if x.compute_capability > cc_of_arch(ran_arch)]
    out.cause = (
        f"{kernel} ran the code compiled for {ran_arch} ({cc_of_arch(ran_arch)})"
        + (f" on {describe(above)}" if above else "")
        + (f"; the build carries {', '.join(build)} only" if build else "")
        + ": no cubin matches the GPU, so the code of a lower arch ran, and ggml compiles this kernel to a stub "
        "for that arch (it needs newer instructions)"
    )
    ccs = g.ccs
    archs = ";".join(str(cc.arch_number) for cc in sorted(set(ccs))) if ccs else "<the GPU's CC, e.g. 86>"
    out.fixes = [
        f'rebuild for the GPU it runs on: cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="{archs}" '
        "(or native); prebuilt binaries must list the GPU's arch",
        "check which archs a binary carries: cudafit scan PATH (libggml-cuda.so, the llama-cpp-python wheel)",
    ]
    return out


def ground_ptx_jit_lower_arch(g: Ground) -> Grounded:
    """``FATAL: kernel K is for smA-smB, but was built for smC``: the GPU ran PTX of a lower arch."""
    ev, ccs = g.ev, g.ccs
    built = ev.get("built_for")
    rng = ev.get("arch_range")
    if built and not rng:
        return _ggml_stub(g, built)
    out = default(g)
    lo = rng[0] if rng else None
    ran = [x for x in g.gpus if lo and x.compute_capability.arch_number >= arch_number(lo)]
    if built and lo and rng:
        built_cc = cc_of_arch(built)
        on = f" on {describe(ran)}" if ran else f" on a GPU of compute capability >= {cc_of_arch(lo)}"
        out.cause = (
            f"the kernel's code path needs {lo}..{rng[1]}, but it ran{on} from PTX the extension "
            f"carries for {built} ({built_cc}): there is no cubin for that GPU, the driver JIT-compiled the "
            f"{built} PTX and __CUDA_ARCH__ is still {arch_number(built)}0, so the kernel refuses to run"
        )
        if ccs:
            need = sorted({*ccs, built_cc})
            archs, cmd = arch_list(need), plan_command(need)
        else:
            other = f"<CC of the GPU that ran it, >= {cc_of_arch(lo)}>"
            archs, cmd = f"{built_cc};{other}", f"cudafit plan --gpu {built_cc} --gpu <that GPU>"
        out.fixes = [
            f'rebuild the extension for every GPU of the host: TORCH_CUDA_ARCH_LIST="{archs}" ({cmd} gives '
            "the CMake and nvcc forms, and +PTX for GPUs to come)",
            f"or run it only on the GPUs it has cubins for, e.g. CUDA_VISIBLE_DEVICES=<index of the "
            f"{built_cc} GPU> (cudafit gpus lists the indexes)",
        ]
    elif ccs and BUILD_FORM_NAME in ev.get("forms", []):
        # the report's own build flags leave the GPU only lower-arch PTX (explain/builds.py)
        out.cause = (
            f"the build has no cubin for {describe(g.gpus)}: the driver JIT-compiles its lower-arch PTX there, which "
            "costs the first start of every process whose JIT cache is empty, and code that picks its path by "
            "__CUDA_ARCH__ takes the older arch's path (slower, or wrong where that path is a stub)"
        )
        out.fixes = [
            f'rebuild with cubins for these GPUs: TORCH_CUDA_ARCH_LIST="{arch_list(ccs)}" ({plan_command(ccs)} gives '
            "the CMake and nvcc forms)",
            "meanwhile keep the JIT's output: CUDA_CACHE_PATH on a persistent, writable volume and CUDA_CACHE_MAXSIZE "
            "large enough for it (CUDA Programming Guide, environment variables)",
        ]
    if len(set(ccs)) > 1:
        out.extra.append(mixed_host_finding(g.finding, g.gpus))
    return out


def ground_mixed_gpu(g: Ground) -> Grounded:
    """A TensorRT engine built on another GPU model, or a host of several compute capabilities."""
    out = default(g)
    # TensorRT's "expecting compute X got compute Y": X is the GPU that loads the plan, Y the one it was built on
    # (TensorRT is closed source; NVIDIA's maintainer in NVIDIA/TensorRT#3130 reads "expecting compute 7.5 got compute
    # 8.6" on a T4 as "an engine that was built on a sm86 GPU" used "in the sm75 GPU", and the reports agree: a
    # GTX 1050 Ti (6.1) says "expecting compute 6.1", an engine built on a P6000 and run on a 2080 Ti "expecting
    # compute 7.5 got compute 6.1").
    m = re.search(r"expecting compute (\d+\.\d) got compute (\d+\.\d)", lines_of(g.ev))
    if m:  # TensorRT: an engine is built for the GPU model it was built on
        running, built = m.group(1), m.group(2)
        out.cause = (
            f"the TensorRT engine was built on a GPU of compute capability {built} and is loaded on one of "
            f"{running}: a serialized engine holds kernels chosen for the GPU it was built on and runs only on "
            "that GPU model"
        )
        out.fixes = [
            f"rebuild the engine on the {running} GPU that runs it (trtexec --onnx=model.onnx "
            "--saveEngine=model.engine, or the builder API), and key cached engines by GPU",
            "or build it once with hardware compatibility (HardwareCompatibilityLevel.AMPERE_PLUS) to run on every "
            "Ampere or newer GPU, at some speed",
        ]
        return out
    if _NUMBERING_FORMS & set(g.ev.get("forms", [])):
        return _numbering(out, g)
    if TRITON_CACHE in g.ev.get("sources", []):
        out.cause = (
            "Triton compiles each kernel for the GPU it runs on, so a cubin this GPU cannot load came from Triton's "
            "cache, compiled on a GPU of another compute capability (the cache key had no arch before Triton 2.1, "
            "and a cache directory shared by machines or nodes holds every GPU's cubins)"
        )
        out.fixes = [
            "clear the cache (rm -rf ~/.triton/cache, or the directory TRITON_CACHE_DIR names) and run again",
            "give each GPU model its own cache: TRITON_CACHE_DIR=~/.triton/cache-$(nvidia-smi --query-gpu="
            "compute_cap --format=csv,noheader | head -1), and upgrade Triton (2.1+ keys cached kernels by arch)",
        ]
        return out
    if len(set(g.ccs)) > 1:
        mixed = mixed_host_finding(g.finding, g.gpus)
        return Grounded(mixed.cause, list(mixed.fixes), mixed.evidence)
    return out


# The forms (explain/forms.py) that read two numberings of the GPUs, not code built for another GPU.
_NUMBERING_FORMS = frozenset(
    {"two numberings of the GPUs disagree", "the wrong GPU is used", "CUDA's device order against nvidia-smi's"}
)


def _numbering(out: Grounded, g: Ground) -> Grounded:
    """CUDA numbers devices fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID; nvidia-smi, NVML, NVAPI and the OS
    number them by PCI bus (CUDA Programming Guide, environment variables)."""
    cards = f" ({describe(g.gpus)})" if g.gpus else ""
    out.cause = (
        f"the GPUs{cards} are numbered twice: CUDA numbers them fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID, "
        "while nvidia-smi, NVML, NVAPI and the OS number them by PCI bus, so an index taken from one numbering picks "
        "(or reports) another card in the other"
    )
    out.fixes = [
        "export CUDA_DEVICE_ORDER=PCI_BUS_ID before the program starts (in the service's environment, not only the "
        "shell; sudo drops it unless sudo -E), so CUDA's indexes match nvidia-smi's",
        "then choose the card by nvidia-smi's index or UUID: CUDA_VISIBLE_DEVICES=<index or GPU-UUID> (cudafit gpus "
        "lists both numberings)",
    ]
    return out


def _dispatch_refused(out: Grounded, rng: list[str], built: str, kernel: str) -> None:
    """A kernel compiled for the GPU whose own range check refused it: the library dispatched the wrong kernel."""
    out.cause = (
        f"{kernel} accepts {rng[0]}..{rng[1]} only, and it was compiled for {built} ({cc_of_arch(built)}), the GPU "
        "it ran on: the library dispatched a kernel that is not meant for this GPU and the kernel's own arch "
        "check refused it. This is a dispatch/guard problem of the library, not PTX JIT-compiled from a lower "
        "arch"
    )
    out.fixes = [
        f"upgrade the library to a release that dispatches another kernel on {cc_of_arch(built)} (or that carries "
        "one for it), verified with cudafit check 'PKG' --gpu " + str(cc_of_arch(built)),
        "or avoid that code path: another attention backend, or the dtype the library supports on this GPU "
        "(these range-checked CUTLASS kernels are often the f32 fallback)",
        "report it to the library with this line: the kernel's range and the arch it was built for",
    ]


def _above_maximum(out: Grounded, g: Ground, maximum: str) -> None:
    """An operator that accepts compute capabilities up to a maximum (xformers' ``capability <= (8, 0)``)."""
    top = parse_compute_capability(maximum)
    above = [x for x in g.gpus if x.compute_capability > top]
    out.cause = (
        f"the library's operator accepts compute capability up to {top}"
        + (f", and {describe(above)} is newer" if above else "")
        + ": the installed release has no code path for this GPU"
    )
    out.fixes = [
        "install a release built for this GPU (cudafit check 'PKG' --gpu NAME shows which archs a release carries)",
        "or use another implementation of the operator (e.g. the framework's built-in attention)",
    ]


def _below_minimum(out: Grounded, g: Ground, need: str) -> None:
    """The GPUs against a guard's minimum: all meet it (the guard is wrong), or some are below (it is right)."""
    minimum = parse_compute_capability(need)
    ok = [x for x in g.gpus if x.compute_capability >= minimum]
    low = [x for x in g.gpus if x.compute_capability < minimum]
    if ok and not low:
        out.cause = (
            f"the guard requires compute capability {minimum}, and {describe(ok)} meets it: the check "
            "looked at something other than the device (FlashInfer's 'requires sm75+' check, for one, "
            "tested the arch flags torch would compile for, which include older archs, not the GPU it runs "
            "on), so the guard is wrong"
        )
        out.fixes = [
            "upgrade the library to a release whose guard checks the device (torch.cuda.get_device_capability) "
            "or report the bug with this output",
            f'if the guard reads the compile arch list, limit it to these GPUs: TORCH_CUDA_ARCH_LIST="{g.plan}"',
            "library authors: cudafit.guard.require_capability checks the device itself",
        ]
    elif low:
        out.cause = (
            f"the guard requires compute capability {minimum} and {describe(low)} is below it: the library "
            "really cannot run on that GPU" + (f" ({describe(ok)} can run it)" if ok else "")
        )
        out.fixes = [
            f"run on a GPU of compute capability >= {minimum}"
            + (f": CUDA_VISIBLE_DEVICES=<index of {ok[0].name}> (cudafit gpus lists the indexes)" if ok else ""),
            "or use an implementation without that requirement (e.g. the framework's built-in attention)",
        ]


def ground_capability_guard(g: Ground) -> Grounded:
    """A library's own capability check refused the GPU: whether it is right, and what the library offers."""
    ev = g.ev
    out = default(g)
    need = ev.get("required_minimum")
    rng, built = ev.get("arch_range"), ev.get("built_for")
    if rng and built and arch_number(built) > arch_number(rng[1]):
        _dispatch_refused(out, rng, built, (ev.get("kernels") or ["the kernel"])[0])
    elif ev.get("required_maximum") and not need:
        _above_maximum(out, g, ev["required_maximum"])
    if need and not g.gpus and not (rng and built):
        out.cause = (
            f"the library requires compute capability {need} or newer and refused this GPU: either the GPU is "
            "older, or the check looked at something other than the device (compare with cudafit gpus)"
        )
    if need and g.gpus:
        _below_minimum(out, g, need)
    entries = [entry.partition(": ") for entry in ev.get("features_lacking", [])]
    lacking = [(f, gpu) for name, _sep, gpu in entries if (f := feature_named(name)) is not None]
    if lacking:
        # NVIDIA's tables say the GPU lacks what the check denied: the check is right, and the way out is to run
        # without the feature (the generic "the guard may be wrong" fixes do not apply)
        out.cause = "; ".join(
            f"{gpu} has no {f.name}, which NVIDIA's tables give to {f.held_by}" for f, gpu in lacking
        ) + ": the library's check is right to turn it off or refuse it here"
        out.fixes = [f.instead for f, _gpu in lacking] + [
            f"or run on a GPU that has it ({lacking[0][0].held_by}): cudafit gpus shows each GPU's compute capability"
        ]
    if ev.get("library_range") and not lacking:
        library = ev["library_range"].split(" serves ", 1)[0]
        out.cause = f"{ev['library_range']}: the library refuses the GPU, or was handed work it has no kernels for"
        # the table says the GPU is outside the library's range: "the guard may be wrong" does not apply
        out.fixes = [
            f"run this work without {library} on this GPU (the caller's other path: another backend, kernel or "
            "quantization), or on a GPU it serves",
        ]
    if any("tensorrt" in src for src in ev.get("sources", [])):
        out.fixes.insert(
            0,
            "this TensorRT release does not build engines for this GPU: use a release whose support matrix lists "
            "its compute capability (TensorRT 10 dropped sm_61 and older), or run the model with ONNX Runtime's "
            "CUDA execution provider",
        )
    for emitter in g.emitters:
        extra = project_fixes(emitter).guard
        if extra and (emitter != "torch" or "triton" in lines_of(ev).lower()):
            out.fixes.insert(0 if not need or not g.gpus else 1, extra)
    return out


def ground_arch_specific(g: Ground) -> Grounded:
    """Arch-specific (``a``/``f``) code: built for plain smXY where it needs smXYa, or run on another GPU."""
    lines = lines_of(g.ev)
    if re.search(
        r"Arch conditional MMA|CUTE_ARCH_\w+_ENABLED|CUTLASS_ARCH_MMA_SM\d+A?_ENABLED|not supported on \.target|"
        r"requires (?:\.target )?sm_\d+[af]",
        lines,
    ):
        return _needs_arch_specific_target(g, lines)
    out = default(g)
    special = [a for a in g.ev.get("archs", []) if a[-1] in "af"]
    fa3 = FA3_BUILD in g.ev.get("sources", [])
    also = ["sm_80"] if fa3 else []  # plain targets beside the a/f ones, where they run too
    if not special and fa3:  # hopper/setup.py: sm_80 cubins, compute_90a/sm_90a, compute_100a/sm_100a, no PTX
        special = ["sm_90a", "sm_100a"]
    if not special and re.search(HOPPER_ONLY, lines):  # FlashAttention-3, DeepGEMM: built for sm_90a only
        special = ["sm_90a"]
    if fa3:
        out.fixes = [
            "FlashAttention-3 (flash_attn_3, its hopper/ build) has kernels for sm_80-family GPUs, sm_90a and sm_100a "
            "only: on other GPUs use FlashAttention-2 (pip install flash-attn) or torch's "
            "scaled_dot_product_attention",
            *out.fixes,
        ]
    built = ", ".join(special) + (f" (and plain {', '.join(also)} cubins)" if also else "")
    if special and g.gpus:
        none = [x for x in g.gpus if not any(arch_runs_on(a, x.compute_capability) for a in special + also)]
        if none:
            out.cause = (
                f"the code is built for {built} only, which cannot run on {describe(none)}: "
                "'a' code runs on exactly its compute capability, 'f' code on its family only"
            )
    elif special and also:
        out.cause = (
            f"the code is built for {built} only, with no PTX: the sm_90a/sm_100a kernels run on exactly compute "
            "capability 9.0/10.0, the sm_80 cubins on 8.x GPUs, so any other GPU finds no usable code"
        )
    elif special:
        out.cause = (
            f"the code is built for {', '.join(special)} only: 'a' code runs on exactly that compute capability "
            f"({', '.join(str(cc_of_arch(a)) for a in special)}), 'f' code on its family only, so any other GPU "
            "finds no usable code"
        )
    return out


def _needs_arch_specific_target(g: Ground, lines: str) -> Grounded:
    """wgmma/TMA/tcgen05 compiled for plain sm_90/sm_100: the 'a' target the code was written for is missing."""
    out = default(g)
    # The 'a' target the code was written for: named by the message, else the GPU's own.
    # ptxas names it ("requires sm_100a"), CuTe's macro does ("SM90A_ENABLED"), or the plain target it was built for
    # does (".target 'sm_90'", "targeting sm90a").
    m = re.search(r"requires (?:\.target )?sm_(\d{2,3})([af])", lines) or re.search(
        r"SM(\d{2,3})(A)\b|(?:targeting|\.target '?) ?sm_?(\d{2,3})a?\b", lines, re.I
    )
    want = real_arch(f"sm_{m.group(1) or m.group(3)}{(m.group(2) or 'a').lower()}") if m else None
    if want is None and g.gpus and g.gpus[0].compute_capability.major >= 9:
        want = f"sm_{g.gpus[0].compute_capability.arch_number}a"
    want = want or "sm_90a"
    cc = cc_of_arch(want)
    elsewhere = [x for x in g.gpus if x.compute_capability != cc]
    out.cause = (
        f"the kernel uses {want}-only instructions (wgmma/TMA/tcgen05, as CUTLASS's Hopper and Blackwell kernels "
        "do), which nvcc emits only for the "
        f"arch-specific target {want}; it was compiled for plain sm_{cc.arch_number} (or compute_"
        f"{cc.arch_number}), where "
        + (
            "ptxas refuses them"
            if re.search(r"not supported on \.target|requires (?:\.target )?sm_", lines)
            else "those instructions are replaced by a trap"
        )
        + (f", and {describe(elsewhere)} cannot run {want} code at all" if elsewhere else "")
    )
    n, v = cc.arch_number, want[-1]  # v: the 'a' or 'f' of the target
    out.fixes = [
        f'build it for {want}, not sm_{n}: TORCH_CUDA_ARCH_LIST="{cc}{v}" (nvcc -gencode arch=compute_{n}{v},'
        f"code=sm_{n}{v}; CMake CMAKE_CUDA_ARCHITECTURES={n}{v}); plain {cc} does not enable these instructions",
        f"a prebuilt wheel must carry {want}: check with cudafit check 'PKG' --gpu {cc} ({want} in its archs)",
    ]
    if elsewhere:
        out.fixes.append(f"on {describe(elsewhere)}, use a build or code path without {want}-only kernels")
    return out
