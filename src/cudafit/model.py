"""Small, frozen, ordered value types shared by every layer.

Each type has a canonical ``str`` and a ``parse_*`` function that accepts the forms
users and tools write, and raises :class:`~cudafit.errors.ValueParseError` otherwise.
Ordering is the natural numeric one, so comparisons in the rules read like NVIDIA's text
("minor compute capability greater than or equal to the targeted version").
:class:`ComputeCapability` and :func:`parse_compute_capability` live in :mod:`cudafit._values`
(written without dataclasses so that ``import cudafit.guard`` stays cheap) and are re-exported here.

>>> str(parse_compute_capability("sm_86"))
'8.6'
>>> str(parse_sm_arch("sm_100f")), parse_sm_arch("sm_100f").compute_capability
('sm_100f', ComputeCapability(major=10, minor=0))
>>> str(parse_ptx_target("compute_90a"))
'compute_90a'
>>> str(parse_driver_version("580.65.06")) , str(parse_cuda_version("12080"))
('580.65.06', '12.8')
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from cudafit._values import ComputeCapability, parse_compute_capability
from cudafit.errors import ValueParseError

__all__ = [
    "ArchVariant",
    "ComputeCapability",
    "CudaVersion",
    "DriverVersion",
    "Gpu",
    "JsonDict",
    "PtxIsaVersion",
    "PtxTarget",
    "SmArch",
    "parse_compute_capability",
    "parse_cuda_version",
    "parse_driver_version",
    "parse_ptx_isa_version",
    "parse_ptx_target",
    "parse_sm_arch",
]


class ArchVariant(str, enum.Enum):
    """The suffix of a compilation target.

    ``a`` (architecture-specific) code runs only on the exact compute capability and ``f``
    (family-specific) code only on members of its family (CUDA Programming Guide 13,
    §5.1.2.1–5.1.2.2).  In a fatbin they are flag bits 20 and 21 of the entry header.
    """

    NONE = ""
    ARCH_SPECIFIC = "a"
    FAMILY = "f"


#: A JSON document as the ``to_dict`` methods build it (its shape is the versioned schema's, not a type's).
JsonDict = dict[str, Any]

_ARCH_RE = re.compile(r"\A(?:(sm|compute|lto)_?)?([0-9]{2,3})([af]?)\Z")


@dataclass(frozen=True)
class Gpu:
    """The GPU a verdict is for: a name, its compute capability, and its CUDA ordinal when it was probed.

    One shape for a GPU in every layer (probe results, ``--gpu`` names, fleet classes, verify), so a verdict
    never has to guess what ``(name, cc)`` or ``"8.6"`` meant.
    """

    name: str
    compute_capability: ComputeCapability
    index: int | None = None

    @classmethod
    def of(cls, cc: ComputeCapability) -> Gpu:
        """A GPU known only by its compute capability (coverage columns, audits): verdicts depend on the compute
        capability, never on the product name, so it is named by the compute capability."""
        return cls(str(cc), cc)

    @property
    def label(self) -> str:
        """``Tesla T4 (7.5)``; a GPU named by its compute capability alone (``--gpu 8.6``: "compute capability 8.6",
        or "8.6") is not named twice ("compute capability 8.6 (8.6)")."""
        cc = str(self.compute_capability)
        if self.name in (cc, f"compute capability {cc}"):
            return f"compute capability {cc}"
        return f"{self.name} ({cc})"

    def to_dict(self) -> JsonDict:
        """JSON form."""
        return {"name": self.name, "compute_capability": str(self.compute_capability), "index": self.index}


@dataclass(frozen=True, order=True)
class _Arch:
    """An arch number plus its variant, spelled ``{prefix}_{number}{variant}`` (nvcc's ``-arch``/``-code``)."""

    _prefix: ClassVar[str] = ""

    number: int
    variant: ArchVariant = ArchVariant.NONE

    def __str__(self) -> str:
        return f"{self._prefix}_{self.number}{self.variant.value}"

    @property
    def compute_capability(self) -> ComputeCapability:
        """The compute capability the target names: what SASS was compiled for, the lowest PTX may be
        JIT-compiled for."""
        return ComputeCapability.from_arch_number(self.number)


@dataclass(frozen=True, order=True)
class SmArch(_Arch):
    """A real (SASS) target such as ``sm_90a``: the arch number plus its variant."""

    _prefix: ClassVar[str] = "sm"


@dataclass(frozen=True, order=True)
class PtxTarget(_Arch):
    """A virtual (PTX) target such as ``compute_100f``."""

    _prefix: ClassVar[str] = "compute"


def _parse_arch(text: str, prefix: str) -> tuple[int, ArchVariant]:
    s = text.strip().lower()
    m = _ARCH_RE.match(s)
    # "00".."09" match the grammar but name no compute capability (and "sm_0" would not parse back)
    if not m or (m.group(1) not in (None, prefix)) or int(m.group(2)) < 10:
        msg = f"not a {prefix}_XY target: {text!r} (expected e.g. '{prefix}_90a')"
        raise ValueParseError(msg)
    return int(m.group(2)), ArchVariant(m.group(3))


def parse_sm_arch(text: str) -> SmArch:
    """Parse ``sm_90a``, ``sm_100f``, ``sm86`` or ``86``."""
    number, variant = _parse_arch(text, "sm")
    return SmArch(number, variant)


def parse_ptx_target(text: str) -> PtxTarget:
    """Parse ``compute_90a``, ``compute_75`` or ``75``."""
    number, variant = _parse_arch(text, "compute")
    return PtxTarget(number, variant)


_MAJOR_MINOR = re.compile(r"\A([0-9]{1,4})\.([0-9]{1,4})\Z")  # ASCII digits, bounded: int() never fails


@dataclass(frozen=True, order=True)
class PtxIsaVersion:
    """The PTX ISA version of a PTX text (its ``.version`` directive), e.g. 9.0."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


def parse_ptx_isa_version(text: str) -> PtxIsaVersion:
    """Parse ``8.8`` or ``.version 8.8``."""
    s = text.strip().removeprefix(".version").strip()
    m = _MAJOR_MINOR.match(s)
    if not m:
        msg = f"not a PTX ISA version: {text!r} (expected e.g. '8.8')"
        raise ValueParseError(msg)
    return PtxIsaVersion(int(m.group(1)), int(m.group(2)))


@dataclass(frozen=True, order=True)
class CudaVersion:
    """A CUDA toolkit / runtime / driver-API version such as 12.8 (optionally 12.8.1)."""

    major: int
    minor: int
    patch: int = 0

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}" + (f".{self.patch}" if self.patch else "")


def parse_cuda_version(text: str | int) -> CudaVersion:
    """Parse ``12.8``, ``12.8.1``, ``cu128``, ``13.0`` or the driver API's ``12080``."""
    s = str(text).strip().lower().removeprefix("cuda").strip()
    if re.fullmatch(r"[0-9]{4,7}", s):  # ASCII only: '²'.isdigit() is true but int('²') fails
        value = int(s)
        return CudaVersion(value // 1000, (value % 1000) // 10)
    m = re.fullmatch(r"cu([0-9]{2,3})", s)
    if m:
        digits = m.group(1)
        return CudaVersion(int(digits[:-1]), int(digits[-1]))
    m = re.fullmatch(r"([0-9]{1,4})\.([0-9]{1,4})(?:\.([0-9]{1,4}))?", s)
    if m:
        return CudaVersion(int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))
    msg = f"not a CUDA version: {text!r} (expected e.g. '12.8', 'cu128' or '12080')"
    raise ValueParseError(msg)


@dataclass(frozen=True, order=True)
class DriverVersion:
    """An NVIDIA display driver version such as ``580.65.06`` (Linux) or ``527.41`` (Windows).

    Parts are kept as integers for ordering; the canonical string keeps the zero padding
    NVIDIA uses for the third part (``580.65.06``).
    """

    parts: tuple[int, ...]

    def __str__(self) -> str:
        head = ".".join(str(p) for p in self.parts[:2])
        tail = "".join(f".{p:02d}" for p in self.parts[2:])
        return head + tail

    @property
    def major(self) -> int:
        """The driver branch, e.g. 580."""
        return self.parts[0]


def parse_driver_version(text: str) -> DriverVersion:
    """Parse ``580.65.06``, ``570.26`` or ``535``."""
    s = str(text).strip()
    if not re.fullmatch(r"[0-9]{3,4}(\.[0-9]{1,3}){0,3}", s):
        msg = f"not a driver version: {text!r} (expected e.g. '580.65.06')"
        raise ValueParseError(msg)
    parts = tuple(int(p) for p in s.split("."))
    if parts[0] < 100:  # "000" or "0099": no driver branch, and its canonical form would not parse back
        msg = f"not a driver version: {text!r} (the branch number is 100 or more, e.g. '580.65.06')"
        raise ValueParseError(msg)
    return DriverVersion(parts)
