"""Introspection of kernels for runners: which tensors a kernel takes, and random inputs for it.

A kernel is a ``@tcp.kernel`` function whose parameters are annotated with subscripted
``CollectTensor`` or ``TrfTensor`` types. For each parameter the runner learns its dtype, layout
and the logical axes its layout holds completely; :func:`random_case` draws logical data with a
fixed seed and lays it out, so the same seed always gives the same inputs.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from tcpdsl.algebra.nodes import Mapping, pairs
from tcpdsl.errors import TcpError
from tcpdsl.tensors.checking import kernel_info
from tcpdsl.tensors.device import Device, Topology, TuContext
from tcpdsl.tensors.subscription import Spec, Specialised
from tcpdsl.tensors.logical import Tensor
from tcpdsl.tensors.placement import plan
from tcpdsl.tensors.scalars import Scalar, cast

# Integer ranges keep sums of a few thousand products well inside i32.
_INT_RANGES: Final[dict[str, tuple[int, int]]] = {
    "i4": (-8, 8),
    "i5": (-16, 16),
    "i8": (-128, 128),
    "i9": (-256, 256),
    "i32": (-1024, 1024),
}
_SOURCES: Final = ("CollectTensor", "TrfTensor")


class KernelSpecError(TcpError, TypeError):
    """A function a runner cannot drive: not a kernel, or a parameter without a tensor annotation."""


@dataclass(frozen=True)
class TensorParam:
    """One tensor parameter of a kernel."""

    name: str
    hint: type
    spec: Spec
    axes: tuple[str, ...]  # logical axes the layout holds completely, first-encounter order
    sizes: dict[str, int]

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
        """Random logical data over :attr:`axes`, already representable in the dtype."""
        shape = tuple(self.sizes[a] for a in self.axes)
        dtype = self.dtype
        if dtype.is_float:
            raw: np.ndarray[Any, Any] = rng.standard_normal(shape)
        else:
            low, high = _INT_RANGES.get(dtype.name, (-8, 8))
            raw = rng.integers(low, high, size=shape)
        return Tensor(cast(raw, dtype), self.axes, sizes=self.sizes)

    def build(self, tensor: Tensor, context: TuContext) -> object:
        """Lay ``tensor`` out as this parameter's type."""
        return self.hint(context, tensor)


@dataclass(frozen=True)
class KernelSpec:
    """A kernel and its tensor parameters, in signature order."""

    name: str
    qualname: str
    module: str
    function: Callable[..., Any]
    params: tuple[TensorParam, ...]
    returns: object


@dataclass(frozen=True)
class Case:
    """Inputs for one run: the laid-out tensors by parameter name, and their logical data."""

    inputs: dict[str, object]
    logical: dict[str, Tensor]


def _param(name: str, hint: object, where: str) -> TensorParam:
    spec = getattr(hint, "__tcp_spec__", None)
    if not isinstance(hint, Specialised) or not isinstance(spec, Spec) or spec.family.name not in _SOURCES:
        raise KernelSpecError(
            f"parameter {name} of {where} must be annotated with a subscripted CollectTensor or TrfTensor, got {hint!r}"
        )
    full = pairs(list(spec.layouts))
    p = plan(full)
    sizes = full.axis_sizes()
    axes = tuple(a for a in full.axes if p.coverage((a,)))
    while axes and not p.coverage(axes):
        axes = axes[:-1]
    return TensorParam(name, hint, spec, axes, {a: sizes[a] for a in axes})


def describe(fn: object) -> KernelSpec:
    """The tensor parameters of the ``@tcp.kernel`` function ``fn``."""
    info = kernel_info(fn)
    if info is None:
        raise KernelSpecError(f"{fn!r} is not a @tcp.kernel function")
    params = []
    for name, parameter in info.signature.parameters.items():
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise KernelSpecError(f"{info.qualname} takes *args/**kwargs; a runner cannot fill them")
        hint = info.hints.get(name)
        if parameter.default is not inspect.Parameter.empty and not isinstance(hint, Specialised):
            continue  # a setting with a default (e.g. a lane mode): the runner leaves it alone
        if hint is None:
            raise KernelSpecError(f"parameter {name} of {info.qualname} has no annotation")
        params.append(_param(name, hint, info.qualname))
    return KernelSpec(info.name, info.qualname, info.module, fn, tuple(params), info.hints.get("return"))  # type: ignore[arg-type]


def kernels_in(module: types.ModuleType) -> list[KernelSpec]:
    """Every kernel defined in ``module`` (not imported into it), in definition order."""
    found = []
    for value in vars(module).values():
        info = kernel_info(value)
        if info is not None and info.module == module.__name__:
            found.append(describe(value))
    return found


def random_case(fn: object, seed: int = 0, device: Device | None = None) -> Case:
    """Random logical inputs for ``fn`` (fixed by ``seed``), laid out as its parameter types.

    The first parameter is placed in ``device.main`` and the others in ``device.sub``. Without a
    ``device``, the kernel gets one with as many chips as its widest Chip layout.
    """
    spec = fn if isinstance(fn, KernelSpec) else describe(fn)
    rng = np.random.default_rng(seed)
    chips = max((p.spec.layout("Chip").size for p in spec.params), default=1)
    dev = device if device is not None else Device(Topology(chips=chips))
    logical: dict[str, Tensor] = {}
    inputs: dict[str, object] = {}
    for index, param in enumerate(spec.params):
        tensor = param.random_tensor(rng)
        logical[param.name] = tensor
        inputs[param.name] = param.build(tensor, dev.main if index == 0 else dev.sub)
    return Case(inputs, logical)


def random_inputs(fn: object, seed: int = 0) -> dict[str, object]:
    """The laid-out random inputs of :func:`random_case`, by parameter name."""
    return random_case(fn, seed).inputs


def random_logical(fn: object, seed: int = 0) -> dict[str, Tensor]:
    """The logical data behind :func:`random_inputs` for the same seed."""
    return random_case(fn, seed).logical
