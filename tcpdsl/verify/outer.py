"""``contract_outer``: the dtype gate, the Stream Adapter, then the TRF Sequencer."""

from __future__ import annotations

from tcpdsl.algebra import Mapping
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.dtypes import BITS, check_pairing
from tcpdsl.verify.params import OuterParams
from tcpdsl.verify.stream_adapter import check_stream_adapter
from tcpdsl.verify.trf_sequencer import check_trf_sequencer


@memoized
def verify_contract_outer(
    stream_dtype: str,
    weight_dtype: str,
    *,
    time: Mapping,
    packet: Mapping,
    lane: Mapping,
    element: Mapping,
    out_time: Mapping,
    out_packet: Mapping,
) -> OuterParams:
    """Check ``[Time, Packet] x [Lane, Element] -> [Lane, OutTime, OutPacket]`` and derive its parameters."""
    accumulator = check_pairing(stream_dtype, weight_dtype)
    adapter = check_stream_adapter(
        stream_dtype, BITS[stream_dtype], time=time, packet=packet, lane=lane, out_time=out_time, out_packet=out_packet
    )
    sequencer = check_trf_sequencer(BITS[weight_dtype], element=element, out_time=out_time, out_packet=out_packet)
    return OuterParams(accumulator=accumulator, **vars(adapter), **vars(sequencer))
