"""One validating layer for every input document: bytes in, typed values out, or one clear error.

Why one layer: documents come from other machines, other tools and hand edits (inventories
``cudafit.gpus/1``, recorded NVML hosts, fleet files ``cudafit.fleet/1``, ``kubectl get nodes -o json``,
``docker save`` / OCI manifests and indexes, ``[tool.cudafit.*]`` tables).  Reading them with
``dict.get`` chains turned a list where a string belongs, ``Infinity`` in a count or 30,000 nested
``[`` into ``internal error``.  Here each document is decoded by msgspec (a maintained, strict decoder:
https://jcristharif.com/msgspec/) into the small typed structs below, so that a wrong type, a number
that is not finite or out of range, or a nesting bomb is a :class:`DocumentError` that names the file
and the field (``fleet.json: nodes[3].gpus[0].count: expected int, got float``).  Callers that isolate
items (one fleet node, one image layer) convert each item on its own, so one bad item costs only itself.
"""

from __future__ import annotations

import os
import re
from typing import Annotated, Any, Literal, TypeVar

import msgspec

from cudafit.errors import CudafitError

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "Descriptor",
    "DockerImage",
    "DocumentError",
    "FleetDocument",
    "FleetGpuDoc",
    "FleetNodeDoc",
    "GpuDoc",
    "GpusDocument",
    "K8sNode",
    "K8sNodeList",
    "OciIndex",
    "OciManifest",
    "RecordedDevice",
    "RecordedHost",
    "convert",
    "decode_json",
    "decode_json_as",
    "decode_toml",
    "parse_ascii_int",
    "read_document",
    "read_json_file",
]

T = TypeVar("T")

#: The largest document read (a 5,000-node ``kubectl get nodes -o json`` is about 40 MB); larger
#: files are refused before they are read, which keeps memory bounded whatever the file claims to be.
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024


class DocumentError(CudafitError, ValueError):
    """An input document that cannot be read as what it claims to be: ``where`` (file), ``field``, why."""

    code = "invalid-document"

    def __init__(self, where: str, problem: str, *, field: str | None = None, message: str | None = None) -> None:
        self.where = where
        self.field = field
        self.problem = problem
        sep = " " if problem.startswith("is ") else ": "  # "f.json is not JSON: ..." reads as a sentence
        super().__init__(message or (f"{where}: {field}: {problem}" if field else f"{where}{sep}{problem}"))


# -- decoding -------------------------------------------------------------------------------------------


def read_document(path: str, where: str | None = None, *, max_bytes: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The bytes of a document file, refused above ``max_bytes`` (checked before reading)."""
    where = where or path
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:
                msg = f"{size} bytes, larger than the {max_bytes}-byte limit for a document"
                raise DocumentError(where, msg)
            data = fh.read(max_bytes + 1)
    except OSError as err:
        reason = err.strerror or str(err)
        raise DocumentError(where, reason, message=f"cannot read {where}: {reason}") from err
    if len(data) > max_bytes:
        raise DocumentError(where, f"larger than the {max_bytes}-byte limit for a document")
    return data


def decode_json(data: bytes | str, where: str) -> Any:
    """Strict JSON: no ``NaN``/``Infinity``, no numbers out of range, valid UTF-8, bounded nesting."""
    return decode_json_as(data, Any, where)  # Any: msgspec's "no schema", every JSON value


def read_json_file(path: str, where: str | None = None) -> Any:
    """:func:`read_document` then :func:`decode_json`."""
    where = where or path
    return decode_json(read_document(path, where), where)


def decode_toml(data: bytes, where: str) -> dict[str, Any]:
    """TOML as the standard library reads it, with its failures (not UTF-8, nesting) as one error."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DocumentError(where, f"is not valid TOML: not UTF-8 text (byte {err.start})") from err
    try:
        doc: dict[str, Any] = tomllib.loads(text)
    except RecursionError as err:
        raise DocumentError(where, "is not valid TOML: nested too deeply") from err
    except tomllib.TOMLDecodeError as err:
        raise DocumentError(where, f"is not valid TOML: {err}") from err
    return doc


_AT = re.compile(r"^(?P<problem>.*?)(?: - at `\$(?P<field>[^`]*)`)?$", re.S)


def _lower(text: str) -> str:
    return text[:1].lower() + text[1:]


def convert(obj: Any, kind: type[T], where: str, *, field: str = "") -> T:
    """``obj`` (decoded JSON/TOML) as ``kind``, or a :class:`DocumentError` naming the field.

    ``field`` prefixes the reported path when ``obj`` is a part of a larger document (``nodes[3]``).
    """
    try:
        return msgspec.convert(obj, kind, strict=True)
    except (RecursionError, msgspec.ValidationError) as err:
        raise _field_error(err, where, field) from err


def decode_json_as(data: bytes | str | msgspec.Raw, kind: type[T], where: str, *, field: str = "") -> T:
    """JSON bytes straight into ``kind``: fields ``kind`` does not name are skipped, never materialised.

    Why: a 60 MB ``kubectl get nodes -o json`` is mostly ``status.images``; decoded into dicts first it
    held 266 MB, decoded into the structs cudafit reads it holds little more than the bytes.
    """
    try:
        return msgspec.json.decode(data, type=kind)
    except (RecursionError, msgspec.ValidationError) as err:
        raise _field_error(err, where, field) from err
    except UnicodeDecodeError as err:
        raise DocumentError(where, f"is not JSON: not UTF-8 text (byte {err.start})", field=field or None) from err
    except msgspec.DecodeError as err:
        problem = f"is not JSON: {_lower(str(err).removeprefix('JSON is malformed: '))}"
        raise DocumentError(where, problem, field=field or None) from err


def _field_error(err: BaseException, where: str, field: str) -> DocumentError:
    if isinstance(err, RecursionError):
        return DocumentError(where, "nested too deeply", field=field or None)
    m = _AT.match(str(err))
    problem, path = (m.group("problem"), m.group("field") or "") if m else (str(err), "")
    problem = _lower(problem.replace("`", ""))
    if problem == "number out of range":  # 1e400: no float or int holds it, so it is not JSON cudafit reads
        problem = "is not JSON: number out of range"
    full = (field + path.removeprefix("[...]")).lstrip(".") or None
    return DocumentError(where, problem, field=full)


_ASCII_INT = re.compile(r"[0-9]+", re.ASCII)


def parse_ascii_int(text: str, *, limit: int = 1 << 62) -> int | None:
    """A non-negative integer written in ASCII digits (tools' output: ``'²'.isdigit()`` is true), else None."""
    text = text.strip()
    if not _ASCII_INT.fullmatch(text) or len(text) > 19:
        return None
    value = int(text)
    return value if value <= limit else None


# -- the documents --------------------------------------------------------------------------------------

Count = Annotated[int, msgspec.Meta(ge=0, le=1_000_000)]
Index = Annotated[int, msgspec.Meta(ge=0, le=1_000_000)]
Mib = Annotated[int, msgspec.Meta(ge=0, le=1 << 40)]
Digest = Annotated[str, msgspec.Meta(pattern=r"^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[A-Za-z0-9=_-]+$", max_length=256)]


class _Doc(msgspec.Struct, frozen=True, kw_only=True):
    """Unknown fields are ignored (documents gain fields); known ones must have their type."""


class GpuDoc(_Doc, frozen=True, kw_only=True):
    """One GPU of a ``cudafit.gpus/1`` document."""

    name: str
    compute_capability: str | None = None
    index: Index | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    memory_mib: Mib | None = None
    mig_mode: bool | None = None
    mig_devices: list[str] = []
    cuda_index: Index | msgspec.UnsetType | None = msgspec.UNSET  # absent: the device's position; null: hidden


class GpusDocument(_Doc, frozen=True, kw_only=True):
    """A ``cudafit.gpus/1`` document (``cudafit gpus --json``); ``node``/``hostname`` name it in a fleet file."""

    schema: Literal["cudafit.gpus/1"]
    mode: str | None = None
    node: str | None = None
    hostname: str | None = None
    gpus: list[GpuDoc] = []
    driver_version: str | None = None
    problems: list[str] = []


class MigDoc(_Doc, frozen=True, kw_only=True):
    """MIG instances of one profile."""

    profile: str = ""
    count: Count = 0


class FleetGpuDoc(_Doc, frozen=True, kw_only=True):
    """One GPU model of a fleet node."""

    name: str
    compute_capability: str | None = None
    count: Count = 1
    mig_enabled: bool | None = None
    mig: list[MigDoc] = []


class PackageDoc(_Doc, frozen=True, kw_only=True):
    """An installed distribution of a node's environment."""

    name: str
    version: str


class EnvDoc(_Doc, frozen=True, kw_only=True):
    """A node's own Python environment."""

    python: str = ""
    sites: list[str] = []
    packages: list[PackageDoc] = []


NodeStatus = Literal["ok", "no-gpu", "unknown-gpu", "invalid", "timeout", "unreachable", "dead"]


class FleetNodeDoc(_Doc, frozen=True, kw_only=True):
    """One node of a ``cudafit.fleet/1`` document."""

    name: str | None = None
    source: str | None = None
    status: NodeStatus | None = None
    gpus: list[FleetGpuDoc] = []
    driver_version: str | None = None
    labels: dict[str, str] = {}
    problems: list[str] | str | None = None
    fix: str | None = None
    node_id: str | None = None
    env: EnvDoc | None = None


class FleetDocument(_Doc, frozen=True, kw_only=True):
    """A ``cudafit.fleet/1`` document; ``nodes`` are converted one by one (a bad node is that node's problem)."""

    schema: Literal["cudafit.fleet/1"]
    nodes: list[Any]
    source: str | None = None
    problems: list[str] | str | None = None


class K8sCondition(_Doc, frozen=True, kw_only=True):
    """A node condition (only ``Ready`` is read)."""

    type: str = ""
    status: str = ""


Quantity = str | int  # resource quantities: strings in the API ("8"), numbers in hand-written files


class K8sStatus(_Doc, frozen=True, kw_only=True):
    """What cudafit reads of a node's status."""

    capacity: dict[str, Quantity] = {}
    allocatable: dict[str, Quantity] = {}
    conditions: list[K8sCondition] = []


class K8sMeta(_Doc, frozen=True, kw_only=True):
    """What cudafit reads of a node's metadata."""

    name: str = "?"
    labels: dict[str, str] = {}


class K8sNode(_Doc, frozen=True, kw_only=True):
    """A Kubernetes ``Node`` object (GPU Feature Discovery labels carry its GPU facts)."""

    metadata: K8sMeta = K8sMeta()
    status: K8sStatus = K8sStatus()


class K8sListMeta(_Doc, frozen=True, kw_only=True):
    """A list's paging token."""

    # "continue" is a Python keyword
    continue_: str | None = msgspec.field(default=None, name="continue")


class K8sNodeList(_Doc, frozen=True, kw_only=True):
    """``kubectl get nodes -o json`` (kind ``NodeList`` or ``List``, or one ``Node``).

    Items stay raw JSON here and are decoded one by one (:func:`decode_json_as`), so a bad node is that
    node's problem and the list never exists as Python dicts.
    """

    kind: str = ""
    items: list[msgspec.Raw] = []
    metadata: K8sListMeta = K8sListMeta()


class Descriptor(_Doc, frozen=True, kw_only=True):
    """An OCI content descriptor (image-spec descriptor.md): the digest names the blob."""

    digest: Digest
    mediaType: str | None = None
    size: Annotated[int, msgspec.Meta(ge=0)] | None = None


class OciIndex(_Doc, frozen=True, kw_only=True):
    """An OCI image index (``index.json``, or a platform index blob)."""

    manifests: Annotated[list[Descriptor], msgspec.Meta(min_length=1)]


class OciManifest(_Doc, frozen=True, kw_only=True):
    """An OCI image manifest: the layers, bottom first (a blob may instead be an index: ``manifests``)."""

    layers: list[Descriptor] | None = None
    manifests: list[Descriptor] | None = None


class DockerImage(_Doc, frozen=True, kw_only=True):
    """One image of a ``docker save`` ``manifest.json``."""

    Layers: list[Annotated[str, msgspec.Meta(min_length=1, max_length=4096)]]
    Config: str | None = None


DockerManifest = Annotated[list[DockerImage], msgspec.Meta(min_length=1)]


class RecordedDevice(_Doc, frozen=True, kw_only=True):
    """One GPU of a recorded NVML host (``scripts/record_probe.py``)."""

    name: str
    uuid: str = ""
    busId: str = ""
    cc: tuple[Annotated[int, msgspec.Meta(ge=0, le=99)], Annotated[int, msgspec.Meta(ge=0, le=99)]] | None = None
    memory: Annotated[int, msgspec.Meta(ge=0, le=1 << 50)] | None = None
    mig: tuple[Annotated[int, msgspec.Meta(ge=0, le=1)], Annotated[int, msgspec.Meta(ge=0, le=1)]] | None = None
    mig_devices: list[str] = []


class RecordedHost(_Doc, frozen=True, kw_only=True):
    """A recorded NVML host: driver, CUDA driver API version (1000*major + 10*minor), devices."""

    driver: str
    cuda: Annotated[int, msgspec.Meta(ge=0, le=1_000_000)]
    devices: list[RecordedDevice] = []
    hang_s: Annotated[float, msgspec.Meta(ge=0, le=3600)] | None = None
