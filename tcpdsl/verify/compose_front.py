"""The composers of the stream front: ``begin``, ``fetch``, ``collect`` (docs/stage-rules.md §4.3-4.5).

Each runs its stage's rules (the pure verifiers of its own module) and returns the next position's
type with the derived parameters, as the contraction composers of :mod:`tcpdsl.verify.compose` do.
"""

from __future__ import annotations

from typing import Final

from tcpdsl.algebra import Mapping, parse
from tcpdsl.verify.collect import CollectParams, verify_collect
from tcpdsl.verify.compose import meeting
from tcpdsl.verify.families import BEGIN, COLLECT, FETCH, TensorType, check_type
from tcpdsl.verify.fetch import FetchParams, verify_begin, verify_fetch

# A plain begin puts a whole DM partition in one packet: Time is the unit mapping.
UNIT: Final = parse("1", {})


def begin(view: TensorType) -> tuple[TensorType, None]:
    """``ctx.begin(view)``: the view's ``[Element]`` becomes the packet of a one-step stream (§4.3)."""
    chip, cluster, slice_, element = view.layouts
    verify_begin(view.dtype, chip=chip, cluster=cluster, slice_=slice_, element=element)
    return check_type(BEGIN, view.dtypes, (chip, cluster, slice_, UNIT, element)), None


def fetch(src: TensorType, *, out_time: Mapping, out_packet: Mapping, context: str = "main") -> tuple[
        TensorType, FetchParams]:
    """``fetch(out_time=, out_packet=)``: the sequencer reads the DM partition as the stream (§4.2-4.3)."""
    meeting(src, out_time=out_time, out_packet=out_packet)
    chip, cluster, slice_, time, packet = src.layouts
    params = verify_fetch(src.dtype, cluster=cluster, slice_=slice_, time=time, packet=packet, out_time=out_time,
                          out_packet=out_packet, context=context)
    return check_type(FETCH, src.dtypes, (chip, cluster, slice_, out_time, out_packet)), params


def collect(src: TensorType, *, out_time: Mapping, out_packet: Mapping) -> tuple[TensorType, CollectParams]:
    """``collect(out_time=, out_packet=)``: the packet becomes exactly one flit (§4.5)."""
    meeting(src, out_time=out_time, out_packet=out_packet)
    chip, cluster, slice_, time, packet = src.layouts
    params = verify_collect(src.dtype, cluster=cluster, slice_=slice_, time=time, packet=packet, out_time=out_time,
                            out_packet=out_packet)
    return check_type(COLLECT, src.dtypes, (chip, cluster, slice_, out_time, out_packet)), params
