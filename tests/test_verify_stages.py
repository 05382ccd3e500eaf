"""The reference unit tests of contract_packet, contract_time and contract_lane (docs/stage-rules.md §2.5-§2.7)."""

from __future__ import annotations

import pytest

from tcpdsl.algebra import Mapping, parse
from tcpdsl.errors import LayoutError
from tcpdsl.verify import LaneMode, verify_contract_lane, verify_contract_packet, verify_contract_time

AXES = {"A": 4, "B": 2, "C": 4, "D": 32, "K": 64, "M": 4, "N": 8, "O": 2, "P": 8, "L1": 192, "Bat": 4096, "W": 12}
I = LaneMode.INTERLEAVED
S = LaneMode.SEQUENTIAL


def m(text: str) -> Mapping:
    return parse(text, AXES)


PACKET_ROWS = [
    ("valid_full_reduction", "i8", "K", "1", 6),
    ("valid_partial_reduction", "i8", "K", "K / 4", 2),
    ("valid_partial_reduction_multi_axis", "i8", "A, D / 2", "A, D / 8", 2),
    ("valid_padded_packet_inner_reduction", "i8", "A # 16, C", "A", 2),
    ("valid_padded_packet_inner_reduction_with_padding", "i8", "A # 16, C", "A # 16", 2),
    ("valid_padded_packet_split", "i8", "B # 8, N", "B", 3),
    ("valid_no_spatial_reduction_bf16", "bf16", "D", "D", 0),
]


@pytest.mark.parametrize(("name", "dtype", "packet", "out", "depth"), PACKET_ROWS, ids=[r[0] for r in PACKET_ROWS])
def test_contract_packet_reference(name: str, dtype: str, packet: str, out: str, depth: int) -> None:
    params = verify_contract_packet(dtype, packet=m(packet), out_packet=m(out))
    assert params.depth == depth
    assert params.reduce_packet == m(packet).split_at(1 << depth)[0]
    assert params.output == m(out).normalize().remove_padding()


@pytest.mark.parametrize(
    ("dtype", "packet", "out", "rule"),
    [
        ("i8", "K", "K % 4", "NotAContraction"),
        ("bf16", "D", "3", "OutPacketNotPow2"),
        ("i8", "K", "K", "OutPacketTooWide"),
        ("i8", "D / 2", "1", "InvalidPacketSize"),
    ],
)
def test_contract_packet_suggested_negatives(dtype: str, packet: str, out: str, rule: str) -> None:
    with pytest.raises(LayoutError) as info:
        verify_contract_packet(dtype, packet=m(packet), out_packet=m(out))
    assert (info.value.stage, info.value.rule) == ("contract_packet", rule)


TIME_ROWS = [
    ("valid_identity", "A, B", "A, B", ()),
    ("valid_reduce_inner", "A, B", "A", ("B",)),
    ("valid_reduce_outer", "A, B", "B", ("A",)),
    (
        "valid_reduce_between_the_digits_of_a_padded_axis",
        "L1 # 256 / 32 % 4, Bat / 32 % 2, Bat / 64 % 2, W % 6, W / 6, L1 # 256 / 8 % 4",
        "L1 # 256 / 32 % 4, Bat / 32 % 2, Bat / 64 % 2, L1 # 256 / 8 % 4",
        ("W",),
    ),
    ("synthetic_padded_kept", "A # 8, B", "A # 8, B", ()),
    ("synthetic_split_axis", "A / 2, B, A % 2", "A", ("B",)),
]


@pytest.mark.parametrize(("name", "time", "out", "reduced"), TIME_ROWS, ids=[r[0] for r in TIME_ROWS])
def test_contract_time_reference(name: str, time: str, out: str, reduced: tuple[str, ...]) -> None:
    params = verify_contract_time(time=m(time), out_time=m(out))
    assert params.reduced == reduced
    strides = [t.divisor_stride for t in params.terms]
    assert strides == sorted(strides, reverse=True)


@pytest.mark.parametrize(
    ("time", "out", "rule"),
    [
        ("A, B", "B, A", "OrderNotPreserved"),
        ("A", "B", "Indivisible"),
        ("A # 8, B", "A, B", "PaddingNotPreserved"),
        ("A, B", "A, 1 # 2", "LeadingPadding"),
    ],
)
def test_contract_time_synthetic_negatives(time: str, out: str, rule: str) -> None:
    with pytest.raises(LayoutError) as info:
        verify_contract_time(time=m(time), out_time=m(out))
    assert (info.value.stage, info.value.rule) == ("contract_time", rule)


L1_TIME = "L1 # 256 / 32 % 4, Bat / 32 % 2, Bat / 64 % 2, L1 # 256 / 8 % 4"
L1_PRE = "L1 # 256 / 32 % 4, Bat / 32 % 2, Bat / 64 % 2, W % 6, W / 6, L1 # 256 / 8 % 4"
LANE_ROWS = [
    ("out_packet_size::valid", "1", "A", "1", "A", "1 # 8", "A", I, 1, 8),
    ("interleaved::valid", "1", "B", "1", "B", "1 # 8", "B", I, 1, 8),
    ("interleaved::valid_padding", "1", "B # 4", "1", "B # 4", "1 # 8", "B # 4", I, 1, 8),
    ("interleaved::valid_no_reduction_with_padding", "1", "A # 8, B", "D", "A # 8, B, D", "1 # 8", "A # 8, B", I, 1, 256),
    ("interleaved::valid_non_outermost", "N", "C, B", "1", "C, B", "N", "C, B", I, 1, 8),
    ("interleaved::valid_four_rows", "M", "C, B", "1", "C, B", "M # 8", "C, B", I, 1, 8),
    ("interleaved::valid_all_time_reduced", "N", "1", "1", "1", "N", "1", I, 1, 8),
    ("sequential::valid", "N", "B", "1", "B, N", "1 # 8", "B", S, 1, 256),
    ("sequential::valid_padded_row", "N", "B", "1", "B, N # 8", "1 # 8", "B", S, 1, 256),
    (
        "sequential::valid_inner_time_across_a_split_padded_axis",
        "L1 # 256 % 8",
        L1_TIME,
        "Bat % 32",
        L1_TIME + ", Bat % 32",
        "L1 # 256 % 8",
        L1_PRE,
        I,
        4,
        1024,
    ),
    ("sequential::valid_all_time_reduced", "N", "1", "1", "N", "1 # 8", "1", S, 1, 256),
    ("sequential::valid_no_reduction_with_padding", "N", "A # 8, B", "1", "A # 8, B, N", "1 # 8", "A # 8, B", S, 1, 256),
    ("sequential::valid_padded_packet", "N", "M", "B", "M, N", "B # 8", "M", S, 1, 256),
    ("sequential::valid_full_temporal_reduction", "N", "1", "D", "N, D / 8", "D % 8", "1", S, 1, 256),
    ("sequential::valid_multi_axis_reduction", "N", "B", "1", "B, N", "1 # 8", "B", S, 1, 256),
    ("sequential::valid_wide_packet_reduced", "1", "N, B", "D", "N, B, D / 8", "D % 8", "A, N, B", S, 16, 512),
    ("sequential::valid_wide_packet_at_capacity", "N", "M", "D", "M, N, D / 8", "D % 8", "A, M", S, 4, 1024),
]


@pytest.mark.parametrize(
    ("name", "lane", "time", "packet", "out_time", "out_packet", "pre", "mode", "inner", "cells"),
    LANE_ROWS,
    ids=[r[0] for r in LANE_ROWS],
)
def test_contract_lane_reference(
    name: str,
    lane: str,
    time: str,
    packet: str,
    out_time: str,
    out_packet: str,
    pre: str,
    mode: LaneMode,
    inner: int,
    cells: int,
) -> None:
    params = verify_contract_lane(lane=m(lane), time=m(time), packet=m(packet), out_time=m(out_time), out_packet=m(out_packet), pre_reduce_time=m(pre), mode=mode)
    assert (params.mode, params.inner_time, params.cells) == (mode, inner, cells)
    assert params.padded_lane * params.inner_time * params.padded_packet == cells
    if mode is I:
        assert (params.padded_lane, params.padded_packet) == (8, m(packet).size)
    else:
        assert (params.padded_lane, params.padded_packet) == (m(lane).size, 32)


def test_contract_lane_synthetic_buffer_exceeded() -> None:
    with pytest.raises(LayoutError) as info:
        verify_contract_lane(lane=m("N"), time=m("M, B"), packet=m("D"), out_time=m("M, B, N, D / 8"), out_packet=m("D % 8"), pre_reduce_time=m("A, M, B"), mode=S)
    assert info.value.rule == "BufferExceeded"
    assert "= 2048 exceeds" in info.value.detail


def test_contract_lane_synthetic_out_packet_mismatch() -> None:
    with pytest.raises(LayoutError) as info:
        verify_contract_lane(lane=m("N"), time=m("B"), packet=m("1"), out_time=m("B"), out_packet=m("1 # 8"), pre_reduce_time=m("B"), mode=I)
    assert info.value.rule == "OutPacketMismatch"
    assert "Expected: N," in info.value.detail
