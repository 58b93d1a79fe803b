"""Function length and McCabe complexity of a Python source tree, from the AST (no third-party tool).

Why: issue 19's limits ("no function over 100 lines, no McCabe complexity over 25 in src/") and the comparison
with the model codebases (docs/architecture.md, ../shared/docs/spine.md) need one measure applied the same way
to every codebase; tests/test_complexity.py applies the limits to src/ with this module's functions.

Usage:

    python scripts/complexity.py                      # src/: summary, the 15 longest and the 15 most complex
    python scripts/complexity.py src --top 30
    python scripts/complexity.py src --max-lines 100 --max-complexity 25     # exit 1 on any violation
    python scripts/complexity.py /tmp/auditwheel/src/auditwheel --summary --label pypa/auditwheel
    python scripts/complexity.py src --json           # every function and module, for other scripts

Definitions:
- *length*: from the ``def`` line to the function's last line (``end_lineno - lineno + 1``), decorators
  excluded, docstring and blank lines included (what a reader scrolls through).  A nested function is
  counted on its own and inside its parent's length.
- *McCabe* (``mccabe``, the number the limit applies to): ruff's C901 definition, so that
  ``ruff check --select C901`` and this script agree: 1 + one per decision point, where the decision points
  are ``if`` and each ``elif`` (not ``else``), ``for``/``async for`` and ``while`` (their ``else`` adds
  nothing), each ``except`` handler, a ``try``'s ``else`` block, each ``match`` case (less one when the
  last case is an unguarded irrefutable pattern, like ``else``), and each nested ``def`` (plus its own
  decision points; a nested ``class`` adds its methods').  ``with``, ``assert``, ``return``, boolean
  operators, conditional expressions, comprehensions and lambdas add nothing: McCabe's statement graph,
  as the mccabe plugin and ruff count it.
- *cyclomatic* (``cyclomatic``, reported beside it, never a limit): McCabe plus the decision points inside
  expressions that ruff does not count: each boolean operator (``a and b or c``: operands - 1 per
  ``and``/``or`` chain), each conditional expression (``x if c else y``), and each ``for`` and ``if`` of a
  comprehension; the branches a reader must still follow in a one-line condition.
- *module lines*: physical lines of the ``.py`` file (``len(text.splitlines())``).
"""

from __future__ import annotations

import argparse
import ast
import json
import statistics
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class FunctionStats:
    """One function or method: where it is, how long, how complex."""

    path: str  # relative to the measured root
    name: str  # qualified inside the module: Class.method, outer.inner
    line: int
    length: int
    mccabe: int
    cyclomatic: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.name} ({self.length} lines, McCabe {self.mccabe})"


@dataclass(frozen=True)
class ModuleStats:
    """One module: its path (relative to the measured root) and physical lines."""

    path: str
    lines: int


@dataclass(frozen=True)
class Summary:
    """The row of the comparison table (docs/architecture.md)."""

    modules: int
    lines: int
    median_module: int
    largest_module: ModuleStats | None
    functions: int
    over_100_lines: int
    longest: FunctionStats | None
    worst: FunctionStats | None


# ------------------------------------------------------------------------------------------- measuring


def _irrefutable(pattern: ast.pattern) -> bool:
    """``case _``, ``case name`` or an or-pattern holding one: matches anything (ruff's is_irrefutable)."""
    if isinstance(pattern, ast.MatchAs):
        return pattern.pattern is None
    if isinstance(pattern, ast.MatchOr):
        return any(_irrefutable(p) for p in pattern.patterns)
    return False


def statement_complexity(body: Sequence[ast.stmt]) -> int:
    """Decision points of a block, ruff's C901 count (see the module docstring)."""
    total = 0
    for stmt in body:
        if isinstance(stmt, ast.If):
            total += 1 + statement_complexity(stmt.body)
            # an elif is an If alone in orelse; ruff counts it, a plain else adds only its body
            total += statement_complexity(stmt.orelse)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            total += 1 + statement_complexity(stmt.body) + statement_complexity(stmt.orelse)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            total += statement_complexity(stmt.body)
        elif isinstance(stmt, ast.Match):
            total += sum(1 + statement_complexity(c.body) for c in stmt.cases)
            last = stmt.cases[-1] if stmt.cases else None
            if last is not None and last.guard is None and _irrefutable(last.pattern):
                total -= 1
        elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            total += statement_complexity(stmt.body) + statement_complexity(stmt.finalbody)
            total += (1 if stmt.orelse else 0) + statement_complexity(stmt.orelse)
            total += sum(1 + statement_complexity(h.body) for h in stmt.handlers)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            total += 1 + statement_complexity(stmt.body)
        elif isinstance(stmt, ast.ClassDef):
            total += statement_complexity(stmt.body)
    return total


def expression_complexity(node: FunctionNode) -> int:
    """Decision points inside expressions (boolean operators, conditional expressions, comprehensions) of the
    function's own code (nested functions and lambdas included, as their statements are in McCabe's count)."""
    total = 0
    for sub in ast.walk(node):
        if isinstance(sub, ast.BoolOp):
            total += len(sub.values) - 1
        elif isinstance(sub, ast.IfExp):
            total += 1
        elif isinstance(sub, ast.comprehension):
            total += 1 + len(sub.ifs)
    return total


def _iter_function_nodes(body: Iterable[ast.stmt], prefix: str) -> Iterator[tuple[str, FunctionNode]]:
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{prefix}{stmt.name}"
            yield name, stmt
            yield from _iter_function_nodes(stmt.body, f"{name}.")
        elif isinstance(stmt, ast.ClassDef):
            yield from _iter_function_nodes(stmt.body, f"{prefix}{stmt.name}.")
        elif isinstance(stmt, (ast.If, ast.Try, ast.With, ast.For, ast.While)):  # defs under `if TYPE_CHECKING`
            for block in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(stmt, block, [])
                stmts = [s for h in inner for s in h.body] if block == "handlers" else inner
                yield from _iter_function_nodes(stmts, prefix)


def iter_module_functions(tree: ast.Module, path: str) -> Iterator[FunctionStats]:
    """Every function and method of a parsed module, nested ones included."""
    for name, node in _iter_function_nodes(tree.body, ""):
        mccabe = 1 + statement_complexity(node.body)
        yield FunctionStats(
            path,
            name,
            node.lineno,
            (node.end_lineno or node.lineno) - node.lineno + 1,
            mccabe,
            mccabe + expression_complexity(node),
        )


def iter_python_files(root: Path) -> Iterator[Path]:
    """The ``.py`` files under ``root`` (or ``root`` itself), sorted, caches and virtual environments aside."""
    if root.is_file():
        yield root
        return
    skip = {"__pycache__", ".venv", "venv", ".git", "build", "node_modules"}
    for path in sorted(root.rglob("*.py")):
        if not skip.intersection(path.relative_to(root).parts):
            yield path


def measure(root: Path) -> tuple[list[ModuleStats], list[FunctionStats]]:
    """Modules and functions of a tree; paths relative to ``root`` (its parent when ``root`` is a file)."""
    base = root.parent if root.is_file() else root
    modules: list[ModuleStats] = []
    functions: list[FunctionStats] = []
    for path in iter_python_files(root):
        text = path.read_text(encoding="utf-8", errors="replace")
        rel = path.relative_to(base).as_posix()
        modules.append(ModuleStats(rel, len(text.splitlines())))
        functions.extend(iter_module_functions(ast.parse(text, filename=str(path)), rel))
    return modules, functions


def summarise(modules: Sequence[ModuleStats], functions: Sequence[FunctionStats]) -> Summary:
    sizes = [m.lines for m in modules]
    return Summary(
        modules=len(modules),
        lines=sum(sizes),
        median_module=int(statistics.median(sizes)) if sizes else 0,
        largest_module=max(modules, key=lambda m: m.lines, default=None),
        functions=len(functions),
        over_100_lines=sum(1 for f in functions if f.length >= 100),
        longest=max(functions, key=lambda f: (f.length, f.mccabe), default=None),
        worst=max(functions, key=lambda f: (f.mccabe, f.length), default=None),
    )


def violations(functions: Iterable[FunctionStats], max_lines: int | None, max_complexity: int | None) -> dict[str, str]:
    """Every function over a limit (``length > max_lines`` or ``mccabe > max_complexity``): a stable key
    without the figures (``path name: length`` / ``path name: mccabe``, so a test can hold a set of known
    ones while they shrink) -> the figures."""
    out = {}
    for f in functions:
        if max_lines is not None and f.length > max_lines:
            out[f"{f.path} {f.name}: length"] = f"{f.length} lines > {max_lines}"
        if max_complexity is not None and f.mccabe > max_complexity:
            out[f"{f.path} {f.name}: mccabe"] = f"McCabe {f.mccabe} > {max_complexity}"
    return out


# ------------------------------------------------------------------------------------------- reporting


def table_row(label: str, s: Summary) -> str:
    """A Markdown row: | label | modules | lines | median | largest | fns >= 100 lines | worst McCabe |"""
    largest = f"{s.largest_module.lines:,} (`{Path(s.largest_module.path).name}`)" if s.largest_module else "-"
    worst = f"{s.worst.mccabe} (`{s.worst.name}`, {s.worst.length} lines)" if s.worst else "-"
    longest = f"{s.longest.length} (`{s.longest.name}`)" if s.longest else "-"
    return (
        f"| {label} | {s.modules} | {s.lines:,} | {s.median_module} | {largest} | {s.over_100_lines} | "
        f"{longest} | {worst} |"
    )


TABLE_HEADER = (
    "| | modules | lines | median module | largest module | fns ≥100 lines | longest fn | worst McCabe |\n"
    "|---|---|---|---|---|---|---|---|"
)


def _print_report(label: str, modules: list[ModuleStats], functions: list[FunctionStats], top: int) -> None:
    s = summarise(modules, functions)
    print(TABLE_HEADER)
    print(table_row(label, s))
    print()
    print(
        f"{s.functions} functions; {s.over_100_lines} of 100 lines or more; "
        f"over McCabe 10: {sum(1 for f in functions if f.mccabe > 10)}, over 25: "
        f"{sum(1 for f in functions if f.mccabe > 25)}"
    )
    print(f"\nlongest {top}:")
    for f in sorted(functions, key=lambda f: (-f.length, f.path, f.line))[:top]:
        print(f"  {f.length:5} lines  McCabe {f.mccabe:3} (cyclomatic {f.cyclomatic:3})  {f.path}:{f.line} {f.name}")
    print(f"\nmost complex {top} (McCabe, ruff's C901):")
    for f in sorted(functions, key=lambda f: (-f.mccabe, f.path, f.line))[:top]:
        print(f"  McCabe {f.mccabe:3} (cyclomatic {f.cyclomatic:3})  {f.length:5} lines  {f.path}:{f.line} {f.name}")
    print("\nlargest modules:")
    for m in sorted(modules, key=lambda m: (-m.lines, m.path))[:top]:
        print(f"  {m.lines:6}  {m.path}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__
    )
    parser.add_argument("path", nargs="?", type=Path, default=Path("src"), help="a source tree or file (default src)")
    parser.add_argument("--top", type=int, default=15, help="how many of the worst to list (default 15)")
    parser.add_argument("--max-lines", type=int, help="exit 1 when a function is longer")
    parser.add_argument("--max-complexity", type=int, help="exit 1 when a function's McCabe complexity is higher")
    parser.add_argument("--summary", action="store_true", help="print only the table row")
    parser.add_argument("--label", help="the row's label (default: the path)")
    parser.add_argument("--json", action="store_true", help="print every module and function as JSON")
    args = parser.parse_args(argv)
    if not args.path.exists():
        parser.error(f"no such file or directory: {args.path}")
    modules, functions = measure(args.path)
    label = args.label or str(args.path)
    if args.json:
        doc = {
            "summary": asdict(summarise(modules, functions)),
            "modules": [asdict(m) for m in modules],
            "functions": [asdict(f) for f in functions],
        }
        print(json.dumps(doc, indent=1))
    elif args.summary:
        print(table_row(label, summarise(modules, functions)))
    else:
        _print_report(label, modules, functions, args.top)
    found = violations(functions, args.max_lines, args.max_complexity)
    if found:
        print(f"\n{len(found)} over the limits:", file=sys.stderr)
        for key, figures in found.items():
            print(f"  {key} ({figures})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
