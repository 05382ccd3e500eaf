"""The oracle of a contraction chain: the fold of docs/runtime.md §3.4, written over digits.

Every mapping of the chain holds some digits of each axis (:func:`tcpdsl.algebra.terms.held`):
the two operands, the pre-reduce product, the fold's output and the final layout. Cut at every
boundary any of them has, each axis becomes a list of digits, and each digit plays one part:

* held by the pre-reduce product but not by the fold's output: summed over (contracted); when
  neither operand holds it, every term of the sum is equal, so the sum is that term times its count;
* held by the product, the fold's output and the final layout: an output dimension (replicated
  when neither operand holds it);
* any other digit is read at 0 by whoever holds it: an operand digit the product never visits,
  or an output digit the final relayout does not keep; a final digit the product lacks replicates.

An anonymous broadcast the product has and the fold's output drops is summed, multiplying by its
count. The result is one einsum in float64 (exact int64 for integers, wrapped to i32 once),
shaped as the final layout's logical view. It shares no code with the evaluators.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Bcast, Mapping, Digit, held
from tcpdsl.errors import LayoutError
from tcpdsl.numerics.chain import Chain, Operand

Array = npt.NDArray[Any]
Place = tuple[str, int]  # (axis, stride): one digit of the common refinement
STAGE = "oracle"


def no_oracle(reason: str) -> LayoutError:
    return LayoutError(STAGE, "NoOracle", f"no digit oracle for this chain: {reason}",
                       hint="the kernel may be valid; compare the two evaluators instead")


@dataclass(frozen=True)
class _Side:
    """One operand as an array over its terms."""

    values: Array
    terms: tuple[Digit, ...]


def _side(operand: Operand) -> _Side:
    if operand.tensor is not None:
        return _Side(np.asarray(operand.tensor.values), operand.tensor.terms)
    sizes = operand.mapping.axis_sizes()
    values = np.asarray(operand.values)
    return _Side(values, tuple(Digit(a, sizes[a], 1, n) for a, n in zip(operand.axes, values.shape)))


def _terms(mapping: Mapping) -> tuple[Digit, ...]:
    found = held(mapping)
    if found.irregular:
        raise no_oracle(f"the layout {mapping} holds a part of {', '.join(found.irregular)} that is no set of digits")
    return found.terms


def _refine(lists: Sequence[Sequence[Digit]]) -> dict[str, list[int]]:
    cuts: dict[str, set[int]] = {}
    for terms in lists:
        for t in terms:
            cuts.setdefault(t.axis, set()).update((t.stride, t.top))
    out: dict[str, list[int]] = {}
    for axis, values in cuts.items():
        ordered = sorted(values)
        if any(high % low for low, high in zip(ordered, ordered[1:])):
            raise no_oracle(f"the digits of {axis} do not nest")
        out[axis] = ordered
    return out


def _split(terms: Sequence[Digit], cuts: dict[str, list[int]]) -> list[tuple[Place, int]]:
    """Each term's digits at the cuts, major first: ``((axis, stride), count)``."""
    out: list[tuple[Place, int]] = []
    for t in terms:
        inner = [c for c in cuts[t.axis] if t.stride <= c <= t.top]
        out.extend(((t.axis, low), high // low) for low, high in reversed(list(zip(inner, inner[1:]))))
    return out


def _anonymous_multiplicity(pre_reduce: Mapping, out: Mapping) -> int:
    """The product of the anonymous broadcasts the fold sums away (each output broadcast keeps one
    of the product's with the same count)."""
    left = [s.count for s in pre_reduce.slots() if isinstance(s.live, Bcast)]
    for slot in out.slots():
        if isinstance(slot.live, Bcast) and slot.count in left:
            left.remove(slot.count)
    return math.prod(left)


def expected(chain: Chain, magnitude: bool = False) -> tuple[Array, tuple[Digit, ...]]:
    """The oracle's result of ``chain`` over the terms of its final layout (``magnitude`` sums
    ``|stream| * |weight|``, the scale a float error is relative to)."""
    stream, weight = _side(chain.stream), _side(chain.weight)
    pre_reduce, fold_out, final = chain.pre_reduce(), chain.fold_mapping(), chain.result_mapping()
    pre, kept = _terms(pre_reduce), _terms(fold_out)
    final_terms = _terms(final)
    cuts = _refine([stream.terms, weight.terms, pre, kept, final_terms])
    in_pre = {d for d, _ in _split(pre, cuts)}
    in_kept = {d for d, _ in _split(kept, cuts)}
    final_digits = _split(final_terms, cuts)
    in_final = {d for d, _ in final_digits}
    output = in_pre & in_kept & in_final
    labels: dict[Place, int] = {}
    operands: list[Array] = []
    subscripts: list[list[int]] = []
    held_by_operand: set[Place] = set()
    for side in (stream, weight):
        digits = _split(side.terms, cuts)
        array = side.values.reshape([count for _, count in digits]) if digits else side.values.reshape(())
        index = tuple(slice(None) if d in in_pre and (d in output or d not in in_kept) else 0 for d, _ in digits)
        operands.append(exact_values(array[index], magnitude))
        used = [d for d, _ in digits if d in in_pre and (d in output or d not in in_kept)]
        held_by_operand |= set(used)
        subscripts.append([labels.setdefault(d, len(labels)) for d in used])
    counts = dict(_split(pre, cuts))
    multiplicity = _anonymous_multiplicity(pre_reduce, fold_out)
    for d in in_pre - in_kept - held_by_operand:
        multiplicity *= counts[d]
    kept_out = [d for d, _ in final_digits if d in output and d in held_by_operand]
    summed = np.einsum(operands[0], subscripts[0], operands[1], subscripts[1], [labels[d] for d in kept_out],
                       optimize=True) * multiplicity
    shape = [count if d in kept_out else 1 for d, count in final_digits]
    spread = np.broadcast_to(summed.reshape(shape), [count for _, count in final_digits])
    result = spread.reshape([t.count for t in final_terms])
    integer = all(o.dtype.kind == "i" for o in operands)
    if integer and not magnitude:
        return wrap_i32(result), final_terms
    return np.array(result, dtype=np.float64 if not integer else np.int64), final_terms


def wrap_i32(values: Array) -> Array:
    """int64 sums wrapped to i32, as the accumulator wraps."""
    return (((values + 2**31) % 2**32) - 2**31).astype(np.int32)


def exact_values(values: Array, magnitude: bool = False) -> Array:
    """float64, or int64 for integers (and the int4 of ml_dtypes); absolute values for ``magnitude``."""
    integer = values.dtype.kind in "iub" or values.dtype.name == "int4"
    out = values.astype(np.int64 if integer else np.float64)
    return np.abs(out) if magnitude else out
