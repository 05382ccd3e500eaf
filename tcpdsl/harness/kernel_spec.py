"""Introspection of kernels for runners: which tensors a kernel takes, and random inputs for it.

A kernel is a ``@tcp.kernel`` function whose parameters are annotated with subscripted tensor
types (``CollectTensor``, ``TrfTensor``, ``DmTensor``, ``HbmTensor``, ``VrfTensor``) or are run-time
integers whose valid values the annotation gives (``Annotated[int, range(512)]``); an integer tensor
whose every value must be one of a range (the byte offsets of a scatter's index) says so the same way,
``Annotated[HbmTensor[...], range(0, 1024, 256)]``. For each tensor
parameter the runner learns its dtype, layout and the terms its layout holds
(:func:`tcpdsl.algebra.terms.held`): whole axes, or digits of them such as ``B / 2``. An axis a parameter holds only part of while another parameter holds more of it
is left out, so the data is broadcast over it, as a model's activations are over the slices that
index a weight axis. :func:`random_case` draws logical data over exactly those terms with a fixed seed and lays it
out, so every input fits its layout and the same seed gives the same inputs; an integer is drawn
from its range with the same seed. A
kernel the runner cannot drive (a parameter of another type, a layout with no digit form) is
described with the reason, so that a runner can skip it and go on with its neighbours.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from tcpdsl.algebra import Mapping, Digit, digit_text, held, pairs, runs
from tcpdsl.errors import TcpError
from tcpdsl.tensors.checking import kernel_info
from tcpdsl.tensors.device import Device, Topology, TuContext
from tcpdsl.tensors.subscription import Spec, Specialised
from tcpdsl.numerics.logical import Tensor
from tcpdsl.numerics.scalars import Scalar, cast

# Integer ranges keep sums of a few thousand products well inside i32.
_INT_RANGES: Final[dict[str, tuple[int, int]]] = {
    "i4": (-8, 8),
    "i5": (-16, 16),
    "i8": (-128, 128),
    "i9": (-256, 256),
    "i32": (-1024, 1024),
}
_SOURCES: Final = ("CollectTensor", "TrfTensor", "DmTensor", "HbmTensor", "VrfTensor")
# Random inputs are drawn as float64 first: 2**28 elements are 2 GiB, the most a run should ask for.
MAX_RANDOM_ELEMENTS: Final = 1 << 28
_LISTED: Final = 1 << 16  # coordinates listed at most to compare digits that do not divide one another
# Memory tensors are built from data alone: they sit in memory, not in a tensor-unit context.
_IN_MEMORY: Final = ("DmTensor", "HbmTensor", "VrfTensor")


class KernelSpecError(TcpError, TypeError):
    """A function a runner cannot drive: not a kernel, or a parameter without a tensor annotation."""


@dataclass(frozen=True)
class TensorParam:
    """One tensor parameter of a kernel."""

    name: str
    hint: type
    spec: Spec
    terms: tuple[Digit, ...]  # what its data holds, one dimension per term (see the module docstring)
    values: range | None = None  # the values an integer tensor may hold, from its annotation

    @property
    def axes(self) -> tuple[str, ...]:
        """The dimensions of its logical data, as :attr:`Tensor.axes` names them."""
        return tuple(t.axis if t.whole else digit_text(t) for t in self.terms)

    @property
    def sizes(self) -> dict[str, int]:
        """The declared size of every axis it holds a digit of."""
        return {t.axis: t.n for t in self.terms}

    @property
    def family(self) -> str:
        return self.spec.family.name

    @property
    def dtype(self) -> type[Scalar]:
        return self.spec.dtypes[0]

    @property
    def mapping(self) -> Mapping:
        return pairs(list(self.spec.layouts))

    def random_tensor(self, rng: np.random.Generator) -> Tensor:
        """Random logical data over :attr:`terms`, already representable in the dtype."""
        shape = tuple(t.count for t in self.terms)
        dtype = self.dtype
        if self.values is not None:
            picked = rng.integers(len(self.values), size=shape)
            raw: np.ndarray[Any, Any] = self.values.start + self.values.step * picked
        elif dtype.is_float:
            raw = rng.standard_normal(shape)
        else:
            low, high = _INT_RANGES.get(dtype.name, (-8, 8))
            raw = rng.integers(low, high, size=shape)
        return Tensor.of_terms(cast(raw, dtype), self.terms)

    def build(self, tensor: Tensor, context: TuContext) -> object:
        """Lay ``tensor`` out as this parameter's type."""
        return self.hint(tensor) if self.family in _IN_MEMORY else self.hint(context, tensor)


@dataclass(frozen=True)
class IntParam:
    """A run-time integer parameter and the values it may take (the ``range`` of its annotation)."""

    name: str
    values: range

    def draw(self, rng: np.random.Generator) -> int:
        return self.values[int(rng.integers(len(self.values)))]


@dataclass(frozen=True)
class KernelSpec:
    """A kernel, its tensor parameters and its integer ones, each in signature order; ``skip`` says why
    a runner cannot drive it (then both are empty)."""

    name: str
    qualname: str
    module: str
    function: Callable[..., Any]
    params: tuple[TensorParam, ...]
    returns: object
    skip: str | None = None
    integers: tuple[IntParam, ...] = ()


@dataclass(frozen=True)
class Case:
    """Inputs for one run: the laid-out tensors and the integers by parameter name, and the tensors' logical data."""

    inputs: dict[str, object]
    logical: dict[str, Tensor]


def _param(name: str, hint: object, where: str, extras: object = None) -> TensorParam:
    """A tensor parameter; ``extras`` is its annotation with what ``Annotated`` adds (a range of values)."""
    spec = getattr(hint, "__tcp_spec__", None)
    if not isinstance(hint, Specialised) or not isinstance(spec, Spec) or spec.family.name not in _SOURCES:
        raise KernelSpecError(
            f"parameter {name} of {where} must be annotated with a subscripted CollectTensor, TrfTensor, DmTensor, HbmTensor or VrfTensor, got {hint!r}"
        )
    full = pairs(list(spec.layouts))
    found = held(full)
    if found.irregular:
        raise KernelSpecError(
            f"parameter {name} of {where}: its layout {full} holds a part of {', '.join(found.irregular)} "
            "that is no set of digits, so no logical tensor fits it"
        )
    ranges = [m for m in getattr(extras, "__metadata__", ()) if isinstance(m, range)]
    dtype = spec.dtypes[0]
    if len(ranges) > 1 or (ranges and (dtype.is_float or not ranges[0])):
        raise KernelSpecError(
            f"parameter {name} of {where}: Annotated[..., range(...)] gives the values of an integer tensor, "
            f"one non-empty range, got {ranges} for a {dtype.name} tensor"
        )
    if not ranges:
        return TensorParam(name, hint, spec, found.terms)
    values = ranges[0]
    top = 1 << (dtype.value_bits - 1)  # two's complement: [-top, top)
    low, high = sorted((values[0], values[-1]))  # the range's ends, without walking it
    if not -top <= low <= high < top:
        raise KernelSpecError(
            f"parameter {name} of {where}: its range {values} holds values a {dtype.name} cannot, "
            f"which lie in [{-top}, {top})"
        )
    return TensorParam(name, hint, spec, found.terms, values)


def _integer(name: str, hint: object, where: str) -> IntParam:
    """An ``int`` parameter annotated ``Annotated[int, range(...)]``: the runner draws from the range."""
    found = [m for m in getattr(hint, "__metadata__", ()) if isinstance(m, range)]
    if typing.get_origin(hint) is not typing.Annotated or typing.get_args(hint)[0] is not int or len(found) != 1:
        raise KernelSpecError(
            f"parameter {name} of {where} is an int without the values it may take; annotate it as "
            "Annotated[int, range(...)] (or give it a default) so that a runner can draw one"
        )
    if not found[0]:
        raise KernelSpecError(f"parameter {name} of {where} may take no value: its range {found[0]} is empty")
    return IntParam(name, found[0])


def _coordinates(terms: tuple[Digit, ...]) -> set[int]:
    out = {0}
    for t in terms:
        out = {v + k * t.stride for v in out for k in range(t.count)}
    return out


def _spells_fewer(mine: tuple[Digit, ...], theirs: tuple[Digit, ...]) -> bool:
    """Whether the coordinates that the digits ``mine`` of one axis spell are a proper part of those
    ``theirs`` spell.

    An axis may be far too long to list its coordinates (2**40), so digits whose strides and tops
    divide one another, as a layout's digits do, are compared as digits: each run of ``mine`` must
    lie within a run of ``theirs``. Other digits are compared by listing coordinates, which only
    short axes have.
    """
    ours, other = runs(mine), runs(theirs)
    if ours is None or other is None or ours == other:
        return False
    bounds = sorted({b for t in (*ours, *other) for b in (t.stride, t.top)})
    if all(high % low == 0 for low, high in zip(bounds, bounds[1:])):
        return all(any(run.within(home) for home in other) for run in ours)
    if math.prod(t.count for t in (*ours, *other)) > _LISTED:
        return False
    return _coordinates(ours) < _coordinates(other)


def _broadcasts(params: list[TensorParam]) -> tuple[TensorParam, ...]:
    """Each parameter without the axes it holds only part of while another holds more of them.

    Such digits repeat the data for each block of the other operand (a stream reused across the
    weight's lanes, activations over the slices that index a weight axis): a broadcast.
    """
    out = []
    for param in params:
        kept = []
        for term in param.terms:
            mine = tuple(t for t in param.terms if t.axis == term.axis)
            if not any(_spells_fewer(mine, tuple(t for t in other.terms if t.axis == term.axis))
                       for other in params if other is not param):
                kept.append(term)
        out.append(dataclasses.replace(param, terms=tuple(kept)))
    return tuple(out)


def describe(fn: object, *, strict: bool = True) -> KernelSpec:
    """The tensor parameters of the ``@tcp.kernel`` function ``fn``.

    A kernel a runner cannot drive raises :class:`KernelSpecError`, or with ``strict=False`` is
    described with the reason in ``skip``.
    """
    info = kernel_info(fn)
    if info is None:
        raise KernelSpecError(f"{fn!r} is not a @tcp.kernel function")
    params, integers = [], []
    try:
        # A range is in the Annotated extras, which the recorded hints drop.
        extras = typing.get_type_hints(info.function, include_extras=True)
        for name, parameter in info.signature.parameters.items():
            if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                raise KernelSpecError(f"{info.qualname} takes *args/**kwargs; a runner cannot fill them")
            hint = info.hints.get(name)
            if parameter.default is not inspect.Parameter.empty and not isinstance(hint, Specialised):
                continue  # a setting with a default (e.g. a lane mode): the runner leaves it alone
            if hint is None:
                raise KernelSpecError(f"parameter {name} of {info.qualname} has no annotation")
            if hint is int:
                integers.append(_integer(name, extras[name], info.qualname))
            else:
                params.append(_param(name, hint, info.qualname, extras.get(name)))
    except KernelSpecError as error:
        if strict:
            raise
        return KernelSpec(info.name, info.qualname, info.module, fn, (), info.hints.get("return"), str(error))  # type: ignore[arg-type]
    return KernelSpec(info.name, info.qualname, info.module, fn, _broadcasts(params), info.hints.get("return"),  # type: ignore[arg-type]
                      integers=tuple(integers))


def kernels_in(module: types.ModuleType) -> list[KernelSpec]:
    """Every kernel defined in ``module`` (not imported into it), in definition order; one a
    runner cannot drive is described with the reason in ``skip``."""
    found = []
    for value in vars(module).values():
        info = kernel_info(value)
        if info is not None and info.module == module.__name__:
            found.append(describe(value, strict=False))
    return found


def random_case(fn: object, seed: int = 0, device: Device | None = None) -> Case:
    """Random logical inputs for ``fn`` (fixed by ``seed``), laid out as its parameter types, and a value
    from the range of each integer parameter.

    The first tensor parameter is placed in ``device.main`` and the others in ``device.sub``. Without a
    ``device``, the kernel gets one with as many chips as its widest Chip layout.
    """
    spec = fn if isinstance(fn, KernelSpec) else describe(fn)
    if spec.skip is not None:
        raise KernelSpecError(spec.skip)
    elements = sum(math.prod(t.count for t in p.terms) for p in spec.params)
    if elements > MAX_RANDOM_ELEMENTS:
        raise KernelSpecError(
            f"its inputs hold {elements} elements, more than the {MAX_RANDOM_ELEMENTS} a runner draws at random; "
            "run it on data of your own"
        )
    rng = np.random.default_rng(seed)
    chips = max((p.spec.layout("Chip").size for p in spec.params), default=1)
    dev = device if device is not None else Device(Topology(chips=chips))
    logical: dict[str, Tensor] = {}
    inputs: dict[str, object] = {}
    for index, param in enumerate(spec.params):
        tensor = param.random_tensor(rng)
        logical[param.name] = tensor
        inputs[param.name] = param.build(tensor, dev.main if index == 0 else dev.sub)
    for integer in spec.integers:
        inputs[integer.name] = integer.draw(rng)
    return Case(inputs, logical)


def random_inputs(fn: object, seed: int = 0) -> dict[str, object]:
    """The laid-out random inputs of :func:`random_case`, by parameter name."""
    return random_case(fn, seed).inputs


def random_logical(fn: object, seed: int = 0) -> dict[str, Tensor]:
    """The logical data behind :func:`random_inputs` for the same seed."""
    return random_case(fn, seed).logical
