"""AOTInductor ``.pt2`` packages: which device they were compiled for, and whether they can run.

A ``.pt2`` is a zip.  AOTInductor writes, per model, ``data/aotinductor/<model>/`` holding the
model shared object (``*.so``), the kernel cubins (``*.cubin``, for CUDA) and
``<stem>_metadata.json`` whose ``AOTI_DEVICE_KEY`` names the device type the code was compiled
for (``cpu`` or ``cuda``) and ``AOTI_COMPUTE_CAPABILITY`` the compiling GPU (torch
``_inductor/codecache.py``).  Seed 003 (torchchat): a CUDA package run by a CPU runner, inputs on
the wrong device, no cubin directory -> ``CUDA error: invalid argument``.  Nothing is loaded or run:
members are read as bytes, like a wheel's (``wheel.read_member_facts``), and a corrupt member, metadata
file included, is that member's ``unreadable`` item.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field

from cudafit.binary import BinaryFacts, EntryKind
from cudafit.targets.interface import PathTarget, ScanItem, error_item
from cudafit.targets.wheel import read_member_facts
from cudafit.targets.wheel_members import ARCHIVE_OPEN_ERRORS, MEMBER_READ_ERRORS, describe_error

__all__ = ["Pt2Model", "Pt2Report", "Pt2Target", "inspect_pt2"]

_AOTI = "aotinductor/"
#: A member fails like a wheel's, or its JSON metadata nests too deep for ``json`` (RecursionError).
_PT2_MEMBER_ERRORS: tuple[type[BaseException], ...] = (*MEMBER_READ_ERRORS, RecursionError)


@dataclass(frozen=True)
class Pt2Model:
    """One AOTInductor model inside a package."""

    name: str
    device: str | None
    compute_capability: str | None
    shared_objects: tuple[str, ...]
    cubins: tuple[str, ...]
    cubin_archs: tuple[str, ...]
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Pt2Report:
    """What a ``.pt2`` package needs in order to run, and what is wrong with running it as intended."""

    path: str
    models: tuple[Pt2Model, ...]
    problems: tuple[str, ...]
    fixes: tuple[str, ...]
    items: tuple[ScanItem, ...]

    @property
    def device(self) -> str | None:
        """The device type of the (first) model."""
        return self.models[0].device if self.models else None


@dataclass
class _Acc:
    shared_objects: list[str] = field(default_factory=list)
    cubins: list[str] = field(default_factory=list)
    meta: dict[str, str] = field(default_factory=dict)
    archs: set[str] = field(default_factory=set)


def _model_of(member: str) -> str | None:
    idx = member.find(_AOTI)
    if idx < 0:
        return None
    rest = member[idx + len(_AOTI) :]
    return rest.split("/", 1)[0] if "/" in rest else None


def inspect_pt2(path: str, intended_device: str | None = None) -> Pt2Report:
    """Read a ``.pt2`` package; ``intended_device`` ("cpu"/"cuda") is how the user plans to run it."""
    try:
        zf = zipfile.ZipFile(path)
    except ARCHIVE_OPEN_ERRORS as err:
        item = error_item(path, f"not a readable .pt2 package: {err}", "bad-pt2")
        return Pt2Report(path, (), (f"unreadable package: {err}",), (), (item,))
    models: dict[str, _Acc] = {}
    items: list[ScanItem] = []
    with zf:
        for info in zf.infolist():
            name = _model_of(info.filename)
            if name is None or info.filename.endswith("/"):
                continue
            entry = models.setdefault(name, _Acc())
            lower = info.filename.lower()
            member = f"{path}!{info.filename}"
            try:
                if lower.endswith("_metadata.json") and info.file_size < 1 << 20:
                    with zf.open(info) as fh:
                        meta = json.loads(fh.read(1 << 20).decode("utf-8", "replace"))
                    if isinstance(meta, dict):
                        entry.meta = {str(k): str(v) for k, v in meta.items()}
                elif lower.endswith((".so", ".cubin", ".fatbin", ".ptx")):
                    facts = read_member_facts(zf, info, member)
                    if lower.endswith(".so"):
                        entry.shared_objects.append(info.filename)
                    else:
                        entry.cubins.append(info.filename)
                    entry.archs.update(_archs(facts))
                    items.append(
                        ScanItem(package=f"pt2:{name}", version=None, path=member, facts=facts, every_kernel_used=True)
                    )
            except _PT2_MEMBER_ERRORS as err:
                why = f"unreadable member: {describe_error(err)}"
                items.append(error_item(member, why, "bad-member", package=f"pt2:{name}"))
    result = []
    for name, e in sorted(models.items()):
        result.append(
            Pt2Model(
                name=name,
                device=e.meta.get("AOTI_DEVICE_KEY"),
                compute_capability=e.meta.get("AOTI_COMPUTE_CAPABILITY"),
                shared_objects=tuple(e.shared_objects),
                cubins=tuple(e.cubins),
                cubin_archs=tuple(sorted(e.archs)),
                metadata=e.meta,
            )
        )
    problems, fixes = _diagnose(result, intended_device)
    return Pt2Report(path, tuple(result), tuple(problems), tuple(fixes), tuple(items))


def _archs(facts: BinaryFacts) -> set[str]:
    return {e.arch_name for m in facts.runtime_modules for e in m.entries if e.kind in (EntryKind.SASS, EntryKind.PTX)}


def _diagnose(models: list[Pt2Model], intended: str | None) -> tuple[list[str], list[str]]:
    problems: list[str] = []
    fixes: list[str] = []
    if not models:
        problems.append("no AOTInductor model (data/aotinductor/<model>/) in the package")
        return problems, fixes
    for m in models:
        if m.device is None:
            problems.append(f"model {m.name}: no *_metadata.json with AOTI_DEVICE_KEY; the target device is unknown")
        if not m.shared_objects:
            problems.append(f"model {m.name}: no compiled model shared object (*.so)")
        if m.device == "cuda" and not m.cubins and not m.cubin_archs:
            problems.append(f"model {m.name}: compiled for CUDA but the package holds no cubins for its kernels")
            fixes.append("re-export with torch._inductor.aoti_compile_and_package(...) so the cubins are packaged")
        if intended and m.device and intended.split(":")[0] != m.device:
            problems.append(
                f"model {m.name}: compiled for {m.device} but to be run on {intended}: the runner and the inputs "
                f"must use the device the package was compiled for (seed 003: 'CUDA error: invalid argument')"
            )
            if m.device == "cuda":
                fixes.append(
                    "use the CUDA runner (torch._inductor.aoti_load_package on a CUDA machine, "
                    "device_index set) and move the inputs to cuda: x.to('cuda')"
                )
            else:
                fixes.append(
                    f"recompile the model for {intended} (torch._inductor.aoti_compile_and_package with "
                    f"inputs on {intended})"
                )
    return problems, fixes


class Pt2Target(PathTarget):
    """The binaries of a ``.pt2`` package, for ``scan``/``check``."""

    def describe(self) -> str:
        return f"AOTInductor package {os.path.basename(self.path)}"

    def iter_items(self) -> Iterator[ScanItem]:
        yield from inspect_pt2(self.path).items
