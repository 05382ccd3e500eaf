"""An independent model of a vector pass for the oracle (docs/runtime.md §3.9).

Each op is read by its reference name and computed on the pass's logical view in float64 (int64 for
i32 streams, wrapped or saturated after each op as its name says), next to an error scale: the size
the f32 engine's roundings are relative to (a sum of magnitudes for sums, propagated through products,
quotients and square roots). f32 results flush to a signed zero below the smallest normal, and min/max
ignore a NaN operand, as the engine does. It shares no code with the evaluators' vector modules: an op
it does not model (bit operations on f32, reinterpret) is reported as having no oracle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Digit, digit_text
from tcpdsl.errors import LayoutError
from tcpdsl.numerics.term_arrays import axes_of, rearrange, same_digits, term_coordinates
from tcpdsl.numerics.vector_chain import Constant, PassStep, VectorChain, VrfValues
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.vector_ops import MulF

Array = npt.NDArray[Any]
Expected = tuple[Array, Array]  # values and error scale over the same terms
# The expected values and scale of a flow or chain (whatever a pass's source or a VRF holds), over terms.
Origin = Callable[[object], tuple[Array, tuple[Digit, ...], Array]]

_STAGE: Final = "oracle"
_TINY: Final = 2.0**-126  # the smallest normal f32
_I32: Final = 1 << 32
_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1
_PASSIVE: Final = frozenset({Stage.VECTOR_INIT, Stage.VECTOR_INTRA_SLICE_TAG, Stage.VECTOR_FINAL, Stage.VECTOR_STASH})
_MOVES: Final = frozenset({Stage.VECTOR_NARROW_SPLIT, Stage.VECTOR_NARROW_TRIM, Stage.VECTOR_WIDEN_CONCAT,
                           Stage.VECTOR_WIDEN_PAD})
_REDUCES: Final = frozenset({Stage.VECTOR_INTRA_SLICE_REDUCE, Stage.VECTOR_INTER_SLICE_REDUCE})


def no_oracle(detail: str) -> LayoutError:
    return LayoutError(_STAGE, "NoOracle", f"the oracle does not model {detail}; compare it with a numpy model of the pass")


def pass_expected(chain: VectorChain, origin: Origin) -> tuple[Array, tuple[Digit, ...], Array]:
    """The values a pass ends with over its last terms, and their error scale."""
    source = chain.source
    values, scale = _over(origin(source.origin), source.terms)
    integer = source.dtype == "i32"
    values = _wrap(values.astype(np.int64)) if integer else _flush(values.astype(np.float64))
    terms = source.terms
    stash: tuple[Array, Array, tuple[Digit, ...]] | None = None
    for step in chain.steps:
        if step.stage is Stage.VECTOR_STASH:
            stash = (values, scale, terms)
        elif step.stage in _REDUCES:
            values, scale = _reduce(step, values, scale, terms)
        elif step.stage in _MOVES:
            values, scale = rearrange(values, terms, step.terms), rearrange(scale, terms, step.terms)
        elif step.stage not in _PASSIVE:
            operands = [_operand(o, terms, stash, origin) for o in step.operands]
            shape = values.shape  # an op keeps the stream's shape, even one that reads only operands (MODE11)
            values, scale = (np.broadcast_to(a, shape).copy() for a in _apply(step, (values, scale), operands))
        terms = step.terms
    return values, terms, scale


def _over(found: tuple[Array, tuple[Digit, ...], Array], terms: tuple[Digit, ...]) -> Expected:
    """The origin's values and scale over the terms a pass reads. An axis the origin lacks altogether (a
    layout that replicates the data over it, as ``Dummy64`` does) repeats the same values along it."""
    values, held, scale = found
    axes = set(axes_of(held))
    mine = tuple(t for t in terms if t.axis in axes)
    if not same_digits(held, mine):
        raise no_oracle(f"a pass reading {tuple(digit_text(t) for t in held)} as {tuple(digit_text(t) for t in terms)}")
    spread = tuple(i for i, t in enumerate(terms) if t.axis not in axes)
    shape = tuple(t.count for t in terms)
    out = []
    for part, dtype in ((values, None), (scale, np.float64)):
        grouped = np.expand_dims(np.asarray(rearrange(np.asarray(part), held, mine), dtype=dtype), spread)
        out.append(np.broadcast_to(grouped, shape))
    return out[0], out[1]


def _operand(operand: object, terms: tuple[Digit, ...], stash: tuple[Array, Array, tuple[Digit, ...]] | None,
             origin: Origin) -> Expected:
    if isinstance(operand, Constant):
        value = np.asarray(operand.value)
        return value, np.abs(value.astype(np.float64))
    if isinstance(operand, VrfValues):
        vrf, vrf_scale = _over(origin(operand.origin), operand.terms)
        coords = term_coordinates(terms)
        # The VRF cell whose digits the element's coordinates name; an axis the VRF lacks broadcasts.
        index = [(coords[t.axis] // t.stride) % t.count if t.axis in coords else np.zeros((), np.int64)
                 for t in operand.terms]
        shape = np.broadcast_shapes(*(np.shape(i) for i in index)) if index else ()
        picks = tuple(np.broadcast_to(i, shape) for i in index)
        return np.asarray(vrf[picks]), np.asarray(vrf_scale[picks])
    if stash is None:
        raise no_oracle("a stash read before any stash")
    values, scale, held = stash
    return rearrange(values, held, terms), rearrange(scale, held, terms)


def _flush(x: Array) -> Array:
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(x) < _TINY, np.copysign(0.0, x), x)


def _wrap(x: Array) -> Array:
    return (x - _I32_MIN) % _I32 + _I32_MIN


def _saturate(x: Array) -> Array:
    return np.clip(x, _I32_MIN, _I32_MAX)


def _ordered(mode: object, s: Expected, o: Expected) -> tuple[Expected, Expected]:
    """The two inputs a binary op reads, picked by its mode (s: stream, o: operand)."""
    pick = {"s": s, "o": o}
    order = getattr(mode, "value", "so")
    return pick[order[0]], pick[order[1]]


def _apply(step: PassStep, stream: Expected, operands: list[Expected]) -> Expected:
    name = "MulF" if isinstance(step.op, MulF) else getattr(step.op, "reference", "")
    stage = step.stage
    with np.errstate(all="ignore"):
        if stage is Stage.VECTOR_FP_UNARY:
            return _unary(name, stream)
        if stage is Stage.VECTOR_FXP_TO_FP:
            return _float(stream[0].astype(np.float64) / 2.0 ** (31 - step.int_width), stream[1])
        if stage is Stage.VECTOR_FP_TO_FXP:
            scaled = stream[0] * 2.0 ** (31 - step.int_width)
            rounded = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)
            rounded = np.where(np.isnan(rounded), np.where(np.signbit(stream[0]), _I32_MIN, _I32_MAX), rounded)
            return _saturate(rounded).astype(np.int64), np.abs(rounded)
        if stage is Stage.VECTOR_FP_TERNARY:
            picks = {"s": stream, "0": operands[0], "1": operands[1]}
            (a, sa), (b, sb), (c, sc) = (picks[k] for k in getattr(step.mode, "value", "s01"))
            return _float(a * b + c, sa * np.abs(b) + np.abs(a) * sb + sc)
        if stage is Stage.VECTOR_FP_DIV:
            name = "DivF"
        if stage is Stage.VECTOR_REINTERPRET or type(step.op).__name__ == "LogicBinaryOpF32":
            raise no_oracle(f"{stage}'s bit-level {name or step.dtype}")
        (a, sa), (b, sb) = _ordered(step.mode, stream, operands[0])
        if stream[0].dtype.kind == "i":
            return _integer(name, a.astype(np.int64), b.astype(np.int64))
        return _binary(name, (a.astype(np.float64), sa), (b.astype(np.float64), sb))


def _float(values: Array, scale: Array) -> Expected:
    return _flush(values), np.maximum(np.abs(scale), np.abs(values))


def _unary(name: str, stream: Expected) -> Expected:
    x, s = stream
    if name == "Sqrt":
        root = np.sqrt(x)
        return _float(root, s / (2 * root) + root)
    functions: dict[str, Callable[[Array], Array]] = {
        "Exp": np.exp, "NegExp": lambda v: np.exp(-v), "Tanh": np.tanh, "Sigmoid": lambda v: 1 / (1 + np.exp(-v)),
        "Log": np.log, "Sin": np.sin, "Cos": np.cos,
    }
    # The derivative of each is at most as large as the value (exp), 1 (the rest), or 1/|x| (log).
    slope = {"Exp": np.exp(x), "NegExp": np.exp(-x), "Log": 1 / np.abs(x)}.get(name, np.ones_like(x))
    return _float(functions[name](x), s * slope + 1.0)


def _binary(name: str, a: Expected, b: Expected) -> Expected:
    (x, sx), (y, sy) = a, b
    if name in ("AddF", "Add"):
        return _float(x + y, sx + sy)
    if name == "SubF":
        return _float(x - y, sx + sy)
    if name == "MulF":
        return _float(x * y, sx * np.abs(y) + np.abs(x) * sy)
    if name == "DivF":
        return _float(x / y, sx / np.abs(y) + np.abs(x) * sy / (y * y))
    if name in ("Min", "Max"):
        return _float(np.fmin(x, y) if name == "Min" else np.fmax(x, y), np.maximum(sx, sy))
    if name in ("AbsMin", "AbsMax"):
        first = np.abs(x) < np.abs(y) if name == "AbsMin" else np.abs(x) > np.abs(y)
        return _float(np.where(first, x, y), np.maximum(sx, sy))
    raise no_oracle(f"the f32 op {name}")


def _integer(name: str, x: Array, y: Array) -> Expected:
    count = np.minimum(y % _I32, 32)  # a shift count is the operand read unsigned
    results: dict[str, Callable[[], Array]] = {
        "BitAnd": lambda: x & y, "BitOr": lambda: x | y, "BitXor": lambda: x ^ y,
        "LeftShift": lambda: _wrap(x * 2**count),
        "LeftShiftSat": lambda: _saturate(x * 2**count),
        "LogicRightShift": lambda: _wrap((x % _I32) // 2**count),
        "ArithRightShift": lambda: x // 2 ** np.minimum(count, 31),
        "AddFxp": lambda: _wrap(x + y), "AddFxpSat": lambda: _saturate(x + y),
        "SubFxp": lambda: _wrap(x - y), "SubFxpSat": lambda: _saturate(x - y),
        "MulInt": lambda: _wrap(x * y),
        "MulFxp": lambda: _saturate((x * y + 2**30) // 2**31),  # Q31, to nearest
        "Min": lambda: np.minimum(x, y), "Max": lambda: np.maximum(x, y),
        "AbsMin": lambda: np.where(np.abs(x) < np.abs(y), x, y), "AbsMax": lambda: np.where(np.abs(x) > np.abs(y), x, y),
    }
    if name not in results:
        raise no_oracle(f"the i32 op {name}")
    out = np.asarray(results[name](), dtype=np.int64)
    return out, np.abs(out.astype(np.float64))


def _reduce(step: PassStep, values: Array, scale: Array, terms: tuple[Digit, ...]) -> Expected:
    """Fold away the terms the step's layout no longer holds, then spread over the terms it adds."""
    after = step.terms
    kept_axes = set(axes_of(after))
    gone = tuple(i for i, t in enumerate(terms) if t.axis == step.reduce or t.axis not in kept_axes)
    kept = tuple(t for i, t in enumerate(terms) if i not in gone)
    name = getattr(step.op, "reference", "")
    with np.errstate(all="ignore"):
        if name in ("Add", "AddSat"):
            folded, folded_scale = values.sum(axis=gone), scale.sum(axis=gone)
        elif name in ("Max", "Min"):
            pick = np.nanmax if name == "Max" else np.nanmin
            folded, folded_scale = pick(values, axis=gone), scale.max(axis=gone)
        elif name == "Mul":
            folded = values.prod(axis=gone)
            folded_scale = np.abs(folded) * (scale / np.abs(values)).sum(axis=gone)
        else:
            raise no_oracle(f"the reduce {name}")
    if values.dtype.kind == "i":
        folded = _saturate(folded) if name == "AddSat" else _wrap(folded)
    else:
        folded = _flush(folded)
    held = set(axes_of(kept))
    base = tuple(t for t in after if t.axis in held)
    fresh = [i for i, t in enumerate(after) if t.axis not in held]
    shape = tuple(t.count for t in after)
    out = []
    for part in (folded, folded_scale):
        grouped = np.expand_dims(rearrange(np.asarray(part), kept, base), fresh) if fresh else rearrange(np.asarray(part), kept, base)
        out.append(np.broadcast_to(grouped, shape).copy())
    return out[0], out[1]
