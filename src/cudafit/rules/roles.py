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

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from cudafit.binary.facts import Module
from cudafit.model import ArchVariant, ComputeCapability
from cudafit.rules import compat, tables
from cudafit.rules.decide import code_of
from cudafit.rules.reasons import Reason, reason
from cudafit.rules.status import ModuleRole, Status

__all__ = [
    "FileRoles",
    "KernelNames",
    "RoleDecision",
    "classify_file",
    "classify_helper_file",
    "kernel_arch_tags",
]

#: When a whole file has no code for a GPU, only modules up to this payload size are decompressed to
#: tell registration stubs (a few KiB, no kernels) from real modules.
STUB_MAX_BYTES = 64 * 1024

#: A file's modules whose kernels name no architecture are helpers of its named kernels when they are at most one
#: in this many of its kernel modules (docs/rules.md, *Files*).
HELPER_SHARE = 10

#: Looks up the ``__global__`` functions of a module (decompressing one of its cubins); ``None``
#: when they cannot be read (a member of a large wheel, a PTX-only module).
KernelNames = Callable[[Module], "tuple[str, ...] | None"]


@dataclass(frozen=True)
class RoleDecision:
    """A role, the reason that decided it, and the kernel names looked at (when they were)."""

    role: ModuleRole
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


def _signature(module: Module) -> Signature:
    """The module's code as (kind, arch number, variant), sorted: what its role depends on."""
    return tuple(sorted({(e.kind.value, e.arch_number, e.variant.value) for e in code_of(module)}))


@functools.lru_cache(maxsize=4096)
def _sass_coverage(signature: Signature) -> frozenset[ComputeCapability]:
    """The compute capabilities (of the rules table) the module's SASS runs on natively.

    A build list is a list of SASS targets (``-gencode ...,code=sm_XY``); PTX is its forward tail and
    would make a ``compute_75`` registration stub look like the broadest build of all.
    """
    out: set[ComputeCapability] = set()
    for cc in tables.iter_compute_capabilities():
        for kind, number, variant in signature:
            if kind != "sass" or number < 10:  # arch 0-9 names no compute capability (FatbinEntry): runs nowhere
                continue
            if compat.code_runs_on(compat.CodeKind.SASS, number, ArchVariant(variant), cc)[0]:
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
    """One file's loadable modules grouped by arch list, prepared once; :meth:`classify` decides roles
    for one GPU at a time, per group, and per module only where kernel names decide.

    Kernel names are looked up at most once per module, whatever the number of GPUs asked about.
    """

    def __init__(
        self,
        modules: Sequence[Module],
        kernel_names: KernelNames | None = None,
        groups: Sequence[Sequence[int]] | None = None,
    ) -> None:
        self.modules = modules
        self.kernel_names = kernel_names
        self._names: dict[int, tuple[str, ...] | None] = {}
        if groups is None:
            by_sig: dict[Signature, list[int]] = {}
            for i, m in enumerate(modules):
                by_sig.setdefault(_signature(m), []).append(i)
            groups = list(by_sig.values())
        #: Module indices per group (one group per distinct arch list) and each group's signature.
        self.groups: list[Sequence[int]] = list(groups)
        self.group_signatures: list[Signature] = [_signature(modules[g[0]]) for g in self.groups]
        self._general: frozenset[Signature] | None = None
        self._sizes: list[int] | None = None
        self._small: list[list[int]] | None = None

    @property
    def sizes(self) -> list[int]:
        """Each module's payload bytes (as stored), the cost of looking at its kernels."""
        if self._sizes is None:
            self._sizes = [sum(e.payload_size for e in m.entries) for m in self.modules]
        return self._sizes

    def names(self, i: int) -> tuple[str, ...] | None:
        """The kernels of module ``i`` (``None`` when they cannot be read)."""
        if i not in self._names:
            self._names[i] = self.kernel_names(self.modules[i]) if self.kernel_names is not None else None
        return self._names[i]

    def _kernels_among(self, group_ids: Iterable[int]) -> list[int] | None:
        """``None`` when a module of these groups has kernels (or unknown names); else all their modules,
        kernel-less.  Stubs are tiny: the smallest are tried first, each lookup a small decompression."""
        sizes = self.sizes
        groups = list(group_ids)
        # One module per arch list first: a library's stubs share arch lists (cuBLASLt has 864 kernel-less
        # sm_90a/sm_120f modules), so looking at every member before another list could cost hundreds.
        firsts = sorted((min(self.groups[g], key=sizes.__getitem__) for g in groups), key=sizes.__getitem__)
        if any(self.names(i) != () for i in firsts):
            return None
        members = sorted((i for g in groups for i in self.groups[g]), key=sizes.__getitem__)
        if any(self.names(i) != () for i in members):
            return None
        return members

    def _small_members(self, g: int) -> list[int]:
        if self._small is None:
            sizes = self.sizes
            self._small = [[i for i in grp if sizes[i] <= STUB_MAX_BYTES] for grp in self.groups]
        return self._small[g]

    def classify(
        self, group_status: Sequence[Status], cc: ComputeCapability
    ) -> tuple[dict[int, RoleDecision], dict[int, RoleDecision]]:
        """Roles for one GPU: (decisions by group, decisions by module that differ from their group's).

        ``group_status[g]`` is the engine's verdict on group ``g``: ``native``, ``jit``, ``fails`` (no
        usable code, not gated) or anything else.  ``fails`` groups get a role; ``jit`` groups are
        specialised (or kernel-less) when the file runs natively here and their arch list says so
        (their JIT never happens unless the library dispatches them here), else they keep their JIT.
        When only kernel-less modules serve ``cc``, those modules are returned as kernel-less.
        """
        by_group: dict[int, RoleDecision] = {}
        by_module: dict[int, RoleDecision] = {}
        todo = [g for g, st in enumerate(group_status) if st is Status.FAILS]
        jit = [g for g, st in enumerate(group_status) if st is Status.JIT]
        if not todo and not jit:
            return by_group, by_module
        serving = [g for g, st in enumerate(group_status) if st in (Status.NATIVE, Status.JIT)]
        stubs = self._kernels_among(serving)
        if stubs is not None:  # nothing with kernels serves cc: the file fails, every module is a hole
            for i in stubs:
                by_module[i] = _kernel_less(_arch_text(_signature(self.modules[i])))
            for g in todo:
                archs = _arch_text(self.group_signatures[g])
                msg = f"no code for {cc}: module has {archs}, and nothing in this file serves {cc} (error 209)"
                by_group[g] = RoleDecision(ModuleRole.HOLE, reason("no-compatible-code", msg))
                for i in self._small_members(g):  # registration stubs: a few KiB, no kernels
                    if self.names(i) == ():
                        by_module[i] = _kernel_less(archs)
            return by_group, by_module
        self._decide(_Context(self, serving, cc), todo, by_group, by_module, holes=True)
        native = [g for g, st in enumerate(group_status) if st is Status.NATIVE]
        if jit and native and self._kernels_among(native) is None:
            # The general build lists are those that serve natively: a JIT module is not its own reference.
            self._decide(_Context(self, native, cc), jit, by_group, by_module, holes=False)
        return by_group, by_module

    def _decide(
        self,
        context: _Context,
        group_ids: Sequence[int],
        by_group: dict[int, RoleDecision],
        by_module: dict[int, RoleDecision],
        *,
        holes: bool,
    ) -> None:
        """Roles of ``group_ids`` by arch list, else per module by kernel names; what neither decides is a hole
        when ``holes`` (groups without code), else keeps its verdict (groups that JIT)."""
        for g in group_ids:
            decision = context.by_archs(g)
            if decision is not None:
                by_group[g] = decision
                continue
            if holes:
                by_group[g] = context.hole(g)
            for i in self.groups[g]:
                d = context.by_names(g, i)
                if d is not None:
                    by_module[i] = d
                elif holes:
                    by_module[i] = context.hole(g, self.names(i))


class _Context:
    """Decisions of one file for one GPU: by arch list per group, by kernel names per module."""

    def __init__(self, roles: FileRoles, serving: Sequence[int], cc: ComputeCapability) -> None:
        self.roles = roles
        self.serving = serving
        self.cc = cc
        self.number = cc.major * 10 + cc.minor
        self._general: list[frozenset[ComputeCapability]] | None = None

    def general(self) -> list[frozenset[ComputeCapability]]:
        """The SASS coverages of the file's general build lists that serve this GPU."""
        if self._general is None:
            roles = self.roles
            if roles._general is None:
                roles._general = _general_builds(frozenset(roles.group_signatures))
            serving_sigs = {roles.group_signatures[g] for g in self.serving}
            self._general = [_sass_coverage(sig) for sig in roles._general if sig in serving_sigs]
        return self._general

    def by_archs(self, g: int) -> RoleDecision | None:
        """The decision the arch list alone makes (``None``: the group looks like a hole)."""
        sig = self.roles.group_signatures[g]
        cc = self.cc
        archs = _arch_text(sig)
        # The SASS list is the build list; PTX (a forward-compat tail, or a JIT path here) only when there is none.
        numbers = [n for k, n, _v in sig if k == "sass"] or [n for _k, n, _v in sig]
        if len({n // 10 for n in numbers}) == 1:
            msg = f"module built only for {archs} (one GPU generation): the library runs it on those GPUs"
            return RoleDecision(ModuleRole.SPECIALISED, reason("specialised-generation", msg))
        if min(numbers) > self.number:
            msg = f"module built only for newer GPUs ({archs}) while the file has code for {cc}"
            return RoleDecision(ModuleRole.SPECIALISED, reason("specialised-newer", msg))
        mine = _sass_coverage(sig)
        # A module the library loads itself is loaded because the library needs its kernels here, not lazily
        # when one is launched: another build list is no sign of a specialisation (its names still may be).
        if self.roles.modules[self.roles.groups[g][0]].loaded:
            return None
        if not any(_without_generation(gen, cc) and _without_generation(gen, cc) <= mine for gen in self.general()):
            msg = f"module built for {archs}: not the library's general build list without {cc}"
            return RoleDecision(ModuleRole.SPECIALISED, reason("specialised-other-build", msg))
        return None

    def by_names(self, g: int, i: int) -> RoleDecision | None:
        """Module ``i`` of group ``g`` by its kernel names: kernel-less, or every kernel tagged for another
        architecture; ``None`` when the names say nothing (or cannot be read)."""
        names = self.roles.names(i)
        if names == ():
            return _kernel_less(_arch_text(self.roles.group_signatures[g]))
        if names and all(kernel_arch_tags(k) and self.number not in kernel_arch_tags(k) for k in names):
            tags = ", ".join(f"sm{t}" for t in sorted({t for k in names for t in kernel_arch_tags(k)}))
            msg = f"every kernel of the module ({len(names)}) names another architecture ({tags})"
            return RoleDecision(ModuleRole.SPECIALISED, reason("specialised-named", msg), names)
        return None

    def hole(self, g: int, names: tuple[str, ...] | None = None) -> RoleDecision:
        """A hole: the general build list minus this GPU, and nothing in the kernel names says otherwise."""
        archs = _arch_text(self.roles.group_signatures[g])
        if self.roles.modules[self.roles.groups[g][0]].loaded:
            msg = f"module the library loads itself, built for {archs}: no code for {self.cc}, so loading it fails"
            return RoleDecision(ModuleRole.HOLE, reason("hole-library-loaded", msg), names)
        msg = f"module built for {archs}: the library's general build list without {self.cc} (no kernel image)"
        return RoleDecision(ModuleRole.HOLE, reason("hole-build-skips-gpu", msg), names)


def _without_generation(coverage: frozenset[ComputeCapability], cc: ComputeCapability) -> frozenset[ComputeCapability]:
    """The coverage minus the GPU's own generation: what a build list minus this GPU still covers."""
    return frozenset(c for c in coverage if c.major != cc.major)


@functools.lru_cache(maxsize=1024)
def _kernel_less(archs: str) -> RoleDecision:
    return RoleDecision(
        ModuleRole.KERNEL_LESS,
        reason("kernel-less-module", f"module ({archs}) has no kernels: it launches nothing"),
        (),
    )


def classify_file(file_roles: FileRoles, group_status: Sequence[Status], cc: ComputeCapability) -> RoleDecision | None:
    """The role of a whole file without code for ``cc`` beside files (or Python code) of its package that run:
    the module roles applied at file level (docs/rules.md, *Files*), to files built only for GPUs newer than
    this one (minimum-architecture paths: FlashAttention 2 on 8.0+); a file with code for older GPUs but not
    this one is a build that skipped it (seed 001), a hole.

    The file is information (a :class:`RoleDecision` for it) when each of its modules without code is built
    for one GPU generation, or has no kernels / only kernels named for other architectures; ``None``: a hole
    file.  Helper modules (kernels that name no architecture, at most one in ``HELPER_SHARE`` of the file's
    kernel modules: FlashAttention 3's ``prepare_varlen_num_blocks_kernel``) follow the kernels they prepare.
    A file is never compared with another file's build list: a package's core library (torch's
    ``libtorch_cuda.so``) is not a specialisation of a bundled library that happens to run (MAGMA).
    """
    number = cc.major * 10 + cc.minor
    first: RoleDecision | None = None
    named = helpers = 0
    # More helper modules than this many cannot be a minority: stop reading names (torch has 22,000 kernels).
    budget = sum(len(file_roles.groups[g]) for g, st in enumerate(group_status) if st is Status.FAILS)
    for g, status in enumerate(group_status):
        if status is not Status.FAILS:
            continue  # gated (a/f of other GPUs), or code that serves
        sig = file_roles.group_signatures[g]
        archs = _arch_text(sig)
        numbers = [n for k, n, _v in sig if k == "sass"] or [n for _k, n, _v in sig]
        if min(numbers) <= number:
            return None  # code for older GPUs without this one: a build that skipped it (seed 001), a hole
        if len({n // 10 for n in numbers}) == 1:
            msg = f"file built only for {archs} (one GPU generation): the package uses it on those GPUs"
            first = first or RoleDecision(ModuleRole.SPECIALISED, reason("specialised-file", msg))
            continue
        for i in file_roles.groups[g]:
            names = file_roles.names(i)
            if names is None:
                return None  # unknown names: a hole
            tags = [kernel_arch_tags(k) for k in names]
            if any(number in t for t in tags):
                return None  # a kernel named for this GPU: the file means to run here
            if tags and all(tags):
                named += 1
            elif tags:
                helpers += 1
                if helpers * HELPER_SHARE > budget:
                    return None  # kernels that name no architecture, more than helpers: a hole
        msg = f"file built for {archs}: its kernels name other architectures"
        first = first or RoleDecision(ModuleRole.SPECIALISED, reason("specialised-file", msg))
    if helpers * HELPER_SHARE > named:
        return None  # kernels that name no architecture, more than helpers: a hole
    return first


def classify_helper_file(file_roles: FileRoles, group_status: Sequence[Status]) -> RoleDecision | None:
    """A file that runs here only by JIT-compiling small PTX-only modules (a hardware-detection stub of a
    bundled library: no SASS for any GPU, at most ``STUB_MAX_BYTES`` each) beside files that run natively: a
    helper, information, never the reason a package is ``jit`` (docs/rules.md, *Files*); ``None`` otherwise."""
    jit = [g for g, st in enumerate(group_status) if st is Status.JIT]
    if not jit or any(st in (Status.NATIVE, Status.FAILS) for st in group_status):
        return None
    sizes = file_roles.sizes
    for g in jit:
        if any(k != "ptx" for k, _n, _v in file_roles.group_signatures[g]):
            return None
        if any(sizes[i] > STUB_MAX_BYTES for i in file_roles.groups[g]):
            return None
    archs = ", ".join(_arch_text(file_roles.group_signatures[g]) for g in jit)
    msg = f"file whose only code is small PTX-only helper module(s) ({archs}) beside files that run natively"
    return RoleDecision(ModuleRole.SPECIALISED, reason("specialised-file", msg))
