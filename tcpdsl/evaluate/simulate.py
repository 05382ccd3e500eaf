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

Widening is elementwise, so both operands are widened before the Stream Adapter broadcasts them and
the TRF Sequencer reads them: the Multiplier's product is one sequencer read and one broadcast
multiply (:mod:`tcpdsl.evaluate.hardware` models each unit). :func:`trace` also keeps every
stage's buffer, the operands as the adapter and the sequencer emit them in their storage dtype;
:class:`SimulateEvaluator` keeps no buffer it does not need, and runs the same checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Digit, Mapping, logical_terms, pairs
from tcpdsl.errors import LayoutError
from tcpdsl.evaluate.fold_plan import accumulator_dtype
from tcpdsl.evaluate.hardware import (
    STREAM_POISON,
    TRF_POISON,
    Adapter,
    MaskArray,
    clean,
    is_clean,
    lane_folder,
    packet_reducer,
    stream_adapter,
    time_reducer,
    trf_sequencer,
)
from tcpdsl.evaluate import vector_simulate
from tcpdsl.evaluate.memory import Refusing
from tcpdsl.evaluate.stream import simulated, simulated_logical
from tcpdsl.numerics.chain import Chain, Operand
from tcpdsl.numerics.flow import Buffer, Flow, Scattered
from tcpdsl.numerics.vector_chain import VectorChain
from tcpdsl.numerics.moves import window, write_window
from tcpdsl.numerics.placement import plan
from tcpdsl.numerics.transfer import to_physical_rows, to_terms
from tcpdsl.numerics.scalars import cast, poison, widen
from tcpdsl.numerics.scatter_ops import scattered_values
from tcpdsl.verify.stage import Stage

Array = npt.NDArray[Any]
BoolArray = npt.NDArray[np.bool_]

SIMULATE_STAGE: Final = "simulate"
_DIMS: Final = ("Spatial", "Lane", "OutTime", "OutPacket")


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
    """The state of one simulation: spatial selection, and the buffers so far when ``keep``."""

    def __init__(self, chain: Chain, checking: bool, keep: bool) -> None:
        self.chain = chain
        self.checking = checking
        self.keep = keep
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
        # Every row has the same padding, so the first says whether there is any.
        if undefined.size == 0 or not undefined[0].any():
            return values.reshape(shape), clean(shape)
        return values.reshape(shape), (undefined * bit).astype(np.uint8).reshape(shape)

    def live(self, inner: Mapping, shape: tuple[int, ...]) -> BoolArray:
        """Live cells of a stage buffer: every selected spatial position times the live cells of
        the stage's own part of the mapping (no digit spans the spatial prefix and that part)."""
        return np.broadcast_to(plan(inner).live.reshape(shape), (self.spatial.size, *shape))

    def record(self, stage: str, inner: Mapping, dims: tuple[str, ...], values: Array | None, mask: MaskArray,
               note: str, check: bool = True) -> None:
        """Check a stage's output for poison in live cells and, when keeping buffers, keep it
        (``values`` may be None when not keeping)."""
        if check and self.checking:
            self.check(stage, inner, mask)
        if self.keep and values is not None:
            self.buffers.append(StageBuffer(stage, pairs([self.prefix, inner]), inner, dims, values, mask, note))

    def check(self, stage: str, inner: Mapping, mask: MaskArray) -> None:
        if is_clean(mask):
            return
        bad = self.live(inner, mask.shape[1:]) & (mask != 0)
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
            f"{int(np.count_nonzero(bad))} live cell(s) of {pairs([self.prefix, inner])} depend on undefined (Top) "
            f"padding of {' and '.join(sources)}; the hardware multiplies and adds whatever the padded cells hold",
            hint="zero the padding (#{0}) or keep padded cells out of the reduced digits")


def _wrap_i32(values: Array) -> Array:
    return cast(values, "i32")


def _multiply(run: _Run, stream: Array, stream_mask: MaskArray, trf: Array, trf_mask: MaskArray,
              work: type[np.generic]) -> tuple[Adapter, Array, MaskArray]:
    """The Stream Adapter, the TRF Sequencer and the Multiplier: every (Lane, OutTime, OutPacket)
    cell widened to ``work`` and multiplied, in the work layout (see :mod:`tcpdsl.evaluate.hardware`).

    The product is the sequencer's read of the widened TRF, multiplied in place by the widened
    stream broadcast over lanes and TimeBroadcast copies. The two operand buffers, in their storage
    dtype and the stage layout, are built only when keeping buffers.
    """
    chain = run.chain
    adapter, sequencer = stream_adapter(chain, run.spatial.size), trf_sequencer(chain)
    pre = chain.part(Stage.CONTRACT_OUTER)
    weight_poison = poison(chain.weight.dtype)
    if run.keep:
        cells = sequencer.cells(adapter, work=False)
        run.record("stream_adapter", pre, _DIMS, adapter.spread(stream), adapter.spread_mask(stream_mask),
                   adapter.note, check=False)
        run.record("trf_sequencer", pre, _DIMS, cells.read(trf, weight_poison), cells.read_mask(trf_mask),
                   sequencer.note, check=False)
    cells = sequencer.cells(adapter, work=True)
    wide_poison = widen(np.array([weight_poison]), chain.weight.dtype).astype(work)[0]
    product = cells.read(widen(trf, chain.weight.dtype).astype(work), wide_poison)
    np.multiply(adapter.source(widen(stream, chain.stream.dtype).astype(work)), product, out=product)
    read_mask = cells.read_mask(trf_mask)
    if is_clean(stream_mask) and is_clean(read_mask):
        mask = clean(adapter.work_shape)
    else:
        mask = np.broadcast_to(np.bitwise_or(adapter.source(stream_mask), read_mask), adapter.work_shape)
    return adapter, product, mask


def _simulate(chain: Chain, checking: bool = True, keep: bool = True) -> tuple[list[StageBuffer], Array]:
    """Every stage, once the arrays they build are known to fit (docs/runtime.md §3.11)."""
    work_bytes = 4 if chain.acc == "f32" else 8
    cells = macs(chain)
    what = lambda: (f"the Multiplier's {cells} cells ({_positions(chain)} live [Chip, Cluster, Slice] positions x Lane "
            f"{chain.lane.size} x OutTime {chain.outer_time.size} x OutPacket {chain.outer_packet.size}) "
            f"in {'float32' if chain.acc == 'f32' else 'int64'}, {_COPIES[keep]} times over")
    with Refusing(Stage.CONTRACT_OUTER, what, _COPIES[keep] * cells * work_bytes, "simulate"):
        return _stages(chain, checking, keep)


# The product and one reduced or reordered copy of it; a trace also keeps the adapter's and the
# sequencer's output over the same cells.
_COPIES: Final = {False: 2, True: 4}


def _stages(chain: Chain, checking: bool, keep: bool) -> tuple[list[StageBuffer], Array]:
    run = _Run(chain, checking, keep)
    acc_dtype = accumulator_dtype(chain.acc)
    work: type[np.generic] = np.float32 if chain.acc == "f32" else np.int64

    stream, stream_mask = run.layout(chain.stream, [chain.time, chain.packet], STREAM_POISON)
    run.record("collect", pairs([chain.time, chain.packet]), ("Spatial", "Time", "Packet"), stream, stream_mask,
               f"{chain.stream.dtype} stream, Top padding poisoned", check=False)
    trf, trf_mask = run.layout(chain.weight, [chain.lane, chain.element], TRF_POISON)
    trf = trf.reshape(trf.shape[0], chain.lane.size, chain.element.size)
    trf_mask = trf_mask.reshape(trf.shape)
    run.record(Stage.TO_TRF, pairs([chain.lane, chain.element]), ("Spatial", "Lane", "Element"), trf, trf_mask,
               f"{chain.weight.dtype} weights, Top padding poisoned", check=False)

    adapter, product, product_mask = _multiply(run, stream, stream_mask, trf, trf_mask, work)
    last = chain.part(Stage.CONTRACT_OUTER)
    mask = adapter.standard(product_mask)
    values: Array | None = None
    if keep or chain.packet_out is None:
        values = adapter.standard(product)
    shown = None if values is None else values if chain.acc == "f32" else _wrap_i32(values)
    run.record(Stage.CONTRACT_OUTER, last, _DIMS, shown, mask, f"widened to {chain.acc}, multiplied cell by cell")

    if chain.packet_out is not None:
        reduced, reduced_mask, note = packet_reducer(chain, product, product_mask)
        values, mask = adapter.standard(reduced), adapter.standard(reduced_mask)
        if chain.acc == "i32":
            values = _wrap_i32(values).astype(work)
        last = chain.part(Stage.CONTRACT_PACKET)
        run.record(Stage.CONTRACT_PACKET, last, _DIMS, values, mask, note)
    assert values is not None
    if chain.time_out is not None:
        values, mask, note = time_reducer(chain, values, mask, work)
        if chain.acc == "i32":
            values = _wrap_i32(values).astype(work)
        last = chain.part(Stage.CONTRACT_TIME)
        run.record(Stage.CONTRACT_TIME, last, _DIMS, values, mask, note)
    if chain.lane_time is not None:
        values, mask, note = lane_folder(chain, values, mask)
        last = chain.part(Stage.CONTRACT_LANE)
        run.record(Stage.CONTRACT_LANE, last, ("Spatial", "OutTime", "OutPacket"), values, mask, note)

    rows = values.reshape(values.shape[0], -1)
    rows = rows.astype(acc_dtype) if chain.acc == "f32" else _wrap_i32(rows)
    full = np.zeros((run.prefix.size, rows.shape[1]), dtype=acc_dtype)
    full[run.spatial] = np.where(run.live(last, (rows.shape[1],)), rows, 0)
    return run.buffers, full.reshape(-1)


def trace(chain: Chain, check: bool = True) -> list[StageBuffer]:
    """Every stage's buffer, in pipeline order.

    With ``check`` (the default) the first live cell fed by poison raises ``UndefinedPadding``;
    without it every stage still runs, and the ``poison`` masks show where padding went.
    """
    return _simulate(chain, check)[0]


def macs(chain: Chain) -> int:
    """Multiplications the simulator performs: live spatial positions x Lane x OutTime x OutPacket."""
    return _positions(chain) * chain.lane.size * chain.outer_time.size * chain.outer_packet.size


def _positions(chain: Chain) -> int:
    return int(np.count_nonzero(plan(chain.prefix).live))


class SimulateEvaluator:
    """Stage-faithful evaluation over physical buffers (slow; catches reliance on Top padding)."""

    name = "simulate"

    def run(self, chain: Chain) -> Array:
        return _simulate(chain, keep=False)[1]

    def logical(self, chain: Chain) -> Array:
        mapping = chain.result_mapping()
        return to_terms(self.run(chain), mapping, logical_terms(mapping))

    def flow_logical(self, flow: Flow) -> Array:
        """A stream's values over its root's terms, read back from the simulated buffer (docs/runtime.md §4)."""
        return simulated_logical(flow, self.name)

    def flow_buffer(self, flow: Flow) -> Buffer:
        """A stream's physical buffer and poison mask, moved through every step."""
        return simulated(flow, self.name)

    def flow_read(self, flow: Flow, mapping: Mapping, terms: tuple[Digit, ...]) -> Array:
        """A stream's simulated buffer read through ``mapping`` over ``terms`` (``reshape``)."""
        return to_terms(simulated(flow, self.name)[0], mapping, terms)

    def flow_window(self, parent: Flow, element: int, offset: int, mapping: Mapping, terms: tuple[Digit, ...],
                    dtype: str) -> Array:
        """A window of ``parent``'s simulated buffer (its holes poisoned), read back over ``terms``."""
        return to_terms(window(simulated(parent, self.name), element, offset, mapping, dtype)[0], mapping, terms)

    def flow_written(self, parent: Flow, written: Flow, element: int, offset: int) -> Array:
        """``parent``'s simulated buffer after ``written``'s is written into its window, read back."""
        after = write_window(simulated(parent, self.name), simulated(written, self.name), element, offset,
                             written.mapping)
        return to_terms(after[0], parent.mapping, parent.root.terms)

    def flow_scattered(self, source: Scattered) -> Array:
        """The scattered tensor's values: its simulated buffer and the data's read back, the rows set (a DMA
        moves cells and changes none; a live cell of poison is reported where the data's flow made it)."""
        return scattered_values(source, lambda flow: simulated_logical(flow, self.name))[0]

    def flow_physical(self, flow: Flow) -> Array:
        """A stream's physical buffer, moved through every step; Top padding holds poison."""
        return simulated(flow, self.name)[0]

    def vector_logical(self, chain: VectorChain) -> Array:
        """A vector pass's simulated buffer read back over its last layout's logical terms (docs/runtime.md §3.9)."""
        return vector_simulate.logical(chain, self.name)

    def vector_physical(self, chain: VectorChain) -> Array:
        """A vector pass's buffer, run stage by stage; padding holds what the ops made of it."""
        return vector_simulate.physical(chain, self.name)
