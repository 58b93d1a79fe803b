"""Module roles: is a module without code for a GPU a hole, or code the library never launches there?

A library is a set of modules (one fatbin per translation unit).  The CUDA driver loads a module
and resolves its kernels when one of them is first used (lazy loading, the default since CUDA 12.2;
and ``cudaErrorNoKernelImageForDevice`` is raised at the launch, not at registration), so a module
that has no code for a GPU hurts only if the library launches one of its kernels there.  Static
analysis cannot see the library's dispatch, so the roles below are decided from evidence in the
binary — arch lists, the library's own general build list, kernel names — and calibrated on real
libraries (the table in docs/rules.md and ``tests/test_roles_libraries.py``):

``gated``
    every entry is an ``a``/``f`` target of other GPUs (decided by the engine).
``kernel-less``
    the module holds no ``__global__`` function (nvcc's device-link/registration modules,
    translation units without kernels): it launches nothing.
``specialised``
    code for other GPUs that the library dispatches there: a module built for a single GPU
    generation (per-arch dispatch, as cuBLAS/cuDNN do), a module built only for GPUs newer than
    this one while the file has code for this one (minimum-arch paths: bf16, ``cp.async``...),
    a module whose arch list is not the library's general build list with this GPU removed, or
    one whose every kernel names another architecture (``sm80_xmma_...``, ``..._sm90``,
    ``cutlass::arch::Sm100``).
``hole``
    code the library plausibly launches here: the module's arch list is the library's general
    build list minus this GPU (it covers both sides, or stops just short of it), or nothing in the
    file has code for this GPU (the file fails; when other files of the package have code, the engine
    reports the file as ``hole-file-without-code``).

Only modules whose role is in question have their kernel names read (one cubin decompressed),
through the ``kernel_names`` callback the caller supplies (the rules layer does no I/O).
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from cudafit.binary.facts import EntryKind, FatbinEntry, Module
from cudafit.model import ArchVariant, ComputeCapability
from cudafit.rules import tables
from cudafit.rules.reasons import Reason, reason

__all__ = [
    "FileRoles",
    "KernelNames",
    "Role",
    "RoleDecision",
    "classify_modules",
    "kernel_arch_tags",
]

#: When a whole file has no code for a GPU, only modules up to this payload size are decompressed to
#: tell registration stubs (a few KiB, no kernels) from real modules.
STUB_MAX_BYTES = 64 * 1024

#: Looks up the ``__global__`` functions of a module (decompressing one of its cubins); ``None``
#: when they cannot be read (a member of a large wheel, a PTX-only module).
KernelNames = Callable[[Module], "tuple[str, ...] | None"]


class Role(str, enum.Enum):
    """What a module without usable code for a GPU is for."""

    SPECIALISED = "specialised"
    KERNEL_LESS = "kernel-less"
    HOLE = "hole"


@dataclass(frozen=True)
class RoleDecision:
    """A role, the reason that decided it, and the kernel names looked at (when they were)."""

    role: Role
    reason: Reason
    kernels: tuple[str, ...] | None = None


# Arch tags in kernel names, as CUTLASS/xmma/cuBLAS/FlashAttention spell them: sm80_xmma_..., ..._sm90,
# sm_90a, SM100_..., cutlass::arch::Sm90 (mangled "4arch4Sm90"), cutlass_80_simt_..., and the
# generation words cuBLAS uses (volta_, turing_, ampere_, ...).  A tag must not be part of a longer
# identifier ("asm80" is not a tag) nor a longer number ("sm_1000").
_TAG = re.compile(
    r"(?:(?<![A-Za-z0-9])|(?<=_))(?:sm|SM|Sm)_?(\d{2,3})[af]?(?![0-9])"  # sm80_, _sm90, SM100_, sm_90a
    r"|(?<=[a-z0-9])Sm(\d{2,3})[af]?(?![0-9])"  # fmhaSm100fKernel, mangled cutlass::arch::Sm90 (4Sm90)
    r"|(?<![A-Za-z])cutlass_(\d{2,3})_"  # cutlass_80_simt_sgemm (mangled names prefix lengths: 48cutlass_)
    r"|(?<![A-Za-z])(?i:(volta|turing|ampere|ada|hopper|blackwell))_"
)
_GENERATIONS = {"volta": 70, "turing": 75, "ampere": 80, "ada": 89, "hopper": 90, "blackwell": 100}


@functools.lru_cache(maxsize=65536)
def kernel_arch_tags(name: str) -> frozenset[int]:
    """The architectures a kernel's (mangled or demangled) name names: ``sm80_xmma_gemm`` -> {80}."""
    out: set[int] = set()
    for m in _TAG.finditer(name):
        if m.group(4):
            out.add(_GENERATIONS[m.group(4).lower()])
        else:
            out.add(int(next(g for g in m.groups()[:3] if g)))
    # Only real architectures: CUB's namespace spells its build list as SM_750_800_... (not a tag).
    return frozenset(out & _known_arch_numbers())


@functools.lru_cache(maxsize=1)
def _known_arch_numbers() -> frozenset[int]:
    return frozenset(cc.major * 10 + cc.minor for cc in tables.iter_compute_capabilities())


Signature = tuple[tuple[str, int, str], ...]


def _code(module: Module) -> tuple[FatbinEntry, ...]:
    return tuple(e for e in module.entries if e.kind in (EntryKind.SASS, EntryKind.PTX))


def _signature(module: Module) -> Signature:
    """The module's code as (kind, arch number, variant), sorted: what its role depends on."""
    return tuple(sorted({(e.kind.value, e.arch_number, e.variant.value) for e in _code(module)}))


@functools.lru_cache(maxsize=4096)
def _sass_coverage(signature: Signature) -> frozenset[ComputeCapability]:
    """The compute capabilities (of the rules table) the module's SASS runs on natively.

    A build list is a list of SASS targets (``-gencode ...,code=sm_XY``); PTX is its forward tail and
    would make a ``compute_75`` registration stub look like the broadest build of all.
    """
    out: set[ComputeCapability] = set()
    for cc in tables.iter_compute_capabilities():
        for kind, number, variant in signature:
            if kind != "sass":
                continue
            target = ComputeCapability.from_arch_number(number)
            if variant == ArchVariant.ARCH_SPECIFIC.value:
                ok = target == cc
            elif variant == ArchVariant.FAMILY.value:
                ok = cc in tables.family_members(number)
            else:
                ok = target.major == cc.major and target.minor <= cc.minor and (target == cc or not tables.is_tegra(cc))
            if ok:
                out.add(cc)
                break
    return frozenset(out)


@functools.lru_cache(maxsize=1024)
def _general_builds(signatures: frozenset[Signature]) -> frozenset[Signature]:
    """The file's general build lists: module signatures whose SASS coverage no other module's
    coverage strictly contains (per-arch modules and narrower builds are not general)."""
    covs = {s: _sass_coverage(s) for s in signatures}
    return frozenset(s for s, c in covs.items() if c and not any(c < other for other in covs.values()))


@functools.lru_cache(maxsize=4096)
def _arch_text(sig: Signature) -> str:
    """``sm_75, sm_80, compute_80`` for a signature: SASS targets first, then PTX."""
    sass = [f"sm_{n}{v}" for k, n, v in sig if k == "sass"]
    ptx = [f"compute_{n}{v}" for k, n, v in sig if k == "ptx"]
    return ", ".join(sass + ptx)


class FileRoles:
    """One file's loadable modules, prepared once; :meth:`classify` decides roles for one GPU at a time.

    Kernel names are looked up at most once per module, whatever the number of GPUs asked about.
    """

    def __init__(self, modules: Sequence[Module], kernel_names: KernelNames | None = None) -> None:
        self.modules = modules
        self.kernel_names = kernel_names
        self._names: dict[int, tuple[str, ...] | None] = {}
        self._signatures: list[Signature] | None = None
        self._general: frozenset[Signature] | None = None
        self._sizes: list[int] | None = None

    @property
    def sizes(self) -> list[int]:
        """Each module's payload bytes (as stored), the cost of looking at its kernels."""
        if self._sizes is None:
            self._sizes = [sum(e.payload_size for e in m.entries) for m in self.modules]
        return self._sizes

    @property
    def signatures(self) -> list[Signature]:
        """Each module's code signature (computed on first use)."""
        if self._signatures is None:
            self._signatures = [_signature(m) for m in self.modules]
        return self._signatures

    def names(self, i: int) -> tuple[str, ...] | None:
        """The kernels of module ``i`` (``None`` when they cannot be read)."""
        if i not in self._names:
            self._names[i] = self.kernel_names(self.modules[i]) if self.kernel_names is not None else None
        return self._names[i]

    def _smallest_first(self, flags: Sequence[bool]) -> list[int]:
        # Stubs are tiny: trying the smallest first keeps each lookup a small decompression.
        return sorted(
            (i for i, ok in enumerate(flags) if ok), key=lambda i: sum(e.payload_size for e in self.modules[i].entries)
        )

    def _kernels_among(self, flags: Sequence[bool]) -> bool:
        """Whether a flagged module has kernels (or unknown names): it stops at the first such module."""
        return any(self.names(i) != () for i in self._smallest_first(flags))

    def _serving_stubs(self, serving: Sequence[bool]) -> list[int] | None:
        """``None`` when a module with kernels (or unknown names) serves the GPU; else the serving
        modules, all kernel-less (registration stubs are not code for the GPU)."""
        if self._kernels_among(serving):
            return None
        return self._smallest_first(serving)

    def classify(
        self,
        serving: Sequence[bool],
        undecided: Iterable[int],
        cc: ComputeCapability,
        *,
        jit_only: Iterable[int] = (),
        native: Sequence[bool] | None = None,
    ) -> dict[int, RoleDecision]:
        """Roles of the ``undecided`` modules (no usable code for ``cc``, not gated).

        ``serving[i]`` says whether module ``i`` has usable code for ``cc`` (the engine's verdict).
        When only kernel-less modules serve ``cc``, they are returned too, as kernel-less.
        ``jit_only`` modules run here only by JIT; when the file has native code for ``cc`` (``native``),
        those that are specialised for other GPUs (or kernel-less) are returned as such: their JIT
        never happens unless the library dispatches them here.  The others keep their JIT verdict.
        """
        signatures = self.signatures
        out: dict[int, RoleDecision] = {}
        todo = list(undecided)
        jit = list(jit_only)
        if not todo and not jit:
            return out
        stubs = self._serving_stubs(serving)
        for k in stubs or ():
            out[k] = _kernel_less(_arch_text(signatures[k]))
        if stubs is not None:  # nothing with kernels serves cc: the file fails, every module is a hole
            holes: dict[Signature, RoleDecision] = {}
            for i in todo:
                out[i] = self._file_gap(i, cc, holes)
            return out
        context = _Context(self, serving, cc)
        for i in todo:
            out[i] = context.decide(i) or context.hole(i)
        if jit and native is not None and self._kernels_among(native):
            # The general build lists are those that serve natively: a JIT module is not its own reference.
            jit_context = _Context(self, native, cc)
            for i in jit:
                d = jit_context.decide(i)
                if d is not None:
                    out[i] = d
        return out

    def _file_gap(self, i: int, cc: ComputeCapability, holes: dict[Signature, RoleDecision]) -> RoleDecision:
        """A module of a file that has no code for ``cc`` at all: a hole, unless a small module shows no
        kernels (registration stubs are a few KiB; larger modules are not decompressed for this)."""
        sig = self.signatures[i]
        if self.sizes[i] <= STUB_MAX_BYTES and self.names(i) == ():
            return _kernel_less(_arch_text(sig))
        hole = holes.get(sig)
        if hole is None:
            archs = _arch_text(sig)
            msg = f"no code for {cc}: module has {archs}, and nothing in this file serves {cc} (error 209)"
            hole = holes[sig] = RoleDecision(Role.HOLE, reason("no-compatible-code", msg))
        return hole


class _Context:
    """Arch-only decisions of one file for one GPU, made once per signature."""

    def __init__(self, roles: FileRoles, serving: Sequence[bool], cc: ComputeCapability) -> None:
        self.roles = roles
        self.serving = serving
        self.cc = cc
        self.number = cc.major * 10 + cc.minor
        self.by_signature: dict[Signature, RoleDecision | None] = {}
        self._general: list[frozenset[ComputeCapability]] | None = None

    def general(self) -> list[frozenset[ComputeCapability]]:
        if self._general is None:
            roles = self.roles
            if roles._general is None:
                roles._general = _general_builds(frozenset(roles.signatures))
            serving_sigs = {sig for sig, ok in zip(roles.signatures, self.serving, strict=True) if ok}
            self._general = [_sass_coverage(sig) for sig in roles._general if sig in serving_sigs]
        return self._general

    def by_archs(self, sig: Signature) -> RoleDecision | None:
        """The decision the arch list alone makes (``None``: the module looks like a hole)."""
        if sig in self.by_signature:
            return self.by_signature[sig]
        cc = self.cc
        archs = _arch_text(sig)
        # The SASS list is the build list; PTX (a forward-compat tail, or a JIT path here) only when there is none.
        numbers = [n for k, n, _v in sig if k == "sass"] or [n for _k, n, _v in sig]
        decision: RoleDecision | None = None
        if len({n // 10 for n in numbers}) == 1:
            msg = f"module built only for {archs} (one GPU generation): the library runs it on those GPUs"
            decision = RoleDecision(Role.SPECIALISED, reason("specialised-generation", msg))
        elif min(numbers) > self.number:
            msg = f"module built only for newer GPUs ({archs}) while the file has code for {cc}"
            decision = RoleDecision(Role.SPECIALISED, reason("specialised-newer", msg))
        else:
            mine = _sass_coverage(sig)
            if not any(_without_generation(g, cc) and _without_generation(g, cc) <= mine for g in self.general()):
                msg = f"module built for {archs}: not the library's general build list without {cc}"
                decision = RoleDecision(Role.SPECIALISED, reason("specialised-other-build", msg))
        self.by_signature[sig] = decision
        return decision

    def decide(self, i: int) -> RoleDecision | None:
        """The module's role, or ``None`` when it looks like the general build list minus this GPU."""
        sig = self.roles.signatures[i]
        decision = self.by_archs(sig)
        if decision is not None:
            return decision
        names = self.roles.names(i)
        archs = _arch_text(sig)
        if names == ():
            return _kernel_less(archs)
        if names and all(kernel_arch_tags(k) and self.number not in kernel_arch_tags(k) for k in names):
            tags = ", ".join(f"sm{t}" for t in sorted({t for k in names for t in kernel_arch_tags(k)}))
            msg = f"every kernel of the module ({len(names)}) names another architecture ({tags})"
            return RoleDecision(Role.SPECIALISED, reason("specialised-named", msg), names)
        return None

    def hole(self, i: int) -> RoleDecision:
        """A hole: the general build list minus this GPU, and nothing in the kernel names says otherwise."""
        archs = _arch_text(self.roles.signatures[i])
        msg = f"module built for {archs}: the library's general build list without {self.cc} (no kernel image)"
        return RoleDecision(Role.HOLE, reason("hole-build-skips-gpu", msg), self.roles.names(i))


def classify_modules(
    modules: Sequence[Module],
    serving: Sequence[bool],
    undecided: Iterable[int],
    cc: ComputeCapability,
    kernel_names: KernelNames | None = None,
) -> dict[int, RoleDecision]:
    """Roles of one file's ``undecided`` modules for ``cc`` (see :class:`FileRoles`)."""
    return FileRoles(modules, kernel_names).classify(serving, undecided, cc)


def _without_generation(coverage: frozenset[ComputeCapability], cc: ComputeCapability) -> frozenset[ComputeCapability]:
    """The coverage minus the GPU's own generation: what a build list minus this GPU still covers."""
    return frozenset(c for c in coverage if c.major != cc.major)


@functools.lru_cache(maxsize=1024)
def _kernel_less(archs: str) -> RoleDecision:
    return RoleDecision(
        Role.KERNEL_LESS, reason("kernel-less-module", f"module ({archs}) has no kernels: it launches nothing"), ()
    )
