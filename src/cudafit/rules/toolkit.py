"""Which CUDA toolkit built a binary, from its bytes: the era its code follows and the driver it needs.

Two questions need it.  The compatibility rule depends on the toolkit era (Tegra parts joined the SBSA
toolkit in CUDA 13: :mod:`cudafit.rules.compat`).  And a package's driver floor: a CUDA runtime of major N
needs a driver of N's branch or newer (minor-version compatibility: 13.x >= 580, 12.x >= 525;
https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html), whether the runtime is
linked dynamically (``DT_NEEDED libcudart.so.13``), statically (nvcc's default: no NEEDED entry, but the
code the same toolkit emitted says which one: the PTX ISA of its PTX, release notes Table 3), or comes from
an ``nvidia-*-cuNN`` wheel (the ``-cuNN`` in the distribution's name).  The floor is a property of the whole
package: its files load one runtime, and one that cannot start fails every file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from cudafit.binary.facts import BinaryFacts, EntryKind
from cudafit.errors import ValueParseError
from cudafit.model import CudaVersion, DriverVersion, PtxIsaVersion
from cudafit.rules import tables
from cudafit.rules.reasons import Reason, ReasonData, reason

__all__ = ["BuildToolkit", "build_toolkit", "driver_too_old", "package_build_toolkit", "parse_build_toolkit"]

_CUDART = re.compile(r"libcudart\.so\.(\d+)")
#: ``nvidia-cublas-cu12``, ``nvidia-nccl-cu13``, ``cupy-cuda13x``, ``sgl-kernel-cu130``: CUDA-major wheels.
_NAME_MAJOR = re.compile(r"[-_]cu(?:da)?(\d{2})(?:\d|x)?$")


@dataclass(frozen=True)
class BuildToolkit:
    """The oldest CUDA toolkit that could have built a binary (a lower bound), and the evidence for it."""

    version: CudaVersion
    evidence: str

    @property
    def major(self) -> int:
        """The toolkit (and CUDA runtime) major."""
        return self.version.major

    def __str__(self) -> str:
        return f"CUDA {self.version.major}.{self.version.minor} ({self.evidence})"


def parse_build_toolkit(text: str) -> BuildToolkit:
    """Parse :class:`BuildToolkit`'s ``str``: ``CUDA 13.0 (libcudart.so.13)``."""
    m = re.fullmatch(r"CUDA (\d+)\.(\d+) \((.+)\)", text.strip())
    if not m:
        msg = f"not a build toolkit: {text!r}"
        raise ValueParseError(msg)
    return BuildToolkit(CudaVersion(int(m.group(1)), int(m.group(2))), m.group(3))


def _units(facts: BinaryFacts) -> Iterator[BinaryFacts]:
    yield facts
    for member in facts.members:
        yield from _units(member)


def _toolkit_for_isa(isa: PtxIsaVersion) -> CudaVersion | None:
    """The oldest toolkit in the table that emits PTX ISA ``isa``."""
    t = tables.load_tables()
    emitting = [cuda for cuda in sorted(t.ptx_isa) if t.ptx_isa[cuda] >= isa]
    return emitting[0] if emitting else None


def _iter_evidence(facts: BinaryFacts) -> Iterator[BuildToolkit]:
    for unit in _units(facts):
        for name in unit.needed:
            m = _CUDART.match(name)
            if m:
                yield BuildToolkit(CudaVersion(int(m.group(1)), 0), name)
        # Embedded fatbins count: the library's own toolkit built them (cuFFT's 23,983 in .ldata).
        isas = [e.code_version for m in unit.modules for e in m.entries if e.kind is EntryKind.PTX]
        if isas:
            isa = PtxIsaVersion(*max(isas))
            cuda = _toolkit_for_isa(isa)
            if cuda is not None:
                yield BuildToolkit(cuda, f"PTX ISA {isa} in {unit.path.rsplit('/', 1)[-1]}")


def build_toolkit(facts: BinaryFacts) -> BuildToolkit | None:
    """The toolkit one file was built with (the newest evidence wins), ``None`` without evidence."""
    return max(_iter_evidence(facts), key=lambda b: b.version, default=None)


def package_build_toolkit(name: str | None, files: Iterable[BinaryFacts | BuildToolkit | None]) -> BuildToolkit | None:
    """The newest toolkit any file of a package was built with (its facts, or what :func:`build_toolkit` found
    for it), or its name says (``nvidia-nccl-cu13``)."""
    found = [b for f in files if (b := f if not isinstance(f, BinaryFacts) else build_toolkit(f)) is not None]
    m = _NAME_MAJOR.search(name or "")
    if m and 9 <= int(m.group(1)) <= 99:
        found.append(BuildToolkit(CudaVersion(int(m.group(1)), 0), f"distribution {name}"))
    return max(found, key=lambda b: b.version, default=None)


def driver_too_old(built: BuildToolkit | None, driver: DriverVersion | None, whose: str = "this file") -> Reason | None:
    """Step 1 of the decision procedure (fatbin_spec.md §E.6): the CUDA runtime the code was built for must be
    supported by the driver, or every CUDA call fails with error 35 before any kernel matters.  The runtime's
    major is the building toolkit's, however it is linked."""
    if driver is None or built is None:
        return None
    floor = tables.runtime_min_driver_branch(built.major)
    if floor is None or driver.major >= floor:
        return None
    data = ReasonData(driver_floor=floor, cuda_major=built.major, evidence=built.evidence)
    return reason(
        "driver-too-old-for-runtime",
        f"{whose} needs the CUDA {built.major} runtime ({built.evidence}): CUDA {built.major}.x needs driver >= "
        f"{floor}, this is {driver} (error 35)",
        data,
    )
