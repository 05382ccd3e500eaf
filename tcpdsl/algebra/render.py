"""Writing a canonical form back as a mapping tree: the canonical text (docs/mapping-language.md §1.8).

Every factor must read back as exactly its slot, so that ``normalize`` is idempotent and ``str(m)``
parses back equal, and the whole tree must hold the same cells (§1.7). Three rules make that so:

* A digit or a piece is cut from its axis or operand by stride, then ``%`` (or ``=`` where ``%``
  would be refused, ``L1 / 32 = 4``), then padding; when the stride does not divide the operand,
  it is cut (``= K``) or padded (``R # 8 / 4 # 4``) to a multiple first. Every sub-expression that
  spelling adds is read once, so it dissolves again when read back.
* Pieces and shared digits of one operand are cut from one copy of its text, so that they pool
  their positions again when read back. Two operands with equal forms get distinct texts (the
  second with ``, 1`` appended) so that they stay apart.
* Any other sub-expression that an operator reads would pool as well if it occurred twice; a
  repeat is made distinct the same way.
"""

from __future__ import annotations

from tcpdsl.algebra.nodes import IDENTITY, Broadcast, Key, Mapping, Modulo, Padding, Pair, Resize, Stride, Symbol
from tcpdsl.algebra.cells import PaddingKind
from tcpdsl.algebra.slots import Bcast, Digit, Operand, Slot, Slots

Operator = Stride | Modulo | Resize | Padding


def render(slots: Slots) -> Mapping:
    """``Pair(outermost, Pair(..., innermost))``; the empty form is the identity."""
    return _Writer().spine(slots)


def render_slot(slot: Slot) -> Mapping:
    """One slot as a mapping: its term, padded to the extent when it has padding."""
    writer = _Writer()
    return writer.claim(writer.spell(slot), object())


class _Writer:
    """Spells the slots of one canonical form, keeping every sub-expression an operator reads apart."""

    def __init__(self) -> None:
        self.owners: dict[Key, object] = {}  # sub-expression read by an operator -> who reads it
        self.texts: dict[Operand, Mapping] = {}
        self.text_ids: set[int] = set()

    def spine(self, slots: Slots) -> Mapping:
        out: Mapping | None = None
        for slot in slots:
            factor = self.claim(self.spell(slot), object())
            out = factor if out is None else Pair(factor, out)
        return IDENTITY if out is None else out

    def text(self, operand: Operand) -> Mapping:
        """The one text every piece of ``operand`` is cut from."""
        found = self.texts.get(operand)
        if found is None:
            assert isinstance(operand.tag, int), "only canonical forms are written"
            spine = self.spine(operand.slots)
            # An axis or a broadcast read by operators is no operand: its digits would just add up.
            ones = operand.tag + isinstance(spine, (Symbol, Broadcast))
            found = self.private(_with_ones(spine, ones), operand)
            self.texts[operand] = found
            self.text_ids.add(id(found))
        return found

    def claim(self, node: Mapping, owner: object) -> Mapping:
        """``node`` with every sub-expression an operator reads (but an operand text) private to ``owner``."""
        if isinstance(node, Pair):
            left, right = self.claim(node.left, owner), self.claim(node.right, owner)
            return node if left is node.left and right is node.right else Pair(left, right)
        if isinstance(node, (Stride, Modulo, Resize, Padding)):
            inner = node.inner
            if id(inner) not in self.text_ids and not isinstance(inner, (Symbol, Broadcast)):
                inner = self.private(self.claim(inner, owner), owner)
            return node if inner is node.inner else _over(node, inner)
        return node

    def private(self, node: Mapping, owner: object) -> Mapping:
        """``node``, or with as many ``, 1`` appended as make it a sub-expression no one else reads."""
        ones = 0
        while True:
            candidate = _with_ones(node, ones)
            if self.owners.setdefault(candidate.key, owner) is owner:
                return candidate
            ones += 1

    def spell(self, slot: Slot) -> Mapping:
        live = slot.live
        if slot.shared is not None:
            base = self.text(slot.shared.operand)
            return _as_piece(_cut(base, slot.shared.stride, slot.extent, slot.kind if slot.padded else slot.spelt), base)
        if live is None:
            return Padding(IDENTITY, slot.extent, slot.kind)
        if isinstance(live, Bcast):
            return _padded(Broadcast(live.c), slot)
        if isinstance(live, Digit):
            return _padded(_cut(Symbol(live.axis, live.n), live.stride, live.count, slot.spelt), slot)
        base = self.text(live.operand)
        return _as_piece(_padded(_cut(base, live.stride, live.count, slot.spelt), slot), base)


def _as_piece(term: Mapping, base: Mapping) -> Mapping:
    """``term``, or for all of an operand ``base % |base|``: a pair side would be a use of its own, a piece pools."""
    return Modulo(base, base.size) if term is base else term


def _with_ones(node: Mapping, ones: int) -> Mapping:
    """``node`` with ``ones`` identity factors appended at its inner end: the same cells, another tree."""
    if ones == 0:
        return node
    if isinstance(node, Pair):
        return Pair(node.left, _with_ones(node.right, ones))
    tail: Mapping = IDENTITY
    for _ in range(ones - 1):
        tail = Pair(IDENTITY, tail)
    return Pair(node, tail)


def _over(node: Operator, inner: Mapping) -> Mapping:
    if isinstance(node, Stride):
        return Stride(inner, node.s)
    if isinstance(node, Modulo):
        return Modulo(inner, node.m)
    if isinstance(node, Resize):
        return Resize(inner, node.r)
    return Padding(inner, node.p, node.kind)


def _padded(term: Mapping, slot: Slot) -> Mapping:
    return Padding(term, slot.extent, slot.kind) if slot.extent > slot.count else term


def _cut(base: Mapping, step: int, count: int, kind: PaddingKind) -> Mapping:
    """Positions ``0, step, 2·step, ...`` of ``base``, the first ``count`` of them.

    When ``step`` does not divide ``base``, it is first cut (``= count·step``) or, when that would
    grow it, padded to a multiple of ``step`` with padding of ``kind``, which the kept positions
    never reach but other pieces of the same text may.
    """
    if base.size % step:
        span = count * step
        base = Resize(base, span) if span <= base.size else Padding(base, step * -(-base.size // step), kind)
    strided = base if step == 1 else Stride(base, step)
    return _keep(strided, count)


def _keep(term: Mapping, count: int) -> Mapping:
    """The first ``count`` cells of ``term``: ``% c`` when it divides, else ``= c``."""
    if count == term.size:
        return term
    return Modulo(term, count) if term.size % count == 0 else Resize(term, count)
