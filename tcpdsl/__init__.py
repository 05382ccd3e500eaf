"""tcpdsl: write, check and run kernels for Tensor Contraction Processors from Python.

Public names load lazily (PEP 562) so that light users, such as the mypy plugin, import the pure
layers without numpy. Checkers read the static view of this module instead, the stub
``stubs/tcpdsl/__init__.pyi`` (shipped in the wheel as ``tcpdsl/__init__.pyi``): it lists every
public name, so a misspelt ``tcp.`` attribute is an error rather than ``Any``.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # errors
    "TcpError": "tcpdsl.errors",
    "MappingSyntaxError": "tcpdsl.errors",
    "LayoutError": "tcpdsl.errors",
    "DtypeError": "tcpdsl.errors",
    # mapping algebra
    "Mapping": "tcpdsl.algebra",
    "PaddingKind": "tcpdsl.algebra",
    "Index": "tcpdsl.algebra",
    "Pad": "tcpdsl.algebra",
    "OUT_OF_BOUNDS": "tcpdsl.algebra",
    "equivalent": "tcpdsl.algebra",
    "divide_exact": "tcpdsl.algebra",
    "Axis": "tcpdsl.algebra",
    "axis": "tcpdsl.algebra",
    "m": "tcpdsl.algebra",
    "parse": "tcpdsl.algebra",
    # stages
    "LaneMode": "tcpdsl.verify.lane_mode",
    # switch configurations
    "Forwarding": "tcpdsl.verify.switch_config",
    "Broadcast01": "tcpdsl.verify.switch_config",
    "Broadcast1": "tcpdsl.verify.switch_config",
    "Transpose": "tcpdsl.verify.switch_config",
    "InterTranspose": "tcpdsl.verify.switch_config",
    "TransposedBroadcast1": "tcpdsl.verify.switch_config",
    "CustomBroadcast": "tcpdsl.verify.switch_config",
    # the vector engine's ops and operands (docs/stage-rules.md §6)
    "FpUnaryOp": "tcpdsl.verify.vector_ops",
    "FpBinaryOp": "tcpdsl.verify.vector_ops",
    "FpMulAlu": "tcpdsl.verify.vector_ops",
    "FpTernaryOp": "tcpdsl.verify.vector_ops",
    "LogicBinaryOpI32": "tcpdsl.verify.vector_ops",
    "LogicBinaryOpF32": "tcpdsl.verify.vector_ops",
    "FxpBinaryOp": "tcpdsl.verify.vector_ops",
    "ClipBinaryOpI32": "tcpdsl.verify.vector_ops",
    "ClipBinaryOpF32": "tcpdsl.verify.vector_ops",
    "IntraSliceReduceOpI32": "tcpdsl.verify.vector_ops",
    "IntraSliceReduceOpF32": "tcpdsl.verify.vector_ops",
    "InterSliceReduceOpI32": "tcpdsl.verify.vector_ops",
    "InterSliceReduceOpF32": "tcpdsl.verify.vector_ops",
    "TagMode": "tcpdsl.verify.vector_ops",
    "BinaryArgMode": "tcpdsl.verify.vector_ops",
    "TernaryArgMode": "tcpdsl.verify.vector_ops",
    "STASH": "tcpdsl.verify.vector_pass",
    "VeOrder": "tcpdsl.verify.vector_pass",
    "VectorInitTensor": "tcpdsl.tensors.vector",
    "VectorTagTensor": "tcpdsl.tensors.vector",
    "VectorLogicTensor": "tcpdsl.tensors.vector",
    "VectorFxpTensor": "tcpdsl.tensors.vector",
    "VectorFxpToFpTensor": "tcpdsl.tensors.vector",
    "VectorNarrowTensor": "tcpdsl.tensors.vector",
    "VectorFpTensor": "tcpdsl.tensors.vector",
    "VectorIntraReduceTensor": "tcpdsl.tensors.vector",
    "VectorFpDivTensor": "tcpdsl.tensors.vector",
    "VectorWidenTensor": "tcpdsl.tensors.vector",
    "VectorFpToFxpTensor": "tcpdsl.tensors.vector",
    "VectorClipTensor": "tcpdsl.tensors.vector",
    "VectorInterReduceTensor": "tcpdsl.tensors.vector",
    "VectorFinalTensor": "tcpdsl.tensors.vector",
    "Fresh": "tcpdsl.tensors.vector",
    "Occupied": "tcpdsl.tensors.vector",
    "Spent": "tcpdsl.tensors.vector",
    # scalars
    "i4": "tcpdsl.numerics.scalars",
    "i5": "tcpdsl.numerics.scalars",
    "i8": "tcpdsl.numerics.scalars",
    "i9": "tcpdsl.numerics.scalars",
    "f8e4m3": "tcpdsl.numerics.scalars",
    "f8e5m2": "tcpdsl.numerics.scalars",
    "bf16": "tcpdsl.numerics.scalars",
    "i32": "tcpdsl.numerics.scalars",
    "f32": "tcpdsl.numerics.scalars",
    # tensors and the device
    "Tensor": "tcpdsl.numerics.logical",
    "Device": "tcpdsl.tensors.device",
    "Topology": "tcpdsl.tensors.device",
    "CollectTensor": "tcpdsl.tensors.sources",
    "TrfTensor": "tcpdsl.tensors.sources",
    "ContractOuterTensor": "tcpdsl.tensors.results",
    "ContractPacketTensor": "tcpdsl.tensors.results",
    "ContractTimeTensor": "tcpdsl.tensors.results",
    "ContractTensor": "tcpdsl.tensors.results",
    "DmTensor": "tcpdsl.tensors.memory",
    "DmView": "tcpdsl.tensors.memory",
    "DmViewMut": "tcpdsl.tensors.memory",
    "HbmTensor": "tcpdsl.tensors.memory",
    "HbmView": "tcpdsl.tensors.memory",
    "HbmViewMut": "tcpdsl.tensors.memory",
    "VrfTensor": "tcpdsl.tensors.memory",
    "BeginTensor": "tcpdsl.tensors.front",
    "FetchTensor": "tcpdsl.tensors.front",
    "FetchCastTensor": "tcpdsl.tensors.front",
    "CastTensor": "tcpdsl.tensors.back",
    "CommitTrimTensor": "tcpdsl.tensors.back",
    "SwitchTensor": "tcpdsl.tensors.switched",
    "TransposeTensor": "tcpdsl.tensors.back",
    "CommitCastTensor": "tcpdsl.tensors.back",
    "kernel": "tcpdsl.tensors.checking",
    "install": "tcpdsl.tensors.checking",
    "evaluator": "tcpdsl.evaluate.select",
    "replay": "tcpdsl.tensors.replay",
    "ReplayLog": "tcpdsl.tensors.replay",
    # layout search
    "search": "tcpdsl.planner.api",
    "search_chain": "tcpdsl.planner.sequence",
    "Plan": "tcpdsl.planner.plan",
    # a kernel on random data against the oracle, as `tcpdsl run` does
    "try_kernel": "tcpdsl.harness.run",
    "trace": "tcpdsl.harness.trace",
}

__all__ = sorted([*_EXPORTS, "mx", "__version__"])


def __getattr__(name: str) -> Any:
    if name == "mx":
        return importlib.import_module("tcpdsl.mx")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tcpdsl' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

