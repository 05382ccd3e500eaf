"""The chain composer: each stage call as a function from tensor types to the result type.

Each function runs the rules of its stage in their hardware order (dtype pairing, grid, stage
verifier, then the result type's constraints) and returns the result's :class:`TensorType` with
the parameters the verifier derived. Each is the composer of a row of the stage table
(:mod:`tcpdsl.verify.stages`), whose ``compose_stage`` checks the receiver first; the runtime stage
methods and the mypy plugin both call that, so a kernel is accepted or refused for the same
reason, in the same words, everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence

from tcpdsl.algebra import Mapping, check_axis_sizes
from tcpdsl.errors import LayoutError
from tcpdsl.verify.dtypes import check_pairing
from tcpdsl.verify.families import CONTRACT, GRID, OUTER, PACKET, TIME, TRF, TensorType, check_type
from tcpdsl.verify.lane_folder import verify_contract_lane
from tcpdsl.verify.lane_mode import LaneMode
from tcpdsl.verify.outer import verify_contract_outer
from tcpdsl.verify.packet_reducer import verify_contract_packet
from tcpdsl.verify.params import LaneParams, OuterParams, PacketParams, TimeParams, TrfParams
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.time_reducer import verify_contract_time
from tcpdsl.verify.to_trf import verify_to_trf

def meeting(*types: TensorType, **arguments: Mapping) -> None:
    """The layouts that meet in a stage call agree on the size of every axis they name."""
    named = [(f"the {t.family.name}'s {p}", m) for t in types for p, m in zip(t.family.layouts, t.layouts)]
    check_axis_sizes([*named, *arguments.items()])


def multiplier(
    stream_dtype: str, trf_dtype: str, stream_grid: Sequence[Mapping | None], trf_grid: Sequence[Mapping | None]
) -> str:
    """The accumulator dtype of a stream/TRF pair, once the Multiplier has a MAC for it and the TRF sits
    on the stream's grid: the first rules of ``contract_outer``. A grid entry that is None is not known
    (the mypy plugin checks what it can of a type whose layouts it cannot read)."""
    acc = check_pairing(stream_dtype, trf_dtype)
    _same_grid(stream_grid, trf_grid)
    return acc


def _same_grid(stream: Sequence[Mapping | None], trf: Sequence[Mapping | None]) -> None:
    """The TRF sits on the stream's Chip, Cluster and Slice (checked before the Stream Adapter)."""
    for name, a, b in zip(GRID, stream, trf):
        if a is not None and b is not None and a != b:
            raise LayoutError(
                Stage.CONTRACT_OUTER, f"{name}Mismatch",
                f"contract_outer: the TRF's {name} {b} differs from the stream's {name} {a}",
                hint=f"load the TRF with the stream's {name} layout",
            )


def to_trf(src: TensorType, *, lane: Mapping, element: Mapping) -> tuple[TensorType, TrfParams]:
    """Load a collected stream into the TRF as ``[Lane, Element]`` (docs/stage-rules.md §2.4)."""
    meeting(src, lane=lane, element=element)
    params = verify_to_trf(src.dtype, time=src.layout("Time"), packet=src.layout("Packet"), lane=lane, element=element)
    return check_type(TRF, src.dtypes, (*src.grid, lane, element)), params


def contract_outer(
    stream: TensorType, trf: TensorType, *, out_time: Mapping, out_packet: Mapping
) -> tuple[TensorType, OuterParams]:
    """Multiply a stream by TRF weights into ``[Lane, OutTime, OutPacket]`` (docs/stage-rules.md §2.3-2.4)."""
    if trf.family is not TRF:
        raise LayoutError(
            Stage.CONTRACT_OUTER, "NotATrf", f"contract_outer takes TRF weights (a TrfTensor), got a {trf.family.name}",
            hint="load the weights with .to_trf(lane=..., element=...) or build a tcp.TrfTensor[...]",
        )
    meeting(stream, trf, out_time=out_time, out_packet=out_packet)
    acc = multiplier(stream.dtype, trf.dtype, stream.grid, trf.grid)
    lane = trf.layout("Lane")
    params = verify_contract_outer(
        stream.dtype,
        trf.dtype,
        time=stream.layout("Time"),
        packet=stream.layout("Packet"),
        lane=lane,
        element=trf.layout("Element"),
        out_time=out_time,
        out_packet=out_packet,
    )
    return check_type(OUTER, (acc, stream.dtype), (*stream.grid, lane, out_time, out_packet)), params


def contract_packet(src: TensorType, *, out_packet: Mapping) -> tuple[TensorType, PacketParams]:
    """Sum the innermost packet cells in the adder tree (docs/stage-rules.md §2.5)."""
    meeting(src, out_packet=out_packet)
    params = verify_contract_packet(src.dtypes[1], packet=src.layout("Packet"), out_packet=out_packet)
    return check_type(PACKET, src.dtypes[:1], (*src.layouts[:5], out_packet)), params


def contract_time(src: TensorType, *, out_time: Mapping) -> tuple[TensorType, TimeParams]:
    """Accumulate across Time, keeping the axes of ``out_time`` (docs/stage-rules.md §2.6)."""
    meeting(src, out_time=out_time)
    params = verify_contract_time(time=src.layout("Time"), out_time=out_time)
    layouts = src.layouts
    return check_type(TIME, src.dtypes, (*layouts[:4], out_time, layouts[5])), params


def contract_lane(
    src: TensorType, *, out_time: Mapping, out_packet: Mapping, mode: LaneMode, pre_reduce_time: Mapping
) -> tuple[TensorType, LaneParams]:
    """Fold the lanes into ``[OutTime, OutPacket]`` (docs/stage-rules.md §2.7).

    ``pre_reduce_time`` is the OutTime of ``contract_outer``: the accumulator's capacity depends on it.
    """
    meeting(src, out_time=out_time, out_packet=out_packet)
    params = verify_contract_lane(
        lane=src.layout("Lane"),
        time=src.layout("Time"),
        packet=src.layout("Packet"),
        out_time=out_time,
        out_packet=out_packet,
        pre_reduce_time=pre_reduce_time,
        mode=mode,
    )
    return check_type(CONTRACT, src.dtypes, (*src.grid, out_time, out_packet)), params
