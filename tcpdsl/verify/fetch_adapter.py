"""``fetch_cast``: the fetch adapter's per-element cast between fetch and collect (docs/stage-rules.md §4.4)."""

from __future__ import annotations

from typing import Final

from tcpdsl.errors import DtypeError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.memory import materializable_bits
from tcpdsl.verify.stage import Stage

STAGE: Final = Stage.FETCH_CAST
# Source dtype -> the dtypes fetch_cast widens or narrows it to (an identity cast is always allowed).
FETCH_CASTS: Final[dict[str, tuple[str, ...]]] = {
    "i4": ("i32",),
    "i8": ("i32",),
    "i16": ("i32",),
    "f8e4m3": ("f32",),
    "f8e5m2": ("f32",),
    "bf16": ("f32",),
    "f32": ("bf16",),
}
# Where the casts the adapter lacks are found, for the hint.
_ELSEWHERE: Final[dict[tuple[str, str], str]] = {
    ("f8e4m3", "bf16"): "fetch_table_lookup(bf16) maps an 8-bit float to bf16",
    ("f8e5m2", "bf16"): "fetch_table_lookup(bf16) maps an 8-bit float to bf16",
    ("f32", "f8e4m3"): "the cast engine narrows f32 to f8 after collect: cast(f8e4m3, ...)",
    ("f32", "f8e5m2"): "the cast engine narrows f32 to f8 after collect: cast(f8e5m2, ...)",
    ("i32", "i8"): "the cast engine narrows i32 after collect: cast(i8, ...)",
    ("i32", "i4"): "the cast engine narrows i32 after collect: cast(i4, ...)",
    ("i32", "i16"): "the cast engine narrows i32 after collect: cast(i16, ...)",
}


@memoized
def verify_fetch_cast(dtype: str, out_dtype: str) -> int:
    """Check ``fetch_cast(out_dtype)`` (``CastPair``); returns the output bits. Time and Packet are unchanged."""
    materializable_bits(STAGE, dtype)
    out_bits = materializable_bits(STAGE, out_dtype)
    if out_dtype != dtype and out_dtype not in FETCH_CASTS.get(dtype, ()):
        targets = (dtype,) + FETCH_CASTS.get(dtype, ())
        raise DtypeError(
            STAGE,
            "CastPair",
            f"fetch_cast: the fetch adapter has no {dtype} to {out_dtype} cast; from {dtype} it casts to "
            f"{' or '.join(targets)}",
            hint=_ELSEWHERE.get((dtype, out_dtype), "cast in two steps through i32 or f32"),
        )
    return out_bits
