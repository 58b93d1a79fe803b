"""Value types that must import in a few milliseconds: the guard's import path.

``cudafit.guard`` promises an import cost of at most 30 ms over a bare interpreter, and
``dataclasses`` alone (it imports ``inspect``, ``ast``, ``dis``, ``tokenize``, ``re``, ``enum``)
costs about 15 ms here, every ``@dataclass`` a further 1-2 ms to generate its methods.  So the
types the guard needs are written out by hand, with the semantics a frozen dataclass would
give them (equality and ordering only within the exact class, field-tuple hashing, a repr
that names the fields, assignment refused, pickling through the constructor).  Nothing here
imports more than :mod:`cudafit.errors`.

:class:`ComputeCapability` and :func:`parse_compute_capability` are the ones of
:mod:`cudafit.model` (which re-exports them), so every layer sees one class.

>>> parse_compute_capability("sm_86") < ComputeCapability(9, 0)
True
>>> ComputeCapability(8, 6)
ComputeCapability(major=8, minor=6)
"""

from __future__ import annotations

from cudafit.errors import ValueParseError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms on this path)
if TYPE_CHECKING:
    from typing import NoReturn

__all__ = ["ComputeCapability", "FrozenValue", "parse_compute_capability"]


class FrozenValue:
    """Base of hand-written immutable value types.

    A subclass lists its fields in order in ``__match_args__`` (as a dataclass would) and in
    ``__slots__``, and sets them once with :meth:`_assign` in ``__init__``.
    """

    __slots__ = ()
    __match_args__: tuple[str, ...] = ()

    def _assign(self, *values: object) -> None:
        for name, value in zip(self.__match_args__, values, strict=True):
            object.__setattr__(self, name, value)

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__match_args__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._values() == other._values()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self.__match_args__, self._values(), strict=True))
        return f"{self.__class__.__qualname__}({fields})"

    def __setattr__(self, name: str, value: object) -> NoReturn:
        msg = f"cannot assign to field {name!r}"
        raise AttributeError(msg)

    def __delattr__(self, name: str) -> NoReturn:
        msg = f"cannot delete field {name!r}"
        raise AttributeError(msg)

    def __reduce__(self) -> tuple[type[FrozenValue], tuple[object, ...]]:
        return (self.__class__, self._values())


class ComputeCapability(FrozenValue):
    """A GPU's compute capability, e.g. 8.6 (GeForce RTX 3090); ordered numerically."""

    __slots__ = ("major", "minor")
    __match_args__ = ("major", "minor")
    major: int
    minor: int

    def __init__(self, major: int, minor: int) -> None:
        object.__setattr__(self, "major", major)
        object.__setattr__(self, "minor", minor)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    # Written out (not through FrozenValue._values) because the rules engine compares and
    # hashes compute capabilities in its inner loops.
    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return (self.major, self.minor) == (other.major, other.minor)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.major, self.minor))

    def __lt__(self, other: ComputeCapability) -> bool:
        if other.__class__ is self.__class__:
            return (self.major, self.minor) < (other.major, other.minor)
        return NotImplemented

    def __le__(self, other: ComputeCapability) -> bool:
        if other.__class__ is self.__class__:
            return (self.major, self.minor) <= (other.major, other.minor)
        return NotImplemented

    def __gt__(self, other: ComputeCapability) -> bool:
        if other.__class__ is self.__class__:
            return (self.major, self.minor) > (other.major, other.minor)
        return NotImplemented

    def __ge__(self, other: ComputeCapability) -> bool:
        if other.__class__ is self.__class__:
            return (self.major, self.minor) >= (other.major, other.minor)
        return NotImplemented

    @property
    def arch_number(self) -> int:
        """The number nvcc and fatbin headers use: ``major * 10 + minor`` (8.6 -> 86, 12.1 -> 121)."""
        return self.major * 10 + self.minor

    @classmethod
    def from_arch_number(cls, number: int) -> ComputeCapability:
        """Inverse of :attr:`arch_number` (``100`` -> 10.0, ``75`` -> 7.5)."""
        if number < 10:
            msg = f"arch number {number} is not a compute capability"
            raise ValueParseError(msg)
        return cls(number // 10, number % 10)


_ARCH_PREFIXES = ("sm", "compute", "lto")


def parse_compute_capability(text: str | ComputeCapability) -> ComputeCapability:
    """Parse ``8.6``, ``86``, ``sm_86``, ``sm86`` or ``compute_86`` (an ``a``/``f`` suffix is ignored).

    The grammar is ``D{1,2}.D`` or ``[sm|compute|lto][_]D{2,3}[a|f]`` (``D`` a Unicode decimal
    digit, as ``\\d`` in :mod:`re`), parsed by hand because :mod:`re` and :mod:`enum` cost several
    milliseconds of the guard's import budget; a test checks it against the regular expressions.
    """
    if isinstance(text, ComputeCapability):
        return text
    s = str(text).strip().lower()
    major, dot, minor = s.partition(".")
    if dot:
        if 1 <= len(major) <= 2 and major.isdecimal() and len(minor) == 1 and minor.isdecimal():
            return ComputeCapability(int(major), int(minor))
    else:
        body = s
        for prefix in _ARCH_PREFIXES:
            if body.startswith(prefix):
                body = body[len(prefix) :].removeprefix("_")
                break
        digits = body[:-1] if body.endswith(("a", "f")) else body
        if 2 <= len(digits) <= 3 and digits.isdecimal():
            return ComputeCapability.from_arch_number(int(digits))
    msg = f"not a compute capability: {text!r} (expected e.g. '8.6', '86' or 'sm_86')"
    raise ValueParseError(msg)
