"""One decoder step through the transformer's kernels (projection with the KV-cache write, attention over two
chunks, the decoder entry with the MLP) at the reference's sizes on the fused evaluator, against the float64
model within the reference's decoder tolerance (examples/transformer/decoder.py)."""

from __future__ import annotations

import sys

import numpy as np

import tcpdsl as tcp
from test_transformer_vector import FOLDER, MODEL

H = tcp.axis("H", 1024)  # the example's axes, declared where this module names them

sys.path.insert(0, str(FOLDER))  # the driver imports its sibling kernels by plain name
import decoder as DECODER  # noqa: E402


def test_decoder_step_matches_the_float64_model() -> None:
    sizes, position = MODEL.REFERENCE, 700  # chunk 1, row 188: attention over two chunks
    layer = MODEL.random_layer(sizes, 1)
    rng = np.random.default_rng(2)
    x = MODEL.uniform_bf16(rng, (sizes.H,), 1.0)
    cache = MODEL.KvCache.empty(sizes, 2)
    cache.k[:] = MODEL.uniform_bf16(rng, cache.k.shape, 1.0)
    cache.v[:] = MODEL.uniform_bf16(rng, cache.v.shape, 1.0)
    chunks = DECODER.KvChunks.of(cache)
    expected = MODEL.decoder_step(x, layer, position, cache, sizes)  # writes the token's row into cache
    with tcp.evaluator("fused"):
        out = DECODER.decoder_step(DECODER.Hidden(tcp.Tensor(x.astype(np.float32), "H")),
                                   DECODER.LayerTensors.of(layer), position, chunks)
        got = out.to_tensor().to_numpy("H").astype(np.float64)
        written = chunks.to_model()
    assert MODEL.DECODER.holds(got, expected), MODEL.DECODER.excess(got, expected)
    # The layer's small weights move the stream by little, so the input alone would pass the loose reference
    # check; the change the kernels make must be the model's change, to within the bf16 rounding of the stream itself.
    change, kernel_change = expected - x, got - x
    assert np.abs(change).max() > 0.02
    assert np.abs(kernel_change - change).max() <= 0.25 * np.abs(change).max()
    # The projection kernel wrote the token's key and value where the model did, and nothing else.
    tolerance = MODEL.PROJECTION
    assert tolerance.holds(written.k, cache.k) and tolerance.holds(written.v, cache.v)
    untouched = np.ones(cache.k.shape[:2], bool)
    untouched[divmod(position, sizes.T)] = False
    assert np.array_equal(written.k[untouched], cache.k[untouched])


def test_a_zero_weight_step_leaves_the_stream() -> None:
    """The reference's wiring check: zero matrices and unit norms add nothing, so the step returns its input."""
    sizes, position = MODEL.REFERENCE, 3
    x = MODEL.uniform_bf16(np.random.default_rng(6), (sizes.H,), 1.0)
    chunks = DECODER.KvChunks.of(MODEL.KvCache.empty(sizes, 1))
    with tcp.evaluator("fused"):
        out = DECODER.decoder_step(DECODER.Hidden(tcp.Tensor(x.astype(np.float32), "H")),
                                   DECODER.LayerTensors.of(MODEL.zero_layer(sizes)), position, chunks)
        got = out.to_tensor().to_numpy("H").astype(np.float64)
    assert MODEL.WIRING.holds(got, x), MODEL.WIRING.excess(got, x)
    assert np.array_equal(got, x)  # every add is of zero, and x is already bf16
