"""Make findings concrete with what is known about the machine (or stated by the user).

:class:`Context` is optional and built by the caller (the CLI probes this machine; tests pass
explicit objects): the GPUs with their compute capabilities, installed packages with the archs
their binaries carry, and the driver.  Without it, facts read from the text itself (torch's GPU
warnings, ``found version 11040``, ``Hardware limit``) still fill in causes and fixes.

Each category has its grounder (:data:`cudafit.explain.grounders.GROUNDERS`); fixes follow the
*emitter* of the message (the ``emitters`` evidence, see :mod:`.catalogue`): a CTranslate2 or JAX
user is pointed at that project's builds, never at a PyTorch wheel, and a message many projects
print gets a project's fix only when the text names the project.  A library named by a traceback
(``libtorch_cuda_linalg.so``) is joined with the modules without code for the GPU (the holes
``doctor`` reports).

Rules used, with their sources:

* SASS runs within a major on an equal or higher minor; PTX on an equal or higher CC; ``a`` code
  only on its CC, ``f`` code on its family (CUDA Programming Guide 13 §1.3.4 and §5.1.2,
  https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/compute-capabilities.html);
  no binary compatibility between Tegra and desktop (legacy PG §6.1.2).
* Runtime driver floors 13.x >= 580, 12.x >= 525, 11.x >= 450
  (https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html) and each
  toolkit's minimum driver (release notes Table 3), from :mod:`cudafit.rules.tables`.
* CUDA 13 toolkits cannot target compute capabilities below 7.5 (13.0 release notes,
  fatbin_spec.md §E.7), and PyTorch's CUDA 12.8+ builds carry sm_75 and newer only, so a
  pre-Turing GPU needs a cu126 (or older) PyTorch build.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from cudafit.explain.classify import Finding
from cudafit.explain.context import Context, KernelGap
from cudafit.explain.grounders import Ground, grounder
from cudafit.explain.grounders.base import arch_runs_on, describe, gpus_of
from cudafit.explain.grounders.kernels import match_kernel_gaps

__all__ = ["Context", "KernelGap", "arch_runs_on", "explain_text", "ground", "match_kernel_gaps"]


def _ground_one(f: Finding, context: Context) -> tuple[Finding, list[Finding]]:
    """The grounded finding, plus findings the machine adds (a mixed host): the category's grounder, then
    placeholders (``<cc>``, ``<all ccs>``) filled and the machine's GPUs named."""
    g = Ground(f, context, gpus_of(f, context))
    out = grounder(f.category)(g)
    fixes, cause = out.fixes, out.cause
    if g.plan:
        fixes = [x.replace("<all ccs>", g.plan).replace("<cc>", g.plan) for x in fixes]
    where = f" GPUs: {describe(g.gpus)}." if context.gpus else ""
    if where and where.strip() not in cause:
        cause = cause.rstrip(".") + "." + where
    return replace(f, cause=cause, fixes=tuple(dict.fromkeys(fixes)), evidence=out.evidence), out.extra


def ground(findings: Sequence[Finding], context: Context | None = None) -> list[Finding]:
    """Findings with causes and fixes made concrete from ``context`` and the text's own facts.

    The order is kept; a mixed host adds a ``mixed-gpu`` finding after the one it explains.
    """
    ctx = context or Context()
    out: list[Finding] = []
    seen: set[str] = set()
    for f in findings:
        g, extra = _ground_one(f, ctx)
        if g.category in seen:
            continue
        out.append(g)
        seen.add(g.category)
        for e in extra:
            if e.category not in seen and e.category not in {x.category for x in findings}:
                out.append(e)
                seen.add(e.category)
    return out


def explain_text(text: str, context: Context | None = None) -> list[Finding]:
    """Classify ``text`` and ground the findings: the whole of ``cudafit explain`` without output."""
    from cudafit.explain.classify import classify

    return ground(classify(text), context)
