"""Logical tensors, the device, and the six pipeline tensor classes at run time."""

from __future__ import annotations

import typing
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.errors import DtypeError, LayoutError, TcpError
from tcpdsl.tensors.results import ContractOuterTensor, ContractPacketTensor, ContractTensor, ContractTimeTensor
from tcpdsl.tensors.sources import CollectTensor, TrfTensor

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)
D = tcp.axis("D", 3)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
WeightStream = CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / 16"], m["B % 16"]]

RNG = np.random.default_rng(7)
X = RNG.standard_normal((32, 32))
Y = RNG.standard_normal((8, 32))


@pytest.fixture()
def dev() -> tcp.Device:
    return tcp.Device(tcp.Topology(chips=1, pes=8))


def _chain(dev: tcp.Device) -> typing.Any:
    a = Stream(dev.main, tcp.Tensor(X, "A B"))
    trf = WeightStream(dev.sub, tcp.Tensor(Y, "C B")).to_trf(lane=m["C"], element=m["B"])
    return a, trf


# -- logical tensors ------------------------------------------------------------------------------
def test_tensor_axes_shape_and_dtype() -> None:
    x = tcp.Tensor(np.zeros((32, 8), dtype=np.float32), "A C")
    assert x.axes == ("A", "C")
    assert x.shape == (32, 8)
    assert x.dtype == np.float32
    assert x.sizes == {"A": 32, "C": 8}


def test_tensor_to_numpy_reorders_axes() -> None:
    data = np.arange(32 * 8).reshape(32, 8)
    x = tcp.Tensor(data, "A C")
    np.testing.assert_array_equal(x.to_numpy("C A"), data.T)
    np.testing.assert_array_equal(x.to_numpy("A, C"), data)
    np.testing.assert_array_equal(x.to_numpy(), data)


def test_tensor_to_numpy_copies_in_memory_order() -> None:
    data = np.arange(32 * 8).reshape(32, 8)
    x = tcp.Tensor(data, "A C")
    swapped = x.to_numpy("C A")
    assert swapped.flags.f_contiguous and not np.shares_memory(swapped, data)
    swapped[0, 0] = -1
    assert data[0, 0] == 0 and x.to_numpy()[0, 0] == 0


def test_tensor_to_numpy_other_axes_is_a_layout_error() -> None:
    x = tcp.Tensor(np.zeros((32, 8)), "A C")
    with pytest.raises(LayoutError) as info:
        x.to_numpy("A B")
    assert info.value.rule == "AxesMismatch"
    assert "must name exactly the axes A C" in str(info.value)


def test_tensor_shape_mismatch() -> None:
    with pytest.raises(LayoutError) as info:
        tcp.Tensor(np.zeros((8, 32)), "A C")
    assert (info.value.stage, info.value.rule) == ("Tensor", "ShapeMismatch")
    assert "shape (8, 32) does not match the axes A C (A=32, C=8)" in str(info.value)


def test_tensor_unknown_axis() -> None:
    with pytest.raises(LayoutError) as info:
        tcp.Tensor(np.zeros((4,)), "Q")
    assert info.value.rule == "UnknownAxis"
    assert "axis Q is not declared" in str(info.value)


def test_tensor_explicit_sizes_and_local_axes() -> None:
    x = tcp.Tensor(np.zeros((4, 2)), "Q R", sizes={"Q": 4, "R": 2})
    assert x.sizes == {"Q": 4, "R": 2}
    Z = tcp.axis("Z", 5)  # noqa: N806  (an axis bound in a function scope resolves too)
    assert tcp.Tensor(np.zeros(5), "Z").sizes == {"Z": Z.n}


@pytest.mark.parametrize("axes", ["A A", "a", "A-B", 3])
def test_tensor_bad_axis_names(axes: object) -> None:
    with pytest.raises(LayoutError):
        tcp.Tensor(np.zeros((32, 32)), axes)  # type: ignore[arg-type]


@pytest.mark.parametrize("data", [[object()] * 3, ["a", "b", "c"], [1j, 2j, 3j], [[1, 2], [3]]])
def test_tensor_non_numeric_data(data: object) -> None:
    with pytest.raises(LayoutError) as info:
        tcp.Tensor(data, "D")  # type: ignore[arg-type]
    assert info.value.rule in ("NotAnArray", "ShapeMismatch")


def test_tensor_accepts_ml_dtypes_data() -> None:
    x = tcp.Tensor(np.ones(3, dtype=tcp.bf16.numpy), "D")
    assert x.dtype == tcp.bf16.numpy


def test_tensor_repr_is_compact() -> None:
    x = tcp.Tensor(np.full((32, 8), 123.25), "A C")
    assert repr(x) == "Tensor[A=32 C=8](float64)"


def test_topology_rejects_non_positive() -> None:
    with pytest.raises(LayoutError):
        tcp.Topology(chips=0)
    dev = tcp.Device(tcp.Topology(chips=2, pes=4))
    assert dev.main.unit == "main" and dev.sub.unit == "sub"
    assert dev.main.device is dev
    assert repr(dev) == "Device(chips=2, pes=4)"


def test_layout_must_fit_the_device() -> None:
    small = tcp.Device(tcp.Topology(chips=1, pes=4))  # 4 PEs hold 256 slices; Stream spans 2 x 256
    with pytest.raises(LayoutError) as caught:
        Stream(small.main, tcp.Tensor(X, "A B"))
    assert (caught.value.stage, caught.value.rule) == ("CollectTensor", "SliceCount")
    assert "Cluster 1 # 2 x Slice 1 # 256 spans 512 slices, but 4 processing elements hold 256" in str(caught.value)
    two_chips = m["1 # 2"]
    Wide = CollectTensor[tcp.bf16, two_chips, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
    with pytest.raises(LayoutError, match=r"ChipCount: Chip 1 # 2 spans 2 chips, but the device has 1"):
        Wide(tcp.Device().main, tcp.Tensor(X, "A B"))
    assert Wide(tcp.Device(tcp.Topology(chips=2)).main, tcp.Tensor(X, "A B")).layout["Chip"].size == 2
    with pytest.raises(LayoutError, match="SliceCount"):
        TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["C"], m["B"]](small.sub, tcp.Tensor(Y, "C B"))


# -- subscription ---------------------------------------------------------------------------------
def test_subscription_is_cached_by_normalized_layout() -> None:
    again = CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A,B/16"], m["[B % 16]"]]
    assert again is Stream
    assert CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]] is Stream


def test_subscription_repr_is_canonical() -> None:
    assert repr(Stream) == 'CollectTensor[bf16, m["1"], m["1 # 2"], m["1 # 256"], m["A, B / 16"], m["B % 16"]]'


def test_subscription_accepts_literal_strings() -> None:
    hint = CollectTensor[tcp.bf16, typing.Literal["1"], "1 # 2", "1 # 256", "A, B / 16", "B % 16"]
    assert hint is Stream


def test_subscription_with_type_variables_is_an_ordinary_generic() -> None:
    T = typing.TypeVar("T")
    alias = CollectTensor[tcp.bf16, T, Cluster, Slice, typing.Any, m["B % 16"]]
    assert typing.get_origin(alias) is CollectTensor
    args = typing.get_args(alias)
    assert args[1] is T and args[2] == typing.Literal["1 # 2"]


@pytest.mark.parametrize(
    ("make", "stage", "rule", "text"),
    [
        (
            lambda: CollectTensor[tcp.bf16, Chip, m["1 # 4"], Slice, m["A"], m["B % 16"]],
            "CollectTensor", "ClusterSize", "Cluster size must be 1 or 2, got 4",
        ),
        (
            lambda: CollectTensor[tcp.bf16, Chip, Cluster, m["1 # 32"], m["A"], m["B % 16"]],
            "CollectTensor", "SliceSize", "Slice size must be one of 64 | 128 | 256, got 32",
        ),
        (
            lambda: CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A"], m["B"]],
            "CollectTensor", "PacketFlit", "Packet size must be exactly one flit (32 bytes)",
        ),
        (
            lambda: ContractOuterTensor[tcp.f32, tcp.bf16, Chip, Cluster, Slice, m["C"], m["A"], m["B % 8"]],
            "ContractOuterTensor", "PacketFlits", "Packet size must be one or two flits (32 or 64 bytes)",
        ),
        (
            lambda: ContractPacketTensor[tcp.f32, Chip, Cluster, Slice, m["C"], m["A"], m["D"]],
            "ContractPacketTensor", "PacketPow2", "Packet element count must be a power of two",
        ),
        (
            lambda: ContractTimeTensor[tcp.f32, Chip, Cluster, Slice, m["C"], m["A"], m["B, 2"]],
            "ContractTimeTensor", "PacketPow2", "at most the accumulator column count (32)",
        ),
        (
            lambda: ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["B % 16"]],
            "ContractTensor", "ContractPacketSize", "Packet size must be exactly one flit (32 bytes)",
        ),
        (
            lambda: CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A"]],
            "CollectTensor", "TypeArguments", "CollectTensor takes 6 type arguments",
        ),
        (
            lambda: CollectTensor[tcp.bf16, Chip, Cluster, Slice, 7, m["B % 16"]],
            "CollectTensor", "NotAMapping", "the Time argument must be a mapping",
        ),
    ],
)
def test_constructor_constraints_fail_at_subscription(make: typing.Any, stage: str, rule: str, text: str) -> None:
    with pytest.raises(LayoutError) as info:
        make()
    assert (info.value.stage, info.value.rule) == (stage, rule)
    assert text in str(info.value)


@pytest.mark.parametrize(
    ("make", "rule", "text"),
    [
        (lambda: CollectTensor[int, Chip, Cluster, Slice, m["A"], m["B % 16"]], "NotADtype", "must be a scalar type"),
        (
            lambda: ContractOuterTensor[tcp.i32, tcp.bf16, Chip, Cluster, Slice, m["C"], m["A"], m["B"]],
            "Accumulator", "a bf16 stream accumulates in f32, not i32",
        ),
        (
            lambda: ContractOuterTensor[tcp.f32, tcp.f32, Chip, Cluster, Slice, m["C"], m["A"], m["C"]],
            "NoMultiplier", "f32 is not a contraction stream dtype",
        ),
        (
            lambda: ContractPacketTensor[tcp.bf16, Chip, Cluster, Slice, m["C"], m["A"], m["1"]],
            "NotAnAccumulator", "must be i32 or f32, got bf16",
        ),
    ],
)
def test_dtype_arguments_fail_at_subscription(make: typing.Any, rule: str, text: str) -> None:
    with pytest.raises(DtypeError) as info:
        make()
    assert info.value.rule == rule
    assert text in str(info.value)


def test_a_bad_annotation_fails_at_definition_time() -> None:
    # Compiled without this module's postponed annotations, as a user module would be.
    source = 'def k(x: CollectTensor[tcp.bf16, Chip, m["1 # 3"], Slice, m["A"], m["B % 16"]]) -> None: ...'
    code = compile(source, "<kernel>", "exec", dont_inherit=True)
    with pytest.raises(LayoutError) as info:
        exec(code, dict(globals()))
    assert (info.value.stage, info.value.rule) == ("CollectTensor", "ClusterSize")


# -- building tensors -----------------------------------------------------------------------------
def test_collect_lays_out_and_reads_back(dev: tcp.Device) -> None:
    a = Stream(dev.main, tcp.Tensor(X, "A B"))
    assert isinstance(a, Stream) and isinstance(a, CollectTensor)
    assert a.dtype is tcp.bf16
    assert a.context is dev.main
    cast = tcp.Tensor(X, "A B").values.astype(tcp.bf16.numpy)
    np.testing.assert_array_equal(a.to_tensor().to_numpy("A B"), cast)
    phys = a.physical()
    assert phys.shape == (1, 2, 256, 64, 16)
    np.testing.assert_array_equal(phys[0, 0, 0].reshape(32, 2, 16).reshape(32, 32), cast)
    assert not phys[0, 1].astype(np.float32).any() and not phys[0, 0, 1:].astype(np.float32).any()


def test_collect_casts_to_its_dtype(dev: tcp.Device) -> None:
    ints = CollectTensor[tcp.i8, Chip, Cluster, Slice, m["1"], m["B"]](dev.main, tcp.Tensor(np.arange(32) * 10, "B"))
    values = ints.to_tensor().values
    assert values.dtype == np.int8
    assert values[13] == np.int8(130 - 256)


def test_collect_rejects_an_axis_missing_from_the_layout(dev: tcp.Device) -> None:
    with pytest.raises(LayoutError) as info:
        Stream(dev.main, tcp.Tensor(np.zeros((32, 32, 8)), "A B C"))
    assert (info.value.stage, info.value.rule) == ("CollectTensor", "AxisNotInLayout")


def test_collect_rejects_a_partly_covered_axis(dev: tcp.Device) -> None:
    half = CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A % 8"], m["B % 16"]]
    with pytest.raises(LayoutError) as info:
        half(dev.main, tcp.Tensor(X, "A B"))
    assert info.value.rule == "AxisNotCovered"


def test_collect_replicates_over_axes_the_tensor_lacks(dev: tcp.Device) -> None:
    vector = RNG.standard_normal(32)
    a = Stream(dev.main, tcp.Tensor(vector, "B"))
    phys = a.physical()[0, 0, 0].astype(np.float32).reshape(32, 32)
    np.testing.assert_array_equal(phys, np.broadcast_to(vector.astype(tcp.bf16.numpy).astype(np.float32), (32, 32)))


def test_collect_needs_a_context_and_a_tensor(dev: tcp.Device) -> None:
    with pytest.raises(LayoutError) as info:
        Stream(tcp.Tensor(X, "A B"), dev.main)
    assert info.value.rule == "NotAContext"
    with pytest.raises(LayoutError) as info:
        Stream(dev.main, X)
    assert info.value.rule == "NotATensor"


def test_a_bare_class_cannot_be_built(dev: tcp.Device) -> None:
    with pytest.raises(LayoutError) as info:
        CollectTensor(dev.main, tcp.Tensor(X, "A B"))
    assert info.value.rule == "Unspecialised"


def test_trf_built_directly_equals_to_trf(dev: tcp.Device) -> None:
    _, trf = _chain(dev)
    direct = TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["C"], m["B"]](tcp.Tensor(Y, "C B"))
    assert isinstance(trf, type(direct)) and isinstance(direct, type(direct))
    np.testing.assert_array_equal(trf.physical(), direct.physical())
    assert trf.physical().shape == (1, 2, 256, 8, 32)


def test_to_trf_runs_its_verifier(dev: tcp.Device) -> None:
    w = WeightStream(dev.sub, tcp.Tensor(Y, "C B"))
    with pytest.raises(LayoutError) as info:
        w.to_trf(lane=m["C"], element=m["B / 2"])
    assert (info.value.stage, info.value.rule) == ("to_trf", "ElementMismatch")
    with pytest.raises(LayoutError) as info:
        w.to_trf(lane=m["3"], element=m["B"])
    assert info.value.rule == "LaneSize"


# -- the chain ------------------------------------------------------------------------------------
def test_stage_order_is_typestate_at_run_time(dev: tcp.Device) -> None:
    a, trf = _chain(dev)
    outer = a.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
    packet = outer.contract_packet(out_packet=m["1"])
    time = packet.contract_time(out_time=m["A"])
    out = time.contract_lane(out_time=m["A"], out_packet=m["C"])
    for tensor, present, absent in [
        (a, "contract_outer", ("contract_packet", "contract_time", "contract_lane")),
        (outer, "contract_packet", ("contract_outer", "contract_time", "contract_lane", "to_trf")),
        (packet, "contract_time", ("contract_outer", "contract_packet", "contract_lane")),
        (time, "contract_lane", ("contract_outer", "contract_packet", "contract_time")),
    ]:
        assert hasattr(tensor, present)
        for name in absent:
            assert not hasattr(tensor, name), name
    assert not any(hasattr(out, n) for n in ("contract_outer", "contract_packet", "contract_time", "contract_lane"))
    with pytest.raises(AttributeError):
        a.contract_packet(out_packet=m["1"])  # type: ignore[attr-defined]


def test_full_chain_matches_einsum(dev: tcp.Device) -> None:
    a, trf = _chain(dev)
    out = (
        a.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A"], out_packet=m["C"], mode=tcp.LaneMode.INTERLEAVED)
    )
    assert isinstance(out, ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]])
    x = X.astype(tcp.bf16.numpy).astype(np.float64)
    y = Y.astype(tcp.bf16.numpy).astype(np.float64)
    result = out.to_tensor()
    assert result.dtype == np.float32
    np.testing.assert_allclose(result.to_numpy("A C"), np.einsum("ab,cb->ac", x, y), rtol=1e-5, atol=1e-5)
    assert out.physical().shape == (1, 2, 256, 32, 8)


def test_each_stage_result_type_and_views(dev: tcp.Device) -> None:
    a, trf = _chain(dev)
    outer = a.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
    assert isinstance(outer, ContractOuterTensor[tcp.f32, tcp.bf16, Chip, Cluster, Slice, m["C"], m["A"], m["B"]])
    assert outer.physical().shape == (1, 2, 256, 8, 32, 32)
    product = outer.to_tensor()
    assert sorted(product.axes) == ["A", "B", "C"]
    x = X.astype(tcp.bf16.numpy).astype(np.float32)
    y = Y.astype(tcp.bf16.numpy).astype(np.float32)
    np.testing.assert_array_equal(product.to_numpy("A C B"), x[:, None, :] * y[None, :, :])
    packet = outer.contract_packet(out_packet=m["1"])
    assert isinstance(packet, ContractPacketTensor[tcp.f32, Chip, Cluster, Slice, m["C"], m["A"], m["1"]])
    time = packet.contract_time(out_time=m["A"])
    assert isinstance(time, ContractTimeTensor[tcp.f32, Chip, Cluster, Slice, m["C"], m["A"], m["1"]])
    np.testing.assert_allclose(time.to_tensor().to_numpy("A C"), (x.astype(np.float64) @ y.T.astype(np.float64)), rtol=1e-5)


def test_integer_chain_accumulates_in_i32(dev: tcp.Device) -> None:
    K = tcp.axis("K", 32)  # noqa: N806
    xs = RNG.integers(-128, 128, size=(32, 32))
    ws = RNG.integers(-128, 128, size=(8, 32))
    s = CollectTensor[tcp.i8, Chip, Cluster, Slice, m["A"], m["K"]](dev.main, tcp.Tensor(xs, "A K"))
    w = TrfTensor[tcp.i9, Chip, Cluster, Slice, m["C"], m["K"]](tcp.Tensor(ws, "C K"))
    out = (
        s.contract_outer(w, out_time=m["A"], out_packet=m["K"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A"], out_packet=m["C"])
    )
    assert out.dtype is tcp.i32
    result = out.to_tensor().to_numpy("A C")
    assert result.dtype == np.int32
    np.testing.assert_array_equal(result, xs @ ws.T)
    assert K.n == 32


def test_contract_outer_rejects_a_dtype_pair_without_a_multiplier(dev: tcp.Device) -> None:
    a, _ = _chain(dev)
    w = TrfTensor[tcp.i8, Chip, Cluster, Slice, m["C"], m["B"]](tcp.Tensor(np.zeros((8, 32)), "C B"))
    with pytest.raises(DtypeError) as info:
        a.contract_outer(w, out_time=m["A"], out_packet=m["B"])  # type: ignore[call-overload]
    assert (info.value.stage, info.value.rule) == ("contract_outer", "NoMultiplier")


def test_contract_outer_rejects_a_different_grid(dev: tcp.Device) -> None:
    a, _ = _chain(dev)
    w = TrfTensor[tcp.bf16, Chip, m["1"], Slice, m["C"], m["B"]](tcp.Tensor(Y, "C B"))
    with pytest.raises(LayoutError) as info:
        a.contract_outer(w, out_time=m["A"], out_packet=m["B"])  # type: ignore[arg-type]
    assert (info.value.stage, info.value.rule) == ("contract_outer", "ClusterMismatch")
    assert "the TRF's Cluster 1 differs from the stream's Cluster 1 # 2" in str(info.value)


def test_contract_outer_needs_a_trf(dev: tcp.Device) -> None:
    a, _ = _chain(dev)
    with pytest.raises(LayoutError) as info:
        a.contract_outer(a, out_time=m["A"], out_packet=m["B"])  # type: ignore[call-overload]
    assert info.value.rule == "NotATrf"


@pytest.mark.parametrize(
    ("out_time", "out_packet", "rule"),
    [("A", "B % 16, 2", "FlitMismatch"), ("A", "B % 8", "OutPacketFlits"), ("B", "B", "OutTimeMismatch")],
)
def test_contract_outer_runs_the_stream_adapter(dev: tcp.Device, out_time: str, out_packet: str, rule: str) -> None:
    a, trf = _chain(dev)
    with pytest.raises(LayoutError) as info:
        a.contract_outer(trf, out_time=out_time, out_packet=out_packet)
    assert (info.value.stage, info.value.rule) == ("contract_outer", rule)


def test_later_stages_run_their_verifiers(dev: tcp.Device) -> None:
    a, trf = _chain(dev)
    outer = a.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
    with pytest.raises(LayoutError) as info:
        outer.contract_packet(out_packet=m["B % 4"])
    assert (info.value.stage, info.value.rule) == ("contract_packet", "NotAContraction")
    time_stage = outer.contract_packet(out_packet=m["1"])
    with pytest.raises(LayoutError) as info:
        time_stage.contract_time(out_time=m["C"])
    assert (info.value.stage, info.value.rule) == ("contract_time", "Indivisible")
    lane_stage = time_stage.contract_time(out_time=m["A"])
    with pytest.raises(LayoutError) as info:
        lane_stage.contract_lane(out_time=m["A"], out_packet=m["1 # 8"])
    assert (info.value.stage, info.value.rule) == ("contract_lane", "OutPacketMismatch")
    with pytest.raises(LayoutError) as info:
        lane_stage.contract_lane(out_time=m["A"], out_packet=m["C"], mode="Interleaved")  # type: ignore[arg-type]
    assert info.value.rule == "LaneMode"


def test_stage_calls_are_composed_once_per_type_and_refused_every_time(dev: tcp.Device) -> None:
    def out_of(x: typing.Any) -> typing.Any:
        a, trf = x
        return (
            a.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
            .contract_packet(out_packet=m["1"])
            .contract_time(out_time=m["A"])
            .contract_lane(out_time=m["A"], out_packet=m["C"])
        )

    first, second = out_of(_chain(dev)), out_of(_chain(dev))
    assert first._spec is second._spec
    # An equal layout written differently is still the declared type.
    outer_type = ContractOuterTensor[tcp.f32, tcp.bf16, Chip, Cluster, Slice, m["C"], m["A"], m["B"]]
    a, trf = _chain(dev)
    assert isinstance(a.contract_outer(trf, out_time=m["A"], out_packet=m["B"]), outer_type)
    assert isinstance(a.contract_outer(trf, out_time=m["A"], out_packet=m["B / 16, B % 16"]), outer_type)
    assert not isinstance(a.contract_outer(trf, out_time=m["A, B / 16"], out_packet=m["B % 16"]), outer_type)
    messages = []
    for _ in range(2):
        with pytest.raises(LayoutError) as info:
            _chain(dev)[0].contract_outer(_chain(dev)[1], out_time=m["A"], out_packet=m["B % 8"])
        messages.append((info.value.stage, info.value.rule, str(info.value)))
    assert messages[0] == messages[1] and messages[0][1] == "OutPacketFlits"


def test_mapping_arguments_must_be_mappings(dev: tcp.Device) -> None:
    a, trf = _chain(dev)
    with pytest.raises(LayoutError) as info:
        a.contract_outer(trf, out_time=3, out_packet=m["B"])
    assert (info.value.stage, info.value.rule) == ("contract_outer", "NotAMapping")


def test_an_unknown_evaluator_is_a_tcp_error(dev: tcp.Device) -> None:
    a, trf = _chain(dev)
    time = a.contract_outer(trf, out_time=m["A"], out_packet=m["B"]).contract_packet(out_packet=m["1"]).contract_time(
        out_time=m["A"]
    )
    with pytest.raises(TcpError, match="unknown evaluator 'nope'"):
        time.contract_lane(out_time=m["A"], out_packet=m["C"], evaluator="nope")


def test_results_are_lazy_and_cached_per_evaluator(dev: tcp.Device) -> None:
    a, trf = _chain(dev)
    out = (
        a.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A"], out_packet=m["C"], evaluator="simulate")
    )
    assert out._buffers == {}
    first = out.physical()
    assert list(out._buffers) == ["simulate"]
    with tcp.evaluator("fused"):
        assert np.array_equal(out.physical(), first)
    assert list(out._buffers) == ["simulate"]


# -- repr and explain -----------------------------------------------------------------------------
def test_repr_names_type_and_layout_never_data(dev: tcp.Device) -> None:
    a, trf = _chain(dev)
    out = a.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
    assert repr(a) == (
        '<CollectTensor[bf16, m["1"], m["1 # 2"], m["1 # 256"], m["A, B / 16"], m["B % 16"]] of Tensor[A=32 B=32](bfloat16)>'
    )
    assert repr(out) == '<ContractOuterTensor[f32, bf16, m["1"], m["1 # 2"], m["1 # 256"], m["C"], m["A"], m["B"]]>'
    assert len(repr(a)) < 200


def test_explain_lists_the_derived_parameters(dev: tcp.Device) -> None:
    a, trf = _chain(dev)
    out = (
        a.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A"], out_packet=m["C"])
    )
    text = out.explain()
    for part in [
        "PackSize 2",
        "LaneBroadcast 8",
        "TimeBroadcast 1",
        "ReadSize 32 (wide read)",
        "PacketBroadcast 1",
        "tree depth 5",
        "contract_time -> Time A: reduces nothing",
        "contract_lane (Interleaved)",
        "InnerTime 1",
        "= 8 of 1024 cells",
        "cycles",
        "MAC utilisation",
    ]:
        assert part in text, part
    assert "to_trf: 64 bytes per lane, 512 bytes in total" in trf.explain()
    assert "1024 live" in a.explain()


def test_dtype_names_are_accepted_in_subscription() -> None:
    assert CollectTensor["bf16", Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]] is Stream
    with pytest.raises(DtypeError):
        CollectTensor["bf17", Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]


def test_contraction_results_are_not_built_directly(dev: tcp.Device) -> None:
    out_type = ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]]
    with pytest.raises(LayoutError) as info:
        out_type(dev.main, tcp.Tensor(X, "A B"))
    assert (info.value.stage, info.value.rule) == ("ContractTensor", "NotConstructible")
    with pytest.raises(LayoutError) as info:
        Stream(dev.main)
    assert info.value.rule == "Arguments"


def test_explain_draws_the_layout_when_asked(dev: tcp.Device, tmp_path: Path) -> None:
    x = Stream(dev.main, tcp.Tensor(X, "A B"))
    picture = tmp_path / "stream.svg"
    text = x.explain(svg=picture)
    assert text == x.explain()
    root = ET.fromstring(picture.read_text())
    labels = "".join(root.itertext())
    for dim in ("Chip", "Cluster", "Slice", "Time", "Packet"):
        assert dim in labels
