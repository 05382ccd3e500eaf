"""``tcpdsl.testing``: strategies that draw valid inputs for a tensor type, and ``check_kernel``."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.algebra import digit_text
from tcpdsl.testing import check_kernel, inputs
from tcpdsl.testing.cells import differing_cells
from tcpdsl.testing.kernels import OracleCheck

KERNELS = Path(__file__).resolve().parent / "ci_project" / "kernels"
FAST = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])

Wp = tcp.axis("Wp", 64)
H = tcp.axis("H", 32)
A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)
Stream = tcp.CollectTensor[tcp.bf16, m["1"], m["1 # 2"], m["1 # 256"], m["A, B / 16"], m["B % 16"]]
LoadedWeights = tcp.TrfTensor[tcp.bf16, m["1"], m["1 # 2"], m["1 # 256"], m["C"], m["B"]]
Tile = tcp.CollectTensor[tcp.i8, m["1"], m["1 # 2"], m["1 # 256"], m["Wp % 8"], m["H"]]
Nibbles = tcp.CollectTensor[tcp.i4, m["1"], m["1 # 2"], m["1 # 256"], m["Wp % 8"], m["H # 64"]]


def _module(name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(f"_ci_kernels_{name}", KERNELS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


good, wrong = _module("good"), _module("wrong")


@FAST
@given(inputs(good.Stream), inputs(good.Weights))
def test_a_correct_kernel_passes_on_every_drawn_input(x: object, w: object) -> None:
    check_kernel(good.matmul, x, w)


@tcp.kernel
def with_trf(x: Stream, w: LoadedWeights) -> object:
    return (
        x.contract_outer(w, out_time=m["A"], out_packet=m["B"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A"], out_packet=m["C"])
    )


@FAST
@given(inputs(Stream), inputs(LoadedWeights))
def test_trf_weights_are_drawn_too(x: object, w: object) -> None:
    check_kernel(with_trf, x, w)


@FAST
@given(inputs(good.Stream, elements=st.sampled_from([0.0, 1.0, -2.0])))
def test_elements_draw_the_values(x: object) -> None:
    values = x.to_tensor().to_numpy("A B")  # type: ignore[attr-defined]
    assert set(np.unique(values).tolist()) <= {0.0, 1.0, -2.0}


@FAST
@given(inputs(Nibbles))
def test_integer_values_fit_their_dtype(x: object) -> None:
    values = np.asarray(x.to_tensor().values).astype(np.int64)  # type: ignore[attr-defined]
    assert values.min() >= -8 and values.max() <= 7


@FAST
@given(inputs(Tile))
def test_a_layout_holding_part_of_an_axis_gets_partial_tensors_and_tiles(x: object) -> None:
    tensor = x.to_tensor()  # type: ignore[attr-defined]
    assert tensor.axes == ("Wp % 8", "H")
    for term, value in tensor.fixed_terms:
        assert (digit_text(term), 0 <= value < 8) == ("Wp / 8", True)


def test_tiles_are_drawn() -> None:
    from hypothesis import find

    tile = find(inputs(Tile), lambda x: bool(x.to_tensor().fixed_terms))  # type: ignore[attr-defined]
    assert [digit_text(t) for t, _ in tile.to_tensor().fixed_terms] == ["Wp / 8"]


def test_inputs_refuses_what_is_no_source_tensor_type() -> None:
    with pytest.raises(tcp.TcpError, match="must be annotated with a subscripted CollectTensor, TrfTensor, DmTensor, HbmTensor or VrfTensor, got <class 'int'>"):
        inputs(int)


@settings(max_examples=1, deadline=None)
@given(inputs(good.Stream, elements=st.just(0.5)))
def test_check_kernel_names_the_first_differing_cells(x: object) -> None:
    with pytest.raises(AssertionError) as failure:
        check_kernel(wrong.off_by_one, x)
    assert str(failure.value).splitlines()[:3] == [
        "off_by_one: the result differs from the oracle (max error 1; it must agree within 5e-06)",
        "first differing cells:",
        "  A=0, B=0: got 1.5, oracle 0.5",
    ]
    assert str(failure.value).splitlines()[-1] == "  ... and 123 more of 128 cells"


def test_differing_cells_in_index_order() -> None:
    expected = np.zeros((2, 3))
    actual = expected.copy()
    actual[1, 2], actual[0, 1] = 7.0, -1.0
    verdict = OracleCheck(("A", "C"), expected, actual, 7.0, 0.0, True, False, actual != expected)
    assert differing_cells(verdict) == ["A=0, C=1: got -1, oracle 0", "A=1, C=2: got 7, oracle 0"]
    assert differing_cells(verdict, limit=1) == ["A=0, C=1: got -1, oracle 0", "... and 1 more of 6 cells"]
    integers = OracleCheck(("A",), np.array([3, 4]), np.array([3, 5]), 1.0, 0.0, True, False, np.array([False, True]))
    assert differing_cells(integers) == ["A=1: got 5, oracle 4"]
