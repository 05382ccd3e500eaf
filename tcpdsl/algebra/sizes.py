"""The size rules of the four operators, written once (docs/mapping-language.md §1.4).

The text path (``m["A / 3"]``), the value-level constructors (``A.stride(3)``) and the slot form of
a tree built from the node classes all ask :func:`size_rule`, so one mistake gets one rule, one
message and one hint wherever it is made.
"""

from __future__ import annotations

import math
from typing import Final, NamedTuple

# Listing divisors in a hint costs O(sqrt(size)); skip the list for absurd sizes.
_MAX_DIVISOR_SEARCH: Final = 10**8


class Broken(NamedTuple):
    """A size rule that an operator breaks: its name, the message and the hint."""

    rule: str
    message: str
    hint: str


def size_rule(op: str, size: int, n: int, operand: str) -> Broken | None:
    """What ``operand <op> n`` breaks, ``operand`` having ``size`` cells; None when it is valid.

    ``op`` is ``/``, ``%``, ``=`` or ``#``.
    """
    if op == "/" and (n <= 0 or size % n):
        return Broken("StrideIndivisible", f"stride {n} does not divide size {size} of {operand}",
                      _divisor_hint(size, n, operand, "/"))
    if op == "%" and (n <= 0 or size % n):
        hint = _divisor_hint(size, n, operand, "%")
        if 0 < n < size:
            hint += f"; to keep the first {n} cells write {operand} = {n}"
        return Broken("ModuloIndivisible", f"modulo {n} does not divide size {size} of {operand}", hint)
    if op == "=" and n <= 0:
        return Broken("EmptyMapping", f"resize to {n} leaves no cells of {operand}", "resize to at least 1")
    if op == "=" and n > size:
        return Broken("ResizeGrows", f"resize to {n} grows size {size} of {operand}",
                      f"a resize keeps a prefix; to extend with padding write {operand} # {n}")
    if op == "#" and n < size:
        hint = f"a padding extends; to keep the first {n} cells write {operand} = {n}" if n > 0 else "pad to at least the size"
        return Broken("PaddingShrinks", f"padding to {n} is smaller than size {size} of {operand}", hint)
    return None


def _divisor_hint(size: int, n: int, operand: str, op: str) -> str:
    parts = []
    if size <= _MAX_DIVISOR_SEARCH:
        parts.append(f"divisors of {size}: " + ", ".join(_divisors(size)))
    if n > 0 and op == "/":
        padded = -(-size // n) * n
        parts.append(f"or pad first: {operand} # {padded} / {n}")
    return "; ".join(parts) if parts else f"use a positive divisor of {size}"


def _divisors(n: int) -> list[str]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    out = [str(d) for d in small + [n // d for d in reversed(small) if d * d != n]]
    return out if len(out) <= 24 else [*out[:12], "...", *out[-12:]]
