"""The cost model's documented cases: PackSize, tree latency, Lane/8, accumulator use."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcpdsl.algebra import Mapping, parse
from tcpdsl.cost import (
    KernelCost,
    StageCost,
    describe,
    estimate,
    live_cells,
    macs_per_lane,
    tree_latency,
)
from tcpdsl.errors import DtypeError
from tcpdsl.verify import (
    LaneMode,
    verify_contract_lane,
    verify_contract_outer,
    verify_contract_packet,
    verify_contract_time,
)

MATMUL_AXES = {"A": 32, "B": 32, "C": 8}
K_IN_TIME_AXES = {"V": 32, "M": 32, "N": 8, "K": 32}


def chain(
    sizes: dict[str, int],
    dtype: str,
    stream: tuple[str, str],
    trf: tuple[str, str],
    outer: tuple[str, str],
    packet: str,
    time: str,
    lane: tuple[str, str],
    mode: LaneMode = LaneMode.INTERLEAVED,
) -> KernelCost:
    """Verify a whole chain stage by stage and estimate it, as the runtime does."""

    def p(text: str) -> Mapping:
        return parse(text, sizes)

    s_time, s_packet = p(stream[0]), p(stream[1])
    lane_m, element = p(trf[0]), p(trf[1])
    o_time, o_packet = p(outer[0]), p(outer[1])
    outer_params = verify_contract_outer(dtype, dtype, time=s_time, packet=s_packet, lane=lane_m, element=element, out_time=o_time, out_packet=o_packet)
    packet_params = verify_contract_packet(dtype, packet=o_packet, out_packet=p(packet))
    time_params = verify_contract_time(time=o_time, out_time=p(time))
    lane_params = verify_contract_lane(lane=lane_m, time=p(time), packet=p(packet), out_time=p(lane[0]), out_packet=p(lane[1]), pre_reduce_time=o_time, mode=mode)
    return estimate(
        dtype, lane_m, s_time, o_time, o_packet, outer_params,
        packet_params=packet_params, time_out=p(time), time_params=time_params,
        lane_time=p(lane[0]), lane_params=lane_params,
    )


def matmul(pack: int, lanes: int = 8) -> KernelCost:
    """The Packet Reducer chapter's matmul, with OutPacket of one (PackSize 1) or two flits."""
    outer = ("A", "B") if pack == 2 else ("A, B / 16", "B % 16")
    sizes = {**MATMUL_AXES, "C": lanes}
    out_packet = "C" if lanes == 8 else "C # 8"
    return chain(sizes, "bf16", ("A, B / 16", "B % 16"), ("C", "B"), outer, "1", "A", ("A", out_packet))


def stage(cost: KernelCost, name: str) -> StageCost:
    return next(s for s in cost.stages if s.stage == name)


def test_pack_size_two_fills_every_mac() -> None:
    cost = matmul(pack=2)
    assert stage(cost, "contract_outer").mac_utilisation == 1.0
    assert cost.mac_utilisation == 1.0


def test_pack_size_one_halves_the_utilisation_but_not_the_rate() -> None:
    full, half = matmul(pack=2), matmul(pack=1)
    assert half.mac_utilisation == full.mac_utilisation / 2
    # twice the packets, but each waits for one flit instead of two: both stream the same 64 flits
    assert stage(half, "contract_outer").cycles == stage(full, "contract_outer").cycles == 64
    assert half.useful_macs == full.useful_macs
    assert stage(half, "contract_time").notes[0] == "reduces B: 2 packets accumulate into each of 32 Time slots"
    assert any("PackSize 1" in note for note in stage(half, "contract_outer").notes)


def time_broadcast() -> KernelCost:
    """x[B] against w[C, A, B]: each fetched packet of x feeds all 32 A steps (TimeBroadcast A)."""
    return chain({"A": 32, "B": 32, "C": 8}, "bf16", ("B / 16", "B % 16"), ("C", "A, B"), ("A", "B"), "1", "A", ("A", "C"))


def test_the_packet_rate_is_one_packet_per_cycle() -> None:
    """The two readings of the packet rate (docs/cost-model.md, "The packet rate") disagree here.

    Read as "one packet every 2 cycles", the 32 broadcast packets would stream 64 cycles like the
    matmul's 32 fetched ones (ratio 1); read as one packet a cycle, fed by one flit a cycle, the
    broadcast needs 2 flits for 32 packets and streams 32 cycles against the matmul's 64 flits.
    """
    broadcast, fetched = time_broadcast(), matmul(pack=2)
    assert stage(broadcast, "contract_outer").cycles == 32
    assert stage(fetched, "contract_outer").cycles == 64
    assert (broadcast.total_cycles, fetched.total_cycles) == (32 + 5 + 1, 64 + 5 + 1)
    assert "fetch-bound: 64 flits at 1 a cycle" in stage(fetched, "contract_outer").notes


def test_k_in_time_uses_one_thirty_second_of_the_macs() -> None:
    cost = chain(
        K_IN_TIME_AXES, "bf16", ("V / 16, K", "1 # 16"), ("N", "K"), ("V / 16, K", "1 # 16"),
        "1", "V / 16", ("V / 16", "N"),
    )
    assert Fraction(cost.mac_utilisation).limit_denominator() == Fraction(1, 32)


@pytest.mark.parametrize(
    ("dtype", "depth", "macs"),
    [("bf16", 5, 32), ("i8", 6, 64), ("i9", 6, 64), ("f8e4m3", 6, 64), ("f8e5m2", 6, 64), ("i4", 7, 128), ("i5", 7, 128)],
)
def test_tree_latency_by_dtype(dtype: str, depth: int, macs: int) -> None:
    assert tree_latency(dtype) == depth
    assert macs_per_lane(dtype) == macs
    assert 2**depth == macs  # the latency is the depth of a full tree over one 64 B packet


def test_packet_stage_adds_the_tree_latency_to_the_total() -> None:
    cost = matmul(pack=2)
    packet = stage(cost, "contract_packet")
    assert (packet.latency, packet.cycles) == (5, 32)  # one packet a cycle; Outer waits for 64 flits
    assert any("tree depth 5" in note for note in packet.notes)
    lane = stage(cost, "contract_lane")
    # A x C outputs: the accumulator holds one [C # 8] slot of 8 cells, drained in one flit
    assert (lane.cycles, lane.latency) == (32, 1)
    assert cost.total_cycles == 64 + 5 + 0 + 1


@given(st.sampled_from([1, 2, 4, 8]))
def test_throughput_scales_with_lane_over_eight(lanes: int) -> None:
    cost = matmul(pack=2, lanes=lanes)
    assert cost.mac_utilisation == lanes / 8
    assert stage(cost, "contract_packet").mac_utilisation == lanes / 8


def test_accumulator_use_of_the_sequential_time_reducer_example() -> None:
    # time-reducer.md reduce_b: Sequential, InnerTime 8 -> 1 * 8 * 32 = 256 of 1024 cells
    cost = chain(
        {"A": 2048, "B": 32}, "bf16", ("B / 16, A % 8", "B % 16"), ("1", "B"), ("B / 16, A % 8", "B % 16"),
        "1", "A % 8", ("A % 8", "1 # 8"), LaneMode.SEQUENTIAL,
    )
    assert (cost.accumulator_cells, cost.accumulator_use) == (256, 0.25)
    time = stage(cost, "contract_time")
    assert time.notes[0] == "reduces B: 2 packets accumulate into each of 8 Time slots"
    assert stage(cost, "contract_lane").latency == 256 // 8


def test_estimate_without_later_stages_has_no_accumulator_figures() -> None:
    sizes = MATMUL_AXES
    p = lambda text: parse(text, sizes)  # noqa: E731
    params = verify_contract_outer("bf16", "bf16", time=p("A, B / 16"), packet=p("B % 16"), lane=p("C"), element=p("B"), out_time=p("A"), out_packet=p("B"))
    cost = estimate("bf16", p("C"), p("A, B / 16"), p("A"), p("B"), params)
    assert [s.stage for s in cost.stages] == ["contract_outer"]
    assert cost.accumulator_use is None and cost.accumulator_cells is None
    assert cost.total_cycles == 64


def test_live_cells_skips_padding_but_counts_broadcast() -> None:
    assert live_cells(parse("1 # 16", {})) == 1
    assert live_cells(parse("2 # 16", {})) == 2
    assert live_cells(parse("A # 16", {"A": 5})) == 5


def test_unknown_dtype_is_a_dtype_error() -> None:
    with pytest.raises(DtypeError) as info:
        tree_latency("f64")
    assert (info.value.stage, info.value.rule) == ("cost", "UnknownDtype")


def test_describe_names_every_stage_and_the_total() -> None:
    text = describe(matmul(pack=2))
    for name in ("contract_outer", "contract_packet", "contract_time", "contract_lane"):
        assert f"{name}: " in text
    assert "total: 70 cycles per slice, MAC utilisation 100.0% (steady)" in text
    assert "accumulator: 8 cells (0.8%)" in text
