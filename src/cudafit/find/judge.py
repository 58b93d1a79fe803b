"""One candidate judged from its own device code, read over HTTP ranges, with the early stops of ``find``.

Members are read smallest first (:mod:`cudafit.targets.remote`) and judged by the same engine as
``check`` (:func:`cudafit.analysis.analyze`); a candidate stops costing bytes once it is not native on
some GPU (a general module without code decides it, even inside a member).  The early stops only rank
candidates: a verdict shown as a fact about a package (a dependency row) is judged ``whole``.  What was
read is kept by the file's sha256 (:mod:`cudafit.targets.shacache`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace

from cudafit.binary.facts import EntryKind, Module
from cudafit.errors import TargetError
from cudafit.find.candidates import cuda_pins
from cudafit.find.results import CandidateResult, GpuVerdict, Reason
from cudafit.model import DriverVersion, Gpu
from cudafit.rules.ecosystem import CudaVariant
from cudafit.rules.status import Status
from cudafit.targets.index import IndexClient, IndexFile
from cudafit.targets.remote import FetchStats, MemberRead, RemoteWheel
from cudafit.targets.shacache import ShaCache

__all__ = ["CandidateJudge", "Progress", "judge_wheel"]

#: An in-member stop is considered after this many fatbins, then after every doubling.
_FIRST_LOOK = 16

Progress = Callable[[str], None]
#: A member as the central directory lists it: (name, size, compressed size, CRC-32).
_Member = tuple[str, int, int, int]
#: A member read and, when reading stopped early, why.
_Read = tuple[MemberRead, str | None]


def _has_code_for(module: Module, gpu: Gpu, driver: DriverVersion | None, *, native: bool = False) -> bool:
    """Whether the module has code the GPU runs (``native``: SASS, not PTX to JIT-compile)."""
    from cudafit.rules.engine import iter_compatible_code

    return any(not native or c.how != "ptx-jit" for c in iter_compatible_code(module, gpu, driver=driver))


def general_without_code(modules: Sequence[Module], gpus: Sequence[Gpu], driver: DriverVersion | None) -> str | None:
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


def _renamed(text: str, renames: dict[str, str]) -> str:
    """``text`` with every scratch path replaced by the member's display name."""
    for local, display in renames.items():
        text = text.replace(local, display)
    return text


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


class _LazyWheel:
    """The candidate's wheel, opened (its central directory read) only when a byte of it is needed."""

    def __init__(self, file: IndexFile, client: IndexClient, scratch: str, stats: FetchStats, say: Progress) -> None:
        self.file, self.client, self.scratch, self.stats, self.say = file, client, scratch, stats, say
        self._wheel: RemoteWheel | None = None

    def __call__(self) -> RemoteWheel:
        if self._wheel is None:
            self.say(f"{self.file.filename}: reading the central directory")
            self._wheel = RemoteWheel(
                self.file.url,
                self.client.session,
                sha256=self.file.sha256,
                timeout=self.client.timeout,
                scratch_dir=self.scratch,
                stats=self.stats,
            ).open()
        return self._wheel

    def close(self) -> None:
        if self._wheel is not None:
            self._wheel.close()


class CandidateJudge:
    """Judges candidates: metadata, member reads (cached by sha256), verdicts through ``analyze``."""

    def __init__(
        self,
        gpus: Sequence[Gpu],
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
    ) -> tuple[str, list[GpuVerdict]]:
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
            return Status.NONE.value, []
        pkg = analysis.packages[0]
        verdicts: list[GpuVerdict] = []
        for i, v in enumerate(pkg.verdicts):
            reasons = [Reason(code=r.code, message=_renamed(r.message, renames)) for r in v.reasons][:4]
            verdicts.append(GpuVerdict(gpu=i, status=v.status.value, reasons=reasons))
        return Status(pkg.status).value, verdicts  # a plain string whether analysis says str or Status

    def judge(self, file: IndexFile, variant: CudaVariant | None) -> CandidateResult:
        """One candidate: never raises for a bad wheel or the network (the result carries the error).

        A verdict is kept by the file's sha256 and the GPUs and driver it was given for: the same question
        again loads one small file, not the facts behind it.
        """
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

    def _metadata(self, file: IndexFile, wheel: _LazyWheel) -> bytes | None:
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
        # A variant whose CUDA cannot target a GPU, or whose runtime the driver cannot run: decided by
        # NVIDIA's tables before any byte is read.
        untargetable = self._untargetable(file, variant)
        if untargetable is not None:
            return untargetable
        wheel = _LazyWheel(file, self.client, self.scratch, stats, self._say)
        try:
            pins, runtime = cuda_pins(self._metadata(file, wheel))
            vname = variant.name if variant else None
            label = vname or (f"cu{runtime.replace('.', '')}" if runtime else None)
            too_old = self._driver_too_old(file, label, runtime, pins)
            if too_old is not None:
                return too_old
            keep_in = tempfile.mkdtemp(dir=self.scratch, prefix="members-")
            try:
                reads = self._read_members(file, wheel, stats, keep_in)
                status, verdicts = self._analyze(file.project, file.version, [r for r, _ in reads], file.sha256)
            finally:
                shutil.rmtree(keep_in, ignore_errors=True)  # the copies live as long as the candidate's verdict
            reads = [(replace(r, local=None), why) for r, why in reads]
        finally:
            wheel.close()
            self.cache.save()
        status, decided = _stopped_early(status, reads)
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

    def _untargetable(self, file: IndexFile, variant: CudaVariant | None) -> CandidateResult | None:
        """The rejection of a variant whose CUDA cannot target one of the GPUs, or ``None``."""
        if variant is None:
            return None
        for gpu in self.gpus:
            if not variant.can_target(gpu.compute_capability):
                return self._rejected(
                    file,
                    variant.name,
                    None,
                    "cuda-cannot-target",
                    f"CUDA {variant.cuda} cannot target {gpu.compute_capability} (its lowest is "
                    f"{variant.lowest_arch}): no {variant.name} build has code for it",
                )
        return None

    def _driver_too_old(
        self, file: IndexFile, label: str | None, runtime: str | None, pins: tuple[str, ...]
    ) -> CandidateResult | None:
        """The rejection of a wheel pinning a CUDA runtime whose major the driver cannot run, or ``None``."""
        from cudafit.rules import tables

        if not runtime or self.driver is None:
            return None
        major = int(runtime.split(".")[0])
        floor = tables.runtime_min_driver_branch(major)
        if floor is None or self.driver.major >= floor:
            return None
        return self._rejected(
            file,
            label,
            runtime,
            "driver-too-old-for-runtime",
            f"pins the CUDA {runtime} runtime: CUDA {major}.x needs driver >= {floor}, this is "
            f"{self.driver} (error 35)",
            pins=pins,
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
            GpuVerdict(gpu=i, status=Status.FAILS.value, reasons=[Reason(code=code, message=message)])
            for i in range(len(self.gpus))
        )
        return CandidateResult(file, variant, runtime, "fails", verdicts, decided_by=message, cuda_pins=pins)

    def _member_list(self, file: IndexFile, wheel: _LazyWheel) -> list[_Member]:
        known = self.cache.device_members(file.sha256)
        if known is not None and self.cache.python_modules(file.sha256) is not None:
            return known
        from cudafit.targets.runtime import python_modules

        members = [(i.filename, i.file_size, i.compress_size, i.CRC) for i in wheel().device_members()]
        self.cache.put_device_members(file.sha256, members)
        self.cache.put_python_modules(file.sha256, python_modules(wheel().zip.namelist()))
        return members

    def _read_members(self, file: IndexFile, wheel: _LazyWheel, stats: FetchStats, keep_in: str) -> list[_Read]:
        reads: list[_Read] = []
        members = self._member_list(file, wheel)
        for pos, member in enumerate(members):
            read, why = self._read_member(file, wheel, stats, keep_in, member)
            facts = read.facts
            if not facts.modules and not facts.error and not facts.embedded_sections:
                continue  # a host library without device code: nothing to judge
            name = member[0]
            reads.append((read, f"{name}: {why}" if why else None))
            if read.facts.modules and not self.whole and self._not_native_somewhere(file, reads):
                left = len(members) - pos - 1
                if not reads[-1][1] and left:
                    reads[-1] = (read, f"{name}: not native on a GPU; {left} more member(s) not read")
                break
        return reads

    def _read_member(
        self, file: IndexFile, wheel: _LazyWheel, stats: FetchStats, keep_in: str, member: _Member
    ) -> tuple[MemberRead, str | None]:
        """One member, from the sha256 cache when it was read before far enough for these GPUs, and why
        reading it stopped early (``None``: read to its end, or nothing decided)."""
        name, size, csize, crc = member
        why: list[str] = []

        def stop(modules: Sequence[Module]) -> bool:
            if self.whole:
                return False
            found = general_without_code(modules, self.gpus, self.driver)
            if found:
                why.append(found)
            return found is not None

        read = self.cache.member(file.sha256, name, crc, size)
        if read is not None and not read.complete and not stop(read.facts.modules):
            read = None  # a partial read that decided other GPUs, not these
        if read is not None:
            read = replace(read, cached=True, bytes_fetched=0)
            if not read.complete:
                why.append(general_without_code(read.facts.modules, self.gpus, self.driver) or "")
        else:
            w = wheel()
            info = w.zip.getinfo(name)
            self._say(f"{file.filename}: {name} ({_mb(csize)} compressed), {_mb(stats.bytes_fetched)} read")
            base = os.path.basename(file.filename)
            read = w.read_member(info, f"{base}!{name}", stop=stop, keep_in=keep_in)
            self.cache.put_member(file.sha256, replace(read, local=None))
        return read, (why[0] or None) if why else None

    def _not_native_somewhere(self, file: IndexFile, reads: Sequence[_Read]) -> bool:
        """Whether the members read already keep the candidate from running natively on some GPU.

        A package is as bad as its worst file on each GPU, so a ``jit``, ``partial`` or ``fails`` from the
        members read stands whatever the rest holds (the rest can only make it worse): the candidate is
        not the answer and the rest is not read.  Its status is then the verdict on the part read.
        """
        if not all(r.complete for r, _ in reads[:-1]):
            return True  # an earlier member already stopped early on a general module without code
        _status, verdicts = self._analyze(file.project, file.version, [r for r, _ in reads], file.sha256)
        return any(v["status"] in (Status.JIT, Status.PARTIAL, Status.FAILS) for v in verdicts)


def _stopped_early(status: str, reads: Sequence[_Read]) -> tuple[str, str | None]:
    """(status, why reading stopped): never a "runs" from part of the code."""
    decided = next((why for _, why in reads if why), None)
    if all(r.complete for r, _ in reads):
        return status, decided
    if status == Status.NATIVE:
        # Reading stopped on a failure the engine does not confirm: no verdict from part of the code.
        return "unknown", f"{decided}; the engine did not confirm it on the part read, so no verdict"
    return status, f"{decided} (verdict on the part read)"


def judge_wheel(
    file: IndexFile,
    gpus: Sequence[Gpu],
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
        judge = CandidateJudge(
            gpus,
            driver,
            client or IndexClient(use_cache=use_cache),
            ShaCache(enabled=use_cache),
            None,
            scratch,
            whole=True,
        )
        return judge.judge(file, variant)
