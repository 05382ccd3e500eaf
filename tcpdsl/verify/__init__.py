"""Stage verifiers of the contraction engine: pure functions of mappings and dtype names.

The runtime and the static checker both call these (through :mod:`tcpdsl.verify.compose`, which
composes them into stage calls), so every rule message is produced here.
"""

from __future__ import annotations

from tcpdsl.verify.constructors import (
    check_collect_tensor,
    check_contract_outer_tensor,
    check_contract_packet_tensor,
    check_contract_tensor,
    check_trf_tensor,
)
from tcpdsl.verify.families import FAMILIES, Family, TensorType, check_type
from tcpdsl.verify.dtypes import ACCUMULATOR, BITS, WEIGHTS, check_pairing, flit_elements, size_in_bytes
from tcpdsl.verify.lane_folder import verify_contract_lane
from tcpdsl.verify.lane_mode import LaneMode
from tcpdsl.verify.outer import verify_contract_outer
from tcpdsl.verify.packet_reducer import verify_contract_packet
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.params import (
    LaneParams,
    LoopEntry,
    OuterParams,
    PacketParams,
    SequencerParams,
    StreamAdapterParams,
    TimeParams,
    TrfParams,
)
from tcpdsl.verify.stream_adapter import check_stream_adapter
from tcpdsl.verify.time_reducer import verify_contract_time
from tcpdsl.verify.to_trf import verify_to_trf
from tcpdsl.verify.trf_sequencer import check_trf_sequencer, read_size

__all__ = [
    "ACCUMULATOR",
    "BITS",
    "WEIGHTS",
    "LaneMode",
    "LaneParams",
    "LoopEntry",
    "OuterParams",
    "PacketParams",
    "SequencerParams",
    "StreamAdapterParams",
    "TimeParams",
    "TrfParams",
    "FAMILIES",
    "Family",
    "Stage",
    "TensorType",
    "check_collect_tensor",
    "check_contract_outer_tensor",
    "check_contract_packet_tensor",
    "check_contract_tensor",
    "check_pairing",
    "check_stream_adapter",
    "check_trf_tensor",
    "check_type",
    "check_trf_sequencer",
    "flit_elements",
    "read_size",
    "size_in_bytes",
    "verify_contract_lane",
    "verify_contract_outer",
    "verify_contract_packet",
    "verify_contract_time",
    "verify_to_trf",
]
