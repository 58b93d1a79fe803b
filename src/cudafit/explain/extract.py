"""Facts in a pasted CUDA error message or log, extracted from text alone.

Real logs wrap the one line that matters in tracebacks, ANSI colours, timestamps, Windows paths
and other languages' punctuation (shared/docs/error_categories.md), so :func:`clean` normalises
first and every extractor is a plain regular expression over the cleaned text.  The CUDA error
names, codes and strings are those of ``cudaGetErrorName`` / ``cudaGetErrorString`` (libcudart
13.0) and ``cuda.h``: https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html
(fatbin_spec.md §E.5).  Nothing here looks at the machine.
"""

from __future__ import annotations

import functools
import html
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.resources import files
from typing import Literal

from cudafit.explain.evidence import Facts, SourceFile

__all__ = [
    "CUDA_ERRORS",
    "LOGGED_AS_ERROR",
    "PREFIXED_ARCH",
    "UNPREFIXED_AF_ARCH",
    "UNPREFIXED_AF_MENTION",
    "CudaError",
    "arch_number",
    "clean",
    "extract_facts",
    "iter_arch_names",
    "iter_cuda_errors",
    "iter_gpus",
    "iter_kernel_names",
    "iter_mentioned_gpus",
    "iter_operator_names",
    "iter_source_files",
]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
# "2026-11-20 10:00:01,123", "[2026-11-20T10:00:01.5Z]", "I1120 10:00:01.123456 1234 file.cc:12]" (glog)
_TIMESTAMP = re.compile(
    # (blanks within the line only: a run of empty lines is not rescanned from each of its starts)
    r"^[ \t]*(?:\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?Z?\]?"
    r"|[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+[ \t]+\d+[ \t]+\S+\])[ \t]*",
    re.M,
)
# Full-width punctuation that Chinese/Japanese write-ups put around the English message; the spaces a page copied
# from a browser carries (no-break, thin, ideographic) and the invisible characters it may (zero-width, BOM); the
# backticks of Markdown's inline code ("`torch.cuda.is_available()` returns False").
_WIDE = str.maketrans(
    {
        "“": '"', "”": '"', "‘": "'", "’": "'", "：": ": ", "，": ", ", "（": " (", "）": ") ",
        "\u00a0": " ", "\u2007": " ", "\u2009": " ", "\u200a": " ", "\u202f": " ", "\u205f": " ", "\u3000": " ",
        "\u2002": " ", "\u2003": " ", "\u200b": None, "\u200c": None, "\u200d": None, "\u2060": None,
        "\ufeff": None,
    }
)  # fmt: skip
# What multi-process and containerised runs put before each line of a program's output, and a reply's quoting:
# torch.distributed's "[rank0]:", Ray's "(RayWorkerWrapper pid=1234, ip=10.0.0.1)" and vLLM's "(VllmWorker rank=1
# pid=4321)", vLLM's "ERROR 08-30 07:32:02 [file.py:512]" (older releases: "... file.py:512]"), Python logging's
# "ERROR:root:" and "- name - ERROR -", "[ERROR]", syslog's and journald's "May 01 10:00:00 host unit[pid]:", pytest's
# "E   ", Docker Compose's "app-1  | ", the kubelet's CRI log "stderr F " after its timestamp, Markdown's "> ".  Each
# is taken off its line (repeatedly: "> [rank0]: ..."), leaving the program's own words where a pattern expects them.
_LINE_PREFIX = re.compile(
    r"^[ \t]*(?:"
    r"\[rank\s?\d{1,5}\]:?"
    r"|\((?:pid=\d{1,9}|[\w.-]{1,60}(?:\s+(?:rank|tp|pp|dp)=\d{1,5}){0,3}\s+pid=\d{1,9})(?:,\s*ip=[\d.:a-fA-F]{1,45})?\)"
    r"|(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s+\d{2}-\d{2}\s+\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?"
    r"(?:\s+(?:\[[^\]\n]{1,120}\]|[\w./-]{1,120}:\d{1,6}\]))?"
    r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]{1,60}:"
    # Python logging's "%(asctime)s - %(name)s - %(levelname)s - " once the time is gone; "[ERROR]", "[WARN]"
    r"|-[ \t]+[\w.]{1,60}[ \t]+-[ \t]+(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)[ \t]+-"
    r"|\[(?:DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL|TRACE)\]:?"
    # syslog and journald: "May 01 10:00:00 gpu-host ollama[1234]:"
    r"|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[ \t]+\d{1,2}[ \t]+\d{2}:\d{2}:\d{2}[ \t]+[\w.-]{1,64}"
    r"[ \t]+[\w.@/-]{1,64}(?:\[\d{1,9}\])?:"
    # pytest's failure lines: "E   RuntimeError: ..."
    r"|E {3,}(?=\S)"
    # (not a table's first column: "sm_80 |", "compute_86 |", "cuda-12 |")
    r"|(?!(?:sm|compute|cuda|cu|torch|py|python|gcc|driver|nvcc|cudnn)[-_]\d)[\w.-]{1,60}[-_]\d{1,4}[ \t]{1,20}\|"
    r"|(?:stdout|stderr)[ \t]+[FP](?=[ \t])"
    r"|>(?=[ \t>]|$)"
    r")[ \t]*",
    re.M,
)
# a line quoted whole as Markdown's inline code ("`RuntimeError: ...`"); a backtick inside the line stays (xformers'
# "`fa3F@0.0.0` is not supported because:")
_INLINE_CODE_LINE = re.compile(r"^([ \t]*)`([^`\n]+)`[ \t]*$", re.M)
# a run of spaces inside a line (a justified or column-aligned paste, "failed.  Please"): one space, as the
# messages' own words are written; the line's indentation stays
_SPACES = re.compile(r"(?<=\S) {2,}")
# An error or warning level a logger wrote before a line, which cleaning takes off with the rest of the prefix:
# "[ERROR]", "[WARN]", "ERROR:root:", "- name - WARNING -", vLLM's "ERROR 08-30 07:32:02", glog's "E0303 11:40:42.5"
# and "W0303 ...", pytest's "E   ": the line reports a failure whatever its own words, as a "Warning" in them does
# (forms.FAILURE) -- read on the text before cleaning.
LOGGED_AS_ERROR = re.compile(
    r"^[ \t]*(?:\[(?:ERROR|FATAL|CRITICAL|WARN|WARNING)\]|(?:ERROR|CRITICAL|WARNING):[\w.]{1,60}:|E {3,}\S"
    r"|[EWF]\d{4} \d{2}:\d{2}:\d{2}|(?:ERROR|CRITICAL|FATAL|WARNING|WARN)[ \t]+\d{2}-\d{2}[ \t]+\d{2}:)"
    r"|^[^\n]{0,80}?[ \t]-[ \t]+(?:ERROR|CRITICAL|WARNING)[ \t]+-[ \t]",
    re.M,
)
# HTML's character references, as a page's source or a scraped export writes quotes and brackets.
_HTML_ENTITY = re.compile(r"&(?:quot|amp|lt|gt|apos|nbsp|#\d{2,4}|#x[0-9a-fA-F]{2,4});")
# an escaped newline that starts a line of output ("\\nTraceback", "\\n  File"), not a Windows path's "\\nvidia"
_LINE_START = r"(?=[A-Z0-9 \t\"'\[(<>*=#-]|\\|$)"
_ESCAPED_LINE_START = re.compile(r"\\n" + _LINE_START)
# one escape at a time, left to right: a doubled backslash, an escaped newline, an escaped quote
_ESCAPE = re.compile(r'\\\\|(?:\\r)?\\n|\\"')


@dataclass(frozen=True)
class CudaError:
    """One CUDA error as the runtime names it (``cudaError_t``), with its driver-API twin.

    ``string`` is ``cudaGetErrorString``'s text (the newest release's; ``strings`` holds every release's,
    newest first); ``driver_name`` the ``CUresult`` of the same code.  A driver error without a runtime twin
    (``CUDA_ERROR_KEY_ROTATION``) has its driver name in both and an empty ``string``.  ``categories`` and
    ``certainty`` say how the error relates to explain's categories, decided from NVIDIA's documentation
    of it (scripts/record_cuda_errors.py): ``"code"`` -- the error alone names its category; ``"context"``
    -- it fits the causes in ``categories`` and the rest of the log decides; ``None`` -- unrelated.
    """

    code: int
    name: str
    string: str
    driver_name: str | None = None
    categories: tuple[str, ...] = ()
    certainty: Literal["code", "context"] | None = None
    strings: tuple[str, ...] = ()

    @property
    def related(self) -> bool:
        """Whether the error can be one of explain's categories at all."""
        return self.certainty is not None


def _load_cuda_errors() -> tuple[CudaError, ...]:
    """Every runtime error, then the driver errors without a runtime twin, from ``data/cuda_errors.json``.

    The file is recorded from NVIDIA's runtime wheels by scripts/record_cuda_errors.py (enums of
    driver_types.h and cuda.h, libcudart's string table): no error is written here by hand.
    """
    doc = json.loads(files("cudafit.explain").joinpath("data/cuda_errors.json").read_text(encoding="utf-8"))
    errors = [
        CudaError(
            row["code"],
            row["name"],
            row["strings"][0] if row["strings"] else "",
            row["driver_name"],
            tuple(row["categories"]),
            row["certainty"],
            tuple(row["strings"]),
        )
        for row in doc["runtime"]
    ]
    errors += [
        CudaError(row["code"], row["name"], "", row["name"], tuple(row["categories"]), row["certainty"])
        for row in doc["driver"]
        if row["runtime_name"] is None
    ]
    return tuple(sorted(errors, key=lambda e: e.code))


# libcudart's own strings and cuda.h's names (CUDA 12.9, 13.0, 13.5): every cudaError_t, and the CUresult
# values without a runtime twin.
CUDA_ERRORS: tuple[CudaError, ...] = _load_cuda_errors()
_BY_NAME: dict[str, CudaError] = {n: e for e in CUDA_ERRORS for n in (e.name, e.driver_name) if n}
# A code as the runtime numbers it; a driver-only code (202, 916) only where the text says CUresult.
_BY_CODE: dict[int, CudaError] = {e.code: e for e in CUDA_ERRORS if e.name.startswith("cudaError")}
_DRIVER_ONLY: dict[int, CudaError] = {e.code: e for e in CUDA_ERRORS if not e.name.startswith("cudaError")}


def _by_string(errors: tuple[CudaError, ...]) -> dict[str, list[CudaError]]:
    """Each string (lower case, no final period) -> the errors that return it (200 and 300 share one)."""
    out: dict[str, list[CudaError]] = {}
    for err in errors:
        for string in err.strings:
            out.setdefault(string.rstrip(".").lower(), []).append(err)
    return out


_BY_STRING = _by_string(CUDA_ERRORS)

# A GPU architecture named in a library's guard -> its first compute capability (CUDA
# Programming Guide, compute capabilities table; shared/reference/compute_capabilities.csv).
ARCHITECTURE_MIN_CC: dict[str, str] = {
    "maxwell": "5.0",
    "pascal": "6.0",
    "volta": "7.0",
    "turing": "7.5",
    "ampere": "8.0",
    "ada": "8.9",
    "hopper": "9.0",
    "blackwell": "10.0",
}


def _strings(value: object, depth: int = 0) -> Iterator[str]:
    """The string values of a decoded JSON document, nested objects and arrays included (``{"error": {"message":
    ...}}``), to a bounded depth."""
    if isinstance(value, str):
        yield value
    elif depth < 8 and isinstance(value, dict):
        for item in value.values():
            yield from _strings(item, depth + 1)
    elif depth < 8 and isinstance(value, list):
        for item in value:
            yield from _strings(item, depth + 1)


def _decode_escapes(text: str) -> str:
    """A one-line log's escapes undone, left to right: ``\\n`` is a newline, ``\\"`` a quote, and a doubled
    backslash stays one backslash pair (a Windows path's ``C:\\\\temp\\\\new``); ``\\t`` is left as written (in
    a path it is more often ``\\temp`` than a tab)."""
    return _ESCAPE.sub(_unescape_one, text)


def _unescape_one(m: re.Match[str]) -> str:
    escape = m.group(0)
    if escape.endswith("n"):
        return "\n"
    return '"' if escape == '\\"' else escape


# JSON's escapes, one at a time (a line cut short is no longer JSON, but its strings are)
_JSON_ESCAPE = re.compile(r'\\(["\\/bfnrt])')
_JSON_ESCAPES = {'"': '"', "\\": "\\\\", "/": "/", "b": "", "f": "", "n": "\n", "r": "", "t": "\t"}


def _json_unescape_one(m: re.Match[str]) -> str:
    return _JSON_ESCAPES[m.group(1)]


def _json_line(line: str) -> str:
    """A structured log's line (one JSON object) as the output its string values hold; one cut short (a log reader
    keeps the start of a long line) with its escapes undone; any other line as it is."""
    try:
        doc = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the decoder goes ("[[[[...")
        return _JSON_ESCAPE.sub(_json_unescape_one, line) if line.lstrip().startswith('{"') else line
    if not isinstance(doc, dict):
        return line
    values = list(_strings(doc))
    return "\n".join(values) if values else line


def _json_like(line: str) -> bool:
    """A line that is, or starts, one JSON object: whole, or cut short with escapes in it."""
    return line.lstrip().startswith("{") and ("\\n" in line or line.rstrip().endswith("}"))


def _unescaped(text: str) -> str:
    """The output an escaped log holds: a structured log's JSON lines (``{"level": "error", "msg": "...\\n..."}``)
    give their string values, decoded; a text without a newline of its own that writes one as ``\\n`` before a
    line's start (``\\nTraceback``, ``\\n  File``; not a Windows path's ``\\nvidia``) gets its escapes undone."""
    if "\\" not in text:
        return text
    if "{" in text:
        text = "\n".join(_json_line(line) if _json_like(line) else line for line in text.split("\n"))
    if "\n" not in text.strip() and _ESCAPED_LINE_START.search(text, 0, 200_000):
        text = _decode_escapes(text)
    return text


def clean(text: str) -> str:
    """Strip ANSI colours, leading timestamps and the prefixes runners and replies put before each line; decode
    escaped output and HTML character references; unify Windows separators, wide punctuation and a browser's
    spaces."""
    text = _ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    text = _unescaped(text)
    if "&" in text:
        text = _HTML_ENTITY.sub(lambda m: html.unescape(m.group(0)), text)
    text = text.translate(_WIDE)
    for _ in range(3):  # "> [rank0]: ...", "2024-...Z stderr F (RayWorker pid=1) ..."
        stripped = _LINE_PREFIX.sub("", _TIMESTAMP.sub("", text))
        if "`" in stripped:
            stripped = _INLINE_CODE_LINE.sub(r"\1\2", stripped)
        if stripped == text:
            break
        text = stripped
    if "  " in text:
        text = _SPACES.sub(" ", text)
    return text.replace("\\\\", "/").replace("\\", "/")


def arch_number(arch: str) -> int:
    """``sm_90a`` / ``compute_120f`` / ``sm80`` -> 90 / 120 / 80."""
    m = re.search(r"(\d{2,3})", arch)
    if not m:
        msg = f"not an arch name: {arch!r}"
        raise ValueError(msg)
    return int(m.group(1))


def _cc_of(number: str) -> str:
    n = int(number)
    return f"{n // 10}.{n % 10}"


# The ways a log numbers a CUDA error; the group that matched says whose numbering (CUresult or cudaError_t).
_NUMBER_FORMS = re.compile(
    # a log level before a date or a time ("ERROR 08-30 07:32:02") numbers no error: no leading zero, no [-:/]digit
    r"\b(?:cuda runtime )?error(?:\s+code)?\s*(?:[:=#]\s*)?\(?(?P<plain>0|[1-9]\d{0,4})\)?(?![\d.]|[-:/]\d)"
    r"|\bcode\s*[=:]\s*(?P<code>\d{1,5})\b"
    r"|\b(?:cudaError\w*|CUDA failure|cudaStatus)\s*[(=:]?\s*(?P<runtime>\d{1,5})\b"
    r"|\bCUresult\s*[(=:.]?\s*(?P<driver>\d{1,5})\b"
    # a CUDA API call and what it returned: "cudaGetDeviceCount returned 35", "cuModuleLoadData returning 222"
    # (case-sensitive names: "curl returned 35" names no CUDA call; a cu* call returns a CUresult)
    r"|(?-i:\bcuda[A-Z]\w*)(?:\([^)\n]{0,60}\))?\s+(?:returns?|returned|returning)\s+(?:error\s+)?(?P<api>\d{1,4})\b"
    r"|(?-i:\bcu[A-Z]\w*)(?:\([^)\n]{0,60}\))?\s+(?:returns?|returned|returning)\s+(?:error\s+)?(?P<apidrv>\d{1,4})\b",
    re.I,
)
_NAMES = re.compile(r"\b(cudaError[A-Za-z]\w*|CUDA_ERROR_[A-Z0-9_]+)\b")
# What makes a plain "error 2" or a short string ("out of memory") a CUDA error: CUDA named on its line.
_CUDA_LINE = re.compile(r"cuda|nvrtc|\bptx\b|kernel|\bgpu\b|device|CUresult", re.I)
# Strings specific enough to be a CUDA error anywhere: five words or more, or three with a CUDA term.
_SPECIFIC = re.compile(r"CUDA|PTX|kernel|GPU|driver|device|NVLink|MPS|ECC|fatbin|capture|peer|cluster|texturing", re.I)
# make's "*** [target] Error 1" is a build step's exit status, not a CUDA error.
_MAKE_STATUS = re.compile(r"\*\*\* \[[^\]\n]*\] Error \d+")


def _line_at(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return text[start : end if end >= 0 else len(text)]


def _numbered(text: str) -> set[CudaError]:
    """The errors a text names by number: "error 209", "error code 209", "code=209", "CUDA failure 209",
    "cudaError 209", "CUresult 202", "cudaGetDeviceCount returned 35".  A bare "error N" counts only on a line that
    names CUDA."""
    found: set[CudaError] = set()
    for m in _NUMBER_FORMS.finditer(text):
        kind = m.lastgroup or "plain"
        code = int(m.group(kind))
        if kind in ("plain", "code"):
            line = _line_at(text, m.start())
            if not _CUDA_LINE.search(line) or _MAKE_STATUS.search(line):
                continue
        err = _BY_CODE.get(code)
        if kind in ("driver", "apidrv"):  # CUresult numbering: the runtime error of a shared code, or a driver-only one
            err = err if err is not None and err.driver_name else _DRIVER_ONLY.get(code)
        if err is not None:
            found.add(err)
    return found


def _stringed(text: str) -> set[CudaError]:
    """The errors whose ``cudaGetErrorString`` text appears: a specific one anywhere, a short generic one
    ("out of memory", "invalid argument", "file not found") only on a line that names CUDA."""
    low = text.lower()
    found: set[CudaError] = set()
    for string, errors in _BY_STRING.items():
        pos = low.find(string)
        if pos < 0:
            continue
        words = len(string.split())
        specific = words >= 5 or (words >= 3 and _SPECIFIC.search(string))
        while pos >= 0 and not specific and not _CUDA_LINE.search(_line_at(text, pos)):
            pos = low.find(string, pos + 1)
        if pos >= 0:
            found.update(errors)
    return found


def iter_cuda_errors(text: str) -> list[CudaError]:
    """The CUDA errors a text names by runtime/driver name, by string, or by number, in code order.

    Every ``cudaError_t`` and ``CUresult`` is known (:data:`CUDA_ERRORS`); a string two codes share
    ("device kernel image is invalid": 200 and 300) gives both.
    """
    found = {_BY_NAME[m.group(1)] for m in _NAMES.finditer(text) if m.group(1) in _BY_NAME} | _numbered(text)
    # A shared string names whichever of its errors the name or number beside it names.
    found |= {e for e in _stringed(text) if found.isdisjoint(_BY_STRING[e.string.rstrip(".").lower()]) or e in found}
    return sorted(found, key=lambda e: (e.code, e.name))


def _uniq(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _sorted_archs(archs: list[str]) -> list[str]:
    """Arch names, each once, by number; names that are not archs (``sm_1``, ``sm_8.61``) are dropped."""
    return sorted({a for a in archs if _valid_arch(a)}, key=lambda a: (arch_number(a), a))


# (regex, group of the name, group(s) of the CC): the ways logs name a GPU with its compute capability.
_GPU_FORMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"([A-Z][\w \-]{0,80}?) with CUDA capability sm_(\d{2,3}) is not compatible"), "sm"),
    # torch/cuda/__init__.py: "Found GPU0 NAME which is of cuda capability 3.5." (before 2.8), "... which is of
    # compute capability (CC) 12.0." (_warn_unsupported_code, since)
    (
        re.compile(r"Found GPU\d+ (.+?) which is of (?:cuda|compute) capability (?:\(CC\) )?(\d+\.\d)(?!\d)", re.I),
        "cc",
    ),
    # Inductor's GPUTooOldForTriton: "Found Tesla P4 which is too old ... your device is of CUDA capability 6.1"
    (
        re.compile(r"Found ([^\n]+?) which is too old to be supported by the triton[^\n]*?CUDA capability (\d+\.\d)\b"),
        "cc",
    ),
    # TensorRT: "engine plan file is generated on an incompatible device, expecting compute 8.6 got compute 7.5": the
    # GPU loading the plan is the one "expecting" (the plan was built on the "got" one; grounders/arch.py says why)
    (re.compile(r"()incompatible device, expecting compute (\d+\.\d) got compute \d+\.\d(?!\d)"), "cc"),
    (re.compile(r"()Target GPU SM (\d{2,3}) is not supported by this TensorRT release"), "sm"),
    # TensorRT: "Unsupported SM: 0x601" (major in the high byte, minor in the low one)
    (re.compile(r"()Unsupported SM: 0x0*(\d{1,2})0(\d)\b"), "major_minor"),
    # ggml_cuda_init: "Device 0: NVIDIA GeForce RTX 3060, compute capability 8.6, VMM: yes"
    (re.compile(r"Device \d+: ([^,\n]+), compute capability (\d+\.\d)(?!\d)"), "cc"),
    # TensorFlow: "(device: 0, name: GeForce GTX 1070, pci bus id: ..., compute capability: 6.1)"
    (re.compile(r"name: ([^,\n]+?), pci bus id: [^,\n]+, compute capability: (\d+\.\d)(?!\d)"), "cc"),
    (re.compile(r"name: ([^\n]+?) major: (\d+) minor: (\d+)"), "major_minor"),
    # Legion/Realm: "GPU #0: GeForce RTX 2080 (7.5) 7952 MB"; people's notes: "TITAN RTX (arch=7.5)"
    (re.compile(r"GPU #\d+: ([^\n(]+?) \((\d+\.\d)\)"), "cc"),
    (re.compile(r"([A-Za-z][\w \-]{0,80}?) \(arch=(\d+\.\d)\)"), "cc"),
    # vLLM's quantization check: "Minimum capability: 75. Current capability: 70."
    (re.compile(r"()Min(?:imum)? capability: \d+\.\W*Current capability: (\d{2,3})\b"), "sm"),
    # vLLM's dtype check: "Your Tesla T4 GPU has compute capability 7.5"
    (re.compile(r"Your (.{1,60}?) GPU has compute capability (\d+\.\d)(?!\d)"), "cc"),
    # torch.cuda.get_device_capability() printed per CUDA_VISIBLE_DEVICES index
    (re.compile(r"CUDA_VISIBLE_DEVICES=(\d+)[^\n]*get_device_capability\(\)[^\n]*\n\s*\((\d+), (\d+)\)"), "index"),
    # xformers' dispatcher and bitsandbytes' setup name the capability only
    (re.compile(r"()your GPU has capability \((\d+), (\d+)\)"), "major_minor"),
    (re.compile(r"()your gpu arch \((\d+), (\d+)\) isn't compiled"), "major_minor"),
    # torch.cuda.get_device_capability() printed in a session: ">>> torch.cuda.get_device_capability()\n(6, 1)"
    (
        re.compile(r"()get_device_capability\([^)\n]{0,20}\)\s*\n?\s*(?:->\s*|=\s*|#\s*)?\((\d{1,2}), ?(\d)\)"),
        "major_minor",
    ),
    # Blender Cycles: "CUDA binary kernel for this graphics card compute capability (3.0) not found"
    (re.compile(r"()CUDA binary kernel for this graphics card compute capability \((\d+\.\d)\) not found"), "cc"),
    # GROMACS' device list: "#1: NVIDIA GeForce GTX 780, compute cap.: 3.5, ECC:  no, stat: incompatible"
    (re.compile(r"#\d+: ([^,\n]+), compute cap\.: (\d+\.\d)(?!\d)"), "cc"),
    # numba's NVVM: "GPU compute capability 3.0 is not supported(requires >=3.5)"
    (re.compile(r"()GPU compute capability (\d+\.\d) is not supported"), "cc"),
    (re.compile(r"()Highest compute capability among GPUs detected: (\d+\.\d)(?!\d)"), "cc"),
    # vLLM's kernel dispatch names the GPU's capability as get_sm_version_num() gives it (86 for 8.6): "No compiled
    # cutlass_scaled_mm for ... CUDA device capability: 121", "No compiled nvfp4 mm kernel for SM 89"
    # (csrc/quantization/cutlass_w8a8/scaled_mm_entry.cu, csrc/quantization/fp4/nvfp4_scaled_mm_entry.cu).
    (re.compile(r"()No compiled [^\n]{0,80}?(?:CUDA device capability: |kernel for SM )(\d{2,3})\b"), "sm"),
    # Thrust/CUB (NVIDIA/cccl:thrust/thrust/system/cuda/detail/core/util.h) names the device's SM version it has no
    # code for: "This program was not compiled for SM 75"
    (re.compile(r"()This program was not compiled for SM ?(\d{2,3})\b"), "sm"),
    # deviceQuery (NVIDIA/cuda-samples:Samples/1_Utilities/deviceQuery/deviceQuery.cpp): 'Device 0: "NAME"', then
    # "  CUDA Capability Major/Minor version number:    8.6" a line or two below.
    (
        re.compile(
            r'Device \d+: "([^"\n]{1,80})"[ \t]*\n(?:[^\n]*\n){0,3}?[ \t]*'
            r"CUDA Capability Major/Minor version number:\s*(\d+)\.(\d+)"
        ),
        "major_minor",
    ),
    # TensorFlow 2.1-2.4 (tensorflow/core/common_runtime/gpu/gpu_device.cc): "Found device 0 with properties:
    # pciBusID: 0000:01:00.0 name: GeForce RTX 2080 Ti computeCapability: 7.5"
    (re.compile(r"name: ([^\n]{1,80}?) computeCapability: (\d+\.\d)(?!\d)"), "cc"),
    # XLA (openxla/xla:xla/service/service.cc logs each StreamExecutor's description; xla/stream_executor/cuda/
    # cuda_executor.cc sets its platform version to "Compute Capability X.Y"), printed by JAX and TensorFlow:
    # "StreamExecutor device (0): NVIDIA GeForce RTX 3070, Compute Capability 8.6"
    (re.compile(r"StreamExecutor device \(\d+\): ([^,\n]{1,80}), Compute Capability (\d+\.\d)(?!\d)"), "cc"),
    # torch.cuda.get_device_properties() (pytorch/pytorch:torch/csrc/cuda/Module.cpp, _CudaDeviceProperties'
    # repr): "_CudaDeviceProperties(name='NVIDIA A10G', major=8, minor=6, total_memory=...)"; releases before
    # 1.10 print the name and memory only, and the name is then looked up (GPU_LISTINGS below).
    (re.compile(r"_CudaDeviceProperties\(name='([^'\n]{1,80})', major=(\d+), minor=(\d+)"), "major_minor"),
    # nvidia-smi --query-gpu=name,compute_cap --format=csv[,noheader] (https://docs.nvidia.com/deploy/nvidia-smi/,
    # compute_cap since driver 510): "NVIDIA GeForce RTX 3090, 8.6", after its "name, compute_cap" header.
    (re.compile(r"(?m)^([A-Za-z][^,\n]{1,80}), (\d{1,2}\.\d)[ \t]*$"), "cc_csv"),
    # Leela Chess Zero's CUDA backends (LeelaChessZero/lc0:src/neural/cuda/network_cudnn.cc, showDeviceInfo):
    # "GPU: NAME", then its memory and clock lines, then "GPU compute capability: 3.7".
    (
        re.compile(
            r"(?m)^[ \t]*GPU: ([A-Za-z][^\n]{0,79}?)[ \t]*\n(?:[^\n]*\n){0,3}?[ \t]*"
            r"GPU compute capability: (\d+)\.(\d+)"
        ),
        "major_minor",
    ),
    # sglang's check_env (sgl-project/sglang:python/sglang/check_env.py): "GPU 0,1 Compute Capability: 8.6"
    (re.compile(r"(?m)^[ \t]*GPU (\d+(?:,\d+)*) Compute Capability: (\d+\.\d)(?!\d)"), "cc_index"),
    # ollama's GPU discovery (ollama/ollama:discover/types.go, LogDetails) logs each device with slog's key=value text
    # handler: 'msg="inference compute" id=GPU-... library=cuda variant=v12 compute=8.6 driver=12.4 name="NVIDIA
    # GeForce RTX 3090" total="23.7 GiB"', newer releases 'library=CUDA compute=8.6 name=CUDA0 description="NVIDIA
    # GeForce RTX 3090" ...' (the product in description).  Group 1 holds the fields after the message.
    (re.compile(r'msg="?inference compute"?([^\n]{1,600})'), "ollama"),
)
# slog's text handler: key=value, the value quoted when it holds a space.
_SLOG_FIELD = re.compile(r'(?<!\w)(\w+)=("[^"\n]*"|\S+)')  # a key starts where a word starts (linear time)

# GPU listings that name GPUs without their compute capability: the name is looked up in cudafit's GPU table
# (:func:`cudafit.rules.gpus.resolve_gpu`); a name the table does not know, or knows for several compute
# capabilities, is left out.  Each regex's group 1 is the name.
GPU_LISTINGS: tuple[re.Pattern[str], ...] = (
    # nvidia-smi -L ("GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-...)"), the same lines without the UUID in
    # torch.utils.collect_env's "GPU models and configuration:" (pytorch/pytorch:torch/utils/collect_env.py,
    # get_gpu_info runs ``nvidia-smi -L`` and strips the UUIDs; vLLM's collect_env is a copy), and sglang's
    # check_env "GPU 0,1: NAME" (python/sglang/check_env.py).  nvidia-smi is closed source: its output format is
    # documented in https://docs.nvidia.com/deploy/nvidia-smi/index.html.
    re.compile(
        r"(?m)(?:^[ \t]*|GPU models and configuration:[ \t]*)GPU \d+(?:,\d+)*: ([A-Za-z][^\n(]{1,79}?)"
        r"(?:[ \t]*\(UUID: [^)\n]*\))?[ \t]*$"
    ),
    # nvidia-smi's table: "|   0  NVIDIA GeForce RTX 3090     Off  | 00000000:01:00.0  On |   N/A |" (the
    # persistence mode On/Off, or the Windows driver model WDDM/TCC, then the PCI bus id).
    re.compile(
        r"(?m)^\|[ \t]+\d+[ \t]+([A-Za-z][^|\n]{1,79}?)[ \t]+(?:On|Off|WDDM|TCC)[ \t]+\|[ \t]+"
        r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]"
    ),
    # torch.cuda.get_device_properties() before 1.10: "_CudaDeviceProperties(name='NVIDIA A10G', total_memory=...)"
    re.compile(r"_CudaDeviceProperties\(name='([^'\n]{1,80})', total_memory="),
    # `accelerate env` / `transformers env` (huggingface/accelerate:src/accelerate/commands/env.py,
    # huggingface/transformers:src/transformers/commands/env.py): "- GPU type: NVIDIA A100-SXM4-80GB"
    re.compile(r"(?m)^[ \t]*(?:-[ \t]*)?GPU type:[ \t]*([A-Za-z][^\n]{1,79}?)[ \t]*$"),
    # PyTorch Lightning (Lightning-AI/pytorch-lightning:src/lightning/fabric/accelerators/cuda.py,
    # _check_cuda_matmul_precision): "You are using a CUDA device ('NVIDIA GeForce RTX 4090') that has Tensor Cores."
    re.compile(r"You are using a CUDA device \('([^'\n]{1,80})'\)"),
    # ComfyUI (comfyanonymous/ComfyUI:comfy/model_management.py, get_torch_device_name) at start-up: "Device:
    # cuda:0 NVIDIA GeForce RTX 4090 : cudaMallocAsync" (the allocator backend after " : ")
    re.compile(r"Device: cuda:\d+ ([A-Za-z][^\n]{1,79}?) : (?:cudaMallocAsync|native)\b"),
    # nvidia-smi -q: "    Product Name                          : NVIDIA GeForce RTX 4070 Laptop GPU"
    re.compile(r"(?m)^[ \t]*Product Name[ \t]*: ([A-Za-z][^\n]{1,79}?)[ \t]*$"),
    # vLLM's and sglang's fused-MoE tuning files are named after torch.cuda.get_device_name() with "_" for " "
    # (vllm-project/vllm:vllm/model_executor/layers/fused_moe/fused_moe.py, get_config_file_name), and the start-up
    # log names the file it looked for: "Config file not found at .../E=8,N=14336,device_name=NVIDIA_H100_80GB_HBM3
    # .json"
    re.compile(r"\bdevice_name=([A-Za-z][\w\-]{1,80}?)(?:,|\.json)"),
    # nccl-tests (NVIDIA/nccl-tests:src/common.cu) lists the GPU of every rank before it runs: "#   Rank %2d Pid %6d on
    # %10s device %2d [0x%02x] %s" (releases without the Pid, or "#Rank"), the last field cudaDeviceProp.name; a
    # host of mixed GPUs shows them all.
    re.compile(
        r"(?m)^#[ \t]*Rank[ \t]+\d+[ \t]+(?:Group[ \t]+\d+[ \t]+)?(?:Pid[ \t]+\d+[ \t]+)?on[ \t]+\S+[ \t]+"
        r"device[ \t]+\d+[ \t]+\[[0-9A-Fa-fx:.]+\][ \t]+([A-Za-z][^\n]{1,79}?)[ \t]*$"
    ),
)


_NEEDLES = {
    _GPU_FORMS[0][0].pattern: " with CUDA capability sm_",
    next(rx.pattern for rx, _f in _GPU_FORMS if "(arch=" in rx.pattern): " (arch=",
    next(rx.pattern for rx, _f in _GPU_FORMS if "GPU compute capability: " in rx.pattern): "GPU compute capability: ",
}


def iter_gpus(text: str) -> Iterator[tuple[str, str]]:
    """(name, compute capability "X.Y") of every GPU the log describes, in the order of _GPU_FORMS, then the
    GPUs of listings that give names only (:data:`GPU_LISTINGS`), their compute capability from the GPU table.

    Several forms give no name (xformers' "your GPU has capability (7, 5)"): those GPUs are called "GPU".
    """
    for rx, form in _GPU_FORMS:
        # A form that starts with a free-text name is tried from every letter: only run it where its literal is.
        needle = _NEEDLES.get(rx.pattern)
        if needle and needle not in text:
            continue
        for m in rx.finditer(text):
            name = m.group(1).strip() or "GPU"
            if form == "sm":
                yield name, _cc_of(m.group(2))
            elif form == "cc":
                yield name, m.group(2)
            elif form == "major_minor":
                yield name, f"{m.group(2)}.{m.group(3)}"
            elif form == "cc_index":
                yield f"GPU {name}", m.group(2)
            elif form == "ollama":
                yield from _ollama_device(m.group(1))
            elif form == "cc_csv":
                # the header names the columns; without it "word, 8.6" is no GPU (the table must know the name)
                if "compute_cap" in text and _has_product_word(name) and _table_cc(name) == m.group(2):
                    yield name, m.group(2)
            else:
                yield f"GPU {name}", f"{m.group(2)}.{m.group(3)}"
    names = [m.group(1) for rx in GPU_LISTINGS for m in rx.finditer(text)]
    names += _vllm_different_devices(text)
    # A name the table does not know costs a few milliseconds (its near-miss search): only names with a word of the
    # table's names are looked up, and a bounded number of them.
    candidates = dict.fromkeys(raw.replace("_", " ").strip() for raw in names)
    for name in [n for n in candidates if _has_product_word(n)][:_MAX_LOOKUPS]:
        cc = _table_cc(name)
        if cc:
            yield name, cc


_MAX_LOOKUPS = 32


def _ollama_device(fields: str) -> Iterator[tuple[str, str]]:
    """The CUDA device of one ollama "inference compute" line (its name, else its description when the name is the
    backend's "CUDA0"), with its compute capability; ROCm's gfx targets and the CPU line are no CUDA GPU."""
    kv = {k: v.strip('"') for k, v in _SLOG_FIELD.findall(fields)}
    cc = kv.get("compute", "")
    if kv.get("library", "").lower() != "cuda" or not re.fullmatch(r"\d{1,2}\.\d", cc):
        return
    name = kv.get("description") if re.fullmatch(r"CUDA\d*", kv.get("name", "")) else kv.get("name")
    yield (name or "GPU").strip() or "GPU", cc


@functools.lru_cache(maxsize=1)
def _product_words() -> frozenset[str]:
    """Every word of the GPU table's names and aliases, without the vendor words (``normalize_gpu_name``)."""
    from cudafit.rules.gpus import iter_gpu_specs, normalize_gpu_name

    return frozenset(
        word for spec in iter_gpu_specs() for n in (spec.name, *spec.aliases) for word in normalize_gpu_name(n).split()
    )


def _has_product_word(name: str) -> bool:
    """Whether ``name`` reads like a product name: it starts with a word of the table's names and at least half of
    its words are such words ("A100-PCIE-40GB MIG 1g.5gb" is, "step 980 loss 0.980" is not, though the table would
    find a GTX 980 in it)."""
    from cudafit.rules.gpus import normalize_gpu_name

    words = normalize_gpu_name(name, drop_memory=True).split()
    known = [word in _product_words() for word in words]
    return bool(words) and known[0] and 2 * sum(known) >= len(words)


# vLLM's CudaPlatform.log_warnings (vllm-project/vllm:vllm/platforms/cuda.py) names every GPU of a host whose GPUs
# differ: "Detected different devices in the system: NVIDIA GeForce RTX 4080 SUPER, NVIDIA GeForce RTX 3060. Please
# make sure to set `CUDA_DEVICE_ORDER=PCI_BUS_ID` ..." (earlier releases: one name per line, each line with the
# logger's "WARNING 02-13 10:47:30 cuda.py:336] " prefix).
_VLLM_DEVICES = re.compile(r"Detected different devices in the system:([\s\S]{1,2000}?)\.?\s*Please make sure to set")
_VLLM_PREFIX = re.compile(r"^\s*(?:DEBUG|INFO|WARNING|ERROR)\s+\d\d-\d\d \d\d:\d\d:\d\d\s+\[?[\w.]+:\d+\]?\s*")


def _vllm_different_devices(text: str) -> list[str]:
    """The GPU names of vLLM's "Detected different devices in the system" warning."""
    m = _VLLM_DEVICES.search(text)
    if not m:
        return []
    lines = [_VLLM_PREFIX.sub("", line) for line in m.group(1).splitlines()]
    return [name.strip() for line in lines for name in line.split(",") if name.strip()]


# ---- GPUs named in prose ("works on my RTX 2080 Ti but fails on another (..., Tesla T4)", "two video cards (nvs-510,
# cc=3.0 and gtx 1070, cc=6.1)", "RTX2070+GTX1050+GTX1070", nvidia-smi's truncated "GeForce RTX 207...").  A separate
# fact (``mentioned_gpus``) from ``gpus``: a name in a sentence says less than a listing does (the GPU may be the
# author's, or one the user switched to), so only the mixed-host decision reads it (classify: _mixed_host), and only
# names of cudafit's GPU table (src/cudafit/rules/gpus.py, from NVIDIA's CUDA GPUs list) count, each whole: never a
# model size ("7B"), a version ("3.0"), a bare number ("2080" may be a step or a size), or a name inside a path, a file
# name or an identifier ("/models/a100/", "a100.yaml", "NVIDIA_H100_80GB").
_SPOT_NOISE = frozenset({"nvidia", "geforce", "tesla", "corporation", "gpu", "gpus", "graphics", "r", "tm"})
# Table names without a digit that are products in prose too; "thor", "xavier", "orin", "rubin" are also names.
_SPOT_WORDLIKE = ("titan", "gtx titan", "jetson")
_SPOT_TOKEN = re.compile(r"[A-Za-z0-9]+")
# What may stand between two words of one product name: spaces, dashes ("V100-SXM2"), parentheses ("TITAN X (Pascal)").
_SPOT_GAP = re.compile(r"[ \t\-(]{1,3}|\)[ \t]?")
# An explicit compute capability next to a name: "cc=6.1", "capability: 7.5", "(compute capability 8.6)", "(SM86)".
# A capability word may stand a few fields after the name (a miner's "GPU #0: NAME, 10989 MB available, 68 compute
# units, capability: 7.5"); an arch ("(SM86)", "sm_61") only right beside it.
_SPOT_CC = re.compile(r"\b(?:cc|compute capability|capability)\s*(?:of\s*)?[:=]?\s*\(?(\d{1,2})\.(\d)(?!\d)", re.I)
_SPOT_ARCH = re.compile(r"[ \t,]{0,2}[(/]?[ \t]*(?:[A-Za-z]+,[ \t]*)?sm_?(\d)(\d)\b", re.I)
# What a guard or a requirement says about a capability is not the GPU's own: "the RTX 2080 ... requires compute
# capability 8.0", "needs 8.0 or higher".
_SPOT_NOT_OWN = re.compile(r"requir|need|support|minimum|at least|>=|<=|[<>]|or (?:higher|newer|above|later)", re.I)
# A product-like name that the table may not know, with its compute capability: "nvs-510, cc=3.0".
_SPOT_NAMED_CC = re.compile(
    # (a name starts where no word or hyphen precedes it and is at most 41 characters, so a long token -- a base64
    # blob, a hyphenated id -- is scanned once, not from each of its positions)
    r"(?<![\w-])(?!(?:cuda|cudnn|nvcc|torch|python|gcc|clang|driver|version|sm|compute)\b|v\d)"
    r"(?=[A-Za-z][\w\-]{0,40}?\d)([A-Za-z][\w\-]{0,40}),?[ \t]*\(?cc[ \t]*[=:][ \t]*(\d{1,2}\.\d)(?!\d)",
    re.I,
)
_SPOT_VENDOR = re.compile(r"(?i)\b(?:nvidia[ \t]+)?(?:geforce|tesla|nvidia)[ \t]+$")
_SPOT_LEFT_STOP = frozenset("/\\_.=@#$%&*~`'")
_SPOT_MAX_WORDS = 5
# A line can name a GPU only if it holds a brand word, a letter glued to a digit ("k80", "rtx2070"), a Ti/SUPER
# number or a capability: the cheap test that spares the word-by-word reading of every other line of a log.
_SPOT_LINE = re.compile(
    # ASCII bounds, not \b: Chinese and Japanese text glues words to the name ("在两张RTX2070+一张GTX1050")
    r"(?<![a-z])(?:rtx|gtx|gt|mx|quadro|tesla|titan|nvs|grid|jetson|geforce|nvidia)(?![a-z])|(?<![a-z])[a-z]{1,3}\d"
    r"|\d\s?(?:ti|super)(?![a-z])|(?<![a-z])cc\s*[=:]|\(\s*sm_?\d",
    re.I,
)


@functools.lru_cache(maxsize=8192)
def _spot_tokens(word: str) -> tuple[str, ...]:
    """One word of a name as the spotter compares it: lower case, a brand glued to its number split ("rtx2070" ->
    "rtx 2070", "3080ti" -> "3080 ti"), memory sizes and vendor words dropped (``normalize_gpu_name``'s rules)."""
    from cudafit.rules.gpus import normalize_gpu_name

    w = word.lower()
    if w in _SPOT_NOISE:
        return ()
    w = re.sub(r"^([a-z]{2,})(?=\d)", r"\1 ", w)
    w = re.sub(r"(?<=\d)(ti|super)$", r" \1", w)
    return tuple(normalize_gpu_name(w, drop_memory=True).split())


def _spot_key_counts(key: tuple[str, ...]) -> bool:
    """Whether a table name can be spotted in prose: it has a letter and a digit outside a Ti/SUPER suffix ("rtx 2070",
    "k80"), or is a number with such a suffix ("1080 ti" names one product), or is a TITAN/Jetson name; a bare number
    ("2080") or a word ("thor", "orin") is not."""
    text = " ".join(key)
    if len(key) == 2 and key[0].isdigit() and key[1] in ("ti", "super"):
        return True
    core = " ".join(t for t in key if t not in ("ti", "super"))
    return bool(re.search(r"[a-z]", core) and re.search(r"\d", core)) or text.startswith(_SPOT_WORDLIKE)


@functools.lru_cache(maxsize=1)
def _spot_index() -> dict[tuple[str, ...], frozenset[str]]:
    """Every name and alias of the GPU table as spotter tokens -> the compute capabilities it names (two or more: an
    ambiguous name such as "rtx 6000", never reported on its own)."""
    from cudafit.rules.gpus import iter_gpu_specs

    index: dict[tuple[str, ...], set[str]] = {}
    for spec in iter_gpu_specs():
        for name in (spec.name, *spec.aliases):
            key = tuple(t for word in re.split(r"[\s\-_/,()]+", name) for t in _spot_tokens(word))
            if key and _spot_key_counts(key):
                index.setdefault(key, set()).add(str(spec.compute_capability))
    return {k: frozenset(v) for k, v in index.items()}


@functools.lru_cache(maxsize=1)
def _spot_first_words() -> frozenset[str]:
    return frozenset(k[0] for k in _spot_index())


# GeForce model numbers are unique across the GTX and RTX brands (a 1080 is a GTX, a 3090 an RTX), and reports swap
# the two ("RTX1080ti", "GTX 3090"): the number decides, as it does for the bare numbers below.
_GEFORCE_BRANDS = {"rtx": "gtx", "gtx": "rtx"}


def _spot_lookup(key: tuple[str, ...]) -> frozenset[str] | None:
    """The capabilities a table name gives ``key``, or the GeForce of the same number under the other brand."""
    ccs = _spot_index().get(key)
    if ccs is None and len(key) >= 2 and key[0] in _GEFORCE_BRANDS and key[1].isdigit() and len(key[1]) == 4:
        ccs = _spot_index().get((_GEFORCE_BRANDS[key[0]], *key[1:]))
    return ccs


def _spot_truncated(key: tuple[str, ...]) -> frozenset[str]:
    """nvidia-smi cuts long names to fit its table ("GeForce RTX 207..."): the capabilities of every table name that
    starts with what is left."""
    text = " ".join(key)
    return frozenset(cc for k, ccs in _spot_index().items() if " ".join(k).startswith(text) for cc in ccs)


# A model number written bare with its capability right after it: "a 3090 (SM86)", "1070 (cc=6.1)".
_BARE_WITH_CC = re.compile(r"[ \t]*\((?:sm_?\d{2,3}|cc[ \t]*[=:]?[ \t]*\d+\.\d)\)", re.I)


def _bare_number_with_cc(line: str, word: re.Match[str]) -> frozenset[str] | None:
    """A bare model number ("3090") is no name ("2080" may be a step or a size), unless an explicit capability follows
    it in parentheses: then it is the product the table names with a brand word before that number."""
    if not word.group().isdigit() or not _BARE_WITH_CC.match(line, word.end()):
        return None
    ccs = frozenset(cc for k, v in _spot_index().items() if len(k) == 2 and k[1] == word.group() for cc in v)
    return ccs or None


def _explicit_cc(rest: str) -> str | None:
    """The capability a report writes for the GPU just named (``rest``: the line after the name, up to the next name):
    "cc=6.1", "capability: 7.5", "(compute capability 8.6)", "(SM86)" -- not one a requirement states."""
    m = _SPOT_ARCH.match(rest)
    if m:
        cc = f"{m.group(1)}.{m.group(2)}"
        return cc if _valid_cc(cc) else None
    m = _SPOT_CC.search(rest[:80])
    if not m or _SPOT_NOT_OWN.search(rest[: m.end() + 16]):
        return None
    cc = f"{m.group(1)}.{m.group(2)}"
    return cc if _valid_cc(cc) else None


def _starts_a_name(line: str, word: re.Match[str]) -> bool:
    """Whether a word can open a product name: a table name's first word, not inside a path, a file name, an
    identifier or a dashed word ("/models/a100", "NVIDIA_H100", "llama-a100")."""
    toks = _spot_tokens(word.group())
    start = word.start()
    prev = line[start - 1] if start else " "
    glued = prev == "-" and start > 1 and line[start - 2].isalnum()
    return (
        bool(toks)
        and (toks[0] in _spot_first_words() or toks[0].isdigit())
        and prev not in _SPOT_LEFT_STOP
        and not glued
    )


def _longest_name(line: str, words: list[re.Match[str]], i: int) -> tuple[int, frozenset[str]] | None:
    """(index of its last word, compute capabilities) of the longest table name that starts at word ``i``: up to five
    words apart by a space, a dash or a parenthesis, a name nvidia-smi cut short ("GeForce RTX 207..."), or a bare
    number with its capability beside it."""
    best: tuple[int, frozenset[str]] | None = None
    key: list[str] = []
    last = i
    for j in range(i, min(len(words), i + _SPOT_MAX_WORDS)):
        if j > i and not _SPOT_GAP.fullmatch(line[words[j - 1].end() : words[j].start()]):
            break
        key.extend(_spot_tokens(words[j].group()))
        last = j
        ccs = _spot_lookup(tuple(key))
        if ccs is not None:
            best = (j, ccs)
    if best is None and len(key) >= 2 and line.startswith("...", words[last].end()):
        truncated = _spot_truncated(tuple(key))
        best = (last, truncated) if truncated else None
    if best is None and (bare := _bare_number_with_cc(line, words[i])):
        best = (i, bare)
    return best


def _vendor_form(name: str, line: str, start: int, end: int) -> bool:
    """Two-character names ("T4", "L4", "P4") count only as the vendor writes them: "Tesla T4", "NVIDIA L4", "T4 GPU"
    (a bare "T4" may be anything); so do GeForce laptop parts named by a number alone ("GeForce 800M", "940MX"),
    which a model's size ("the 800M model", "pythia-410m") reads the same."""
    joined = " ".join(_name_tokens(name))
    if len(joined) > 2 and not re.fullmatch(r"\d{3,4}mx?", joined):
        return True
    before = line[max(0, start - 8) : start].lower()
    if re.search(r"geforce[ \t]$", before):
        return True
    # "Tesla T4", "NVIDIA L4", "T4 GPU", and a name with its arch beside it: "L4 (sm_89)"
    after = re.match(r"[ \t]*(?:gpus?\b|\(\s*sm_?\d{2,3}\b|\(\s*cc\s*[=:]?\s*\d)", line[end:], re.I)
    return bool(re.search(r"(?:tesla|nvidia)[ \t]$", before) or after)


# A GPU the writer says is someone else's ("my GPU is a K80, while yours is TITAN X", "you used an A100"): not this
# host's, so no second card of a mixed host.
_SOMEONE_ELSES = re.compile(
    r"(?i)\b(?:yours|your\s+(?:gpu|card|machine|setup|server)s?)\s+(?:is|are|was|were)\s+(?:an?\s+|the\s+)?"
    r"(?:nvidia\s+)?$|\byou\s+(?:use|used|have|had|ran|run|tested)\s+(?:it\s+on\s+|on\s+)?(?:an?\s+|the\s+)?(?:nvidia\s+)?$"
)


def _spot_line(line: str) -> Iterator[tuple[str, str]]:
    """(name as written, compute capability) of each table GPU named in one line, the longest name at each word."""
    words = list(_SPOT_TOKEN.finditer(line))
    spots: list[tuple[int, int, str, frozenset[str]]] = []  # (start, end, name, compute capabilities)
    i = 0
    while i < len(words):
        hit = _longest_name(line, words, i) if _starts_a_name(line, words[i]) else None
        if hit is None:
            i += 1
            continue
        last, ccs = hit
        while last > i and not _spot_tokens(words[last].group()):
            last -= 1  # "Tesla K80 GPU": the name ends at its last product word
        start, end = words[i].start(), words[last].end()
        if line[end : end + 1] in ("/", "\\", "_") or re.match(r"\.\w", line[end : end + 2]):
            i += 1  # "a100.yaml", "v100/": a file or a directory, not a GPU
            continue
        name = line[start:end]
        if not _vendor_form(name, line, start, end) or _SOMEONE_ELSES.search(line[max(0, start - 40) : start]):
            i += 1
            continue
        vendor = _SPOT_VENDOR.search(line[max(0, start - 24) : start])
        if vendor:  # the name as written, with its vendor words ("NVIDIA GeForce RTX 3090")
            name = line[max(0, start - 24) + vendor.start() : end]
        if line.startswith("...", end):
            name += "..."
        elif name.count("(") > name.count(")") and line.startswith(")", end):
            name += ")"
        spots.append((start, end, name.strip(), ccs))
        i = hit[0] + 1
    for n, (_start, end, name, ccs) in enumerate(spots):
        # an explicit capability between this name and the next one is this GPU's
        limit = spots[n + 1][0] if n + 1 < len(spots) else min(len(line), end + 100)
        cc = _explicit_cc(line[end:limit])
        if cc is None and len(ccs) == 1:
            cc = next(iter(ccs))
        if cc is not None:
            yield name, cc


def _name_tokens(name: str) -> list[str]:
    return [t for word in _SPOT_TOKEN.findall(name) for t in _spot_tokens(word)]


# A GeForce model number alone, as users write it after an article or a count ("a 3090", "2x 4090", "my 1080"):
# the x0xx/x5xx/x6xx numbers of the 10 to 50 series (GTX below 2000, RTX from 2000), "Ti"/"Super" kept.
_GEFORCE_NUMBER = r"(?:10[5-8]|16[5-6]|20[5-8]|30[5-9]|40[5-9]|50[5-9])0"
_BARE_GEFORCE = re.compile(
    r"(?i)(?<![\w.])(?:(?:a|an|the|my|one|two|three|four|dual|twin|quad|[1-9]\d?\s?x|x\s?[1-9]\d?)\s+|[1-9]\d?\s?x\s?)"
    rf"({_GEFORCE_NUMBER})(?:\s?(ti|super))?(?:'?s)?(?![\w.%])"
)


# Two GeForce model numbers joined as a host's cards: "(3090 + 2080 Ti)", "1080ti & 3090".
_BARE_GEFORCE_PAIR = re.compile(
    rf"(?i)(?<![\w.])({_GEFORCE_NUMBER})(?:\s?(ti|super))?\s*[+&]\s*({_GEFORCE_NUMBER})(?:\s?(ti|super))?(?![\w.%])"
)


def _geforce(number: str, suffix: str | None) -> tuple[str, str] | None:
    name = ("GTX " if int(number) < 2000 else "RTX ") + number + (f" {suffix.title()}" if suffix else "")
    cc = _table_cc(name)
    return (name, cc) if cc is not None else None


def _bare_geforce(line: str) -> Iterator[tuple[str, str]]:
    """(name, compute capability) of each GeForce named by its model number alone, looked up in the GPU table."""
    for m in _BARE_GEFORCE.finditer(line):
        if (hit := _geforce(m.group(1), m.group(2))) is not None:
            yield hit
    for m in _BARE_GEFORCE_PAIR.finditer(line):
        for number, suffix in ((m.group(1), m.group(2)), (m.group(3), m.group(4))):
            if (hit := _geforce(number, suffix)) is not None:
                yield hit


def iter_mentioned_gpus(text: str) -> Iterator[tuple[str, str]]:
    """(name, compute capability "X.Y") of each GPU the text names anywhere, prose included: names of cudafit's GPU
    table (an explicit capability beside the name -- "cc=6.1", "capability: 7.5", "(SM86)" -- is preferred to the
    table's), and other product-like names given with "cc=X.Y".  Each name once, in text order."""
    seen: set[str] = set()
    for line in text.splitlines():
        spotted: list[tuple[str, str]] = []
        if _SPOT_LINE.search(line):
            spotted += _spot_line(line)
            spotted += [(m.group(1), m.group(2)) for m in _SPOT_NAMED_CC.finditer(line) if _valid_cc(m.group(2))]
        # a bare number names its GeForce unless a name above already holds it ("1080 Ti" before "a 1080 Ti")
        spotted += [(n, cc) for n, cc in _bare_geforce(line) if not any(n.split()[1] in name for name, _cc in spotted)]
        for name, cc in spotted:
            key = " ".join(_name_tokens(name)) or name.lower()
            if key not in seen:
                seen.add(key)
                yield name, cc


@functools.lru_cache(maxsize=256)
def _table_cc(name: str) -> str | None:
    """The compute capability cudafit's GPU table gives a product name (``None``: unknown or ambiguous name).

    Names made of digits and dots only ("8.6", "86") are not names: the table would read them as capabilities.
    """
    from cudafit.errors import CudafitError
    from cudafit.rules.gpus import resolve_gpu

    if not re.search(r"[A-Za-z]", name) or re.fullmatch(r"(?i)(?:sm|compute)_?\d+[af]?", name):
        return None
    try:
        return str(resolve_gpu(name).compute_capability)
    except CudafitError:
        return None


# Words that follow "kernel" in prose and messages ("kernel image", "kernel errors might be ...").
_NOT_KERNELS = frozenset(
    [
        "image",
        "images",
        "errors",
        "error",
        "launch",
        "launches",
        "failed",
        "was",
        "were",
        "is",
        "are",
        "has",
        "have",
        "the",
        "a",
        "an",
        "of",
        "on",
        "to",
        "in",
        "for",
        "with",
        "that",
        "and",
        "function",
        "functions",
        "might",
        "binaries",
        "binary",
        "code",
        "names",
        "name",
    ]
)


def iter_kernel_names(text: str) -> Iterator[str]:
    """Device kernel names a log mentions, each once: "kernel NAME", device-assert signatures, mangled _Z names.

    Mangled names after "undefined symbol:" are host C++ symbols of a library, not kernels, and are skipped.
    """
    found = [k.rstrip(",") for k in re.findall(r"\bkernel[\s`'\"]+([A-Za-z_][\w:<>,]*)", text)]
    # device-side assert: "ClassNLLCriterion.cu:101: void cunn_ClassNLLCriterion_updateOutput_kernel(Dtype *, ..."
    found += re.findall(r"\.cuh?:\d+: (?:static )?void ([A-Za-z_][\w:]*)\(", text)
    found += re.findall(r"\.cuh?:\d+: ([A-Za-z_]\w*): block: \[", text)  # newer torch: "K: block: [0,0,0], thread:"
    found += [m.group(1) for m in re.finditer(r"(?<!undefined symbol: )\b(_Z\w{4,})", text)]
    yield from _uniq([k for k in found if k.lower() not in _NOT_KERNELS])


def iter_operator_names(text: str) -> Iterator[str]:
    """Framework operators a failure names: torch.ops.ns.op, ggml ops, ONNX Runtime nodes, TF ops, wrapped ops."""
    found = re.findall(r"torch\.ops\.(\w+\.\w+)", text)
    found += re.findall(r"ggml_cuda_compute_forward: (\w+) failed", text)  # ggml: "RMS_NORM failed"
    found += re.findall(r"while running (\w+) node", text)  # onnxruntime: "running Gemm node"
    found += re.findall(r"\[Op:(\w+)\]", text)  # TensorFlow eager: "[Op:Abs]"
    # sgl-kernel / FlashInfer wrappers: "GemmaRMSNorm failed with error code no kernel image ..."
    found += re.findall(r"\b([A-Z]\w+) failed with error code", text)
    yield from _uniq(found)


_SOURCE_FILE = re.compile(
    # (a path starts where no path character precedes it, and its parts are bounded, so a long token is scanned once)
    r"(?<![\w./~+<>@\-])((?:[A-Za-z]:)?[\w./~+<>@\-]{0,400}?([\w+\-]{1,200}\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp|hxx|inl)))"
    r"(?![\w./])"
    r"(?:\s*(?::|, line|: line|,| line=| line)\s*(\d+))?"
)


def iter_source_files(text: str) -> Iterator[SourceFile]:
    """C++/CUDA source files a log points at, as {"file", "path", "line"} (line only when given), each once.

    Kernels are usually reported with the file and line of their launch or assert
    ("flashinfer/norm.cuh: line 113", "ggml-cuda.cu:2353", "emd_kernel.cu line=190"); the file name is what a
    lookup joins against the kernels of a library.  Python files are left out: they launch nothing.
    """
    found = [(m.group(1), m.group(2), int(m.group(3)) if m.group(3) else None) for m in _SOURCE_FILE.finditer(text)]
    with_line = {path for path, _file, line in found if line is not None}
    seen: set[tuple[str, int | None]] = set()
    for path, file, line in found:
        if (path, line) in seen or (line is None and path in with_line):
            continue
        seen.add((path, line))
        yield {"file": file, "path": path, "line": line} if line is not None else {"file": file, "path": path}


# sm_90a, compute_120f, SM90, sm100a (CUTLASS's CUTLASS_ARCH_MMA_SM90A_ENABLED, kernel names' "_sm80"): the
# prefixed names nvcc takes (-arch/-code, https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html).
PREFIXED_ARCH = r"(?<![A-Za-z0-9])(?:sm|compute)_?(\d{2,3})([af]?)(?![A-Za-z0-9])"
# An arch-specific or family target written without its prefix, as build systems and caches spell them: CMake's
# CUDA_ARCHITECTURES "90a;100a" (https://cmake.org/cmake/help/latest/prop_tgt/CUDA_ARCHITECTURES.html),
# TORCH_CUDA_ARCH_LIST / FLASHINFER_CUDA_ARCH_LIST "9.0a 12.0f" (pytorch/pytorch:torch/utils/cpp_extension.py,
# flashinfer-ai/flashinfer:flashinfer/compilation_context.py), "capability 9.0a", and FlashInfer's JIT cache
# directory named after its target archs, "~/.cache/flashinfer/90a/" or ".../75_80_89_90a/"
# (flashinfer/jit/env.py).  Only with the a/f suffix: a bare "90" or "8.6" is not told apart from other numbers.
_AF_TOKEN = r"(?:\d{1,2}\.\d|\d{2,3})[af]"
_ANY_TOKEN = r"(?:\d{1,2}\.\d|\d{2,3})[af]?(?![\w.])"
# Words between the arch word and its list in prose ("arch list hardcodes 9.0a/10.0a", "architectures are 90a").
_ARCH_WORDS = r"(?:\s+(?:list|lists|is|are|was|were|set|to|hardcodes?|includes?|only|of|defaults?|from)){0,2}"
# The words that open a list of targets: "archs", "capabilities", TORCH_CUDA_ARCH_LIST, "the AOT build list was".
_ARCH_NOUN = (
    r"archs?|architectures?|capability|capabilities|\w*ARCH_LIST|\w*ARCHITECTURES|\w+_ARCHS|(?:build|target)\s+list|"
    r"targets"
)
# group 1: the list of targets after an arch word, or a directory named after targets; "/" separates them too.
UNPREFIXED_AF_ARCH = (
    rf"(?:\b(?:{_ARCH_NOUN}){_ARCH_WORDS}[\"'\s=:\[(]{{0,4}}"
    rf"((?:{_ANY_TOKEN}(?:[\"'\s,;+/]{{1,3}}|\s+to\s+)){{0,8}}{_ANY_TOKEN})|/((?:\d{{2,3}}[af]?_){{0,8}}\d{{2,3}}[af]?)/)"
)
# The same, matching where an a/f target is named (the catalogue's pattern; :func:`_af_arch` checks the number).
UNPREFIXED_AF_MENTION = (
    rf"(?:\b(?:{_ARCH_NOUN}){_ARCH_WORDS}[\"'\s=:\[(]{{0,4}}"
    rf"(?:{_ANY_TOKEN}(?:[\"'\s,;+/]{{1,3}}|\s+to\s+)){{0,8}}|/(?:\d{{2,3}}[af]?_){{0,8}}){_AF_TOKEN}(?![\w.])"
)
_PREFIXED_RX = re.compile(PREFIXED_ARCH, re.I)
_UNPREFIXED_RX = re.compile(UNPREFIXED_AF_ARCH, re.I)
_AF_TOKEN_RX = re.compile(rf"(?<![\w.])({_AF_TOKEN})(?![\w.])", re.I)


def _af_arch(token: str) -> str | None:
    """``sm_90a`` for "9.0a" / "90a" when that a/f target exists: 'a' targets start with sm_90a, 'f' targets with
    sm_100f (CUDA Programming Guide §5.1.2), and the compute capability is one of the table's."""
    from cudafit.rules.tables import load_tables

    if not re.fullmatch(_AF_TOKEN, token, re.I):
        return None
    number, variant = token[:-1].replace(".", ""), token[-1].lower()
    n = int(number)
    if n < (90 if variant == "a" else 100):
        return None
    known = {cc.arch_number for cc in load_tables().limits}
    return f"sm_{n}{variant}" if n in known else None


def iter_arch_names(text: str) -> Iterator[str]:
    """Every target a text names, as ``sm_XY[a|f]``: the prefixed names (any case) and the a/f targets written
    without a prefix (:data:`UNPREFIXED_AF_ARCH`)."""
    for m in _PREFIXED_RX.finditer(text):
        yield f"sm_{m.group(1)}{m.group(2).lower()}"
    for m in _UNPREFIXED_RX.finditer(text):
        tokens = _AF_TOKEN_RX.findall(m.group(1)) if m.group(1) else m.group(2).split("_")
        for token in tokens:
            arch = _af_arch(token)
            if arch:
                yield arch


def _archs(text: str) -> Facts:
    """``archs``: every target named (:func:`iter_arch_names`), as ``sm_XY[a|f]``."""
    archs = list(iter_arch_names(text))
    return {"archs": _sorted_archs(archs)} if archs else {}


def _arch_range(text: str) -> Facts:
    """``arch_range`` and ``built_for`` of ``FATAL: kernel K is for smA-smB, but was built for smC``."""
    m = re.search(r"is for sm_?(\d{2,3})\s*-\s*sm_?(\d{2,3}),? but was built for sm_?(\d{2,3})\b", text)
    if m and int(m.group(1)) <= int(m.group(2)):  # "sm80-sm00" is no range
        return {"arch_range": [f"sm_{m.group(1)}", f"sm_{m.group(2)}"], "built_for": f"sm_{m.group(3)}"}
    return {}


def _ggml_built_for(text: str) -> Facts:
    """``built_for``: ggml prints the ``__CUDA_ARCH__`` of the code that ran (520 = sm_52)."""
    m = re.search(r"no device code compatible with CUDA arch (\d{3,4})\b", text)
    return {"built_for": f"sm_{int(m.group(1)) // 10}"} if m else {}


def _ggml_build_archs(text: str) -> Facts:
    """``build_archs``: ggml's ``__CUDA_ARCH_LIST__`` ("ggml-cuda.cu was compiled for: 520,610")."""
    m = re.search(r"ggml-cuda\.cu was compiled for: (\d{3,4}(?:\s*,\s*\d{3,4})*)", text)
    return {"build_archs": _sorted_archs([f"sm_{int(a) // 10}" for a in re.findall(r"\d+", m.group(1))])} if m else {}


def _failure_names(text: str) -> Facts:
    """``kernels``, ``operators`` and ``source_files``: the names a failure carries (ten of each at most)."""
    out: Facts = {}
    kernels = list(iter_kernel_names(text))
    if kernels:
        out["kernels"] = kernels[:10]
    operators = list(iter_operator_names(text))
    if operators:
        out["operators"] = operators[:10]
    files = list(iter_source_files(text))
    if files:
        out["source_files"] = files[:10]
    return out


def _cuda_errors(text: str) -> Facts:
    """``cuda_errors``: code, name and string of each CUDA error named (:func:`iter_cuda_errors`)."""
    errors = iter_cuda_errors(text)
    return {"cuda_errors": [{"code": e.code, "name": e.name, "string": e.string} for e in errors]} if errors else {}


def _shared_memory(text: str) -> Facts:
    """``shared_memory``: a launch's request over the hardware limit (Triton's "Required: N, Hardware limit: M"),
    else ptxas' "uses too much shared data (0x12000 bytes, 0xc000 max)": static ``__shared__`` arrays, which ptxas
    caps at 48 KB whatever the GPU (more needs dynamic shared memory and an opt-in)."""
    m = re.search(r"Required:\s*(\d+),\s*Hardware limit:\s*(\d+)", text)
    if m:
        return {"shared_memory": {"required": int(m.group(1)), "limit": int(m.group(2))}}
    m = re.search(r"uses too much shared data \((0x[0-9a-f]+|\d+) bytes,\s*(0x[0-9a-f]+|\d+) max\)", text, re.I)
    if m:
        return {"shared_memory": {"required": int(m.group(1), 0), "limit": int(m.group(2), 0), "kind": "static"}}
    return {}


# The ways a guard states the lowest compute capability it accepts, first match wins: (pattern, how its groups
# read): "cc" a CC or an arch number ("8.0", "75"), "major" a major alone ("arch_major == 9", "8.x required"),
# "pair" major and minor apart ("(3, 5)").
_MINIMUM_FORMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"requires\s+sm_?\s?(\d{2,3})\s*\+", re.I), "cc"),
    (
        re.compile(
            r"requires?\s+(?:GPUs?|GPU's|devices?)\s+(?:with\s+)?sm_?\s?(\d{2,3})\s+or\s+(?:higher|newer|above)", re.I
        ),
        "cc",
    ),
    (
        re.compile(
            r"(?:compute capability|GPU architecture|capability)\s*(?:>=|of at least|at least|≥)\s*"
            r"(?:sm_?)?(\d+(?:\.\d)?)",
            re.I,
        ),
        "cc",
    ),
    (re.compile(r"compute capability below (\d+(?:\.\d)?) are not supported", re.I), "cc"),
    (re.compile(r"minimum required compute capability:? (\d+\.\d)", re.I), "cc"),
    # TransformerEngine: "Device compute capability 8.9 or higher required for FP8 execution."
    (re.compile(r"compute capability (\d+\.\d) or (?:higher|newer|later|above)", re.I), "cc"),
    (re.compile(r"compute capability (\d+)\.x required", re.I), "major"),
    # vLLM: "Minimum capability: 75. Current capability: 70."
    (re.compile(r"Min(?:imum)? capability: (\d{2,3})\b"), "cc"),
    # numba: "(requires >=3.5)"
    (re.compile(r"\(requires >= ?(\d+\.\d)\)"), "cc"),
    # numba: "has compute capability < (3, 5)"
    (re.compile(r"has compute capability < \(?(\d+), ?(\d+)"), "pair"),
    # TransformerEngine: "requires SM_90+ (Hopper or later)"
    (re.compile(r"requires\s+SM_?(\d{2,3})\+?\s*(?:\(\w+\)\s*)?(?:\(?\w+\s+)?or\s+(?:later|newer|higher)", re.I), "cc"),
    # DeepGEMM: "Assertion error (...): arch_major == 9"
    (re.compile(r"\barch_major\s*(?:==|>=)\s*(\d+)\b"), "major"),
)
# "FlashAttention only supports Ampere GPUs or newer": an architecture's name for its first CC.
_ARCHITECTURE_MINIMUM = re.compile(
    r"(?:only supports?|requires?)\s+(Maxwell|Pascal|Volta|Turing|Ampere|Ada|Hopper|Blackwell)"
    r"(?:\s+Lovelace)?\s+(?:GPUs?\s+)?(?:or\s+(?:newer|later|above))",
    re.I,
)


def _stated_minimum(text: str) -> str | None:
    """The lowest compute capability a guard's message states (:data:`_MINIMUM_FORMS`), as ``X.Y``."""
    for rx, form in _MINIMUM_FORMS:
        m = rx.search(text)
        if m is None:
            continue
        if form == "pair":
            return f"{m.group(1)}.{m.group(2)}"
        value = f"{m.group(1)}.0" if form == "major" else m.group(1)
        return value if "." in value else _cc_of(value)
    return None


def _capability_range(text: str) -> Facts:
    """``required_minimum`` / ``required_maximum`` (the CC range a capability guard accepts) and
    ``required_architecture`` (a guard that names an architecture instead)."""
    out: Facts = {}
    minimum = _stated_minimum(text)
    # xformers: "requires device with capability > (8, 0) but your GPU has capability (7, 5) (too old)"
    lower = re.search(r"requires device with capability\s*>=?\s*\((\d+), (\d+)\)", text)
    if lower and minimum is None:
        out["required_minimum"] = f"{lower.group(1)}.{lower.group(2)}"
    upper = re.search(r"requires device with capability\s*<=\s*\((\d+), (\d+)\)", text)
    if upper:
        out["required_maximum"] = f"{upper.group(1)}.{upper.group(2)}"
    if minimum is not None:
        out["required_minimum"] = minimum
    elif m := _ARCHITECTURE_MINIMUM.search(text):
        out["required_minimum"] = ARCHITECTURE_MIN_CC[m.group(1).lower()]
        out["required_architecture"] = m.group(1).capitalize()
    return out


def _packages(text: str) -> Facts:
    """``packages``: the distributions of site-/dist-packages paths (``nvidia/<lib>`` for NVIDIA's wheels)."""
    pkgs = [
        f"nvidia/{sub}" if top == "nvidia" and sub else top
        for top, sub in re.findall(r"(?:site|dist)-packages/([A-Za-z0-9_.\-]+)(?:/([A-Za-z0-9_\-]+)/)?", text)
    ]
    names = [p.split("-")[0] if p.endswith((".dist-info", ".egg-info")) else p for p in pkgs]
    names = [n.removesuffix(".py").removesuffix(".so") for n in names if not n.startswith(("_", "."))]
    names = [n if n.startswith("nvidia/") else n.split(".")[0] for n in names if n]
    return {"packages": _uniq(names)} if names else {}


def _libraries(text: str) -> Facts:
    """``libraries``: the shared libraries named (``libtorch_cuda_linalg.so``), ten at most."""
    libs = _uniq(re.findall(r"(?<![\w.+-])(lib[\w+-]+(?:\.[\w+-]+)*?\.so)(?:\.\d+)*\b", text))
    return {"libraries": libs[:10]} if libs else {}


def _gpus(text: str) -> Facts:
    """``gpus``: each GPU the log describes (:func:`iter_gpus`), once; ``mentioned_gpus``: the GPUs the text names
    besides those (:func:`iter_mentioned_gpus`, prose included)."""
    gpus = list(dict.fromkeys(iter_gpus(text)))
    out: Facts = {"gpus": [{"name": name, "compute_capability": cc} for name, cc in gpus]} if gpus else {}
    listed = [set(_name_tokens(name)) for name, _cc in gpus]
    mentioned = [(n, cc) for n, cc in iter_mentioned_gpus(text) if not any(set(_name_tokens(n)) <= t for t in listed)]
    if mentioned:
        out["mentioned_gpus"] = [{"name": name, "compute_capability": cc} for name, cc in mentioned]
    return out


def _listed_build_archs(text: str) -> Facts:
    """``build_archs`` a build lists: spconv's "available: {(6, 1), (3, 7)}", torch's "supports CUDA capabilities
    sm_50 sm_60" (the latter wins)."""
    out: Facts = {}
    m = re.search(r"isn't compiled in prebuilt.{0,80}?available: \{((?:\(\d+, \d+\),? ?)+)\}", text)
    if m:
        out["build_archs"] = _sorted_archs([f"sm_{a}{b}" for a, b in re.findall(r"\((\d+), (\d+)\)", m.group(1))])
    m = re.search(r"supports CUDA capabilities ((?:sm_\d+[af]?[\s,]*)+)", text)
    if m:
        out["build_archs"] = _sorted_archs(re.findall(r"sm_\d+[af]?", m.group(1)))
    # torch's _warn_unsupported_code (torch/cuda/__init__.py, 2.8+): "- 8.0 which supports hardware CC >=8.0,<9.0",
    # one line per CC the build carries code for.
    listed = re.findall(r"^[ \t]*- (\d+)\.(\d) which supports hardware CC", text, re.M)
    if listed and "build_archs" not in out:
        out["build_archs"] = _sorted_archs([f"sm_{a}{b}" for a, b in listed])
    # torch.cuda.get_arch_list() printed: "['sm_75', 'sm_80', 'sm_90', 'sm_120', 'compute_120']" (the cubins; a
    # compute_XY entry is PTX, which the list of what runs as-is leaves out)
    m = re.search(r"\[\s*'sm_\d{2,3}[af]?'(?:,\s*'(?:sm|compute)_\d{2,3}[af]?')*\s*\]", text)
    if m and "build_archs" not in out:
        out["build_archs"] = _sorted_archs(re.findall(r"sm_\d{2,3}[af]?", m.group(0)))
    return out


def _build_min_cc(text: str) -> Facts:
    """``build_min_cc``: the lowest CC a build says it supports (TensorFlow's "Ignoring visible gpu device")."""
    m = re.search(r"minimum cuda capability (?:that we )?support(?:ed)? (?:by this library )?is (\d+\.\d+)", text, re.I)
    m = m or re.search(
        r"Ignoring (?:visible )?gpu device .{0,160}The minimum required Cuda capability is (\d+\.\d+)", text
    )
    return {"build_min_cc": m.group(1)} if m else {}


def _extension_toolkit(text: str) -> Facts:
    """``toolkit_cuda_version`` / ``torch_cuda_version``: an extension build's nvcc vs torch.version.cuda."""
    m = re.search(
        r"(?:The detected CUDA version \((\d+\.\d+)\) mismatches the version that was used to compile\s+PyTorch "
        r"\((\d+\.\d+)\)|Installed CUDA version (\d+\.\d+) does not match the version torch was compiled with "
        r"(\d+\.\d+))",
        text,
    )
    if not m:
        return {}
    toolkit, torch = [g for g in m.groups() if g]
    return {"toolkit_cuda_version": toolkit, "torch_cuda_version": torch}


def _driver(text: str) -> Facts:
    """``driver_cuda_version`` (the CUDA a driver supports, "found version 11040") and ``driver_version``."""
    out: Facts = {}
    m = re.search(r"too old \(found version (\d{4,5})\)", text) or re.search(
        r"driver (?:API )?version[:= ]+(\d{4,5})\b", text, re.I
    )
    if m:
        v = int(m.group(1))
        out["driver_cuda_version"] = f"{v // 1000}.{(v % 1000) // 10}"
    m = re.search(r"Driver Version:\s*(\d{3,4}(?:\.\d+){1,2})", text)
    if m:
        out["driver_version"] = m.group(1)
    return out


def _compiler_limits(text: str) -> Facts:
    """``ptx_isa`` (needed/supported, from ptxas) and ``unsupported_target`` (an arch a compiler does not know)."""
    out: Facts = {}
    m = re.search(r"Unsupported \.version (\d+\.\d+); current version is '?(\d+\.\d+)'?", text)
    if m:
        out["ptx_isa"] = {"needed": m.group(1), "supported": m.group(2)}
    m = re.search(
        r"Value '((?:sm|compute)_\d{2,3}[af]?)' is not defined for option 'gpu-name'", text, re.I
    ) or re.search(r"Unsupported gpu architecture '?((?:sm|compute)_\d{2,3}[af]?)\b", text, re.I)
    if m:
        out["unsupported_target"] = m.group(1).lower()
    return out


def _torch_version(text: str) -> Facts:
    """``torch_version``: a local-version-tagged torch (``2.5.1+cu121``)."""
    m = re.search(
        r"\btorch(?:\s*==\s*|\s+|[-_ ]version[: ]+|\.__version__\s*[:=]?\s*)"
        r"(\d+\.\d+(?:\.\d+)?\+(?:cu\d+|cpu|rocm[\d.]+))",
        text,
    )
    return {"torch_version": m.group(1)} if m else {}


def _devices(text: str) -> Facts:
    """``aoti_runner`` (AOTInductor's CPU or CUDA runner), ``devices`` (of a same-device error) and
    ``missing_device`` (a checkpoint saved on a device this process does not have)."""
    out: Facts = {}
    m = re.search(r"AOTIModelContainerRunner(Cpu|Cuda)", text)
    if m:
        out["aoti_runner"] = m.group(1).lower()
    devs = re.findall(r"\b(cuda:\d+|cpu)\b(?= and | ?!|,|\)| ?$)", text, re.M)
    if devs and re.search(r"same device|device type|on the same", text, re.I):
        out["devices"] = _uniq(devs)
    m = re.search(r"deserialize object on CUDA device (\d+) but torch\.cuda\.device_count\(\) is (\d+)", text)
    if m:
        out["missing_device"] = {"index": int(m.group(1)), "device_count": int(m.group(2))}
    return out


def _triton(text: str) -> Facts:
    """``triton``: the text mentions Triton."""
    return {"triton": True} if re.search(r"\btriton\b", text, re.I) else {}


# One extractor per kind of fact, in the order the facts appear in a finding's evidence (a key two extractors
# give keeps the place of the first, with the value of the last).
_EXTRACTORS: tuple[Callable[[str], Facts], ...] = (
    _archs,
    _arch_range,
    _ggml_built_for,
    _ggml_build_archs,
    _failure_names,
    _cuda_errors,
    _shared_memory,
    _capability_range,
    _packages,
    _libraries,
    _gpus,
    _listed_build_archs,
    _build_min_cc,
    _extension_toolkit,
    _driver,
    _compiler_limits,
    _torch_version,
    _devices,
    _triton,
)


def extract_facts(text: str) -> Facts:
    """Facts in ``text`` (cleaned first): a JSON-ready dict with only the keys found.

    Keys: ``archs`` (every sm_/compute_ target named, canonical ``sm_XY[a|f]``), ``arch_range`` and
    ``built_for`` (``FATAL: kernel K is for smA-smB, but was built for smC``; ggml's "no device code
    compatible with CUDA arch 520" gives ``built_for`` sm_52), ``cuda_errors`` (code, name, string),
    ``shared_memory`` (required/limit bytes), ``required_minimum`` / ``required_maximum`` (the CC range a
    capability guard accepts), ``packages`` (from site-/dist-packages paths), ``gpus`` (name and CC from
    torch, ggml, TensorFlow, vLLM, xformers and bitsandbytes logs; "GPU" where the log gives no name),
    ``build_archs`` (the archs a torch or ggml build says it carries), ``build_min_cc``,
    ``driver_cuda_version``, ``driver_version``, ``ptx_isa`` (needed/supported from ptxas),
    ``unsupported_target``, ``toolkit_cuda_version`` / ``torch_cuda_version`` (an extension build's nvcc
    vs torch.version.cuda), ``torch_version``, ``aoti_runner``, ``devices``, ``triton``.

    The names a failure carries, for joining with the kernels a library has no code for (issue 11):
    ``kernels`` (:func:`iter_kernel_names`), ``operators`` (:func:`iter_operator_names`: torch.ops
    ``ns.op``, ggml ops such as ``RMS_NORM``, ONNX Runtime node types, TensorFlow ``[Op:X]``, wrapper ops
    such as sgl-kernel's ``GemmaRMSNorm``) and ``source_files`` (:func:`iter_source_files`: ``{"file",
    "path", "line"}`` of the .cu/.cuh/.cpp sites a log points at).

    Each kind of fact has its extractor (:data:`_EXTRACTORS`); the shapes are those of
    :class:`cudafit.explain.evidence.Facts`.
    """
    text = clean(text)
    facts: Facts = {}
    for extractor in _EXTRACTORS:
        facts.update(extractor(text))
    return _valid(facts)


def _valid_cc(value: str) -> bool:
    from cudafit.model import ComputeCapability, parse_compute_capability

    try:
        cc = parse_compute_capability(value)
        ComputeCapability.from_arch_number(cc.arch_number)
    except ValueError:
        return False
    return True


def _valid_arch(arch: str) -> bool:
    from cudafit.model import ComputeCapability

    m = re.fullmatch(r"sm_(\d{2,3})[af]?", arch)
    if not m:
        return False
    try:
        ComputeCapability.from_arch_number(int(m.group(1)))
    except ValueError:
        return False
    return True


_CC_FACTS: tuple[Literal["required_minimum", "required_maximum", "build_min_cc"], ...] = (
    "required_minimum",
    "required_maximum",
    "build_min_cc",
)
_ARCH_LIST_FACTS: tuple[Literal["archs", "build_archs"], ...] = ("archs", "build_archs")
_GPU_LIST_FACTS: tuple[Literal["gpus", "mentioned_gpus"], ...] = ("gpus", "mentioned_gpus")


def _valid(facts: Facts) -> Facts:
    """Facts without the values no GPU has: a log's "compute capability 8.61", "sm_1" or "(1234, 0)" are typos or
    noise, and reasoning on them would mislead (or fail); a fact that does not parse is left out, not guessed."""
    for key in _CC_FACTS:
        if key in facts and not _valid_cc(facts[key]):
            del facts[key]
    for arch_key in _ARCH_LIST_FACTS:
        if arch_key in facts:
            kept = [a for a in facts[arch_key] if _valid_arch(a)]
            if kept:
                facts[arch_key] = kept
            else:
                del facts[arch_key]
    if "built_for" in facts and not _valid_arch(facts["built_for"]):
        facts.pop("built_for")
        facts.pop("arch_range", None)
    if "arch_range" in facts and not all(_valid_arch(a) for a in facts["arch_range"]):
        facts.pop("arch_range")
    for gpu_key in _GPU_LIST_FACTS:
        if gpu_key in facts:
            gpus = [g for g in facts[gpu_key] if _valid_cc(g["compute_capability"])]
            if gpus:
                facts[gpu_key] = gpus
            else:
                del facts[gpu_key]
    return facts
