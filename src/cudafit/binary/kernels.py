"""Per-kernel facts: decompress the cubins of a file on demand and list their kernels.

This is the only binary-layer path that decompresses anything; it runs only when a user asks
for kernels (``cudafit scan --kernels``), never for a compatibility verdict.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from cudafit.binary.cubin import read_cubin
from cudafit.binary.facts import BinaryFacts, CubinInfo, EntryKind, FatbinEntry
from cudafit.binary.fatbin import Buffer
from cudafit.binary.payload import read_entry_payload
from cudafit.errors import BinaryFormatError

__all__ = ["demangle", "iter_cubins"]


def iter_cubins(buf: Buffer, facts: BinaryFacts) -> Iterator[tuple[int, FatbinEntry, CubinInfo | BinaryFormatError]]:
    """Yield (module index, entry, cubin info or the error) for every SASS entry of ``facts``.

    ``buf`` is the buffer the facts were read from.  A bare cubin file is its own payload.
    """
    for index, module in enumerate(facts.modules):
        for entry in module.entries:
            if entry.kind is not EntryKind.SASS:
                continue
            try:
                if entry.header_size == 0:  # bare cubin: the file itself
                    info = read_cubin(buf, entry.payload_offset, entry.payload_size)
                else:
                    info = read_cubin(read_entry_payload(buf, entry))
            except BinaryFormatError as err:
                yield index, entry, err
                continue
            yield index, entry, info


def demangle(names: Sequence[str]) -> dict[str, str]:
    """C++ kernel names made readable with binutils' ``c++filt`` when it is installed (one call for all);
    without it the mangled names are shown.  JSON output always keeps the mangled names."""
    import shutil
    import subprocess

    unique = sorted({n for n in names if n.startswith("_Z")})
    tool = shutil.which("c++filt")
    if not unique or tool is None:
        return {}
    try:
        out = subprocess.run([tool], input="\n".join(unique), capture_output=True, text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return {}
    lines = out.stdout.splitlines()
    return dict(zip(unique, lines, strict=False)) if len(lines) == len(unique) else {}
