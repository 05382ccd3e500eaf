"""The canonical form: a slot form whose operands are written out as digits wherever no cell changes.

A built form (:mod:`tcpdsl.algebra.form`) keeps every operand whole, which is exact but says the
same thing in many ways. The canonical form settles each operand as follows
(docs/mapping-language.md §1.7-§1.8):

* pieces that continue one another merge first: ``E / n, E % n`` is one piece, all of ``E``;
* an operand read by a single piece is replaced by the slots the piece cuts from it
  (``[X, Y] / |Y|`` is ``X``), when slot surgery can cut them; slots a cut falls inside are kept
  together as an operand of their own, when nothing outside reads the operands within them;
* where surgery cannot, a small operand that alone reaches the operands inside it, and the cells
  one piece reads of it, become the plain digits that hold their cells (:mod:`tcpdsl.algebra.flat`),
  so that spellings of the same cells meet; a plain operand cut where its one reader never
  reaches is read whole;
* an operand read by several pieces whose positions never carry into one another and never reach
  its padding is replaced piece by piece the same way (``L1 # 256 / 32 % 4, ..., L1 # 256 / 8 % 4``
  with L1=192 is two plain digits);
* otherwise, when the operand is a plain list of digits and the pieces never carry, every piece is
  written out as its digits, each marked :class:`~tcpdsl.algebra.slots.Shared` with the operand: the
  operand still decides the padding its pieces reach together, ranked at its most major piece;
* anything else stays a piece of an opaque operand.

A piece that always reads position 0 (a *touch*) matters only as the most major piece of its
operand, since that decides where the operand's padding ranks; other touches are dropped. The
operands that remain are numbered so that distinct operands with equal forms stay apart.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from tcpdsl.algebra.caches import memo
from tcpdsl.algebra.flat import flat_form, read_form
from tcpdsl.algebra.form import form
from tcpdsl.algebra.nodes import Mapping, StructKey, as_mapping
from tcpdsl.algebra.slots import (
    Bcast,
    Composite,
    Digit,
    Operand,
    Shared,
    Slot,
    Slots,
    cut,
    is_touch,
    operands_in,
    piece,
    prefix,
    simplify,
    size_of,
    slot_strides,
    split_slot,
    stride,
)

__all__ = ["as_pieces", "canonical", "slots_of"]


def slots_of(m: Mapping) -> Slots:
    """The canonical slots of ``m``, innermost first (cached on structure)."""
    return _slots(StructKey(as_mapping(m, "slots")))


@memo(maxsize=65536)
def _slots(key: StructKey) -> Slots:
    return canonical(form(key.node))


def canonical(slots: Slots) -> Slots:
    """The canonical form of a slot form, innermost first.

    A form built from a tree has pieces only; one cut from a canonical form may have shared digits,
    which :func:`as_pieces` turns back into pieces first.
    """
    if not operands_in(slots):
        return simplify(slots)
    out = _Canon(slots).run()
    return (flat_form(out) or out) if operands_in(out) else out


def as_pieces(slots: Slots) -> Slots:
    """``slots`` with every shared digit turned back into a piece of its operand."""
    out: list[Slot] = []
    for slot in slots:
        live = slot.live
        if slot.shared is not None:
            operand = _pieces_operand(slot.shared.operand)
            out.append(Slot(Composite(operand, slot.shared.stride, slot.extent), slot.extent))
        elif isinstance(live, Composite):
            out.append(Slot(Composite(_pieces_operand(live.operand), live.stride, live.count), slot.extent, slot.kind,
                            spelt=slot.spelt))
        else:
            out.append(slot)
    return tuple(out)


def _pieces_operand(operand: Operand) -> Operand:
    slots = as_pieces(operand.slots)
    return operand if slots == operand.slots else Operand(slots, operand.tag)


def reach(piece: Composite, below: int, extent: int) -> int:
    """An upper bound of the value ``piece`` puts in an operand slot of stride ``below`` and ``extent``."""
    top = (piece.count - 1) * piece.stride
    if top < below * extent:
        return top // below  # no wrap: the largest position gives the largest value
    if piece.stride % below == 0:
        step = piece.stride // below % extent
        return 0 if step == 0 else extent - math.gcd(step, extent)
    return extent - 1


class _Canon:
    """Work lists for one canonicalization: the top form, and the form of every operand still whole."""

    def __init__(self, top: Slots) -> None:
        self.top: list[Slot] = list(simplify(top))
        self.forms: dict[Operand, list[Slot]] = {}
        self.order: list[Operand] = []  # first met, outermost first
        self._collect(top)
        self._index: dict[Operand, list[tuple[list[Slot], list[int]]]] | None = None
        self._flatten()

    def _collect(self, slots: Slots) -> None:
        for slot in reversed(slots):
            for operand in operands_in((slot,)):
                if operand not in self.forms:
                    self.forms[operand] = list(simplify(operand.slots))
                    self.order.append(operand)
                    self._collect(operand.slots)

    def _flatten(self) -> None:
        """Write each operand that alone reaches the operands inside it as the plain digits of its cells.

        Such an operand is read only through its cells, so two spellings of it that hold the same
        cells become one form before any piece is cut from it (:mod:`tcpdsl.algebra.flat`).
        """
        for operand in self.order:
            own = self.forms.get(operand)
            if own is None or _flat(tuple(own)) or not self._alone_inside(operand):
                continue
            found = flat_form(operand.slots)
            if found is not None:
                own[:] = found
                self._index = None
                self._prune()

    def _alone_inside(self, operand: Operand) -> bool:
        """Whether no list outside ``operand`` reaches an operand inside it."""
        inside: set[Operand] = set()
        stack = [operand]
        while stack:
            for o in operands_in(tuple(self.forms[stack.pop()])):
                if o not in inside:
                    inside.add(o)
                    stack.append(o)
        within = {id(self.forms[o]) for o in [operand, *inside]}
        return not any(o in inside for other in self._containers() if id(other) not in within
                       for o in operands_in(tuple(other)))

    def _prune(self) -> None:
        """Forget the operands no list reaches any more."""
        reached: set[Operand] = set()
        stack = operands_in(tuple(self.top))
        while stack:
            o = stack.pop()
            if o not in reached:
                reached.add(o)
                stack += operands_in(tuple(self.forms[o]))
        for o in [o for o in self.forms if o not in reached]:
            del self.forms[o]

    def run(self) -> Slots:
        changed = True
        while changed:
            changed = False
            for operand in self.order:
                if operand in self.forms and (self._settle(operand) or self._trim(operand) or self._widen(operand)):
                    self._index = None
                    changed = True
        if not self.forms:
            return tuple(self.top)  # every operand written out
        for operand in self.order:
            if operand in self.forms:
                self._share(operand)
                self._index = None
        return self._rebuild()

    # -- finding pieces --------------------------------------------------------------------------

    def _containers(self) -> list[list[Slot]]:
        return [self.top, *self.forms.values()]

    def _places(self, operand: Operand) -> list[tuple[list[Slot], list[int]]]:
        """Each list holding pieces of ``operand``, with their indices, outermost first."""
        if self._index is None:
            index: dict[Operand, list[tuple[list[Slot], list[int]]]] = {}
            for slots in self._containers():
                for i in range(len(slots) - 1, -1, -1):
                    live = slots[i].live
                    if isinstance(live, Composite):
                        places = index.setdefault(live.operand, [])
                        if not places or places[-1][0] is not slots:
                            places.append((slots, []))
                        places[-1][1].append(i)
            self._index = index
        return self._index.get(operand, [])

    # -- dissolving ------------------------------------------------------------------------------

    def _tidy(self, slots: list[Slot], operand: Operand) -> bool:
        """Simplify the list holding the pieces of ``operand``, knowing whether it alone reaches it."""
        if not any(isinstance(slot.live, Composite) and slot.live.operand == operand and _covered(slots, i)
                   for i, slot in enumerate(slots[:-1])):
            return False  # no padding above a piece: what only the sealed operand allows cannot apply
        tidy = simplify(tuple(slots), frozenset((operand,)) if self._sealed(operand, slots) else frozenset())
        changed = len(tidy) != len(slots) or any(a != b for a, b in zip(tidy, slots))
        slots[:] = tidy
        return changed

    def _sealed(self, operand: Operand, slots: list[Slot]) -> bool:
        """Whether only ``slots`` reaches ``operand``, and only through it the operands inside.

        Padding that stops a piece of such an operand changes nothing its other pieces could see.
        """
        inside: list[Operand] = []
        stack = [operand]
        while stack:
            for o in operands_in(tuple(self.forms[stack.pop()])):
                if o not in inside:
                    inside.append(o)
                    stack.append(o)
        within = [id(self.forms[o]) for o in [operand, *inside]]
        for other in self._containers():
            found = set(operands_in(tuple(other)))
            if operand in found and other is not slots:
                return False
            if id(other) not in within and any(o in found for o in inside):
                return False
        return True

    def _settle(self, operand: Operand) -> bool:
        """Write ``operand`` out as slots if that keeps every cell; whether anything changed."""
        places = self._places(operand)
        if not places:
            del self.forms[operand]  # no piece left: its touches were dropped
            return True
        if len(places) == 1:
            slots, where = places[0]
            if self._tidy(slots, operand):
                return True
            idle = [i for i in where[1:] if is_touch(slots[i])]
            if (len(where) == 2 and where[1] == where[0] - 1 and is_touch(slots[where[0]])
                    and _flat(tuple(self.forms[operand]))):
                # Right above the one other piece, the touch ranks the operand where that piece
                # would, and when that piece is in its padding the operand holds position 0: live.
                idle = [where[0]]
            own = tuple(self.forms[operand])
            if not idle and len(where) > 1 and _flat(own) and self._quiet(own, [slots[i] for i in where]):
                # Added up, the pieces reach no padding and no position past the end: there is
                # nothing for a touch to rank (docs/mapping-language.md §1.8).
                idle = [i for i in where if is_touch(slots[i])]
            for i in idle:  # descending
                del slots[i]
            if idle:
                slots[:] = simplify(tuple(slots))
                return True
        own = tuple(self.forms[operand])
        pieces = [slots[i] for slots, where in places for i in where]
        if len(pieces) > 1 and not (_flat(own) and self._quiet(own, pieces)):
            return False  # written out apart, the pieces would no longer add up in the operand
        cuts = [[cut(own, slots[i]) for i in where] for slots, where in places]
        if any(replacement is None
               or (len(pieces) == 1 and pieces[0].padded and self._feeds_under_padding(operand, replacement))
               or not self._kept_private(operand, replacement) for found in cuts for replacement in found):
            return False
        for (slots, where), found in zip(places, cuts):
            for i, replacement in zip(where, found):
                assert replacement is not None
                slots[i:i + 1] = replacement
                self._adopt(replacement)
        del self.forms[operand]
        for slots, _ in places:
            slots[:] = simplify(tuple(slots))
        return True

    def _kept_private(self, operand: Operand, cut_slots: Slots) -> bool:
        """Whether the operands that a cut of ``operand`` made of slots it kept together
        (slots.group) reach operands no other list reaches: the group then holds them alone."""
        new = [o for o in operands_in(cut_slots) if o not in self.forms]
        inside: set[Operand] = set()
        stack = [o.slots for o in new]
        while stack:
            for o in operands_in(stack.pop()):
                if o not in inside:
                    inside.add(o)
                    stack.append(tuple(self.forms[o]))
        if not inside:
            return True
        rest = tuple(slot for slot in cut_slots if not any(o in new for o in operands_in((slot,))))
        within = {id(self.forms[operand])} | {id(self.forms[o]) for o in inside}
        lists = [rest, *(tuple(c) for c in self._containers() if id(c) not in within)]
        return not any(o in inside for slots in lists for o in operands_in(slots))

    def _adopt(self, slots: Slots) -> None:
        """Work on the operands a cut made of slots it had to keep together (slots.group)."""
        for operand in operands_in(slots):
            if operand not in self.forms:
                self.forms[operand] = list(simplify(operand.slots))
                self.order.append(operand)

    def _trim(self, operand: Operand) -> bool:
        """Cut an operand read by one piece down to what the piece reads; whether anything changed.

        Padding at the top of the operand is padding of the piece once the piece stops before it,
        positions past the span the piece strides over are no part of it, and an innermost slot
        the piece reads at 0 only, or whole, is no part of it either: so each text that reads the
        same cells through one piece comes to one operand (docs/mapping-language.md §1.8).
        """
        places = self._places(operand)
        if len(places) != 1 or len(places[0][1]) != 1:
            return False
        slots, (i,) = places[0]
        reader = slots[i]
        live = reader.live
        assert isinstance(live, Composite)
        own = tuple(self.forms[operand])
        if live.count == 1 or not own:
            return False
        found = self._read_whole(operand, own, live, reader) or _trimmed(own, live, reader, self._alone_inside(operand), self._lone_flat(own[0]))
        if found is None:
            return False
        form, read = found
        # A new operand, so that its size (which decides how its pieces are spelt) is the new one.
        fresh = Operand(form, operand.tag)
        del self.forms[operand]
        self.forms[fresh] = list(form)
        self.order[self.order.index(operand)] = fresh
        slots[i:i + 1] = read(fresh)
        slots[:] = simplify(tuple(slots))
        return True

    def _lone_flat(self, slot: Slot) -> Slots | None:
        """The form of the operand ``slot`` is a piece of, when that piece alone reads it and it is flat."""
        live = slot.live
        if not isinstance(live, Composite) or slot.shared is not None:
            return None
        places = self._places(live.operand)
        own = tuple(self.forms.get(live.operand, ()))
        return own if len(places) == 1 and len(places[0][1]) == 1 and own and _flat(own) else None

    def _widen(self, operand: Operand) -> bool:
        """Write out a plain operand that the top slot of ``operand`` cuts, when its one piece never
        reads up to the cut; whether anything changed.

        ``((B, F) = 7, 3) / 7`` (B=2, F=4) reads values 0, 2, 4 of ``(B, F) = 7``: the cut at 7 is
        never reached, so this reads ``(B, F, 3)`` as ``(B, F, 3 / 1) = 21 / 7`` does.
        """
        places = self._places(operand)
        own = self.forms[operand]
        if len(places) != 1 or len(places[0][1]) != 1 or not own:
            return False
        slots, (i,) = places[0]
        reader, top = slots[i], own[-1]
        live, cut_live = reader.live, top.live
        assert isinstance(live, Composite)
        if not isinstance(cut_live, Composite) or top.shared is not None or cut_live.stride != 1:
            return False
        inner = self.forms.get(cut_live.operand)
        if inner is None or not _flat(tuple(inner)) or cut_live.count >= cut_live.operand.size:
            return False
        if [(id(where), at) for where, at in self._places(cut_live.operand)] != [(id(own), [len(own) - 1])]:
            return False  # other pieces read it too
        if reach(live, size_of(tuple(own[:-1])), top.extent) >= cut_live.count:
            return False
        form = simplify(tuple(own[:-1]) + tuple(inner))
        fresh = Operand(form, operand.tag)
        del self.forms[operand], self.forms[cut_live.operand]
        self.forms[fresh] = list(form)
        self.order[self.order.index(operand)] = fresh
        slots[i] = Slot(piece(fresh, live.stride, live.count), reader.extent, reader.kind)
        slots[:] = simplify(tuple(slots))
        return True

    def _read_whole(self, operand: Operand, own: Slots, live: Composite,
                    reader: Slot) -> tuple[Slots, Callable[[Operand], list[Slot]]] | None:
        """The cells the one piece of ``operand`` reads, as plain digits of an operand it reads whole.

        Only the cells decide, so each spelling that reads the same cells comes to one operand;
        that holds while no list outside the operand reaches the operands inside it.
        """
        if live.count == operand.size or not self._alone_inside(operand):
            return None
        found = read_form(own, live.stride, live.count)
        if found is None:
            return None
        form, count, kind = found
        if count < live.count and reader.padded and reader.kind != kind:
            if reader.extent % live.count:
                return None  # two kinds of padding on one piece: no slot says that
            # The piece's own padding, of another kind, is a slot of pure padding right above it.
            return form, lambda o: [Slot(piece(o, 1, count), live.count, kind),
                                    Slot(None, reader.extent // live.count, reader.kind)]
        if count < live.count:
            return form, lambda o: [Slot(piece(o, 1, count), reader.extent, kind)]
        return form, lambda o: [Slot(piece(o, 1, count), reader.extent, reader.kind)]

    def _feeds_under_padding(self, operand: Operand, slots: Slots) -> bool:
        """Whether slots under the outermost one read operands that pieces elsewhere read too.

        A padded piece reads nothing while its digit is in the padding; written out, its padding
        sits on the outermost slot, and the slots under it would still feed their operands. That
        changes nothing unless other pieces of those operands, outside ``operand``, add to them.
        """
        if not (slots and slots[-1].padded):
            return False
        inside = self.forms[operand]
        return any(where is not inside for fed in operands_in(slots[:-1]) for where, _ in self._places(fed))

    @staticmethod
    def _quiet(own: Slots, pieces: list[Slot]) -> bool:
        """Whether the pieces, added up, stay inside the live values of every slot of the operand."""
        for below, slot in zip(slot_strides(own), own):
            reached = sum(reach(piece.live, below, slot.extent) for piece in pieces if isinstance(piece.live, Composite))
            if reached >= slot.count:
                return False
        return True

    def _share(self, operand: Operand) -> None:
        """Write the pieces of a flat operand out as shared digits when they never carry."""
        own = tuple(self.forms[operand])
        places = self._places(operand)
        if len(places) != 1 or not _flat(own):
            return
        slots, where = places[0]
        pieces = [slots[i] for i in where]
        if len(pieces) < 2 or any(piece.padded for piece in pieces[1:]):
            return  # a padded inner piece stops reaching the operand, which shared digits cannot say
        for below, slot in zip(slot_strides(own), own):
            if sum(reach(p.live, below, slot.extent) for p in pieces if isinstance(p.live, Composite)) >= slot.extent:
                return
        written = [_shared_digits(own, operand, piece) for piece in pieces]
        if any(digits is None for digits in written):
            return
        for i, digits in zip(where, written):
            assert digits is not None
            slots[i:i + 1] = digits

    # -- numbering -------------------------------------------------------------------------------

    def _rebuild(self) -> Slots:
        """The top form with every remaining operand rebuilt canonically and numbered."""
        order: list[Operand] = []

        def visit(slots: list[Slot]) -> None:
            for slot in reversed(slots):
                for operand in operands_in((slot,)):
                    if operand not in order:
                        order.append(operand)
                        visit(self.forms[operand])

        visit(self.top)
        heights: dict[Operand, int] = {}

        def height(operand: Operand) -> int:
            if operand not in heights:
                inner = operands_in(tuple(self.forms[operand]))
                heights[operand] = 1 + max((height(o) for o in inner), default=0)
            return heights[operand]

        rebuilt: dict[Operand, Operand] = {}
        # An operand read by one piece: the padding its text adds for a ragged stride is never
        # read, so an unpadded piece of it spells that padding with Top, however it was cut.
        readers = [o for slots in self._containers() for o in operands_in(tuple(slots))]
        lone = frozenset(o for o in order if readers.count(o) == 1)

        def settled(slots: list[Slot]) -> Slots:
            here = {s.live.operand for s in slots if isinstance(s.live, Composite)}
            return _rewrite(slots, rebuilt, frozenset(rebuilt[o] for o in here if self._sealed(o, slots)), lone)

        for level in sorted({height(operand) for operand in order}):
            seen: dict[Slots, int] = {}
            for operand in (o for o in order if heights[o] == level):
                slots = settled(self.forms[operand])
                rebuilt[operand] = Operand(slots, seen.get(slots, 0))
                seen[slots] = seen.get(slots, 0) + 1
        return settled(self.top)


def _trimmed(own: Slots, live: Composite, reader: Slot, alone: bool,
             lone: Slots | None) -> tuple[Slots, Callable[[Operand], list[Slot]]] | None:
    """The form of an operand cut down to what its one piece ``reader`` reads, and how the piece
    then reads it; None when nothing is to cut (see ``_Canon._trim``). ``alone``: no list outside
    the operand reaches the operands inside it; ``lone``: the flat form of the operand the
    innermost slot is the only piece of, if it is one."""
    low, top, total = own[0], own[-1], size_of(own)
    plain = low.shared is None and not isinstance(low.live, Composite)
    if len(own) > 1 and plain and live.stride % low.extent == 0:
        # Every value the piece reads is 0 in the innermost slot, which is live there.
        return own[1:], lambda o: [Slot(piece(o, live.stride // low.extent, live.count), reader.extent, reader.kind)]
    if len(own) > 1 and plain and (parts := split_slot(low, live.stride)) is not None:
        # The same for the live values of a padded innermost slot (or a part of its padding),
        # which the stride steps over whole: the rest of it stays in the operand.
        return (parts[1],) + own[1:], lambda o: [
            Slot(piece(o, live.stride // parts[0].extent, live.count), reader.extent, reader.kind)]
    if len(own) > 1 and plain and live.stride == 1 and live.count % low.extent == 0 and reader.extent % low.extent == 0:
        # The piece reads every value of the innermost slot with every value above it: that slot
        # is a slot of the reader's list, right under the rest of the piece.
        return own[1:], lambda o: [low, Slot(piece(o, 1, live.count // low.extent), reader.extent // low.extent, reader.kind)]
    if len(own) > 1 and low.live is None and low.shared is None and live.stride == 1 \
            and (g := math.gcd(live.count, low.extent, reader.extent)) > 1:
        # Pure padding is the same cells as g values of it under the rest: those g values, read
        # whole, are the reader's own slot (as above), and the rest stays in the operand.
        return (Slot(None, low.extent // g, low.kind),) + own[1:], lambda o: [
            Slot(None, g, low.kind), Slot(piece(o, 1, live.count // g), reader.extent // g, reader.kind)]
    width = low.count
    if plain and low.padded and width > 1 and low.extent % width == 0 and live.stride == 1 \
            and live.count % width == 0 and reader.extent % width == 0:
        # The same for the live values of a padded innermost slot: its padding stays in the
        # operand as a slot of pure padding under the rest.
        return (Slot(None, low.extent // width, low.kind),) + own[1:], lambda o: [
            Slot(low.live, width, spelt=low.spelt), Slot(piece(o, 1, live.count // width), reader.extent // width, reader.kind)]
    if plain and live.stride > 1 and (_flat(own) or alone) and (strided := stride(own, live.stride)) is not None \
            and live.count <= size_of(strided):
        # The piece reads every value of a strided operand from the start: that operand, whole.
        return strided, lambda o: [Slot(piece(o, 1, live.count), reader.extent, reader.kind)]
    if len(own) > 1 and low.shared is None and (low.live is None or isinstance(low.live, Bcast) and not low.padded) \
            and (g := math.gcd(live.stride, low.extent)) > 1:
        # A broadcast tells its values apart by nothing, nor pure padding its padding values: read
        # every g-th of them, the piece steps g times less far over the same cells.
        smaller = low.extent // g
        return (Slot(None if low.live is None else Bcast(smaller), smaller, low.kind),) + own[1:], lambda o: [
            Slot(piece(o, live.stride // g, live.count), reader.extent, reader.kind)]
    if (unscaled := _unscaled(own, live.stride, lone)) is not None:
        wide, t = unscaled
        return wide, lambda o: [Slot(piece(o, live.stride * t, live.count), reader.extent, reader.kind)]
    keep = min(live.count, -(-(total // top.extent * top.count) // live.stride))
    kind = top.kind if keep < live.count else reader.kind
    if top.padded and top.shared is None and (not reader.padded or reader.kind == kind):
        # The operand's top padding that the piece reaches becomes the piece's; padding it stops
        # before is no part of it (so the padding a ragged stride's text adds dissolves again).
        return simplify(own[:-1] + (Slot(top.live, top.count, spelt=top.spelt),)), lambda o: [Slot(piece(o, live.stride, keep), reader.extent, kind)]
    # Keep the whole span the piece strides over, so that cutting never makes its text pad.
    span = live.count * live.stride
    below = size = 1
    for extent in _fine_extents(own):
        if below * extent >= span:
            size = below * -(-span // below)
            break
        below *= extent
    if span >= total or size >= total:
        return None
    cut_down = prefix(own, size)
    return None if cut_down is None else (cut_down, lambda o: [Slot(piece(o, live.stride, live.count), reader.extent, reader.kind)])


def _fine_extents(own: Slots) -> list[int]:
    """The extents of ``own``, innermost first, with each slot that reads a whole operand unpadded
    taken as the slots of that operand: where the span a piece strides over ends then does not
    depend on how finely the text split the operand's slots (docs/mapping-language.md §1.8)."""
    out: list[int] = []
    for slot in own:
        live = slot.live
        if isinstance(live, Composite) and slot.shared is None and not slot.padded and live.stride == 1 \
                and live.count == live.operand.size:
            out += _fine_extents(live.operand.slots)
        else:
            out.append(slot.extent)
    return out


def _unscaled(own: Slots, s: int, lone: Slots | None) -> tuple[Slots, int] | None:
    """``own`` with its innermost digit of stride ``t`` read at stride 1 instead, when a piece
    striding it by ``s`` (above 1) may stride the result by ``s·t``: every value that piece reads
    is then a multiple of ``t`` there, so the operand is the one a split of ``[X, Y] / s·t`` cuts,
    ``(X, Y) / s·t``, not ``(X, Y / t) / s`` (docs/mapping-language.md §1.8). The result and
    ``t``; None when the innermost slot is no such digit, or the wider stride lines up with it."""
    low = own[0]
    digit = low.live
    if s == 1 or len(own) < 2 or low.shared is not None:
        return None
    if isinstance(digit, Composite) and lone is not None and digit.stride > 1 and not low.padded \
            and digit.count * digit.stride == digit.operand.size:
        # The same for a strided piece of a flat operand nothing else reads (the group a stride
        # kept together): its operand's slots, read whole, take its place.
        t = digit.stride
        wide = simplify(lone + own[1:])
        return None if stride(wide, s * t) is not None else (wide, t)
    if not isinstance(digit, Digit) or digit.stride == 1:
        return None
    t = digit.stride
    # Read at stride 1, the digit's padding includes what its text padded the axis with.
    kind = low.kind if low.padded else low.spelt
    wide = (Slot(Digit(digit.axis, digit.n, 1, min(digit.count * t, digit.n)), low.extent * t, kind),) + own[1:]
    return None if stride(wide, s * t) is not None else (wide, t)


def _covered(slots: list[Slot], index: int) -> bool:
    """Whether the slot after ``index`` is padding (pure, or a padded piece of the same operand)."""
    above = slots[index + 1]
    return above.live is None or (isinstance(above.live, Composite) and above.padded
                                  and above.live.operand == slots[index].live.operand)  # type: ignore[union-attr]


def _flat(slots: Slots) -> bool:
    """Plain digits, broadcasts and padding: no operand inside."""
    return not operands_in(slots)


def _shared_digits(own: Slots, operand: Operand, piece: Slot) -> list[Slot] | None:
    """The slots ``piece`` cuts from a flat operand, each marked with the operand position it holds."""
    live = piece.live
    assert isinstance(live, Composite)
    if live.count == 1:
        out = [Slot(None, 1, shared=Shared(operand, operand.size))]  # the touch that ranks the operand
    else:
        strided = stride(own, live.stride)
        kept = None if strided is None else prefix(strided, live.count)
        if kept is None:
            return None
        out = [Slot(slot.live, slot.extent, slot.kind, Shared(operand, live.stride * below), slot.spelt)
               for below, slot in zip(slot_strides(kept), kept)]
    if piece.padded:
        if piece.extent % live.count:
            return None
        out.append(Slot(None, piece.extent // live.count, piece.kind))
    return out


def _rewrite(slots: list[Slot], rebuilt: dict[Operand, Operand], whole: frozenset[Operand],
             lone: frozenset[Operand]) -> Slots:
    out: list[Slot] = []
    for slot in slots:
        live, shared, spelt = slot.live, slot.shared, slot.spelt
        if isinstance(live, Composite):
            if live.operand in lone:
                spelt = slot.kind  # never read: Top, or the piece's own padding (docs/mapping-language.md §1.8)
            live = Composite(rebuilt[live.operand], live.stride, live.count)
        if shared is not None:
            shared = Shared(rebuilt[shared.operand], shared.stride)
        out.append(Slot(live, slot.extent, slot.kind, shared, spelt))
    return simplify(tuple(out), whole)
