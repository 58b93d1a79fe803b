"""``cudafit audit``: does a built artifact meet an arch-coverage policy? (auditwheel's shape, for CUDA).

* :mod:`~cudafit.audit.spec` reads ``--require`` in torch's, CMake's and nvcc's syntax, or GPU names;
* :mod:`~cudafit.audit.torch` reads the arch list of a torch build (``--match-torch``);
* :mod:`~cudafit.audit.policy` reads ``[tool.cudafit.audit]`` from ``pyproject.toml``;
* :mod:`~cudafit.audit.core` judges every module of every member with the verdict engine.

Rendering (text, ``cudafit.audit/1`` JSON, SARIF, JUnit) is in :mod:`cudafit.report.audit`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from cudafit.audit.core import AuditResult, Policy, TargetResult, audit_items
from cudafit.audit.spec import Requirement, SpecError, merge_requirements, parse_require

if TYPE_CHECKING:
    from cudafit.audit.torch import TorchBuild
    from cudafit.targets.interface import ScanItem, Target

__all__ = [
    "AuditResult",
    "Policy",
    "Requirement",
    "SpecError",
    "TargetResult",
    "iter_targets",
    "make_policy",
    "run_audit",
]


def make_policy(
    specs: Sequence[str],
    *,
    allow_specialised: bool = False,
    allow_jit: bool = False,
    torch: TorchBuild | None = None,
    config: str | None = None,
) -> Policy:
    """The requirements of every spec, plus the torch build's (``--match-torch``), merged."""
    groups: list[list[Requirement]] = [parse_require(s) for s in specs]
    if torch is not None:
        groups.append(torch.requirements())
    requirements = merge_requirements(groups)
    if not requirements:
        msg = "nothing to require: give --require SPEC or --match-torch (or set them in [tool.cudafit.audit])"
        raise SpecError(msg)
    return Policy(requirements, tuple(specs), allow_specialised, allow_jit, torch, config)


def iter_targets(specs: Sequence[str], pip_args: Sequence[str] = ()) -> Iterator[tuple[str, Target]]:
    """(spec, Target) for each command-line target; a directory gives each ``*.whl`` in it, then its loose binaries."""
    from cudafit.targets import open_target
    from cudafit.targets.files import DirectoryTarget, iter_candidate_files, iter_wheel_files
    from cudafit.targets.wheel import WheelTarget

    for spec in specs:
        if os.path.isdir(spec):
            wheels = list(iter_wheel_files(spec))
            for w in wheels:
                yield w, WheelTarget(w)
            if not wheels or next(iter_candidate_files(spec), None) is not None:
                yield spec, DirectoryTarget(spec, wheels=False)  # its wheels are targets of their own
            continue
        yield spec, open_target(spec, pip_args=pip_args)


def run_audit(specs: Sequence[str], policy: Policy, *, pip_args: Sequence[str] = ()) -> AuditResult:
    """Audit every target against ``policy``."""
    from cudafit.progress import progress

    results: list[TargetResult] = []
    targets = list(iter_targets(specs, pip_args))  # opening is cheap: nothing is read or downloaded yet
    with progress("audit") as bar:
        for n, (spec, target) in enumerate(targets, 1):
            where = f"{n:,} of {len(targets):,} targets ({os.path.basename(spec.rstrip(os.sep)) or spec})"
            bar.update(where, force=True)

            def counted(items: Iterable[ScanItem], where: str = where) -> Iterator[ScanItem]:
                for m, item in enumerate(items, 1):
                    bar.update(f"{where}, {m:,} files")
                    yield item

            results.append(audit_items(spec, counted(target.iter_items()), policy))
    return AuditResult(policy, tuple(results))
