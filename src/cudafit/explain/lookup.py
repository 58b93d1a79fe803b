"""Explain on a machine: look up the failing code where the user says (or in this environment), then ground.

The text names packages (``site-packages/fbgemm_gpu/...``) and code (kernels, ops, source files, libraries);
only those packages' files are read, before any other (:func:`scan_named`), to say which archs they carry
(:func:`archs_of`) and which of their modules have no code for the GPUs, with their kernels
(:func:`kernel_gaps`, the holes ``doctor`` reports).  :func:`explain_here` is the whole of ``cudafit
explain`` once the text is read and the machine known: the CLI parses, resolves GPUs, calls it and renders.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from cudafit.explain.classify import Finding, classify
from cudafit.explain.context import Context, KernelGap, normalise_package
from cudafit.explain.ground import ground
from cudafit.model import Gpu
from cudafit.targets.interface import ScanItem

__all__ = ["Lookup", "archs_of", "explain_here", "kernel_gaps", "package_archs", "scan_named"]


@dataclass(frozen=True)
class Lookup:
    """Where to look for the failing code: ``path`` (a file, directory or wheel, all of it), else ``sites``
    (site-packages directories; ``None`` for this environment's)."""

    sites: tuple[str, ...] | None = None
    path: str | None = None


def _owner(path: str) -> str | None:
    """The top-level directory under site-packages a file belongs to (``fbgemm_gpu``), as logs name it."""
    parts = path.replace("\\", "/").split("/")
    return next(
        (
            normalise_package(parts[i + 1])
            for i, seg in enumerate(parts[:-1])
            if seg in ("site-packages", "dist-packages")
        ),
        None,
    )


def scan_named(
    packages: Sequence[str], *, sites: Sequence[str] | None = None, path: str | None = None
) -> list[ScanItem]:
    """One scan of the place to look: ``path`` (all of it), else ``sites`` (default: this environment)
    limited, before any file is read, to the packages the text names (all of them when it names none)."""
    from cudafit.progress import with_progress
    from cudafit.targets.cache import scan_cache

    with scan_cache():
        if path:
            from cudafit.targets import open_target

            return list(with_progress(open_target(path).iter_items(), "explain: scanning"))
        from cudafit.targets.env import EnvironmentTarget

        target = EnvironmentTarget(sites) if sites is not None else EnvironmentTarget.current()
        wanted = {normalise_package(p) for p in packages}
        jobs = [
            j
            for j in target.iter_jobs()
            if not wanted or normalise_package(j.package or "") in wanted or _owner(j.path) in wanted
        ]
        return [item for item in with_progress(job.run() for job in jobs) if item is not None]


def archs_of(items: Sequence[ScanItem]) -> dict[str, tuple[str, ...]]:
    """The SASS/PTX archs of the scanned items, per top-level package directory (files without code left out)."""
    found: dict[str, set[str]] = {}
    for item in items:
        owner = _owner(item.path) or normalise_package(item.package or "")
        archs = {e.arch_name for m in item.facts.runtime_modules for e in m.entries}
        archs = {a for a in archs if a.startswith(("sm_", "compute_"))}
        if owner and archs:
            found.setdefault(owner, set()).update(archs)
    return {k: tuple(sorted(v)) for k, v in found.items()}


def package_archs(packages: Sequence[str], sites: Sequence[str] | None = None) -> dict[str, tuple[str, ...]]:
    """The SASS/PTX archs of the installed packages the text names (only their files are read).

    ``sites``: the site-packages directories (default: the running interpreter's).  Packages
    without any device code are left out: they are not the ones that failed.
    """
    return archs_of(scan_named(packages, sites=sites))


def kernel_gaps(items: Sequence[ScanItem], gpus: Sequence[Gpu]) -> list[KernelGap]:
    """Every module of ``items`` without code for the GPUs, with its kernels (demangled where c++filt is): per
    package and GPU, as ``check --kernels --json`` lists them (:func:`cudafit.actions.modules_without_code`)."""
    from cudafit.actions import modules_without_code
    from cudafit.analysis import analyze
    from cudafit.binary.kernels import demangle
    from cudafit.targets.cache import scan_cache

    with scan_cache():  # kernel names are read through (and remembered in) the scan cache
        analysis = analyze(items, list(gpus), include_coverage=False, kernels=True)
    found = [
        (p.name, gpus[i], gap)
        for p in analysis.packages
        for i, v in enumerate(p.verdicts)
        for gap in modules_without_code(v)
        if gap.kernels
    ]
    names = demangle([k for *_where, gap in found for k in gap.kernels or ()])
    return [
        KernelGap(
            package=package,
            path=gap.path,
            module=gap.module,
            compute_capability=gpu.compute_capability,
            status=gap.status,
            reason=gap.reason,
            archs=(*gap.sass, *gap.ptx),
            kernels=tuple(names.get(k, k) for k in gap.kernels or ()),
        )
        for package, gpu, gap in found
    ]


def _wants_kernel_lookup(finding: Finding) -> bool:
    """A missing kernel image whose text names the failing code: worth joining with the modules without code."""
    ev = finding.evidence
    names = (ev.get("kernels"), ev.get("operators"), ev.get("source_files"), ev.get("libraries"))
    return finding.category == "no-kernel-image" and any(names)


def _looked_up(findings: Sequence[Finding], context: Context, lookup: Lookup) -> Context:
    """``context`` with the archs of the packages the findings name and the modules without code for its GPUs."""
    packages = list(dict.fromkeys(p for f in findings for p in f.evidence.get("packages", [])))
    want_gaps = bool(context.gpus) and any(_wants_kernel_lookup(f) for f in findings)
    if not (packages or want_gaps):
        return context
    try:
        items = scan_named(packages, sites=lookup.sites, path=lookup.path)
    except OSError:
        items = []
    gaps = tuple(kernel_gaps(items, context.gpus)) if want_gaps else ()
    return replace(context, packages=archs_of(items) if packages else {}, kernel_gaps=gaps)


def explain_here(
    text: str, context: Context, lookup: Lookup | None = None, environ: Mapping[str, str] | None = None
) -> list[Finding]:
    """Classify ``text`` and ground it on ``context``; with a ``lookup``, the packages and code the text names
    are looked up there first, and a run-time compiler failure is tied to that environment's compiler
    (:mod:`cudafit.explain.compilers`; ``environ`` is how it is wired, e.g. ``TRITON_PTXAS_PATH``)."""
    findings = classify(text)
    if lookup is None:
        return ground(findings, context)
    from cudafit.explain.compilers import ground_compilers
    from cudafit.targets.env import site_packages_of

    context = _looked_up(findings, context, lookup)
    findings = ground(findings, context)
    sites = list(lookup.sites) if lookup.sites else site_packages_of()
    return ground_compilers(findings, context.gpus, sites, os.environ if environ is None else environ)
