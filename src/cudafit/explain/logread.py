"""Read a log of any size for ``cudafit explain``: the whole file, streamed, tail first, bounded memory.

A training log can be gigabytes with the one line that matters at its end ("no kernel image", a
traceback) and the facts that ground it (GPU names, the driver, the torch build) anywhere before.
Classifying the whole text costs too much and reading only its first megabytes misses the end, so
:func:`read_log` keeps two things, each of bounded size:

* the **tail** (the last :data:`TAIL_BYTES`, cut at a line start), read first: where the failure is;
* from everything before it, the **lines that can matter** -- those holding one of the words every
  message of the catalogue contains (:data:`KEYWORDS`: ``cuda``, ``gpu``, ``kernel``, ``ptx``,
  ``driver``...), each with the line after it (messages continue there), cut to :data:`MAX_LINE`
  bytes.  Lines that differ only in numbers of two or more digits (a progress bar's step and loss at
  every step) count once, the newest kept; lines that read like a failure (:data:`STRONG`:
  ``error``, ``not compiled``, ``too old``...) are kept apart from the rest, :data:`MAX_LINES`
  distinct ones of each, so a chatty log cannot push the error out.

The scan is one pass over lower-cased chunks of :data:`CHUNK` bytes with one compiled alternation,
so time is linear in the file's size and memory is one chunk plus the kept lines, whatever the
size.  The result is the kept lines in file order followed by the tail, which the classifier then
reads as if it were the log.  Non-seekable input (a pipe) is streamed the same way, the tail kept as
a rolling window.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from cudafit.explain.libraries import library_keywords

__all__ = ["CHUNK", "KEYWORDS", "MAX_LINE", "MAX_LINES", "TAIL_BYTES", "LogExcerpt", "iter_chunks", "read_log"]

TAIL_BYTES = 64 * 1024
CHUNK = 8 * 1024 * 1024
MAX_LINES = 200
MAX_LINE = 600

#: Lower-case words of which every catalogue message holds at least one (tests/test_explain_log.py checks
#: that each corpus message is classified the same when buried at the start of a long log).
KEYWORDS: tuple[bytes, ...] = (
    b"cuda", b"gpu", b"kernel", b"ptx", b"nvcc", b"nvrtc", b"driver", b"capab", b"device", b"compil", b"shared",
    b"symbol", b"triton", b"torch", b"arch", b"nvidia", b"fatal", b"assert", b"error", b"sm_", b"plan file",
    b"provider", b"jax", b"paddle", b"ctranslate", b"culink", b"cumodule", b".so", b"version", b"cudnn", b"cublas",
    b"sm8", b"sm9", b"sm7", b"sm1", b"compute",
    # GPU listings whose lines hold none of the above: nvidia-smi's table rows of drivers before the "NVIDIA " prefix
    # ("|   1  GeForce GTX 1080    Off  | 00000000:02:00.0 ..."), which explain turns into GPUs of a mixed host.
    b"geforce", b"tesla", b"quadro", b"titan",
    # GPUs named in prose ("RTX2070+GTX1050", "works on my RTX 2080 Ti") and two GPUs that "do not work together /
    # in tandem": what explain reads as a mixed host (extract.iter_mentioned_gpus, catalogue's mixed-gpu).
    b"rtx", b"gtx", b"together", b"tandem",
    # a program slow to start, the symptom of the driver JIT-compiling PTX (explain/forms.py's start-up forms)
    b"slow", b"startup", b"minutes", b"delay",
    # xformers' dispatcher lists each operator and its reasons, shapes and strides among them: all of them decide
    # whether a capability line is the cause (classify._xformers_capability_beside_other_reasons)
    b"not supported because", b"shape", b"stride", b"dtype", b"attn_bias", b"embed per head",
    # the forms a report takes in its own words (explain/forms.py): a failure beside a statement ("constraint
    # failed"), the wrong card chosen or two numberings of the cards swapped (mixed-gpu)
    b"fail", b"crash", b"abort", b"card", b"wrong", b"swap", b"swop", b"revers", b"mismatch", b"disagree",
    # and every word of a failure (:data:`STRONG`): a line that reads like one is kept whatever it names
    b"exception", b"not compiled", b"no kernel", b"unsupported", b"insufficient", b"too old", b"invalid", b"requir",
    b"undefined symbol", b"cannot", b"incompatible", b"warning",
    # a report's own words for a mixed host and a check (explain/forms.py): works on one card, fails on another; a
    # second card added or hidden; an artefact built on one GPU; two numberings; a generation required
    b"work", b"second", b"heterogene", b"hide", b"hiding", b"built", b"created", b"generated", b"exported",
    b"serializ", b"mix", b"order", b"index", b"indices", b"numbering", b"supported", b"instead",
    # hardware features a check denies on a GPU that lacks them (explain/hw_features.py): "platform does not have
    # FP16 support" holds none of the words above
    b"fp16", b"float16", b"half precision", b"half-precision", b"bf16", b"fp8", b"float8", b"fp4", b"int8", b"dp4a",
    b"tf32", b"tensor core", b"wmma",
    # the names of the libraries whose range of GPUs explain knows (explain/data/library_support.json): their name
    # beside a GPU outside it is the failure, whatever the line's other words
    *library_keywords(),
)  # fmt: skip


def _trie_pattern(words: list[bytes]) -> bytes:
    """One alternation for ``words`` factored by common prefix (``c(?:uda|apab)``): the regex engine then tries
    one branch per position instead of every word, which halves the scan time of a long log."""
    if any(not w for w in words):
        rest = [w for w in words if w]
        return b"(?:" + _trie_pattern(rest) + b")?" if rest else b""
    groups: dict[int, list[bytes]] = {}
    for w in words:
        groups.setdefault(w[0], []).append(w[1:])
    parts = []
    for first, tails in sorted(groups.items()):
        head = re.escape(bytes([first]))
        tail = _trie_pattern(tails)
        parts.append(head + (tail if len(tails) == 1 or tail.startswith(b"(?:") else b"(?:" + tail + b")"))
    return parts[0] if len(parts) == 1 else b"(?:" + b"|".join(parts) + b")"


_KEYWORDS = re.compile(_trie_pattern(sorted(set(KEYWORDS))))

#: Words of a failure, as opposed to a mention: such lines are kept in their own bucket.
STRONG = re.compile(
    rb"error|fatal|exception|assert|abort|not compiled|no kernel|unsupported|insufficient|too old|not supported|"
    rb"failed|failure|invalid|mismatch|requires|undefined symbol|cannot|incompatible|warning"
)
_NUMBER = re.compile(rb"\d\d")
_DIGITS = bytes.maketrans(b"123456789", b"000000000")

Progress = Callable[[int], None]


@dataclass(frozen=True)
class LogExcerpt:
    """What :func:`read_log` kept of a log: the text to classify and how much was read."""

    text: str
    size: int  # bytes read
    lines: int  # lines kept from before the tail
    tail: int  # bytes of the tail


def iter_chunks(fh: BinaryIO, end: int | None = None, chunk: int = CHUNK) -> Iterator[bytes]:
    """Chunks of ``fh`` that end at a line end (the last one may not), up to byte ``end`` (None: EOF)."""
    carry = b""
    left = end
    while left is None or left > 0:
        data = fh.read(chunk if left is None else min(chunk, left))
        if not data:
            break
        if left is not None:
            left -= len(data)
        data = carry + data
        cut = data.rfind(b"\n") + 1
        if cut == 0 and len(data) < 4 * chunk:
            carry = data  # a line longer than a chunk: wait for its end, up to a bound
            continue
        if cut == 0:
            cut = len(data)
        carry = data[cut:]
        yield data[:cut]
    if carry:
        yield carry


class _Kept:
    """The lines kept from before the tail: two buckets (failure-like, other), each holding the newest MAX_LINES
    distinct lines; ``lines()`` gives them back in file order.

    Lines with a number of two or more digits are keyed without their digits, so a progress line repeated
    at every step counts once; lines with single digits only keep them ("cuda:1", "(8, 6)" tell lines apart).
    """

    def __init__(self) -> None:
        self.strong: dict[bytes, tuple[int, bytes]] = {}
        self.other: dict[bytes, tuple[int, bytes]] = {}
        self.seen = 0

    def add(self, line: bytes, low: bytes) -> None:
        key = low.translate(_DIGITS) if _NUMBER.search(low) else low
        self.seen += 1
        if key in self.other:
            self.other[key] = (self.seen, line)
            return
        bucket = self.strong if key in self.strong or STRONG.search(low) else self.other
        bucket[key] = (self.seen, line)
        if len(bucket) > 2 * MAX_LINES:  # amortised: drop the oldest half now and then
            newest = sorted(bucket.items(), key=lambda kv: kv[1][0])[-MAX_LINES:]
            bucket.clear()
            bucket.update(newest)

    def lines(self) -> list[bytes]:
        both = [v for bucket in (self.strong, self.other) for v in sorted(bucket.values())[-MAX_LINES:]]
        return [line for _n, line in sorted(both)]


def _keep_lines(chunk: bytes, kept: _Kept) -> None:
    """Add the lines of ``chunk`` holding a keyword to ``kept``."""
    low = chunk.lower()
    pos = 0
    search = _KEYWORDS.search
    while True:
        m = search(low, pos)
        if m is None:
            return
        start = low.rfind(b"\n", 0, m.start()) + 1
        first_end = low.find(b"\n", m.end())
        if first_end < 0:
            first_end = len(chunk)
        # With the line after it: messages continue on the next line ("(8, 6)" after get_device_capability()).
        end = low.find(b"\n", first_end + 1)
        end = len(chunk) if end < 0 else end
        if end - start <= MAX_LINE:
            kept.add(chunk[start:end].strip(), low[start:end])
        elif first_end - start <= MAX_LINE:
            kept.add(chunk[start : start + MAX_LINE].strip(), low[start : start + MAX_LINE])
        else:
            # One over-long line: its head and its end, where messages after a long name end (ptxas' "Entry
            # function '<mangled name>' uses too much shared data (0xe810 bytes, 0xc000 max)").
            half = MAX_LINE // 2
            piece = chunk[start : start + half] + b" ... " + chunk[first_end - half : first_end]
            kept.add(piece.strip(), piece.lower())
        pos = first_end + 1


def read_log(fh: BinaryIO, *, progress: Progress | None = None) -> LogExcerpt:
    """The excerpt of a log to classify: kept lines, then the tail (see the module docstring).

    ``progress`` is called with the number of bytes read so far (for a progress bar).
    """
    kept = _Kept()
    try:
        size = os.fstat(fh.fileno()).st_size if fh.seekable() else -1
    except (OSError, ValueError, AttributeError):
        size = -1
    read = 0
    if size >= 0:
        # Tail first: the failure is usually at the end.
        start = max(0, size - TAIL_BYTES)
        fh.seek(start)
        tail = fh.read(TAIL_BYTES)
        if start > 0:
            nl = tail.find(b"\n")
            cut = nl + 1 if 0 <= nl < len(tail) - 1 else 0
            start, tail = start + cut, tail[cut:]
        read = len(tail)
        if progress:
            progress(read)
        fh.seek(0)
        for chunk in iter_chunks(fh, end=start):
            _keep_lines(chunk, kept)
            read += len(chunk)
            if progress:
                progress(read)
    else:
        window = b""
        for chunk in iter_chunks(fh):
            window += chunk
            if len(window) > 2 * TAIL_BYTES:
                cut = window.find(b"\n", len(window) - TAIL_BYTES) + 1 or len(window) - TAIL_BYTES
                _keep_lines(window[:cut], kept)
                window = window[cut:]
            read += len(chunk)
            if progress:
                progress(read)
        tail = window
    lines = kept.lines()
    head = b"\n".join(lines)
    text = (head + b"\n" + tail if head else tail).decode("utf-8", errors="replace")
    return LogExcerpt(text, read, len(lines), len(tail))
