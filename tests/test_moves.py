"""The one physical move of the stream engines and the simulator's poison (docs/runtime.md §4)."""

from __future__ import annotations

import numpy as np
import pytest

from tcpdsl.algebra import Digit, parse
from tcpdsl.errors import LayoutError
from tcpdsl.evaluate.stream import fused_logical, simulated
from tcpdsl.numerics.flow import Flow, Root, Step
from tcpdsl.numerics import moves
from tcpdsl.numerics.moves import convert, lay_out, live_poison, move
from tcpdsl.numerics.transfer import holds_only

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


BOTH = (Digit("A", 4, 1, 4), Digit("B", 8, 1, 8))
DESTINATIONS = ["A, B", "B, A", "B / 2, A, B % 2", "2, B % 4 # 6, A, B / 4", "A # 5, B #{0} 9", "B, 1 # 3, A % 2, A / 2",
                "A = 2, B", "A, B = 5 # 8"]


@pytest.mark.parametrize("dst", DESTINATIONS)
def test_a_move_by_slots_equals_the_move_by_cells(dst: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The slot path (docs/runtime.md §4) must give the cell path's values and poison, padding included.
    rng = np.random.default_rng(len(dst))
    values = rng.integers(-100, 100, size=(4, 8)).astype(np.int32)
    buffer, mask = lay_out(values, BOTH, m("B, A"), "i32")
    mask = mask | (rng.random(mask.shape) < 0.2).astype(np.uint8)  # some cells arrive poisoned
    fast = move((buffer, mask), m("B, A"), m(dst), BOTH, "i32")
    monkeypatch.setattr(moves, "holds_only", lambda mapping, terms: False)
    slow = move((buffer, mask), m("B, A"), m(dst), BOTH, "i32")
    assert np.array_equal(fast[1], slow[1]) and np.array_equal(fast[0], slow[0])


def test_the_slot_path_is_taken_only_when_every_digit_is_an_elements() -> None:
    assert holds_only(m("B / 2, A, B % 2"), BOTH)
    assert not holds_only(m("A"), (Digit("A", 4, 1, 2),))  # A / 2 is a digit the terms lack
