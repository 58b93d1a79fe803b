"""The tests' oracle for what the CUDA driver answers when asked to load a module.

Written from NVIDIA's text, independently of cudafit's engine (src/cudafit/rules/engine.py), so that
the fake driver (tests/fakes/verify_driver_fake.json) and the `gpu` tests check the engine against
the documents rather than against itself:

* a cubin ``sm_XY`` loads on compute capability M.m iff X == M and Y <= m (CUDA Programming Guide 13,
  1.3.4.1); ``sm_XYa`` only on exactly X.Y (5.1.2.1); ``sm_XYf`` on its family (5.1.2.2, Table 28);
  Tegra GPUs need the exact cubin;
* otherwise PTX ``compute_XY`` is JIT-compiled iff XY <= Mm with the same a/f limits (1.3.4.2), and its
  ISA must not be newer than the driver's JIT (CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222);
* otherwise CUDA_ERROR_NO_BINARY_FOR_GPU (209).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

SUCCESS = "CUDA_SUCCESS"
NO_BINARY = "CUDA_ERROR_NO_BINARY_FOR_GPU"
PTX_TOO_NEW = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"

#: Table 28 (CUDA Programming Guide 13, 5.1.2.2): which compute capabilities run each family target.
FAMILIES = {
    100: {(10, 0), (10, 3), (10, 7)},
    101: {(10, 1)},
    103: {(10, 3), (10, 7)},
    107: {(10, 7)},
    110: {(11, 0)},
    120: {(12, 0), (12, 1)},
    121: {(12, 1)},
}
#: Tegra (integrated) GPUs: no minor-version binary compatibility.
TEGRA = {(5, 3), (6, 2), (7, 2), (8, 7), (10, 1), (11, 0)}
#: The CUDA version whose toolkit introduced a PTX ISA: a driver's JIT accepts it from that CUDA version on
#: (PTX ISA release history, https://docs.nvidia.com/cuda/parallel-thread-execution/#release-notes).
ISA_SINCE = {(7, 0): (11, 0), (8, 7): (12, 8), (8, 8): (12, 9), (9, 0): (13, 0), (9, 5): (13, 5)}

_ARCH = re.compile(r"^(sm|compute)_(\d+)([af]?)$")


def _split(arch: str) -> tuple[str, int, str, tuple[int, int]]:
    m = _ARCH.match(arch)
    assert m, arch
    n = int(m.group(2))
    return m.group(1), n, m.group(3), (n // 10, n % 10)


def _variant_allows(n: int, variant: str, target: tuple[int, int], cc: tuple[int, int]) -> bool:
    if variant == "a":
        return target == cc
    if variant == "f":
        return cc in FAMILIES.get(n, set())
    return True


def sass_loads(arch: str, cc: tuple[int, int]) -> bool:
    """Whether a cubin ``sm_...`` runs on ``cc``."""
    kind, n, variant, target = _split(arch)
    assert kind == "sm"
    if variant:
        return _variant_allows(n, variant, target, cc)
    if cc in TEGRA:
        return target == cc
    return target[0] == cc[0] and target[1] <= cc[1]


def ptx_jits(arch: str, cc: tuple[int, int]) -> bool:
    """Whether PTX ``compute_...`` can be JIT-compiled for ``cc`` (ISA aside)."""
    kind, n, variant, target = _split(arch)
    assert kind == "compute"
    if variant:
        return _variant_allows(n, variant, target, cc) and target <= cc
    return target <= cc


def expected_answer(
    entries: Iterable[tuple[str, tuple[int, int]]], cc: tuple[int, int], driver_cuda: tuple[int, int]
) -> str:
    """The driver's answer for a module of ``(arch, code version)`` entries on ``cc``; a PTX entry's code
    version is its ISA."""
    entries = list(entries)
    if any(a.startswith("sm_") and sass_loads(a, cc) for a, _v in entries):
        return SUCCESS
    usable = [isa for a, isa in entries if a.startswith("compute_") and ptx_jits(a, cc)]
    if not usable:
        return NO_BINARY
    if any(driver_cuda >= ISA_SINCE[isa] for isa in usable):
        return SUCCESS
    return PTX_TOO_NEW
