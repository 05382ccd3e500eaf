"""The transformer's decoder entry and one whole decoder step through the kernels (examples/transformer/README.md,
``ops::decoder``, ``attention::norm`` and the driver loop).

``decoder`` is the entry: the attention output divided by its softmax sum, the output projection, the
residual add, the post norm, the MLP and the second residual add, from HBM to HBM. ``decoder_step`` drives
one layer for one token: ``projection`` writes the token's key and value into the caches, attention runs
over every cached chunk, and ``decoder`` gives the new residual stream.

Attention is the one part not ported here: ``decoder_step`` takes it as a function of the query, the
caches and the position that returns the online-softmax state ``(out, sum)``. ``model_attention`` is the
stand-in until the attention kernels exist: it runs the numpy model's attention, in bf16 as the kernels
round, on the caches the projection kernel wrote.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

import tcpdsl as tcp
from tcpdsl import m
import model
from mlp import DownWeight, UpWeight, mlp
from projection import Cache, Hidden, OWeight, PWeight, QOut, QWeight, proj_o, projection
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

Heads = tcp.DmTensor[tcp.bf16, Chip, Cluster, SliceP4, m["N, G, D"]]
Sum = tcp.HbmTensor[tcp.f32, Chip, m["N, G"]]
dev = tcp.Device()


@tcp.kernel
def attention_norm(x: Heads, total: Sum) -> Heads:
    """The unnormalised attention output divided by its softmax sum, one sum per query head, f32 then bf16."""
    sums = (
        dev.sub.begin(total.to_dm(cluster=Cluster, slice=SliceP4, element=m["N, G"]).view())
        .fetch(out_time=m["N / 4"], out_packet=m["N % 4, G"])
        .collect(out_time=m["N / 4"], out_packet=m["N % 4, G"])
        .to_vrf(element=m["N, G"])
    )
    return (
        dev.main.begin(x.view())
        .fetch(out_time=m["N, G, D / 16"], out_packet=m["D % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["N, G, D / 8"], out_packet=m["D % 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_narrow_split(out_time=m["N, G, D / 4"], out_packet=m["D % 4"])
        .vector_fp_div(sums)
        .vector_widen_concat(out_time=m["N, G, D / 8"], out_packet=m["D % 8"])
        .vector_final()
        .cast(tcp.bf16, out_packet=m["D % 8 # 16"])
        .commit_trim(out_packet=m["D % 8"])
        .commit(element=m["N, G, D"])
    )


@tcp.kernel
def decoder(attended: QOut, total: Sum, stream: Hidden, o: OWeight, post_norm: Hidden, up: UpWeight,
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


# Attention as the driver calls it: (q [N, G, D], the caches, the position) -> (out [N, G, D], sum [N, G]).
Attention = Callable[[Any, KvChunks, int], tuple[Any, Any]]


def model_attention(q: Any, cache: KvChunks, position: int) -> tuple[Any, Any]:
    """The stand-in for the attention kernels: the numpy model's attention (bf16 rounding as the kernels do)
    over the caches the projection kernel wrote, its state handed back as HBM tensors."""
    state = model.attention(q.to_tensor().to_numpy("N G D"), cache.to_model(), position, model.REFERENCE,
                            model.KERNEL)
    return (QOut(tcp.Tensor(_f32(state.out), "N G D")), Sum(tcp.Tensor(_f32(state.sum), "N G")))


def decoder_step(x: Any, layer: LayerTensors, position: int, cache: KvChunks,
                 attention: Attention = model_attention) -> Any:
    """One layer for the token at ``position`` (x: the residual stream ``Hidden``); returns the new stream."""
    cos, sin = model.rope_tables(position, model.REFERENCE)
    chunk, row = divmod(position, model.REFERENCE.T)
    q = projection(x, layer.input_norm, layer.q, layer.k, layer.v, layer.q_norm, layer.k_norm,
                   Table(tcp.Tensor(cos, "D")), Table(tcp.Tensor(sin, "D")), cache.k[chunk], cache.v[chunk], row)
    out, total = attention(q, cache, position)
    return decoder(out, total, x, layer.o, layer.post_norm, layer.up, layer.gate, layer.down)
