"""2:4 sparsity: densification table (T8), index packing (T9), the full case (T10), property (T12)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.mx import densify_2of4, pack_uint2, sparse_matmul, unpack_indices, unpack_uint2, zn_layout

X, Y = 5, 7
TABLE = [
    # group e0..e3, (i0, i1), dense (d0, d1)
    ([0, 0, X, Y], (2, 2), (X, Y)),
    ([0, X, 0, Y], (1, 2), (X, Y)),
    ([X, 0, 0, Y], (0, 2), (X, Y)),
    ([0, X, Y, 0], (1, 1), (X, Y)),
    ([X, 0, Y, 0], (0, 1), (X, Y)),
    ([X, Y, 0, 0], (0, 0), (X, Y)),
    ([0, 0, 0, X], (0, 2), (0, X)),
    ([0, 0, X, 0], (2, 0), (X, 0)),
    ([0, X, 0, 0], (1, 0), (X, 0)),
    ([X, 0, 0, 0], (0, 0), (X, 0)),
    ([0, 0, 0, 0], (0, 0), (0, 0)),
]


@pytest.mark.parametrize(("group", "idx", "dense"), TABLE, ids=["".join("X" if v else "0" for v in g) for g, _, _ in TABLE])
def test_t8_table_rows(group: list[int], idx: tuple[int, int], dense: tuple[int, int]) -> None:
    b = np.array(group, np.int8)[:, None]
    d, packed = densify_2of4(b)
    i = unpack_indices(packed, 2)
    assert tuple(int(v) for v in i[:, 0]) == idx
    assert tuple(int(v) for v in d[:, 0]) == dense
    a = [11, 13, 17, 19]
    assert a[idx[0]] * dense[0] + a[1 + idx[1]] * dense[1] == int(np.dot(a, group))


def test_t9_packing() -> None:
    assert pack_uint2(np.array([1, 2, 0, 1])).tolist() == [0x49]
    assert pack_uint2(np.array([1, 2, 0, 1, 0, 2, 1, 0])).tolist() == [0x49, 0x18]
    assert unpack_uint2(np.array([0x49, 0x18], np.uint8), 8).tolist() == [1, 2, 0, 1, 0, 2, 1, 0]
    assert pack_uint2(np.array([3, 1])).tolist() == [0b0111]  # a short tail is zero-padded
    with pytest.raises(LayoutError, match="IndexRange: 2-bit indices must lie in 0..3"):
        pack_uint2(np.array([4]))


def _t10_b() -> npt.NDArray[np.int8]:
    columns = [[0, 3, 0, 5, 7, 0, 9, 0], [4, 0, 0, 6, 0, 8, 0, 0], [0, 0, 0, 2, 0, 0, 0, 0]]
    return np.array(columns, np.int8).T


def test_t10_full_small_case() -> None:
    b = _t10_b()
    dense, packed = densify_2of4(b)
    assert dense.dtype == np.int8
    assert dense.T.tolist() == [[3, 5, 7, 9], [4, 6, 8, 0], [0, 2, 0, 0]]
    assert unpack_indices(packed, 4).T.tolist() == [[1, 2, 0, 1], [0, 2, 1, 0], [0, 2, 0, 0]]
    assert packed.tolist() == [[0x49, 0x18, 0x08]]
    buf = zn_layout(packed).ravel()
    expected = np.zeros(128, np.uint8)
    expected[[0, 8, 16]] = [0x49, 0x18, 0x08]
    assert np.array_equal(buf, expected)
    a = np.arange(1, 17, dtype=np.int8).reshape(2, 8)
    c = sparse_matmul(a, dense, packed)
    assert c.dtype == np.int32
    assert c.tolist() == [[124, 76, 8], [316, 220, 24]]
    assert np.array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


def test_too_dense_group_names_rows_and_column() -> None:
    b = np.zeros((8, 3), np.int8)
    b[4:7, 2] = [1, 2, 3]
    with pytest.raises(LayoutError, match=r"\[mx.sparse\] TooDense: group of rows 4..7 in column 2 holds 3 nonzeros; 2:4 sparsity allows 2") as info:
        densify_2of4(b)
    assert "strict=False" in str(info.value)
    dense, packed = densify_2of4(b, strict=False)
    assert dense[2:4, 2].tolist() == [1, 2]  # the hardware keeps the first two nonzeros
    assert unpack_indices(packed, 4)[2:4, 2].tolist() == [0, 0]


def test_sparse_errors() -> None:
    with pytest.raises(LayoutError, match=r"GroupIndivisible: K = 6 is not a multiple of 4\n  hint: pad K with zero rows to 8"):
        densify_2of4(np.zeros((6, 2), np.int8))
    with pytest.raises(LayoutError, match="MatrixRank: densify_2of4 needs a 2-D matrix, got"):
        densify_2of4(np.zeros(8, np.int8))
    with pytest.raises(DtypeError, match="SparseDtype"):
        densify_2of4(np.zeros((4, 2), bool))
    dense, packed = densify_2of4(np.zeros((8, 2), np.int8))
    with pytest.raises(LayoutError, match=r"SparseShape: A is \(2, 4\) but dense B is \(4, 2\)"):
        sparse_matmul(np.zeros((2, 4), np.int8), dense, packed)
    with pytest.raises(LayoutError, match=r"IndexShape: dense B \(4, 2\) needs index bytes of shape \(1, 2\), got \(2, 2\)"):
        sparse_matmul(np.zeros((2, 8), np.int8), dense, np.zeros((2, 2), np.uint8))
    with pytest.raises(LayoutError, match="IndexRange: a 2-bit sparse index holds 3"):
        sparse_matmul(np.zeros((2, 8), np.int8), dense, np.full((1, 2), 0xFF, np.uint8))


@st.composite
def sparse_case(draw: st.DrawFn) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    groups = draw(st.integers(1, 19))
    n = draw(st.integers(1, 5))
    m = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    values = rng.integers(-128, 128, size=(groups, 4, n))
    keep = np.zeros((groups, 4, n), bool)
    for g in range(groups):
        for col in range(n):
            chosen = rng.choice(4, size=rng.integers(0, 3), replace=False)
            keep[g, chosen, col] = True
    b = np.where(keep, values, 0).reshape(4 * groups, n).astype(np.int8)
    a = rng.integers(-128, 128, size=(m, 4 * groups)).astype(np.int8)
    return a, b


@settings(max_examples=200, deadline=None)
@given(sparse_case())
def test_t12_sparse_golden_equals_dense_matmul(case: tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]) -> None:
    a, b = case
    dense, packed = densify_2of4(b)
    assert np.array_equal(sparse_matmul(a, dense, packed), a.astype(np.int32) @ b.astype(np.int32))


def test_float_sparse_matmul() -> None:
    rng = np.random.default_rng(3)
    b = rng.standard_normal((16, 6)).astype(np.float32)
    b[rng.random((16, 6)) < 0.6] = 0
    b.reshape(4, 4, 6)[:, 2:, :] = 0  # keep every group at <= 2 nonzeros
    a = rng.standard_normal((3, 16)).astype(np.float32)
    dense, packed = densify_2of4(b)
    out = sparse_matmul(a, dense, packed)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-6, atol=1e-6)
