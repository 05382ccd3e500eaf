"""``switch``: the stream checks, then the named configurations' rebuilt output (docs/stage-rules.md §5.1).

A named configuration fixes the output: it is rebuilt from the input split and compared piece by
piece, innermost first, with what was declared. A broadcast tile may hold anything the input does
not carry, or Top padding. ``CustomBroadcast`` is checked by :mod:`tcpdsl.verify.switch_custom`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Union

from tcpdsl.algebra import Mapping, split_at
from tcpdsl.errors import LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.constants import BITS_PER_BYTE, CLUSTER_SIZES, FLIT_BYTES, SLICE_SIZES
from tcpdsl.verify.dtypes import bits_of, bytes_text
from tcpdsl.verify.switch_config import (
    CONFIGS,
    STAGE,
    Broadcast01,
    Broadcast1,
    CustomBroadcast,
    Forwarding,
    InterTranspose,
    Transpose,
    TransposedBroadcast1,
    NamedConfig,
    SwitchConfig,
)
from tcpdsl.verify.switch_custom import check_custom
from tcpdsl.verify.switch_tiles import check_tiles

PACKET_ALIGN_BYTES: Final = 8
RING_SLICES: Final = 256


@dataclass(frozen=True)
class SwitchParams:
    """The switch's derived parameters: ``sub_rings`` rings of ``ring_size`` routers each, passing
    ``time_steps`` packets of ``flits_per_packet`` flits. ``rebuilt_slice`` and ``rebuilt_time`` are
    the output the configuration makes, broadcast slots printed as ``broadcast(n)``."""

    config: str
    ring_size: int
    sub_rings: int
    time_steps: int
    flits_per_packet: int
    rebuilt_slice: str
    rebuilt_time: str


@dataclass(frozen=True)
class Tile:
    """A broadcast slot of ``size`` cells in the rebuilt OutSlice; ``label`` names it (X or Y)."""

    label: str
    size: int


Part = Union[Mapping, Tile]


def frame_text(parts: list[Part]) -> str:
    """The rebuilt frame, tiles printed as ``broadcast(n)``."""
    shown = [f"broadcast({p.size})" if isinstance(p, Tile) else str(p) for p in parts if p.size > 1]
    return ", ".join(shown) or "1"


def verify_switch(
    dtype: str,
    config: object,
    *,
    cluster: Mapping,
    slice: Mapping,
    time: Mapping,
    packet: Mapping,
    out_slice: Mapping,
    out_time: Mapping,
) -> SwitchParams:
    """Check ``[Slice, Time] -> [OutSlice, OutTime]`` under ``config`` and derive the ring."""
    return _verify_config(dtype, check_config(config), cluster=cluster, slice=slice, time=time, packet=packet,
                          out_slice=out_slice, out_time=out_time)


def check_config(config: object) -> SwitchConfig:
    """``config`` when it is a configuration. Checked before anything keys a cache on it: a user may pass
    anything, hashable or not."""
    if not isinstance(config, CONFIGS):
        raise LayoutError(
            STAGE,
            "NotAConfig",
            f"switch: the configuration must be one of {', '.join(c.name for c in CONFIGS)}, got {config!r}",
            hint="pass a configuration first, e.g. switch(tcp.Broadcast1(slice1=4, slice0=4), out_slice=..., "
            "out_time=...)",
        )
    return config


@memoized
def _verify_config(
    dtype: str,
    config: SwitchConfig,
    *,
    cluster: Mapping,
    slice: Mapping,
    time: Mapping,
    packet: Mapping,
    out_slice: Mapping,
    out_time: Mapping,
) -> SwitchParams:
    bits = bits_of(dtype, STAGE)
    _check_stream(dtype, bits, cluster, slice, packet)
    if slice.size != out_slice.size:
        raise LayoutError(
            STAGE,
            "SliceSizeMismatch",
            f"switch: input and output slice sizes must match, got {slice.size} and {out_slice.size} "
            f"(Slice {slice}, OutSlice {out_slice})",
            hint="the switch moves data between slices but keeps their number: give OutSlice as many cells as Slice",
        )
    if isinstance(config, CustomBroadcast):
        ring = check_custom(config, slice=slice, time=time, out_slice=out_slice, out_time=out_time)
        rebuilt_slice, rebuilt_time = str(out_slice), str(out_time)
    else:
        ring, rebuilt_slice, rebuilt_time = _check_named(config, slice, time, out_slice, out_time)
    flits = -(-packet.size * bits // (FLIT_BYTES * BITS_PER_BYTE))
    return SwitchParams(
        config=config.text,
        ring_size=ring,
        sub_rings=RING_SLICES // ring,
        time_steps=time.size,
        flits_per_packet=flits,
        rebuilt_slice=rebuilt_slice,
        rebuilt_time=rebuilt_time,
    )


def _check_stream(dtype: str, bits: int, cluster: Mapping, slice_: Mapping, packet: Mapping) -> None:
    if cluster.size not in CLUSTER_SIZES:
        raise LayoutError(
            STAGE,
            "ClusterSize",
            f"switch: Cluster size must be 1 or 2, got {cluster.size} (Cluster {cluster})",
            hint="map at most 2 cells to Cluster, e.g. pad it with `# 2`",
        )
    if slice_.size not in SLICE_SIZES:
        raise LayoutError(
            STAGE,
            "SliceSize",
            f"switch: Slice size must be one of 64 | 128 | 256, got {slice_.size} (Slice {slice_})",
            hint="pad Slice to 64, 128 or 256 cells, e.g. `# 256`",
        )
    if packet.size * bits % (PACKET_ALIGN_BYTES * BITS_PER_BYTE):
        raise LayoutError(
            STAGE,
            "PacketAlign",
            f"switch: Packet must be a multiple of 8 bytes, got {bytes_text(bits, packet.size)} bytes "
            f"(Packet {packet} of {dtype})",
            hint="pad Packet to a multiple of 8 bytes in fetch",
        )


def _check_named(
    config: NamedConfig, slice_: Mapping, time: Mapping, out_slice: Mapping, out_time: Mapping
) -> tuple[int, str, str]:
    """The ring size and the rebuilt OutSlice and OutTime of a named configuration."""
    if isinstance(config, Forwarding):
        _compare("OutSlice", config, [slice_], out_slice)
        _compare("OutTime", config, [time], out_time)
        return 1, str(slice_), str(time)
    slice1, slice0 = config.slice1, config.slice0
    time0 = config.time0 if isinstance(config, (Broadcast01, InterTranspose)) else 1
    if min(slice1, slice0, time0) <= 0:
        raise LayoutError(
            STAGE,
            "ZeroDimension",
            f"switch {config.text}: all dimensions must be greater than 0",
            hint="give slice1, slice0 (and time0) positive sizes",
        )
    _power_of_two(config, "slice0", slice0)
    _power_of_two(config, "slice1", slice1)
    if slice_.size % (slice1 * slice0):
        raise LayoutError(
            STAGE,
            "SliceNotDivisible",
            f"switch {config.text}: Slice size {slice_.size} must be divisible by slice1 * slice0 = "
            f"{slice1 * slice0} (Slice {slice_})",
            hint=f"choose slice1 and slice0 whose product divides {slice_.size}",
        )
    _power_of_two(config, "slice2", slice_.size // (slice1 * slice0))
    split = slice1 * time0 if isinstance(config, InterTranspose) else time0
    if time.size % split:
        raise LayoutError(
            STAGE,
            "TimeNotDivisible",
            f"switch {config.text}: Time size {time.size} must be divisible by the time split {split} (Time {time})",
            hint=f"choose a time split that divides {time.size}",
        )
    if isinstance(config, InterTranspose) and slice_.size != RING_SLICES:
        raise LayoutError(
            STAGE,
            "InterTransposeFull",
            f"switch {config.text}: InterTranspose needs Slice to span all 256 slices, got {slice_.size} "
            f"(Slice {slice_})",
            hint="pad Slice to 256 cells, or use CustomBroadcast",
        )
    rest, s0 = split_at(slice_, slice0)
    s2, s1 = split_at(rest, slice1)
    slice_parts, time_parts = _rebuild(config, s2, s1, s0, time)
    tiles = _compare("OutSlice", config, slice_parts, out_slice)
    if isinstance(config, Transpose) and time != out_time:
        raise LayoutError(
            STAGE,
            "TransposeTime",
            f"switch {config.text}: OutTime must equal Time, got Time {time} and OutTime {out_time}",
            hint=f"Transpose only permutes slices: declare OutTime as {time}",
        )
    _compare("OutTime", config, time_parts, out_time)
    check_tiles(config, [(tile.label, got) for tile, got in reversed(tiles)], slice_, time)
    return slice1 * slice0, frame_text(slice_parts), frame_text(time_parts)


def _power_of_two(config: NamedConfig, label: str, value: int) -> None:
    if value & (value - 1):
        raise LayoutError(
            STAGE,
            "NotPowerOfTwo",
            f"switch {config.text}: {label} must be a power of 2, got {value}",
            hint="the ring splits into powers of two: choose slice1 and slice0 that are powers of two",
        )


def _rebuild(
    config: NamedConfig, s2: Mapping, s1: Mapping, s0: Mapping, time: Mapping
) -> tuple[list[Part], list[Part]]:
    """The output Slice and Time parts a named configuration makes of the input split, outer first."""
    if isinstance(config, Broadcast01):
        t1, t0 = split_at(time, config.time0)
        return [s2, Tile("X", s1.size), Tile("Y", s0.size)], [t1, s1, t0, s0]
    if isinstance(config, Broadcast1):
        return [s2, Tile("X", s1.size), s0], [time, s1]
    if isinstance(config, Transpose):
        return [s2, s0, s1], [time]
    if isinstance(config, InterTranspose):
        rest, t0 = split_at(time, config.time0)
        t2, t1 = split_at(rest, config.slice1)
        return [s2, t1, s0], [t2, t0, s1]
    assert isinstance(config, TransposedBroadcast1)
    return [s2, Tile("Y", s0.size), s1], [time, s0]


def _compare(frame: str, config: SwitchConfig, parts: list[Part], got: Mapping) -> list[tuple[Tile, Mapping]]:
    """Match ``got`` against the rebuilt ``parts``, innermost first; return what fills each tile."""
    tiles: list[tuple[Tile, Mapping]] = []
    expected_size = 1
    for part in parts:
        expected_size *= part.size
    rest = got
    matched = expected_size == got.size
    if matched:
        for part in reversed(parts):
            rest, piece = split_at(rest, part.size)
            if isinstance(part, Tile):
                tiles.append((part, piece))
            elif piece != part:
                matched = False
                break
    if not matched:
        raise LayoutError(
            STAGE,
            "OutputMismatch",
            f"switch {config.text}: {frame} mismatch: expected {frame_text(parts)}, got {got}",
            hint=f"declare {frame} as the configuration rebuilds it, a broadcast(n) slot holding a new axis "
            "of n cells or `1 # n`",
        )
    return tiles
