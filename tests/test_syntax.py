"""The mapping-expression lexer and parser (docs/mapping-language.md §1.3): accepted forms, trees, and rejections."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpdsl.errors import MappingSyntaxError
from tcpdsl.syntax import Kind, PaddingKind, parse_expression, tokenize
from tcpdsl.syntax import tree


def shape(expr: tree.Expr | tree.Number) -> object:
    """The tree without positions, as nested tuples."""
    if isinstance(expr, tree.Name):
        return expr.name
    if isinstance(expr, (tree.Broadcast, tree.Literal)):
        return expr.n if isinstance(expr, tree.Broadcast) else expr.value
    if isinstance(expr, (tree.Splice, tree.NumberEscape)):
        return "{" + expr.name + "}"
    if isinstance(expr, tree.Pair):
        return (",", shape(expr.left), shape(expr.right))
    marker = expr.fill.marker if expr.op is tree.Op.PAD else expr.op.value
    return (marker, shape(expr.inner), shape(expr.number))


def tree_of(text: str) -> object:
    return shape(parse_expression(text).root)


# -- lexer ------------------------------------------------------------------------------------
def test_tokens_of_every_kind() -> None:
    kinds = [t.kind for t in tokenize("A1_b, 12 / % = # #{*} #{0} #{!} ( ) [ ] {N} :")]
    assert kinds == [
        Kind.IDENT, Kind.COMMA, Kind.NAT, Kind.SLASH, Kind.PERCENT, Kind.EQ, Kind.HASH, Kind.HASH_FILL,
        Kind.HASH_FILL, Kind.HASH_FILL, Kind.OPEN, Kind.CLOSE, Kind.OPEN, Kind.CLOSE, Kind.ESCAPE,
        Kind.COLON, Kind.END,
    ]


@pytest.mark.parametrize(
    ("text", "fill"),
    [("#{*}", PaddingKind.TOP), ("#{0}", PaddingKind.ZERO), ("#{!}", PaddingKind.BOTTOM), ("# {0}", PaddingKind.ZERO), ("#  { ! }", PaddingKind.BOTTOM)],
)
def test_hash_fill_ignores_whitespace(text: str, fill: PaddingKind) -> None:
    (token, end) = tokenize(text)
    assert token.kind is Kind.HASH_FILL and token.fill is fill and token.pos == 0
    assert end.kind is Kind.END


def test_hash_before_other_brace_is_plain_hash_and_escape() -> None:
    hash_token, escape, _ = tokenize("# { Size }")
    assert hash_token.kind is Kind.HASH and hash_token.fill is PaddingKind.TOP
    assert escape.kind is Kind.ESCAPE and escape.name == "Size" and escape.pos == 2


def test_numbers_are_decimal_naturals() -> None:
    (token, _) = tokenize("007")
    assert token.kind is Kind.NAT and token.value == 7


# -- accepted forms and their trees -------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A", "A"),
        ("Bat", "Bat"),
        ("ASDK_X", "ASDK_X"),
        ("1", 1),
        ("4", 4),
        ("A, B", (",", "A", "B")),
        ("A, B, C", (",", "A", (",", "B", "C"))),
        ("[A, B], C", (",", (",", "A", "B"), "C")),
        ("(A, B), C", (",", (",", "A", "B"), "C")),
        ("A, 1", (",", "A", 1)),
        ("A / 4", ("/", "A", 4)),
        ("A % 4", ("%", "A", 4)),
        ("A = 4", ("=", "A", 4)),
        ("A # 4", ("#", "A", 4)),
        ("A #{*} 4", ("#", "A", 4)),
        ("A #{0} 4", ("#{0}", "A", 4)),
        ("A #{!} 4", ("#{!}", "A", 4)),
        ("A # {0} 4", ("#{0}", "A", 4)),
        ("L1 # 256 / 32 % 4", ("%", ("/", ("#", "L1", 256), 32), 4)),
        ("A / 4 % 2 # 8", ("#", ("%", ("/", "A", 4), 2), 8)),
        ("A, B / 16", (",", "A", ("/", "B", 16))),
        ("[A, B] # 10", ("#", (",", "A", "B"), 10)),
        ("((A))", "A"),
        ("[(A)] / 2", ("/", "A", 2)),
        ("B / 2048 = 1 # 2, B % 2048", (",", ("#", ("=", ("/", "B", 2048), 1), 2), ("%", "B", 2048))),
        ("{Chip}, {Cluster}, {Slice}", (",", "{Chip}", (",", "{Cluster}", "{Slice}"))),
        ("1 # {Out}", ("#", 1, "{Out}")),
        ("A / {N} = {n_tiles}", ("=", ("/", "A", "{N}"), "{n_tiles}")),
        ("A #{!} {Size}", ("#{!}", "A", "{Size}")),
        ("A #{0}{N}", ("#{0}", "A", "{N}")),
        ("  A ,\n\tB  ", (",", "A", "B")),
    ],
)
def test_accepted_forms(text: str, expected: object) -> None:
    assert tree_of(text) == expected


@pytest.mark.parametrize(
    ("with_comma", "without"),
    [("A,", "A"), ("A, B,", "A, B"), ("(A, B,)", "A, B"), ("[A,], B", "A, B"), ("A, [B, C,],", "A, [B, C]")],
)
def test_one_trailing_comma(with_comma: str, without: str) -> None:
    assert tree_of(with_comma) == tree_of(without)


def test_names_are_collected_in_first_seen_order() -> None:
    parsed = parse_expression("B, {L}, A / {N}, B % {M}, {L}")
    assert parsed.axis_names == ("B", "A")
    assert parsed.splice_names == ("L",)
    assert parsed.number_names == ("N", "M")


@pytest.mark.parametrize(
    "text", ["A, B / 16", "[A, B] #{0} 10, C", "L1 # 256 / 32 % 4", "{Chip}, A #{!} {N}", "[[A, B], C] = 4"]
)
def test_render_parses_back_to_the_same_tree(text: str) -> None:
    assert tree_of(parse_expression(text).render()) == tree_of(text)


def test_parsing_is_cached_by_text() -> None:
    assert parse_expression("A, B % 3") is parse_expression("A, B % 3")


# -- rejections, with the caret pinned ------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "reason", "position"),
    [
        ("", "Empty mapping expression", 0),
        ("   ", "Empty mapping expression", 0),
        (",", "Expected a mapping before ','", 0),
        ("A,,B", "Expected a mapping before ','", 2),
        (",A", "Expected a mapping before ','", 0),
        ("A,,", "Expected a mapping before ','", 2),
        ("(,)", "Expected a mapping before ','", 1),
        ("()", "Empty brackets: expected a mapping", 1),
        ("(A", "Unbalanced brackets: '(' is never closed", 0),
        ("A, [B", "Unbalanced brackets: '[' is never closed", 3),
        ("A)", "Unbalanced brackets: ')' without a matching opening bracket", 1),
        ("(A]", "Mismatched brackets: '(' closed by ']'", 2),
        ("a", "Invalid axis name 'a': axis names start with an uppercase ASCII letter", 0),
        ("A, bat", "Invalid axis name 'bat': axis names start with an uppercase ASCII letter", 3),
        ("_A", "Invalid axis name '_A': axis names start with an uppercase ASCII letter", 0),
        ("0x10", "Invalid token '0x10': numbers are plain decimal naturals (no prefix, '_' or suffix)", 0),
        ("A / 1_000", "Invalid token '1_000': numbers are plain decimal naturals (no prefix, '_' or suffix)", 4),
        ("A % 8u32", "Invalid token '8u32': numbers are plain decimal naturals (no prefix, '_' or suffix)", 4),
        ("A /", "Missing number after '/': found end of expression", 3),
        ("A / B", "Missing number after '/': found 'B'", 4),
        ("A #{0}, B", "Missing number after '#{0}': found ','", 6),
        ("A # (4)", "Missing number after '#': found '('", 4),
        ("A B", "Unexpected token 'B': expected ',' or a postfix operator", 2),
        ("(A B)", "Unexpected token 'B': expected ',', a postfix operator or ')'", 3),
        ("A: 3", "Unexpected token ':': expected ',' or a postfix operator", 1),
        ("/ 4", "Unexpected token '/': expected an axis, a number, '{Name}' or a bracket", 0),
        ("A $ 4", "Unrecognized token '$'", 2),
        ("A / 1.5", "Unrecognized token '.'", 5),
        ("Ä", "Unrecognized token 'Ä'", 0),
        ("A }", "Unbalanced brackets: '}' without a matching '{'", 2),
        ("A # {N", "Unbalanced brackets: '{' is never closed", 4),
        ("{}", "Empty escape: write {Name}", 0),
        ("{ {A} }", "Invalid escape: braces do not nest", 2),
        ("{ A::SIZE }", "Invalid escape: expected {Name} naming a mapping alias or an int constant", 2),
        ("A / {8}", "Invalid escape: expected {Name} naming a mapping alias or an int constant", 5),
        ("{*}", "'{*}' is a padding kind and must follow '#'", 0),
        ("A / {0}", "'{0}' is a padding kind and must follow '#'", 4),
        ("A / 99999999999999999999", "Number too large: 99999999999999999999", 4),
    ],
)
def test_rejections_pin_reason_and_caret(text: str, reason: str, position: int) -> None:
    with pytest.raises(MappingSyntaxError) as caught:
        parse_expression(text)
    error = caught.value
    assert (error.reason, error.position) == (reason, position)
    assert error.text == text


def test_message_shows_text_and_caret() -> None:
    with pytest.raises(MappingSyntaxError) as caught:
        parse_expression("A,,B")
    assert str(caught.value) == "Expected a mapping before ','\n  A,,B\n    ^"


def test_deep_nesting_is_a_syntax_error_not_a_recursion_error() -> None:
    with pytest.raises(MappingSyntaxError, match="nested more than 64 deep") as caught:
        parse_expression("(" * 500 + "A" + ")" * 500)
    assert caught.value.position == 64


def test_long_chains_are_bounded() -> None:
    assert tree_of(", ".join(["A"] * 200))
    with pytest.raises(MappingSyntaxError) as caught:
        parse_expression(", ".join(["A"] * 300))
    assert caught.value.reason == "List too long (more than 256 comma-separated parts)"
    assert caught.value.position == 256 * 3 - 2
    with pytest.raises(MappingSyntaxError, match="Expression too deep"):
        parse_expression("A" + " / 1" * 300)


# -- fuzzing: malformed text only ever raises MappingSyntaxError ----------------------------------
_ALPHABET = ["A", "B", "L1", "x", "0", "1", "16", "0x1", "/", "%", "=", "#", "#{0}", "#{!}", "#{*}", "{N}", "{",
             "}", "(", ")", "[", "]", ",", ":", " ", "!", "*", "_"]


@settings(max_examples=400)
@given(st.one_of(st.text(max_size=40), st.lists(st.sampled_from(_ALPHABET), max_size=25).map("".join)))
def test_parser_raises_only_syntax_errors(text: str) -> None:
    try:
        parsed = parse_expression(text)
    except MappingSyntaxError as error:
        assert 0 <= error.position <= len(text)
    else:
        assert tree_of(parsed.render()) == shape(parsed.root)


# -- grammar-generated text always parses, and its tree matches the generator's ---------------
_atoms = st.one_of(
    st.sampled_from(["A", "B", "L1", "K_16"]).map(lambda name: (name, name)),
    st.integers(0, 64).map(lambda n: (str(n), n)),
    st.sampled_from(["Chip", "Tile"]).map(lambda name: ("{" + name + "}", "{" + name + "}")),
)
_numbers = st.one_of(st.integers(0, 999).map(lambda n: (str(n), n)), st.just(("{N}", "{N}")))
_markers = st.sampled_from([("/", "/"), ("%", "%"), ("=", "="), ("#", "#"), ("#{*}", "#"), ("# {0}", "#{0}"), ("#{!}", "#{!}")])


def _extend(inner: st.SearchStrategy[tuple[str, object]]) -> st.SearchStrategy[tuple[str, object]]:
    grouped = st.tuples(inner, st.sampled_from(["()", "[]"]), st.booleans()).map(
        lambda t: (t[1][0] + t[0][0] + ("," if t[2] else "") + t[1][1], t[0][1])
    )
    postfix = st.tuples(grouped, _markers, _numbers).map(
        lambda t: (f"{t[0][0]} {t[1][0]} {t[2][0]}", (t[1][1], t[0][1], t[2][1]))
    )
    pair = st.tuples(postfix | grouped | _atoms, inner).map(lambda t: (f"{t[0][0]}, {t[1][0]}", (",", t[0][1], t[1][1])))
    return grouped | postfix | pair


@settings(max_examples=300)
@given(st.recursive(_atoms, _extend, max_leaves=12))
def test_grammar_generated_text_parses_to_its_tree(case: tuple[str, object]) -> None:
    text, expected = case
    assert tree_of(text) == expected
    assert tree_of(text + ",") == expected
