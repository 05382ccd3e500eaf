"""The dtype table and the contraction engine's dtype rules (docs/stage-rules.md §2.1 and docs/runtime.md §3.2).

:data:`DTYPES` is the one table of scalar types: the scalar classes of the runtime are built from
it, and every width or property a rule needs is read from it by dtype name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify.constants import BITS_PER_BYTE, FLIT_BITS
from tcpdsl.verify.stage import Stage


@dataclass(frozen=True)
class Dtype:
    """One scalar type.

    ``wire_bits`` is what packet sizes count; ``value_bits`` the two's-complement width of an
    integer's value (the zero-point-subtracted i5 and i9 travel in the 4- and 8-bit containers).
    ``storage`` names the numpy or ml_dtypes dtype the runtime holds values in (the pure layers never
    load numpy, so it is a name). ``materializable``: may sit in DM or HBM. ``vector``: the Vector
    Engine computes in this dtype, or None when it does not take the type.
    """

    name: str
    wire_bits: int
    value_bits: int
    is_float: bool
    signed: bool
    storage: str
    materializable: bool
    vector: str | None


# In the order error messages list them.
DTYPES: Final[dict[str, Dtype]] = {
    d.name: d
    for d in (
        Dtype("i4", 4, 4, False, True, "int4", True, None),
        Dtype("i5", 4, 5, False, True, "int8", False, None),
        Dtype("i8", 8, 8, False, True, "int8", True, None),
        Dtype("i9", 8, 9, False, True, "int16", False, None),
        Dtype("f8e4m3", 8, 8, True, True, "float8_e4m3fn", True, None),
        Dtype("f8e5m2", 8, 8, True, True, "float8_e5m2", True, None),
        Dtype("bf16", 16, 16, True, True, "bfloat16", True, None),
        Dtype("i16", 16, 16, False, True, "int16", True, None),
        Dtype("i32", 32, 32, False, True, "int32", True, "i32"),
        Dtype("f32", 32, 32, True, True, "float32", True, "f32"),
        Dtype("f4e2m1", 4, 4, True, True, "float4_e2m1fn", True, None),
    )
}

# Wire width by dtype name, the view of the table most rules read.
BITS: Final[dict[str, int]] = {name: d.wire_bits for name, d in DTYPES.items()}

# The ContractionCast types: stream dtypes the Multiplier accepts, with their accumulator.
ACCUMULATOR: Final[dict[str, str]] = {
    "i4": "i32",
    "i5": "i32",
    "i8": "i32",
    "i9": "i32",
    "f8e4m3": "f32",
    "f8e5m2": "f32",
    "bf16": "f32",
}

ACCUMULATORS: Final = frozenset({"i32", "f32"})

# ContractionWeight: the TRF dtypes each stream dtype may multiply with.
_INT4: Final = ("i4", "i5")
_INT8: Final = ("i8", "i9")
WEIGHTS: Final[dict[str, tuple[str, ...]]] = {
    "i4": _INT4,
    "i5": _INT4,
    "i8": _INT8,
    "i9": _INT8,
    "f8e4m3": ("f8e4m3",),
    "f8e5m2": ("f8e5m2",),
    "bf16": ("bf16",),
}

PAIRING_STAGE: Final = Stage.CONTRACT_OUTER


def check_pairing(stream: str, weight: str) -> str:
    """Raise unless the Multiplier has a MAC for ``stream × weight``; return the accumulator dtype."""
    partners = WEIGHTS.get(stream)
    if partners is None:
        kind = "an unknown dtype" if stream not in BITS else "not a contraction stream dtype"
        raise DtypeError(
            PAIRING_STAGE,
            "NoMultiplier",
            f"no Multiplier for stream dtype {stream} ({kind}); the stream must be one of {', '.join(WEIGHTS)}",
            hint="cast the stream to one of those dtypes before the contraction, or contract on the Vector Engine",
        )
    if weight not in partners:
        raise DtypeError(
            PAIRING_STAGE,
            "NoMultiplier",
            f"no Multiplier for stream {stream} with weight {weight}: stream {stream} pairs only with weight "
            f"{' or '.join(partners)}",
            hint=f"load the TRF weights as {' or '.join(partners)}",
        )
    return ACCUMULATOR[stream]


def bits_of(dtype: str, stage: str) -> int:
    """The wire bits of ``dtype``, or a DtypeError naming ``stage`` for an unknown name."""
    bits = BITS.get(dtype)
    if bits is None:
        raise DtypeError(
            stage,
            "UnknownDtype",
            f"unknown dtype {dtype!r}",
            hint=f"use one of {', '.join(BITS)}",
        )
    return bits


def flit_elements(bits: int) -> int:
    """Elements of ``bits`` width in one 32-byte flit."""
    return FLIT_BITS // bits


def size_in_bytes(bits: int, n: int) -> int:
    """Bytes of ``n`` elements of ``bits`` width; a partial byte is a layout error."""
    total = n * bits
    if total % BITS_PER_BYTE:
        raise LayoutError(
            "dtype",
            "PartialByte",
            f"{n} elements of {bits} bits do not fill whole bytes",
            hint="use an even element count for 4-bit dtypes",
        )
    return total // BITS_PER_BYTE


def bytes_text(bits: int, n: int) -> str:
    """``n`` elements of ``bits`` width in bytes, printed exactly (a half byte shows as ``.5``)."""
    whole, rest = divmod(n * bits, BITS_PER_BYTE)
    return str(whole) if rest == 0 else f"{whole}.{rest * 10 // BITS_PER_BYTE}"
