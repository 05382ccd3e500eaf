"""Laws of the stream engines (docs/runtime.md §4): whenever the rules accept a stream, moving it changes
no value, on both evaluators, and the two evaluators agree cell for cell."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.numerics.placement import plan
from tcpdsl.numerics.scalars import cast

R = tcp.axis("R", 8)
E = tcp.axis("E", 32)
dev = tcp.Device()

# Element layouts of the source and destination, stream splits, and dtypes to draw from.
ELEMENTS = ["R, E", "E, R", "R / 2, E, R % 2", "E / 8, R, E % 8", "R, E # 64"]
STREAMS = [("R", "E"), ("R, E / 16", "E % 16"), ("E / 8, R", "E % 8"), ("1", "R, E"), ("E", "R")]
DTYPES = [tcp.bf16, tcp.i8, tcp.f32, tcp.i32]
FLIT = {"bf16": 16, "i8": 32, "f32": 8, "i32": 8}  # elements in one 32-byte flit


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    src=st.sampled_from(ELEMENTS),
    dst=st.sampled_from(ELEMENTS),
    stream=st.sampled_from(STREAMS),
    dtype=st.sampled_from(DTYPES),
    seed=st.integers(0, 2**16),
)
def test_a_round_trip_through_dm_keeps_every_value(src: str, dst: str, stream: tuple[str, str], dtype: type,
                                                   seed: int) -> None:
    x = np.random.default_rng(seed).integers(-100, 100, (8, 32))
    dm = tcp.DmTensor[dtype, m["1"], m["1 # 2"], m["1 # 64"], m[src]](tcp.Tensor(x, [R, E]))
    results = {}
    for name in ("fused", "simulate"):
        with tcp.evaluator(name):
            try:
                fetched = dev.main.begin(dm.view()).fetch(out_time=m[stream[0]], out_packet=m[stream[1]])
                flit = FLIT[dtype.name]  # type: ignore[attr-defined]
                packet = fetched.layout["Packet"]
                whole = packet.size <= flit  # the packet fits one flit, else its outer flits join Time
                collected = fetched.collect(
                    out_time=m[stream[0] if whole else f"{stream[0]}, ({packet}) / {flit}"],
                    out_packet=m[f"({packet}) # {flit}" if whole else f"({packet}) % {flit}"],
                )
                trimmed = collected.commit_trim(out_packet=collected.layout["Packet"])
                out = trimmed.commit(element=m[dst])
                live = plan(out.mapping).live
                results[name] = out.to_tensor().to_numpy("R E"), out.physical().reshape(-1)[live]
            except tcp.TcpError:
                assume(False)
    expected = cast(x, dtype)
    for values, _ in results.values():
        assert np.array_equal(values, expected)
    assert np.array_equal(results["fused"][1], results["simulate"][1])  # every live cell, in place
