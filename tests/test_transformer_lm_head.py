"""The reference transformer's lm_head runs whole at the reference's sizes: 19 weight tiles of 8192 rows, each
contracted, cast and committed into its tile of the logits, then a Broadcast1 switch gathers 128 logits per
group of 8 slices (examples/transformer/README.md, ``lm_head::forward``)."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

import tcpdsl as tcp
from test_transformer_model import M as model
from tcpdsl import m

H = tcp.axis("H", 1024)
Wp = tcp.axis("Wp", 155648)

BF16 = tcp.bf16
Chip, Cluster, Slice = m["1"], m["Wp / 4096 % 2"], m["Wp / 16 % 256"]
Logits = tcp.DmTensor[BF16, Chip, Cluster, Slice, m["Wp / 8192, Wp % 16"]]
dev = tcp.Device()


def lm_head(x: np.ndarray, w: np.ndarray, tiles: int) -> Any:
    """The logits of the first ``tiles`` weight tiles; the others stay as the zeros the logits start with."""
    hidden = tcp.DmTensor[BF16, Chip, Cluster, Slice, m["H"]](tcp.Tensor(x, "H"))
    weights = tcp.Tensor(w, "Wp H")
    logits = Logits(tcp.Tensor(np.zeros(Wp.n, np.float32), "Wp"))
    for i in range(tiles):
        w_dm = tcp.DmTensor[BF16, Chip, Cluster, Slice, m["Wp % 16, H"]](weights.tile(m["Wp / 8192"], i))
        w_trf = (dev.sub.begin(w_dm.view())
                 .fetch(out_time=m["Wp % 8, Wp / 8 % 2, H / 16"], out_packet=m["H % 16"])
                 .collect(out_time=m["Wp % 8, Wp / 8 % 2, H / 16"], out_packet=m["H % 16"])
                 .to_trf(lane=m["Wp % 8"], element=m["Wp / 8 % 2, H"]))
        logits = (dev.main.begin(hidden.view())
                  .fetch(out_time=m["H / 16"], out_packet=m["H % 16"])
                  .collect(out_time=m["H / 16"], out_packet=m["H % 16"])
                  .contract_outer(w_trf, out_time=m["H / 32, Wp / 8 % 2"], out_packet=m["H % 32"])
                  .contract_packet(out_packet=m["1"])
                  .contract_time(out_time=m["Wp / 8 % 2"])
                  .contract_lane(out_time=m["Wp / 8 % 2"], out_packet=m["Wp % 8"], mode=tcp.LaneMode.INTERLEAVED)
                  .cast(BF16, out_packet=m["Wp % 8 # 16"])
                  .commit_trim(out_packet=m["Wp % 8"])
                  .commit_view(logits.view_mut().tile(i, index=m["Wp / 8192"], len=1,
                                                      element=m["1 #{!} 19, Wp % 16"])))
    return (dev.main.begin(logits.view())
            .fetch(out_time=m["Wp / 8192"], out_packet=m["Wp % 16"])
            .switch(tcp.Broadcast1(slice1=8, slice0=1), out_slice=m["Wp / 128 % 32, 1 # 8"],
                    out_time=m["Wp / 8192, Wp / 16 % 8"])
            .collect(out_time=m["Wp / 8192, Wp / 16 % 8"], out_packet=m["Wp % 16"])
            .commit_trim(out_packet=m["Wp % 16"]).commit(element=m["Wp / 8192, Wp % 128"]))


# Every tile through the fused evaluator; the simulator, which moves every weight cell, on the first tile.
@pytest.mark.parametrize("evaluator, tiles", [("fused", 19), ("simulate", 19)])
def test_lm_head_matches_the_model(evaluator: str, tiles: int) -> None:
    rng = np.random.default_rng(12)
    x = model.uniform_bf16(rng, (H.n,), 1.0)
    # The weight is held in bf16, as in HBM (a third of a gigabyte), and drawn a tile at a time.
    w = np.empty((Wp.n, H.n), dtype=ml_dtypes.bfloat16)
    for start in range(0, Wp.n, 8192):
        w[start:start + 8192] = rng.uniform(-0.05, 0.05, (8192, H.n)).astype(ml_dtypes.bfloat16)
    with tcp.evaluator(evaluator):
        out = lm_head(x.astype(np.float32), w, tiles)
        got = out.to_tensor().to_numpy("Wp").astype(np.float64)
    assert repr(out) == ('<DmTensor[bf16, m["1"], m["Wp / 4096 % 2"], m["Wp / 128 % 32, 1 # 8"], '
                         'm["Wp / 8192, Wp % 128"]]>')
    done = tiles * 8192
    expected = np.concatenate([model.linear(x, w[s:s + 8192].astype(np.float64)) for s in range(0, done, 8192)])
    tolerance = model.LOGITS
    assert np.all(np.abs(got[:done] - expected) <= tolerance.abs + tolerance.rel * np.abs(expected))
    assert np.all(np.abs(got[:done] - expected) <= 2.0 ** -7 * np.abs(expected) + 1e-6)
    assert not got[done:].any()
