"""The switch engine's pure verifier: the reference's fixtures, its unit cases and the book's cycles."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpdsl.algebra import Mapping, pairs, parse, split_at
from tcpdsl.cost import switch_cycles
from tcpdsl.errors import LayoutError
from tcpdsl.verify.switch import SwitchParams, verify_switch
from tcpdsl.verify.switch_custom import check_custom
from tcpdsl.verify.switch_config import (
    Broadcast01,
    Broadcast1,
    CustomBroadcast,
    Forwarding,
    InterTranspose,
    SwitchConfig,
    Transpose,
    TransposedBroadcast1,
)

FIXTURE = dict(A=8, B=32, C=256, D=64, E=1024, F=1024, G=32)


def run(config: SwitchConfig, slice_: str, time: str, out_slice: str, out_time: str, sizes: dict[str, int] = FIXTURE,
        dtype: str = "i8", packet: str = "B") -> SwitchParams:
    p = lambda text: parse(text, sizes)  # noqa: E731
    return verify_switch(dtype, config, cluster=p("1 # 2"), slice=p(slice_), time=p(time), packet=p(packet),
                         out_slice=p(out_slice), out_time=p(out_time))


def refused(config: SwitchConfig, *args: str, **kwargs: dict[str, int]) -> LayoutError:
    with pytest.raises(LayoutError) as caught:
        run(config, *args, **kwargs)  # type: ignore[arg-type]
    assert caught.value.stage == "switch"
    return caught.value


VALID = [
    (Broadcast1(slice1=4, slice0=4), "C", "A", "C / 16, 1 # 4, C % 4", "A, C / 4 % 4", 16),
    (Broadcast1(slice1=4, slice0=64), "C", "A", "1 # 4, C % 64", "A, C / 64", 256),
    (Broadcast01(slice1=256, slice0=1, time0=1), "E / 4", "1", "F / 4", "E / 4", 256),
    (Broadcast01(slice1=2, slice0=2, time0=2), "C", "A", "C / 4, D % 4", "A / 2, C / 2 % 2, A % 2, C % 2", 4),
    (Broadcast01(slice1=2, slice0=2, time0=1), "C", "A", "C / 4, 1 # 4", "A, C / 2 % 2, C % 2", 4),
    (Transpose(slice1=32, slice0=2), "C", "A", "C / 64, C % 2, C / 2 % 32", "A", 64),
    (Transpose(slice1=16, slice0=8), "C / 128, C / 8 % 16, C % 8", "A", "C / 128, C % 8, C / 8 % 16", "A", 128),
    (Transpose(slice1=4, slice0=4), "C / 16, C % 16", "A", "C / 16, C % 4, C / 4 % 4", "A", 16),
    (InterTranspose(slice1=2, slice0=16, time0=2), "C", "A", "C / 32, A / 2 % 2, C % 16", "A / 4, A % 2, C / 16 % 2",
     32),
    (InterTranspose(slice1=8, slice0=32, time0=1), "C", "A", "A, C % 32", "C / 32 % 8", 256),
    (Forwarding(), "C", "A", "C", "A", 1),
]


@pytest.mark.parametrize("config, slice_, time, out_slice, out_time, ring", VALID)
def test_valid_fixtures_with_their_ring(config: SwitchConfig, slice_: str, time: str, out_slice: str, out_time: str,
                                        ring: int) -> None:
    params = run(config, slice_, time, out_slice, out_time)
    assert params.ring_size == ring
    assert params.sub_rings == 256 // ring


def test_the_rebuilt_output_names_its_broadcast_slots() -> None:
    params = run(Broadcast01(slice1=2, slice0=2, time0=2), "C", "A", "C / 4, D % 4", "A / 2, C / 2 % 2, A % 2, C % 2")
    assert (params.rebuilt_slice, params.rebuilt_time) == ("C / 4, broadcast(2), broadcast(2)",
                                                          "A / 2, C / 2 % 2, A % 2, C % 2")
    assert (params.config, params.time_steps, params.flits_per_packet) == (
        "Broadcast01(slice1=2, slice0=2, time0=2)", 8, 1)


# The 25 invalid switch fixtures of the reference (negative/switch_assertions.rs), each with its rule.
INVALID = [
    (Broadcast1(slice1=0, slice0=64), "C", "A", "C / 4, D % 4", "A, C % 4", "ZeroDimension"),
    (Broadcast1(slice1=3, slice0=64), "C", "A", "C / 4, D % 4", "A, C % 4", "NotPowerOfTwo"),
    (Broadcast1(slice1=4, slice0=16), "C", "A", "D % 4, C % 64", "A, C / 64", "OutputMismatch"),
    (Broadcast1(slice1=4, slice0=64), "C", "A", "C / 64, C % 64", "A, C / 64", "BroadcastNotNew"),
    (Broadcast1(slice1=4, slice0=64), "C", "A", "1 # 4, D % 64", "A, C / 64", "OutputMismatch"),
    (Broadcast1(slice1=4, slice0=64), "C", "A", "1 # 4, C % 64", "A, E % 4", "OutputMismatch"),
    (Broadcast01(slice1=2, slice0=0, time0=1), "C", "A", "C", "A", "ZeroDimension"),
    (Broadcast01(slice1=3, slice0=2, time0=1), "C", "A", "C", "A", "NotPowerOfTwo"),
    (Broadcast01(slice1=2, slice0=2, time0=2), "C", "A", "C / 4, D % 4", "A, C / 2 % 2, C % 2", "OutputMismatch"),
    (Broadcast01(slice1=2, slice0=2, time0=2), "C", "A", "C / 8, D % 8", "A / 2, C / 2 % 2, A % 2, C % 2",
     "OutputMismatch"),
    (Broadcast01(slice1=2, slice0=2, time0=1), "C", "A", "C / 4, C % 4", "A, C / 2 % 2, C % 2", "BroadcastNotNew"),
    (Broadcast01(slice1=2, slice0=2, time0=1), "C", "A", "C / 4, A % 4", "A, C / 2 % 2, C % 2", "BroadcastNotNew"),
    (Broadcast01(slice1=2, slice0=2, time0=2), "C", "A", "C / 4, D % 4", "A / 2, C / 2, A % 2, C % 2",
     "OutputMismatch"),
    (Transpose(slice1=32, slice0=2), "C", "A", "C / 64, C % 2, C / 2 % 32", "D", "TransposeTime"),
    (Transpose(slice1=32, slice0=2), "C", "A", "C / 64, C % 2, C / 2 % 32", "E % 8", "TransposeTime"),
    (Transpose(slice1=16, slice0=8), "C", "A", "C % 8, C / 128, C / 8 % 16", "A", "OutputMismatch"),
    (InterTranspose(slice1=8, slice0=32, time0=0), "C", "A", "A, C % 32", "C / 32 % 8", "ZeroDimension"),
    (InterTranspose(slice1=3, slice0=2, time0=1), "C", "A", "C", "A", "NotPowerOfTwo"),
    (InterTranspose(slice1=4, slice0=64, time0=3), "C", "A", "A, C % 32", "C / 32 % 8", "TimeNotDivisible"),
    (InterTranspose(slice1=8, slice0=16, time0=2), "C / 128, C % 128", "A, B / 8", "D % 2, A, C % 16",
     "B / 16, E % 2, C / 16 % 8", "OutputMismatch"),
    (InterTranspose(slice1=8, slice0=16, time0=2), "D % 2, A, C % 16", "B", "D % 2, A, B / 2",
     "B / 8, B / 4 % 2, B % 2, C / 16 % 8", "OutputMismatch"),
    (InterTranspose(slice1=2, slice0=16, time0=2), "C / 128, C % 128", "A", "C / 32, D % 2, C % 16",
     "A / 2, G / 16, A % 2", "OutputMismatch"),
    (InterTranspose(slice1=2, slice0=16, time0=2), "C", "A", "C / 32, A / 2 % 2, C % 16", "A / 2, A % 2, C / 16 % 2",
     "OutputMismatch"),
    (InterTranspose(slice1=2, slice0=16, time0=2), "C", "A", "C / 32, A / 2 % 2, C % 16", "A / 4, A / 2 % 2, D % 2",
     "OutputMismatch"),
    (InterTranspose(slice1=2, slice0=16, time0=2), "C", "A", "C / 32, A / 2 % 2, C % 16", "A / 4, A % 2, D % 2",
     "OutputMismatch"),
]


def test_there_are_25_invalid_fixtures() -> None:
    assert len(INVALID) == 25


@pytest.mark.parametrize("config, slice_, time, out_slice, out_time, rule", INVALID)
def test_invalid_fixtures_are_refused(config: SwitchConfig, slice_: str, time: str, out_slice: str, out_time: str,
                                      rule: str) -> None:
    assert refused(config, slice_, time, out_slice, out_time).rule == rule


# -- CustomBroadcast: the reference's unit cases ------------------------------------------------
# They test the custom rules alone, as the reference's do (some of their slices are not 64 to 256 wide).


def custom(ring: int, slice_: str, time: str, out_slice: str, out_time: str, sizes: dict[str, int]) -> int:
    p = lambda text: parse(text, sizes)  # noqa: E731
    return check_custom(CustomBroadcast(ring_size=ring), slice=p(slice_), time=p(time), out_slice=p(out_slice),
                        out_time=p(out_time))


def custom_refused(ring: int, *args: str) -> LayoutError:
    with pytest.raises(LayoutError) as caught:
        custom(ring, *args, UNIT)  # type: ignore[call-arg, arg-type]
    assert caught.value.stage == "switch"
    return caught.value

UNIT = dict(A=16, B=16, C=8, D=2, E=2, P=4, Q=8, R=8, S=256, X=4, Y=2, Z=2)

CUSTOM_VALID = [
    ("S", "C", "S", "C", 1),
    ("A, B", "C", "B % 4, B / 4, A % 4, A / 4", "C", 256),
    ("A, B", "C", "A, B % 4, B / 4", "C", 16),
    ("R, Q, P", "C", "R, P, Q", "C", 32),
    ("R, Q, P", "C", "Q, R, P", "C", 256),
    ("P # 16, Q # 16", "C", "P # 16, Q # 16", "C", 1),
    ("R # 16, Q # 16", "C", "Q # 16, R # 16", "C", 128),
    ("R # 16, Q # 16", "C", "Q # 32, R # 8", "C", 128),
    ("R # 16, Q # 16", "C", "R # 16, Q # 16 % 4, Q # 16 / 4", "C", 16),
    ("A, B", "C", "A, B / 4, X", "C, B % 4", 4),
    ("A, B", "C", "A / 2, Y, B / 2, Z", "C, A % 2, B % 2", 32),
    ("A, B", "C", "A % 4, A / 4, B / 4, X", "C, B % 4", 256),
    ("R, Q, P", "C", "R, P / 2, Q, Y", "C, P % 2", 32),
    ("R, Q, P", "C", "R, Q, P / 2, Y", "C, P % 2", 2),
    ("R, Q, P", "C", "R / 2, Y, Q, P / 2, Z", "C, R % 2, P % 2", 64),
    ("A, B", "C", "S", "C, A, B", 256),
    ("A, B", "C # 32", "A, B / 4, X", "C # 32, B % 4", 4),
    ("P # 8, Q # 32", "C", "P # 8, Q # 32 / 4, X", "C, Q # 32 % 4", 4),
    ("P # 32, Q", "C", "P # 32, Q / 4, X", "C, Q % 4", 4),
    ("P # 16, Q # 16", "C", "P # 16, Q # 16 / 4, X", "C, Q # 16 % 4", 4),
    ("P # 8, Q # 32", "C # 16", "P # 8, Q # 32 / 4, X", "C # 16, Q # 32 % 4", 4),
]


@pytest.mark.parametrize("slice_, time, out_slice, out_time, ring", CUSTOM_VALID)
def test_custom_unit_cases_with_their_ring(slice_: str, time: str, out_slice: str, out_time: str, ring: int) -> None:
    assert custom(ring, slice_, time, out_slice, out_time, UNIT) == ring


def test_custom_broadcast_with_moved_axis() -> None:
    sizes = dict(A=2, B=2, C=2, D=2, E=2, X=2)
    assert custom(32, "A, B, C, D, E", "1", "E, B, X, A, D", "C", sizes) == 32


CUSTOM_UNSEQUENCEABLE = [
    ("A, B", "C", "A / 2, Y, B / 2, Z", "C, B % 2", 32),
    ("R, P", "C", "R, X", "C", 4),
    ("A, B", "C", "A, B / 4, X", "C, B % 4 = 3", 4),
    ("A, B", "C", "A / 2, Y, B / 4, X", "C, A % 2, B % 4 = 3", 32),
    ("S", "C", "S / 4, X", "C, S % 4 = 3", 4),
    ("P # 8, Q # 32", "C", "P # 8, Q # 32 / 4, X", "C, Q # 32 % 4 = 3", 4),
]
# Beyond the reference's cases: a Slice digit read twice.
READ_TWICE = [
    ("A, B", "C", "A, B / 4, X", "C, B % 4, B % 4", 4),
    ("A, B", "C", "A, B % 4, X", "C, B % 4", 4),
]


@pytest.mark.parametrize("slice_, time, out_slice, out_time, ring", CUSTOM_UNSEQUENCEABLE)
def test_custom_unsequenceable_cases(slice_: str, time: str, out_slice: str, out_time: str, ring: int) -> None:
    error = custom_refused(ring, slice_, time, out_slice, out_time)
    assert error.rule == "Unsequenceable"
    assert "the read is not sequenceable" in error.detail


@pytest.mark.parametrize("slice_, time, out_slice, out_time, ring", READ_TWICE)
def test_custom_reads_each_slice_digit_once(slice_: str, time: str, out_slice: str, out_time: str, ring: int) -> None:
    assert custom_refused(ring, slice_, time, out_slice, out_time).rule == "Unsequenceable"


def test_the_books_custom_constraint_examples() -> None:
    # Moved axes with a Time axis between them.
    sizes = dict(A=16, B=16, C=8)
    error = custom_refused_with(32, "A, B", "C", "A / 2, 2, B / 2, 2", "A % 2, C, B % 2", sizes)
    assert error.rule == "MovedAxesNotInnermost"
    # A slot filled from Time is no broadcast axis: the input Time carries B.
    sizes = dict(A=256, B=64)
    error = custom_refused_with(256, "A", "B", "A / 4, B / 32, A % 4", "B", sizes)
    assert error.rule == "OutSliceSourcedFromTime"
    # A new axis used twice, and a padded broadcast axis.
    sizes = dict(A=256, B=64, X=4, Y=4)
    assert custom_refused_with(16, "A", "B", "A / 16, X, X", "B, A % 16", sizes).rule == "BroadcastUsedMoreThanOnce"
    sizes = dict(A=256, B=64, X=2, Y=4)
    assert custom_refused_with(16, "A", "B", "A / 16, X # 4, Y", "B, A % 16", sizes).rule == "BroadcastNotPadded"


def test_custom_refuses_an_opaque_piece() -> None:
    sizes = dict(A=2, K=3, C=8)
    with pytest.raises(LayoutError) as caught:
        custom(1, "(A, K) # 8", "C", "(A, K) # 8", "C", sizes)
    assert caught.value.rule == "Unsequenceable"
    assert caught.value.detail == ("switch CustomBroadcast(ring_size=1): the read is not sequenceable: (A, K) # 8 holds "
                                   "an opaque piece, which no snoop bitmap can route")


def test_switch_engine_custom_kernels() -> None:
    sizes = dict(A=64, Y=4, A2=128, Y2=2, A8=32, Y8=8, Am=16, Ym=4, Zm=4, P=64, Q=4, Yt=4, Pt=32, Qt=8, B=8,
                 Ls=4, Ps=64)
    cases = [
        ("A, 1 # 4", "B", "A, Y", "B", 4),
        ("A2, 1 # 2", "B", "A2, Y2", "B", 2),
        ("A8, 1 # 8", "B", "A8, Y8", "B", 8),
        ("Am, 1 # 4, 1 # 4", "B", "Am, Ym, Zm", "B", 16),
        ("P, Q", "B", "P, Yt", "B, Q", 4),
        ("Pt, Qt", "B", "Qt, Pt", "B", 256),
        ("1 # 2, Ps, 1 # 2", "B", "Ls / 2, Ps, Ls % 2", "B", 256),  # two tiles, two digits of one axis
    ]
    for slice_, time, out_slice, out_time, ring in cases:
        assert run(CustomBroadcast(ring_size=ring), slice_, time, out_slice, out_time, sizes, "bf16", "1 # 16").ring_size == ring


CUSTOM_RULES = [
    (CustomBroadcast(ring_size=3), "A, B", "C", "A, B", "C", "RingSizeNotPowerOfTwo",
     "switch CustomBroadcast(ring_size=3): the ring size must be a power of 2, got 3"),
    (CustomBroadcast(ring_size=8), "A, B", "C", "A, B / 4, X", "C, B % 4", "RingSizeMismatch",
     "switch CustomBroadcast(ring_size=8): ring size mismatch: the layouts imply 4, but 8 was given (Slice A, B, "
     "OutSlice A, B / 4, X)"),
    (CustomBroadcast(ring_size=4), "A, B", "C, D", "A, B / 4, D, E", "C, B % 4", "OutSliceSourcedFromTime",
     "switch CustomBroadcast(ring_size=4): an OutSlice slot must come from Slice or a new broadcast axis, not from "
     "Time; offending axis: D (Time C, D)"),
    (CustomBroadcast(ring_size=4), "A, B", "C", "A, B / 4, X", "B % 4, C", "MovedAxesNotInnermost",
     "switch CustomBroadcast(ring_size=4): axes moving from Slice to OutTime must be its innermost terms (inside "
     "Time C); offending moved axis: B % 4 (OutTime B % 4, C)"),
    (CustomBroadcast(ring_size=32), "A, B", "C", "A / 2, Y, B / 2, Z", "C, B % 2, A % 2", "MovedOrderNotPreserved",
     "switch CustomBroadcast(ring_size=32): axes moving from Slice to Time must keep their Slice order: B % 2 landed "
     "outside A % 2, but it is inner to it in Slice (OutTime C, B % 2, A % 2)"),
    (CustomBroadcast(ring_size=4), "A, B", "C", "A, B / 4, X", "C / 2, B % 4", "InTimeNotPreserved",
     "switch CustomBroadcast(ring_size=4): Time must be carried to OutTime unchanged, got Time C but OutTime "
     "carries C / 2 (OutTime C / 2, B % 4)"),
    (CustomBroadcast(ring_size=4), "A, B", "C", "A, B / 4, Y, Y", "C, B % 4", "BroadcastUsedMoreThanOnce",
     "switch CustomBroadcast(ring_size=4): broadcast axis Y is claimed twice (slot at OutSlice position 2 holds Y); "
     "two broadcast slots may not claim one axis"),
    (CustomBroadcast(ring_size=4), "A, B", "C", "A, B / 4, Y # 4", "C, B % 4", "BroadcastNotPadded",
     "switch CustomBroadcast(ring_size=4): broadcast slot at OutSlice position 1 holds Y # 4, a padded axis; a "
     "broadcast axis carries no `#` padding"),
    (CustomBroadcast(ring_size=4), "A, B", "C", "A, B / 4, 1 #{0} 4", "C, B % 4", "OutputHasUnwritableRegion",
     "switch CustomBroadcast(ring_size=4): broadcast slot at OutSlice position 1 lands on 1 #{0} 4, whose padding "
     "must not be written; only Top padding (`#`) is don't-care"),
]


@pytest.mark.parametrize("config, slice_, time, out_slice, out_time, rule, message", CUSTOM_RULES)
def test_custom_rule_messages(config: SwitchConfig, slice_: str, time: str, out_slice: str, out_time: str, rule: str,
                              message: str) -> None:
    error = refused(config, slice_, time, out_slice, out_time, UNIT)
    assert (error.rule, error.detail) == (rule, message)
    assert error.hint


# -- pinned messages of the named rules ----------------------------------------------------------

NAMED_MESSAGES = [
    (dict(config=Broadcast1(slice1=4, slice0=16), out_slice="D % 4, C % 64", out_time="A, C / 64"),
     "OutputMismatch", "switch Broadcast1(slice1=4, slice0=16): OutSlice mismatch: expected C / 64, broadcast(4), "
     "C % 16, got D % 4, C % 64"),
    (dict(config=Broadcast1(slice1=4, slice0=64), out_slice="C / 64, C % 64", out_time="A, C / 64"),
     "BroadcastNotNew", "switch Broadcast1(slice1=4, slice0=64): broadcast slot X holds C / 64, which the input Slice "
     "or Time carries; a broadcast slot must be an axis the input does not carry"),
    (dict(config=Broadcast01(slice1=2, slice0=2, time0=1), out_slice="C / 4, D % 2, D % 2", out_time="A, C / 2 % 2, C % 2"),
     "BroadcastUsedMoreThanOnce", "switch Broadcast01(slice1=2, slice0=2, time0=1): broadcast axis D is claimed twice "
     "(slot Y holds D % 2); two broadcast slots may not claim one axis"),
    (dict(config=Broadcast1(slice1=4, slice0=64), out_slice="1 #{!} 4, C % 64", out_time="A, C / 64"),
     "OutputHasUnwritableRegion", "switch Broadcast1(slice1=4, slice0=64): broadcast slot X lands on 1 #{!} 4, whose "
     "padding must not be written; only Top padding (`#`) is don't-care"),
    (dict(config=Broadcast1(slice1=4, slice0=64), out_slice="G % 2 # 4, C % 64", out_time="A, C / 64"),
     "BroadcastNotPadded", "switch Broadcast1(slice1=4, slice0=64): broadcast slot X holds G % 2 # 4, a padded axis; "
     "a broadcast axis carries no `#` padding"),
    (dict(config=Transpose(slice1=32, slice0=2), out_slice="C / 64, C % 2, C / 2 % 32", out_time="D"),
     "TransposeTime", "switch Transpose(slice1=32, slice0=2): OutTime must equal Time, got Time A and OutTime D"),
    (dict(config=Broadcast1(slice1=0, slice0=64), out_slice="C", out_time="A"),
     "ZeroDimension", "switch Broadcast1(slice1=0, slice0=64): all dimensions must be greater than 0"),
    (dict(config=Broadcast1(slice1=3, slice0=64), out_slice="C", out_time="A"),
     "NotPowerOfTwo", "switch Broadcast1(slice1=3, slice0=64): slice1 must be a power of 2, got 3"),
    (dict(config=Broadcast1(slice1=4, slice0=128), out_slice="C", out_time="A"),
     "SliceNotDivisible", "switch Broadcast1(slice1=4, slice0=128): Slice size 256 must be divisible by slice1 * "
     "slice0 = 512 (Slice C)"),
    (dict(config=InterTranspose(slice1=4, slice0=64, time0=3), out_slice="C", out_time="A"),
     "TimeNotDivisible", "switch InterTranspose(slice1=4, slice0=64, time0=3): Time size 8 must be divisible by the "
     "time split 12 (Time A)"),
]


@pytest.mark.parametrize("case, rule, message", NAMED_MESSAGES)
def test_named_rule_messages(case: dict[str, object], rule: str, message: str) -> None:
    error = refused(case["config"], "C", "A", case["out_slice"], case["out_time"])  # type: ignore[arg-type]
    assert (error.rule, error.detail) == (rule, message)


def test_inter_transpose_needs_the_whole_ring() -> None:
    error = refused(InterTranspose(slice1=2, slice0=16, time0=2), "C % 128", "A", "C / 32 % 4, A / 2 % 2, C % 16",
                    "A / 4, A % 2, C / 16 % 2")
    assert error.rule == "InterTransposeFull"
    assert error.detail == ("switch InterTranspose(slice1=2, slice0=16, time0=2): InterTranspose needs Slice to span "
                            "all 256 slices, got 128 (Slice C % 128)")


def test_stream_rules() -> None:
    error = refused(Forwarding(), "C", "A", "C % 128", "A")
    assert (error.rule, error.detail) == ("SliceSizeMismatch", "switch: input and output slice sizes must match, got "
                                          "256 and 128 (Slice C, OutSlice C % 128)")
    error = refused(Forwarding(), "C % 32", "A", "C % 32", "A")
    assert error.rule == "SliceSize"
    error = refused(Forwarding(), "C", "A", "C", "A", packet="B % 4")
    assert (error.rule, error.detail) == ("PacketAlign", "switch: Packet must be a multiple of 8 bytes, got 4 bytes "
                                          "(Packet B % 4 of i8)")
    with pytest.raises(LayoutError) as caught:
        p = lambda text: parse(text, FIXTURE)  # noqa: E731
        verify_switch("i8", Forwarding(), cluster=p("1 # 4"), slice=p("C"), time=p("A"), packet=p("B"),
                      out_slice=p("C"), out_time=p("A"))
    assert caught.value.rule == "ClusterSize"


def test_the_configuration_must_be_one() -> None:
    error = refused("Broadcast1", "C", "A", "C", "A")  # type: ignore[arg-type]
    assert (error.rule, error.detail) == ("NotAConfig", "switch: the configuration must be one of Forwarding, "
                                          "Broadcast01, Broadcast1, Transpose, InterTranspose, TransposedBroadcast1, "
                                          "CustomBroadcast, got 'Broadcast1'")


def test_a_config_field_must_be_an_int() -> None:
    with pytest.raises(LayoutError) as caught:
        Broadcast1(slice1="4", slice0=4)  # type: ignore[arg-type]
    assert (caught.value.rule, caught.value.detail) == ("ConfigField", "switch: Broadcast1.slice1 must be an int, got '4'")


# -- the book's examples and their cycles ---------------------------------------------------------

BOOK = [
    (Broadcast01(slice1=2, slice0=2, time0=4), dict(A=256, B=64, C=63, D=2, X=2, Y=2), "A", "B", "A / 4, X, Y",
     "B / 4, A / 2 % 2, B % 4, A % 2", "C # 64", "f32", 4, 2048),
    (Broadcast1(slice1=4, slice0=8), dict(A=256, B=64, C=63, X=4), "A", "B", "A / 32, X, A % 8", "B, A / 8 % 4",
     "C # 64", "i8", 32, 4096),
    (Transpose(slice1=32, slice0=2), dict(A=256, B=64, C=63), "A", "B", "A / 64, A % 2, A / 2 % 32", "B", "C # 64",
     "i8", 64, 8192),
    (InterTranspose(slice1=2, slice0=16, time0=2), dict(A=256, B=8, C=32), "A", "B", "A / 32, B / 2 % 2, A % 16",
     "B / 4, B % 2, A / 16 % 2", "C # 32", "i8", 32, 256),
    (TransposedBroadcast1(slice1=8, slice0=8), dict(A=256, B=16, C=32, Y=8), "A", "B", "A / 64, Y, A / 8 % 8",
     "B, A % 8", "C # 32", "i8", 64, 1024),
    (CustomBroadcast(ring_size=256), dict(A=16, B=16, C=8, D=8, E=8), "A, B", "C", "B % 4, B / 4, A % 4, A / 4", "C",
     "D, E", "f32", 256, 16384),
    (CustomBroadcast(ring_size=32), dict(A=16, B=16, C=8, D=8, E=8, X=2, Y=2), "A, B", "C", "A / 2, X, B / 2, Y",
     "C, A % 2, B % 2", "D, E", "f32", 32, 2048),
    # The book prints 96 here, counting the 24 OutTime steps where its seven other examples count the Time
    # steps (docs/cost-model.md "Switch and transpose"); the model keeps one formula.
    (CustomBroadcast(ring_size=4), dict(A=16, B=4, C=3, D=8, E=8, X=4), "A, B, C # 4", "D", "A, B, X", "D, C", "E",
     "f32", 4, 32),
]


@pytest.mark.parametrize("config, sizes, slice_, time, out_slice, out_time, packet, dtype, ring, cycles", BOOK)
def test_book_examples_and_cycles(config: SwitchConfig, sizes: dict[str, int], slice_: str, time: str, out_slice: str,
                                  out_time: str, packet: str, dtype: str, ring: int, cycles: int) -> None:
    params = run(config, slice_, time, out_slice, out_time, sizes, dtype, packet)
    assert params.ring_size == ring
    assert switch_cycles(params) == cycles


# -- the reference transformer's switches ----------------------------------------------------------

TRANSFORMER = dict(H=1024, C=64, P=1024, Q=2048, Wp=155648, N=8, G=2, D=128, L=3072, T=512, Dummy4=4, Dummy64=64)
SLICE_P4 = "Dummy64, 1 # 4"

TRANSFORMER_SWITCHES = [
    # projection: proj_q, proj_p (k and v), proj_o
    (Broadcast1(slice1=8, slice0=4), "Q / 32, 1 # 4", "1", "Q % 32", "bf16", "Q / 256, 1 # 32", "Q / 32 % 8", 32),
    (Broadcast1(slice1=4, slice0=8), "P / 32, 1 # 8", "1", "P % 32", "bf16", "P / 128, 1 # 32", "P / 32 % 4", 32),
    (Broadcast1(slice1=64, slice0=4), "H / 16, 1 # 4", "1", "H % 16", "bf16", SLICE_P4, "H / 16", 256),
    # lm_head
    (Broadcast1(slice1=8, slice0=1), "Wp / 16 % 256", "Wp / 8192", "Wp % 16", "bf16", "Wp / 128 % 32, 1 # 8",
     "Wp / 8192, Wp / 16 % 8", 8),
    # mlp: the custom broadcast of the input, the gated activations, the down projection
    (CustomBroadcast(ring_size=4), "L / 48, 1 # 4", "H / 16", "H % 16", "bf16", "L / 48, Dummy4", "H / 16", 4),
    (Broadcast1(slice1=128, slice0=2), "L / 24, 1 # 2", "L / 8 % 3", "L % 8 # 16", "bf16", "H / 8, 1 # 2",
     "L / 8 % 3, L / 24", 256),
    (Broadcast1(slice1=128, slice0=2), "H / 8, 1 # 2", "1", "H % 8", "f32", SLICE_P4, "H / 8", 256),
    # attention: qk_scaled broadcasts the logits over every slice
    (Broadcast1(slice1=64, slice0=4), "T / 8, 1 # 4", "N, G", "T % 8 # 16", "bf16", "1 # 256", "N, G, T / 8", 256),
]


MNIST = dict(X=800, H=256, C=16, I=2, Dummy8=8, Dummy16=16)
MNIST_SWITCHES = [
    (InterTranspose(slice1=8, slice0=1, time0=1), "H / 8, Dummy8", "H % 8", "1 # 8", "H", "Dummy8", 8),
    (Broadcast1(slice1=256, slice0=1), "H", "1", "1 # 4", "C, 1 # 16", "H", 256),
    (InterTranspose(slice1=16, slice0=16, time0=1), "Dummy16, 1 # 16", "C", "1 # 4", "C, 1 # 16", "Dummy16", 256),
]


@pytest.mark.parametrize("config, slice_, time, packet, out_slice, out_time, ring", MNIST_SWITCHES)
def test_mnist_switches_are_accepted(config: SwitchConfig, slice_: str, time: str, packet: str, out_slice: str,
                                     out_time: str, ring: int) -> None:
    assert run(config, slice_, time, out_slice, out_time, MNIST, "bf16", packet).ring_size == ring


@pytest.mark.parametrize("config, slice_, time, packet, dtype, out_slice, out_time, ring", TRANSFORMER_SWITCHES)
def test_transformer_switches_are_accepted(config: SwitchConfig, slice_: str, time: str, packet: str, dtype: str,
                                           out_slice: str, out_time: str, ring: int) -> None:
    assert run(config, slice_, time, out_slice, out_time, TRANSFORMER, dtype, packet).ring_size == ring


# -- laws -------------------------------------------------------------------------------------------

POWERS = st.sampled_from([1, 2, 4, 8, 16])


def _slice_split(slice1: int, slice0: int) -> tuple[Mapping, Mapping, Mapping]:
    c = parse("C", FIXTURE)
    rest, s0 = split_at(c, slice0)
    s2, s1 = split_at(rest, slice1)
    return s2, s1, s0


@settings(max_examples=60, deadline=None)
@given(slice1=POWERS, slice0=POWERS, kind=st.sampled_from(["Broadcast1", "Transpose", "TransposedBroadcast1"]))
def test_a_named_configuration_accepts_its_own_rebuilt_output(slice1: int, slice0: int, kind: str) -> None:
    s2, s1, s0 = _slice_split(slice1, slice0)
    a = parse("A", FIXTURE)
    x, y = parse("X", dict(X=slice1)), parse("Y", dict(Y=slice0))
    config: SwitchConfig
    if kind == "Broadcast1":
        config, out_slice, out_time = Broadcast1(slice1=slice1, slice0=slice0), pairs([s2, x, s0]), pairs([a, s1])
    elif kind == "Transpose":
        config, out_slice, out_time = Transpose(slice1=slice1, slice0=slice0), pairs([s2, s0, s1]), a
    else:
        config = TransposedBroadcast1(slice1=slice1, slice0=slice0)
        out_slice, out_time = pairs([s2, y, s1]), pairs([a, s0])
    params = verify_switch("i8", config, cluster=parse("1 # 2", {}), slice=parse("C", FIXTURE), time=a,
                           packet=parse("B", FIXTURE), out_slice=out_slice, out_time=out_time)
    assert params.ring_size == slice1 * slice0
    assert switch_cycles(params) == slice1 * slice0 * 8 * 1
    if slice1 > 1 and slice0 > 1:
        # The same routing written as a CustomBroadcast needs the same ring.
        ring = check_custom(CustomBroadcast(ring_size=slice1 * slice0), slice=parse("C", FIXTURE), time=a,
                            out_slice=out_slice, out_time=out_time)
        assert ring == params.ring_size


DIGITS = ("A / 64", "A / 16 % 4", "A / 4 % 4", "A % 4")  # outer first


@settings(max_examples=60, deadline=None)
@given(order=st.permutations(range(4)))
def test_a_permutation_rings_up_to_its_outermost_moved_digit(order: list[int]) -> None:
    sizes = dict(A=256, C=8)
    out_slice = ", ".join(DIGITS[i] for i in order)
    moved = [position for position, i in enumerate(order) if i != position]
    ring = 1 if not moved else 4 ** (4 - min(moved))
    assert custom(ring, "A", "C", out_slice, "C", sizes) == ring
    if ring > 1:
        error = custom_refused_with(ring // 2, "A", "C", out_slice, "C", sizes)
        assert error.rule == "RingSizeMismatch"


def custom_refused_with(ring: int, slice_: str, time: str, out_slice: str, out_time: str,
                        sizes: dict[str, int]) -> LayoutError:
    with pytest.raises(LayoutError) as caught:
        custom(ring, slice_, time, out_slice, out_time, sizes)
    return caught.value


LAYOUTS = ["C", "A", "C / 4, X", "C % 4, C / 4", "1 # 256", "C / 4, 1 #{0} 4", "A, C % 4", "A # 16", "X, C / 4",
           "C / 2 % 2, A", "(C, A) # 4096 / 8", "1", "C = 200 # 256", "A / 2, C % 2"]
CONFIGS = st.one_of(
    st.builds(Forwarding),
    st.builds(Broadcast01, slice1=st.integers(-1, 300), slice0=st.integers(-1, 300), time0=st.integers(-1, 9)),
    st.builds(Broadcast1, slice1=st.integers(-1, 300), slice0=st.integers(-1, 300)),
    st.builds(Transpose, slice1=st.integers(-1, 300), slice0=st.integers(-1, 300)),
    st.builds(InterTranspose, slice1=st.integers(-1, 300), slice0=st.integers(-1, 300), time0=st.integers(-1, 9)),
    st.builds(TransposedBroadcast1, slice1=st.integers(-1, 300), slice0=st.integers(-1, 300)),
    st.builds(CustomBroadcast, ring_size=st.integers(-1, 300)),
)


@settings(max_examples=300, deadline=None)
@given(config=CONFIGS, frames=st.tuples(*[st.sampled_from(LAYOUTS)] * 4))
def test_any_switch_call_either_passes_or_names_a_rule(config: SwitchConfig, frames: tuple[str, str, str, str]) -> None:
    sizes = dict(A=8, B=32, C=256, X=64)
    try:
        params = run(config, *frames, sizes=sizes)
    except LayoutError as error:
        assert error.stage == "switch" and error.rule and error.detail
        return
    assert params.ring_size in (1, 2, 4, 8, 16, 32, 64, 128, 256)
