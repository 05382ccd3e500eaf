"""No layout makes the memory, fetch or commit verifiers fail with anything but a rule error."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from tcpdsl.algebra import Mapping, parse
from tcpdsl.errors import TcpError
from tcpdsl.verify.cast import verify_cast
from tcpdsl.verify.collect import verify_collect
from tcpdsl.verify.commit import verify_commit, verify_commit_trim
from tcpdsl.verify.fetch import verify_fetch
from tcpdsl.verify.dma import verify_to_dm, verify_to_hbm
from tcpdsl.verify.memory import Tier
from tcpdsl.verify.to_vrf import verify_to_vrf
from tcpdsl.verify.views import tile_element, verify_pad

AXES = {"A": 4, "B": 6, "C": 2, "D": 8}
fuzz = settings(max_examples=int(os.environ.get("TCPDSL_LAW_EXAMPLES", "150")), deadline=None)
DTYPES = st.sampled_from(["i4", "i8", "bf16", "f32", "i32", "i9", "u8"])
FACTORS = ("A", "B", "C", "D", "A / 2", "A % 2", "B / 3", "B % 3", "B / 2", "B % 2", "D / 4", "D % 4", "2", "1 # 2",
           "A # 8", "B = 4", "B # 8", "D #{!} 16", "D = 4 # 8", "[A, C] # 10", "C #{0} 4")


@st.composite
def layouts(draw: st.DrawFn) -> Mapping:
    parts = draw(st.lists(st.sampled_from(FACTORS), min_size=0, max_size=4))
    return parse(", ".join(parts) or "1", AXES)


def _quiet(call: object) -> None:
    try:
        call()  # type: ignore[operator]
    except TcpError:
        pass


@fuzz
@given(DTYPES, layouts(), layouts(), layouts(), layouts())
def test_fetch_and_commit(dtype: str, time: Mapping, packet: Mapping, out_time: Mapping, out_packet: Mapping) -> None:
    one, grid = parse("1", AXES), parse("1 # 64", AXES)
    _quiet(lambda: verify_fetch(dtype, cluster=one, slice_=grid, time=time, packet=packet, out_time=out_time,
                                out_packet=out_packet, cast_to_bits=32))
    _quiet(lambda: verify_fetch(dtype, cluster=one, slice_=grid, time=time, packet=packet, out_time=out_time,
                                out_packet=out_packet, context="sub"))
    _quiet(lambda: verify_commit(dtype, time=out_time, packet=out_packet, element=packet))
    _quiet(lambda: verify_commit_trim(dtype, packet=packet, out_packet=out_packet))
    _quiet(lambda: verify_collect(dtype, cluster=one, slice_=grid, time=time, packet=packet, out_time=out_time,
                                  out_packet=out_packet))
    _quiet(lambda: verify_cast(dtype, "bf16", packet=packet, out_packet=out_packet))
    _quiet(lambda: verify_to_vrf(dtype, time=time, packet=packet, element=out_packet))


@fuzz
@given(DTYPES, layouts(), layouts(), layouts(), st.integers(min_value=-2, max_value=10), st.booleans())
def test_moves_and_views(dtype: str, source: Mapping, element: Mapping, index: Mapping, length: int,
                         write: bool) -> None:
    one = parse("1", AXES)
    _quiet(lambda: verify_to_dm(dtype, source=Tier(one, source), cluster=one, slice_=parse("1 # 64", AXES),
                                element=element))
    _quiet(lambda: verify_to_hbm(dtype, source=Tier(one, source, one, parse("1 # 64", AXES)), element=element))
    _quiet(lambda: verify_to_hbm(dtype, source=Tier(one, source), element=element))
    _quiet(lambda: tile_element(source, index=index, len_=length, write=write))
    _quiet(lambda: verify_pad(source, element=element, write=write))
