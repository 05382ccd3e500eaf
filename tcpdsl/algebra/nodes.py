"""The mapping AST: seven immutable node kinds, their sizes and their display (docs/mapping-language.md §1.2).

Nodes are built exactly as written (no simplification). ``key`` is the structural identity
used for caching; ``==`` and ``hash`` compare canonical forms, the equality the verifiers use.

What a mapping means (its cells, its canonical form) is computed by
:mod:`tcpdsl.algebra.operations`, which builds on these nodes; the node methods reach it through
:func:`_operations`, the algebra's one late-bound import.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Final, Protocol

from tcpdsl.algebra.cells import Cell, PaddingKind
from tcpdsl.algebra.sizes import size_rule
from tcpdsl.algebra.slots import Slots
from tcpdsl.errors import LayoutError
from tcpdsl.syntax.lexer import MAX_DIGITS

Key = tuple[object, ...]
MAPPING_STAGE: Final = "mapping"
# The largest number the lexer reads (MAX_DIGITS decimal digits), hence the largest mapping size.
MAX_SIZE: Final = 10**MAX_DIGITS - 1


def as_int(value: object, what: str, operation: str) -> int:
    """``value`` as a Python int, or a LayoutError naming ``operation``: floats, strings and bools are refused."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise LayoutError(
            MAPPING_STAGE, "NotAnInt", f"{operation} takes an int {what}, got {value!r} ({type(value).__name__})",
            f"pass a whole number as the {what}",
        )
    return int(value.__index__())  # type: ignore[attr-defined]


def as_mapping(value: object, operation: str) -> Mapping:
    """``value`` itself when it is a :class:`Mapping`, else a LayoutError naming ``operation``."""
    if not isinstance(value, Mapping):
        raise LayoutError(
            MAPPING_STAGE, "NotAMapping", f"{operation} takes mappings, got {type(value).__name__} {value!r:.80}",
            'build one with m["..."] or tcp.parse(text, sizes)',
        )
    return value


class Mapping:
    """Base class of every mapping node. ``size`` is the number of buffer cells."""

    __slots__ = ("size", "key", "height", "_hash")

    size: int
    key: Key
    height: int

    def __init__(self, size: int, key: Key, height: int) -> None:
        if size > MAX_SIZE:
            # Every number of a canonical text is at most the size, so this keeps str() parseable.
            raise LayoutError(
                MAPPING_STAGE, "SizeTooLarge", f"a mapping of {size} cells is larger than the {MAX_SIZE} a mapping text can write",
                "no buffer is that large: check the axis sizes and the padding",
            )
        self.size = size
        self.key = key
        self.height = height
        self._hash = hash(key)

    # -- identity ---------------------------------------------------------------------------
    def same_structure(self, other: Mapping) -> bool:
        """Raw structural equality, as written (``==`` compares normalized forms)."""
        return self.key == other.key

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Mapping):
            return NotImplemented
        # The same structure as written has the same normal form, and comparing it normalises nothing (a
        # view of a whole tensor is mostly spelled as the tensor was).
        return self.key == other.key or self.normalize().key == other.normalize().key

    def __hash__(self) -> int:
        return self.normalize()._hash

    # -- display ----------------------------------------------------------------------------
    def display(self) -> str:
        """The reference display of this node as written (parenthesised pairs)."""
        raise NotImplementedError

    @property
    def text(self) -> str:
        """This node as written, in ``m["..."]`` syntax without the outermost parentheses."""
        return _strip_outer(self.display())

    def __str__(self) -> str:
        """Canonical text: the canonical form, which parses back to an equal mapping with the same cells."""
        return self.normalize().text

    def __repr__(self) -> str:
        return f'm["{self.text}"]'

    # -- structure --------------------------------------------------------------------------
    @property
    def axes(self) -> tuple[str, ...]:
        """Distinct axis names in first-encounter order, left before right."""
        return tuple(dict.fromkeys(symbol.name for symbol in _symbols(self)))

    def axis_sizes(self) -> dict[str, int]:
        """Every axis this mapping names, with its declared size."""
        return {symbol.name: symbol.n for symbol in _symbols(self)}

    @property
    def is_identity(self) -> bool:
        return isinstance(self, Broadcast) and self.n == 1

    # -- meaning: cells and the canonical form -----------------------------------------------
    def cell(self, i: int) -> Cell:
        """The cell at position ``i`` (docs/mapping-language.md §1.7); past the end it is out of bounds."""
        i = as_int(i, "position", "cell")
        if not 0 <= i <= MAX_SIZE:
            raise LayoutError(
                MAPPING_STAGE, "CellPosition", f"cell {i} of {self.text} is no position: positions run from 0 to {MAX_SIZE}",
                f"ask for a position in 0..{self.size - 1}",
            )
        return _operations().cell_at(self, i)

    def normalize(self) -> Mapping:
        """The canonical form (docs/mapping-language.md §1.8), as a mapping."""
        return _operations().normalize(self)

    def slots(self) -> Slots:
        """The canonical slots, innermost first."""
        return _operations().slots_of(self)

    def split_at(self, n: int) -> tuple[Mapping, Mapping]:
        """``(outer, inner)``: ``inner`` keeps the first ``n`` cells, ``outer`` strides past them."""
        return _operations().split_at(self, n)

    def remove_padding(self) -> Mapping:
        return _operations().remove_padding(self)

    def padding_per_stride(self) -> dict[int, int]:
        return _operations().padding_per_stride(self)

    # -- value-level constructors (docs/mapping-language.md §1.2): no-ops where trivial, strict otherwise -------
    def pair(self, inner: Mapping) -> Mapping:
        inner = as_mapping(inner, "pair")
        if self.is_identity:
            return inner
        if inner.is_identity:
            return self
        return Pair(self, inner)

    def stride(self, s: int) -> Mapping:
        s = as_int(s, "stride", "stride")
        return self if s == 1 else Stride(self._checked("/", s), s)

    def modulo(self, m: int) -> Mapping:
        m = as_int(m, "modulus", "modulo")
        return self if m == self.size else Modulo(self._checked("%", m), m)

    def resize(self, r: int) -> Mapping:
        r = as_int(r, "size", "resize")
        return self if r == self.size else Resize(self._checked("=", r), r)

    def padding(self, p: int, kind: PaddingKind = PaddingKind.TOP) -> Mapping:
        p = as_int(p, "size", "padding")
        if not isinstance(kind, PaddingKind):
            raise LayoutError(MAPPING_STAGE, "PaddingKind", f"padding kind must be a PaddingKind, got {kind!r}",
                              "use PaddingKind.TOP, ZERO or BOTTOM")
        return self if p == self.size else Padding(self._checked("#", p), p, kind)

    def _checked(self, op: str, n: int) -> Mapping:
        """``self``, once ``self <op> n`` keeps the size rules (docs/mapping-language.md §1.4)."""
        broken = size_rule(op, self.size, n, self.display())
        if broken is not None:
            raise LayoutError(MAPPING_STAGE, *broken)
        return self


class Symbol(Mapping):
    __slots__ = ("name", "n")

    def __init__(self, name: str, n: int) -> None:
        self.name = name
        self.n = n
        super().__init__(n, ("S", name, n), 0)

    def display(self) -> str:
        return self.name


class Broadcast(Mapping):
    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n
        super().__init__(n, ("B", n), 0)

    def display(self) -> str:
        return str(self.n)


class Pair(Mapping):
    """``left`` is major (outer), ``right`` is minor (inner)."""

    __slots__ = ("left", "right")

    def __init__(self, left: Mapping, right: Mapping) -> None:
        self.left = left
        self.right = right
        super().__init__(left.size * right.size, ("P", left.key, right.key), 1 + max(left.height, right.height))

    def display(self) -> str:
        return "(" + ", ".join(part.display() for part in _flatten(self)) + ")"


class Stride(Mapping):
    __slots__ = ("inner", "s")

    def __init__(self, inner: Mapping, s: int) -> None:
        self.inner = inner
        self.s = s
        super().__init__(inner.size // s, ("/", inner.key, s), 1 + inner.height)

    def display(self) -> str:
        return f"{self.inner.display()} / {self.s}"


class Modulo(Mapping):
    __slots__ = ("inner", "m")

    def __init__(self, inner: Mapping, m: int) -> None:
        self.inner = inner
        self.m = m
        super().__init__(m, ("%", inner.key, m), 1 + inner.height)

    def display(self) -> str:
        return f"{self.inner.display()} % {self.m}"


class Resize(Mapping):
    __slots__ = ("inner", "r")

    def __init__(self, inner: Mapping, r: int) -> None:
        self.inner = inner
        self.r = r
        super().__init__(r, ("=", inner.key, r), 1 + inner.height)

    def display(self) -> str:
        return f"{self.inner.display()} = {self.r}"


class Padding(Mapping):
    __slots__ = ("inner", "p", "kind")

    def __init__(self, inner: Mapping, p: int, kind: PaddingKind = PaddingKind.TOP) -> None:
        self.inner = inner
        self.p = p
        self.kind = kind
        super().__init__(p, ("#", inner.key, p, int(kind)), 1 + inner.height)

    def display(self) -> str:
        return f"{self.inner.display()} {self.kind.marker} {self.p}"


IDENTITY: Final = Broadcast(1)


def pairs(parts: list[Mapping]) -> Mapping:
    """Fold ``pair`` over ``parts`` (outermost first), starting from the identity."""
    out: Mapping = IDENTITY
    for part in reversed(parts):
        out = part.pair(out)
    return out


def _flatten(node: Mapping) -> list[Mapping]:
    if isinstance(node, Pair):
        return _flatten(node.left) + _flatten(node.right)
    return [node]


def _strip_outer(text: str) -> str:
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and i < len(text) - 1:
            return text
    return text[1:-1]


def _symbols(node: Mapping) -> Iterator[Symbol]:
    """Every symbol of ``node`` as written, left before right."""
    if isinstance(node, Symbol):
        yield node
    elif isinstance(node, Pair):
        yield from _symbols(node.left)
        yield from _symbols(node.right)
    elif isinstance(node, (Stride, Modulo, Resize, Padding)):
        yield from _symbols(node.inner)


class StructKey:
    """Hashes a node by its precomputed structural hash and compares structure, never canonical forms."""

    __slots__ = ("node", "_hash")

    def __init__(self, node: Mapping) -> None:
        self.node = node
        self._hash = node._hash

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StructKey) and (self.node is other.node or self.node.key == other.node.key)

    def __repr__(self) -> str:
        return f"StructKey({self.node.text})"


class _Operations(Protocol):
    """What the node methods need of :mod:`tcpdsl.algebra.operations`."""

    def cell_at(self, m: Mapping, i: int) -> Cell: ...

    def normalize(self, m: Mapping) -> Mapping: ...

    def slots_of(self, m: Mapping) -> Slots: ...

    def split_at(self, m: Mapping, n: int) -> tuple[Mapping, Mapping]: ...

    def remove_padding(self, m: Mapping) -> Mapping: ...

    def padding_per_stride(self, m: Mapping) -> dict[int, int]: ...


@cache
def _operations() -> _Operations:
    # The seam: operations imports this module, so it is looked up on first use.
    from tcpdsl.algebra import operations

    return operations
