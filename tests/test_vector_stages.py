"""The vector engine as typed stages: the reference's tier A vector cases on both evaluators against numpy
(docs/stage-rules.md §6, docs/runtime.md §3.9), with the reference's sizes and expected values.

The common shape: ``A = 512`` over Slice ``A / 2``, a stream of one element per slice and Time step
padded to a flit, ``C[1][A % 2 # 8]``; random inputs use seed 42.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.errors import LayoutError
from tcpdsl.numerics.vector_ops import binary

A = tcp.axis("A", 512)
R = tcp.axis("R", 4)
R16 = tcp.axis("R16", 16)
B = tcp.axis("B", 256)

dev = tcp.Device()
EVALUATORS = ["fused", "simulate"]
RNG_SEED = 42

Flat = tcp.CollectTensor[tcp.i32, m["1"], m["1"], m["A / 2"], m["1"], m["A % 2 # 8"]]
FlatF = tcp.CollectTensor[tcp.f32, m["1"], m["1"], m["A / 2"], m["1"], m["A % 2 # 8"]]


@pytest.fixture(params=EVALUATORS)
def evaluator(request: pytest.FixtureRequest) -> Iterator[str]:
    with tcp.evaluator(request.param):
        yield request.param


def ints(*shape: int, low: int = -1000, high: int = 1000) -> np.ndarray[Any, Any]:
    return np.random.default_rng(RNG_SEED).integers(low, high, size=shape).astype(np.int32)


def floats(*shape: int) -> np.ndarray[Any, Any]:
    return np.random.default_rng(RNG_SEED).standard_normal(shape).astype(np.float32)


def tagged(stream: Any) -> Any:
    return stream.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO)


MUL0 = tcp.FpBinaryOp.MUL_F(tcp.FpMulAlu.MUL0)


# -- 5.1 single-stream chains ---------------------------------------------------------------------------------


def test_full_pipeline(evaluator: str) -> None:
    x = ints(512)
    out = (tagged(Flat(dev.main, tcp.Tensor(x, "A")))
           .vector_fxp(tcp.FxpBinaryOp.ADD_FXP, 100)
           .vector_fxp_to_fp(31)
           .vector_narrow_trim(out_packet=m["A % 2 # 4"])
           .vector_fp_binary(MUL0, 2.5)
           .vector_widen_pad(out_packet=m["A % 2 # 8"])
           .vector_fp_to_fxp(31)
           .vector_clip(tcp.ClipBinaryOpI32.MAX, 0)
           .vector_clip(tcp.ClipBinaryOpI32.MIN, 1000)
           .vector_final())
    # fp_to_fxp rounds half away from zero: (x + 100) * 2.5 is exact in f32 here.
    scaled = (x.astype(np.float64) + 100) * 2.5
    expected = np.clip(np.sign(scaled) * np.floor(np.abs(scaled) + 0.5), 0, 1000).astype(np.int32)
    got = out.to_tensor().to_numpy("A")
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, expected)


def trimmed(stream: Any) -> Any:
    return tagged(stream).vector_narrow_trim(out_packet=m["A % 2 # 4"])


def widened(stream: Any) -> Any:
    return stream.vector_widen_pad(out_packet=m["A % 2 # 8"])


@pytest.mark.parametrize(("name", "step", "model"), [
    ("neg_offset", lambda s: s.vector_fp_binary(tcp.FpBinaryOp.ADD_F, -100.0), lambda x: x - np.float32(100)),
    ("fp_unary", lambda s: s.vector_fp_unary(tcp.FpUnaryOp.EXP), np.exp),
    ("fp_binary_mode10", lambda s: s.vector_fp_binary(tcp.FpBinaryOp.SUB_F, 2.0, mode=tcp.BinaryArgMode.MODE10),
     lambda x: np.float32(2) - x),
    ("fp_div_mode10", lambda s: s.vector_fp_div(2.0, mode=tcp.BinaryArgMode.MODE10), lambda x: np.float32(2) / x),
])
def test_fp_ops(evaluator: str, name: str, step: Callable[[Any], Any], model: Callable[[Any], Any]) -> None:
    x = floats(512)
    out = widened(step(trimmed(FlatF(dev.main, tcp.Tensor(x, "A"))))).vector_final()
    np.testing.assert_allclose(out.to_tensor().to_numpy("A"), model(x), rtol=2e-7)


def test_stash_across_narrow_and_widen(evaluator: str) -> None:
    x = floats(512)
    out = (tagged(FlatF(dev.main, tcp.Tensor(x, "A"))).vector_stash()
           .vector_narrow_trim(out_packet=m["A % 2 # 4"])
           .vector_fp_binary(MUL0, 2.0)
           .vector_widen_pad(out_packet=m["A % 2 # 8"])
           .vector_clip(tcp.ClipBinaryOpF32.MAX, tcp.STASH)
           .vector_final())
    np.testing.assert_array_equal(out.to_tensor().to_numpy("A"), np.maximum(2 * x, x))


def test_stash_after_widen(evaluator: str) -> None:
    x = floats(512)
    out = (widened(trimmed(FlatF(dev.main, tcp.Tensor(x, "A"))).vector_fp_binary(MUL0, 2.0))
           .vector_clip(tcp.ClipBinaryOpF32.MAX, 0.0)
           .vector_stash()
           .vector_clip(tcp.ClipBinaryOpF32.ADD, tcp.STASH)
           .vector_final())
    np.testing.assert_array_equal(out.to_tensor().to_numpy("A"), 2 * np.maximum(2 * x, 0))


def test_vrf_broadcast_along_the_time_axis(evaluator: str) -> None:
    # i32 [A, B = 256]; the stream holds B on Time, the VRF holds B and is read by every slice.
    x, v = ints(512, 256), ints(256, low=-50, high=50)
    stream = tcp.CollectTensor[tcp.i32, m["1"], m["1"], m["A / 2"], m["B"], m["A % 2 # 8"]](dev.main,
                                                                                            tcp.Tensor(x, "A B"))
    vrf = (tcp.CollectTensor[tcp.i32, m["1"], m["1"], m["A / 2"], m["B / 8"], m["B % 8"]](dev.sub, tcp.Tensor(v, "B"))
           .to_vrf(element=m["B"]))
    out = tagged(stream).vector_fxp(tcp.FxpBinaryOp.ADD_FXP, vrf).vector_final()
    np.testing.assert_array_equal(out.to_tensor().to_numpy("A B"), x + v[None, :])


@pytest.mark.parametrize(("slices", "cluster"), [(64, "1"), (128, "1"), (256, "1"), (256, "P / 1024")])
def test_pe_count_add(evaluator: str, slices: int, cluster: str) -> None:
    size = 4 * slices * (2 if cluster != "1" else 1)
    P = tcp.axis("P", size)  # noqa: N806 - an axis, named as the reference names it
    slice_ = f"P / 4 % {slices}" if cluster != "1" else "P / 4"
    grid = tcp.CollectTensor[tcp.i32, m["1"], m[cluster], m[slice_], m["1"], m["P % 4 # 8"]]
    x = ints(size)
    device = tcp.Device(tcp.Topology(pes=8)) if cluster != "1" else dev
    out = tagged(grid(device.main, tcp.Tensor(x, m["P"]))).vector_fxp(tcp.FxpBinaryOp.ADD_FXP, 1).vector_final()
    assert P.n == size
    np.testing.assert_array_equal(out.to_tensor().to_numpy("P"), x + 1)


def test_fxp_chain_refuses_a_second_use_of_an_alu() -> None:
    s = tagged(Flat(dev.main, tcp.Tensor(ints(512), "A"))).vector_fxp(tcp.FxpBinaryOp.ADD_FXP, 10)
    s = s.vector_fxp(tcp.FxpBinaryOp.MUL_INT, 2)
    with pytest.raises(LayoutError) as info:
        s.vector_fxp(tcp.FxpBinaryOp.SUB_FXP, 5)
    assert (info.value.stage, info.value.rule, info.value.detail) == (
        "vector_fxp", "AluOnce", "vector_fxp: FxpAdd is already in use")


# -- 5.2 intra-slice and inter-slice reduce --------------------------------------------------------------------

def saturating_sum(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The reference's fold: ``saturating_add`` step by step, from 0."""
    acc = np.zeros(x.shape[1:], dtype=np.int64)
    for row in x:
        acc = np.clip(acc + row, -2**31, 2**31 - 1)
    return acc.astype(np.int32)


INTRA = [
    (tcp.IntraSliceReduceOpI32.ADD_SAT, "i32", saturating_sum),
    (tcp.IntraSliceReduceOpI32.MAX, "i32", lambda x: x.max(0)),
    (tcp.IntraSliceReduceOpI32.MIN, "i32", lambda x: x.min(0)),
    (tcp.IntraSliceReduceOpF32.ADD, "f32", lambda x: x.sum(0, dtype=np.float32)),
    (tcp.IntraSliceReduceOpF32.MAX, "f32", lambda x: x.max(0)),
    (tcp.IntraSliceReduceOpF32.MIN, "f32", lambda x: x.min(0)),
]


@pytest.mark.parametrize(("op", "dtype", "model"), INTRA, ids=[f"{op.reference}_{d}" for op, d, _ in INTRA])
def test_intra_slice_reduce(evaluator: str, op: Any, dtype: str, model: Callable[[Any], Any]) -> None:
    x = ints(4, 512, low=-2**31, high=2**31 - 1) if dtype == "i32" else floats(4, 512)
    scalar = tcp.i32 if dtype == "i32" else tcp.f32
    stream = tcp.CollectTensor[scalar, m["1"], m["1"], m["A / 2"], m["R"], m["A % 2 # 8"]](dev.main,
                                                                                         tcp.Tensor(x, "R A"))
    out = (tagged(stream).vector_narrow_trim(out_packet=m["A % 2 # 4"])
           .vector_intra_slice_reduce(op, reduce=R, out_time=m["1"], out_packet=m["A % 2 # 4"])
           .vector_widen_pad(out_packet=m["A % 2 # 8"])
           .vector_final())
    np.testing.assert_allclose(out.to_tensor().to_numpy("A"), model(x), rtol=1e-6)


def test_intra_slice_reduce_over_time_and_packet(evaluator: str) -> None:
    x = floats(512, 16)
    stream = tcp.CollectTensor[tcp.f32, m["1"], m["1"], m["A / 2"], m["A % 2, R16 / 8"], m["R16 % 8"]](
        dev.main, tcp.Tensor(x, "A R16"))
    out = (tagged(stream)
           .vector_narrow_split(out_time=m["A % 2, R16 / 4"], out_packet=m["R16 % 4"])
           .vector_intra_slice_reduce(tcp.IntraSliceReduceOpF32.ADD, reduce=R16, out_time=m["A % 2"],
                                      out_packet=m["1 # 4"])
           .vector_widen_pad(out_packet=m["1 # 8"])
           .vector_final())
    np.testing.assert_allclose(out.to_tensor().to_numpy("A"), x.sum(1), rtol=1e-5, atol=1e-5)


def test_a_pass_result_transposes_into_the_packet(evaluator: str) -> None:
    """A row reduce's one value per Time step, moved into one packet (two f32 a row) by the transpose engine:
    the result of ``vector_final`` goes to ``transpose`` as a collected stream does (docs/stage-rules.md §5.2)."""
    x = floats(512, 16)
    stream = tcp.CollectTensor[tcp.f32, m["1"], m["1"], m["A / 2"], m["A % 2, R16 / 8"], m["R16 % 8"]](
        dev.main, tcp.Tensor(x, "A R16"))
    final = (tagged(stream)
             .vector_narrow_split(out_time=m["A % 2, R16 / 4"], out_packet=m["R16 % 4"])
             .vector_intra_slice_reduce(tcp.IntraSliceReduceOpF32.MAX, reduce=R16, out_time=m["A % 2"],
                                        out_packet=m["1 # 4"])
             .vector_widen_pad(out_packet=m["1 # 8"])
             .vector_final())
    out = final.transpose(out_time=m["1"], out_packet=m["A % 2 # 8"]).commit_trim(out_packet=m["A % 2"])
    np.testing.assert_array_equal(out.commit(element=m["A % 2"]).to_tensor().to_numpy("A"), x.max(1))


INTER = [
    (tcp.InterSliceReduceOpI32.ADD_SAT, "i32", saturating_sum),
    (tcp.InterSliceReduceOpI32.MAX, "i32", lambda x: x.max(0)),
    (tcp.InterSliceReduceOpF32.ADD, "f32", lambda x: x.sum(0, dtype=np.float32)),
]


@pytest.mark.parametrize(("op", "dtype", "model"), INTER, ids=[f"{op.reference}_{d}" for op, d, _ in INTER])
def test_inter_slice_reduce(evaluator: str, op: Any, dtype: str, model: Callable[[Any], Any]) -> None:
    x = ints(4, 512, low=-2**31, high=2**31 - 1) if dtype == "i32" else floats(4, 512)
    scalar = tcp.i32 if dtype == "i32" else tcp.f32
    stream = tcp.CollectTensor[scalar, m["1"], m["1"], m["A / 8, R"], m["1"], m["A % 8"]](dev.main,
                                                                                        tcp.Tensor(x, "R A"))
    out = (stream.vector_init()
           .vector_inter_slice_reduce(op, out_slice=m["A / 8, 1 # 4"], out_time=m["1"])
           .vector_final())
    np.testing.assert_allclose(out.to_tensor().to_numpy("A"), model(x), rtol=1e-6)


# -- 4.6 to_vrf at capacity ------------------------------------------------------------------------------------


def test_to_vrf_holds_8192_bytes_and_no_more() -> None:
    for size, fits in ((2048, True), (4096, False)):
        W = tcp.axis("W", size)  # noqa: N806
        stream = tcp.CollectTensor[tcp.i32, m["1"], m["1"], m["1 # 64"], m["W / 8"], m["W % 8"]](
            dev.sub, tcp.Tensor(np.arange(size, dtype=np.int32), "W"))
        if fits:
            assert W.n == 2048 and isinstance(stream.to_vrf(element=m["W"]), tcp.VrfTensor)  # 8192 bytes: full
            continue
        with pytest.raises(LayoutError) as info:
            stream.to_vrf(element=m["W"])
        assert (info.value.stage, info.value.rule) == ("to_vrf", "ExceedsCapacity")
        assert info.value.detail.startswith("to_vrf: VRF data of 16384 bytes")


# -- a pass on a contraction result, and the argument modes ---------------------------------------------------


def test_a_pass_on_a_contraction_result(evaluator: str) -> None:
    K = tcp.axis("K", 32)  # noqa: N806
    C = tcp.axis("C", 8)  # noqa: N806
    x, w = floats(32), np.random.default_rng(7).standard_normal((8, 32)).astype(np.float32)
    grid = (m["1"], m["1"], m["1 # 64"])
    stream = tcp.CollectTensor[tcp.bf16, grid[0], grid[1], grid[2], m["K / 16"], m["K % 16"]](dev.main,
                                                                                            tcp.Tensor(x, "K"))
    trf = tcp.TrfTensor[tcp.bf16, grid[0], grid[1], grid[2], m["C"], m["K"]](tcp.Tensor(w, "C K"))
    out = (stream.contract_outer(trf, out_time=m["1"], out_packet=m["K"])
           .contract_packet(out_packet=m["1"])
           .contract_time(out_time=m["1"])
           .contract_lane(out_time=m["1"], out_packet=m["C"])
           .vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO)
           .vector_clip(tcp.ClipBinaryOpF32.MAX, 0.0)
           .vector_final())
    bf = lambda a: a.astype(tcp.bf16.numpy).astype(np.float64)  # noqa: E731
    expected = np.maximum(bf(w) @ bf(x), 0)
    np.testing.assert_allclose(out.to_tensor().to_numpy("C"), expected, rtol=1e-5, atol=1e-5)
    assert K.n == 32 and C.n == 8


def test_ternary_mode120_and_logic_modes(evaluator: str) -> None:
    x = floats(512)
    fma = widened(trimmed(FlatF(dev.main, tcp.Tensor(x, "A")))
                  .vector_fp_ternary(tcp.FpTernaryOp.FMA_F, (2.0, 1.0), mode=tcp.TernaryArgMode.MODE120)).vector_final()
    np.testing.assert_array_equal(fma.to_tensor().to_numpy("A"), np.float32(2) * np.float32(1) + x)  # fma(2, 1, x)
    i = ints(512)
    xor = tagged(Flat(dev.main, tcp.Tensor(i, "A"))).vector_logic(
        tcp.LogicBinaryOpI32.BIT_XOR, 0xFF, mode=tcp.BinaryArgMode.MODE11).vector_final()
    np.testing.assert_array_equal(xor.to_tensor().to_numpy("A"), np.zeros(512, dtype=np.int32))


def test_reinterpret_abs_is_bitwise(evaluator: str) -> None:
    corners = np.array([0.0, -0.0, 1.5, -2.5, np.finfo(np.float32).tiny, -np.inf] * 86, dtype=np.float32)[:512]
    out = (tagged(FlatF(dev.main, tcp.Tensor(corners, "A")))
           .vector_reinterpret(tcp.i32)
           .vector_logic(tcp.LogicBinaryOpI32.BIT_AND, 0x7FFFFFFF)
           .vector_reinterpret(tcp.f32)
           .vector_final())
    got = out.to_tensor().to_numpy("A")
    assert np.array_equal(got.view(np.uint32), np.abs(corners).view(np.uint32))


def test_a_wrong_op_or_operand_is_a_tcp_error() -> None:
    s = tagged(FlatF(dev.main, tcp.Tensor(floats(512), "A")))
    with pytest.raises(LayoutError) as info:
        s.vector_clip(tcp.FpUnaryOp.EXP, 1.0)  # type: ignore[call-overload]
    assert (info.value.rule, info.value.detail) == (
        "Op", "vector_clip: the op must be a ClipBinaryOpI32 or ClipBinaryOpF32, got FpUnaryOp.EXP")
    with pytest.raises(LayoutError) as info:
        s.vector_clip(tcp.ClipBinaryOpF32.MAX, "1")  # type: ignore[call-overload]
    assert info.value.detail == "vector_clip: an operand is a number, tcp.STASH or a VrfTensor, got a str"
    with pytest.raises(LayoutError) as info:
        tagged(Flat(dev.main, tcp.Tensor(ints(512), "A"))).vector_fxp(tcp.FxpBinaryOp.ADD_FXP, 2**40)
    assert info.value.detail == "vector_fxp: a constant operand holds 32 bits, but 1099511627776 does not fit in them"


# -- a law: the two evaluators agree, and agree with the ops applied in order ---------------------------------

I32_OPS = [
    ("fxp", tcp.FxpBinaryOp.ADD_FXP_SAT), ("fxp", tcp.FxpBinaryOp.MUL_INT), ("fxp", tcp.FxpBinaryOp.ARITH_RIGHT_SHIFT),
    ("logic", tcp.LogicBinaryOpI32.BIT_XOR), ("logic", tcp.LogicBinaryOpI32.LEFT_SHIFT),
    ("clip", tcp.ClipBinaryOpI32.MAX), ("clip", tcp.ClipBinaryOpI32.ABS_MIN),
]


@settings(max_examples=25, deadline=None)
@given(
    picks=st.lists(st.sampled_from(range(len(I32_OPS))), min_size=1, max_size=4, unique=True),
    constants=st.lists(st.integers(-2**31, 2**31 - 1), min_size=4, max_size=4),
    modes=st.lists(st.sampled_from(list(tcp.BinaryArgMode)), min_size=4, max_size=4),
    seed=st.integers(0, 2**16),
)
def test_evaluators_agree_with_the_ops_in_hardware_order(picks: list[int], constants: list[int],
                                                         modes: list[Any], seed: int) -> None:
    order = {"logic": 0, "fxp": 1, "clip": 2}  # Logic, Fxp and Clip run in this order
    chosen = sorted((I32_OPS[i] for i in picks), key=lambda kind_op: order[kind_op[0]])
    x = np.random.default_rng(seed).integers(-2**31, 2**31 - 1, size=512).astype(np.int32)
    expected = x
    results = []
    for name in EVALUATORS:
        with tcp.evaluator(name):
            stream = tagged(Flat(dev.main, tcp.Tensor(x, "A")))
            for (kind, op), constant, mode in zip(chosen, constants, modes):
                stream = getattr(stream, f"vector_{kind}")(op, constant, mode=mode)
            results.append(stream.vector_final().to_tensor().to_numpy("A"))
    for (_, op), constant, mode in zip(chosen, constants, modes):
        expected = binary(op, expected, constant, mode)
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], expected)


@pytest.mark.parametrize("chips", [2, 4])
def test_multi_chip_add(evaluator: str, chips: int) -> None:
    # The reference's two_chip_add / four_chip_add: a live axis on Chip and on Cluster, 256 slices each.
    size = 4 * 256 * 2 * chips
    P = tcp.axis("P", size)  # noqa: N806
    grid = tcp.CollectTensor[tcp.i32, m["P / 2048"], m["P / 1024 % 2"], m["P / 4 % 256"], m["1"], m["P % 4 # 8"]]
    x = ints(size)
    device = tcp.Device(tcp.Topology(chips=chips, pes=8))
    out = tagged(grid(device.main, tcp.Tensor(x, m["P"]))).vector_fxp(tcp.FxpBinaryOp.ADD_FXP, 1).vector_final()
    assert P.n == size
    np.testing.assert_array_equal(out.to_tensor().to_numpy("P"), x + 1)


@tcp.kernel
def relu_kernel(x: FlatF) -> object:
    return tagged(x).vector_clip(tcp.ClipBinaryOpF32.MAX, 0.0).vector_final()


def test_the_runner_checks_a_vector_pass_against_its_own_model(evaluator: str) -> None:
    result = tcp.try_kernel(relu_kernel, evaluator=evaluator)
    assert (result.status, result.max_error) == ("PASS", 0.0)
    assert [(p.steps, p.cycles) for p in result.passes] == [(4, 1)]  # init, tag, clip, final


@tcp.kernel
def bits_kernel(x: FlatF) -> object:
    return tagged(x).vector_logic(tcp.LogicBinaryOpF32.BIT_AND, 1.0).vector_final()


def test_the_runner_skips_a_pass_whose_ops_the_oracle_does_not_model() -> None:
    result = tcp.try_kernel(bits_kernel)
    assert (result.status, result.skipped) == (
        "SKIP", "the oracle does not model vector_logic's bit-level BitAnd; compare it with a numpy model of the pass")
