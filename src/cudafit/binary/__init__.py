"""Bytes -> facts: host ELF files, ar archives, fatbin containers, cubins and PTX.

This layer never imports ``rules``, ``probe``, ``targets``, ``report`` or ``cli``.  Only
:class:`~cudafit.errors.BinaryFormatError` (and subclasses) escape its parsers; the
``inspect_*`` entry points never raise for bad input: they return
:class:`BinaryFacts` with ``error`` set and keep whatever they recovered.

Entry points:
  * :func:`inspect_path` - a file on disk (mmap; only headers are touched).
  * :func:`inspect_bytes` - an in-memory buffer (bytes, memoryview or mmap).
  * :func:`inspect_stream` - a non-seekable stream such as a zip or tar member; memory
    stays bounded whatever the member size.
  * :func:`sniff` - cheap prefilter from a file's first bytes and name.
  * :func:`read_entry_payload` / :func:`read_cubin` - on-demand decompression and cubin
    details (kernels, registers, shared memory).
"""

from __future__ import annotations

from cudafit.binary.cubin import read_cubin
from cudafit.binary.facts import (
    BinaryFacts,
    Compression,
    CubinInfo,
    EntryKind,
    FatbinEntry,
    FileFormat,
    KernelInfo,
    Module,
)
from cudafit.binary.payload import read_entry_payload
from cudafit.binary.reader import inspect_bytes, inspect_path, inspect_stream, sniff

__all__ = [
    "BinaryFacts",
    "Compression",
    "CubinInfo",
    "EntryKind",
    "FatbinEntry",
    "FileFormat",
    "KernelInfo",
    "Module",
    "inspect_bytes",
    "inspect_path",
    "inspect_stream",
    "read_cubin",
    "read_entry_payload",
    "sniff",
]
