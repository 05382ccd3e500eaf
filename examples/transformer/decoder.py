"""The transformer's decoder entry and one whole decoder step through the kernels (examples/transformer/README.md,
``ops::decoder`` and the driver loop).

``decoder`` is the entry: the attention output divided by its softmax sum, the output projection, the
residual add, the post norm, the MLP and the second residual add, from HBM to HBM. ``decoder_step`` drives
one layer for one token: ``projection`` writes the token's key and value into the caches, ``attend`` runs
the attention kernels over every cached chunk up to the token's (``attention_forward_first`` on chunk 0,
``attention_forward`` on each later one, the online-softmax state passed along in HBM), and ``decoder``
gives the new residual stream.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

import tcpdsl as tcp
from tcpdsl import m
import model
from attention import Mask, RowsHbm, State, attention_forward, attention_forward_first, attention_norm
from mlp import DownWeight, UpWeight, mlp
from projection import Cache, Hidden, OWeight, PWeight, QOut, QWeight, kv_offset, proj_o, projection
from residual import residual
from rmsnorm import HeadWeight, rmsnorm
from rope import Table

H = tcp.axis("H", 1024)
Q = tcp.axis("Q", 2048)
P = tcp.axis("P", 1024)
N = tcp.axis("N", 8)
G = tcp.axis("G", 2)
D = tcp.axis("D", 128)
T = tcp.axis("T", 512)
L = tcp.axis("L", 3072)
Dummy64 = tcp.axis("Dummy64", 64)

Chip = m["1"]
Cluster = m["1 # 2"]
SliceP4 = m["Dummy64, 1 # 4"]


@tcp.kernel
def decoder(attended: QOut, total: RowsHbm, stream: Hidden, o: OWeight, post_norm: Hidden, up: UpWeight,
            gate: UpWeight, down: DownWeight) -> Hidden:
    """The new residual stream ``[H]`` in HBM."""
    heads = attention_norm(attended.to_dm(cluster=Cluster, slice=SliceP4, element=m["N, G, D"]), total)
    x = proj_o(heads.reshape(chip=Chip, cluster=Cluster, slice=SliceP4, element=m["Q"]), o)  # [N, G, D] read as Q
    rx = residual(x, stream.to_dm(cluster=Cluster, slice=SliceP4, element=m["H"]))
    rx = residual(mlp(rmsnorm(rx, post_norm), up, gate, down), rx)
    # Every slice holds the same H: read the replicas of Dummy64 as replication before the move.
    return rx.reshape(chip=Chip, cluster=Cluster, slice=m["1 # 256"], element=m["H"]).to_hbm(element=m["H"])


# -- the driver ---------------------------------------------------------------------------------

Array = npt.NDArray[Any]


def _f32(values: npt.ArrayLike) -> Array:
    return np.asarray(values, dtype=np.float32)


@dataclass(frozen=True)
class LayerTensors:
    """One layer's weights laid out once as the kernels' HBM tensors, reused by every step."""

    input_norm: Any
    q: Any
    k: Any
    v: Any
    q_norm: Any
    k_norm: Any
    o: Any
    post_norm: Any
    up: Any
    gate: Any
    down: Any

    @staticmethod
    def of(layer: model.LayerWeights) -> "LayerTensors":
        return LayerTensors(
            input_norm=Hidden(tcp.Tensor(_f32(layer.input_norm), "H")),
            q=QWeight(tcp.Tensor(_f32(layer.q), "Q H")),
            k=PWeight(tcp.Tensor(_f32(layer.k), "P H")),
            v=PWeight(tcp.Tensor(_f32(layer.v), "P H")),
            q_norm=HeadWeight(tcp.Tensor(_f32(layer.q_norm), "D")),
            k_norm=HeadWeight(tcp.Tensor(_f32(layer.k_norm), "D")),
            o=OWeight(tcp.Tensor(_f32(layer.o), "H Q")),
            post_norm=Hidden(tcp.Tensor(_f32(layer.post_norm), "H")),
            up=UpWeight(tcp.Tensor(_f32(layer.up), "L H")),
            gate=UpWeight(tcp.Tensor(_f32(layer.gate), "L H")),
            down=DownWeight(tcp.Tensor(_f32(layer.down), "H L")),
        )


@dataclass
class KvChunks:
    """One layer's KV cache as HBM chunks of ``T`` tokens, the projection kernel's write targets."""

    k: list[Any]
    v: list[Any]

    @staticmethod
    def of(cache: model.KvCache) -> "KvChunks":
        def chunks(values: Array) -> list[Any]:
            return [Cache(tcp.Tensor(_f32(chunk), "T N D")) for chunk in values]

        return KvChunks(chunks(cache.k), chunks(cache.v))

    def to_model(self) -> model.KvCache:
        def values(chunks: list[Any]) -> Array:
            return np.stack([c.to_tensor().to_numpy("T N D") for c in chunks])

        return model.KvCache(values(self.k), values(self.v))


def attend(q: QOut, cache: KvChunks, position: int) -> State:
    """The token's attention over chunks 0 to its own, each under its causal mask: the online-softmax state
    ``(max, sum, out)`` in HBM, ``out`` not yet divided by ``sum``."""
    def mask(chunk: int) -> Mask:
        return Mask(tcp.Tensor(_f32(model.causal_mask(chunk, position, model.REFERENCE)), "T"))

    state = attention_forward_first(q, cache.k[0], cache.v[0], mask(0))
    for chunk in range(1, position // model.REFERENCE.T + 1):
        state = attention_forward(q, cache.k[chunk], cache.v[chunk], mask(chunk), *state)
    return state


@dataclass(frozen=True)
class Step:
    """What one decoder step leaves at each boundary: the query ``[N, G, D]``, the attention state, the stream."""

    q: Any
    state: State
    stream: Any


def layer_step(x: Any, layer: LayerTensors, position: int, cache: KvChunks) -> Step:
    """One layer for the token at ``position`` (x: the residual stream ``Hidden``), every boundary kept."""
    cos, sin = model.rope_tables(position, model.REFERENCE)
    chunk, row = divmod(position, model.REFERENCE.T)
    q = projection(x, layer.input_norm, layer.q, layer.k, layer.v, layer.q_norm, layer.k_norm,
                   Table(tcp.Tensor(cos, "D")), Table(tcp.Tensor(sin, "D")), cache.k[chunk], cache.v[chunk],
                   kv_offset(row))
    state = attend(q, cache, position)
    _, total, out = state
    return Step(q, state, decoder(out, total, x, layer.o, layer.post_norm, layer.up, layer.gate, layer.down))


def decoder_step(x: Any, layer: LayerTensors, position: int, cache: KvChunks) -> Any:
    """One layer for the token at ``position``; returns the new residual stream."""
    return layer_step(x, layer, position, cache).stream
