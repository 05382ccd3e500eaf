"""The first cells where a result differs from the oracle, as a failure report names them."""

from __future__ import annotations

from typing import Final

import numpy as np

from tcpdsl.testing.kernels import OracleCheck

SHOWN: Final = 5


def differing_cells(verdict: OracleCheck, limit: int = SHOWN) -> list[str]:
    """One line per differing cell, in index order: its coordinates, the result and the oracle."""
    where = np.argwhere(verdict.outside)
    lines = []
    for index in where[:limit]:
        cell = tuple(int(i) for i in index)
        at = ", ".join(f"{axis}={i}" for axis, i in zip(verdict.axes, cell)) or "the scalar"
        lines.append(f"{at}: got {_number(verdict.actual[cell])}, oracle {_number(verdict.expected[cell])}")
    if len(where) > limit:
        lines.append(f"... and {len(where) - limit} more of {verdict.outside.size} cells")
    return lines


def mismatch_report(verdict: OracleCheck) -> str:
    """How a failed comparison failed: the largest error against its bound, then the first cells."""
    bound = "exactly" if verdict.exact else f"within {verdict.tolerance:.3g}"
    head = f"the result differs from the oracle (max error {verdict.max_error:.3g}; it must agree {bound})"
    return "\n".join([head, "first differing cells:", *("  " + line for line in differing_cells(verdict))])


def _number(value: object) -> str:
    """A cell's value as a plain number (six significant digits for floats)."""
    plain = np.asarray(value).item()
    return f"{plain:.6g}" if isinstance(plain, float) else str(plain)
