"""Where binaries come from: files, directories, environments, wheels, pip requirements.

Every source implements :class:`~cudafit.targets.interface.Target` and yields
:class:`~cudafit.targets.interface.ScanItem` objects (package, version, display path, binary
facts).  Nothing here imports or runs code from what it scans: distributions are identified
from ``*.dist-info`` metadata and ``RECORD`` files, wheels are read member by member as
streams, and only files whose name or first bytes say they may hold device code are opened.
Errors are per item: an unreadable file, member or download becomes an item whose facts carry
``error``; the rest of the target is still scanned.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from cudafit.targets.interface import ScanItem, Target

__all__ = ["ScanItem", "Target", "open_target"]


def open_target(spec: str, *, pip_args: Sequence[str] = ()) -> Target:
    """Choose the target type for ``spec``.

    * an existing directory with ``*.dist-info`` entries: an installed environment;
    * any other directory: a recursive walk;
    * ``*.whl``: a wheel read from the zip;
    * ``*.pt2``: an AOTInductor package;
    * any other existing file: that file (ELF, archive, cubin, fatbin, PTX);
    * otherwise a pip requirement (``fbgemm-gpu==1.9.0``), downloaded without dependencies.

    Files on disk go through the scan cache when the caller opened one
    (:func:`cudafit.targets.cache.scan_cache`).
    """
    from cudafit.targets.files import DirectoryTarget, FileTarget

    if os.path.isdir(spec):
        from cudafit.targets.env import EnvironmentTarget, looks_like_site_packages

        if os.path.isfile(os.path.join(spec, "oci-layout")):
            from cudafit.targets.image import ImageTarget, looks_like_image

            if looks_like_image(spec):
                return ImageTarget(spec)

        if looks_like_site_packages(spec):
            return EnvironmentTarget([spec])
        return DirectoryTarget(spec)
    if os.path.exists(spec) or os.path.islink(spec):
        lower = spec.lower()
        if lower.endswith(".whl"):
            from cudafit.targets.wheel import WheelTarget

            return WheelTarget(spec)
        from cudafit.targets.image import ImageTarget, looks_like_image

        if lower.endswith((".tar", ".tar.gz", ".tgz")) and looks_like_image(spec):
            return ImageTarget(spec)
        if lower.endswith(".pt2"):
            from cudafit.targets.pt2 import Pt2Target

            return Pt2Target(spec)
        return FileTarget(spec)
    if _looks_like_path(spec):  # a missing file is reported as such, not handed to pip
        return FileTarget(spec)
    from cudafit.targets.pip import PipRequirementTarget

    target: Target = PipRequirementTarget(spec, pip_args=pip_args)
    return target


def _looks_like_path(spec: str) -> bool:
    """A spec that names a file rather than a requirement (``./x.whl``, ``/a/b.so``, ``model.pt2``)."""
    return (
        os.sep in spec
        or spec.startswith(".")
        or spec.lower().endswith((".whl", ".so", ".a", ".o", ".cubin", ".fatbin", ".ptx", ".pt2", ".tar", ".dll"))
        or ".so." in spec
    )
