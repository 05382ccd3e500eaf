"""``commit_trim`` and ``commit`` / ``commit_view`` (docs/stage-rules.md §4.8)."""

from __future__ import annotations

import pytest

from tcpdsl.algebra import Mapping, parse
from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify.commit import CommitParams, verify_commit, verify_commit_cast, verify_commit_trim
from tcpdsl.verify.views import tile_element
from tcpdsl.verify.sequencer import Entry

AXES = {"N": 8, "A": 4, "B": 3, "C": 4, "W": 8, "X": 32, "D": 64, "T": 512, "Q": 896, "E": 4096}


def m(text: str) -> Mapping:
    return parse(text, AXES)


def commit(time: str, packet: str, element: str, dtype: str = "i8", **kw: object) -> CommitParams:
    return verify_commit(dtype, time=m(time), packet=m(packet), element=m(element), **kw)  # type: ignore[arg-type]


# The reference's four commit unit tests (i8, N = 8, A = 4, B = 3, C = 4).
def test_full_trim_then_commit() -> None:
    p = commit("A, B, C", "N", "A, B, C, N")
    assert (p.time_entries, p.packet_entries, p.write_bytes) == ((Entry(48, 8),), (Entry(8, 1),), 8)


def test_partial_trim_then_commit() -> None:
    p = commit("A", "N # 16", "A, N # 16")
    assert (p.time_entries, p.packet_entries, p.valid_bytes) == ((Entry(4, 16),), (Entry(16, 1),), 16)


def test_time_transpose() -> None:
    p = commit("A # 32, B", "N", "B, A # 32, N")
    assert p.time_entries == (Entry(32, 8), Entry(3, 256))


def test_interleaved_time_padding_overlaps_into_dm_padding() -> None:
    # Four copies of each live block (1 # 2 on both sides of A): the three dummy ones overlap on the
    # two padding rows of [A, 1 # 3, N].
    p = commit("1 # 2, A, 1 # 2", "N", "A, 1 # 3, N")
    assert p.time_entries == (Entry(2, 8), Entry(4, 24), Entry(2, 8))


def test_fetch_commit_simple_commit() -> None:
    axes = {"A": 4096, "B": 8}
    p = verify_commit("i32", time=parse("A / 8 % 2, A % 8", axes), packet=parse("B", axes),
                      element=parse("A / 8 % 2, A % 8, B", axes))
    assert (p.time_entries, p.packet_entries, p.write_bytes) == ((Entry(16, 8),), (Entry(8, 1),), 32)


def test_commit_into_a_bottom_padded_tile() -> None:
    # f32 [T % 32][Q % 56 = 8] into the write tile [T % 32, Q % 56 = 8 #{!} 56]: the holes stay unwritten.
    view = tile_element(m("T % 32, Q % 56"), index=m("Q % 56"), len_=8, write=True)
    assert view == m("T % 32, Q % 8 #{!} 56")
    p = verify_commit("f32", time=m("T % 32"), packet=m("Q % 56 = 8"), element=view, view=True)
    assert p.time_entries == (Entry(32, 56),)


def test_swap_halves_commit() -> None:
    # bf16 [A][X = 16] into either half of a write tile of [A, X]; the start is the tile's own business.
    view = tile_element(m("A, X"), index=m("X"), len_=16, write=True)
    assert view == m("A, X % 16 #{!} 32")
    p = verify_commit("bf16", time=m("A"), packet=m("X = 16"), element=view, view=True)
    assert (p.time_entries, p.packet_entries) == ((Entry(4, 32),), (Entry(16, 1),))


def test_tile_window_commit() -> None:
    view = tile_element(m("D"), index=m("D"), len_=32, write=True)
    assert view == m("D = 32 #{!} 64")
    p = verify_commit("f32", time=m("D = 32 / 8"), packet=m("D = 32 % 8"), element=view, view=True)
    assert p.time_entries == (Entry(4, 8),)


def _refused(rule: str, message: str, *args: str, stage: str = "commit", **kw: object) -> None:
    with pytest.raises(LayoutError) as err:
        commit(*args, **kw)  # type: ignore[arg-type]
    assert (err.value.stage, err.value.rule, err.value.detail) == (stage, rule, message)
    assert err.value.hint


def test_packet_bytes() -> None:
    _refused("PacketBytes", "commit: the packet must be 8, 16, 24 or 32 bytes, got 4 bytes (Packet A of i8)",
             "N", "A", "N, A")


def test_unwritable_axis() -> None:
    _refused("Unwritable", "commit: the stream [A, B][N] holds B (digit of stride 1, 3 values), which Element A, N "
             "cannot take", "A, B", "N", "A, N")


def test_unwritable_padding_without_room() -> None:
    _refused("Unwritable", "commit: the stream [A, 1 # 2][N] has padding, whose dummy writes need Top padding in "
             "Element A, N, which has none", "A, 1 # 2", "N", "A, N")


def test_unwritable_bottom_padding() -> None:
    # A packet ragged-padded to 24 runs on past the 16 values of the write tile, into its holes.
    _refused("Unwritable", "commit_view: the stream [A][X % 16 # 24] writes into Bottom padding of Element "
             "A, X % 16 #{!} 32, which is never written", "A", "X = 16 # 24", "A, X = 16 #{!} 32",
             stage="commit_view", view=True)


def test_unwritable_past_a_factor() -> None:
    # Dummy rows of 1 # 2 and 1 # 3 reach 3 rows past the live one; [A, 1 # 3, N] has 2.
    with pytest.raises(LayoutError) as err:
        commit("1 # 2, A, 1 # 3", "N", "A, 1 # 3, N")
    assert (err.value.rule, err.value.detail) == (
        "Unwritable", "commit: the stream [A # 8, 1 # 3][N] writes past a factor of Element A, N # 24 (value 31 of a "
        "factor with 24)")


def test_unwritten() -> None:
    _refused("Unwritten", "commit: the stream [A][N] leaves Element B, A, N partly unwritten: value 1 of its B factor "
             "at stride 32 (3 values to write) is never written", "A", "N", "B, A, N")


def test_top_padding_may_stay_unwritten() -> None:
    # The book's cast_commit: a trimmed bf16 packet N commits into [M, N # 16]; Zero padding must be written.
    axes = {"P": 256, "M": 16, "N": 8}
    p = verify_commit("bf16", time=parse("M", axes), packet=parse("N", axes), element=parse("M, N # 16", axes))
    assert (p.time_entries, p.packet_entries, p.valid_bytes) == ((Entry(16, 16),), (Entry(8, 1),), 16)
    _refused("Unwritten", "commit: the stream [A][N] leaves Element A, N #{0} 16 partly unwritten: value 8 of its N "
             "factor at stride 1 (16 values to write) is never written", "A", "N", "A, N #{0} 16")


def test_too_many_entries() -> None:
    time = "E % 2, E / 2 % 2, E / 4 % 2, E / 8 % 2, E / 16 % 2, E / 32 % 2, E / 64 % 2, E / 128 % 2"
    with pytest.raises(LayoutError) as err:
        commit(time, "E / 256", "E", dtype="i8")
    assert err.value.rule == "TooManyEntries"


def test_stride_align() -> None:
    # i8 [A][N] written transposed: each time step moves on by one byte, off the 8-byte words.
    _refused("StrideAlign", "commit: writing [A][N] into Element N, A strides 1 bytes per step (4 steps), not a "
             "multiple of 8 bytes", "A", "N", "N, A")


@pytest.mark.parametrize(
    ("dtype", "packet", "out_packet", "kept"),
    [
        ("i8", "N # 32", "N", 8),  # full_trim
        ("i8", "N # 32", "N # 16", 16),  # partial_trim
        ("i8", "N # 32", "N # 32", 32),  # no_trim
        ("bf16", "N # 16", "N", 16),
        ("f32", "N # 8", "N", 32),
        ("i8", "N # 32", "N # 8", 8),  # single_time_step
        ("bf16", "N # 16", "N = 4", 8),  # non_padding_resize
        ("i32", "W", "W = 4", 16),
    ],
)
def test_commit_adapter_valid_trims(dtype: str, packet: str, out_packet: str, kept: int) -> None:
    # The reference's commit_adapter valid::* cases (N = 8), and the book's W -> W = 4.
    assert verify_commit_trim(dtype, packet=m(packet), out_packet=m(out_packet)) == kept


@pytest.mark.parametrize(
    ("dtype", "time", "packet", "element"),
    [
        ("i8", "A, C", "X", "A, C, X"),  # no_transpose (the book's time [M, K] written as [A, C])
        ("f32", "A, C", "N", "C, A, N"),  # transpose: the time axes swap while writing
        ("i8", "A, C", "N", "C, A, N"),  # transpose_with_trimming (N # 32 trimmed to N)
    ],
)
def test_commit_engine_book_cases(dtype: str, time: str, packet: str, element: str) -> None:
    p = commit(time, packet, element, dtype=dtype)
    assert p.time_size == 16


def test_trim_width() -> None:
    with pytest.raises(LayoutError) as err:
        verify_commit_trim("i8", packet=m("N # 32"), out_packet=m("N = 4"))
    assert (err.value.stage, err.value.rule, err.value.detail) == (
        "commit_trim", "Width", "commit_trim: the trimmed packet must be 8, 16, 24 or 32 bytes, got 4 bytes "
        "(OutPacket N % 4 of i8)")


def test_trim_resize() -> None:
    with pytest.raises(LayoutError) as err:
        verify_commit_trim("i8", packet=m("N # 32"), out_packet=m("W"))
    assert (err.value.rule, err.value.detail) == (
        "Resize", "commit_trim: OutPacket W must be Packet N # 32 cut to its first 8 cells")


def test_trim_needs_a_memory_dtype() -> None:
    with pytest.raises(DtypeError) as err:
        verify_commit_trim("i9", packet=m("X"), out_packet=m("X"))
    assert (err.value.stage, err.value.rule) == ("commit_trim", "Materializable")


def test_unwritable_across_factors() -> None:
    # The packet [A, B] % 8 is the operand (A % 2, B) cut to 8 cells: a run that crosses from one A to the
    # next in the middle of B, which no factor of Element walks.
    axes = {"A": 4, "B": 6, "C": 2}
    with pytest.raises(LayoutError) as err:
        verify_commit("i32", time=parse("[A, B] / 8, C", axes), packet=parse("[A, B] % 8", axes),
                      element=parse("C, A, B", axes))
    assert (err.value.rule, err.value.detail) == (
        "Unwritable", "commit: the stream [(A, B) / 8, C][(A % 2, B) = 8] holds ((A % 2, B) = 8) (digit of "
        "stride 1, 8 values), which Element C, A, B cannot take")


@pytest.mark.parametrize(("packet", "written"), [("N", 16), ("N = 4", 8)])
def test_commit_cast_widths(packet: str, written: int) -> None:
    # 32 or 16 bytes of f32 narrow to 16 or 8 bytes of bf16 (commit_narrow_f32 trims f32 B = 8 to 32 bytes).
    assert verify_commit_cast("f32", "bf16", packet=m(packet)) == written
    assert verify_commit_cast("f32", "bf16", packet=m(packet), relu=True) == written


def test_commit_cast_rules() -> None:
    with pytest.raises(LayoutError) as err:
        verify_commit_cast("f32", "bf16", packet=m("W = 6"))
    assert (err.value.stage, err.value.rule, err.value.detail, err.value.hint) == (
        "commit_cast", "Width", "commit_cast: the trimmed packet is 24 bytes of f32, not a multiple of the 16 bytes "
        "one narrowing write reads (Packet W = 6)", "commit_trim to 16 or 32 bytes of f32")
    with pytest.raises(DtypeError) as derr:
        verify_commit_cast("i32", "i8", packet=m("N"))
    assert (derr.value.rule, derr.value.detail) == (
        "Pair", "commit_cast: the commit adapter casts only f32 to bf16, got i32 to i8")
    with pytest.raises(DtypeError) as derr:
        verify_commit_cast("f32", "bf16", packet=m("N"), context="sub", relu=True)
    assert (derr.value.stage, derr.value.rule, derr.value.detail) == (
        "commit_cast_relu", "MainOnly", "commit_cast_relu: only the main context casts in the commit adapter, got sub")
