"""The fuzzed input surfaces and the contract each keeps (no fuzzer needed: the tests replay through it).

The contract, for every surface: the public entry point a command uses returns normally, or raises
a :class:`~cudafit.errors.CudafitError` (which the CLI prints as one ``cudafit: error: ...`` line,
exit code 2 or 3).  Any other exception is a failure: it is what ends a real command with
``internal error``.  Target surfaces (wheels, .pt2, images, directories) are stricter: they never
raise at all, because one bad member/layer/file must become that item's ``unreadable`` entry, and
the directory surface checks that a good file beside the fuzzed one is still judged.  Time and memory
limits are checked by :func:`fuzz.replay.run_one`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cudafit.errors import CudafitError

__all__ = ["SURFACES", "ContractViolation", "Surface", "workdir"]

_WORK: list[str] = []  # the scratch directory, made on first use


class ContractViolation(AssertionError):
    """A surface's own isolation or shape check failed (not an exception from cudafit itself)."""


def workdir() -> str:
    """One scratch directory per process (on tmpfs where there is one: a file per input is cheap there)."""
    if not _WORK or not os.path.isdir(_WORK[0]):
        base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        _WORK[:] = [tempfile.mkdtemp(prefix="cudafit-fuzz-", dir=base)]
    return _WORK[0]


def _write(name: str, data: bytes) -> str:
    path = os.path.join(workdir(), name)
    with open(path, "wb") as fh:
        fh.write(data)
    return path


def _split(data: bytes) -> tuple[int, bytes]:
    """The first byte picks a mode; the rest is the input."""
    return (data[0], data[1:]) if data else (0, b"")


# -- judging, shared by the target surfaces -----------------------------------------------------------


def _gpus() -> list[Any]:
    from cudafit.model import ComputeCapability, Gpu

    return [Gpu("H100", ComputeCapability(9, 0)), Gpu("GTX 1080 Ti", ComputeCapability(6, 1))]


def _judge(items: list[Any], *, gpus: int = 2, markdown: bool = True) -> dict[str, Any]:
    """What ``check --kernels --json`` computes for the items (everything but printing)."""
    from cudafit.analysis import analyze
    from cudafit.model import DriverVersion
    from cudafit.report.check import check_document, render_markdown

    analysis = analyze(items, _gpus()[:gpus], driver=DriverVersion((580, 65, 6)), kernels=True)
    doc = check_document(analysis, kernels=True)
    json.dumps(doc)
    if markdown:
        render_markdown(doc)
    return doc


def _scan_kernels(items: list[Any]) -> None:
    """What ``scan --kernels`` reads for each item (kernel names: the payloads are decompressed)."""
    from cudafit.cli.scan import _kernels_for
    from cudafit.report.scan import FileReport, render_scan_json

    reports = [_kernels_for(FileReport(facts=i.facts, package=i.package, version=i.version)) for i in items]
    json.dumps(render_scan_json(reports, with_kernels=True))


# -- archives -------------------------------------------------------------------------------------------


def run_wheel(data: bytes) -> None:
    """A wheel's bytes: members streamed, every bad member its own unreadable item."""
    from cudafit.targets.wheel import WheelTarget

    path = _write("pkg-1.0-py3-none-linux_x86_64.whl", data)
    items = list(WheelTarget(path).iter_items())
    _judge(items)
    _scan_kernels(items)


def run_pt2(data: bytes) -> None:
    """An AOTInductor ``.pt2`` package's bytes."""
    from cudafit.targets.pt2 import Pt2Target, inspect_pt2

    path = _write("model.pt2", data)
    inspect_pt2(path, intended_device="cuda")
    _judge(list(Pt2Target(path).iter_items()))


def run_image(data: bytes) -> None:
    """A ``docker save`` / OCI layout tarball's bytes."""
    from cudafit.targets.image import ImageTarget, looks_like_image

    path = _write("image.tar", data)
    looks_like_image(path)
    _judge(list(ImageTarget(path).iter_items()))


# -- binaries -----------------------------------------------------------------------------------------


def _good_dir() -> str:
    """A directory with one good cubin (``good/``) and a slot for the fuzzed file (``bad/``)."""
    root = os.path.join(workdir(), "tree")
    good = os.path.join(root, "good", "k.cubin")
    if not os.path.isfile(good):
        from fuzz.seeds import fixture

        os.makedirs(os.path.dirname(good), exist_ok=True)
        os.makedirs(os.path.join(root, "bad"), exist_ok=True)
        shutil.copyfile(fixture("k_sm90a.cubin"), good)
    return root


_SUFFIXES = (".so", ".cubin", ".fatbin", ".a", ".o", ".ptx", ".dll")


def run_fatbin(data: bytes) -> None:
    """``check`` of a directory holding the fuzzed file beside a good cubin: the good one is still judged."""
    from cudafit.targets.files import DirectoryTarget

    mode, body = _split(data)
    root = _good_dir()
    bad = os.path.join(root, "bad")
    for name in os.listdir(bad):
        os.unlink(os.path.join(bad, name))
    with open(os.path.join(bad, "x" + _SUFFIXES[mode % len(_SUFFIXES)]), "wb") as fh:
        fh.write(body)
    items = list(DirectoryTarget(root).iter_items())
    doc = _judge(items, gpus=1, markdown=False)  # one GPU: the fuzzed bytes, not the fixes, are under test
    good = [t for t in doc["targets"] if t["path"].endswith("good") or t["name"].endswith("good")]
    if not good or good[0]["unreadable"] or good[0]["verdicts"][0]["status"] != "native":
        msg = f"the good cubin beside the fuzzed file was not judged native on H100: {good}"
        raise ContractViolation(msg)


def run_payload(data: bytes) -> None:
    """Bytes read as a file (``scan --kernels`` path): every entry's payload decompressed and parsed."""
    from cudafit.binary import inspect_bytes
    from cudafit.binary.kernels import iter_cubins
    from cudafit.binary.payload import read_entry_payload
    from cudafit.targets.interface import ScanItem

    mode, body = _split(data)
    name = "x" + _SUFFIXES[mode % len(_SUFFIXES)]
    facts = inspect_bytes(body, name)
    for target in (facts, *facts.members):
        for _index, _entry, _info in iter_cubins(body, target):
            pass
        for module in target.modules:
            for entry in module.entries:
                with contextlib.suppress(CudafitError):
                    read_entry_payload(body, entry, max_size=1 << 20)
    path = _write(name, body)
    from cudafit.binary import inspect_path

    _scan_kernels([ScanItem(package=None, version=None, path=path, facts=inspect_path(path))])


# -- probe outputs and inventories ------------------------------------------------------------------------


def _render_gpus(inv: Any) -> None:
    from cudafit.probe import inventory_to_dict
    from cudafit.report.console import make_console
    from cudafit.report.gpus import render_machine

    doc = inventory_to_dict(inv)
    json.dumps(doc)
    render_machine(doc, make_console(io.StringIO()))


def run_probe(data: bytes) -> None:
    """What the probe reads from tools: nvidia-smi CSV, NVML values, ``CUDA_VISIBLE_DEVICES``/ORDER."""
    from cudafit.probe import clear_cache, probe_machine
    from cudafit.probe.fake import NVMLError, RecordedNvml

    mode, body = _split(data)
    text = body.decode("utf-8", "replace")
    smi_text, _, env_text = text.partition("\x00")
    visible, _, order = env_text.partition("\x00")
    env = {"CUDA_VISIBLE_DEVICES": visible, "CUDA_DEVICE_ORDER": order} if env_text else {}
    nvml: Any = RecordedNvml(None, NVMLError("Uninitialized"))
    if mode % 2:  # an NVML answer: the same text read as a recorded host (values as NVML returns them)
        from fuzz.replay import decode_json

        host = decode_json(smi_text)
        valid = isinstance(host, dict)
        nvml = RecordedNvml(host if valid else None, None if valid else NVMLError("not a recorded host"))

    def runner(cmd: Any, timeout: float) -> tuple[int, str, str]:
        return 0, smi_text, ""

    clear_cache()
    try:
        inv = probe_machine(env=env, nvml=nvml, smi_runner=runner, toolchains=False)
    finally:
        clear_cache()
    _render_gpus(inv)


def run_inventory(data: bytes) -> None:
    """A ``cudafit.gpus/1`` inventory file (``--inventory``) or a recorded-host file (``CUDAFIT_FAKE_NVML``)."""
    from cudafit.probe import inventory_from_file

    mode, body = _split(data)
    if mode % 2:  # a recorded host may ask the replay to hang (fleet timeout tests): not an input to time
        body = body.replace(b"hang_s", b"hang_x")
    path = _write("inventory.json", body)
    if mode % 2:
        from cudafit.probe import clear_cache, probe_machine

        clear_cache()
        try:
            inv = probe_machine(env={"CUDAFIT_FAKE_NVML": path}, toolchains=False)
        finally:
            clear_cache()
    else:
        inv = inventory_from_file(path)
    _render_gpus(inv)


# -- configuration documents ------------------------------------------------------------------------------


def _judge_fleet(fleet: Any) -> None:
    from cudafit.fleet.judge import judge_fleet
    from cudafit.report.console import make_console
    from cudafit.report.fleet import fleet_check_document, render_fleet_text, render_inventory_text

    inv_doc = fleet.to_dict()
    json.dumps(inv_doc)
    render_inventory_text(inv_doc, make_console(io.StringIO()))
    from cudafit.binary import inspect_path
    from cudafit.targets.interface import ScanItem
    from fuzz.seeds import fixture

    cubin = fixture("k_sm90a.cubin")
    item = ScanItem(package="pkg", version="1.0", path=cubin, facts=inspect_path(cubin))
    judgement = judge_fleet([item], fleet)
    doc = fleet_check_document(judgement)
    json.dumps(doc)
    render_fleet_text(doc, make_console(io.StringIO()))


def run_config(data: bytes) -> None:
    """Fleet files, ``kubectl get nodes -o json``, label selectors and ``[tool.cudafit.audit]``."""
    mode, body = _split(data)
    mode %= 4
    if mode == 0:
        from cudafit.fleet.files import load_fleet_file

        _judge_fleet(load_fleet_file(_write("fleet.json", body)))
    elif mode == 1:
        from cudafit.fleet.k8s_source import inventory_from_nodes_json

        doc, _, selector = body.partition(b"\x00")
        sel = selector.decode("utf-8", "replace") or None
        _judge_fleet(inventory_from_nodes_json(_write("nodes.json", doc), selector=sel))
    elif mode == 2:
        from cudafit.fleet.selectors import parse_label_selector

        text, _, labels = body.decode("utf-8", "replace").partition("\x00")
        match = parse_label_selector(text)
        pairs = dict(p.partition("=")[::2] for p in labels.split(",") if p)
        match(pairs)
    else:
        from cudafit.audit.policy import load_policy

        load_policy(_write("pyproject.toml", body))


# -- explain text -------------------------------------------------------------------------------------------


def run_explain(data: bytes) -> None:
    """A log or error message given to ``cudafit explain`` (grounded on two GPUs and a driver)."""
    from cudafit.explain import Context, explain_text
    from cudafit.model import ComputeCapability, DriverVersion, Gpu

    text = data.decode("utf-8", "replace")
    ctx = Context(
        gpus=(Gpu("RTX 2080", ComputeCapability(7, 5)), Gpu("RTX 3090", ComputeCapability(8, 6))),
        driver=DriverVersion((535, 104, 5)),
    )
    for finding in explain_text(text, ctx):
        to_dict = getattr(finding, "to_dict", None)
        if to_dict is not None:
            json.dumps(to_dict())


@dataclass(frozen=True)
class Surface:
    """One input surface: its entry point, where its seeds come from, what it stands for."""

    name: str
    run: Callable[[bytes], None]
    doc: str
    strict: bool = False  # targets: not even a CudafitError may escape (errors are items)


SURFACES: dict[str, Surface] = {
    s.name: s
    for s in (
        Surface("wheel", run_wheel, "wheels (zip): members, METADATA, --kernels re-read", strict=True),
        Surface("pt2", run_pt2, "AOTInductor .pt2 packages (zip): metadata JSON, cubins", strict=True),
        Surface("image", run_image, "docker-save and OCI tarballs: manifests, indexes, layers", strict=True),
        Surface("fatbin", run_fatbin, "check of a directory: a fuzzed binary beside a good cubin", strict=True),
        Surface("payload", run_payload, "inspect + payload decompression + kernel names (scan --kernels)"),
        Surface("probe", run_probe, "nvidia-smi output, NVML values, CUDA_VISIBLE_DEVICES, gpus text"),
        Surface("inventory", run_inventory, "cudafit.gpus/1 inventories and recorded NVML hosts"),
        Surface("config", run_config, "fleet files, Kubernetes node lists, label selectors, pyproject"),
        Surface("explain", run_explain, "explain text (logs, error messages)"),
    )
}
