"""cudafit: will the CUDA kernels in this environment, wheel, image or model package run on these GPUs?

cudafit reads the SASS and PTX embedded in binaries (without importing or running them),
applies NVIDIA's compatibility rules per GPU, and says what to do when they do not fit.

Layers (imports go one way): ``binary`` (bytes -> facts) -> ``rules`` (facts + tables ->
verdicts) ; ``probe`` (this machine's GPUs) ; ``targets`` (where binaries come from) ;
``report`` and ``cli`` (rendering only).
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
