"""Imports go one way: the layer map of docs/architecture.md, checked on every module of src/cudafit.

Every import is read from the AST of every module — module-level and inside functions, ``if TYPE_CHECKING``
blocks included (a type is a dependency too), ``from . import x`` resolved against the package, and
``importlib.import_module("cudafit....")`` with a literal (or an f-string's literal prefix) — and the test
fails on (a) an import of a higher layer, (b) a cycle between units (packages and top-level modules) or
between the modules of one unit (there, imports under ``if TYPE_CHECKING`` are left out: they never run),
(c) a unit missing from the map.

Today's violations are listed in KNOWN_VIOLATIONS: a violation not listed fails (new), and a listed one
that no longer occurs fails too (stale: delete the line), so the list can only shrink.  Keys name modules,
never line numbers, so unrelated edits do not move them.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "src" / "cudafit"

#: unit (a subpackage or top-level module of cudafit) -> layer; an import may go to the same or a lower
#: layer.  ``cudafit`` itself (``__init__``: ``__version__`` only) may be imported from anywhere.
LAYERS: dict[str, int] = {
    "errors": 0,  # the exception root CudafitError: everything raises it, it imports nothing of cudafit
    "_values": 1,  # small frozen value objects with parse_*/str (versions, archs): pure data
    "model": 1,  # Gpu, ComputeCapability, DriverVersion, ArchVariant: the shared vocabulary of every layer
    "documents": 1,  # JSON document helpers (versioned envelopes) used by several producers
    "progress": 1,  # the progress-line helper: targets and audit report progress, so it sits below them
    "binary": 2,  # bytes -> BinaryFacts (ELF, fatbin, cubin, archives): knows no GPU and no rule
    "rules": 3,  # facts + NVIDIA's tables -> verdicts (Status, roles, pools, package): no I/O beyond its data
    "probe": 4,  # this machine's GPUs, driver, toolchains (NVML, nvidia-smi, fakes): beside targets
    "targets": 4,  # where binaries come from (env, wheel, requirement, image, .pt2, index)
    "analysis": 5,  # the application layer: the join of targets' facts with rules' verdicts, typed results
    "actions": 5,  # the application layer's values of what to do (Action, ActionKind, ModuleGap): below report
    "fixes": 5,  # what to do about a verdict (the one-line fix): needs verdicts and ecosystem facts
    "plan": 5,  # arch lists and build flags for a set of GPUs: rules + probe (nvcc) below it
    "audit": 6,  # a command's use case: policy over analysis results
    "explain": 6,  # a command's use case: messages and logs grounded in facts, verdicts and fixes
    "guard": 6,  # the runtime guard for library authors: probe + rules
    "fleet": 6,  # a command's use case: many machines judged through analysis
    "verify": 6,  # a command's use case: the driver's answers beside the prediction
    "_verify_worker": 6,  # the worker process verify starts (no cudafit imports beyond verify's level)
    "find": 6,  # a command's use case: which build of a package runs here (targets' index + analysis)
    "report": 7,  # render only: text, JSON, Markdown, HTML, SARIF of the results above
    "cli": 8,  # wire only: parse arguments, resolve GPUs once, call a use case, render
    "__main__": 8,  # python -m cudafit -> cli
}

#: Today's violations (main at 33e91b9), to be emptied by issue 19: the list may only shrink (a stale entry
#: fails the test; a cycle that loses a member is replaced by its smaller form).
KNOWN_VIOLATIONS: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Import:
    """One import of a cudafit module by a cudafit module (both dotted, e.g. cudafit.cli.options)."""

    importer: str
    imported: str
    line: int
    type_only: bool = False  # under ``if TYPE_CHECKING:``


def unit_of(module: str) -> str:
    """cudafit.rules.engine -> rules; cudafit.cli -> cli; cudafit -> '' (the package root)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


@cache
def modules() -> dict[str, Path]:
    """Every module of the package: dotted name -> file (a package is its __init__.py)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        out[".".join(parts)] = path
    return out


def _resolve_from(module: str, is_package: bool, node: ast.ImportFrom) -> Iterator[str]:
    """The modules a ``from X import a, b`` names: X.a where that is a module, else X."""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        base = package[: len(package) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    known = modules()
    for alias in node.names:
        candidate = f"{source}.{alias.name}"
        yield candidate if candidate in known else source


def _literal_prefix(arg: ast.expr) -> str | None:
    """The module a literal or an f-string's leading literal names (f"cudafit.cli.{name}" -> cudafit.cli)."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values:
        first = arg.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value.rstrip(".")
    return None


def iter_imports(module: str) -> Iterator[Import]:
    """Every import of a cudafit module in ``module``, wherever it is written."""
    path = modules()[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    type_only = {
        id(sub)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for sub in ast.walk(stmt)
    }
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            targets = list(_resolve_from(module, is_package, node))
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__"):
                literal = _literal_prefix(node.args[0])
                targets = [literal] if literal else []
        for target in targets:
            if target == "cudafit" or target.startswith("cudafit."):
                yield Import(module, target, getattr(node, "lineno", 0), id(node) in type_only)


@cache
def all_imports() -> tuple[Import, ...]:
    return tuple(i for m in modules() for i in iter_imports(m))


def upward_violations() -> dict[str, Import]:
    """'importer -> imported (layer a -> b)' for every import of a higher layer (the package root aside)."""
    out = {}
    for imp in all_imports():
        src, dst = unit_of(imp.importer), unit_of(imp.imported)
        if not dst or src == dst or src not in LAYERS or dst not in LAYERS:
            continue
        if LAYERS[dst] > LAYERS[src]:
            key = f"up: {imp.importer} -> {imp.imported} ({src} {LAYERS[src]} -> {dst} {LAYERS[dst]})"
            out.setdefault(key, imp)
    return out


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan), each sorted; sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def cycle_violations() -> set[str]:
    """Cycles between units, and between the modules of one unit (a package's __init__ re-exporting its own
    modules is its façade, not a cycle: edges from an __init__ into its own package are left out; so is an
    ``if TYPE_CHECKING`` import inside one unit, which never runs: a sibling's type named in an annotation.
    Between units and layers a type-only import still counts: the dependency is real).

    Upward imports are reported on their own (upward_violations), so unit cycles are looked for among the
    other imports only: what is left is a cycle inside one layer (probe <-> targets), named by its units."""
    units: dict[str, set[str]] = {}
    inner: dict[str, set[str]] = {}
    known = modules()
    for imp in all_imports():
        src, dst = unit_of(imp.importer), unit_of(imp.imported)
        if not src or not dst:
            continue
        if src != dst:
            if LAYERS.get(dst, 0) <= LAYERS.get(src, 0):
                units.setdefault(src, set()).add(dst)
            continue
        if imp.importer == imp.imported or imp.type_only:
            continue
        own_package = known[imp.importer].name == "__init__.py" and imp.imported.startswith(imp.importer + ".")
        if not own_package:
            inner.setdefault(imp.importer, set()).add(imp.imported)
    out = {"cycle between units: " + " <-> ".join(c) for c in _cycles(units)}
    out |= {"cycle between modules: " + " <-> ".join(c) for c in _cycles(inner)}
    return out


def unmapped() -> set[str]:
    return {f"not in the layer map: cudafit.{u}" for u in {unit_of(m) for m in modules()} if u and u not in LAYERS}


def current_violations() -> set[str]:
    return set(upward_violations()) | cycle_violations() | unmapped()


# ------------------------------------------------------------------------------------------------- tests


def test_the_reader_sees_every_kind_of_import() -> None:
    """The parser on the real package: function-level and import_module imports are found."""
    found = {(i.importer, i.imported) for i in all_imports()}
    assert ("cudafit.cli", "cudafit.cli") in found  # importlib.import_module(f"cudafit.cli.{name}")
    assert ("cudafit.__main__", "cudafit.cli") in found
    assert len(modules()) > 50


def test_the_checks_fail_on_a_package_that_breaks_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A small package with one violation of each kind: every one is found (the test can fail); the
    type-only cycle rules.engine <-> rules.loaded is not one."""
    files = {
        "__init__.py": "__version__ = '0'\n",
        "model.py": (
            "from typing import TYPE_CHECKING\nfrom cudafit import __version__\n"
            "if TYPE_CHECKING:\n    import cudafit.rules\n"
        ),
        "rules/__init__.py": "from . import engine\n",
        "rules/engine.py": (
            "import typing\nif typing.TYPE_CHECKING:\n    from .loaded import Y\n"
            "def f():\n    from cudafit.report import text\n"
        ),
        "rules/loaded.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .engine import X\n",
        "report/__init__.py": "",
        "report/text.py": "import importlib\nimportlib.import_module('cudafit.cli')\nfrom ..rules import loaded\n",
        "cli/__init__.py": "",
        "probe/__init__.py": "from cudafit.targets import a\n",
        "targets/__init__.py": "",
        "targets/a.py": "def g():\n    import cudafit.probe\n",
        "targets/b.py": "from . import c\n",
        "targets/c.py": "from .b import g\n",
        "newpkg/__init__.py": "",
    }
    for name, text in files.items():
        (tmp_path / "cudafit" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "cudafit" / name).write_text(text)
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path / "cudafit")
    modules.cache_clear()
    all_imports.cache_clear()
    try:
        assert current_violations() == {
            "up: cudafit.rules.engine -> cudafit.report.text (rules 3 -> report 7)",
            "up: cudafit.model -> cudafit.rules (model 1 -> rules 3)",  # a type-only import still counts here
            "up: cudafit.report.text -> cudafit.cli (report 7 -> cli 8)",
            "cycle between units: probe <-> targets",
            "cycle between modules: cudafit.targets.b <-> cudafit.targets.c",
            "not in the layer map: cudafit.newpkg",
        }
    finally:
        modules.cache_clear()
        all_imports.cache_clear()


def test_relative_imports_resolve(tmp_path: Path) -> None:
    tree = ast.parse("from . import engine\nfrom .. import model\nfrom .status import Status\n")
    got = [
        t
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for t in _resolve_from("cudafit.rules.x", False, node)
    ]
    assert got == ["cudafit.rules.engine", "cudafit.model", "cudafit.rules.status"]


def test_cycle_finder() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_every_unit_is_in_the_layer_map() -> None:
    assert not unmapped() - KNOWN_VIOLATIONS, "add the new package to LAYERS with the reason for its layer"


def test_no_new_layer_violation() -> None:
    new = sorted(current_violations() - KNOWN_VIOLATIONS)
    assert not new, "imports against the layer map (docs/architecture.md):\n" + "\n".join(new)


def test_known_violations_are_still_there() -> None:
    """The list can only shrink: a fixed violation must be deleted from KNOWN_VIOLATIONS."""
    stale = sorted(KNOWN_VIOLATIONS - current_violations())
    assert not stale, "fixed, delete from KNOWN_VIOLATIONS:\n" + "\n".join(stale)


@pytest.mark.parametrize("unit", sorted(LAYERS))
def test_layer_map_units_exist(unit: str) -> None:
    """A unit in the map that no longer exists is a stale line of the map."""
    assert any(unit_of(m) == unit for m in modules()), f"cudafit.{unit} is in LAYERS but not in src/cudafit"
