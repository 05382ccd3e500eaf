"""Hardware constants of the contraction engine (docs/stage-rules.md §2.1)."""

from __future__ import annotations

from typing import Final

BITS_PER_BYTE: Final = 8
FLIT_BYTES: Final = 32
FLIT_BITS: Final = FLIT_BYTES * BITS_PER_BYTE
TEMPORAL_ACCUMULATOR_COLS: Final = 32
CONTRACT_LANE_OUT_PACKET_ELEMENTS: Final = 8
ACCUMULATOR_CAPACITY_ELEMENTS: Final = 1024
VALID_LANE_SIZES: Final = frozenset({1, 2, 4, 8})
MAX_LANES: Final = 8
TRF_CAPACITY_BYTES: Final = 65536
CLUSTER_SIZES: Final = frozenset({1, 2})
SLICE_SIZES: Final = frozenset({64, 128, 256})
# A processing element holds the smallest Slice (64); Cluster x Slice spans up to 8 PEs of a chip.
SLICES_PER_PE: Final = 64
MAX_SEQUENCER_ENTRIES: Final = 8
# The Outer stage always emits a 64-byte packet; the TRF read that fills it is at most that wide.
OUTER_PACKET_BYTES: Final = 64
SEQUENTIAL_PACKET_ALIGN: Final = 32


def is_valid_lane_size(n: int) -> bool:
    return n in VALID_LANE_SIZES


def align_up(a: int, b: int) -> int:
    return -(-a // b) * b
