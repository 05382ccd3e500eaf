"""An independent numpy oracle for contraction results, and the check ``tcpdsl run`` applies.

:func:`einsum_oracle` works on whole logical tensors: multiply the stream and the weight
(broadcasting each over the axes it lacks), sum every axis absent from the output, and replicate
over output axes that neither operand has. :func:`check` compares a kernel's result with the fold
of its chain over digits (:mod:`tcpdsl.evaluate.chain_oracle`), which also covers partial tensors,
split reductions and reduced broadcast axes. Floats are computed in float64 and integers in
int64, wrapped to i32 at the end the way the accumulator wraps. Neither shares code with the
evaluators, so they can catch their mistakes.
"""

from __future__ import annotations

import string
from collections.abc import Mapping as MappingABC
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Mapping, Digit, digit_text
from tcpdsl.errors import LayoutError
from tcpdsl.evaluate import chain_oracle
from tcpdsl.evaluate.chain_oracle import exact_values, wrap_i32
from tcpdsl.harness.vector_oracle import pass_expected
from tcpdsl.numerics.chain import Chain
from tcpdsl.numerics.flow import Flow, Scattered, Window, Written
from tcpdsl.numerics.placement import plan
from tcpdsl.numerics.term_arrays import coordinate_array, term_coordinates
from tcpdsl.numerics.transfer import to_physical, to_terms
from tcpdsl.numerics.vector_chain import VectorChain
from tcpdsl.numerics.logical import Tensor, axis_names
from tcpdsl.numerics.scalars import cast
from tcpdsl.numerics.scatter_ops import key_offsets, over_axes
from tcpdsl.numerics.term_arrays import same_digits
from tcpdsl.numerics.term_arrays import rearrange
from tcpdsl.verify.scatter import scatter_rows
from tcpdsl.tensors.results import ContractOuterTensor, ContractPacketTensor, ContractTensor, ContractTimeTensor

Array = npt.NDArray[Any]
_STAGE = "oracle"
_RESULTS = (ContractOuterTensor, ContractPacketTensor, ContractTimeTensor, ContractTensor)


def einsum_oracle(
    stream: Tensor,
    weight: Tensor,
    out_axes: str | Sequence[str] | MappingABC[str, int],
    *,
    magnitude: bool = False,
) -> Array:
    """``out[o] = sum over the other axes of stream * weight``, in float64 (int64 wrapped to i32 for ints).

    ``out_axes`` orders the result; an axis in neither operand needs its size, so pass a
    ``{name: size}`` mapping for those. ``magnitude=True`` sums ``|stream| * |weight|`` instead,
    the scale a floating-point error bound is relative to.
    """
    if isinstance(out_axes, MappingABC):
        out_sizes = dict(out_axes)
        names = tuple(out_sizes)
    else:
        names = axis_names(out_axes)
        out_sizes = {}
    sizes = {**weight.sizes, **stream.sizes}
    for a in names:
        if a in sizes and a in out_sizes and sizes[a] != out_sizes[a]:
            raise LayoutError(_STAGE, "AxisSize", f"axis {a} has size {sizes[a]} in the operands but {out_sizes[a]} in the output")
        if a not in sizes and a not in out_sizes:
            raise LayoutError(_STAGE, "UnknownAxis", f"output axis {a} is in neither operand; give its size in out_axes")
    for t in (stream, weight):
        if not t.whole:
            raise LayoutError(_STAGE, "PartialTensor", f"einsum_oracle takes whole tensors, got {t!r}",
                              hint="check a kernel over part of an axis with oracle.check(result)")
        for a in t.axes:
            if sizes[a] != t.sizes[a]:
                raise LayoutError(_STAGE, "AxisSize", f"axis {a} has different sizes in the stream and the weight")
    lhs, rhs = exact_values(stream.values, magnitude), exact_values(weight.values, magnitude)
    integer = lhs.dtype.kind == "i" and rhs.dtype.kind == "i"
    if not integer:
        lhs, rhs = lhs.astype(np.float64), rhs.astype(np.float64)
    letters = {a: string.ascii_letters[i] for i, a in enumerate(dict.fromkeys((*stream.axes, *weight.axes, *names)))}
    carried = [a for a in names if a in sizes]
    spec = (
        "".join(letters[a] for a in stream.axes)
        + ","
        + "".join(letters[a] for a in weight.axes)
        + "->"
        + "".join(letters[a] for a in carried)
    )
    product = np.einsum(spec, lhs, rhs, optimize=True)
    shape = tuple(sizes[a] if a in sizes else out_sizes[a] for a in names)
    expanded = product.reshape(tuple(sizes[a] if a in sizes else 1 for a in names))
    out = np.broadcast_to(expanded, shape).copy()
    return wrap_i32(out) if integer and not magnitude else out


@dataclass(frozen=True)
class OracleCheck:
    """How a result compares with the oracle over the logical cells its layout holds."""

    axes: tuple[str, ...]
    expected: Array
    actual: Array
    max_error: float
    tolerance: float
    exact: bool
    passed: bool
    outside: Array  # per cell: True where the result is outside its bound (a failure names these)


def check(result: object, logical: MappingABC[str, Tensor] | Sequence[Tensor] | None = None) -> OracleCheck:
    """Compare a kernel's result with the oracle.

    A contraction result is compared with the fold of its chain over the digits each mapping holds
    (:func:`tcpdsl.evaluate.chain_oracle.expected`): exactly for integers; for floats within
    ``1e-5`` of the sum of product magnitudes, since the accumulator is f32. Any other tensor
    (e.g. a TRF loaded by ``to_trf``) must equal the single logical input.
    """
    if isinstance(result, _RESULTS):
        actual_tensor = result.to_tensor()
        expected, terms = chain_oracle.expected(result.chain)
        if terms != actual_tensor.terms:
            raise chain_oracle.no_oracle(f"the result holds {actual_tensor.axes}, the oracle {tuple(digit_text(t) for t in terms)}")
        exact = np.asarray(actual_tensor.values).dtype.kind in "iu"
        scale = expected if exact else chain_oracle.expected(result.chain, magnitude=True)[0]
        return _compare(actual_tensor, expected, scale)
    flow = getattr(result, "flow", None)
    chain = getattr(result, "chain", None)
    if isinstance(chain, VectorChain) and not isinstance(flow, Flow):
        expected, terms, scale = pass_expected(chain, _origin)
        return _compare_over(result, expected, terms, scale)
    if isinstance(flow, Flow) and (flow.steps or not isinstance(flow.root.source, Tensor)):
        return _check_flow(result, flow)
    if isinstance(result, tuple):
        # Each result of such a kernel follows its own flow; the runner compares one result at a time.
        raise LayoutError(_STAGE, "NoOracle", f"the kernel returns {len(result)} results; the oracle checks one")
    to_tensor = getattr(result, "to_tensor", None)
    if to_tensor is None:
        raise LayoutError(_STAGE, "NotATensor", f"cannot check a {type(result).__name__} against the oracle")
    actual_tensor = to_tensor()
    inputs = list(logical.values()) if isinstance(logical, MappingABC) else list(logical or [])
    if len(inputs) != 1 or not same_digits(inputs[0].terms, actual_tensor.terms):
        raise LayoutError(_STAGE, "NoOracle", "a result that is not a contraction is compared with its one logical input")
    source = inputs[0]
    expected = np.array(rearrange(source.values, source.terms, actual_tensor.terms))
    return _compare(actual_tensor, expected, np.abs(expected.astype(np.float64)))


# The relative error one rounding to a float dtype may add to a result that is not exact: one unit in the
# last place (2**-stored mantissa bits), since the oracle and the kernel may round to either side.
_ROUNDING: Final = {"bf16": 2.0**-7, "f8e4m3": 2.0**-3, "f8e5m2": 2.0**-2, "f32": 2.0**-23}


def _check_flow(result: object, flow: Flow) -> OracleCheck:
    """A stream or memory tensor: its root's values (the input laid out, or the chain's fold) with the
    RNGD cast of each change of dtype applied in turn; moves change no value (docs/runtime.md §4)."""
    expected, terms, scale, _ = _flow_expected(flow)
    return _compare_over(result, expected, terms, scale)


def _compare_over(result: object, expected: Array, terms: tuple[Digit, ...], scale: Array) -> OracleCheck:
    """``result`` against values and error scales over ``terms``, regrouped as the result holds them."""
    actual_tensor = result.to_tensor()  # type: ignore[attr-defined]
    if not same_digits(terms, actual_tensor.terms):
        raise chain_oracle.no_oracle(f"the result holds {actual_tensor.axes}, the oracle {tuple(digit_text(t) for t in terms)}")
    expected = np.array(rearrange(expected, terms, actual_tensor.terms))
    scale = np.array(rearrange(scale, terms, actual_tensor.terms))
    return _compare(actual_tensor, expected, scale)


def _flow_expected(flow: Flow) -> tuple[Array, tuple[Digit, ...], Array, bool]:
    """The values a flow's last position holds, over the terms of its origin, with the scale of their error."""
    root = flow.root
    if isinstance(root.source, Chain):
        expected, terms = chain_oracle.expected(root.source)
        scale = np.abs(chain_oracle.expected(root.source, magnitude=True)[0].astype(np.float64))
        exact = np.asarray(expected).dtype.kind in "iu"
    elif isinstance(root.source, Tensor):
        expected, terms, exact = np.asarray(root.source.values), root.source.terms, True
        scale = np.abs(expected.astype(np.float64))
    elif isinstance(root.source, Flow):
        expected, terms, scale, exact = _flow_expected(root.source)
    elif isinstance(root.source, (Window, Written)):
        expected, scale, exact = _windowed(root.source, root.mapping, root.terms)
        terms = root.terms
    elif isinstance(root.source, Scattered):
        expected, scale, exact = _scattered(root.source, root.terms)
        terms = root.terms
    elif isinstance(root.source, VectorChain):
        expected, terms, scale = pass_expected(root.source, _origin)
        # The pass's result keeps the axes of its data; one the layout only replicated over is read at 0.
        keep = {t.axis for t in root.terms}
        first = tuple(slice(None) if t.axis in keep else 0 for t in terms)
        expected, scale, terms = expected[first], scale[first], tuple(t for t in terms if t.axis in keep)
        exact = expected.dtype.kind in "iu"
    else:
        raise LayoutError(_STAGE, "NoOracle", "the stream starts from data the oracle does not follow")
    dtype = root.dtype
    for step in flow.steps:
        if step.relu:
            expected = np.fmax(expected, 0)
        if step.dtype != dtype:
            expected, dtype = cast(expected, step.dtype), step.dtype
            if not exact:
                scale = scale + _ROUNDING.get(dtype, 0.0) * np.abs(expected.astype(np.float64)) * 1e5
    return expected, terms, scale, exact


def _laid(flow: Flow) -> tuple[Array, Array, bool]:
    """A flow's expected values and error scale laid out on its last mapping (padding 0)."""
    expected, terms, scale, exact = _flow_expected(flow)
    out = []
    for values in (expected, scale):
        held, axes = coordinate_array(np.asarray(values), terms)
        out.append(to_physical(held, axes, flow.mapping, 0))
    return out[0], out[1], exact


def _windowed(source: Window | Written, mapping: Mapping, terms: tuple[Digit, ...]) -> tuple[Array, Array, bool]:
    """The expected values over ``terms`` of a window of a tensor, or of a tensor after a write into a window:
    Element cell ``p`` of the window is cell ``p + offset`` of the tensor."""
    values, scale, exact = _laid(source.parent)
    element, offset = source.element, source.offset
    if isinstance(source, Window):
        slices = values.reshape(-1, element).shape[0]
        size = mapping.size // slices
        cut = min(size, element - offset)
        window = [np.zeros((slices, size), dtype=a.dtype) for a in (values, scale)]
        for target, full in zip(window, (values, scale)):
            target[:, :cut] = full.reshape(-1, element)[:, offset : offset + cut]
        return to_terms(window[0], mapping, terms), to_terms(window[1], mapping, terms), exact
    new, new_scale, new_exact = _laid(source.written)
    target_mapping = source.written.mapping
    size = target_mapping.size // values.reshape(-1, element).shape[0]
    rows, cols = np.nonzero(plan(target_mapping).live.reshape(-1, size))
    out = []
    for full, part in ((values, new), (scale, new_scale)):
        grid = full.reshape(-1, element).copy()
        grid[rows, cols + offset] = part.reshape(-1, size)[rows, cols].astype(grid.dtype)
        out.append(to_terms(grid.reshape(-1), mapping, terms))
    return out[0], out[1], exact and new_exact


def _scattered(source: Scattered, terms: tuple[Digit, ...]) -> tuple[Array, Array, bool]:
    """The expected values over ``terms`` of a tensor after a scatter, key value by key value: the data's expected
    row set at the row of the scattered axis that the key's offset (the index's exact value) names."""
    values, scale, exact = _laid(source.parent)
    data, data_terms, data_scale, data_exact = _flow_expected(source.data)
    index, index_terms, _, _ = _flow_expected(source.index)
    params = source.params
    rows = scatter_rows(key_offsets(np.asarray(index), index_terms, source.index_layout, params), params)
    out = []
    for laid, new in ((values, np.asarray(data)), (scale, np.asarray(data_scale))):
        target, axes = coordinate_array(to_terms(laid, source.parent.mapping, terms), terms)
        target = np.array(target)  # a copy to write into
        held, held_axes = over_axes(new, data_terms, source.data_layout)
        key_shape = tuple(held.shape[held_axes.index(a)] for a in params.key)
        for k, row in enumerate(rows):
            at = dict(zip(params.key, np.unravel_index(k, key_shape)))
            row_values = held[tuple(at.get(a, slice(None)) for a in held_axes)]  # the payload, in the data's order
            payload_axes = [a for a in held_axes if a not in at]
            order = [payload_axes.index(a) for a in axes if a != params.axis]
            target[tuple(row if a == params.axis else slice(None) for a in axes)] = np.transpose(row_values, order)
        coords = term_coordinates(terms)
        out.append(target[tuple(coords[a] for a in axes)])
    return out[0], out[1], exact and data_exact


def _origin(source: object) -> tuple[Array, tuple[Digit, ...], Array]:
    """What a vector pass reads, as the oracle expects it: a flow's values or a contraction chain's fold."""
    if isinstance(source, Flow):
        expected, terms, scale, _ = _flow_expected(source)
        return np.asarray(expected), terms, np.asarray(scale)
    if isinstance(source, Chain):
        expected, terms = chain_oracle.expected(source)
        return np.asarray(expected), terms, np.abs(chain_oracle.expected(source, magnitude=True)[0].astype(np.float64))
    raise LayoutError(_STAGE, "NoOracle", "a vector pass starts from data the oracle does not follow")


def _compare(actual_tensor: Tensor, expected: Array, scale: Array) -> OracleCheck:
    actual = np.asarray(actual_tensor.values)
    exact = actual.dtype.kind in "iu"
    if exact:
        error = np.abs(actual.astype(np.int64) - expected.astype(np.int64))
        max_error = float(error.max(initial=0))
        tolerance = 0.0
        outside = error != 0
    else:
        diff = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
        bound = 1e-5 * scale + 1e-30
        max_error = float(diff.max(initial=0.0))
        tolerance = float(bound.max(initial=0.0))
        outside = ~(diff <= bound)  # NaN is outside every bound
    passed = not bool(outside.any())
    return OracleCheck(actual_tensor.axes, expected, actual, max_error, tolerance, exact, passed, outside)


def demo(fn: Any, seed: int = 0) -> bool:
    """Run the kernel ``fn`` on random inputs, print its explanation and the oracle verdict."""
    from tcpdsl.harness.kernel_spec import random_case

    case = random_case(fn, seed)
    result = fn(**case.inputs)
    explain = getattr(result, "explain", None)
    if explain is not None:
        print(explain())
    verdict = check(result, case.logical)
    status = "PASS" if verdict.passed else "FAIL"
    print(f"oracle: max error {verdict.max_error:.3g} (tolerance {verdict.tolerance:.3g}) {status}")
    return verdict.passed
