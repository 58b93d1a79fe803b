"""The targets a report says its build was made for, and whether that code runs on the GPUs it names.

Reports paste the flags of the build that fails: ``-gencode arch=compute_61,code=sm_61``, ``-arch=sm_75``,
``TORCH_CUDA_ARCH_LIST="8.0;8.6+PTX"``, ``CMAKE_CUDA_ARCHITECTURES=86``.  Each flag has its tool's meaning, read by
the same parser as ``cudafit audit --require`` (:func:`cudafit.audit.spec.parse_require`): a torch entry ``X.Y`` is
SASS and ``+PTX`` adds PTX; a bare CMake ``XY`` is real *and* virtual code, ``XY-real`` SASS only, ``XY-virtual``
PTX only (https://cmake.org/cmake/help/latest/prop_tgt/CUDA_ARCHITECTURES.html); nvcc's ``-arch=sm_XY`` is short
for ``-gencode arch=compute_XY,code=[sm_XY,compute_XY]`` (NVCC documentation, "Shorthand",
https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#shorthand).  Whether that code runs on a compute
capability is the rules' one function (:func:`cudafit.rules.compat.code_runs_on`: SASS of the same major and an
equal or lower minor, PTX of an equal or lower arch, ``a``/``f`` targets on their own CC or family).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from cudafit.audit.spec import Requirement, parse_require
from cudafit.errors import CudafitError
from cudafit.model import ArchVariant, ComputeCapability
from cudafit.rules.compat import CodeKind, code_runs_on

__all__ = ["iter_build_targets", "serves"]

# The value of an arch-list variable: quoted, or up to the end of the word list ("8.0;8.6+PTX", "75;86", "7.5 8.6").
_LIST_VALUE = (
    r"""(?:"([^"\n]{1,80})"|'([^'\n]{1,80})'|([0-9][0-9.;+PTXaf \-realvirtu]{0,80}))"""
    r"""(?=["'\s,;)]|\.(?:\s|$)|$)"""
)
_TORCH_LIST = re.compile(rf"\bTORCH_CUDA_ARCH_LIST\s*[=:]\s*{_LIST_VALUE}", re.I)
# -DCMAKE_CUDA_ARCHITECTURES=86, CMAKE_CUDA_ARCHITECTURES: 75;86, set(CMAKE_CUDA_ARCHITECTURES 86), CUDA_ARCHITECTURES
_CMAKE_LIST = re.compile(rf"(?:(?<=-D)|\b)(?:CMAKE_)?CUDA_ARCHITECTURES\b\s*[=: ]\s*{_LIST_VALUE}", re.I)
# -gencode arch=compute_61,code=sm_61 | code=[sm_61,compute_61] | code=\"sm_61,compute_61\"
_GENCODE = re.compile(
    r"(?:-gencode|--generate-code)[= ]\s*\"?arch=compute_(\d{2,3})([af]?),\s*code=\\?\"?\["
    r"?((?:(?:sm|compute)_\d{2,3}[af]?[,\s]*)+)",
    re.I,
)
# nvcc -arch=sm_75 / --gpu-architecture=sm_75 (not -arch=native/all, not a CPU's -march)
_ARCH_FLAG = re.compile(r"(?<![\w-])(?:-arch|--gpu-architecture)[= ]\s*(sm|compute)_(\d{2,3})([af]?)\b", re.I)


# OpenCV's CMake options: CUDA_ARCH_BIN="6.1 7.5" (cubins), CUDA_ARCH_PTX="7.5" (PTX), as X.Y lists
_OPENCV_LIST = re.compile(rf"\bCUDA_ARCH_(BIN|PTX)\s*[=:]\s*{_LIST_VALUE}", re.I)
# GROMACS' CMake options: GMX_CUDA_TARGET_SM="70;80" (cubins), GMX_CUDA_TARGET_COMPUTE="70" (PTX), as XY lists
_GROMACS_LIST = re.compile(rf"\bGMX_CUDA_TARGET_(SM|COMPUTE)\s*[=:]\s*{_LIST_VALUE}", re.I)
# candle's kernels are compiled to PTX for CUDA_COMPUTE_CAP (bindgen_cuda) and JIT-compiled by the driver at load
_CANDLE_CAP = re.compile(r"\bCUDA_COMPUTE_CAP\s*[=:]\s*[\"']?(\d{2,3})\b")
# cuobjdump's listings of what a binary carries: "ELF file    1: libx.1.sm_80.cubin", "PTX file    1: libx.1.sm_90.ptx"
_CUOBJDUMP = re.compile(r"\b(ELF|PTX) file\s+\d+:\s+\S*?\.sm_(\d{2,3}[af]?)\.(?:cubin|ptx)\b")
# prose: "built with compute_60 PTX only", "compiled only for sm_75", "built for sm_61 and sm_75"
_PROSE = re.compile(
    r"\b(?:built|compiled|build|compile)\s+(?:only\s+)?(?:for|with)\s+(?:only\s+)?"
    r"((?:(?:sm|compute)_\d{2,3}[af]?\b(?:\s*(?:,|and|\+|/)\s*)?)+)",
    re.I,
)


def _parse(spec: str) -> list[Requirement]:
    try:
        return parse_require(spec)
    except (CudafitError, ValueError):  # SpecError is a CudafitError
        return []  # a value no tool would take ("native", "all", a typo): no targets to judge


def _parse_tokens(value: str, form: str) -> Iterator[Requirement]:
    """Each entry of a list on its own, in the tool's ``form``: an entry that does not parse (a word of prose after
    an unquoted list) drops alone."""
    for token in re.split(r"[;\s]+", value.strip()):
        if token:
            yield from (r for r in _parse(token) if r.form == form)


def _value(m: re.Match[str], first: int = 1) -> str:
    """The list a ``_LIST_VALUE`` matched (quoted or not), from group ``first`` on, without a sentence's full stop."""
    return next(g for g in m.groups()[first - 1 :] if g is not None).rstrip(". ")


def iter_build_targets(text: str) -> Iterator[Requirement]:
    """Each target the build flags in ``text`` name (SASS or PTX of a compute capability and variant), in text order;
    a value that does not parse names none."""
    for m in _TORCH_LIST.finditer(text):
        yield from _parse_tokens(_value(m), "torch")
    for m in _CMAKE_LIST.finditer(text):
        yield from _parse_tokens(_value(m), "cmake")
    for m in _GENCODE.finditer(text):
        yield from _parse(" ".join(re.findall(r"(?:sm|compute)_\d{2,3}[af]?", m.group(3).lower())))
    for m in _OPENCV_LIST.finditer(text):
        prefix = "compute" if m.group(1).upper() == "PTX" else "sm"
        for r in _parse_tokens(_value(m, 2), "torch"):  # X.Y entries: cubins for CUDA_ARCH_BIN, PTX for CUDA_ARCH_PTX
            yield from _parse(f"{prefix}_{r.cc.arch_number}{r.variant}")
    for m in _GROMACS_LIST.finditer(text):
        prefix = "compute" if m.group(1).upper() == "COMPUTE" else "sm"
        yield from _parse(" ".join(f"{prefix}_{n}" for n in re.findall(r"\d{2,3}", _value(m, 2))))
    for m in _CANDLE_CAP.finditer(text):
        yield from _parse(f"compute_{m.group(1)}")
    for m in _CUOBJDUMP.finditer(text):
        yield from _parse(f"{'sm' if m.group(1) == 'ELF' else 'compute'}_{m.group(2)}")
    for m in _PROSE.finditer(text):
        yield from _parse(" ".join(re.findall(r"(?:sm|compute)_\d{2,3}[af]?", m.group(1).lower())))
    for m in _ARCH_FLAG.finditer(text):
        number, variant = m.group(2), m.group(3).lower()
        names = (
            [f"compute_{number}{variant}"]
            if m.group(1).lower() == "compute"
            else [
                f"sm_{number}{variant}",
                f"compute_{number}{variant}",
            ]
        )
        yield from _parse(" ".join(names))


def serves(targets: Sequence[Requirement], cc: ComputeCapability) -> str | None:
    """How the targets' code runs on ``cc`` (:func:`cudafit.rules.compat.code_runs_on`): ``"sass"`` (a cubin runs
    as it is), ``"ptx-jit"`` (only by the driver JIT-compiling PTX of an equal or lower arch), ``None`` (not at all)."""
    modes = set()
    for target in targets:
        kind = CodeKind.SASS if target.kind == "sass" else CodeKind.PTX
        mode, _why = code_runs_on(kind, target.cc.arch_number, ArchVariant(target.variant), cc)
        if mode is not None:
            modes.add(mode)
    if modes - {"ptx-jit"}:
        return "sass"
    return "ptx-jit" if modes else None
