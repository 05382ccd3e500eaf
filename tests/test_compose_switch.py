"""The switch and transpose composers: the result type each stage call makes, the public
configurations, and the rules the composers add to the pure verifiers (the sizes where layouts meet,
the result type's constraints)."""

from __future__ import annotations

import pytest

import tcpdsl as tcp
from tcpdsl.algebra import Mapping, parse
from tcpdsl.errors import LayoutError
from tcpdsl.verify.compose_switch import switch, transpose
from tcpdsl.verify.families import COLLECT, CONTRACT, SWITCH, TRANSPOSE, TensorType, check_type

SIZES = dict(A=8, B=32, C=256, D=64, X=4, N=8, M=16)


def p(text: str) -> Mapping:
    return parse(text, SIZES)


def stream(dtype: str, slice_: str, time: str, packet: str) -> TensorType:
    return check_type(COLLECT, (dtype,), (p("1"), p("1 # 2"), p(slice_), p(time), p(packet)))


def test_the_switch_result_keeps_chip_cluster_packet_and_dtype() -> None:
    out, params = switch(stream("i8", "C", "A", "B"), config=tcp.Broadcast1(slice1=4, slice0=4),
                         out_slice=p("C / 16, X, C % 4"), out_time=p("A, C / 4 % 4"))
    assert out.family is SWITCH
    assert out.text() == 'SwitchTensor[i8, m["1"], m["1 # 2"], m["C / 16, X, C % 4"], m["A, C / 4 % 4"], m["B"]]'
    assert (params.ring_size, params.sub_rings, params.time_steps) == (16, 16, 8)


def test_the_configurations_are_public() -> None:
    configs = [tcp.Forwarding(), tcp.Broadcast01(slice1=2, slice0=2, time0=2), tcp.Broadcast1(slice1=8, slice0=4),
               tcp.Transpose(slice1=4, slice0=4), tcp.InterTranspose(slice1=2, slice0=16, time0=2),
               tcp.TransposedBroadcast1(slice1=8, slice0=8), tcp.CustomBroadcast(ring_size=4)]
    assert [c.text for c in configs] == [
        "Forwarding()", "Broadcast01(slice1=2, slice0=2, time0=2)", "Broadcast1(slice1=8, slice0=4)",
        "Transpose(slice1=4, slice0=4)", "InterTranspose(slice1=2, slice0=16, time0=2)",
        "TransposedBroadcast1(slice1=8, slice0=8)", "CustomBroadcast(ring_size=4)",
    ]
    assert tcp.Broadcast1(slice1=8, slice0=4) == tcp.Broadcast1(slice1=8, slice0=4)


@pytest.mark.parametrize("config", [[4, 4], {"slice1": 4}, "Broadcast1", None])
def test_anything_but_a_configuration_is_refused_by_name(config: object) -> None:
    with pytest.raises(LayoutError) as caught:
        switch(stream("i8", "C", "A", "B"), config=config, out_slice=p("C"), out_time=p("A"))
    assert (caught.value.stage, caught.value.rule) == ("switch", "NotAConfig")
    assert caught.value.detail.endswith(f"got {config!r}")


def test_a_switch_output_that_resizes_an_axis_is_refused_where_the_layouts_meet() -> None:
    with pytest.raises(LayoutError) as caught:
        switch(stream("i8", "C", "A", "B"), config=tcp.Forwarding(), out_slice=p("C"), out_time=parse("A", {"A": 4}))
    assert caught.value.rule == "AxisSizeConflict"


def test_the_switch_result_is_a_stream_position() -> None:
    """The switch keeps Cluster, so the result's own constraint cannot fail on a checked receiver;
    a type built directly is checked all the same."""
    with pytest.raises(LayoutError) as caught:
        check_type(SWITCH, ("i8",), (p("1"), p("1 # 4"), p("C"), p("A"), p("B")))
    assert (caught.value.stage, caught.value.rule) == ("SwitchTensor", "ClusterSize")


def test_the_transpose_result_keeps_the_grid_and_dtype() -> None:
    out, params = transpose(stream("i8", "C", "A", "B % 8 # 32"), out_time=p("B % 8"), out_packet=p("A # 32"))
    assert out.family is TRANSPOSE
    assert out.text() == 'TransposeTensor[i8, m["1"], m["1 # 2"], m["C"], m["B % 8"], m["A # 32"]]'
    assert (params.in_rows, params.in_cols, params.out_rows, params.iterations) == (8, 8, 8, 1)


def test_a_contraction_result_transposes_in_its_accumulator() -> None:
    src = check_type(CONTRACT, ("f32",), (p("1"), p("1 # 2"), p("C"), p("N % 2"), p("M % 8")))
    out, params = transpose(src, out_time=p("M % 8"), out_packet=p("N % 2 # 8"))
    assert out.dtypes == ("f32",) and (params.in_rows, params.valid_size) == (2, 8)


def test_the_transpose_result_is_one_flit() -> None:
    with pytest.raises(LayoutError) as caught:
        check_type(TRANSPOSE, ("i8",), (p("1"), p("1 # 2"), p("C"), p("A"), p("B % 16")))
    assert (caught.value.stage, caught.value.rule) == ("TransposeTensor", "PacketFlit")
    assert caught.value.detail == "Packet size must be exactly one flit (32 bytes), got 16 bytes (Packet B % 16 of i8)"
