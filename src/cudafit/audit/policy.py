"""The audit policy in ``pyproject.toml`` (``[tool.cudafit.audit]``), so ``cudafit audit dist/*.whl`` needs no flags.

::

    [tool.cudafit.audit]
    require = "7.5 8.0 8.6 9.0 10.0 12.0+PTX"   # or a list of specs: ["7.5 8.0", "H100,RTX 4090"]
    allow-specialised = true                    # gated/specialised modules may lack code (default false)
    allow-jit = false                           # PTX JIT does not meet a SASS requirement (default)
    match-torch = "2.14.1"                      # or a path, or true for this environment's torch
    torch-index-url = "cu130"                   # where --match-torch VERSION is downloaded from

The file is found like other tools find theirs: the first ``pyproject.toml`` from the working
directory upwards that has a ``[tool.cudafit.audit]`` table.  It is read with the standard
library's ``tomllib`` (``tomli`` below Python 3.11).  Flags on the command line override it;
relative paths in it are relative to the file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import msgspec

from cudafit.audit.spec import SpecError
from cudafit.documents import DocumentError, convert
from cudafit.model import JsonDict

__all__ = ["FilePolicy", "find_pyproject", "load_policy"]

_KEYS = {"require", "allow-specialised", "allow-jit", "match-torch", "torch-index-url"}


@dataclass(frozen=True)
class FilePolicy:
    """What ``[tool.cudafit.audit]`` says (``None``: not set there)."""

    path: str
    require: tuple[str, ...] = ()
    allow_specialised: bool | None = None
    allow_jit: bool | None = None
    match_torch: str | bool | None = None
    torch_index_url: str | None = None


def _load_toml(path: str) -> JsonDict:
    """The TOML document, decoded by :mod:`cudafit.documents` (not UTF-8, nesting bombs: one SpecError)."""
    from cudafit.documents import DocumentError, decode_toml, read_document

    try:
        return decode_toml(read_document(path, path), path)
    except DocumentError as err:
        if err.problem.startswith("is not valid TOML: "):  # "does not parse": the gate's own words
            msg = f"{path} does not parse (not valid TOML: {err.problem.removeprefix('is not valid TOML: ')})"
            raise SpecError(msg) from err
        raise SpecError(err.message) from err


def _table(doc: Mapping[str, object]) -> Mapping[str, object] | None:
    tool = doc.get("tool")
    cudafit = tool.get("cudafit") if isinstance(tool, Mapping) else None
    audit = cudafit.get("audit") if isinstance(cudafit, Mapping) else None
    return audit if isinstance(audit, Mapping) else None


def find_pyproject(start: str | None = None) -> str | None:
    """The first ``pyproject.toml`` from ``start`` (the working directory) upwards with ``[tool.cudafit.audit]``."""
    here = os.path.abspath(start or os.getcwd())
    nearest = True
    while True:
        candidate = os.path.join(here, "pyproject.toml")
        if os.path.isfile(candidate):
            try:
                if _table(_load_toml(candidate)) is not None:
                    return candidate
            except SpecError as err:
                # The project's own pyproject.toml that does not parse may hold the policy: a gate that ignored
                # it would pass on nothing.  Someone else's broken file further up is not ours to report.
                if nearest:
                    msg = f"{err.message}; fix it, or give --config FILE or --no-config"
                    raise SpecError(msg) from err
            nearest = False
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def load_policy(path: str) -> FilePolicy:
    """``[tool.cudafit.audit]`` of ``path``, checked: :class:`SpecError` names the key that is wrong."""
    table = _table(_load_toml(path))
    if table is None:
        msg = f"{path} has no [tool.cudafit.audit] table"
        raise SpecError(msg)
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        msg = (
            f"{path}: unknown key(s) in [tool.cudafit.audit]: {', '.join(unknown)} (known: {', '.join(sorted(_KEYS))})"
        )
        raise SpecError(msg)

    try:
        doc = convert(table, AuditTable, path)
    except DocumentError as err:
        key = (err.field or "").split("[", 1)[0].split(".", 1)[0]
        expected = _EXPECTED.get(key, err.problem)
        msg = f"{path}: [tool.cudafit.audit] {key} must be {expected}, not {table.get(key)!r}"
        raise SpecError(msg) from err
    require = (doc.require,) if isinstance(doc.require, str) else tuple(doc.require)
    return FilePolicy(path, require, doc.allow_specialised, doc.allow_jit, doc.match_torch, doc.torch_index_url)


class AuditTable(msgspec.Struct, frozen=True, kw_only=True, rename="kebab", forbid_unknown_fields=True):
    """``[tool.cudafit.audit]``, decoded by :func:`cudafit.documents.convert` (types checked there)."""

    require: str | list[str] = []
    allow_specialised: bool | None = None
    allow_jit: bool | None = None
    match_torch: str | bool | None = None
    torch_index_url: str | None = None


#: What each key must be, in the words the error uses.
_EXPECTED = {
    "require": "a string or a list of strings",
    "allow-specialised": "true or false",
    "allow-jit": "true or false",
    "match-torch": "a torch version, a path, or true",
    "torch-index-url": "a string",
}
