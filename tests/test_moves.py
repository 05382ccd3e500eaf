"""The one physical move of the stream engines and the simulator's poison (docs/runtime.md §4)."""

from __future__ import annotations

import numpy as np
import pytest

from tcpdsl.algebra import Digit, parse
from tcpdsl.errors import LayoutError
from tcpdsl.evaluate.stream import fused_logical, simulated
from tcpdsl.numerics.flow import Flow, Root, Step
from tcpdsl.numerics.moves import convert, lay_out, live_poison, move

SIZES = {"A": 4, "B": 8}
TERMS = (Digit("A", 4, 1, 4),)


def m(text: str):  # type: ignore[no-untyped-def]
    return parse(text, SIZES)


def test_lay_out_poisons_top_padding_and_zeros_zero_padding() -> None:
    values = np.arange(1, 5, dtype=np.float32)
    buffer, mask = lay_out(values, TERMS, m("A # 6, 1 #{0} 2"), "f32")
    cells = buffer.reshape(6, 2)
    assert np.array_equal(cells[:4, 0], values) and np.all(cells[:4, 1] == 0)
    assert np.isnan(cells[4:]).all()  # inside Top padding, Zero padding is Top padding too
    assert mask.reshape(6, 2).tolist() == [[0, 0]] * 4 + [[1, 1]] * 2


def test_a_move_goes_by_logical_coordinates_and_replicates_broadcasts() -> None:
    source = lay_out(np.arange(4, dtype=np.int32), TERMS, m("A"), "i32")
    out, mask = move(source, m("A"), m("2, A % 2, A / 2"), TERMS, "i32")
    assert out.tolist() == [0, 2, 1, 3, 0, 2, 1, 3] and not mask.any()


def test_a_live_cell_the_source_does_not_hold_is_poisoned() -> None:
    half = (Digit("A", 4, 1, 2),)  # the source holds A < 2 only
    source = lay_out(np.arange(2, dtype=np.int32), half, m("A = 2"), "i32")
    out, mask = move(source, m("A = 2"), m("A"), half, "i32")
    assert mask.tolist() == [0, 0, 1, 1] and out[:2].tolist() == [0, 1]
    assert live_poison(mask, m("A")) == 2


def test_the_simulator_reports_the_step_that_reads_poison_and_the_fused_evaluator_does_not() -> None:
    half = (Digit("A", 4, 1, 2),)
    values = np.arange(2, dtype=np.float32)
    root = Root(m("A = 2 # 4"), "f32", half, (), lambda name: values)
    flow = Flow(root).then(Step("fetch", m("A"), "f32"))
    assert fused_logical(flow, "fused").tolist() == [0, 1]
    with pytest.raises(LayoutError, match=r"fetch: 2 live cell\(s\) of A read undefined \(Top\) padding") as info:
        simulated(flow, "simulate")
    assert info.value.rule == "UndefinedPadding"


def test_convert_is_the_rngd_cast() -> None:
    narrowed = convert(np.array([1e-40, np.nan, 1.0], dtype=np.float32), "f32", "bf16")
    assert narrowed.view(np.uint16).tolist() == [0, 0x7FC0, 0x3F80]
    assert convert(np.array([300, -200], dtype=np.int32), "i32", "i8").tolist() == [44, 56]
