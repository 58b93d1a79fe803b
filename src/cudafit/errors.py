"""The one exception hierarchy of cudafit.

Every error that cudafit raises on purpose derives from :class:`CudafitError`, so a
caller (and the CLI) can catch one type.  Each layer has its own subclass, and the
message is built from structured fields so ``--json`` output can carry them too.
Programmer errors (bugs) stay ``RuntimeError``/``TypeError``.
"""

from __future__ import annotations

__all__ = [
    "BinaryFormatError",
    "CudafitError",
    "DecompressionError",
    "DriverUnavailableError",
    "EnvironmentResolutionError",
    "FleetError",
    "ProbeError",
    "RuleDataError",
    "TargetError",
    "UnknownGpuError",
    "ValueParseError",
]


class CudafitError(Exception):
    """Root of every error cudafit raises deliberately."""

    code = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ValueParseError(CudafitError, ValueError):
    """A value such as ``sm_90a``, ``8.6`` or ``580.65.06`` could not be parsed."""

    code = "invalid-value"


class BinaryFormatError(CudafitError, ValueError):
    """Bytes that do not follow the ELF / fatbin / cubin / PTX layout they claim."""

    code = "invalid-binary"

    def __init__(self, message: str, *, offset: int | None = None) -> None:
        if offset is not None:
            message = f"{message} (at byte {offset:#x})"
        super().__init__(message)
        self.offset = offset


class DecompressionError(BinaryFormatError):
    """A compressed fatbin entry could not be decompressed within its declared size."""

    code = "decompression-failed"


class RuleDataError(CudafitError):
    """The packaged compatibility tables are missing or violate their invariants."""

    code = "rule-data"


class UnknownGpuError(CudafitError, LookupError):
    """A GPU name did not resolve to exactly one compute capability."""

    code = "unknown-gpu"

    def __init__(self, message: str, *, query: str = "", candidates: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.query = query
        self.candidates = candidates


class ProbeError(CudafitError):
    """A GPU probing backend failed (used internally; probes report it as data)."""

    code = "probe-failed"


class TargetError(CudafitError):
    """A scan target (path, wheel, requirement, image, .pt2) could not be read."""

    code = "target-failed"


class EnvironmentResolutionError(TargetError):
    """A path given as a Python interpreter or environment is not one (a usage error: exit code 2)."""

    code = "not-an-environment"


class DriverUnavailableError(CudafitError):
    """``verify`` cannot ask the CUDA driver (exit code 3; a ``--gpu`` index it does not list: 2).

    ``kind``: ``no-driver`` (no libcuda, or the toolkit's stub), ``no-gpu``, ``bad-device``,
    ``driver-error`` or ``worker-failed``.
    """

    code = "could-not-verify"

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class FleetError(CudafitError):
    """A fleet could not be asked at all (cluster unreachable, no credentials, unreadable fleet file).

    Problems of single nodes are not errors: they become the node's status in the inventory.
    """

    code = "fleet-source"
