"""Whether a logical tensor fits a source layout: the layout holds exactly the digits the tensor holds.

The checks read the layout's terms (:func:`tcpdsl.algebra.terms.held`, computed from its slots and
cached), never its cells, so they cost the same for a layout of a thousand cells or of a hundred
million. An axis the tensor lacks is a broadcast. An axis whose coordinates are no product of
digits (digits that overlap) is checked by walking the values of its own digits; only a layout
with a composite slot, whose coordinates have no digit form, is checked cell by cell.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from tcpdsl.algebra import Digit, Held, Mapping, StructKey, digit_text, held, runs, shared_limits, text_of
from tcpdsl.errors import LayoutError
from tcpdsl.numerics.logical import Tensor
from tcpdsl.numerics.placement import plan
from tcpdsl.numerics.term_arrays import axes_of


def _digit_set(terms: tuple[Digit, ...], cuts: list[int]) -> set[int]:
    """The digits (by low boundary) of ``cuts`` that ``terms`` cover."""
    return {low for low in cuts[:-1] for t in terms if t.stride <= low < t.top}


def difference(have: tuple[Digit, ...], other: tuple[Digit, ...]) -> tuple[Digit, ...]:
    """The digits of ``have`` (one axis) that ``other`` lacks, as merged terms, major first."""
    if not have:
        return ()
    axis, n = have[0].axis, have[0].n
    cuts = sorted({b for t in (*have, *other) for b in (t.stride, t.top)})
    lacking = _digit_set(have, cuts) - _digit_set(other, cuts)
    pieces = [Digit(axis, n, low, cuts[cuts.index(low) + 1] // low) for low in sorted(lacking)]
    return runs(pieces) or tuple(pieces)


def _tile_hint(extra: dict[str, tuple[Digit, ...]]) -> str:
    """``t.tile(m["Wp / 8192"], i)``: the tile that leaves out the digits the layout lacks."""
    return "t" + "".join(f".tile(m[\"{digit_text(t)}\"], i)" for terms in extra.values() for t in terms)


def _mapping_hint(tensor: Tensor, layout: Held) -> str:
    """``tcp.Tensor(array, m["A, B / 2"])``: a tensor over what the layout holds of the tensor's axes."""
    fitting = [t for axis in axes_of(tensor.terms) for t in layout.of(axis)]
    return f"tcp.Tensor(array, m[\"{text_of(fitting)}\"])"


def check_fit(tensor: Tensor, full: Mapping, stage: str) -> None:
    """Refuse ``tensor`` unless the layout ``full`` holds exactly its digits (names the digits that differ).

    The verdict depends only on the tensor's terms and the layout, so a fit is remembered: a kernel
    called again on tensors of the same shape does not check it again.
    """
    key = (tensor.terms, tensor.fixed_terms, StructKey(full))
    if key in _FITTED:
        return
    _check_fit(tensor, full, stage)
    if len(_FITTED) < _FITS_REMEMBERED:
        _FITTED.add(key)


_FITTED: set[tuple[object, ...]] = set()
_FITS_REMEMBERED: Final = 4096


def _check_fit(tensor: Tensor, full: Mapping, stage: str) -> None:
    layout = held(full)
    sizes = layout.sizes
    extra_axes = [a for a in axes_of(tensor.terms) if a not in sizes]
    if extra_axes:
        raise LayoutError(
            stage, "AxisNotInLayout",
            f"axis {', '.join(extra_axes)} of the tensor appears nowhere in the layout {full}",
            hint="add the axis to Time/Packet (or Lane/Element), or drop it from the tensor",
        )
    tensor_sizes = tensor.sizes
    for a in axes_of(tensor.terms):
        if tensor_sizes[a] != sizes[a]:
            raise LayoutError(
                stage, "AxisSize", f"axis {a} has size {tensor_sizes[a]} in the tensor but {sizes[a]} in the layout {full}",
            )
    if layout.composite:
        _check_cells(tensor, full, stage)
        return
    if tensor.whole:
        _check_whole(tensor, full, layout, stage)
        return
    _check_partial(tensor, full, layout, stage)


def _not_covered(tensor: Tensor, full: Mapping, stage: str, hint: str) -> LayoutError:
    return LayoutError(
        stage, "AxisNotCovered",
        f"the layout {full} does not hold every element of the tensor over {' '.join(tensor.axes)}",
        hint=hint,
    )


_COVER_HINT = "cover each axis completely (e.g. [A / 16, A % 16]) or drop the partly covered axis from the tensor"


def _check_cells(tensor: Tensor, full: Mapping, stage: str) -> None:
    if not tensor.whole:
        raise LayoutError(
            stage, "IrregularLayout", f"the layout {full} has a slot with no digit form, so it cannot hold part of an axis",
            hint="write the layout per axis (e.g. [A # 4, B] instead of [A, B] # 8)",
        )
    if not plan(full).coverage(tensor.axes):
        raise _not_covered(tensor, full, stage, _COVER_HINT)


def _reaches_all(full: Mapping, axis: str, n: int) -> bool:
    """Whether the live cells of ``full`` reach every coordinate of ``axis``, for an axis whose
    coordinates are no product of digits: the combinations of that axis's own digits are walked
    (the other slots do not change which of its coordinates are live)."""
    digits = [s.live for s in full.slots() if isinstance(s.live, Digit) and s.live.axis == axis]
    ndim = len(digits)
    values = [np.arange(d.count, dtype=np.int64).reshape([-1 if k == i else 1 for k in range(ndim)])
              for i, d in enumerate(digits)]
    coord = sum((v * d.stride for v, d in zip(values, digits)), np.zeros((1,) * ndim, dtype=np.int64))
    live = coord < n
    for base, limit, pool in shared_limits(full.slots(), axis):
        pooled = [v * (d.stride // base) for v, d in zip(values, digits) if any(d is p for p in pool)]
        live = live & (sum(pooled, np.zeros((1,) * ndim, dtype=np.int64)) < limit)
    reached = np.broadcast_to(coord, live.shape)[live]
    return bool(np.unique(reached).size == n)


def _check_whole(tensor: Tensor, full: Mapping, layout: Held, stage: str) -> None:
    partly = [a for a in tensor.axes if not layout.whole(a)]
    if not partly:
        return
    irregular = [a for a in partly if a in layout.irregular]
    if any(not _reaches_all(full, a, tensor.sizes[a]) for a in irregular):
        raise _not_covered(tensor, full, stage, _COVER_HINT)
    partly = [a for a in partly if a not in irregular]
    if not partly:
        return
    extra = {a: difference((Digit(a, tensor.sizes[a], 1, tensor.sizes[a]),), layout.of(a)) for a in partly}
    hint = f"{_COVER_HINT}; or lay out one tile, {_tile_hint(extra)}, or a tensor over what the layout holds, {_mapping_hint(tensor, layout)}"
    raise _not_covered(tensor, full, stage, hint)


def _check_partial(tensor: Tensor, full: Mapping, layout: Held, stage: str) -> None:
    for axis in axes_of(tensor.terms):
        if axis in layout.irregular:
            raise LayoutError(
                stage, "IrregularLayout",
                f"the layout {full} holds a part of {axis} that is no set of digits, so it cannot hold the tensor {tensor!r}",
                hint="pad and split the axis so that each digit is whole (e.g. A # 48 / 16, A # 48 % 16)",
            )
    extra: dict[str, tuple[Digit, ...]] = {}
    missing: dict[str, tuple[Digit, ...]] = {}
    for axis in axes_of(tensor.terms):
        mine = tuple(t for t in tensor.terms if t.axis == axis)
        theirs = layout.of(axis)
        if (found := difference(mine, theirs)):
            extra[axis] = found
        if (found := difference(theirs, mine)):
            missing[axis] = found
    if extra:
        digits = "; ".join(f"{text_of(terms)} of {axis}" for axis, terms in extra.items())
        raise LayoutError(
            stage, "DigitNotInLayout",
            f"the tensor {tensor!r} holds {digits}, which the layout {full} does not hold",
            hint=f"lay out one tile, {_tile_hint(extra)}, or add the digits to the layout",
        )
    if missing:
        digits = "; ".join(f"{text_of(terms)} of {axis}" for axis, terms in missing.items())
        fixed = "".join(f" (it fixes {digit_text(term)} = {value})" for term, value in tensor.fixed_terms
                        if any(term.within(t) or t.within(term) for ts in missing.values() for t in ts))
        raise LayoutError(
            stage, "DigitNotInTensor",
            f"the layout {full} holds {digits}, which the tensor {tensor!r} does not hold{fixed}",
            hint=f"build the tensor over what the layout holds, {_mapping_hint(tensor, layout)}, or drop the digits from the layout",
        )
