"""The tensor families (the contraction chain, memory, the stream positions) and the constraints on their types.

A family is a tensor class by its parameters (dtypes first, then layouts, in the RNGD order of
docs/stage-rules.md §2.2). A :class:`TensorType` is one concrete type of a family: dtype names
and mappings. :func:`check_type` runs every constraint a type must meet before any stage runs:
the accumulator rules, then the constructor constraints. The runtime subscription, the stage
results and the mypy plugin all build types here, so each rule is written once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from tcpdsl.algebra import Mapping, check_axis_sizes
from tcpdsl.errors import DtypeError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.constructors import (
    check_collect_tensor,
    check_contract_outer_tensor,
    check_contract_packet_tensor,
    check_contract_tensor,
    check_transpose_tensor,
    check_trf_tensor,
)
from tcpdsl.verify.dtypes import ACCUMULATOR, ACCUMULATORS
from tcpdsl.verify.memory import check_dm_tensor, check_grid, check_hbm_tensor, stream_bits
from tcpdsl.verify.to_vrf import VECTOR_DTYPES
from tcpdsl.verify.vector_pass import VeStage

GRID: Final = ("Chip", "Cluster", "Slice")

# A family's constructor rule, given the family name, the dtype its rule reads (the storage of a
# ContractOuterTensor, else the first) and the layouts as keyword arguments.
_Rule = Callable[[str, str, dict[str, Mapping]], None]


@dataclass(frozen=True)
class Family:
    """A tensor class: its name, its dtype parameters and its layout parameters, in order."""

    name: str
    dtypes: tuple[str, ...]
    layouts: tuple[str, ...]
    rule: _Rule = field(repr=False, compare=False)

    @property
    def params(self) -> tuple[str, ...]:
        return self.dtypes + self.layouts

    @property
    def accumulates(self) -> bool:
        """Whether the first dtype is an accumulator (every contraction result)."""
        return self.dtypes[0] == "Acc"


def _collect(family: str, dtype: str, maps: dict[str, Mapping]) -> None:
    check_collect_tensor(dtype, **maps)


def _trf(family: str, dtype: str, maps: dict[str, Mapping]) -> None:
    check_trf_tensor(dtype, **maps)


def _outer(family: str, storage: str, maps: dict[str, Mapping]) -> None:
    check_contract_outer_tensor(storage, **maps)


def _reduced(family: str, acc: str, maps: dict[str, Mapping]) -> None:
    check_contract_packet_tensor(**maps, stage=family)


def _contract(family: str, acc: str, maps: dict[str, Mapping]) -> None:
    check_contract_tensor(acc, **maps)


def _dm(family: str, dtype: str, maps: dict[str, Mapping]) -> None:
    check_dm_tensor(dtype, **maps)


def _vrf(family: str, dtype: str, maps: dict[str, Mapping]) -> None:
    if dtype not in VECTOR_DTYPES:
        raise DtypeError(
            family, "Dtype", f"the vector register file holds i32 or f32, got {dtype}",
            hint="fetch_cast the stream to i32 or f32 before collect",
        )
    check_grid(family, maps["cluster"], maps["slice_"])


def _hbm(family: str, dtype: str, maps: dict[str, Mapping]) -> None:
    check_hbm_tensor(dtype, **maps)


def _position(family: str, dtype: str, maps: dict[str, Mapping]) -> None:
    """A stream position's own type rules: a stream dtype on a grid the tensor unit has; its layouts
    are checked by the stage that produces it (docs/stage-rules.md §4)."""
    stream_bits(family, dtype)
    check_grid(family, maps["cluster"], maps["slice_"])


def _transpose(family: str, dtype: str, maps: dict[str, Mapping]) -> None:
    check_transpose_tensor(dtype, **maps)


COLLECT: Final = Family("CollectTensor", ("D",), (*GRID, "Time", "Packet"), _collect)
TRF: Final = Family("TrfTensor", ("D",), (*GRID, "Lane", "Element"), _trf)
OUTER: Final = Family("ContractOuterTensor", ("Acc", "Storage"), (*GRID, "Lane", "Time", "Packet"), _outer)
PACKET: Final = Family("ContractPacketTensor", ("Acc",), (*GRID, "Lane", "Time", "Packet"), _reduced)
TIME: Final = Family("ContractTimeTensor", ("Acc",), (*GRID, "Lane", "Time", "Packet"), _reduced)
CONTRACT: Final = Family("ContractTensor", ("Acc",), (*GRID, "Time", "Packet"), _contract)

# Memory (docs/stage-rules.md §4.1).
DM: Final = Family("DmTensor", ("D",), (*GRID, "Element"), _dm)
HBM: Final = Family("HbmTensor", ("D",), ("Chip", "Element"), _hbm)
HBM_VIEW: Final = Family("HbmView", ("D",), ("Chip", "Element"), _hbm)
HBM_VIEW_MUT: Final = Family("HbmViewMut", ("D",), ("Chip", "Element"), _hbm)
# Windows of a DM tensor: a read view (its holes are Top padding) and a write view (Bottom padding).
DM_VIEW: Final = Family("DmView", ("D",), (*GRID, "Element"), _dm)
DM_VIEW_MUT: Final = Family("DmViewMut", ("D",), (*GRID, "Element"), _dm)
# The stream positions before and after the contraction chain, one family per position (docs/architecture.md,
# "Adding a stream stage"): each class has only the methods of the stages that may follow it.
STREAM: Final = (*GRID, "Time", "Packet")
BEGIN: Final = Family("BeginTensor", ("D",), STREAM, _position)
FETCH: Final = Family("FetchTensor", ("D",), STREAM, _position)
FETCH_CAST: Final = Family("FetchCastTensor", ("D",), STREAM, _position)
# After the switch and transpose engines (docs/stage-rules.md §5.1, §5.2): a transposed packet is one flit.
SWITCH: Final = Family("SwitchTensor", ("D",), STREAM, _position)
TRANSPOSE: Final = Family("TransposeTensor", ("D",), STREAM, _transpose)
CAST: Final = Family("CastTensor", ("D",), STREAM, _position)
COMMIT_TRIM: Final = Family("CommitTrimTensor", ("D",), STREAM, _position)
COMMIT_CAST: Final = Family("CommitCastTensor", ("D",), STREAM, _position)
# The vector register file (docs/stage-rules.md §4.6): i32 or f32 over [Chip, Cluster, Slice, Element].
VRF: Final = Family("VrfTensor", ("D",), (*GRID, "Element"), _vrf)
# A vector pass has one position per stage of its state machine (docs/stage-rules.md §6.1): the class a
# pass method returns, and the methods it has, say where the pass stands.
VECTOR_FAMILIES: Final[dict[VeStage, Family]] = {
    stage: Family(name, ("D",), STREAM, _position)
    for stage, name in (
        (VeStage.INIT, "VectorInitTensor"),
        (VeStage.TAG, "VectorTagTensor"),
        (VeStage.LOGIC, "VectorLogicTensor"),
        (VeStage.FXP, "VectorFxpTensor"),
        (VeStage.FXP_TO_FP, "VectorFxpToFpTensor"),
        (VeStage.NARROW, "VectorNarrowTensor"),
        (VeStage.FP, "VectorFpTensor"),
        (VeStage.INTRA_SLICE_REDUCE, "VectorIntraReduceTensor"),
        (VeStage.FP_DIV, "VectorFpDivTensor"),
        (VeStage.WIDEN, "VectorWidenTensor"),
        (VeStage.FP_TO_FXP, "VectorFpToFxpTensor"),
        (VeStage.CLIP, "VectorClipTensor"),
        (VeStage.INTER_SLICE_REDUCE, "VectorInterReduceTensor"),
        (VeStage.FINAL, "VectorFinalTensor"),
    )
}
# Type parameters after a family's own that only checkers read: a vector pass position's stash state
# (docs/stage-rules.md §6.3). The pass's end has none.
TYPESTATE: Final = {f: 1 for stage, f in VECTOR_FAMILIES.items() if stage is not VeStage.FINAL}

FAMILIES: Final = {
    f.name: f
    for f in (
        COLLECT, TRF, OUTER, PACKET, TIME, CONTRACT, DM, HBM, DM_VIEW, DM_VIEW_MUT, HBM_VIEW, HBM_VIEW_MUT, BEGIN, FETCH,
        FETCH_CAST, SWITCH, TRANSPOSE, CAST, COMMIT_TRIM, COMMIT_CAST, VRF, *VECTOR_FAMILIES.values(),
    )
}


@dataclass(frozen=True)
class TensorType:
    """A concrete tensor type: a family with a dtype name per dtype parameter and a mapping per layout."""

    family: Family
    dtypes: tuple[str, ...]
    layouts: tuple[Mapping, ...]

    def layout(self, name: str) -> Mapping:
        return self.layouts[self.family.layouts.index(name)]

    @property
    def dtype(self) -> str:
        """The element dtype: the accumulator of a contraction result."""
        return self.dtypes[0]

    @property
    def grid(self) -> tuple[Mapping, Mapping, Mapping]:
        return self.layouts[0], self.layouts[1], self.layouts[2]

    def text(self) -> str:
        args = [*self.dtypes, *(f'm["{m}"]' for m in self.layouts)]
        return f"{self.family.name}[{', '.join(args)}]"


def _check_accumulator(family: str, acc: str, storage: str | None) -> None:
    if acc not in ACCUMULATORS:
        raise DtypeError(
            family, "NotAnAccumulator", f"the accumulator of a {family} must be i32 or f32, got {acc}",
            hint="integer streams accumulate in tcp.i32, float streams in tcp.f32",
        )
    if storage is None:
        return
    expected = ACCUMULATOR.get(storage)
    if expected is None:
        raise DtypeError(
            family, "NoMultiplier", f"{storage} is not a contraction stream dtype, so no {family} stores it",
            hint=f"the stream must be one of {', '.join(ACCUMULATOR)}",
        )
    if expected != acc:
        raise DtypeError(
            family, "Accumulator", f"a {storage} stream accumulates in {expected}, not {acc}",
            hint=f"declare {family}[tcp.{expected}, tcp.{storage}, ...]",
        )


@memoized
def check_type(family: Family, dtypes: tuple[str, ...], layouts: tuple[Mapping, ...]) -> TensorType:
    """The type ``family[dtypes, layouts]`` once every constraint on it holds (else the rule's error)."""
    name = family.name
    check_axis_sizes((f"its {p}", m) for p, m in zip(family.layouts, layouts))
    if family.accumulates and family is not CONTRACT:
        _check_accumulator(name, dtypes[0], dtypes[1] if len(dtypes) > 1 else None)
    maps = {("slice_" if p == "Slice" else p.lower()): m for p, m in zip(family.layouts, layouts)}
    family.rule(name, dtypes[-1], maps)
    return TensorType(family, dtypes, layouts)
