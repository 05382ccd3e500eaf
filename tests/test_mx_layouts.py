"""Zz / Nn / Zn layouts and GM scale forms: vectors T1–T7 and T11 (docs/block-formats.md §7), offsets, ragged K."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from tcpdsl.errors import LayoutError
from tcpdsl.mx import (
    densify_2of4,
    index_position,
    nn_layout,
    nn_mapping,
    nn_offset,
    quantize,
    scale_a_dn,
    scale_a_from_dn,
    scale_b_dn,
    scale_b_from_nd,
    scale_b_nd,
    zn_layout,
    zn_mapping,
    zn_offset,
    zz_layout,
    zz_mapping,
    zz_offset,
)


def _grid(rows: int, cols: int, step: int) -> npt.NDArray[np.uint8]:
    return (np.arange(rows)[:, None] * step + np.arange(cols)).astype(np.uint8)


def test_t1_zz_padded() -> None:
    out = zz_layout(_grid(3, 3, 10))
    assert out.shape == (1, 2, 16, 2) and out.dtype == np.uint8
    assert out.ravel().tolist() == [0, 1, 10, 11, 20, 21] + [0] * 26 + [2, 0, 12, 0, 22, 0] + [0] * 26


def _nz_b16_of_pair_transpose(s: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """The b16 Nz (16x16 fractals, row count unpadded) of the transposed 16-bit code pairs."""
    m, cols = s.shape
    words = np.ascontiguousarray(s).view(np.uint16)  # (M, S/2): pair (s[m,2j], s[m,2j+1])
    m1 = -(-m // 16)
    padded = np.zeros((m1 * 16, cols // 2), np.uint16)
    padded[:m] = words
    nz = padded.T.reshape(cols // 2, m1, 16).transpose(1, 0, 2)
    return np.ascontiguousarray(nz).view(np.uint8).ravel()


def test_t2_zz_offsets_and_b16_nz_equivalence() -> None:
    s = np.arange(68, dtype=np.uint8).reshape(17, 4)
    buf = zz_layout(s).ravel()
    assert buf.size == 128
    assert zz_offset(16, 1, 4) == 65 and zz_offset(5, 3, 4) == 43
    assert buf[65] == s[16, 1] and buf[43] == s[5, 3]
    assert np.array_equal(buf, _nz_b16_of_pair_transpose(s))


@pytest.mark.parametrize(("m", "s"), [(3, 3), (17, 4), (16, 2), (33, 7), (1, 1)])
def test_zz_offset_formula_matches_layout(m: int, s: int) -> None:
    rng = np.random.default_rng(m * 100 + s)
    src = rng.integers(1, 255, size=(m, s), dtype=np.uint8)
    buf = zz_layout(src).ravel()
    placed = np.zeros(buf.size, bool)
    for i in range(m):
        for k in range(s):
            assert buf[zz_offset(i, k, s)] == src[i, k]
            placed[zz_offset(i, k, s)] = True
    assert buf.size == -(-m // 16) * -(-s // 2) * 32
    assert not np.any(buf[~placed])


def test_t3_zz_from_gm_forms() -> None:
    s = _grid(3, 4, 16)
    assert s.ravel().tolist() == [0, 1, 2, 3, 16, 17, 18, 19, 32, 33, 34, 35]
    dn = scale_a_dn(s)
    assert dn.shape == (2, 3, 2)
    assert dn.ravel().tolist() == [0, 1, 16, 17, 32, 33, 2, 3, 18, 19, 34, 35]
    assert np.array_equal(scale_a_from_dn(dn, 4), s)
    expected = np.zeros(64, np.uint8)
    expected[0:6] = [0, 1, 16, 17, 32, 33]
    expected[32:38] = [2, 3, 18, 19, 34, 35]
    assert np.array_equal(zz_layout(scale_a_from_dn(dn, 4)).ravel(), expected)
    assert np.array_equal(zz_layout(s).ravel(), expected)


def test_t4_nn_padded() -> None:
    out = nn_layout(_grid(3, 3, 10))
    assert out.shape == (1, 2, 16, 2)
    assert out.ravel().tolist() == [0, 10, 1, 11, 2, 12] + [0] * 26 + [20, 0, 21, 0, 22, 0] + [0] * 26


def test_t5_nn_offsets() -> None:
    s = np.arange(68, dtype=np.uint8).reshape(4, 17)
    buf = nn_layout(s).ravel()
    assert nn_offset(1, 16, 4) == 65 and nn_offset(3, 5, 4) == 43
    assert buf[65] == s[1, 16] and buf[43] == s[3, 5]
    assert np.array_equal(buf, zz_layout(np.ascontiguousarray(s.T)).ravel())


def test_t6_nn_from_gm_forms() -> None:
    s = _grid(4, 3, 16)
    assert s.ravel().tolist() == [0, 1, 2, 16, 17, 18, 32, 33, 34, 48, 49, 50]
    nd = scale_b_nd(s)
    assert nd.ravel().tolist() == [0, 16, 1, 17, 2, 18, 32, 48, 33, 49, 34, 50]
    assert scale_b_dn(s).ravel().tolist() == [0, 16, 32, 48, 1, 17, 33, 49, 2, 18, 34, 50]
    assert np.array_equal(scale_b_from_nd(nd, 4), s)
    expected = np.zeros(64, np.uint8)
    expected[0:6] = [0, 16, 1, 17, 2, 18]
    expected[32:38] = [32, 48, 33, 49, 34, 50]
    assert np.array_equal(nn_layout(scale_b_from_nd(nd, 4)).ravel(), expected)


def test_odd_scale_count_pads_gm_word() -> None:
    s = _grid(2, 3, 10) + 1
    dn = scale_a_dn(s)
    assert dn.shape == (2, 2, 2) and dn[1, :, 1].tolist() == [0, 0]
    assert np.array_equal(scale_a_from_dn(dn, 3), s)


@pytest.mark.parametrize("layout", [zz_layout, nn_layout, zn_layout])
def test_t7_batch_axes(layout: Any) -> None:
    rng = np.random.default_rng(7)
    s = rng.integers(0, 255, size=(2, 3, 19, 5), dtype=np.uint8)
    out = layout(s)
    for b in range(2):
        for c in range(3):
            assert np.array_equal(out[b, c], layout(s[b, c]))


def test_t11_index_offsets() -> None:
    assert index_position(33, 17, 40) == (520, 2)
    k_half, n = 128, 40
    for k in range(k_half):
        for col in range(n):
            byte, shift = index_position(k, col, n)
            assert 4 * byte + shift // 2 == zn_offset(k, col, n, c0=32)


def test_zn_layout_matches_offsets() -> None:
    rng = np.random.default_rng(11)
    rows, cols = 9, 21
    src = rng.integers(1, 255, size=(rows, cols), dtype=np.uint8)
    buf = zn_layout(src).ravel()
    assert buf.size == 2 * 2 * 128
    placed = np.zeros(buf.size, bool)
    for r in range(rows):
        for c in range(cols):
            assert buf[zn_offset(r, c, cols)] == src[r, c]
            placed[zn_offset(r, c, cols)] = True
    assert not np.any(buf[~placed])


def test_ragged_k_scales_pad_like_the_elements() -> None:
    # K = 70: three scale codes per row (the last block holds 6 elements), laid out as 4 with a zero
    # code column, i.e. ScaleK = ceil(K / 64) * 2 as the Ascend alignment asks.
    rng = np.random.default_rng(70)
    a = quantize(rng.standard_normal((17, 70)).astype(np.float32), axis=1)
    b = quantize(rng.standard_normal((70, 20)).astype(np.float32), axis=0)
    assert a.scales.shape == (17, 3) and b.scales.shape == (3, 20)
    zz, nn = zz_layout(a.scales), nn_layout(b.scales)
    assert zz.shape == (2, 2, 16, 2) and nn.shape == (2, 2, 16, 2)
    assert not np.any(zz[:, 1, :, 1]) and not np.any(nn[:, 1, :, 1])
    for m in range(17):
        for k in range(3):
            assert zz.ravel()[zz_offset(m, k, 3)] == a.scales[m, k]
    for k in range(3):
        for n in range(20):
            assert nn.ravel()[nn_offset(k, n, 3)] == b.scales[k, n]
    assert np.array_equal(zz_mapping(a.scales.shape).apply(a.scales), zz.ravel())
    assert np.array_equal(nn_mapping(b.scales.shape).apply(b.scales), nn.ravel())
    batched = quantize(rng.standard_normal((2, 5, 70)).astype(np.float32), axis=2)
    assert np.array_equal(zz_mapping(batched.scales.shape).apply(batched.scales), zz_layout(batched.scales).ravel())


def test_ragged_k_index_bytes_pad_in_zn() -> None:
    b = np.zeros((12, 3), np.int8)  # K/2 = 6 indices: 2 packed bytes, padded to one 8-byte fractal row
    b[3, 0], b[5, 1], b[10, 2] = 4, 5, 6
    _, index = densify_2of4(b)
    zn = zn_layout(index)
    assert index.shape == (2, 3) and zn.shape == (1, 1, 16, 8)
    assert np.array_equal(zn_mapping(index.shape).apply(index), zn.ravel())
    for k in range(6):
        for n in range(3):
            byte, shift = index_position(k, n, 3)
            assert (zn.ravel()[byte] >> shift) & 3 == (index[k // 4, n] >> 2 * (k % 4)) & 3


def test_layout_errors() -> None:
    with pytest.raises(LayoutError, match=r"\[mx.layout\] MatrixRank: zz_layout needs a matrix with optional leading batch axes, got \(4,\)"):
        zz_layout(np.zeros(4, np.uint8))
    with pytest.raises(LayoutError, match="FractalWidth: zn_layout: c0 must be a positive integer, got 0"):
        zn_layout(np.zeros((4, 4), np.uint8), c0=0)
    with pytest.raises(LayoutError, match="PairedShape"):
        scale_a_from_dn(np.zeros((2, 3), np.uint8), 4)
    with pytest.raises(LayoutError, match="ScaleCount: scale_b_from_nd: 5 scale codes do not fit in 2 code pairs"):
        scale_b_from_nd(np.zeros((2, 3, 2), np.uint8), 5)
