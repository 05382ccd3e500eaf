"""Constructor constraints of the pipeline tensors (docs/stage-rules.md §2.2).

In the reference these are compile-time asserts, so they run before any stage verifier. Each
raises ``LayoutError`` whose ``stage`` is the tensor class name. Chip is never constrained and
Lane only by the stage verifiers, but both are accepted so every constructor has one call shape.
"""

from __future__ import annotations

from tcpdsl.algebra import Mapping
from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.constants import (
    CLUSTER_SIZES,
    FLIT_BITS,
    SLICE_SIZES,
    TEMPORAL_ACCUMULATOR_COLS,
)
from tcpdsl.verify.dtypes import ACCUMULATORS, bits_of, bytes_text, flit_elements


def _check_grid(stage: str, cluster: Mapping, slice_: Mapping) -> None:
    if cluster.size not in CLUSTER_SIZES:
        raise LayoutError(
            stage,
            "ClusterSize",
            f"Cluster size must be 1 or 2, got {cluster.size} (Cluster {cluster})",
            hint="map at most 2 cells to Cluster, e.g. pad it with `# 2`",
        )
    if slice_.size not in SLICE_SIZES:
        raise LayoutError(
            stage,
            "SliceSize",
            f"Slice size must be one of 64 | 128 | 256, got {slice_.size} (Slice {slice_})",
            hint="pad Slice to 64, 128 or 256 cells, e.g. `# 256`",
        )


@memoized
def check_collect_tensor(
    dtype: str, *, chip: Mapping, cluster: Mapping, slice_: Mapping, time: Mapping, packet: Mapping
) -> None:
    _check_flit_stream("CollectTensor", dtype, cluster, slice_, packet)


def _check_flit_stream(stage: str, dtype: str, cluster: Mapping, slice_: Mapping, packet: Mapping) -> None:
    """A stream position whose Packet is one flit: a collected stream, a transposed one."""
    bits = bits_of(dtype, stage)
    _check_grid(stage, cluster, slice_)
    if packet.size * bits != FLIT_BITS:
        raise LayoutError(
            stage,
            "PacketFlit",
            f"Packet size must be exactly one flit (32 bytes), got {bytes_text(bits, packet.size)} bytes "
            f"(Packet {packet} of {dtype})",
            hint=f"make Packet {flit_elements(bits)} elements of {dtype}, padding it with `# {flit_elements(bits)}` "
            "if needed",
        )


@memoized
def check_transpose_tensor(
    dtype: str, *, chip: Mapping, cluster: Mapping, slice_: Mapping, time: Mapping, packet: Mapping
) -> None:
    _check_flit_stream("TransposeTensor", dtype, cluster, slice_, packet)


@memoized
def check_trf_tensor(
    dtype: str, *, chip: Mapping, cluster: Mapping, slice_: Mapping, lane: Mapping, element: Mapping
) -> None:
    stage = "TrfTensor"
    bits_of(dtype, stage)
    _check_grid(stage, cluster, slice_)


@memoized
def check_contract_outer_tensor(
    storage: str, *, chip: Mapping, cluster: Mapping, slice_: Mapping, lane: Mapping, time: Mapping, packet: Mapping
) -> None:
    stage = "ContractOuterTensor"
    bits = bits_of(storage, stage)
    _check_grid(stage, cluster, slice_)
    total = packet.size * bits
    if total not in (FLIT_BITS, 2 * FLIT_BITS):
        fe = flit_elements(bits)
        raise LayoutError(
            stage,
            "PacketFlits",
            f"Packet size must be one or two flits (32 or 64 bytes), got {bytes_text(bits, packet.size)} bytes "
            f"(OutPacket {packet} of {storage})",
            hint=f"make OutPacket {fe} or {2 * fe} elements of {storage}",
        )


@memoized
def check_contract_packet_tensor(
    *,
    chip: Mapping,
    cluster: Mapping,
    slice_: Mapping,
    lane: Mapping,
    time: Mapping,
    packet: Mapping,
    stage: str = "ContractPacketTensor",
) -> None:
    """Also the constraint of ContractTimeTensor: pass ``stage="ContractTimeTensor"``."""
    _check_grid(stage, cluster, slice_)
    n = packet.size
    if n > TEMPORAL_ACCUMULATOR_COLS or n & (n - 1):
        raise LayoutError(
            stage,
            "PacketPow2",
            "Packet element count must be a power of two and at most the accumulator column count (32), "
            f"got {n} (Packet {packet})",
            hint="reduce the packet further, or pad it to a power of two no larger than 32",
        )


@memoized
def check_contract_tensor(
    acc: str, *, chip: Mapping, cluster: Mapping, slice_: Mapping, time: Mapping, packet: Mapping
) -> None:
    stage = "ContractTensor"
    bits = bits_of(acc, stage)
    if acc not in ACCUMULATORS:
        raise DtypeError(
            stage,
            "NotAnAccumulator",
            f"the contraction result must be an i32 or f32 accumulator, got {acc}",
            hint="contract to i32 (integer streams) or f32 (float streams), then cast",
        )
    _check_grid(stage, cluster, slice_)
    if packet.size * bits != FLIT_BITS:
        raise LayoutError(
            stage,
            "ContractPacketSize",
            f"Packet size must be exactly one flit (32 bytes) of the i32/f32 accumulator, got "
            f"{bytes_text(bits, packet.size)} bytes (Packet {packet} of {acc})",
            hint="make the contraction's OutPacket 8 elements, e.g. `[Lane # 8]`",
        )
