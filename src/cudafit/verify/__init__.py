"""Ground truth from the driver: load every module the scan located on each local GPU, beside the prediction.

cudafit predicts from the bytes whether each module has code for a GPU; the CUDA driver decides.
``verify`` asks it, module by module (``cuModuleLoadDataEx`` in a worker process per GPU: see
:mod:`cudafit.verify.runner`), and sets its answer beside the prediction (:mod:`cudafit.verify.plan`).
This is the only part of cudafit that creates a CUDA context, and it does so only in those workers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # the worker imports cudafit.verify.driver: keep this package's import light
    from cudafit.analysis import Analysis
    from cudafit.targets.interface import ScanItem
    from cudafit.verify.plan import Expectation, ModuleLoad
    from cudafit.verify.runner import Answer, DeviceInfo, Job, Listing
    from cudafit.verify.sources import ByteSources

__all__ = ["Check", "LoadOptions", "ModuleResult", "VerifyResult", "run_verify"]

#: Wraps the stream of answers for a progress display (``cudafit.progress.with_progress``).
Progress = Callable[[Iterable["_Labelled"]], Iterable["_Labelled"]]


@dataclass(frozen=True)
class Check:
    """One module on one GPU: the expectation and the driver's answer (``None`` when not loaded)."""

    expectation: Expectation
    answer: Answer | None

    @property
    def verdict(self) -> Literal["agree", "disagree", "no-answer", "skipped"]:
        """``agree``, ``disagree``, ``no-answer`` (timeout, crash, unreadable...) or ``skipped``."""
        if self.answer is None:
            return "skipped"
        if self.answer.outcome != "answer":
            return "no-answer"
        return "agree" if self.answer.name == self.expectation.expected else "disagree"


@dataclass(frozen=True)
class ModuleResult:
    """A module and its checks, one per GPU (in :attr:`VerifyResult.gpus` order)."""

    module: ModuleLoad
    checks: tuple[Check, ...]


@dataclass(frozen=True)
class LoadOptions:
    """How the modules were put to the driver: PTX JIT-compiled (``--jit``) or not, whether the driver may JIT
    at all (``CUDA_DISABLE_PTX_JIT``), and the time limit per module."""

    jit: bool = False
    jit_allowed: bool = True
    timeout: float = 60.0


@dataclass(frozen=True)
class VerifyResult:
    """Everything the verify report renders: the driver and devices asked, how, and each module's checks."""

    listing: Listing  # the devices verified (in check order) and the driver version the prediction used
    options: LoadOptions
    modules: tuple[ModuleResult, ...]
    notes: tuple[str, ...] = field(default=())
    unreadable: tuple[tuple[str, str], ...] = ()  # (path, error) of scanned files that could not be read

    @property
    def gpus(self) -> tuple[DeviceInfo, ...]:
        """The devices verified, in the order of every module's checks."""
        return self.listing.devices

    @property
    def backend(self) -> str:
        """``ctypes`` (the real driver) or ``replay``."""
        return self.listing.backend

    @property
    def cuda_version(self) -> str | None:
        """The CUDA version the driver implements."""
        return self.listing.cuda_version

    @property
    def driver_version(self) -> str | None:
        """The driver version the prediction was made for."""
        return self.listing.driver_version

    @property
    def jit(self) -> bool:
        """Whether PTX-only modules were JIT-compiled (``--jit``)."""
        return self.options.jit

    @property
    def jit_allowed(self) -> bool:
        """Whether the driver may JIT PTX at all."""
        return self.options.jit_allowed

    @property
    def timeout(self) -> float:
        """Seconds each module may take to load."""
        return self.options.timeout

    def counts(self, gpu: int) -> dict[str, int]:
        """How many modules agreed, disagreed, got no answer or were skipped on GPU ``gpu``."""
        out = {"loaded": 0, "agree": 0, "disagree": 0, "no_answer": 0, "skipped": 0}
        for m in self.modules:
            v = m.checks[gpu].verdict
            out[v.replace("-", "_")] += 1
            if v != "skipped":
                out["loaded"] += 1
        return out


def run_verify(
    items: Iterable[ScanItem],
    listing: Listing,
    ordinals: Sequence[int] | None = None,
    *,
    jit: bool = False,
    timeout: float = 60.0,
    jit_allowed: bool = True,
    driver_version: str | None = None,
    env: Mapping[str, str] | None = None,
    progress: Progress | None = None,
) -> VerifyResult:
    """Analyse ``items`` for the listed devices (all, or ``ordinals``) and load their modules on each.

    ``driver_version`` (the probe's, e.g. ``580.65.06``) decides the PTX ISA the driver's JIT accepts in
    the prediction; a replay file's own version wins.  ``progress`` wraps the answer stream (a TTY spinner).
    """
    from cudafit.analysis import analyze
    from cudafit.model import parse_driver_version
    from cudafit.verify.plan import iter_module_loads

    asked = replace(
        listing, devices=_devices(listing, ordinals), driver_version=listing.driver_version or driver_version
    )
    options = LoadOptions(jit, jit_allowed, timeout)
    driver = parse_driver_version(asked.driver_version) if asked.driver_version else None
    origins: dict[str, str | None] = {}
    gpus = [d.gpu for d in asked.devices]
    analysis = analyze(_remember(items, origins), gpus, driver=driver, jit_allowed=jit_allowed, include_coverage=False)
    loads = list(iter_module_loads(analysis, origins, driver=driver, jit_allowed=jit_allowed, jit=jit))
    answers = _load(loads, asked.devices, options, env, progress)
    results = tuple(
        ModuleResult(t, tuple(Check(e, answers.get((n, gi))) for gi, e in enumerate(t.expectations)))
        for n, t in enumerate(loads)
    )
    unreadable = tuple((f.path, f.error or "") for p in analysis.packages for f in p.unreadable)
    return VerifyResult(asked, options, results, _notes(analysis), unreadable)


def _devices(listing: Listing, ordinals: Sequence[int] | None) -> tuple[DeviceInfo, ...]:
    """The listed devices named by ``ordinals`` (all of them by default), each once, in the order asked."""
    from cudafit.errors import DriverUnavailableError

    by_ordinal = {d.ordinal: d for d in listing.devices}
    wanted = list(dict.fromkeys(ordinals)) if ordinals else list(by_ordinal)
    missing = [o for o in wanted if o not in by_ordinal]
    if missing:
        msg = f"no CUDA device {missing[0]}: the driver lists {', '.join(map(str, by_ordinal))}"
        raise DriverUnavailableError("bad-device", msg)
    return tuple(by_ordinal[o] for o in wanted)


def _remember(items: Iterable[ScanItem], origins: dict[str, str | None]) -> Iterator[ScanItem]:
    """``items`` unchanged, noting where each one's bytes really are (a downloaded wheel's display name)."""
    for item in items:
        origins[item.path] = item.origin
        yield item


def _notes(analysis: Analysis) -> tuple[str, ...]:
    notes = list(analysis.notes)
    if any(p.inactive for p in analysis.packages):
        notes.append("per-CUDA-version copies that never load here are not loaded (see cudafit check)")
    return tuple(notes)


def _load(
    loads: Sequence[ModuleLoad],
    devices: Sequence[DeviceInfo],
    options: LoadOptions,
    env: Mapping[str, str] | None,
    progress: Progress | None,
) -> dict[tuple[int, int], Answer]:
    """The driver's answer per (module, GPU index) for every pair the expectations load."""
    from cudafit.verify.runner import iter_answers
    from cudafit.verify.sources import ByteSources

    answers: dict[tuple[int, int], Answer] = {}
    index = {d.ordinal: gi for gi, d in enumerate(devices)}
    with ByteSources() as sources:
        jobs = _jobs(loads, devices, sources, answers)
        stream = iter_answers({o: js for o, js in jobs.items() if js}, timeout=options.timeout, env=env)
        labelled: Iterable[_Labelled] = (_Labelled(a, loads[a.job].path) for a in stream)
        for got in progress(labelled) if progress is not None else labelled:
            answers[(got.answer.job, index[got.answer.ordinal])] = got.answer
    return answers


def _jobs(
    loads: Sequence[ModuleLoad],
    devices: Sequence[DeviceInfo],
    sources: ByteSources,
    answers: dict[tuple[int, int], Answer],
) -> dict[int, list[Job]]:
    """The loads per device ordinal; a module whose bytes cannot be found is answered ``unreadable`` here."""
    from cudafit.verify.runner import Answer, Job

    sources.prepare(t.origin or t.source for t in loads if any(e.load for e in t.expectations))
    jobs: dict[int, list[Job]] = {d.ordinal: [] for d in devices}
    for n, t in enumerate(loads):
        if not any(e.load for e in t.expectations):
            continue
        path, why = sources.resolve(t.origin or t.source)
        for gi, d in enumerate(devices):
            if not t.expectations[gi].load:
                continue
            if path is None:
                answers[(n, gi)] = Answer(n, d.ordinal, "unreadable", message=why)
            else:
                jobs[d.ordinal].append(Job(n, path, t.offset, t.size, t.kind == "ptx"))
    return jobs


@dataclass(frozen=True)
class _Labelled:
    """An answer with the module's path, for the progress line (``with_progress`` shows ``.path``)."""

    answer: Answer
    path: str
