"""The evidence of a finding, typed: what the extractors read from the text and the grounders read back.

Evidence is the ``evidence`` object of ``cudafit.explain/1`` (src/cudafit/schema/explain.json), so it stays a
JSON-ready dict with only the keys found, in the order they were found (the JSON keeps that order); the
TypedDicts here say which keys exist and what each holds, so that an extractor and the grounders that read its
fact cannot disagree on a key's name or shape without mypy saying so.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from cudafit.model import JsonDict

__all__ = [
    "CudaErrorFact",
    "Evidence",
    "Facts",
    "GpuFact",
    "KernelMatch",
    "MissingDevice",
    "PtxIsa",
    "SharedMemory",
    "SourceFile",
]


class CudaErrorFact(TypedDict):
    """A CUDA error the text names (``cudaError_t``): code, runtime name, runtime string."""

    code: int
    name: str
    string: str


class _SharedMemoryBytes(TypedDict):
    required: int
    limit: int


class SharedMemory(_SharedMemoryBytes, total=False):
    """Bytes of shared memory a kernel asked for and the limit it hit; ``kind`` "static" for ptxas' 48 KB cap
    on ``__shared__`` arrays (absent for a launch's dynamic request)."""

    kind: Literal["static"]


class _SourceFileWhere(TypedDict):
    file: str
    path: str


class SourceFile(_SourceFileWhere, total=False):
    """A C++/CUDA source file a log points at: its name, the path as written, the line when given."""

    line: int


class GpuFact(TypedDict):
    """A GPU the log describes (``GPU`` when it gives no name) and its compute capability ``X.Y``."""

    name: str
    compute_capability: str


class PtxIsa(TypedDict):
    """ptxas' ``Unsupported .version X; current version is 'Y'``: the ISA the PTX needs and the one supported."""

    needed: str
    supported: str


class MissingDevice(TypedDict):
    """``deserialize object on CUDA device N but torch.cuda.device_count() is M``."""

    index: int
    device_count: int


class Facts(TypedDict, total=False):
    """Facts read from the text alone (:func:`cudafit.explain.extract.extract_facts` says what each means)."""

    archs: list[str]
    arch_range: list[str]
    built_for: str
    build_archs: list[str]
    kernels: list[str]
    operators: list[str]
    source_files: list[SourceFile]
    cuda_errors: list[CudaErrorFact]
    shared_memory: SharedMemory
    required_minimum: str
    required_maximum: str
    required_architecture: str
    packages: list[str]
    libraries: list[str]
    gpus: list[GpuFact]
    mentioned_gpus: list[GpuFact]
    build_min_cc: str
    toolkit_cuda_version: str
    torch_cuda_version: str
    driver_cuda_version: str
    driver_version: str
    ptx_isa: PtxIsa
    unsupported_target: str
    torch_version: str
    aoti_runner: str
    devices: list[str]
    missing_device: MissingDevice
    triton: bool
    library_range: str  # a library's range of GPUs and the GPU outside it (classify writes it)
    features_lacking: list[str]  # hardware features denied beside a GPU lacking them (classify writes it)
    forms: list[str]  # the forms of :mod:`cudafit.explain.forms` that decided the finding (classify writes it)


class KernelMatch(TypedDict):
    """A module without code for the GPU whose kernels the log's names point at (``kernel_matches``)."""

    package: str
    path: str
    module: int
    compute_capability: str
    status: str
    reason: str
    archs: list[str]
    kernels: list[str]


class _Lines(TypedDict):
    lines: list[str]


class Evidence(_Lines, Facts, total=False):
    """A finding's evidence: the matching ``lines``, the ``sources`` and ``emitters`` of the patterns that
    matched, the :class:`Facts`, and what grounding adds (kernel matches, the host's compute capabilities, the
    run-time compiler that failed)."""

    sources: list[str]
    emitters: list[str]
    kernel_matches: list[KernelMatch]
    host_compute_capabilities: list[str]
    runtime_compiler: JsonDict  # a cudafit.rules.compilers judgement, as its to_dict() writes it
