"""The verifiers are pure: no numpy on import, cached results, and the same failure on every call."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpdsl.algebra import parse
from tcpdsl.errors import LayoutError
from tcpdsl.verify import read_size, verify_contract_outer, verify_contract_packet, verify_contract_time


def test_import_does_not_load_numpy() -> None:
    code = "import sys, tcpdsl.verify; print('numpy' in sys.modules, 'ml_dtypes' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_results_are_cached_on_structure() -> None:
    sizes = {"A": 4, "B": 2}
    first = verify_contract_time(time=parse("A, B", sizes), out_time=parse("A", sizes))
    again = verify_contract_time(time=parse("A, B", sizes), out_time=parse("A", sizes))
    assert again is first


def test_cached_failures_raise_fresh_equal_errors() -> None:
    sizes = {"A": 4, "B": 2}
    errors = []
    for _ in range(2):
        with pytest.raises(LayoutError) as info:
            verify_contract_time(time=parse("A, B", sizes), out_time=parse("B, A", sizes))
        errors.append(info.value)
    assert errors[0] is not errors[1]
    first, second = ((e.stage, e.rule, e.detail, e.hint) for e in errors)
    assert first == second
    assert first[:2] == ("contract_time", "OrderNotPreserved")


@settings(max_examples=60, deadline=None)
@given(depth=st.integers(0, 5), log_k=st.integers(5, 6))
def test_packet_reducer_accepts_every_outer_prefix(depth: int, log_k: int) -> None:
    # Law: Packet / 2**d is a valid contraction of Packet at depth d (when it fits the 32 columns).
    k = 1 << log_k
    packet = parse("K", {"K": k})
    out = packet.split_at(1 << depth)[0]
    if out.size > 32:
        with pytest.raises(LayoutError):
            verify_contract_packet("i8", packet=packet, out_packet=out)
    else:
        assert verify_contract_packet("i8", packet=packet, out_packet=out).depth == depth


@settings(max_examples=60, deadline=None)
@given(k=st.sampled_from([16, 32, 64, 128]), o=st.integers(1, 4), tiling=st.integers(1, 3))
def test_stream_adapter_accepts_the_documented_joint_shape(k: int, o: int, tiling: int) -> None:
    # Law: OutTime = [Time / PackSize, TimeBroadcast], OutPacket = [Time % PackSize, Packet] always passes.
    sizes = {"K": k, "O": o, "T": tiling, "N": 8}
    time = parse("O, K / 16", sizes)
    packet = parse("K % 16", sizes)
    pack = 2 if (time.size % 2 == 0) else 1
    time_outer, time_packed = time.split_at(pack)
    out_time = time_outer.pair(parse("T", sizes))
    out_packet = time_packed.pair(packet)
    element = parse("K", sizes)
    params = verify_contract_outer("bf16", "bf16", time=time, packet=packet, lane=parse("N", sizes), element=element, out_time=out_time, out_packet=out_packet)
    assert params.pack_size == pack
    assert params.time_broadcast == parse("T", sizes)
    assert params.read_size == read_size(16, element, out_packet)
    assert out_packet.size % params.read_size == 0
    assert params.read_size * 16 <= 512
    assert params.packet_broadcast * params.read_size == out_packet.size
