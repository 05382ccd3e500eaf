"""The switch and transpose engines on physical buffers: each moves cells and computes nothing, so
laid out before and read back after, every live output cell holds the logical element its layout
names (axes the input does not carry broadcast), whatever the configuration."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_verify_switch import BOOK, CUSTOM_VALID, FIXTURE, POWERS, TRANSFORMER, TRANSFORMER_SWITCHES, UNIT, VALID
from test_verify_switch import _slice_split
from test_verify_transpose import BOOK as TRANSPOSE_BOOK
from test_verify_transpose import UNIT as TRANSPOSE_UNIT
from test_verify_transpose import UNIT_CASES
from tcpdsl.algebra import Mapping, pairs, parse
from tcpdsl.numerics.placement import plan
from tcpdsl.numerics.switch_ops import ring_pass, switch_route
from tcpdsl.numerics.transfer import to_physical
from tcpdsl.numerics.transpose_ops import transpose_flits
from tcpdsl.verify.switch import verify_switch
from tcpdsl.verify.switch_config import Broadcast1, CustomBroadcast, SwitchConfig, Transpose, TransposedBroadcast1
from tcpdsl.verify.transpose import verify_transpose

POISON = -(1 << 40)


def _logical(mapping: Mapping, seed: int) -> tuple[np.ndarray[Any, Any], tuple[str, ...]]:
    sizes = mapping.axis_sizes()
    axes = tuple(sorted(sizes))
    values = np.random.default_rng(seed).integers(0, 1 << 30, size=tuple(sizes[a] for a in axes))
    return values, axes


def _moved(before: Mapping, after: Mapping, move: Any) -> None:
    """Lay a random tensor out on ``before``, ``move`` the buffer, and compare with ``after``'s layout."""
    values, axes = _logical(before, 7)
    got = move(to_physical(values, axes, before, fill=POISON)).reshape(-1)
    expected = to_physical(values, axes, after, fill=POISON)
    live = plan(after).live
    assert np.array_equal(got[live], expected[live])


def _switch(config: SwitchConfig, sizes: dict[str, int], slice_: str, time: str, out_slice: str, out_time: str,
            packet: str = "B", dtype: str = "i8") -> int:
    p = lambda text: parse(text, sizes)  # noqa: E731
    params = verify_switch(dtype, config, cluster=p("1"), slice=p(slice_), time=p(time), packet=p(packet),
                           out_slice=p(out_slice), out_time=p(out_time))
    route = switch_route(p(slice_), p(time), p(out_slice), p(out_time), params.ring_size)
    shape = (1, p(slice_).size, p(time).size, p(packet).size)
    _moved(pairs([p(slice_), p(time), p(packet)]), pairs([p(out_slice), p(out_time), p(packet)]),
           lambda buffer: ring_pass(buffer.reshape(shape), route, POISON))
    return params.ring_size


@pytest.mark.parametrize("config, slice_, time, out_slice, out_time, ring", VALID)
def test_the_named_configurations_move_every_packet_to_its_place(config: SwitchConfig, slice_: str, time: str,
                                                                 out_slice: str, out_time: str, ring: int) -> None:
    assert _switch(config, FIXTURE, slice_, time, out_slice, out_time) == ring


@pytest.mark.parametrize("slice_, time, out_slice, out_time, ring", CUSTOM_VALID)
def test_custom_routings_move_every_packet_to_its_place(slice_: str, time: str, out_slice: str, out_time: str,
                                                        ring: int) -> None:
    assert _switch(CustomBroadcast(ring_size=ring), UNIT, slice_, time, out_slice, out_time,
                   packet="D, E", dtype="f32") == ring


@pytest.mark.parametrize("config, sizes, slice_, time, out_slice, out_time, packet, dtype, ring, cycles", BOOK)
def test_the_books_switches(config: SwitchConfig, sizes: dict[str, int], slice_: str, time: str, out_slice: str,
                            out_time: str, packet: str, dtype: str, ring: int, cycles: int) -> None:
    assert _switch(config, sizes, slice_, time, out_slice, out_time, packet, dtype) == ring


@pytest.mark.parametrize("config, slice_, time, packet, dtype, out_slice, out_time, ring", TRANSFORMER_SWITCHES)
def test_the_transformers_switches(config: SwitchConfig, slice_: str, time: str, packet: str, dtype: str,
                                   out_slice: str, out_time: str, ring: int) -> None:
    assert _switch(config, TRANSFORMER, slice_, time, out_slice, out_time, packet, dtype) == ring


def test_a_packet_never_leaves_its_sub_ring() -> None:
    """Forwarding is a ring of one: every packet stays on its slice, whatever the time steps hold."""
    c, a = parse("C", FIXTURE), parse("A", FIXTURE)
    route = switch_route(c, a, c, a, 1)
    assert np.array_equal(route.source_slice, np.broadcast_to(np.arange(256)[:, None], (256, 8)))
    assert route.live.all()
    buffer = np.arange(256 * 8 * 32).reshape(1, 256, 8, 32)
    assert np.array_equal(ring_pass(buffer, route, POISON), buffer)


def test_a_top_padded_broadcast_slot_is_left_undefined() -> None:
    """``Broadcast1`` onto ``1 # 4``: one slice in four holds the data, the others are don't-care."""
    p = lambda text: parse(text, FIXTURE)  # noqa: E731
    route = switch_route(p("C"), p("A"), p("C / 16, 1 # 4, C % 4"), p("A, C / 4 % 4"), 16)
    assert route.live.reshape(16, 4, 4, 32)[:, 0].all() and not route.live.reshape(16, 4, 4, 32)[:, 1:].any()


def _transpose(dtype: str, sizes: dict[str, int], time: str, packet: str, out_time: str, out_packet: str) -> None:
    p = lambda text: parse(text, sizes)  # noqa: E731
    params = verify_transpose(dtype, time=p(time), packet=p(packet), out_time=p(out_time), out_packet=p(out_packet))
    shape = (1, p(time).size, p(packet).size)
    _moved(pairs([p(time), p(packet)]), pairs([p(out_time), p(out_packet)]),
           lambda buffer: transpose_flits(buffer.reshape(shape), params, POISON))


@pytest.mark.parametrize("name, dtype, time, packet, out_time, out_packet, derived", UNIT_CASES,
                         ids=[c[0] for c in UNIT_CASES])
def test_the_transpose_unit_cases_move_every_element(name: str, dtype: str, time: str, packet: str, out_time: str,
                                                     out_packet: str, derived: tuple[int, ...]) -> None:
    _transpose(dtype, TRANSPOSE_UNIT, time, packet, out_time, out_packet)


@pytest.mark.parametrize("dtype, sizes, time, packet, out_time, out_packet, derived, cycles", TRANSPOSE_BOOK)
def test_the_books_transposes(dtype: str, sizes: dict[str, int], time: str, packet: str, out_time: str,
                              out_packet: str, derived: tuple[int, ...], cycles: int) -> None:
    _transpose(dtype, sizes, time, packet, out_time, out_packet)


def test_a_transpose_cut_short_drops_the_last_columns() -> None:
    """i8 ``[A][B # 32] -> [B][A # 32]`` with A=4, B=2: two of the eight columns are written out."""
    p = lambda text: parse(text, TRANSPOSE_UNIT)  # noqa: E731
    params = verify_transpose("i8", time=p("A"), packet=p("B # 32"), out_time=p("B"), out_packet=p("A # 32"))
    buffer = np.arange(4 * 32).reshape(1, 4, 32)
    out = transpose_flits(buffer, params, POISON)
    assert out.shape == (1, 2, 32)
    assert out[0, :, :4].tolist() == [[0, 32, 64, 96], [1, 33, 65, 97]]
    assert (out[0, :, 4:] == POISON).all()


@settings(max_examples=30, deadline=None)
@given(slice1=POWERS, slice0=POWERS, kind=st.sampled_from(["Broadcast1", "Transpose", "TransposedBroadcast1"]))
def test_the_ring_delivers_every_rebuilt_output(slice1: int, slice0: int, kind: str) -> None:
    """Law: whatever the split, the ring moves each packet to where the configuration's rebuilt output says."""
    s2, s1, s0 = _slice_split(slice1, slice0)
    x, y = parse("X", dict(X=slice1)), parse("Y", dict(Y=slice0))
    a, c, b = parse("A", FIXTURE), parse("C", FIXTURE), parse("B", FIXTURE)
    config: SwitchConfig
    if kind == "Broadcast1":
        config, out_slice, out_time = Broadcast1(slice1=slice1, slice0=slice0), pairs([s2, x, s0]), pairs([a, s1])
    elif kind == "Transpose":
        config, out_slice, out_time = Transpose(slice1=slice1, slice0=slice0), pairs([s2, s0, s1]), a
    else:
        config = TransposedBroadcast1(slice1=slice1, slice0=slice0)
        out_slice, out_time = pairs([s2, y, s1]), pairs([a, s0])
    params = verify_switch("i8", config, cluster=parse("1", {}), slice=c, time=a, packet=b, out_slice=out_slice,
                           out_time=out_time)
    route = switch_route(c, a, out_slice, out_time, params.ring_size)
    assert route.live.all()
    assert ((np.arange(256)[:, None] // params.ring_size) == route.source_slice // params.ring_size).all()
    shape = (1, 256, 8, 32)
    _moved(pairs([c, a, b]), pairs([out_slice, out_time, b]),
           lambda buffer: ring_pass(buffer.reshape(shape), route, POISON))
