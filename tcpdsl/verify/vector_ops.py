"""The vector engine's op enums, its ALUs and its dtype table (docs/stage-rules.md §6.1).

Every op names the ALU it occupies, so the pass can refuse a second use (``AluOnce``), and the dtype
it works on. A reduce op also knows its identity, which a padded reduce may pad with
(docs/stage-rules.md §6.4). ``FpUnaryOp`` has no ``ERF`` and ``FxpBinaryOp`` no
``ARITH_RIGHT_SHIFT_ROUND``: the reference leaves both unimplemented, so there are no semantics to port.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Final

from tcpdsl.errors import LayoutError
from tcpdsl.verify.stage import Stage

I32: Final = "i32"
F32: Final = "f32"
# The only two scalars the vector engine computes on (docs/stage-rules.md §6.1).
VECTOR_DTYPES: Final = (I32, F32)
I32_MIN: Final = -(2**31)
I32_MAX: Final = 2**31 - 1


class Alu(enum.StrEnum):
    """An ALU of the intra-slice chain; each serves at most one op per pass. The value is its hardware name."""

    LOGIC_AND = "LogicAnd"
    LOGIC_OR = "LogicOr"
    LOGIC_XOR = "LogicXor"
    LOGIC_LSHIFT = "LogicLshift"
    LOGIC_RSHIFT = "LogicRshift"
    FXP_ADD = "FxpAdd"
    FXP_LSHIFT = "FxpLshift"
    FXP_MUL = "FxpMul"
    FXP_RSHIFT = "FxpRshift"
    FP_FMA = "FpFma"
    FP_FPU = "FpFpu"
    FP_EXP = "FpExp"
    FP_MUL0 = "FpMul0"
    FP_MUL1 = "FpMul1"
    CLIP_ADD = "ClipAdd"
    CLIP_MAX = "ClipMax"
    CLIP_MIN = "ClipMin"
    REDUCE_ACC_TREE = "ReduceAccTree"
    REDUCE_FP_DIV = "ReduceFpDiv"


class _Op(enum.Enum):
    """An op: its reference name (the value's first half) and the ALU it occupies."""

    alu: Alu

    def __init__(self, name: str, alu: Alu) -> None:
        self.reference = name
        self.alu = alu

    @property
    def dtype(self) -> str:
        return op_dtype(self)


class LogicBinaryOpI32(_Op):
    BIT_AND = ("BitAnd", Alu.LOGIC_AND)
    BIT_OR = ("BitOr", Alu.LOGIC_OR)
    BIT_XOR = ("BitXor", Alu.LOGIC_XOR)
    LEFT_SHIFT = ("LeftShift", Alu.LOGIC_LSHIFT)
    LOGIC_RIGHT_SHIFT = ("LogicRightShift", Alu.LOGIC_RSHIFT)
    ARITH_RIGHT_SHIFT = ("ArithRightShift", Alu.LOGIC_RSHIFT)


class LogicBinaryOpF32(_Op):
    BIT_AND = ("BitAnd", Alu.LOGIC_AND)
    BIT_OR = ("BitOr", Alu.LOGIC_OR)
    BIT_XOR = ("BitXor", Alu.LOGIC_XOR)


class FxpBinaryOp(_Op):
    ADD_FXP = ("AddFxp", Alu.FXP_ADD)
    ADD_FXP_SAT = ("AddFxpSat", Alu.FXP_ADD)
    SUB_FXP = ("SubFxp", Alu.FXP_ADD)
    SUB_FXP_SAT = ("SubFxpSat", Alu.FXP_ADD)
    LEFT_SHIFT = ("LeftShift", Alu.FXP_LSHIFT)
    LEFT_SHIFT_SAT = ("LeftShiftSat", Alu.FXP_LSHIFT)
    MUL_FXP = ("MulFxp", Alu.FXP_MUL)
    MUL_INT = ("MulInt", Alu.FXP_MUL)
    LOGIC_RIGHT_SHIFT = ("LogicRightShift", Alu.FXP_RSHIFT)
    ARITH_RIGHT_SHIFT = ("ArithRightShift", Alu.FXP_RSHIFT)


class FpUnaryOp(_Op):
    EXP = ("Exp", Alu.FP_EXP)
    NEG_EXP = ("NegExp", Alu.FP_EXP)
    SQRT = ("Sqrt", Alu.FP_FPU)
    TANH = ("Tanh", Alu.FP_FPU)
    SIGMOID = ("Sigmoid", Alu.FP_FPU)
    LOG = ("Log", Alu.FP_FPU)
    SIN = ("Sin", Alu.FP_FPU)
    COS = ("Cos", Alu.FP_FPU)


class FpMulAlu(enum.Enum):
    """The multiplier a ``MUL_F`` runs on."""

    MUL0 = Alu.FP_MUL0
    MUL1 = Alu.FP_MUL1
    FMA = Alu.FP_FMA


@dataclass(frozen=True)
class MulF:
    """``FpBinaryOp.MUL_F(alu)``: a multiply placed on one multiplier."""

    on: FpMulAlu

    @property
    def alu(self) -> Alu:
        return self.on.value

    @property
    def reference(self) -> str:
        return f"MulF({self.on.name.capitalize()})"

    @property
    def dtype(self) -> str:
        return F32


class FpBinaryOp(enum.Enum):
    """``ADD_F``, ``SUB_F`` and ``DIV_F`` are ops; ``MUL_F`` is called with its multiplier to make one."""

    ADD_F = "AddF"
    SUB_F = "SubF"
    MUL_F = "MulF"
    DIV_F = "DivF"

    def __call__(self, on: FpMulAlu) -> MulF:
        if self is not FpBinaryOp.MUL_F or not isinstance(on, FpMulAlu):
            raise LayoutError(
                Stage.VECTOR_FP_BINARY,
                "MulAlu",
                f"vector_fp_binary: only MUL_F takes a multiplier, called with an FpMulAlu; got {self.name}({on!r})",
                hint="write FpBinaryOp.MUL_F(FpMulAlu.MUL0) (or MUL1, FMA); ADD_F, SUB_F and DIV_F are used bare",
            )
        return MulF(on)

    @property
    def reference(self) -> str:
        return str(self.value)

    @property
    def dtype(self) -> str:
        return F32


_FP_BINARY_ALU: Final = {FpBinaryOp.ADD_F: Alu.FP_FMA, FpBinaryOp.SUB_F: Alu.FP_FMA, FpBinaryOp.DIV_F: Alu.FP_FPU}

FpBinary = FpBinaryOp | MulF


def fp_binary_alu(op: FpBinary) -> Alu:
    """The ALU of an Fp binary op; a bare ``MUL_F`` names no multiplier and is refused."""
    if isinstance(op, MulF):
        return op.alu
    alu = _FP_BINARY_ALU.get(op)
    if alu is None:
        raise LayoutError(
            Stage.VECTOR_FP_BINARY,
            "MulAlu",
            "vector_fp_binary: MUL_F names no multiplier; the pass cannot tell which ALU it occupies",
            hint="write FpBinaryOp.MUL_F(FpMulAlu.MUL0) (or MUL1, FMA)",
        )
    return alu


class FpTernaryOp(_Op):
    FMA_F = ("FmaF", Alu.FP_FMA)


class ClipBinaryOpI32(_Op):
    MIN = ("Min", Alu.CLIP_MIN)
    ABS_MIN = ("AbsMin", Alu.CLIP_MIN)
    MAX = ("Max", Alu.CLIP_MAX)
    ABS_MAX = ("AbsMax", Alu.CLIP_MAX)
    ADD_FXP = ("AddFxp", Alu.CLIP_ADD)
    ADD_FXP_SAT = ("AddFxpSat", Alu.CLIP_ADD)


class ClipBinaryOpF32(_Op):
    MIN = ("Min", Alu.CLIP_MIN)
    ABS_MIN = ("AbsMin", Alu.CLIP_MIN)
    MAX = ("Max", Alu.CLIP_MAX)
    ABS_MAX = ("AbsMax", Alu.CLIP_MAX)
    ADD = ("Add", Alu.CLIP_ADD)


class _Reduce(enum.Enum):
    """A reduce op: its reference name and its identity (the value a padded cell must hold)."""

    identity: float

    def __init__(self, name: str, identity: float) -> None:
        self.reference = name
        self.identity = identity

    @property
    def dtype(self) -> str:
        return op_dtype(self)


class IntraSliceReduceOpI32(_Reduce):
    ADD_SAT = ("AddSat", 0)
    MAX = ("Max", I32_MIN)
    MIN = ("Min", I32_MAX)


class IntraSliceReduceOpF32(_Reduce):
    ADD = ("Add", 0.0)
    MAX = ("Max", -math.inf)
    MIN = ("Min", math.inf)


class InterSliceReduceOpI32(_Reduce):
    ADD = ("Add", 0)
    ADD_SAT = ("AddSat", 0)
    MAX = ("Max", I32_MIN)
    MIN = ("Min", I32_MAX)


class InterSliceReduceOpF32(_Reduce):
    ADD = ("Add", 0.0)
    MAX = ("Max", -math.inf)
    MIN = ("Min", math.inf)
    MUL = ("Mul", 1.0)


class TagMode(enum.Enum):
    """How the tag entry sets each element's tag. Comparison and the guarded slots come later."""

    ZERO = "Zero"


class BinaryArgMode(enum.Enum):
    """Which of stream ``s`` and operand ``o`` feed a binary op: MODE10 is ``op(o, s)``."""

    MODE00 = "ss"
    MODE01 = "so"
    MODE10 = "os"
    MODE11 = "oo"


class TernaryArgMode(enum.Enum):
    """Which inputs feed a ternary op: in the name 0 is the stream, 1 the first operand and 2 the second
    (MODE120 is ``op(o0, o1, s)``); the value spells the same with ``s``, ``0`` and ``1``."""

    MODE012 = "s01"
    MODE002 = "ss1"
    MODE102 = "0s1"
    MODE112 = "001"
    MODE020 = "s1s"
    MODE021 = "s10"
    MODE120 = "01s"


IntraReduceOp = IntraSliceReduceOpI32 | IntraSliceReduceOpF32
InterReduceOp = InterSliceReduceOpI32 | InterSliceReduceOpF32
ReduceOp = IntraReduceOp | InterReduceOp
BinaryOp = LogicBinaryOpI32 | LogicBinaryOpF32 | FxpBinaryOp | ClipBinaryOpI32 | ClipBinaryOpF32

# The dtype each op enum works on, keyed by the enum (FpBinaryOp and MulF are f32 too).
OP_DTYPE: Final[dict[type, str]] = {
    LogicBinaryOpI32: I32,
    LogicBinaryOpF32: F32,
    FxpBinaryOp: I32,
    FpUnaryOp: F32,
    FpBinaryOp: F32,
    MulF: F32,
    FpTernaryOp: F32,
    ClipBinaryOpI32: I32,
    ClipBinaryOpF32: F32,
    IntraSliceReduceOpI32: I32,
    IntraSliceReduceOpF32: F32,
    InterSliceReduceOpI32: I32,
    InterSliceReduceOpF32: F32,
}


def op_dtype(op: object) -> str:
    """The dtype ``op`` computes on."""
    return OP_DTYPE[type(op)]


