"""Explain -> the run-time compiler: name the compiler a failure came from, its version and the real switch.

"ptxas fatal : Value 'sm_120' is not defined for option 'gpu-name'", "nvrtc: error: invalid value for
--gpu-architecture" and CUDA_ERROR_NO_BINARY_FOR_GPU after a JIT (CuPy's NVRTC compiles for the newest arch
it knows, a cubin the GPU cannot load) are all a compiler used at run time that predates the GPU.  The
generic grounding (:mod:`cudafit.explain.ground`) says so; this adds which compiler of this environment it
is (Triton's bundled ptxas or ``TRITON_PTXAS_PATH``, the ptxas XLA finds, the NVRTC installed), read from
its own version string (never run), judged with :func:`cudafit.rules.compilers.judge_compiler`.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

from cudafit.explain.classify import Finding
from cudafit.explain.evidence import Evidence
from cudafit.explain.grounders.base import lines_of
from cudafit.model import ComputeCapability, Gpu
from cudafit.rules.compilers import RuntimeCompiler, Wiring, judge_compiler

__all__ = ["ground_compilers", "iter_environment_compilers"]

_JIT_WORDS = re.compile(r"\b(triton|inductor|torch\.compile|nvrtc|cupy|jitify|xla|jax)\b", re.I)


def iter_environment_compilers(sites: Sequence[str], environ: Mapping[str, str]) -> Iterator[RuntimeCompiler]:
    """The run-time compilers installed here, wired as their users find them (no scan of the environment)."""
    from cudafit.rules.compilers import compilers_data
    from cudafit.targets.compilers import find_xla_ptxas, read_cuda_release

    conv = compilers_data()["conventions"]["triton"]
    for var, rel, name in ((conv["env"], conv["ptxas"], "ptxas"), (conv["env_second"], conv["ptxas_second"], None)):
        path = environ.get(var) or next(
            (os.path.join(s, rel) for s in sites if os.path.isfile(os.path.join(s, rel))), None
        )
        if path:
            label = name or "ptxas-blackwell"
            yield RuntimeCompiler(
                "ptxas", read_cuda_release(path), where=path, evidence="environment", user="triton", name=label
            )
    xla = find_xla_ptxas(sites, environ)
    if xla:
        yield RuntimeCompiler("ptxas", read_cuda_release(xla), where=xla, evidence="environment", user="xla")
    for site in sites:
        for lib in sorted(glob.glob(os.path.join(site, "nvidia", "cuda_nvrtc", "lib", "libnvrtc.so.*"))):
            if "builtins" not in lib:
                yield RuntimeCompiler("nvrtc", read_cuda_release(lib), where=lib, evidence="environment")
                break


def _wanted_cc(f: Finding, gpus: Sequence[Gpu]) -> ComputeCapability | None:
    """The compute capability the compiler was asked for: the arch the message names, else the first GPU's."""
    arch = f.evidence.get("unsupported_target")
    if arch:
        m = re.search(r"(\d{2,3})", arch)
        if m:
            return ComputeCapability.from_arch_number(int(m.group(1)))
    return gpus[0].compute_capability if gpus else None


def _relevant(f: Finding, c: RuntimeCompiler) -> bool:
    lines = lines_of(f.evidence)
    if c.family == "nvrtc":
        return (
            "nvrtc" in lines.lower() or bool(re.search(r"cupy|jitify", lines, re.I)) or f.category == "no-kernel-image"
        )
    if c.user == "xla":
        return bool(re.search(r"\bxla\b|jax", lines, re.I))
    return "ptxas" in lines or bool(f.evidence.get("triton"))


def ground_compilers(
    findings: Sequence[Finding],
    gpus: Sequence[Gpu],
    sites: Sequence[str],
    environ: Mapping[str, str],
) -> list[Finding]:
    """The findings, with a run-time compiler failure tied to this environment's compiler that cannot
    target the GPU (its version in the cause, its real switch as the first fix)."""
    wanted = ("jit-toolchain-too-old", "no-kernel-image")
    if not any(f.category in wanted for f in findings):
        return list(findings)
    from cudafit.targets.compilers import iter_local_ptxas

    compilers = list(iter_environment_compilers(sites, environ))
    local = tuple(iter_local_ptxas(environ)) if compilers else ()
    out = []
    for f in findings:
        cc = _wanted_cc(f, gpus)
        lines = lines_of(f.evidence)
        jit_context = f.category == "jit-toolchain-too-old" or bool(_JIT_WORDS.search(lines))
        if f.category not in wanted or cc is None or not jit_context:
            out.append(f)
            continue
        judged = [
            judge_compiler(c, cc, Wiring(None, environ, local)) for c in compilers if c.used_for(cc) and _relevant(f, c)
        ]
        bad = next((j for j in judged if j.status == "fails"), None)
        if bad is None:
            out.append(f)
            continue
        cause = f"{bad.message.split(': ')[0]}. {f.cause}"
        switches = {w for fix in bad.fixes for w in re.findall(r"\b[A-Z][A-Z_]{4,}\b", fix)}
        generic = [x for x in f.fixes if not any(w in x for w in switches)]  # ours name the same switch better
        fixes = tuple(dict.fromkeys((*bad.fixes, *generic)))
        evidence: Evidence = {**f.evidence, "runtime_compiler": bad.to_dict()}
        out.append(replace(f, cause=cause, fixes=fixes, evidence=evidence))
    return out
