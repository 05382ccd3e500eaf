"""Layouts as the search builds them: lists of axis digits, some groups padded, written as mapping text.

A *digit* is the part ``A / stride % count`` of one axis. The search cuts every axis into digits
and places them; a layout is the digits of one mapping parameter, outermost first. Keeping the
digits (rather than only a parsed mapping) lets the search split and join layouts exactly and write
them as the short text a person would write, which is also the text the emitted kernel uses.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from math import prod

from tcpdsl.algebra import Digit, Mapping, PaddingKind, digit_mapping, digit_text, joined_count, pairs


def _cut(digit: Digit, inner: int) -> tuple[Digit, Digit]:
    """``(outer, inner)``: the digit's innermost ``inner`` values and the rest (``inner`` divides its count)."""
    return replace(digit, stride=digit.stride * inner, count=digit.count // inner), replace(digit, count=inner)


@dataclass(frozen=True)
class Group:
    """A digit (or none: pure padding) padded to ``extent`` cells, with Top padding or, where the
    hardware sums the padded cells, Zero padding."""

    digits: tuple[Digit, ...]
    extent: int
    kind: PaddingKind = PaddingKind.TOP

    @property
    def live(self) -> int:
        return prod(d.count for d in self.digits)

    def text(self) -> str:
        inner = ", ".join(digit_text(d) for d in self.digits) or "1"
        if len(self.digits) > 1:
            inner = f"[{inner}]"
        return f"{inner} {self.kind.marker} {self.extent}"


Part = Digit | Group


@dataclass(frozen=True)
class Layout:
    """One mapping parameter: its parts, outermost first; no parts is the mapping ``1``."""

    parts: tuple[Part, ...] = ()

    @staticmethod
    def of(*parts: Part | Layout) -> Layout:
        """The parts (and the parts of layouts) in order, dropping one-cell digits and joining
        neighbouring digits of one axis that are contiguous (``H / 32, H / 16 % 2`` is ``H / 16``)."""
        flat: list[Part] = []
        for part in parts:
            for p in part.parts if isinstance(part, Layout) else (part,):
                if isinstance(p, Digit) and p.count == 1:
                    continue
                last = flat[-1] if flat else None
                count = (joined_count(p.stride, p.count, last.stride, last.count)
                         if isinstance(p, Digit) and isinstance(last, Digit) and last.axis == p.axis else None)
                if isinstance(p, Digit) and count is not None:
                    flat[-1] = replace(p, count=count)
                else:
                    flat.append(p)
        return Layout(tuple(flat))

    @property
    def size(self) -> int:
        return prod(_extent(p) for p in self.parts)

    @property
    def live(self) -> int:
        return prod(_live(p) for p in self.parts)

    @property
    def digits(self) -> tuple[Digit, ...]:
        """Every digit, padded groups included, outermost first."""
        out: list[Digit] = []
        for p in self.parts:
            out.extend(p.digits if isinstance(p, Group) else (p,))
        return tuple(out)

    def text(self) -> str:
        return ", ".join(digit_text(p) if isinstance(p, Digit) else p.text() for p in self.parts) or "1"

    def padded(self, extent: int, kind: PaddingKind = PaddingKind.TOP) -> Layout | None:
        """The layout padded to ``extent`` cells by widening one part, outermost first.

        Padding a single axis digit keeps every slot on one axis; padding a group of axes would make
        a composite slot, which the evaluators cannot address. None when no one part can take it.
        """
        size = self.size
        if extent == size:
            return self
        if not self.parts:
            return Layout((Group((), extent, kind),))
        for index, part in enumerate(self.parts):
            rest = size // _extent(part)
            if extent % rest or (isinstance(part, Group) and part.kind is not kind):
                continue
            widened = Group(_digits(part), extent // rest, kind)
            return Layout((*self.parts[:index], widened, *self.parts[index + 1 :]))
        return None

    def split(self, inner: int) -> tuple[Layout, Layout] | None:
        """``(outer, inner)`` at ``inner`` cells, or None when a digit or group does not divide there."""
        outer_parts = list(self.parts)
        inner_parts: list[Part] = []
        left = inner
        while left > 1:
            if not outer_parts:
                return None
            last = outer_parts.pop()
            if left % _extent(last) == 0:
                inner_parts.insert(0, last)
                left //= _extent(last)
                continue
            if isinstance(last, Group) or last.count % left:
                return None
            high, low = _cut(last, left)
            outer_parts.append(high)
            inner_parts.insert(0, low)
            left = 1
        return Layout.of(*outer_parts), Layout.of(*inner_parts)

    def without(self, axes: frozenset[str]) -> Layout:
        """The parts whose digits are on none of ``axes`` (a padded group is kept or dropped whole)."""
        return Layout.of(*(p for p in self.parts if not any(d.axis in axes for d in _digits(p))))

    @cached_property
    def mapping(self) -> Mapping:
        """The mapping :meth:`text` writes, built node by node (digits carry their axis sizes)."""
        return pairs([_node(p) for p in self.parts])


def _node(part: Part) -> Mapping:
    if isinstance(part, Digit):
        return digit_mapping(part)
    return pairs([digit_mapping(d) for d in part.digits]).padding(part.extent, part.kind)


def _extent(part: Part) -> int:
    return part.extent if isinstance(part, Group) else part.count


def _live(part: Part) -> int:
    return part.live if isinstance(part, Group) else part.count


def _digits(part: Part) -> tuple[Digit, ...]:
    return part.digits if isinstance(part, Group) else (part,)


def axis_digits(axis: str, size: int, counts: list[int]) -> list[Digit]:
    """Cut an axis into digits of the given counts, innermost first (their product is ``size``)."""
    out: list[Digit] = []
    stride = 1
    for count in counts:
        out.append(Digit(axis, size, stride, count))
        stride *= count
    return out
