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


def test_embedding_row_into_an_hbm_view(evaluator: str) -> None:
    """The transformer's embedding smoke test: bf16 [H=1024] copied HBM -> HBM with to_hbm_view."""
    H = tcp.axis("H", 1024)
    x = np.random.default_rng(1).standard_normal(1024).astype(np.float32)
    src = tcp.HbmTensor[tcp.bf16, Chip, m["H"]](tcp.Tensor(x, [H]))
    dst = tcp.HbmTensor[tcp.bf16, Chip, m["H"]](tcp.Tensor(np.zeros(1024), [H]))
    assert src.view().to_hbm_view(dst.view_mut()) is dst
    assert np.array_equal(dst.to_tensor().to_numpy("H"), src.to_tensor().to_numpy("H"))


def test_a_tile_of_hbm_into_a_dm_window(evaluator: str) -> None:
    """Rows 64..127 of an HBM table moved into rows 0..63 of a DM tensor (a tile's start counts rows);
    the other rows of the DM tensor stay as they were."""
    x = np.arange(256 * 8).reshape(256, 8)
    hbm = tcp.HbmTensor[tcp.i32, Chip, m["PA, A"]](tcp.Tensor(x, "PA A"))
    dm = tcp.DmTensor[tcp.i32, Chip, m["1 # 2"], m["1 # 64"], m["PA, A"]](tcp.Tensor(np.full((256, 8), -1), "PA A"))
    rows = hbm.view().tile(64, index=m["PA"], len=64, element=m["PA % 64 # 256, A"])
    window = dm.view_mut().tile(0, index=m["PA"], len=64, element=m["PA % 64 #{!} 256, A"])
    assert rows.to_dm_view(window) is dm
    got = dm.to_tensor().to_numpy("PA A")
    assert np.array_equal(got[:64], x[64:128]) and np.all(got[64:] == -1)


def test_view_moves_check_their_destination() -> None:
    H = tcp.axis("H", 1024)
    src = tcp.HbmTensor[tcp.bf16, Chip, m["H"]](tcp.Tensor(np.zeros(1024), [H]))
    other = tcp.HbmTensor[tcp.f32, Chip, m["H"]](tcp.Tensor(np.zeros(1024), [H]))
    with pytest.raises(tcp.LayoutError, match="to_hbm_view: the source is bf16 but the view holds f32") as info:
        src.view().to_hbm_view(other.view_mut())  # type: ignore[arg-type]
    assert info.value.rule == "DtypeMismatch"
    with pytest.raises(tcp.LayoutError, match="to_hbm_view writes into a write view, got a HbmView") as info:
        src.view().to_hbm_view(src.view())  # type: ignore[arg-type]
    assert info.value.rule == "NotAWriteView"


def test_a_padded_view_streams_its_cells_and_reads_no_padding_as_data(evaluator: str) -> None:
    """`pad` re-declares a view's cells with one outermost padding factor: a fetch of the padded view's live
    part reads the tensor; the padding past the tensor is Top (undefined) in a read view."""
    dev = tcp.Device()
    W = tcp.axis("W", 16)
    x = np.arange(16, dtype=np.float32)
    dm = tcp.DmTensor[tcp.f32, Chip, m["1"], m["1 # 64"], m["W"]](tcp.Tensor(x, [W]))
    padded = dm.view().pad(element=m["W # 32"])
    assert padded.layout["Element"] == m["W # 32"]
    stream = dev.main.begin(padded).fetch(out_time=m["W # 32 / 8"], out_packet=m["W # 32 % 8"])
    assert np.array_equal(stream.to_tensor().to_numpy("W"), x)
    with pytest.raises(tcp.LayoutError, match=r"pad: the padded view W % 8 \(8 cells\) is narrower than the view W \(16 cells\)") as info:
        dm.view().pad(element=m["W = 8"])
    assert (info.value.stage, info.value.rule) == ("pad", "NarrowerView")
    with pytest.raises(tcp.LayoutError) as info:
        dm.view_mut().pad(element=m["W # 32"])
    assert (info.value.stage, info.value.rule) == ("pad", "UnexpectedView")


def test_the_fused_evaluator_reads_a_whole_view_without_laying_it_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream begun on a whole view of a moved tensor: the fused evaluator takes the tensor's logical values,
    so no window is cut from a physical buffer (a replicated weight would be laid out on every slice)."""
    import tcpdsl.tensors.stream as stream_module

    H = tcp.axis("H", 1024)
    x = np.random.default_rng(5).standard_normal(1024).astype(np.float32)
    hbm = tcp.HbmTensor[tcp.bf16, Chip, m["H"]](tcp.Tensor(x, [H]))
    dm = hbm.to_dm(cluster=m["1 # 2"], slice=m["1 # 256"], element=m["H"])
    calls: list[object] = []
    original = stream_module.window
    monkeypatch.setattr(stream_module, "window", lambda *a, **k: calls.append(a) or original(*a, **k))
    with tcp.evaluator("fused"):
        fused = (tcp.Device().main.begin(dm.view()).fetch(out_time=m["H / 16"], out_packet=m["H % 16"])
                 .to_tensor().to_numpy("H"))
    assert calls == []
    with tcp.evaluator("simulate"):
        simulated = (tcp.Device().main.begin(dm.view()).fetch(out_time=m["H / 16"], out_packet=m["H % 16"])
                     .to_tensor().to_numpy("H"))
    assert len(calls) == 1 and np.array_equal(fused, simulated)
