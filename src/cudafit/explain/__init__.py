"""``cudafit explain``: classify CUDA failure messages, ground them on a machine, give cause and fixes.

Pure logic, no printing: :mod:`.extract` pulls facts out of the text, :mod:`.catalogue` holds the
categories of shared/docs/error_categories.md with weighted patterns, :mod:`.classify` ranks them
(``unknown`` when none fits) and :mod:`.ground` makes causes and fixes concrete with an optional
:class:`Context` (GPUs, installed packages' archs, driver).  NVIDIA's error strings and codes:
https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html (fatbin_spec.md §E.5).
"""

from __future__ import annotations

from cudafit.explain.catalogue import CATEGORIES, Category, Pattern, category
from cudafit.explain.classify import Finding, classify
from cudafit.explain.extract import CUDA_ERRORS, CudaError, clean, extract_facts
from cudafit.explain.ground import Context, arch_runs_on, explain_text, ground

__all__ = [
    "CATEGORIES",
    "CUDA_ERRORS",
    "Category",
    "Context",
    "CudaError",
    "Finding",
    "Pattern",
    "arch_runs_on",
    "category",
    "classify",
    "clean",
    "explain_text",
    "extract_facts",
    "ground",
]
