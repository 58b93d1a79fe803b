"""What ``find`` says beside its answer: the install commands, what uv's automatic backend would pick,
and, when no published build runs, the way out (a source build that can target the GPUs, a GPU-free
variant), all from the ecosystem table (``rules/data/ecosystem.json``) and NVIDIA's toolkit table."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from cudafit.find.results import CandidateResult, FindResult, IndexStatus, UvAuto
from cudafit.model import ComputeCapability, CudaVersion, DriverVersion, Gpu
from cudafit.rules.ecosystem import load_ecosystem
from cudafit.rules.status import Status
from cudafit.targets.index import IndexClient
from cudafit.targets.remote import RemoteError

__all__ = ["install_lines", "uv_auto", "way_out"]


def _has_sdist(project: str, statuses: Sequence[IndexStatus], client: IndexClient) -> bool:
    """Whether an index that answered lists a source distribution of ``project`` (pages come from cache)."""
    found = False
    for s in statuses:
        if s.error:
            continue
        with contextlib.suppress(RemoteError):
            page = client.project_page(s.url, project)
            found = found or any(f.filename.endswith((".tar.gz", ".zip")) for f in page.files)
    return found


def way_out(
    project: str,
    gpus: Sequence[Gpu],
    statuses: Sequence[IndexStatus],
    client: IndexClient,
    results: Sequence[CandidateResult],
) -> tuple[str, ...]:
    """When no published build runs: a source build that can target the GPUs, and a GPU-free variant."""
    eco = load_ecosystem()
    lines: list[str] = []
    ccs = sorted({g.compute_capability for g in gpus})
    if not ccs:
        return ()
    cuda = _newest_cuda_for(ccs)
    build = eco.source_builds.get(project)
    has_sdist = _has_sdist(project, statuses, client)
    arch_list = ";".join(str(c) for c in ccs)
    newest = results[0].file.version if results else None
    if cuda is not None and build is not None:
        where = "from its source distribution" if has_sdist else f"from {build.repository}"
        var = build.setting(arch_list)
        cmd = f"{var} pip install --no-binary {project} --no-build-isolation '{project}=={newest}'"
        lines.append(
            f"build {project} {where} with CUDA {cuda.major}.x (it can target {arch_list}): "
            + (cmd if has_sdist and newest else var)
        )
    elif cuda is not None and has_sdist:
        gpu_flags = " ".join(f"--gpu {c}" for c in ccs)
        lines.append(
            f"build {project} from its source distribution with CUDA {cuda.major}.x for {arch_list} "
            f"(its build's arch flags: cudafit plan --cuda {cuda.major}.{cuda.minor} {gpu_flags})"
        )
    elif cuda is None:
        lines.append(f"no CUDA toolkit in the table can target {arch_list}")
    free = eco.gpu_free.get(project)
    if free:
        lines.append(f"or the GPU-free build: pip install {free}")
    return tuple(lines)


def _newest_cuda_for(ccs: Sequence[ComputeCapability]) -> CudaVersion | None:
    from cudafit.rules import tables

    best: CudaVersion | None = None
    for cuda in tables.load_tables().targets:
        numbers = {t.number for t in tables.toolkit_targets(cuda)}
        if all(c.major * 10 + c.minor in numbers for c in ccs) and (best is None or cuda > best):
            best = cuda
    return best


def uv_auto(gpus: Sequence[Gpu], driver: DriverVersion | None, results: Sequence[CandidateResult]) -> UvAuto:
    """What uv's ``--torch-backend=auto`` would pick for this driver, and whether it can run here."""
    eco = load_ecosystem()
    if driver is None:
        return UvAuto(variant=None, index_url=None, runs=None, why="no driver known: uv's auto falls back to CPU")
    pick = eco.uv_auto_pick(driver)
    if pick is None:
        return UvAuto(variant="cpu", index_url=None, runs=None, why=f"driver {driver} is below every variant")
    bad = [g for g in gpus if not pick.can_target(g.compute_capability)]
    if bad:
        names = ", ".join(g.label for g in bad)
        why = f"CUDA {pick.cuda} cannot target {names} (its lowest arch is {pick.lowest_arch})"
        return UvAuto(variant=pick.name, index_url=pick.index_url, runs=False, why=why)
    judged = [r for r in results if r.variant == pick.name and r.status != "error"]
    if judged:
        r = judged[0]
        runs = r.status in (Status.NATIVE, Status.JIT)
        return UvAuto(variant=pick.name, index_url=pick.index_url, runs=runs, why=f"{r.file.filename}: {r.status}")
    same_major = [r for r in results if r.cuda_runtime and r.cuda_runtime.split(".")[0] == str(pick.cuda.major)]
    if same_major:
        r = same_major[0]
        why = (
            f"its index was not read; {r.file.filename} (CUDA {r.cuda_runtime}, same major) is {r.status} here, "
            "the cu-variant build may differ"
        )
        return UvAuto(variant=pick.name, index_url=pick.index_url, runs=None, why=why)
    return UvAuto(variant=pick.name, index_url=pick.index_url, runs=None, why="no build of that variant was judged")


def install_lines(result: FindResult) -> dict[str, str]:
    """pip and uv command lines that install the answer (``{}`` when there is none)."""
    ans = result.answer
    if ans is None:
        return {}
    eco = load_ecosystem()
    version = ans.file.version
    pin = f"'{result.project}=={version}'"
    variant = eco.variant_for_index(ans.file.index_url)
    on_pypi = ans.file.index_url.rstrip("/") == eco.pypi_index.rstrip("/")
    lines = {"pip": f"pip install {pin}" + ("" if on_pypi else f" --index-url {ans.file.index_url}")}
    if variant is not None:
        lines["uv"] = f"uv pip install {pin} --torch-backend={variant.name}"
        lines["uv_project"] = (
            f'[[tool.uv.index]] name = "pytorch-{variant.name}", url = "{variant.index_url}", explicit = true; '
            f'[tool.uv.sources] {result.project} = {{ index = "pytorch-{variant.name}" }}'
        )
    elif on_pypi:
        lines["uv"] = f"uv pip install {pin}  # without --torch-backend: PyPI's own build"
    else:
        lines["uv"] = f"uv pip install {pin} --index-url {ans.file.index_url}"
    return lines
