"""The stage-faithful simulator: every stage of the contraction engine on physical buffers.

Unlike the fused fold, which never touches padding, the simulator lays both operands out over the
hardware dimensions with Top (and Bottom) padding filled with poison, then runs each stage the way
the hardware does: the Stream Adapter packs and broadcasts, the TRF Sequencer reads Element rows,
the Multiplier widens and multiplies every cell, the Packet Reducer sums the innermost ``2**depth``
packet elements with a pairwise adder tree, the Time Reducer adds Time flits in order and the Lane
Folder moves cells by logical index. Poison is tracked by a mask (bit 1: stream, bit 2: TRF), so an
integer poison value that happens to be a legal number is still caught. The first stage at which a
live cell holds poison raises ``LayoutError(rule="UndefinedPadding")``.

Spatial positions where ``[Chip, Cluster, Slice]`` is padding are skipped: every stage shares that
prefix, so nothing computed there can reach a live output.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra.nodes import Mapping, pairs
from tcpdsl.algebra.slots import Bcast, Digit, slot_strides
from tcpdsl.algebra.terms import logical_terms
from tcpdsl.errors import LayoutError
from tcpdsl.evaluate.digits import address, match_broadcasts, raw_coordinates, read
from tcpdsl.evaluate.fold_plan import accumulator_dtype
from tcpdsl.tensors.placement import plan, to_physical_rows, to_terms
from tcpdsl.tensors.chain import Chain, Operand
from tcpdsl.tensors.scalars import cast, poison, widen
from tcpdsl.verify.stage import Stage

Array = npt.NDArray[Any]
IntArray = npt.NDArray[np.int64]
MaskArray = npt.NDArray[np.uint8]

STREAM_POISON: Final = 1
TRF_POISON: Final = 2
SIMULATE_STAGE: Final = "simulate"


@dataclass(frozen=True)
class StageBuffer:
    """One stage's physical buffer over the live spatial positions.

    ``values`` has shape ``(live [Chip, Cluster, Slice] positions, *dims)``; ``poison`` has the same
    shape (bit 1: from stream padding, bit 2: from TRF padding); ``mapping`` is the whole buffer's
    mapping and ``part`` its stage part after ``[Chip, Cluster, Slice]``; ``note`` states the stage
    parameters used.
    """

    stage: str
    mapping: Mapping
    part: Mapping
    dims: tuple[str, ...]
    values: Array
    poison: MaskArray
    note: str


class _Run:
    """The state of one simulation: spatial selection and the buffers so far."""

    def __init__(self, chain: Chain, checking: bool) -> None:
        self.chain = chain
        self.checking = checking
        self.prefix = chain.prefix
        self.spatial = np.flatnonzero(plan(self.prefix).live)
        self.buffers: list[StageBuffer] = []

    def layout(self, operand: Operand, inner: list[Mapping], bit: int) -> tuple[Array, MaskArray]:
        part = pairs(inner)
        expected = self.prefix.size * part.size
        if operand.mapping.size != expected:
            raise LayoutError(SIMULATE_STAGE, "ShapeMismatch",
                              f"operand mapping {operand.mapping} has {operand.mapping.size} cells, "
                              f"expected {expected} over [Chip, Cluster, Slice, ...]")
        values, _, undefined = to_physical_rows(operand.values, operand.axes, self.prefix, part,
                                                fill=poison(operand.dtype), zero_fill=0)
        shape = (self.spatial.size, *[m.size for m in inner])
        return values.reshape(shape), (undefined * bit).astype(np.uint8).reshape(shape)

    def live(self, inner: Mapping, shape: tuple[int, ...]) -> npt.NDArray[np.bool_]:
        """Live cells of a stage buffer: every selected spatial position times the live cells of
        the stage's own part of the mapping (no digit spans the spatial prefix and that part)."""
        return np.broadcast_to(plan(inner).live.reshape(shape), (self.spatial.size, *shape))

    def record(self, stage: str, inner: Mapping, dims: tuple[str, ...], values: Array, mask: MaskArray,
               note: str, check: bool = True) -> None:
        mapping = pairs([self.prefix, inner])
        self.buffers.append(StageBuffer(stage, mapping, inner, dims, values, mask, note))
        if check and self.checking:
            self.check(stage, inner, mapping, values.shape[1:], mask)

    def check(self, stage: str, inner: Mapping, mapping: Mapping, shape: tuple[int, ...], mask: MaskArray) -> None:
        bad = self.live(inner, shape) & (mask != 0)
        if not bad.any():
            return
        bits = int(np.bitwise_or.reduce(mask[bad]))
        sources = []
        if bits & STREAM_POISON:
            sources.append(f"the stream layout {self.chain.stream.mapping}")
        if bits & TRF_POISON:
            sources.append(f"the TRF layout {self.chain.weight.mapping}")
        raise LayoutError(
            stage, "UndefinedPadding",
            f"{int(np.count_nonzero(bad))} live cell(s) of {mapping} depend on undefined (Top) padding of "
            f"{' and '.join(sources)}; the hardware multiplies and adds whatever the padded cells hold",
            hint="zero the padding (#{0}) or keep padded cells out of the reduced digits")


def _wrap_i32(values: Array) -> Array:
    return cast(values, "i32")


def _stream_adapter(run: _Run, stream: Array, mask: MaskArray) -> tuple[Array, MaskArray, str]:
    chain = run.chain
    pack = chain.outer.pack_size
    t, p = chain.time.size, chain.packet.size
    lanes, out_time, out_packet = chain.lane.size, chain.outer_time.size, chain.outer_packet.size
    if t % pack or out_packet != pack * p or out_time % (t // pack):
        raise LayoutError(Stage.CONTRACT_OUTER, "ShapeMismatch",
                          f"Time {chain.time} and Packet {chain.packet} with PackSize {pack} cannot form "
                          f"OutTime {chain.outer_time} and OutPacket {chain.outer_packet}")
    tiling = out_time // (t // pack)
    n = stream.shape[0]
    shape = (n, lanes, t // pack, tiling, pack, p)

    def spread(x: Array) -> Array:
        grid = x.reshape(n, t // pack, pack, p)[:, None, :, None, :, :]
        return np.broadcast_to(grid, shape).reshape(n, lanes, out_time, out_packet)

    note = f"PackSize {pack}, LaneBroadcast {lanes}, TimeBroadcast {chain.outer.time_broadcast} ({tiling} cells)"
    return spread(stream), spread(mask), note


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


def _trf_sequencer(run: _Run, trf: Array, mask: MaskArray) -> tuple[Array, MaskArray, str]:
    """Each (OutTime, OutPacket) cell reads the Element cell the sequencer addresses; an address
    past the Element reads poison, and an addressed padding cell holds whatever the TRF holds."""
    chain = run.chain
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
    position = np.where(unaddressed, 0, position)
    values = trf[:, :, position]
    out_mask = mask[:, :, position]
    values[:, :, unaddressed] = poison(chain.weight.dtype)
    out_mask[:, :, unaddressed] |= TRF_POISON
    values[:, :, zero_pad] = 0
    out_mask[:, :, zero_pad] = 0
    shape = (trf.shape[0], chain.lane.size, chain.outer_time.size, chain.outer_packet.size)
    note = (f"ReadSize {chain.outer.read_size}, PacketBroadcast {chain.outer.packet_broadcast}, "
            f"{'wide' if chain.outer.wide_read else 'narrow'} read, addressed by {how}")
    return values.reshape(shape), out_mask.reshape(shape), note


def _packet_reducer(run: _Run, values: Array, mask: MaskArray) -> tuple[Array, MaskArray, str]:
    chain = run.chain
    assert chain.packet_params is not None and chain.packet_out is not None
    depth = chain.packet_params.depth
    n, lanes, out_time, out_packet = values.shape
    group = 1 << depth
    kept = chain.packet_out.size
    if out_packet % group or kept > out_packet // group:
        raise LayoutError(Stage.CONTRACT_PACKET, "ShapeMismatch",
                          f"a depth-{depth} adder tree cannot turn {out_packet} cells into OutPacket {chain.packet_out}")
    x = values.reshape(n, lanes, out_time, out_packet // group, group)
    m = mask.reshape(n, lanes, out_time, out_packet // group, group)
    for _ in range(depth):
        x = x[..., 0::2] + x[..., 1::2]
        m = m[..., 0::2] | m[..., 1::2]
    x, m = x[..., 0][..., :kept], m[..., 0][..., :kept]
    note = f"depth {depth}: per-lane pairwise adder tree over {group} cells, then outer padding dropped"
    return x, m, note


def _time_targets(source: Mapping, target: Mapping) -> tuple[IntArray, npt.NDArray[np.bool_]]:
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
            raw[live.sym] = raw.get(live.sym, np.zeros(size, dtype=np.int64)) + digit * live.stride
        elif live is None or isinstance(live, Bcast):
            valid &= digit < slot.count
    pairing = match_broadcasts(slots, target.slots())
    broadcast = {j: digits[i] for j, i in pairing.items()}
    landing, ok = read(target, raw, size, broadcast)
    return landing, ok & valid


def _time_reducer(run: _Run, values: Array, mask: MaskArray, work: type[np.generic]) -> tuple[Array, MaskArray, str]:
    chain = run.chain
    assert chain.time_out is not None
    landing, ok = _time_targets(chain.outer_time, chain.time_out)
    n, lanes, out_time, packet = values.shape
    total = np.zeros((n, lanes, chain.time_out.size, packet), dtype=work)
    total_mask = np.zeros(total.shape, dtype=np.uint8)
    for t in range(out_time):
        if ok[t]:
            u = int(landing[t])
            total[:, :, u, :] += values[:, :, t, :]
            total_mask[:, :, u, :] |= mask[:, :, t, :]
    reduced = chain.time_params.reduced if chain.time_params is not None else ()
    note = f"sequential accumulation over {out_time} Time flits; reduced axes: {', '.join(reduced) or 'none'}"
    return total, total_mask, note


def _lane_folder(run: _Run, values: Array, mask: MaskArray) -> tuple[Array, MaskArray, str]:
    chain = run.chain
    assert chain.lane_time is not None and chain.lane_packet is not None
    source, target = chain.part(Stage.CONTRACT_TIME), chain.part(Stage.CONTRACT_LANE)
    cells = plan(target)
    position, ok = read(source, dict(cells.coords), cells.size)
    ok &= cells.live
    n = values.shape[0]
    flat, flat_mask = values.reshape(n, -1), mask.reshape(n, -1)
    out = np.where(ok, flat[:, position], 0).astype(values.dtype)
    out_mask = np.where(ok, flat_mask[:, position], 0).astype(np.uint8)
    shape = (n, chain.lane_time.size, chain.lane_packet.size)
    note = f"{chain.mode.value if chain.mode is not None else ''} relayout by logical index"
    return out.reshape(shape), out_mask.reshape(shape), note


def _simulate(chain: Chain, checking: bool = True) -> tuple[list[StageBuffer], Array]:
    run = _Run(chain, checking)
    acc_dtype = accumulator_dtype(chain.acc)
    work: type[np.generic] = np.float32 if chain.acc == "f32" else np.int64

    stream, stream_mask = run.layout(chain.stream, [chain.time, chain.packet], STREAM_POISON)
    run.record("collect", pairs([chain.time, chain.packet]), ("Spatial", "Time", "Packet"), stream, stream_mask,
               f"{chain.stream.dtype} stream, Top padding poisoned", check=False)
    trf, trf_mask = run.layout(chain.weight, [chain.lane, chain.element], TRF_POISON)
    trf = trf.reshape(trf.shape[0], chain.lane.size, chain.element.size)
    run.record(Stage.TO_TRF, pairs([chain.lane, chain.element]), ("Spatial", "Lane", "Element"), trf, trf_mask,
               f"{chain.weight.dtype} weights, Top padding poisoned", check=False)

    dims = ("Spatial", "Lane", "OutTime", "OutPacket")
    pre = chain.part(Stage.CONTRACT_OUTER)
    adapted, adapted_mask, note = _stream_adapter(run, stream, stream_mask)
    run.record("stream_adapter", pre, dims, adapted, adapted_mask, note, check=False)
    sequenced, sequenced_mask, note = _trf_sequencer(run, trf, trf_mask)
    run.record("trf_sequencer", pre, dims, sequenced, sequenced_mask, note, check=False)

    lhs = widen(adapted, chain.stream.dtype).astype(work)
    rhs = widen(sequenced, chain.weight.dtype).astype(work)
    product = lhs * rhs
    mask = adapted_mask | sequenced_mask
    shown = product if chain.acc == "f32" else _wrap_i32(product)
    run.record(Stage.CONTRACT_OUTER, pre, dims, shown, mask, f"widened to {chain.acc}, multiplied cell by cell")
    values: Array = product

    if chain.packet_out is not None:
        values, mask, note = _packet_reducer(run, values, mask)
        if chain.acc == "i32":
            values = _wrap_i32(values).astype(work)
        run.record(Stage.CONTRACT_PACKET, chain.part(Stage.CONTRACT_PACKET), dims, values, mask, note)
    if chain.time_out is not None:
        values, mask, note = _time_reducer(run, values, mask, work)
        if chain.acc == "i32":
            values = _wrap_i32(values).astype(work)
        run.record(Stage.CONTRACT_TIME, chain.part(Stage.CONTRACT_TIME), dims, values, mask, note)
    if chain.lane_time is not None:
        values, mask, note = _lane_folder(run, values, mask)
        run.record(Stage.CONTRACT_LANE, chain.part(Stage.CONTRACT_LANE), ("Spatial", "OutTime", "OutPacket"), values,
                   mask, note)

    last = run.buffers[-1]
    rows = values.reshape(values.shape[0], -1)
    rows = rows.astype(acc_dtype) if chain.acc == "f32" else _wrap_i32(rows)
    full = np.zeros((run.prefix.size, rows.shape[1]), dtype=acc_dtype)
    full[run.spatial] = np.where(run.live(last.part, (rows.shape[1],)), rows, 0)
    return run.buffers, full.reshape(-1)


def trace(chain: Chain, check: bool = True) -> list[StageBuffer]:
    """Every stage's buffer, in pipeline order.

    With ``check`` (the default) the first live cell fed by poison raises ``UndefinedPadding``;
    without it every stage still runs, and the ``poison`` masks show where padding went.
    """
    return _simulate(chain, check)[0]


def macs(chain: Chain) -> int:
    """Multiplications the simulator performs: live spatial positions x Lane x OutTime x OutPacket."""
    spatial = int(np.count_nonzero(plan(chain.prefix).live))
    return spatial * chain.lane.size * chain.outer_time.size * chain.outer_packet.size


class SimulateEvaluator:
    """Stage-faithful evaluation over physical buffers (slow; catches reliance on Top padding)."""

    name = "simulate"

    def run(self, chain: Chain) -> Array:
        return _simulate(chain)[1]

    def logical(self, chain: Chain) -> Array:
        mapping = chain.result_mapping()
        return to_terms(self.run(chain), mapping, logical_terms(mapping))
