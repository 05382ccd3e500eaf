"""Differential tests: the fused evaluator, the stage simulator and an einsum oracle agree.

Chains are built by hand from the verifiers' parameters for the documented kernels (those of
examples/) at small sizes, plus cases for replication, wide integer accumulation, i32 wrap-around and a
kernel that silently relies on Top padding, which only the simulator reports.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from tcpdsl.algebra import Mapping, logical_terms, pairs, parse
from tcpdsl.errors import LayoutError, TcpError
from tcpdsl.evaluate import trace
from tcpdsl.evaluate.fused import FusedEvaluator
from tcpdsl.numerics.placement import plan
from tcpdsl.numerics.transfer import to_logical, to_terms
from tcpdsl.evaluate.select import evaluator
from tcpdsl.evaluate.simulate import SimulateEvaluator, macs
from tcpdsl.evaluate import backend
from tcpdsl.numerics.chain import Chain, Operand
from tcpdsl.numerics.scalars import cast
from tcpdsl.verify import (
    LaneMode,
    verify_contract_lane,
    verify_contract_outer,
    verify_contract_packet,
    verify_contract_time,
)

Array = npt.NDArray[Any]
I, S = LaneMode.INTERLEAVED, LaneMode.SEQUENTIAL


@dataclass(frozen=True)
class Spec:
    """A kernel: axis sizes, layouts as text, operand axes, and the oracle as an einsum."""

    sizes: dict[str, int]
    stream_axes: str
    weight_axes: str
    time: str
    packet: str
    lane: str
    element: str
    out_time: str
    out_packet: str
    einsum: str
    out_packet2: str | None = None
    out_time2: str | None = None
    out_time3: str | None = None
    out_packet3: str | None = None
    mode: LaneMode = I
    cluster: str = "1 # 2"
    slice_: str = "1 # 256"
    dtype: str = "bf16"
    weight_dtype: str = ""
    factor: int = 1  # the oracle's multiplicity (a contracted axis no operand carries)
    replicated: str = ""  # one axis the result replicates over, right after the first output axis

    def shape(self, axes: str) -> tuple[int, ...]:
        return tuple(self.sizes[a] for a in axes.split())

    @property
    def out_axes(self) -> str:
        out = self.einsum.split("->")[1]
        return out[:1] + self.replicated + out[1:]


def build(spec: Spec, stream: Array, weight: Array) -> Chain:
    def p(text: str) -> Mapping:
        return parse(text, spec.sizes)

    weight_dtype = spec.weight_dtype or spec.dtype
    chip, cluster, slice_ = p("1"), p(spec.cluster), p(spec.slice_)
    time, packet, lane, element = p(spec.time), p(spec.packet), p(spec.lane), p(spec.element)
    out_time, out_packet = p(spec.out_time), p(spec.out_packet)
    outer = verify_contract_outer(spec.dtype, weight_dtype, time=time, packet=packet, lane=lane, element=element, out_time=out_time, out_packet=out_packet)
    chain = Chain(
        stream=Operand(cast(stream, spec.dtype), tuple(spec.stream_axes.split()), spec.dtype,
                       pairs([chip, cluster, slice_, time, packet])),
        weight=Operand(cast(weight, weight_dtype), tuple(spec.weight_axes.split()), weight_dtype,
                       pairs([chip, cluster, slice_, lane, element])),
        acc=outer.accumulator, chip=chip, cluster=cluster, slice=slice_, lane=lane, time=time, packet=packet,
        element=element, outer_time=out_time, outer_packet=out_packet, outer=outer,
    )
    if spec.out_packet2 is None:
        return chain
    out_packet2 = p(spec.out_packet2)
    chain = chain.with_stage(packet_out=out_packet2,
                             packet_params=verify_contract_packet(spec.dtype, packet=out_packet, out_packet=out_packet2))
    if spec.out_time2 is None:
        return chain
    out_time2 = p(spec.out_time2)
    chain = chain.with_stage(time_out=out_time2, time_params=verify_contract_time(time=out_time, out_time=out_time2))
    if spec.out_time3 is None or spec.out_packet3 is None:
        return chain
    out_time3, out_packet3 = p(spec.out_time3), p(spec.out_packet3)
    params = verify_contract_lane(lane=lane, time=out_time2, packet=out_packet2, out_time=out_time3, out_packet=out_packet3, pre_reduce_time=out_time, mode=spec.mode)
    return chain.with_stage(lane_time=out_time3, lane_packet=out_packet3, mode=spec.mode, lane_params=params)


def operands(spec: Spec, seed: int) -> tuple[Array, Array]:
    """Random logical operands, exactly representable in their dtypes (as float64 or int64)."""
    rng = np.random.default_rng(seed)

    def draw(axes: str, dtype: str) -> Array:
        shape = spec.shape(axes)
        if dtype.startswith("i"):
            return rng.integers(-8, 8, size=shape)
        return np.asarray(cast(rng.standard_normal(shape), dtype), dtype=np.float64)

    return draw(spec.stream_axes, spec.dtype), draw(spec.weight_axes, spec.weight_dtype or spec.dtype)


def read_back(chain: Chain, physical: Array, axes: str) -> Array:
    """The logical result over ``axes`` (letters of the einsum output are axis names)."""
    names = tuple(axes)
    sizes = {**chain.stream.mapping.axis_sizes(), **chain.weight.mapping.axis_sizes(),
             **chain.result_mapping().axis_sizes()}
    shape = tuple(sizes[a] for a in names)
    if chain.prefix.axes:
        return to_logical(physical, chain.result_mapping(), names, shape)
    # A coordinate-free [Chip, Cluster, Slice] holds one live row: read it alone (cheap).
    row = int(np.flatnonzero(plan(chain.prefix).live)[0])
    rows = physical.reshape(chain.prefix.size, -1)
    inner = chain.result_mapping().size // chain.prefix.size
    assert rows.shape[1] == inner
    return to_logical(rows[row], chain.part(), names, shape)


def oracle(spec: Spec, stream: Array, weight: Array) -> tuple[Array, Array]:
    """The exact result (f64) and the sum of |products| each cell's error is measured against."""
    exact = np.einsum(spec.einsum, stream.astype(np.float64), weight.astype(np.float64)) * spec.factor
    scale = np.einsum(spec.einsum, np.abs(stream).astype(np.float64), np.abs(weight).astype(np.float64)) * spec.factor
    if spec.replicated:
        shape = spec.shape(" ".join(spec.out_axes))
        exact = np.broadcast_to(np.expand_dims(exact, 1), shape)
        scale = np.broadcast_to(np.expand_dims(scale, 1), shape)
    return exact, scale


BMATMUL = {"V": 32, "M": 32, "N": 8, "K": 32}
KERNELS = {
    "bmatmul_k_in_time": Spec(BMATMUL, "V M K", "N K", "V / 16, K", "1 # 16", "N", "K", "V / 16, K", "1 # 16",
                              "VMK,NK->VMN", "1", "V / 16", "V / 16", "N", cluster="M / 16", slice_="M % 16, V % 16"),
    "bmatmul_m_in_time": Spec(BMATMUL, "V M K", "V N K", "M, K / 16", "K % 16", "N", "K", "M", "K",
                              "VMK,VNK->VMN", "1", "M", "M", "N", cluster="V / 16", slice_="V % 16 # 256"),
    "bmatmul_v_in_time": Spec(BMATMUL, "V M K", "N K", "V, K / 16", "K % 16", "N", "K", "V", "K",
                              "VMK,NK->VMN", "1", "V", "V", "N", cluster="M / 16", slice_="M % 16 # 256"),
    "stream_adapter_example": Spec({"M": 32, "N": 8, "K": 16, "L": 2, "B": 5}, "M L K", "N B L K", "M, L", "K", "N",
                                   "B, L, K", "M, B", "L, K", "MLK,NBLK->NMBLK"),
    "trf_sequencer_full_read": Spec({"M": 32, "N": 8, "K": 32}, "M K", "N K", "M, K / 16", "K % 16", "N", "K", "M",
                                    "K", "MK,NK->NMK"),
    "trf_sequencer_partial_read": Spec({"M": 32, "N": 8, "K": 16, "L": 2, "O": 2}, "O M L K", "N O K", "O, M, L",
                                       "K", "N", "O, K", "O, M", "L, K", "OMLK,NOK->NOMLK"),
    "matmul": Spec({"A": 32, "B": 32, "C": 8}, "A B", "C B", "A, B / 16", "B % 16", "C", "B", "A", "B",
                   "AB,CB->AC", "1", "A", "A", "C"),
    "reduce_b": Spec({"A": 2048, "B": 32}, "A B", "B", "B / 16, A % 8", "B % 16", "1", "B", "B / 16, A % 8",
                     "B % 16", "AB,B->A", "1", "A % 8", "A % 8", "1 # 8", mode=S, slice_="A / 8"),
    "lane_interleaved": Spec({"N": 8, "M": 4, "P": 16}, "M P", "N P", "M", "P", "N", "P", "M", "P", "MP,NP->MPN",
                             "P", "M", "M, P", "N"),
    "lane_sequential": Spec({"N": 8, "M": 4, "P": 16}, "M P", "N P", "M", "P", "N", "P", "M", "P", "MP,NP->MNP",
                            "P", "M", "M, N, P / 8", "P % 8", mode=S),
    "dot_product": Spec({"A": 2048}, "A", "A", "A / 16", "A % 16", "1", "A", "A / 32", "A % 32", "A,A->",
                        "1", "1", "1", "1 # 8"),
    "gemv": Spec({"I": 64, "J": 2048}, "I J", "J", "J / 16", "J % 16", "1", "J", "J / 32", "J % 32", "IJ,J->I",
                 "1", "1", "1", "1 # 8", slice_="I"),
    "gemm": Spec({"I": 256, "J": 256, "K": 64}, "I K", "J K", "I % 32, J / 8 % 4, K / 16", "K % 16", "J % 8",
                 "J / 8 % 4, K", "I % 32, J / 8 % 4, K / 32", "K % 32", "IK,JK->IJ", "1", "I % 32, J / 8 % 4",
                 "I % 32, J / 8 % 4", "J % 8", slice_="I / 32, J / 32"),
    # OutTime gains T, an axis no operand carries: the result replicates over it ...
    "replicated_out_time": Spec({"A": 32, "B": 32, "C": 8, "T": 2}, "A B", "C B", "A, B / 16", "B % 16", "C", "B",
                                "A, T", "B", "AB,CB->AC", "1", "A, T", "A, T", "C", replicated="T"),
    # ... and when the Time Reducer sums T away, the result is multiplied by its size.
    "contracted_broadcast": Spec({"A": 32, "B": 32, "C": 8, "T": 2}, "A B", "C B", "A, B / 16", "B % 16", "C", "B",
                                 "A, T", "B", "AB,CB->AC", "1", "A", "A", "C", factor=2),
    "i8_k100_zero_padded": Spec({"A": 4, "K": 100, "C": 8}, "A K", "C K", "A, K #{0} 128 / 32", "K #{0} 128 % 32",
                                "C", "K #{0} 128", "A, K #{0} 128 / 64", "K #{0} 128 % 64", "AK,CK->AC", "1", "A",
                                "A", "C", dtype="i8"),
    "i4_i5_sequential": Spec({"A": 8, "K": 128, "R": 8}, "A K", "R K", "A, K / 64", "K % 64", "R", "K", "A, K / 64",
                             "K % 64", "AK,RK->AR", "1", "A", "A, R", "1 # 8", mode=S, dtype="i4", weight_dtype="i5"),
}
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_fused_simulate_and_oracle_agree(name: str) -> None:
    spec = KERNELS[name]
    stream, weight = operands(spec, seed=len(name))
    chain = build(spec, stream, weight)
    expected, scale = oracle(spec, stream, weight)
    fused_physical = FusedEvaluator().run(chain)
    simulated_physical = SimulateEvaluator().run(chain)
    for physical in (fused_physical, simulated_physical):
        assert physical.shape == (chain.result_mapping().size,)
        assert physical.dtype == (np.float32 if chain.acc == "f32" else np.int32)
    fused = read_back(chain, fused_physical, spec.out_axes)
    simulated = read_back(chain, simulated_physical, spec.out_axes)
    if chain.acc == "i32":
        assert np.array_equal(fused, expected.astype(np.int64))
        assert np.array_equal(simulated, fused)
    else:
        assert np.all(np.abs(fused - expected) <= 1e-5 * scale + 1e-30)
        assert np.all(np.abs(simulated - expected) <= 1e-5 * scale + 1e-30)
    # Padding cells of the physical result are zero in both evaluators.
    dead = ~plan(chain.result_mapping()).live if chain.prefix.axes else None
    if dead is not None:
        assert not fused_physical[dead].any() and not simulated_physical[dead].any()


TOP_PACKET = Spec({"A": 4, "K": 100, "C": 8}, "A K", "C K", "A, K # 128 / 32", "K # 128 % 32", "C", "K # 128",
                  "A, K # 128 / 64", "K # 128 % 64", "AK,CK->AC", "1", "A", "A", "C", dtype="i8")
TOP_TIME = Spec({"W": 6, "B": 32, "C": 8}, "W B", "C B", "W # 8, B / 16", "B % 16", "C", "B", "W # 8", "B",
                "WB,CB->C", "1", "1", "1", "C")
ZERO_TIME = Spec({"W": 6, "B": 32, "C": 8}, "W B", "C B", "W #{0} 8, B / 16", "B % 16", "C", "B", "W #{0} 8", "B",
                 "WB,CB->C", "1", "1", "1", "C")


def test_top_padding_summed_by_the_packet_reducer_is_reported() -> None:
    stream, weight = operands(TOP_PACKET, seed=3)
    chain = build(TOP_PACKET, stream, weight)
    expected, _ = oracle(TOP_PACKET, stream, weight)
    # The fused fold skips padding, as the reference model does, so it cannot notice.
    assert np.array_equal(read_back(chain, FusedEvaluator().run(chain), "AC"), expected.astype(np.int64))
    with pytest.raises(LayoutError) as info:
        SimulateEvaluator().run(chain)
    error = info.value
    assert (error.stage, error.rule) == ("contract_packet", "UndefinedPadding")
    assert error.detail == (
        "32 live cell(s) of C # 4096, A, K # 128 / 64 depend on undefined (Top) padding of the stream layout "
        "A # 2048, K # 128 and the TRF layout C # 4096, K # 128; the hardware multiplies and adds whatever the "
        "padded cells hold")
    assert error.hint == "zero the padding (#{0}) or keep padded cells out of the reduced digits"


def test_top_padding_summed_by_the_time_reducer_is_reported() -> None:
    stream, weight = operands(TOP_TIME, seed=4)
    with pytest.raises(LayoutError, match="depend on undefined \\(Top\\) padding of the stream layout") as info:
        SimulateEvaluator().run(build(TOP_TIME, stream, weight))
    assert (info.value.stage, info.value.rule) == ("contract_time", "UndefinedPadding")
    zero = build(ZERO_TIME, stream, weight)
    expected, scale = oracle(ZERO_TIME, stream, weight)
    got = read_back(zero, SimulateEvaluator().run(zero), "C")
    assert np.all(np.abs(got - expected) <= 1e-5 * scale)


WRAP = Spec({"K": 65536}, "K", "K", "K / 32", "K % 32", "1", "K", "K / 64", "K % 64", "K,K->", "1", "1", "1",
            "1 # 8", slice_="1 # 64", dtype="i9")


def test_i9_sums_wrap_in_i32() -> None:
    stream = np.full(65536, -256)
    weight = np.full(65536, -256)
    weight[7] = -255  # 2**32 - 256 wraps to -256
    chain = build(WRAP, stream, weight)
    for run in (FusedEvaluator().run, SimulateEvaluator().run):
        assert int(read_back(chain, run(chain), "")) == -256
    weight[7] = -256
    chain = build(WRAP, stream, weight)
    for run in (FusedEvaluator().run, SimulateEvaluator().run):
        assert int(read_back(chain, run(chain), "")) == 0


def _stopped_at(chain: Chain, stop: str) -> Chain:
    if stop == "contract_outer":
        return chain.with_stage(packet_out=None, packet_params=None, time_out=None, time_params=None,
                                lane_time=None, lane_packet=None, mode=None, lane_params=None)
    if stop == "contract_packet":
        return chain.with_stage(time_out=None, time_params=None, lane_time=None, lane_packet=None, mode=None,
                                lane_params=None)
    if stop == "contract_time":
        return chain.with_stage(lane_time=None, lane_packet=None, mode=None, lane_params=None)
    return chain


@pytest.mark.parametrize("stop", ["contract_outer", "contract_packet", "contract_time"])
def test_every_intermediate_stage_agrees(stop: str) -> None:
    spec = KERNELS["gemm"]
    stream, weight = operands(spec, seed=11)
    chain = _stopped_at(build(spec, stream, weight), stop)
    assert chain.stage == stop
    fused = FusedEvaluator().run(chain)
    simulated = SimulateEvaluator().run(chain)
    assert fused.shape == simulated.shape == (chain.result_mapping().size,)
    assert np.allclose(fused, simulated, rtol=1e-5, atol=1e-4)
    assert np.count_nonzero(fused) > 0


@pytest.mark.parametrize("stop", ["contract_outer", "contract_packet", "contract_time", "contract_lane"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_logical_results_are_the_physical_buffers_read_back(name: str, stop: str) -> None:
    spec = KERNELS[name]
    stream, weight = operands(spec, seed=len(name))
    chain = _stopped_at(build(spec, stream, weight), stop)
    mapping = chain.result_mapping()
    for evaluator in (FusedEvaluator(), SimulateEvaluator()):
        got = evaluator.logical(chain)
        want = to_terms(evaluator.run(chain), mapping, logical_terms(mapping))
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got.view(np.int32), want.view(np.int32)), evaluator.name


def test_trace_shows_every_stage() -> None:
    spec = KERNELS["matmul"]
    chain = build(spec, *operands(spec, seed=5))
    stages = trace(chain)
    assert [s.stage for s in stages] == ["collect", "to_trf", "stream_adapter", "trf_sequencer", "contract_outer",
                                         "contract_packet", "contract_time", "contract_lane"]
    shapes = [s.values.shape for s in stages]
    assert shapes == [(1, 64, 16), (1, 8, 32), (1, 8, 32, 32), (1, 8, 32, 32), (1, 8, 32, 32), (1, 8, 32, 1),
                      (1, 8, 32, 1), (1, 32, 8)]
    assert stages[2].note == "PackSize 2, LaneBroadcast 8, TimeBroadcast 1 (1 cells)"
    assert stages[3].note == "ReadSize 32, PacketBroadcast 1, wide read, addressed by loop nest"
    assert stages[5].note.startswith("depth 5")
    assert stages[-1].mapping == chain.final()
    assert stages[2].mapping == chain.pre_reduce()
    # The stream adapter zero-pads nothing here and poisons nothing.
    assert not stages[2].poison.any()
    assert macs(chain) == 8 * 32 * 32


def test_evaluator_registry_and_selection() -> None:
    assert backend.get().name == "fused"
    assert backend.get("simulate").name == "simulate"
    with evaluator("simulate") as chosen:
        assert chosen.name == "simulate"
        assert backend.get().name == "simulate"
    assert backend.get().name == "fused"
    with pytest.raises(TcpError, match="unknown evaluator 'exact'; known evaluators: fused, simulate"):
        backend.get("exact")
    with pytest.raises(TcpError), evaluator("exact"):
        pass


@pytest.mark.parametrize("name", ["gemm", "trf_sequencer_partial_read", "i8_k100_zero_padded", "bmatmul_k_in_time"])
def test_sequencer_addressing_by_coordinates_agrees_with_the_loop_nest(name: str) -> None:
    spec = KERNELS[name]
    chain = build(spec, *operands(spec, seed=2))
    # Without a loop nest the sequencer addresses Element by the coordinates of each cell.
    bare = chain.with_stage(outer=dataclasses.replace(chain.outer, sequencing=()))
    looped, coordinated = trace(chain), trace(bare)
    assert looped[3].note.endswith("loop nest") and coordinated[3].note.endswith("coordinates")
    part = chain.part("contract_outer")
    live = np.broadcast_to(plan(part).live, (looped[3].values.shape[0], part.size))
    flat_loop = looped[4].values.reshape(live.shape)
    flat_coord = coordinated[4].values.reshape(live.shape)
    assert np.array_equal(flat_loop[live], flat_coord[live])
    assert np.array_equal(SimulateEvaluator().run(chain), SimulateEvaluator().run(bare))


def test_unchecked_trace_shows_where_the_padding_went() -> None:
    chain = build(TOP_PACKET, *operands(TOP_PACKET, seed=3))
    stages = trace(chain, check=False)
    assert [s.stage for s in stages][-1] == "contract_lane"
    packet = stages[5]
    assert packet.stage == "contract_packet"
    # Time flit 1 of each A sums K = 64..127, whose last 28 cells are Top padding of both operands.
    assert packet.poison.shape == (1, 8, 8, 1)
    assert packet.poison[0, :, 1::2, 0].tolist() == [[3] * 4] * 8
    assert not packet.poison[0, :, 0::2, 0].any()
