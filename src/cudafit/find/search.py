"""``find`` itself: ask the indexes, rank the candidates newest first, judge them until one runs natively
on every GPU, and say what else is known (JIT-only newer releases, uv's pick, the way out)."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cudafit.find.candidates import NO_KERNELS, iter_candidates, parse_requirement, version_key
from cudafit.find.judge import CandidateJudge, Progress
from cudafit.find.results import CandidateResult, FindResult, IndexStatus
from cudafit.find.way_out import uv_auto, way_out
from cudafit.model import DriverVersion, Gpu
from cudafit.rules.ecosystem import CudaVariant, load_ecosystem, normalize_project
from cudafit.rules.status import Status
from cudafit.targets.index import IndexClient, IndexFile
from cudafit.targets.remote import RemoteError
from cudafit.targets.shacache import ShaCache

if TYPE_CHECKING:
    from packaging.requirements import Requirement

__all__ = ["find"]

#: Where candidates are listed: an index URL and the CUDA variant it serves (``None``: not a PyTorch index).
_Source = tuple[str, CudaVariant | None]
_Candidate = tuple[IndexFile, CudaVariant | None]


@dataclass(frozen=True)
class _Listing:
    """The indexes asked and the candidates they list, in the order they are judged."""

    statuses: tuple[IndexStatus, ...]
    queue: tuple[_Candidate, ...]
    size: int


def _sources(project: str, index_urls: Sequence[str], driver: DriverVersion | None) -> tuple[list[_Source], list[str]]:
    """The indexes to ask (the given ones; else PyPI and, for torch-ecosystem projects, every CUDA variant's
    index whose runtime the driver runs) and a note for each variant left out."""
    eco = load_ecosystem()
    sources: list[_Source] = [(u, eco.variant_for_index(u)) for u in index_urls]
    notes: list[str] = []
    if index_urls:
        return sources, notes
    sources.append((eco.pypi_index, None))
    if eco.is_torch_ecosystem(project):
        for v in eco.cuda_variants:
            if v.driver_ok(driver):
                sources.append((v.index_url, v))
            else:
                notes.append(f"{v.name} not asked: its CUDA {v.cuda} runtime needs driver >= {v.driver_floor}")
    return sources, notes


def _list(
    client: IndexClient,
    sources: Sequence[_Source],
    req: Requirement,
    tags: Sequence[str],
    pyver: str,
    pre: bool,
) -> _Listing:
    """Every index's candidates, newest release first and in index order within a release."""
    project = normalize_project(req.name)
    statuses: list[IndexStatus] = []
    queue: list[_Candidate] = []
    size = 0
    for url, variant in sources:
        try:
            page = client.project_page(url, project)
        except RemoteError as err:
            statuses.append(IndexStatus(url, variant.name if variant else None, error=err.message))
            continue
        found = list(iter_candidates(page.files, tags, requirement=req, python_version=pyver, pre=pre))
        statuses.append(IndexStatus(url, variant.name if variant else None, len(found), note=page.note))
        size += sum(f.size or 0 for f in found)
        queue.extend((f, variant) for f in found)
    if statuses and all(s.error for s in statuses):
        raise RemoteError("; ".join(s.error or "" for s in statuses))
    order = {url: i for i, (url, _v) in enumerate(sources)}
    queue.sort(key=lambda fv: order.get(fv[0].index_url, 99))
    queue.sort(key=lambda fv: version_key(fv[0].version), reverse=True)  # stable: index order within a version
    return _Listing(tuple(statuses), tuple(queue), size)


def find(
    requirement: str,
    gpus: Sequence[Gpu],
    *,
    driver: DriverVersion | None = None,
    python_version: str | None = None,
    platforms: Sequence[str] = (),
    index_urls: Sequence[str] = (),
    pre: bool = False,
    with_deps: bool = False,
    client: IndexClient | None = None,
    use_cache: bool = True,
    progress: Progress | None = None,
    max_candidates: int | None = None,
) -> FindResult:
    """Judge the candidates of ``requirement`` newest first until one runs natively on all ``gpus``."""
    from cudafit.targets.index import python_tags

    eco = load_ecosystem()
    req = parse_requirement(requirement)
    project = normalize_project(req.name)
    tags = python_tags(python_version, platforms)
    pyver = python_version or f"{sys.version_info.major}.{sys.version_info.minor}"
    client = client or IndexClient(use_cache=use_cache)
    cache = ShaCache(enabled=use_cache)
    sources, notes = _sources(project, index_urls, driver)
    listing = _list(client, sources, req, tags, pyver, pre)
    results: list[CandidateResult] = []
    answer: CandidateResult | None = None
    deps: list[CandidateResult] = []
    with tempfile.TemporaryDirectory(prefix="cudafit-find-") as scratch:
        judge = CandidateJudge(gpus, driver, client, cache, progress, scratch)
        for file, variant in listing.queue[: max_candidates or None]:
            result = judge.judge(file, variant)
            results.append(result)
            if result.status == Status.NATIVE:
                answer = result
                break
        if with_deps and answer is not None:
            deps = _judge_deps(answer, judge, client, tags, pyver)
    return FindResult(
        requirement=requirement,
        project=project,
        gpus=tuple(gpus),
        driver=driver,
        tags=tuple(tags[:1]),
        indexes=listing.statuses,
        candidates=tuple(results),
        answer=answer,
        jit_newer=tuple(r for r in results if r.status == Status.JIT),
        listed=len(listing.queue),
        listed_size=listing.size,
        way_out=way_out(project, gpus, listing.statuses, client, results) if answer is None else (),
        uv_auto=uv_auto(gpus, driver, results) if eco.is_torch_ecosystem(project) else None,
        notes=tuple(notes),
        deps=tuple(deps),
    )


def _pin_file(
    client: IndexClient, indexes: Sequence[str], pin: str, tags: Sequence[str], pyver: str
) -> IndexFile | str:
    """The wheel of a pin (``name==version``) on the first index that has one, or why there is none."""
    name = pin.partition("==")[0]
    req = parse_requirement(pin)
    errors: list[str] = []
    for url in indexes:
        try:
            page = client.project_page(url, name)
        except RemoteError as err:
            errors.append(err.message)
            continue
        files = list(iter_candidates(page.files, tags, requirement=req, python_version=pyver, pre=True))
        if files:
            return files[0]
    return "; ".join(errors) or f"no wheel of {pin} for {tags[0]}"


def _judge_deps(
    answer: CandidateResult, judge: CandidateJudge, client: IndexClient, tags: Sequence[str], pyver: str
) -> list[CandidateResult]:
    """The answer's pinned CUDA dependencies (nvidia-*-cuNN==X), each judged like a candidate."""
    eco = load_ecosystem()
    indexes = list(dict.fromkeys([answer.file.index_url, eco.pypi_index]))  # where the answer came from, then PyPI
    out: list[CandidateResult] = []
    # Each pin's verdict is reported as a fact about it: judged from all of its code (no early stop).
    whole = CandidateJudge(judge.gpus, judge.driver, client, judge.cache, judge.progress, judge.scratch, whole=True)
    for pin in answer.cuda_pins:
        name, _, version = pin.partition("==")
        if name.startswith(NO_KERNELS):
            continue  # no kernels of their own (the runtime's floor is checked from the pin)
        found = _pin_file(client, indexes, pin, tags, pyver)
        out.append(whole.judge(found, None) if isinstance(found, IndexFile) else _dep_error(name, version, found))
    return out


def _dep_error(name: str, version: str, message: str) -> CandidateResult:
    file = IndexFile(name, version, f"{name}=={version}", "", "", None, None, False, None, False, None)
    return CandidateResult(file, None, None, "error", error=message)
