"""The runtime's shortcuts give the same bits as the step-by-step definitions they replace."""

from __future__ import annotations

import copy
import dataclasses
import gc
import math
import typing

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.errors import LayoutError
from tcpdsl.algebra import logical_terms, pairs
from tcpdsl.evaluate.fold_plan import plan_matmul
from tcpdsl.evaluate import fused as fused_module
from tcpdsl.evaluate.fused import FusedEvaluator, _chain_plan
from tcpdsl.evaluate import vector_fused
from tcpdsl.evaluate.stream import converted, fused_logical
from tcpdsl.evaluate.vector_elementwise import PASSIVE, WAY_MOVES, elementwise, flushes, typed
from tcpdsl.evaluate.vector_fused import _f32_constant, _folding, _narrowing, _read_vrf, _replicated, _vrf_plan, broadcast_vrf
from tcpdsl.evaluate.vector_fused import run_pass
from tcpdsl.numerics import chain, kept, moves, scalars, vector_ops, windows
from tcpdsl.numerics.windows import box_values
from tcpdsl.numerics.kept import derived, freeze
from tcpdsl.numerics.logical import Tensor, terms_of_mapping
from tcpdsl.numerics.moves import convert, lay_out, relabel, write_window, written
from tcpdsl.numerics.chain import _widened
from tcpdsl.numerics.flow import Flow, Root, Step, Window, Written
from tcpdsl.numerics.scalars import _extremes, cast, has_special_f32
from tcpdsl.numerics.scalars import widen as widen_values
from tcpdsl.numerics.term_arrays import rearrange, term_coordinates
from tcpdsl.numerics.transfer import to_terms
from tcpdsl.numerics import vector_chain
from tcpdsl.numerics.vector_chain import Constant, PassStep, VrfValues
from tcpdsl.verify import vector_compose as vc
from tcpdsl.verify.families import VRF, TensorType
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.vector_pass import STASH, Immediate
from tcpdsl.numerics.vector_ops import (_combine, _converted, _subnormal, binary, f32, fp_unary, identity,
                                        reduce_fold)
from tcpdsl.verify.vector_ops import (BinaryArgMode, ClipBinaryOpF32, ClipBinaryOpI32, FpBinaryOp, FpMulAlu, FpUnaryOp,
                                     FpTernaryOp, FxpBinaryOp, InterSliceReduceOpF32, IntraSliceReduceOpF32, LogicBinaryOpF32, ReduceOp, op_dtype)

F32_REDUCES: list[ReduceOp] = [*IntraSliceReduceOpF32, *InterSliceReduceOpF32]
# Bit patterns that stress the RNGD rules: signed zeros, subnormals, the smallest normals, infinities,
# NaNs with other payloads, and values whose sums or products leave the normal range.
SPECIAL_BITS = [0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x80800000, 0x7F800000, 0xFF800000,
                0x7FC00001, 0xFFFFFFFF, 0x3F800000, 0xBF800000, 0x7F7FFFFF, 0x1F800000, 0x20000000, 0x00FFFFFF]
CELLS = st.one_of(st.sampled_from(SPECIAL_BITS), st.integers(0, 2**32 - 1))


def _step_by_step(op: ReduceOp, x: np.ndarray, axis: int) -> np.ndarray:
    """The fold as the accumulator runs it: one rounded, flushed step per index."""
    values = np.moveaxis(_converted(op, x), axis, 0)
    acc = np.broadcast_to(identity(op), values.shape[1:]).copy()
    for step in values:
        acc = _combine(op, acc, step)
    return acc


@settings(max_examples=300)
@given(st.sampled_from(F32_REDUCES), st.integers(0, 7), st.integers(1, 3), st.lists(CELLS, min_size=24, max_size=24),
       st.integers(0, 1))
def test_an_f32_fold_has_the_bits_of_the_step_by_step_fold(op: ReduceOp, steps: int, width: int, cells: list[int],
                                                           axis: int) -> None:
    data = np.array(cells[: steps * width], dtype=np.uint32).view(np.float32).reshape(steps, width)
    data = np.moveaxis(data, 0, axis)
    got, expected = reduce_fold(op, data, axis), _step_by_step(op, data, axis)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.view(np.uint32).tolist() == expected.view(np.uint32).tolist()


@settings(max_examples=200)
@given(st.sampled_from(F32_REDUCES), st.integers(0, 5), st.lists(CELLS, min_size=8, max_size=8))
def test_a_fold_of_wide_rows_row_by_row_has_the_bits_of_the_step_by_step_fold(op: ReduceOp, steps: int,
                                                                                cells: list[int]) -> None:
    # Rows of 320 cells: folded a row at a time rather than by accumulate; the special cells land in every row.
    raw = np.resize(np.array(cells, dtype=np.uint32), (steps, 320)) ^ np.arange(steps * 320, dtype=np.uint32).reshape(
        steps, 320) % 3
    x = raw.view(np.float32)
    for axis, data in ((0, x), (1, x.T)):
        got, expected = reduce_fold(op, data, axis), _step_by_step(op, data, axis)
        assert got.shape == expected.shape and got.tobytes() == expected.tobytes()


# Addends of a sum: exponents from just below 2**-102 (the smallest an addend may have for every partial sum to be
# normal) up, signed zeros, infinities and NaN; cancelling pairs make partial sums far smaller than their addends.
ADDENDS = st.one_of(st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan, 2.0**-102, -(2.0**-102)]),
                    st.builds(lambda sign, exponent, mantissa: sign * math.ldexp(1 + mantissa / 2**23, exponent),
                              st.sampled_from([1.0, -1.0]), st.integers(-104, 20), st.integers(0, 2**23 - 1)))


@settings(max_examples=150)
@given(st.lists(ADDENDS, min_size=6, max_size=6), st.integers(2, 40), st.sampled_from([(0, 1, 2), (1, 2, 0), (2, 0, 1)]))
def test_a_sum_of_wide_rows_by_numpys_reduce_has_the_bits_of_the_step_by_step_fold(
        addends: list[float], rows: int, order: tuple[int, ...]) -> None:
    # Rows of 2 x 160 cells, each addend and its negation somewhere in every row, in three memory orders (rows
    # innermost in one: numpy would sum them pairwise, in another order, from 9 of them on).
    cells = np.array(addends + [-a for a in addends], dtype=np.float32)
    block = np.resize(cells, (rows, 2, 160)) * np.float32(1.0 + 2.0**-20) ** np.arange(rows, dtype=np.float32)[
        :, None, None]
    data = np.ascontiguousarray(block.transpose(order)).transpose(np.argsort(order))  # the same cells, laid out
    got, expected = reduce_fold(InterSliceReduceOpF32.ADD, data, 0), _step_by_step(InterSliceReduceOpF32.ADD, data, 0)
    assert got.shape == expected.shape and got.tobytes() == expected.tobytes()


def test_a_sum_of_rows_innermost_in_memory_beside_a_repeating_axis_keeps_the_fold_order() -> None:
    # The rows lie closest together in memory, next to an axis of stride 0 (a broadcast): numpy would sum the rows
    # pairwise, and 1 + 15 x 2**-24 in pairs is not 1 + 2**-24 fifteen times.
    rows = np.full((3, 16), 2.0**-24, np.float32)
    rows[:, 0] = 1.0
    for data in (np.broadcast_to(rows.T[:, None, :], (16, 300, 3)), np.broadcast_to(rows[0][:, None], (16, 300))):
        expected = _step_by_step(InterSliceReduceOpF32.ADD, data, 0)
        assert (expected == 1.0).all()
        assert reduce_fold(InterSliceReduceOpF32.ADD, data, 0).tobytes() == expected.tobytes()


def test_a_sum_takes_numpys_reduce_only_without_small_addends(monkeypatch: pytest.MonkeyPatch) -> None:
    # The first two rows sum to 2**-133, subnormal: the step-by-step fold flushes that partial sum to zero, so the
    # sum ends at 2**-126; without the flush it would end at 2**-126 + 2**-133.
    rows = np.full((3, 2, 320), 2.0**-126, dtype=np.float32)
    rows[0] += np.float32(2.0**-133)
    rows[1] = -rows[1]
    expected = _step_by_step(InterSliceReduceOpF32.ADD, rows, 0)
    assert (expected == np.float32(2.0**-126)).all() and (np.add.reduce(rows, axis=0) != expected).all()
    assert reduce_fold(InterSliceReduceOpF32.ADD, rows, 0).tobytes() == expected.tobytes()
    normal = np.resize(np.array([1.5, -1.5, 3.0, 0.0, -0.0, 2.0**-102], dtype=np.float32), (4, 2, 320))
    monkeypatch.setattr(vector_ops, "_partials", None)  # no small addend: not folded row by row
    assert (reduce_fold(InterSliceReduceOpF32.ADD, normal, 0).tobytes()
            == _step_by_step(InterSliceReduceOpF32.ADD, normal, 0).tobytes())


def test_casts_and_pass_ops_quiet_the_flags_of_the_values_their_rules_define_and_restore_the_callers_state() -> None:
    # Overflowing products and sums, NaN and infinities: each would raise under the caller's state if the
    # functions did not set their own around the work.
    data = np.array(SPECIAL_BITS * 2, dtype=np.uint32).view(np.float32).reshape(2, -1)
    big = np.array([1e300, -1e300, np.nan, np.inf])
    with np.errstate(all="raise"):
        for dtype in ("bf16", "f8e4m3", "f8e5m2", "f32", "i8", "i32"):
            cast(big, dtype)
            cast(data, dtype)
        binary(FpBinaryOp.MUL_F(FpMulAlu.MUL0), data, data[::-1])
        binary(FpBinaryOp.SUB_F, data, data[::-1])
        for op in FpUnaryOp:
            fp_unary(op, data)
        for reduce_op in F32_REDUCES:
            reduce_fold(reduce_op, data, 0)
        assert np.geterr()["over"] == "raise" and np.geterr()["invalid"] == "raise"

@pytest.mark.parametrize("op", F32_REDUCES)
def test_a_fold_of_a_clean_stream_read_without_its_scan_has_the_bits_of_the_scanned_fold(
        op: ReduceOp, monkeypatch: pytest.MonkeyPatch) -> None:
    data = f32(np.resize(np.array(SPECIAL_BITS, dtype=np.uint32), (6, 16)).view(np.float32))  # the rules applied
    expected = reduce_fold(op, data, 0)
    monkeypatch.setattr(vector_ops, "read_f32", None)  # said clean: not scanned
    assert reduce_fold(op, data, 0, clean=True).tobytes() == expected.tobytes()

def test_the_float_ops_looked_up_by_id_are_the_ops_of_the_tables() -> None:
    for op, function in vector_ops._FLOAT_BINARY.items():
        assert vector_ops._FLOAT_BY_ID[id(op)] is function and copy.copy(op) is op  # a member is its own copy
    for unary, function in vector_ops._UNARY.items():
        assert vector_ops._UNARY_BY_ID[id(unary)] is function
    data = np.array(SPECIAL_BITS, dtype=np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        for unary in FpUnaryOp:
            assert fp_unary(unary, data).tobytes() == f32(vector_ops._UNARY[unary](f32(data))).tobytes()

@settings(max_examples=200)
@given(st.lists(CELLS, min_size=0, max_size=40))
def test_the_scan_for_subnormals_finds_what_the_exponent_rule_names(cells: list[int]) -> None:
    bits = np.array(cells, dtype=np.uint32)
    expected = bool(np.any(((bits & np.uint32(0x7F800000)) == 0) & ((bits & np.uint32(0x7FFFFFFF)) != 0)))
    assert _subnormal(bits.view(np.float32).reshape(-1, 1)) == expected


def test_a_sum_through_a_subnormal_partial_flushes_it_as_the_accumulator_does() -> None:
    # 1.5 * 2**-126 - 2**-126 is the subnormal 2**-127, which the accumulator flushes to +0: adding
    # 2**-126 then gives 2**-126, where an unflushed sum would give 1.5 * 2**-126.
    tiny = 2.0**-126
    data = np.array([1.5 * tiny, -tiny, tiny], dtype=np.float32)
    assert reduce_fold(IntraSliceReduceOpF32.ADD, data, 0).tolist() == tiny
    assert _step_by_step(IntraSliceReduceOpF32.ADD, data, 0).tolist() == tiny


# -- data derived once from frozen arrays -----------------------------------------------------------

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)
Grid = (m["1"], m["1 # 2"], m["1 # 256"])
Stream = tcp.CollectTensor[tcp.bf16, Grid[0], Grid[1], Grid[2], m["A, B / 16"], m["B % 16"]]
Weights = tcp.HbmTensor[tcp.bf16, Grid[0], m["C, B"]]
RNG = np.random.default_rng(11)


def test_a_typed_tensor_freezes_its_own_copy_and_leaves_the_callers_array_alone() -> None:
    data = RNG.standard_normal((8, 32)).astype(np.float32)
    w = Weights(tcp.Tensor(data, "C B"))
    assert data.flags.writeable
    held = w.to_tensor()
    assert not held.values.flags.writeable and not np.shares_memory(held.values, data)
    with pytest.raises(LayoutError) as info:
        held.assign(tcp.Tensor(np.zeros((8, 32), np.float32), "C B"))
    assert info.value.rule == "ReadOnly"


def _widen(values: np.ndarray) -> np.ndarray:
    return tcp.bf16.widen(values)


def test_frozen_values_are_widened_once_they_are_reused_and_writeable_ones_every_time() -> None:
    frozen = freeze(tcp.bf16.cast(RNG.standard_normal((128, 256))))  # large enough to be worth keeping
    first = derived(frozen, "widen", _widen)  # seen once: nothing kept (data built for one call)
    second = derived(frozen, "widen", _widen)
    assert second is not first and derived(frozen, "widen", _widen) is second
    assert not second.flags.writeable and second.tolist() == first.tolist() == tcp.bf16.widen(frozen).tolist()
    rows = derived(frozen[1:], "widen", _widen)  # another view of an array already reused: its own value, kept
    assert rows.shape == (127, 256) and rows.tolist() == second[1:].tolist() and derived(frozen[1:], "widen", _widen) is rows
    small = freeze(tcp.bf16.cast(RNG.standard_normal((8, 32))))
    for _ in range(2):
        derived(small, "widen", _widen)
    assert derived(small, "widen", _widen) is not derived(small, "widen", _widen)  # cheaper to widen again
    open_ = tcp.bf16.cast(RNG.standard_normal((128, 256)))
    for _ in range(2):
        derived(open_, "widen", _widen)
    assert derived(open_, "widen", _widen) is not derived(open_, "widen", _widen)


def test_what_is_kept_goes_with_its_array() -> None:
    frozen = freeze(tcp.bf16.cast(RNG.standard_normal((128, 256))))
    for _ in range(2):
        derived(frozen, "widen", _widen, elementwise=True)
    owner = id(frozen.base if frozen.base is not None else frozen)
    assert owner in kept._kept and owner in kept._elementwise
    del frozen
    gc.collect()
    assert owner not in kept._kept and owner not in kept._owners.values() and owner not in kept._elementwise


def test_weights_reused_across_calls_give_the_same_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept, "_WORTH_KEEPING", 0)  # keep even these small weights
    dev = tcp.Device()
    data = RNG.standard_normal((8, 32))

    def call(w: typing.Any, x: np.ndarray) -> list[float]:
        trf = (dev.sub.begin(w.to_dm(cluster=Grid[1], slice=Grid[2], element=m["C, B"]).view())
               .fetch(out_time=m["C, B / 16"], out_packet=m["B % 16"])
               .collect(out_time=m["C, B / 16"], out_packet=m["B % 16"])
               .to_trf(lane=m["C"], element=m["B"]))
        out = Stream(dev.main, tcp.Tensor(x, "A B")).contract_outer(trf, out_time=m["A, B / 32"], out_packet=m["B % 32"])
        result: list[float] = out.contract_packet(out_packet=m["1"]).to_tensor().to_numpy("A C").tolist()
        return result

    kept_weights = Weights(tcp.Tensor(data, "C B"))
    x, y = RNG.standard_normal((32, 32)), RNG.standard_normal((32, 32))
    first_x, first_y = call(kept_weights, x), call(kept_weights, y)
    held = kept_weights.to_tensor().values
    assert id(held if held.base is None else held.base) in kept._kept  # the widened weights were kept
    assert call(kept_weights, x) == first_x and call(kept_weights, y) == first_y
    assert call(Weights(tcp.Tensor(data, "C B")), x) == first_x  # fresh weights, nothing kept yet


def _contract(w: typing.Any, x: np.ndarray) -> np.ndarray:
    """``x . w`` over B, ``w`` moved through DM into the TRF: the bits of the f32 result."""
    dev = tcp.Device()
    trf = (dev.sub.begin(w.to_dm(cluster=Grid[1], slice=Grid[2], element=m["C, B"]).view())
           .fetch(out_time=m["C, B / 16"], out_packet=m["B % 16"])
           .collect(out_time=m["C, B / 16"], out_packet=m["B % 16"])
           .to_trf(lane=m["C"], element=m["B"]))
    out = Stream(dev.main, tcp.Tensor(x, "A B")).contract_outer(trf, out_time=m["A, B / 32"], out_packet=m["B % 32"])
    result: np.ndarray = out.contract_packet(out_packet=m["1"]).to_tensor().to_numpy("A C")
    return result.view(np.uint32)


def test_a_tensor_written_a_row_per_step_widens_only_that_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tensor written a row per step and contracted after each write, as a KV cache is: from the second
    write on, what was widened from it before is carried over with the written row widened again, and every
    contraction has the bits of the same values given fresh (never written). The rows hold subnormals and NaNs."""
    monkeypatch.setattr(kept, "_WORTH_KEEPING", 0)  # keep even this small tensor's widened values
    widened: list[tuple[int, ...]] = []

    def counted(values: np.ndarray, dtype: str, canonical: bool) -> np.ndarray:
        widened.append(values.shape)
        return _widened(values, dtype, canonical)

    monkeypatch.setattr(chain, "_widened", counted)
    patterns = RNG.integers(0, 2**32, (C.n + 1, B.n), dtype=np.uint64).astype(np.uint32)
    patterns[:, :4] = [0x00000001, 0x807FFFFF, 0x7FC00001, 0xFF800000]
    values = patterns.view(np.float32)
    w = Weights(tcp.Tensor(values[0:1].repeat(C.n, axis=0), "C B"))
    model = cast(values[0:1].repeat(C.n, axis=0), "bf16")
    shapes: list[list[tuple[int, ...]]] = []
    with tcp.evaluator("fused"):
        for step in range(C.n):
            x = RNG.standard_normal((A.n, B.n))
            del widened[:]
            got = _contract(w, x)
            shapes.append(sorted(widened))
            assert np.array_equal(got, _contract(Weights(tcp.Tensor(model, "C B")), x)), step
            row = Weights(tcp.Tensor(values[1:].reshape(C.n, B.n)[[step] * C.n], "C B"))
            window = w.view_mut().tile(step, index=m["C"], len=1, element=m["C % 1 #{!} 8, B"])
            del widened[:]
            row.view().tile(step, index=m["C"], len=1, element=m["C % 1 # 8, B"]).to_hbm_view(window)
            shapes[-1] += sorted(widened)
            model = model.copy()
            model[step] = cast(values[1 + step], "bf16")
        assert np.array_equal(w.to_tensor().to_numpy("C B").view(np.uint16), model.view(np.uint16))
    # A write is computed when a contraction first reads the tensor after it. The tensor is seen once before
    # the first write, and the first write's values are widened whole and kept; each later write widens its
    # row alone. The stream, fresh on every call, is widened every time.
    whole, row, stream = (C.n, B.n), (1, B.n), (A.n, B.n)
    assert shapes == [[whole, stream]] * 2 + [[row, stream]] * (C.n - 2)


# -- contractions read from the tensors' own arrays -------------------------------------------------

Q = tcp.axis("Q", 64)
K = tcp.axis("K", 32)
Activation = tcp.DmTensor[tcp.bf16, Grid[0], Grid[1], m["Q / 8, 1 # 32"], m["K"]]
QWeights = tcp.HbmTensor[tcp.bf16, Grid[0], m["Q, K"]]


def _replicated_product() -> typing.Any:
    """A vector times a matrix whose stream holds one strided term (``Q / 8``: the activation repeated on
    every group of slices), as the decoder's projections have it."""
    dev = tcp.Device()
    x = Activation(tcp.Tensor(np.tile(RNG.standard_normal(32), (8, 1)), m["Q / 8, K"]))
    w = QWeights(tcp.Tensor(RNG.standard_normal((64, 32)), "Q K"))
    rows = (dev.sub.begin(w.to_dm(cluster=Grid[1], slice=m["Q / 8, 1 # 32"], element=m["Q % 8, K"]).view())
            .fetch(out_time=m["Q % 8, K / 16"], out_packet=m["K % 16"])
            .collect(out_time=m["Q % 8, K / 16"], out_packet=m["K % 16"])
            .to_trf(lane=m["Q % 8"], element=m["K"]))
    return (dev.main.begin(x.view())
            .fetch(out_time=m["K / 16"], out_packet=m["K % 16"])
            .collect(out_time=m["K / 16"], out_packet=m["K % 16"])
            .contract_outer(rows, out_time=m["K / 32"], out_packet=m["K % 32"])
            .contract_packet(out_packet=m["1"]))


def test_a_contraction_read_from_the_tensors_own_arrays_has_the_bits_of_the_coordinate_arrays() -> None:
    result = _replicated_product()
    chain = result.chain
    assert chain.stream.tensor.terms[0].stride == 8  # the stream holds Q / 8 only
    found = _chain_plan(chain, logical=False)
    assert found.held is not None  # the fold reads both tensors' own arrays
    coordinates = dataclasses.replace(
        chain, stream=dataclasses.replace(chain.stream, given=chain.stream.values),
        weight=dataclasses.replace(chain.weight, given=chain.weight.values))
    assert _chain_plan(coordinates, logical=False).held is None
    evaluator = FusedEvaluator()
    assert evaluator.run(chain).tobytes() == evaluator.run(coordinates).tobytes()
    assert evaluator.logical(chain).tobytes() == evaluator.logical(coordinates).tobytes()



def test_a_chain_whose_stream_holds_equal_terms_afresh_finds_its_plan_by_identity(
        monkeypatch: pytest.MonkeyPatch) -> None:
    chain = _replicated_product().chain
    found = _chain_plan(chain, logical=True)
    tensor = chain.stream.tensor
    again = dataclasses.replace(chain, stream=dataclasses.replace(
        chain.stream, tensor=Tensor.of_terms(tensor.values, tuple(list(tensor.terms)), tensor.fixed_terms)))
    assert again.stream.tensor.terms is not tensor.terms
    # A structural key would be built if the identity path missed: it must not be.
    monkeypatch.setattr(fused_module, "StructKey", None)
    assert _chain_plan(again, logical=True) is found
    evaluator = FusedEvaluator()
    assert evaluator.logical(again).tobytes() == evaluator.logical(chain).tobytes()


def test_a_box_found_again_by_its_mappings_identity_reads_what_its_terms_say(monkeypatch: pytest.MonkeyPatch) -> None:
    tensor, tile = m["E, F"], m["E % 4 # 12, F"]
    terms, tile_terms = logical_terms(tensor), logical_terms(tile)
    values = np.arange(96, dtype=np.float32).reshape(12, 8)
    first = box_values(values, terms, tensor, 96, 32, tile, tile_terms)
    assert first is not None and np.array_equal(first, values[4:8])
    monkeypatch.setattr(windows, "StructKey", None)  # a structural key would be built if the identity path missed
    again = box_values(values, tuple(list(terms)), tensor, 96, 32, tile, tuple(list(tile_terms)))
    assert again is not None and again.tobytes() == first.tobytes()
    monkeypatch.undo()
    # The same mappings over the window's terms in the other order: another box, not the one remembered.
    swapped = box_values(values, terms, tensor, 96, 32, tile, tile_terms[::-1])
    assert swapped is not None and np.array_equal(swapped, values[4:8].T)


@pytest.mark.parametrize("op", [FpBinaryOp.ADD_F, FpBinaryOp.DIV_F, ClipBinaryOpF32.MAX])
def test_a_float_ops_constant_read_once_per_value_has_the_bits_of_reading_it_each_time(op: typing.Any) -> None:
    stream = np.array(SPECIAL_BITS, dtype=np.uint32).view(np.float32)
    # 0.0 before -0.0 (equal as numbers), subnormals of f32 and f64, values past f32's range, NaN, integers.
    for value in [0.0, -0.0, 1e-40, -1e-310, 1e39, -np.inf, np.nan, 3, 0, -7, 2.5]:
        kept = _f32_constant(value)
        assert not kept.flags.writeable and _f32_constant(value) is kept
        got = binary(op, stream, kept, operand_clean=True)
        expected = binary(op, stream, np.asarray(value))
        assert got.tobytes() == expected.tobytes(), value


@pytest.mark.parametrize(("after", "reduce"), [("E, Dm", "F"), ("F", "E"), ("E, F", "Dm"), ("F, Dm", "E"), ("Dm", None)])
def test_a_reduce_puts_its_removed_dimensions_first_as_moving_them_does(after: str, reduce: str | None) -> None:
    terms, kept = logical_terms(m["E, F, Dm"]), logical_terms(m[after])
    kept_axes = {t.axis for t in kept}
    removed = [i for i, t in enumerate(terms) if t.axis == reduce or t.axis not in kept_axes]
    values = np.arange(12 * 8 * 4, dtype=np.float32).reshape(12, 8, 4)
    how = _folding(terms, kept, reduce)
    got = values if how.order is None else values.transpose(how.order)
    expected = np.moveaxis(values, removed, list(range(len(removed))))
    assert (how.order is None) == (removed == list(range(len(removed))))
    assert got.shape == expected.shape and np.shares_memory(got, values) and got.tobytes() == expected.tobytes()

# -- reshape as a planned gather ----------------------------------------------------------------

E = tcp.axis("E", 12)
F = tcp.axis("F", 8)
Dm = tcp.axis("Dm", 4)
RELABELS = [
    # (source mapping, terms held, target mapping): padding of every kind, replication, unheld digits
    (m["E # 16, F"], m["E, F"], m["F, E # 16"]),
    (m["E #{0} 16, F"], m["E, F"], m["E / 4 #{0} 4, F, E % 4"]),
    (m["F / 2, E, F % 2 # 4"], m["F, E"], m["E, F # 16"]),
    (m["2, E, F"], m["E, F"], m["E, F, 2"]),
    (m["F, E / 2"], m["F, E / 2"], m["F / 2, E / 2, F % 2"]),
    (m["E # 16, F"], m["E, F"], m["E # 16, F"]),  # read back through its own layout: nothing moves
    (m["Dm, E"], m["E"], m["Dm, E"]),  # every slot of Dm holds the same E: gathered once, broadcast
]


@pytest.mark.parametrize(("src", "held", "dst"), RELABELS)
@pytest.mark.parametrize("dtype", ["bf16", "i8"])
def test_a_relabel_has_the_bits_of_a_lay_out_read_back(src: typing.Any, held: typing.Any, dst: typing.Any,
                                                     dtype: str) -> None:
    terms = terms_of_mapping(held)
    dst_terms = logical_terms(dst)
    values = cast(RNG.integers(-100, 100, tuple(t.count for t in terms)), dtype)
    expected = to_terms(lay_out(values, terms, src, dtype)[0], dst, dst_terms)
    got = relabel(values, terms, src, dst, dst_terms, dtype)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()


@pytest.mark.parametrize(("src", "held", "dst"), [r for r in RELABELS if len(terms_of_mapping(r[1])) > 1])
@pytest.mark.parametrize("dtype", ["bf16", "i8"])
def test_a_relabel_of_repeated_values_reads_their_distinct_copy(src: typing.Any, held: typing.Any, dst: typing.Any,
                                                                dtype: str) -> None:
    terms = terms_of_mapping(held)
    dst_terms = logical_terms(dst)
    shape = tuple(t.count for t in terms)
    row = cast(RNG.integers(-100, 100, (1, *shape[1:])), dtype)
    repeated = np.broadcast_to(row, shape)  # one value along the first term (stride 0)
    expected = to_terms(lay_out(np.ascontiguousarray(repeated), terms, src, dtype)[0], dst, dst_terms)
    got = relabel(repeated, terms, src, dst, dst_terms, dtype)
    assert got.dtype == expected.dtype and got.shape == expected.shape and got.tobytes() == expected.tobytes()
    assert relabel(np.ascontiguousarray(repeated), terms, src, dst, dst_terms, dtype).tobytes() == got.tobytes()


def test_a_relabel_that_replicates_gathers_the_distinct_values_once() -> None:
    terms = terms_of_mapping(m["E"])
    values = cast(RNG.integers(-100, 100, 12), "bf16")
    got = relabel(values, terms, m["Dm, E"], m["Dm, E"], logical_terms(m["Dm, E"]), "bf16")
    assert got.shape == (4, 12) and got.strides[0] == 0 and not got.flags.writeable


@pytest.mark.parametrize(("dst", "read", "shares"), [
    (m["E / 4, E % 4, F"], m["E / 4, E % 4, F"], True),  # the same cells regrouped: a view of the values
    (m["F, E"], m["F, E"], True),  # the same bytes read as [F, E]: a reshape
    (m["F, E"], m["E, F"], False),  # those bytes read as [E, F]: a transpose, copied into its own order
])
def test_a_relabel_reading_every_value_once_is_a_reshape_not_a_gather(dst: typing.Any, read: typing.Any,
                                                                      shares: bool) -> None:
    terms = terms_of_mapping(m["E, F"])
    dst_terms = logical_terms(read)
    values = cast(RNG.integers(-100, 100, (12, 8)), "bf16")
    expected = to_terms(lay_out(values, terms, m["E, F"], "bf16")[0], dst, dst_terms)
    got = relabel(values, terms, m["E, F"], dst, dst_terms, "bf16")
    assert got.shape == expected.shape and got.tobytes() == expected.tobytes()
    assert not isinstance(next(reversed(moves._relabellings.values()))[4], tuple)  # planned without an index
    assert np.shares_memory(got, values) == shares
    assert not got.flags.writeable if shares else got.flags.c_contiguous


def _read_nested(values: np.ndarray, plan: typing.Any) -> np.ndarray:
    """What relabel reads through a nested plan: the values reshaped, then transposed when it says so."""
    nested = values.reshape(plan.shape)
    return nested if plan.order is None else nested.transpose(plan.order)


@settings(max_examples=200)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.randoms())
def test_a_nested_read_is_found_for_every_transpose_and_reads_what_the_index_reads(
        shape: list[int], shuffle: typing.Any) -> None:
    count = math.prod(shape)
    values = np.arange(100, 100 + count)
    order = shuffle.sample(range(len(shape)), len(shape))
    index = np.arange(count).reshape(shape).transpose(order)
    plan = moves._nested(index, index.shape, count)
    assert plan is not None
    assert np.array_equal(_read_nested(values, plan), values[index])
    # Any other index: no plan, or one that reads what the index reads.
    scrambled = np.array(shuffle.sample(range(count), count)).reshape(index.shape)
    other = moves._nested(scrambled, scrambled.shape, count)
    assert other is None or np.array_equal(_read_nested(values, other), values[scrambled])
    # An index that leaves a value out, or reads one twice, is never nested.
    if count > 1:
        assert moves._nested(np.minimum(index, count - 2), index.shape, count) is None


WRITES = [
    # (parent mapping, new mapping, new terms, offset, whether an element changes): a row of a table, a
    # padded row, a row into the parent's padding (no element changes), a window across rows
    (m["E, F"], m["F"], m["F"], 16, True),
    (m["E, F # 16"], m["F # 16"], m["F"], 32, True),
    (m["E # 16, F"], m["F / 2, F % 2"], m["F"], 8 * 13, False),
    (m["E, F"], m["E % 4 # 8"], m["E % 4"], 3, True),
]


@pytest.mark.parametrize(("parent_map", "new_map", "new_held", "offset", "changes"), WRITES)
def test_a_planned_write_has_the_bits_of_the_buffer_written_and_read_back(parent_map: typing.Any, new_map: typing.Any,
                                                                        new_held: typing.Any, offset: int,
                                                                        changes: bool) -> None:
    parent_terms, new_terms = logical_terms(parent_map), terms_of_mapping(new_held)
    parent = cast(RNG.integers(-100, 100, tuple(t.count for t in parent_terms)), "bf16")
    new = cast(RNG.integers(-100, 100, tuple(t.count for t in new_terms)), "bf16")
    element = parent_map.size
    buffer = write_window(lay_out(parent, parent_terms, parent_map, "bf16"), lay_out(new, new_terms, new_map, "bf16"),
                          element, offset, new_map)
    expected = to_terms(buffer[0], parent_map, parent_terms)
    got = written(parent, parent_terms, parent_map, new, new_terms, new_map, element, offset, "bf16")
    assert got.tobytes() == expected.tobytes() and got.shape == expected.shape
    assert (got.tobytes() != parent.tobytes()) == changes


@settings(max_examples=200)
@given(st.lists(CELLS, min_size=1, max_size=40))
def test_the_f32_rules_flush_what_the_bit_rule_says(cells: list[int]) -> None:
    bits = np.array(cells, dtype=np.uint32)
    exponent = bits & np.uint32(0x7F800000)
    nan = (exponent == np.uint32(0x7F800000)) & ((bits & np.uint32(0x007FFFFF)) != 0)
    expected = np.where(nan, np.uint32(0x7FC00000), np.where(exponent == 0, bits & np.uint32(0x80000000), bits))
    source = bits.view(np.float32)
    got = f32(source)
    assert got.view(np.uint32).tolist() == expected.tolist()
    assert not np.shares_memory(got, source) and source.view(np.uint32).tolist() == cells
    # Of any shape, a 0-d array too: the scan reads the cells where they are.
    wide = f32(source.reshape(1, -1, 1))
    assert wide.shape == (1, len(cells), 1) and wide.view(np.uint32).ravel().tolist() == expected.tolist()
    one = f32(np.array(source[0]))
    assert one.shape == () and int(one.view(np.uint32)) == int(expected[0])


@settings(max_examples=200)
@given(st.lists(CELLS, min_size=12, max_size=12))
def test_the_check_for_cells_to_fix_reads_a_strided_view_as_its_copy(cells: list[int]) -> None:
    values = np.array(cells, dtype=np.uint32).view(np.float32).reshape(3, 4)
    for view in (values, values.T, values[::2, 1::2], np.broadcast_to(values[1], (5, 4)), values[2, 3]):
        copy = np.array(view)
        assert has_special_f32(view) == has_special_f32(copy)
        assert has_special_f32(view) or f32(copy).tobytes() == copy.tobytes()  # no cell found: none to fix


@settings(max_examples=200)
@given(st.lists(CELLS, min_size=1, max_size=40), st.booleans())
def test_the_scan_for_cells_to_fix_finds_what_the_exponent_rule_names(cells: list[int], scratch: bool) -> None:
    # Its constants are built once per word width and reused: both widths, with and without a scratch array.
    for bits, field, low in ((np.array(cells, dtype=np.uint32), 0x7F800000, 0x00800000),
                             (np.array(cells, dtype=np.uint32).astype(np.uint16), 0x7F80, 0x0080)):
        exponent = bits & bits.dtype.type(field)
        nonzero = (bits & bits.dtype.type(field | (field - 1))) != 0
        expected = np.flatnonzero(nonzero & ((exponent < low) | (exponent == field))).tolist()
        work = np.empty(len(cells) + 3, dtype=bits.dtype) if scratch else None
        assert _extremes(bits, field, low, work).tolist() == expected
        assert _extremes(bits, field, low).tolist() == expected
        assert _extremes(bits.reshape(1, -1, 1), field, low).tolist() == expected  # flat indices, any shape


ALL_DTYPES = ["f32", "bf16", "f8e4m3", "f8e5m2", "i32", "i9", "i8", "i5", "i4"]


def _stored(cells: list[int], dtype: str) -> np.ndarray:
    """Values stored as ``dtype`` from raw bit patterns: f32 and bf16 as the bits are (subnormals, NaN payloads
    and all), the others through the cast."""
    raw = np.array(cells, dtype=np.uint32)
    if dtype == "f32":
        return raw.view(np.float32)
    if dtype == "bf16":
        return (raw >> 16).astype(np.uint16).view(tcp.bf16.numpy)
    return cast(raw.view(np.float32), dtype)


@settings(max_examples=100)
@given(st.lists(CELLS, min_size=12, max_size=12), st.sampled_from([(12,), (3, 4), (2, 3, 2)]))
def test_a_convert_has_the_bits_of_a_widen_then_a_cast(cells: list[int], shape: tuple[int, ...]) -> None:
    for frm in ALL_DTYPES:
        values = _stored(cells, frm).reshape(shape)
        for held in (values, values.T):  # laid out in C order, and a strided view of it
            before = held.tobytes()
            for to in ALL_DTYPES:
                got = convert(held, frm, to)
                expected = held if frm == to else cast(widen_values(np.ascontiguousarray(held), frm), to)
                assert got.dtype == expected.dtype and got.shape == expected.shape
                assert got.tobytes() == expected.tobytes(), (frm, to)
            assert held.tobytes() == before  # the source is read, never fixed in place


# -- a contraction as a planned matrix product --------------------------------------------------

ROLES = ("batch", "summed", "left", "right")


def _subscripts(digits: list[tuple[str, int]], shuffle: typing.Any
                ) -> tuple[list[int], list[int], list[int], dict[int, int], dict[int, str]]:
    """The einsum subscripts (left, right, kept, each shuffled) of digits given as (role, size), with
    their sizes and roles."""
    roles = {k: role for k, (role, _) in enumerate(digits)}
    sizes = {k: size for k, (_, size) in enumerate(digits)}
    lsubs = [k for k, role in roles.items() if role != "right"]
    rsubs = [k for k, role in roles.items() if role != "left"]
    keep = [k for k, role in roles.items() if role != "summed"]
    for subs in (lsubs, rsubs, keep):
        shuffle.shuffle(subs)
    return lsubs, rsubs, keep, sizes, roles


@settings(max_examples=150)
@given(st.lists(st.tuples(st.sampled_from(ROLES), st.integers(2, 4)), min_size=1, max_size=6), st.randoms())
def test_a_planned_matmul_sums_what_the_einsum_sums(digits: list[tuple[str, int]], shuffle: typing.Any) -> None:
    lsubs, rsubs, keep, sizes, roles = _subscripts(digits, shuffle)
    plan = plan_matmul((tuple(lsubs), tuple(rsubs), tuple(keep)), sizes)
    if "summed" not in roles.values():  # nothing summed: a plain product, left to einsum
        assert plan is None
        return
    assert plan is not None
    # Small integers sum exactly in f32 in any order, so the product and the einsum must agree bit for bit.
    lhs = RNG.integers(-8, 8, [sizes[k] for k in lsubs]).astype(np.float32)
    rhs = RNG.integers(-8, 8, [sizes[k] for k in rsubs]).astype(np.float32)
    expected = np.einsum(lhs, lsubs, rhs, rsubs, keep)
    got = plan.apply(lhs, rhs)
    assert got.shape == expected.shape and got.tobytes() == np.ascontiguousarray(expected).tobytes()


# The MLP's gate (examples/transformer/mlp.py): the stream x[H] replicated over the 128 slices that split the
# weight's L, so the slice digit is a batch digit the stream holds with stride 0.
GATE: typing.Final = ((0, 1), (0, 2, 1), (0, 2))
GATE_SIZES: typing.Final = {0: 128, 1: 1024, 2: 24}


@pytest.mark.parametrize("integers", [True, False], ids=["integers", "floats"])
def test_a_stream_replicated_over_the_batch_meets_the_weights_in_one_product(
        integers: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = plan_matmul(GATE, GATE_SIZES)
    assert plan is not None and plan.batch
    weight = (RNG.integers(-8, 8, (3072, 1024)) if integers else RNG.standard_normal((3072, 1024))).astype(np.float32)
    weight[5] = 0
    x = (RNG.integers(-8, 8, 1024) if integers else RNG.standard_normal(1024)).astype(np.float32)
    lhs = np.broadcast_to(x, (128, 1024))  # [slice, H], the slice a replica
    rhs = weight.reshape(128, 24, 1024)  # [slice, L % 24, H], a view
    calls: list[tuple[int, int, bool]] = []
    matmul = np.matmul

    def watched(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        calls.append((a.ndim, b.ndim, np.shares_memory(a, weight)))
        return matmul(a, b)

    monkeypatch.setattr(np, "matmul", watched)
    got = plan.apply(lhs, rhs)
    monkeypatch.setattr(np, "matmul", matmul)
    assert calls == [(2, 2, True)]  # one product, the weights read in place
    # The bits of W @ x (the model's product), which for integers are also the einsum's.
    expected = (weight @ x).reshape(128, 24)
    assert got.shape == expected.shape and got.tobytes() == expected.tobytes()
    if integers:
        assert got.tobytes() == np.einsum(lhs, [0, 1], rhs, [0, 2, 1], [0, 2]).tobytes()


@settings(max_examples=100)
@given(st.lists(st.tuples(st.sampled_from(ROLES), st.integers(2, 4)), min_size=1, max_size=5), st.randoms())
def test_a_stream_replicated_over_its_batch_digits_sums_what_the_einsum_sums(
        digits: list[tuple[str, int]], shuffle: typing.Any) -> None:
    lsubs, rsubs, keep, sizes, roles = _subscripts([("batch", 3), ("summed", 5), *digits], shuffle)
    plan = plan_matmul((tuple(lsubs), tuple(rsubs), tuple(keep)), sizes)
    assert plan is not None
    # The stream the same along every batch digit (stride 0 there), the weights in shuffled memory orders.
    lhs = RNG.integers(-8, 8, [1 if roles[k] == "batch" else sizes[k] for k in lsubs]).astype(np.float32)
    lhs = np.broadcast_to(lhs, [sizes[k] for k in lsubs])
    rhs = RNG.integers(-8, 8, [sizes[k] for k in rsubs]).astype(np.float32)
    rhs = _laid_out(rhs, shuffle.sample(range(rhs.ndim), rhs.ndim))
    expected = np.einsum(lhs, lsubs, rhs, rsubs, keep)  # small integers: exact in any order
    got = plan.apply(lhs, rhs)
    assert got.shape == expected.shape and got.tobytes() == np.ascontiguousarray(expected).tobytes()


def test_a_stream_held_apart_per_batch_stays_a_batched_product() -> None:
    plan = plan_matmul(GATE, GATE_SIZES)
    assert plan is not None
    lhs = RNG.standard_normal((128, 1024)).astype(np.float32)  # a stream of its own on every slice
    rhs = RNG.standard_normal((128, 24, 1024)).astype(np.float32)
    got = plan.apply(lhs, rhs)
    assert got.tobytes() == np.matmul(rhs, lhs[:, :, None])[..., 0].tobytes()


def _copied_product(plan: typing.Any, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """The product by its definition: each operand transposed and copied whole into ``[batch, kept,
    summed]`` (``[batch, summed, kept]``), one ``matmul``, then split and moved into the kept order."""
    a = np.ascontiguousarray(rhs.transpose(plan.rhs_order))
    b = np.ascontiguousarray(lhs.transpose(plan.lhs_order))
    a = a if plan.rhs_shape is None else a.reshape(plan.rhs_shape)
    b = b if plan.lhs_shape is None else b.reshape(plan.lhs_shape)
    product = np.matmul(a, b)
    product = product if plan.split is None else product.reshape(plan.split)
    return product if plan.order is None else product.transpose(plan.order)


def _laid_out(values: np.ndarray, order: list[int]) -> np.ndarray:
    """``values`` held in memory with its dimensions in ``order`` (outermost first): a transposed view."""
    return np.ascontiguousarray(values.transpose(order)).transpose(np.argsort(order))


@settings(max_examples=150)
@given(st.lists(st.tuples(st.sampled_from(ROLES), st.integers(2, 5)), max_size=3),
       st.lists(st.integers(2, 5), min_size=5, max_size=5), st.randoms())
def test_a_product_of_matrices_over_batch_digits_has_the_bits_of_copied_operands(
        extra: list[tuple[str, int]], base: list[int], shuffle: typing.Any) -> None:
    """Where every matrix reaches BLAS row by row, BLAS's kernel is the copies' and so are the bits. A matrix
    that reaches it transposed goes through BLAS's kernel for that case, which for small matrices may add the
    same products in another order (docs/runtime.md §3.4): each sum is then within that order's rounding."""
    # Two batch digits, a summed one and one kept on each side at least: a product of matrices.
    digits = [*zip(("batch", "batch", "summed", "left", "right"), base), *extra]
    lsubs, rsubs, keep, sizes, _ = _subscripts(digits, shuffle)
    plan = plan_matmul((tuple(lsubs), tuple(rsubs), tuple(keep)), sizes)
    assert plan is not None and plan.batched is not None
    # Random floats, whose sums depend on the order, held in shuffled memory orders (zeros included).
    lhs = RNG.standard_normal([sizes[k] for k in lsubs]).astype(np.float32)
    rhs = RNG.standard_normal([sizes[k] for k in rsubs]).astype(np.float32)
    lhs[RNG.random(lhs.shape) < 0.2] = 0
    lhs = _laid_out(lhs, shuffle.sample(range(lhs.ndim), lhs.ndim))
    rhs = _laid_out(rhs, shuffle.sample(range(rhs.ndim), rhs.ndim))
    expected = _copied_product(plan, lhs, rhs)
    got = plan.apply(lhs, rhs)
    assert got.shape == expected.shape
    if all(m.strides[-1] == m.itemsize for m in _reaching_blas(plan, lhs, rhs)):
        assert got.tobytes() == np.ascontiguousarray(expected).tobytes()
    else:
        summed = math.prod(sizes[k] for k in lsubs if k in rsubs and k not in keep)
        bound = summed * np.finfo(np.float32).eps * _copied_product(plan, np.abs(lhs), np.abs(rhs))
        assert (np.abs(got - expected) <= bound).all()


def _reaching_blas(plan: typing.Any, lhs: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two stacks of matrices ``plan.apply`` hands to ``matmul``: in place where the batched shapes are
    views, else reshaped as the plan's shapes."""
    a, b = rhs.transpose(plan.rhs_order), lhs.transpose(plan.lhs_order)
    if plan.batched.fits(a, b):
        return a.reshape(plan.batched.rhs_shape), b.reshape(plan.batched.lhs_shape)
    return a.reshape(plan.rhs_shape or a.shape), b.reshape(plan.lhs_shape or b.shape)


# The softmax.V product of the transformer's attention (examples/transformer/attention.py): a KV-cache chunk
# [32, 16 summed, 8, 16, 8] against the probabilities [8, 2, 32, 16 summed], over the batch digits 32 and 8.
SOFTMAX_V: typing.Final = ((2, 5, 0, 1), (0, 1, 2, 3, 4), (2, 5, 0, 3, 4))
SOFTMAX_V_SIZES: typing.Final = {0: 32, 1: 16, 2: 8, 3: 16, 4: 8, 5: 2}


@pytest.mark.parametrize(("rhs_order", "lhs_order", "in_place"), [
    ((0, 1, 2, 3, 4), (0, 1, 2, 3), True),  # as the transformer holds them
    ((1, 0, 2, 3, 4), (3, 1, 0, 2), True),  # both transposed: the summed digit outermost
    ((2, 1, 0, 3, 4), (2, 0, 1, 3), True),  # the batch digits swapped
    ((0, 1, 2, 4, 3), (0, 1, 2, 3), False),  # the kept digits swapped: they merge by a copy only
], ids=["as-held", "transposed", "batch-swapped", "kept-swapped"])
def test_the_attention_product_reads_the_cache_in_place_with_the_same_bits(
        rhs_order: tuple[int, ...], lhs_order: tuple[int, ...], in_place: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    plan = plan_matmul(SOFTMAX_V, SOFTMAX_V_SIZES)
    assert plan is not None and plan.batched is not None
    lsubs, rsubs, keep = SOFTMAX_V
    shapes = [SOFTMAX_V_SIZES[k] for k in lsubs], [SOFTMAX_V_SIZES[k] for k in rsubs]
    reads: list[bool] = []
    matmul = np.matmul

    def watched(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        reads.append(np.shares_memory(a, rhs) and np.shares_memory(b, lhs))
        return matmul(a, b)

    for integers in (True, False):
        if integers:  # small integers sum exactly in f32 in any order: the einsum's bits
            lhs = RNG.integers(-8, 8, shapes[0]).astype(np.float32)
            rhs = RNG.integers(-8, 8, shapes[1]).astype(np.float32)
        else:  # rounding in every sum: the bits of the product that copies the operands
            lhs = RNG.standard_normal(shapes[0]).astype(np.float32)
            rhs = RNG.standard_normal(shapes[1]).astype(np.float32)
        rhs[:, 3] = 0
        lhs[:, :, 5] = 0
        rhs, lhs = _laid_out(rhs, list(rhs_order)), _laid_out(lhs, list(lhs_order))
        expected = np.einsum(lhs, list(lsubs), rhs, list(rsubs), list(keep)) if integers \
            else _copied_product(plan, lhs, rhs)
        monkeypatch.setattr(np, "matmul", watched)
        got = plan.apply(lhs, rhs)
        monkeypatch.setattr(np, "matmul", matmul)
        assert got.shape == expected.shape and got.tobytes() == np.ascontiguousarray(expected).tobytes()
    assert reads == [in_place, in_place]


@pytest.mark.parametrize(("subscripts", "why"), [
    (((0, 1), (1, 2), (0, 2)), "a digit of size 1"),
    (((0, 1, 3), (1, 2), (0, 2)), "a digit summed on the left only"),
])
def test_a_contraction_einsum_would_split_is_left_to_einsum(subscripts: typing.Any, why: str) -> None:
    sizes = {0: 3, 1: 4, 2: 1 if why == "a digit of size 1" else 5, 3: 2}
    assert plan_matmul(subscripts, sizes) is None


# -- a VRF operand read by plan ----------------------------------------------------------------

N = tcp.axis("N", 6)
G = tcp.axis("G", 2)
D = tcp.axis("D", 32)
H = tcp.axis("H", 16)
R = tcp.axis("R", 3)
VRF_READS = [
    # (VRF terms, stream terms): a replicated stream, a transposed VRF, an axis the stream lacks, a VRF digit
    # the stream splits, and a stream digit the VRF spans only part of
    (m["H"], m["Dm, H"]),
    (m["D, N"], m["N, G, D"]),
    (m["N, R"], m["N, G"]),
    (m["D"], m["D / 16, N, D % 16"]),
    (m["D / 4"], m["D"]),
    (m["D % 8, N / 2"], m["N, D"]),
]


@pytest.mark.parametrize(("vrf_map", "stream_map"), VRF_READS)
def test_a_planned_vrf_read_has_the_values_of_the_coordinate_read(vrf_map: typing.Any, stream_map: typing.Any) -> None:
    vrf_terms, terms = terms_of_mapping(vrf_map), terms_of_mapping(stream_map)
    vrf = RNG.standard_normal([t.count for t in vrf_terms]).astype(np.float32)
    stream_shape = tuple(t.count for t in terms)
    expected = broadcast_vrf(vrf, vrf_terms, term_coordinates(terms))
    got = _read_vrf(vrf, _vrf_plan(vrf_terms, terms))
    assert np.broadcast_to(got, stream_shape).tobytes() == np.broadcast_to(expected, stream_shape).tobytes()



def test_vrf_reads_over_one_stream_found_by_its_identity_answer_for_the_vrf_terms_they_are_given() -> None:
    terms = terms_of_mapping(m["N, D"])
    stream_shape = tuple(t.count for t in terms)
    for _ in range(2):  # the second round finds each plan remembered
        for vrf_map in (m["D % 8, N / 2"], m["D"], m["N"], m["D / 4"]):
            vrf_terms = tuple(list(terms_of_mapping(vrf_map)))  # a tuple of its own, as a VRF loaded afresh holds
            vrf = RNG.standard_normal([t.count for t in vrf_terms]).astype(np.float32)
            expected = broadcast_vrf(vrf, vrf_terms, term_coordinates(terms))
            got = _read_vrf(vrf, _vrf_plan(vrf_terms, terms))
            assert np.broadcast_to(got, stream_shape).tobytes() == np.broadcast_to(expected, stream_shape).tobytes()

# -- a vector pass over a replicated stream -----------------------------------------------------

@pytest.mark.parametrize("vrf_axes", ["H", "R H"])
def test_a_pass_over_a_replicated_stream_computes_each_distinct_value_once(vrf_axes: str) -> None:
    from test_vector_evaluate import Pass, final, tag

    sizes = {"R": 4, "H": 64}
    row = RNG.standard_normal(64).astype(np.float32)
    x = np.broadcast_to(row, (4, 64))
    p = tag(Pass(x, "R H", ["1", "1", "R # 64", "H / 8", "H % 8"], sizes))
    p.call(Stage.VECTOR_NARROW_SPLIT, vc.vector_narrow_split, out_time=p.m("H / 4"), out_packet=p.m("H % 4"))
    p.call(Stage.VECTOR_STASH, vc.vector_stash)
    mul = FpBinaryOp.MUL_F(FpMulAlu.MUL0)
    p.call(Stage.VECTOR_FP_BINARY, vc.vector_fp_binary, op=mul, operand=STASH, record={"op": mul, "operands": (STASH,)})
    weights = RNG.standard_normal((4, 64) if vrf_axes == "R H" else 64).astype(np.float32)
    vrf = VrfValues(lambda name: weights, logical_terms(p.m(vrf_axes.replace(" ", ", "))))
    operand = TensorType(VRF, ("f32",), (p.m("1"), p.m("1"), p.m("R # 64"), p.m("H")))
    p.call(Stage.VECTOR_FP_BINARY, vc.vector_fp_binary, op=FpBinaryOp.ADD_F, operand=operand,
           record={"op": FpBinaryOp.ADD_F, "operands": (vrf,)})
    add = IntraSliceReduceOpF32.ADD
    p.call(Stage.VECTOR_INTRA_SLICE_REDUCE, vc.vector_intra_slice_reduce, op=add, reduce="H",
           out_time=p.m("1"), out_packet=p.m("1 # 4"), record={"op": add, "reduce": "H"})
    p.call(Stage.VECTOR_WIDEN_PAD, vc.vector_widen_pad, out_packet=p.m("1 # 8"))
    chain = final(p).chain
    replicated = dataclasses.replace(chain, source=dataclasses.replace(chain.source, logical=lambda name: x))
    whole = dataclasses.replace(chain, source=dataclasses.replace(chain.source, logical=lambda name: x.copy()))
    # The term is computed once only where no VRF operand reads along it.
    assert {t.axis for t in _replicated(replicated, x)} == ({"R"} if vrf_axes == "H" else set())
    got, expected = run_pass(replicated, "fused"), run_pass(whole, "fused")
    assert got.shape == expected.shape == (4,) and got.tobytes() == expected.tobytes()


def test_a_replicated_operand_widens_its_distinct_values_once() -> None:
    row = cast(np.array([0.0, -0.0, 1e-40, 3.5, np.nan, -np.inf, 1e38, -2.0**-130]), "bf16")
    replicated = np.broadcast_to(row, (5, row.size))
    got = _widened(replicated, "bf16", False)
    expected = widen_values(np.ascontiguousarray(replicated), "bf16")
    assert got.strides[0] == 0 and got.tobytes() == expected.tobytes()


FLOAT_OPS = [(FpBinaryOp.ADD_F, np.add), (FpBinaryOp.SUB_F, np.subtract), (FpBinaryOp.DIV_F, np.divide),
             (FpBinaryOp.MUL_F(FpMulAlu.MUL0), np.multiply)]


@settings(max_examples=200)
@given(st.sampled_from(FLOAT_OPS), st.lists(CELLS, min_size=16, max_size=16), st.booleans())
def test_an_f32_op_reading_its_inputs_in_place_has_the_bits_of_the_copies(op: typing.Any, cells: list[int],
                                                                          clean: bool) -> None:
    stage_op, function = op
    raw = np.array(cells, dtype=np.uint32).view(np.float32).reshape(2, 8)
    stream, operand = (f32(raw[0]), f32(raw[1])) if clean else (raw[0].copy(), raw[1].copy())
    before = (stream.tobytes(), operand.tobytes())
    with np.errstate(all="ignore"):
        expected = f32(function(f32(stream), f32(operand)))
    got = binary(stage_op, stream, operand)
    assert got.view(np.uint32).tolist() == expected.view(np.uint32).tolist()
    assert (stream.tobytes(), operand.tobytes()) == before  # the inputs are read, never fixed in place
    assert not np.shares_memory(got, stream) and not np.shares_memory(got, operand)


BINARY_OPS = [FpBinaryOp.ADD_F, FpBinaryOp.DIV_F, ClipBinaryOpF32.MAX, ClipBinaryOpF32.ABS_MIN, LogicBinaryOpF32.BIT_XOR,
              FxpBinaryOp.SUB_FXP_SAT, FxpBinaryOp.LEFT_SHIFT, ClipBinaryOpI32.ABS_MAX]


@settings(max_examples=200)
@given(st.sampled_from(BINARY_OPS), st.sampled_from(list(BinaryArgMode)), st.sampled_from([(3, 1), (1, 4), (4,), ()]),
       st.lists(CELLS, min_size=24, max_size=24))
def test_a_binary_op_broadcasting_its_pair_itself_has_the_bits_of_the_pair_broadcast_first(
        op: typing.Any, mode: BinaryArgMode, operand_shape: tuple[int, ...], cells: list[int]) -> None:
    raw = np.array(cells, dtype=np.uint32)
    as_type = (lambda bits: bits.view(np.int32)) if op_dtype(op) == "i32" else (lambda bits: bits.view(np.float32))
    stream = as_type(raw[:12]).reshape(3, 4)
    operand = as_type(raw[12:12 + math.prod(operand_shape)]).reshape(operand_shape)
    got = binary(op, stream, operand, mode)
    picks = dict(zip("so", (np.ascontiguousarray(x) for x in np.broadcast_arrays(stream, operand))))
    expected = binary(op, picks[mode.value[0]], picks[mode.value[1]])  # the pair picked, both of one shape
    assert got.shape == stream.shape and got.dtype == expected.dtype and got.tobytes() == expected.tobytes()


PASS_STEPS = [  # (stage, op): element-wise steps that apply the f32 rules to their result, and one that does not
    (Stage.VECTOR_FP_BINARY, FpBinaryOp.ADD_F), (Stage.VECTOR_FP_BINARY, FpBinaryOp.MUL_F(FpMulAlu.MUL0)),
    (Stage.VECTOR_FP_DIV, None), (Stage.VECTOR_CLIP, ClipBinaryOpF32.MIN), (Stage.VECTOR_CLIP, ClipBinaryOpF32.ABS_MAX),
    (Stage.VECTOR_FP_UNARY, FpUnaryOp.EXP), (Stage.VECTOR_FP_UNARY, FpUnaryOp.SQRT),
    (Stage.VECTOR_LOGIC, LogicBinaryOpF32.BIT_XOR),
]


@settings(max_examples=300)
@given(st.sampled_from(PASS_STEPS), st.sampled_from(list(BinaryArgMode)), st.lists(CELLS, min_size=16, max_size=16))
def test_a_pass_step_reads_a_clean_stream_unscanned_with_the_bits_of_the_scanned_read(
        kind: typing.Any, mode: BinaryArgMode, cells: list[int]) -> None:
    stage, op = kind
    raw = np.array(cells, dtype=np.uint32).view(np.float32).reshape(2, 8)
    stream, operand = f32(raw[0]), raw[1].copy()  # the stream as a flushing step leaves it; the operand raw
    step = PassStep(stage, (), typing.cast(typing.Any, None), op=op, mode=mode)
    got = elementwise(step, stream, [operand], clean=True)
    assert got.tobytes() == elementwise(step, stream, [operand]).tobytes()
    if flushes(step):  # what the next step will read unscanned holds nothing the rules change
        assert got.dtype == np.float32 and f32(got).tobytes() == got.tobytes()


def test_a_pass_that_computes_nothing_returns_an_array_of_its_own() -> None:
    from test_vector_evaluate import Pass, final, tag

    x = RNG.standard_normal(512).astype(np.float32)
    p = tag(Pass(x, "A", ["1", "1", "A / 2", "1", "A % 2 # 8"], {"A": 512}))
    p.call(Stage.VECTOR_NARROW_TRIM, vc.vector_narrow_trim, out_packet=p.m("A % 2 # 4"))
    p.call(Stage.VECTOR_WIDEN_PAD, vc.vector_widen_pad, out_packet=p.m("A % 2 # 8"))
    chain = final(p).chain
    source = chain.source.logical("fused")
    held = dataclasses.replace(chain, source=dataclasses.replace(chain.source, logical=lambda name: source))
    got = run_pass(held, "fused")
    assert got.tobytes() == np.ascontiguousarray(source).tobytes()
    assert got.flags.writeable and not np.shares_memory(got, source)



def test_a_narrowing_found_by_its_terms_identity_answers_for_the_replicated_set_it_is_given() -> None:
    terms = logical_terms(m["Dm, E, F"])
    values = np.arange(4 * 12 * 8).reshape(4, 12, 8)
    for single in [frozenset(terms[:1]), frozenset(terms[1:]), frozenset(terms[:1]), frozenset({terms[2]})]:
        narrowed, index = _narrowing(terms, frozenset(single))  # a set built afresh, as each call builds it
        assert narrowed == tuple(dataclasses.replace(t, count=1) if t in single else t for t in terms)
        assert values[index].shape == tuple(t.count for t in narrowed)


def test_regroupings_of_one_stream_found_by_identity_answer_for_the_target_they_are_given() -> None:
    source = logical_terms(m["E, F"])
    values = np.arange(96).reshape(12, 8)
    targets = [logical_terms(m[text]) for text in ("F, E", "E / 4, F, E % 4", "F / 2, E, F % 2")]
    for _ in range(2):  # the second round finds each regrouping remembered
        for target in targets:
            got = rearrange(values, source, target)
            coords = term_coordinates(target)  # the definition: each target element reads its coordinates
            expected = values[tuple((coords[t.axis] // t.stride) % t.count for t in source)]
            assert got.shape == expected.shape and np.array_equal(got, expected)

def _flows_of(cells: np.ndarray) -> tuple[Flow, Flow]:
    """Two flows over the f32 ``cells`` (one row of Q): the cells as given, and the cells cast to bf16 and
    widened back by its steps (which the flow marks as converted)."""
    mapping = m["Q"]
    terms = logical_terms(mapping)
    given = Flow(Root(mapping, "f32", terms, (), lambda name: cells))
    return given, given.then(Step("commit", mapping, "bf16")).then(Step("fetch", mapping, "f32"))


def test_values_a_flow_converted_are_known_by_their_memory_and_nothing_else_is() -> None:
    given, cast_back = _flows_of(np.resize(np.array(SPECIAL_BITS, dtype=np.uint32), Q.n).view(np.float32))
    values = fused_logical(cast_back, "fused")
    assert converted(values, cast_back, "fused") and converted(values[::2], cast_back, "fused")
    assert not converted(values.copy(), cast_back, "fused")  # other memory: nothing known of it
    assert not converted(values.view(np.uint32), cast_back, "fused")  # another dtype
    assert not converted(values, given, "fused") and not converted(values, cast_back, "simulate")
    assert not converted(values, object(), "fused")
    assert not converted(fused_logical(given, "fused"), given, "fused")  # no conversion: nothing known


@pytest.mark.parametrize("cast_back", [True, False])
def test_a_pass_reads_a_converted_source_without_its_scan_with_the_bits_of_the_scan(
        cast_back: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_vector_evaluate import Pass, final, tag

    # Subnormals among the cells: multiplied by 2**100 they would become normal numbers unless flushed first.
    cells = np.resize(np.array(SPECIAL_BITS, dtype=np.uint32), Q.n).view(np.float32)
    flow = _flows_of(cells)[1 if cast_back else 0]
    values = fused_logical(flow, "fused")
    p = tag(Pass(values, "Q", ["1", "1", "Q", "1", "1 # 8"], {"Q": Q.n}))
    p.call(Stage.VECTOR_NARROW_TRIM, vc.vector_narrow_trim, out_packet=p.m("1 # 4"))
    mul = FpBinaryOp.MUL_F(FpMulAlu.MUL0)
    p.call(Stage.VECTOR_FP_BINARY, vc.vector_fp_binary, op=mul, operand=Immediate("f32"),
           record={"op": mul, "operands": (Constant(2.0**100),)})
    p.call(Stage.VECTOR_WIDEN_PAD, vc.vector_widen_pad, out_packet=p.m("1 # 8"))
    chain = final(p).chain
    scanned = dataclasses.replace(chain, source=dataclasses.replace(chain.source, logical=lambda name: values))
    known = dataclasses.replace(scanned, source=dataclasses.replace(scanned.source, origin=flow))
    expected = run_pass(scanned, "fused")
    if cast_back:
        monkeypatch.setattr(vector_fused, "typed_read", None)  # the source is read as it is
    assert run_pass(known, "fused").tobytes() == expected.tobytes()

@pytest.mark.parametrize("relu", [False, True])
def test_a_replicated_stream_is_cast_once_per_distinct_value(relu: bool) -> None:
    mapping = m["Dm, E"]
    terms = logical_terms(mapping)
    row = np.array([0.0, -0.0, 1e-40, 3.25, np.nan, -np.inf, 1e38, -2.0**-130, 1.0 + 2.0**-9, -7.0, 2.0, 5e-39],
                   dtype=np.float32)
    replicated = np.broadcast_to(row, (4, 12))

    def flow(values: np.ndarray) -> Flow:
        root = Root(mapping, "f32", terms, (), lambda name: values)
        return Flow(root).then(Step("commit", mapping, "bf16", relu=relu)).then(Step("fetch", mapping, "f32"))

    got = fused_logical(flow(replicated), "fused")
    expected = fused_logical(flow(np.ascontiguousarray(replicated)), "fused")
    assert got.strides[0] == 0 and got.tobytes() == expected.tobytes()



@pytest.mark.parametrize("cast_first", [True, False])
def test_a_whole_view_of_a_cast_stream_widens_it_as_the_scan_would(cast_first: bool,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    mapping = m["Dm, E"]
    terms = logical_terms(mapping)
    cells = np.resize(np.array(SPECIAL_BITS, dtype=np.uint32), 48).reshape(4, 12)
    if cast_first:  # f32 data cast to bf16 by a step of the parent: what the view reads left no pattern to fix
        data, dtype = cells.view(np.float32), "f32"
    else:  # bf16 patterns given as they are, subnormals and NaN payloads included: the view must fix them
        data, dtype = (cells >> 16).astype(np.uint16).view(tcp.bf16.numpy), "bf16"
    parent = Flow(Root(mapping, dtype, terms, (), lambda name: data))
    if cast_first:
        parent = parent.then(Step("commit", mapping, "bf16"))
    view = Flow(Root(mapping, "bf16", terms, (), lambda name: fused_logical(parent, name), source=parent))
    view = view.then(Step("fetch", mapping, "f32"))
    expected = widen_values(fused_logical(parent, "fused"), "bf16")  # with the scan, as defined
    if cast_first:
        monkeypatch.setattr(scalars, "_widen_bf16", None)  # the scan is skipped
    got = fused_logical(view, "fused")
    assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()

@pytest.mark.parametrize("kind", ["window", "written"])
@pytest.mark.parametrize("cast_first", [True, False])
def test_a_window_of_a_cast_stream_and_a_write_of_one_widen_as_the_scan_would(
        kind: str, cast_first: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    mapping = m["Dm, E"]
    terms = logical_terms(mapping)
    cells = np.resize(np.array(SPECIAL_BITS, dtype=np.uint32), 48).reshape(4, 12)

    def stream(bits: np.ndarray) -> Flow:
        if cast_first:  # f32 data cast to bf16 by a step: what is read of it left no pattern to fix
            data = bits.view(np.float32)
            return Flow(Root(mapping, "f32", terms, (), lambda name: data)).then(Step("commit", mapping, "bf16"))
        patterns = (bits >> 16).astype(np.uint16).view(tcp.bf16.numpy)  # as given: subnormals, NaN payloads
        return Flow(Root(mapping, "bf16", terms, (), lambda name: patterns))

    parent, written = stream(cells), stream(cells[:, ::-1].copy())

    def values(name: str) -> np.ndarray:  # cells copied from the flows, as a window read or a write gives them
        out = np.array(fused_logical(parent, name))
        if kind == "written":
            out[1:3] = fused_logical(written, name)[1:3]
        return out[::-1] if kind == "window" else out  # a window: the cells moved, here to other rows

    source = Window(parent, 12, 2) if kind == "window" else Written(parent, written, 12, 0)
    root = Root(mapping, "bf16", terms, (), values, source=source)
    view = Flow(root).then(Step("fetch", mapping, "f32"))
    expected = widen_values(values("fused"), "bf16")  # with the scan, as defined
    if cast_first:
        monkeypatch.setattr(scalars, "_widen_bf16", None)  # the scan is skipped
    got = fused_logical(view, "fused")
    assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()


def test_a_replicated_stream_no_step_changes_is_the_roots_own_array() -> None:
    mapping = m["Dm, E"]
    replicated = np.broadcast_to(np.arange(12, dtype=np.float32), (4, 12))
    root = Root(mapping, "f32", logical_terms(mapping), (), lambda name: replicated)
    flow = Flow(root).then(Step("commit", mapping, "f32")).then(Step("fetch", mapping, "f32"))
    assert fused_logical(flow, "fused") is replicated  # no broadcast rebuilt over the same cells

@settings(max_examples=100)
@given(st.lists(st.tuples(st.sampled_from(["f32", "bf16", "i32"]), st.booleans()), min_size=1, max_size=6),
       st.lists(CELLS, min_size=12, max_size=12))
def test_a_flow_casts_only_where_the_dtype_changes_with_the_bits_of_a_cast_at_every_step(
        steps: list[tuple[str, bool]], cells: list[int]) -> None:
    mapping = m["Dm, E"]
    terms = logical_terms(mapping)
    values = np.array(cells, dtype=np.uint32).view(np.float32).reshape(1, 12)
    flow = Flow(Root(mapping, "f32", terms, (), lambda name: values))
    expected, dtype = values, "f32"
    for to, relu in steps:
        flow = flow.then(Step("commit", mapping, to, relu=relu))
        expected = convert(np.maximum(expected, 0) if relu else expected, dtype, to)  # every step, as defined
        dtype = to
    got = fused_logical(flow, "fused")
    assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()


def test_a_steps_layouts_remembered_by_identity_pair_as_their_structure_does(monkeypatch: pytest.MonkeyPatch) -> None:
    # A small table, so it is cleared along the way; each tuple is dropped after use, so later ones may
    # take its id: an entry holding its tuple keeps that from answering for another.
    monkeypatch.setattr(vector_chain, "_PAIRED_BY_IDENTITY", 3)
    texts = ["A", "A / 4", "B, A % 8", "C", "A % 4, C", "B / 2"]
    for round_ in range(40):
        layouts = (m["1"], m["1"], m[texts[round_ % len(texts)]], m["1"], m[texts[(round_ * 5 + 1) % len(texts)]])
        expected = pairs(list(layouts))
        step = PassStep(Stage.VECTOR_INIT, layouts, typing.cast(typing.Any, None))
        assert step.mapping == expected and step.terms == logical_terms(expected)
        again = PassStep(Stage.VECTOR_INIT, layouts, typing.cast(typing.Any, None))
        assert again.mapping is step.mapping and again.terms is step.terms
    assert len(vector_chain._paired_by_identity) <= 3


WINDOW_TEXTS = ["A", "A / 4, A % 4", "B, A", "A, B", "(A / 8, A % 8), B", "A % 8", "A / 4", "B / 2, A"]


@settings(max_examples=100)
@given(st.sampled_from(WINDOW_TEXTS), st.sampled_from(WINDOW_TEXTS))
def test_mappings_compare_by_identity_and_structure_before_the_normal_forms(first: str, second: str) -> None:
    a, b = m[first], m[second]
    assert (a == b) == (a.normalize().key == b.normalize().key)
    assert a == a and a == a.normalize() and a.normalize() == a


# -- m["..."] remembered per call site --------------------------------------------------------------


def _user_module(source: str) -> dict[str, typing.Any]:
    """The globals of a user module holding ``source``."""
    scope: dict[str, typing.Any] = {"__name__": "user_layouts", "m": m, "axis": tcp.axis}
    exec(compile(source, "<user_layouts>", "exec"), scope)
    return scope


def _resolved_afresh(text: str, scope: dict[str, typing.Any], local_names: dict[str, typing.Any] | None = None) -> typing.Any:
    """``m[text]`` step by step: parse, then look every name up in the locals and the globals."""
    from tcpdsl.algebra.scope import _FrameScope, _resolve
    from tcpdsl.syntax import parse_expression
    return _resolve(parse_expression(text), _FrameScope(local_names or {}, scope))


def test_a_remembered_call_site_follows_its_module_globals() -> None:
    from tcpdsl.algebra import scope as scope_module
    module = _user_module("H = axis('H', 4)\ndef layout():\n    return m['H / 2, 2']\n")
    first = module["layout"]()
    assert first is module["layout"]() is _resolved_afresh("H / 2, 2", module)
    assert any(site.globals is module for site in scope_module._sites.values())  # the hit path was taken
    module["H"] = tcp.axis("H", 16)  # rebound: the site resolves anew
    assert module["layout"]().size == 16 and module["layout"]() is _resolved_afresh("H / 2, 2", module)
    module["H"] = tcp.axis("G", 16)  # bound to another axis's object: refused as before
    with pytest.raises(LayoutError) as info:
        module["layout"]()
    assert info.value.rule == "UnknownAxis"


def test_one_code_object_run_in_two_modules_resolves_in_each() -> None:
    source = "def layout():\n    return m['H']\n"
    code = compile(source, "<user_layouts>", "exec")
    small, large = ({"__name__": "user_a", "m": m, "H": tcp.axis("H", n)} for n in (4, 8))
    for scope in (small, large):
        exec(code, scope)
    assert small["layout"].__code__ == large["layout"].__code__
    for _ in range(2):
        assert (small["layout"]().size, large["layout"]().size) == (4, 8)


def test_locals_and_closures_shadow_a_remembered_global() -> None:
    # A closure sees an enclosing axis only when its code names it (as Python binds names).
    module = _user_module(
        "H = axis('H', 4)\n"
        "def local(H):\n    return m['H']\n"
        "def closure(n):\n    H = axis('H', n)\n    def inner():\n        assert H\n        return m['H']\n    return inner\n"
        "def comprehension(n):\n    H = axis('H', n)\n    return [(H, m['H'])[1] for _ in range(2)]\n")
    for n in (8, 16, 8):
        assert module["local"](tcp.axis("H", n)).size == n
        assert module["closure"](n)().size == n
        assert [x.size for x in module["comprehension"](n)] == [n, n]


def test_a_site_inside_tcpdsl_still_resolves_in_the_user_frame() -> None:
    helper: dict[str, typing.Any] = {"__name__": "tcpdsl.helpers", "m": m, "H": tcp.axis("H", 2)}
    exec(compile("def layout():\n    return m['H']\n", "<tcpdsl.helpers>", "exec"), helper)
    H = tcp.axis("H", 32)  # noqa: N806  (the user's axis, a local of this frame)
    for _ in range(2):
        assert helper["layout"]().size == H.size


# -- a stage call remembered by the identity of its arguments ---------------------------------------


def test_a_stage_call_remembered_by_identity_answers_as_the_composer() -> None:
    from tcpdsl.algebra import clear_caches
    from tcpdsl.verify.stages import compose_stage
    from tcpdsl.verify.stage import Stage
    dev = tcp.Device()
    begun = dev.main.begin(Activation(tcp.Tensor(np.tile(RNG.standard_normal(32), (8, 1)), m["Q / 8, K"])).view())
    calls = [("K / 16", "K % 16"), ("K / 8", "K % 8"), ("K / 16", "K % 8"), ("K / 16", "K % 16")]  # the third is refused
    refusals = 0
    for time, packet in calls * 2:
        for _ in range(2):  # the second call takes the identity path
            out_time, out_packet = tcp.parse(time, {"K": 32}), tcp.parse(packet, {"K": 32})
            try:
                expected = compose_stage(Stage.FETCH, begun._spec.tensor_type, out_time=out_time,
                                         out_packet=out_packet, context="main")
            except LayoutError as refused:
                with pytest.raises(LayoutError) as again:
                    begun.fetch(out_time=out_time, out_packet=out_packet)
                assert (again.value.rule, str(again.value)) == (refused.rule, str(refused)) == ("Unread", str(again.value))
                refusals += 1
                continue
            got = begun.fetch(out_time=out_time, out_packet=out_packet)
            assert got._spec.tensor_type == expected[0] and got.flow.steps[-1].params == expected[1]
        clear_caches()  # the next texts build new mapping objects equal to these: the structural path answers
    assert refusals == 4  # a refusal is never remembered: raised anew on every call


def test_a_type_check_by_spec_identity_agrees_with_the_field_by_field_check() -> None:
    from tcpdsl.tensors.subscription import _mismatch
    dev = tcp.Device()
    x = Activation(tcp.Tensor(np.tile(RNG.standard_normal(32), (8, 1)), m["Q / 8, K"]))
    fetched = dev.main.begin(x.view()).fetch(out_time=m["K / 16"], out_packet=m["K % 16"])
    collected = fetched.collect(out_time=m["K / 16"], out_packet=m["K % 16"])
    types = [
        tcp.CollectTensor[tcp.bf16, Grid[0], Grid[1], m["Q / 8, 1 # 32"], m["K / 16"], m["K % 16"]],
        tcp.CollectTensor[tcp.bf16, Grid[0], Grid[1], m["Q / 8, 1 # 32"], m["K / 8"], m["K % 8 # 16"]],
        tcp.FetchTensor[tcp.bf16, Grid[0], Grid[1], m["Q / 8, 1 # 32"], m["K / 16"], m["K % 16"]],
        Activation,
    ]
    assert collected._spec is types[0].__tcp_spec__  # one spec per composed type, whichever path built it
    for value in (x, fetched, collected, x.view(), 3.0):
        for hint in types:
            assert isinstance(value, hint) == (_mismatch(hint.__tcp_spec__, value) is None)
    assert [isinstance(v, types[0]) for v in (x, fetched, collected)] == [False, False, True]
    assert type(types[1]).__instancecheck_str__(types[1], collected) == (
        'its Time layout m["K / 16"] differs from the declared m["K / 8"]')


def test_options_built_afresh_on_every_call_are_interned_by_value_and_kept_apart_by_value() -> None:
    from test_verify_switch import VALID
    from tcpdsl.tensors.base import interned
    from tcpdsl.verify.stage import Stage
    from tcpdsl.verify.stages import compose_stage
    sizes = dict(A=8, B=32, C=256, D=64, E=1024, G=32)
    dm = tcp.DmTensor[tcp.i8, m["1"], m["1 # 2"], tcp.parse("C", sizes), tcp.parse("A, B", sizes)](
        tcp.Tensor(np.zeros((8, 32, 256), np.int8), tcp.parse("A, B, C", sizes)))
    fetched = tcp.Device().main.begin(dm.view()).fetch(out_time=tcp.parse("A", sizes), out_packet=tcp.parse("B", sizes))
    cases = [case for case in VALID if case[1:3] == ("C", "A")]
    assert len({type(case[0]) for case in cases}) > 2
    for config, _, _, out_slice, out_time, ring in cases * 2:
        fresh = dataclasses.replace(config)  # equal, not the same object
        assert interned(fresh) is interned(config) and fresh is not config
        out_slice, out_time = tcp.parse(out_slice, sizes), tcp.parse(out_time, sizes)
        switched = fetched.switch(fresh, out_slice=out_slice, out_time=out_time)
        expected = compose_stage(Stage.SWITCH, fetched._spec.tensor_type, config=config, out_slice=out_slice,
                                 out_time=out_time)
        assert switched._spec.tensor_type == expected[0] and switched.flow.steps[-1].params == expected[1]
        assert switched.flow.steps[-1].params.ring_size == ring


def test_a_step_filled_field_by_field_is_the_step_its_constructor_builds() -> None:
    from tcpdsl.numerics.flow import Step
    from tcpdsl.tensors.base import step_of
    from tcpdsl.verify.stage import Stage
    dev = tcp.Device()
    begun = dev.main.begin(Activation(tcp.Tensor(np.tile(RNG.standard_normal(32), (8, 1)), m["Q / 8, K"])).view())
    fetched = begun.fetch(out_time=m["K / 16"], out_packet=m["K % 16"])
    spec, params = fetched._spec, fetched.flow.steps[-1].params
    for unit, relu, source in [(None, False, None), ("sub", True, begun._spec)]:
        built = Step(Stage.FETCH, spec.mapping, spec.dtype, params, unit, spec.packets, spec.layout_text, relu,
                     source.layouts if source is not None else (), spec.layouts)
        filled = step_of(Stage.FETCH, spec, params, unit, relu, source)
        names = [f.name for f in dataclasses.fields(Step)]
        assert sorted(vars(filled)) == sorted(names)  # every field, no other attribute (tensors.filled)
        assert [getattr(filled, n) for n in names if n != "serial"] == [getattr(built, n) for n in names if n != "serial"]
        assert built.serial < filled.serial < step_of(Stage.FETCH, spec, params).serial  # one count for both
        with pytest.raises(dataclasses.FrozenInstanceError):
            filled.stage = "collect"  # type: ignore[misc]


def test_a_record_filled_without_its_init_is_the_record_its_constructor_builds() -> None:
    from tcpdsl.numerics.flow import Flow, Root, Step, Window, Written
    from tcpdsl.numerics.vector_chain import PassSource, PassStep, VectorChain
    from tcpdsl.tensors.filled import filled
    from tcpdsl.verify.stage import Stage
    begun = tcp.Device().main.begin(Activation(tcp.Tensor(np.tile(RNG.standard_normal(32), (8, 1)),
                                                          m["Q / 8, K"])).view())
    passed = (begun.fetch(out_time=m["K / 16"], out_packet=m["K % 16"]).fetch_cast(tcp.f32)
              .collect(out_time=m["K / 8"], out_packet=m["K % 8"]).vector_init()
              .vector_intra_slice_tag(tcp.TagMode.ZERO).vector_narrow_split(out_time=m["K / 4"], out_packet=m["K % 4"])
              .vector_fp_binary(tcp.FpBinaryOp.MUL_F(tcp.FpMulAlu.MUL0), 2.0))
    recorded = passed.chain.steps[-1]
    cases: list[tuple[type, dict[str, typing.Any]]] = [
        (Step, {"stage": "fetch", "mapping": m["K"], "dtype": "bf16"}),
        (Step, {f.name: getattr(begun.flow.steps[-1], f.name) for f in dataclasses.fields(Step) if f.name != "serial"}),
        (PassStep, {"stage": Stage.VECTOR_INIT, "layouts": recorded.layouts, "step": recorded.step}),
        (PassStep, {f.name: getattr(recorded, f.name) for f in dataclasses.fields(PassStep)}),
        (VectorChain, {"source": passed.chain.source}),
        (VectorChain, {"source": passed.chain.source, "steps": passed.chain.steps}),
        (Flow, {"root": begun.flow.root, "steps": begun.flow.steps}),
        (Root, {f.name: getattr(begun.flow.root, f.name) for f in dataclasses.fields(Root)}),
        (Root, {f.name: getattr(begun.flow.root, f.name) for f in dataclasses.fields(Root)[:5]}),
        (PassSource, {f.name: getattr(passed.chain.source, f.name) for f in dataclasses.fields(PassSource)}),
    ]
    assert recorded.operands and recorded.mode is not None  # a step with every field set
    for cls, given in cases:
        built, fast = cls(**given), filled(cls, given)
        assert type(fast) is cls and sorted(vars(fast)) == sorted(vars(built))
        for name in vars(built):
            if name == "serial":
                assert fast.serial > built.serial  # a fresh number from the same count
            elif name == "cache":
                assert fast.cache == built.cache == {} and fast.cache is not built.cache  # its own
            else:
                assert getattr(fast, name) is getattr(built, name) or getattr(fast, name) == getattr(built, name)
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(fast, next(iter(given)), None)
    with pytest.raises(TypeError):
        filled(tcp.Topology, {})
    # A stage call made again: its step copied with a fresh serial, and the flow one step further, field by
    # field as the constructors build them.
    view = Activation(tcp.Tensor(np.tile(RNG.standard_normal(32), (8, 1)), m["Q / 8, K"])).view()
    unit = tcp.Device().main
    unit.begin(view)
    again = unit.begin(view)
    step, flow = again.flow.steps[-1], again.flow
    copied = {f.name: getattr(step, f.name) for f in dataclasses.fields(Step) if f.name != "serial"}
    for fast, built in ((step, Step(**copied)), (flow, view.flow.then(step))):
        assert type(fast) is type(built) and sorted(vars(fast)) == sorted(vars(built))
        for name in vars(built):
            if name == "serial":
                assert fast.serial < built.serial  # fresh, from the constructor's count
            elif name == "cache":
                assert fast.cache == built.cache == {} and fast.cache is not built.cache
            else:
                assert getattr(fast, name) is getattr(built, name) or getattr(fast, name) == getattr(built, name)
        with pytest.raises(dataclasses.FrozenInstanceError):
            fast.serial = 0  # type: ignore[misc]
    assert step.serial < flow.serial  # the step is numbered first, as flow.then(step_of(...)) numbers them
    # A pass one method further: the chain as its constructor builds it.
    chain, built = passed.chain, VectorChain(passed.chain.source, passed.chain.steps)
    assert sorted(vars(chain)) == sorted(vars(built)) and chain.cache == {} and chain.cache is not built.cache
    assert (chain.source, chain.steps) == (built.source, built.steps)


def test_an_unhashable_option_is_refused_by_its_rule_not_by_the_memo() -> None:
    dev = tcp.Device()
    narrowed = (dev.main.begin(Activation(tcp.Tensor(np.tile(RNG.standard_normal(32), (8, 1)), m["Q / 8, K"])).view())
                .fetch(out_time=m["K / 16"], out_packet=m["K % 16"]).fetch_cast(tcp.f32)
                .collect(out_time=m["K / 8"], out_packet=m["K % 8"]).vector_init()
                .vector_intra_slice_tag(tcp.TagMode.ZERO).vector_narrow_split(out_time=m["K / 4"], out_packet=m["K % 4"]))
    fma = tcp.FpTernaryOp.FMA_F
    assert narrowed.vector_fp_ternary(fma, (1.0, 2.0)).chain.steps[-1].operands  # the pair, remembered
    for _ in range(2):
        with pytest.raises(LayoutError) as info:
            narrowed.vector_fp_ternary(fma, [1.0, 2.0])  # type: ignore[arg-type]
        assert info.value.rule == "Operand" and "got a list where a pair of operands is due" in str(info.value)


# -- a stage call recorded again: the remembered type and a copy of its step -----------------------------


def _forget_stage_calls() -> None:
    """Drop every spec's remembered stage calls, so that the next calls compose and build their steps anew."""
    from tcpdsl.tensors.subscription import _SPECS
    for spec in _SPECS.values():
        for memo in (spec._steps, spec._calls, spec._stamps):
            memo.clear()


def _recorded_chain(unit: typing.Any, x: typing.Any) -> typing.Any:
    """Every stage that records a step through ``TensorBase._recorded``: begin, fetch, fetch_cast, collect,
    cast, commit_trim, commit_cast_relu, commit, commit_view and a DMA into a write view."""
    stream = (unit.begin(x.view()).fetch(out_time=m["K / 16"], out_packet=m["K % 16"]).fetch_cast(tcp.f32)
              .collect(out_time=m["K / 8"], out_packet=m["K % 8"]))
    relu = stream.commit_trim(out_packet=m["K % 8"]).commit_cast_relu(tcp.bf16).commit(element=m["K"])
    cast = stream.cast(tcp.bf16, out_packet=m["K % 8 # 16"]).commit_trim(out_packet=m["K % 8"])
    return cast.commit_view(relu.view_mut()).view().to_dm_view(relu.view_mut())


def _written_steps(tensor: typing.Any) -> list[typing.Any]:
    """The steps of every flow written into ``tensor``, the last write first, then those of the flow it began as."""
    from tcpdsl.numerics.flow import Written
    steps, flow = [], tensor.flow
    while isinstance(flow.root.source, Written):
        steps += flow.root.source.written.steps
        flow = flow.root.source.parent
    return steps + list(flow.steps)


def _fields(step: typing.Any) -> list[typing.Any]:
    return [getattr(step, f.name) for f in dataclasses.fields(step) if f.name != "serial"]


def test_a_recorded_call_made_again_copies_its_step_with_a_fresh_serial() -> None:
    dev = tcp.Device()
    x = Activation(tcp.Tensor(np.tile(RNG.standard_normal(32), (8, 1)), m["Q / 8, K"]))
    first = _written_steps(_recorded_chain(dev.main, x))
    again = _written_steps(_recorded_chain(dev.main, x))
    _forget_stage_calls()
    afresh = _written_steps(_recorded_chain(dev.main, x))  # the long way: composed and built anew
    stages = [step.stage for step in first]
    assert stages == ["to_dm_view", "begin", "fetch", "fetch_cast", "collect", "cast", "commit_trim", "commit_view",
                      "begin", "fetch", "fetch_cast", "collect", "commit_trim", "commit_cast_relu", "commit"]
    assert [_fields(s) for s in first] == [_fields(s) for s in again] == [_fields(s) for s in afresh]
    assert all(a is not b for a, b in zip(first, again))  # a copy per call, never the remembered step itself
    serials = [{step.serial for step in steps} for steps in (first, again, afresh)]  # both writes share the stream
    assert max(serials[0]) < min(serials[1]) and max(serials[1]) < min(serials[2])
    # Within a call the stream's steps keep their call order (the traces order by serial).
    stream = [step for step in again if step.stage in ("begin", "fetch", "fetch_cast", "collect")][:4]
    assert [s.serial for s in stream] == sorted(s.serial for s in stream)


def test_a_recorded_call_keeps_the_unit_apart_and_refuses_a_bad_call_after_a_good_one() -> None:
    dev = tcp.Device()
    x = Activation(tcp.Tensor(np.tile(RNG.standard_normal(32), (8, 1)), m["Q / 8, K"]))
    for _ in range(2):
        main = dev.main.begin(x.view())
        sub = dev.sub.begin(x.view())  # the same view type and arguments, another unit
        assert (main.flow.steps[-1].context, sub.flow.steps[-1].context) == ("main", "sub")
        trimmed = {unit: begun.fetch(out_time=m["K / 16"], out_packet=m["K % 16"]).fetch_cast(tcp.f32)
                   .collect(out_time=m["K / 8"], out_packet=m["K % 8"]).commit_trim(out_packet=m["K % 8"])
                   for unit, begun in (("main", main), ("sub", sub))}
        assert trimmed["main"].commit_cast(tcp.bf16).flow.steps[-1].dtype == "bf16"
        errors = []
        for forget in (False, True):  # remembered, then the long way
            if forget:
                _forget_stage_calls()
            with pytest.raises(tcp.TcpError) as info:
                trimmed["sub"].commit_cast(tcp.bf16)  # the commit adapter casts in the main context only
            errors.append((info.value.stage, info.value.rule, str(info.value)))
        assert errors[0] == errors[1] and errors[0][:2] == ("commit_cast", "MainOnly")
        with pytest.raises(LayoutError) as bad:
            main.fetch(out_time=m["K / 16"], out_packet=m["K % 8"])  # after the good fetch above
        assert bad.value.rule == "Unread"


def test_mapping_arguments_are_taken_as_given_and_remembered_by_name() -> None:
    from tcpdsl.algebra import clear_caches
    from tcpdsl.tensors.base import TensorBase
    from tcpdsl.verify.stage import Stage
    from tcpdsl.verify.stages import compose_stage
    begun = tcp.Device().main.begin(Activation(tcp.Tensor(np.tile(RNG.standard_normal(32), (8, 1)),
                                                          m["Q / 8, K"])).view())
    time, packet = m["K / 16"], m["K % 16"]
    given = TensorBase._mappings(Stage.FETCH, out_time=time, out_packet=packet)  # mappings: as given
    assert given == {"out_time": time, "out_packet": packet}
    assert TensorBase._mappings(Stage.FETCH, out_time="K / 16", out_packet="K % 16") == given  # text: resolved here
    tt = begun._spec.tensor_type
    for _ in range(2):
        for out_time, out_packet in ((time, packet), (packet, time)):  # both valid, two different types
            expected = compose_stage(Stage.FETCH, tt, out_time=out_time, out_packet=out_packet, context="main")
            for arguments in ({"out_time": out_time, "out_packet": out_packet},
                              {"out_packet": out_packet, "out_time": out_time}):  # either order of the keywords
                spec, params = begun._compose(Stage.FETCH, arguments, context="main")
                assert (spec.tensor_type, params) == expected
        clear_caches()  # new mapping objects equal to these: the structural path answers, by name
        time, packet = tcp.parse("K / 16", {"K": 32}), tcp.parse("K % 16", {"K": 32})


def test_a_recorded_call_reads_text_arguments_as_the_long_way_does() -> None:
    begun = tcp.Device().main.begin(Activation(tcp.Tensor(np.tile(RNG.standard_normal(32), (8, 1)),
                                                          m["Q / 8, K"])).view())
    given = begun.fetch(out_time=m["K / 16"], out_packet=m["K % 16"])
    for _ in range(2):
        text = begun.fetch(out_time="K / 16", out_packet="K % 16")  # resolved in this frame, then remembered
        assert text._spec is given._spec and _fields(text.flow.steps[-1]) == _fields(given.flow.steps[-1])
        K = tcp.axis("K", 64)  # noqa: N806  (a local axis of another size shadows the module's for text)
        with pytest.raises(LayoutError) as info:
            begun.fetch(out_time="K / 16", out_packet="K % 16")
        assert K.size == 64 and info.value.rule == "AxisSizeConflict"
        del K


def test_positions_built_in_place_are_the_ones_their_builders_make() -> None:
    from tcpdsl.tensors.sources import CollectTensor
    from tcpdsl.tensors.memory import DmView
    dev = tcp.Device()
    fetched = dev.main.begin(Activation(tcp.Tensor(np.tile(RNG.standard_normal(32), (8, 1)),
                                                    m["Q / 8, K"])).view()).fetch(out_time=m["K / 16"], out_packet=m["K % 16"])
    collected = fetched.fetch_cast(tcp.f32).collect(out_time=m["K / 8"], out_packet=m["K % 8"])
    made = CollectTensor._make(collected._spec, None, None, flow=collected.flow)
    assert [getattr(collected, n) for n in CollectTensor.__slots__] == [getattr(made, n) for n in CollectTensor.__slots__]
    tagged = collected.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO)
    built = type(tagged)._of(tagged._spec, tagged.chain, tagged._state)
    assert (tagged._spec, tagged.chain, tagged._state) == (built._spec, built.chain, built._state)
    trimmed = collected.commit_trim(out_packet=m["K % 8"])  # a position back._step fills in place
    view = trimmed.commit(element=m["K"]).view()  # a window _window fills in place
    for built, cls in ((trimmed, type(trimmed)), (view, DmView)):
        made = cls._of_flow(built._spec, built.flow)
        assert type(built) is cls and (built._spec, built.flow) == (made._spec, made.flow)
    assert view._offset == 0 and view._parent.view()._parent is view._parent
    with pytest.raises(LayoutError) as info:
        dev.main.begin(object.__new__(DmView))  # a view without a type: refused as spec_of refuses it
    assert info.value.rule == "NotAView"


def test_a_pass_method_called_again_records_the_same_step_unless_it_reads_operands() -> None:
    from tcpdsl.numerics.vector_chain import PassStep
    from tcpdsl.tensors import vector
    collected = (tcp.Device().main.begin(Activation(tcp.Tensor(np.tile(RNG.standard_normal(32), (8, 1)),
                                                                m["Q / 8, K"])).view())
                 .fetch(out_time=m["K / 16"], out_packet=m["K % 16"]).fetch_cast(tcp.f32)
                 .collect(out_time=m["K / 8"], out_packet=m["K % 8"]))

    def run() -> list[typing.Any]:
        return list(collected.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO)
                    .vector_narrow_split(out_time=m["K / 4"], out_packet=m["K % 4"])
                    .vector_fp_unary(tcp.FpUnaryOp.SQRT).vector_fp_binary(tcp.FpBinaryOp.MUL_F(tcp.FpMulAlu.MUL0), 2.0)
                    .vector_widen_concat(out_time=m["K / 8"], out_packet=m["K % 8"]).vector_final()._pass.steps)

    first, again = run(), run()
    _forget_stage_calls()
    vector._PASS_STEPS.clear()
    vector._SEEN_STEPS.clear()
    afresh = run()  # the long way: every step composed and built anew
    held = [a is b for a, b in zip(first, again)]
    assert held == [True, True, True, True, False, True, True]  # the binary op's operand is a value made per call
    assert [a is b for a, b in zip(first, afresh)] == [False] * 7
    for steps in (again, afresh):
        for one, other in zip(first, steps):
            assert [getattr(one, f.name) for f in dataclasses.fields(PassStep) if f.name != "operands"] == [
                getattr(other, f.name) for f in dataclasses.fields(PassStep) if f.name != "operands"]
            assert len(one.operands) == len(other.operands)
    errors = []
    for _ in range(2):  # a bad call after the good ones, then the long way: the composer refuses it alike
        with pytest.raises(tcp.TcpError) as info:
            collected.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO).vector_narrow_split(
                out_time=m["K / 8"], out_packet=m["K % 8"])
        errors.append(str(info.value))
        _forget_stage_calls()
        vector._PASS_STEPS.clear()
        vector._SEEN_STEPS.clear()
    assert errors[0] == errors[1] and "vector_narrow_split" in errors[0]


def test_a_fetch_reads_its_context_from_the_begin_step_as_the_flow_does() -> None:
    from tcpdsl.verify.stage import Stage
    from tcpdsl.verify.stages import compose_stage
    view = Activation(tcp.Tensor(np.tile(RNG.standard_normal(32), (8, 1)), m["Q / 8, K"])).view()
    dev = tcp.Device()
    for unit in (dev.main, dev.sub, dev.main):
        begun = unit.begin(view)
        assert begun.flow.steps[-1].context == begun.flow.context == unit.unit
        fetched = begun.fetch(out_time=m["K / 16"], out_packet=m["K % 16"])
        expected = compose_stage(Stage.FETCH, begun._spec.tensor_type, out_time=m["K / 16"], out_packet=m["K % 16"],
                                 context=begun.flow.context)
        assert (fetched._spec.tensor_type, fetched.flow.steps[-1].params) == expected


def test_a_recorded_call_is_found_by_its_arguments_as_given_only_when_they_were_mappings() -> None:
    begun = tcp.Device().main.begin(Activation(tcp.Tensor(np.tile(RNG.standard_normal(32), (8, 1)),
                                                          m["Q / 8, K"])).view())
    spec = begun._spec
    spec._stamps.clear()
    for _ in range(2):
        text = begun.fetch(out_time="K / 16", out_packet="K % 16")  # the same str objects on every call
    assert not spec._stamps  # text resolves in the caller's scope: never found by the texts' identity
    given = begun.fetch(out_time=m["K / 16"], out_packet=m["K % 16"])
    assert [held for held, _ in spec._stamps.values()] == [(m["K / 16"], m["K % 16"], "main")]
    assert given._spec is text._spec and _fields(given.flow.steps[-1]) == _fields(text.flow.steps[-1])
    errors = []
    for forget in (False, True):  # a bad call after the good one, then the long way
        if forget:
            _forget_stage_calls()
        with pytest.raises(LayoutError) as info:
            begun.fetch(out_time=m["K / 16"], out_packet=m["K % 8"])
        errors.append((info.value.rule, str(info.value)))
    assert errors[0] == errors[1] and errors[0][0] == "Unread"


@given(st.lists(st.sampled_from([None, "main", "sub"]), max_size=6))
def test_a_flows_context_is_its_last_step_that_names_one(contexts: list[str | None]) -> None:
    root = Root(m["K"], "f32", (), (), lambda name: np.zeros(0))
    flow = Flow(root, tuple(Step("begin", m["K"], "f32", context=c) for c in contexts))
    assert flow.context == next((c for c in reversed(contexts) if c is not None), "main")


def test_a_pass_result_holds_the_terms_the_long_way_picks_one_tuple_per_type() -> None:
    from tcpdsl.tensors import vector
    collected = (tcp.Device().main.begin(Activation(tcp.Tensor(np.tile(RNG.standard_normal(32), (8, 1)),
                                                                m["Q / 8, K"])).view())
                 .fetch(out_time=m["K / 16"], out_packet=m["K % 16"]).fetch_cast(tcp.f32)
                 .collect(out_time=m["K / 8"], out_packet=m["K % 8"]))

    def final() -> typing.Any:
        return (collected.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO)
                .vector_narrow_split(out_time=m["K / 4"], out_packet=m["K % 4"])
                .vector_widen_concat(out_time=m["K / 8"], out_packet=m["K % 8"]).vector_final())

    first, again = final(), final()
    spec, source = first._spec, first._pass.source
    root = first.flow.root  # built in place: the records its constructors build
    built = Flow(Root(**{f.name: getattr(root, f.name) for f in dataclasses.fields(Root)}))
    assert [getattr(root, f.name) for f in dataclasses.fields(Root)] == [
        getattr(built.root, f.name) for f in dataclasses.fields(Root)]
    assert (first.flow.steps, first.flow.cache) == ((), {}) and first.flow.serial < again.flow.serial < built.serial
    assert root.source is first._pass and first.flow.cache is not again.flow.cache
    assert source.axes is again._pass.source.axes == {t.axis for t in collected.flow.root.terms}
    assert first.flow.root.terms is again.flow.root.terms  # the evaluators find it by identity
    assert first.flow.root.terms == tuple(t for t in spec.terms if t.axis in source.axes)
    assert first.to_tensor().to_numpy(m["Q / 8, K"]).tobytes() == collected.to_tensor().to_numpy(m["Q / 8, K"]).tobytes()
    axes = sorted({t.axis for t in spec.terms})
    for kept_axes in ([], axes[:1], axes[1:], axes):  # each subset, twice: remembered, then an equal new set
        for _ in range(2):
            held, first_cell = vector._held(spec, frozenset(kept_axes))
            assert held == tuple(t for t in spec.terms if t.axis in kept_axes)
            assert first_cell == tuple(slice(None) if t.axis in kept_axes else 0 for t in spec.terms)


def test_a_windows_flow_built_in_place_is_the_flow_its_constructors_build() -> None:
    values = RNG.standard_normal((C.n, B.n))
    w = Weights(tcp.Tensor(values, "C B"))
    whole = w.view()
    tile = whole.tile(3, index=m["C"], len=1, element=m["C % 1 # 8, B"])
    for view in (whole, tile):
        flow, root = view.flow, view.flow.root
        built = Flow(Root(**{f.name: getattr(root, f.name) for f in dataclasses.fields(Root)}))
        assert [getattr(root, f.name) for f in dataclasses.fields(Root)] == [
            getattr(built.root, f.name) for f in dataclasses.fields(Root)]
        assert (flow.steps, flow.cache) == (built.steps, built.cache) == ((), {})
        assert type(flow.serial) is int and flow.serial < built.serial
    assert whole.flow.root.source is w.flow and whole.flow.root.terms is w.flow.root.terms
    assert tile.flow.root.source.offset == 3 * B.n and tile.flow.root.terms == tile._spec.terms
    assert whole.flow.cache is not w.view().flow.cache  # a cache of its own per view
    assert tile.to_tensor().to_numpy("B").tobytes() == w.to_tensor().to_numpy("C B")[3].tobytes()


def test_a_pass_method_found_in_one_lookup_answers_per_state_as_the_composer() -> None:
    from tcpdsl.tensors import vector
    collected = (tcp.Device().main.begin(Activation(tcp.Tensor(np.tile(RNG.standard_normal(32), (8, 1)),
                                                                m["Q / 8, K"])).view())
                 .fetch(out_time=m["K / 16"], out_packet=m["K % 16"]).fetch_cast(tcp.f32)
                 .collect(out_time=m["K / 8"], out_packet=m["K % 8"]))
    narrow = (collected.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO)
              .vector_narrow_split(out_time=m["K / 4"], out_packet=m["K % 4"]))
    sqrt, mul = tcp.FpUnaryOp.SQRT, tcp.FpBinaryOp.MUL_F(tcp.FpMulAlu.MUL0)
    used = narrow.vector_fp_unary(sqrt)  # the square root's ALU taken
    free = narrow.vector_fp_binary(mul, 2.0)  # the same type, another state: the square root's ALU free
    assert used._spec is free._spec and used._state is not free._state
    outcomes = []
    for forget in (False, False, True):  # remembered in one lookup, then the long way
        if forget:
            _forget_stage_calls()
            vector._PASS_STEPS.clear()
            vector._SEEN_STEPS.clear()
        done = free.vector_fp_unary(sqrt)
        with pytest.raises(LayoutError) as info:
            used.vector_fp_unary(sqrt)  # a bad call after a good one on the same type and arguments
        outcomes.append((done._spec, done._state, done.chain.steps[-1], info.value.rule, str(info.value)))
    assert outcomes[0] == outcomes[1] and outcomes[0][3] == "AluOnce"
    assert outcomes[0][2] is outcomes[1][2]  # the remembered pass step itself
    assert outcomes[0][0] is outcomes[2][0] and outcomes[0][3:] == outcomes[2][3:]
    assert outcomes[0][1] == outcomes[2][1] and _pass_step_fields(outcomes[0][2]) == _pass_step_fields(outcomes[2][2])


def _pass_step_fields(step: typing.Any) -> list[typing.Any]:
    return [getattr(step, f.name) for f in dataclasses.fields(step) if f.name != "step"] + [step.step.state]


@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_a_constant_operands_type_kept_by_value_is_the_composers(dtype: str) -> None:
    from tcpdsl.tensors import vector
    from tcpdsl.tensors.vector import PassTensor
    position = object.__new__(PassTensor)
    stage = Stage.VECTOR_FP_BINARY
    values: list[object] = [2.0, 2, 1, True, 0.0, -0.0, float("nan"), 2**32 - 1, 2**32, -2**31, -2**31 - 1, 1.5,
                            np.float32(1.0), "1"]
    for forget in (False, False, True):  # remembered, then the long way
        if forget:
            vector._IMMEDIATES.clear()
        for value in values:
            try:
                expected: object = vc.constant(stage, value, dtype)
            except LayoutError as error:
                expected = (error.rule, str(error))
            try:
                typed, constant = position._operand(stage, value, dtype)
            except LayoutError as error:
                assert (error.rule, str(error)) == expected, value
            else:
                assert typed == expected and constant.value is value, value
    assert (stage, bool, True, dtype) not in vector._IMMEDIATES  # refused, never kept


# -- a whole view's values read without its root's call (evaluate/stream.py fused_logical) -----------------

def test_a_whole_views_values_are_its_tensors_as_its_root_reads_them() -> None:
    """A flow whose root's source is a flow is a whole view (tensors/stream.py window_flow): ``fused_logical`` takes
    the tensor's values directly, which must be the very array the root's own read gives: here a tensor committed
    from a stream that widened its bf16 root to f32, special values included."""
    Nq, Dq = tcp.axis("Nq", 8), tcp.axis("Dq", 128)
    dev = tcp.Device()
    values = np.random.default_rng(5).standard_normal((8, 128)).astype(np.float32)
    values[0, :4] = [0.0, -0.0, np.nan, np.inf]
    x = tcp.DmTensor[tcp.bf16, m["1"], m["1 # 2"], m["Nq, 1 # 32"], m["Dq"]](tcp.Tensor(values, m["Nq, Dq"]))
    wide = (dev.main.begin(x.view()).fetch(out_time=m["Dq / 16"], out_packet=m["Dq % 16"]).fetch_cast(tcp.f32)
            .collect(out_time=m["Dq / 8"], out_packet=m["Dq % 8"]).commit_trim(out_packet=m["Dq % 8"])
            .commit(element=m["Dq"]))
    flow = wide.view().flow
    assert isinstance(flow.root.source, Flow) and flow.root.source is wide.flow
    shortcut = fused_logical(flow, "fused")
    assert shortcut is flow.root.logical("fused") is fused_logical(wide.flow, "fused")
    assert shortcut.dtype == np.float32 and shortcut.tobytes() == wide.to_tensor().values.tobytes()


# -- a carried widening moved when nothing else holds it (numerics/kept.py carry) --------------------------------

@pytest.mark.parametrize("held", ["nothing", "the value", "its memory"])
def test_a_carried_widening_is_moved_only_when_nothing_else_holds_it(held: str) -> None:
    """A KV cache written a row per step: its widened form follows each new array. When nothing but the table holds
    the old form, it is moved to the new array and its row recomputed in place; when anything else holds it or
    views its memory, that holder's values never change. Either way each array derives its own widening, special
    values included."""
    old = freeze(tcp.bf16.cast(RNG.standard_normal((256, 128))))
    for _ in range(2):
        derived(old, ("widen", "bf16", False), _widened, "bf16", False, elementwise=True)
    before = derived(old, ("widen", "bf16", False), _widened, "bf16", False, elementwise=True)
    snapshot = before.copy()
    holder = {"nothing": [], "the value": [before], "its memory": [before.base[2:5]]}[held]
    held_bytes = [h.tobytes() for h in holder]
    first = id(before)
    del before
    new = np.array(old)
    new[3] = tcp.bf16.cast(np.array([0.0, -0.0, np.nan, np.inf, 1e-40] + [2.5] * 123))
    freeze(new)
    kept.carry(old, new, lambda array: array[3])
    carried = derived(new, ("widen", "bf16", False), _widened, "bf16", False, elementwise=True)
    assert carried.tobytes() == _widened(new, "bf16", False).tobytes() and not carried.flags.writeable
    assert (id(carried) == first) is (held == "nothing")  # moved when nothing else held it, else copied
    again = derived(old, ("widen", "bf16", False), _widened, "bf16", False, elementwise=True)
    assert again.tobytes() == snapshot.tobytes()
    assert [h.tobytes() for h in holder] == held_bytes


# -- a vector pass run from its plan ----------------------------------------------------------------


def _planned_pass(kind: int, held: dict[str, np.ndarray]) -> typing.Any:
    """A pass over ``T, H`` whose source and VRF operand read ``held`` when evaluated (so the one chain
    object is evaluated on new values, as a replay evaluates it): each kind of step a plan runs its own way
    (moves, a stash read, f32 ops on constants, the stash and a VRF in both argument modes, unary ops, both
    f32 folds) and the ones it runs the long way (a bit op, a conversion, an i32 op, a ternary op)."""
    from test_vector_evaluate import Pass, final, tag

    p = tag(Pass(np.zeros((8, 64), dtype=np.float32), "T H", ["1", "1", "T # 64", "H / 8", "H % 8"],
                 {"T": 8, "H": 64}))
    vrf_type = TensorType(VRF, ("f32",), (p.m("1"), p.m("1"), p.m("T # 64"), p.m("H")))
    vrf = VrfValues(lambda name: held["H"], logical_terms(p.m("H")))

    def op(stage: Stage, compose: typing.Any, op: typing.Any, operand: typing.Any, value: typing.Any,
           mode: BinaryArgMode | None = None) -> None:
        p.call(stage, compose, op=op, operand=operand, record={"op": op, "operands": (value,), "mode": mode})

    mul, add, biggest = FpBinaryOp.MUL_F(FpMulAlu.MUL0), IntraSliceReduceOpF32.ADD, IntraSliceReduceOpF32.MAX
    if kind == 3:  # a bit op: its result, read by the next f32 op, is not f32 with the rules applied
        op(Stage.VECTOR_LOGIC, vc.vector_logic, LogicBinaryOpF32.BIT_XOR, Immediate("f32"), Constant(2.0**-149))
    p.call(Stage.VECTOR_NARROW_SPLIT, vc.vector_narrow_split, out_time=p.m("H / 4"), out_packet=p.m("H % 4"))
    if kind == 0:
        p.call(Stage.VECTOR_STASH, vc.vector_stash)
        op(Stage.VECTOR_FP_BINARY, vc.vector_fp_binary, mul, STASH, STASH)
        p.call(Stage.VECTOR_FP_UNARY, vc.vector_fp_unary, op=FpUnaryOp.SQRT, record={"op": FpUnaryOp.SQRT})
        p.call(Stage.VECTOR_INTRA_SLICE_REDUCE, vc.vector_intra_slice_reduce, op=add, reduce="H",
               out_time=p.m("1"), out_packet=p.m("1 # 4"), record={"op": add, "reduce": "H"})
        p.call(Stage.VECTOR_FP_DIV, vc.vector_fp_div, operand=Immediate("f32"),
               record={"operands": (Constant(3.0),), "mode": BinaryArgMode.MODE10})
        p.call(Stage.VECTOR_WIDEN_PAD, vc.vector_widen_pad, out_packet=p.m("1 # 8"))
        op(Stage.VECTOR_CLIP, vc.vector_clip, ClipBinaryOpF32.ADD, Immediate("f32"), Constant(1e-40))
    elif kind == 1:
        op(Stage.VECTOR_FP_BINARY, vc.vector_fp_binary, FpBinaryOp.MUL_F(FpMulAlu.MUL1), vrf_type, vrf,
           BinaryArgMode.MODE10)
        op(Stage.VECTOR_FP_BINARY, vc.vector_fp_binary, FpBinaryOp.SUB_F, vrf_type, vrf, BinaryArgMode.MODE10)
        p.call(Stage.VECTOR_WIDEN_CONCAT, vc.vector_widen_concat, out_time=p.m("H / 8"), out_packet=p.m("H % 8"))
        op(Stage.VECTOR_CLIP, vc.vector_clip, ClipBinaryOpF32.MIN, vrf_type, vrf)
    elif kind == 2:
        p.call(Stage.VECTOR_INTRA_SLICE_REDUCE, vc.vector_intra_slice_reduce, op=biggest, reduce="H",
               out_time=p.m("1"), out_packet=p.m("1 # 4"), record={"op": biggest, "reduce": "H"})
        p.call(Stage.VECTOR_WIDEN_PAD, vc.vector_widen_pad, out_packet=p.m("1 # 8"))
        op(Stage.VECTOR_CLIP, vc.vector_clip, ClipBinaryOpF32.MAX, Immediate("f32"), Constant(-0.0))
    elif kind == 3:
        # The zeros the bit op turned into the smallest subnormal: flushed where read, else 2**126 times them
        # is 2**-23, one unit of the fixed point below.
        p.call(Stage.VECTOR_STASH, vc.vector_stash)
        op(Stage.VECTOR_FP_BINARY, vc.vector_fp_binary, FpBinaryOp.ADD_F, Immediate("f32"), Constant(2.0**126))
        op(Stage.VECTOR_FP_BINARY, vc.vector_fp_binary, mul, STASH, STASH)
        p.call(Stage.VECTOR_WIDEN_CONCAT, vc.vector_widen_concat, out_time=p.m("H / 8"), out_packet=p.m("H % 8"))
        p.call(Stage.VECTOR_FP_TO_FXP, vc.vector_fp_to_fxp, int_width=8, record={"int_width": 8})
        op(Stage.VECTOR_CLIP, vc.vector_clip, ClipBinaryOpI32.ABS_MAX, Immediate("i32"), Constant(0))
    else:
        p.call(Stage.VECTOR_FP_UNARY, vc.vector_fp_unary, op=FpUnaryOp.EXP, record={"op": FpUnaryOp.EXP})
        fma = FpTernaryOp.FMA_F
        p.call(Stage.VECTOR_FP_TERNARY, vc.vector_fp_ternary, op=fma, operands=(vrf_type, Immediate("f32")),
               record={"op": fma, "operands": (vrf, Constant(0.5))})
        p.call(Stage.VECTOR_WIDEN_CONCAT, vc.vector_widen_concat, out_time=p.m("H / 8"), out_packet=p.m("H % 8"))
    chain = final(p).chain
    return dataclasses.replace(chain, source=dataclasses.replace(chain.source, logical=lambda name: held["x"]))


def _pass_by_definition(chain: typing.Any, source: np.ndarray) -> np.ndarray:
    """The pass run step by step on ``source``: every input read through the RNGD rules (a scan), each VRF
    operand read at each element's coordinates, each step's op called as the simulator calls it."""
    terms, values = chain.source.terms, typed(np.ascontiguousarray(source), chain.source.dtype)
    stash: tuple[np.ndarray, typing.Any] | None = None
    for step in chain.steps:
        if step.stage is Stage.VECTOR_STASH:
            stash = (values, terms)
        elif step.stage is Stage.VECTOR_INTRA_SLICE_REDUCE:
            how = _folding(terms, step.terms, step.reduce)
            moved = np.transpose(values, how.order) if how.order is not None else values
            values = rearrange(reduce_fold(step.op, moved.reshape(how.rows), axis=0), how.kept, how.base)
        elif step.stage in WAY_MOVES:
            values = rearrange(values, terms, step.terms)
        elif step.stage not in PASSIVE:
            operands = []
            for o in step.operands:
                if isinstance(o, Constant):
                    operands.append(np.asarray(o.value))
                elif isinstance(o, VrfValues):
                    operands.append(broadcast_vrf(o.read("fused"), o.terms, term_coordinates(terms)))
                else:
                    assert stash is not None
                    operands.append(rearrange(stash[0], stash[1], terms))
            values = elementwise(step, values, operands)
        terms = step.terms
    return values


def _special_cells(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Normal numbers with, at random places, each pattern of SPECIAL_BITS (zeros, subnormals, NaN, infinities)."""
    rng = np.random.default_rng(seed)
    cells = rng.standard_normal(shape).astype(np.float32)
    flat = cells.reshape(-1)
    places = rng.choice(flat.size, size=3 * len(SPECIAL_BITS), replace=False)
    flat[places] = np.resize(np.array(SPECIAL_BITS, dtype=np.uint32), places.size).view(np.float32)
    return cells


KINDS = [0, 1, 2, 3, 4]


def _held(seed: int) -> dict[str, np.ndarray]:
    """A source and a VRF of special cells, where a huge stream cell meets a subnormal VRF cell and the other
    way round: a scan that is skipped where it is needed changes a product."""
    held = {"x": _special_cells((8, 64), seed), "H": _special_cells((64,), 10 + seed)}
    held["x"][:, 0], held["H"][0] = 2.0**100, 1e-40
    held["x"][:, 1], held["H"][1] = 1e-40, 2.0**100
    return held


@pytest.mark.parametrize("kind", KINDS)
def test_a_pass_run_again_from_its_plan_has_the_bits_of_the_steps_run_one_by_one(
        kind: int, monkeypatch: pytest.MonkeyPatch) -> None:
    held: dict[str, np.ndarray] = {}
    chain = _planned_pass(kind, held)
    for seed in range(3):  # the first evaluation plans the pass; the later ones find the plan
        held.update(_held(seed))
        got = run_pass(chain, "fused")
        expected = _pass_by_definition(chain, held["x"])
        assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes(), seed
        monkeypatch.setattr(vector_fused, "_plan", None)  # planned once: never again for this chain and source


@pytest.mark.parametrize("kind", KINDS)
def test_a_pass_planned_for_a_replicated_source_is_not_the_plan_of_another_layout_in_memory(kind: int) -> None:
    held = _held(5)
    chain = _planned_pass(kind, held)
    row = held["x"][:1]
    # Replicated along T (stride 0): T computed once; then rows that differ, on the same chain object.
    for source in (np.broadcast_to(row, (8, 64)), held["x"], np.broadcast_to(row, (8, 64))):
        held["x"] = source
        got = run_pass(chain, "fused")
        expected = _pass_by_definition(chain, source)
        assert got.shape == expected.shape and np.ascontiguousarray(got).tobytes() == expected.tobytes()


def test_a_planned_pass_raises_no_floating_point_warning() -> None:
    import warnings

    held = _held(3)
    with np.errstate(over="ignore"):  # past f32's range, so that the ops overflow
        held["x"] = held["x"] * np.float32(1e30)
    for kind in KINDS:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an overflow, a 0/0 or an invalid op's flag would raise here
            run_pass(_planned_pass(kind, held), "fused")


PICKS = [ClipBinaryOpF32.MIN, ClipBinaryOpF32.MAX, ClipBinaryOpF32.ABS_MIN, ClipBinaryOpF32.ABS_MAX]


@settings(max_examples=300)
@given(st.sampled_from(PICKS), st.sampled_from(list(BinaryArgMode)), st.sampled_from([(3, 4), (4,), (3, 1), ()]),
       st.booleans(), st.lists(CELLS, min_size=24, max_size=24))
def test_a_min_or_max_left_unscanned_has_the_bits_of_its_result_with_the_rules_applied(
        op: typing.Any, mode: BinaryArgMode, operand_shape: tuple[int, ...], transposed: bool, cells: list[int]) -> None:
    raw = np.array(cells, dtype=np.uint32).view(np.float32)
    stream = raw[:12].reshape(4, 3).T if transposed else raw[:12].reshape(3, 4)  # another memory order too
    operand = raw[12:12 + math.prod(operand_shape)].reshape(operand_shape)
    assert vector_ops.picks(op)
    a, b = vector_ops._arguments(mode, f32(stream), f32(operand))
    with np.errstate(all="ignore"):
        expected = f32(vector_ops.float_function(op)(a, b))  # the definition: the rules applied to the result
    # Read with its scan, and said clean (the rules applied, in the memory order given).
    clean = f32(raw[:12]).reshape(4, 3).T if transposed else f32(raw[:12]).reshape(3, 4)
    for got in (binary(op, stream, operand, mode), binary(op, clean, f32(operand), mode, clean=True, operand_clean=True)):
        # An array of its own whose cells fill its memory, in C order or (over a transposed stream) in Fortran order:
        # the rules fix such a result in place (numerics/scalars.py flush_f32).
        assert type(got) is np.ndarray and (got.flags.c_contiguous or got.flags.f_contiguous)
        assert got.dtype == np.float32 and got.tobytes() == expected.tobytes()
        assert not np.shares_memory(got, stream) and not np.shares_memory(got, operand)
        assert not np.shares_memory(got, clean)
    assert not any(vector_ops.picks(other) for other in (FpBinaryOp.ADD_F, FpBinaryOp.DIV_F, ClipBinaryOpF32.ADD))


@settings(max_examples=200)
@given(st.lists(CELLS, min_size=0, max_size=40))
def test_the_scan_for_subnormals_in_place_answers_as_the_scan_of_a_copy(cells: list[int]) -> None:
    x = np.array(cells, dtype=np.uint32).view(np.float32).reshape(-1, 1)
    expected = _subnormal(x)
    before = x.tobytes()
    assert _subnormal(x) == expected and x.tobytes() == before  # the usual scan leaves its input alone
    assert _subnormal(x, in_place=True) == expected


def _picked_by_definition(x: float, y: float, pick: str) -> float:
    """One cell of an f32 min or max: the other operand when one is NaN, and -0 below +0."""
    if math.isnan(x) or math.isnan(y):
        return y if math.isnan(x) else x
    key = lambda v: (v, math.copysign(1.0, v))  # noqa: E731 - the order with -0 below +0
    return max(x, y, key=key) if pick == "Max" else min(x, y, key=key)


@settings(max_examples=300)
@given(st.sampled_from(["Max", "Min"]), st.sampled_from([(3, 4), (4,), (3, 1), ()]),
       st.lists(st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, math.nan, math.inf]), st.floats(width=32)),
                min_size=24, max_size=24))
def test_a_min_or_max_looking_only_at_ties_of_zeros_has_the_bits_of_the_cell_by_cell_order(
        pick: str, operand_shape: tuple[int, ...], cells: list[float]) -> None:
    a = np.array(cells[:12], dtype=np.float32).reshape(3, 4)
    b = np.array(cells[12:12 + math.prod(operand_shape)], dtype=np.float32).reshape(operand_shape)
    got = (vector_ops.fmax if pick == "Max" else vector_ops.fmin)(a, b)
    pairs_ = zip(a.reshape(-1).tolist(), np.broadcast_to(b, a.shape).reshape(-1).tolist())
    expected = np.array([_picked_by_definition(x, y, pick) for x, y in pairs_], dtype=np.float32)
    # NaN is kept as numpy leaves it (the op applies the rules after); zeros and numbers by their bits.
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got).reshape(-1), nan)
    assert got.reshape(-1).view(np.uint32)[~nan].tolist() == expected.view(np.uint32)[~nan].tolist()


NON_NEGATIVE = st.one_of(st.sampled_from([0x00000000, 0x80000000, 0x00000001, 0x00800000, 0x7F800000, 0x7F7FFFFF,
                                          0x3F800000, 0x1F800000]), st.integers(0, 0x7F7FFFFF))


@settings(max_examples=200)
@given(st.integers(2, 40), st.integers(2, 5), st.lists(NON_NEGATIVE, min_size=200, max_size=200),
       st.sampled_from([IntraSliceReduceOpF32.ADD, InterSliceReduceOpF32.ADD]))
def test_a_sum_of_numbers_none_below_zero_in_one_reduce_has_the_bits_of_the_step_by_step_fold(
        rows: int, width: int, cells: list[int], op: ReduceOp) -> None:
    # Zeros of both signs, subnormals (flushed when read), the largest numbers (sums overflow), infinities.
    data = np.resize(np.array(cells, dtype=np.uint32), (rows, width)).view(np.float32)
    expected = _step_by_step(op, data, 0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vector_ops, "_partials", None)  # one reduce: no partial results kept
        got = reduce_fold(op, data, 0)
    assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()
    # A cell below zero, a NaN, one column, or rows not laid out one after another: the partials, same bits.
    for other in (np.where(data == data.max(), np.float32(-1.0), data), np.where(data == data.max(), np.nan, data),
                  data[:, :1], np.asfortranarray(data)):
        assert reduce_fold(op, other, 0).tobytes() == _step_by_step(op, other, 0).tobytes()


@pytest.mark.parametrize("op", [IntraSliceReduceOpF32.ADD, InterSliceReduceOpF32.ADD])
def test_a_sum_one_reduce_cannot_give_is_folded_through_its_partials(op: ReduceOp) -> None:
    # A partial through a subnormal (1.5 * 2**-126 - 2**-126), which the accumulator flushes; zeros of one sign.
    through = np.array([[1.5 * 2.0**-126, 1.0], [-(2.0**-126), 1.0], [2.0**-126, 1.0]], dtype=np.float32)
    # Numbers of one size, whose sum's rounding depends on the order: numpy sums a contiguous column pairwise.
    alike = np.random.default_rng(5).uniform(1, 2, (1000, 3)).astype(np.float32)
    for data in (through, np.full((3, 2), -0.0, dtype=np.float32), alike, np.ascontiguousarray(alike[:, :1]),
                 np.asfortranarray(alike)):
        assert reduce_fold(op, data, 0).tobytes() == _step_by_step(op, data, 0).tobytes()


# -- casts and the f32 rules in fewer numpy calls: arg-extremes, conversions by words, cells in place ----

# (word dtype, field, low) of each scan: f32 cells, bf16 narrowed (a pattern of exponent 1 redone too), bf16 widened.
SCANS = [(np.uint32, 0x7F800000, 0x00800000), (np.uint16, 0x7F80, 0x0100), (np.uint16, 0x7F80, 0x0080)]


@settings(max_examples=400)
@given(st.lists(CELLS, min_size=1, max_size=40), st.sampled_from(SCANS), st.sampled_from([(-1,), (1, -1, 1), ()]),
       st.sampled_from(["as drawn", "positive", "negative", "zeros"]))
def test_the_scan_of_a_small_array_finds_what_the_ufunc_scan_finds(cells: list[int], scan: typing.Any,
                                                                   shape: tuple[int, ...], signs: str) -> None:
    word, field, low = scan
    raw = np.array(cells, dtype=np.uint32)
    bits = (raw if word is np.uint32 else (raw >> 16) ^ raw).astype(word)  # both halves feed the 16-bit cells
    sign = word(1 << (8 * bits.itemsize - 1))
    if signs != "as drawn":  # arrays of one sign, and normal cells among zeros, take their own ways
        bits = bits & word(sign - 1) if signs in ("positive", "zeros") else bits | sign
        if signs == "zeros":
            bits[::2] = 0
    bits = bits[:1].reshape(()) if shape == () else bits.reshape(shape)
    words = scalars._WORDS32 if word is np.uint32 else scalars._WORDS16
    assert scalars._small_extremes(bits, words, field, low).tolist() == _extremes(bits.reshape(-1), field, low).tolist()


@settings(max_examples=200)
@given(st.lists(CELLS, min_size=1, max_size=24), st.sampled_from([(-1,), (2, -1), ()]), st.booleans())
def test_small_casts_checked_by_arg_extremes_have_the_bits_of_the_ufunc_scan(cells: list[int], shape: tuple[int, ...],
                                                                            strided: bool) -> None:
    raw = np.array(cells * 2, dtype=np.uint32)  # an even count, for two rows
    x = raw.view(np.float32)
    x = x[:1].reshape(()) if shape == () else x.reshape(shape)
    if strided and x.ndim:
        x = x.T if x.ndim > 1 else x[::-1]
    stored = (raw >> 16).astype(np.uint16).view(tcp.bf16.numpy)
    stored = stored[:1].reshape(()) if shape == () else stored.reshape(shape)

    def run() -> list[typing.Any]:
        return [cast(x, "bf16"), cast(stored, "bf16"), widen_values(stored, "bf16"), f32(x),
                has_special_f32(x), vector_ops.flush_f32(np.array(x))]

    got = run()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scalars, "_SMALL_SCAN", 0)  # every array scanned by the ufunc passes
        expected = run()
    for fast, slow in zip(got, expected, strict=True):
        if isinstance(slow, bool):
            assert fast == slow
        else:
            assert fast.dtype == slow.dtype and fast.shape == slow.shape and fast.tobytes() == slow.tobytes()


# Around the bounds the conversions by words check: the last f32 patterns rounding to a bf16 exponent of 1 and
# the first rounding to 2 (a tie to even on each side), the last finite ones and those rounding up to infinity,
# and NaNs whose rounding sum wraps past the sign.
WORD_EDGES = [0x00FF7FFF, 0x00FF8000, 0x00FE8000, 0x00FF8001, 0x7F7F7FFF, 0x7F7F8000, 0x7F7E8000, 0xFF7F8000,
              0x7FFF8000, 0xFFFF8000, 0x7FFFFFFF, 0x80FF8000, 0x3F808000, 0x3F818000, 0xBF808000, 0x00008000]
WORD_CELLS = st.one_of(st.sampled_from(SPECIAL_BITS + WORD_EDGES), st.integers(0, 2**32 - 1))


@settings(max_examples=300)
@given(st.lists(WORD_CELLS, min_size=1, max_size=24).map(lambda c: c * 2), st.sampled_from(["C", "T", "every other"]))
def test_conversions_by_words_have_the_bits_of_ml_dtypes_conversions(cells: list[int], order: str) -> None:
    raw = np.array(cells, dtype=np.uint32)
    x = raw.view(np.float32).reshape(2, -1)
    stored = (raw >> 16).astype(np.uint16).view(tcp.bf16.numpy).reshape(2, -1)
    canonical = cast(x, "bf16")
    views = {"C": lambda a: a, "T": lambda a: a.T, "every other": lambda a: a[:, ::2]}[order]

    def run() -> list[np.ndarray]:
        return [cast(views(x), "bf16"), widen_values(views(stored), "bf16"),
                widen_values(views(canonical), "bf16", canonical=True), convert(views(x), "f32", "bf16")]

    with pytest.MonkeyPatch.context() as patch:
        for threshold in ("_BY_WORDS", "_NARROW_BY_WORDS"):
            patch.setattr(scalars, threshold, 1)  # every array converted by words
        got = run()
        for threshold in ("_BY_WORDS", "_NARROW_BY_WORDS"):
            patch.setattr(scalars, threshold, 2**62)  # every array converted by ml_dtypes
        expected = run()
    for words, loop in zip(got, expected, strict=True):
        assert words.dtype == loop.dtype and words.shape == loop.shape and words.tobytes() == loop.tobytes()


@settings(max_examples=200)
@given(st.lists(CELLS, min_size=24, max_size=24), st.sampled_from([(1, 0), (2, 0, 1), (0, 2, 1), (1, 2, 0)]))
def test_a_flush_of_cells_filling_their_memory_fixes_them_in_place_with_the_bits_of_a_copy(cells: list[int],
                                                                                             axes: tuple[int, ...]) -> None:
    values = np.array(cells, dtype=np.uint32).view(np.float32).reshape((4, 6) if len(axes) == 2 else (2, 3, 4))
    x = values.copy().transpose(axes)  # a ufunc's result over a transposed operand is laid out so
    before = np.ascontiguousarray(x)
    expected = vector_ops.f32(before)
    assert has_special_f32(x) == has_special_f32(before)
    got = vector_ops.flush_f32(x)
    assert got is x and got.shape == expected.shape and got.tobytes() == expected.tobytes()
    gaps = values.copy()[..., ::2]  # writeable, but its cells do not fill their memory
    read_only = values.copy().transpose(axes)
    read_only.setflags(write=False)
    for other in (gaps, read_only):  # copied, and left alone
        kept = other.tobytes()
        fixed = vector_ops.flush_f32(other)
        assert fixed is not other and fixed.flags.c_contiguous and other.tobytes() == kept
        assert fixed.tobytes() == vector_ops.f32(np.ascontiguousarray(other)).tobytes()


def test_a_canonical_widening_by_words_is_laid_out_as_the_source_as_astype_lays_it_out() -> None:
    stored = cast(np.random.default_rng(5).standard_normal((128, 160)).astype(np.float32), "bf16")
    for view in (stored, stored.T, stored[:, ::2]):
        got, expected = widen_values(view, "bf16", canonical=True), view.astype(np.float32)
        assert view.size >= scalars._BY_WORDS and got.strides == expected.strides
        assert got.tobytes() == expected.tobytes()


@settings(max_examples=300)
@given(st.lists(st.sampled_from(SPECIAL_BITS), min_size=1, max_size=6), st.integers(1, 40), st.sampled_from(SCANS),
       st.booleans())
def test_the_ufunc_scan_of_cells_among_zeros_finds_what_the_exponent_rule_names(cells: list[int], count: int,
                                                                                 scan: typing.Any, scratch: bool) -> None:
    # Zeros of both signs, normal cells, and a few drawn ones (special or not): the scan's way past the zeros.
    word, field, low = scan
    sign = 1 << (8 * np.dtype(word).itemsize - 1)
    normal = (field + low) // 2 & ~(low - 1)
    base = [0, sign, normal, sign | normal] * count
    raw = np.array(cells, dtype=np.uint32)
    drawn = (raw if word is np.uint32 else raw >> 16).astype(word)
    bits = np.concatenate([np.array(base, dtype=word), drawn])
    np.random.default_rng(count).shuffle(bits)
    magnitude = bits & word(sign - 1)
    expected = np.flatnonzero((magnitude != 0) & ((magnitude < low) | (magnitude >= field))).tolist()
    work = np.empty(bits.size, dtype=word) if scratch else None
    assert _extremes(bits, field, low, work).tolist() == expected


# -- a pass's result marked as converted, and a converted f32 narrowed by the plain rounding ----------------------

@pytest.mark.parametrize("kind", KINDS)
def test_a_pass_marks_its_result_only_when_the_rules_left_nothing_to_fix(kind: int) -> None:
    """A pass whose last step leaves f32 with the rules applied marks its result (evaluate/vector_fused.py
    run_pass): flushing it again changes no bit. A pass ending on i32 marks nothing."""
    held = _held(7)
    chain = _planned_pass(kind, held)
    chain.cache.clear()
    got = run_pass(chain, "fused")
    mark = chain.cache.get("fused:canonical")
    assert (mark is None) is (kind == 3), kind
    if mark is not None:
        assert mark is got and got.dtype == np.float32
        assert scalars.flush_f32(np.array(got)).tobytes() == np.ascontiguousarray(got).tobytes()
        assert converted(got, chain, "fused") and not converted(got.copy(), chain, "fused")


def test_a_converted_f32_narrows_to_the_bits_of_the_rngd_cast() -> None:
    """f32 that came out of the RNGD rules (no subnormal, only the canonical NaN) narrows to bf16 by ml_dtypes'
    rounding with the bits of the RNGD cast, in C and in Fortran order (numerics/moves.py convert)."""
    cells = scalars.flush_f32(_special_cells((64, 48), 11))
    edges = (np.arange(256, dtype=np.uint32)[:, None] << 23 | np.array(
        [0, 1, 0x7FFF, 0x8000, 0x8001, 0x18000, 0x7FFFFF], dtype=np.uint32)).reshape(-1)
    edges = scalars.flush_f32(np.concatenate([edges, edges | np.uint32(0x80000000)]).view(np.float32))
    for values in (cells, cells.T, edges):
        got = convert(values, "f32", "bf16", canonical=True)
        assert got.tobytes() == cast(values, "bf16").tobytes() and got.shape == values.shape
