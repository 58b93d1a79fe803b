"""What a requirement brings in: the install set pip resolves, each distribution with device code judged.

``cudafit check "torchvision==0.23.0" --gpu "GTX 1080 Ti"`` judges torchvision's own wheel, but
``pip install torchvision==0.23.0`` also installs torch 2.8.0, whose PyPI build has no code for 6.1: the
user's first op fails.  So the set pip would install is resolved by pip itself
(``pip install --dry-run --ignore-installed --report``, binary wheels only, so no build backend runs),
never by hand, and every distribution in it that may carry device code (a platform wheel) or pins a CUDA
runtime (an ``nvidia-*-cuNN`` wheel) is judged as its own row with the range reads and sha256 cache of
``find`` (:func:`cudafit.find.judge_wheel`): a dependency costs what its verdict needs, not its whole wheel.
When pip cannot resolve (offline, a conflict) the dependencies are "not judged", said in a note, never a pass.
It lives beside ``find`` because it judges with ``find``'s judge (targets sit below ``find``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from cudafit.find.candidates import NO_KERNELS, cuda_pins
from cudafit.model import DriverVersion, Gpu, JsonDict
from cudafit.rules.ecosystem import normalize_project
from cudafit.rules.status import PACKAGE_STATUSES, Status, severity, worst

__all__ = [
    "Dependency",
    "attach_dependencies",
    "judge_dependencies",
    "may_carry_device_code",
    "resolve_install_set",
    "wheel_pins_note",
]

#: The CUDA wheels NVIDIA publishes per CUDA major (nvidia-cublas-cu12, nvidia-cudnn-cu12, ...).
_CUDA_WHEEL = re.compile(r"^nvidia-[a-z0-9-]+-cu\d+$")
#: The statuses a dependency row may carry (anything else a judge returns, an error, is "unknown").
_ROW_STATUSES = frozenset(s.value for s in PACKAGE_STATUSES)


@dataclass(frozen=True)
class Dependency:
    """One distribution of pip's install report: what it is and where its wheel is."""

    name: str
    version: str
    url: str
    sha256: str | None

    def __str__(self) -> str:
        return f"{self.name} {self.version}"

    @property
    def filename(self) -> str:
        return self.url.rsplit("/", 1)[-1].split("#")[0]


def resolve_install_set(requirement: str, pip_args: Sequence[str] = ()) -> tuple[list[Dependency], str | None]:
    """(what ``pip install REQ`` would install, error): pip's own resolver in a dry run, read from its report.

    ``--only-binary=:all:`` keeps pip from building any sdist to learn its dependencies (no code of what
    is judged runs); ``--ignore-installed`` resolves as into an empty environment, whatever this one holds;
    ``--target`` (an empty folder, never written in a dry run) is what pip asks for before it accepts
    ``--platform`` / ``--python-version``.
    """
    with tempfile.TemporaryDirectory(prefix="cudafit-resolve-") as tmp:
        report = os.path.join(tmp, "report.json")
        cmd = [
            sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--only-binary=:all:",
            "--disable-pip-version-check", "--quiet", "--report", report, "--target", os.path.join(tmp, "target"),
            *pip_args, requirement,
        ]  # fmt: skip
        env = {**os.environ, "PIP_NO_INPUT": "1", "TMPDIR": tmp}
        try:
            proc = subprocess.run(
                cmd, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=900, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            return [], f"pip could not resolve {requirement}: {err}"
        if proc.returncode != 0 or not os.path.isfile(report):
            lines = [x.strip() for x in (proc.stderr + proc.stdout).splitlines() if x.strip()]
            errors = [x for x in lines if x.startswith("ERROR")]
            reason = (errors or lines or [f"pip exited with {proc.returncode}"])[-1]
            return [], f"pip could not resolve {requirement}: {reason}"
        try:
            with open(report, encoding="utf-8") as fh:
                doc = json.load(fh)
        except (OSError, ValueError) as err:
            return [], f"pip's install report for {requirement} is unreadable: {err}"
    return list(_iter_report(doc)), None


def _iter_report(doc: object) -> Iterator[Dependency]:
    """The ``install`` items of pip's installation report (https://pip.pypa.io/en/stable/reference/installation-report/)
    that name a download; an item of the wrong shape is skipped, never an error: the report is outside input."""
    install = doc.get("install") if isinstance(doc, dict) else None
    for item in install if isinstance(install, list) else []:
        meta = item.get("metadata") if isinstance(item, dict) else None
        info = item.get("download_info") if isinstance(item, dict) else None
        if not isinstance(meta, dict) or not isinstance(info, dict):
            continue
        name, version, url = meta.get("name"), meta.get("version"), info.get("url")
        if not isinstance(url, str) or not isinstance(name, str) or not name:
            continue
        archive = info.get("archive_info")
        hashes = archive.get("hashes") if isinstance(archive, dict) else None
        sha256 = hashes.get("sha256") if isinstance(hashes, dict) else None
        yield Dependency(
            normalize_project(name),
            version if isinstance(version, str) else "",
            url,
            sha256 if isinstance(sha256, str) else None,
        )


def may_carry_device_code(dep: Dependency) -> bool:
    """A platform wheel (not ``py3-none-any``) or an ``nvidia-*-cuNN`` wheel: worth a row of its own."""
    if _CUDA_WHEEL.match(dep.name):
        return True
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    if not dep.filename.endswith(".whl"):
        return False  # an sdist is never read (reading one could mean building it)
    try:
        tags = parse_wheel_filename(dep.filename)[3]
    except InvalidWheelFilename:
        return True  # an odd name: judge it rather than pass it silently
    return any(t.platform != "any" for t in tags)


def judge_dependencies(
    requirement: str,
    pip_args: Sequence[str],
    gpus: Sequence[Gpu],
    driver: DriverVersion | None,
    *,
    use_cache: bool = True,
) -> tuple[list[JsonDict], str | None]:
    """(one JSON row per dependency with device code, error): everything pip would install besides the
    requirement's own distribution, judged by range reads (``cudafit.check/1`` ``dependencies``)."""
    from cudafit.find.judge import judge_wheel
    from cudafit.targets.index import IndexClient, IndexFile

    deps, error = resolve_install_set(requirement, pip_args)
    if error is not None:
        return [], error
    own = _own_name(requirement)
    client = IndexClient(use_cache=use_cache)
    rows: list[JsonDict] = []
    for dep in deps:
        if dep.name == own or not may_carry_device_code(dep):
            continue
        index_url = dep.url.rsplit("/", 1)[0] + "/"
        file = IndexFile(
            dep.name, dep.version, dep.filename, dep.url, index_url, dep.sha256, None, False, None, False, None
        )
        result = judge_wheel(file, gpus, driver=driver, client=client, use_cache=use_cache)
        judged = result.status != "error"
        rows.append(
            {
                "name": dep.name,
                "version": dep.version,
                "file": dep.filename,
                "url": dep.url,
                "status": result.status if judged and result.status in _ROW_STATUSES else Status.UNKNOWN.value,
                "judged": judged,
                "verdicts": [dict(v) for v in result.verdicts],
                "bytes_fetched": result.bytes_fetched,
                "full_download": result.full_download,
                "cached": result.cached,
                "decided_by": result.decided_by,
                "error": result.error,
            }
        )
    return rows, None


def _own_name(requirement: str) -> str | None:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return normalize_project(Requirement(requirement).name)
    except InvalidRequirement:
        return None


def attach_dependencies(doc: JsonDict, requirement: str, rows: Sequence[JsonDict], error: str | None) -> None:
    """Put the dependency rows under the requirement's own target, make its status (and the document's)
    the worst of its rows, and name the row that decides it in the notes."""
    own = _own_name(requirement)
    target = next((t for t in doc["targets"] if normalize_project(t["name"]) == own), None)
    if error is not None:
        doc["notes"].append(f"{requirement}: what it brings in was not judged ({error})")
        if target is not None:
            target["dependencies_error"] = error
        return
    for row in rows:
        if not row["judged"]:
            doc["notes"].append(
                f"{row['name']} {row['version']} (brought in by {requirement}) was not judged: {row['error']}"
            )
    if target is None:
        if not rows:
            return
        target = {
            "name": own or requirement, "version": None, "path": requirement, "status": "none",
            "runtime_compiled": None, "files": 0, "unreadable": [], "inactive": [], "coverage": {},
            "verdicts": [], "fixes": [],
        }  # fmt: skip
        doc["targets"].append(target)
    target["dependencies"] = list(rows)
    if not doc["gpus"]:
        return
    own_status = target["status"]
    decider = max(rows, key=lambda r: severity(r["status"]), default=None)
    if decider is None or severity(decider["status"]) <= severity(own_status):
        return
    target["status"] = decider["status"]
    target["decided_by"] = f"{decider['name']} {decider['version']}"
    doc["status"] = worst([doc["status"], decider["status"]]).value
    for v in decider["verdicts"]:
        if v["status"] in ("fails", "partial", "jit") and v["gpu"] < len(doc["gpus"]):
            gpu = doc["gpus"][v["gpu"]]["name"]
            why = "; ".join(r["message"] for r in v.get("reasons", [])[:1])
            fix = f"{decider['name']} {decider['version']} (brought in by {requirement}) {v['status']} on {gpu}"
            doc["notes"].append(fix + (f": {why}" if why else ""))


def wheel_pins_note(path: str) -> str | None:
    """A wheel file's pinned CUDA wheels (``nvidia-*-cuNN==X``, ``cuda-toolkit[...]==X``), named as not judged.

    A wheel file is judged by itself: what pip would install beside it is not resolved here, so its CUDA
    pins must be said rather than passed over in silence.  Reads only ``*.dist-info/METADATA`` (1 MiB at most).
    """
    import zipfile

    from cudafit.targets.wheel_members import ARCHIVE_OPEN_ERRORS

    try:
        with zipfile.ZipFile(path) as zf:
            meta = next((i for i in zf.infolist() if i.filename.endswith(".dist-info/METADATA")), None)
            if meta is None:
                return None
            with zf.open(meta) as fh:
                data = fh.read(1 << 20)
    except ARCHIVE_OPEN_ERRORS:
        return None  # the wheel's own row already says it is unreadable
    # the runtime and NVRTC hold no kernels (the runtime's floor is judged from the pin), as in find --with-deps
    pins = tuple(p for p in cuda_pins(data)[0] if not p.startswith(NO_KERNELS))
    if not pins:
        return None
    return (
        f"{os.path.basename(path)} pins {', '.join(pins)}: not judged (a wheel file is judged alone; "
        "check 'NAME==VERSION' judges what pip installs with it)"
    )
