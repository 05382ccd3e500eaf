"""Which positions of a vector pass have which methods (docs/stage-rules.md §6.1).

The positions are tensor families (``VECTOR_FAMILIES`` in :mod:`tcpdsl.verify.families`); a method
belongs to every position the state machine lets the stream leave for the method's target, so the
stage table's receivers are derived from the rules, never listed by hand.
"""

from __future__ import annotations

from typing import Final

from tcpdsl.verify.families import VECTOR_FAMILIES, Family
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.vector_pass import INTRA, STASHABLE, VeStage, may_follow

POSITION_OF: Final = {family: stage for stage, family in VECTOR_FAMILIES.items()}

# The position each pass method moves the stream to; stash and reinterpret stay where they are.
TARGET: Final[dict[Stage, VeStage]] = {
    Stage.VECTOR_INTRA_SLICE_TAG: VeStage.TAG,
    Stage.VECTOR_LOGIC: VeStage.LOGIC,
    Stage.VECTOR_FXP: VeStage.FXP,
    Stage.VECTOR_FXP_TO_FP: VeStage.FXP_TO_FP,
    Stage.VECTOR_NARROW_SPLIT: VeStage.NARROW,
    Stage.VECTOR_NARROW_TRIM: VeStage.NARROW,
    Stage.VECTOR_FP_UNARY: VeStage.FP,
    Stage.VECTOR_FP_BINARY: VeStage.FP,
    Stage.VECTOR_FP_TERNARY: VeStage.FP,
    Stage.VECTOR_INTRA_SLICE_REDUCE: VeStage.INTRA_SLICE_REDUCE,
    Stage.VECTOR_FP_DIV: VeStage.FP_DIV,
    Stage.VECTOR_WIDEN_CONCAT: VeStage.WIDEN,
    Stage.VECTOR_WIDEN_PAD: VeStage.WIDEN,
    Stage.VECTOR_FP_TO_FXP: VeStage.FP_TO_FXP,
    Stage.VECTOR_CLIP: VeStage.CLIP,
    Stage.VECTOR_INTER_SLICE_REDUCE: VeStage.INTER_SLICE_REDUCE,
    Stage.VECTOR_FINAL: VeStage.FINAL,
}
# Where the methods that stay put may be called.
STAYING: Final[dict[Stage, frozenset[VeStage]]] = {Stage.VECTOR_STASH: STASHABLE, Stage.VECTOR_REINTERPRET: INTRA}


def receivers(method: Stage) -> tuple[Family, ...]:
    """The positions that have ``method``: those the pass may leave for its target (docs/stage-rules.md §6.1)."""
    target = TARGET.get(method)
    if target is None:
        return tuple(VECTOR_FAMILIES[p] for p in VeStage if p in STAYING[method])
    return tuple(VECTOR_FAMILIES[p] for p in VeStage if may_follow(p, target))
