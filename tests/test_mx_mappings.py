"""The Zz / Nn / Zn layouts as mapping expressions agree with the index formulas, padding included."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpdsl.algebra import Pad, PaddingKind, parse
from tcpdsl.errors import LayoutError
from tcpdsl.mx import LayoutMapping, apply_mapping, nn_layout, nn_mapping, zn_layout, zn_mapping, zz_layout, zz_mapping

Layout = Callable[[npt.NDArray[Any]], npt.NDArray[Any]]
MappingOf = Callable[[Sequence[int]], LayoutMapping]

CASES: list[tuple[str, MappingOf, Layout, tuple[int, ...]]] = [
    ("zz-3x3", zz_mapping, zz_layout, (3, 3)),
    ("zz-17x4", zz_mapping, zz_layout, (17, 4)),
    ("zz-16x2-exact", zz_mapping, zz_layout, (16, 2)),
    ("zz-33x5", zz_mapping, zz_layout, (33, 5)),
    ("zz-batch", zz_mapping, zz_layout, (2, 3, 3)),
    ("zz-1x1", zz_mapping, zz_layout, (1, 1)),
    ("nn-3x3", nn_mapping, nn_layout, (3, 3)),
    ("nn-4x17", nn_mapping, nn_layout, (4, 17)),
    ("nn-5x33", nn_mapping, nn_layout, (5, 33)),
    ("nn-batch", nn_mapping, nn_layout, (2, 4, 17)),
    ("zn-1x3", zn_mapping, zn_layout, (1, 3)),
    ("zn-9x17", zn_mapping, zn_layout, (9, 17)),
    ("zn-16x40", zn_mapping, zn_layout, (16, 40)),
]


def _source(shape: tuple[int, ...]) -> npt.NDArray[np.uint8]:
    # distinct nonzero values, so a misplaced or dropped element always shows
    return (np.arange(int(np.prod(shape))) % 251 + 1).astype(np.uint8).reshape(shape)


@pytest.mark.parametrize(("name", "mapping_of", "layout", "shape"), CASES, ids=[c[0] for c in CASES])
def test_mapping_walk_equals_index_formulas(name: str, mapping_of: MappingOf, layout: Layout, shape: tuple[int, ...]) -> None:
    src = _source(shape)
    lm = mapping_of(shape)
    expected = layout(src).ravel()
    assert lm.mapping.size == expected.size
    assert np.array_equal(lm.apply(src), expected)
    # pads are exactly the cells the formulas leave empty, and they are zero-kind pads
    live = layout(np.ones(shape, np.uint8)).ravel() == 1
    cells = [lm.mapping.cell(i) for i in range(lm.mapping.size)]
    assert [not isinstance(c, Pad) for c in cells] == live.tolist()
    assert all(c == Pad(PaddingKind.ZERO) for c in cells if isinstance(c, Pad))
    assert np.array_equal(lm.apply(src, fill=255)[~live], np.full((~live).sum(), 255, np.uint8))


def test_zn_dense_b_fractal() -> None:
    shape = (40, 17)
    src = _source(shape)
    lm = zn_mapping(shape, c0=32)
    assert np.array_equal(lm.apply(src), zn_layout(src, c0=32).ravel())


def test_texts_parse_back() -> None:
    zz = zz_mapping((17, 3))
    assert zz.text == "M #{0} 32 / 16, S #{0} 4 / 2, M #{0} 32 % 16, S #{0} 4 % 2"
    assert zz.axes == ("M", "S") and zz.sizes == {"M": 17, "S": 3}
    assert nn_mapping((4, 32)).text == "N / 16, S / 2, N % 16, S % 2"
    assert zn_mapping((2, 3, 8, 16)).text == "Batch0, Batch1, K / 8, N / 16, N % 16, K % 8"
    for lm in (zz, nn_mapping((3, 5)), zn_mapping((9, 17))):
        assert parse(lm.text, lm.sizes).same_structure(lm.mapping)
        assert parse(str(lm.mapping), lm.sizes) == lm.mapping


def test_canonical_text_lays_out_the_same_buffer() -> None:
    lm = zz_mapping((17, 3))
    src = _source((17, 3))
    assert np.array_equal(apply_mapping(parse(str(lm.mapping), lm.sizes), lm.axes, src), lm.apply(src))


def test_overshooting_coordinate_is_a_layout_error() -> None:
    overshoot = parse("S # 4 / 2, S = 2", {"S": 3})
    with pytest.raises(LayoutError, match=r"CoordinateOutOfRange: cell 3 of S # 4 / 2, S = 2 is Index\[S = 3\], outside the source axes \{'S': 3\}"):
        apply_mapping(overshoot, ("S",), np.arange(3))


def test_mapping_errors() -> None:
    with pytest.raises(LayoutError, match=r"\[mx.mapping\] LayoutShape: zz_mapping needs a shape of two or more positive sizes \(batch axes first\), got \(0, 3\)"):
        zz_mapping((0, 3))
    with pytest.raises(LayoutError, match="LayoutShape"):
        nn_mapping((4,))
    with pytest.raises(LayoutError, match="FractalWidth"):
        zn_mapping((4, 4), c0=-1)
    lm = zz_mapping((3, 3))
    with pytest.raises(LayoutError, match=r"SourceShape: axis M has size 3 in .* but the source has 4"):
        lm.apply(np.zeros((4, 3), np.uint8))
    with pytest.raises(LayoutError, match=r"SourceRank: axes \('M', 'S'\) need a 2-D source, got \(3,\)"):
        apply_mapping(lm.mapping, lm.axes, np.zeros(3, np.uint8))


LAYOUTS: dict[str, tuple[MappingOf, Layout]] = {"zz": (zz_mapping, zz_layout), "nn": (nn_mapping, nn_layout), "zn": (zn_mapping, zn_layout)}


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(sorted(LAYOUTS)), batch=st.lists(st.integers(1, 2), max_size=1), rows=st.integers(1, 35), cols=st.integers(1, 35))
def test_random_shapes_walk_equals_formulas(kind: str, batch: list[int], rows: int, cols: int) -> None:
    mapping_of, layout = LAYOUTS[kind]
    shape = (*batch, rows, cols)
    src = _source(shape)
    assert np.array_equal(mapping_of(shape).apply(src), layout(src).ravel())
