"""The stage table: one row per stage method, read by everything that knows about stages.

A row says which tensor families have the method, which family it returns, the keyword
arguments it takes (mappings first, in the order they are read, then the other options), the
tensors it takes besides its receiver, the composer that runs its rules, and the section of
docs/stage-rules.md that lists them. The runtime methods (tcpdsl/tensors), the mypy plugin's hooks
(tcpdsl/static), the docs test and the corpus test all read this table; adding a stage is a row
here plus its composer (docs/architecture.md, "Adding a stage").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from tcpdsl.errors import LayoutError
from tcpdsl.verify import compose, compose_back, compose_front, compose_memory, compose_switch
from tcpdsl.verify import vector_compose as vc
from tcpdsl.verify.families import BEGIN, CAST, COLLECT, COMMIT_CAST, COMMIT_TRIM, CONTRACT, DM, DM_VIEW, DM_VIEW_MUT, FETCH
from tcpdsl.verify.families import FETCH_CAST, HBM, HBM_VIEW, HBM_VIEW_MUT, OUTER, PACKET, SWITCH, TIME, TRANSPOSE, TRF
from tcpdsl.verify.families import VECTOR_FAMILIES, VRF
from tcpdsl.verify.families import Family, TensorType
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.vector_families import TARGET, receivers
from tcpdsl.verify.vector_pass import VeStage

# A vector pass's end, which casts and commits like any stream (docs/stage-rules.md §6.1).
FINAL: Final = VECTOR_FAMILIES[VeStage.FINAL]

# A composer: the receiver's type, the other tensors' types and the keyword arguments, to the
# result type and the parameters the stage's verifier derived.
Composer = Callable[..., tuple[TensorType, Any]]


@dataclass(frozen=True)
class StageRow:
    """One stage method."""

    stage: Stage  # the method name, which LayoutError.stage also carries
    receivers: tuple[Family, ...]  # the families the method belongs to
    result: Family | None  # None: the receiver's family (a tile of a read view is a read view; a vector method
    # that stays at its position)
    mappings: tuple[str, ...]  # mapping keyword arguments, in the order they are read
    compose: Composer = field(repr=False)
    section: str  # of docs/stage-rules.md
    options: tuple[str, ...] = ()  # other keyword arguments the composer takes from the call
    operands: tuple[tuple[str, Family], ...] = ()  # tensors passed besides the receiver, by name
    carried: tuple[str, ...] = ()  # composer arguments taken from earlier stages, not from the call
    # The class the method is defined on when it is not the receiver's: ``begin`` is a method of a
    # tensor-unit context that takes the DM view (its receiver family) as its argument.
    method_of: str | None = None
    # Arguments passed positionally before any operand, by the composer's names: the target dtype of
    # ``fetch_cast(tcp.f32)`` (the composer gets its name), the run-time start of ``tile(start, ...)``, the
    # switch's configuration.
    positional: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()  # mappings a call may leave out, for the composer's default

    def returns(self, receiver: Family) -> Family:
        """The family the method returns when called on ``receiver``."""
        return receiver if self.result is None else self.result

    @property
    def keywords(self) -> tuple[str, ...]:
        """The keyword arguments of the method, in order."""
        return self.mappings + self.options


# Where ``begin`` is defined: a tensor-unit context, ``dev.main`` or ``dev.sub``.
CONTEXT: Final = "TuContext"

STAGES: Final[dict[Stage, StageRow]] = {
    row.stage: row
    for row in (
        StageRow(Stage.TO_TRF, (COLLECT,), TRF, ("lane", "element"), compose.to_trf, "2.4"),
        StageRow(
            Stage.CONTRACT_OUTER, (COLLECT,), OUTER, ("out_time", "out_packet"), compose.contract_outer, "2.3",
            operands=(("trf", TRF),),
        ),
        StageRow(Stage.CONTRACT_PACKET, (OUTER,), PACKET, ("out_packet",), compose.contract_packet, "2.5"),
        StageRow(Stage.CONTRACT_TIME, (PACKET,), TIME, ("out_time",), compose.contract_time, "2.6"),
        StageRow(
            Stage.CONTRACT_LANE, (TIME,), CONTRACT, ("out_time", "out_packet"), compose.contract_lane, "2.7",
            options=("mode",), carried=("pre_reduce_time",),
        ),
        # The engines that move stream cells between slices and within a packet (docs/stage-rules.md §5.1, §5.2).
        StageRow(
            Stage.SWITCH, (FETCH, FETCH_CAST), SWITCH, ("out_slice", "out_time"), compose_switch.switch, "5.1",
            positional=("config",),
        ),
        StageRow(
            Stage.TRANSPOSE, (COLLECT, CONTRACT, FINAL, CAST), TRANSPOSE, ("out_time", "out_packet"), compose_switch.transpose,
            "5.2",
        ),
        # The stream front (docs/architecture.md, "Adding a stream stage").
        StageRow(Stage.BEGIN, (DM_VIEW,), BEGIN, (), compose_front.begin, "4.3", method_of=CONTEXT),
        StageRow(
            Stage.FETCH, (BEGIN,), FETCH, ("out_time", "out_packet"), compose_front.fetch, "4.3",
            carried=("context",),
        ),
        StageRow(
            Stage.FETCH_CAST, (FETCH,), FETCH_CAST, (), compose_back.fetch_cast, "4.4", carried=("read_size",),
            positional=("dtype",),
        ),
        StageRow(
            Stage.COLLECT, (FETCH, FETCH_CAST, SWITCH), COLLECT, ("out_time", "out_packet"), compose_front.collect,
            "4.5",
        ),
        StageRow(Stage.TO_VRF, (COLLECT,), VRF, ("element",), compose_back.to_vrf, "4.6"),
        StageRow(Stage.CAST, (COLLECT, CONTRACT, FINAL), CAST, ("out_packet",), compose_back.cast, "4.7",
                 positional=("dtype",)),
        StageRow(
            Stage.COMMIT_TRIM, (COLLECT, CONTRACT, FINAL, CAST, TRANSPOSE), COMMIT_TRIM, ("out_packet",),
            compose_back.commit_trim, "4.8",
        ),
        StageRow(
            Stage.COMMIT_CAST, (COMMIT_TRIM,), COMMIT_CAST, (), compose_back.commit_cast, "4.8", carried=("context",),
            positional=("dtype",),
        ),
        StageRow(
            Stage.COMMIT_CAST_RELU, (COMMIT_TRIM,), COMMIT_CAST, (), compose_back.commit_cast_relu, "4.8",
            carried=("context",), positional=("dtype",),
        ),
        StageRow(Stage.COMMIT, (COMMIT_TRIM, COMMIT_CAST), DM, ("element",), compose_back.commit, "4.8", carried=("context",)),
        StageRow(
            Stage.COMMIT_VIEW, (COMMIT_TRIM, COMMIT_CAST), DM, (), compose_back.commit_view, "4.8", operands=(("dst", DM_VIEW_MUT),),
            carried=("context",),
        ),
        # Memory: DMA moves, the scatter and views (docs/stage-rules.md §4.1).
        StageRow(
            Stage.TO_DM, (DM, HBM), DM, ("cluster", "slice", "element"), compose_memory.to_dm, "4.1",
            optional=("cluster",),
        ),
        StageRow(
            Stage.TO_DM_VIEW, (DM_VIEW, HBM_VIEW), DM, (), compose_memory.to_dm_view, "4.1",
            operands=(("dst", DM_VIEW_MUT),),
        ),
        StageRow(Stage.TO_HBM, (DM, HBM), HBM, ("element",), compose_memory.to_hbm, "4.1"),
        StageRow(
            Stage.TO_HBM_VIEW, (DM_VIEW, HBM_VIEW), HBM, (), compose_memory.to_hbm_view, "4.1",
            operands=(("dst", HBM_VIEW_MUT),),
        ),
        StageRow(
            Stage.DMA_SCATTER, (DM,), HBM, ("key",), compose_memory.dma_scatter, "4.1",
            operands=(("index", HBM), ("out", HBM)),
        ),
        StageRow(Stage.RESHAPE, (DM,), DM, ("chip", "cluster", "slice", "element"), compose_memory.reshape, "4.1"),
        StageRow(
            Stage.TILE, (DM_VIEW, DM_VIEW_MUT, HBM_VIEW, HBM_VIEW_MUT), None, ("index", "element"), compose_memory.tile, "4.1",
            options=("len",), positional=("start",),
        ),
        StageRow(
            Stage.PAD, (DM_VIEW, DM_VIEW_MUT, HBM_VIEW, HBM_VIEW_MUT), None, ("element",), compose_memory.pad, "4.1",
        ),
        StageRow(Stage.VECTOR_INIT, (COLLECT, CONTRACT), VECTOR_FAMILIES[VeStage.INIT], (), vc.vector_init, "6.1"),
        *(
            StageRow(stage, receivers(stage), VECTOR_FAMILIES[TARGET[stage]] if stage in TARGET else None, mappings,
                     getattr(vc, stage), section, options=options, carried=("state",), positional=positional)
            for stage, mappings, options, positional, section in (
                (Stage.VECTOR_INTRA_SLICE_TAG, (), (), ("tag",), "6.1"),
                (Stage.VECTOR_LOGIC, (), (), ("op", "operand"), "6.1"),
                (Stage.VECTOR_FXP, (), (), ("op", "operand"), "6.1"),
                (Stage.VECTOR_FXP_TO_FP, (), (), ("int_width",), "6.1"),
                (Stage.VECTOR_NARROW_SPLIT, ("out_time", "out_packet"), (), (), "6.2"),
                (Stage.VECTOR_NARROW_TRIM, ("out_packet",), (), (), "6.2"),
                (Stage.VECTOR_FP_UNARY, (), (), ("op",), "6.1"),
                (Stage.VECTOR_FP_BINARY, (), (), ("op", "operand"), "6.1"),
                (Stage.VECTOR_FP_TERNARY, (), (), ("op", "operands"), "6.1"),
                (Stage.VECTOR_INTRA_SLICE_REDUCE, ("out_time", "out_packet"), ("reduce",), ("op",), "6.4"),
                (Stage.VECTOR_FP_DIV, (), (), ("operand",), "6.1"),
                (Stage.VECTOR_WIDEN_CONCAT, ("out_time", "out_packet"), (), (), "6.2"),
                (Stage.VECTOR_WIDEN_PAD, ("out_packet",), (), (), "6.2"),
                (Stage.VECTOR_FP_TO_FXP, (), (), ("int_width",), "6.1"),
                (Stage.VECTOR_CLIP, (), (), ("op", "operand"), "6.1"),
                (Stage.VECTOR_REINTERPRET, (), (), ("dtype",), "6.1"),
                (Stage.VECTOR_STASH, (), (), (), "6.3"),
                (Stage.VECTOR_INTER_SLICE_REDUCE, ("out_slice", "out_time"), (), ("op",), "6.5"),
                (Stage.VECTOR_FINAL, (), (), (), "6.1"),
            )
        ),
    )
}

# The contraction chain in the order its stages run, for the StageOrder hint.
_CHAIN: Final = (Stage.CONTRACT_OUTER, Stage.CONTRACT_PACKET, Stage.CONTRACT_TIME, Stage.CONTRACT_LANE)
# The stream front in the order its stages run.
_FRONT: Final = (Stage.BEGIN, Stage.FETCH, Stage.FETCH_CAST, Stage.SWITCH, Stage.COLLECT)
_BACK: Final = (Stage.CAST, Stage.TRANSPOSE, Stage.COMMIT_TRIM, Stage.COMMIT)


def _order(stage: Stage) -> tuple[Stage, ...]:
    return next((order for order in (_FRONT, _BACK) if stage in order), _CHAIN)


def check_receiver(stage: Stage, src: TensorType) -> None:
    """A stage is a method of its receiver families only (docs/stage-rules.md §2.3)."""
    row = STAGES[stage]
    if src.family not in row.receivers:
        receivers = " or ".join(f.name for f in row.receivers)
        if stage.startswith("vector_"):
            order = "the vector pass's stages in hardware order (docs/stage-rules.md §6.1)"
        else:
            order = " -> ".join(_order(stage))
        raise LayoutError(
            stage, "StageOrder", f"{stage} is a stage of a {receivers}, not of a {src.family.name}",
            hint=f"call the stages in order: {order}",
        )


def compose_stage(stage: Stage, src: TensorType, *operands: TensorType, **arguments: Any) -> tuple[TensorType, Any]:
    """Run one stage call's rules: its receiver, then its composer (the runtime and the plugin call this)."""
    check_receiver(stage, src)
    return STAGES[stage].compose(src, *operands, **arguments)
