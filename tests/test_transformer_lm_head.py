"""The reference transformer's lm_head kernels at the reference's sizes (examples/transformer/final_layer.py,
``lm_head::forward``): a tile of 8192 weight rows moved from its HBM tile view into DM and the TRF, contracted,
cast and committed into its window of the logits, then the Broadcast1 switch that gathers 128 logits per group
of 8 slices. The whole final layer (all 19 tiles) runs in examples/transformer/run_model.py."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import ml_dtypes
import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl.harness.schedule import schedule_of
from test_transformer_vector import FOLDER, MODEL

H = tcp.axis("H", 1024)  # the example's axes, declared where this module names them
Wp = tcp.axis("Wp", 155648)

sys.path.insert(0, str(FOLDER))  # the kernels import their siblings by plain name
import final_layer as FINAL  # noqa: E402

LAST = FINAL.TILES - 1  # the last tile: 4480 vocabulary rows, then the zero rows of the padding


@pytest.fixture(params=["fused", "simulate"])
def evaluator(request: pytest.FixtureRequest) -> Iterator[str]:
    with tcp.evaluator(request.param):
        yield request.param


def test_the_last_tile_through_the_gather_matches_the_model(evaluator: str) -> None:
    """The tile that starts furthest into the HBM weight and holds its padding rows, into a zeroed logits
    tensor: its logits within the reference's tolerance (and one bf16 rounding) of the float64 model, the
    padding rows' and every other tile's logits zero."""
    sizes = MODEL.REFERENCE
    rng = np.random.default_rng(12)
    x = MODEL.uniform_bf16(rng, (H.n,), 1.0)
    rows = MODEL.random_final(sizes, 7).lm_head_tile(LAST)
    weight = np.zeros((Wp.n, H.n), dtype=ml_dtypes.bfloat16)  # bf16, as in HBM: a third of a gigabyte
    weight[LAST * FINAL.TILE:] = rows
    hidden = FINAL.Hidden(tcp.Tensor(x.astype(np.float32), "H"))
    logits = FINAL.lm_head_tile(hidden, FINAL.LmWeight(tcp.Tensor(weight, "Wp H")), FINAL.empty_logits(), LAST)
    out = FINAL.gather(logits)
    assert repr(out) == ('<DmTensor[bf16, m["1"], m["Wp / 4096 % 2"], m["Wp / 128 % 32, 1 # 8"], '
                         'm["Wp / 8192, Wp % 128"]]>')
    got = out.to_tensor().to_numpy("Wp").astype(np.float64)
    tile = got[LAST * FINAL.TILE:]
    expected = MODEL.linear(x, rows)
    real = sizes.W - LAST * FINAL.TILE
    assert real == 4480 and not expected[real:].any()
    assert MODEL.LOGITS.holds(tile[:real], expected[:real]), MODEL.LOGITS.excess(tile[:real], expected[:real])
    assert np.all(np.abs(tile - expected) <= 2.0**-7 * np.abs(expected) + 1e-6)
    assert np.abs(expected).max() > 0.5  # the logits are not all near zero
    assert not got[: LAST * FINAL.TILE].any()


def test_a_tile_start_past_the_vocabulary_is_refused() -> None:
    hidden = FINAL.Hidden(tcp.Tensor(np.zeros(H.n, np.float32), "H"))
    weight = FINAL.LmWeight(tcp.Tensor(np.zeros((Wp.n, H.n), ml_dtypes.bfloat16), "Wp H"))
    with pytest.raises(tcp.LayoutError) as info:
        FINAL.lm_head_tile(hidden, weight, FINAL.empty_logits(), FINAL.TILES)
    assert (info.value.stage, info.value.rule) == ("tile", "Start")


def test_the_final_norm_lands_on_the_lm_head_layout(evaluator: str) -> None:
    """The final rmsnorm run on lm_head's layout: every slice holds the whole normed vector, the bf16-rounding
    model's to the last bit and the float64 model's within one bf16 rounding. Its only moves are the two DMAs
    from HBM (the vector and the weight), as the reference's: no move onto lm_head's layout after the norm."""
    rng = np.random.default_rng(13)
    x, w = MODEL.uniform_bf16(rng, (H.n,), 1.0), MODEL.uniform_bf16(rng, (H.n,), 1.0)
    out = FINAL.final_norm(FINAL.Vector(tcp.Tensor(x.astype(np.float32), "H")),
                           FINAL.Vector(tcp.Tensor(w.astype(np.float32), "H")))
    assert repr(out) == '<DmTensor[bf16, m["1"], m["Wp / 4096 % 2"], m["Wp / 16 % 256"], m["H"]]>'
    schedule = schedule_of(out)
    assert schedule is not None and [s.name for s in schedule.streams if s.unit == "dma"] == ["to_dm", "to_dm"]
    got = out.to_tensor().to_numpy("H")
    assert np.array_equal(got, MODEL.rmsnorm(x, w, MODEL.KERNEL))
    expected = MODEL.rmsnorm(x, w)
    assert np.all(np.abs(got - expected) <= 2.0**-8 * np.abs(expected) + 1e-6)
