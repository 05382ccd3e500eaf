"""One pinned negative per rule: stage, rule and the full message text, plus a non-empty hint."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tcpdsl.algebra import Mapping, parse
from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify import (
    LaneMode,
    check_collect_tensor,
    check_contract_tensor,
    check_contract_outer_tensor,
    check_contract_packet_tensor,
    check_trf_tensor,
    verify_contract_lane,
    verify_contract_outer,
    verify_contract_packet,
    verify_contract_time,
    verify_to_trf,
)

AXES = {
    "A": 4, "B": 2, "C": 4, "D": 32, "K": 64, "M": 4, "N": 8, "L": 2, "E": 16, "Q": 3, "X": 6, "Big": 8192,
    "F": 2, "G": 2, "H": 2, "J": 2, "T0": 2, "T1": 2, "T2": 2, "T3": 2, "T4": 2,
}
I = LaneMode.INTERLEAVED
S = LaneMode.SEQUENTIAL


def m(text: str) -> Mapping:
    return parse(text, AXES)


ONE, CLUSTER, SLICE = m("1"), m("1 # 2"), m("1 # 256")


def outer(*layouts: str, stream: str = "bf16", weight: str = "bf16") -> Callable[[], object]:
    """``layouts``: Time, Packet, Lane, Element, OutTime, OutPacket."""
    time, packet, lane_, element, out_time, out_packet = (m(text) for text in layouts)
    return lambda: verify_contract_outer(stream, weight, time=time, packet=packet, lane=lane_, element=element, out_time=out_time, out_packet=out_packet)


def lane(
    lane_: str, time: str, packet: str, out_time: str, out_packet: str, pre: str, mode: LaneMode
) -> Callable[[], object]:
    return lambda: verify_contract_lane(lane=m(lane_), time=m(time), packet=m(packet), out_time=m(out_time), out_packet=m(out_packet), pre_reduce_time=m(pre), mode=mode)


CASES: list[tuple[str, Callable[[], object], str, str, str]] = [
    # -- to_trf -----------------------------------------------------------------------------------
    ("to_trf/LaneSize", lambda: verify_to_trf("bf16", time=m("Q, E"), packet=m("E"), lane=m("Q"), element=m("E, E")), "to_trf", "LaneSize",
     "Lane::SIZE must be 1, 2, 4, or 8, got 3"),
    ("to_trf/ExceedsCapacity", lambda: verify_to_trf("bf16", time=m("N"), packet=m("E"), lane=m("N"), element=m("Big")), "to_trf",
     "ExceedsCapacity",
     "TRF data (131072 bytes = 8 lanes x 16384 bytes) exceeds the tensor register file capacity (65536 bytes)"),
    ("to_trf/LaneDoesNotDivideTime", lambda: verify_to_trf("bf16", time=m("A"), packet=m("E"), lane=m("N"), element=m("E")), "to_trf",
     "LaneDoesNotDivideTime", "Lane::SIZE (8) does not divide Time::SIZE (4)"),
    ("to_trf/LaneMismatch", lambda: verify_to_trf("bf16", time=m("A, N"), packet=m("E"), lane=m("M"), element=m("N, E")), "to_trf",
     "LaneMismatch", "`to_trf` lane mismatch: time_outer != Lane: A != M"),
    ("to_trf/ElementMismatch", lambda: verify_to_trf("bf16", time=m("A, N"), packet=m("E"), lane=m("A"), element=m("E, N")), "to_trf",
     "ElementMismatch", "`to_trf` element mismatch: [time_inner, Packet] != Element: N, E != E, N"),
    # -- contract_outer: stream adapter -------------------------------------------------------------
    ("outer/LaneSize", outer("M, L", "E", "Q", "E", "M", "L, E"), "contract_outer", "LaneSize",
     "Lane::SIZE must be 1, 2, 4, or 8, got 3"),
    ("outer/OutPacketFlits", outer("M, L", "E", "N", "E", "M", "E % 8"), "contract_outer", "OutPacketFlits",
     "OutPacket must be 1 or 2 flits (32 bytes each), got 16 bytes"),
    ("outer/FlitMismatch", outer("M, L", "E", "N", "E", "M", "E, L"), "contract_outer", "FlitMismatch",
     "`contract_outer`: inner flit of OutPacket must equal the input Packet"),
    ("outer/PackedCellsMismatch", outer("L, M", "E", "N", "E", "L", "L, E"), "contract_outer",
     "PackedCellsMismatch", "`contract_outer`: OutPacket's packed cells must equal the innermost 2 cells of Time"),
    ("outer/PackedCellsMismatch-odd-time", outer("Q", "E", "N", "E", "1", "L, E"), "contract_outer",
     "PackedCellsMismatch", "`contract_outer`: OutPacket's packed cells must equal the innermost 2 cells of Time"),
    ("outer/TimeIndivisible", outer("M, L", "E", "N", "E", "Q", "L, E"), "contract_outer", "TimeIndivisible",
     "`contract_outer`: Time does not divide OutTime"),
    ("outer/OutTimeMismatch", outer("M, L", "E", "N", "E", "N", "L, E"), "contract_outer", "OutTimeMismatch",
     "`contract_outer`: OutTime must be the outer Time with broadcast (tiling) axes innermost"),
    # -- contract_outer: TRF sequencer ------------------------------------------------------------
    ("outer/ElementNotSequenced", outer("M, L", "E", "N", "C, E", "M", "L, E"), "contract_outer",
     "ElementNotSequenced",
     "`contract_outer`: every factor of TRF Element / ReadSize (C; Element C, E, ReadSize 16) must appear in "
     "OutTime M: C of C does not occur as a digit of M"),
    ("outer/SequencerEntries",
     outer("L", "E", "N", "F, G, H, J, E", "T0, F, T1, G, T2, H, T3, J, T4", "L, E"), "contract_outer",
     "SequencerEntries",
     "`contract_outer`: walking TRF Element F, G, H, J, E over OutTime T0, F, T1, G, T2, H, T3, J, T4 needs 9 "
     "nested loops (T0 x2, F x2, T1 x2, G x2, T2 x2, H x2, T3 x2, J x2, T4 x2), more than the sequencer's 8"),
    ("outer/RaggedSequencing", outer("L", "E", "N", "X % 3, E", "X # 8", "L, E"), "contract_outer",
     "RaggedSequencing",
     "`contract_outer`: OutTime X # 8 pads the factor X # 8 to 8 cells, which no nested loop over its walked "
     "pieces covers"),
    # -- contract_packet ----------------------------------------------------------------------------
    ("packet/InvalidPacketSize", lambda: verify_contract_packet("i8", packet=m("D / 2"), out_packet=m("1")), "contract_packet",
     "InvalidPacketSize", "Packet must be 32 or 64 bytes, got 16 bytes"),
    ("packet/OutPacketTooWide", lambda: verify_contract_packet("i8", packet=m("K"), out_packet=m("K")), "contract_packet",
     "OutPacketTooWide", "OutPacket::SIZE must be at most 32, got 64"),
    ("packet/OutPacketNotPow2", lambda: verify_contract_packet("bf16", packet=m("D"), out_packet=m("3")), "contract_packet",
     "OutPacketNotPow2", "OutPacket::SIZE must be a power of two, got 3"),
    ("packet/NotAContraction", lambda: verify_contract_packet("i8", packet=m("K"), out_packet=m("K % 4")), "contract_packet",
     "NotAContraction", "OutPacket K % 4 is not a valid contraction of Packet K"),
    # -- contract_time ------------------------------------------------------------------------------
    ("time/Indivisible", lambda: verify_contract_time(time=m("A"), out_time=m("B")), "contract_time", "Indivisible",
     "contract_time: OutTime B must divide Time A (some axis is missing): B of B does not occur as a digit of A"),
    ("time/OrderNotPreserved", lambda: verify_contract_time(time=m("A, B"), out_time=m("B, A")), "contract_time",
     "OrderNotPreserved", "contract_time: OutTime axes must follow the same order as the Time axes"),
    ("time/LeadingPadding", lambda: verify_contract_time(time=m("A, B"), out_time=m("A, 1 # 2")), "contract_time",
     "LeadingPadding",
     "contract_time: Padding mismatch. OutTime A, 1 # 2 has unexpected leading padding not present in Time A, B"),
    ("time/PaddingNotPreserved", lambda: verify_contract_time(time=m("A # 8, B"), out_time=m("A, B")), "contract_time",
     "PaddingNotPreserved",
     "contract_time: Padding mismatch. Non-reduced axes in OutTime A, B do not preserve padding from Time A # 8, B"),
    # -- contract_lane ------------------------------------------------------------------------------
    ("lane/PacketTooWide", lane("N", "B", "K", "B, K", "N", "B", I), "contract_lane", "PacketTooWide",
     "contract_lane: Packet::SIZE must be at most 32, got 64"),
    ("lane/OutPacketSize", lane("N", "B", "1", "B", "A", "B", I), "contract_lane", "OutPacketSize",
     "contract_lane: OutPacket::SIZE must be 8, got 4"),
    ("lane/LaneSize", lane("E", "B", "1", "B", "1 # 8", "B", I), "contract_lane", "LaneSize",
     "Lane::SIZE must be 1, 2, 4, or 8, got 16"),
    ("lane/OutPacketMismatch-interleaved", lane("N", "B", "1", "B", "1 # 8", "B", I), "contract_lane",
     "OutPacketMismatch", "contract_lane (Interleaved): OutPacket mismatch. Expected: N, got: 1 # 8"),
    ("lane/OutPacketMismatch-sequential", lane("N", "1", "D", "N, D / 8", "D / 2 % 8", "1", S), "contract_lane",
     "OutPacketMismatch", "contract_lane (Sequential): OutPacket mismatch. Expected: D % 8, got: D / 2 % 8"),
    ("lane/OutTimeMismatch-indivisible", lane("N", "B", "D", "B", "N", "B", I), "contract_lane",
     "OutTimeMismatch", "contract_lane (Interleaved): OutTime mismatch. Expected D, got B"),
    ("lane/OutTimeMismatch", lane("N", "B", "1", "N, B", "1 # 8", "B", S), "contract_lane", "OutTimeMismatch",
     "contract_lane (Sequential): OutTime mismatch. Expected N, got N % 4, B"),
    ("lane/OuterTimeMismatch", lane("N", "B", "1", "A", "N", "B", I), "contract_lane", "OuterTimeMismatch",
     "contract_lane (Interleaved): OutTime mismatch. Outer portion of OutTime must equal Time: expected B, got A"),
    ("lane/InconsistentReduceTime", lane("N", "B", "1", "B", "N", "A", I), "contract_lane",
     "InconsistentReduceTime", "contract_lane (Interleaved): inconsistent pre/post reduce Time: A, B"),
    ("lane/BufferExceeded-sequential", lane("N", "M, B", "D", "M, B, N, D / 8", "D % 8", "A, M, B", S),
     "contract_lane", "BufferExceeded",
     "contract_lane (Sequential): the [Lane, Packet] accumulator buffer overflows: padded Lane 8 * InnerTime 8 * "
     "padded Packet 32 = 2048 exceeds the 1024-cell accumulator"),
    ("lane/BufferExceeded-interleaved", lane("N", "M, B", "D", "M, B, D", "N", "A, M, B", I), "contract_lane",
     "BufferExceeded",
     "contract_lane (Interleaved): the [Lane, Packet] accumulator buffer overflows: padded Lane 8 * InnerTime 8 * "
     "padded Packet 32 = 2048 exceeds the 1024-cell accumulator"),
    # -- constructor constraints -------------------------------------------------------------------
    ("CollectTensor/ClusterSize", lambda: check_collect_tensor("bf16", chip=ONE, cluster=m("A"), slice_=SLICE, time=ONE, packet=m("E")), "CollectTensor",
     "ClusterSize", "Cluster size must be 1 or 2, got 4 (Cluster A)"),
    ("CollectTensor/SliceSize", lambda: check_collect_tensor("bf16", chip=ONE, cluster=CLUSTER, slice_=m("D"), time=ONE, packet=m("E")), "CollectTensor",
     "SliceSize", "Slice size must be one of 64 | 128 | 256, got 32 (Slice D)"),
    ("CollectTensor/PacketFlit", lambda: check_collect_tensor("bf16", chip=ONE, cluster=CLUSTER, slice_=SLICE, time=ONE, packet=m("N")), "CollectTensor",
     "PacketFlit", "Packet size must be exactly one flit (32 bytes), got 16 bytes (Packet N of bf16)"),
    ("TrfTensor/SliceSize", lambda: check_trf_tensor("bf16", chip=ONE, cluster=CLUSTER, slice_=m("D"), lane=m("N"), element=m("E")), "TrfTensor",
     "SliceSize", "Slice size must be one of 64 | 128 | 256, got 32 (Slice D)"),
    ("ContractOuterTensor/PacketFlits",
     lambda: check_contract_outer_tensor("bf16", chip=ONE, cluster=CLUSTER, slice_=SLICE, lane=m("N"), time=ONE, packet=m("N")), "ContractOuterTensor",
     "PacketFlits", "Packet size must be one or two flits (32 or 64 bytes), got 16 bytes (OutPacket N of bf16)"),
    ("ContractPacketTensor/PacketPow2",
     lambda: check_contract_packet_tensor(chip=ONE, cluster=CLUSTER, slice_=SLICE, lane=m("N"), time=ONE, packet=m("K")), "ContractPacketTensor", "PacketPow2",
     "Packet element count must be a power of two and at most the accumulator column count (32), got 64 (Packet K)"),
    ("ContractTimeTensor/PacketPow2",
     lambda: check_contract_packet_tensor(chip=ONE, cluster=CLUSTER, slice_=SLICE, lane=m("N"), time=ONE, packet=m("Q"), stage="ContractTimeTensor"),
     "ContractTimeTensor", "PacketPow2",
     "Packet element count must be a power of two and at most the accumulator column count (32), got 3 (Packet Q)"),
    ("ContractTensor/ContractPacketSize", lambda: check_contract_tensor("f32", chip=ONE, cluster=CLUSTER, slice_=SLICE, time=ONE, packet=m("D")),
     "ContractTensor", "ContractPacketSize",
     "Packet size must be exactly one flit (32 bytes) of the i32/f32 accumulator, got 128 bytes (Packet D of f32)"),
]

DTYPE_CASES: list[tuple[str, Callable[[], object], str, str, str]] = [
    ("gate/unsupported-stream", outer("M, L", "E", "N", "E", "M", "L, E", stream="i16", weight="i16"),
     "contract_outer", "NoMultiplier",
     "no Multiplier for stream dtype i16 (not a contraction stream dtype); the stream must be one of i4, i5, i8, i9, "
     "f8e4m3, f8e5m2, bf16"),
    ("gate/unknown-stream", outer("M, L", "E", "N", "E", "M", "L, E", stream="u8", weight="u8"), "contract_outer",
     "NoMultiplier",
     "no Multiplier for stream dtype u8 (an unknown dtype); the stream must be one of i4, i5, i8, i9, f8e4m3, "
     "f8e5m2, bf16"),
    ("gate/cross-family", outer("M, L", "E", "N", "E", "M", "L, E", stream="i4", weight="i8"), "contract_outer",
     "NoMultiplier", "no Multiplier for stream i4 with weight i8: stream i4 pairs only with weight i4 or i5"),
    ("gate/int-float", outer("M, L", "E", "N", "E", "M", "L, E", stream="bf16", weight="f8e4m3"), "contract_outer",
     "NoMultiplier", "no Multiplier for stream bf16 with weight f8e4m3: stream bf16 pairs only with weight bf16"),
    ("ContractTensor/NotAnAccumulator", lambda: check_contract_tensor("bf16", chip=ONE, cluster=CLUSTER, slice_=SLICE, time=ONE, packet=m("E")),
     "ContractTensor", "NotAnAccumulator", "the contraction result must be an i32 or f32 accumulator, got bf16"),
    ("CollectTensor/UnknownDtype", lambda: check_collect_tensor("u8", chip=ONE, cluster=CLUSTER, slice_=SLICE, time=ONE, packet=m("D")), "CollectTensor",
     "UnknownDtype", "unknown dtype 'u8'"),
]


@pytest.mark.parametrize(("name", "call", "stage", "rule", "message"), CASES, ids=[c[0] for c in CASES])
def test_layout_rule_message(name: str, call: Callable[[], object], stage: str, rule: str, message: str) -> None:
    with pytest.raises(LayoutError) as info:
        call()
    assert (info.value.stage, info.value.rule, info.value.detail) == (stage, rule, message)
    assert info.value.hint
    assert str(info.value).startswith(f"[{stage}] {rule}: {message}\n  hint: ")


@pytest.mark.parametrize(("name", "call", "stage", "rule", "message"), DTYPE_CASES, ids=[c[0] for c in DTYPE_CASES])
def test_dtype_rule_message(name: str, call: Callable[[], object], stage: str, rule: str, message: str) -> None:
    with pytest.raises(DtypeError) as info:
        call()
    assert (info.value.stage, info.value.rule, info.value.detail) == (stage, rule, message)
    assert info.value.hint


def test_flit_mismatch_hint_names_the_packet() -> None:
    with pytest.raises(LayoutError) as info:
        outer("M, L", "E", "N", "E", "M", "E, L")()
    assert info.value.hint.startswith("make the innermost 16 elements of OutPacket equal the Packet E")


def test_trf_at_exact_capacity_passes() -> None:
    params = verify_to_trf("bf16", time=m("A, E"), packet=m("D"), lane=m("A"), element=m("E, D"))
    assert params.total_bytes == 4 * 16 * 32 * 2
    full = verify_to_trf("bf16", time=m("N, B"), packet=m("Big % 2048"), lane=m("N"), element=m("B, Big % 2048"))
    assert full.total_bytes == 65536
