"""A numpy model of the reference transformer decoder (a Qwen3-style layer), kernel by kernel.

One function per kernel of the port plan in this folder's README: ``rmsnorm``, ``linear`` (every
projection), ``rope``, ``projection`` (input norm, q/k/v, q/k norm, RoPE and the KV-cache write),
``attention_first`` / ``attention_chunk`` (online softmax over one KV-cache chunk each, folded by
``online_update``), ``attention_norm``, ``residual``, ``mlp``, ``decoder``, ``lm_head`` (tile by
tile), ``decoder_step`` (one layer for one token) and ``final_layer``.

Every function takes a ``Numerics``: ``ORACLE`` computes in float64 from bf16 inputs, the scalar
model the kernels are checked against; ``FLOAT32`` is the same arithmetic in float32 (the speed
baseline); ``KERNEL`` is float32 that also rounds to bf16 wherever the kernels commit bf16 to DM,
so the difference between ``KERNEL`` and ``ORACLE`` is the rounding the reference's tolerances
(``PROJECTION``, ``ATTENTION``, ``DECODER``, ``LOGITS``) must absorb.

Nothing runs at import: weights are drawn by ``random_layer`` / ``random_final`` when asked, and
the lm_head weight one tile at a time, so the full 155648 x 1024 matrix never exists at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.floating[Any]]

EPS = 6.25e-8  # added to every mean square and to every softmax denominator
ROPE_THETA = 1_000_000.0


@dataclass(frozen=True)
class Sizes:
    """The axes of the network, named as the kernels' layouts name them."""

    H: int  # hidden size
    N: int  # KV heads
    G: int  # query heads per KV head
    D: int  # head dimension
    L: int  # MLP intermediate width
    T: int  # KV-cache chunk length (one attention call)
    W: int  # vocabulary
    Wp: int  # vocabulary padded to whole lm_head tiles
    tile: int  # lm_head rows per tile

    @property
    def Q(self) -> int:  # noqa: N802 (the axis name)
        """The fused query width, ``N * G * D``."""
        return self.N * self.G * self.D

    @property
    def P(self) -> int:  # noqa: N802 (the axis name)
        """The fused key (and value) width, ``N * D``."""
        return self.N * self.D


REFERENCE = Sizes(H=1024, N=8, G=2, D=128, L=3072, T=512, W=151936, Wp=155648, tile=8192)
SMALL = Sizes(H=64, N=2, G=2, D=16, L=96, T=32, W=40, Wp=48, tile=16)

BF16_GROUP = 16  # tokens per slice in the kernel's `softmax @ V`: partial sums round there


def to_bf16(x: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """Round to the nearest bf16 (ties to even), flushing subnormals to zero, as float32 values."""
    single = np.asarray(x, dtype=np.float32)
    bits = single.view(np.uint32)
    bits = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    rounded = bits.view(np.float32)
    rounded = np.where(np.abs(rounded) < np.finfo(np.float32).tiny, np.copysign(np.float32(0), single), rounded)
    return np.where(np.isfinite(single), rounded, single).astype(np.float32)


@dataclass(frozen=True)
class Numerics:
    """How the model computes: its float type, and whether it rounds where the kernels commit bf16."""

    dtype: type[np.floating[Any]]
    bf16_boundaries: bool = False

    def array(self, x: npt.ArrayLike) -> Array:
        return np.asarray(x, dtype=self.dtype)

    def bf16(self, x: Array) -> Array:
        """``x`` as the kernels leave it in DM: rounded to bf16 under ``bf16_boundaries``."""
        return to_bf16(x).astype(self.dtype) if self.bf16_boundaries else x


ORACLE = Numerics(np.float64)
FLOAT32 = Numerics(np.float32)
KERNEL = Numerics(np.float32, bf16_boundaries=True)


@dataclass(frozen=True)
class Tolerance:
    """The reference's closeness test: ``|actual - expected| <= abs + rel * |expected|``."""

    abs: float
    rel: float

    def excess(self, actual: npt.ArrayLike, expected: npt.ArrayLike) -> float:
        """The largest amount by which an element misses the bound (<= 0 when all are within it)."""
        a = np.asarray(actual, dtype=np.float64)
        e = np.asarray(expected, dtype=np.float64)
        return float(np.max(np.abs(a - e) - (self.abs + self.rel * np.abs(e))))

    def holds(self, actual: npt.ArrayLike, expected: npt.ArrayLike) -> bool:
        return self.excess(actual, expected) <= 0


PROJECTION = Tolerance(0.08, 0.08)  # q, k and v after projection
ATTENTION = Tolerance(0.12, 0.12)  # the normalised output of two-chunk attention
DECODER = Tolerance(0.25, 0.2)  # the residual stream after the decoder kernel
LOGITS = Tolerance(0.08, 0.08)  # final_layer's logits over the real vocabulary
WIRING = Tolerance(0.05, 0.05)  # the zero-weight decoder step against its input


# -- weights ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LayerWeights:
    """One decoder layer's weights, in the kernels' HBM layouts (rows are outputs)."""

    input_norm: Array  # [H]
    q: Array  # [Q, H], Q = (N, G, D)
    k: Array  # [P, H], P = (N, D)
    v: Array  # [P, H]
    q_norm: Array  # [D]
    k_norm: Array  # [D]
    o: Array  # [H, Q]
    post_norm: Array  # [H]
    up: Array  # [L, H]
    gate: Array  # [L, H]
    down: Array  # [H, L]


@dataclass(frozen=True)
class FinalWeights:
    """The final norm and the lm_head weight, handed out one ``[tile, H]`` tile at a time."""

    norm: Array  # [H]
    lm_head_tile: Callable[[int], Array]  # tile i holds rows i * tile .. (i + 1) * tile - 1 of [Wp, H]


def uniform_bf16(rng: np.random.Generator, shape: tuple[int, ...], scale: float, num: Numerics = ORACLE) -> Array:
    """Uniform values in ``[-scale, scale)``, rounded to bf16 (every input of the kernels is bf16)."""
    return num.array(to_bf16(rng.uniform(-scale, scale, size=shape)))


def random_layer(sizes: Sizes, seed: int, num: Numerics = ORACLE) -> LayerWeights:
    """Seeded bf16 weights at the scales of the reference's checks (norm weights in [-1, 1))."""
    rng = np.random.default_rng(seed)
    s = sizes
    return LayerWeights(
        input_norm=uniform_bf16(rng, (s.H,), 1.0, num),
        q=uniform_bf16(rng, (s.Q, s.H), 0.1, num),
        k=uniform_bf16(rng, (s.P, s.H), 0.1, num),
        v=uniform_bf16(rng, (s.P, s.H), 0.1, num),
        q_norm=uniform_bf16(rng, (s.D,), 1.0, num),
        k_norm=uniform_bf16(rng, (s.D,), 1.0, num),
        o=uniform_bf16(rng, (s.H, s.Q), 0.02, num),
        post_norm=uniform_bf16(rng, (s.H,), 1.0, num),
        up=uniform_bf16(rng, (s.L, s.H), 0.01, num),
        gate=uniform_bf16(rng, (s.L, s.H), 0.01, num),
        down=uniform_bf16(rng, (s.H, s.L), 0.01, num),
    )


def zero_layer(sizes: Sizes, num: Numerics = ORACLE) -> LayerWeights:
    """Zero matrices and unit norm weights: the layer adds nothing to the residual stream."""
    s = sizes
    zeros, ones = np.zeros, np.ones
    return LayerWeights(
        input_norm=ones(s.H, num.dtype), q=zeros((s.Q, s.H), num.dtype), k=zeros((s.P, s.H), num.dtype),
        v=zeros((s.P, s.H), num.dtype), q_norm=ones(s.D, num.dtype), k_norm=ones(s.D, num.dtype),
        o=zeros((s.H, s.Q), num.dtype), post_norm=ones(s.H, num.dtype), up=zeros((s.L, s.H), num.dtype),
        gate=zeros((s.L, s.H), num.dtype), down=zeros((s.H, s.L), num.dtype),
    )  # fmt: skip


def random_final(sizes: Sizes, seed: int, num: Numerics = ORACLE) -> FinalWeights:
    """Seeded final weights; each lm_head tile is drawn from ``(seed, tile index)`` when asked for.

    The padding rows ``W .. Wp - 1`` are zero, so their logits are zero.
    """

    def tile(i: int) -> Array:
        rows = uniform_bf16(np.random.default_rng([seed, i]), (sizes.tile, sizes.H), 0.05, num)
        rows[max(0, sizes.W - i * sizes.tile) :] = 0
        return rows

    return FinalWeights(norm=uniform_bf16(np.random.default_rng(seed), (sizes.H,), 1.0, num), lm_head_tile=tile)


# -- kernels ---------------------------------------------------------------------------------


def rmsnorm(x: Array, weight: Array, num: Numerics = ORACLE) -> Array:
    """``x * weight / sqrt(mean(x^2) + EPS)`` over the last axis (per head for the q/k norms)."""
    x = num.array(x)
    mean_square = np.mean(x * x, axis=-1, keepdims=True)
    return num.bf16(x * num.array(weight) / np.sqrt(mean_square + EPS))


def linear(x: Array, weight: Array, num: Numerics = ORACLE) -> Array:
    """``weight @ x`` accumulated in the model's float type, committed as bf16 (q, k, v, o, lm_head)."""
    return num.bf16(num.array(weight) @ num.array(x))


def rope_tables(position: int, sizes: Sizes) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """The bf16 ``cos`` and ``sin`` rows for ``position``, ``sin``'s first half negated.

    Frequencies ``ROPE_THETA ** (-2i / D)`` for ``i < D / 2``, repeated over both halves, computed
    in float32 as the host builds the tables. Negating the first half of ``sin`` lets the rope
    kernel swap the halves of x without negating any of it.
    """
    half = sizes.D // 2
    exponents = np.arange(0, sizes.D, 2, dtype=np.float32) / np.float32(sizes.D)
    inv_freq = np.float32(1) / np.power(np.float32(ROPE_THETA), exponents)
    angles = np.tile(np.float32(position) * inv_freq, 2)
    sign = np.concatenate([-np.ones(half, np.float32), np.ones(half, np.float32)])
    return to_bf16(np.cos(angles)), to_bf16(sign * np.sin(angles))


def swap_halves(x: Array) -> Array:
    """``x`` with the two halves of its last axis exchanged."""
    half = x.shape[-1] // 2
    return np.concatenate([x[..., half:], x[..., :half]], axis=-1)


def rope(x: Array, cos: npt.ArrayLike, sin: npt.ArrayLike, num: Numerics = ORACLE) -> Array:
    """``x * cos + swap_halves(x) * sin`` per head (both products stay f32; the sum is bf16)."""
    x = num.array(x)
    return num.bf16(x * num.array(cos) + swap_halves(x) * num.array(sin))


@dataclass
class KvCache:
    """One layer's key and value cache, ``[chunks, T, N, D]`` each, bf16 values."""

    k: Array
    v: Array

    @staticmethod
    def empty(sizes: Sizes, chunks: int, num: Numerics = ORACLE) -> KvCache:
        shape = (chunks, sizes.T, sizes.N, sizes.D)
        return KvCache(np.zeros(shape, num.dtype), np.zeros(shape, num.dtype))


def projection(
    x: Array, layer: LayerWeights, position: int, cache: KvCache, sizes: Sizes, num: Numerics = ORACLE
) -> Array:
    """Input norm, q/k/v projections, q/k norms and RoPE; writes k and v at ``position``; returns q ``[N, G, D]``."""
    s = sizes
    x = rmsnorm(x, layer.input_norm, num)
    q = rmsnorm(linear(x, layer.q, num).reshape(s.N, s.G, s.D), layer.q_norm, num)
    k = rmsnorm(linear(x, layer.k, num).reshape(s.N, s.D), layer.k_norm, num)
    v = linear(x, layer.v, num).reshape(s.N, s.D)
    cos, sin = rope_tables(position, s)
    chunk, row = divmod(position, s.T)
    cache.k[chunk, row] = rope(k, cos, sin, num)  # the reference writes this row with a DMA scatter
    cache.v[chunk, row] = v
    return rope(q, cos, sin, num)


@dataclass(frozen=True)
class AttentionState:
    """The running online-softmax state kept in HBM between attention calls.

    ``out`` is not yet divided by ``sum``: the decoder kernel does that (``attention_norm``).
    """

    max: Array  # [N, G]
    sum: Array  # [N, G]
    out: Array  # [N, G, D]


def scores(q: Array, k: Array, num: Numerics = ORACLE) -> Array:
    """``q . k / sqrt(D)`` for every head and token of the chunk, ``[N, G, T]``, committed as bf16."""
    q, k = num.array(q), num.array(k)
    return num.bf16(np.einsum("ngd,tnd->ngt", q, k) / np.sqrt(q.shape[-1]).astype(num.dtype))


def masked_exp(logits: Array, row_max: Array, mask: npt.ArrayLike, num: Numerics = ORACLE) -> Array:
    """``min(exp(logits - max), mask)``: a 0/1 mask zeroes the tokens it hides (every value is <= 1)."""
    return np.minimum(np.exp(logits - row_max[..., None]), num.array(mask))


def weighted_sum(weights: Array, v: Array, num: Numerics = ORACLE) -> Array:
    """``weights @ V`` per head, ``[N, G, D]``; the weights go in as bf16.

    The kernel sums each slice's 16 tokens, commits those partial sums as bf16 and adds them
    across slices, so under ``bf16_boundaries`` the model rounds at the same two places.
    """
    w, v = num.bf16(weights), num.array(v)
    if not num.bf16_boundaries:
        whole: Array = np.einsum("ngt,tnd->ngd", w, v)
        return whole
    n, g, t = w.shape
    group = min(BF16_GROUP, t)
    parts = np.einsum("ngct,ctnd->ngcd", w.reshape(n, g, t // group, group), v.reshape(t // group, group, n, -1))
    return num.bf16(num.bf16(parts).sum(axis=2))


def attention_first(q: Array, k: Array, v: Array, mask: npt.ArrayLike, num: Numerics = ORACLE) -> AttentionState:
    """Attention over the first chunk ``k, v: [T, N, D]``: starts the running max, sum and output."""
    logits = scores(q, k, num)
    row_max = logits.max(axis=-1)  # before the mask, as the kernel takes it
    weights = masked_exp(logits, row_max, mask, num)
    return AttentionState(row_max, weights.sum(axis=-1) + EPS, weighted_sum(weights, v, num))


def online_update(
    state: AttentionState, row_max: Array, chunk_sum: Array, chunk_out: Array, num: Numerics = ORACLE
) -> AttentionState:
    """Fold one chunk's sum and output, taken against the new running max, into the state."""
    alpha = np.exp(state.max - row_max)
    out = num.bf16(num.bf16(state.out * alpha[..., None]) + chunk_out)
    return AttentionState(row_max, state.sum * alpha + chunk_sum, out)


def attention_chunk(
    state: AttentionState, q: Array, k: Array, v: Array, mask: npt.ArrayLike, num: Numerics = ORACLE
) -> AttentionState:
    """Attention over a later chunk, folded into the running state (online softmax)."""
    logits = scores(q, k, num)
    row_max = np.maximum(logits.max(axis=-1), state.max)
    weights = masked_exp(logits, row_max, mask, num)
    return online_update(state, row_max, weights.sum(axis=-1) + EPS, weighted_sum(weights, v, num), num)


def attention_norm(out: Array, total: Array, num: Numerics = ORACLE) -> Array:
    """The attention output divided by its softmax denominator, per head."""
    return num.bf16(num.array(out) / num.array(total)[..., None])


def residual(x: Array, stream: Array, num: Numerics = ORACLE) -> Array:
    """``x + stream``, committed as bf16."""
    return num.bf16(num.array(x) + num.array(stream))


def mlp(x: Array, up: Array, gate: Array, down: Array, num: Numerics = ORACLE) -> Array:
    """``down @ (silu(gate @ x) * (up @ x))``, ``silu(g) = g * sigmoid(g)`` in f32 from the bf16 gate."""
    u, g = linear(x, up, num), linear(x, gate, num)
    silu = g * (0.5 + 0.5 * np.tanh(0.5 * g))  # sigmoid without overflow in exp
    return linear(num.bf16(u * silu), down, num)


def decoder(attn_out: Array, attn_sum: Array, stream: Array, layer: LayerWeights, num: Numerics = ORACLE) -> Array:
    """Attention norm, o projection, residual, post norm, MLP and residual: the new residual stream."""
    x = attention_norm(attn_out, attn_sum, num).reshape(-1)  # [N, G, D] read as [Q]
    stream = residual(linear(x, layer.o, num), stream, num)
    x = mlp(rmsnorm(stream, layer.post_norm, num), layer.up, layer.gate, layer.down, num)
    return residual(x, stream, num)


def causal_mask(kv_chunk: int, position: int, sizes: Sizes, num: Numerics = ORACLE) -> Array:
    """The mask of KV chunk ``kv_chunk`` for the token at ``position``: 1 attends, 0 hides."""
    chunk, row = divmod(position, sizes.T)
    if kv_chunk < chunk:
        return np.ones(sizes.T, num.dtype)
    return (np.arange(sizes.T) <= row).astype(num.dtype)


def attention(q: Array, cache: KvCache, position: int, sizes: Sizes, num: Numerics = ORACLE) -> AttentionState:
    """``attention_first`` over chunk 0, then ``attention_chunk`` over every chunk up to ``position``'s."""
    state = attention_first(q, cache.k[0], cache.v[0], causal_mask(0, position, sizes, num), num)
    for c in range(1, position // sizes.T + 1):
        state = attention_chunk(state, q, cache.k[c], cache.v[c], causal_mask(c, position, sizes, num), num)
    return state


def decoder_step(
    x: Array, layer: LayerWeights, position: int, cache: KvCache, sizes: Sizes, num: Numerics = ORACLE
) -> Array:
    """One layer for the token at ``position``: projection, attention over the cache, decoder."""
    x = num.array(x)
    state = attention(projection(x, layer, position, cache, sizes, num), cache, position, sizes, num)
    return decoder(state.out, state.sum, x, layer, num)


def lm_head(x: Array, final: FinalWeights, sizes: Sizes, num: Numerics = ORACLE) -> Array:
    """The logits over the padded vocabulary ``[Wp]``, one lm_head tile at a time."""
    return np.concatenate([linear(x, final.lm_head_tile(i), num) for i in range(sizes.Wp // sizes.tile)])


def final_layer(x: Array, final: FinalWeights, sizes: Sizes, num: Numerics = ORACLE) -> Array:
    """The final norm, then ``lm_head``: logits ``[Wp]`` (only the first ``W`` are meaningful)."""
    return lm_head(rmsnorm(x, final.norm, num), final, sizes, num)
