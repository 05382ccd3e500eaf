"""The simulator's model of each stage unit, and its poison masks (used by :mod:`tcpdsl.evaluate.simulate`).

Every function works on buffers over the live spatial positions (``n`` rows of ``[Chip, Cluster,
Slice]``). A poison mask marks cells fed by padding (bit 1: stream, bit 2: TRF); a mask without
poison is kept as one broadcast zero (:func:`clean`), which the stages pass through unread.

The Multiplier works in the *work layout* ``(n, Lane, tiling, Time / PackSize, OutPacket)``: the
Stream Adapter's TimeBroadcast copies (``tiling``) outside the flits they repeat, so the widened
stream multiplies long contiguous runs. :meth:`Adapter.standard` turns it into the stage layout
``(n, Lane, OutTime, OutPacket)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Bcast, Digit, Mapping, pairs, slot_strides
from tcpdsl.errors import LayoutError
from tcpdsl.evaluate.digits import address, match_broadcasts, raw_coordinates, read
from tcpdsl.numerics.chain import Chain
from tcpdsl.numerics.placement import plan
from tcpdsl.verify.stage import Stage

Array = npt.NDArray[Any]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
MaskArray = npt.NDArray[np.uint8]

STREAM_POISON: Final = 1
TRF_POISON: Final = 2

_NO_POISON: Final = np.zeros((), dtype=np.uint8)
_NO_POISON.setflags(write=False)


def clean(shape: tuple[int, ...]) -> MaskArray:
    """A mask without poison: one zero, broadcast (read-only, no memory per cell)."""
    return np.broadcast_to(_NO_POISON, shape)


def is_clean(mask: MaskArray) -> bool:
    """Whether ``mask`` is known to hold no poison without reading it: one broadcast zero."""
    return mask.size == 0 or (not any(mask.strides) and not mask.flat[0])


@dataclass(frozen=True)
class Adapter:
    """The Stream Adapter's geometry: a ``(n, Time, Packet)`` stream row becomes
    ``(n, Lane, OutTime, OutPacket)``, OutTime being ``(Time / PackSize, tiling)``."""

    n: int
    lanes: int
    flits: int  # Time / PackSize
    tiling: int  # OutTime cells each group of flits is repeated over (TimeBroadcast)
    pack: int
    packet: int
    note: str

    @property
    def shape(self) -> tuple[int, int, int, int]:
        return (self.n, self.lanes, self.flits * self.tiling, self.pack * self.packet)

    @property
    def work_shape(self) -> tuple[int, int, int, int, int]:
        return (self.n, self.lanes, self.tiling, self.flits, self.pack * self.packet)

    def spread(self, x: Array) -> Array:
        """The adapter's output buffer in the stage layout, materialised."""
        grid = x.reshape(self.n, self.flits, self.pack, self.packet)[:, None, :, None, :, :]
        full = (self.n, self.lanes, self.flits, self.tiling, self.pack, self.packet)
        return np.broadcast_to(grid, full).reshape(self.shape)

    def spread_mask(self, mask: MaskArray) -> MaskArray:
        return clean(self.shape) if is_clean(mask) else self.spread(mask)

    def source(self, x: Array) -> Array:
        """A stream row (or its mask) as it broadcasts over the work layout."""
        return x.reshape(self.n, 1, 1, self.flits, self.pack * self.packet)

    def standard(self, x: Array) -> Array:
        """A buffer in the work layout (any last dimension) in the stage layout."""
        if is_clean(x):
            return clean((self.n, self.lanes, self.flits * self.tiling, x.shape[-1]))
        return x.transpose(0, 1, 3, 2, 4).reshape(self.n, self.lanes, self.flits * self.tiling, x.shape[-1])


def stream_adapter(chain: Chain, n: int) -> Adapter:
    pack = chain.outer.pack_size
    t, p = chain.time.size, chain.packet.size
    lanes, out_time, out_packet = chain.lane.size, chain.outer_time.size, chain.outer_packet.size
    if t % pack or out_packet != pack * p or out_time % (t // pack):
        raise LayoutError(Stage.CONTRACT_OUTER, "ShapeMismatch",
                          f"Time {chain.time} and Packet {chain.packet} with PackSize {pack} cannot form "
                          f"OutTime {chain.outer_time} and OutPacket {chain.outer_packet}")
    tiling = out_time // (t // pack)
    note = f"PackSize {pack}, LaneBroadcast {lanes}, TimeBroadcast {chain.outer.time_broadcast} ({tiling} cells)"
    return Adapter(n, lanes, t // pack, tiling, pack, p, note)


def _loop_addresses(chain: Chain) -> IntArray | None:
    """The Element address of every (OutTime, OutPacket) cell from the sequencer's loop nest:
    each loop adds ``index * stride`` (stride 0: a broadcast loop), and the packet reads
    ``Element % ReadSize`` repeated PacketBroadcast times. None if the loops do not span OutTime."""
    entries = chain.outer.sequencing
    if math.prod(entry.count for entry in entries) != chain.outer_time.size:
        return None
    rest = np.arange(chain.outer_time.size, dtype=np.int64)
    row = np.zeros(chain.outer_time.size, dtype=np.int64)
    for entry in reversed(entries):
        row += (rest % entry.count) * entry.stride
        rest //= entry.count
    offset = np.arange(chain.outer_packet.size, dtype=np.int64) % chain.outer.read_size
    return (row[:, None] + offset[None, :]).reshape(-1)


@dataclass(frozen=True)
class Sequencer:
    """Which Element cell each (OutTime, OutPacket) cell reads: an address past the Element reads
    poison, and an addressed padding cell holds whatever the TRF holds (Zero padding: 0).

    ``position``, ``unaddressed`` and ``zero_pad`` are over ``(OutTime, OutPacket)``, flattened.
    """

    position: IntArray
    unaddressed: BoolArray
    zero_pad: BoolArray
    note: str

    def cells(self, adapter: Adapter, work: bool) -> Cells:
        """The addressing over the stage layout's ``(OutTime, OutPacket)`` or, with ``work``, over
        the work layout's ``(tiling, Time / PackSize, OutPacket)``."""
        out_packet = adapter.pack * adapter.packet
        if not work:
            shape = (adapter.flits * adapter.tiling, out_packet)
            return Cells(self.position.reshape(shape), self.unaddressed.reshape(shape), self.zero_pad.reshape(shape))
        split = (adapter.flits, adapter.tiling, out_packet)

        def moved(a: Array) -> Array:
            return np.ascontiguousarray(a.reshape(split).transpose(1, 0, 2))

        return Cells(moved(self.position), moved(self.unaddressed), moved(self.zero_pad))


@dataclass(frozen=True)
class Cells:
    """The sequencer's addressing laid out over some grid of output cells."""

    position: IntArray
    unaddressed: BoolArray
    zero_pad: BoolArray

    def read(self, trf: Array, fill: Any) -> Array:
        """The output cells read from a ``(n, Lane, Element)`` buffer, ``fill`` where unaddressed."""
        values = np.take(trf, self.position, axis=2)
        if self.unaddressed.any():
            values[:, :, self.unaddressed] = fill
        if self.zero_pad.any():
            values[:, :, self.zero_pad] = 0
        return values

    def read_mask(self, mask: MaskArray) -> MaskArray:
        if is_clean(mask) and not self.unaddressed.any():
            return clean((mask.shape[0], mask.shape[1], *self.position.shape))
        out = np.take(mask, self.position, axis=2)
        out[:, :, self.unaddressed] |= TRF_POISON
        out[:, :, self.zero_pad] = 0
        return out


def trf_sequencer(chain: Chain) -> Sequencer:
    walk = pairs([chain.outer_time, chain.outer_packet])
    position = _loop_addresses(chain)
    how = "loop nest"
    if position is None:
        # No usable loop nest: address by coordinates, each cell reading the Element cell its
        # digits spell (padding digits included, so a padded cell reads the TRF's padding).
        raw, free_pad, zero_pad = raw_coordinates(walk)
        position, _, exists = address(chain.element, raw, walk.size)
        unaddressed = ~exists | (free_pad & ~zero_pad)
        how = "coordinates"
    else:
        unaddressed = position >= chain.element.size
        zero_pad = np.zeros(walk.size, dtype=np.bool_)
    note = (f"ReadSize {chain.outer.read_size}, PacketBroadcast {chain.outer.packet_broadcast}, "
            f"{'wide' if chain.outer.wide_read else 'narrow'} read, addressed by {how}")
    return Sequencer(np.where(unaddressed, 0, position), unaddressed, zero_pad, note)


def packet_reducer(chain: Chain, values: Array, mask: MaskArray) -> tuple[Array, MaskArray, str]:
    """The adder tree over the last dimension (OutPacket), whatever the leading ones."""
    assert chain.packet_params is not None and chain.packet_out is not None
    depth = chain.packet_params.depth
    *lead, out_packet = values.shape
    group = 1 << depth
    kept = chain.packet_out.size
    if out_packet % group or kept > out_packet // group:
        raise LayoutError(Stage.CONTRACT_PACKET, "ShapeMismatch",
                          f"a depth-{depth} adder tree cannot turn {out_packet} cells into OutPacket {chain.packet_out}")
    x = values.reshape(*lead, out_packet // group, group)
    for _ in range(depth):
        x = x[..., 0::2] + x[..., 1::2]
    x = x[..., 0][..., :kept]
    if is_clean(mask):
        m = clean(x.shape)
    else:
        m = mask.reshape(*lead, out_packet // group, group)
        for _ in range(depth):
            m = m[..., 0::2] | m[..., 1::2]
        m = m[..., 0][..., :kept]
    note = f"depth {depth}: per-lane pairwise adder tree over {group} cells, then outer padding dropped"
    return x, m, note


def _time_targets(source: Mapping, target: Mapping) -> tuple[IntArray, BoolArray]:
    """Where each position of the pre-reduce Time lands in the reduced Time.

    Every digit of ``source`` contributes its raw value (padding digits included) to the coordinate;
    the restricted read of ``target`` then drops reduced digits, so a padded reduced digit still
    lands on a live target (and its poison is summed), while a padded kept digit lands on padding.
    Positions in a pure-padding slot of ``source`` are not flits of any output.
    """
    slots = source.slots()
    size = source.size
    position = np.arange(size, dtype=np.int64)
    raw: dict[str, IntArray] = {}
    valid = np.ones(size, dtype=np.bool_)
    digits: list[IntArray] = []
    for slot, stride in zip(slots, slot_strides(slots), strict=True):
        digit = (position // stride) % slot.extent
        digits.append(digit)
        live = slot.live
        if isinstance(live, Digit):
            raw[live.axis] = raw.get(live.axis, np.zeros(size, dtype=np.int64)) + digit * live.stride
        elif live is None or isinstance(live, Bcast):
            valid &= digit < slot.count
    pairing = match_broadcasts(slots, target.slots())
    broadcast = {j: digits[i] for j, i in pairing.items()}
    landing, ok = read(target, raw, size, broadcast)
    return landing, ok & valid


def time_reducer(chain: Chain, values: Array, mask: MaskArray, work: type[np.generic]) -> tuple[Array, MaskArray, str]:
    """Each reduced flit is the sum of the flits landing on it, added in Time order.

    The flits are added in rounds: round ``k`` adds the ``k``-th flit of every target at once, so
    each target still sees its flits in order and its sum is the sequential one, bit for bit.
    """
    assert chain.time_out is not None
    landing, ok = _time_targets(chain.outer_time, chain.time_out)
    n, lanes, out_time, packet = values.shape
    total = np.zeros((n, lanes, chain.time_out.size, packet), dtype=work)
    unpoisoned = is_clean(mask)
    total_mask = clean(total.shape) if unpoisoned else np.zeros(total.shape, dtype=np.uint8)
    flits = np.flatnonzero(ok)
    targets = landing[flits]
    # The rank of each flit among the flits with its target, in Time order (a stable sort).
    order = np.argsort(targets, kind="stable")
    starts = np.searchsorted(targets[order], targets[order])
    rank = np.empty(flits.size, dtype=np.int64)
    rank[order] = np.arange(flits.size) - starts
    for k in range(int(rank.max(initial=-1)) + 1):
        chosen = rank == k
        sources, where = flits[chosen], targets[chosen]
        total[:, :, where, :] += values[:, :, sources, :]
        if not unpoisoned:
            total_mask[:, :, where, :] |= mask[:, :, sources, :]
    reduced = chain.time_params.reduced if chain.time_params is not None else ()
    note = f"sequential accumulation over {out_time} Time flits; reduced axes: {', '.join(reduced) or 'none'}"
    return total, total_mask, note


def lane_folder(chain: Chain, values: Array, mask: MaskArray) -> tuple[Array, MaskArray, str]:
    assert chain.lane_time is not None and chain.lane_packet is not None
    source, target = chain.part(Stage.CONTRACT_TIME), chain.part(Stage.CONTRACT_LANE)
    cells = plan(target)
    position, ok = read(source, dict(cells.coords), cells.size)
    ok &= cells.live
    n = values.shape[0]
    shape = (n, chain.lane_time.size, chain.lane_packet.size)
    out = np.where(ok, values.reshape(n, -1)[:, position], 0).astype(values.dtype)
    out_mask = clean(shape) if is_clean(mask) else np.where(
        ok, mask.reshape(n, -1)[:, position], 0).astype(np.uint8).reshape(shape)
    note = f"{chain.mode.value if chain.mode is not None else ''} relayout by logical index"
    return out.reshape(shape), out_mask, note
