"""Text tables and SVG drawings of mappings."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st

from tcpdsl.algebra import Index, Mapping, Pad, PaddingKind, parse
from tcpdsl.pictures import axis_color, cell_table, slot_table, svg, tensor_svg
from tcpdsl.pictures.drawing import PAD_FILL, PALETTE

SVG = "{http://www.w3.org/2000/svg}"


def cells_of(document: str) -> list[ET.Element]:
    root = ET.fromstring(document)
    return [r for r in root.iter(f"{SVG}rect") if "cell" in r.get("class", "").split()]


def texts_of(document: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(document).iter(f"{SVG}text")]


def test_cell_table_of_a_padded_pair() -> None:
    table = cell_table(parse("C, D # 4", {"C": 2, "D": 3}))
    assert table == (
        "  | +0       +1       +2       +3\n"
        "---------------------------------\n"
        "0 | C:0 D:0  C:0 D:1  C:0 D:2  #\n"
        "4 | C:1 D:0  C:1 D:1  C:1 D:2  #"
    )


def test_cell_table_shows_each_padding_kind_and_broadcast() -> None:
    table = cell_table(parse("1 #{!} 2, A #{0} 4", {"A": 3}))
    assert table.splitlines()[2:] == ["0 | A:0   A:1   A:2   #{0}", "4 | #{!}  #{!}  #{!}  #{!}"]
    assert cell_table(parse("4", {})).splitlines()[2] == "0 | .   .   .   ."


def test_cell_table_rows_follow_the_outer_slots_of_the_spec_table() -> None:
    # docs/mapping-language.md §1.5: m[B / 4, B % 4] with B=16 is the table B = 4r + c; it normalizes to B
    table = cell_table(parse("B / 4, B % 4", {"B": 16}), max_columns=4)
    rows = table.splitlines()[2:]
    assert [row.split("|")[1].split() for row in rows] == [[f"B:{4 * r + c}" for c in range(4)] for r in range(4)]


def test_cell_table_elides_the_middle_of_huge_mappings() -> None:
    table = cell_table(parse("A, B / 16", {"A": 300, "B": 64}), max_rows=6)
    lines = table.splitlines()
    assert len(lines) == 2 + 6 + 1
    assert lines[5] == " ... | (294 rows of 4 cells elided)"
    assert lines[-1].startswith("1196 | A:299 B:0")


def test_slot_table_lists_slots_innermost_first() -> None:
    assert slot_table(parse("A #{0} 4 # 16", {"A": 3})) == (
        "slot  stride  extent  live  term            padding\n"
        "----  ------  ------  ----  --------------  -----------\n"
        "0     1       4       3     A               #{0} 1 of 4\n"
        "1     4       4       1     (pure padding)  # 3 of 4"
    )
    assert slot_table(parse("1", {})).splitlines()[2] == "-     1       1       1     1 (identity)  -"


def test_slot_table_names_digits_and_broadcasts() -> None:
    rows = slot_table(parse("4, B / 64 = 2 # 4, B % 32", {"B": 512})).splitlines()[2:]
    assert [row.split()[4] for row in rows] == ["B", "B", "4"]
    assert rows[1].split()[:4] == ["1", "32", "4", "2"]
    assert "B / 64 % 2" in rows[1] and rows[1].endswith("# 2 of 4")


def test_svg_draws_one_rectangle_per_cell_with_padding_styles() -> None:
    mapping = parse("1 #{!} 2, A #{0} 4, B # 3", {"A": 3, "B": 2})
    document = svg(mapping)
    rects = cells_of(document)
    assert len(rects) == mapping.size == 24
    for i, rect in enumerate(rects):
        cell = mapping.cell(i)
        if isinstance(cell, Pad):
            assert rect.get("fill") == PAD_FILL[cell.kind]
            assert f"pad-{cell.kind.name.lower()}" in rect.get("class", "")
        else:
            assert isinstance(cell, Index)
            assert rect.get("fill") == axis_color("A", cell.coords.get("A", 0))
    assert {"Top padding (#)", "Zero padding (#{0})", "Bottom padding (#{!})"} <= set(texts_of(document))
    assert 'id="tcp-hatch"' in document


def test_svg_colours_by_the_chosen_axis_and_escapes_text() -> None:
    mapping = parse("A, B", {"A": 2, "B": 3})
    document = svg(mapping, color_by="B", title="<A & B>")
    fills = [r.get("fill") for r in cells_of(document)]
    assert fills == [axis_color("B", b) for _ in range(2) for b in range(3)]
    assert "<A & B>" in texts_of(document)


def test_axis_colours_are_stable_and_cycle_through_the_palette() -> None:
    assert axis_color("A", 0) == PALETTE[ord("A") % len(PALETTE)]
    assert axis_color("A", len(PALETTE)) == axis_color("A", 0)
    assert axis_color("A", 1) != axis_color("A", 0)


def test_svg_of_a_huge_mapping_draws_only_the_kept_rows() -> None:
    document = svg(parse("A, B", {"A": 1000, "B": 8}), max_rows=10)
    assert len(cells_of(document)) == 10 * 8
    assert any("990 rows of 8 cells elided" in t for t in texts_of(document))


def test_tensor_svg_draws_a_panel_per_dimension() -> None:
    sizes = {"A": 4, "B": 32}
    dims = {name: parse(text, sizes) for name, text in
            [("Chip", "1"), ("Cluster", "1 # 2"), ("Time", "A, B / 16"), ("Packet", "B % 16")]}
    document = tensor_svg(dims, title="CollectTensor[bf16]")
    assert len(cells_of(document)) == 1 + 2 + 8 + 16
    texts = texts_of(document)
    assert "CollectTensor[bf16]" in texts
    assert 'Time: m["A, B / 16"]  (size 8)' in texts
    assert 'Cluster: m["1 # 2"]  (size 2)' in texts


@st.composite
def padded_pairs(draw: st.DrawFn) -> Mapping:
    """``[A # pa (kind), B # pb (kind)]`` with small random sizes and kinds."""
    kinds = st.sampled_from(list(PaddingKind))
    a, b = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    pa, pb = a + draw(st.integers(0, 3)), b + draw(st.integers(0, 3))
    ka, kb = draw(kinds), draw(kinds)
    marker = {PaddingKind.TOP: "#", PaddingKind.ZERO: "#{0}", PaddingKind.BOTTOM: "#{!}"}
    return parse(f"A {marker[ka]} {pa}, B {marker[kb]} {pb}", {"A": a, "B": b})


@settings(max_examples=40, deadline=None)
@given(padded_pairs())
def test_svg_and_table_agree_with_the_cells(mapping: Mapping) -> None:
    rects = cells_of(svg(mapping))
    assert len(rects) == mapping.size
    table_cells = [c for line in cell_table(mapping).splitlines()[2:] for c in line.split("|")[1].split("  ") if c.strip()]
    for i, rect in enumerate(rects):
        cell = mapping.cell(i)
        live = isinstance(cell, Index)
        assert ("live" in rect.get("class", "")) == live
        if isinstance(cell, Pad):
            assert rect.get("fill") == PAD_FILL[cell.kind]
            assert table_cells[i].strip() == cell.kind.marker
