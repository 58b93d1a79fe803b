"""The ecosystem table (``rules/data/ecosystem.json``): where builds of CUDA Python projects live.

``cudafit find`` and the fixes need facts that are not in any binary: which indexes publish which CUDA
variant of the PyTorch ecosystem, the driver each variant needs (NVIDIA's minor-version compatibility
table), the lowest GPU its CUDA can target at all, which projects ship binaries only or compile device
code at run time, and where a GPU-free build or a source build is the way out.  They live in one
versioned data file with its sources, like the other rule data, and are read from here only: an index
URL or a list of variants written again in code drifts from the table.  Loading checks them against
``toolkits.json`` so the two tables cannot drift apart (a variant's driver floor is its CUDA major's
minor-version floor; its lowest arch is the first target of its toolkit).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Literal
from urllib.parse import urlsplit

import msgspec

from cudafit.documents import DocumentError, decode_json_as
from cudafit.errors import RuleDataError, ValueParseError
from cudafit.model import (
    ComputeCapability,
    CudaVersion,
    DriverVersion,
    SmArch,
    parse_cuda_version,
    parse_driver_version,
    parse_sm_arch,
)

__all__ = [
    "CudaVariant",
    "Ecosystem",
    "RuntimeCompiling",
    "SourceBuild",
    "load_ecosystem",
    "normalize_project",
    "parse_cuda_variant",
]

SCHEMA_VERSION = 1

#: How a distribution makes device code at run time when only its name says so (ecosystem.json
#: ``runtime_compiling``): nvcc on first use, Triton's bundled ptxas, or a copy per CUDA version.
RuntimeCompiling = Literal["nvcc-jit", "triton", "per-cuda-version"]


def _host(url: str) -> str:
    return (urlsplit(url.strip()).hostname or "").lower()


def normalize_project(name: str) -> str:
    """PEP 503 normalised project name (``FBGEMM_GPU`` -> ``fbgemm-gpu``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class CudaVariant:
    """One CUDA variant of the PyTorch indexes (``cu126``): its toolkit, index, driver floor and reach.

    ``current_release``: the current PyTorch release is built for it (fixes name only those indexes).
    """

    name: str
    cuda: CudaVersion
    index_url: str
    driver_floor: DriverVersion
    lowest_arch: SmArch
    current_release: bool = False
    # the lowest arch PyTorch's own wheels of this index carry (sm_37 for cu118, sm_75 from cu128), which can sit
    # above the toolkit's; None where the table does not say
    torch_lowest_arch: SmArch | None = None

    def __str__(self) -> str:
        return self.name

    def can_target(self, cc: ComputeCapability) -> bool:
        """Whether this CUDA can emit code for ``cc`` at all (SASS of the same major, or older PTX)."""
        return cc.major * 10 + cc.minor >= self.lowest_arch.number

    def torch_builds_run_on(self, cc: ComputeCapability) -> bool:
        """Whether PyTorch's wheels on this index carry code ``cc`` runs: the toolkit targets it and PyTorch's arch
        list for the index reaches down to it."""
        lowest = self.torch_lowest_arch or self.lowest_arch
        return self.can_target(cc) and cc.major * 10 + cc.minor >= lowest.number

    def driver_ok(self, driver: DriverVersion | None) -> bool:
        """Whether the driver runs this variant's CUDA runtime (unknown driver: assumed yes)."""
        return driver is None or driver >= self.driver_floor


def parse_cuda_variant(text: str) -> CudaVariant:
    """The table's variant named ``text`` (``cu126``, ``CU126``, ``+cu126``)."""
    name = text.strip().lstrip("+").lower()
    for v in load_ecosystem().cuda_variants:
        if v.name == name:
            return v
    msg = f"unknown CUDA variant {text!r} (known: {', '.join(v.name for v in load_ecosystem().cuda_variants)})"
    raise ValueParseError(msg)


@dataclass(frozen=True)
class SourceBuild:
    """Where a project's sources are and which variable picks the GPUs a build targets."""

    repository: str
    arch_variable: str

    def setting(self, arch_list: str) -> str:
        """The build's arch switch set to ``arch_list`` (``TORCH_CUDA_ARCH_LIST="6.1;8.6"``)."""
        return f'{self.arch_variable}="{arch_list}"'


@dataclass(frozen=True)
class Ecosystem:
    """Everything loaded from ``ecosystem.json``."""

    pypi_index: str
    pytorch_index: str  # the root of PyTorch's per-CUDA indexes: every variant's index is pytorch_index + name
    cuda_variants: tuple[CudaVariant, ...]  # newest CUDA first
    torch_ecosystem: frozenset[str]
    pytorch_index_projects: frozenset[str]  # install instructions name PyTorch's index (within torch_ecosystem)
    binary_only: frozenset[str]
    runtime_compiling: Mapping[str, RuntimeCompiling]
    gpu_free: Mapping[str, str]
    source_builds: Mapping[str, SourceBuild]
    sources: Mapping[str, str]
    as_of: str

    def is_torch_ecosystem(self, project: str) -> bool:
        """Whether PyTorch's CUDA-variant indexes publish builds of ``project``."""
        return normalize_project(project) in self.torch_ecosystem

    def is_on_pytorch_index(self, project: str) -> bool:
        """Whether ``project``'s own install instructions install it from PyTorch's per-CUDA index."""
        return normalize_project(project) in self.pytorch_index_projects

    def is_pytorch_index(self, url: str) -> bool:
        """Whether ``url`` is on PyTorch's index host (any of its ``/whl/cuXYZ``, nightly or CPU indexes).

        The host is compared, not the whole root, so a nightly or a local-version index still reads as
        PyTorch's: callers label it by its variant, which they know from the table already.
        """
        return _host(url) == _host(self.pytorch_index)

    def is_binary_only(self, project: str) -> bool:
        """Whether only its vendor or framework builds ``project`` (never suggest a source build)."""
        return normalize_project(project) in self.binary_only

    def runtime_compiler(self, project: str) -> RuntimeCompiling | None:
        """How ``project`` compiles device code at run time when only its name can say so (``nvcc-jit``)."""
        return self.runtime_compiling.get(normalize_project(project))

    @property
    def current_variants(self) -> tuple[CudaVariant, ...]:
        """The variants the current PyTorch release is built for, oldest CUDA first."""
        return tuple(v for v in reversed(self.cuda_variants) if v.current_release)

    def variant_of_cuda(self, cuda: CudaVersion) -> CudaVariant | None:
        """The variant built with ``cuda`` (major.minor), if the table has one."""
        return next((v for v in self.cuda_variants if v.cuda == CudaVersion(cuda.major, cuda.minor)), None)

    def torch_build_for(self, cuda_major: int) -> CudaVariant | None:
        """The variant a fix names for a CUDA major: the current release's oldest build of it (the widest
        GPU reach a current PyTorch has on that driver), else that major's newest (cu118 for CUDA 11)."""
        same = [v for v in self.cuda_variants if v.cuda.major == cuda_major]
        current = [v for v in same if v.current_release]
        return current[-1] if current else (same[0] if same else None)

    def variant_for_index(self, url: str) -> CudaVariant | None:
        """The variant an index URL serves (``.../whl/cu126``)."""
        clean = url.rstrip("/")
        return next((v for v in self.cuda_variants if v.index_url.rstrip("/") == clean), None)

    def uv_auto_pick(self, driver: DriverVersion) -> CudaVariant | None:
        """The variant uv's ``--torch-backend=auto`` picks: the newest CUDA whose driver floor the driver
        meets, from the driver alone (astral-sh/uv crates/uv-torch, LINUX_CUDA_DRIVERS; uv#14742)."""
        return next((v for v in self.cuda_variants if driver >= v.driver_floor), None)


class _VariantDoc(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    cuda: str
    index_url: str
    driver_floor: str
    lowest_arch: str
    current_release: bool
    torch_lowest_arch: str | None = None


class _SourceBuildDoc(msgspec.Struct, forbid_unknown_fields=True):
    repository: str
    arch_variable: str


class _EcosystemDoc(msgspec.Struct, forbid_unknown_fields=True):
    """The file as written (ecosystem.schema.json): decoded strictly, so a wrong type names its field."""

    schema_version: int
    as_of: str
    sources: dict[str, str]
    pypi_index: str
    pytorch_index: str
    cuda_variants: list[_VariantDoc]
    torch_ecosystem: list[str]
    pytorch_index_projects: list[str]
    binary_only: list[str]
    runtime_compiling: dict[str, RuntimeCompiling]
    gpu_free: dict[str, str]
    source_builds: dict[str, _SourceBuildDoc]


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise RuleDataError(f"ecosystem.json: {message}")


def _variant(v: _VariantDoc) -> CudaVariant:
    return CudaVariant(
        name=v.name,
        cuda=parse_cuda_version(v.cuda),
        index_url=v.index_url,
        driver_floor=parse_driver_version(v.driver_floor),
        lowest_arch=parse_sm_arch(v.lowest_arch),
        current_release=v.current_release,
        torch_lowest_arch=parse_sm_arch(v.torch_lowest_arch) if v.torch_lowest_arch else None,
    )


def _projects(names: list[str]) -> frozenset[str]:
    return frozenset(normalize_project(p) for p in names)


def _ecosystem(doc: _EcosystemDoc) -> Ecosystem:
    try:
        variants = tuple(_variant(v) for v in doc.cuda_variants)
    except ValueParseError as err:
        raise RuleDataError(f"ecosystem.json malformed: {err}") from err
    return Ecosystem(
        pypi_index=doc.pypi_index,
        pytorch_index=doc.pytorch_index,
        cuda_variants=tuple(sorted(variants, key=lambda v: v.cuda, reverse=True)),
        torch_ecosystem=_projects(doc.torch_ecosystem),
        pytorch_index_projects=_projects(doc.pytorch_index_projects),
        binary_only=_projects(doc.binary_only),
        runtime_compiling={normalize_project(k): v for k, v in doc.runtime_compiling.items()},
        gpu_free={normalize_project(k): normalize_project(v) for k, v in doc.gpu_free.items()},
        source_builds={
            normalize_project(k): SourceBuild(v.repository, v.arch_variable) for k, v in doc.source_builds.items()
        },
        sources=dict(doc.sources),
        as_of=doc.as_of,
    )


def _check_against_nvidia(eco: Ecosystem) -> None:
    """Each variant against NVIDIA's tables (toolkits.json) and the table against itself."""
    from cudafit.rules import tables

    for v in eco.cuda_variants:
        _check(v.name == f"cu{v.cuda.major}{v.cuda.minor}", f"{v.name} is not named after CUDA {v.cuda}")
        _check(v.index_url == eco.pytorch_index + v.name, f"{v.name}: index {v.index_url} is not under pytorch_index")
        branch = tables.runtime_min_driver_branch(v.cuda.major)
        _check(
            branch is not None and v.driver_floor.major == branch,
            f"{v.name}: driver floor {v.driver_floor} is not CUDA {v.cuda.major}'s minor-version floor ({branch})",
        )
        targets = tables.toolkit_targets(v.cuda)
        _check(
            bool(targets) and min(t.number for t in targets) == v.lowest_arch.number,
            f"{v.name}: lowest arch {v.lowest_arch} disagrees with toolkits.json",
        )
    stray = sorted(eco.pytorch_index_projects - eco.torch_ecosystem)
    _check(not stray, f"pytorch_index_projects outside torch_ecosystem: {', '.join(stray)}")


@functools.lru_cache(maxsize=1)
def load_ecosystem() -> Ecosystem:
    """Load and validate the table (once per process)."""
    where = "ecosystem.json"
    try:
        text = resources.files("cudafit.rules").joinpath("data").joinpath(where).read_text(encoding="utf-8")
        doc = decode_json_as(text, _EcosystemDoc, where)
    except OSError as err:
        raise RuleDataError(f"{where} unreadable: {err}") from err
    except DocumentError as err:
        raise RuleDataError(f"{where} malformed: {err}") from err
    _check(doc.schema_version == SCHEMA_VERSION, f"schema_version must be {SCHEMA_VERSION}")
    eco = _ecosystem(doc)
    _check_against_nvidia(eco)
    return eco
