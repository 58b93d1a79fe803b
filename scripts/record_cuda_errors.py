"""Record every CUDA runtime and driver error (name, code, string, documentation) in ``cuda_errors.json``.

``cudafit explain`` recognises CUDA errors written as a name (``cudaErrorNoKernelImageForDevice``,
``CUDA_ERROR_NO_BINARY_FOR_GPU``), a number (``error 209``) or the string ``cudaGetErrorString`` returns.
Those messages are finite and NVIDIA writes all of them down, so the table is read from NVIDIA's own
files instead of being grown from examples (issue 18):

* the ``cudaError`` enum of ``driver_types.h`` and the ``CUresult`` enum of ``cuda.h``, with their doc
  comments: the names, the codes and what each error means (the same text as
  https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html and
  https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html);
* ``libcudart.so``'s table of ``{code, name, string}`` in ``.data.rel.ro`` -- the strings
  ``cudaGetErrorName`` / ``cudaGetErrorString`` return (pointers into ``.rodata``, relocated by
  ``R_X86_64_RELATIVE`` entries of ``.rela.dyn``).

Both come from the ``nvidia-cuda-runtime`` wheels (each ships ``include/`` and ``lib/libcudart.so.N``) of
:data:`RUNTIMES` -- CUDA 12.9, 13.0 and 13.5, merged: logs come from every release, a newer one adds codes --
downloaded with ``pip download --no-deps`` into the shared real-wheel cache.  ``--include DIR`` checks that a
local toolkit's headers (``/usr/local/cuda/include``, CUDA 13.0 here) name no error the recording lacks.

``cuGetErrorString``'s texts live in the driver (``libcuda.so``), which neither the wheel nor the toolkit
ships.  The runtime's codes equal the driver's for the same condition (the two enums list the same numbers
with the same doc comments), and public reports of CuPy's driver errors ("CUDA_ERROR_X: <cuGetErrorString>")
show the runtime's string of the code (200, 209, 300); so a driver error carries the runtime's strings of its
code, and one whose code the runtime lacks (202, 916, 47) keeps its doc comment only (``strings`` empty).

The category of each error is decided here, from NVIDIA's documentation of that error (:data:`DECISIONS`,
each with the doc sentence it rests on); every error not listed is unrelated to the categories of
shared/docs/error_categories.md (illegal address, out of memory, launch failure, ECC, ...).  Where the code
alone cannot decide (``invalid device function``: another card, another arch or lower-arch PTX), the error
is marked ``context`` with its candidate categories, and the catalogue's context rules decide.

    python scripts/record_cuda_errors.py --include /usr/local/cuda/include   # RUNTIMES, checked against a toolkit
    python scripts/record_cuda_errors.py --check                             # exit 1 if the committed file differs
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import struct
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from record_compiler_releases import wheel_for  # the shared real-wheel cache and its pip download

# The runtime wheels recorded, oldest first: logs come from CUDA 12 builds as much as from 13 (a code's string
# may differ between releases; each is kept).
RUNTIMES = ("nvidia-cuda-runtime-cu12==12.9.79", "nvidia-cuda-runtime==13.0.96", "nvidia-cuda-runtime==13.5.37")
OUT = Path(__file__).resolve().parents[1] / "src" / "cudafit" / "explain" / "data" / "cuda_errors.json"

CUDART_DOC = "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html"
CUDRV_DOC = "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html"
COMPAT_DOC = "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html"


@dataclass(frozen=True)
class Decision:
    """How one error relates to explain's categories, and the documentation it is decided from.

    ``certainty``: ``code`` -- the error alone names the category; ``context`` -- the error fits several
    causes (``categories`` lists them) and the rest of the log decides (catalogue context rules).
    """

    categories: tuple[str, ...]
    certainty: str
    why: str


# By runtime name (the driver twin of the same code shares it).  Each ``why`` quotes or paraphrases the
# doc comment of driver_types.h / cuda.h (the API references above), or the page cited in it.
DECISIONS: dict[str, Decision] = {
    "cudaErrorInsufficientDriver": Decision(
        ("driver-too-old",),
        "code",
        "doc: 'the installed NVIDIA CUDA driver is older than the CUDA runtime library ... install an updated "
        "NVIDIA display driver'",
    ),
    "cudaErrorCallRequiresNewerDriver": Decision(
        ("driver-too-old",),
        "code",
        "doc: 'the API call requires a newer CUDA driver than the one currently installed'",
    ),
    "cudaErrorCompatNotSupportedOnDevice": Decision(
        ("driver-too-old",),
        "code",
        "doc: 'the system was upgraded to run with forward compatibility but the visible hardware ... does not "
        "support this configuration'; forward compatibility (the cuda-compat package) exists to run a CUDA "
        f"newer than the installed driver, on data-center GPUs only ({COMPAT_DOC}): on other GPUs the driver "
        "itself must be new enough",
    ),
    "cudaErrorInsufficientLoaderVersion": Decision(
        ("driver-too-old",),
        "code",
        "doc: 'loader version is insufficient for Fatbin' (CUDA 13.5): the driver's module loader predates the "
        "fatbin a newer toolkit wrote; a newer driver reads it",
    ),
    "cudaErrorNoKernelImageForDevice": Decision(
        ("no-kernel-image",),
        "code",
        "doc: 'there is no kernel image available that is suitable for the device ... code generation options "
        "... do not include the corresponding device configuration'",
    ),
    "cudaErrorJitCompilerNotFound": Decision(
        ("no-kernel-image",),
        "code",
        "doc: 'the PTX JIT compiler library was not found ... The runtime may fall back to compiling PTX if an "
        "application does not contain a suitable binary for the current device': no cubin for this GPU and no "
        "JIT to make one",
    ),
    "cudaErrorJitCompilationDisabled": Decision(
        ("no-kernel-image",),
        "code",
        "doc: 'the JIT compilation was disabled ... The runtime may fall back to compiling PTX if an application "
        "does not contain a suitable binary for the current device': no cubin for this GPU, JIT not allowed",
    ),
    "cudaErrorUnsupportedPtxVersion": Decision(
        ("ptx-too-new-for-driver",),
        "code",
        "doc: 'the PTX was generated by a compiler newer than what is supported by the CUDA driver and PTX JIT "
        "compiler'",
    ),
    "cudaErrorInvalidDeviceFunction": Decision(
        ("mixed-gpu", "no-kernel-image", "ptx-jit-lower-arch"),
        "context",
        "doc: 'The requested device function does not exist or is not compiled for the proper device "
        "architecture': the arch is missing for this GPU, for one card of a mixed host, or the kernel refused "
        "lower-arch PTX; the log around it tells which",
    ),
    "cudaErrorInvalidPtx": Decision(
        ("ptx-too-new-for-driver", "arch-specific-mismatch", "no-kernel-image"),
        "context",
        "doc: 'A PTX compilation failed. The runtime may fall back to compiling PTX if an application does not "
        "contain a suitable binary': the JIT failed on PTX too new for it, on PTX for an 'a' target, or on PTX "
        "that is broken; the log around it tells which",
    ),
    "cudaErrorInvalidKernelImage": Decision(
        ("no-kernel-image",),
        "context",
        "doc: 'the device kernel image is invalid. This can also indicate an invalid CUDA module' (cuda.h): "
        "an image this driver cannot load for this GPU, or a corrupt one; the code alone does not tell",
    ),
    "cudaErrorSymbolNotFound": Decision(
        ("no-kernel-image",),
        "context",
        "doc: 'a named symbol was not found. Examples of symbols are global/constant variable names, driver "
        "function names, texture names, and surface names': the documentation names no arch, so the code alone "
        "does not decide; the catalogue counts it toward no-kernel-image only as weak evidence (bitsandbytes' "
        "ops.cu reports it on GPUs its build left out), the rest of the log decides",
    ),
    "cudaErrorInvalidSymbol": Decision(
        ("no-kernel-image",),
        "context",
        "doc: 'the symbol name/identifier passed to the API call is not a valid name or identifier': a "
        "__device__ or __constant__ variable of the program is only valid in the module the runtime loaded for "
        "this device, and with no image in the fatbin this device can load there is none, so cudaMemcpyToSymbol "
        "of a variable that exists fails this way (threads resolved by the arch flags: gpuNUFFT#97, gpufs#3, "
        "PWP3D#4, PowerInfer#108, CudaMiner#160); a wrong name fails the same, the rest of the log decides",
    ),
    "cudaErrorInvalidConfiguration": Decision(
        ("shared-memory-limit",),
        "context",
        "doc: 'a kernel launch is requesting resources that can never be satisfied by the current device. "
        "Requesting more shared memory per block than the device supports will trigger this error, as will "
        "requesting too many threads or blocks'",
    ),
}

# Runtime errors looked at and left unrelated although their wording brushes a category: the reason, for
# the record (every other error is unrelated on its doc comment's face: memory, launch, hardware, API use).
UNRELATED_NOTES: dict[str, str] = {
    "cudaErrorSystemDriverMismatch": "doc: 'a mismatch between the versions of the display driver and the CUDA "
    "driver': the kernel-mode and user-mode halves of one installation differ (a compat package or a "
    "driver upgraded without reboot), not a runtime newer than the driver",
    "cudaErrorStubLibrary": "doc: 'the CUDA driver that the application has loaded is a stub library': a "
    "library path problem, not a build for another GPU or CUDA",
    "cudaErrorNoDevice": "doc: 'no CUDA-capable devices were detected by the installed CUDA driver': "
    "visibility of the GPU, no build or driver-version question",
    "cudaErrorInvalidDevice": "doc: 'the device ordinal supplied by the user does not correspond to a valid "
    "CUDA device': a wrong index, not tensors on two devices",
    "cudaErrorUnsupportedLimit": "doc: 'the cudaLimit passed to the API call is not supported by the active "
    "device': an API argument",
    "cudaErrorUnsupportedExecAffinity": "doc: 'the provided execution affinity is not supported by the device': "
    "an API argument (SM-count affinity), not code for the GPU",
    "cudaErrorUnsupportedDevSideSync": "doc: 'the code to be compiled by the PTX JIT contains unsupported call "
    "to cudaDeviceSynchronize': a source-level feature (device-side sync, compute capability < 9.0 only), which "
    "no rebuild for other archs fixes",
    "cudaErrorLaunchOutOfResources": "doc: 'too many arguments ... or too many threads for the kernel's "
    "register count': registers and parameters, not shared memory",
    "cudaErrorInvalidValue": "doc: 'one or more of the parameters passed to the API call is not within an "
    "acceptable range of values': any invalid argument",
}


def _doc_text(comment: str) -> tuple[str, bool]:
    """A doxygen comment as one line of prose, and whether it says ``\\deprecated``."""
    lines = [re.sub(r"^\s*\*\s?", "", line).strip() for line in comment.splitlines()]
    text = " ".join(line for line in lines if line)
    deprecated = "\\deprecated" in text
    text = text.replace("\\deprecated", "").replace("::", "")
    text = re.sub(r'\\ref \S+ "([^"]*)"', r"\1", text)
    return re.sub(r"\s+", " ", text).strip(), deprecated


def parse_enum(header: str, opening: str, closing: str) -> list[tuple[str, int, str, bool]]:
    """(name, code, doc, deprecated) of every value of the enum between ``opening`` and ``closing``."""
    start = header.index(opening)
    body = header[start : header.index(closing, start)]
    found = []
    for m in re.finditer(r"/\*\*(.*?)\*/\s*,?\s*(\w+)\s*=\s*(\d+)", body, re.S):
        doc, deprecated = _doc_text(m.group(1))
        found.append((m.group(2), int(m.group(3)), doc, deprecated))
    return found


def _elf_sections(so: bytes) -> dict[str, tuple[int, int, int]]:
    """name -> (address, file offset, size) of an ELF64 little-endian file's sections."""
    (shoff,) = struct.unpack_from("<Q", so, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", so, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", so, shoff + i * shentsize) for i in range(shnum)]
    strtab_off = headers[shstrndx][4]
    out = {}
    for h in headers:
        end = so.index(b"\0", strtab_off + h[0])
        out[so[strtab_off + h[0] : end].decode()] = (h[3], h[4], h[5])
    return out


def _cstring(so: bytes, offset: int) -> str:
    """The NUL-terminated string at ``offset`` (bytes that are no text, such as a jump table, give "")."""
    raw = so[offset : so.index(b"\0", offset)]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return ""


def libcudart_table(so: bytes) -> dict[int, tuple[str, str]]:
    """code -> (cudaGetErrorName, cudaGetErrorString) from libcudart's table of {code, name*, string*}.

    The pointers are the addends of ``R_X86_64_RELATIVE`` relocations (type 8) at the table's slots; an entry
    is a slot pair whose first pointer lands on a ``cudaError*``/``cudaSuccess`` string in ``.rodata``.
    """
    sections = _elf_sections(so)
    _rela_addr, rela_off, rela_size = sections[".rela.dyn"]
    relative = {}
    for i in range(rela_size // 24):
        r_offset, r_info, r_addend = struct.unpack_from("<QQq", so, rela_off + 24 * i)
        if r_info & 0xFFFFFFFF == 8:
            relative[r_offset] = r_addend
    ro_addr, ro_off, ro_size = sections[".rodata"]
    tab_addr, tab_off, tab_size = sections[".data.rel.ro"]

    def rodata(addr: int) -> str | None:
        return _cstring(so, ro_off + addr - ro_addr) if ro_addr <= addr < ro_addr + ro_size else None

    table: dict[int, tuple[str, str]] = {}
    for slot in range(tab_addr + 8, tab_addr + tab_size - 8, 8):
        name_at, string_at = relative.get(slot), relative.get(slot + 8)
        if name_at is None or string_at is None:
            continue
        name, string = rodata(name_at), rodata(string_at)
        if name and string is not None and re.fullmatch(r"cudaError\w+|cudaSuccess", name):
            (code,) = struct.unpack_from("<I", so, tab_off + slot - 8 - tab_addr)
            table[code] = (name, string)
    return table


def _decision(name: str) -> dict[str, object]:
    d = DECISIONS.get(name)
    if d is None:
        note = UNRELATED_NOTES.get(name)
        return {"related": False, "categories": [], "certainty": None} | ({"why": note} if note else {})
    return {"related": True, "categories": list(d.categories), "certainty": d.certainty, "why": d.why}


_ENUMS = {
    "driver_types.h": ("enum __device_builtin__ cudaError\n", "\n};"),
    "cuda.h": ("typedef enum cudaError_enum {", "} CUresult;"),
}


@dataclass(frozen=True)
class Release:
    """The errors of one runtime wheel: (name, code, string or None, doc, deprecated) of each API."""

    version: str
    runtime: list[tuple[str, int, str | None, str, bool]]
    driver: list[tuple[str, int, str | None, str, bool]]
    source: str


def read_release(req: str, wheel: Path) -> Release:
    """Both enums of ``wheel``'s headers, with libcudart's string for each code (None where it has none)."""
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        so_name = next(n for n in names if re.search(r"/lib/libcudart\.so\.\d+$", n))
        table = libcudart_table(zf.read(so_name))
        headers = {h: zf.read(next(n for n in names if n.endswith(f"/include/{h}"))).decode() for h in _ENUMS}
    rows = {}
    for h, (opening, closing) in _ENUMS.items():
        enum = [(n, c, d, dep) for n, c, d, dep in parse_enum(headers[h], opening, closing) if c != 0]
        rows[h] = [(n, c, table[c][1] if c in table else None, d, dep) for n, c, d, dep in enum]
    for name, code, *_ in rows["driver_types.h"]:
        if code in table and table[code][0] != name:
            sys.exit(f"{wheel.name}: libcudart names code {code} {table[code][0]}, driver_types.h {name}")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()[:16]
    source = f"{wheel.name} (sha256 {digest}...): include/driver_types.h, include/cuda.h, {so_name.split('/')[-1]}"
    return Release(req.split("==")[1], rows["driver_types.h"], rows["cuda.h"], source)


def _merge(releases: list[Release], api: str) -> list[dict[str, object]]:
    """One row per (name, code) over the releases, oldest first: the newest doc and string win, older strings
    that differ are kept (logs come from every release), and ``releases`` lists those that have the error."""
    merged: dict[str, dict[str, object]] = {}
    for rel in releases:
        for name, code, string, doc, deprecated in getattr(rel, api):
            row = merged.setdefault(name, {"code": code, "name": name, "strings": [], "releases": []})
            if row["code"] != code:
                sys.exit(f"{name} is {row['code']} in one release and {code} in {rel.version}")
            strings = row["strings"]
            assert isinstance(strings, list)
            if string is not None and string not in strings:
                strings.insert(0, string)
            row.update(doc=doc, deprecated=deprecated)
            releases_of = row["releases"]
            assert isinstance(releases_of, list)
            releases_of.append(rel.version)
    return sorted(merged.values(), key=lambda r: (int(str(r["code"])), str(r["name"])))


def record(reqs: tuple[str, ...], include: Path | None) -> dict[str, object]:
    """The document written to ``cuda_errors.json``, from the runtime wheels ``reqs`` (oldest first)."""
    releases = [read_release(req, wheel_for(req)) for req in reqs]
    runtime, driver = _merge(releases, "runtime"), _merge(releases, "driver")
    if include is not None:  # a local toolkit's headers must be one of the recorded releases' enums
        known = {(r["name"], r["code"]) for r in runtime + driver}
        for h, (opening, closing) in _ENUMS.items():
            for name, code, _doc, _dep in parse_enum((include / h).read_text(), opening, closing):
                if code and (name, code) not in known:
                    sys.exit(f"{include / h}: {name} = {code} is in none of the recorded releases")
    driver_by_code = {r["code"]: r for r in driver}
    runtime_by_code = {r["code"]: r for r in runtime}
    for row in runtime:
        twin = driver_by_code.get(row["code"])
        row["driver_name"] = twin["name"] if twin else None
        row.update(_decision(str(row["name"])))
    for row in driver:
        twin = runtime_by_code.get(row["code"])
        row["runtime_name"] = twin["name"] if twin else None
        row.update(_decision(str(twin["name"] if twin else row["name"])))
        if twin and not row["strings"]:
            row["strings"] = twin["strings"]
    return {
        "format": 1,
        "releases": [rel.version for rel in releases],
        "sources": {
            "runtime_api": CUDART_DOC,
            "driver_api": CUDRV_DOC,
            "wheels": [rel.source for rel in releases],
            "runtime_enum": "driver_types.h: enum cudaError (names, codes, doc comments)",
            "driver_enum": "cuda.h: enum cudaError_enum, CUresult (names, codes, doc comments)",
            "strings": "libcudart.so: the .data.rel.ro table of {code, name, string} behind cudaGetErrorName and "
            "cudaGetErrorString",
            "driver_strings": "libcuda (cuGetErrorString) is not shipped in a wheel: a driver error carries the "
            "runtime's strings of the same code (CuPy's 'CUDA_ERROR_X: <cuGetErrorString>' reports match, e.g. "
            "200, 209, 300); none where the runtime has no such code",
        },
        "runtime": runtime,
        "driver": driver,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument(
        "req", nargs="*", default=list(RUNTIMES), help="runtime wheels, oldest first (default: %(default)s)"
    )
    ap.add_argument("--include", type=Path, help="a toolkit's include/ to cross-check the headers against")
    ap.add_argument("--check", action="store_true", help="compare with the committed file instead of writing it")
    args = ap.parse_args(argv)
    doc = record(tuple(args.req), args.include)
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    if args.check:
        same = OUT.read_text() == text
        print("up to date" if same else f"{OUT} differs from the recording")
        return 0 if same else 1
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    runtime, driver = doc["runtime"], doc["driver"]
    assert isinstance(runtime, list)
    assert isinstance(driver, list)
    print(f"{OUT}: {len(runtime)} runtime errors, {len(driver)} driver errors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
