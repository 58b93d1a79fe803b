"""Terminal helpers shared by every renderer.

Colour only on a TTY, and never when ``NO_COLOR`` is set (https://no-color.org/).
JSON goes to stdout as one object; summaries and progress go to stderr.
"""

from __future__ import annotations

import io
import json
import os
import sys
import unicodedata
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["SafeOutput", "dump_json", "gpu_title", "make_console", "page_width", "plural", "use_color"]

#: What the few non-ASCII characters cudafit writes become where the output cannot encode them.
_ASCII = str.maketrans(
    {
        "\u2014": "--",  # em dash
        "\u2013": "-",
        "\u2026": "...",
        "\u00b7": "-",  # middle dot
        "\u00a7": "S",  # section sign: "CUDA Programming Guide S5.1.2"
        "\u2265": ">=",
        "\u2264": "<=",
        "\u2192": "->",
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u00d7": "x",
        "\u2713": "ok",
        "\u2717": "x",
    }
)


def to_ascii(text: str) -> str:
    """``text`` in ASCII: the characters above spelled out, accents dropped, anything else ``?``."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text.translate(_ASCII))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return plain.encode("ascii", "replace").decode("ascii")


class SafeOutput(io.TextIOBase):
    """stdout as every command writes it: never fails on what a terminal or pipe cannot take.

    * text the stream cannot encode (``PYTHONIOENCODING=latin-1``, an ASCII locale) is written in ASCII
      (:func:`to_ascii`) instead of raising ``UnicodeEncodeError`` after the analysis;
    * on a pipe or file, trailing spaces (rich pads table cells to the column) are dropped from every line;
    * a closed pipe (``cudafit ... | head``) swallows the rest, so the command still finishes and exits with
      its own status (a gate piped into ``head`` must not turn a failure into 0).
    """

    def __init__(self, stream: IO[str]) -> None:
        super().__init__()
        self.stream = stream
        self.closed_pipe = False
        self._tty = _isatty(stream)
        self._pending = ""  # trailing spaces held back until we know whether a newline follows

    @property
    def encoding(self) -> str:  # type: ignore[override]  # rich reads it to choose ASCII boxes
        return getattr(self.stream, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.stream, "errors", None)

    def isatty(self) -> bool:
        return self._tty

    def fileno(self) -> int:
        return self.stream.fileno()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        n = len(text)
        if self.closed_pipe or not text:
            return n
        if not self._tty and (self._pending or " \n" in text or text.endswith(" ")):  # else nothing to strip
            text = self._pending + text
            body = text.rstrip(" ")
            self._pending = text[len(body) :]
            text = "\n".join(line.rstrip(" ") for line in body.split("\n"))
        try:
            try:
                self.stream.write(text)
            except UnicodeEncodeError:
                self.stream.write(to_ascii(text))
        except BrokenPipeError:
            self._closed()
        return n

    def flush(self) -> None:
        if self.closed_pipe:
            return
        try:
            self.stream.flush()
        except BrokenPipeError:
            self._closed()

    def _closed(self) -> None:
        """The reader went away: point the descriptor at /dev/null so the interpreter's last flush is quiet."""
        self.closed_pipe = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass


def page_width() -> int:
    """The width of a page that is not a terminal: ``COLUMNS`` when set (as rich and ``ls`` honour it), else
    200 (a log or file is read in an editor, not wrapped at 80)."""
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else 200


def use_color(stream: IO[str] | None = None) -> bool:
    """Whether to colour output written to ``stream``."""
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def make_console(stream: IO[str] | None = None, *, stderr: bool = False) -> Console:
    """A ``rich`` console that honours TTY detection and ``NO_COLOR``."""
    from rich.console import Console

    target = stream or (sys.stderr if stderr else sys.stdout)
    color = use_color(target)
    return Console(
        file=target,
        no_color=not color,
        color_system="auto" if color else None,
        highlight=False,
        soft_wrap=False,
        # A terminal's own width (NO_COLOR must not change the layout); pipes and files get a wide page.
        width=None if _isatty(target) else page_width(),
    )


def dump_json(obj: Any, stream: IO[str] | None = None) -> None:
    """Write ``obj`` as indented JSON with a trailing newline."""
    out = stream or sys.stdout
    # Indented for people, compact (C encoder, ~10x faster on large scans) for pipes and files.
    if _isatty(out):
        out.write(json.dumps(obj, indent=2))
    else:
        _write_compact(obj, out, 4)
    out.write("\n")


def _write_compact(obj: Any, out: IO[str], depth: int) -> None:
    """``json.dumps(obj, separators=(",", ":"))``, byte for byte, written a container element at a time down to
    ``depth`` levels: the C encoder per piece, and never the whole document as one string (``check --kernels
    --json`` of fbgemm-gpu is 88 MB of JSON: peak RSS 250 -> 160 MB)."""
    if depth <= 0 or not isinstance(obj, (dict, list)) or not obj:
        out.write(json.dumps(obj, separators=(",", ":")))
        return
    if isinstance(obj, dict):
        out.write("{")
        for i, (key, value) in enumerate(obj.items()):
            name = json.dumps(key) if isinstance(key, str) else json.dumps({key: 0}, separators=(",", ":"))[1:-3]
            out.write(("," if i else "") + name + ":")
            _write_compact(value, out, depth - 1)
        out.write("}")
        return
    out.write("[")
    for i, value in enumerate(obj):
        if i:
            out.write(",")
        _write_compact(value, out, depth - 1)
    out.write("]")


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def plural(count: int, word: str) -> str:
    """``1 node``, ``2 nodes``, ``3 classes``: counts in sentences read as English."""
    if count == 1:
        return f"1 {word}"
    return f"{count:,} {word}{'es' if word.endswith(('s', 'sh', 'ch', 'x')) else 's'}"


def gpu_title(name: str, cc: str) -> str:
    """``GeForce RTX 3090 (8.6)``; a GPU given only as ``--gpu 8.6`` is named by its CC already, so it
    reads ``compute capability 8.6``, not ``compute capability 8.6 (8.6)``."""
    return name if name.endswith(f" {cc}") else f"{name} ({cc})"
