"""Axes, ``m["..."]`` with lexical lookup, ``parse`` with explicit sizes, and the size rules (docs/mapping-language.md §1.1-§1.4)."""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Literal

import pytest
from beartype.peps import resolve_pep563
from hypothesis import given, settings
from hypothesis import strategies as st

import scope_sample_module as sample
from tcpdsl.algebra import (
    Axis,
    Broadcast,
    Mapping,
    Modulo,
    Padding,
    PaddingKind,
    Pair,
    Resize,
    Stride,
    Symbol,
    axis,
    m,
    parse,
)
from tcpdsl.errors import LayoutError, MappingSyntaxError, TcpError

if TYPE_CHECKING:
    from typing import Literal as typed_m
else:
    typed_m = m

A = axis("A", 512)
Out = axis("Out", 64)
L1 = axis("L1", 192)
B = axis("B", 512)
N = 8
Left = m["A"]
Right = m["B"]
Flag = True


def same(a: Mapping, b: Mapping) -> bool:
    return a.same_structure(b)


def layout_error(call: typing.Callable[[], object]) -> LayoutError:
    with pytest.raises(LayoutError) as caught:
        call()
    return caught.value


# -- axes ---------------------------------------------------------------------------------------
def test_axis_is_a_symbol_mapping() -> None:
    assert isinstance(A, Symbol) and isinstance(A, Mapping)
    assert (A.name, A.n, A.size, A.axes) == ("A", 512, 512, ("A",))
    assert same(A, Symbol("A", 512))


def test_axis_is_generic_for_checkers() -> None:
    alias = Axis[Literal["A"], Literal[32]]
    assert typing.get_origin(alias) is Axis
    assert typing.get_args(alias) == (Literal["A"], Literal[32])


@pytest.mark.parametrize("name", ["a", "", "1A", "A-B", "_A", "Ä", 5])
def test_axis_rejects_bad_names(name: object) -> None:
    error = layout_error(lambda: axis(name, 4))  # type: ignore[type-var]
    assert (error.stage, error.rule) == ("mapping", "InvalidAxisName")


@pytest.mark.parametrize("size", [0, -3, True, 2.0, "4"])
def test_axis_rejects_bad_sizes(size: object) -> None:
    error = layout_error(lambda: axis("A", size))  # type: ignore[type-var]
    assert (error.stage, error.rule) == ("mapping", "InvalidAxisSize")
    assert error.detail == f"axis A has size {size!r}; sizes are positive ints"


# -- building exactly as written ------------------------------------------------------------------
def test_nodes_are_built_as_written() -> None:
    assert same(m["A, 1"], Pair(Symbol("A", 512), Broadcast(1)))
    assert same(m["A, B, Out"], Pair(Symbol("A", 512), Pair(Symbol("B", 512), Symbol("Out", 64))))
    assert same(m["A = 512"], Resize(Symbol("A", 512), 512))
    assert same(m["A # 512"], Padding(Symbol("A", 512), 512, PaddingKind.TOP))
    assert same(m["A / 1"], Stride(Symbol("A", 512), 1))


def test_precedence_of_postfix_operators() -> None:
    l1 = Symbol("L1", 192)
    assert same(m["L1 # 256 / 32 % 4"], Modulo(Stride(Padding(l1, 256, PaddingKind.TOP), 32), 4))
    a = Symbol("A", 512)
    assert same(m["A / 4 % 2 # 8"], Padding(Modulo(Stride(a, 4), 2), 8, PaddingKind.TOP))
    assert same(m["[A, B] #{!} 300000"], Padding(Pair(a, Symbol("B", 512)), 300000, PaddingKind.BOTTOM))


def test_padding_kinds() -> None:
    built = [m[f"Out {marker} 128"] for marker in ("#", "#{*}", "#{0}", "#{!}", "# {0}")]
    kinds = [node.kind for node in built if isinstance(node, Padding)]
    assert kinds == [PaddingKind.TOP, PaddingKind.TOP, PaddingKind.ZERO, PaddingKind.BOTTOM, PaddingKind.ZERO]


def test_sizes() -> None:
    assert parse("C, D # 64", {"C": 13, "D": 61}).size == 13 * 64
    assert parse("C, D = 2", {"C": 2, "D": 3}).size == 4
    assert m["A / 64, A % 32, A / 32 % 2"].size == 8 * 32 * 2
    assert m["A / 256 = 1 # 2, A % 256"].size == 512


# -- escapes (escaped_const.rs) and trailing commas (trailing_comma.rs) ---------------------------
@pytest.mark.parametrize(
    ("escaped", "plain"),
    [
        ("1 # {OutSize}", "1 # 64"),
        ("A # {Big}", "A # 600"),
        ("A / {N}", "A / 8"),
        ("A % {N}", "A % 8"),
        ("A = {N}", "A = 8"),
        ("A #{!} {Big}", "A #{!} 600"),
        ("A #{0} {Big}", "A #{0} 600"),
        ("{Inner}", "A"),
        ("{Left}, {Right}", "A, B"),
    ],
)
def test_escaped_constants(escaped: str, plain: str) -> None:
    sizes = {"A": 512, "B": 512}
    env: dict[str, Mapping | int] = {"OutSize": 64, "Big": 600, "N": 8, "Inner": parse("A", sizes), "Left": Left,
                                      "Right": Right}
    assert same(parse(escaped, sizes, env), parse(plain, sizes))


def test_escapes_resolve_lexically() -> None:
    assert same(m["A / {N}"], m["A / 8"])
    assert same(m["{Left}, {Right}"], m["A, B"])
    assert m["{Left}"] is Left


@pytest.mark.parametrize(("with_comma", "without"), [("A,", "A"), ("A, B,", "A, B"), ("(A, B,)", "A, B")])
def test_trailing_comma(with_comma: str, without: str) -> None:
    assert same(m[with_comma], m[without])


# -- lexical scope --------------------------------------------------------------------------------
def test_module_level_names_of_another_module() -> None:
    a, b = Symbol("A", 32), Symbol("B", 64)
    expected = Pair(Broadcast(1), Pair(Padding(Broadcast(1), 2), Pair(Stride(a, 8), Modulo(b, 16))))
    assert same(typing.cast(Mapping, sample.AT_IMPORT), expected)
    assert same(typing.cast(Mapping, sample.uses_module_axes()), Pair(b, a))
    assert same(typing.cast(Mapping, sample.Tile), Pair(a, Stride(b, 16)))


def test_locals_shadow_module_axes() -> None:
    built, local_a = typing.cast(tuple[Mapping, Axis[str, int]], sample.local_shadowing())
    assert same(built, Pair(Symbol("A", 4), Modulo(Symbol("B", 64), 4)))
    assert local_a.n == 4


def test_local_axes_in_a_function() -> None:
    Q = axis("Q", 6)  # noqa: N806
    assert same(m["Q, A / 256"], Pair(Q, Stride(Symbol("A", 512), 256)))


def test_names_of_other_modules_are_not_visible() -> None:
    error = layout_error(lambda: m["Tile"])
    assert (error.rule, error.detail) == ("UnknownAxis", 'unknown axis Tile (in m["Tile"])')


def test_annotations_under_postponed_evaluation() -> None:
    hints = typing.get_type_hints(sample.annotated)
    assert same(hints["x"], Pair(Symbol("A", 32), Stride(Symbol("B", 64), 8)))
    expected = Pair(Pair(Symbol("A", 32), Stride(Symbol("B", 64), 16)), Padding(Symbol("Out", 64), 128, PaddingKind.ZERO))
    assert same(hints["y"], expected)


def test_annotations_resolved_by_beartype() -> None:
    def kernel(x: typed_m["{Left}, A % {N}"]) -> None: ...

    resolve_pep563(kernel)
    assert same(kernel.__annotations__["x"], Pair(Symbol("A", 512), Modulo(Symbol("A", 512), 8)))


def test_repeated_expressions_are_cached() -> None:
    assert m["A, B / 16, Out"] is m["A, B / 16, Out"]
    assert parse("X / 2", {"X": 8}).size == 4
    assert parse("X / 2", {"X": 16}).size == 8


def test_m_takes_one_string() -> None:
    with pytest.raises(MappingSyntaxError, match="A mapping expression is one string, not a tuple"):
        m["A", "B"]  # type: ignore[index]


# -- size rules and resolution errors, messages pinned -------------------------------------------
@pytest.mark.parametrize(
    ("text", "rule", "detail", "hint"),
    [
        ("A / 3", "StrideIndivisible", 'stride 3 does not divide size 512 of A (in m["A / 3"])',
         "divisors of 512: 1, 2, 4, 8, 16, 32, 64, 128, 256, 512; or pad first: A # 513 / 3"),
        ("[A, Out] / 0", "StrideIndivisible", 'stride 0 does not divide size 32768 of (A, Out) (in m["[A, Out] / 0"])',
         "divisors of 32768: 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768"),
        ("L1 % 5", "ModuloIndivisible", 'modulo 5 does not divide size 192 of L1 (in m["L1 % 5"])',
         "divisors of 192: 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 192; to keep the first 5 cells write L1 = 5"),
        ("Out / 2 = 40", "ResizeGrows", 'resize to 40 grows size 32 of Out / 2 (in m["Out / 2 = 40"])',
         "a resize keeps a prefix; to extend with padding write Out / 2 # 40"),
        ("Out #{0} 16", "PaddingShrinks", 'padding to 16 is smaller than size 64 of Out (in m["Out #{0} 16"])',
         "a padding extends; to keep the first 16 cells write Out = 16"),
        ("A = 0", "EmptyMapping", 'resize to 0 leaves no cells of A (in m["A = 0"])', "resize to at least 1"),
        ("A, 0", "EmptyMapping", 'broadcast 0 has no cells (in m["A, 0"])', "write 1 for the identity"),
        ("Outt", "UnknownAxis", 'unknown axis Outt (in m["Outt"])', "did you mean Out?"),
        ("Left, B", "UnknownAxis", 'Left is a mapping alias, not an axis (in m["Left, B"])', "write {Left} to splice it"),
        ("N", "UnknownAxis", 'N is bound to a value of type int, not an axis (in m["N"])',
         'declare the axis with N = axis("N", size)'),
        ("{Missing}", "BadEscape", '{Missing} must name a mapping, but Missing is not defined (in m["{Missing}"])',
         'bind Missing to a module-level alias such as Tile = m["A, B"]'),
        ("{N}", "BadEscape", '{N} must name a mapping, but N is bound to a value of type int (in m["{N}"])',
         'bind N to a module-level alias such as Tile = m["A, B"]'),
        ("A / {Left}", "BadEscape",
         '{Left} must name an int, but Left is bound to a value of type Symbol (in m["A / {Left}"])',
         "bind Left to a module-level int constant such as N = 8"),
        ("A / {Flag}", "BadEscape",
         '{Flag} must name an int, but Flag is bound to a value of type bool (in m["A / {Flag}"])',
         "bind Flag to a module-level int constant such as N = 8"),
    ],
)
def test_layout_errors_are_pinned(text: str, rule: str, detail: str, hint: str) -> None:
    error = layout_error(lambda: m[text])
    assert (error.stage, error.rule, error.detail, error.hint) == ("mapping", rule, detail, hint)


def test_axis_bound_under_another_name() -> None:
    error = layout_error(lambda: parse("Wrong", {}, {"Wrong": sample.Wrong}))
    assert (error.rule, error.detail) == ("UnknownAxis", 'Wrong is bound to axis Other, not to an axis named Wrong (in m["Wrong"])')
    W = sample.Wrong  # noqa: N806
    with pytest.raises(LayoutError) as caught:
        m["W"]
    assert caught.value.detail == 'W is bound to axis Other, not to an axis named W (in m["W"])'
    assert caught.value.hint == 'declare it as W = axis("W", 4): the variable name must equal the axis name'
    assert W.n == 4


def test_parse_takes_declared_axes_from_env() -> None:
    assert same(parse("A, Q", {"Q": 3}, {"A": A}), Pair(Symbol("A", 512), Symbol("Q", 3)))


def test_unknown_axis_lists_known_axes() -> None:
    error = layout_error(lambda: parse("Zed", {"A": 2, "B": 3}))
    assert error.hint == "known axes: A, B"
    error = layout_error(lambda: parse("Zed", {}))
    assert error.hint == 'declare it with Zed = axis("Zed", size)'


@pytest.mark.parametrize("size", [0, -1, True, 2.5])
def test_parse_rejects_bad_sizes(size: object) -> None:
    error = layout_error(lambda: parse("A", {"A": size}))  # type: ignore[dict-item]
    assert error.rule == "InvalidAxisSize"


@pytest.mark.parametrize("size", [True, 1.0])
def test_a_cached_text_still_rejects_a_bad_size_equal_to_a_good_one(size: object) -> None:
    parse("A, B", {"A": 1, "B": 2})
    error = layout_error(lambda: parse("A, B", {"A": size, "B": 2}))  # type: ignore[dict-item]
    assert error.rule == "InvalidAxisSize"


@pytest.mark.parametrize(
    ("text", "size"), [("A = 4", 4), ("A # 4", 4), ("A % 4", 4), ("A / 4", 1), ("A / 2 = 1", 1), ("A % 2 #{!} 2", 2)]
)
def test_non_growing_resize_and_non_shrinking_padding_are_accepted(text: str, size: int) -> None:
    assert parse(text, {"A": 4}).size == size


# -- fuzzing: parse raises nothing but TcpError -------------------------------------------------
_TOKENS = ["A", "B", "C", "Q", "a", "0", "1", "2", "3", "16", "99", "/", "%", "=", "#", "#{0}", "#{!}", "#{*}",
           "{N}", "{Z}", "{M}", "{Q}", "{", "}", "(", ")", "[", "]", ",", " ", "!", "*", "0x2", ":"]


@settings(max_examples=400)
@given(st.one_of(st.text(max_size=40), st.lists(st.sampled_from(_TOKENS), max_size=25).map("".join)))
def test_parse_raises_only_tcp_errors(text: str) -> None:
    sizes = {"A": 8, "B": 6, "C": 1}
    env: dict[str, Mapping | int] = {"N": 2, "Z": 0, "M": parse("A, B", sizes)}
    try:
        built = parse(text, sizes, env)
    except TcpError:
        return
    assert built.size >= 1


_RULES = {"/": "StrideIndivisible", "%": "ModuloIndivisible", "=": "ResizeGrows", "#": "PaddingShrinks"}


def _expected_size(size: int, ops: list[tuple[str, int]]) -> int | str:
    """The size after ``ops`` by docs/mapping-language.md §1.4 (with the value-level checks), or the rule that fires."""
    for op, n in ops:
        if op == "/" and (n <= 0 or size % n):
            return _RULES[op]
        if op == "%" and (n <= 0 or size % n):
            return _RULES[op]
        if op == "=" and n == 0:
            return "EmptyMapping"
        if (op == "=" and n > size) or (op == "#" and n < size):
            return _RULES[op]
        size = size // n if op == "/" else n
    return size


@settings(max_examples=300)
@given(st.integers(1, 48), st.lists(st.tuples(st.sampled_from(sorted(_RULES)), st.integers(0, 60)), max_size=4))
def test_postfix_size_rules(size: int, ops: list[tuple[str, int]]) -> None:
    text = "X" + "".join(f" {op} {n}" for op, n in ops)
    expected = _expected_size(size, ops)
    if isinstance(expected, str):
        error = layout_error(lambda: parse(text, {"X": size}))
        assert (error.stage, error.rule) == ("mapping", expected)
    else:
        assert parse(text, {"X": size}).size == expected
