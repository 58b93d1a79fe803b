"""The output formats of every command, and the one dispatch that writes a document in one of them.

Why one enum: each command used to test ``args.json`` / ``args.markdown`` / ``args.format`` strings in its
own if/elif chain; a format is now a value, and :func:`render` is the only place that maps it to a writer
(``assert_never`` makes a new format a type error wherever it is not handled).
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from rich.console import Console

    from cudafit.model import JsonDict

if sys.version_info >= (3, 11):
    from typing import assert_never
else:  # Python 3.10: the same check for mypy, the same failure at run time

    def assert_never(arg: NoReturn) -> NoReturn:
        """A value of a type that every branch should have handled."""
        raise AssertionError(f"unhandled value: {arg!r}")


__all__ = ["OutputFormat", "Renderers", "render"]


class OutputFormat(str, enum.Enum):
    """How a command writes its document to standard output (``--json``, ``--markdown``, ``--format``)."""

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"
    HTML = "html"
    SARIF = "sarif"


@dataclass(frozen=True)
class Renderers:
    """A command's writers of one document: ``text`` prints to a console; the others return the page
    (``None``: the command does not offer that format)."""

    text: Callable[[JsonDict, Console], None]
    markdown: Callable[[JsonDict], str] | None = None
    html: Callable[[JsonDict], str] | None = None
    sarif: Callable[[JsonDict], JsonDict] | None = None


def _offered(writer: Callable[[JsonDict], Any] | None, fmt: OutputFormat) -> Callable[[JsonDict], Any]:
    if writer is None:
        msg = f"this command has no {fmt.value} output"
        raise ValueError(msg)
    return writer


def render(fmt: OutputFormat, doc: JsonDict, renderers: Renderers) -> None:
    """Write ``doc`` to standard output in ``fmt``."""
    from cudafit.report.console import dump_json, make_console

    if fmt is OutputFormat.TEXT:
        renderers.text(doc, make_console())
    elif fmt is OutputFormat.JSON:
        dump_json(doc)
    elif fmt is OutputFormat.MARKDOWN:
        sys.stdout.write(_offered(renderers.markdown, fmt)(doc))
    elif fmt is OutputFormat.HTML:
        sys.stdout.write(_offered(renderers.html, fmt)(doc))
    elif fmt is OutputFormat.SARIF:
        dump_json(_offered(renderers.sarif, fmt)(doc))
    else:
        assert_never(fmt)
