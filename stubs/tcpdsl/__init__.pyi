# The static view of the lazy facade, shipped in the wheel as tcpdsl/__init__.pyi. At run time every
# name below loads on first access through a module ``__getattr__``; a checker reading that would accept
# any attribute as ``Any``. This stub lists the public names explicitly, and ``m`` is ``typing.Literal``
# so that ``m["A, B / 16"]`` is a type.
from typing import Literal as m
from typing import TypeAlias

import tcpdsl.mx as mx
from tcpdsl.algebra import OUT_OF_BOUNDS as OUT_OF_BOUNDS
from tcpdsl.algebra import Axis as Axis
from tcpdsl.algebra import DivideTerm
from tcpdsl.algebra import Index as Index
from tcpdsl.algebra import Mapping as Mapping
from tcpdsl.algebra import Pad as Pad
from tcpdsl.algebra import PaddingKind as PaddingKind
from tcpdsl.algebra import axis as axis
from tcpdsl.algebra import parse as parse
from tcpdsl.harness.run import try_kernel as try_kernel
from tcpdsl.harness.trace import trace as trace
from tcpdsl.errors import DtypeError as DtypeError
from tcpdsl.errors import LayoutError as LayoutError
from tcpdsl.errors import MappingSyntaxError as MappingSyntaxError
from tcpdsl.errors import TcpError as TcpError
from tcpdsl.evaluate.select import evaluator as evaluator
from tcpdsl.planner.api import search as search
from tcpdsl.planner.sequence import search_chain as search_chain
from tcpdsl.planner.plan import Plan as Plan
from tcpdsl.tensors.checking import install as install
from tcpdsl.tensors.checking import kernel as kernel
from tcpdsl.tensors.replay import ReplayLog as ReplayLog
from tcpdsl.tensors.replay import replay as replay
from tcpdsl.tensors.device import Device as Device
from tcpdsl.tensors.device import Topology as Topology
from tcpdsl.numerics.logical import Tensor as Tensor
from tcpdsl.numerics.scalars import bf16 as bf16
from tcpdsl.numerics.scalars import f8e4m3 as f8e4m3
from tcpdsl.numerics.scalars import f8e5m2 as f8e5m2
from tcpdsl.numerics.scalars import f32 as f32
from tcpdsl.numerics.scalars import i4 as i4
from tcpdsl.numerics.scalars import i5 as i5
from tcpdsl.numerics.scalars import i8 as i8
from tcpdsl.numerics.scalars import i9 as i9
from tcpdsl.numerics.scalars import i32 as i32
from tcpdsl.tensors.sources import CollectTensor as CollectTensor
from tcpdsl.tensors.results import ContractOuterTensor as ContractOuterTensor
from tcpdsl.tensors.results import ContractPacketTensor as ContractPacketTensor
from tcpdsl.tensors.results import ContractTensor as ContractTensor
from tcpdsl.tensors.results import ContractTimeTensor as ContractTimeTensor
from tcpdsl.tensors.sources import TrfTensor as TrfTensor
from tcpdsl.tensors.memory import DmTensor as DmTensor
from tcpdsl.tensors.memory import DmView as DmView
from tcpdsl.tensors.memory import DmViewMut as DmViewMut
from tcpdsl.tensors.memory import HbmTensor as HbmTensor
from tcpdsl.tensors.memory import HbmView as HbmView
from tcpdsl.tensors.memory import HbmViewMut as HbmViewMut
from tcpdsl.tensors.memory import VrfTensor as VrfTensor
from tcpdsl.tensors.front import BeginTensor as BeginTensor
from tcpdsl.tensors.front import FetchTensor as FetchTensor
from tcpdsl.tensors.front import FetchCastTensor as FetchCastTensor
from tcpdsl.tensors.back import CastTensor as CastTensor
from tcpdsl.tensors.back import CommitTrimTensor as CommitTrimTensor
from tcpdsl.tensors.switched import SwitchTensor as SwitchTensor
from tcpdsl.tensors.back import TransposeTensor as TransposeTensor
from tcpdsl.tensors.back import CommitCastTensor as CommitCastTensor
from tcpdsl.verify.lane_mode import LaneMode as LaneMode
from tcpdsl.verify.switch_config import Broadcast01 as Broadcast01
from tcpdsl.verify.switch_config import Broadcast1 as Broadcast1
from tcpdsl.verify.switch_config import CustomBroadcast as CustomBroadcast
from tcpdsl.verify.switch_config import Forwarding as Forwarding
from tcpdsl.verify.switch_config import InterTranspose as InterTranspose
from tcpdsl.verify.switch_config import Transpose as Transpose
from tcpdsl.verify.switch_config import TransposedBroadcast1 as TransposedBroadcast1
from tcpdsl.verify.vector_ops import FpUnaryOp as FpUnaryOp
from tcpdsl.verify.vector_ops import FpBinaryOp as FpBinaryOp
from tcpdsl.verify.vector_ops import FpMulAlu as FpMulAlu
from tcpdsl.verify.vector_ops import FpTernaryOp as FpTernaryOp
from tcpdsl.verify.vector_ops import LogicBinaryOpI32 as LogicBinaryOpI32
from tcpdsl.verify.vector_ops import LogicBinaryOpF32 as LogicBinaryOpF32
from tcpdsl.verify.vector_ops import FxpBinaryOp as FxpBinaryOp
from tcpdsl.verify.vector_ops import ClipBinaryOpI32 as ClipBinaryOpI32
from tcpdsl.verify.vector_ops import ClipBinaryOpF32 as ClipBinaryOpF32
from tcpdsl.verify.vector_ops import IntraSliceReduceOpI32 as IntraSliceReduceOpI32
from tcpdsl.verify.vector_ops import IntraSliceReduceOpF32 as IntraSliceReduceOpF32
from tcpdsl.verify.vector_ops import InterSliceReduceOpI32 as InterSliceReduceOpI32
from tcpdsl.verify.vector_ops import InterSliceReduceOpF32 as InterSliceReduceOpF32
from tcpdsl.verify.vector_ops import TagMode as TagMode
from tcpdsl.verify.vector_ops import BinaryArgMode as BinaryArgMode
from tcpdsl.verify.vector_ops import TernaryArgMode as TernaryArgMode
from tcpdsl.verify.vector_pass import STASH as STASH
from tcpdsl.verify.vector_pass import VeOrder as VeOrder
from tcpdsl.tensors.vector import VectorInitTensor as VectorInitTensor
from tcpdsl.tensors.vector import VectorTagTensor as VectorTagTensor
from tcpdsl.tensors.vector import VectorLogicTensor as VectorLogicTensor
from tcpdsl.tensors.vector import VectorFxpTensor as VectorFxpTensor
from tcpdsl.tensors.vector import VectorFxpToFpTensor as VectorFxpToFpTensor
from tcpdsl.tensors.vector import VectorNarrowTensor as VectorNarrowTensor
from tcpdsl.tensors.vector import VectorFpTensor as VectorFpTensor
from tcpdsl.tensors.vector import VectorIntraReduceTensor as VectorIntraReduceTensor
from tcpdsl.tensors.vector import VectorFpDivTensor as VectorFpDivTensor
from tcpdsl.tensors.vector import VectorWidenTensor as VectorWidenTensor
from tcpdsl.tensors.vector import VectorFpToFxpTensor as VectorFpToFxpTensor
from tcpdsl.tensors.vector import VectorClipTensor as VectorClipTensor
from tcpdsl.tensors.vector import VectorInterReduceTensor as VectorInterReduceTensor
from tcpdsl.tensors.vector import VectorFinalTensor as VectorFinalTensor
from tcpdsl.tensors.vector import Fresh as Fresh
from tcpdsl.tensors.vector import Occupied as Occupied
from tcpdsl.tensors.vector import Spent as Spent

__version__: str

# A mapping value as checkers see it: ``m["..."]`` and its aliases are ``typing.Literal`` forms to them
# (mypy's ``_SpecialForm``, pyright's ``type[Literal]``), a ``Mapping`` at run time, where it is checked.
_MappingValue: TypeAlias = object

def equivalent(a: _MappingValue, b: _MappingValue) -> bool:
    """Equal size and equal cells at every position (docs/mapping-language.md §1.7)."""

def divide_exact(dividend: _MappingValue, divisor: _MappingValue) -> list[DivideTerm]:
    """Match every live digit of ``divisor`` inside ``dividend`` (docs/mapping-language.md §1.9)."""

__all__ = [
    "Axis", "BeginTensor", "Broadcast01", "Broadcast1", "CastTensor", "CollectTensor", "CommitCastTensor",
    "CommitTrimTensor", "ContractOuterTensor", "ContractPacketTensor", "ContractTensor", "ContractTimeTensor",
    "CustomBroadcast", "Device", "DmTensor", "DmView", "DmViewMut", "DtypeError", "FetchCastTensor", "FetchTensor",
    "Forwarding", "HbmTensor", "HbmView", "HbmViewMut", "Index", "InterTranspose", "LaneMode", "LayoutError", "Mapping", "MappingSyntaxError",
    "OUT_OF_BOUNDS", "Pad", "PaddingKind", "Plan", "ReplayLog", "SwitchTensor", "TcpError", "Tensor", "Topology", "Transpose",
    "TransposeTensor", "TransposedBroadcast1", "TrfTensor", "VrfTensor", "axis", "bf16", "divide_exact", "equivalent",
    "evaluator", "f32", "f8e4m3", "f8e5m2", "i32", "i4", "i5", "i8", "i9", "install", "kernel", "m", "mx", "parse", "replay",
    "search", "search_chain", "trace", "try_kernel", "__version__",
]
# The vector engine's ops and operands (docs/stage-rules.md §6).
__all__ += [
    "BinaryArgMode", "ClipBinaryOpF32", "ClipBinaryOpI32", "FpBinaryOp", "FpMulAlu", "FpTernaryOp",
    "FpUnaryOp", "Fresh", "FxpBinaryOp", "InterSliceReduceOpF32", "InterSliceReduceOpI32",
    "IntraSliceReduceOpF32", "IntraSliceReduceOpI32", "LogicBinaryOpF32", "LogicBinaryOpI32", "Occupied",
    "STASH", "Spent", "TagMode", "TernaryArgMode", "VeOrder", "VectorClipTensor", "VectorFinalTensor",
    "VectorFpDivTensor", "VectorFpTensor", "VectorFpToFxpTensor", "VectorFxpTensor", "VectorFxpToFpTensor",
    "VectorInitTensor", "VectorInterReduceTensor", "VectorIntraReduceTensor", "VectorLogicTensor",
    "VectorNarrowTensor", "VectorTagTensor", "VectorWidenTensor",
]
