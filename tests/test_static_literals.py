"""The text a layout's Literal type holds: canonical, unless that loses a padded operand's pieces."""

from __future__ import annotations

import pytest

from tcpdsl.algebra import parse
from tcpdsl.static.literals import type_text

SIZES = {"A": 32, "B": 32, "K": 999, "W": 151936}


@pytest.mark.parametrize(
    ("written", "text"),
    [
        ("A,B/16", "A, B / 16"),  # canonical: equal layouts are equal types
        ("(A, B) / 2", "A, B / 2"),  # pieces of an unpadded operand are digits: nothing lost
        ("B / 16, B % 16", "B"),
        ("K #{0} 1008 / 16", "K #{0} 1008 / 16"),  # canonical already keeps the padded operand
        ("T % 4, K #{0} 1008 / 16", "T % 4, K #{0} 1008 / 16"),
        ("K #{0} 1008 % 16", "K #{0} 1008 % 16"),  # canonically `K = 16`, which pools with nothing
        ("W #{0} 155648 % 8192", "W #{0} 155648 % 8192"),
    ],
)
def test_type_text(written: str, text: str) -> None:
    mapping = parse(written, {**SIZES, "T": 32})
    assert type_text(mapping) == text
    assert parse(text, {**SIZES, "T": 32}) == mapping  # the same cells either way


def test_the_written_text_pools_where_the_canonical_one_does_not() -> None:
    outer, inner = (parse(t, SIZES) for t in ("K #{0} 1008 / 16", "K #{0} 1008 % 16"))
    whole = parse("K #{0} 1008", SIZES)
    assert str(inner) == "K = 16"
    assert parse(f"{outer.text}, {str(inner)}", SIZES) != whole
    assert parse(f"{type_text(outer)}, {type_text(inner)}", SIZES) == whole
