"""``cudafit find``: which release, from which index, runs on these GPUs — answered from the binaries.

Candidates are every non-yanked release (pre-releases on request) with a wheel for the target Python
and platform, on PyPI (or the given indexes) and, for torch-ecosystem projects, on PyTorch's index of
every CUDA variant the driver can run (``rules/data/ecosystem.json``).  Newest first, each is judged by
the same engine as ``check`` (:func:`cudafit.analysis.analyze`) from its own device code, read over
HTTP ranges (:mod:`cudafit.targets.remote`): members smallest first, and a candidate stops costing
bytes once it fails on one GPU (a general module without code decides it, even inside a member).  The
answer is the newest candidate that runs natively on every GPU; newer ones that run only by JIT are
named; when none runs, the way out (a source build with the arch list and CUDA that can target the
GPUs, a GPU-free variant) is said.  What was read is kept by the file's sha256 (:mod:`.shacache`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from cudafit.binary.facts import Module
from cudafit.errors import CudafitError, TargetError
from cudafit.model import CudaVersion, DriverVersion
from cudafit.rules.ecosystem import CudaVariant, load_ecosystem, normalize_project
from cudafit.targets.index import IndexClient, IndexFile
from cudafit.targets.remote import FetchStats, MemberRead, RemoteError, RemoteWheel
from cudafit.targets.shacache import ShaCache

__all__ = ["CandidateResult", "FindResult", "IndexStatus", "find", "iter_candidates", "judge_wheel"]

#: An in-member stop is considered after this many fatbins, then after every doubling.
_FIRST_LOOK = 16
_NATIVE = "native"

Progress = Callable[[str], None]


@dataclass(frozen=True)
class IndexStatus:
    """One index asked: its URL, the CUDA variant it serves, and what went wrong or was noted."""

    url: str
    variant: str | None
    files: int = 0
    error: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class CandidateResult:
    """One candidate wheel and its verdict on every GPU (``verdicts`` in the order of the GPUs)."""

    file: IndexFile
    variant: str | None
    cuda_runtime: str | None
    status: str  # native / jit / partial / fails / none (no device code) / error
    verdicts: tuple[dict[str, Any], ...] = ()
    members: tuple[MemberRead, ...] = ()
    bytes_fetched: int = 0
    full_download: bool = False
    decided_by: str | None = None  # why reading stopped before every device member was read
    error: str | None = None
    cuda_pins: tuple[str, ...] = ()

    @property
    def cached(self) -> bool:
        """Whether every member came from the sha256 cache."""
        return bool(self.members) and all(m.cached for m in self.members) and self.bytes_fetched == 0


@dataclass(frozen=True)
class FindResult:
    """Everything ``find`` renders: the candidates judged, the answer, and the way out."""

    requirement: str
    project: str
    gpus: tuple[Any, ...]
    driver: DriverVersion | None
    tags: tuple[str, ...]
    indexes: tuple[IndexStatus, ...]
    candidates: tuple[CandidateResult, ...]
    answer: CandidateResult | None
    jit_newer: tuple[CandidateResult, ...]
    listed: int
    listed_size: int
    way_out: tuple[str, ...] = ()
    uv_auto: dict[str, Any] | None = None
    notes: tuple[str, ...] = ()
    deps: tuple[CandidateResult, ...] = field(default=())

    @property
    def bytes_fetched(self) -> int:
        """Bytes received for all candidates (index pages not counted)."""
        return sum(c.bytes_fetched for c in (*self.candidates, *self.deps))


def _version_key(version: str) -> Any:
    from packaging.version import InvalidVersion, Version

    try:
        v = Version(version)
    except InvalidVersion:
        return (0, version)
    return (1, Version(v.base_version if v.local else str(v)))


def _requirement(text: str) -> Any:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return Requirement(text)
    except InvalidRequirement as err:
        raise CudafitError(f"not a requirement: {text!r} ({err})") from err


def _cuda_pins(metadata: bytes | None) -> tuple[tuple[str, ...], str | None]:
    """(pinned nvidia-*-cuNN requirements, the CUDA runtime version pinned) from core metadata."""
    if not metadata:
        return (), None
    import email.parser

    headers = email.parser.BytesHeaderParser().parsebytes(metadata[: 1 << 20])
    pins: list[str] = []
    runtime: str | None = None
    for req in headers.get_all("Requires-Dist") or []:
        text = str(req).split(";")[0].strip()
        toolkit = re.match(r"cuda-toolkit\s*\[([^\]]*)\]\s*==\s*([0-9.]+)", text, re.IGNORECASE)
        if toolkit:  # CUDA 13 wheels: one meta-package, cuda-toolkit[cudart,cublas,...]==13.2.2
            pins.append(f"cuda-toolkit[{toolkit.group(1).replace(' ', '')}]=={toolkit.group(2)}")
            if "cudart" in toolkit.group(1):
                runtime = ".".join(toolkit.group(2).split(".")[:2])
            continue
        m = re.match(r"(nvidia-[a-z0-9-]+?)(-cu(\d+))?\s*(\(?\s*==\s*([^\s,)]+))", text, re.IGNORECASE)
        if not m:
            continue
        pins.append(f"{m.group(1).lower()}{m.group(2) or ''}=={m.group(5)}")
        if m.group(1).lower() == "nvidia-cuda-runtime":
            parts = m.group(5).split(".")
            runtime = ".".join(parts[:2]) if len(parts) >= 2 else None
    return tuple(pins), runtime


def _has_code_for(module: Module, gpu: Any, driver: DriverVersion | None, *, native: bool = False) -> bool:
    """Whether the module has code the GPU runs (``native``: SASS, not PTX to JIT-compile)."""
    from cudafit.rules.engine import iter_compatible_code

    return any(not native or c.how != "ptx-jit" for c in iter_compatible_code(module, gpu, driver=driver))


def _general_without_code(modules: Sequence[Module], gpus: Sequence[Any], driver: DriverVersion | None) -> str | None:
    """Why the fatbins seen so far already keep a GPU from running the file natively, or ``None``.

    The stop of the issue: "a general module without code rejects the candidate".  The library's general
    build list is the arch list most of its fatbins carry; when that list, and every fatbin seen, has
    no code a GPU can run, the file is a hole for it whatever follows — the engine's ``hole`` rule when
    nothing in the file has code for the GPU.  When they have PTX for it but no SASS, the file runs there
    by JIT at best: not the native build ``find`` looks for.  Looked at after 16 fatbins, then at every
    doubling.
    """
    n = len(modules)
    if n < _FIRST_LOOK or n & (n - 1):
        return None
    from collections import Counter

    from cudafit.binary.facts import EntryKind

    runnable = (EntryKind.SASS, EntryKind.PTX)  # LTO-IR is linked by the library, never loaded as it is
    with_code = [m for m in modules if not m.relocatable and any(e.kind in runnable for e in m.entries)]
    if len(with_code) < _FIRST_LOOK // 2:
        return None
    signature = Counter(tuple(sorted({e.arch_name for e in m.entries if e.kind in runnable})) for m in with_code)
    general, count = signature.most_common(1)[0]
    # A general build list names several archs; fatbins of one arch each are per-GPU dispatch (cuBLAS,
    # cuFFT's embedded ones), which the engine calls specialised, never a hole: they decide nothing here.
    archs = {int("".join(ch for ch in a.split("_")[-1] if ch.isdigit()) or 0) for a in general}
    if count * 2 < len(with_code) or len(archs) < 2:  # sm_52 + compute_52 is one arch
        return None
    seen = f"{count} of the first {len(with_code)} fatbins carry {', '.join(general)}"
    for gpu in gpus:
        if not any(_has_code_for(m, gpu, driver) for m in with_code):
            return f"{seen} and none has code for {gpu.compute_capability}"
        if not any(_has_code_for(m, gpu, driver, native=True) for m in with_code):
            return f"{seen} and none has SASS for {gpu.compute_capability} (JIT at best)"
    return None


def _renamed(doc: Any, renames: dict[str, str]) -> Any:
    """``doc`` with every scratch path replaced by the member's display name."""
    if not renames:
        return doc
    if isinstance(doc, str):
        for local, display in renames.items():
            doc = doc.replace(local, display)
        return doc
    if isinstance(doc, dict):
        return {k: _renamed(v, renames) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_renamed(v, renames) for v in doc]
    return doc


class _Judge:
    """Judges candidates: metadata, member reads (cached by sha256), verdicts through ``analyze``."""

    def __init__(
        self,
        gpus: Sequence[Any],
        driver: DriverVersion | None,
        client: IndexClient,
        cache: ShaCache,
        progress: Progress | None,
        scratch: str,
        *,
        whole: bool = False,
    ) -> None:
        # whole: read every device-code member to its end and judge the whole wheel.  The early stops pick
        # which candidate is *not* the answer; a verdict shown as a fact about a package (a dependency row)
        # must come from all its code: the first fatbins of a file are not always its general build
        # (nvidia-cusparse-cu12 12.5.8.93 starts with 16 fatbins without 6.1 code and runs natively there).
        self.whole = whole
        self.gpus = list(gpus)
        self.driver = driver
        self.client = client
        self.cache = cache
        self.progress = progress
        self.scratch = scratch

    def _say(self, text: str) -> None:
        if self.progress is not None:
            self.progress(text)

    def _analyze(
        self, project: str, version: str, reads: Sequence[MemberRead], sha256: str | None = None
    ) -> tuple[str, list[dict[str, Any]]]:
        from dataclasses import replace

        from cudafit.analysis import analyze
        from cudafit.targets.interface import ScanItem
        from cudafit.targets.runtime import runtime_compiled_kind

        kind = runtime_compiled_kind(project, [r.name for r in reads])
        # Members copied to disk are judged from there, like installed files (kernel names for module roles,
        # fatbins a library embeds to load itself); their messages name the member again.
        # The wheel's Python modules are code that runs anywhere: the engine's file-level roles need them, as
        # for a wheel judged by ``check`` (targets/wheel.py).
        pys = self.cache.python_modules(sha256) or 0
        items = [
            ScanItem(
                project,
                version,
                r.facts.path,
                replace(r.facts, path=r.local) if r.local else r.facts,
                runtime_compiled=kind,
                python_modules=pys,
            )
            for r in reads
        ]
        renames = {r.local: r.facts.path for r in reads if r.local}
        analysis = analyze(items, self.gpus, driver=self.driver, include_coverage=False)
        if not analysis.packages:
            return "none", []
        pkg = analysis.packages[0]
        verdicts = []
        for i, v in enumerate(pkg.verdicts):
            d = _renamed(v.to_dict(), renames)
            verdicts.append(
                {
                    "gpu": i,
                    "status": d["status"],
                    "reasons": [{"code": r["code"], "message": r["message"]} for r in d["reasons"]][:4],
                }
            )
        return pkg.status.value, verdicts

    def judge(self, file: IndexFile, variant: CudaVariant | None) -> CandidateResult:
        """One candidate: never raises for a bad wheel or the network (the result carries the error).

        A verdict is kept by the file's sha256 and the GPUs and driver it was given for: the same question
        again loads one small file, not the facts behind it.
        """
        from dataclasses import replace

        key = (
            tuple((g.name, str(g.compute_capability)) for g in self.gpus),
            str(self.driver) if self.driver else None,
            variant.name if variant else None,
            "whole" if self.whole else "first-failure",
        )
        known = self.cache.verdict(file.sha256, key)
        if isinstance(known, CandidateResult):
            members = tuple(replace(m, cached=True, bytes_fetched=0) for m in known.members)
            return replace(known, file=file, members=members, bytes_fetched=0, full_download=False)
        stats = FetchStats()
        if self.progress is not None:
            total = f" of {_mb(file.size)}" if file.size else ""
            stats.listener = lambda n: self._say(f"{file.filename}: {_mb(n)}{total} read")
        try:
            result = self._judge(file, variant, stats)
        except TargetError as err:
            return CandidateResult(
                file,
                variant.name if variant else None,
                None,
                "error",
                bytes_fetched=stats.bytes_fetched,
                full_download=stats.full_download,
                error=err.message,
            )
        self.cache.put_verdict(file.sha256, key, replace(result, members=tuple(m.slim() for m in result.members)))
        return result

    def _metadata(self, file: IndexFile, wheel: Callable[[], RemoteWheel]) -> bytes | None:
        data = self.cache.metadata(file.sha256)
        if data is not None:
            return data
        if file.has_metadata:
            data = self.client.metadata(file)
        else:
            data = wheel().read_text(".dist-info/METADATA")
        if data is not None:
            self.cache.put_metadata(file.sha256, data)
        return data

    def _judge(self, file: IndexFile, variant: CudaVariant | None, stats: FetchStats) -> CandidateResult:
        from dataclasses import replace

        from cudafit.rules import tables

        opened: list[RemoteWheel] = []

        def wheel() -> RemoteWheel:
            if not opened:
                self._say(f"{file.filename}: reading the central directory")
                opened.append(
                    RemoteWheel(
                        file.url,
                        self.client.session,
                        sha256=file.sha256,
                        timeout=self.client.timeout,
                        scratch_dir=self.scratch,
                        stats=stats,
                    ).open()
                )
            return opened[0]

        vname = variant.name if variant else None
        try:
            # A variant whose CUDA cannot target a GPU, or whose runtime the driver cannot run: decided by
            # NVIDIA's tables before any byte is read.
            if variant is not None:
                for gpu in self.gpus:
                    if not variant.can_target(gpu.compute_capability):
                        return self._rejected(
                            file,
                            vname,
                            None,
                            "cuda-cannot-target",
                            f"CUDA {variant.cuda} cannot target {gpu.compute_capability} (its lowest is "
                            f"{variant.lowest_arch}): no {variant.name} build has code for it",
                        )
            metadata = self._metadata(file, wheel)
            pins, runtime = _cuda_pins(metadata)
            label = vname or (f"cu{runtime.replace('.', '')}" if runtime else None)
            if runtime and self.driver is not None:
                major = int(runtime.split(".")[0])
                floor = tables.runtime_min_driver_branch(major)
                if floor is not None and self.driver.major < floor:
                    return self._rejected(
                        file,
                        label,
                        runtime,
                        "driver-too-old-for-runtime",
                        f"pins the CUDA {runtime} runtime: CUDA {major}.x needs driver >= {floor}, this is "
                        f"{self.driver} (error 35)",
                        pins=pins,
                    )
            keep_in = tempfile.mkdtemp(dir=self.scratch, prefix="members-")
            try:
                reads = self._read_members(file, wheel, stats, keep_in)
                status, verdicts = self._analyze(file.project, file.version, [r for r, _ in reads], file.sha256)
            finally:
                shutil.rmtree(keep_in, ignore_errors=True)  # the copies live as long as the candidate's verdict
            reads = [(replace(r, local=None), why) for r, why in reads]
        finally:
            for w in opened:
                w.close()
            self.cache.save()
        decided = next((why for _, why in reads if why), None)
        if not all(r.complete for r, _ in reads):
            if status == _NATIVE:
                # Reading stopped on a failure the engine does not confirm: never a "runs" from part of the code.
                status = "unknown"
                decided = f"{decided}; the engine did not confirm it on the part read, so no verdict"
            else:
                decided = f"{decided} (verdict on the part read)"
        return CandidateResult(
            file,
            label,
            runtime,
            status,
            tuple(verdicts),
            tuple(r for r, _ in reads),
            stats.bytes_fetched,
            stats.full_download,
            decided,
            None,
            pins,
        )

    def _rejected(
        self,
        file: IndexFile,
        variant: str | None,
        runtime: str | None,
        code: str,
        message: str,
        pins: tuple[str, ...] = (),
    ) -> CandidateResult:
        verdicts = tuple(
            {"gpu": i, "status": "fails", "reasons": [{"code": code, "message": message}]}
            for i in range(len(self.gpus))
        )
        return CandidateResult(file, variant, runtime, "fails", verdicts, decided_by=message, cuda_pins=pins)

    def _member_list(self, file: IndexFile, wheel: Callable[[], RemoteWheel]) -> list[tuple[str, int, int, int]]:
        known = self.cache.device_members(file.sha256)
        if known is not None and self.cache.python_modules(file.sha256) is not None:
            return known
        from cudafit.targets.runtime import python_modules

        members = [(i.filename, i.file_size, i.compress_size, i.CRC) for i in wheel().device_members()]
        self.cache.put_device_members(file.sha256, members)
        self.cache.put_python_modules(file.sha256, python_modules(wheel().zip.namelist()))
        return members

    def _read_members(
        self, file: IndexFile, wheel: Callable[[], RemoteWheel], stats: FetchStats, keep_in: str
    ) -> list[tuple[MemberRead, str | None]]:
        from dataclasses import replace

        reads: list[tuple[MemberRead, str | None]] = []
        base = os.path.basename(file.filename)
        members = self._member_list(file, wheel)
        for pos, (name, size, csize, crc) in enumerate(members):
            why: list[str] = []

            def stop(modules: Sequence[Module], why: list[str] = why) -> bool:
                if self.whole:
                    return False
                found = _general_without_code(modules, self.gpus, self.driver)
                if found:
                    why.append(found)
                return found is not None

            read = self.cache.member(file.sha256, name, crc, size)
            if read is not None and not read.complete and not stop(read.facts.modules):
                read = None  # a partial read that decided other GPUs, not these
            if read is not None:
                read = replace(read, cached=True, bytes_fetched=0)
                if not read.complete:
                    why.append(_general_without_code(read.facts.modules, self.gpus, self.driver) or "")
            else:
                w = wheel()
                info = w.zip.getinfo(name)
                self._say(f"{file.filename}: {name} ({_mb(csize)} compressed), {_mb(stats.bytes_fetched)} read")
                read = w.read_member(info, f"{base}!{name}", stop=stop, keep_in=keep_in)
                self.cache.put_member(file.sha256, replace(read, local=None))
            facts = read.facts
            if not facts.modules and not facts.error and not facts.embedded_sections:
                continue  # a host library without device code: nothing to judge
            reads.append((read, f"{name}: {why[0]}" if why and why[0] else None))
            if read.facts.modules and not self.whole and self._not_native_somewhere(file, reads):
                left = len(members) - pos - 1
                if not reads[-1][1] and left:
                    reads[-1] = (read, f"{name}: not native on a GPU; {left} more member(s) not read")
                break
        return reads

    def _not_native_somewhere(self, file: IndexFile, reads: Sequence[tuple[MemberRead, str | None]]) -> bool:
        """Whether the members read already keep the candidate from running natively on some GPU.

        A package is as bad as its worst file on each GPU, so a ``jit``, ``partial`` or ``fails`` from the
        members read stands whatever the rest holds (the rest can only make it worse): the candidate is
        not the answer and the rest is not read.  Its status is then the verdict on the part read.
        """
        if not all(r.complete for r, _ in reads[:-1]):
            return True  # an earlier member already stopped early on a general module without code
        _status, verdicts = self._analyze(file.project, file.version, [r for r, _ in reads], file.sha256)
        return any(v["status"] in ("jit", "partial", "fails") for v in verdicts)


def judge_wheel(
    file: IndexFile,
    gpus: Sequence[Any],
    *,
    driver: DriverVersion | None = None,
    variant: CudaVariant | None = None,
    client: IndexClient | None = None,
    use_cache: bool = True,
) -> CandidateResult:
    """One wheel on an index judged on these GPUs by range reads, as ``find`` judges a candidate.

    For callers that already know which file they need (a pinned dependency of a requirement): the same
    reads, stops, sha256 cache and engine as ``find``; never raises for a bad wheel or the network.
    """
    with tempfile.TemporaryDirectory(prefix="cudafit-find-") as scratch:
        judge = _Judge(
            gpus,
            driver,
            client or IndexClient(use_cache=use_cache),
            ShaCache(enabled=use_cache),
            None,
            scratch,
            whole=True,
        )
        return judge.judge(file, variant)


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def _is_pre(version: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version).is_prerelease
    except InvalidVersion:
        return False


def iter_candidates(
    files: Sequence[IndexFile],
    tags: Sequence[str],
    *,
    requirement: Any,
    python_version: str,
    pre: bool,
) -> Iterator[IndexFile]:
    """The best wheel per release for these tags: non-yanked, matching the requirement, newest first."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    rank = {t: i for i, t in enumerate(tags)}
    best: dict[str, tuple[int, IndexFile]] = {}
    for f in files:
        if not f.is_wheel or f.yanked or (not pre and _is_pre(f.version)):
            continue
        if requirement.specifier and not requirement.specifier.contains(f.version, prereleases=True):
            continue
        if f.requires_python:
            try:
                if not SpecifierSet(f.requires_python).contains(python_version, prereleases=True):
                    continue
            except InvalidSpecifier:
                pass
        score = min((rank[t] for t in f.tags() if t in rank), default=None)
        if score is None:
            continue
        old = best.get(f.version)
        if old is None or score < old[0]:
            best[f.version] = (score, f)
    for _version, (_score, f) in sorted(best.items(), key=lambda kv: _version_key(kv[0]), reverse=True):
        yield f


def find(
    requirement: str,
    gpus: Sequence[Any],
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
    import sys
    import tempfile

    from cudafit.targets.index import python_tags

    eco = load_ecosystem()
    req = _requirement(requirement)
    project = normalize_project(req.name)
    tags = python_tags(python_version, platforms)
    pyver = python_version or f"{sys.version_info.major}.{sys.version_info.minor}"
    client = client or IndexClient(use_cache=use_cache)
    cache = ShaCache(enabled=use_cache)
    sources: list[tuple[str, CudaVariant | None]] = [(u, eco.variant_for_index(u)) for u in index_urls]
    notes: list[str] = []
    if not index_urls:
        sources.append((eco.pypi_index, None))
        if eco.is_torch_ecosystem(project):
            for v in eco.cuda_variants:
                if v.driver_ok(driver):
                    sources.append((v.index_url, v))
                else:
                    notes.append(f"{v.name} not asked: its CUDA {v.cuda} runtime needs driver >= {v.driver_floor}")
    statuses: list[IndexStatus] = []
    queue: list[tuple[IndexFile, CudaVariant | None]] = []
    listed_size = 0
    for url, variant in sources:
        try:
            page = client.project_page(url, project)
        except RemoteError as err:
            statuses.append(IndexStatus(url, variant.name if variant else None, error=err.message))
            continue
        found = list(iter_candidates(page.files, tags, requirement=req, python_version=pyver, pre=pre))
        statuses.append(IndexStatus(url, variant.name if variant else None, len(found), note=page.note))
        listed_size += sum(f.size or 0 for f in found)
        queue.extend((f, variant) for f in found)
    if statuses and all(s.error for s in statuses):
        raise RemoteError("; ".join(s.error or "" for s in statuses))
    order = {url: i for i, (url, _v) in enumerate(sources)}
    queue.sort(key=lambda fv: order.get(fv[0].index_url, 99))
    queue.sort(key=lambda fv: _version_key(fv[0].version), reverse=True)  # stable: index order within a version
    results: list[CandidateResult] = []
    answer: CandidateResult | None = None
    with tempfile.TemporaryDirectory(prefix="cudafit-find-") as scratch:
        judge = _Judge(gpus, driver, client, cache, progress, scratch)
        for file, variant in queue[: max_candidates or None]:
            result = judge.judge(file, variant)
            results.append(result)
            if result.status == _NATIVE:
                answer = result
                break
        deps: list[CandidateResult] = []
        if with_deps and answer is not None:
            deps = _judge_deps(answer, judge, client, tags, pyver)
    jit_newer = tuple(r for r in results if r.status == "jit")
    way_out: tuple[str, ...] = ()
    if answer is None:
        way_out = _way_out(project, gpus, statuses, client, results)
    return FindResult(
        requirement=requirement,
        project=project,
        gpus=tuple(gpus),
        driver=driver,
        tags=tuple(tags[:1]),
        indexes=tuple(statuses),
        candidates=tuple(results),
        answer=answer,
        jit_newer=jit_newer,
        listed=len(queue),
        listed_size=listed_size,
        way_out=way_out,
        uv_auto=_uv_auto(project, gpus, driver, results) if eco.is_torch_ecosystem(project) else None,
        notes=tuple(notes),
        deps=tuple(deps),
    )


def _judge_deps(
    answer: CandidateResult, judge: _Judge, client: IndexClient, tags: Sequence[str], pyver: str
) -> list[CandidateResult]:
    """The answer's pinned CUDA dependencies (nvidia-*-cuNN==X), each judged like a candidate."""
    eco = load_ecosystem()
    indexes = list(dict.fromkeys([answer.file.index_url, eco.pypi_index]))  # where the answer came from, then PyPI
    out: list[CandidateResult] = []
    # Each pin's verdict is reported as a fact about it: judged from all of its code (no early stop).
    whole = _Judge(judge.gpus, judge.driver, client, judge.cache, judge.progress, judge.scratch, whole=True)
    for pin in answer.cuda_pins:
        name, _, version = pin.partition("==")
        if name.startswith(("nvidia-cuda-runtime", "nvidia-cuda-nvrtc", "cuda-toolkit")):
            continue  # no kernels of their own (the runtime's floor is checked from the pin)
        req = _requirement(pin)
        files: list[IndexFile] = []
        errors: list[str] = []
        for url in indexes:
            try:
                page = client.project_page(url, name)
            except RemoteError as err:
                errors.append(err.message)
                continue
            files = list(iter_candidates(page.files, tags, requirement=req, python_version=pyver, pre=True))
            if files:
                break
        if not files:
            out.append(_dep_error(name, version, "; ".join(errors) or f"no wheel of {pin} for {tags[0]}"))
            continue
        out.append(whole.judge(files[0], None))
    return out


def _dep_error(name: str, version: str, message: str) -> CandidateResult:
    file = IndexFile(name, version, f"{name}=={version}", "", "", None, None, False, None, False, None)
    return CandidateResult(file, None, None, "error", error=message)


def _way_out(
    project: str,
    gpus: Sequence[Any],
    statuses: Sequence[IndexStatus],
    client: IndexClient,
    results: Sequence[CandidateResult],
) -> tuple[str, ...]:
    """When no published build runs: a source build that can target the GPUs, and a GPU-free variant."""
    eco = load_ecosystem()
    lines: list[str] = []
    ccs = sorted({g.compute_capability for g in gpus})
    if not ccs:
        return ()
    cuda = _newest_cuda_for(ccs)
    build = eco.source_builds.get(project)
    has_sdist = False
    for s in statuses:
        if s.error:
            continue
        with contextlib.suppress(RemoteError):
            page = client.project_page(s.url, project)
            has_sdist = has_sdist or any(f.filename.endswith((".tar.gz", ".zip")) for f in page.files)
    arch_list = ";".join(str(c) for c in ccs)
    newest = results[0].file.version if results else None
    if cuda is not None and build is not None:
        where = "from its source distribution" if has_sdist else f"from {build.repository}"
        var = f'{build.arch_variable}="{arch_list}"'
        cmd = f"{var} pip install --no-binary {project} --no-build-isolation '{project}=={newest}'"
        lines.append(
            f"build {project} {where} with CUDA {cuda.major}.x (it can target {arch_list}): "
            + (cmd if has_sdist and newest else var)
        )
    elif cuda is not None and has_sdist:
        gpu_flags = " ".join(f"--gpu {c}" for c in ccs)
        lines.append(
            f"build {project} from its source distribution with CUDA {cuda.major}.x for {arch_list} "
            f"(its build's arch flags: cudafit plan --cuda {cuda.major}.{cuda.minor} {gpu_flags})"
        )
    elif cuda is None:
        lines.append(f"no CUDA toolkit in the table can target {arch_list}")
    free = eco.gpu_free.get(project)
    if free:
        lines.append(f"or the GPU-free build: pip install {free}")
    return tuple(lines)


def _newest_cuda_for(ccs: Sequence[Any]) -> CudaVersion | None:
    from cudafit.rules import tables

    best: CudaVersion | None = None
    for cuda in tables.load_tables().targets:
        numbers = {t.number for t in tables.toolkit_targets(cuda)}
        if all(c.major * 10 + c.minor in numbers for c in ccs) and (best is None or cuda > best):
            best = cuda
    return best


def _uv_auto(
    project: str, gpus: Sequence[Any], driver: DriverVersion | None, results: Sequence[CandidateResult]
) -> dict[str, Any]:
    """What uv's ``--torch-backend=auto`` would pick for this driver, and whether it can run here."""
    eco = load_ecosystem()
    if driver is None:
        return {"variant": None, "index_url": None, "runs": None, "why": "no driver known: uv's auto falls back to CPU"}
    pick = eco.uv_auto_pick(driver)
    if pick is None:
        return {"variant": "cpu", "index_url": None, "runs": None, "why": f"driver {driver} is below every variant"}
    bad = [g for g in gpus if not pick.can_target(g.compute_capability)]
    if bad:
        names = ", ".join(f"{g.name} ({g.compute_capability})" for g in bad)
        why = f"CUDA {pick.cuda} cannot target {names} (its lowest arch is {pick.lowest_arch})"
        return {"variant": pick.name, "index_url": pick.index_url, "runs": False, "why": why}
    judged = [r for r in results if r.variant == pick.name and r.status != "error"]
    if judged:
        r = judged[0]
        return {
            "variant": pick.name,
            "index_url": pick.index_url,
            "runs": r.status in (_NATIVE, "jit"),
            "why": f"{r.file.filename}: {r.status}",
        }
    same_major = [r for r in results if r.cuda_runtime and r.cuda_runtime.split(".")[0] == str(pick.cuda.major)]
    if same_major:
        r = same_major[0]
        why = (
            f"its index was not read; {r.file.filename} (CUDA {r.cuda_runtime}, same major) is {r.status} here, "
            "the cu-variant build may differ"
        )
        return {"variant": pick.name, "index_url": pick.index_url, "runs": None, "why": why}
    return {
        "variant": pick.name,
        "index_url": pick.index_url,
        "runs": None,
        "why": "no build of that variant was judged",
    }


def install_lines(result: FindResult) -> dict[str, str]:
    """pip and uv command lines that install the answer (``{}`` when there is none)."""
    ans = result.answer
    if ans is None:
        return {}
    eco = load_ecosystem()
    version = ans.file.version
    pin = f"'{result.project}=={version}'"
    variant = eco.variant_for_index(ans.file.index_url)
    on_pypi = ans.file.index_url.rstrip("/") == eco.pypi_index.rstrip("/")
    lines = {"pip": f"pip install {pin}" + ("" if on_pypi else f" --index-url {ans.file.index_url}")}
    if variant is not None:
        lines["uv"] = f"uv pip install {pin} --torch-backend={variant.name}"
        lines["uv_project"] = (
            f'[[tool.uv.index]] name = "pytorch-{variant.name}", url = "{variant.index_url}", explicit = true; '
            f'[tool.uv.sources] {result.project} = {{ index = "pytorch-{variant.name}" }}'
        )
    elif on_pypi:
        lines["uv"] = f"uv pip install {pin}  # without --torch-backend: PyPI's own build"
    else:
        lines["uv"] = f"uv pip install {pin} --index-url {ans.file.index_url}"
    return lines
