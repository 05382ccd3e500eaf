"""A VRF tensor as a vector-engine operand: its Element broadcast onto the stream by axis name
(docs/stage-rules.md §6.3).

Each element of the stream reads the VRF cell at its own coordinates of the VRF's axes. So every
axis the VRF's Element holds must be one the stream holds, and the VRF must hold every coordinate
of it that the stream reaches: the whole axis, or exactly the stream's digits of it. A slice's VRF
sits on that slice, so the slice's digits of an axis count as held by the VRF too (an Element
``L % 24`` on slices ``L / 24`` holds all of ``L``). Axes of the
stream that the VRF lacks are broadcast. The check reads the held terms of both sides, never cells.
"""

from __future__ import annotations

from tcpdsl.algebra import Mapping, Pair, held, runs, text_of
from tcpdsl.errors import LayoutError
from tcpdsl.verify.cache import memoized


@memoized
def verify_vrf_operand(stage: str, *, element: Mapping, chip: Mapping, cluster: Mapping, slice: Mapping,
                       time: Mapping, packet: Mapping) -> tuple[str, ...]:
    """The axes the VRF operand is indexed by; ``VrfBroadcast`` unless it broadcasts onto the stream."""
    stream = held(Pair(chip, Pair(cluster, Pair(slice, Pair(time, packet)))))
    axes = tuple(a for a in element.axes if held(element).sizes[a] > 1)
    vrf = held(Pair(chip, Pair(cluster, Pair(slice, element))))
    for axis in axes:
        ours, theirs = runs(vrf.of(axis)), runs(stream.of(axis))
        if axis in vrf.irregular or axis in stream.irregular or not theirs:
            problem = "the stream does not hold it" if not theirs else "its coordinates are no product of digits"
        elif vrf.whole(axis) or ours == theirs:
            continue
        else:
            problem = f"it holds {text_of(ours or ())} while the stream reads {text_of(theirs)}"
        raise LayoutError(
            stage,
            "VrfBroadcast",
            f"{stage}: a VRF operand is broadcast onto the stream by axis name, and its Element {element} holds "
            f"axis {axis}, but {problem}",
            hint=f"store the VRF with every coordinate of {axis} that the stream reads, or drop {axis} from its "
            "Element",
        )
    return axes
