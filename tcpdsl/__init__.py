"""tcpdsl: write, check and run kernels for Tensor Contraction Processors from Python.

Public names load lazily (PEP 562) so that light users, such as the mypy plugin, import the pure
layers without numpy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # errors
    "TcpError": "tcpdsl.errors",
    "MappingSyntaxError": "tcpdsl.errors",
    "LayoutError": "tcpdsl.errors",
    "DtypeError": "tcpdsl.errors",
    # mapping algebra
    "Mapping": "tcpdsl.algebra.nodes",
    "PaddingKind": "tcpdsl.algebra.cells",
    "Index": "tcpdsl.algebra.cells",
    "Pad": "tcpdsl.algebra.cells",
    "OUT_OF_BOUNDS": "tcpdsl.algebra.cells",
    "equivalent": "tcpdsl.algebra.ops",
    "divide_exact": "tcpdsl.algebra.ops",
    "Axis": "tcpdsl.algebra.scope",
    "axis": "tcpdsl.algebra.scope",
    "m": "tcpdsl.algebra.scope",
    "parse": "tcpdsl.algebra.scope",
    # stages
    "LaneMode": "tcpdsl.verify.lane_mode",
    # scalars
    "i4": "tcpdsl.tensors.scalars",
    "i5": "tcpdsl.tensors.scalars",
    "i8": "tcpdsl.tensors.scalars",
    "i9": "tcpdsl.tensors.scalars",
    "f8e4m3": "tcpdsl.tensors.scalars",
    "f8e5m2": "tcpdsl.tensors.scalars",
    "bf16": "tcpdsl.tensors.scalars",
    "i32": "tcpdsl.tensors.scalars",
    "f32": "tcpdsl.tensors.scalars",
    # tensors and the device
    "Tensor": "tcpdsl.tensors.logical",
    "Device": "tcpdsl.tensors.device",
    "Topology": "tcpdsl.tensors.device",
    "CollectTensor": "tcpdsl.tensors.sources",
    "TrfTensor": "tcpdsl.tensors.sources",
    "ContractOuterTensor": "tcpdsl.tensors.results",
    "ContractPacketTensor": "tcpdsl.tensors.results",
    "ContractTimeTensor": "tcpdsl.tensors.results",
    "ContractTensor": "tcpdsl.tensors.results",
    "kernel": "tcpdsl.tensors.checking",
    "install": "tcpdsl.tensors.checking",
    "evaluator": "tcpdsl.evaluate.select",
    # layout search
    "search": "tcpdsl.planner.api",
}

_NEEDS_EVALUATORS = ("tcpdsl.tensors", "tcpdsl.evaluate")

__all__ = [
    "Axis",
    "CollectTensor",
    "ContractOuterTensor",
    "ContractPacketTensor",
    "ContractTensor",
    "ContractTimeTensor",
    "Device",
    "DtypeError",
    "Index",
    "LaneMode",
    "LayoutError",
    "Mapping",
    "MappingSyntaxError",
    "OUT_OF_BOUNDS",
    "Pad",
    "PaddingKind",
    "TcpError",
    "Tensor",
    "Topology",
    "TrfTensor",
    "__version__",
    "axis",
    "bf16",
    "divide_exact",
    "equivalent",
    "evaluator",
    "f32",
    "f8e4m3",
    "f8e5m2",
    "i32",
    "i4",
    "i5",
    "i8",
    "i9",
    "install",
    "kernel",
    "m",
    "mx",
    "parse",
    "search",
]


def __getattr__(name: str) -> Any:
    if name == "mx":
        return importlib.import_module("tcpdsl.mx")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tcpdsl' has no attribute {name!r}")
    if module.startswith(_NEEDS_EVALUATORS):
        # The tensor layer cannot import the evaluators above it; they register on import.
        importlib.import_module("tcpdsl.evaluate")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from typing import Literal as m

    from tcpdsl import mx as mx
    from tcpdsl.algebra.cells import (
        OUT_OF_BOUNDS as OUT_OF_BOUNDS,
        Index as Index,
        Pad as Pad,
        PaddingKind as PaddingKind,
    )
    from tcpdsl.algebra.nodes import Mapping as Mapping
    from tcpdsl.algebra.ops import (
        divide_exact as divide_exact,
        equivalent as equivalent,
    )
    from tcpdsl.algebra.scope import (
        Axis as Axis,
        axis as axis,
        parse as parse,
    )
    from tcpdsl.errors import (
        DtypeError as DtypeError,
        LayoutError as LayoutError,
        MappingSyntaxError as MappingSyntaxError,
        TcpError as TcpError,
    )
    from tcpdsl.evaluate.select import evaluator as evaluator
    from tcpdsl.planner.api import search as search
    from tcpdsl.tensors.checking import (
        install as install,
        kernel as kernel,
    )
    from tcpdsl.tensors.device import (
        Device as Device,
        Topology as Topology,
    )
    from tcpdsl.tensors.logical import Tensor as Tensor
    from tcpdsl.tensors.scalars import (
        bf16 as bf16,
        f8e4m3 as f8e4m3,
        f8e5m2 as f8e5m2,
        f32 as f32,
        i4 as i4,
        i5 as i5,
        i8 as i8,
        i9 as i9,
        i32 as i32,
    )
    from tcpdsl.tensors.results import (
        ContractOuterTensor as ContractOuterTensor,
        ContractPacketTensor as ContractPacketTensor,
        ContractTensor as ContractTensor,
        ContractTimeTensor as ContractTimeTensor,
    )
    from tcpdsl.tensors.sources import (
        CollectTensor as CollectTensor,
        TrfTensor as TrfTensor,
    )
    from tcpdsl.verify.lane_mode import LaneMode as LaneMode
