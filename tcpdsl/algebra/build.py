"""From a syntax tree to mapping nodes: resolve names, then build nodes exactly as written.

Resolution (:func:`bind`) asks a :class:`Scope` what each name means and reports unknown axes and
escapes of the wrong kind. Construction (:func:`build`) enforces the size rules of
docs/mapping-language.md §1.4 through :func:`~tcpdsl.algebra.sizes.size_rule`, naming the text.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Protocol

from tcpdsl.algebra.nodes import MAPPING_STAGE, Broadcast, Mapping, Modulo, Padding, Pair, Resize, Stride, Symbol
from tcpdsl.algebra.sizes import size_rule
from tcpdsl.errors import LayoutError
from tcpdsl.syntax import tree


class Missing:
    """The value of a name a scope does not bind. Use the singleton :data:`MISSING`."""

    __slots__ = ()


MISSING: Final = Missing()


class Scope(Protocol):
    """Where the names of an expression are looked up."""

    def axis_size(self, name: str) -> int | None:
        """The size of axis ``name`` if the scope binds it as an axis, else ``None``."""

    def value(self, name: str) -> object:
        """Whatever ``name`` is bound to (for escapes and diagnostics), or :data:`MISSING`."""

    def axis_names(self) -> Iterable[str]:
        """Every axis name visible in the scope, for hints."""


@dataclass(frozen=True, slots=True)
class Bindings:
    """What every name of one expression resolved to."""

    sizes: dict[str, int]
    splices: dict[str, Mapping]
    numbers: dict[str, int]

    def cache_key(self) -> tuple[object, ...]:
        """Identifies the bindings among those of one expression text (whose names come in a fixed order)."""
        if not self.splices and not self.numbers:
            return tuple(self.sizes.values())
        return (
            tuple(self.sizes.values()),
            tuple(node.key for node in self.splices.values()),
            tuple(self.numbers.values()),
        )


def quoted(text: str) -> str:
    return f'm["{text}"]'


def bind(parsed: tree.Parsed, scope: Scope) -> Bindings:
    """Resolve every name of ``parsed`` in ``scope``. Raises LayoutError UnknownAxis / BadEscape."""
    sizes: dict[str, int] = {}
    for name in parsed.axis_names:
        size = scope.axis_size(name)
        if size is None:
            raise _not_an_axis(parsed.text, name, scope)
        sizes[name] = size
    splices: dict[str, Mapping] = {}
    for name in parsed.splice_names:
        value = scope.value(name)
        if not isinstance(value, Mapping):
            raise _bad_escape(parsed.text, name, value, "a mapping", "a module-level alias such as Tile = m[\"A, B\"]")
        splices[name] = value
    numbers: dict[str, int] = {}
    for name in parsed.number_names:
        value = scope.value(name)
        if not isinstance(value, int) or isinstance(value, bool):
            raise _bad_escape(parsed.text, name, value, "an int", "a module-level int constant such as N = 8")
        numbers[name] = value
    return Bindings(sizes, splices, numbers)


def _not_an_axis(text: str, name: str, scope: Scope) -> LayoutError:
    value = scope.value(name)
    where = f"in {quoted(text)}"
    # Only a declared axis (the one Symbol subclass) is misnamed; a plain Symbol is an alias like m["A"].
    if isinstance(value, Symbol) and type(value) is not Symbol:
        return LayoutError(
            MAPPING_STAGE, "UnknownAxis",
            f"{name} is bound to axis {value.name}, not to an axis named {name} ({where})",
            f"declare it as {name} = axis(\"{name}\", {value.n}): the variable name must equal the axis name",
        )
    if isinstance(value, Mapping):
        return LayoutError(
            MAPPING_STAGE, "UnknownAxis",
            f"{name} is a mapping alias, not an axis ({where})",
            f"write {{{name}}} to splice it",
        )
    if value is not MISSING:
        return LayoutError(
            MAPPING_STAGE, "UnknownAxis",
            f"{name} is bound to a value of type {type(value).__name__}, not an axis ({where})",
            f"declare the axis with {name} = axis(\"{name}\", size)",
        )
    known = sorted({known for known in scope.axis_names() if isinstance(known, str)})
    close = difflib.get_close_matches(name, known, n=3)
    if close:
        hint = "did you mean " + " or ".join(close) + "?"
    elif known:
        hint = "known axes: " + ", ".join(known[:20]) + (", ..." if len(known) > 20 else "")
    else:
        hint = f"declare it with {name} = axis(\"{name}\", size)"
    return LayoutError(MAPPING_STAGE, "UnknownAxis", f"unknown axis {name} ({where})", hint)


def _bad_escape(text: str, name: str, value: object, wanted: str, example: str) -> LayoutError:
    found = "is not defined" if value is MISSING else f"is bound to a value of type {type(value).__name__}"
    return LayoutError(
        MAPPING_STAGE, "BadEscape",
        f"{{{name}}} must name {wanted}, but {name} {found} (in {quoted(text)})",
        f"bind {name} to {example}",
    )


def build(parsed: tree.Parsed, bindings: Bindings) -> Mapping:
    """The mapping nodes of ``parsed``, exactly as written. Raises LayoutError on a size rule."""
    return _Builder(parsed.text, bindings).node(parsed.root)


class _Builder:
    def __init__(self, text: str, bindings: Bindings) -> None:
        self.text = text
        self.bindings = bindings

    def fail(self, rule: str, message: str, hint: str) -> LayoutError:
        return LayoutError(MAPPING_STAGE, rule, f"{message} (in {quoted(self.text)})", hint)

    def node(self, expr: tree.Expr) -> Mapping:
        if isinstance(expr, tree.Name):
            return Symbol(expr.name, self.bindings.sizes[expr.name])
        if isinstance(expr, tree.Broadcast):
            if expr.n == 0:
                raise self.fail("EmptyMapping", "broadcast 0 has no cells", "write 1 for the identity")
            return Broadcast(expr.n)
        if isinstance(expr, tree.Splice):
            return self.bindings.splices[expr.name]
        if isinstance(expr, tree.Pair):
            return Pair(self.node(expr.left), self.node(expr.right))
        return self.postfix(expr, self.node(expr.inner))

    def number(self, number: tree.Number) -> int:
        if isinstance(number, tree.Literal):
            return number.value
        return self.bindings.numbers[number.name]

    def postfix(self, expr: tree.Postfix, inner: Mapping) -> Mapping:
        n = self.number(expr.number)
        broken = size_rule(expr.op.value, inner.size, n, inner.display())
        if broken is not None:
            raise self.fail(*broken)
        if expr.op is tree.Op.STRIDE:
            return Stride(inner, n)
        if expr.op is tree.Op.MODULO:
            return Modulo(inner, n)
        if expr.op is tree.Op.RESIZE:
            return Resize(inner, n)
        return Padding(inner, n, expr.fill)
