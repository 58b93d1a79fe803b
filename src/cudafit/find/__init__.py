"""``cudafit find``: which release, from which index, runs on these GPUs — answered from the binaries.

Candidates are every non-yanked release (pre-releases on request) with a wheel for the target Python
and platform, on PyPI (or the given indexes) and, for torch-ecosystem projects, on PyTorch's index of
every CUDA variant the driver can run (``rules/data/ecosystem.json``).  Newest first, each is judged by
the same engine as ``check`` (:func:`cudafit.analysis.analyze`) from its own device code, read over
HTTP ranges (:mod:`cudafit.targets.remote`): members smallest first, and a candidate stops costing
bytes once it fails on one GPU (a general module without code decides it, even inside a member).  The
answer is the newest candidate that runs natively on every GPU; newer ones that run only by JIT are
named; when none runs, the way out (a source build with the arch list and CUDA that can target the
GPUs, a GPU-free variant) is said.  What was read is kept by the file's sha256
(:mod:`cudafit.targets.shacache`).

The package: :mod:`.results` (the answer as values), :mod:`.candidates` (what is listed and what a
candidate's metadata pins), :mod:`.judge` (one candidate from its device code, with the early stops),
:mod:`.search` (``find`` itself), :mod:`.way_out` (install lines, uv's pick, the way out) and
:mod:`.deps` (what pip would install beside a requirement, judged with the same judge).
"""

from __future__ import annotations

from cudafit.find.candidates import iter_candidates
from cudafit.find.judge import judge_wheel
from cudafit.find.results import CandidateResult, FindResult, IndexStatus
from cudafit.find.search import find
from cudafit.find.way_out import install_lines

__all__ = [
    "CandidateResult",
    "FindResult",
    "IndexStatus",
    "find",
    "install_lines",
    "iter_candidates",
    "judge_wheel",
]
