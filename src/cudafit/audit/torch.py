"""``--match-torch``: the architectures a torch build covers, read from its ``libtorch_cuda.so``.

An extension is loaded into torch's process and is used on the GPUs torch runs on; covering less
than torch means "no kernel image" in the extension on GPUs where torch itself works (seed 004:
fbgemm-gpu without sm_61 under a torch that had it).  torch is never imported: its build list is
read from the fatbins of ``torch/lib/libtorch_cuda.so`` (installed, or a member of a torch wheel
fetched with ``pip download --no-deps``), its version from ``torch/version.py`` read as text.

The build list is the plain (no ``a``/``f``) SASS and PTX targets that most of libtorch_cuda.so's
modules carry: that is what torch's ``TORCH_CUDA_ARCH_LIST`` produced.  Per-kernel extras (one
``sm_89`` module, the ``sm_90a``/``sm_100a`` kernels) are specialisations, not the build list.
"""

from __future__ import annotations

import os
import re
import sys
import zipfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from cudafit.audit.spec import Requirement, make_requirement
from cudafit.binary.facts import BinaryFacts, EntryKind
from cudafit.errors import CudafitError
from cudafit.model import ArchVariant, ComputeCapability
from cudafit.rules.ecosystem import load_ecosystem

__all__ = ["TorchBuild", "TorchError", "build_list", "find_torch_build"]

LIB = "libtorch_cuda.so"
_VERSION = re.compile(r"^\d+(\.\d+)*([.+_-]?[A-Za-z0-9.+]*)?$")


class TorchError(CudafitError):
    """The torch build to match could not be found or read (exit code 3)."""

    code = "torch-not-found"


@dataclass(frozen=True)
class TorchBuild:
    """A torch build's version and the arch list its ``libtorch_cuda.so`` was built with."""

    version: str | None
    cuda: str | None
    source: str
    sass: tuple[ComputeCapability, ...]
    ptx: tuple[ComputeCapability, ...]

    @property
    def name(self) -> str:
        """``torch 2.14.1+cu130``."""
        return f"torch {self.version}" if self.version else "torch"

    @property
    def runs_on(self) -> str:
        """``7.5 .. 12.0``: the span of its SASS build list."""
        if not self.sass:
            return "no GPU (no SASS in libtorch_cuda.so)"
        lo, hi = self.sass[0], self.sass[-1]
        return str(lo) if lo == hi else f"{lo} .. {hi}"

    def requirements(self) -> list[Requirement]:
        """Each build-list entry as a requirement, with torch's own meaning (SASS, and PTX where it has PTX)."""
        out = [make_requirement(cc, "", "sass", form="torch-build", token=f"sm_{cc.arch_number}") for cc in self.sass]
        out += [
            make_requirement(cc, "", "ptx", form="torch-build", token=f"compute_{cc.arch_number}") for cc in self.ptx
        ]
        return out

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "version": self.version,
            "cuda": self.cuda,
            "source": self.source,
            "sass": [str(c) for c in self.sass],
            "ptx": [str(c) for c in self.ptx],
            "runs_on": self.runs_on,
        }


def build_list(facts: BinaryFacts) -> tuple[tuple[ComputeCapability, ...], tuple[ComputeCapability, ...]]:
    """(SASS, PTX) compute capabilities that at least half of the file's registered modules carry, plain only."""
    modules = [m for m in facts.runtime_modules if any(e.kind in (EntryKind.SASS, EntryKind.PTX) for e in m.entries)]
    counts: Counter[tuple[EntryKind, int]] = Counter()
    for m in modules:
        counts.update({(e.kind, e.arch_number) for e in m.entries if e.variant is ArchVariant.NONE})
    half = (len(modules) + 1) // 2

    def pick(kind: EntryKind) -> tuple[ComputeCapability, ...]:
        numbers = sorted(n for (k, n), c in counts.items() if k is kind and c >= half and n >= 10)
        return tuple(ComputeCapability.from_arch_number(n) for n in numbers)

    return pick(EntryKind.SASS), pick(EntryKind.PTX)


def _from_facts(facts: BinaryFacts, version: str | None, cuda: str | None) -> TorchBuild:
    if facts.error and not facts.modules:
        msg = f"cannot read {facts.path}: {facts.error}"
        raise TorchError(msg)
    sass, ptx = build_list(facts)
    return TorchBuild(version, cuda, facts.path, sass, ptx)


def _from_site(site: str) -> TorchBuild | None:
    from cudafit.probe.toolchains import read_torch_version
    from cudafit.targets.cache import cached_inspect

    lib = os.path.join(site, "torch", "lib", LIB)
    if not os.path.isfile(lib):
        return None
    version, cuda = read_torch_version([site])
    return _from_facts(cached_inspect(lib), version, cuda)


def _first_site(sites: Sequence[str]) -> TorchBuild | None:
    """The torch of the first site-packages (in search order) that has one."""
    for site in sites:
        found = _from_site(site)
        if found is not None:
            return found
    return None


def _from_wheel(path: str) -> TorchBuild:
    from cudafit.binary import inspect_stream
    from cudafit.probe.toolchains import torch_version_from_text
    from cudafit.targets.wheel import wheel_name_version

    try:
        with zipfile.ZipFile(path) as zf:
            names = {i.filename: i for i in zf.infolist()}
            info = names.get(f"torch/lib/{LIB}")
            if info is None:
                msg = f"{path} has no torch/lib/{LIB}: a CPU-only torch wheel? (for CUDA builds see --torch-index-url)"
                raise TorchError(msg)
            version, cuda = None, None
            if "torch/version.py" in names:
                version, cuda = torch_version_from_text(zf.read("torch/version.py")[:65536].decode("utf-8", "replace"))
            version = version or wheel_name_version(path)[1]
            with zf.open(info) as fh:
                facts = inspect_stream(fh, f"{path}!{info.filename}", info.file_size)
    except (OSError, zipfile.BadZipFile, ValueError) as err:
        msg = f"cannot read the torch wheel {path}: {err}"
        raise TorchError(msg) from err
    return _from_facts(facts, version, cuda)


def _index_args(index_url: str | None) -> list[str]:
    if not index_url:
        return []
    if re.fullmatch(r"cu\d{3}|cpu", index_url):  # shorthand for PyTorch's per-CUDA index
        index_url = load_ecosystem().pytorch_index + index_url
    return ["--index-url", index_url]


def _platform_args() -> list[str]:
    """Linux hosts get their own platform from pip; elsewhere torch's Linux x86_64 CUDA wheels are asked for."""
    if sys.platform.startswith("linux"):
        return []
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    plats = ["manylinux_2_28_x86_64", "manylinux2014_x86_64", "manylinux_2_17_x86_64"]
    return ["--python-version", py, *(a for p in plats for a in ("--platform", p))]


def _from_version(version: str, index_url: str | None) -> TorchBuild:
    from cudafit.targets.pip import download_wheels

    wheels, error = download_wheels(f"torch=={version}", [*_index_args(index_url), *_platform_args()])
    if error is not None:
        raise TorchError(f"torch {version}: {error}")
    return _from_wheel(wheels[0])


def find_torch_build(spec: str | None, *, index_url: str | None = None, base: str | None = None) -> TorchBuild:
    """The torch build ``--match-torch SPEC`` names.

    ``None``/``""``: the torch of this interpreter's environment.  A path: a torch wheel, a
    site-packages directory, a ``torch`` directory, a Python executable or an environment directory
    (resolved from files, never run).  Otherwise a version, downloaded with ``pip download``
    (``index_url``: PyPI by default; ``cu126``/``cu128``/``cu130`` name PyTorch's indexes).
    ``base`` is the directory relative paths are read from (a pyproject.toml's).
    """
    from cudafit.targets.env import resolve_environment, site_packages_of

    if not spec:
        sites = site_packages_of()
        found = _first_site(sites)
        if found is not None:
            return found
        msg = f"no torch with {LIB} in this environment ({', '.join(sites)}): give --match-torch VERSION or PATH"
        raise TorchError(msg)
    path = os.path.join(base, spec) if base and not os.path.isabs(spec) else spec
    path = os.path.expanduser(path)
    if os.path.exists(path):
        if os.path.isfile(path) and path.endswith(".whl"):
            return _from_wheel(path)
        if os.path.isdir(path):
            if os.path.isfile(os.path.join(path, "lib", LIB)):  # the torch package directory
                found = _from_site(os.path.dirname(os.path.abspath(path)))
                if found is not None:
                    return found
            found = _from_site(path)
            if found is not None:
                return found
        env = resolve_environment(path)  # EnvironmentResolutionError when it is none
        sites = [d.path for d in env.sites]
        found = _first_site(sites)
        if found is not None:
            return found
        msg = f"no torch/lib/{LIB} in {env.describe()} ({', '.join(sites)})"
        raise TorchError(msg)
    if _VERSION.match(spec):
        return _from_version(spec, index_url)
    msg = f"--match-torch {spec!r}: no such file or directory, and not a torch version (e.g. 2.14.1)"
    raise TorchError(msg)


def describe_gap(torch: TorchBuild, missing: Sequence[Requirement], what: str = "build") -> str:
    """``torch 2.14.1+cu130 runs on 7.5 .. 12.0; this wheel lacks 7.5 and 12.0``."""
    head = f"{torch.name} runs on {torch.runs_on}"
    if not missing:
        return f"{head}; this {what} covers all of it"
    labels = [r.label for r in missing]
    listed = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
    return f"{head}; this {what} lacks {listed}"
