"""Memory tensors and DMA as typed stages on both evaluators: the tier-A reference cases of section 2
(relayouts through HBM, HBM -> DM -> HBM with a padded tail, the TailAlign negative, reshape)
(docs/stage-rules.md §4.1, docs/runtime.md §4)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 8)
B = tcp.axis("B", 16)
C = tcp.axis("C", 32)
PA = tcp.axis("PA", 256)
PC = tcp.axis("PC", 5)

Chip = m["1"]


@pytest.fixture(params=["fused", "simulate"])
def evaluator(request: pytest.FixtureRequest) -> Iterator[str]:
    with tcp.evaluator(request.param):
        yield request.param


def test_transpose_simple(evaluator: str) -> None:
    """f32 [A=8, B=16, C=32] relaid out in HBM as [A, C, B], then [C, A, B] (DMA only)."""
    x = np.random.default_rng(0).standard_normal((8, 16, 32)).astype(np.float32)
    hbm = tcp.HbmTensor[tcp.f32, Chip, m["A, B, C"]](tcp.Tensor(x, "A B C"))
    once = hbm.to_hbm(element=m["A, C, B"])
    twice = once.to_hbm(element=m["C, A, B"])
    assert isinstance(twice, tcp.HbmTensor[tcp.f32, Chip, m["C, A, B"]])
    assert np.array_equal(twice.to_tensor().to_numpy("A B C"), x)
    assert twice.physical().reshape(32, 8, 16)[5, 3, 7] == x[3, 7, 5]


def test_padded_tail_alignment(evaluator: str) -> None:
    """i32 [PA=256, PC=5]: HBM -> DM -> HBM passes with `PC # 8` on both sides (a 32-byte tail)."""
    x = np.arange(256 * 5).reshape(256, 5)
    hbm = tcp.HbmTensor[tcp.i32, Chip, m["PA, PC # 8"]](tcp.Tensor(x, "PA PC"))
    dm = hbm.to_dm(cluster=m["1 # 2"], slice=m["PA"], element=m["PC # 8"])
    assert dm.flow.steps[-1].params.tail_bytes == 32
    back = dm.to_hbm(element=m["PA, PC # 8"])
    assert np.array_equal(back.to_tensor().to_numpy("PA PC"), x)


def test_dm_to_dm_relayout_keeps_the_slice_size(evaluator: str) -> None:
    x = np.arange(256 * 8).reshape(256, 8)
    dm = tcp.HbmTensor[tcp.i32, Chip, m["PA, A"]](tcp.Tensor(x, "PA A")).to_dm(
        cluster=m["1 # 2"], slice=m["PA"], element=m["A"])
    moved = dm.to_dm(slice=m["1 # 2, PA / 2"], element=m["PA % 2, A"])
    assert moved.layout["Cluster"] == m["1 # 2"]
    assert np.array_equal(moved.to_tensor().to_numpy("PA A"), x)
    with pytest.raises(tcp.LayoutError) as info:
        dm.to_dm(slice=m["PA / 2"], element=m["PA % 2, A"])
    assert (info.value.stage, info.value.rule) == ("to_dm", "DmToDmPreserve")


def test_unpadded_tail_is_refused() -> None:
    """The tail `PC` alone is 20 bytes of i32: TailAlign."""
    hbm = tcp.HbmTensor[tcp.i32, Chip, m["PA, PC"]](tcp.Tensor(np.zeros((256, 5)), "PA PC"))
    with pytest.raises(tcp.LayoutError, match="to_dm: DMA tail alignment violation") as info:
        hbm.to_dm(cluster=m["1 # 2"], slice=m["PA"], element=m["PC"])
    assert (info.value.stage, info.value.rule) == ("to_dm", "TailAlign")


def test_invalid_hbm_to_dm() -> None:
    """i8 [A=65536, B=1024] into DM Slice B / 4, Element [B % 4, A]: the shared run is 1 byte (TailAlign)."""
    Ah, Bh = tcp.axis("Ah", 65536), tcp.axis("Bh", 1024)
    hbm = tcp.HbmTensor[tcp.i8, Chip, m["Ah, Bh"]](tcp.Tensor(np.zeros((65536, 1024), dtype=np.int8), [Ah, Bh]))
    with pytest.raises(tcp.LayoutError, match=r"share an innermost run of 1 elements of i8 \(1 bytes\)") as info:
        hbm.to_dm(cluster=m["1 # 2"], slice=m["Bh / 4"], element=m["Bh % 4, Ah"])
    assert (info.value.stage, info.value.rule) == ("to_dm", "TailAlign")


def test_to_dm_from_hbm_needs_a_cluster() -> None:
    hbm = tcp.HbmTensor[tcp.i32, Chip, m["PA, A"]](tcp.Tensor(np.zeros((256, 8)), "PA A"))
    with pytest.raises(tcp.LayoutError, match="to_dm: a move from HBM into DM chooses the Cluster layout") as info:
        hbm.to_dm(cluster=None, slice=m["PA"], element=m["A"])
    assert info.value.rule == "Cluster"


def test_reshape_relabels_the_same_bytes(evaluator: str) -> None:
    x = np.arange(256 * 8).reshape(256, 8)
    dm = tcp.HbmTensor[tcp.i32, Chip, m["PA, A"]](tcp.Tensor(x, "PA A")).to_dm(
        cluster=m["1 # 2"], slice=m["PA"], element=m["A"])
    E = tcp.axis("E", 8)
    S = tcp.axis("S", 256)
    relabelled = dm.reshape(chip=m["1"], cluster=m["1 # 2"], slice=m["S"], element=m["E"])
    assert np.array_equal(relabelled.to_tensor().to_numpy("S E"), x)
    with pytest.raises(tcp.LayoutError, match=r"reshape: Element must keep its size, got 8 \(A\) to 16") as info:
        dm.reshape(chip=m["1"], cluster=m["1 # 2"], slice=m["PA"], element=m["B"])
    assert (info.value.stage, info.value.rule) == ("reshape", "Preserve")


def test_a_dm_tensor_past_its_capacity_is_refused() -> None:
    Big = tcp.axis("Big", 1 << 20)
    with pytest.raises(tcp.LayoutError) as info:
        tcp.DmTensor[tcp.bf16, Chip, m["1"], m["1 # 64"], m["Big"]]
    assert (info.value.stage, info.value.rule) == ("DmTensor", "Capacity")
    del Big
