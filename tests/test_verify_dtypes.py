"""The dtype tables and the Multiplier pairing gate (docs/stage-rules.md §2.1, docs/runtime.md §3.2)."""

from __future__ import annotations

import itertools

import pytest

from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify import ACCUMULATOR, BITS, check_pairing, flit_elements, size_in_bytes
from tcpdsl.verify.dtypes import DTYPES, bytes_text

PAIRS = {
    ("i4", "i4"), ("i4", "i5"), ("i5", "i4"), ("i5", "i5"),
    ("i8", "i8"), ("i8", "i9"), ("i9", "i8"), ("i9", "i9"),
    ("f8e4m3", "f8e4m3"), ("f8e5m2", "f8e5m2"), ("bf16", "bf16"),
}


def test_wire_bits() -> None:
    assert {k: BITS[k] for k in ("i4", "i5", "i8", "i9", "f8e4m3", "f8e5m2", "bf16", "i32", "f32")} == {
        "i4": 4, "i5": 4, "i8": 8, "i9": 8, "f8e4m3": 8, "f8e5m2": 8, "bf16": 16, "i32": 32, "f32": 32,
    }


def test_accumulators() -> None:
    assert ACCUMULATOR == {
        "i4": "i32", "i5": "i32", "i8": "i32", "i9": "i32", "f8e4m3": "f32", "f8e5m2": "f32", "bf16": "f32",
    }


@pytest.mark.parametrize(("stream", "weight"), sorted(itertools.product(BITS, repeat=2)))
def test_pairing_table(stream: str, weight: str) -> None:
    if (stream, weight) in PAIRS:
        assert check_pairing(stream, weight) == ACCUMULATOR[stream]
    else:
        with pytest.raises(DtypeError) as info:
            check_pairing(stream, weight)
        assert (info.value.stage, info.value.rule) == ("contract_outer", "NoMultiplier")


@pytest.mark.parametrize(("bits", "elements"), [(4, 64), (8, 32), (16, 16), (32, 8)])
def test_flit_elements(bits: int, elements: int) -> None:
    assert flit_elements(bits) == elements
    assert size_in_bytes(bits, elements) == 32


def test_partial_bytes() -> None:
    assert bytes_text(4, 63) == "31.5"
    assert bytes_text(4, 64) == "32"
    with pytest.raises(LayoutError) as info:
        size_in_bytes(4, 63)
    assert info.value.rule == "PartialByte"


def test_the_dtype_table() -> None:
    """Wire bits derive from the one table; only i32 and f32 reach the Vector Engine; i5 and i9 never sit in memory."""
    assert BITS == {name: d.wire_bits for name, d in DTYPES.items()}
    assert list(BITS) == ["i4", "i5", "i8", "i9", "f8e4m3", "f8e5m2", "bf16", "i16", "i32", "f32", "f4e2m1"]
    assert {name for name, d in DTYPES.items() if d.vector is not None} == {"i32", "f32"}
    assert all(DTYPES[name].vector == name for name in ("i32", "f32"))
    assert {name for name, d in DTYPES.items() if not d.materializable} == {"i5", "i9"}
    assert {name for name, d in DTYPES.items() if d.is_float} == {"f8e4m3", "f8e5m2", "bf16", "f32", "f4e2m1"}
    assert all(d.value_bits >= d.wire_bits for d in DTYPES.values())
