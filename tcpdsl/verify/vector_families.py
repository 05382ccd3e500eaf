"""The positions of a vector pass as tensor families (docs/stage-rules.md §6.1).

A pass's stream has one family per position of the state machine: the class of the tensor a pass
method returns, and the methods it has, say where the pass stands. Each is ``[D, Chip, Cluster,
Slice, Time, Packet]`` like a collected stream; the composer checks every move between them, so a
position adds no constructor rule of its own.
"""

from __future__ import annotations

from typing import Final

from tcpdsl.algebra import Mapping
from tcpdsl.verify.families import GRID, Family
from tcpdsl.verify.vector_pass import VeStage


def _stream(family: str, dtype: str, maps: dict[str, Mapping]) -> None:
    """A pass position is reached only through a checked pass method: nothing more to check."""


def _family(name: str) -> Family:
    return Family(name, ("D",), (*GRID, "Time", "Packet"), _stream)


VECTOR_FAMILIES: Final[dict[VeStage, Family]] = {
    VeStage.INIT: _family("VectorInitTensor"),
    VeStage.TAG: _family("VectorTagTensor"),
    VeStage.LOGIC: _family("VectorLogicTensor"),
    VeStage.FXP: _family("VectorFxpTensor"),
    VeStage.FXP_TO_FP: _family("VectorFxpToFpTensor"),
    VeStage.NARROW: _family("VectorNarrowTensor"),
    VeStage.FP: _family("VectorFpTensor"),
    VeStage.INTRA_SLICE_REDUCE: _family("VectorIntraReduceTensor"),
    VeStage.FP_DIV: _family("VectorFpDivTensor"),
    VeStage.WIDEN: _family("VectorWidenTensor"),
    VeStage.FP_TO_FXP: _family("VectorFpToFxpTensor"),
    VeStage.CLIP: _family("VectorClipTensor"),
    VeStage.INTER_SLICE_REDUCE: _family("VectorInterReduceTensor"),
    VeStage.FINAL: _family("VectorFinalTensor"),
}
POSITION_OF: Final = {family: stage for stage, family in VECTOR_FAMILIES.items()}
