"""Ground truth from the driver: load every module the scan located on each local GPU, beside the prediction.

cudafit predicts from the bytes whether each module has code for a GPU; the CUDA driver decides.
``verify`` asks it, module by module (``cuModuleLoadDataEx`` in a worker process per GPU: see
:mod:`cudafit.verify.runner`), and sets its answer beside the prediction (:mod:`cudafit.verify.plan`).
This is the only part of cudafit that creates a CUDA context, and it does so only in those workers.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the worker imports cudafit.verify.driver: keep this package's import light
    from cudafit.verify.plan import Expectation, ModuleTarget
    from cudafit.verify.runner import Answer, DeviceInfo, Listing

__all__ = ["Check", "ModuleResult", "VerifyResult", "run_verify"]


@dataclass(frozen=True)
class Check:
    """One module on one GPU: the expectation and the driver's answer (``None`` when not loaded)."""

    expectation: Expectation
    answer: Answer | None

    @property
    def verdict(self) -> str:
        """``agree``, ``disagree``, ``no-answer`` (timeout, crash, unreadable...) or ``skipped``."""
        if self.answer is None:
            return "skipped"
        if self.answer.outcome != "answer":
            return "no-answer"
        return "agree" if self.answer.name == self.expectation.expected else "disagree"


@dataclass(frozen=True)
class ModuleResult:
    """A module and its checks, one per GPU (in :attr:`VerifyResult.gpus` order)."""

    target: ModuleTarget
    checks: tuple[Check, ...]


@dataclass(frozen=True)
class VerifyResult:
    """Everything the verify report renders."""

    gpus: tuple[DeviceInfo, ...]
    backend: str
    cuda_version: str | None
    driver_version: str | None
    jit: bool
    jit_allowed: bool
    timeout: float
    modules: tuple[ModuleResult, ...]
    notes: tuple[str, ...] = field(default=())
    unreadable: tuple[tuple[str, str], ...] = ()  # (path, error) of scanned files that could not be read

    def counts(self, gpu: int) -> dict[str, int]:
        """How many modules agreed, disagreed, got no answer or were skipped on GPU ``gpu``."""
        out = {"loaded": 0, "agree": 0, "disagree": 0, "no_answer": 0, "skipped": 0}
        for m in self.modules:
            v = m.checks[gpu].verdict
            out[v.replace("-", "_")] += 1
            if v != "skipped":
                out["loaded"] += 1
        return out

    def iter_disagreements(self) -> Iterator[tuple[ModuleResult, int]]:
        """(module, GPU index) of every disagreement, in module order then GPU order."""
        for m in self.modules:
            for gi, c in enumerate(m.checks):
                if c.verdict == "disagree":
                    yield m, gi


def run_verify(
    items: Iterable[Any],
    listing: Listing,
    ordinals: Sequence[int] | None = None,
    *,
    jit: bool = False,
    timeout: float = 60.0,
    jit_allowed: bool = True,
    driver_version: str | None = None,
    env: Mapping[str, str] | None = None,
    progress: Any = None,
) -> VerifyResult:
    """Analyse ``items`` for the listed devices (all, or ``ordinals``) and load their modules on each.

    ``driver_version`` (the probe's, e.g. ``580.65.06``) decides the PTX ISA the driver's JIT accepts in
    the prediction; a replay file's own version wins.  ``progress`` wraps the answer stream (a TTY spinner).
    """
    from cudafit.analysis import analyze
    from cudafit.errors import DriverUnavailableError
    from cudafit.model import ComputeCapability, Gpu, parse_driver_version
    from cudafit.verify.plan import iter_module_targets
    from cudafit.verify.runner import Answer, Job, iter_answers
    from cudafit.verify.sources import ByteSources

    by_ordinal = {d.ordinal: d for d in listing.devices}
    wanted = list(dict.fromkeys(ordinals)) if ordinals else list(by_ordinal)
    missing = [o for o in wanted if o not in by_ordinal]
    if missing:
        msg = f"no CUDA device {missing[0]}: the driver lists {', '.join(map(str, by_ordinal))}"
        raise DriverUnavailableError("bad-device", msg)
    devices = tuple(by_ordinal[o] for o in wanted)
    gpus = [
        Gpu(d.name, ComputeCapability(*map(int, d.compute_capability.split("."))), d.ordinal) for d in devices
    ]
    version = listing.driver_version or driver_version
    driver = parse_driver_version(version) if version else None
    origins: dict[str, str | None] = {}

    def remember(source: Iterable[Any]) -> Iterator[Any]:
        for item in source:
            origins[item.path] = getattr(item, "origin", None)
            yield item

    analysis = analyze(remember(items), gpus, driver=driver, jit_allowed=jit_allowed, include_coverage=False)
    targets = list(iter_module_targets(analysis, origins, driver=driver, jit_allowed=jit_allowed, jit=jit))
    answers: dict[tuple[int, int], Answer] = {}
    with ByteSources() as sources:
        sources.prepare(t.origin or t.source for t in targets if any(e.load for e in t.expectations))
        jobs: dict[int, list[Job]] = {d.ordinal: [] for d in devices}
        for n, t in enumerate(targets):
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
        index = {d.ordinal: gi for gi, d in enumerate(devices)}
        stream: Iterable[Answer] = iter_answers({o: js for o, js in jobs.items() if js}, timeout=timeout, env=env)
        if progress is not None:
            stream = progress(_Labelled(a, targets[a.job].path) for a in stream)
        for got in stream:
            a = got.answer if isinstance(got, _Labelled) else got
            answers[(a.job, index[a.ordinal])] = a
    results = tuple(
        ModuleResult(t, tuple(Check(e, answers.get((n, gi))) for gi, e in enumerate(t.expectations)))
        for n, t in enumerate(targets)
    )
    notes = list(analysis.notes)
    if any(p.inactive for p in analysis.packages):
        notes.append("per-CUDA-version copies that never load here are not loaded (see cudafit check)")
    unreadable = tuple((f.path, f.error or "") for p in analysis.packages for f in p.unreadable)
    return VerifyResult(
        gpus=devices,
        backend=listing.backend,
        cuda_version=listing.cuda_version,
        driver_version=version,
        jit=jit,
        jit_allowed=jit_allowed,
        timeout=timeout,
        modules=results,
        notes=tuple(notes),
        unreadable=unreadable,
    )


@dataclass(frozen=True)
class _Labelled:
    """An answer with the module's path, for the progress line (``with_progress`` shows ``.path``)."""

    answer: Answer
    path: str
