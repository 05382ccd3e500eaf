"""The reference transformer's projections run whole, fetch to commit with the switch that gathers each head,
at the reference's sizes on both evaluators, against the numpy model within the reference's tolerance
(examples/transformer/README.md, ``projection::proj_q``, ``proj_k``, ``proj_o``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tcpdsl as tcp
from test_transformer_model import M as model
from tcpdsl import m

H = tcp.axis("H", 1024)
Q = tcp.axis("Q", 2048)
P = tcp.axis("P", 1024)
Dummy64 = tcp.axis("Dummy64", 64)

BF16 = tcp.bf16
IL = tcp.LaneMode.INTERLEAVED
Chip, Cluster = m["1"], m["1 # 2"]
SliceP4 = m["Dummy64, 1 # 4"]
dev = tcp.Device()


@pytest.fixture(params=["fused", "simulate"])
def evaluator(request: pytest.FixtureRequest) -> Iterator[str]:
    with tcp.evaluator(request.param):
        yield request.param


def proj_q(x: np.ndarray, w: np.ndarray) -> Any:
    """64 slice groups of 32 query rows each; the switch gathers 256 rows onto each group of 32 slices."""
    SliceQ = m["Q / 32, 1 # 4"]
    xq = tcp.DmTensor[BF16, Chip, Cluster, SliceQ, m["H"]](tcp.Tensor(x, "H"))
    weight = tcp.DmTensor[BF16, Chip, Cluster, SliceQ, m["Q % 32, H"]](tcp.Tensor(w, "Q H"))
    weight_trf = (dev.sub.begin(weight.view())
                  .fetch(out_time=m["Q % 32, H / 16"], out_packet=m["H % 16"])
                  .collect(out_time=m["Q % 32, H / 16"], out_packet=m["H % 16"])
                  .to_trf(lane=m["Q / 4 % 8"], element=m["Q % 4, H"]))
    part = (dev.main.begin(xq.view())
            .fetch(out_time=m["H / 16"], out_packet=m["H % 16"])
            .collect(out_time=m["H / 16"], out_packet=m["H % 16"])
            .contract_outer(weight_trf, out_time=m["H / 32, Q % 4"], out_packet=m["H % 32"])
            .contract_packet(out_packet=m["1"])
            .contract_time(out_time=m["Q % 4"])
            .contract_lane(out_time=m["Q % 4"], out_packet=m["Q / 4 % 8"], mode=IL)
            .cast(BF16, out_packet=m["Q / 4 % 8 # 16"])
            .transpose(out_time=m["Q / 4 % 8"], out_packet=m["Q % 4 # 16"])
            .commit_trim(out_packet=m["Q % 4"]).commit(element=m["Q % 32"]))
    return (dev.main.begin(part.view())
            .fetch(out_time=m["1"], out_packet=m["Q % 32"])
            .switch(tcp.Broadcast1(slice1=8, slice0=4), out_slice=m["Q / 256, 1 # 32"], out_time=m["Q / 32 % 8"])
            .collect(out_time=m["Q / 16 % 16"], out_packet=m["Q % 16"])
            .commit_trim(out_packet=m["Q % 16"]).commit(element=m["Q % 256"]))


def proj_p(x: np.ndarray, w: np.ndarray) -> Any:
    """k and v: 32 slice groups of 32 rows; the switch gathers 128 rows (one head) onto 32 slices."""
    SliceP = m["P / 32, 1 # 8"]
    xp = tcp.DmTensor[BF16, Chip, Cluster, SliceP, m["H"]](tcp.Tensor(x, "H"))
    weight = tcp.DmTensor[BF16, Chip, Cluster, SliceP, m["P % 32, H"]](tcp.Tensor(w, "P H"))
    weight_trf = (dev.sub.begin(weight.view())
                  .fetch(out_time=m["P % 8, P / 8 % 4, H / 16"], out_packet=m["H % 16"])
                  .collect(out_time=m["P % 8, P / 8 % 4, H / 16"], out_packet=m["H % 16"])
                  .to_trf(lane=m["P % 8"], element=m["P / 8 % 4, H"]))
    part = (dev.main.begin(xp.view())
            .fetch(out_time=m["H / 16"], out_packet=m["H % 16"])
            .collect(out_time=m["H / 16"], out_packet=m["H % 16"])
            .contract_outer(weight_trf, out_time=m["H / 32, P / 8 % 4"], out_packet=m["H % 32"])
            .contract_packet(out_packet=m["1"])
            .contract_time(out_time=m["P / 8 % 4"])
            .contract_lane(out_time=m["P / 8 % 4"], out_packet=m["P % 8"], mode=IL)
            .cast(BF16, out_packet=m["P % 8 # 16"])
            .commit_trim(out_packet=m["P % 8"]).commit(element=m["P % 32"]))
    return (dev.main.begin(part.view())
            .fetch(out_time=m["1"], out_packet=m["P % 32"])
            .switch(tcp.Broadcast1(slice1=4, slice0=8), out_slice=m["P / 128, 1 # 32"], out_time=m["P / 32 % 4"])
            .collect(out_time=m["P / 16 % 8"], out_packet=m["P % 16"])
            .commit_trim(out_packet=m["P % 16"]).commit(element=m["P % 128"]))


def proj_o(x: np.ndarray, w: np.ndarray) -> Any:
    """64 slice groups of 16 output rows (four of the eight lanes); the switch broadcasts H to every slice."""
    SliceO = m["H / 16, 1 # 4"]
    xo = tcp.DmTensor[BF16, Chip, Cluster, SliceO, m["Q"]](tcp.Tensor(x, "Q"))
    weight = tcp.DmTensor[BF16, Chip, Cluster, SliceO, m["H % 16, Q"]](tcp.Tensor(w, "H Q"))
    weight_trf = (dev.sub.begin(weight.view())
                  .fetch(out_time=m["H % 16, Q / 16"], out_packet=m["Q % 16"])
                  .collect(out_time=m["H % 16, Q / 16"], out_packet=m["Q % 16"])
                  .to_trf(lane=m["H / 4 % 4"], element=m["H % 4, Q"]))
    part = (dev.main.begin(xo.view())
            .fetch(out_time=m["Q / 16"], out_packet=m["Q % 16"])
            .collect(out_time=m["Q / 16"], out_packet=m["Q % 16"])
            .contract_outer(weight_trf, out_time=m["Q / 32, H % 4"], out_packet=m["Q % 32"])
            .contract_packet(out_packet=m["1"])
            .contract_time(out_time=m["H % 4"])
            .contract_lane(out_time=m["H % 4"], out_packet=m["H / 4 % 4 # 8"], mode=IL)
            .cast(BF16, out_packet=m["H / 4 % 4 # 16"])
            .transpose(out_time=m["H / 4 % 4"], out_packet=m["H % 4 # 16"])
            .commit_trim(out_packet=m["H % 4"]).commit(element=m["H % 16"]))
    return (dev.main.begin(part.view())
            .fetch(out_time=m["1"], out_packet=m["H % 16"])
            .switch(tcp.Broadcast1(slice1=64, slice0=4), out_slice=SliceP4, out_time=m["H / 16"])
            .collect(out_time=m["H / 16"], out_packet=m["H % 16"])
            .commit_trim(out_packet=m["H % 16"]).commit(element=m["H"]))


# (kernel, input axis and size, output axis and size, the DM layout of the result)
KERNELS = [
    (proj_q, ("H", 1024), ("Q", 2048), 'm["Q / 256, 1 # 32"], m["Q % 256"]'),
    (proj_p, ("H", 1024), ("P", 1024), 'm["P / 128, 1 # 32"], m["P % 128"]'),
    (proj_o, ("Q", 2048), ("H", 1024), 'm["Dummy64, 1 # 4"], m["H"]'),
]


@pytest.mark.parametrize("kernel, source, target, layout", KERNELS, ids=["proj_q", "proj_k", "proj_o"])
def test_the_projections_match_the_model(evaluator: str, kernel: Any, source: tuple[str, int],
                                         target: tuple[str, int], layout: str) -> None:
    rng = np.random.default_rng(11)
    x = model.uniform_bf16(rng, (source[1],), 1.0)
    w = model.uniform_bf16(rng, (target[1], source[1]), 0.05)
    out = kernel(x.astype(np.float32), w.astype(np.float32))
    assert repr(out) == f'<DmTensor[bf16, m["1"], m["1 # 2"], {layout}]>'
    got = out.to_tensor().to_numpy(target[0]).astype(np.float64)
    expected = model.linear(x, w)
    tolerance = model.PROJECTION
    assert np.all(np.abs(got - expected) <= tolerance.abs + tolerance.rel * np.abs(expected))
    # The kernel's rounding is the model's: f32 sums committed as bf16, one bf16 step at most apart.
    assert np.all(np.abs(got - expected) <= 2.0 ** -7 * np.abs(expected) + 1e-6)
