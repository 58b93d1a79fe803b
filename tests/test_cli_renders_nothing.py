"""cli/ wires, report/ renders (docs/architecture.md): no cli module imports rich to print a document.

A command that builds a ``Table`` or calls ``console.print`` itself keeps its output out of reach of the
format dispatch (``report/formats.py``) and of the other renderers; its rendering belongs in ``report/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[1] / "src" / "cudafit" / "cli"

# Modules that still render with rich; this set can only shrink (a listed module that no longer does fails).
KNOWN_VIOLATIONS: set[str] = set()


def _imports_rich(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "rich":
            return True
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "rich" for a in node.names):
            return True
    return False


def test_cli_modules_leave_rendering_to_report() -> None:
    rendering = {p.name for p in sorted(CLI.glob("*.py")) if _imports_rich(p)}
    assert rendering - KNOWN_VIOLATIONS == set(), "render these in report/ and call report.formats.render"
    assert KNOWN_VIOLATIONS - rendering == set(), "no longer renders: drop it from KNOWN_VIOLATIONS"


def test_the_check_sees_an_import_of_rich(tmp_path: Path) -> None:
    f = tmp_path / "x.py"
    f.write_text("def f():\n    from rich.table import Table\n    return Table\n", encoding="utf-8")
    assert _imports_rich(f)
    f.write_text("import rich.console\n", encoding="utf-8")
    assert _imports_rich(f)
    f.write_text("from cudafit.report.formats import render\n", encoding="utf-8")
    assert not _imports_rich(f)
