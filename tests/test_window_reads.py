"""A window (a tile) of a memory tensor read and written on the fused evaluator: when it is a box of whole slots
its values are a slice of the tensor's, bit for bit what laying the tensor out and cutting the window gives,
at a cost of the window's size, and a write into it sets that slice, bit for bit the planned scatter's result
(docs/runtime.md §4, "Windows read by slots")."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings, strategies as st

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.algebra import Mapping, logical_terms
from tcpdsl.numerics.flow import Window, Written
from tcpdsl.numerics.moves import lay_out, window, written
from tcpdsl.numerics.transfer import to_terms
from tcpdsl.numerics.windows import box_values, box_written

PA = tcp.axis("PA", 256)
A = tcp.axis("A", 8)
Wp = tcp.axis("Wp", 155648)  # the final layer's vocabulary and hidden axes
H = tcp.axis("H", 1024)
Chip = m["1"]

# Each tensor type with the element of a tile of ``n`` rows of PA, and how the tile's values sit in the array.
LAYOUTS: dict[str, tuple[Any, str]] = {
    "hbm rows outside": (tcp.HbmTensor[tcp.i32, Chip, m["PA, A"]], "PA % {n} # 256, A"),
    "hbm rows inside": (tcp.HbmTensor[tcp.i32, Chip, m["A, PA"]], "A, PA % {n} # 256"),
    "dm over slices": (tcp.DmTensor[tcp.i32, Chip, m["1 # 2"], m["A # 64"], m["PA"]], "PA % {n} # 256"),
}


def _reference(values: np.ndarray[Any, Any], source: Window, mapping: Mapping) -> np.ndarray[Any, Any]:
    """The window read as before: the whole tensor laid out, the window cut from it and read back."""
    parent = source.parent
    laid = lay_out(values, parent.root.terms, parent.mapping, parent.dtype)
    return to_terms(window(laid, source.element, source.offset, mapping, parent.dtype)[0], mapping,
                    logical_terms(mapping))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(LAYOUTS)), st.sampled_from([1, 4, 16, 64]), st.data())
def test_a_tile_is_a_slice_of_the_tensor_bit_for_bit(layout: str, n: int, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, PA.n // n - 1), label="start") * n
    kind, element = LAYOUTS[layout]
    x = np.random.default_rng(start).integers(-2**31, 2**31, (PA.n, A.n), dtype=np.int64).astype(np.int32)
    tensor = kind(tcp.Tensor(x, "PA A"))
    tile = tensor.view().tile(start, index=m["PA"], len=n, element=m[element.format(n=n)])
    source = tile.flow.root.source
    assert isinstance(source, Window)
    values = source.parent.root.logical("fused")
    mapping = tile.flow.mapping
    fast = box_values(values, source.parent.root.terms, source.parent.mapping, source.element, source.offset,
                         mapping, logical_terms(mapping))
    assert fast is not None
    reference = _reference(values, source, mapping)
    assert fast.dtype == reference.dtype and np.array_equal(fast, reference)
    axes = m[f"PA % {n}, A"] if n > 1 else m["A"]  # a one-row tile has no PA term
    with tcp.evaluator("fused"):
        fused = tile.to_tensor().to_numpy(axes)
    with tcp.evaluator("simulate"):
        simulated = tile.to_tensor().to_numpy(axes)
    assert np.array_equal(fused, x[start:start + n].reshape(fused.shape)) and np.array_equal(simulated, fused)


def test_a_window_that_is_no_box_is_read_through_the_laid_out_tensor() -> None:
    """A window of another size than the tensor (a padded view), an offset that runs a digit past the tensor's
    live cells, or an offset past the slice: no box, so the caller lays the tensor out. A window whose
    slots cut the tensor's digits elsewhere (its rows inside, the tensor's outside) is a box of split digits,
    and reads what the laid-out tensor gives."""
    values = np.arange(PA.n * A.n, dtype=np.int32).reshape(PA.n, A.n)
    tensor, terms = m["PA, A"], logical_terms(m["PA, A"])
    wider = m["1 # 2, PA, A"]
    assert box_values(values, terms, tensor, PA.n * A.n, 0, wider, logical_terms(wider)) is None
    tile = m["PA % 16 # 256, A"]
    assert box_values(values, terms, tensor, PA.n * A.n, 241 * A.n, tile, logical_terms(tile)) is None
    assert box_values(values, terms, tensor, PA.n * A.n, PA.n * A.n, tile, logical_terms(tile)) is None
    assert box_values(values, terms, tensor, PA.n * A.n, 240 * A.n, tile, logical_terms(tile)) is not None
    crossed = m["A, PA % 16 # 256"]
    got = box_values(values, terms, tensor, PA.n * A.n, 0, crossed, logical_terms(crossed))
    laid = lay_out(values, terms, tensor, "i32")
    expected = to_terms(window(laid, PA.n * A.n, 0, crossed, "i32")[0], crossed, logical_terms(crossed))
    assert got is not None and np.array_equal(got, expected)


def test_the_lm_head_tile_reads_a_slice_of_the_weight() -> None:
    """The final layer's tile view (8192 rows of the [Wp, H] weight, padded to the whole vocabulary) is a box:
    the fused evaluator reads it from the weight's values, never laying out the 159M-cell weight."""
    tile = m["Wp % 8192 # 155648, H"]
    weight = m["Wp, H"]
    values = np.zeros((Wp.n, H.n), dtype=np.int8)
    values[3 * 8192:4 * 8192] = np.arange(8192 * H.n).reshape(8192, H.n) % 127
    got = box_values(values, logical_terms(weight), weight, weight.size, 3 * 8192 * H.n, tile,
                        logical_terms(tile))
    assert got is not None and np.array_equal(got, values[3 * 8192:4 * 8192])


WRITES: dict[str, tuple[Any, str, str]] = {
    "hbm rows outside": (tcp.HbmTensor[tcp.i32, Chip, m["PA, A"]], "PA % {n} # 256, A", "PA % {n} #{{!}} 256, A"),
    "hbm rows inside": (tcp.HbmTensor[tcp.i32, Chip, m["A, PA"]], "A, PA % {n} # 256", "A, PA % {n} #{{!}} 256"),
    "dm over slices": (tcp.DmTensor[tcp.i32, Chip, m["1 # 2"], m["A # 64"], m["PA"]], "PA % {n} # 256",
                       "PA % {n} #{{!}} 256"),
}


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(WRITES)), st.data())
def test_a_write_into_a_tile_sets_a_slice_bit_for_bit(layout: str, data: st.DataObject) -> None:
    """Rows ``src .. src + n`` of one tensor written into rows ``dst .. dst + n`` of another: the fused write is
    the planned scatter's result to the bit, and both evaluators give the rows moved, the others kept. (A DMA
    whose innermost run is one i32 breaks its tail alignment: one row only where the rows are outside.)"""
    n = data.draw(st.sampled_from([1, 4, 16, 64] if layout == "hbm rows outside" else [4, 16, 64]), label="n")
    src = data.draw(st.integers(0, PA.n // n - 1), label="src") * n
    dst = data.draw(st.integers(0, PA.n // n - 1), label="dst") * n
    kind, read, write = WRITES[layout]
    rng = np.random.default_rng(src * PA.n + dst)
    x, y = (rng.integers(-2**31, 2**31, (PA.n, A.n), dtype=np.int64).astype(np.int32) for _ in range(2))
    expected = y.copy()
    expected[dst:dst + n] = x[src:src + n]
    for evaluator in ("fused", "simulate"):
        source, target = kind(tcp.Tensor(x, "PA A")), kind(tcp.Tensor(y, "PA A"))
        rows = source.view().tile(src, index=m["PA"], len=n, element=m[read.format(n=n)])
        window = target.view_mut().tile(dst, index=m["PA"], len=n, element=m[write.format(n=n)])
        moved = rows.to_hbm_view(window) if isinstance(target, tcp.HbmTensor) else rows.to_dm_view(window)
        with tcp.evaluator(evaluator):
            assert np.array_equal(moved.to_tensor().to_numpy("PA A"), expected)
    root = moved.flow.root
    assert isinstance(root.source, Written)
    parent, new = root.source.parent, root.source.written
    values, new_values = parent.root.logical("fused"), new.root.logical("fused")
    fast = box_written(values, parent.root.terms, parent.mapping, new_values, new.root.terms, new.mapping,
                          root.source.element, root.source.offset)
    assert fast is not None
    reference = written(values, parent.root.terms, parent.mapping, new_values, new.root.terms, new.mapping,
                        root.source.element, root.source.offset, parent.dtype)
    assert fast.dtype == reference.dtype and np.array_equal(fast, reference)


def test_a_move_onto_rows_spread_over_slices_is_a_box_of_split_digits() -> None:
    """The lm_head's weight tile: HBM rows moved into a DM tensor whose rows sit partly on the slices and partly
    in the Element (its mapping's one row digit is cut at the slice's end). The write is a slice of split
    digits, bit for bit the planned scatter's result, and both evaluators give the rows."""
    x = np.random.default_rng(3).integers(-2**31, 2**31, (PA.n, A.n), dtype=np.int64).astype(np.int32)
    for evaluator in ("fused", "simulate"):
        hbm = tcp.HbmTensor[tcp.i32, Chip, m["PA, A"]](tcp.Tensor(x, "PA A"))
        dm = tcp.DmTensor[tcp.i32, Chip, m["1 # 2"], m["PA / 4"], m["PA % 4, A"]](
            tcp.Tensor(np.zeros((PA.n, A.n), np.int32), "PA A"))
        moved = hbm.view().to_dm_view(dm.view_mut())
        with tcp.evaluator(evaluator):
            assert np.array_equal(moved.to_tensor().to_numpy("PA A"), x)
    source = moved.flow.root.source
    assert isinstance(source, Written)
    parent, new = source.parent, source.written
    values, new_values = parent.root.logical("fused"), new.root.logical("fused")
    fast = box_written(values, parent.root.terms, parent.mapping, new_values, new.root.terms, new.mapping,
                          source.element, source.offset)
    reference = written(values, parent.root.terms, parent.mapping, new_values, new.root.terms, new.mapping,
                        source.element, source.offset, parent.dtype)
    assert fast is not None and np.array_equal(fast, reference)
