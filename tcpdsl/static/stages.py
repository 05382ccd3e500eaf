"""The stage rules applied to tensor types read statically: the same verifier calls the runtime makes.

Nothing here knows about mypy. A tensor type is an :class:`Operand` (dtype names and mappings by parameter
name); each stage function runs the verifier of ``tcpdsl.verify`` and returns the type of the result, or
raises the very ``LayoutError``/``DtypeError`` the runtime raises for the same kernel.
"""

from __future__ import annotations

from collections.abc import Mapping as MappingOf
from dataclasses import dataclass

from tcpdsl.algebra.nodes import Mapping
from tcpdsl.errors import LayoutError
from tcpdsl.static.names import COLLECT, CONTRACT, OUTER, PACKET, TIME, TRF, TensorClass
from tcpdsl.verify import constructors, verify_contract_lane, verify_contract_outer, verify_contract_packet
from tcpdsl.verify import verify_contract_time, verify_to_trf
from tcpdsl.verify.dtypes import ACCUMULATOR, check_pairing
from tcpdsl.verify.lane_mode import LaneMode


@dataclass(frozen=True)
class Operand:
    """A tensor type: its class, dtype names and mappings keyed by parameter name."""

    cls: TensorClass
    dtypes: MappingOf[str, str]
    maps: MappingOf[str, Mapping]

    def map(self, param: str) -> Mapping:
        return self.maps[param]

    def dtype(self, param: str) -> str:
        return self.dtypes[param]


def check_constructor(t: Operand) -> None:
    """The constructor constraints of the tensor class (engine §2.2), as the runtime checks them."""
    place = (t.map("chip"), t.map("cluster"), t.map("slice"))
    if t.cls is COLLECT:
        constructors.check_collect(t.dtype("dtype"), *place, t.map("time"), t.map("packet"))
    elif t.cls is TRF:
        constructors.check_trf(t.dtype("dtype"), *place, t.map("lane"), t.map("element"))
    elif t.cls is OUTER:
        constructors.check_contract_outer(t.dtype("storage"), *place, t.map("lane"), t.map("time"), t.map("packet"))
    elif t.cls is PACKET or t.cls is TIME:
        constructors.check_contract_packet(*place, t.map("lane"), t.map("time"), t.map("packet"), stage=t.cls.name)
    else:
        constructors.check_contract(t.dtype("acc"), *place, t.map("time"), t.map("packet"))


def _place(t: Operand) -> dict[str, Mapping]:
    return {"chip": t.map("chip"), "cluster": t.map("cluster"), "slice": t.map("slice")}


def _result(cls: TensorClass, dtypes: dict[str, str], maps: dict[str, Mapping]) -> Operand:
    out = Operand(cls, dtypes, maps)
    check_constructor(out)
    return out


def _same_grid(stream: Operand, trf: Operand) -> None:
    """The TRF sits on the stream's Chip, Cluster and Slice (checked before the stream adapter)."""
    for param, name in (("chip", "Chip"), ("cluster", "Cluster"), ("slice", "Slice")):
        a, b = stream.map(param), trf.map(param)
        if a != b:
            raise LayoutError(
                "contract_outer",
                f"{name}Mismatch",
                f"contract_outer: the TRF's {name} {b} differs from the stream's {name} {a}",
                hint=f"load the TRF with the stream's {name} layout",
            )


def to_trf(src: Operand, lane: Mapping, element: Mapping) -> Operand:
    dtype = src.dtype("dtype")
    verify_to_trf(dtype, src.map("time"), src.map("packet"), lane, element)
    return _result(TRF, {"dtype": dtype}, {**_place(src), "lane": lane, "element": element})


def contract_outer(src: Operand, trf: Operand, out_time: Mapping, out_packet: Mapping) -> Operand:
    stream, weight = src.dtype("dtype"), trf.dtype("dtype")
    check_pairing(stream, weight)
    _same_grid(src, trf)
    verify_contract_outer(
        stream, weight, src.map("time"), src.map("packet"), trf.map("lane"), trf.map("element"), out_time, out_packet
    )
    maps = {**_place(src), "lane": trf.map("lane"), "time": out_time, "packet": out_packet}
    return _result(OUTER, {"acc": ACCUMULATOR[stream], "storage": stream}, maps)


def contract_packet(src: Operand, out_packet: Mapping) -> Operand:
    verify_contract_packet(src.dtype("storage"), src.map("packet"), out_packet)
    maps = {**_place(src), "lane": src.map("lane"), "time": src.map("time"), "packet": out_packet}
    return _result(PACKET, {"acc": src.dtype("acc")}, maps)


def contract_time(src: Operand, out_time: Mapping) -> Operand:
    verify_contract_time(src.map("time"), out_time)
    maps = {**_place(src), "lane": src.map("lane"), "time": out_time, "packet": src.map("packet")}
    return _result(TIME, {"acc": src.dtype("acc")}, maps)


def contract_lane(
    src: Operand, out_time: Mapping, out_packet: Mapping, mode: LaneMode, pre_reduce_time: Mapping
) -> Operand:
    verify_contract_lane(
        src.map("lane"), src.map("time"), src.map("packet"), out_time, out_packet, pre_reduce_time, mode
    )
    return _result(CONTRACT, {"acc": src.dtype("acc")}, {**_place(src), "time": out_time, "packet": out_packet})
