"""How a verdict is reached: one frozen value instead of the same flags threaded through every step.

Like pip-audit's ``AuditOptions``, the options are built once, by the public entry points
(:func:`cudafit.rules.engine.evaluate_file` and its siblings keep keyword arguments for callers outside
``rules/``) and passed as one value inside ``rules/``.
"""

from __future__ import annotations

from dataclasses import dataclass

from cudafit.model import DriverVersion

__all__ = ["DEFAULT_OPTIONS", "JudgeOptions"]


@dataclass(frozen=True)
class JudgeOptions:
    """What the machine and the caller add to the binary facts; every field names the NVIDIA rule it moves.

    ``driver``
        The NVIDIA driver (``None``: unknown, no driver limit).  Its JIT compiles PTX up to the ISA of its
        CUDA release (newer PTX: ``CUDA_ERROR_UNSUPPORTED_PTX_VERSION``, error 222; fatbin_spec.md §E.4) and
        it starts a CUDA runtime only of its branch or older (minor-version compatibility, error 35:
        https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html).
    ``jit_allowed``
        Whether the driver may JIT-compile PTX at all (``CUDA_DISABLE_PTX_JIT=1`` turns it off; then only
        SASS runs, error 223: https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars).
    ``gating``
        Whether the library dispatches per GPU, so module roles apply: code built only for other GPUs'
        ``a``/``f`` targets is gated and modules without code may be specialised or kernel-less (lazy
        loading: a module's missing image fails only at the launch of one of its kernels,
        https://docs.nvidia.com/cuda/cuda-programming-guide/04-special-topics/lazy-loading.html).  ``False``
        when every kernel is always used (a .pt2 model's cubins): then every module without code fails.
    ``pool_loose``
        The files are a distribution whose loose cubins/fatbins the library loads itself
        (``cuModuleLoadData`` picks the one built for the GPU:
        https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__MODULE.html), so they are judged as one
        pool; ``False`` for loose files outside a distribution (a build directory), each judged on its own.
    """

    driver: DriverVersion | None = None
    jit_allowed: bool = True
    gating: bool = True
    pool_loose: bool = True


#: A known-nothing machine: no driver limit, JIT allowed, module roles applied, loose files pooled.
DEFAULT_OPTIONS = JudgeOptions()
