"""Memory tensors, DMA moves, reshape, tile and pad views (docs/stage-rules.md §4.1)."""

from __future__ import annotations

from math import gcd

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpdsl.algebra import Mapping, parse, split_at
from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify.dma import dma_tail, verify_to_dm, verify_to_hbm
from tcpdsl.verify.memory import Tier, check_dm_tensor, check_hbm_tensor
from tcpdsl.verify.sequencer import Entry
from tcpdsl.verify.views import tile_element, verify_pad, verify_reshape, verify_tile

AXES = {"A": 8, "B": 8, "X": 32, "D": 64, "L": 768, "F": 15, "C": 4, "Y": 4}


def m(text: str, axes: dict[str, int] = AXES) -> Mapping:
    return parse(text, axes)


ONE, CLUSTER, SLICE = m("1"), m("1 # 2"), m("1 # 256")


def test_dm_tensor_rules() -> None:
    assert check_dm_tensor("i32", chip=ONE, cluster=CLUSTER, slice_=SLICE, element=m("A, X")) == 1024
    with pytest.raises(LayoutError) as err:
        check_dm_tensor("i8", chip=ONE, cluster=m("C"), slice_=SLICE, element=m("A"))
    assert (err.value.stage, err.value.rule, err.value.detail) == (
        "DmTensor", "ClusterSize", "DmTensor: the Cluster size must be 1 or 2, got 4 (Cluster C)")
    with pytest.raises(LayoutError) as err:
        check_dm_tensor("i8", chip=ONE, cluster=ONE, slice_=m("X"), element=m("A"))
    assert (err.value.rule, err.value.detail) == (
        "SliceSize", "DmTensor: the Slice size must be 64, 128 or 256, got 32 (Slice X)")
    with pytest.raises(DtypeError) as derr:
        check_dm_tensor("i5", chip=ONE, cluster=ONE, slice_=SLICE, element=m("A"))
    assert derr.value.rule == "Materializable"


def test_dm_capacity() -> None:
    axes = {"K": 131072, "J": 131073}
    assert check_dm_tensor("f32", chip=ONE, cluster=ONE, slice_=SLICE, element=m("K", axes)) == 512 * 1024
    with pytest.raises(LayoutError) as err:
        check_dm_tensor("f32", chip=ONE, cluster=ONE, slice_=SLICE, element=m("J", axes))
    assert (err.value.rule, err.value.detail) == (
        "Capacity", "DmTensor: Element J of f32 takes 524292 bytes per slice, more than the 524288 bytes of a DM slice")


def test_hbm_tensor_holds_packed_4_bit() -> None:
    assert check_hbm_tensor("f4e2m1", chip=ONE, element=m("X")) == 16


def test_invalid_hbm_to_dm_tail_align() -> None:
    # The reference's negative: i8 [A, B] -> DM Slice B / 4, Element [B % 4, A] shares one byte.
    axes = {"A": 65536, "B": 1024}
    src = Tier(m("1", axes), m("A, B", axes))
    with pytest.raises(LayoutError) as err:
        verify_to_dm("i8", source=src, cluster=m("1 # 2", axes), slice_=m("B / 4", axes), element=m("B % 4, A", axes))
    assert (err.value.stage, err.value.rule, err.value.detail) == (
        "to_dm", "TailAlign", "to_dm: DMA tail alignment violation: source Element A, B and destination Element "
        "B % 4, A share an innermost run of 1 elements of i8 (1 bytes), not a multiple of 8 bytes")


def test_padded_tail_alignment() -> None:
    # i32 PC = 5 padded to 8 on both sides moves in 32-byte runs; unpadded it is 20 bytes and refused.
    axes = {"PA": 256, "PC": 5}
    padded = verify_to_dm("i32", source=Tier(m("1", axes), m("PA, PC # 8", axes)), cluster=m("1", axes),
                          slice_=m("PA", axes), element=m("PC # 8", axes))
    assert (padded.tail, padded.tail_bytes, padded.entries) == (8, 32, (Entry(2048, 1),))
    with pytest.raises(LayoutError) as err:
        verify_to_dm("i32", source=Tier(m("1", axes), m("PA, PC", axes)), cluster=m("1", axes),
                     slice_=m("PA", axes), element=m("PC", axes))
    assert err.value.rule == "TailAlign"


def test_fetch_commit_simple_to_dm() -> None:
    axes = {"A": 4096, "B": 8}
    p = verify_to_dm("i8", source=Tier(m("1", axes), m("A, B", axes)), cluster=m("1 # 2", axes),
                     slice_=m("A / 16", axes), element=m("A / 8 % 2, A % 8, B", axes))
    assert (p.tail_bytes, p.bytes, p.same_tier) == (128, 32768, False)


def test_to_hbm_from_dm_is_aligned_too() -> None:
    # fetch_commit_simple's last move, i32 DM [A / 8 % 2, A % 8, B] to HBM [B, A], shares one 4-byte
    # element: the reference lets it pass, tcpdsl refuses it (the book's alignment holds both ways).
    axes = {"A": 4096, "B": 8}
    src = Tier(m("1", axes), m("A / 8 % 2, A % 8, B", axes), m("1 # 2", axes), m("A / 16", axes))
    with pytest.raises(LayoutError) as err:
        verify_to_hbm("i32", source=src, element=m("B, A", axes))
    assert (err.value.stage, err.value.rule) == ("to_hbm", "TailAlign")
    assert verify_to_hbm("i32", source=src, element=m("A, B", axes)).tail_bytes == 128 * 4


def test_hbm_to_hbm_is_not_aligned() -> None:
    # transpose_simple: f32 [A, B, C] relaid out in HBM twice; a broadcast [A] -> [A, Y] replicates.
    axes = {"A": 8, "B": 16, "C": 32}
    p = verify_to_hbm("f32", source=Tier(m("1", axes), m("A, B, C", axes)), element=m("A, C, B", axes))
    assert (p.tail, p.same_tier) == (1, True)
    verify_to_hbm("f32", source=Tier(m("1", axes), m("A, C, B", axes)), element=m("C, A, B", axes))
    wide = verify_to_hbm("i32", source=Tier(ONE, m("A")), element=m("A, Y"))
    assert wide.entries == (Entry(8, 1), Entry(4, 0))


def test_dm_relayout_keeps_the_grid() -> None:
    axes = {"A": 256, "B": 4096}
    src = Tier(m("1", axes), m("B", axes), m("1 # 2", axes), m("A", axes))
    p = verify_to_dm("i32", source=src, cluster=m("1 # 2", axes), slice_=m("1 # 2, A / 2", axes),
                     element=m("A % 2, B", axes))
    assert p.tail == 4096
    with pytest.raises(LayoutError) as err:
        verify_to_dm("i32", source=src, cluster=m("1", axes), slice_=m("A", axes), element=m("B", axes))
    assert (err.value.rule, err.value.detail) == (
        "DmToDmPreserve", "to_dm: a DM to DM move keeps the Cluster size, got 2 (1 # 2) to 1 (1)")


def test_unread_and_decomposition() -> None:
    src = Tier(ONE, m("A, B"))
    with pytest.raises(LayoutError) as err:
        verify_to_hbm("i8", source=src, element=m("A"))
    assert (err.value.rule, err.value.detail) == (
        "Unread", "to_hbm: the source HBM layout A, B holds B, which the destination HBM layout A does not hold; a "
        "move cannot drop data")
    with pytest.raises(LayoutError) as err:
        verify_to_hbm("i8", source=Tier(ONE, m("F / 3, C, F % 3")), element=m("F % 5, C, F / 5"))
    assert err.value.rule == "Decomposition"


def test_stride_align() -> None:
    # i8 rows of X = 8 padded to 12 in DM: the shared tail is 8 bytes, but the next row starts 12 bytes on.
    axes = {"X": 8, "C": 4}
    with pytest.raises(LayoutError) as err:
        verify_to_dm("i8", source=Tier(m("1", axes), m("C, X", axes)), cluster=m("1", axes), slice_=m("1 # 64", axes),
                     element=m("C, X # 12", axes))
    assert (err.value.stage, err.value.rule, err.value.detail) == (
        "to_dm", "StrideAlign", "to_dm: a destination stride of 12 bytes past the shared tail of 8 elements is not a "
        "multiple of 8 bytes (source C, X, destination C, X # 12)")
    verify_to_dm("i8", source=Tier(m("1", axes), m("C, X", axes)), cluster=m("1", axes), slice_=m("1 # 64", axes),
                 element=m("C, X # 16", axes))


def test_dma_tail() -> None:
    assert dma_tail(m("A, B"), m("A, B")) == 64
    assert dma_tail(m("A, B"), m("B, A")) == 1
    assert dma_tail(m("A, X"), m("X / 8, A, X % 8")) == 8


def test_reshape_preserve() -> None:
    verify_reshape(Tier(ONE, m("A, B")), chip=ONE, element=m("D"))
    with pytest.raises(LayoutError) as err:
        verify_reshape(Tier(ONE, m("A, B")), chip=ONE, element=m("X"))
    assert (err.value.stage, err.value.rule, err.value.detail) == (
        "reshape", "Preserve", "reshape: Element must keep its size, got 64 (A, B) to 32 (X)")


def test_tile_views() -> None:
    # Read tiles hold Top padding, write tiles Bottom; a one-value window leaves a pure padding factor.
    assert tile_element(m("A, X"), index=m("X"), len_=16, write=False) == m("A, X = 16 # 32")
    assert tile_element(m("D"), index=m("D"), len_=32, write=True) == m("D = 32 #{!} 64")
    assert tile_element(m("A, B"), index=m("B"), len_=1, write=False) == m("A, 1 # 8")
    assert tile_element(m("X / 8, A, X % 8"), index=m("X / 8"), len_=2, write=False) == m("X / 8 = 2 # 4, A, X % 8")
    axes = {"L": 768, "A": 4}
    assert verify_tile(m("L, A", axes), start=256, index=m("L", axes), len_=256,
                       element=m("L = 256 #{!} 768, A", axes), write=True) == m("L = 256 #{!} 768, A", axes)


def test_tile_rules() -> None:
    with pytest.raises(LayoutError) as err:
        tile_element(m("A, X"), index=m("X / 2"), len_=4, write=False)
    assert (err.value.stage, err.value.rule, err.value.detail) == (
        "tile", "Split", "tile: the index X / 2 is not one whole factor of the view's Element A, X")
    with pytest.raises(LayoutError) as err:
        tile_element(m("A, X"), index=m("X"), len_=33, write=False)
    assert (err.value.rule, err.value.detail) == (
        "Split", "tile: a window of 33 values does not fit the 32 values of X in A, X")
    with pytest.raises(LayoutError) as err:
        verify_tile(m("A, X"), start=24, index=m("X"), len_=16, element=m("A, X = 16 # 32"), write=False)
    assert (err.value.rule, err.value.detail) == (
        "Start", "tile: a window of 16 values of X starting at 24 leaves the 32 values")
    with pytest.raises(LayoutError) as err:
        verify_tile(m("A, X"), start=0, index=m("X"), len_=16, element=m("A, X = 16 # 32"), write=True)
    assert (err.value.rule, err.value.detail) == (
        "UnexpectedView", "tile: the window's Element must be A, X % 16 #{!} 32, got A, X % 16 # 32")


def test_pad_views() -> None:
    assert verify_pad(m("A, X"), element=m("1 # 2, A, X"), write=False) == m("A # 16, X")
    with pytest.raises(LayoutError) as err:
        verify_pad(m("A, X"), element=m("X"), write=False)
    assert (err.value.stage, err.value.rule, err.value.detail) == (
        "pad", "NarrowerView", "pad: the padded view X (32 cells) is narrower than the view A, X (256 cells)")
    with pytest.raises(LayoutError) as err:
        verify_pad(m("A, X"), element=m("A, X # 64"), write=False)
    assert (err.value.rule, err.value.detail) == (
        "UnexpectedView", "pad: the padded view must be A # 16, X, got A, X # 64")


def _tail_by_cuts(source: Mapping, destination: Mapping) -> int:
    """The definition: the largest n dividing both sizes with source % n == destination % n."""
    common = gcd(source.size, destination.size)
    return max(n for n in range(1, common + 1) if common % n == 0
               and split_at(source, n)[1] == split_at(destination, n)[1])


LAYOUTS = ("A, B", "B, A", "A / 2, B, A % 2", "A, B / 4, B % 4", "B % 4, A, B / 4", "A # 16, B", "A, B # 16",
           "1 # 2, A, B", "B / 2, A, B % 2", "A % 4, B, A / 4", "X / 8, B", "B, X", "A, B = 6 # 8", "A, B # 12",
           "A, B #{0} 16", "B = 6 # 8, A")


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS))
def test_dma_tail_is_the_longest_common_cut(source: str, destination: str) -> None:
    assert dma_tail(m(source), m(destination)) == _tail_by_cuts(m(source), m(destination))


def test_dma_tail_of_huge_layouts() -> None:
    # Sizes near the 10^18 limit and a prime near 10^12: the tail comes from the slots, and the
    # divisor search never trial-divides past 2^16.
    axes = {"G": 1 << 56, "P": 999999999989, "K": 4}
    assert dma_tail(m("K, G", axes), m("K, G # " + str(3 << 56), axes)) == 1 << 56
    assert dma_tail(m("K, P", axes), m("P, K", axes)) == 1
    assert dma_tail(m("K, P", axes), m("K, P = 10", axes)) == 4
    assert dma_tail(m("P", axes), m("P # 1999999999978", axes)) == 999999999989


def test_tile_view_in_loop_moves() -> None:
    # i8 HBM [A, B]: the read tile of one B value is [A, 1 # 8], the write tile of the transposed output
    # [1 #{!} 8, A]; the HBM to HBM move between them writes only A of the output's cells.
    read = tile_element(m("A, B"), index=m("B"), len_=1, write=False)
    write = tile_element(m("B, A"), index=m("B"), len_=1, write=True)
    assert (read, write) == (m("A, 1 # 8"), m("1 #{!} 8, A"))
    p = verify_to_hbm("i8", source=Tier(ONE, read), element=write, view=True)
    assert (p.entries, p.bytes) == ((Entry(8, 0), Entry(8, 8)), 8)


def test_chunk_swap_tiles() -> None:
    # bf16 [L = 768, A]: a 256-row read tile moved into a 256-row write tile of another HBM tensor.
    axes = {"L": 768, "A": 4}
    read = tile_element(m("L, A", axes), index=m("L", axes), len_=256, write=False)
    write = tile_element(m("L, A", axes), index=m("L", axes), len_=256, write=True)
    assert write == m("L = 256 #{!} 768, A", axes)
    p = verify_to_hbm("bf16", source=Tier(m("1", axes), read), element=write, view=True)
    assert (p.tail, p.bytes) == (1024, 2048)


def test_view_simpl_and_view_nested() -> None:
    # i32 DM [B = 8] rotated by two by DM-to-DM moves between read and write tiles.
    ax = {"A": 512, "B": 8}
    src = Tier(m("1", ax), m("B", ax), m("A / 256", ax), m("A % 256", ax))
    read = verify_tile(m("B", ax), start=0, index=m("B", ax), len_=4, element=m("B = 4 # 8", ax), write=False)
    write = verify_tile(m("B", ax), start=2, index=m("B", ax), len_=4, element=m("B = 4 #{!} 8", ax), write=True)
    p = verify_to_dm("i32", source=Tier(src.chip, read, src.cluster, src.slice_), cluster=src.cluster,
                     slice_=src.slice_, element=write, view=True)
    assert (p.tail, p.tail_bytes) == (4, 16)
    # A tile of a tile: the index is the first tile's factor, padding and all; the start counts its live values.
    ax = {"A": 512, "B": 528}
    outer = verify_tile(m("B", ax), start=0, index=m("B", ax), len_=264, element=m("B = 264 # 528", ax), write=False)
    inner = verify_tile(outer, start=0, index=m("B = 264 # 528", ax), len_=132, element=m("B = 132 # 528", ax),
                        write=False)
    assert inner == m("B % 132 # 528", ax)
    with pytest.raises(LayoutError) as err:
        verify_tile(outer, start=200, index=m("B = 264 # 528", ax), len_=132, element=m("B = 132 # 528", ax),
                    write=False)
    assert (err.value.rule, err.value.detail) == (
        "Start", "tile: a window of 132 values of B % 264 # 528 starting at 200 leaves the 264 values")
