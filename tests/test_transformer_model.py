"""The transformer example's numpy model obeys the laws of the network it models, at small sizes.

The ported cases keep the reference's scales, seeds' roles and tolerances: the model's float32
variant that rounds where the kernels commit bf16 must stay within them of the float64 oracle.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import io
import sys
import types
from pathlib import Path

import ml_dtypes
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

FOLDER = Path(__file__).resolve().parent.parent / "examples" / "transformer"


def _load() -> types.ModuleType:
    found = sys.modules.get("examples_transformer_model")
    if found is not None:
        return found
    spec = importlib.util.spec_from_file_location("examples_transformer_model", FOLDER / "model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


M = _load()
S = M.SMALL
laws = settings(max_examples=40, deadline=None)
seeds = st.integers(0, 2**32 - 1)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# -- bf16 rounding -------------------------------------------------------------------------------


def test_to_bf16_rounds_to_nearest_even_and_flushes_subnormals() -> None:
    ulp = 2.0**-7  # bf16 keeps 7 fraction bits
    values = [1.0, 1 + ulp / 2, 1 + 3 * ulp / 2, -1 - 3 * ulp / 2, 1 + ulp / 2 + 2**-20, 1e-40, -1e-40]
    assert M.to_bf16(values).tolist() == [1.0, 1.0, 1 + 2 * ulp, -1 - 2 * ulp, 1 + ulp, 0.0, 0.0]
    special = M.to_bf16([np.inf, -np.inf, np.nan])
    assert special[0] == np.inf and special[1] == -np.inf and np.isnan(special[2])


def test_to_bf16_agrees_with_ml_dtypes_on_normal_values() -> None:
    x = _rng(5).standard_normal(20000) * 10.0 ** _rng(6).integers(-30, 30, 20000)
    expected = x.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(M.to_bf16(x), expected)


# -- rmsnorm ---------------------------------------------------------------------------------------


@laws
@given(seed=seeds, scale=st.floats(0.1, 100.0))
def test_rmsnorm_has_unit_rms_times_its_weight(seed: int, scale: float) -> None:
    x = _rng(seed).uniform(-scale, scale, (3, S.D))
    weight = _rng(seed + 1).uniform(0.5, 2.0, S.D)
    y = M.rmsnorm(x, weight)
    mean_square = np.mean(x * x, axis=-1)
    # unit RMS, short of it only by the epsilon under the root
    rms = np.sqrt(np.mean((y / weight) ** 2, axis=-1))
    np.testing.assert_allclose(rms, np.sqrt(mean_square / (mean_square + M.EPS)), rtol=1e-12)
    assert np.all(np.abs(rms - 1) < 1e-3)


def test_rmsnorm_of_zero_is_zero_thanks_to_epsilon() -> None:
    assert M.rmsnorm(np.zeros(S.H), np.ones(S.H)).tolist() == [0.0] * S.H


# -- rope ------------------------------------------------------------------------------------------


def _exact_tables(position: float) -> tuple[np.ndarray, np.ndarray]:
    half = S.D // 2
    angles = np.tile(position / M.ROPE_THETA ** (2 * np.arange(half) / S.D), 2)
    return np.cos(angles), np.concatenate([-np.ones(half), np.ones(half)]) * np.sin(angles)


@laws
@given(seed=seeds, position=st.integers(0, 32767))
def test_rope_rotates_each_pair_of_halves_and_keeps_norms(seed: int, position: int) -> None:
    x = _rng(seed).standard_normal((S.N, S.G, S.D))
    y = M.rope(x, *_exact_tables(position))
    half = S.D // 2
    pair = np.hypot(x[..., :half], x[..., half:])
    np.testing.assert_allclose(np.hypot(y[..., :half], y[..., half:]), pair, rtol=1e-9, atol=1e-12)
    # bf16 tables are rotations up to their rounding
    rounded = M.rope(x, *M.rope_tables(position, S))
    np.testing.assert_allclose(np.linalg.norm(rounded, axis=-1), np.linalg.norm(x, axis=-1), rtol=2**-7)


@laws
@given(seed=seeds, p=st.integers(0, 4000), shift=st.integers(0, 4000))
def test_rope_scores_depend_only_on_the_distance(seed: int, p: int, shift: int) -> None:
    q, k = _rng(seed).standard_normal((2, S.D))
    near = M.rope(q, *_exact_tables(p + 7)) @ M.rope(k, *_exact_tables(p))
    far = M.rope(q, *_exact_tables(p + shift + 7)) @ M.rope(k, *_exact_tables(p + shift))
    np.testing.assert_allclose(near, far, rtol=1e-7, atol=1e-9)


def test_rope_is_the_usual_rotate_half_form() -> None:
    """Swapping halves against a sin whose first half is negated equals ``x cos + rotate_half(x) sin``."""
    x = _rng(3).standard_normal(S.D)
    cos, signed_sin = M.rope_tables(9, S)
    half = S.D // 2
    np.testing.assert_array_equal(cos[:half], cos[half:])
    np.testing.assert_array_equal(signed_sin[:half], -signed_sin[half:])
    sin = signed_sin[half:]
    np.testing.assert_allclose(sin, np.sin(9 / M.ROPE_THETA ** (2 * np.arange(half) / S.D)), rtol=2**-8)
    rotate_half = np.concatenate([-x[half:], x[:half]])
    np.testing.assert_allclose(M.rope(x, cos, signed_sin), x * cos + rotate_half * np.tile(sin, 2), rtol=1e-12)
    np.testing.assert_array_equal(M.rope(x, *M.rope_tables(0, S)), x)  # position 0: cos 1, sin 0


# -- attention -------------------------------------------------------------------------------------


def _softmax_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray) -> np.ndarray:
    logits = np.einsum("ngd,tnd->ngt", q, k) / np.sqrt(S.D)
    logits = np.where(mask > 0, logits, -np.inf)
    weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return np.einsum("ngt,tnd->ngd", weights / weights.sum(axis=-1, keepdims=True), v)


@laws
@given(seed=seeds, valid=st.integers(1, 2 * S.T))
def test_online_softmax_over_two_chunks_is_softmax_over_both(seed: int, valid: int) -> None:
    rng = _rng(seed)
    q = rng.uniform(-2, 2, (S.N, S.G, S.D))
    k, v = rng.uniform(-2, 2, (2, 2 * S.T, S.N, S.D))
    mask = (np.arange(2 * S.T) < valid).astype(np.float64)
    state = M.attention_first(q, k[: S.T], v[: S.T], mask[: S.T])
    state = M.attention_chunk(state, q, k[S.T :], v[S.T :], mask[S.T :])
    # Like the kernels, the max is taken over hidden tokens too and each chunk's sum gains EPS.
    logits = np.einsum("ngd,tnd->ngt", q, k) / np.sqrt(S.D)
    top = logits.max(axis=-1)
    visible = np.exp(logits - top[..., None]).sum(axis=-1, where=mask > 0)
    alpha = np.exp(logits[..., : S.T].max(axis=-1) - top)
    np.testing.assert_allclose(state.max, top, rtol=1e-15)
    np.testing.assert_allclose(state.sum, visible + M.EPS * (1 + alpha), rtol=1e-12)
    expected = _softmax_attention(q, k, v, mask) * (visible / state.sum)[..., None]
    np.testing.assert_allclose(M.attention_norm(state.out, state.sum), expected, rtol=1e-9, atol=1e-12)


@laws
@given(seed=seeds)
def test_online_softmax_without_a_mask_is_plain_softmax(seed: int) -> None:
    rng = _rng(seed)
    q = rng.uniform(-2, 2, (S.N, S.G, S.D))
    k, v = rng.uniform(-2, 2, (2, 3 * S.T, S.N, S.D))
    mask = np.ones(S.T)
    state = M.attention_first(q, k[: S.T], v[: S.T], mask)
    for c in (1, 2):
        state = M.attention_chunk(state, q, k[c * S.T : (c + 1) * S.T], v[c * S.T : (c + 1) * S.T], mask)
    got = M.attention_norm(state.out, state.sum)
    np.testing.assert_allclose(got, _softmax_attention(q, k, v, np.ones(3 * S.T)), rtol=1e-6, atol=1e-9)


def test_attention_keeps_the_running_max_of_every_chunk() -> None:
    """Reference case: keys 0, 1, 0 over three chunks with q = 1 leave the max at D / sqrt(D)."""
    q = np.ones((S.N, S.G, S.D))
    zero, one = np.zeros((S.T, S.N, S.D)), np.ones((S.T, S.N, S.D))
    mask, v = np.zeros(S.T), np.zeros((S.T, S.N, S.D))
    for num in (M.ORACLE, M.KERNEL):
        state = M.attention_first(q, zero, v, mask, num)
        for k in (one, zero):
            state = M.attention_chunk(state, q, k, v, mask, num)
        assert np.abs(state.max - np.sqrt(S.D)).max() < 0.05


def test_causal_mask_hides_only_later_tokens_of_the_current_chunk() -> None:
    position = S.T + 3
    assert M.causal_mask(0, position, S).tolist() == [1.0] * S.T
    assert M.causal_mask(1, position, S).tolist() == [1.0] * 4 + [0.0] * (S.T - 4)


# -- the reference's scalar checks, ported -----------------------------------------------------------


def _both(run: object) -> tuple[np.ndarray, np.ndarray]:
    assert callable(run)
    return np.asarray(run(M.KERNEL), np.float64), np.asarray(run(M.ORACLE), np.float64)


def test_projection_stays_within_the_reference_tolerance() -> None:
    rng = _rng(0x517E)
    x = M.uniform_bf16(rng, (S.H,), 0.25)
    layer = M.random_layer(S, 11)

    def run(num: object) -> np.ndarray:
        cache = M.KvCache.empty(S, 1, num)
        q = M.projection(x, layer, 0, cache, S, num)
        return np.concatenate([q.reshape(-1), cache.k[0, 0].reshape(-1), cache.v[0, 0].reshape(-1)])

    kernel, oracle = _both(run)
    assert M.PROJECTION.holds(kernel, oracle)
    assert not M.PROJECTION.holds(kernel + 0.2, oracle)


def test_two_chunk_attention_stays_within_the_reference_tolerance() -> None:
    rng = _rng(0x00A77E17)
    q = M.uniform_bf16(rng, (S.N, S.G, S.D), 0.2)
    k0, k1, v0, v1 = (M.uniform_bf16(rng, (S.T, S.N, S.D), 0.2) for _ in range(4))
    mask = np.ones(S.T)

    def run(num: object) -> np.ndarray:
        state = M.attention_chunk(M.attention_first(q, k0, v0, mask, num), q, k1, v1, mask, num)
        return M.to_bf16(state.out / state.sum[..., None])

    kernel, oracle = _both(run)
    assert M.ATTENTION.holds(kernel, oracle)


def test_decoder_stays_within_the_reference_tolerance() -> None:
    rng = _rng(0xDEC0DE)
    x = M.uniform_bf16(rng, (S.N, S.G, S.D), 0.05)
    stream = M.uniform_bf16(rng, (S.H,), 0.05)
    layer = M.random_layer(S, 12)
    ones = np.ones((S.N, S.G))
    kernel, oracle = _both(lambda num: M.decoder(x, ones, stream, layer, num))
    assert M.DECODER.holds(kernel, oracle)
    # the MLP is gated by silu: a hand-written scalar check of the same layer
    after_attention = stream + layer.o @ x.reshape(-1)
    h = M.rmsnorm(after_attention, layer.post_norm)
    gate = layer.gate @ h
    expected = after_attention + layer.down @ (gate / (1 + np.exp(-gate)) * (layer.up @ h))
    np.testing.assert_allclose(oracle, expected, rtol=1e-12, atol=1e-15)


def test_final_layer_matches_the_reference_scalar_case() -> None:
    """Reference case: only column 0 of lm_head is set, to ``(w % 17) * 0.01 - 0.08`` for real rows."""
    rng = _rng(0xF1A1)
    x = M.uniform_bf16(rng, (S.H,), 0.1)
    norm = M.uniform_bf16(rng, (S.H,), 1.0)

    def tile(i: int) -> np.ndarray:
        rows = np.arange(i * S.tile, (i + 1) * S.tile)
        weight = np.zeros((S.tile, S.H))
        weight[:, 0] = np.where(rows < S.W, M.to_bf16((rows % 17) * 0.01 - 0.08), 0.0)
        return weight

    final = M.FinalWeights(norm=norm, lm_head_tile=tile)
    kernel, oracle = _both(lambda num: M.final_layer(x, final, S, num))
    pattern = M.to_bf16((np.arange(S.W) % 17) * 0.01 - 0.08)
    np.testing.assert_allclose(oracle[: S.W], M.rmsnorm(x, norm)[0] * pattern, rtol=1e-12)
    assert M.LOGITS.holds(kernel[: S.W], oracle[: S.W])
    assert oracle.shape == (S.Wp,) and not oracle[S.W :].any()


def test_decoder_step_wires_kernel_boundaries() -> None:
    """Reference case: zero weights leave the residual stream as it was, through every boundary."""
    rng = _rng(0xDEC0DE)
    x, stream = M.uniform_bf16(rng, (2, S.H), 0.2)
    for num in (M.ORACLE, M.KERNEL):
        layer = dataclasses.replace(M.zero_layer(S, num), post_norm=np.zeros(S.H, num.dtype))
        cache = M.KvCache.empty(S, 1, num)
        q = M.projection(x, layer, 0, cache, S, num)
        state = M.attention_first(q, cache.k[0], cache.v[0], np.ones(S.T), num)
        out = M.decoder(state.out, state.sum, stream, layer, num)
        assert M.WIRING.holds(out, stream)
        np.testing.assert_array_equal(out, stream)  # bf16 + 0 is exact
        step = M.decoder_step(x, M.zero_layer(S, num), 2 * S.T - 1, M.KvCache.empty(S, 2, num), S, num)
        np.testing.assert_array_equal(step, x)


# -- one whole step ----------------------------------------------------------------------------------


def _step(num: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = _rng(21)
    cache = M.KvCache.empty(S, 2, num)
    cache.k[:] = M.uniform_bf16(rng, cache.k.shape, 1.0, num)
    cache.v[:] = M.uniform_bf16(rng, cache.v.shape, 1.0, num)
    x = M.uniform_bf16(rng, (S.H,), 0.2, num)
    position = S.T + 5  # two chunks: the second one causal
    y = M.decoder_step(x, M.random_layer(S, 22, num), position, cache, S, num)
    return y, M.final_layer(y, M.random_final(S, 23, num), S, num), cache.k[1, 5], cache.v[1, 5]


def test_float32_and_float64_models_agree() -> None:
    oracle, single = _step(M.ORACLE), _step(M.FLOAT32)
    for o, s in zip(oracle, single, strict=True):
        assert s.dtype == np.float32 and o.dtype == np.float64
        np.testing.assert_allclose(s, o, rtol=1e-4, atol=1e-5)


def test_the_kernel_rounding_stays_within_the_reference_tolerances() -> None:
    oracle, kernel = _step(M.ORACLE), _step(M.KERNEL)
    assert M.DECODER.holds(kernel[0], oracle[0])
    assert M.LOGITS.holds(kernel[1][: S.W], oracle[1][: S.W])
    assert M.PROJECTION.holds(np.concatenate(kernel[2:]), np.concatenate(oracle[2:]))
    assert not np.array_equal(kernel[0], oracle[0])  # it does round


def test_a_step_writes_its_token_into_the_cache_and_attends_to_it() -> None:
    layer = M.random_layer(S, 31)
    x = M.uniform_bf16(_rng(32), (S.H,), 0.2)
    cache = M.KvCache.empty(S, 1, M.ORACLE)
    M.decoder_step(x, layer, 3, cache, S)
    written = np.flatnonzero(np.abs(cache.v[0]).sum(axis=(1, 2)))
    assert written.tolist() == [3]
    # attending to a lone visible token returns its value, whatever the scores
    q = M.projection(x, layer, 0, cache, S)
    state = M.attention(q, cache, 0, S)
    alone = np.repeat(cache.v[0, 0][:, None], S.G, axis=1)
    np.testing.assert_allclose(M.attention_norm(state.out, state.sum), alone, rtol=1e-6)


def test_lm_head_tiles_are_drawn_on_demand_and_repeatable() -> None:
    final = M.random_final(S, 41)
    np.testing.assert_array_equal(final.lm_head_tile(1), final.lm_head_tile(1))
    assert not np.array_equal(final.lm_head_tile(0), final.lm_head_tile(1))
    last = final.lm_head_tile(S.Wp // S.tile - 1)
    assert not last[S.W % S.tile :].any() and last[: S.W % S.tile].all()


def test_tcpdsl_run_skips_the_model_for_having_no_kernel() -> None:
    """The folder's kernels run in test_examples.py; the model module itself is said to hold none."""
    from tcpdsl.cli.run import run_path

    progress = io.StringIO()
    summary = run_path(FOLDER / "model.py", 0, "fused", progress)
    assert summary.failed == 0, progress.getvalue()
    assert "model.py\n    no kernel and no main(): skipped" in progress.getvalue()
