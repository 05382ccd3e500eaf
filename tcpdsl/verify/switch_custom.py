"""``switch`` with ``CustomBroadcast``: the routing the layouts ask for (docs/stage-rules.md §5.1.2).

The four frames are cut into common *atoms*: every axis digit is split wherever a digit of the same
axis starts or ends in another frame, so a digit either appears whole in a frame or not at all.
Then each OutSlice slot is kept from InSlice, a fresh broadcast tile, or Top padding; OutTime is
InTime, unchanged, with the InSlice atoms that moved to Time inside it, in their InSlice order; and
no live InSlice atom is dropped. A digit that cannot be cut that way (a partial read such as
``B % 4 = 3`` of a live axis) does not sequence. The ring is the smallest power of two above which
InSlice and OutSlice agree. Everything is read from the canonical slots, never from cells.
"""

from __future__ import annotations

from collections.abc import Sequence

from tcpdsl.algebra import Composite, Digit, Mapping, Slot, digit_text, render_slot, slot_strides, slots_of, split_at
from tcpdsl.errors import LayoutError
from tcpdsl.verify.switch_config import STAGE, CustomBroadcast
from tcpdsl.verify.switch_tiles import check_tile, digits

_Atom = tuple[str, int, int]  # (axis, stride, count)


def check_custom(config: CustomBroadcast, *, slice: Mapping, time: Mapping, out_slice: Mapping, out_time: Mapping) -> int:
    """Check a custom routing and return its ring size (the rules of §5.1.2, in that order)."""
    ring_size = config.ring_size
    if ring_size <= 0 or ring_size & (ring_size - 1):
        raise LayoutError(
            STAGE,
            "RingSizeNotPowerOfTwo",
            f"switch {config.text}: the ring size must be a power of 2, got {ring_size}",
            hint=f"pass the ring size the layouts imply, a power of two dividing {slice.size}",
        )
    frames = [slots_of(m) for m in (slice, time, out_slice, out_time)]
    cuts: dict[str, set[int]] = {}
    for slots in frames:
        for slot in slots:
            if isinstance(slot.live, Digit):
                d = slot.live
                cuts.setdefault(d.axis, set()).update((d.stride, d.stride * d.count))
    in_slice, in_time, o_slice, o_time = (
        _refine(config, slots, cuts, m) for slots, m in zip(frames, (slice, time, out_slice, out_time))
    )
    source = {_atom(s): i for i, s in enumerate(in_slice) if isinstance(s.live, Digit)}
    from_time = {_atom(s) for s in in_time if isinstance(s.live, Digit)}
    used: set[_Atom] = set()
    _check_out_slice(config, in_slice, o_slice, source, from_time, used, slice, time)
    _check_out_time(config, o_time, source, used, time, out_time)
    dropped = [s for s in in_slice if isinstance(s.live, Digit) and _atom(s) not in used]
    if dropped:
        raise _unsequenceable(config, f"live Slice digit {_text(dropped[0])} of {slice} reaches neither OutSlice "
                              "nor OutTime, so its cells would be dropped", "keep every live Slice axis: in OutSlice, "
                              "or moved whole to the innermost OutTime (only padding may be dropped)")
    ring = _ring(slice, out_slice)
    if ring != ring_size:
        raise LayoutError(
            STAGE,
            "RingSizeMismatch",
            f"switch {config.text}: ring size mismatch: the layouts imply {ring}, but {ring_size} was given "
            f"(Slice {slice}, OutSlice {out_slice})",
            hint=f"pass CustomBroadcast(ring_size={ring})",
        )
    return ring


def _atom(slot: Slot) -> _Atom:
    live = slot.live
    assert isinstance(live, Digit)
    return (live.axis, live.stride, live.count)


def _text(slot: Slot) -> str:
    live = slot.live
    assert isinstance(live, Digit)
    return digit_text(live)


def _unsequenceable(config: CustomBroadcast, why: str, hint: str) -> LayoutError:
    return LayoutError(STAGE, "Unsequenceable", f"switch {config.text}: the read is not sequenceable: {why}", hint=hint)


def _refine(config: CustomBroadcast, slots: Sequence[Slot], cuts: dict[str, set[int]], frame: Mapping) -> list[Slot]:
    """``slots`` with every digit cut at the other frames' digit boundaries, innermost first."""
    out: list[Slot] = []
    for slot in slots:
        live = slot.live
        if isinstance(live, Composite):
            raise _unsequenceable(config, f"{frame} holds an opaque piece, which no snoop bitmap can route",
                                  "write the switch layouts with axis digits only")
        if not isinstance(live, Digit):
            out.append(slot)
            continue
        for cut in sorted(b for b in cuts[live.axis] if live.stride < b < live.stride * live.count):
            assert isinstance(live, Digit)
            k = cut // live.stride
            if cut % live.stride or slot.extent % k:
                raise _unsequenceable(
                    config, f"{frame} reads part of the live digit {_text(slot)}, so the rest of its cells would "
                    "be dropped", "move a whole axis digit, or pad the axis so that the unread part is padding")
            out.append(Slot(Digit(live.axis, live.n, live.stride, k), k))
            live = Digit(live.axis, live.n, cut, -(-live.count // k))
            slot = Slot(live, slot.extent // k, slot.kind)
        out.append(slot)
    return out


def _check_out_slice(
    config: CustomBroadcast,
    in_slice: list[Slot],
    o_slice: list[Slot],
    source: dict[_Atom, int],
    from_time: set[_Atom],
    used: set[_Atom],
    slice_: Mapping,
    time: Mapping,
) -> None:
    """Each OutSlice slot is kept from Slice, carried padding, or a broadcast tile."""
    inputs = digits(slice_) + digits(time)
    claimed: list[Digit] = []
    in_padding = {(at, s.extent, s.kind) for at, s in zip(slot_strides(tuple(in_slice)), in_slice) if s.live is None}
    for at, slot in zip(slot_strides(tuple(o_slice)), o_slice):
        live = slot.live
        if isinstance(live, Digit) and _atom(slot) in source:
            if _atom(slot) in used:
                raise _unsequenceable(config, f"OutSlice reads {_text(slot)} twice", "use each Slice digit once")
            used.add(_atom(slot))
        elif isinstance(live, Digit) and _atom(slot) in from_time:
            raise LayoutError(
                STAGE,
                "OutSliceSourcedFromTime",
                f"switch {config.text}: an OutSlice slot must come from Slice or a new broadcast axis, not from "
                f"Time; offending axis: {_text(slot)} (Time {time})",
                hint=f"keep {_text(slot)} in OutTime; the switch cannot move Time to Slice except by InterTranspose",
            )
        elif live is None and (at, slot.extent, slot.kind) in in_padding:
            continue  # the same padding slot, carried
        else:
            check_tile(config, f"at OutSlice position {at}", render_slot(slot), inputs, claimed)


def _check_out_time(
    config: CustomBroadcast, o_time: list[Slot], source: dict[_Atom, int], used: set[_Atom], time: Mapping,
    out_time: Mapping,
) -> None:
    """OutTime is Time with the moved Slice atoms inside it, each once."""
    moved: list[Slot] = []
    for slot in o_time:
        if not (isinstance(slot.live, Digit) and _atom(slot) in source and _atom(slot) not in used):
            break
        used.add(_atom(slot))
        moved.append(slot)
    for slot in o_time[len(moved):]:
        if isinstance(slot.live, Digit) and _atom(slot) in source:
            if _atom(slot) in used:
                raise _unsequenceable(config, f"{_text(slot)} reaches OutTime {out_time} twice, or both OutSlice and "
                                      "OutTime", "use each Slice digit once")
            raise LayoutError(
                STAGE,
                "MovedAxesNotInnermost",
                f"switch {config.text}: axes moving from Slice to OutTime must be its innermost terms (inside Time "
                f"{time}); offending moved axis: {_text(slot)} (OutTime {out_time})",
                hint=f"move {_text(slot)} to the innermost end of OutTime",
            )
    for inner, outer in zip(moved, moved[1:]):
        if source[_atom(inner)] > source[_atom(outer)]:
            raise LayoutError(
                STAGE,
                "MovedOrderNotPreserved",
                f"switch {config.text}: axes moving from Slice to Time must keep their Slice order: {_text(outer)} "
                f"landed outside {_text(inner)}, but it is inner to it in Slice (OutTime {out_time})",
                hint="order the moved axes in OutTime as they are in Slice (the one with the larger stride outer)",
            )
    size = 1
    for slot in moved:
        size *= slot.extent
    carried = split_at(out_time, size)[0] if out_time.size % size == 0 else out_time
    if carried != time:
        raise LayoutError(
            STAGE,
            "InTimeNotPreserved",
            f"switch {config.text}: Time must be carried to OutTime unchanged, got Time {time} but OutTime carries "
            f"{carried} (OutTime {out_time})",
            hint=f"declare OutTime as {time} followed by the axes moved from Slice",
        )


def _ring(slice_: Mapping, out_slice: Mapping) -> int:
    """The smallest power of two above which the slice layouts agree: no data leaves such a ring."""
    ring = 1
    while ring < slice_.size and split_at(slice_, ring)[0] != split_at(out_slice, ring)[0]:
        ring *= 2
    return ring
