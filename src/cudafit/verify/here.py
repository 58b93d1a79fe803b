"""``verify``'s (and ``doctor --verify``'s) use case: ask this machine's driver, as one typed result.

The command line parses the options and renders; everything between (listing the devices, checking the
ordinals asked for, the driver version the prediction is made for, the notes about the JIT variables, the
scan cache) lives here, so that ``verify`` and ``doctor --verify`` verify the same way.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cudafit.targets.interface import ScanItem
    from cudafit.verify import VerifyResult

__all__ = ["VerifyFailure", "verify_here"]


@dataclass(frozen=True)
class VerifyFailure:
    """Nothing could be verified: ``kind`` is the driver's (``no-driver``, ``no-device``...) or
    ``bad-device`` (an ordinal the driver does not list: a usage error)."""

    kind: str
    message: str


def verify_here(
    items: Iterable[ScanItem],
    *,
    ordinals: Sequence[int] = (),
    notes: Iterable[str] = (),
    jit: bool = False,
    timeout: float = 60.0,
    use_cache: bool = True,
    embedded: bool = False,
) -> VerifyResult | VerifyFailure:
    """Load every module of ``items`` on the GPUs ``ordinals`` (default: all) beside the prediction.

    ``items`` are read only once the driver answered (no scan when there is nothing to load on); ``notes``
    (the target's) come first in the result's notes."""
    from cudafit.analysis import jit_allowed_in
    from cudafit.errors import DriverUnavailableError
    from cudafit.progress import with_progress
    from cudafit.targets.cache import scan_cache
    from cudafit.verify import run_verify
    from cudafit.verify.runner import list_devices

    try:
        listing = list_devices()
    except DriverUnavailableError as err:
        return VerifyFailure(err.kind, err.message)
    known = {d.ordinal for d in listing.devices}
    bad = [o for o in ordinals if o not in known]
    if bad:
        listed = ", ".join(str(o) for o in sorted(known))
        return VerifyFailure("bad-device", f"no CUDA device {bad[0]} (the driver lists {listed})")
    jit_allowed = jit_allowed_in(os.environ)
    driver_version = listing.driver_version or _probed_driver()
    extra = list(notes)
    if not jit_allowed:
        extra.append("CUDA_DISABLE_PTX_JIT is set: PTX is not counted as usable, and the workers inherit it")
    if os.environ.get("CUDA_FORCE_PTX_JIT"):
        extra.append("CUDA_FORCE_PTX_JIT is set: verify's workers unset it so that cubins are loaded as they ship")
    with scan_cache(enabled=use_cache, embedded=embedded):
        result = run_verify(
            with_progress(items),
            listing,
            list(ordinals),
            jit=jit,
            timeout=timeout,
            jit_allowed=jit_allowed,
            driver_version=driver_version,
            progress=lambda answers: with_progress(answers, "loading modules", "loads"),
        )
    return replace(result, notes=(*extra, *result.notes))


def _probed_driver() -> str | None:
    """The driver version from NVML / nvidia-smi (context-free): it fixes the PTX ISA the JIT accepts."""
    from cudafit.probe import probe_machine

    inv = probe_machine()
    return str(inv.driver_version) if inv.driver_version else None
