"""``begin`` and ``fetch`` (docs/stage-rules.md §4.3): the reference's rule-level cases, then one pinned
negative per rule."""

from __future__ import annotations

import pytest

from tcpdsl.algebra import Mapping, parse
from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify.fetch import FetchParams, verify_begin, verify_begin_interleaved, verify_fetch
from tcpdsl.verify.sequencer import Entry

# The axes of the reference's fetch unit tests, plus the shapes of its fetch examples.
AXES = {"A": 8, "B": 8, "S": 64, "X": 8, "L": 16, "N": 4, "C": 3, "H": 4, "W": 16, "F": 15, "E": 4096,
        "D": 64, "R": 30, "P": 32}


def m(text: str) -> Mapping:
    return parse(text, AXES)


ONE, SLICE = m("1"), m("S")


def fetch(time: str, packet: str, out_time: str, out_packet: str, dtype: str = "i8", **kw: object) -> FetchParams:
    return verify_fetch(dtype, cluster=ONE, slice_=SLICE, time=m(time), packet=m(packet), out_time=m(out_time),
                        out_packet=m(out_packet), **kw)  # type: ignore[arg-type]


# The reference's five fetch unit tests, with the descriptors tcpdsl derives for them.
def test_valid_read() -> None:
    p = fetch("1", "A, B", "A", "B")
    assert (p.time_entries, p.packet_entries) == ((Entry(8, 8),), (Entry(8, 1),))
    assert (p.max_access, p.read_size) == (8, 8)


def test_transposed_read() -> None:
    p = fetch("1", "A, B", "B", "A")
    assert (p.time_entries, p.packet_entries) == ((Entry(8, 1),), (Entry(8, 8),))
    assert p.read_size == 1  # one element per access: the packet is not contiguous in DM


def test_split_axis_across_packet_and_time() -> None:
    # The two descriptors sequence L / 8 and L % 8 apart: no entry straddles them.
    p = fetch("1", "L", "L / 8", "L % 8")
    assert (p.time_entries, p.packet_entries) == ((Entry(2, 8),), (Entry(8, 1),))


def test_broadcast_time_read() -> None:
    p = fetch("1", "A", "4", "A")
    assert p.time_entries == (Entry(4, 0),)


def test_live_input_time_reads() -> None:
    p = fetch("A", "B", "A", "B")
    assert (p.time_entries, p.packet_entries) == ((Entry(8, 8),), (Entry(8, 1),))


def test_fetch_commit_simple_fetch() -> None:
    # i8 [A / 8 % 2, A % 8, B] in DM, fetched as [A / 8 % 2][A % 8, B] (64 bytes), then cast to i32.
    axes = {"A": 4096, "B": 8}
    el = parse("A / 8 % 2, A % 8, B", axes)
    p = verify_fetch("i8", cluster=parse("1 # 2", axes), slice_=parse("A / 16", axes), time=parse("1", axes),
                     packet=el, out_time=parse("A / 8 % 2", axes), out_packet=parse("A % 8, B", axes))
    assert (p.time_entries, p.packet_entries, p.max_access, p.read_size) == ((Entry(2, 64),), (Entry(64, 1),), 64, 32)
    widened = verify_fetch("i8", cluster=parse("1 # 2", axes), slice_=parse("A / 16", axes), time=parse("1", axes),
                           packet=el, out_time=parse("A / 8 % 2", axes), out_packet=parse("A % 8, B", axes),
                           cast_to_bits=32)
    assert widened.read_size == 8  # 8 i8 values widen to one 32-byte flit of i32


def test_read_of_a_tile_view() -> None:
    # A read tile `[A, X % 16 # 32]` fetched as [A][X = 16]: the tile's Top padding is not read.
    axes = {"A": 8, "X": 32}
    p = verify_fetch("bf16", cluster=parse("1 # 2", axes), slice_=parse("1 # 256", axes), time=parse("1", axes),
                     packet=parse("A, X = 16 # 32", axes), out_time=parse("A", axes), out_packet=parse("X = 16", axes))
    assert (p.time_entries, p.packet_entries, p.read_size) == ((Entry(8, 32),), (Entry(16, 1),), 16)


def test_sub_context_reads_eight_bytes() -> None:
    p = fetch("1", "A, B", "A", "B", dtype="i32", context="sub")
    assert (p.read_size, p.read_bytes) == (2, 8.0)


def test_begin_rules() -> None:
    verify_begin("bf16", chip=ONE, cluster=m("1 # 2"), slice_=SLICE, element=m("A"))
    with pytest.raises(DtypeError) as err:
        verify_begin("i9", chip=ONE, cluster=ONE, slice_=SLICE, element=m("A"))
    assert (err.value.stage, err.value.rule) == ("begin", "Materializable")
    assert err.value.detail == (
        "begin: dtype i9 cannot be held in memory; memory dtypes are f4e2m1, i4, i8, u8, f8e4m3, f8e5m2, i16, bf16, "
        "i32, f32"
    )
    verify_begin_interleaved(m("A, B"), m("A, B"), interleave=m("1 # 2"))
    with pytest.raises(LayoutError) as lerr:
        verify_begin_interleaved(m("A, B"), m("B, A"), interleave=m("1 # 2"))
    assert lerr.value.detail == "begin: interleaved views must have one Element layout, got A, B and B, A"
    with pytest.raises(LayoutError) as lerr:
        verify_begin_interleaved(m("A"), m("A"), interleave=m("N"))
    assert lerr.value.detail == "begin: the interleave axis alternates two views, so it has 2 cells, got 4 (N)"


def _refused(rule: str, message: str, *args: str, **kw: object) -> None:
    with pytest.raises(LayoutError) as err:
        fetch(*args, **kw)  # type: ignore[arg-type]
    assert (err.value.stage, err.value.rule, err.value.detail) == ("fetch", rule, message)
    assert err.value.hint


def test_cluster_size() -> None:
    with pytest.raises(LayoutError) as err:
        verify_fetch("i8", cluster=m("1 # 4"), slice_=SLICE, time=ONE, packet=m("A"), out_time=ONE, out_packet=m("A"))
    assert (err.value.rule, err.value.detail) == (
        "ClusterSize", "fetch: the Cluster size must be 1 or 2, got 4 (Cluster 1 # 4)")


def test_slice_size() -> None:
    with pytest.raises(LayoutError) as err:
        verify_fetch("i8", cluster=ONE, slice_=m("P"), time=ONE, packet=m("A"), out_time=ONE, out_packet=m("A"))
    assert (err.value.rule, err.value.detail) == (
        "SliceSize", "fetch: the Slice size must be 64, 128 or 256, got 32 (Slice P)")


def test_unreadable() -> None:
    _refused("Unreadable", "fetch: the stream [A, X][B] holds X, which DM A, B does not hold; a stream term must be "
             "a digit of a DM axis or a fresh broadcast", "1", "A, B", "A, X", "B")


def test_decomposition() -> None:
    # F = 15 stored as 5 x 3 cannot be read as 3 x 5.
    _refused("Decomposition", "fetch: axis F is split one way in DM F / 3, C, F % 3 and another way in [F / 5][F % 5] "
             "(the digit of stride 5, 3 values); neither split refines the other", "1", "F / 3, C, F % 3", "F / 5",
             "F % 5")


def test_unread() -> None:
    _refused("Unread", "fetch: the stream [A][B / 2] leaves value 1 of the 8 values of B (stride 1) in DM A, B "
             "unread; a fetch cannot drop data", "1", "A, B", "A", "B / 2")


def test_unread_partial_extent() -> None:
    _refused("Unread", "fetch: the stream [A][B % 4] leaves value 4 of the 8 values of B (stride 1) in DM A, B "
             "unread; a fetch cannot drop data", "1", "A, B", "A", "B = 4")


def test_too_many_entries() -> None:
    # Nine transposed digits of E (4096 = 2^12) cannot merge: nine loops.
    out = "E % 2, E / 2 % 2, E / 4 % 2, E / 8 % 2, E / 16 % 2, E / 32 % 2, E / 64 % 2, E / 128 % 2, E / 256"
    with pytest.raises(LayoutError) as err:
        fetch("1", "E", out, "1")
    assert err.value.rule == "TooManyEntries"
    assert err.value.detail == (
        "fetch: reading DM E as [E % 2, E / 2 % 2, E / 4 % 2, E / 8 % 2, E / 16 % 2, E / 32 % 2, E / 64 % 2, "
        "E / 128 % 2, E / 256][1] needs 9 sequencer entries (2:1, 2:2, 2:4, 2:8, 2:16, 2:32, 2:64, 2:128, 16:256, "
        "count:stride outermost first), more than the 8 the sequencer has"
    )


def test_iterations() -> None:
    axes = {"Big": 1 << 17}
    with pytest.raises(LayoutError) as err:
        verify_fetch("i8", cluster=parse("1", axes), slice_=parse("1 # 64", axes), time=parse("1", axes),
                     packet=parse("Big", axes), out_time=parse("Big", axes), out_packet=parse("1", axes))
    assert (err.value.rule, err.value.detail) == (
        "Iterations", "fetch: reading DM Big as [Big][1] needs a sequencer loop of 131072 iterations (stride 1); a "
        "loop runs at most 65536 times")


def test_access_bytes() -> None:
    # i4 read one element at a time: half a byte is no access size.
    _refused("AccessBytes", "fetch: an access moves 1, 2, 4, 8, 16 or 32 bytes, but OutPacket A reads runs of 1 "
             "elements of i4 from DM A, B", "1", "A, B", "B", "A", dtype="i4")
