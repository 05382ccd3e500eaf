"""The fused fold (docs/runtime.md §3.4) on the vectors of §3.6 and of the reference's runtime unit tests, and its laws."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpdsl.algebra import Mapping, StructKey, held, logical_terms, parse
from tcpdsl.errors import LayoutError
from tcpdsl.evaluate.fold_plan import plan_fold
from tcpdsl.evaluate.folded import lines_up, logical_read
from tcpdsl.evaluate.fused import fold, fold_digits, fold_generic
from tcpdsl.numerics.transfer import to_terms

MKN = {"M": 2, "K": 3, "N": 2}
LHS = np.arange(1, 7).reshape(2, 3)
RHS = np.arange(1, 7).reshape(3, 2)


def p(text: str, sizes: dict[str, int] = MKN) -> Mapping:
    return parse(text, sizes)


@pytest.mark.parametrize("acc", ["f32", "i32"])
def test_contraction_matches_matmul(acc: str) -> None:
    got = fold(LHS, ("M", "K"), p("M, K"), RHS, ("K", "N"), p("K, N"), p("M, K, N"), p("M, N"), acc)
    assert got.dtype == (np.float32 if acc == "f32" else np.int32)
    assert got.tolist() == [22, 28, 49, 64]


def test_reordered_out_matches_serial() -> None:
    got = fold(LHS, ("M", "K"), p("M, K"), RHS, ("K", "N"), p("K, N"), p("M, K, N"), p("N, M"), "i32")
    assert got.tolist() == [22, 49, 28, 64]


def test_padded_contracted_axis_folds_only_live_cells() -> None:
    # Logical K has 3 elements; the layouts keep 2 of them and pad to 4, so K = 2 is never read.
    lhs = np.array([[1, 2, 1000], [3, 4, 1000]])
    rhs = np.array([[1, 2], [3, 4], [1000, 1000]])
    args = (lhs, ("M", "K"), p("M, K = 2 # 4"), rhs, ("K", "N"), p("K = 2 # 4, N"), p("M, K = 2 # 4, N"), p("M, N"))
    assert fold(*args, "i32").tolist() == [7, 10, 15, 22]
    assert fold_generic(*args, "i32").tolist() == [7, 10, 15, 22]


def test_broadcast_operand_matches_serial() -> None:
    sizes = {"M": 3, "K": 4, "N": 5}
    lhs = np.array([2, -1, 3, 5])
    rhs = np.arange(20).reshape(4, 5) - 7
    got = fold(lhs, ("K",), p("K", sizes), rhs, ("K", "N"), p("K, N", sizes), p("M, K, N", sizes), p("M, N", sizes),
               "i32")
    expected = [sum(int(lhs[k]) * int(rhs[k, n]) for k in range(4)) for _ in range(3) for n in range(5)]
    assert got.tolist() == expected


def test_large_split_matches_serial() -> None:
    sizes = {"M": 128, "K": 4, "N": 512}
    lhs = (np.arange(128 * 4) % 5).reshape(128, 4)
    rhs = (np.arange(4 * 512) % 3).reshape(4, 512)
    got = fold(lhs, ("M", "K"), p("M, K", sizes), rhs, ("K", "N"), p("K, N", sizes),
               p("M / 8, N / 64, K, M % 8, N % 64", sizes), p("M, N", sizes), "i32")
    serial = np.zeros((128, 512), dtype=np.int64)
    for k in range(4):
        serial += np.outer(lhs[:, k], rhs[k, :])
    assert np.array_equal(got.reshape(128, 512), serial)


def test_i8_accumulates_wide_then_wraps_once() -> None:
    sizes = {"K": 100}
    ones = np.full(100, 100)
    got = fold(ones, ("K",), p("K", sizes), ones, ("K",), p("K", sizes), p("K", sizes), p("1", sizes), "i32")
    assert got.tolist() == [1_000_000]


def test_i32_products_and_sums_wrap() -> None:
    sizes = {"K": 3}
    big = np.array([1 << 16, 1 << 16, 1 << 15])
    got = fold(big, ("K",), p("K", sizes), big, ("K",), p("K", sizes), p("K", sizes), p("1", sizes), "i32")
    # 2**32 + 2**32 + 2**30 wraps to 2**30.
    assert got.tolist() == [1 << 30]
    one = fold(big[:1], ("K",), p("1", sizes), big[:1], ("K",), p("1", sizes), p("1", sizes), p("1", sizes), "i32")
    assert one.tolist() == [0]


def test_output_digit_in_no_operand_replicates() -> None:
    sizes = {"M": 2, "K": 3, "N": 2, "T": 3}
    got = fold(LHS, ("M", "K"), p("M, K", sizes), RHS, ("K", "N"), p("K, N", sizes), p("M, T, K, N", sizes),
               p("M, T, N", sizes), "f32")
    assert got.reshape(2, 3, 2).tolist() == [[[22, 28]] * 3, [[49, 64]] * 3]


def test_contracted_digit_in_no_operand_multiplies() -> None:
    sizes = {"M": 2, "K": 3, "N": 2, "T": 3}
    got = fold(LHS, ("M", "K"), p("M, K", sizes), RHS, ("K", "N"), p("K, N", sizes), p("M, T, K, N", sizes),
               p("M, N", sizes), "i32")
    assert got.tolist() == [66, 84, 147, 192]


def test_contracted_broadcast_multiplies_and_kept_broadcast_replicates() -> None:
    contracted = fold(LHS, ("M", "K"), p("M, K"), RHS, ("K", "N"), p("K, N"), p("M, 4, K, N"), p("M, N"), "i32")
    assert contracted.tolist() == [88, 112, 196, 256]
    kept = fold(LHS, ("M", "K"), p("M, K"), RHS, ("K", "N"), p("K, N"), p("M, 4, K, N"), p("M, 4, N"), "i32")
    assert kept.reshape(2, 4, 2).tolist() == [[[22, 28]] * 4, [[49, 64]] * 4]


def test_output_padding_is_zero() -> None:
    got = fold(LHS, ("M", "K"), p("M, K"), RHS, ("K", "N"), p("K, N"), p("M, K, N"), p("M # 3, N # 4"), "i32")
    assert got.tolist() == [22, 28, 0, 0, 49, 64, 0, 0, 0, 0, 0, 0]


def test_ragged_layout_takes_the_generic_path() -> None:
    sizes = {"R": 5, "N": 2}
    lhs = np.array([1, 2, 3, 4, 5])
    rhs = np.arange(10).reshape(5, 2)
    ragged = p("R # 8 / 4, R # 8 % 4", sizes)
    args = (lhs, ("R",), ragged, rhs, ("R", "N"), p("R, N", sizes), p("R # 16 / 4, N, R # 16 % 4", sizes),
            p("N", sizes))
    assert fold_digits(*args, "i32") is None
    assert fold(*args, "i32").tolist() == [int(lhs @ rhs[:, 0]), int(lhs @ rhs[:, 1])]


def test_composite_layout_is_refused() -> None:
    sizes = {"A": 2, "B": 3}
    m = p("[A, B] # 10", sizes)
    with pytest.raises(LayoutError, match="has a composite slot") as info:
        fold(np.ones((2, 3)), ("A", "B"), m, np.ones((2, 3)), ("A", "B"), m, m, p("1", sizes), "f32")
    assert (info.value.stage, info.value.rule) == ("evaluate", "CompositeLayout")


def test_unknown_accumulator_is_refused() -> None:
    with pytest.raises(LayoutError, match="accumulator 'f16' is neither f32 nor i32"):
        fold(LHS, ("M", "K"), p("M, K"), RHS, ("K", "N"), p("K, N"), p("M, K, N"), p("M, N"), "f16")


@st.composite
def matmuls(draw: st.DrawFn) -> tuple[dict[str, int], str, str, str, str]:
    m = draw(st.sampled_from([1, 2, 3, 4]))
    k = draw(st.sampled_from([2, 4, 6, 8]))
    n = draw(st.sampled_from([1, 2, 5]))
    split = draw(st.sampled_from([d for d in (1, 2, 4) if k % d == 0]))
    k_digits = ["K"] if split == 1 else [f"K / {split}", f"K % {split}"]
    pieces = draw(st.permutations(["M", "N", *k_digits]))
    lhs_map = draw(st.sampled_from(["M, K", "K, M", "M, K # 10"]))
    out = draw(st.sampled_from(["M, N", "N, M", "N # 6, M"]))
    return {"M": m, "K": k, "N": n}, lhs_map, "K, N", ", ".join(pieces), out


@settings(max_examples=60, deadline=None)
@given(matmuls(), st.integers(0, 2**16))
def test_fold_equals_einsum_and_generic(case: tuple[dict[str, int], str, str, str, str], seed: int) -> None:
    sizes, lhs_text, rhs_text, pre_text, out_text = case
    rng = np.random.default_rng(seed)
    lhs = rng.integers(-50, 50, size=(sizes["M"], sizes["K"]))
    rhs = rng.integers(-50, 50, size=(sizes["K"], sizes["N"]))
    args = (lhs, ("M", "K"), p(lhs_text, sizes), rhs, ("K", "N"), p(rhs_text, sizes), p(pre_text, sizes),
            p(out_text, sizes))
    fused = fold(*args, "i32")
    assert np.array_equal(fused, fold_generic(*args, "i32"))
    out = p(out_text, sizes)
    expected = np.zeros(out.size, dtype=np.int64)
    product = lhs @ rhs
    for i in range(out.size):
        cell = out.cell(i)
        coords = getattr(cell, "coords", None)
        if coords is not None:
            expected[i] = product[coords.get("M", 0), coords.get("N", 0)]
    assert np.array_equal(fused, expected)


@pytest.mark.parametrize(("pre_text", "out_text", "target_text"), [
    ("M, K, N", "M, N", "N # 4, M"),
    ("M, T, K, N", "M, T, N", "T, N, M # 3"),
    ("M, 4, K, N", "M, 4, N", "M, 4, N"),
    ("M, K, N", "M, N", "1 # 2, M, N"),
])
def test_transposing_layout_equals_cell_by_cell_gather(pre_text: str, out_text: str, target_text: str) -> None:
    sizes = {"M": 2, "K": 3, "N": 2, "T": 3}
    folded = fold_digits(LHS, ("M", "K"), p("M, K", sizes), RHS, ("K", "N"), p("K, N", sizes), p(pre_text, sizes),
                         p(out_text, sizes), "i32", laid_out_as=p(target_text, sizes))
    assert folded is not None
    target = p(target_text, sizes)
    laid = folded.layout(target)
    assert laid is not None
    assert np.array_equal(laid, folded.gather(target))
    split = p("1 # 2", sizes)
    assert np.array_equal(folded.gather(target, prefix=split)[target.size:], np.zeros(target.size))
    assert np.array_equal(folded.gather(target, prefix=split)[:target.size], laid)


def test_operand_shape_mismatch_is_a_layout_error() -> None:
    with pytest.raises(LayoutError, match="axis K has 4 elements but mapping M, K declares K = 3"):
        fold(np.ones((2, 4)), ("M", "K"), p("M, K"), RHS, ("K", "N"), p("K, N"), p("M, K, N"), p("M, N"), "f32")
    with pytest.raises(LayoutError, match="cannot carry the 2 axes K N"):
        fold(LHS, ("M", "K"), p("M, K"), np.ones(3), ("K", "N"), p("K, N"), p("M, K, N"), p("M, N"), "f32")


@st.composite
def results(draw: st.DrawFn) -> tuple[dict[str, int], str, str, str, str]:
    """Folds whose output holds whole axes, replicates, broadcasts, pads or holds part of an axis."""
    sizes = {"M": draw(st.sampled_from([1, 2, 3])), "K": draw(st.sampled_from([2, 4, 6])),
             "N": draw(st.sampled_from([2, 4])), "T": draw(st.sampled_from([2, 3]))}
    split = draw(st.sampled_from([d for d in (1, 2) if sizes["K"] % d == 0]))
    k_digits = ["K"] if split == 1 else [f"K / {split}", f"K % {split}"]
    pre = ", ".join(draw(st.permutations(["M", "N", "T", *k_digits])))
    lhs = draw(st.sampled_from(["M, K", "K, M", "M, K # 10", "K"]))
    out = draw(st.sampled_from(["M, N", "N, M", "N # 6, M", "M, T, N", "T, N / 2, M, N % 2", "M, 2, N", "M, N % 2",
                                "N / 2, M", "T # 4, M, N"]))
    return sizes, lhs, "K, N", pre, out


@settings(max_examples=80, deadline=None)
@given(results(), st.sampled_from(["f32", "i32"]), st.integers(0, 2**16))
def test_logical_read_equals_the_physical_buffer_read_back(case: tuple[dict[str, int], str, str, str, str], acc: str,
                                                           seed: int) -> None:
    sizes, lhs_text, rhs_text, pre_text, out_text = case
    rng = np.random.default_rng(seed)
    lhs_axes = ("K",) if lhs_text == "K" else ("M", "K")
    draw = (lambda shape: rng.standard_normal(shape).astype(np.float32)) if acc == "f32" else (
        lambda shape: rng.integers(-50, 50, size=shape))
    lhs, rhs = draw(tuple(sizes[a] for a in lhs_axes)), draw((sizes["K"], sizes["N"]))
    lhs_map, rhs_map, pre, out = p(lhs_text, sizes), p(rhs_text, sizes), p(pre_text, sizes), p(out_text, sizes)
    physical = fold(lhs, lhs_axes, lhs_map, rhs, ("K", "N"), rhs_map, pre, out, acc)
    plan = plan_fold(lhs_axes, lhs.shape, StructKey(lhs_map), ("K", "N"), rhs.shape, StructKey(rhs_map),
                     StructKey(pre), StructKey(out), acc, None)
    assert plan is not None
    terms = logical_terms(out)
    # Every output here is regular and cut on the fold's digit boundaries: the direct read applies.
    assert not held(out).irregular and lines_up(plan.chain, terms)
    folded = plan.run(lhs, rhs)
    got = logical_read(folded.dims, folded.chain, terms).apply(folded.values)
    want = to_terms(physical, out, terms)
    assert got.dtype == want.dtype and got.shape == want.shape
    # Bit for bit: the operand order of the contraction does not depend on the output order.
    assert np.array_equal(got.view(np.int32), want.view(np.int32))
