"""``fetch_cast``, ``collect``, ``to_vrf`` and ``cast`` (docs/stage-rules.md §4.4 to §4.7)."""

from __future__ import annotations

import pytest

from tcpdsl.algebra import Mapping, parse
from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify.cast import CAST_PAIRS, verify_cast
from tcpdsl.verify.collect import verify_collect
from tcpdsl.verify.fetch_adapter import FETCH_CASTS, verify_fetch_cast
from tcpdsl.verify.memory import MATERIALIZABLE
from tcpdsl.verify.to_vrf import verify_to_vrf

AXES = {"A": 8, "B": 32, "B16": 16, "B56": 56, "N": 8, "Q": 4, "C": 4096, "V": 2048, "H": 64}


def m(text: str) -> Mapping:
    return parse(text, AXES)


ONE, CLUSTER, SLICE = m("1"), m("1 # 2"), m("1 # 256")


# fetch_cast ------------------------------------------------------------------------------------

def test_fetch_cast_table() -> None:
    table = {(a, b) for a, bs in FETCH_CASTS.items() for b in bs}
    assert table == {("i4", "i32"), ("i8", "i32"), ("i16", "i32"), ("f8e4m3", "f32"), ("f8e5m2", "f32"),
                     ("bf16", "f32"), ("f32", "bf16")}
    for dtype in MATERIALIZABLE:
        assert verify_fetch_cast(dtype, dtype) == MATERIALIZABLE[dtype]  # identity for every memory dtype
    for a, b in table:
        assert verify_fetch_cast(a, b) == MATERIALIZABLE[b]


@pytest.mark.parametrize(
    ("src", "dst", "message", "hint"),
    [
        ("f8e4m3", "bf16", "fetch_cast: the fetch adapter has no f8e4m3 to bf16 cast; from f8e4m3 it casts to f8e4m3 "
         "or f32", "fetch_table_lookup(bf16) maps an 8-bit float to bf16"),
        ("f32", "f8e4m3", "fetch_cast: the fetch adapter has no f32 to f8e4m3 cast; from f32 it casts to f32 or bf16",
         "the cast engine narrows f32 to f8 after collect: cast(f8e4m3, ...)"),
        ("u8", "i32", "fetch_cast: the fetch adapter has no u8 to i32 cast; from u8 it casts to u8",
         "cast in two steps through i32 or f32"),
    ],
)
def test_fetch_cast_pair(src: str, dst: str, message: str, hint: str) -> None:
    with pytest.raises(DtypeError) as err:
        verify_fetch_cast(src, dst)
    error = err.value
    assert (error.stage, error.rule, error.detail, error.hint) == ("fetch_cast", "CastPair", message, hint)


def test_fetch_cast_refuses_zero_point_dtypes() -> None:
    with pytest.raises(DtypeError) as err:
        verify_fetch_cast("i9", "i32")
    assert err.value.rule == "Materializable"


# collect ---------------------------------------------------------------------------------------

def collect(dtype: str, time: str, packet: str, out_time: str, out_packet: str) -> int:
    return verify_collect(dtype, cluster=CLUSTER, slice_=SLICE, time=m(time), packet=m(packet), out_time=m(out_time),
                          out_packet=m(out_packet)).flits


@pytest.mark.parametrize(
    ("dtype", "time", "packet", "out_time", "out_packet", "flits"),
    [
        ("i8", "A", "B", "A", "B", 1),  # one flit stays as it is
        ("i8", "A", "B16", "A", "B16 # 32", 1),  # a half flit is padded
        ("bf16", "A", "B", "A, B / 16", "B % 16", 2),  # two flits: the outer one joins Time
        ("i8", "A", "B56", "A, B56 # 64 / 32", "B56 # 64 % 32", 2),
        ("i32", "1", "A", "1", "A", 1),
    ],
)
def test_collect_book_examples(dtype: str, time: str, packet: str, out_time: str, out_packet: str, flits: int) -> None:
    assert collect(dtype, time, packet, out_time, out_packet) == flits


def test_collect_output_not_one_flit() -> None:
    with pytest.raises(LayoutError) as err:
        collect("i8", "A", "B16", "A", "B16")
    assert (err.value.stage, err.value.rule, err.value.detail) == (
        "collect", "OutputNotOneFlit", "collect: the output packet must be exactly one flit (32 bytes, 32 elements of "
        "i8), got 16 elements (OutPacket B16)")


def test_packet_mismatch() -> None:
    # The reference's negative: i8 [A][B] collected with the packet [A # 32] (expected B).
    with pytest.raises(LayoutError) as err:
        collect("i8", "A", "B", "A", "A # 32")
    assert (err.value.rule, err.value.detail) == (
        "PacketMismatch", "collect: packet mismatch: Packet B padded to whole flits gives the flit B, got OutPacket "
        "A # 32")


def test_collect_time_mismatch() -> None:
    # The reference's negative: bf16 B = 32 collected with Time [A] (expected [A, B / 16]).
    with pytest.raises(LayoutError) as err:
        collect("bf16", "A", "B", "A", "B % 16")
    assert (err.value.rule, err.value.detail) == (
        "TimeMismatch", "collect: time mismatch: Time A followed by the packet's outer flits gives A, B / 16, got "
        "OutTime A")


def test_collect_grid() -> None:
    with pytest.raises(LayoutError) as err:
        verify_collect("i8", cluster=m("Q"), slice_=SLICE, time=ONE, packet=m("B"), out_time=ONE, out_packet=m("B"))
    assert (err.value.stage, err.value.rule) == ("collect", "ClusterSize")


# to_vrf ----------------------------------------------------------------------------------------

def test_to_vrf_at_capacity() -> None:
    # i32 A = 2048 (8192 bytes) collected as [A / 8][A % 8] is the largest store.
    assert verify_to_vrf("i32", time=m("V / 8"), packet=m("V % 8"), element=m("V")).bytes == 8192


def test_to_vrf_exceeds_capacity() -> None:
    with pytest.raises(LayoutError) as err:
        verify_to_vrf("i32", time=m("C / 8"), packet=m("C % 8"), element=m("C"))
    assert (err.value.stage, err.value.rule, err.value.detail) == (
        "to_vrf", "ExceedsCapacity", "to_vrf: VRF data of 16384 bytes (Element C of i32) exceeds the vector register "
        "file capacity of 8192 bytes per slice")


def test_to_vrf_dtype() -> None:
    with pytest.raises(DtypeError) as err:
        verify_to_vrf("bf16", time=m("A"), packet=m("B16"), element=m("A, B16"))
    assert (err.value.rule, err.value.detail) == (
        "Dtype", "to_vrf: the vector register file holds i32 or f32, got bf16")


def test_to_vrf_book_store() -> None:
    # The book's store: i32 B = 64 into the VRF as [Time, Packet].
    assert verify_to_vrf("i32", time=m("H / 8"), packet=m("H % 8"), element=m("H")).bytes == 256


@pytest.mark.parametrize("element", ["A, 4", "A, N"])
def test_to_vrf_no_broadcast(element: str) -> None:
    # A broadcast factor, or an axis the stream lacks: cells no stream cell fills.
    with pytest.raises(LayoutError) as err:
        verify_to_vrf("f32", time=m("1"), packet=m("A"), element=m(element))
    assert (err.value.rule, err.value.detail) == (
        "NoBroadcast", f"to_vrf: every live cell of Element {m(element)} must come from a cell of the stream [1][A]; "
        "a store cannot broadcast")


# cast ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("src", "dst", "packet", "out_packet"),
    [("f32", "bf16", "N", "N # 16"), ("i32", "i8", "Q # 8", "Q # 32"), ("f32", "f8e4m3", "N", "N # 32"),
     ("i32", "i4", "N", "N # 64")],
)
def test_cast_book_cases(src: str, dst: str, packet: str, out_packet: str) -> None:
    assert verify_cast(src, dst, packet=m(packet), out_packet=m(out_packet)).valid == 8


def test_cast_book_doctests() -> None:
    # cast_i32_to_i8: i32 [B = 4][A = 8] -> i8 A # 32; cast_padded: i32 A = 4 # 8 -> i8 A # 32.
    axes = {"A": 8, "B": 4}
    assert verify_cast("i32", "i8", packet=parse("A", axes), out_packet=parse("A # 32", axes)).out_elements == 32
    assert verify_cast("i32", "i8", packet=parse("A = 4 # 8", axes), out_packet=parse("A = 4 # 32", axes)).valid == 8


def test_cast_table() -> None:
    assert CAST_PAIRS == {"i32": ("i4", "i8", "i16"), "f32": ("f8e5m2", "f8e4m3", "bf16")}


def test_cast_pair() -> None:
    with pytest.raises(DtypeError) as err:
        verify_cast("f32", "f32", packet=m("N"), out_packet=m("N"))
    assert (err.value.stage, err.value.rule, err.value.detail) == (
        "cast", "Pair", "cast: the cast engine has no f32 to f32 cast (f32 casts to f8e5m2 or f8e4m3 or bf16)")
    with pytest.raises(DtypeError) as err:
        verify_cast("bf16", "f8e4m3", packet=m("B16"), out_packet=m("B16 # 32"))
    assert err.value.detail == "cast: the cast engine has no bf16 to f8e4m3 cast (its input is i32 or f32, not bf16)"


def test_cast_flits() -> None:
    with pytest.raises(LayoutError) as err:
        verify_cast("f32", "bf16", packet=m("Q"), out_packet=m("Q # 16"))
    assert (err.value.rule, err.value.detail) == (
        "InputNotOneFlit", "cast: the input packet must be exactly one flit (32 bytes), got 4 elements of f32 "
        "(Packet Q)")
    with pytest.raises(LayoutError) as err:
        verify_cast("f32", "bf16", packet=m("N"), out_packet=m("N"))
    assert (err.value.rule, err.value.detail) == (
        "OutputNotOneFlit", "cast: the output packet must be exactly one flit (32 bytes, 16 elements of bf16), got 8 "
        "elements (OutPacket N)")
    with pytest.raises(LayoutError) as err:
        verify_cast("f32", "bf16", packet=m("N"), out_packet=m("B16"))
    assert (err.value.rule, err.value.detail) == (
        "PacketMismatch", "cast: packet mismatch: Packet N padded to one flit of bf16 is N # 16, got OutPacket B16")
