"""What ``find`` answers, as values: one candidate's verdict on every GPU (:class:`CandidateResult`), the
indexes asked, what uv's automatic backend picks, and the whole answer (:class:`FindResult`).  The report
renders these and nothing else; the modules that compute them import this one, never each other's results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from cudafit.model import DriverVersion, Gpu
from cudafit.targets.index import IndexFile
from cudafit.targets.remote import MemberRead

__all__ = ["CandidateResult", "FindResult", "GpuVerdict", "IndexStatus", "Reason", "UvAuto"]


class Reason(TypedDict):
    """One reason of a candidate's verdict on a GPU (``cudafit.find/1`` ``verdicts[].reasons``)."""

    code: str
    message: str


class GpuVerdict(TypedDict):
    """A candidate's verdict on one GPU (``gpu``: its place in the GPUs asked about)."""

    gpu: int
    status: str
    reasons: list[Reason]


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
    status: str  # native / jit / partial / fails / none (no device code) / unknown / error (not a Status)
    verdicts: tuple[GpuVerdict, ...] = ()
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


class UvAuto(TypedDict):
    """What uv's ``--torch-backend=auto`` picks (``cudafit.find/1`` ``uv_auto``): ``runs`` is ``None`` when
    no build of that variant was judged."""

    variant: str | None
    index_url: str | None
    runs: bool | None
    why: str


@dataclass(frozen=True)
class FindResult:
    """Everything ``find`` renders: the candidates judged, the answer, and the way out."""

    requirement: str
    project: str
    gpus: tuple[Gpu, ...]
    driver: DriverVersion | None
    tags: tuple[str, ...]
    indexes: tuple[IndexStatus, ...]
    candidates: tuple[CandidateResult, ...]
    answer: CandidateResult | None
    jit_newer: tuple[CandidateResult, ...]
    listed: int
    listed_size: int
    way_out: tuple[str, ...] = ()
    uv_auto: UvAuto | None = None
    notes: tuple[str, ...] = ()
    deps: tuple[CandidateResult, ...] = field(default=())

    @property
    def bytes_fetched(self) -> int:
        """Bytes received for all candidates (index pages not counted)."""
        return sum(c.bytes_fetched for c in (*self.candidates, *self.deps))
