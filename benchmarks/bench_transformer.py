"""One decoder step of the reference transformer through tcpdsl's kernels on the fused evaluator, against the
numpy model in float32 (``model.FLOAT32``), in one process at the reference's sizes: the kernels called as
written, and replayed (``tcp.replay()``, docs/replay.md).

The layer's weights are laid out once as the kernels' HBM tensors and reused by every step; the KV cache holds
two chunks and the token sits in the second, so attention runs over both (through the attention kernels). The
replay is timed twice: at one cache row, and decoding, a new row each step as a loop over tokens writes them; the
row is the scatter's byte offset, a tensor, so every kernel replays both ways. Prints the median seconds of each over rounds interleaved with the model and the median paired
ratio; the target is a ratio of at most 2 for both replays.

Run: python benchmarks/bench_transformer.py [--rounds N]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
from pathlib import Path

import numpy as np

import tcpdsl as tcp
from timing import interleaved, paired_ratio

FOLDER = Path(__file__).resolve().parent.parent / "examples" / "transformer"
sys.path.insert(0, str(FOLDER))  # the driver imports its sibling kernels by plain name
import decoder  # noqa: E402
import model  # noqa: E402

H = tcp.axis("H", 1024)
TARGET_RATIO = 2.0
POSITION = 700  # chunk 1: attention over two chunks
DECODING = range(POSITION, 2 * model.REFERENCE.T)  # the positions a decoding run walks through, all in chunk 1
TOKENS = 3  # the inputs the steps cycle through: no step gets the token of the step before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)  # a step takes milliseconds: 30 rounds steady the median
    rounds = parser.parse_args().rounds
    sizes = model.REFERENCE
    rng = np.random.default_rng(0)
    # A token of its own for every step, as in decoding: a replay keeps nothing that depends on the token.
    xs = [model.uniform_bf16(rng, (sizes.H,), 1.0) for _ in range(TOKENS)]
    cache = model.KvCache.empty(sizes, 2)
    cache.k[:] = model.uniform_bf16(rng, cache.k.shape, 1.0)
    cache.v[:] = model.uniform_bf16(rng, cache.v.shape, 1.0)
    layer = model.random_layer(sizes, 1)

    f32 = model.FLOAT32
    layer32 = model.random_layer(sizes, 1, f32)
    cache32 = model.KvCache(f32.array(cache.k), f32.array(cache.v))
    tokens32 = itertools.cycle([f32.array(x) for x in xs])
    tensors = decoder.LayerTensors.of(layer)  # laid out once
    chunks = decoder.KvChunks.of(cache)
    streams = itertools.cycle([decoder.Hidden(tcp.Tensor(x.astype(np.float32), "H")) for x in xs])

    def kernels() -> object:
        return decoder.decoder_step(next(streams), tensors, POSITION, chunks).to_tensor().to_numpy("H")

    def replayed() -> object:
        with tcp.replay():
            return kernels()

    positions = itertools.cycle(DECODING)

    def decoding() -> object:
        with tcp.replay():
            return decoder.decoder_step(next(streams), tensors, next(positions), chunks).to_tensor().to_numpy("H")

    def numpy_model() -> object:
        return model.decoder_step(next(tokens32), layer32, POSITION, cache32, sizes, f32)

    model_positions = itertools.cycle(DECODING)

    def numpy_decoding() -> object:
        return model.decoder_step(next(tokens32), layer32, next(model_positions), cache32, sizes, f32)

    # Each way of calling the kernels is paired with the model in rounds of its own: the step as written
    # allocates enough to slow whatever runs after it, which a three-way round would charge to the replay.
    ratios = {}
    with tcp.evaluator("fused"):
        for name, step, base in (("as written", kernels, numpy_model), ("replayed", replayed, numpy_model),
                                 ("decoding", decoding, numpy_decoding)):
            times = interleaved({name: step, "numpy float32": base}, rounds)
            for who, samples in times.items():
                print(f"{who:>14}: median {statistics.median(samples) * 1e3:9.1f} ms over {rounds} rounds")
            ratios[name] = paired_ratio(times, name, "numpy float32")
            print(f"ratio {name} / numpy: {ratios[name]:.2f}x")
    for name in ("replayed", "decoding"):
        verdict = "met" if ratios[name] <= TARGET_RATIO else "NOT met"
        print(f"target: {name} <= {TARGET_RATIO:g}x numpy: {verdict}")


if __name__ == "__main__":
    main()
