"""What runners use: kernel introspection with seeded random inputs, and the einsum oracle."""

from __future__ import annotations

import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.errors import LayoutError
from tcpdsl.harness.oracle import check, einsum_oracle
from tcpdsl.harness.kernel_spec import KernelSpecError, describe, kernels_in, random_case, random_inputs, random_logical
from tcpdsl.tensors.results import ContractTensor
from tcpdsl.tensors.sources import CollectTensor

I = tcp.axis("I", 64)  # noqa: E741
J = tcp.axis("J", 64)
K = tcp.axis("K", 32)
M = tcp.axis("M", 2)
N = tcp.axis("N", 2)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["I / 32, J / 32 # 128"]

Stream = CollectTensor[tcp.i8, Chip, Cluster, Slice, m["I % 32, J / 8 % 4"], m["K"]]
Weights = CollectTensor[tcp.i8, Chip, Cluster, Slice, m["J % 8, J / 8 % 4"], m["K"]]
Out = ContractTensor[tcp.i32, Chip, Cluster, Slice, m["I % 32, J / 8 % 4"], m["J % 8"]]


@tcp.kernel
def tiled(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=m["J % 8"], element=m["J / 8 % 4, K"])
    return (
        x.contract_outer(trf, out_time=m["I % 32, J / 8 % 4"], out_packet=m["K"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["I % 32, J / 8 % 4"])
        .contract_lane(out_time=m["I % 32, J / 8 % 4"], out_packet=m["J % 8"])
    )


def not_a_kernel(x: Stream) -> None: ...


@tcp.kernel
def untyped(x: int) -> None: ...


@tcp.kernel
def with_setting(x: Stream, scale: int = 2) -> None: ...


def test_describe_finds_the_fully_held_axes() -> None:
    spec = describe(tiled)
    assert spec.name == "tiled"
    assert [p.name for p in spec.params] == ["x", "w"]
    x, w = spec.params
    # The stream's layout holds only J / 32 and J / 8 % 4 of J, which the weights hold whole: the
    # stream is reused across J % 8, a broadcast over J. Likewise the weights over I / 32.
    assert x.axes == ("I", "K") and x.sizes == {"I": 64, "K": 32}
    assert w.axes == ("J", "K")
    assert x.family == "CollectTensor" and x.dtype is tcp.i8
    assert spec.returns is Out


def test_describe_leaves_defaulted_settings_alone() -> None:
    assert [p.name for p in describe(with_setting).params] == ["x"]


def test_describe_refuses_what_it_cannot_drive() -> None:
    with pytest.raises(KernelSpecError, match="is not a @tcp.kernel function"):
        describe(not_a_kernel)
    with pytest.raises(KernelSpecError, match=r"parameter x of untyped is an int without the values it may take; "
                       r"annotate it as Annotated\[int, range\(\.\.\.\)\] \(or give it a default\)"):
        describe(untyped)


def test_kernels_in_describes_a_kernel_it_cannot_drive_with_the_reason() -> None:
    import sys

    found = {spec.name: spec for spec in kernels_in(sys.modules[__name__])}
    assert found["tiled"].skip is None
    reason = found["untyped"].skip
    assert reason is not None and "parameter x of untyped" in reason and found["untyped"].params == ()
    with pytest.raises(KernelSpecError, match="parameter x of untyped"):
        random_case(found["untyped"])


def test_random_case_is_seeded_and_consistent() -> None:
    one = random_case(tiled, seed=5)
    two = random_case(tiled, seed=5)
    other = random_logical(tiled, seed=6)
    for name in ("x", "w"):
        np.testing.assert_array_equal(one.logical[name].values, two.logical[name].values)
        assert not np.array_equal(one.logical[name].values, other[name].values)
        assert one.logical[name].values.dtype == np.int8
        np.testing.assert_array_equal(one.inputs[name].to_tensor().values, one.logical[name].values)  # type: ignore[attr-defined]
    assert set(random_inputs(tiled, seed=5)) == {"x", "w"}


def test_kernel_on_random_inputs_agrees_with_the_oracle() -> None:
    case = random_case(tiled, seed=1)
    result = tiled(**case.inputs)
    verdict = check(result, case.logical)
    assert verdict.exact and verdict.passed and verdict.max_error == 0
    x = case.logical["x"].to_numpy("I K").astype(np.int64)
    w = case.logical["w"].to_numpy("J K").astype(np.int64)
    np.testing.assert_array_equal(result.to_tensor().to_numpy("I J"), x @ w.T)


def test_check_notices_a_wrong_result() -> None:
    case = random_case(tiled, seed=1)
    result = tiled(**case.inputs)
    result._buffers["fused"] = result._flat() + np.int32(1)
    with tcp.evaluator("fused"):
        verdict = check(result, case.logical)
    assert not verdict.passed and verdict.max_error == 1


# -- the oracle on its own -----------------------------------------------------------------------
def _t(values: object, axes: str, **sizes: int) -> tcp.Tensor:
    return tcp.Tensor(np.asarray(values), axes, sizes=sizes)


def test_oracle_matmul_vector() -> None:
    lhs = _t(np.arange(1, 7, dtype=np.float32).reshape(2, 3), "M K", M=2, K=3)
    rhs = _t(np.arange(1, 7, dtype=np.float32).reshape(3, 2), "K N", K=3, N=2)
    np.testing.assert_array_equal(einsum_oracle(lhs, rhs, "M N"), [[22, 28], [49, 64]])
    np.testing.assert_array_equal(einsum_oracle(lhs, rhs, "N M"), [[22, 49], [28, 64]])


def test_oracle_broadcasts_output_only_axes() -> None:
    lhs = _t([1.0, 2.0], "M", M=2)
    rhs = _t([3.0, 4.0], "N", N=2)
    out = einsum_oracle(lhs, rhs, {"M": 2, "T": 3, "N": 2})
    assert out.shape == (2, 3, 2)
    np.testing.assert_array_equal(out[:, 1, :], [[3, 4], [6, 8]])
    with pytest.raises(LayoutError, match="output axis T is in neither operand"):
        einsum_oracle(lhs, rhs, "M T")


def test_oracle_wraps_integers_to_i32() -> None:
    big = _t(np.array([1 << 16, 1 << 16], dtype=np.int32), "K", K=2)
    out = einsum_oracle(big, big, "")
    assert out.dtype == np.int32 and int(out) == 0
    wide = _t(np.full(100, 100, dtype=np.int8), "K", K=100)
    assert int(einsum_oracle(wide, wide, "")) == 1_000_000


def test_oracle_magnitude_bounds_the_sum() -> None:
    lhs = _t([1.0, -2.0], "K", K=2)
    rhs = _t([3.0, 4.0], "K", K=2)
    assert float(einsum_oracle(lhs, rhs, "")) == -5.0
    assert float(einsum_oracle(lhs, rhs, "", magnitude=True)) == 11.0
