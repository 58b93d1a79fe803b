"""Pools: library-loaded code judged together, because the library picks the piece built for the GPU.

No CUDA runtime registers a bare cubin, a raw fatbin or a fatbin embedded in a data section: the library
hands the one it picks to the driver (``cuModuleLoadData``; CUDA Driver API, Module Management:
https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MODULE.html).  Such code is per-arch by nature
(flashinfer-cubin's 15,970 cubins, cuFFT's 23,983 embedded fatbins), so a GPU is served when one piece of the
pool has code for it, and a piece without code for it is not a hole.

Which files form pools is one definition (:func:`split_library_loaded`) with two named policies, because two
questions ask it: a package's verdict (:data:`PACKAGE_POOLS`) and ``audit``'s per-member report
(:data:`AUDIT_POOLS`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from cudafit.binary.facts import BinaryFacts, EntryKind, FileFormat, Module
from cudafit.model import Gpu
from cudafit.rules.decide import ModuleVerdict, arch_names, decide
from cudafit.rules.options import JudgeOptions
from cudafit.rules.reasons import reason
from cudafit.rules.status import Status

__all__ = [
    "AUDIT_POOLS",
    "PACKAGE_POOLS",
    "LoadedFilesPolicy",
    "LoadedSplit",
    "embedded_pool",
    "loaded_files_pool",
    "pool_key",
    "specialised_pool",
    "split_library_loaded",
]

T = TypeVar("T")

_ARCH_DIR = re.compile(r"^(?:sm|compute|arch)?[_-]?\d{2,3}[af]?$", re.I)


@dataclass(frozen=True)
class LoadedFilesPolicy:
    """Which files a library loads itself, and how they are grouped into pools.

    ``formats``: the file formats no runtime registers; ``by_directory``: one pool per directory
    (:func:`pool_key`) instead of one for all; ``min_files``: a pool of fewer files is no pool, its files are
    judged one by one.
    """

    name: str
    formats: frozenset[FileFormat]
    by_directory: bool
    min_files: int

    def key(self, path: str) -> str:
        """The pool a library-loaded file at ``path`` belongs to."""
        return pool_key(path) if self.by_directory else ""


#: A package's verdict: a distribution's bare cubins and raw fatbins, two or more, are one pool (the library
#: picks among all it ships, whatever directory they are in).  A lone one is judged as the file it is, and a
#: PTX file as its one module, which the driver JIT-compiles.
PACKAGE_POOLS = LoadedFilesPolicy("package", frozenset({FileFormat.CUBIN, FileFormat.FATBIN}), False, 2)

#: ``audit``: one pool per directory (arch-named directories merged), so that a finding says where the files
#: are; a lone file is a pool too, and PTX files join, since PTX requirements ask whether the library has
#: something the driver can JIT-compile for the GPU.
AUDIT_POOLS = LoadedFilesPolicy("audit", frozenset({FileFormat.CUBIN, FileFormat.FATBIN, FileFormat.PTX}), True, 1)


@dataclass(frozen=True)
class LoadedSplit(Generic[T]):
    """Items split by a :class:`LoadedFilesPolicy`: those judged one by one (in their order) and the pools (in
    the order of their first file), each a key and its items."""

    files: tuple[T, ...]
    pools: tuple[tuple[str, tuple[T, ...]], ...]


def split_library_loaded(
    items: Sequence[T], facts_of: Callable[[T], BinaryFacts], policy: LoadedFilesPolicy
) -> LoadedSplit[T]:
    """The items the library loads itself, in pools, and the others (``facts_of`` reads an item's facts)."""
    grouped: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        facts = facts_of(item)
        if facts.format in policy.formats:
            grouped.setdefault(policy.key(facts.path), []).append(i)
    pools = [(key, at) for key, at in grouped.items() if len(at) >= policy.min_files]
    pooled = {i for _key, at in pools for i in at}
    files = tuple(item for i, item in enumerate(items) if i not in pooled)
    return LoadedSplit(files, tuple((key, tuple(items[i] for i in at)) for key, at in pools))


def pool_key(path: str) -> str:
    """The directory of a library-loaded file, arch-named directories (``sm_90``, ``100a``) left out."""
    outer, bang, member = path.rpartition("!")
    inner = member if bang else path
    parts = [p for p in inner.replace("\\", "/").split("/")[:-1] if not _ARCH_DIR.match(p)]
    return (outer + "!" if bang else "") + "/".join(parts)


def embedded_pool(
    code: Sequence[Module], count: int, sections: Sequence[str], gpu: Gpu, options: JudgeOptions
) -> ModuleVerdict:
    """All fatbins a library loads itself, judged as one pool: it picks one that fits the GPU.

    ``code``: the pool's distinct arch lists (canonical modules); ``count``: how many fatbins.  Every piece is
    loaded only where it fits, so none is gated: a piece with code for other GPUs' ``a``/``f`` targets only
    serves nothing here.
    """
    best = Status.FAILS
    chosen: str | None = None
    ungated = dataclasses.replace(options, gating=False)
    for m in code:
        v = decide(m, gpu.compute_capability, ungated)
        if v.status is Status.NATIVE:
            best, chosen = Status.NATIVE, v.chosen
            break
        if v.status is Status.JIT and best is Status.FAILS:
            best, chosen = Status.JIT, v.chosen
    sass = arch_names([e for m in code for e in m.entries], EntryKind.SASS)
    ptx = arch_names([e for m in code for e in m.entries], EntryKind.PTX)
    what = f"{count} fatbins the library loads itself ({', '.join(sections)})"
    if best is Status.FAILS:
        msg = f"{what}: none has code for {gpu.compute_capability}"
    else:
        msg = f"{what}: {chosen} serves {gpu.compute_capability}"
    return ModuleVerdict(-1, "embedded", best, sass, ptx, chosen, (reason("library-loaded-code", msg),))


def specialised_pool(pool: ModuleVerdict, native_elsewhere: bool, why: str) -> ModuleVerdict:
    """A pool without native code for this GPU beside code that runs natively here: the library loads that
    code on other GPUs (information), as cuBLASLt's ``.cask_resource`` kernels."""
    if pool.status is Status.NATIVE or not native_elsewhere:
        return pool
    note = reason("library-loaded-code", f"{pool.reasons[0].message}; {why}")
    return dataclasses.replace(pool, status=Status.SPECIALISED, reasons=(note,))


def loaded_files_pool(
    code: Sequence[Module], files: int, gpu: Gpu, options: JudgeOptions, native_elsewhere: bool
) -> ModuleVerdict:
    """A distribution's library-loaded files (``files`` of them, ``code`` their distinct arch lists) as one
    module; code for other GPUs only, while other files run natively here, is a specialisation."""
    pool = embedded_pool(code, files, ("cubin/fatbin files",), gpu, options)
    return specialised_pool(pool, native_elsewhere, "other files run natively")
