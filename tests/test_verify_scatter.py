"""The static half of ``dm.dma_scatter(index, out, key=)``: its rules, parameters and offsets
(docs/stage-rules.md §4.1)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tcpdsl.algebra import Mapping, parse
from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify.families import DM, HBM, TensorType, check_type
from tcpdsl.verify.memory import Tier
from tcpdsl.verify.scatter import ScatterParams, scatter_rows, verify_scatter
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.stages import STAGES, compose_stage

AXES = {"K": 512, "D": 128, "C": 612, "N": 8, "T": 512, "X": 2, "E": 3}


def m(text: str) -> Mapping:
    return parse(text, AXES)


def dm(slice_: str = "K / 2", element: str = "K % 2, D", *, chip: str = "1", cluster: str = "1 # 2") -> Tier:
    return Tier(m(chip), m(element), m(cluster), m(slice_))


def hbm(element: str, chip: str = "1") -> Tier:
    return Tier(m(chip), m(element))


def scatter(data: Tier | None = None, *, key: str = "K", index: Tier | None = None, out: Tier | None = None,
            dtype: str = "bf16", index_dtype: str = "i32", out_dtype: str = "bf16") -> ScatterParams:
    """Example 1 (the reference's scatter_minimal) unless told otherwise."""
    return verify_scatter(dtype, data=data or dm(), key=m(key), index_dtype=index_dtype, index=index or hbm("K"),
                          out_dtype=out_dtype, out=out or hbm("C, D"))


EXAMPLE_1 = ScatterParams(tail=128, tail_bytes=256, entries=(), bytes=512 * 256, same_tier=False, key=("K",),
                          payload=("D",), axis="C", rows=612, row_bytes=256)


def test_scatter_minimal() -> None:
    # bf16 [K, D], 512 rows of 128 cells (256 bytes) into C = 612 rows; each row a contiguous run of D.
    assert scatter() == EXAMPLE_1


def test_kv_cache_write_is_one_row() -> None:
    # key 1: the whole [N, D] is one row of 8 * 128 * 2 bytes, written at a row of T.
    data = dm("N, 1 # 32", "D")
    params = scatter(data, key="1", index=hbm("1"), out=hbm("T, N, D"))
    assert params == ScatterParams(tail=128, tail_bytes=256, entries=(), bytes=2048, same_tier=False, key=(),
                                   payload=("N", "D"), axis="T", rows=512, row_bytes=2048)


def test_tail_is_the_run_of_one_row() -> None:
    # A row is contiguous only up to the first slot of another axis, or through a padded slot's live cells.
    assert scatter(out=hbm("D / 64, C, D % 64")).tail == 64
    assert scatter(out=hbm("C, D # 256")).tail_bytes == 256


def test_the_composer_returns_out() -> None:
    data = check_type(DM, ("bf16",), (m("1"), m("1 # 2"), m("K / 2"), m("K % 2, D")))
    index = check_type(HBM, ("i32",), (m("1"), m("K")))
    out = check_type(HBM, ("bf16",), (m("1"), m("C, D")))
    result, params = compose_stage(Stage.DMA_SCATTER, data, index, out, key=m("K"))
    assert (result, params) == (out, EXAMPLE_1)
    assert STAGES[Stage.DMA_SCATTER].returns(DM) is HBM


def test_only_a_dm_tensor_scatters() -> None:
    src = TensorType(HBM, ("bf16",), (m("1"), m("K, D")))
    with pytest.raises(LayoutError) as err:
        compose_stage(Stage.DMA_SCATTER, src, src, src, key=m("K"))
    assert (err.value.stage, err.value.rule) == ("dma_scatter", "StageOrder")


def _refused(call: Callable[[], object], error: type[DtypeError] | type[LayoutError] = LayoutError) -> tuple[str, str]:
    """The rule and the message of the error ``call`` raises, which names the stage and carries a hint."""
    with pytest.raises(error) as err:
        call()
    assert err.value.stage == "dma_scatter" and err.value.hint
    return err.value.rule, err.value.detail


def test_index_dtype() -> None:
    assert _refused(lambda: scatter(index_dtype="bf16"), DtypeError) == (
        "IndexDtype", "dma_scatter: the index holds i32 byte offsets, got bf16")


def test_dtype() -> None:
    assert _refused(lambda: scatter(out_dtype="f32"), DtypeError) == (
        "Dtype", "dma_scatter: the data is bf16 but out holds f32; a scatter moves bytes as they are")


def test_chip() -> None:
    assert _refused(lambda: scatter(index=hbm("K", chip="1 # 2"))) == (
        "Chip", "dma_scatter: the Chip 1 # 2 of index differs from the data's Chip 1")
    assert _refused(lambda: scatter(out=hbm("C, D", chip="1 # 2"))) == (
        "Chip", "dma_scatter: the Chip 1 # 2 of out differs from the data's Chip 1")


def test_a_chip_that_holds_an_axis() -> None:
    # A payload axis spread over chips: the reference batches over it, tcpdsl refuses it.
    assert _refused(lambda: scatter(dm("K / 2", "K % 2, D", chip="X"), index=hbm("K", chip="X"),
                                    out=hbm("C, D", chip="X"))) == (
        "Chip", "dma_scatter: the Chip X holds X; tcpdsl scatters within one chip's layout, a Chip of one chip or of "
        "replicas")


def test_row_bytes() -> None:
    assert _refused(lambda: scatter(dm("K / 2", "K % 2, E # 16"), out=hbm("C, E"), dtype="i4", out_dtype="i4")) == (
        "RowBytes", "dma_scatter: a row of 3 i4 cells (E) is 12 bits, not a whole number of bytes, so no byte "
        "offset addresses it")


def test_tail_align() -> None:
    # Each key's row sits strided in DM (D outside K % 2): the run both sides hold alike is one cell, 2 bytes.
    assert _refused(lambda: scatter(dm("K / 2", "D, K % 2"))) == (
        "TailAlign", "dma_scatter: DMA tail alignment violation: source Element D, K % 2 and destination Element "
        "C, D share an innermost run of 1 elements of bf16 (2 bytes), not a multiple of 8 bytes")


def test_key_contained() -> None:
    across = dm("K % 256", "D", cluster="K / 256")
    assert _refused(lambda: scatter(across)) == (
        "KeyContained",
        "dma_scatter: the key axis K lies partly in the data's Cluster K / 256; a key must lie entirely within "
        "[Slice, Element] (Chip 1, Cluster K / 256, Slice K % 256, Element D), since a key split across Cluster "
        "and Element cannot be addressed",
    )
    chips = dm("K % 256", "D", chip="K / 256")
    assert _refused(lambda: scatter(chips, index=hbm("K", chip="K / 256"), out=hbm("C, D", chip="K / 256")))[1] == (
        "dma_scatter: the key axis K lies partly in the data's Chip K / 256; a key must lie entirely within "
        "[Slice, Element] (Chip K / 256, Cluster 1 # 2, Slice K % 256, Element D), since a key split across Chip "
        "and Element cannot be addressed"
    )
    assert _refused(lambda: scatter(key="C")) == (
        "KeyContained",
        "dma_scatter: the key axis C is not an axis of the data (Chip 1, Cluster 1 # 2, Slice K / 2, Element K % 2, D)",
    )


def test_whole_axes() -> None:
    assert _refused(lambda: scatter(key="K / 2", index=hbm("K / 2"))) == (
        "WholeAxes",
        "dma_scatter: the key K / 2 holds K / 2, which is not a whole axis; tcpdsl scatters by whole key axes",
    )
    assert _refused(lambda: scatter(dm("K / 2", "D"))) == (
        "WholeAxes",
        "dma_scatter: the data holds K / 2 of the key axis K, not the whole axis (Chip 1, Cluster 1 # 2, Slice K / 2, "
        "Element D); tcpdsl scatters whole axes only",
    )
    assert _refused(lambda: scatter(dm("K / 2", "K % 2, D % 64"))) == (
        "WholeAxes",
        "dma_scatter: the data holds D % 64 of the payload axis D, not the whole axis (Chip 1, Cluster 1 # 2, "
        "Slice K / 2, Element K % 2, D % 64); tcpdsl scatters whole axes only",
    )


def test_payload() -> None:
    assert _refused(lambda: scatter(out=hbm("C"))) == (
        "Payload",
        "dma_scatter: out (Chip 1, Element C) lacks the payload axis D; out holds the payload (D) and one axis to "
        "scatter rows along",
    )
    assert _refused(lambda: scatter(out=hbm("C, T, D"))) == (
        "Payload",
        "dma_scatter: out (Chip 1, Element C, T, D) holds C, T besides the payload (D); exactly one more axis, the "
        "one rows are scattered along, is allowed",
    )
    assert _refused(lambda: scatter(out=hbm("D"))) == (
        "Payload",
        "dma_scatter: out (Chip 1, Element D) holds no axis besides the payload (D); exactly one more axis, the one "
        "rows are scattered along, is allowed",
    )
    assert _refused(lambda: scatter(out=hbm("C, D / 2"))) == (
        "Payload",
        "dma_scatter: out (Chip 1, Element C, D / 2) holds D / 2 of D, not the whole axis; each axis of out is held "
        "whole",
    )


def test_index_shape() -> None:
    assert _refused(lambda: scatter(index=hbm("K, D"))) == (
        "IndexShape",
        "dma_scatter: the index (Chip 1, Element K, D) holds K, D, but the key K takes one offset per key value, "
        "over exactly K",
    )
    assert _refused(lambda: scatter(index=hbm("K / 2"))) == (
        "IndexShape",
        "dma_scatter: the index (Chip 1, Element K / 2) holds K / 2 of K, but the key K takes one offset per key "
        "value, over exactly K",
    )
    assert _refused(lambda: scatter(dm("N, 1 # 32", "D"), key="1", index=hbm("K"), out=hbm("T, N, D"))) == (
        "IndexShape",
        "dma_scatter: the index (Chip 1, Element K) holds K, but the key 1 takes one offset per key value, over "
        "exactly no axis (one cell)",
    )


def test_offsets_are_rows() -> None:
    assert scatter_rows([0, 256, 611 * 256], EXAMPLE_1) == [0, 1, 611]
    assert _refused(lambda: scatter_rows([0, 256, 100], EXAMPLE_1)) == (
        "Offset", "dma_scatter: the byte offset 100 of key value 2 is not a multiple of the row size of 256 bytes")
    assert _refused(lambda: scatter_rows([0, 612 * 256], EXAMPLE_1)) == (
        "Offset",
        "dma_scatter: the byte offset 156672 of key value 1 addresses row 612 (rows of 256 bytes), outside the 612 "
        "rows [0, 612) of C",
    )
    assert _refused(lambda: scatter_rows([-256], EXAMPLE_1))[1].startswith("dma_scatter: the byte offset -256 of")


@given(st.integers(1, 1 << 16), st.integers(1, 4096).flatmap(
    lambda rows: st.tuples(st.just(rows), st.lists(st.integers(0, rows - 1), max_size=64))))
def test_offsets_decode_back_to_rows(row_bytes: int, drawn: tuple[int, list[int]]) -> None:
    rows, wanted = drawn
    params = ScatterParams(tail=1, tail_bytes=1, entries=(), bytes=len(wanted) * row_bytes, same_tier=False,
                           key=("K",), payload=("D",), axis="C", rows=rows, row_bytes=row_bytes)
    assert scatter_rows([r * row_bytes for r in wanted], params) == wanted
