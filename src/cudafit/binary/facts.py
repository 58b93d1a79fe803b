"""Frozen facts that the binary layer extracts; the only types other layers see.

A *module* is one fatbin: each translation unit's fatbin is registered with the CUDA
runtime on its own (``__cudaRegisterFatBinary`` per ``__fatBinC_Wrapper_t``), so
compatibility is judged per fatbin, not per file (fatbin_spec.md §A.3, §E.1).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from cudafit.model import ArchVariant, ComputeCapability, PtxIsaVersion, PtxTarget, SmArch

__all__ = [
    "REGISTERED_SECTIONS",
    "BinaryFacts",
    "Compression",
    "CubinInfo",
    "EntryKind",
    "FatbinEntry",
    "FileFormat",
    "KernelInfo",
    "Module",
    "arch_sort_key",
]


class EntryKind(str, enum.Enum):
    """Kind of a fatbin entry (u16 at entry+0, fatbin_spec.md §B.2)."""

    PTX = "ptx"  # 1
    SASS = "sass"  # 2: an ELF cubin
    LTO = "lto"  # 8: NVVM IR for link-time optimisation
    CONCAT = "concat"  # 0x100: concatenated entry (CUDA 13.4+), members expanded
    UNKNOWN = "unknown"


class Compression(str, enum.Enum):
    """How an entry's payload is stored (flag bits 13 and 15, fatbin_spec.md §C)."""

    NONE = "none"
    LZ4 = "lz4"
    ZSTD = "zstd"


class FileFormat(str, enum.Enum):
    """What a scanned file turned out to be."""

    ELF_SHARED = "elf-shared"  # ET_DYN host library
    ELF_EXEC = "elf-exec"  # ET_EXEC host program
    ELF_OBJECT = "elf-object"  # ET_REL host object (.o)
    PE = "pe"  # Windows DLL/PYD/EXE (fatbins in the .nv_fatb section)
    ARCHIVE = "archive"  # ar archive (.a), members reported separately
    CUBIN = "cubin"  # bare device ELF (e_machine 190)
    FATBIN = "fatbin"  # raw fatbin file
    PTX = "ptx"  # PTX text
    NOT_CUDA = "not-cuda"  # readable, but not a format that can hold CUDA device code
    UNREADABLE = "unreadable"  # I/O error or malformed beyond recovery


class FatbinEntry(NamedTuple):
    """One entry of a fatbin: a cubin (SASS), a PTX text or an LTO-IR image.

    A ``NamedTuple`` rather than a dataclass: large libraries hold tens of thousands of
    entries and tuple construction is several times cheaper than a frozen dataclass.

    ``offset`` is the absolute offset of the entry header in the scanned file (or stream),
    ``payload_offset`` that of its payload; for members of a concatenated entry,
    ``payload_offset`` is the offset inside the decompressed concatenated payload and
    ``concat_offset`` the absolute offset of the concatenated entry.
    """

    kind: EntryKind
    arch_number: int
    variant: ArchVariant
    code_version: tuple[int, int]
    flags: int
    compression: Compression
    offset: int
    header_size: int
    payload_offset: int
    payload_size: int
    compressed_size: int
    uncompressed_size: int
    identifier: str = ""
    options: str = ""
    concat_offset: int | None = None
    raw_kind: int = 0
    #: What the entry header said (``compute_90``) when the payload itself said otherwise and won:
    #: the PTX text's ``.target``/``.version`` or the cubin's ELF ``e_flags`` (see binary/refine.py).
    header_said: str = ""

    @property
    def is_64bit(self) -> bool:
        """Flag bit 0 (``compile_size = 64bit``)."""
        return bool(self.flags & 0x1)

    @property
    def debug(self) -> bool:
        """Flag bit 1 (``has debug info``, set by ``nvcc -G``)."""
        return bool(self.flags & 0x2)

    @property
    def arch_name(self) -> str:
        """The name cuobjdump's default dump prints: ``sm_90a`` for SASS, ``compute_90a`` for PTX."""
        if self.kind is EntryKind.SASS:
            return str(SmArch(self.arch_number, self.variant))
        if self.kind is EntryKind.PTX:
            return str(PtxTarget(self.arch_number, self.variant))
        if self.kind is EntryKind.LTO:
            return f"lto_{self.arch_number}{self.variant.value}"
        return f"unknown_{self.arch_number}"

    @property
    def sm_arch(self) -> SmArch | None:
        """The SASS target, for cubin entries."""
        return SmArch(self.arch_number, self.variant) if self.kind is EntryKind.SASS else None

    @property
    def ptx_target(self) -> PtxTarget | None:
        """The virtual target, for PTX entries."""
        return PtxTarget(self.arch_number, self.variant) if self.kind is EntryKind.PTX else None

    @property
    def ptx_isa(self) -> PtxIsaVersion | None:
        """For PTX entries the code version *is* the PTX ISA (``.version``), fatbin_spec.md §B.3."""
        if self.kind is not EntryKind.PTX:
            return None
        return PtxIsaVersion(*self.code_version)

    @property
    def compute_capability(self) -> ComputeCapability | None:
        """The compute capability the entry targets, when it names one."""
        if self.arch_number < 10:
            return None
        return ComputeCapability.from_arch_number(self.arch_number)


#: Sections whose fatbins the CUDA runtime registers (ELF, PE) - ``None`` for raw files.
REGISTERED_SECTIONS = (".nv_fatbin", ".nv_fatb", None)


@dataclass(frozen=True)
class Module:
    """One fatbin (one registered CUDA module).

    ``section`` is ``.nv_fatbin`` (loaded at run time), ``__nv_relfatbin`` (relocatable,
    for device linking only; never loaded), or ``None`` for a raw fatbin file.
    """

    offset: int
    size: int
    section: str | None
    entries: tuple[FatbinEntry, ...]
    #: Found in a data section of a file that imports the driver's module loader
    #: (:data:`BinaryFacts.module_loaders`): a module the library loads itself, each judged on its own.
    loaded: bool = False

    @property
    def relocatable(self) -> bool:
        """True for ``__nv_relfatbin`` fatbins, which the runtime never loads (§A.1)."""
        return self.section == "__nv_relfatbin"

    @property
    def embedded(self) -> bool:
        """True for fatbins found in other data sections (``.ldata``, ``.rodata``...): not registered with
        the runtime; the library loads them itself (``cuModuleLoadData``), choosing which for the GPU."""
        return self.section not in REGISTERED_SECTIONS and not self.relocatable


@dataclass(frozen=True)
class KernelInfo:
    """A ``__global__`` function in a cubin and what the cubin records about its resources."""

    name: str
    static_shared_bytes: int | None = None
    registers: int | None = None
    max_threads: tuple[int, int, int] | None = None


@dataclass(frozen=True)
class CubinInfo:
    """What a (decompressed) cubin says about itself (fatbin_spec.md §D)."""

    arch_number: int
    abi_version: int
    elf_type: int
    arch_specific: bool
    virtual_arch_number: int | None
    kernels: tuple[KernelInfo, ...]
    is_dlink_stub: bool
    toolkit: str = ""


@dataclass(frozen=True)
class BinaryFacts:
    """Everything the binary layer knows about one file (or archive member).

    ``error`` is set when the file could not be read completely; ``modules`` then holds
    whatever was recovered before the problem.  Archive members are listed in
    ``members`` with their own facts, named ``ARCHIVE!MEMBER``.
    """

    path: str
    format: FileFormat
    size: int
    modules: tuple[Module, ...] = ()
    error: str | None = None
    error_code: str | None = None
    members: tuple[BinaryFacts, ...] = ()
    ptx_isa: PtxIsaVersion | None = None  # bare PTX files only
    notes: tuple[str, ...] = field(default=())
    #: Data sections where a quick probe found fatbins the library loads itself (see Module.embedded);
    #: their modules are in ``modules`` only when the file was scanned with ``embedded=True``.
    embedded_sections: tuple[str, ...] = ()
    #: DT_NEEDED entries of a linked ELF file (``libcudart.so.13`` says which CUDA runtime it loads).
    needed: tuple[str, ...] = ()
    #: How many embedded fatbins were found when ``modules`` keeps one per distinct arch list of them
    #: (:meth:`with_embedded_summary`); 0 when every embedded fatbin is listed.
    embedded_total: int = 0
    #: The driver entry points the file imports to load modules from memory (``cuModuleLoadData``,
    #: ``cuLibraryLoadData``...): the evidence that its data sections hold modules it loads itself.
    module_loaders: tuple[str, ...] = ()
    #: Where the facts rest on a fallback rather than a whole read (a stream whose section table was out
    #: of reach, a member cut short): each says what was assumed.  Verdicts on these facts say so.
    fallbacks: tuple[str, ...] = ()

    def with_embedded_summary(self) -> BinaryFacts:
        """These facts with the embedded fatbins reduced to one per distinct arch list (and their total).

        A library that loads its own fatbins picks one for the GPU, so a verdict needs their arch lists,
        not each of cuFFT's 23,983 headers; the summary keeps a cached verdict input small.
        """
        embedded = [m for m in self.modules if m.embedded and not m.loaded]  # loaded ones: each judged
        if not embedded or self.embedded_total:
            return self
        seen: dict[tuple[tuple[EntryKind, int, ArchVariant], ...], Module] = {}
        for m in embedded:
            key = tuple(sorted({(e.kind, e.arch_number, e.variant) for e in m.entries}))
            seen.setdefault(key, m)
        kept = tuple(m for m in self.modules if not m.embedded or m.loaded) + tuple(seen.values())
        return replace(self, modules=kept, embedded_total=len(embedded))

    @property
    def entries(self) -> tuple[FatbinEntry, ...]:
        """Every entry of every module, relocatable ones included."""
        return tuple(e for m in self.modules for e in m.entries)

    @property
    def runtime_modules(self) -> tuple[Module, ...]:
        """The modules the CUDA runtime registers and loads (``.nv_fatbin``, or a raw file)."""
        return tuple(m for m in self.modules if m.section in REGISTERED_SECTIONS)

    @property
    def loaded_modules(self) -> tuple[Module, ...]:
        """Modules the library loads itself, found because it imports the driver's module loader."""
        return tuple(m for m in self.modules if m.loaded)

    @property
    def embedded_modules(self) -> tuple[Module, ...]:
        """Fatbins the library loads itself from data sections (found with ``embedded=True``)."""
        return tuple(m for m in self.modules if m.embedded)

    @property
    def has_device_code(self) -> bool:
        """Whether any module holds at least one entry (members included)."""
        return bool(self.entries) or any(m.has_device_code for m in self.members)


def arch_sort_key(name: str) -> tuple[int, int, str]:
    """Order arch names as :attr:`FatbinEntry.arch_name` writes them, ``sm_80 < sm_90 < sm_90a < sm_100f <
    compute_75``: SASS first, by number then suffix (every listing of archs, from coverage to reports)."""
    kind, _, rest = name.partition("_")
    digits = "".join(ch for ch in rest if ch.isdigit())
    return ({"sm": 0, "compute": 1, "lto": 2}.get(kind, 3), int(digits or 0), rest)
