"""Robustness probes: no input, however malformed, makes tcpdsl raise anything but a ``TcpError``.

The contract (docs/architecture.md, "errors"; docs/static-checking.md): every deliberate error
is a ``TcpError`` subclass, nothing else escapes the public surface (no IndexError, KeyError,
ZeroDivisionError, RecursionError, numpy error, AttributeError, ...), and nothing crashes mypy
with the plugin.

Hypothesis drives the mapping grammar, the mapping methods, the stage chain and the block formats;
tables cover the call shapes a user gets wrong; one mypy run checks a batch of generated kernel
modules for internal errors.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import random
import tempfile
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tcpdsl as tcp
from tcpdsl import m, mx, pictures
from tcpdsl.algebra import Mapping
from tcpdsl.cli.main import main as cli_main
from tcpdsl.errors import StageError, TcpError
from tcpdsl.pictures.text import cell_table, slot_table

ROOT = Path(__file__).resolve().parent.parent

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

# TCPDSL_ROBUSTNESS_SCALE=20 runs twenty times as many examples (a longer hunt for new failures).
SCALE = int(os.environ.get("TCPDSL_ROBUSTNESS_SCALE", "1"))
probe = settings(max_examples=120 * SCALE, deadline=None, suppress_health_check=list(HealthCheck))
few = settings(max_examples=40 * SCALE, deadline=None, suppress_health_check=list(HealthCheck))

# Mappings up to this many cells are walked cell by cell (equivalent, cell tables).
SMALL = 4096


def expect_tcp(fn: Callable[[], object]) -> object:
    """Call ``fn``; a ``TcpError`` (well formed) is fine, anything else fails the test with its traceback."""
    try:
        return fn()
    except TcpError as error:
        assert str(error), "a TcpError with an empty message"
        if isinstance(error, StageError):
            assert error.stage and error.rule and error.detail, (error.stage, error.rule, error.detail)
        return None
    except Exception as error:  # noqa: BLE001 - the point of the probe
        pytest.fail(f"{type(error).__name__} escaped: {error}\n{''.join(traceback.format_exception(error))}")


# -- strategies ---------------------------------------------------------------------------------

NAMES = ["A", "B", "C", "D", "Q", "Zz"]
NUMBERS = st.one_of(
    st.sampled_from([0, 1, 2, 3, 4, 8, 16, 32, 64, 256]),
    st.integers(0, 10**6),
    st.sampled_from([10**17, 10**18 - 1, 10**19, 10**40]),
)
FILLS = ["#", "#{*}", "#{0}", "#{!}", "# {0}", "#{x}"]


def _number_text(n: int) -> str:
    return str(n)


def _atom() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(NAMES),
        NUMBERS.map(_number_text),
        st.sampled_from(["{Tile}", "{N}", "{Bad}", "{Missing}", "{A}", "{ }", "{1}", "{n}"]),
    )


def _grow(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    number = st.one_of(NUMBERS.map(_number_text), st.sampled_from(["{N}", "{Tile}", "{Neg}", "{Zero}"]))
    return st.one_of(
        st.tuples(children, children).map(lambda p: f"{p[0]}, {p[1]}"),
        st.tuples(children, st.sampled_from(["/", "%", "=", *FILLS]), number).map(lambda p: f"{p[0]} {p[1]} {p[2]}"),
        st.tuples(st.sampled_from(["()", "[]", "(]"]), children).map(lambda p: f"{p[0][0]}{p[1]}{p[0][1]}"),
    )


GRAMMAR = st.recursive(_atom(), _grow, max_leaves=8)


def _mutate(text: str, data: st.DataObject) -> str:
    """Break a grammatical text: drop, duplicate or insert a character."""
    if not text or data.draw(st.booleans()):
        return text
    at = data.draw(st.integers(0, len(text)))
    how = data.draw(st.sampled_from(["drop", "insert", "cut"]))
    if how == "drop":
        return text[:at] + text[at + 1 :]
    if how == "cut":
        return text[:at]
    return text[:at] + data.draw(st.sampled_from(list(",/%=#{}()[]* 0!aZ\u00e9\t\n"))) + text[at:]


TEXTS = st.one_of(GRAMMAR, st.text(max_size=20), st.sampled_from(["", " ", "(" * 80 + "A" + ")" * 80, "A" + ", A" * 300]))

SIZE_VALUES = st.one_of(
    st.integers(1, 64),
    st.sampled_from([0, -1, -32, 10**18, 10**40, True, False, 2.0, 2.5, math.nan, "4", None, [4], np.int64(4)]),
)
SIZES = st.dictionaries(st.sampled_from(NAMES + ["a", "", "1"]), SIZE_VALUES, max_size=5)
ENV_VALUES = st.one_of(
    st.sampled_from([0, 1, 2, 4, 16, -2, 10**30, True, 2.0, "A", None, [1]]),
    st.just(tcp.parse("A, B", {"A": 2, "B": 4})),
    st.just(tcp.parse("1 # 2", {})),
    st.just(tcp.axis("A", 4)),
    st.just(tcp.axis("B", 2)),
)
ENVS = st.one_of(st.none(), st.dictionaries(st.sampled_from(["Tile", "N", "Bad", "Neg", "Zero", "A", "B"]), ENV_VALUES, max_size=5))


def _exercise(mp: Mapping, data: st.DataObject) -> None:
    """Every Mapping method on a built mapping, with arguments that may be invalid."""
    assert isinstance(mp, Mapping)
    text = str(mp)
    assert tcp.parse(text, mp.axis_sizes()) == mp
    mp.normalize()
    mp.slots()
    mp.remove_padding()
    mp.padding_per_stride()
    _ = mp.axes, repr(mp), hash(mp)
    cell_table(mp)
    slot_table(mp)
    pictures.svg(mp, max_columns=data.draw(st.sampled_from([16, 1, 0, -3, 10**9])))
    positions = data.draw(
        st.lists(
            st.one_of(
                st.integers(-3, mp.size + 3),
                st.sampled_from([10**30, -(10**30), 1.5, "1", None, True, np.int64(1)]),
            ),
            max_size=4,
        )
    )
    for i in positions:
        expect_tcp(lambda: mp.cell(i))
    n = data.draw(st.one_of(st.integers(-4, 70), st.sampled_from([mp.size, 10**30, 0, 2.0, "2", None])))
    split = expect_tcp(lambda: mp.split_at(n))
    if split is not None:
        outer, inner = split  # type: ignore[misc]
        assert outer.size * inner.size == mp.size
    other = data.draw(st.sampled_from([mp, mp.normalize(), tcp.parse("A", {"A": 4}), m["B % 16"], 3, None, "A"]))
    expect_tcp(lambda: tcp.divide_exact(mp, other))  # type: ignore[arg-type]
    expect_tcp(lambda: tcp.divide_exact(other, mp))  # type: ignore[arg-type]
    if mp.size <= SMALL and (not isinstance(other, Mapping) or other.size <= SMALL):
        assert tcp.equivalent(mp, mp.normalize())
        expect_tcp(lambda: tcp.equivalent(mp, other))  # type: ignore[arg-type]
    for op, arg in data.draw(
        st.lists(st.tuples(st.sampled_from(["stride", "modulo", "resize", "padding", "pair"]),
                           st.one_of(st.integers(-2, 70), st.sampled_from([2.0, "2", None, m["A"]]))), max_size=3)
    ):
        expect_tcp(lambda: getattr(mp, op)(arg))


# -- mapping expressions ------------------------------------------------------------------------


@probe
@given(data=st.data(), text=TEXTS, sizes=SIZES, env=ENVS)
def test_parse_raises_only_tcp_errors(data: st.DataObject, text: str, sizes: dict[str, Any], env: dict[str, Any] | None) -> None:
    text = _mutate(text, data)
    mp = expect_tcp(lambda: tcp.parse(text, sizes, env))
    if mp is not None:
        _exercise(mp, data)  # type: ignore[arg-type]


@probe
@given(data=st.data(), text=GRAMMAR)
def test_grammatical_mappings_survive_every_method(data: st.DataObject, text: str) -> None:
    sizes = {"A": 4, "B": 32, "C": 6, "D": 1}
    env = {"Tile": tcp.parse("A, B / 16", sizes), "N": 2, "Neg": -2, "Zero": 0}
    mp = expect_tcp(lambda: tcp.parse(text, sizes, env))
    if mp is not None:
        _exercise(mp, data)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "call",
    [
        lambda: tcp.parse(5, {}),  # type: ignore[arg-type]
        lambda: tcp.parse("A", ["A"]),  # type: ignore[arg-type]
        lambda: tcp.parse("A", None),  # type: ignore[arg-type]
        lambda: tcp.parse("A", {"A": 4}, ["A"]),  # type: ignore[arg-type]
        lambda: tcp.parse("A", {1: 3}),  # type: ignore[dict-item]
        lambda: tcp.parse("A", {"A": [1]}),  # type: ignore[dict-item]
        lambda: tcp.parse("A", {"A": {}}),  # type: ignore[dict-item]
        lambda: tcp.parse("B", {1: 3, "A": 2}),  # type: ignore[dict-item]
        lambda: tcp.parse("{X}", {}, {1: 2}),  # type: ignore[dict-item]
        lambda: tcp.parse("A # {N}", {"A": 4}, {"N": 10**100}).normalize(),
        lambda: m[3],  # type: ignore[index]
        lambda: m["A", "B"],  # type: ignore[index]
        lambda: m[1:2],  # type: ignore[index]
        lambda: m[None],  # type: ignore[index]
        lambda: tcp.axis("a", 3),
        lambda: tcp.axis(3, 3),  # type: ignore[arg-type]
        lambda: tcp.axis("A", 2.5),  # type: ignore[arg-type]
        lambda: tcp.axis("A", 0),
        lambda: tcp.axis("A", -4),
        lambda: tcp.axis("A", True),
        lambda: tcp.axis("", 3),
        lambda: tcp.equivalent(m["A"], 3),  # type: ignore[arg-type]
        lambda: tcp.equivalent("A", m["A"]),  # type: ignore[arg-type]
        lambda: tcp.divide_exact(m["A"], 3),  # type: ignore[arg-type]
        lambda: tcp.divide_exact(None, m["A"]),  # type: ignore[arg-type]
        lambda: m["A"].pair(3),  # type: ignore[arg-type]
        lambda: m["A"].padding(64, "zero"),  # type: ignore[arg-type]
        lambda: m["A"].split_at(None),  # type: ignore[arg-type]
        lambda: m["A"].cell("1"),  # type: ignore[arg-type]
        lambda: m["A"].cell(1.5),  # type: ignore[arg-type]
    ],
)
def test_mapping_surface_table(call: Callable[[], object]) -> None:
    assert expect_tcp(call) is None


BIG = tcp.parse("A", {"A": 10**17 + 3})


@pytest.mark.parametrize(
    "call",
    [
        lambda: pictures.svg(None),  # type: ignore[arg-type]
        lambda: pictures.svg("A"),  # type: ignore[arg-type]
        lambda: pictures.tensor_svg(None),  # type: ignore[arg-type]
        lambda: pictures.tensor_svg({"Time": 3}),  # type: ignore[dict-item]
        lambda: pictures.tensor_svg({"Time": BIG, "Packet": BIG}),
        lambda: pictures.svg(BIG, max_columns=10**9),
        lambda: pictures.svg(BIG, max_rows=10**9),
        lambda: pictures.svg(BIG, max_columns=-5, max_rows=-5),
        lambda: pictures.svg(BIG, max_columns=2.5),  # type: ignore[arg-type]
        lambda: pictures.svg(m["A"], title=3),  # type: ignore[arg-type]
        lambda: pictures.svg(m["A"], color_by=3),  # type: ignore[arg-type]
        lambda: cell_table(None),  # type: ignore[arg-type]
        lambda: slot_table(None),  # type: ignore[arg-type]
        lambda: cell_table(BIG, max_columns=10**9),
    ],
)
def test_picture_table(call: Callable[[], object]) -> None:
    expect_tcp(call)


def test_a_mapping_too_large_to_write_is_refused() -> None:
    with pytest.raises(tcp.LayoutError) as caught:
        tcp.parse("100000000000000000, 100000000000000000", {})
    assert caught.value.rule == "SizeTooLarge" and caught.value.hint
    with pytest.raises(tcp.LayoutError):
        tcp.axis("A", 10**40)
    biggest = tcp.parse("A, B", {"A": 10**9, "B": 10**9 - 1})
    assert tcp.parse(str(biggest), biggest.axis_sizes()) == biggest


def test_non_int_positions_are_refused_not_coerced() -> None:
    with pytest.raises(tcp.LayoutError) as caught:
        m["A"].cell(1.5)  # type: ignore[arg-type]
    assert caught.value.rule == "NotAnInt" and caught.value.hint
    with pytest.raises(tcp.LayoutError) as split:
        m["A"].split_at(2.0)  # type: ignore[arg-type]
    assert split.value.stage == "mapping" and split.value.rule == "NotAnInt"
    assert m["A"].cell(np.int64(3)) == m["A"].cell(3)


# -- logical tensors and tensor classes ---------------------------------------------------------

X = np.random.default_rng(0).standard_normal((32, 32)).astype(np.float32)
Y = np.random.default_rng(1).standard_normal((8, 32)).astype(np.float32)
Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / 16"], m["B % 16"]]


def _dev() -> tcp.Device:
    return tcp.Device(tcp.Topology(chips=1, pes=8))


TENSOR_CALLS: list[Callable[[], object]] = [
    lambda: tcp.Tensor(np.ones((3, 3)), "A B"),
    lambda: tcp.Tensor(X, 5),  # type: ignore[arg-type]
    lambda: tcp.Tensor(X, [1, 2]),  # type: ignore[list-item]
    lambda: tcp.Tensor(X, "A A"),
    lambda: tcp.Tensor(X, "a b"),
    lambda: tcp.Tensor(object(), "A B"),
    lambda: tcp.Tensor([[1], [1, 2]], "A B"),
    lambda: tcp.Tensor("abc", "A"),
    lambda: tcp.Tensor(X, "A B", sizes={"A": "x", "B": 32}),  # type: ignore[dict-item]
    lambda: tcp.Tensor(X, "A B", sizes=[1]),  # type: ignore[arg-type]
    lambda: tcp.Tensor(X, "A B", sizes={"A": 32.5, "B": 32}),  # type: ignore[dict-item]
    lambda: tcp.Tensor(np.ones((0, 32)), "A B", sizes={"A": 0, "B": 32}),
    lambda: tcp.Tensor(X, "A B").to_numpy(5),  # type: ignore[arg-type]
    lambda: tcp.Tensor(X, "A B").to_numpy("A A"),
    lambda: tcp.Tensor(X, "A B").to_numpy("A C"),
    lambda: tcp.CollectTensor[tcp.bf16, Chip],
    lambda: tcp.CollectTensor[()],
    lambda: tcp.CollectTensor[tcp.bf16],
    lambda: tcp.CollectTensor[1, 2, 3, 4, 5, 6],
    lambda: tcp.CollectTensor[tcp.bf16, "1", "1", "1", "A", "B"],
    lambda: tcp.CollectTensor[int, Chip, Cluster, Slice, m["A"], m["B"]],
    lambda: tcp.CollectTensor[np.float32, Chip, Cluster, Slice, m["A"], m["B"]],
    lambda: tcp.CollectTensor[tcp.i32, Chip, Cluster, Slice, m["A"], m["B"]],
    lambda: tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A"], m["B"], m["C"]],
    lambda: tcp.TrfTensor[tcp.bf16, Chip],
    lambda: tcp.ContractOuterTensor[tcp.bf16, Chip],
    lambda: tcp.ContractOuterTensor[tcp.bf16, tcp.bf16, Chip, Cluster, Slice, m["C"], m["A"], m["B"]],
    lambda: tcp.ContractOuterTensor[tcp.f32, None, Chip, Cluster, Slice, m["C"], m["A"], m["B"]],
    lambda: tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], 3],
    lambda: tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]](None),
    lambda: tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]](),
    lambda: tcp.CollectTensor(None, None),  # type: ignore[arg-type]
    lambda: tcp.TrfTensor(None),  # type: ignore[arg-type]
    lambda: Stream(None, None),
    lambda: Stream(_dev().main, X),
    lambda: Stream(_dev().main),
    lambda: Stream(_dev().main, tcp.Tensor(X, "A B"), 3),
    lambda: Stream(_dev().main, tensor=tcp.Tensor(X, "A B")),
    lambda: Stream(_dev().main, tcp.Tensor(Y, "C B")),
    lambda: Stream(_dev().main, tcp.Tensor(np.full((32, 32), np.inf), "A B")).physical(),
    lambda: tcp.Device(None),  # type: ignore[arg-type]
    lambda: tcp.Topology(chips=-1, pes=0),
    lambda: tcp.Topology(chips="a", pes=8),  # type: ignore[arg-type]
    lambda: tcp.Topology(chips=1, pes=8.5),  # type: ignore[arg-type]
    lambda: tcp.evaluator("nope").__enter__(),
    lambda: tcp.evaluator(3).__enter__(),  # type: ignore[arg-type]
    lambda: tcp.kernel(3),  # type: ignore[type-var]
]


@pytest.mark.parametrize("call", TENSOR_CALLS)
def test_tensor_surface_table(call: Callable[[], object]) -> None:
    expect_tcp(call)


# -- partial tensors, tiles and writing back ----------------------------------------------------

TILE_CALLS: list[Callable[[], object]] = [
    lambda: tcp.Tensor(X, m["A, B / 2"]),
    lambda: tcp.Tensor(X[:, :16], m["A, B / 2"], sizes={"A": 32}),
    lambda: tcp.Tensor(X, m["A # 40, B"]),
    lambda: tcp.Tensor(X, m["A, A"]),
    lambda: tcp.Tensor(X, m["1, B"]),
    lambda: tcp.Tensor(X.reshape(-1), m["[A, B] / 1"]),
    lambda: tcp.Tensor(X, "A B").tile(m["B / 16"], 2),
    lambda: tcp.Tensor(X, "A B").tile(m["B / 16"], -1),
    lambda: tcp.Tensor(X, "A B").tile(m["B / 16"], 2**70),
    lambda: tcp.Tensor(X, "A B").tile(m["B / 16"], np.int64(1)),
    lambda: tcp.Tensor(X, "A B").tile(m["B / 16"], None),  # type: ignore[arg-type]
    lambda: tcp.Tensor(X, "A B").tile(m["B / 16"], "1"),  # type: ignore[arg-type]
    lambda: tcp.Tensor(X, "A B").tile(m["C"], 0),
    lambda: tcp.Tensor(X, "A B").tile(m["1"], 0),
    lambda: tcp.Tensor(X, "A B").tile(m["B # 64 / 16"], 0),
    lambda: tcp.Tensor(X, "A B").tile(m["B, A"], 0),
    lambda: tcp.Tensor(X, "A B").tile(3, 0),  # type: ignore[arg-type]
    lambda: tcp.Tensor(X, "A B").tile(m["B / 16"], 1).tile(m["B / 16"], 1),
    lambda: tcp.Tensor(X, "A B").tile(m["B / 16"], 1).tile(m["B / 8"], 1),
    lambda: tcp.Tensor(X, "A B").tile(m["B / 16"], 1).to_numpy("A B"),
    lambda: tcp.Tensor(X, "A B").tile(m["B / 4 % 2"], 1).to_numpy("A B"),
    lambda: tcp.Tensor(X, "A B").tile(m["B / 16"], 1).to_numpy(m["B, A"]),
    lambda: tcp.Tensor(X, "A B").assign(X),  # type: ignore[arg-type]
    lambda: tcp.Tensor(X, "A B").assign(tcp.Tensor(Y, "C B")),
    lambda: tcp.Tensor(X.copy(), "A B").assign(tcp.Tensor(X, "B A")),
    lambda: tcp.Tensor(X.copy(), "A B").assign(tcp.Tensor(X, "A B").tile(m["A / 8"], 3)),
    lambda: tcp.Tensor(X[:8], "C B").assign(tcp.Tensor(X, "A B").tile(m["A / 8"], 3)),
    lambda: tcp.Tensor(np.zeros((32, 32), np.int8), "A B").assign(tcp.Tensor(np.full((32, 32), np.nan), "A B")),
    lambda: tcp.Tensor(np.broadcast_to(X, X.shape), "A B").assign(tcp.Tensor(X, "A B")),
    lambda: Stream(_dev().main, tcp.Tensor(X, "A B").tile(m["B / 16"], 1)),
    lambda: Stream(_dev().main, tcp.Tensor(X[:, :16], m["A, B / 2"])),
    lambda: Stream(_dev().main, tcp.Tensor(X, "A B").tile(m["A / 16"], 1)),
]


@pytest.mark.parametrize("call", TILE_CALLS)
def test_tile_surface_table(call: Callable[[], object]) -> None:
    expect_tcp(call)


@few
@given(data=st.data(), split=st.sampled_from([(64,), (8, 8), (2, 32), (4, 4, 4)]))
def test_random_tiles_and_writes_fail_only_with_tcp_errors(data: st.DataObject, split: tuple[int, ...]) -> None:
    """Tiles of random digits and writes of random parts: only tcp errors, and a refused write
    leaves the target as it was."""
    sizes = {"W": 64, "V": 4}
    digits = ["W", "W / 8", "W % 8", "W / 2", "W / 4 % 4", "W / 32", "W % 2", "V", "V / 2", "W / 3", "W # 70 / 2"]

    def mapping(text: str) -> Mapping | None:
        found = expect_tcp(lambda: tcp.parse(text, sizes))
        return found if isinstance(found, Mapping) else None

    terms, stride = [], 64
    for count in split:
        stride //= count
        terms.append(f"W / {stride} % {count}")
    source = np.arange(64 * 4, dtype=np.float64).reshape((*split, 4))
    whole = mapping(", ".join([*terms, "V"]))
    assert whole is not None
    tensor = tcp.Tensor(source, whole)
    for _ in range(data.draw(st.integers(0, 2))):
        digit = mapping(data.draw(st.sampled_from(digits)))
        index = data.draw(st.one_of(st.integers(-2, 40), st.sampled_from([1.5, None, True, np.int32(2)])))
        found = expect_tcp(lambda: tensor.tile(digit, index))  # type: ignore[arg-type]
        if isinstance(found, tcp.Tensor):
            assert np.shares_memory(found.values, source)
            tensor = found
    target_values = np.full((64, 4), -1.0)
    target: Any = tcp.Tensor(target_values, "W V", sizes=sizes)
    digit = mapping(data.draw(st.sampled_from(digits)))
    if data.draw(st.booleans()):
        target = expect_tcp(lambda: target.tile(digit, data.draw(st.integers(0, 3))))
    if target is None:
        return
    before = target_values.copy()
    try:
        target.assign(tensor)
    except TcpError:
        assert np.array_equal(target_values, before), "a refused write changed the target"
        return
    # Written: each element landed at its own coordinates (source holds W * 4 + V at W, V).
    expected = np.arange(64 * 4, dtype=np.float64).reshape(64, 4)
    written = target_values != -1.0
    assert written.any()
    np.testing.assert_array_equal(target_values[written], expected[written])


def test_kernel_with_a_bare_mapping_annotation_is_a_definition_error() -> None:
    def bad(x: m["A"]) -> None:  # type: ignore[valid-type]
        del x

    with pytest.raises(TcpError, match="cannot check the annotations"):
        tcp.kernel(bad)


def _chain_start() -> tuple[Any, Any]:
    dev = _dev()
    return Stream(dev.main, tcp.Tensor(X, "A B")), Weights(dev.sub, tcp.Tensor(Y, "C B"))


def _stage_calls() -> Iterator[Callable[[], object]]:
    a, w = _chain_start()
    trf = w.to_trf(lane=m["C"], element=m["B"])
    outer = a.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
    time = outer.contract_packet(out_packet=m["1"]).contract_time(out_time=m["A"])
    yield lambda: w.to_trf(lane=None, element=None)
    yield lambda: w.to_trf(lane="C", element="B")
    yield lambda: w.to_trf(lane=m["A"], element=m["B"])
    yield lambda: a.contract_outer(w, out_time=m["A"], out_packet=m["B"])
    yield lambda: a.contract_outer(None, out_time=m["A"], out_packet=m["B"])
    yield lambda: a.contract_outer(trf, out_time=3, out_packet=m["B"])
    yield lambda: a.contract_outer(a, out_time=m["A"], out_packet=m["B"])
    yield lambda: outer.contract_packet(out_packet=None)
    yield lambda: outer.contract_packet(out_packet=m["A"])
    yield lambda: time.contract_lane(out_time=m["A"], out_packet=m["C"], mode="x")
    yield lambda: time.contract_lane(out_time=m["A"], out_packet=m["C"], mode=None).to_tensor()


@pytest.mark.parametrize("index", range(11))
def test_stage_call_table(index: int) -> None:
    expect_tcp(list(_stage_calls())[index])


# Layout pools over the axes P (rows), K (contraction, a multiple of 16) and N (lanes); the first
# option of each pool is the one that fits a bf16 matmul, and is drawn most often.
TIME_OPTIONS = ["P, K / 16", "P", "P, K / 32", "K / 16, P", "P # 64", "1", "P, K", "N", "K"]
PACKET_OPTIONS = ["K % 16", "K % 32", "K", "1", "K % 8", "P", "K #{0} 64"]
LANE_OPTIONS = ["N", "N # 8", "1", "N % 2", "K", "P"]
WEIGHT_TIME_OPTIONS = ["N, K / 16", "P, K / 16", "N", "K / 16, N", "N, K / 32"]
OUT_TIME_OPTIONS = ["P", "P, K / 16", "P, K / 32", "1", "N", "P, N", "N, P"]
OUT_PACKET_OPTIONS = ["K", "K % 16", "K % 32", "1", "N", "N # 8", "P"]
PACKET_REDUCE_OPTIONS = ["1", "K % 2", "K", "N"]
LANE_TIME_OPTIONS = ["P", "P, N", "1", "N, P"]
LANE_PACKET_OPTIONS = ["N # 8", "1", "N", "P"]
DTYPES = [tcp.bf16] * 3 + [tcp.i8, tcp.f8e4m3, tcp.i4, tcp.f32]


@few
@given(
    data=st.data(),
    p=st.sampled_from([1, 2, 4, 8, 16]),
    k=st.sampled_from([16, 32]),
    n=st.sampled_from([2, 4, 8, 8]),
)
def test_random_stage_chains_fail_only_with_tcp_errors(data: st.DataObject, p: int, k: int, n: int) -> None:
    sizes = {"P": p, "K": k, "N": n}
    # Up to three of the layout choices below are drawn from the whole pool; the others fit.
    perturbed = data.draw(st.sets(st.integers(0, 11), max_size=3))
    slot = iter(range(12))

    def lay(options: list[str]) -> Mapping:
        text = data.draw(st.sampled_from(options)) if next(slot) in perturbed else options[0]
        found = expect_tcp(lambda: tcp.parse(text, sizes))
        return found if isinstance(found, Mapping) else tcp.parse("1", {})

    chip, cluster, slice_ = tcp.parse("1", {}), tcp.parse("1 # 2", {}), tcp.parse("1 # 256", {})
    stream_dtype = data.draw(st.sampled_from(DTYPES)) if perturbed else tcp.bf16
    weight_dtype = data.draw(st.sampled_from([stream_dtype] * 4 + DTYPES))
    dev = _dev()
    rng = np.random.default_rng(0)
    x = tcp.Tensor(rng.standard_normal((p, k)), "P K", sizes=sizes)
    y = tcp.Tensor(rng.standard_normal((n, k)), "N K", sizes=sizes)
    stream_type = expect_tcp(lambda: tcp.CollectTensor[stream_dtype, chip, cluster, slice_, lay(TIME_OPTIONS), lay(PACKET_OPTIONS)])
    weight_type = expect_tcp(
        lambda: tcp.CollectTensor[weight_dtype, chip, cluster, slice_, lay(WEIGHT_TIME_OPTIONS), lay(PACKET_OPTIONS)]
    )
    if stream_type is None or weight_type is None:
        return
    stream = expect_tcp(lambda: stream_type(dev.main, x))  # type: ignore[operator]
    weights = expect_tcp(lambda: weight_type(dev.sub, y))  # type: ignore[operator]
    if stream is None or weights is None:
        return
    trf = expect_tcp(lambda: weights.to_trf(lane=lay(LANE_OPTIONS), element=lay(["K", "K % 16", "1", "P"])))  # type: ignore[attr-defined]
    if trf is None:
        return
    steps: list[Callable[[Any], Any]] = [
        lambda t: t.contract_outer(trf, out_time=lay(OUT_TIME_OPTIONS), out_packet=lay(OUT_PACKET_OPTIONS)),
        lambda t: t.contract_packet(out_packet=lay(PACKET_REDUCE_OPTIONS)),
        lambda t: t.contract_time(out_time=lay(LANE_TIME_OPTIONS)),
        lambda t: t.contract_lane(
            out_time=lay(LANE_TIME_OPTIONS), out_packet=lay(LANE_PACKET_OPTIONS),
            mode=data.draw(st.sampled_from(list(tcp.LaneMode))),
        ),
    ]
    current: Any = stream
    for step in steps[: data.draw(st.integers(1, 4))]:
        current = expect_tcp(lambda: step(current))
        if current is None:
            return
    # The chain is valid: both evaluators must run it and agree on the logical result.
    results = []
    for name in ("fused", "simulate"):
        with tcp.evaluator(name):
            results.append(expect_tcp(lambda: current.to_tensor().to_numpy()))
            expect_tcp(current.physical)
            expect_tcp(current.explain)
    fused, simulated = results
    assert fused is not None and simulated is not None, "a valid chain failed to evaluate"
    assert fused.shape == simulated.shape


# -- block formats ------------------------------------------------------------------------------

ARRAYS: dict[str, object] = {
    "empty": np.zeros((0, 64), np.float32),
    "empty-axis": np.zeros((4, 0)),
    "nan": np.full((4, 64), np.nan, np.float32),
    "inf": np.full((4, 64), np.inf),
    "-inf": np.full((4, 64), -np.inf),
    "scalar": np.float32(1),
    "1d": np.ones(64),
    "3d": np.ones((2, 4, 64)),
    "object": np.array([object()] * 64),
    "str": "abc",
    "none": None,
    "complex": np.ones((4, 64), complex),
    "bool": np.ones((4, 64), bool),
    "int": np.ones((4, 64), np.int64),
    "huge": np.full((4, 64), 1e300),
    "list": [[1.0] * 64] * 4,
    "ragged": [[1.0], [1.0, 2.0]],
    "subnormal": np.full((4, 64), 1e-45, np.float32),
    "uint8": np.ones((4, 64), np.uint8),
}
GOOD_A = mx.quantize(np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32), axis=1)
GOOD_B = mx.quantize(np.random.default_rng(1).standard_normal((64, 8)).astype(np.float32), axis=0)


def _mx_calls(arr: Any) -> Iterator[Callable[[], object]]:
    for axis in (1, 0, -1, 5, "1", None, 1.0):
        yield lambda: mx.dequantize(mx.quantize(arr, axis=axis))
    for fmt in ("e4m3", "e5m2", "e2m1", "e3m2", "e2m3", "int8", "bad", None, 3):
        yield lambda: mx.quantize(arr, axis=1, fmt=fmt)
    for block in (32, 0, -32, 7, 64, 10**20, 2.0, None):
        yield lambda: mx.quantize(arr, axis=1, block=block)
    yield from (
        lambda: mx.zz_layout(arr), lambda: mx.nn_layout(arr), lambda: mx.zn_layout(arr),
        lambda: mx.densify_2of4(arr), lambda: mx.densify_2of4(arr, strict=False),
        lambda: mx.sparse_matmul(arr, arr, arr), lambda: mx.pack_fp4x2(arr), lambda: mx.unpack_fp4x2(arr),
        lambda: mx.pack_uint2(arr), lambda: mx.unpack_uint2(arr, 3), lambda: mx.e8m0_decode(arr),
        lambda: mx.e8m0_encode(arr), lambda: mx.scale_a_dn(arr), lambda: mx.scale_b_nd(arr),
        lambda: mx.scale_b_dn(arr), lambda: mx.scale_a_from_dn(arr, 2), lambda: mx.scale_b_from_nd(arr, 2),
        lambda: mx.matmul(GOOD_A, GOOD_B, bias=arr), lambda: mx.matmul(arr, GOOD_B), lambda: mx.unpack_indices(arr, 4),
    )


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_mx_functions_refuse_bad_arrays_with_tcp_errors(name: str) -> None:
    with np.errstate(all="raise"):  # a numpy floating-point error would escape too
        for call in _mx_calls(ARRAYS[name]):
            expect_tcp(call)


MX_TABLE: list[Callable[[], object]] = [
    *(
        call
        for shape in [(), (0,), (0, 0), (-1, 2), (2, -1), (3,), (2, 2, 2), ("a", 2), (2.5, 2), None, 5, (1, 1), (10**10, 10**10)]
        for call in (lambda s=shape: mx.zz_mapping(s), lambda s=shape: mx.nn_mapping(s), lambda s=shape: mx.zn_mapping(s))
    ),
    *(
        call
        for args in [(-1, 0, 1), (0, 0, 0), (1, 1, -1), ("a", 1, 1), (10**30, 1, 1), (1.5, 1, 1), (True, 1, 1)]
        for call in (
            lambda a=args: mx.zz_offset(*a), lambda a=args: mx.nn_offset(*a),
            lambda a=args: mx.zn_offset(*a), lambda a=args: mx.index_position(*a),
        )
    ),
    lambda: mx.zn_offset(1, 1, 1, c0=0),
    lambda: mx.zn_offset(1, 1, 1, c0=-8),
    *(lambda f=fmt: mx.element_format(f) for fmt in ("e4m3", "bad", None, 3, "")),
    lambda: mx.matmul(GOOD_A, GOOD_A),
    lambda: mx.matmul(GOOD_B, GOOD_B),
    lambda: mx.matmul(mx.quantize(np.ones((4, 64), np.float32), axis=0, block=4), GOOD_B),
    lambda: mx.matmul(GOOD_A, GOOD_B, bias=np.ones(7)),
    lambda: mx.dequantize(None),  # type: ignore[arg-type]
    lambda: mx.dequantize(GOOD_A, dtype="nope"),
    lambda: mx.dequantize(GOOD_A, dtype=np.int8),
    lambda: mx.apply_mapping(None, ["A", "B"], np.ones((4, 64))),  # type: ignore[arg-type]
    lambda: mx.apply_mapping(tcp.parse("A, B", {"A": 4, "B": 64}), ["A"], np.ones((4, 64))),
    lambda: mx.apply_mapping(tcp.parse("A, B", {"A": 4, "B": 64}), ["B", "A"], np.ones((4, 64))),
    lambda: mx.apply_mapping(tcp.parse("A, B", {"A": 4, "B": 64}), "A B", np.ones((4, 64))),
    lambda: mx.apply_mapping(tcp.parse("A, B", {"A": 4, "B": 64}), 5, np.ones((4, 64))),  # type: ignore[arg-type]
    lambda: mx.apply_mapping(tcp.parse("A # 8, B", {"A": 4, "B": 2}), ["A", "B"], np.ones((4, 2)), fill="x"),  # type: ignore[arg-type]
    lambda: mx.apply_mapping(tcp.parse("A # 8, B", {"A": 4, "B": 2}), ["A", "B"], np.ones((4, 2), np.uint8), fill=-1),
    lambda: mx.apply_mapping(tcp.parse("A # 8, B", {"A": 4, "B": 2}), ["A", "B"], np.ones((4, 2), np.int8), fill=10**30),
    lambda: mx.unpack_indices(np.ones(3, np.uint8), -1),
    lambda: mx.unpack_indices(np.ones((2, 3), np.uint8), 100),
    lambda: mx.unpack_uint2(np.ones(3, np.uint8), 2.5),  # type: ignore[arg-type]
    lambda: mx.pack_uint2(np.ones(4, np.int64), axis="0"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("index", range(len(MX_TABLE)))
def test_mx_table(index: int) -> None:
    expect_tcp(MX_TABLE[index])


@few
@given(
    shape=st.tuples(st.integers(0, 5), st.sampled_from([0, 8, 32, 64, 33])),
    fill=st.sampled_from([0.0, np.nan, np.inf, -np.inf, 1e38, -1e-40, 448.0, 65504.0]),
    fmt=st.sampled_from(["e4m3", "e5m2", "e2m1", "e3m2", "e2m3", "int8"]),
    axis=st.sampled_from([0, 1, -1]),
    block=st.sampled_from([1, 2, 8, 32]),
)
def test_mx_quantize_roundtrip_on_special_values(shape: tuple[int, int], fill: float, fmt: str, axis: int, block: int) -> None:
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    if x.size:
        x.flat[0] = fill
    q = expect_tcp(lambda: mx.quantize(x, axis=axis, fmt=fmt, block=block))
    if q is not None:
        assert mx.dequantize(q).shape == x.shape  # type: ignore[arg-type]
        expect_tcp(lambda: mx.matmul(q, q))  # type: ignore[arg-type]


# -- the command line ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cli_files() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "bad.py").write_text("def f(:\n")
        (root / "raise.py").write_text("raise RuntimeError('x')\n")
        (root / "exit.py").write_text("import sys\nsys.exit(3)\n")
        (root / "kern.py").write_text(
            "import tcpdsl as tcp\nfrom tcpdsl import m\nA = tcp.axis('A', 4)\n@tcp.kernel\ndef k(x: m['A']) -> None: ...\n"
        )
        (root / "mainexit.py").write_text("def main() -> None:\n    raise SystemExit(4)\n")
        (root / "nul.py").write_bytes(b"\xff\xfe\x00\x00")
        (root / "empty").mkdir()
        yield root


CLI_CASES = [
    [], ["run", "/nonexistent/x.py"], ["run", "{d}/bad.py"], ["run", "{d}/raise.py"], ["run", "{d}/exit.py"],
    ["run", "{d}/mainexit.py"], ["run", "{d}/kern.py"], ["run", "{d}/nul.py"], ["run", "{d}/empty"], ["run", "{d}"],
    ["run", "--seed", "-1", "{d}/kern.py"], ["run", "--json", "{d}/bad.py"],
    ["check", "/nonexistent"], ["check", "{d}/nul.py"],
    ["explain", ""], ["explain", "A,"], ["explain", "A"], ["explain", "A", "--axes", "A=x"], ["explain", "A", "--axes", "A=-1"],
    ["explain", "A", "--axes", "A"], ["explain", "A", "--axes", "A=0"], ["explain", "A", "--axes", "=3"],
    ["explain", "A", "--axes", "A=3,A=4"], ["explain", "A", "--axes", ",,"], ["explain", "a=3"],
    ["explain", "A", "--axes", "A=1000000000000000"], ["explain", "A # 100000000", "--axes", "A=3"],
    ["explain", "A", "--axes", "A=3", "--svg", "/nonexistent/dir/x.svg"], ["explain", "A", "--axes", "A=3", "--svg", "{d}"],
    ["explain", "{X}", "--axes", "A=3"], ["explain", "A", "--axes", "a=3"], ["explain", "A", "--axes", "A=99999999999999999999999"],
    ["explain", "A, B", "--axes", "A=3,B=5", "--svg", "{d}/ok.svg"], ["explain", "A", "--axes", "A=3=4"],
    ["explain", "(" * 100 + "A" + ")" * 100, "--axes", "A=3"], ["explain", "A / 0", "--axes", "A=3"],
]


@pytest.mark.parametrize("argv", CLI_CASES, ids=[" ".join(c)[:40] or "(none)" for c in CLI_CASES])
def test_cli_returns_an_exit_status_without_a_traceback(argv: list[str], cli_files: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli_main([a.replace("{d}", str(cli_files)) for a in argv])
        except SystemExit as exit_:  # argparse usage errors exit 2 by design
            status = exit_.code if isinstance(exit_.code, int) else 2
            assert status == 2, (argv, status)
    assert isinstance(status, int)
    assert "Traceback" not in out.getvalue() + err.getvalue()


# -- the mypy plugin ----------------------------------------------------------------------------

MAPPING_TEXTS = [
    "A", "B", "C", "1", "1 # 2", "1 # 256", "A, B / 16", "B % 16", "C, B / 16", "A, C", "", " ", "A,,", "(", "A /", "{",
    "}", "A # {*}", "#{0}", "{Chip}", "{N}", "A / {N}", "B % {N}", "{Zz}", "Q", "a", "A / 0", "A % 7", "A = 64", "A # 1",
    "1 # {Chip}", "99999999999999999999", "A / 999999999999999999", "[A)", "A # {!}", "{Chip} / 2", "A / {Chip}",
    "{kernel}", "{tcp}", "{m}", "{A}", "A, A", "B / 16 / 2 / 1", "(A, B) % 64", "0", "A # 0", "{ }", "{1}", "A\nB",
    "B % {Big}", "A / {Neg}", "1 # {Big}", "{Stream}", "{Flag}", "{Name}", "A #{0} 64, B", "((((((((A))))))))",
    "A" + ", A" * 40, "[" * 70 + "A" + "]" * 70, "A / {Zero}", "{Alias}", "{Alias} / 2", "\u00c5", "A\t,\tB", "A , ",
    "A /16 %2 = 1 # 4", "D", "D, B / 16",
]
OTHER_MAPPING_EXPRS = [
    "m[Name]", "m[1]", "m[None]", "m['A', 'B']", "m[f'A']", "m['A' + ', B']", "Alias", "Chip", "local", "A", "3", "None",
    "m", "m[...]", "m[b'A']", "m[Other]",
]
ANNOTATION_DTYPES = ["tcp.bf16", "tcp.f32", "tcp.i8", "tcp.i4", "tcp.i32", "tcp.f8e4m3", "int", "tcp.Tensor", "None", "Chip", 'm["A"]', "3"]
TENSOR_ARITY = {
    "CollectTensor": 6, "TrfTensor": 6, "ContractOuterTensor": 8, "ContractPacketTensor": 7, "ContractTimeTensor": 7,
    "ContractTensor": 6,
}
STAGE_KEYWORDS = [
    ("contract_outer", ["out_time", "out_packet"]), ("contract_packet", ["out_packet"]), ("contract_time", ["out_time"]),
    ("contract_lane", ["out_time", "out_packet"]),
]
AXIS_DECLARATIONS = [
    'D = tcp.axis("D", 4)', 'D = tcp.axis("D", 0)', 'D = tcp.axis("d", 4)', 'D = tcp.axis("E", 4)', 'D = tcp.axis("D", -3)',
    'D = tcp.axis("D", "4")', 'D = tcp.axis("D", 10**40)', 'D = tcp.axis("D", True)', 'D = tcp.axis("D")',
    "D = tcp.axis()", 'D = tcp.axis(Name, 4)', 'D = tcp.axis("D", N)', 'D, E = tcp.axis("D", 4), tcp.axis("E", 4)',
    'D: Any = tcp.axis("D", 4)', 'D = tcp.axis(*["D", 4])', 'D = tcp.axis(name="D", size=4)', 'D = tcp.axis("D", 4.0)',
    'D = tcp.axis("D", 99999999999999999999)', 'D = tcp.axis("", 4)', 'D = tcp.axis("D", 2**64)',
    "D = A", 'D = tcp.axis("D", 4) if Flag else tcp.axis("D", 8)',
]
MODULE_HEADER = """import tcpdsl as tcp
from tcpdsl import m
from typing import Any, Final

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)
N = 16
Big = 10**30
Neg = -4
Zero = 0
Flag = True
Name: Final = "A"
Other = "B"
Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]
Alias = m["A"]
"""


STREAM_TYPES = """
Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / 16"], m["B % 16"]]
Odd = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]]
"""


def _mapping_expr(r: random.Random) -> str:
    if r.random() < 0.75:
        return f"m[{r.choice(MAPPING_TEXTS)!r}]"
    return r.choice(OTHER_MAPPING_EXPRS)


def _tensor_type(r: random.Random) -> str:
    cls = r.choice(sorted(TENSOR_ARITY))
    arity = max(TENSOR_ARITY[cls] + r.choice([0, 0, 0, 0, -1, 1, -5]), 0)
    dtypes = 2 if cls == "ContractOuterTensor" else 1
    default = "tcp.bf16" if cls in ("CollectTensor", "TrfTensor") else "tcp.f32"
    args = [
        (r.choice(ANNOTATION_DTYPES) if r.random() < 0.3 else default) if i < dtypes else _mapping_expr(r) for i in range(arity)
    ]
    return f"tcp.{cls}[{', '.join(args) or '()'}]"


def kernel_module(r: random.Random) -> str:
    """A random, syntactically valid kernel module that exercises every plugin hook with odd inputs."""
    stream = _tensor_type(r) if r.random() < 0.4 else (
        f"tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, {_mapping_expr(r)}, {_mapping_expr(r)}]"
    )
    lines = [
        MODULE_HEADER,
        r.choice(AXIS_DECLARATIONS),
        f"Stream = {stream}",
        'Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / 16"], m["B % 16"]]',
        f"Odd = {_tensor_type(r)}",
        f"Alias2 = {_mapping_expr(r)}",
        "",
        "",
        "@tcp.kernel",
        "def kernel(x: Stream, w: Weights, o: Odd, anything: Any) -> object:",
        f"    local = {_mapping_expr(r)}",
        f"    trf = w.to_trf(lane={_mapping_expr(r)}, element={_mapping_expr(r)})",
    ]
    expr = r.choice(["x", "x", "x", "o", "anything", "trf", "w"])
    order = list(range(4))
    if r.random() < 0.3:
        r.shuffle(order)  # stages out of order
    for index in order[: r.randint(0, 4)]:
        name, keywords = STAGE_KEYWORDS[index]
        parts = [r.choice(["trf", "trf", "w", "x", "None", "anything"])] if name == "contract_outer" else []
        parts += [f"{kw}={_mapping_expr(r)}" for kw in keywords if r.random() < 0.9]
        if name == "contract_lane" and r.random() < 0.5:
            parts.append("mode=" + r.choice(["tcp.LaneMode.INTERLEAVED", "tcp.LaneMode.SEQUENTIAL", "'x'", "None", "3"]))
        if r.random() < 0.05:
            parts.insert(0, _mapping_expr(r))  # a stray positional argument
        expr = f"{expr}.{name}({', '.join(parts)})"
    lines += [
        f"    return {expr}",
        "",
        "",
        f"def second(v: {_tensor_type(r)}) -> None:",
        f"    y: {_tensor_type(r)} = v",
        f"    z = {_tensor_type(r)}(tcp.Device().main, v)",
        "    print(y, z)",
        "",
    ]
    return "\n".join(lines)


MYPY_MODULES = 40

# Hand-written call shapes next to the generated ones: the wrong tensor as weights (once a plugin
# KeyError), stages on unions, star arguments, mappings from odd places.
EDGE_KERNELS = [
    "def k1(x: Stream, w: Weights) -> object:\n"
    "    return x.contract_outer(w, out_time=m['A'], out_packet=m['B'])",
    "def k2(x: Stream, o: Odd) -> object:\n"
    "    return x.contract_outer(o, out_time=m['A'], out_packet=m['B'])",
    "def k3(x: Stream, w: Weights) -> object:\n"
    "    return x.contract_outer(x, out_time=m['A'], out_packet=m['B']).contract_packet(out_packet=m['1'])",
    "def k4(x: Stream | Weights, w: Weights) -> object:\n"
    "    return x.contract_outer(w.to_trf(lane=m['C'], element=m['B']), out_time=m['A'], out_packet=m['B'])",
    "def k5(x: Stream, w: Weights, *args: Any, **kwargs: Any) -> object:\n"
    "    return x.contract_outer(*args, **kwargs).contract_packet(**kwargs)",
    "def k6(x: Stream, w: Weights, mode: Any) -> object:\n"
    "    trf = w.to_trf(lane=m['C'], element=m['B'])\n"
    "    t = x.contract_outer(trf, out_time=m['A'], out_packet=m['B']).contract_packet(out_packet=m['1'])\n"
    "    return t.contract_time(out_time=m['A']).contract_lane(out_time=m['A'], out_packet=m['C'], mode=mode)",
    "def k7(x: Stream, w: Weights) -> object:\n"
    "    trf = w.to_trf(lane=m['C'], element=m['B'])\n"
    "    f = x.contract_outer\n"
    "    return f(trf, out_time=m['A'], out_packet=m['B']), getattr(x, 'contract_outer')(trf)",
    "def k8(x: Stream, w: Weights) -> object:\n"
    "    class Inner:\n"
    "        Lay = m['A']\n"
    "    trf = w.to_trf(lane=m['C'], element=m['B'])\n"
    "    return x.contract_outer(trf, out_time=Inner.Lay, out_packet=m[f'{Name}'])",
    "def k9(x: Stream, w: Weights) -> object:\n"
    "    m = {'A': 1}\n"
    "    return w.to_trf(lane=m['A'], element=m['B'])",
    "def k10(x: Any, w: Weights) -> object:\n"
    "    return w.to_trf(lane=m['C'], element=m['B']).contract_outer(x, out_time=m['A'])",
    "def k11(w: tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, m['C'], m['B']], x: Stream) -> object:\n"
    "    return x.contract_outer(w, out_time=m['A'], out_packet=m['B']).contract_time(out_time=m['A'])",
    "def k12(x: Stream, w: Weights) -> object:\n"
    "    return [x.contract_outer(t, out_time=m['A'], out_packet=m['B']) for t in (w.to_trf(lane=m['C'], element=m['B']), None)]",
]


def test_generated_kernel_modules_never_crash_mypy() -> None:
    from mypy import api

    r = random.Random(20261130)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        files = []
        for index in range(MYPY_MODULES):
            path = root / f"generated_{index}.py"
            path.write_text(kernel_module(r))
            files.append(str(path))
        edges = root / "edge_kernels.py"
        edges.write_text(MODULE_HEADER.replace("from typing import Any, Final", "from typing import Any, Final\nfrom typing import Optional")
                         + STREAM_TYPES + "\n\n" + "\n\n\n".join(EDGE_KERNELS) + "\n")
        files.append(str(edges))
        config = root / "mypy.ini"
        config.write_text(f"[mypy]\nmypy_path = {ROOT / 'stubs'}\nplugins = tcpdsl.mypy_plugin\n")
        out, err, status = api.run(
            ["--config-file", str(config), "--cache-dir", str(root / "cache"), "--no-error-summary", "--show-traceback", *files]
        )
    text = out + err
    assert "INTERNAL ERROR" not in text and "Traceback" not in text, text[-4000:]
    assert "tcpdsl-internal" not in text, [line for line in text.splitlines() if "tcpdsl-internal" in line]
    assert " [syntax]" not in text, "the generator must write valid Python"
    assert status == 1, text[-2000:]  # the generated modules have errors, but mypy finished
    codes = {line.rsplit("[", 1)[-1].rstrip("]") for line in out.splitlines() if line.endswith("]")}
    assert {"tcpdsl-layout", "tcpdsl-syntax"} & codes or any(code.startswith("tcpdsl-") for code in codes), codes
