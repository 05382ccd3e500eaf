"""Dtype tables of the contraction engine (docs/stage-rules.md §2.1 and docs/runtime.md §3.2), by dtype name."""

from __future__ import annotations

from typing import Final

from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify.constants import BITS_PER_BYTE, FLIT_BITS
from tcpdsl.verify.stage import Stage

# Wire width: the zero-point-subtracted i5 and i9 travel in the 4- and 8-bit containers.
BITS: Final[dict[str, int]] = {
    "i4": 4,
    "i5": 4,
    "i8": 8,
    "i9": 8,
    "f8e4m3": 8,
    "f8e5m2": 8,
    "bf16": 16,
    "i16": 16,
    "i32": 32,
    "f32": 32,
    "f4e2m1": 4,
}

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
