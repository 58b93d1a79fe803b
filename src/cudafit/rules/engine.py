"""The verdict engine's public face: binary facts x GPU x driver -> native / jit / partial / fails / none.

The engine is split by concept; callers outside ``rules/`` import these names from here:

* :mod:`cudafit.rules.decide`: the per-module decision (NVIDIA's SASS/PTX rules, gated modules);
* :mod:`cudafit.rules.prepared`: a file's modules grouped once and judged per GPU, with module roles;
* :mod:`cudafit.rules.pools`: library-loaded code judged together;
* :mod:`cudafit.rules.package`: a package's files judged together, and its driver floor;
* :mod:`cudafit.rules.counts`: module counts and the status they give;
* :mod:`cudafit.rules.options`: :class:`JudgeOptions`, the one value for driver, JIT, gating and pooling.
"""

from __future__ import annotations

from cudafit.model import Gpu
from cudafit.rules.counts import Counts, combine_counts
from cudafit.rules.decide import CodeChoice, ModuleVerdict, arch_runs_on, evaluate_module, iter_compatible_code
from cudafit.rules.options import JudgeOptions
from cudafit.rules.package import PackageVerdict, evaluate_package, package_status
from cudafit.rules.prepared import FileVerdict, PreparedFile, evaluate_file
from cudafit.rules.status import Status

__all__ = [
    "CodeChoice",
    "Counts",
    "FileVerdict",
    "Gpu",
    "JudgeOptions",
    "ModuleVerdict",
    "PackageVerdict",
    "PreparedFile",
    "Status",
    "arch_runs_on",
    "combine_counts",
    "evaluate_file",
    "evaluate_module",
    "evaluate_package",
    "iter_compatible_code",
    "package_status",
]
