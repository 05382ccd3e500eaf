"""A window (a tile) of a memory tensor read on the fused evaluator: when it is a box of whole slots its values
are a slice of the tensor's, bit for bit what laying the tensor out and cutting the window gives, at a cost of
the window's size (docs/runtime.md §4, "Windows read by slots")."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings, strategies as st

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.algebra import Mapping, logical_terms
from tcpdsl.numerics.flow import Window
from tcpdsl.numerics.moves import lay_out, window
from tcpdsl.numerics.transfer import to_terms
from tcpdsl.numerics.windows import window_values

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
    fast = window_values(values, source.parent.root.terms, source.parent.mapping, source.element, source.offset,
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
    """Slots that do not pair up (the window's rows inside, the tensor's outside), an offset that runs a digit
    past the tensor's live cells, or an offset past the slice: no box, so the caller lays the tensor out."""
    values = np.arange(PA.n * A.n, dtype=np.int32).reshape(PA.n, A.n)
    tensor, terms = m["PA, A"], logical_terms(m["PA, A"])
    crossed = m["A, PA % 16 # 256"]
    assert window_values(values, terms, tensor, PA.n * A.n, 0, crossed, logical_terms(crossed)) is None
    tile = m["PA % 16 # 256, A"]
    assert window_values(values, terms, tensor, PA.n * A.n, 241 * A.n, tile, logical_terms(tile)) is None
    assert window_values(values, terms, tensor, PA.n * A.n, PA.n * A.n, tile, logical_terms(tile)) is None
    assert window_values(values, terms, tensor, PA.n * A.n, 240 * A.n, tile, logical_terms(tile)) is not None


def test_the_lm_head_tile_reads_a_slice_of_the_weight() -> None:
    """The final layer's tile view (8192 rows of the [Wp, H] weight, padded to the whole vocabulary) is a box:
    the fused evaluator reads it from the weight's values, never laying out the 159M-cell weight."""
    tile = m["Wp % 8192 # 155648, H"]
    weight = m["Wp, H"]
    values = np.zeros((Wp.n, H.n), dtype=np.int8)
    values[3 * 8192:4 * 8192] = np.arange(8192 * H.n).reshape(8192, H.n) % 127
    got = window_values(values, logical_terms(weight), weight, weight.size, 3 * 8192 * H.n, tile,
                        logical_terms(tile))
    assert got is not None and np.array_equal(got, values[3 * 8192:4 * 8192])
