"""MX at its edges: empty K, 0-d scale codes, products too large for memory, numpy integer arguments,
and laying out large buffers quickly."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

from tcpdsl.algebra import parse
from tcpdsl.errors import LayoutError
from tcpdsl.mx import (
    apply_mapping,
    e8m0_decode,
    matmul,
    pack_uint2,
    quantize,
    scale_a_dn,
    scale_a_from_dn,
    scale_b_from_nd,
    scale_b_nd,
    unpack_indices,
    unpack_uint2,
    zn_layout,
    zn_mapping,
    zn_offset,
)
from tcpdsl.mx.mappings import _apply_by_cells, _decode


# -- matmul -------------------------------------------------------------------------------------


def test_an_empty_k_sums_to_zero() -> None:
    a = quantize(np.zeros((4, 0)), 1)
    b = quantize(np.zeros((0, 3)), 0)
    out = matmul(a, b)
    assert out.dtype == np.float32 and out.shape == (4, 3) and not out.any()
    batched = matmul(quantize(np.zeros((2, 4, 0)), 2), quantize(np.zeros((2, 0, 3)), 1), np.array([1.0, 2.0, 3.0]))
    assert np.array_equal(batched, np.broadcast_to(np.array([1, 2, 3], np.float32), (2, 4, 3)))


def _broadcast_operands(rows: int, columns: int) -> tuple[Any, Any]:
    """a (rows, 1, 1, 1) and b (1, columns, 1, 1) with M = K = N = 1: small operands whose batch axes
    broadcast to rows x columns products."""
    a = quantize(np.ones((rows, 1, 1, 1), np.float32), 3)
    b = quantize(np.ones((1, columns, 1, 1), np.float32), 2)
    return a, b


def test_a_broadcast_batch_numpy_cannot_allocate_is_refused_with_its_size(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = _broadcast_operands(37 * 2**14, 2**14)  # 37 * 2**28 float64 sums: 74 GiB

    def no_memory(*_: object) -> None:
        raise MemoryError

    monkeypatch.setattr(np, "matmul", no_memory)
    with pytest.raises(LayoutError) as info:
        matmul(a, b)
    assert (info.value.stage, info.value.rule) == ("mx.matmul", "ResultTooLarge")
    assert info.value.detail == (
        "a (606208, 1, 1, 1) times b (1, 16384, 1, 1) is (606208, 16384, 1, 1): its 9932111872 float64 sums "
        "need 74.0 GiB (and 37.0 GiB for the float32 result), more memory than this machine gives"
    )
    assert "one slice" in (info.value.hint or "")


def test_a_product_beyond_any_memory_is_refused_before_it_is_tried() -> None:
    a, b = _broadcast_operands(2**20, 2**20)  # 2**40 sums: 8 TiB
    started = time.perf_counter()
    with pytest.raises(LayoutError, match=r"ResultTooLarge: .* its 1099511627776 float64 sums need 8192.0 GiB"):
        matmul(a, b)
    assert time.perf_counter() - started < 1


# -- scale codes --------------------------------------------------------------------------------


def test_a_0d_code_decodes_to_a_0d_value() -> None:
    one = e8m0_decode(np.uint8(127))
    assert one.shape == () and one == 1.0
    assert np.isnan(e8m0_decode(np.array(255, np.uint8)))
    assert e8m0_decode(np.array(0, np.uint8)) == 2.0**-127


# -- numpy integers ------------------------------------------------------------------------------


def test_numpy_integers_work_wherever_ints_do() -> None:
    scale_b = np.arange(12, dtype=np.uint8).reshape(4, 3)
    assert np.array_equal(scale_b_from_nd(scale_b_nd(scale_b), np.int64(1)), scale_b[:1])
    scale_a = np.arange(12, dtype=np.uint8).reshape(3, 4)
    assert np.array_equal(scale_a_from_dn(scale_a_dn(scale_a), np.int32(3)), scale_a[:, :3])
    values = np.array([[1, 2], [0, 1], [3, 3], [2, 0], [1, 1]])
    packed = pack_uint2(values, axis=np.int64(0))
    assert np.array_equal(packed, pack_uint2(values, axis=0))
    assert np.array_equal(pack_uint2(values, axis=np.int64(-1)), pack_uint2(values, axis=-1))
    assert np.array_equal(unpack_uint2(packed, np.int64(5), axis=np.int64(0)), values)
    assert np.array_equal(unpack_uint2(pack_uint2(values, axis=1), np.uint8(2), axis=np.int64(-1)), values)
    assert np.array_equal(unpack_indices(packed, np.int16(5)), values)
    index = np.arange(64, dtype=np.uint8).reshape(8, 8)
    assert np.array_equal(zn_layout(index, c0=np.int64(8)), zn_layout(index))
    assert zn_mapping((8, 8), c0=np.int64(8)).text == zn_mapping((8, 8)).text
    assert zn_offset(np.int64(3), np.int64(2), np.int64(8)) == zn_offset(3, 2, 8)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pack_uint2(np.array([1, 2]), axis=1.0), "[mx.pack] AxisType: axis must be an integer, got 1.0"),  # type: ignore[arg-type]
        (lambda: pack_uint2(np.array([1, 2]), axis=np.int64(1)), "[mx.pack] AxisRange: axis 1 is out of range for shape (2,)"),
        (lambda: unpack_uint2(np.array([9], np.uint8), np.int64(5)), "[mx.pack] PackedLength: 5 values do not fit in 1 packed bytes"),
        (lambda: unpack_uint2(np.array([9], np.uint8), 2.0), "[mx.pack] PackedLength: length must be an integer, got 2.0"),  # type: ignore[arg-type]
        (lambda: unpack_uint2(np.array([9], np.uint8), True), "[mx.pack] PackedLength: length must be an integer, got True"),
        (lambda: scale_b_from_nd(scale_b_nd(np.zeros((4, 3), np.uint8)), np.int64(5)),
         "[mx.gm] ScaleCount: scale_b_from_nd: 5 scale codes do not fit in 2 code pairs"),
        (lambda: scale_b_from_nd(scale_b_nd(np.zeros((4, 3), np.uint8)), "1"),  # type: ignore[arg-type]
         "[mx.gm] ScaleCount: scale_b_from_nd: the scale count must be an integer, got '1'"),
        (lambda: zn_mapping((8, 8), c0=np.int64(0)), "[mx.mapping] FractalWidth: zn_mapping: c0 must be a positive integer"),
        (lambda: zn_mapping(np.array(5)), "[mx.mapping] LayoutShape: zn_mapping needs a shape of two or more positive sizes"),  # type: ignore[arg-type]
        (lambda: zn_layout(np.zeros((0, 3)), c0=10**30), "[mx.layout] FractalWidth: zn_layout: c0 1000000000000000000000000000000 exceeds"),
        (lambda: zn_layout(np.zeros((2, 3)), c0=2**62), "[mx.layout] PaddedTooLarge: zn_layout: a matrix of shape (2, 3) padded to whole"),
    ],
)
def test_integer_arguments_are_checked_by_value_not_type(call: Any, message: str) -> None:
    with pytest.raises(LayoutError) as info:
        call()
    assert str(info.value).startswith(message)


# -- laying out buffers ------------------------------------------------------------------------


TEXTS = [
    ("A # 8 / 2, A # 8 % 2", {"A": 5}),
    ("A / 4, B # 3, A % 4", {"A": 8, "B": 2}),
    ("1 # 4, A", {"A": 3}),
    ("A #{0} 12 / 4, B, A #{0} 12 % 4", {"A": 9, "B": 2}),
    ("B, A # 6 / 3 # 4, A # 6 % 3", {"A": 5, "B": 2}),
    ("A, A", {"A": 3}),
    ("A % 2 # 4, A / 2", {"A": 6}),
    ("[A # 4, B] # 16 / 4, [A # 4, B] # 16 % 4", {"A": 3, "B": 2}),
    ("A #{!} 8, B #{0} 4", {"A": 5, "B": 3}),
    ("S # 4 / 2, S = 2", {"S": 3}),
    ("S # 4 / 2, T # 4 / 2, S = 2, T = 2", {"S": 3, "T": 3}),
    ("[A, B] # 8", {"A": 2, "B": 3}),
]


@pytest.mark.parametrize(("text", "sizes"), TEXTS)
def test_laying_out_from_slots_matches_cell_by_cell(text: str, sizes: dict[str, int]) -> None:
    mapping = parse(text, sizes)
    axes = tuple(sizes)
    source = np.arange(1, 1 + np.prod(list(sizes.values()))).reshape(tuple(sizes.values()))
    outcomes = []
    for lay_out in (apply_mapping, _apply_by_cells):
        try:
            outcomes.append(lay_out(mapping, axes, source, -1).tolist())
        except LayoutError as error:
            outcomes.append(str(error))
    assert outcomes[0] == outcomes[1]


def test_only_pieces_of_operands_are_laid_out_cell_by_cell() -> None:
    decoded = [text for text, sizes in TEXTS if _decode(parse(text, sizes)) is not None]
    assert decoded == [text for text, _ in TEXTS[:-1]]


def test_ten_million_padded_cells_are_laid_out_in_seconds() -> None:
    layout = zn_mapping((2**12, 2449))  # N padded to 2464: 10092544 cells
    source = (np.arange(2**12 * 2449, dtype=np.uint32).reshape(2**12, 2449) % 251).astype(np.uint8)
    started = time.perf_counter()
    out = layout.apply(source, fill=255)
    assert time.perf_counter() - started < 5  # cell by cell it took 12 s
    padding = out == 255
    assert out.size == 10092544 and int(padding.sum()) == 2**12 * 15
    assert np.array_equal(np.where(padding, 0, out), zn_layout(source).ravel())
