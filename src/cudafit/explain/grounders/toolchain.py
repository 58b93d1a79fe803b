"""Grounders of the CUDA software stack: driver too old, PTX too new for the driver, a run-time compiler too old,
an extension built with another toolkit than torch, the wrong (CPU or other-CUDA) build of a framework.

Runtime driver floors 13.x >= 580, 12.x >= 525, 11.x >= 450
(https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html) and each toolkit's minimum
driver (release notes Table 3), from :mod:`cudafit.rules.tables`; the PTX ISA each toolkit emits and each
driver JIT-compiles, from the same tables.
"""

from __future__ import annotations

import re

from cudafit.explain.catalogue import HASHCAT_NVRTC, NVRTC, PYTORCH_INDEX
from cudafit.explain.context import normalise_package
from cudafit.explain.extract import arch_number
from cudafit.explain.grounders.base import Ground, Grounded, default, lines_of
from cudafit.explain.grounders.projects import PROJECTS, project_fixes
from cudafit.model import CudaVersion, DriverVersion, parse_cuda_version, parse_driver_version
from cudafit.rules.ecosystem import load_ecosystem

__all__ = [
    "ground_driver_too_old",
    "ground_extension_abi",
    "ground_jit_toolchain",
    "ground_ptx_too_new",
    "ground_toolkit_mismatch",
    "ground_wrong_build",
]


def _framework(g: Ground) -> str | None:
    """The framework that printed the message: the emitter of its strongest pattern, or the text's packages."""
    for emitter in g.emitters:
        return emitter
    for pkg in g.ev.get("packages", []):
        row = PROJECTS.get(normalise_package(pkg))
        if row is not None and (row.older_cuda is not None or row.build is not None):
            return normalise_package(pkg)
    return None


def ground_toolkit_mismatch(g: Ground) -> Grounded:
    """An extension built with an nvcc whose CUDA differs from torch.version.cuda."""
    ev = g.ev
    out = default(g)
    tk, fw = ev.get("toolkit_cuda_version"), ev.get("torch_cuda_version")
    if tk and fw:
        out.cause = (
            f"the nvcc that builds the extension is CUDA {tk}, but PyTorch was built with CUDA {fw}; "
            "torch.utils.cpp_extension and DeepSpeed's op builder refuse a toolkit whose CUDA major differs from "
            "torch.version.cuda (older releases: any difference)"
        )
        out.fixes = [
            f"install a CUDA {fw} toolkit and point the build at it: export CUDA_HOME=/usr/local/cuda-{fw} (its nvcc "
            f"--version must say release {fw})",
            f"or install the PyTorch build for CUDA {tk.split('.')[0]}.x that matches the toolkit you have "
            f"(the indexes are {PYTORCH_INDEX}cuXYZ; verify it first with cudafit check torch --index-url ...)",
        ]
    return out


def _torch_index(cuda_major: int) -> str:
    """The PyTorch index a fix names for a CUDA major (the ecosystem table's choice: cu130, cu126, cu118)."""
    variant = load_ecosystem().torch_build_for(cuda_major)
    return variant.index_url if variant else f"{PYTORCH_INDEX}cuXYZ"


def _known_driver_fixes(driver: DriverVersion) -> list[str]:
    """The upgrade a known driver needs for CUDA 13, and which older CUDA runtimes (and PyTorch index) it runs."""
    from cudafit.rules import tables

    floors = {m: tables.runtime_min_driver_branch(m) for m in (13, 12, 11)}
    if floors[13] and driver.major >= floors[13]:
        return []
    runs = next((m for m in (12, 11) if floors[m] and driver.major >= int(floors[m] or 0)), None)
    out = [
        f"upgrade the NVIDIA driver from {driver} to >= {floors[13]} for CUDA 13.x runtimes "
        f"(>= {tables.toolkit_min_driver(CudaVersion(13, 0))} for the 13.0 GA toolkit)"
    ]
    if runs == 12:
        out.append(
            f"or keep driver {driver} (>= {floors[12]}: CUDA 12.x runtimes run on it by minor-version "
            f"compatibility) and install a CUDA 12 build: pip install torch --index-url {_torch_index(12)}"
        )
    elif runs == 11:
        out.append(
            f"or keep driver {driver} (>= {floors[11]}: CUDA 11.x runtimes run on it) and install a CUDA 11.8 "
            f"build: pip install torch --index-url {_torch_index(11)}"
        )
    elif floors[11] and floors[12]:
        # below every runtime floor of the table: the cheaper upgrades too (an older GPU's last driver branch may
        # stop short of 580), and no PyTorch index builds for a CUDA this driver runs
        own = tables.toolkit_for_driver(driver)
        runs_own = f" (it runs CUDA {own} and older runtimes)" if own is not None else ""
        out.append(
            f"driver {driver} is older than every CUDA 11+ runtime needs{runs_own}: >= {floors[12]} runs CUDA 12.x "
            f"builds, >= {floors[11]} CUDA 11.x builds (minor-version compatibility); no PyTorch index of cudafit's "
            "table (CUDA 11.8 and newer) runs on it"
        )
    return out


def _reported_driver_fixes(driver_cuda: str) -> list[str]:
    """The upgrade a driver needs that reports the CUDA it supports (``found version 11040``), or a build it runs."""
    from cudafit.rules import tables

    major = int(driver_cuda.split(".", maxsplit=1)[0])
    out = [
        f"the driver supports CUDA {driver_cuda} at most: upgrade it (>= {tables.runtime_min_driver_branch(12)} for "
        f"CUDA 12.x runtimes, >= {tables.runtime_min_driver_branch(13)} for 13.x)"
    ]
    if major == 11:
        out.append(
            f"or install a build made for CUDA 11.x, which this driver runs: pip install torch --index-url "
            f"{_torch_index(11)}"
        )
    elif major == 12:
        out.append(f"or install a CUDA 12 build: pip install torch --index-url {_torch_index(12)}")
    return out


def _driver_of(g: Ground) -> tuple[DriverVersion | None, str]:
    """The driver to reason about: the machine's (``--driver``, the probe), else the one the log prints (nvidia-smi's
    "Driver Version: 418.67", a collect_env line), with which of the two it is."""
    if g.context.driver is not None:
        return g.context.driver, "installed driver"
    written = g.ev.get("driver_version")
    if written:
        try:
            return parse_driver_version(written), "the log's driver"
        except ValueError:
            return None, ""
    return None, ""


# The last driver branch of each GPU architecture NVIDIA's drivers stopped at (NVIDIA, "Unix graphics feature
# deprecation schedule", https://forums.developer.nvidia.com/t/unix-graphics-feature-deprecation-schedule/60588:
# 340 the last for Tesla-architecture GPUs, 390 for Fermi, 470 for Kepler, 580 for Maxwell, Pascal and Volta).
_LAST_DRIVER_BRANCH = {"Tesla": 340, "Fermi": 390, "Kepler": 470, "Maxwell": 580, "Pascal": 580, "Volta": 580}
DRIVER_DEPRECATION = "https://forums.developer.nvidia.com/t/unix-graphics-feature-deprecation-schedule/60588"


def _capped_gpu_fixes(g: Ground) -> list[str]:
    """For a GPU whose architecture gets no driver new enough for a CUDA 13 runtime (Kepler stops at 470, Fermi at
    390): the driver it can have, the newest CUDA major that driver runs, and the build for it, in place of an
    upgrade to a branch the GPU never gets."""
    from cudafit.rules import tables

    floor13 = tables.runtime_min_driver_branch(13)
    out: list[str] = []
    for gpu in g.gpus:
        limits = tables.cc_limits(gpu.compute_capability)
        if limits is None or floor13 is None:
            continue
        branch = _LAST_DRIVER_BRANCH.get(limits.architecture)
        if branch is None or branch >= floor13:
            continue
        runs = next((m for m in (12, 11) if (tables.runtime_min_driver_branch(m) or 10**6) <= branch), None)
        head = (
            f"{gpu.name} ({gpu.compute_capability}, {limits.architecture}) gets no driver past the {branch} branch "
            "(NVIDIA's deprecation schedule)"
        )
        variant = load_ecosystem().torch_build_for(runs) if runs is not None else None
        if runs is not None and variant is not None and variant.torch_builds_run_on(gpu.compute_capability):
            out.append(
                f"{head}: upgrade to that branch and run a CUDA {runs}.x build, e.g. pip install torch --index-url "
                f"{variant.index_url} (verify first: cudafit check torch --index-url {variant.index_url} --gpu "
                f"{gpu.compute_capability})"
            )
        elif runs is not None:
            out.append(f"{head}: it runs CUDA {runs}.x runtimes at most, and no PyTorch index builds for it")
        else:
            out.append(f"{head}: no CUDA 11+ runtime runs on it; current frameworks need a newer GPU")
    return out


_FORWARD_COMPAT = re.compile(r"forward compatibility|CompatNotSupported|COMPAT_NOT_SUPPORTED|\b804\b", re.I)


def ground_driver_too_old(g: Ground) -> Grounded:
    """The driver is older than the CUDA runtime needs: the upgrade, or the build the driver runs."""
    ev = g.ev
    out = default(g)
    if _FORWARD_COMPAT.search(lines_of(ev)):
        out.cause = (
            "the CUDA forward-compatibility libraries (cuda-compat, e.g. a container's /usr/local/cuda/compat) were "
            "loaded on a GPU that does not support forward compatibility (GeForce and most workstation GPUs; it is "
            "for data-center GPUs): the program's CUDA is newer than the installed driver supports"
        )
        out.fixes = [
            "upgrade the host's NVIDIA driver to the branch of the program's CUDA (CUDA 13.x: >= 580, 12.x: >= 525 "
            "with minor-version compatibility)",
            "or use an image / build made for a CUDA the driver supports, and keep the compat directory out of "
            "LD_LIBRARY_PATH / ldconfig on GPUs without forward compatibility",
        ]
    driver_cuda = ev.get("driver_cuda_version")
    dfix: list[str] = []
    driver, where = _driver_of(g)
    if driver is not None:
        out.cause += f"; {where}: {driver}"
        dfix = _known_driver_fixes(driver)
    elif driver_cuda:
        out.cause += f"; the driver reports CUDA {driver_cuda} at most"
        dfix = _reported_driver_fixes(driver_cuda)
    if dfix:
        out.fixes = dfix
    capped = _capped_gpu_fixes(g)
    if capped:  # an upgrade past the GPU's last branch is no fix for it
        stale = ("upgrade the NVIDIA driver", "older than every CUDA 11+ runtime")
        out.fixes = capped + [f for f in out.fixes if not any(w in f for w in stale)]
        out.evidence = {**out.evidence, "sources": [*out.evidence.get("sources", []), DRIVER_DEPRECATION]}
    framework = _framework(g)
    if framework not in (None, "torch"):
        # PyTorch's indexes do not help a CTranslate2 or JAX user: name that framework's own builds.
        out.fixes = [f for f in out.fixes if "pip install torch" not in f]
        out.fixes.append(
            project_fixes(framework).older_cuda
            or f"or install a build of {framework} made for a CUDA major the driver runs (cudafit doctor shows the "
            "libcudart major each package links)"
        )
    return out


def ground_ptx_too_new(g: Ground) -> Grounded:
    """PTX newer than the driver's JIT compiler accepts: the driver that accepts it."""
    from cudafit.fixes import min_driver_for_ptx_isa
    from cudafit.model import parse_ptx_isa_version
    from cudafit.rules import tables

    ev = g.ev
    out = default(g)
    driver, _where = _driver_of(g)
    if driver is not None:
        limit = tables.driver_max_ptx_isa(driver)
        out.cause += f"; driver {driver} JITs PTX ISA up to {limit or 'an unknown version'}"
        isas = tables.load_tables().ptx_isa
        newer = [(c, tables.toolkit_min_driver(c)) for c in sorted(isas) if limit is not None and isas[c] > limit]
        if newer and newer[0][1] is not None:
            out.fixes[0] = (
                f"upgrade the NVIDIA driver from {driver} to >= {newer[0][1]} (CUDA {newer[0][0]}) at "
                "least; the exact minimum is the one of the toolkit that built the package (cudafit doctor)"
            )
    isa = ev.get("ptx_isa")
    if isa and isa.get("needed"):
        found = min_driver_for_ptx_isa(parse_ptx_isa_version(isa["needed"]))
        if found:
            out.fixes.insert(0, f"PTX ISA {isa['needed']} needs a driver >= {found[1]} (CUDA {found[0]})")
        if isa.get("supported"):
            out.cause = (
                f"the driver's JIT compiler accepts PTX ISA up to {isa['supported']}, and the PTX handed to it is "
                f"{isa['needed']} (generated by a newer CUDA toolkit than the driver's)"
            )
    if "numba" in g.emitters:
        out.fixes.append(
            "numba: or generate PTX the driver accepts with a CUDA toolkit no newer than the driver's CUDA "
            "(numba uses the toolkit's NVVM; cudafit gpus shows the driver's CUDA version)"
        )
    return out


def _first_toolkit(arch: str | None, isa: str | None) -> CudaVersion | None:
    """The first CUDA toolkit that targets ``arch`` (``sm_120``, ``compute_100f``), else that emits PTX ISA
    ``isa``."""
    from cudafit.model import parse_ptx_isa_version
    from cudafit.rules import tables

    if arch:
        want = arch.replace("compute_", "sm_")
        for cuda, targets in sorted(tables.load_tables().targets.items()):
            if want in {str(t) for t in targets}:
                return cuda
    if isa:
        need = parse_ptx_isa_version(isa)
        return next((c for c, v in sorted(tables.load_tables().ptx_isa.items()) if v >= need), None)
    return None


# Fermi (sm_2x) and Kepler (sm_3x) were targets of every CUDA toolkit from 6.0 until they were dropped (Fermi in
# 9.0, sm_30 in 11.0, sm_35/37 in 12.0: the toolkits' release notes), so a toolkit refusing one is newer than the
# arch.  From Maxwell on, a refusal can also be a toolkit older than the arch (compute_70 from CUDA 8), and the
# message alone does not say which.
_KEPLER_END = 50


def _last_toolkit(arch: str) -> CudaVersion | None:
    """The last CUDA toolkit of cudafit's table that still targets ``arch`` (``None``: none of them does)."""
    from cudafit.rules import tables

    want = arch.replace("compute_", "sm_")
    targets = sorted(tables.load_tables().targets.items())
    return next((c for c, ts in reversed(targets) if want in {str(t) for t in ts}), None)


def _old_arch_refused(out: Grounded, arch: str) -> None:
    """A build asking a toolkit for a Fermi/Kepler arch the toolkit has dropped: the toolkit is too new for it."""
    last = _last_toolkit(arch)
    keep = (
        f"a CUDA <= {last} toolkit, the last of cudafit's table that targets it"
        if last
        else "the older CUDA toolkit that still targets it"
    )
    out.cause = (
        f"the build asks for {arch}, an arch this CUDA toolkit no longer targets: the toolkit is newer than the "
        "arch (major releases drop the oldest ones), not older"
    )
    out.fixes = [
        f"remove {arch} from the build's arch list (TORCH_CUDA_ARCH_LIST, CMAKE_CUDA_ARCHITECTURES, -gencode / "
        "-arch flags) and list the GPUs it must run on (cudafit plan --gpu NAME gives the forms)",
        f"or, to keep running on a GPU of that arch, build with {keep}",
    ]


def _nvrtc(g: Ground) -> bool:
    """Whether the run-time compiler is NVRTC (its error names, CuPy's/hashcat's reports): the fix is the libnvrtc
    the program loads, not a ptxas or an nvcc on the PATH."""
    nvrtc_sources = {NVRTC, HASHCAT_NVRTC}
    return bool(nvrtc_sources & set(g.ev.get("sources", []))) or "nvrtc" in lines_of(g.ev).lower()


# A build script's or JIT's own check of the toolkit it needs: "requires NVCC 12.9 or higher", "requires CUDA 12.9
# or newer", 'requires CUDA toolkit 12.9 or higher'.
_TOOLKIT_STATED = re.compile(
    r"\brequires?\s+(?:NVCC|CUDA(?:\s+toolkit)?|CTK)\s*([0-9]{1,2}\.[0-9])\s*(?:\+|or\s+(?:higher|newer|later|above))",
    re.I,
)


def ground_jit_toolchain(g: Ground) -> Grounded:
    """A compiler used at run time (Triton's ptxas, a JIT library's nvcc, NVRTC) that predates the GPU or the
    PTX.  Without an arch in the message, the newest GPU it runs on is the arch the compiler must know."""
    ev = g.ev
    out = default(g)
    arch = ev.get("unsupported_target")
    if arch and arch_number(arch) < _KEPLER_END:
        _old_arch_refused(out, arch)
        return out
    if not arch and not ev.get("ptx_isa") and g.ccs:
        arch = f"sm_{max(g.ccs).arch_number}"
    ptx_isa = ev.get("ptx_isa")
    isa = ptx_isa["needed"] if ptx_isa else None
    first = _first_toolkit(arch, isa)
    if not first and (stated := _TOOLKIT_STATED.search(lines_of(ev))):
        # the check names the toolkit it needs ("sm100 compilation for Flash MLA requires NVCC 12.9 or higher")
        first = parse_cuda_version(stated.group(1))
    what = arch or (f"PTX ISA {isa}" if isa else "this GPU's arch")
    must = (
        f"its nvcc --list-gpu-code must list {arch.replace('compute_', 'sm_').rstrip('af')}"
        if arch
        else ("its ptxas --version must be that release or newer")
    )
    if first:
        out.cause = f"the compiler used at run time predates {what}, which needs CUDA >= {first}"
        ptxas = (
            f"point Triton at the ptxas of a CUDA >= {first} toolkit: export TRITON_PTXAS_PATH=/usr/local/cuda/bin/"
            f"ptxas (check it first: /usr/local/cuda/bin/ptxas --version)"
        )
        nvcc = (
            f"install a CUDA >= {first} toolkit and point the JIT library at it: export CUDA_HOME=/usr/local/cuda "
            f"({must})"
        )
        is_triton = ev.get("triton") or "ptxas" in lines_of(ev)
        out.fixes = [ptxas, nvcc] if is_triton else [nvcc, ptxas]
    if _nvrtc(g):
        toolkit = f"a CUDA >= {first} toolkit" if first else "a CUDA toolkit whose nvcc --list-gpu-code lists the GPU"
        out.fixes = [
            f"install {toolkit} and make its NVRTC the one the program loads: its lib64 (libnvrtc) first on "
            "LD_LIBRARY_PATH, CUDA_PATH on Windows; or a release of the program built with that NVRTC"
        ]
    return out


def _cudnn_mismatch(out: Grounded, loaded: str, compiled: str) -> None:
    out.cause = (
        f"the cuDNN loaded at run time ({loaded}) is older than the one the framework was compiled with "
        f"({compiled}): another cuDNN (a system one, or another package's) is found first"
    )
    out.fixes = [
        f"install cuDNN {compiled} or newer of the same major where the framework finds it: pip install -U "
        "nvidia-cudnn-cu12 (or -cu13), and remove older cuDNN directories from LD_LIBRARY_PATH",
        "importing two frameworks in one process can load the first one's cuDNN: import the one needing the "
        "newer cuDNN first, or align their cuDNN pins (cudafit doctor shows each package's CUDA libraries)",
    ]


def _library_mismatch(out: Grounded, framework: str | None, text: str) -> bool:
    """CTranslate2 without its CUDA major's cuBLAS, JAX with an older CUDA library: whether it was one."""
    if framework == "ctranslate2" and "cannot be loaded" in text:
        out.cause = "CTranslate2 loads the cuBLAS of the CUDA major it was built for at run time, and none was found"
        out.fixes = [
            "install the CUDA libraries of CTranslate2's CUDA major where it finds them: ctranslate2 4.x needs "
            "CUDA 12 cuBLAS and cuDNN 9 (pip install nvidia-cublas-cu12 nvidia-cudnn-cu12==9.*, their lib "
            "directories on LD_LIBRARY_PATH), or pip install ctranslate2==3.24.0 for CUDA 11",
        ]
        return True
    if framework == "jax" and ("outdated" in text or "which is newer" in text):
        out.cause = "a CUDA library JAX loads (cuDNN, cuBLAS, the runtime...) is older than the one JAX was built with"
        out.fixes = [
            'install the CUDA libraries JAX was built against: pip install -U "jax[cuda12]" (it pulls matching '
            "nvidia-* wheels), and keep older system CUDA/cuDNN directories out of LD_LIBRARY_PATH",
        ]
        return True
    return False


def _torch_build_for_driver(out: Grounded, driver: DriverVersion) -> None:
    from cudafit.rules import tables

    floor13 = tables.runtime_min_driver_branch(13) or 580
    floor12 = tables.runtime_min_driver_branch(12) or 525
    index = _torch_index(13 if driver.major >= floor13 else 12 if driver.major >= floor12 else 11)
    out.fixes[0] = (
        f"install the CUDA build that driver {driver} runs: pip install torch --index-url "
        f"{index} (verify: cudafit check torch --index-url {index})"
    )


def ground_wrong_build(g: Ground) -> Grounded:
    """A CPU build, another CUDA's build or an older CUDA library than the framework needs: that project's fix."""
    out = default(g)
    framework = _framework(g)
    m = re.search(
        r"Loaded runtime CuDNN library: (\S+?)\.? .*?compiled with:? (\S+?)\.?(?:\s|$)", g.ev.get("lines", [""])[0]
    )
    if m:
        _cudnn_mismatch(out, m.group(1), m.group(2))
        return out
    text = " ".join([*g.ev.get("lines", []), *g.ev.get("packages", [])]).lower()
    if _library_mismatch(out, framework, text):
        return out
    row = project_fixes(framework)
    if framework is not None and row.shared_message and framework not in text:
        # "Not compiled with GPU support" is printed by many projects' ops (detectron2, mmcv, faiss, DCNv2, ...):
        # name the fix only when the text names the project.
        out.cause = (
            "a compiled extension's C++/CUDA ops were built without CUDA (no nvcc or CUDA_HOME at build time, or "
            "a CPU-only build was installed), so its GPU path raises"
        )
        out.fixes = [
            "rebuild the package where nvcc and CUDA_HOME are visible (often FORCE_CUDA=1 pip install "
            "--no-build-isolation PKG), or install its CUDA build; the message's file and function name the package",
            *[f for f in out.fixes[1:] if "torch" not in f],
        ]
        return out
    if framework not in (None, "torch") and row.build is not None:
        out.fixes = [row.build, *[f for f in out.fixes[1:] if "torch" not in f]]
        return out
    if framework is None and g.ev.get("forms") and "torch" not in text and "torch" not in lines_of(g.ev).lower():
        # a form read in a user's words names no framework: no PyTorch wheel for a dlib, faiss or GROMACS user
        out.cause = (
            "the package that should use the GPU is a build without CUDA (a CPU-only wheel or conda package, or a "
            "source build whose CUDA part was skipped when no toolkit was found), so it runs on the CPU"
        )
        out.fixes = [
            "check the package's own build flag (torch.version.cuda, dlib.DLIB_USE_CUDA, hasattr(faiss, "
            "'StandardGpuResources'), tf.test.is_built_with_cuda(), xgboost.build_info()['USE_CUDA']) and install "
            "its CUDA build, or rebuild it where nvcc and CUDA_HOME are visible",
            "cudafit doctor lists which installed packages carry CUDA code at all",
        ]
        return out
    if g.context.driver is not None:
        _torch_build_for_driver(out, g.context.driver)
    return out


# A package named beside its version in a pairing check's words: "jaxlib version 0.4.30", "flashinfer-jit-cache
# version (0.4.1+cu128)", "jaxlib is version 0.4.23", "this version of jax requires version >= 0.4.30",
# "transformer_engine_torch v2.4.0"; words that are no package ("CUDA version", "API version", "this version") are
# left out.  A name starts where no name character precedes it, so a long token is scanned once.
_PACKAGE_AT_VERSION = re.compile(
    r"(?<![\w.-])(?P<a>[A-Za-z][\w.-]*)\s+(?:is\s+)?version\s*[(:]?\s*v?(?P<va>\d+\.\d+(?:[.+]?\w+)*)\)?"
    r"|(?<![\w.-])(?P<b>[A-Za-z][\w.-]*)\s+requires\s+version\s*(?:>=|≥)\s*(?P<vb>\d+\.\d+(?:[.+]?\w+)*)"
    r"|(?<![\w.-])(?P<c>[A-Za-z][\w.-]*)\s+v(?P<vc>\d+\.\d+(?:[.+]?\w+)*)\b"
)
_NOT_A_PACKAGE = frozenset(
    {"cuda", "driver", "cudnn", "api", "runtime", "library", "the", "this", "of", "that", "abi", "python", "plugin"}
)


def _packages_at_versions(text: str) -> dict[str, str]:
    """The packages a message names with their versions, in order, each once (the first version it gives)."""
    found: dict[str, str] = {}
    for m in _PACKAGE_AT_VERSION.finditer(text):
        name = m.group("a") or m.group("b") or m.group("c")
        version = m.group("va") or m.group("vb") or m.group("vc")
        if name.lower() not in _NOT_A_PACKAGE:
            found.setdefault(name, version)
    return found


def ground_extension_abi(g: Ground) -> Grounded:
    """A compiled part built against another release of what loads it.  The category's own fixes are PyTorch's
    (an extension's wheel for the installed torch and C++ ABI); a pairing check of another project ("jaxlib version
    0.4.30 is newer than and incompatible with jax version 0.4.26", FlashInfer's JIT cache, TransformerEngine's
    packages, a ggml backend plugin's API version) gets its own way out: the two packages from one release."""
    out = default(g)
    lines = lines_of(g.ev)
    if re.search(r"\b(?:torch|pytorch)\b|\bc10\b|_ZN", lines, re.I):
        return out
    named = _packages_at_versions(lines)
    if len(named) >= 2:
        pairs = ", ".join(f"{name} {version}" for name, version in named.items())
        out.cause = (
            f"a compiled package and the package it plugs into are at releases not made for each other ({pairs}): "
            "their binary interface differs, so the pairing check refuses them"
        )
        out.fixes = [
            f"install {' and '.join(named)} from one release: upgrade (or pin) the older to match the other, e.g. "
            f"pip install -U {' '.join(named)} (each project's install guide gives the pip names that go together)",
        ]
        return out
    out.cause = (
        "a compiled part (an extension, a backend plugin, a prebuilt kernel cache or a serialized engine) was built "
        "against another release of the package that loads it, so the two do not fit"
    )
    out.fixes = [
        "reinstall the package and its compiled part from one release (the message names the part), or rebuild the "
        "part against the installed package",
    ]
    return out
