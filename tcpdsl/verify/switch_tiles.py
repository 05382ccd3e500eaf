"""What a switch broadcast slot may hold (docs/stage-rules.md §5.1).

A tile is an OutSlice slot the switch fills by fanning one packet out to several slices. It may be
Top padding (don't-care) or axes the input does not carry, each used once and unpadded. Both the
named configurations and ``CustomBroadcast`` use these checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tcpdsl.algebra import Composite, Digit, Mapping, PaddingKind, Slot, slots_of
from tcpdsl.errors import LayoutError
from tcpdsl.verify.switch_config import STAGE, SwitchConfig


def digits(mapping: Mapping) -> list[Digit]:
    """The live axis digits of ``mapping``'s canonical slots."""
    return [s.live for s in slots_of(mapping) if isinstance(s.live, Digit)]


def overlapping(digit: Digit, others: Iterable[Digit]) -> Digit | None:
    """A digit of ``others`` that spells some of the same coordinate digits of the same axis."""
    for other in others:
        if other.axis == digit.axis and max(digit.stride, other.stride) < min(
            digit.stride * digit.count, other.stride * other.count
        ):
            return other
    return None


def axes_of(slot: Slot) -> set[str]:
    """The axes a composite slot reads (a digit names its own)."""
    live = slot.live
    if isinstance(live, Digit):
        return {live.axis}
    if isinstance(live, Composite):
        return {s for inner in live.operand.slots for s in axes_of(inner)}
    return set()


def check_tile(config: SwitchConfig, label: str, tile: Mapping, inputs: Sequence[Digit], claimed: list[Digit]) -> None:
    """Check one broadcast tile; ``claimed`` collects the digits earlier tiles used."""
    slots = slots_of(tile)
    for slot in slots:
        if slot.padded and slot.kind is not PaddingKind.TOP:
            raise LayoutError(
                STAGE,
                "OutputHasUnwritableRegion",
                f"switch {config.text}: broadcast slot {label} lands on {tile}, whose padding must not be written; "
                "only Top padding (`#`) is don't-care",
                hint=f"make slot {label} a new axis or Top padding `1 # {tile.size}`",
            )
    names = {d.axis for d in inputs}
    for slot in slots:
        live = slot.live
        carried = (
            isinstance(live, Digit) and overlapping(live, inputs) is not None
        ) or (isinstance(live, Composite) and axes_of(slot) & names)
        if carried:
            raise LayoutError(
                STAGE,
                "BroadcastNotNew",
                f"switch {config.text}: broadcast slot {label} holds {tile}, which the input Slice or Time carries; "
                "a broadcast slot must be an axis the input does not carry",
                hint=f"fill slot {label} with a new axis of {tile.size} cells or `1 # {tile.size}`",
            )
        if isinstance(live, Digit):
            if overlapping(live, claimed) is not None:
                raise LayoutError(
                    STAGE,
                    "BroadcastUsedMoreThanOnce",
                    f"switch {config.text}: broadcast axis {live.axis} is claimed twice (slot {label} holds {tile}); "
                    "two broadcast slots may not claim one axis",
                    hint="give each broadcast slot its own new axis",
                )
            claimed.append(live)
    # Top padding beside an axis is a slot of its own (the tile is partly don't-care); padding that
    # extends an axis, `X # n`, leaves the routing of the padded cells undefined.
    if any(s.live is not None and s.padded for s in slots):
        raise LayoutError(
            STAGE,
            "BroadcastNotPadded",
            f"switch {config.text}: broadcast slot {label} holds {tile}, a padded axis; a broadcast axis carries "
            "no `#` padding",
            hint=f"fill slot {label} with an unpadded new axis of {tile.size} cells, or with `1 # {tile.size}`",
        )


def check_tiles(config: SwitchConfig, tiles: Sequence[tuple[str, Mapping]], slice_: Mapping, time: Mapping) -> None:
    """Check the labelled tiles of a named configuration, in the order given."""
    inputs = digits(slice_) + digits(time)
    claimed: list[Digit] = []
    for label, got in tiles:
        check_tile(config, label, got, inputs, claimed)
