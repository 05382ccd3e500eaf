"""The reference transformer end to end through the kernels: one decoder step and the final layer on seeded
random weights at the reference's sizes, each boundary against the numpy float64 model (examples/transformer/
README.md).

The token sits at position 700, row 188 of KV chunk 1, so attention runs over two chunks (chunk 0 whole,
chunk 1 under the causal mask). The kernels' values at each boundary are compared with ``model.ORACLE``'s
over the same network, with the reference's tolerances ``|a - e| <= abs + rel * |e|``: the query and the
key and value rows the projection writes (``PROJECTION``), the attention output divided by its sum
(``ATTENTION``), the new residual stream (``DECODER``) and the logits of the real vocabulary
(``LOGITS``). The final layer runs on the stream the kernels produced.

Run: ``python examples/transformer/run_model.py [--evaluator fused|simulate]`` (both by default). On the
fused evaluator the final layer takes seconds, most of them placing the 159M-cell lm_head weight in HBM (its
tiles are read and written as slices of the tensors' values); the simulator takes about a minute, cutting each
of the 19 tiles from the whole weight laid out.
"""

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt

import tcpdsl as tcp
import model
from decoder import KvChunks, LayerTensors, layer_step
from final_layer import LmWeight, Vector, final_layer
from projection import Hidden

H = tcp.axis("H", 1024)
N = tcp.axis("N", 8)
G = tcp.axis("G", 2)
D = tcp.axis("D", 128)
Wp = tcp.axis("Wp", 155648)

SIZES = model.REFERENCE
POSITION = 700  # chunk 1, row 188
LAYER_SEED, FINAL_SEED, INPUT_SEED = 1, 3, 2
EVALUATORS = ("fused", "simulate")
Array = npt.NDArray[Any]


@dataclass(frozen=True)
class Case:
    """The seeded network and input: the token's residual stream, one layer with a two-chunk KV cache of
    random bf16 keys and values, and the final weights (the lm_head's tiles drawn when asked for)."""

    x: Array
    layer: model.LayerWeights
    cache: model.KvCache
    final: model.FinalWeights

    @staticmethod
    def draw() -> "Case":
        rng = np.random.default_rng(INPUT_SEED)
        x = model.uniform_bf16(rng, (SIZES.H,), 1.0)
        cache = model.KvCache.empty(SIZES, POSITION // SIZES.T + 1)
        cache.k[:] = model.uniform_bf16(rng, cache.k.shape, 1.0)
        cache.v[:] = model.uniform_bf16(rng, cache.v.shape, 1.0)
        return Case(x, model.random_layer(SIZES, LAYER_SEED), cache, model.random_final(SIZES, FINAL_SEED))


@dataclass(frozen=True)
class Boundaries:
    """A decoder step's values at every compared boundary (the model's, or the kernels' read back)."""

    q: Array  # [N, G, D]
    k_row: Array  # [N, D], the token's row of the key cache
    v_row: Array
    attention: Array  # [N, G, D], the output divided by the sum
    stream: Array  # [H]


def expected_step(case: Case) -> Boundaries:
    """The float64 model's boundaries (``model.ORACLE``)."""
    cache = model.KvCache(case.cache.k.copy(), case.cache.v.copy())
    q = model.projection(case.x, case.layer, POSITION, cache, SIZES)
    state = model.attention(q, cache, POSITION, SIZES)
    chunk, row = divmod(POSITION, SIZES.T)
    return Boundaries(q, cache.k[chunk, row], cache.v[chunk, row], state.out / state.sum[..., None],
                      model.decoder(state.out, state.sum, case.x, case.layer))


def kernel_step(case: Case, evaluator: str) -> Boundaries:
    """The decoder step's boundaries through the kernels under ``evaluator``."""
    chunks = KvChunks.of(case.cache)
    with tcp.evaluator(evaluator):
        done = layer_step(Hidden(tcp.Tensor(case.x.astype(np.float32), "H")), LayerTensors.of(case.layer), POSITION,
                          chunks)
        _, total, out = (t.to_tensor() for t in done.state)
        written = chunks.to_model()
        chunk, row = divmod(POSITION, SIZES.T)
        return Boundaries(
            q=done.q.to_tensor().to_numpy("N G D").astype(np.float64),
            k_row=written.k[chunk, row].astype(np.float64),
            v_row=written.v[chunk, row].astype(np.float64),
            attention=out.to_numpy("N G D").astype(np.float64) / total.to_numpy("N G").astype(np.float64)[..., None],
            stream=done.stream.to_tensor().to_numpy("H").astype(np.float64),
        )


def lm_head_weight(final: model.FinalWeights) -> Array:
    """The whole ``[Wp, H]`` lm_head weight in bf16, as HBM holds it."""
    weight = np.empty((SIZES.Wp, SIZES.H), ml_dtypes.bfloat16)
    for i in range(SIZES.Wp // SIZES.tile):
        weight[i * SIZES.tile:(i + 1) * SIZES.tile] = final.lm_head_tile(i)
    return weight


def expected_logits(stream: Array, norm: Array, weight: Array) -> Array:
    """The float64 model's logits of the real vocabulary, the weight's tiles read back rather than drawn again."""
    def tile(i: int) -> Array:
        return weight[i * SIZES.tile:(i + 1) * SIZES.tile].astype(np.float64)

    logits: Array = model.final_layer(stream, model.FinalWeights(norm, tile), SIZES)
    return logits[:SIZES.W]


def kernel_logits(stream: Array, norm: Array, weight: Array, evaluator: str) -> Array:
    """The final layer's logits of the real vocabulary through the kernels under ``evaluator``."""
    with tcp.evaluator(evaluator):
        out = final_layer(Vector(tcp.Tensor(stream.astype(np.float32), "H")),
                          Vector(tcp.Tensor(norm.astype(np.float32), "H")), LmWeight(tcp.Tensor(weight, "Wp H")))
        logits: Array = out.to_tensor().to_numpy("Wp").astype(np.float64)
    return logits[:SIZES.W]


@dataclass(frozen=True)
class Row:
    """One boundary's comparison: the largest error, the tolerance and whether every element is within it."""

    boundary: str
    error: float
    tolerance: model.Tolerance
    passed: bool

    @staticmethod
    def of(boundary: str, got: Array, want: Array, tolerance: model.Tolerance) -> "Row":
        return Row(boundary, float(np.abs(got - want).max()), tolerance, tolerance.holds(got, want))

    def __str__(self) -> str:
        bound = f"{self.tolerance.abs:g} + {self.tolerance.rel:g} |e|"
        return f"{self.boundary:<26}{self.error:>10.5f}  {bound:<16}{'pass' if self.passed else 'FAIL'}"


HEADER = f"{'boundary':<26}{'max error':>10}  {'tolerance':<16}verdict"


def compare_step(got: Boundaries, want: Boundaries) -> list[Row]:
    """Every boundary of the step under the reference's tolerances."""
    return [
        Row.of("projection q", got.q, want.q, model.PROJECTION),
        Row.of("projection k row", got.k_row, want.k_row, model.PROJECTION),
        Row.of("projection v row", got.v_row, want.v_row, model.PROJECTION),
        Row.of("attention (two chunks)", got.attention, want.attention, model.ATTENTION),
        Row.of("decoder stream", got.stream, want.stream, model.DECODER),
    ]


def main(evaluators: Sequence[str] = ("fused",)) -> None:
    """Compare every boundary under each evaluator and print the tables; exits with an error if one fails.

    ``tcpdsl run`` calls it with the fused evaluator only: the simulator's run, about a minute, would double
    what ``make run`` and the test suite spend on the examples, and tests/test_transformer_run_model.py
    already compares the step on both. The command line runs both unless told otherwise."""
    case = Case.draw()
    want = expected_step(case)
    weight = lm_head_weight(case.final)
    want_logits = expected_logits(want.stream, case.final.norm, weight)
    failed: list[str] = []
    for evaluator in evaluators:
        start = time.perf_counter()
        got = kernel_step(case, evaluator)
        rows = compare_step(got, want)
        step_seconds = time.perf_counter() - start
        logits = kernel_logits(got.stream, case.final.norm, weight, evaluator)  # on the kernels' own stream
        rows.append(Row.of("logits (real vocabulary)", logits, want_logits, model.LOGITS))
        seconds = time.perf_counter() - start
        print(f"{evaluator}: decoder step {step_seconds:.1f} s, final layer {seconds - step_seconds:.1f} s")
        print(HEADER)
        for row in rows:
            print(row)
        failed += [f"{evaluator}: {row.boundary}" for row in rows if not row.passed]
    if failed:
        raise SystemExit("outside the reference's tolerance: " + ", ".join(failed))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--evaluator", choices=EVALUATORS, action="append", help="fused, simulate (default both)")
    main(parser.parse_args().evaluator or EVALUATORS)
