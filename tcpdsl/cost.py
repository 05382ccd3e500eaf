"""A first-order cycle and utilisation model of one slice of the contraction engine.

The model is deliberately small: it counts packets, not instructions. docs/cost-model.md lists
every constant with the part of the hardware description it comes from (the performance notes on
the Outer stage and the Packet Reducer) and marks the two that are assumptions. Where the
description is silent the model says so in a comment and in the stage notes, so an estimate never
looks more certain than it is.

Chip, Cluster and Slice run in parallel, so every figure is per slice. The stages form a pipeline:
the kernel takes as long as its slowest stage streams, plus the latency each stage adds before its
first output (the adder tree) or after its last input (the accumulator drain).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from functools import lru_cache
from typing import Final, Protocol

from tcpdsl.algebra import Index, Mapping
from tcpdsl.verify.constants import (
    ACCUMULATOR_CAPACITY_ELEMENTS,
    BITS_PER_BYTE,
    CONTRACT_LANE_OUT_PACKET_ELEMENTS,
    FLIT_BYTES,
    MAX_LANES,
    OUTER_PACKET_BYTES,
    SLICES_PER_PE,
)
from tcpdsl.verify.dtypes import bits_of
from tcpdsl.verify.params import LaneParams, OuterParams, PacketParams, TimeParams
from tcpdsl.verify.switch import SwitchParams
from tcpdsl.verify.transpose import TransposeParams
from tcpdsl.verify.commit import CommitParams
from tcpdsl.verify.fetch import SUB_READ_BYTES, FetchParams
from tcpdsl.verify.dma import DmaParams
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.inter_reduce import InterReduceParams
from tcpdsl.verify.intra_reduce import IntraReduceParams
from tcpdsl.verify.vector_pass import VectorState
from tcpdsl.verify.vector_way import HALF_FLIT, ONE_FLIT

# The collect side delivers at most one 32-byte flit per cycle, and that fetch rate caps the
# Stream Adapter (docs/cost-model.md, Constants).
FETCH_BYTES_PER_CYCLE: Final = FLIT_BYTES

# The Multiplier always consumes 64-byte packets; a PackSize 1 stream fills only half of each and
# the other half is zeros.
HARDWARE_PACKET_BYTES: Final = OUTER_PACKET_BYTES

# The packet rate (docs/cost-model.md, "The packet rate"): the TRF Sequencer, the Multiplier and
# both reducers take one packet per lane per cycle; only the stream side is slower when it must
# fetch, one 32-byte flit a cycle. So a PackSize 2 packet waits two cycles for its two flits, a
# PackSize 1 packet one, and a TimeBroadcast repeat none (it reuses the packet fetched).
PACKETS_PER_CYCLE: Final = 1
FLITS_PER_CYCLE: Final = 1

# The adder tree's latency grows with its depth over one 64-byte packet: 5 cycles for 16-bit
# elements, 6 for 8-bit and 7 for 4-bit, keyed here by wire bits.
TREE_LATENCY_CYCLES: Final[dict[int, int]] = {4: 7, 8: 6, 16: 5}

# With fewer than 8 active lanes the idle lanes' trees do nothing, so throughput scales with
# Lane::SIZE / 8 (lanes are 1, 2, 4 or 8: docs/stage-rules.md §2.1).
LANES: Final = MAX_LANES

# The Lane Folder emits 8-element packets, one flit of i32/f32 (docs/stage-rules.md §2.1).
# Draining one such flit per cycle is a model assumption: the hardware description gives no Lane
# Folder timing.
DRAIN_ELEMENTS_PER_CYCLE: Final = CONTRACT_LANE_OUT_PACKET_ELEMENTS


@dataclass(frozen=True)
class StageCost:
    """The estimate for one stage of one slice.

    ``cycles`` is how long the stage streams its input; ``latency`` the cycles it adds to the
    critical path on top of that (pipeline fill or drain). ``mac_utilisation`` is the fraction of
    the stage's arithmetic units doing useful work while it streams (None for stages without any).
    """

    stage: Stage
    cycles: int
    latency: int
    mac_utilisation: float | None
    notes: tuple[str, ...]


@dataclass(frozen=True)
class KernelCost:
    """The estimate for a whole contraction chain (per slice; all slices run in parallel).

    ``total_cycles`` is the slowest stage's streaming time plus every stage's latency.
    ``mac_utilisation`` is the Multiplier's steady-state use; ``average_utilisation`` spreads the
    same useful work over ``total_cycles``. The accumulator figures are None until ``contract_lane``.
    """

    stages: tuple[StageCost, ...]
    total_cycles: int
    mac_utilisation: float
    average_utilisation: float
    useful_macs: int
    accumulator_cells: int | None
    accumulator_use: float | None


class _OperandLike(Protocol):
    @property
    def dtype(self) -> str: ...


class ChainLike(Protocol):
    """The parts of a contraction chain the model reads (``tcpdsl.numerics.chain.Chain`` has them)."""

    @property
    def stream(self) -> _OperandLike: ...
    @property
    def lane(self) -> Mapping: ...
    @property
    def time(self) -> Mapping: ...
    @property
    def outer_time(self) -> Mapping: ...
    @property
    def outer_packet(self) -> Mapping: ...
    @property
    def outer(self) -> OuterParams: ...
    @property
    def packet_out(self) -> Mapping | None: ...
    @property
    def packet_params(self) -> PacketParams | None: ...
    @property
    def time_out(self) -> Mapping | None: ...
    @property
    def time_params(self) -> TimeParams | None: ...
    @property
    def lane_time(self) -> Mapping | None: ...
    @property
    def lane_params(self) -> LaneParams | None: ...


@lru_cache(maxsize=4096)
def live_cells(mapping: Mapping) -> int:
    """The number of live (non-padding) cells; used on packets and lanes, which are small."""
    return sum(isinstance(mapping.cell(i), Index) for i in range(mapping.size))


def macs_per_lane(dtype: str) -> int:
    """Multipliers per lane: the elements of one 64 B hardware packet (bf16 32, i8/f8 64, i4 128)."""
    return HARDWARE_PACKET_BYTES * BITS_PER_BYTE // bits_of(dtype, "cost")


def tree_latency(dtype: str) -> int:
    """Cycles from a packet entering the Packet Reducer to its sum leaving (5/6/7 for bf16, i8/f8, i4)."""
    return TREE_LATENCY_CYCLES[bits_of(dtype, "cost")]


def outer_cost(dtype: str, lane: Mapping, time: Mapping, out_time: Mapping, out_packet: Mapping, params: OuterParams) -> StageCost:
    """Stream Adapter, TRF Sequencer and Multiplier: one packet per lane a cycle, but no faster than
    the stream's flits arrive (one a cycle)."""
    packets = out_time.size
    fill = live_cells(out_packet) / macs_per_lane(dtype)
    lanes = live_cells(lane) / LANES
    notes = [
        f"PackSize {params.pack_size}: {params.pack_size * FLIT_BYTES} B of each {HARDWARE_PACKET_BYTES} B packet carry data",
        f"LaneBroadcast {params.lane_broadcast} of {LANES} lanes",
        f"TimeBroadcast {params.time_broadcast}: each fetched packet feeds {params.time_broadcast.size} "
        f"multiplier packet{_s(params.time_broadcast.size)}",
        f"fetch {time.size} flits of {FETCH_BYTES_PER_CYCLE} B for {packets} packets per lane",
        f"TRF ReadSize {params.read_size} ({'wide' if params.wide_read else 'narrow'} read), "
        f"PacketBroadcast {params.packet_broadcast}",
    ]
    if params.pack_size == 1:
        notes.append("PackSize 1 multiplies a zero half: half the MAC throughput of PackSize 2")
    cycles = max(-(-packets // PACKETS_PER_CYCLE), -(-time.size // FLITS_PER_CYCLE))
    if cycles > packets:
        notes.append(f"fetch-bound: {time.size} flits at {FLITS_PER_CYCLE} a cycle")
    return StageCost(Stage.CONTRACT_OUTER, cycles, 0, fill * lanes, tuple(notes))


def packet_cost(dtype: str, lane: Mapping, out_time: Mapping, params: PacketParams) -> StageCost:
    """Packet Reducer: fully pipelined adder trees; the tree depth is latency, not throughput."""
    notes = (
        f"tree depth {params.depth}: sums the innermost {2 ** params.depth} cells of each packet",
        f"ReducePacket {params.reduce_packet}, output {params.output}",
        f"adder-tree latency {tree_latency(dtype)} cycles ({dtype})",
    )
    cycles = -(-out_time.size // PACKETS_PER_CYCLE)
    return StageCost(Stage.CONTRACT_PACKET, cycles, tree_latency(dtype), live_cells(lane) / LANES, notes)


def time_cost(out_time: Mapping, time_out: Mapping, params: TimeParams) -> StageCost:
    """Time Reducer: accumulates each reduced packet into its accumulator slot as it arrives.

    The hardware description gives no Time Reducer latency; the model adds none (accumulation overlaps the stream).
    """
    per_cell = out_time.size // max(1, time_out.size)
    reduced = ", ".join(params.reduced) if params.reduced else "nothing"
    notes = (
        f"reduces {reduced}: {per_cell} packet{_s(per_cell)} accumulate into each of {time_out.size} Time "
        f"slot{_s(time_out.size)}",
    )
    return StageCost(Stage.CONTRACT_TIME, -(-out_time.size // PACKETS_PER_CYCLE), 0, None, notes)


def lane_cost(lane_time: Mapping, params: LaneParams) -> StageCost:
    """Lane Folder: streams out 8-element packets; the last accumulator window drains after the input."""
    drain = -(-params.cells // DRAIN_ELEMENTS_PER_CYCLE)
    notes = (
        f"{params.mode.value}: InnerTime {params.inner_time}, padded Lane {params.padded_lane} x padded Packet "
        f"{params.padded_packet}",
        f"accumulator {params.cells} of {ACCUMULATOR_CAPACITY_ELEMENTS} cells "
        f"({100 * params.cells / ACCUMULATOR_CAPACITY_ELEMENTS:.1f}%)",
        f"emits {lane_time.size} output packets; drains {drain} after the last input (assumed 1 flit/cycle)",
    )
    return StageCost(Stage.CONTRACT_LANE, lane_time.size, drain, None, notes)


def combine(stages: tuple[StageCost, ...], useful_macs: int, lane_params: LaneParams | None) -> KernelCost:
    """Pipeline the stages: the slowest streaming time plus every stage's latency."""
    total = max(s.cycles for s in stages) + sum(s.latency for s in stages)
    outer = stages[0]
    steady = outer.mac_utilisation or 0.0
    average = steady * outer.cycles / total if total else 0.0
    cells = lane_params.cells if lane_params is not None else None
    use = cells / ACCUMULATOR_CAPACITY_ELEMENTS if cells is not None else None
    return KernelCost(stages, total, steady, average, useful_macs, cells, use)


def estimate(
    dtype: str,
    lane: Mapping,
    time: Mapping,
    outer_time: Mapping,
    outer_packet: Mapping,
    outer: OuterParams,
    *,
    packet_params: PacketParams | None = None,
    time_out: Mapping | None = None,
    time_params: TimeParams | None = None,
    lane_time: Mapping | None = None,
    lane_params: LaneParams | None = None,
) -> KernelCost:
    """The estimate of a chain given stage by stage; later stages are optional, in pipeline order.

    ``time`` is the collect stream's Time, ``outer_time``/``outer_packet`` the OutTime and OutPacket
    of ``contract_outer``, ``time_out`` that of ``contract_time`` and ``lane_time`` that of
    ``contract_lane``; the params are what the verifiers returned for those stages.
    """
    stages = [outer_cost(dtype, lane, time, outer_time, outer_packet, outer)]
    if packet_params is not None:
        stages.append(packet_cost(dtype, lane, outer_time, packet_params))
    if time_params is not None and time_out is not None:
        stages.append(time_cost(outer_time, time_out, time_params))
    if lane_params is not None and lane_time is not None:
        stages.append(lane_cost(lane_time, lane_params))
    useful = live_cells(outer_packet) * live_cells(lane) * outer_time.size
    return combine(tuple(stages), useful, lane_params)


def chain_cost(chain: ChainLike) -> KernelCost:
    """The estimate of every stage present in ``chain``, and their total."""
    return estimate(
        chain.stream.dtype,
        chain.lane,
        chain.time,
        chain.outer_time,
        chain.outer_packet,
        chain.outer,
        packet_params=chain.packet_params,
        time_out=chain.time_out,
        time_params=chain.time_params,
        lane_time=chain.lane_time,
        lane_params=chain.lane_params,
    )


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def describe(cost: KernelCost) -> str:
    """A short multi-line text of the estimate (used by ``.explain()`` and the command line)."""
    lines = []
    for stage in cost.stages:
        util = "" if stage.mac_utilisation is None else f", utilisation {100 * stage.mac_utilisation:.1f}%"
        lines.append(f"{stage.stage}: {stage.cycles} cycles + {stage.latency} latency{util}")
        lines += [f"    {note}" for note in stage.notes]
    lines.append(
        f"total: {cost.total_cycles} cycles per slice, MAC utilisation {100 * cost.mac_utilisation:.1f}% "
        f"(steady) / {100 * cost.average_utilisation:.1f}% (average)"
    )
    if cost.accumulator_use is not None:
        lines.append(f"accumulator: {cost.accumulator_cells} cells ({100 * cost.accumulator_use:.1f}%)")
    return "\n".join(lines)


# --- The vector engine (docs/cost-model.md, "The vector engine") ---------------------------------
# A pass is a pipeline too: its Way8 stages (Logic, Fxp, Clip, the conversions) take 8 elements a
# cycle, its Way4 stages (Fp, the intra-slice reduce, FpDiv) 4. A narrow split doubles Time, so the
# float path then streams twice as many cycles; a trim keeps Time and leaves half of each flit idle.
VE_WAY8_ELEMENTS_PER_CYCLE: Final = 8
VE_WAY4_ELEMENTS_PER_CYCLE: Final = 4
# Every ALU a pass uses adds one cycle before the first output.
VE_ALU_LATENCY_CYCLES: Final = 1
# The inter-slice reducer's tail is about one trip around the ring of its group. **Assumption:** one
# cycle per slice of the group (the book gives only O(r)).
VE_RING_CYCLES_PER_SLICE: Final = 1


@dataclass(frozen=True)
class VectorPassCost:
    """One vector pass on one slice: ``cycles`` streaming and ``latency`` before its first output."""

    cycles: int
    latency: int
    notes: tuple[str, ...]


def vector_pass_cost(
    state: VectorState,
    *,
    way8_time: Mapping,
    way4_time: Mapping | None = None,
    reduce: IntraReduceParams | None = None,
    inter: InterReduceParams | None = None,
) -> VectorPassCost:
    """The pass's streaming cycles (its slower way) and its latency: the ALUs it used, the intra-slice
    reduce's wait for its reduced time steps, and the inter-slice reducer's ring."""
    # Elements streamed over the rate: a Way8 step carries a flit of 8, a Way4 step half of one.
    way8 = -(-way8_time.size * ONE_FLIT // VE_WAY8_ELEMENTS_PER_CYCLE)
    way4 = 0 if way4_time is None else -(-way4_time.size * HALF_FLIT // VE_WAY4_ELEMENTS_PER_CYCLE)
    alus = len(state.alus) * VE_ALU_LATENCY_CYCLES
    notes = [f"{len(state.alus)} ALU{_s(len(state.alus))}: {', '.join(sorted(state.alus)) or 'none'}"]
    latency = alus
    if reduce is not None:
        latency += reduce.time_steps
        notes.append(f"intra-slice reduce waits {reduce.time_steps} flit cycle{_s(reduce.time_steps)} "
                     f"({reduce.inner_time} accumulator slot{_s(reduce.inner_time)})")
    if inter is not None:
        ring = inter.ratio * VE_RING_CYCLES_PER_SLICE
        latency += ring
        notes.append(f"inter-slice reduce over {inter.ratio} slice{_s(inter.ratio)}: {ring} cycles of ring")
    if way4 > way8:
        notes.append(f"the Way4 float path streams {way4} cycles against {way8} at Way8")
    return VectorPassCost(cycles=max(way8, way4), latency=latency, notes=tuple(notes))
# -- switch and transpose engines (docs/cost-model.md "Switch and transpose") --------------------


def switch_cycles(params: SwitchParams) -> int:
    """Every sub-ring passes each packet once round its ``ring_size`` routers, one flit a cycle; the
    sub-rings run in parallel."""
    return params.ring_size * params.time_steps * params.flits_per_packet


def transpose_cycles(params: TransposeParams) -> int:
    """Each of the ``iterations`` fills the matrix with ``in_flits`` flits and drains ``out_rows`` rows.
    With two 16-column buffers the fill of one iteration overlaps the drain of the last."""
    in_flits = params.in_rows * params.in_cols // params.valid_size
    n = params.iterations
    if params.double_buffered:
        return in_flits + (n - 1) * max(in_flits, params.out_rows) + params.out_rows
    return n * (in_flits + params.out_rows)

# ---------------------------------------------------------------------------------------------------
# Memory moves: fetch, commit and DMA (docs/cost-model.md §4)
# ---------------------------------------------------------------------------------------------------

# Every DMA command pays a fixed start-up before data moves (docs/cost-model.md §4).
DMA_STARTUP_CYCLES: Final = 500
# A DMA packet is split into requests of at most 256 bytes; an engine issues one request per cycle.
DMA_REQUEST_BYTES: Final = 256


def fetch_cycles(params: FetchParams) -> int:
    """One read of ``read_size`` elements per cycle: ``|Time| x ceil(|Packet| / read_size)``."""
    return params.time_size * -(-params.packet_size // params.read_size)


def commit_cycles(params: CommitParams) -> int:
    """One write of ``write_bytes`` per cycle: ``|Time| x ceil(valid bytes / write_bytes)``."""
    return params.time_size * -(-params.valid_bytes // params.write_bytes)


def dma_requests(params: DmaParams) -> int:
    """Requests on one side: each shared run of ``tail_bytes`` takes ``ceil(tail / 256)`` requests."""
    run = params.tail_bytes
    return -(-params.bytes // run) * -(-run // DMA_REQUEST_BYTES)


def dma_cycles(params: DmaParams) -> int:
    """Start-up plus requests: reads and writes pipeline across tiers and serialise within one tier."""
    requests = dma_requests(params)
    return DMA_STARTUP_CYCLES + (2 * requests if params.same_tier else requests)
# ---------------------------------------------------------------------------------------------------
# The whole kernel: load, stream, contract, drain, commit (docs/cost-model.md "The whole kernel")
# ---------------------------------------------------------------------------------------------------

# Each processing element has its own DMA engine; a kernel's weights move over the engines of the
# PEs it occupies, one command each, side by side.
SLICES_PER_DMA_ENGINE: Final = SLICES_PER_PE
# The chip's HBM delivers 1.5 TB/s at a 1.5 GHz clock: 1024 bytes a cycle however many engines pull.
HBM_BYTES_PER_CYCLE: Final = 1024
# A result packet of the Lane Folder: 8 accumulators of 4 bytes, one main-context write.
RESULT_PACKET_BYTES: Final = CONTRACT_LANE_OUT_PACKET_ELEMENTS * 4


@dataclass(frozen=True)
class WholeKernelCost:
    """A whole kernel per slice: its weights loaded (DMA to DM, then the sub-context fetch into the
    TRF), any moves of its inputs, then the contraction pipeline with the commit of its results.

    ``breakdown`` gives each engine's busy cycles; ``total_cycles`` is the load, then the moves, then
    the pipeline (its slowest streaming stage, the commit included, plus every latency).
    """

    contraction: KernelCost
    breakdown: tuple[tuple[str, int], ...]
    total_cycles: int
    trf_bytes: int


@lru_cache(maxsize=4096)  # read for every branch of a layout search: each reads every cell of Slice
def dma_engines(chip: Mapping, cluster: Mapping, slice_: Mapping) -> int:
    """The DMA engines a grid can use: one per PE holding a live slice (live chips x live clusters
    x the 64-slice blocks of Slice with a live cell)."""
    blocks = {i // SLICES_PER_DMA_ENGINE for i in range(slice_.size) if isinstance(slice_.cell(i), Index)}
    return live_cells(chip) * live_cells(cluster) * len(blocks)


def weight_dma_cycles(trf_bytes: int, slices: int, engines: int, chips: int = 1) -> int:
    """HBM to DM for ``slices`` slices of ``trf_bytes`` each over ``chips`` chips, one command on
    each of ``engines`` DMA engines, no faster than each chip's HBM delivers."""
    if trf_bytes == 0:
        return 0
    total = trf_bytes * slices
    share = -(-total // engines)
    run = min(share, DMA_REQUEST_BYTES)
    command = dma_cycles(DmaParams(tail=run, tail_bytes=run, entries=(), bytes=share, same_tier=False))
    return max(command, DMA_STARTUP_CYCLES + -(-total // (chips * HBM_BYTES_PER_CYCLE)))


def trf_load_cycles(trf_bytes: int, dtype: str) -> int:
    """DM to TRF through the sub context's fetch, one ``SUB_READ_BYTES`` read a cycle."""
    bits = bits_of(dtype, "cost")
    read = SUB_READ_BYTES * BITS_PER_BYTE // bits
    cells = -(-trf_bytes * BITS_PER_BYTE // bits)
    reads = -(-cells // read)
    return fetch_cycles(FetchParams((), (), read, read, float(SUB_READ_BYTES), reads, read))


def result_commit_cycles(packets: int) -> int:
    """The Lane Folder's packets written to DM from the main context, one 32-byte write each."""
    return commit_cycles(CommitParams((), (), RESULT_PACKET_BYTES, RESULT_PACKET_BYTES, packets))


# A vector pass on a contraction's result in a whole kernel's breakdown: a stream charges a pass's
# cycles to its vector_final.
VECTOR_PASS: Final = str(Stage.VECTOR_FINAL)


def whole_kernel(
    contraction: KernelCost,
    *,
    weight_dtype: str,
    trf_bytes: int,
    slices: int,
    engines: int,
    chips: int,
    result_packets: int,
    moves: tuple[tuple[str, int], ...] = (),
    weights_from_hbm: bool = True,
    after: VectorPassCost | None = None,
) -> WholeKernelCost:
    """The whole kernel of a contraction whose slices each hold ``trf_bytes`` of weights, spread
    over ``slices`` slices of ``chips`` chips whose weights ``engines`` DMA engines move;
    ``moves`` are re-layouts of the inputs the kernel waits for, ``after`` a vector pass that takes
    the contraction's result (``whole_kernel_of``). Weights already in DM (``weights_from_hbm``
    False) are not moved from HBM."""
    dma = weight_dma_cycles(trf_bytes, slices, engines, chips) if weights_from_hbm else 0
    return whole_kernel_of(contraction, dma, trf_load_cycles(trf_bytes, weight_dtype),
                           result_commit_cycles(result_packets), trf_bytes, moves, after)


def whole_kernel_of(contraction: KernelCost, dma: int, load: int, commit: int, trf_bytes: int,
                    moves: tuple[tuple[str, int], ...] = (), after: VectorPassCost | None = None) -> WholeKernelCost:
    """The load (``dma`` then ``load``), the ``moves``, then the pipeline with the ``commit`` of its
    results streaming beside the Lane Folder. A vector pass ``after`` it starts once the pipeline has
    drained, as any stream from a contraction does (``stream_cost``), and its output is the kernel's
    result: there is then no Lane Folder commit (docs/cost-model.md, "The whole kernel")."""
    committed = () if after is not None else (("commit", commit),)
    streaming = max([*(c for _, c in committed), *(s.cycles for s in contraction.stages)])
    pipeline = streaming + sum(s.latency for s in contraction.stages)
    reduced = () if after is None else ((VECTOR_PASS, after.cycles + after.latency),)
    breakdown = (
        ("weight DMA", dma),
        ("TRF load", load),
        *moves,
        *((str(s.stage), s.cycles + s.latency) for s in contraction.stages),
        *reduced,
        *committed,
    )
    total = dma + load + sum(c for _, c in moves) + pipeline + sum(c for _, c in reduced)
    return WholeKernelCost(contraction, breakdown, total, trf_bytes)


class WholeChainLike(ChainLike, Protocol):
    """A contraction chain with its grid and its TRF operand (``tcpdsl.numerics.chain.Chain`` has them)."""

    @property
    def weight(self) -> _OperandLike: ...
    @property
    def element(self) -> Mapping: ...
    @property
    def chip(self) -> Mapping: ...
    @property
    def cluster(self) -> Mapping: ...
    @property
    def slice(self) -> Mapping: ...


def chain_trf_bytes(chain: WholeChainLike) -> int:
    """Each slice's TRF bytes: its live lanes times its Element (padding included: zeros are stored)."""
    cells = live_cells(chain.lane) * chain.element.size
    return -(-cells * bits_of(chain.weight.dtype, "cost") // BITS_PER_BYTE)


def chain_weight_load(chain: WholeChainLike) -> tuple[int, int]:
    """The weight DMA and the TRF load of a chain whose weights start in HBM: every live cell of
    Chip x Cluster x Slice is one slice, its weights moved by the DMA engines of the PEs it occupies."""
    trf_bytes, chips = chain_trf_bytes(chain), live_cells(chain.chip)
    slices = chips * live_cells(chain.cluster) * live_cells(chain.slice)
    engines = dma_engines(chain.chip, chain.cluster, chain.slice)
    return weight_dma_cycles(trf_bytes, slices, engines, chips), trf_load_cycles(trf_bytes, chain.weight.dtype)


def whole_chain_cost(chain: WholeChainLike) -> WholeKernelCost:
    """The whole kernel of a chain through ``contract_lane``: its weights loaded (``chain_weight_load``),
    the contraction, and the commit of its results."""
    assert chain.lane_time is not None, "the whole kernel is costed once contract_lane is called"
    contraction = chain_cost(chain)
    dma, load = chain_weight_load(chain)
    return whole_kernel_of(contraction, dma, load, result_commit_cycles(chain.lane_time.size), chain_trf_bytes(chain))


def dm_move_cycles(slice_bytes: int, slices: int, engines: int) -> int:
    """A stream re-laid out between slices before its kernel: ``slice_bytes`` into each of ``slices``
    slices, DM to DM, one command on each of ``engines`` DMA engines (reads and writes in one tier
    serialise)."""
    total = slice_bytes * slices
    share = -(-total // engines)
    run = min(share, DMA_REQUEST_BYTES)
    return dma_cycles(DmaParams(tail=run, tail_bytes=run, entries=(), bytes=share, same_tier=True))


def stream_stage_cost(stage: Stage, params: object, packets: int) -> StageCost:
    """One engine of a stream (docs/cost-model.md §4): fetch, commit, a DMA move, the switch and the transpose by
    their formulas; every other engine (collect, the adapters, cast, trim, register stores) passes one packet per cycle."""
    if isinstance(params, DmaParams):
        return StageCost(stage, dma_cycles(params), 0, None, (f"{dma_requests(params)} requests of {params.bytes} bytes",))
    if isinstance(params, FetchParams):
        return StageCost(stage, fetch_cycles(params), 0, None, (f"{params.read_size} elements per read",))
    if isinstance(params, CommitParams):
        return StageCost(stage, commit_cycles(params), 0, None, (f"{params.write_bytes} bytes per write",))
    if isinstance(params, SwitchParams):
        return StageCost(stage, switch_cycles(params), 0, None, (f"{params.sub_rings} sub-rings of {params.ring_size}",))
    if isinstance(params, TransposeParams):
        buffering = "double" if params.double_buffered else "single"
        return StageCost(stage, transpose_cycles(params), 0, None,
                         (f"{params.iterations} x {params.in_rows} by {params.in_cols}, {buffering} buffered",))
    return StageCost(stage, packets, 0, None, ("one packet per cycle",))


def stream_cost(stages: tuple[StageCost, ...], chain: KernelCost | None = None) -> KernelCost:
    """A stream's engines pipeline, so it takes as long as the slowest; a contraction it starts from runs first."""
    streaming = max((s.cycles for s in stages), default=0)
    if chain is None:
        return KernelCost(stages, streaming, 0.0, 0.0, 0, None, None)
    total = chain.total_cycles + streaming
    average = chain.mac_utilisation * chain.stages[0].cycles / total if total else 0.0
    return KernelCost(chain.stages + stages, total, chain.mac_utilisation, average, chain.useful_macs,
                      chain.accumulator_cells, chain.accumulator_use)


def stream_params(params: object) -> dict[str, int | float | str | bool]:
    """A stream stage's derived parameters by name, descriptors written ``count:stride`` outermost first."""
    if params is None or not is_dataclass(params) or isinstance(params, type):
        return {}
    out: dict[str, int | float | str | bool] = {}
    for f in fields(params):
        value = getattr(params, f.name)
        if isinstance(value, tuple):
            value = " ".join(f"{e.count}:{e.stride}" if hasattr(e, "stride") else str(e) for e in value) or "-"
        out[f.name] = value if isinstance(value, (int, float, str, bool)) else str(value)
    return out
