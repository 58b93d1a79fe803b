"""Issue 19's size limits on src/: no function over 100 lines, no McCabe complexity over 25 (ruff's C901
count), measured by scripts/complexity.py (its definitions are in its docstring).

Today's violations are listed in KNOWN_VIOLATIONS: a function over a limit that is not listed fails (new),
and a listed one that is back under the limit fails too (stale: delete the line), so the list can only
shrink.  Keys name the function, not its figures, so shortening a function that is still too long keeps it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).parent.parent
MAX_LINES = 100
MAX_COMPLEXITY = 25

#: Violations allowed (issue 19 emptied the list; keep it empty: split a function rather than add to it).
KNOWN_VIOLATIONS: frozenset[str] = frozenset()


def load_complexity() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cudafit_complexity", ROOT / "scripts" / "complexity.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


complexity = load_complexity()


def current() -> dict[str, str]:
    _modules, functions = complexity.measure(ROOT / "src")
    found: dict[str, str] = complexity.violations(functions, MAX_LINES, MAX_COMPLEXITY)
    return found


def test_no_new_function_over_the_limits() -> None:
    found = current()
    new = sorted(f"{k} ({found[k]})" for k in set(found) - KNOWN_VIOLATIONS)
    assert not new, f"over {MAX_LINES} lines or McCabe {MAX_COMPLEXITY} (scripts/complexity.py):\n" + "\n".join(new)


def test_known_violations_are_still_there() -> None:
    """The list can only shrink: a function back under the limits must be deleted from KNOWN_VIOLATIONS."""
    stale = sorted(KNOWN_VIOLATIONS - set(current()))
    assert not stale, "under the limits now, delete from KNOWN_VIOLATIONS:\n" + "\n".join(stale)


def test_the_measure_follows_its_definition(tmp_path: Path) -> None:
    """Length from def to last line without decorators; McCabe as ruff's C901 counts it; cyclomatic adds the
    expression-level decisions (documented in scripts/complexity.py)."""
    (tmp_path / "m.py").write_text(
        "import functools\n"
        "@functools.cache\n"
        "def f(a, b):\n"  # line 3
        "    if a and b:\n"  # if: +1 (and: cyclomatic +1)
        "        pass\n"
        "    elif a:\n"  # elif: +1
        "        pass\n"
        "    else:\n"  # else: 0
        "        pass\n"
        "    for x in a:\n"  # for: +1, its else: 0
        "        pass\n"
        "    else:\n"
        "        pass\n"
        "    try:\n"
        "        pass\n"
        "    except ValueError:\n"  # except: +1
        "        pass\n"
        "    else:\n"  # try-else: +1
        "        pass\n"
        "    with open(a) as fh:\n"  # with: 0
        "        pass\n"
        "    match a:\n"
        "        case 1:\n"  # case: +1
        "            pass\n"
        "        case _:\n"  # irrefutable last case: 0
        "            pass\n"
        "    def inner():\n"  # nested def: +1, its body counts here too (+1), and it is a function of its own
        "        while b:\n"
        "            pass\n"
        "    return [y for y in b if y] if a else None\n"  # comprehension for+if, IfExp: cyclomatic +3
    )
    modules, functions = complexity.measure(tmp_path)
    assert [m.lines for m in modules] == [30]
    f, inner = functions
    assert (f.name, f.line, f.length, f.mccabe, f.cyclomatic) == ("f", 3, 28, 9, 13)  # ruff --select C901 says 9 and 2
    assert (inner.name, inner.length, inner.mccabe) == ("f.inner", 3, 2)
    found = complexity.violations(functions, 27, 8)
    assert found == {"m.py f: length": "28 lines > 27", "m.py f: mccabe": "McCabe 9 > 8"}
    assert complexity.violations(functions, 28, 9) == {}
    assert complexity.main([str(tmp_path), "--max-lines", "27", "--summary"]) == 1
    assert complexity.main([str(tmp_path), "--max-lines", "28", "--max-complexity", "9", "--summary"]) == 0


def test_mccabe_agrees_with_ruff() -> None:
    """Every function of src/ gets the McCabe figure ruff's C901 gives it (the limit is stated in ruff's terms)."""
    import json
    import re
    import subprocess

    cmd = [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "C901", "--output-format", "json"]
    cmd += ["--config", "lint.mccabe.max-complexity=0", str(ROOT / "src")]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=120)
    ruff = {}
    for d in json.loads(p.stdout):
        m = re.search(r"\((\d+) > 0\)", d["message"])
        assert m, d["message"]
        ruff[(Path(d["filename"]).resolve().relative_to((ROOT / "src").resolve()).as_posix(), d["location"]["row"])] = (
            int(m.group(1))
        )
    _modules, functions = complexity.measure(ROOT / "src")
    ours = {(f.path, f.line): f.mccabe for f in functions}
    assert len(ours) > 500
    assert ours == ruff
