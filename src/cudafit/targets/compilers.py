"""Find the compilers a package will run, from evidence in its files (nothing is imported or executed).

Evidence, each kind described with its source in ``rules/data/compilers.json``:

* a compiler shipped in the package (``bin/ptxas``, ``ptxas-blackwell``, ``bin/nvcc``, ``libnvrtc.so.*``,
  ``libnvJitLink.so.*``): its CUDA release is read from the binary's own ``Cuda compilation tools,
  release X.Y`` string (streamed, bounded memory), never from running it;
* a DT_NEEDED NVRTC / nvJitLink / nvPTXCompiler soname (``libnvrtc.so.12``: CUDA 12.x);
* a pinned ``nvidia-cuda-nvrtc-cuNN`` / ``nvidia-cuda-nvcc-cuNN`` / ``nvidia-nvjitlink-cuNN`` requirement;
* LTO-IR entries in a fatbin (linked by nvJitLink at run time);
* the conventions of the big users: Triton's two ptxas and the arch its ``compiler.py`` switches at,
  ``TRITON_PTXAS_PATH``; XLA's own LLVM target table and the ptxas it searches for; torch.compile ->
  the installed Triton; CuPy's NVRTC and ``CUPY_COMPILE_WITH_PTX``.
"""

from __future__ import annotations

import os
import re
import shutil
import zipfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import IO, TYPE_CHECKING, Any

from cudafit.binary.facts import EntryKind
from cudafit.model import CudaVersion
from cudafit.rules.compilers import RuntimeCompiler, compilers_data, release_compilers

if TYPE_CHECKING:
    from cudafit.targets.cache import _ShardedStore
    from cudafit.targets.interface import ScanItem

__all__ = [
    "ProviderMap",
    "iter_item_compilers",
    "package_compilers",
    "read_cuda_release",
    "read_llvm_targets",
    "resolve_compilers",
]

_RELEASE = re.compile(rb"Cuda compilation tools, release (\d+)\.(\d+), V\d+")
#: A NUL-terminated ``sm_XY`` name as LLVM's processor table stores them.  Literal-led on purpose: a
#: leading ``\x00`` or ``\b`` makes the engine try every byte of a 262 MB plugin (0.25 s -> 0.6-5.7 s); the
#: price is two message tails ("... and sm_30") that name a target older than any in the tables.
_LLVM_SM = re.compile(rb"sm_\d{2,3}[af]?(?=\x00)")
_CHUNK = 1 << 20
_MEMO: dict[tuple[str, int, float, str], Any] = {}

#: family -> (CUDA version, where) of the compilers installed providers ship (nvidia-cuda-nvrtc-cu12 ...).
ProviderMap = dict[tuple[str, int], tuple[CudaVersion, str]]


def _open(path: str) -> tuple[IO[bytes], int, float] | None:
    """A file on disk or a ``WHEEL!member``, as a binary stream with its size and mtime."""
    outer, sep, member = path.partition("!")
    try:
        if sep and zipfile.is_zipfile(outer):
            zf = zipfile.ZipFile(outer)
            info = zf.getinfo(member)
            return zf.open(info), info.file_size, os.stat(outer).st_mtime
        st = os.stat(path)
        return open(path, "rb"), st.st_size, st.st_mtime  # closed by the caller
    except (OSError, KeyError, zipfile.BadZipFile, ValueError):
        return None


def _scan(path: str, kind: str, patterns: tuple[re.Pattern[bytes], ...], first_only: bool) -> list[bytes]:
    """Matches of ``patterns`` over the file's bytes, in one pass streamed in 1 MiB chunks with an overlap
    (memoised per file, and in the scan cache); ``first_only``: stop at the first match."""
    opened = _open(path)
    if opened is None:
        return []
    fh, size, mtime = opened
    key = (path, size, mtime, kind)
    store = _store()
    if key not in _MEMO and store is not None:
        kept = store.get(path.partition("!")[0], key)
        if isinstance(kept, tuple):
            _MEMO[key] = kept
    if key in _MEMO:
        fh.close()
        return list(_MEMO[key])
    found: list[bytes] = []
    tail = b""
    try:
        with fh:
            while True:
                chunk = fh.read(_CHUNK)
                if not chunk:
                    break
                buf = tail + chunk
                for pattern in patterns:
                    for m in pattern.finditer(buf):
                        found.append(m.group(0))
                        if first_only:
                            break
                if first_only and found:
                    break
                tail = buf[-96:]
    except (OSError, zipfile.BadZipFile, ValueError, EOFError, RuntimeError, zlib.error):
        pass
    _MEMO[key] = tuple(found)
    if store is not None:  # XLA's table is one pass over a 262 MB plugin: remembered across runs
        store.put(path.partition("!")[0], key, tuple(found))
        store.save()
    return found


_STORES: dict[str, _ShardedStore] = {}


def _store() -> _ShardedStore | None:
    """The active scan cache's store of compiler reads (``None`` with ``--no-cache``): file identity -> matches."""
    from cudafit.targets.cache import _ShardedStore, current

    cache = current()
    if cache is None or cache.path is None:
        return None
    if cache.path not in _STORES:
        _STORES[cache.path] = _ShardedStore(os.path.splitext(cache.path)[0] + "-compilers", limit=10_000)
    return _STORES[cache.path]


def read_cuda_release(path: str, _depth: int = 0) -> CudaVersion | None:
    """The CUDA release a compiler binary was built from (its ``Cuda compilation tools, release X.Y``).

    A small wrapper script (``#!/bin/sh`` + ``exec /usr/local/cuda-13.0/bin/ptxas "$@"``) is followed once
    to the binary it runs: read as text, never run.
    """
    head = _read_text(path, 4096)
    if head.startswith("#!") and _depth == 0:
        target = re.search(r"\bexec\s+['\"]?(/[^\s'\"]+)", head)
        return read_cuda_release(target.group(1), 1) if target else None
    hits = _scan(path, "release", (_RELEASE,), first_only=True)
    if not hits:
        return None
    m = _RELEASE.match(hits[0])
    return CudaVersion(int(m.group(1)), int(m.group(2))) if m else None


def read_llvm_targets(path: str, marker: str = "") -> tuple[str, ...]:
    """The ``sm_XY`` names of the LLVM NVPTX processor table a library carries, oldest first.

    With ``marker`` (a string only XLA's GPU compiler has, from compilers.json), empty unless the file has
    it too: a CPU-only jaxlib links an LLVM with the NVPTX table but never compiles for a GPU.
    """
    sign = re.compile(re.escape(marker.encode())) if marker else None
    hits = _scan(path, f"llvm:{marker}", (_LLVM_SM, sign) if sign else (_LLVM_SM,), first_only=False)
    if marker and marker.encode() not in hits:
        return ()  # one pass, two literal-led patterns: one regex with both alternatives is ten times slower
    names = {h.decode() for h in hits if h.startswith(b"sm_")}
    return tuple(sorted(names, key=lambda s: (int(re.sub(r"\D", "", s)), s)))


def _read_text(path: str, limit: int = 1 << 20) -> str:
    opened = _open(path)
    if opened is None:
        return ""
    fh, _size, _mtime = opened
    try:
        with fh:
            return fh.read(limit).decode("utf-8", "replace")
    except (OSError, zipfile.BadZipFile, ValueError, EOFError, RuntimeError, zlib.error):
        return ""


def _member(item: ScanItem) -> str:
    """The path inside the package: after ``!`` for a wheel member, the path itself on disk."""
    path = str(item.path)
    return path.split("!", 1)[1] if "!" in path else path


def _bytes_path(item: ScanItem) -> str:
    return str(getattr(item, "origin", None) or item.path)


def _sibling(bytes_path: str, own: str, other: str) -> str:
    """``other`` (a path inside the package) next to ``bytes_path``, whose path ends with ``own``.

    ``own`` is the convention's in-package path (``triton/backends/nvidia/bin/ptxas``), never the item's
    whole path: a wheel member and the same file extracted to a directory must find the same siblings (on
    disk the whole path is absolute, and stripping all of it looked for ``ptxas-blackwell`` and
    ``compiler.py`` relative to the working directory).
    """
    return bytes_path[: len(bytes_path) - len(own)] + other


def _triton_switch(bytes_path: str, own: str) -> int:
    """The arch number from which Triton uses its second ptxas, read from its ``compiler.py`` as text."""
    conv = compilers_data()["conventions"]["triton"]
    text = _read_text(_sibling(bytes_path, own, conv["selector_file"]))
    body = re.search(conv["selector_function"], text)
    # Whatever the form (``"ptxas-blackwell" if arch >= 100 else "ptxas"``, ``if arch < 90: return
    # knobs.nvidia.ptxas``), get_ptxas compares the arch with the first arch of its second ptxas.
    m = re.search(conv["selector_comparison"], body.group(1)) if body else None
    if m is None:
        return int(conv["second_from_arch_default"])
    op, n = m.group(1), int(m.group(2))
    return n + 1 if op in (">", "<=") else n


def _version_from_name(name: str) -> CudaVersion | None:
    m = re.search(r"\.so\.(\d+)\.(\d+)", name)
    return CudaVersion(int(m.group(1)), int(m.group(2))) if m else None


def iter_item_compilers(item: ScanItem) -> Iterator[RuntimeCompiler]:
    """The compilers one scanned file is or asks for (its name, its DT_NEEDED, its LTO-IR, its XLA)."""
    data = compilers_data()
    member = _member(item)
    base = os.path.basename(member)
    src = _bytes_path(item)
    triton = data["conventions"]["triton"]
    for rule in data["files"]:
        if not re.search(rule["pattern"], member):
            continue
        fam = rule["family"]
        cuda = read_cuda_release(src) if fam in ("ptxas", "nvcc", "nvrtc", "nvjitlink") else None
        cuda = cuda or _version_from_name(base)
        second = member.endswith(triton["ptxas_second"])
        if second or member.endswith(triton["ptxas"]):  # Triton picks one of its two ptxas by arch
            own = triton["ptxas_second"] if second else triton["ptxas"]
            switch = _triton_switch(src, own) if second or _has_second(src, own) else None
            yield RuntimeCompiler(
                fam,
                cuda,
                where=member,
                evidence="bundled",
                user="triton",
                name="ptxas-blackwell" if second else "ptxas",
                arch_from=switch if second else None,
                arch_below=None if second else switch,
            )
        else:
            yield RuntimeCompiler(fam, cuda, where=member, evidence="bundled", name=base, user=rule.get("user", ""))
        break
    for soname in getattr(item.facts, "needed", ()):
        for rule in data["sonames"]:
            if soname.startswith(rule["prefix"]):
                major = soname[len(rule["prefix"]) :].split(".")[0]
                yield RuntimeCompiler(
                    rule["family"],
                    cuda=_version_from_name(soname),
                    cuda_major=int(major) if major.isdigit() else None,
                    where=f"{member} NEEDED {soname}",
                    evidence="needed",
                )
    if any(e.kind is EntryKind.LTO for f in (item.facts, *item.facts.members) for e in f.entries):
        yield RuntimeCompiler("nvjitlink", where=f"{member} (LTO-IR entries)", evidence="lto-ir")
    if re.search(data["conventions"]["xla"]["files"], member):
        targets = read_llvm_targets(src, data["conventions"]["xla"].get("marker", ""))
        if targets:
            yield RuntimeCompiler("xla", where=member, evidence="llvm-target-table", user="xla", llvm_targets=targets)


def _has_second(bytes_path: str, own: str) -> bool:
    """Whether the Triton that ships this ptxas also ships ``ptxas-blackwell`` (the arch switch applies)."""
    other = _sibling(bytes_path, own, compilers_data()["conventions"]["triton"]["ptxas_second"])
    outer, sep, inner = other.partition("!")
    if sep:
        try:
            with zipfile.ZipFile(outer) as zf:
                zf.getinfo(inner)
            return True
        except (OSError, KeyError, zipfile.BadZipFile):
            return False
    return os.path.isfile(other)


def _requirement_compilers(requires: Sequence[str]) -> Iterator[RuntimeCompiler]:
    """Pinned (``==``) or bounded requirements on NVIDIA's compiler wheels (extras left out)."""
    for req in requires:
        spec, _semi, marker = req.partition(";")
        if "extra" in marker:
            continue
        m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*\(?([^)]*)\)?\s*$", spec)
        if not m:
            continue
        name = re.sub(r"[-_.]+", "-", m.group(1).lower())
        for rule in compilers_data()["requirements"]:
            rm = re.match(rule["pattern"], name)
            if not rm:
                continue
            pin = re.search(r"==\s*(\d+)\.(\d+)", m.group(2))
            yield RuntimeCompiler(
                rule["family"],
                cuda=CudaVersion(int(pin.group(1)), int(pin.group(2))) if pin else None,
                cuda_major=int(rm.group(1)),
                where=f"requires {spec.strip()}",
                evidence="requirement",
            )


def _as_user(c: RuntimeCompiler, user: str) -> RuntimeCompiler:
    return replace(c, user=user)


def _is_provider(package: str | None) -> bool:
    """A distribution that *is* a compiler (nvidia-cuda-nvrtc-cu12 ...): its users run it, not itself."""
    name = re.sub(r"[-_.]+", "-", (package or "").lower())
    return any(re.match(rule["pattern"], name) for rule in compilers_data()["requirements"])


def package_compilers(items: Sequence[ScanItem], requires: Sequence[str] = ()) -> tuple[list[RuntimeCompiler], bool]:
    """(the compilers a package runs or provides, whether it only provides them), one per family and role.

    A NEEDED soname or LTO-IR without a version takes it from a pinned requirement of the same family.
    """
    found: list[RuntimeCompiler] = []
    for item in items:
        found.extend(iter_item_compilers(item))
    pinned = {c.family: c for c in _requirement_compilers(requires)}
    out: dict[tuple[str, str, str], RuntimeCompiler] = {}
    for c in found:
        p = pinned.get(c.family)
        if c.cuda is None and p is not None and p.cuda is not None:
            c = replace(c, cuda=p.cuda, where=f"{c.where}; {p.where}", evidence=f"{c.evidence}+requirement")  # noqa: PLW2901
        key = (c.family, c.user, c.name)
        if key in out and c.where not in out[key].where:  # one compiler, several pieces of evidence
            c = replace(out[key], where=f"{out[key].where}; {c.where}", evidence=f"{out[key].evidence}+{c.evidence}")  # noqa: PLW2901
        out[key] = c
    package = re.sub(r"[-_.]+", "-", ((items[0].package if items else None) or "").lower())
    for user, conv in compilers_data()["conventions"].items():  # CuPy's and torch's own NVRTC conventions
        if conv.get("family") and package.split("-")[0] == conv.get("package"):
            out = {k: _as_user(c, user) if c.family == conv["family"] and not c.user else c for k, c in out.items()}
    # A requirement alone (no file asks for the library) is not evidence the package compiles with it:
    # nvidia-cufft-cu12 requires nvJitLink for optional LTO callbacks; torch pins it for cuFFT/cuSPARSE.
    provider = _is_provider(items[0].package if items else None)
    return list(out.values()), provider


def resolve_compilers(
    compilers: Sequence[RuntimeCompiler],
    providers: ProviderMap,
    *,
    environ: Mapping[str, str] | None = None,
    sites: Sequence[str] = (),
) -> list[RuntimeCompiler]:
    """The compilers as this environment wires them (``doctor``): versions from the installed providers,
    ``TRITON_PTXAS_PATH`` / ``TRITON_PTXAS_BLACKWELL_PATH`` overrides, and the ptxas XLA will find."""
    conv = compilers_data()["conventions"]["triton"]
    out: list[RuntimeCompiler] = []
    for c in compilers:
        got = c
        if got.cuda is None and got.cuda_major is not None and (got.family, got.cuda_major) in providers:
            cuda, where = providers[(got.family, got.cuda_major)]
            got = replace(got, cuda=cuda, where=f"{got.where} -> {where}", evidence=f"{got.evidence}+installed")
        if environ is not None and got.user in ("triton", "torch.compile"):
            var = conv["env_second"] if got.name == "ptxas-blackwell" else conv["env"]
            path = environ.get(var)
            if path:
                got = replace(
                    got, family="ptxas", cuda=read_cuda_release(path), where=f"{var}={path}", evidence="environment"
                )
        if environ is not None and got.user == "nvcc-jit":
            nvcc = _find_nvcc(environ)
            if nvcc is not None:
                got = replace(got, cuda=read_cuda_release(nvcc), where=nvcc, evidence="environment")
        c = got  # noqa: PLW2901
        out.append(c)
        if environ is not None and c.family == "xla":
            ptxas = find_xla_ptxas(sites, environ)
            if ptxas is not None:
                out.append(
                    RuntimeCompiler("ptxas", read_cuda_release(ptxas), where=ptxas, evidence="environment", user="xla")
                )
    return out


def _find_nvcc(environ: Mapping[str, str]) -> str | None:
    """The nvcc a JIT library runs: ``$CUDA_HOME/bin/nvcc``, ``$CUDA_PATH/bin/nvcc``, then ``PATH``."""
    candidates = [os.path.join(environ[k], "bin", "nvcc") for k in ("CUDA_HOME", "CUDA_PATH") if environ.get(k)]
    on_path = shutil.which("nvcc", path=environ.get("PATH"))
    if on_path:
        candidates.append(on_path)
    return next((c for c in candidates if os.path.isfile(c)), None)


def find_xla_ptxas(sites: Sequence[str], environ: Mapping[str, str]) -> str | None:
    """The ptxas XLA will run: ``--xla_gpu_cuda_data_dir``, the nvidia-cuda-nvcc wheel, /usr/local/cuda, PATH."""
    candidates: list[str] = []
    m = re.search(r"--xla_gpu_cuda_data_dir=(\S+)", environ.get("XLA_FLAGS", ""))
    if m:
        candidates.append(os.path.join(m.group(1), "bin", "ptxas"))
    candidates += [os.path.join(s, "nvidia", "cuda_nvcc", "bin", "ptxas") for s in sites]
    candidates.append("/usr/local/cuda/bin/ptxas")
    on_path = shutil.which("ptxas", path=environ.get("PATH"))
    if on_path:
        candidates.append(on_path)
    return next((c for c in candidates if os.path.isfile(c)), None)


def group_compilers(
    groups: Mapping[tuple[str, str | None], Sequence[ScanItem]],
    *,
    environ: Mapping[str, str] | None = None,
    sites: Sequence[str] = (),
) -> dict[tuple[str, str | None], tuple[RuntimeCompiler, ...]]:
    """The run-time compilers of every package of a scan, wired across packages.

    Providers (nvidia-cuda-nvrtc-cu12 ...) give their version to the packages that NEED their soname;
    torch.compile runs the installed Triton (its ptxas, TRITON_PTXAS_PATH); providers themselves get no
    verdict (their users fail, not they).
    """
    found: dict[tuple[str, str | None], list[RuntimeCompiler]] = {}
    providers: ProviderMap = {}
    for key, its in groups.items():
        if not its:
            continue
        requires = next((tuple(i.requires) for i in its if getattr(i, "requires", ())), ())
        comps, provider = package_compilers(its, requires)
        if provider:
            for c in comps:
                if c.cuda is not None:
                    providers.setdefault((c.family, c.cuda.major), (c.cuda, f"{key[0]} {key[1] or ''}".strip()))
            continue
        if any(getattr(i, "runtime_compiled", None) == "nvcc-jit" for i in its):  # ecosystem.json runtime_compiling
            comps.append(
                RuntimeCompiler("nvcc", where="the nvcc of CUDA_HOME or PATH", evidence="convention", user="nvcc-jit")
            )
        if comps:
            found[key] = comps
    conv = compilers_data()["conventions"]["torch_compile"]
    triton = [(f"{k[0]} {k[1] or ''}".strip(), c) for k, comps in found.items() for c in comps if c.user == "triton"]
    for key, its in groups.items():
        if re.sub(r"[-_.]+", "-", key[0].lower()) != conv["package"]:
            continue
        if not triton:  # a torch wheel alone: the Triton it pins, when that release was measured
            pinned = _pinned_triton(next((tuple(i.requires) for i in its if getattr(i, "requires", ())), ()))
            if pinned is not None:
                found.setdefault(key, []).extend(
                    replace(c, user="torch.compile", evidence="requirement+measured-release")
                    for c in release_compilers("triton", pinned) or ()
                )
        else:
            found.setdefault(key, []).extend(
                replace(c, user="torch.compile", evidence="convention", where=f"{label}: {c.where}")
                for label, c in triton
            )
    env = dict(environ) if environ is not None else None
    return {k: tuple(resolve_compilers(v, providers, environ=env, sites=sites)) for k, v in found.items()}


def _pinned_triton(requires: Sequence[str]) -> str | None:
    """The Triton release a torch wheel pins (``triton==3.4.0; platform_system == "Linux"``), extras left out."""
    for req in requires:
        spec, _semi, marker = req.partition(";")
        m = re.match(r"^\s*(?:pytorch-triton|triton)\s*\(?\s*==\s*([0-9][^\s,;)]*)", spec)
        if m and "extra" not in marker:
            return m.group(1)
    return None


def iter_local_ptxas(environ: Mapping[str, str]) -> Iterator[tuple[str, CudaVersion]]:
    """The ptxas binaries of this machine's CUDA toolkits (CUDA_HOME, /usr/local/cuda*, PATH) with their release,
    newest first: what ``TRITON_PTXAS_PATH`` or XLA can be pointed at."""
    import glob

    roots = [environ[k] for k in ("CUDA_HOME", "CUDA_PATH") if environ.get(k)]
    roots += sorted(glob.glob("/usr/local/cuda*"), reverse=True)
    paths = [os.path.join(r, "bin", "ptxas") for r in roots]
    on_path = shutil.which("ptxas", path=environ.get("PATH"))
    if on_path:
        paths.append(on_path)
    seen: set[str] = set()
    found: list[tuple[str, CudaVersion]] = []
    for p in paths:
        real = os.path.realpath(p)
        if real in seen or not os.path.isfile(p):
            continue
        seen.add(real)
        cuda = read_cuda_release(p)
        if cuda is not None:
            found.append((p, cuda))
    yield from sorted(found, key=lambda pc: pc[1], reverse=True)
