"""The composers of the two engines that move stream cells without computing: ``switch`` and ``transpose``.

Each runs its stage's rules (docs/stage-rules.md §5.1 and §5.2) on the receiver's type and returns
the result's :class:`TensorType` with the parameters the verifier derived. Chip, Cluster and the
element dtype pass through both engines; the switch keeps the Packet, the transpose the Slice.
"""

from __future__ import annotations

from tcpdsl.algebra import Mapping
from tcpdsl.verify.compose import meeting
from tcpdsl.verify.families import SWITCH, TRANSPOSE, TensorType, check_type
from tcpdsl.verify.switch import SwitchParams, verify_switch
from tcpdsl.verify.transpose import TransposeParams, verify_transpose


def switch(
    src: TensorType, *, config: object, out_slice: Mapping, out_time: Mapping
) -> tuple[TensorType, SwitchParams]:
    """Route the fetched packets between slices as ``config`` says (docs/stage-rules.md §5.1)."""
    meeting(src, out_slice=out_slice, out_time=out_time)
    chip, cluster, slice_ = src.grid
    packet = src.layout("Packet")
    params = verify_switch(
        src.dtype, config, cluster=cluster, slice=slice_, time=src.layout("Time"), packet=packet,
        out_slice=out_slice, out_time=out_time,
    )
    return check_type(SWITCH, src.dtypes[:1], (chip, cluster, out_slice, out_time, packet)), params


def transpose(src: TensorType, *, out_time: Mapping, out_packet: Mapping) -> tuple[TensorType, TransposeParams]:
    """Transpose the matrix of the innermost time steps and the packet (docs/stage-rules.md §5.2)."""
    meeting(src, out_time=out_time, out_packet=out_packet)
    params = verify_transpose(
        src.dtype, time=src.layout("Time"), packet=src.layout("Packet"), out_time=out_time, out_packet=out_packet
    )
    return check_type(TRANSPOSE, src.dtypes[:1], (*src.grid, out_time, out_packet)), params
