"""The switch engine on physical buffers: packets carried round the sub-rings (docs/runtime.md §3.10).

The 256 slices are cut into sub-rings of ``ring_size`` routers. Every time step each router puts
its packet on the ring; the packet moves one router a hop, and a destination slice keeps the packet
it wants as it passes. A :class:`Route` says, for every cell of ``[OutSlice, OutTime]``, which cell
of ``[Slice, Time]`` that packet left from: the one holding the same logical element (axes the
input does not carry are broadcast) in the same sub-ring. The verifier has proved every live
output cell has such a source; Packet, Chip and Cluster are untouched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra import Mapping, pairs
from tcpdsl.numerics.placement import BoolArray, IntArray, Plan, plan

Array = npt.NDArray[Any]


@dataclass(frozen=True)
class Route:
    """Per ``[OutSlice, OutTime]`` cell (arrays of that shape): the source slice and time step, and
    whether the cell is live (a don't-care cell takes the fill)."""

    source_slice: IntArray
    source_time: IntArray
    live: BoolArray
    ring_size: int


def _keys(p: Plan, positions: IntArray, steps: int, ring_size: int, axes: tuple[str, ...]) -> IntArray:
    """One row per position: its sub-ring, then its coordinate on each of ``axes``."""
    columns = [positions // steps // ring_size]
    columns += [p.coords[a][positions] if a in p.coords else np.zeros_like(positions) for a in axes]
    return np.stack(columns, axis=1)


def switch_route(slice_: Mapping, time: Mapping, out_slice: Mapping, out_time: Mapping, ring_size: int) -> Route:
    """Where each output cell's packet comes from (see the module docstring)."""
    source, target = plan(pairs([slice_, time])), plan(pairs([out_slice, out_time]))
    axes = tuple(sorted(source.sizes))
    sent = np.flatnonzero(source.live)
    wanted = np.flatnonzero(target.live)
    rows = np.concatenate([_keys(source, sent, time.size, ring_size, axes),
                           _keys(target, wanted, out_time.size, ring_size, axes)])
    _, inverse = np.unique(rows, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    table = np.full(int(inverse.max(initial=-1)) + 1, -1, dtype=np.int64)
    table[inverse[: sent.size]] = sent
    found = np.full(target.size, -1, dtype=np.int64)
    found[wanted] = table[inverse[sent.size:]]
    shape = (out_slice.size, out_time.size)
    live = (found >= 0).reshape(shape)
    safe = np.where(found >= 0, found, 0)
    return Route(
        source_slice=(safe // time.size).reshape(shape),
        source_time=(safe % time.size).reshape(shape),
        live=live,
        ring_size=ring_size,
    )


def ring_pass(buffer: Array, route: Route, fill: Any) -> Array:
    """Run the ring on ``buffer`` of shape ``(spatial, Slice, Time, Packet)``, ``spatial`` being the
    Chip and Cluster positions: the result has shape ``(spatial, OutSlice, OutTime, Packet)``.

    Hop by hop, router ``j`` of a sub-ring holds the packet router ``j - hop`` sent; each output
    cell takes its packet at the hop that brings it (the distance round the ring from its source).
    """
    spatial, slices, _, packet = buffer.shape
    ring = route.ring_size
    out_slices, out_steps = route.live.shape
    rings = buffer.reshape(spatial, slices // ring, ring, buffer.shape[2], packet)
    out = np.full((spatial, out_slices, out_steps, packet), fill, dtype=buffer.dtype)
    here = np.broadcast_to(np.arange(out_slices)[:, None], route.live.shape)
    hops = (here - route.source_slice) % ring
    for hop in np.unique(hops[route.live]):
        held = np.roll(rings, int(hop), axis=2)
        s, t = np.nonzero(route.live & (hops == hop))
        out[:, s, t] = held[:, s // ring, s % ring, route.source_time[s, t]]
    return out
