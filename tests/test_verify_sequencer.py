"""Laws of the sequencer model (docs/stage-rules.md §4.2), checked against the cells of small layouts.

The verifiers never enumerate cells; these tests do, to show that the loop nests they derive put
every live stream cell at the memory cell that holds the same coordinates, and that the coverage
rules (``Unread``, ``Unwritten``) agree with the set of addresses the nest actually visits.
"""

from __future__ import annotations

import itertools
import os
from math import prod

from hypothesis import given, settings
from hypothesis import strategies as st

from tcpdsl.algebra import Index, Mapping, Pad, PaddingKind, parse
from tcpdsl.errors import LayoutError
from tcpdsl.verify.commit import verify_commit
from tcpdsl.verify.fetch import verify_fetch
from tcpdsl.verify.sequencer import Entry, Piece, Unmatched, merge, pieces

AXES = {"A": 4, "B": 6, "C": 2}
laws = settings(max_examples=int(os.environ.get("TCPDSL_LAW_EXAMPLES", "150")), deadline=None)

# Ways to cut each axis into digits; the memory and the stream may cut an axis differently.
CUTS = {"A": (("A",), ("A / 2", "A % 2")), "B": (("B",), ("B / 3", "B % 3"), ("B / 2", "B % 2")), "C": (("C",),)}


@st.composite
def layouts(draw: st.DrawFn) -> str:
    digits = [d for axis, cuts in CUTS.items() for d in draw(st.sampled_from(cuts))]
    order = draw(st.permutations(digits))
    return ", ".join(order)


def m(text: str) -> Mapping:
    return parse(text, AXES)


def positions(found: list[Piece]) -> list[tuple[int, int]]:
    """(stream position, memory address) of every iteration of the pieces' nest."""
    out = []
    for index in itertools.product(*(range(p.count) for p in found)):
        out.append((sum(i * p.at for i, p in zip(index, found)), sum(i * p.stride for i, p in zip(index, found))))
    return out


def same_cells(memory: Mapping, stream: Mapping) -> bool:
    found = pieces(memory, stream, dummy_stride=None)
    for pos, addr in positions(found):
        cell = stream.cell(pos)
        if isinstance(cell, Index) and memory.cell(addr) != cell:
            return False
    return True


@laws
@given(layouts(), layouts())
def test_the_nest_reads_each_stream_cell_from_its_memory_cell(memory: str, stream: str) -> None:
    mem, st_ = m(memory), m(stream)
    try:
        found = pieces(mem, st_, dummy_stride=None)
    except Unmatched:  # a refused decomposition reads nothing
        return
    # The pieces walk every stream position exactly once...
    assert sorted(pos for pos, _ in positions(found)) == list(range(st_.size))
    # ...and each reads the memory cell holding the stream cell's coordinates.
    assert same_cells(mem, st_)


@laws
@given(layouts(), layouts())
def test_merging_keeps_the_visited_addresses(memory: str, stream: str) -> None:
    try:
        found = pieces(m(memory), m(stream), dummy_stride=None)
    except Unmatched:
        return
    merged = merge(found)
    visited = sorted(addr for _, addr in positions(found))
    flat = [Piece(1, e.count, e.stride) for e in reversed(merged)]
    assert sorted(addr for _, addr in positions(flat)) == visited
    assert prod(e.count for e in merged) == m(stream).size


@laws
@given(layouts(), st.integers(min_value=0, max_value=4))
def test_a_fetch_of_any_permutation_is_accepted_and_complete(stream: str, cut: int) -> None:
    # The memory holds A, B, C; any permutation of whole axes, split anywhere into Time and Packet,
    # reads it: no Unread, no Unreadable.
    digits = stream.split(", ")
    cut = min(cut, len(digits))
    out_time, out_packet = ", ".join(digits[:cut]) or "1", ", ".join(digits[cut:]) or "1"
    params = verify_fetch("i32", cluster=m("1"), slice_=m("1 # 64"), time=m("1"), packet=m("A, B, C"),
                          out_time=m(out_time), out_packet=m(out_packet))
    assert prod(e.count for e in params.time_entries + params.packet_entries) == 48


@laws
@given(layouts())
def test_a_fetch_that_drops_a_digit_is_unread(stream: str) -> None:
    digits = stream.split(", ")
    kept = ", ".join(digits[1:]) or "1"
    try:
        verify_fetch("i32", cluster=m("1"), slice_=m("1 # 64"), time=m("1"), packet=m("A, B, C"),
                     out_time=m("1"), out_packet=m(kept))
    except LayoutError as error:
        assert error.rule == "Unread"
    else:
        raise AssertionError(f"{kept} reads all of A, B, C")


def _written(nest: tuple[Entry, ...]) -> set[int]:
    """The addresses a nest visits, by brute force."""
    return {addr for _, addr in positions([Piece(1, e.count, e.stride) for e in reversed(nest)])}


PADDED_ELEMENTS = ("A, B # 8", "A, B #{0} 8", "A #{0} 8, B", "A # 8, B", "B, A #{!} 8", "1 # 2, A, B",
                   "A, 1 #{!} 2, B", "A, B")
STREAM_TIMES = ("A, 1 # 2", "1 # 2, A", "A", "A # 8")


@laws
@given(st.sampled_from(PADDED_ELEMENTS), st.sampled_from(STREAM_TIMES))
def test_commit_coverage_agrees_with_the_visited_cells(element: str, time: str) -> None:
    # Packet B (6 i32 = 24 bytes), Time as drawn: a commit the verifier accepts writes every live
    # cell and no Bottom padding.
    el, t, p = m(element), m(time), m("B")
    try:
        params = verify_commit("i32", time=t, packet=p, element=el)
    except LayoutError as error:
        assert error.rule in {"Unwritten", "Unwritable", "StrideAlign"}
        return
    written = _written(params.time_entries + params.packet_entries)
    for addr in range(el.size):
        cell = el.cell(addr)
        if isinstance(cell, Index) or (isinstance(cell, Pad) and cell.kind is PaddingKind.ZERO):
            assert addr in written, (element, time, addr)
        if isinstance(cell, Pad) and cell.kind is PaddingKind.BOTTOM:
            assert addr not in written, (element, time, addr)


def test_a_commit_the_verifier_refuses_as_unwritten_leaves_a_cell() -> None:
    el = m("C, A, B")
    written = _written((Entry(4, 6), Entry(6, 1)))  # what [A][B] would write
    assert any(addr not in written for addr in range(el.size))
    try:
        verify_commit("i32", time=m("A"), packet=m("B"), element=el)
    except LayoutError as error:
        assert error.rule == "Unwritten"
    else:
        raise AssertionError("expected Unwritten")
