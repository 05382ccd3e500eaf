"""The switch engine as a typed stage: ``fetch -> switch -> collect`` from a DM view on both evaluators,
the reference's fixtures and the transformer's switches at the reference's sizes (docs/stage-rules.md §5.1,
docs/runtime.md §3.10)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import tcpdsl as tcp
from test_verify_switch import BOOK, INVALID, VALID
from tcpdsl import m
from tcpdsl.numerics.scalars import cast
from tcpdsl.verify.switch_config import SwitchConfig

A = tcp.axis("A", 8)
B = tcp.axis("B", 32)
C = tcp.axis("C", 256)
D = tcp.axis("D", 64)
E = tcp.axis("E", 1024)
G = tcp.axis("G", 32)
Q = tcp.axis("Q", 2048)
P = tcp.axis("P", 1024)
H = tcp.axis("H", 1024)
Dummy64 = tcp.axis("Dummy64", 64)

dev = tcp.Device()
Fixture = tcp.DmTensor[tcp.i8, m["1"], m["1 # 2"], m["C"], m["A, B"]]


@pytest.fixture(params=["fused", "simulate"])
def evaluator(request: pytest.FixtureRequest) -> Iterator[str]:
    with tcp.evaluator(request.param):
        yield request.param


def fixture_data() -> np.ndarray:
    return np.random.default_rng(0).integers(-128, 128, size=(8, 32, 256)).astype(np.int8)


def fetched() -> tcp.FetchTensor:  # type: ignore[type-arg]
    dm = Fixture(tcp.Tensor(fixture_data(), "A B C"))
    return dev.main.begin(dm.view()).fetch(out_time=m["A"], out_packet=m["B"])


FROM_DM = [case for case in VALID if case[1:3] == ("C", "A")]


def test_most_fixtures_start_from_a_dm_view() -> None:
    assert len(FROM_DM) == 8


@pytest.mark.parametrize("config, slice_, time, out_slice, out_time, ring", FROM_DM)
def test_the_reference_fixtures_run_whole(evaluator: str, config: SwitchConfig, slice_: str, time: str,
                                          out_slice: str, out_time: str, ring: int) -> None:
    switched = fetched().switch(config, out_slice=tcp.parse(out_slice, SIZES), out_time=tcp.parse(out_time, SIZES))
    assert switched.flow.steps[-1].params.ring_size == ring
    collected = switched.collect(out_time=tcp.parse(out_time, SIZES), out_packet=m["B"])
    got = collected.to_tensor()
    assert np.array_equal(got.to_numpy("A B C"), fixture_data())


SIZES = dict(A=8, B=32, C=256, D=64, E=1024, G=32)


def test_the_switch_broadcasts_onto_new_axes_and_leaves_top_padding_undefined(evaluator: str) -> None:
    """``Broadcast01(2, 2, 2)`` onto ``[C / 4, D % 4]``: every slice of a group of four holds the group's data."""
    switched = fetched().switch(tcp.Broadcast01(slice1=2, slice0=2, time0=2), out_slice=m["C / 4, D % 4"],
                                out_time=m["A / 2, C / 2 % 2, A % 2, C % 2"])
    physical = switched.physical()  # [Chip, Cluster, Slice, Time, Packet]
    assert physical.shape == (1, 2, 256, 32, 32)
    group = physical[0, 0, :4]
    assert all(np.array_equal(group[0], group[k]) for k in range(4))
    assert not np.array_equal(physical[0, 0, 0], physical[0, 0, 4])


def test_the_simulator_moves_what_the_fused_path_lays_out() -> None:
    config = tcp.Broadcast1(slice1=4, slice0=4)
    with tcp.evaluator("fused"):
        fused = fetched().switch(config, out_slice=m["C / 16, 1 # 4, C % 4"], out_time=m["A, C / 4 % 4"]).physical()
    with tcp.evaluator("simulate"):
        switched = fetched().switch(config, out_slice=m["C / 16, 1 # 4, C % 4"], out_time=m["A, C / 4 % 4"])
        simulated = switched.physical()
    # Cluster 1 is padding, and so are three slices in four: the simulator leaves them poisoned.
    live = fused.reshape(2, 16, 4, 4, 32, 32)[:1, :, 0]
    assert np.array_equal(simulated.reshape(2, 16, 4, 4, 32, 32)[:1, :, 0], live)
    assert (simulated.reshape(2, 16, 4, 4, 32, 32)[:1, :, 1:] == -128).all()


RUNTIME_INVALID = [case for case in INVALID if case[1:3] == ("C", "A")]


@pytest.mark.parametrize("config, slice_, time, out_slice, out_time, rule", RUNTIME_INVALID)
def test_the_reference_negatives_are_refused_at_the_call(config: SwitchConfig, slice_: str, time: str,
                                                         out_slice: str, out_time: str, rule: str) -> None:
    with pytest.raises(tcp.LayoutError) as caught:
        fetched().switch(config, out_slice=tcp.parse(out_slice, SIZES), out_time=tcp.parse(out_time, SIZES))
    assert (caught.value.stage, caught.value.rule) == ("switch", rule)


def test_anything_but_a_configuration_is_refused() -> None:
    with pytest.raises(tcp.LayoutError) as caught:
        fetched().switch([4, 4], out_slice=m["C"], out_time=m["A"])  # type: ignore[arg-type]
    assert (caught.value.rule, caught.value.detail) == (
        "NotAConfig", "switch: the configuration must be one of Forwarding, Broadcast01, Broadcast1, Transpose, "
        "InterTranspose, TransposedBroadcast1, CustomBroadcast, got [4, 4]")


def test_a_switch_has_only_collect_after_it() -> None:
    switched = fetched().switch(tcp.Forwarding(), out_slice=m["C"], out_time=m["A"])
    assert not hasattr(switched, "switch") and not hasattr(switched, "contract_outer")
    assert not hasattr(fetched().collect(out_time=m["A"], out_packet=m["B"]), "switch")


# The projection's gathers at the reference's sizes (examples/transformer/README.md): each slice group's
# rows, committed on its own slices, broadcast to the 32 slices of a head (proj_q, proj_k) or to every slice.
PROJECTION = [
    (tcp.Broadcast1(slice1=8, slice0=4), "Q", m["Q / 32, 1 # 4"], m["Q % 32"], m["Q / 256, 1 # 32"], m["Q / 32 % 8"],
     m["Q / 16 % 16"], m["Q % 16"]),
    (tcp.Broadcast1(slice1=4, slice0=8), "P", m["P / 32, 1 # 8"], m["P % 32"], m["P / 128, 1 # 32"], m["P / 32 % 4"],
     m["P / 16 % 8"], m["P % 16"]),
    (tcp.Broadcast1(slice1=64, slice0=4), "H", m["H / 16, 1 # 4"], m["H % 16"], m["Dummy64, 1 # 4"], m["H / 16"],
     m["H / 16"], m["H % 16"]),
]


@pytest.mark.parametrize("config, axis, slice_, element, out_slice, out_time, time, packet", PROJECTION)
def test_the_projections_switches_at_the_reference_sizes(evaluator: str, config: SwitchConfig, axis: str,
                                                         slice_: tcp.Mapping, element: tcp.Mapping,
                                                         out_slice: tcp.Mapping, out_time: tcp.Mapping,
                                                         time: tcp.Mapping, packet: tcp.Mapping) -> None:
    x = np.random.default_rng(2).standard_normal({"Q": 2048, "P": 1024, "H": 1024}[axis]).astype(np.float32)
    dm = tcp.DmTensor[tcp.bf16, m["1"], m["1 # 2"], slice_, element](tcp.Tensor(x, axis))  # type: ignore[valid-type]
    heads = (dev.main.begin(dm.view())
             .fetch(out_time=m["1"], out_packet=element)
             .switch(config, out_slice=out_slice, out_time=out_time)
             .collect(out_time=time, out_packet=packet))
    assert np.array_equal(heads.to_tensor().to_numpy(axis), cast(x, "bf16"))


# The transformer's other switches at the reference's sizes (mlp, attention, lm_head's gather), from a DM
# tensor holding the data on the input layout to a collected stream, whose values must be the tensor's.
L = tcp.axis("L", 3072)
T = tcp.axis("T", 512)
N = tcp.axis("N", 8)
Gq = tcp.axis("Gq", 2)
Dummy4 = tcp.axis("Dummy4", 4)

OTHERS = [
    # mlp: the custom broadcast of the input over the four slices of each group, then the gated activations
    (tcp.CustomBroadcast(ring_size=4), m["L / 48, 1 # 4"], m["H / 16"], m["H % 16"], m["L / 48, Dummy4"],
     m["H / 16"], "H", tcp.bf16),
    (tcp.Broadcast1(slice1=128, slice0=2), m["L / 24, 1 # 2"], m["L / 8 % 3"], m["L % 8 # 16"], m["H / 8, 1 # 2"],
     m["L / 8 % 3, L / 24"], "L", tcp.bf16),
    (tcp.Broadcast1(slice1=128, slice0=2), m["H / 8, 1 # 2"], m["1"], m["H % 8"], m["Dummy64, 1 # 4"],
     m["H / 8"], "H", tcp.f32),
    # attention: qk_scaled's logits broadcast to every slice
    (tcp.Broadcast1(slice1=64, slice0=4), m["T / 8, 1 # 4"], m["N, Gq"], m["T % 8 # 16"], m["1 # 256"],
     m["N, Gq, T / 8"], "N Gq T", tcp.bf16),
]


@pytest.mark.parametrize("config, slice_, time, packet, out_slice, out_time, axes, dtype", OTHERS,
                         ids=["mlp_custom", "mlp_gate", "mlp_down", "attention"])
def test_the_transformers_other_switches(evaluator: str, config: SwitchConfig, slice_: tcp.Mapping,
                                         time: tcp.Mapping, packet: tcp.Mapping, out_slice: tcp.Mapping,
                                         out_time: tcp.Mapping, axes: str, dtype: type) -> None:
    sizes = {"H": 1024, "L": 3072, "N": 8, "Gq": 2, "T": 512}
    shape = [sizes[a] for a in axes.split()]
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    element = packet if time.size == 1 else tcp.parse(f"{time}, {packet}", sizes)
    dm = tcp.DmTensor[dtype, m["1"], m["1 # 2"], slice_, element](tcp.Tensor(x, axes))  # type: ignore[valid-type]
    collected = (dev.main.begin(dm.view())
                 .fetch(out_time=time, out_packet=packet)
                 .switch(config, out_slice=out_slice, out_time=out_time)
                 .collect(out_time=out_time, out_packet=packet))
    got = collected.to_tensor()
    if sorted(got.axes) != sorted(axes.split()):
        # The mlp's input is held once per group of slices: the stream carries the group digit too.
        assert got.axes == ("L / 48", "H")
        assert all(np.array_equal(row, cast(x, dtype.__name__)) for row in got.to_numpy(m["L / 48, H"]))
    else:
        assert np.array_equal(got.to_numpy(axes), cast(x, dtype.__name__))



@pytest.mark.parametrize("junk", [None, 3, "C", [4, 4], {"ring_size": 4}, tcp.Broadcast1, m["C"]],
                         ids=lambda j: type(j).__name__)
def test_anything_but_a_configuration_is_refused_by_name(junk: object) -> None:
    with pytest.raises(tcp.LayoutError) as caught:
        fetched().switch(junk, out_slice=m["C"], out_time=m["A"])  # type: ignore[arg-type]
    assert (caught.value.stage, caught.value.rule) == ("switch", "NotAConfig")


@pytest.mark.parametrize("junk", [None, 3, [4, 4], tcp.Broadcast1, "Nowhere", "C +"], ids=lambda j: repr(j))
def test_junk_mappings_are_refused(junk: object) -> None:
    """Whatever is passed where a mapping goes, a switch or a transpose call raises a TcpError."""
    collected = fetched().collect(out_time=m["A"], out_packet=m["B"])
    calls = [
        lambda: fetched().switch(tcp.Forwarding(), out_slice=junk, out_time=m["A"]),
        lambda: fetched().switch(tcp.Forwarding(), out_slice=m["C"], out_time=junk),
        lambda: collected.transpose(out_time=junk, out_packet=m["B"]),
        lambda: collected.transpose(out_time=m["A"], out_packet=junk),
    ]
    for call in calls:
        with pytest.raises(tcp.TcpError):
            call()


SCALARS = {"i8": tcp.i8, "f32": tcp.f32}


@pytest.mark.parametrize("config, sizes, slice_, time, out_slice, out_time, packet, dtype, ring, cycles", BOOK,
                         ids=[f"{c[0].name}-{c[8]}" for c in BOOK])
def test_the_books_switches_run_and_report_their_cycles(evaluator: str, config: SwitchConfig, sizes: dict[str, int],
                                                        slice_: str, time: str, out_slice: str, out_time: str,
                                                        packet: str, dtype: str, ring: int, cycles: int) -> None:
    p = lambda text: tcp.parse(text, sizes)  # noqa: E731
    held = p(f"{slice_}, {time}, {packet}").axis_sizes()
    axes = " ".join(sorted(held))
    x = np.random.default_rng(4).integers(-100, 100, size=[held[a] for a in sorted(held)]).astype(np.float32)
    dm = tcp.DmTensor[SCALARS[dtype], m["1"], m["1"], p(slice_), p(f"{time}, {packet}")](  # type: ignore[valid-type]
        tcp.Tensor(x, axes, sizes=held))
    switched = (dev.main.begin(dm.view())
                .fetch(out_time=p(time), out_packet=p(packet))
                .switch(config, out_slice=p(out_slice), out_time=p(out_time)))
    assert np.array_equal(switched.to_tensor().to_numpy(axes), x)
    line = next(text for text in switched.explain().splitlines() if text.startswith("  switch -> "))
    assert f": {cycles} cycles; " in line and f"ring_size {ring}," in line
