"""``cudafit explain``: classify CUDA failure messages, ground them on a machine, give cause and fixes.

Pure logic, no printing: :mod:`.extract` pulls facts out of the text (one extractor per kind of fact, typed
as :mod:`.evidence` says), :mod:`.catalogue` holds the categories of shared/docs/error_categories.md with
weighted patterns, :mod:`.classify` ranks them (``unknown`` when none fits) and :mod:`.ground` makes causes
and fixes concrete with an optional :class:`Context` (GPUs, installed packages' archs, driver, modules
without code), one grounder per category (:mod:`.grounders`).  :mod:`.lookup` is the whole command on a
machine (the packages and kernels a text names, looked up in an environment or a path).  NVIDIA's error
strings and codes: https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html (fatbin_spec.md
§E.5).
"""

from __future__ import annotations

from cudafit.explain.catalogue import CATEGORIES, Category, Pattern, category
from cudafit.explain.classify import Finding, classify
from cudafit.explain.context import Context, KernelGap
from cudafit.explain.evidence import Evidence, Facts
from cudafit.explain.extract import CUDA_ERRORS, CudaError, clean, extract_facts
from cudafit.explain.ground import arch_runs_on, explain_text, ground

__all__ = [
    "CATEGORIES",
    "CUDA_ERRORS",
    "Category",
    "Context",
    "CudaError",
    "Evidence",
    "Facts",
    "Finding",
    "KernelGap",
    "Pattern",
    "arch_runs_on",
    "category",
    "classify",
    "clean",
    "explain_text",
    "extract_facts",
    "ground",
]
