"""The slot form of a mapping tree, built node by node (docs/mapping-language.md §1.8).

An operator (``/ % = #``) applied to an axis or a broadcast acts on its digit directly: the digits
of an axis simply add up. Applied to anything else, it takes a *piece* of that sub-expression, which
is kept whole as an :class:`~tcpdsl.algebra.slots.Operand`: pieces of one operand add up to one
position of it (§1.7). A built form therefore holds exactly the cells of its tree; the canonical
form (:mod:`tcpdsl.algebra.canonical`) then writes operands out as digits wherever it can.
"""

from __future__ import annotations

from tcpdsl.algebra.caches import memo
from tcpdsl.algebra.nodes import MAPPING_STAGE, Broadcast, Mapping, Modulo, Padding, Pair, Resize, StructKey, Stride, Symbol
from tcpdsl.algebra.sizes import size_rule
from tcpdsl.algebra.slots import Bcast, Composite, Digit, Operand, Slot, Slots, cut_slot, make, scale_slot, simplify
from tcpdsl.errors import LayoutError


# Deeper trees are built bottom-up, each node from its cached operands, so that no input (the parser
# allows 256 nested operators) recurses once per level.
_SHALLOW = 32


def form(m: Mapping) -> Slots:
    """The built slot form of ``m``, innermost first (cached on structure)."""
    if m.height > _SHALLOW:
        for node in _bottom_up(m):
            _form_cached(StructKey(node))
    return _form_cached(StructKey(m))


def _bottom_up(m: Mapping) -> list[Mapping]:
    """The nodes of ``m``, every one after the nodes below it."""
    out: list[Mapping] = []
    stack = [m]
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, Pair):
            stack += (node.left, node.right)
        elif isinstance(node, (Stride, Modulo, Resize, Padding)):
            stack.append(node.inner)
    return out[::-1]


@memo(maxsize=65536)
def _form_cached(key: StructKey) -> Slots:
    return _form(key.node)


def _form(m: Mapping) -> Slots:
    if isinstance(m, Symbol):
        return () if m.n == 1 else (Slot(Digit(m.name, m.n, 1, m.n), m.n),)
    if isinstance(m, Broadcast):
        return () if m.n == 1 else (Slot(Bcast(m.n), m.n),)
    if isinstance(m, Pair):
        return simplify(form(m.right) + form(m.left))
    if isinstance(m, (Stride, Modulo, Resize, Padding)):
        return _operator(m, _operand(m.inner))
    raise LayoutError(MAPPING_STAGE, "UnknownNode", f"cannot normalize a {type(m).__name__}")


def _operand(inner: Mapping) -> Slots:
    """What an operator reads: an axis or broadcast's own slot, else the whole of ``inner`` as one piece."""
    if isinstance(inner, (Symbol, Broadcast)):
        return form(inner)
    whole = Operand(form(inner), StructKey(inner))
    return (Slot(Composite(whole, 1, inner.size), inner.size),)


def _operator(m: Stride | Modulo | Resize | Padding, base: Slots) -> Slots:
    size = m.inner.size
    if isinstance(m, Padding) and m.p >= size:
        if m.p == size:
            return base
        return (Slot(None, m.p, m.kind),) if not base else _alone(make(base[0].live, m.p, m.kind))
    # A padding smaller than its operand acts as a resize (docs/mapping-language.md §1.4).
    op, n = ("/", m.s) if isinstance(m, Stride) else ("%", m.m) if isinstance(m, Modulo) else ("=", m.r if isinstance(m, Resize) else m.p)
    broken = size_rule(op, size, n, m.inner.display())
    if broken is not None:
        raise LayoutError(MAPPING_STAGE, *broken)
    if isinstance(m, Stride):
        return _alone(scale_slot(base[0], n)) if n > 1 else base
    return base if n == size else _alone(cut_slot(base[0], n))


def _alone(slot: Slot) -> Slots:
    """A form of one slot, simplified: a digit with one live value is padding; one cell of it is nothing."""
    return simplify((slot,)) if slot.count == 1 else (slot,)
