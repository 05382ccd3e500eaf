"""The transpose engine's pure verifier: the reference's 21 unit cases, the book's six examples with their
latencies, the transformer's transposes, and every rule's message."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpdsl.algebra import parse
from tcpdsl.cost import transpose_cycles
from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify.transpose import TransposeParams, check_transpose_config, verify_transpose

UNIT = dict(A=4, B=2, C=8, D=4, E=8, F=8, G=2, X=64, Y=512, Esplit=16, PPC=2, IR=8, EP=8, EPHalf=4, Dummy1=1,
            Esplit32=32, BB=4, Cbig=384, Bbig=96, Dummy8=8)


def run(dtype: str, time: str, packet: str, out_time: str, out_packet: str, sizes: dict[str, int] = UNIT) -> TransposeParams:
    p = lambda text: parse(text, sizes)  # noqa: E731
    return verify_transpose(dtype, time=p(time), packet=p(packet), out_time=p(out_time), out_packet=p(out_packet))


# (dtype, Time, Packet, OutTime, OutPacket) -> (in_rows, in_cols, packets_per_col, out_rows, iterations)
UNIT_CASES = [
    ("transpose_basic", "i8", "C, F", "E # 32", "C, E", "F # 32", (8, 8, 1, 8, 8)),
    ("transpose_small", "i8", "A", "B # 32", "B", "A # 32", (4, 8, 1, 2, 1)),
    ("transpose_small_no_slicing", "i8", "A", "B # 32", "B # 8", "A # 32", (4, 8, 1, 8, 1)),
    ("transpose_large_col", "i8", "B, C, D", "E # 32", "B, D, E", "C # 32", (8, 32, 4, 32, 2)),
    ("transpose_bf16", "bf16", "C, D", "E # 16", "C, E", "D # 16", (4, 8, 1, 8, 8)),
    ("transpose_padding_only_in_rows", "bf16", "1", "C % 8 # 16", "C % 8", "1 # 16", (1, 8, 1, 8, 1)),
    ("transpose_split_symbol_time", "i8", "C, D, Esplit / 8", "Esplit % 8 # 32", "C, Esplit", "D # 32",
     (4, 16, 2, 16, 8)),
    ("transpose_packets_per_col_2_no_slice", "i8", "IR, PPC", "EP # 32", "PPC, EP", "IR # 32", (8, 16, 2, 16, 1)),
    ("transpose_padding_only_packets_per_col", "i8", "IR, 1 # 2", "EP # 32", "1 # 2, EP", "IR # 32", (8, 16, 2, 16, 1)),
    ("transpose_size1_dummy_axis_as_in_rows", "i8", "D, Dummy1", "A # 32", "D, A", "Dummy1 # 32", (1, 8, 1, 4, 4)),
    ("transpose_i4_basic", "i4", "A", "BB # 64", "BB", "A # 64", (4, 16, 1, 4, 1)),
    ("transpose_f32_basic", "f32", "B", "C # 8", "C", "B # 8", (2, 8, 1, 8, 1)),
    ("transpose_split_symbol_packets_per_col_4", "i8", "C, D, Esplit32 / 8", "Esplit32 % 8 # 32", "C, Esplit32",
     "D # 32", (4, 32, 4, 32, 8)),
    ("transpose_packed_pair_in_rows", "i8", "(A, B) # 16", "C # 32", "1 # 2, C", "(A, B) # 32", (8, 8, 1, 8, 2)),
    ("transpose_padded_strided_packets_per_col", "i8", "D, A # 16 / 8", "A # 16 % 8 # 32", "1 # 2, A # 8", "D # 32",
     (4, 16, 2, 16, 1)),
    ("transpose_packed_pair_strided_packets_per_col", "i8", "D, (A, B) # 16 / 8", "(A, B) # 16 % 8 # 32",
     "1 # 2, (A, B)", "D # 32", (4, 16, 2, 16, 1)),
    ("transpose_packed_pair_strided_bf16", "bf16", "D, (A, B) # 16 / 8", "(A, B) # 16 % 8 # 16", "1 # 2, (A, B)",
     "D # 16", (4, 16, 2, 16, 1)),
    ("transpose_all_padding_no_terms", "i8", "1 # 4", "1 # 32", "1 # 32", "1 # 32", (1, 8, 1, 8, 4)),
    ("transpose_mixed_padding_size_arithmetic", "i8", "A, 1 # 4", "EP # 32", "1 # 4, EP", "A # 32", (4, 32, 4, 32, 1)),
    ("transpose_fc1_bias_prepared_split_dummy8", "bf16", "Dummy8", "1 # 16", "Dummy8 / 4", "Dummy8 % 4 # 16",
     (4, 8, 1, 1, 2)),
    ("transpose_engine_14_bf16_multi_split", "bf16", "Cbig / 4 % 24, Cbig / 96, Bbig / 24, Bbig / 8 % 3, Cbig % 4",
     "Bbig % 8 # 16", "Cbig / 4 % 24, Cbig / 96, Bbig", "Cbig % 4 # 16", (4, 8, 1, 8, 1152)),
]


def test_there_are_21_unit_cases() -> None:
    assert len(UNIT_CASES) == 21


@pytest.mark.parametrize("name, dtype, time, packet, out_time, out_packet, derived", UNIT_CASES,
                         ids=[c[0] for c in UNIT_CASES])
def test_unit_cases_with_their_parameters(name: str, dtype: str, time: str, packet: str, out_time: str,
                                          out_packet: str, derived: tuple[int, int, int, int, int]) -> None:
    params = run(dtype, time, packet, out_time, out_packet)
    got = (params.in_rows, params.in_cols, params.packets_per_col, params.out_rows, params.iterations)
    assert got == derived
    assert params.double_buffered == (params.in_cols <= 16)
    assert params.valid_size == (16 if dtype == "i4" else 8)


# The book's six examples (P = 256 slices), with the latency it prints for each.
BOOK = [
    ("i8", dict(B=2, C=8, D=2, E=8), "B, C, D", "E # 32", "B, D, E", "C # 32", (8, 16, 16), 48),
    ("i8", dict(A=4, B=2), "A", "B # 32", "B", "A # 32", (4, 8, 2), 6),
    ("i8", dict(B=2, C=8, D=4, E=8), "B, C, D", "E # 32", "B, D, E", "C # 32", (8, 32, 32), 128),
    ("bf16", dict(C=8, D=4, E=8), "C, D", "E # 16", "C, E", "D # 16", (4, 8, 8), 68),
    ("i4", dict(B=4, C=16, E=16), "B, C", "E # 64", "B, E", "C # 64", (16, 16, 16), 80),
    ("f32", dict(B=4, D=2, E=8), "B, D", "E # 8", "B, E", "D # 8", (2, 8, 8), 34),
]


@pytest.mark.parametrize("dtype, sizes, time, packet, out_time, out_packet, derived, cycles", BOOK)
def test_book_examples_and_latencies(dtype: str, sizes: dict[str, int], time: str, packet: str, out_time: str,
                                     out_packet: str, derived: tuple[int, int, int], cycles: int) -> None:
    params = run(dtype, time, packet, out_time, out_packet, sizes)
    assert (params.in_rows, params.in_cols, params.out_rows) == derived
    assert transpose_cycles(params) == cycles


TRANSFORMER = dict(H=1024, Q=2048, N=8, G=2, D=128, T=512)
TRANSFORMER_TRANSPOSES = [
    ("bf16", "Q % 4", "Q / 4 % 8 # 16", "Q / 4 % 8", "Q % 4 # 16"),  # projection::proj_q
    ("bf16", "H % 4", "H / 4 % 4 # 16", "H / 4 % 4", "H % 4 # 16"),  # projection::proj_o
    ("f32", "N, G", "1 # 8", "N", "G # 8"),  # attention::row_max and row_sum
    ("f32", "G", "1 # 8", "1", "G # 8"),  # rmsnorm::forward_q
    ("bf16", "D / 8, T % 16", "D % 8 # 16", "D / 8, T / 4 % 4, D % 8", "T % 4 # 16"),  # attention::weighted_sum
]


@pytest.mark.parametrize("dtype, time, packet, out_time, out_packet", TRANSFORMER_TRANSPOSES)
def test_transformer_transposes_are_accepted(dtype: str, time: str, packet: str, out_time: str, out_packet: str) -> None:
    params = run(dtype, time, packet, out_time, out_packet, TRANSFORMER)
    assert params.out_rows <= params.in_cols


MNIST = dict(H=256, Dummy8=8, Dummy16=16)
MNIST_TRANSPOSES = [
    ("bf16", "1", "H % 8 # 16", "H % 8", "1 # 16", 8),  # fc1_bias_prepared
    ("bf16", "Dummy8", "1 # 16", "Dummy8 / 4", "Dummy8 % 4 # 16", 1),
    ("bf16", "H", "1 # 16", "H / 4", "H % 4 # 16", 1),  # fc2_input_prepared
    ("bf16", "Dummy16", "1 # 16", "Dummy16 / 4", "Dummy16 % 4 # 16", 1),  # fc2_bias_prepared
]


@pytest.mark.parametrize("dtype, time, packet, out_time, out_packet, out_rows", MNIST_TRANSPOSES)
def test_mnist_transposes_are_accepted(dtype: str, time: str, packet: str, out_time: str, out_packet: str,
                                       out_rows: int) -> None:
    assert run(dtype, time, packet, out_time, out_packet, MNIST).out_rows == out_rows


NEG = dict(A=2, B=2, C=8, E=8, K=3, M=4, W=16, F=8, PPC8=8, C6=6, C10=10)
REFUSED = [
    ("i5", "C", "E # 32", "E", "C # 32", DtypeError, "UnsupportedElementBits",
     "transpose: element bits (5) must be one of 4, 8, 16, 32"),
    ("i8", "C", "E # 16", "E", "C # 32", LayoutError, "InputPacketSize",
     "transpose: the input packet must be 32 bytes, got 16 elements (expected 32) (Packet E # 16 of i8)"),
    ("i8", "C", "E # 32", "E", "C # 16", LayoutError, "OutputPacketSize",
     "transpose: the output packet must be 32 bytes, got 16 elements (expected 32) (OutPacket C # 16 of i8)"),
    ("i8", "C", "W # 32", "W", "C # 32", LayoutError, "InputPacketPadding",
     "transpose: the input packet beyond valid_size (8) must be `1 # n` pure padding, got: W / 8 # 4 (Packet W # 32)"),
    ("i8", "W", "E # 32", "E", "W # 32", LayoutError, "OutputPacketPadding",
     "transpose: the output packet beyond max in_rows (8) must be `1 # n` pure padding, got: W / 8 # 4 "
     "(OutPacket W # 32)"),
    ("i8", "C", "E # 32", "E", "M # 32", LayoutError, "RowEvidenceNotPresent",
     "transpose: the row evidence (M) is not present in Time (C): M of M does not occur as a digit of C"),
    ("i8", "C", "E # 32", "E", "4 # 32", LayoutError, "NoLiveRowTerms",
     "transpose: the row evidence (4) has no live row terms"),
    ("i8", "B, A", "E # 32", "E", "(A, B) # 32", LayoutError, "RowEvidenceNotAligned",
     "transpose: the row evidence (A, B) is not aligned in Time (B, A)"),
    ("i8", "A, K, B", "E # 32", "E", "(A, B) # 32", LayoutError, "InconsistentPacketsPerCol",
     "transpose: the row evidence (A, B) implies inconsistent packets_per_col sizes in Time (A, K, B)"),
    ("i8", "C10", "E # 32", "E", "C10 = 9 / 3 # 32", LayoutError, "PacketsPerColDoesNotSplitTime",
     "transpose: packets_per_col (3) does not split Time (C10)"),
    ("i8", "C6", "E # 32", "E", "C6 = 4 # 32", LayoutError, "InRowsDoesNotSplitTime",
     "transpose: in_rows (4) does not split Time rest (C6)"),
    ("i8", "C, F", "E # 32", "E, C", "F # 32", LayoutError, "CannotPlaceInRows",
     "transpose: cannot place in_rows in Time (C, F) consistently with OutTime (E, C) | OutPacket (F # 32)"),
    ("i8", "C, PPC8", "E # 32", "PPC8, E", "C # 32", LayoutError, "ConfigColumns",
     "transpose: in_cols 64 must be packets_per_col 8 * valid_size 8 and one of 8, 16, 32 for 8-bit elements"),
    ("i8", "A", "B # 32", "B # 16", "A # 32", LayoutError, "ConfigRows",
     "transpose: out_rows 16 must be at most in_cols 8"),
]


@pytest.mark.parametrize("dtype, time, packet, out_time, out_packet, error, rule, message", REFUSED,
                         ids=[c[6] for c in REFUSED])
def test_rule_messages(dtype: str, time: str, packet: str, out_time: str, out_packet: str, error: type[Exception],
                       rule: str, message: str) -> None:
    with pytest.raises(error) as caught:
        run(dtype, time, packet, out_time, out_packet, NEG)
    assert isinstance(caught.value, (LayoutError, DtypeError))
    assert (caught.value.stage, caught.value.rule, caught.value.detail) == ("transpose", rule, message)
    assert caught.value.hint


def test_a_configuration_must_match_the_element_width() -> None:
    params = TransposeParams(valid_size=16, in_rows=8, in_cols=16, packets_per_col=1, out_rows=16, iterations=1,
                             double_buffered=True)
    with pytest.raises(LayoutError) as caught:
        check_transpose_config(8, params)
    assert (caught.value.rule, caught.value.detail) == (
        "ConfigPacketWidth", "transpose: valid_size 16 must be the 8-bit packet width 8")
    check_transpose_config(4, params)


def test_the_hint_of_a_misplaced_out_time_names_the_layout_to_declare() -> None:
    with pytest.raises(LayoutError) as caught:
        run("i8", "C, F", "E # 32", "E, C", "F # 32", NEG)
    assert "declare OutTime as C, E" in caught.value.hint


@settings(max_examples=60, deadline=None)
@given(dtype=st.sampled_from(["i4", "i8", "bf16", "f32"]), rows_log=st.integers(1, 4), ppc=st.sampled_from([1, 2, 4]),
       outer=st.integers(1, 3), live=st.integers(1, 16))
def test_the_matrix_layout_is_accepted_with_its_sizes(dtype: str, rows_log: int, ppc: int, outer: int, live: int) -> None:
    """``Time [N, R, P] / Packet [E # F]`` becomes ``Time [N, P, E] / Packet [R # F]`` for every legal size (one
    row, R = 1, would leave packets_per_col to choice: the verifier takes 1)."""
    valid, max_rows, flit = {"i4": (16, 16, 64), "i8": (8, 8, 32), "bf16": (8, 4, 16), "f32": (8, 2, 8)}[dtype]
    rows, cols = 2 ** rows_log, ppc * valid
    if rows > max_rows or cols not in ({16, 32} if dtype == "i4" else {8, 16, 32}):
        return
    live = min(live, valid)
    sizes = dict(N=outer, R=rows, P=ppc, E=live)
    params = run(dtype, "N, R, P", f"E # {flit}", f"N, P, E # {valid}", f"R # {flit}", sizes)
    assert (params.in_rows, params.in_cols, params.packets_per_col) == (rows, cols, ppc)
    assert (params.out_rows, params.iterations) == (cols, outer)
    in_flits = rows * ppc
    if params.double_buffered:
        # One fill, then each further iteration costs its slower side, then one drain.
        assert transpose_cycles(params) == in_flits + (outer - 1) * max(in_flits, cols) + cols
    assert transpose_cycles(params) <= outer * (in_flits + cols)


FUZZ = dict(A=2, B=2, C=8, E=8, K=3, W=16)
TIMES = ["C", "A, K, B", "C, E", "1 # 4", "K", "(A, K) # 8", "C / 2, 1 # 3", "W = 5"]
PACKETS = ["E # 32", "C # 32", "W # 32", "1 # 32", "E # 16", "(A, B) # 32", "4 # 32", "K # 8", "E # 64", "A, B # 16"]


@settings(max_examples=300, deadline=None)
@given(dtype=st.sampled_from(["i4", "i5", "i8", "i9", "bf16", "f32", "u7"]), time=st.sampled_from(TIMES),
       packet=st.sampled_from(PACKETS), out_time=st.sampled_from(TIMES + ["E", "1", "C, A"]),
       out_packet=st.sampled_from(PACKETS))
def test_any_transpose_call_either_passes_or_names_a_rule(dtype: str, time: str, packet: str, out_time: str,
                                                          out_packet: str) -> None:
    try:
        params = run(dtype, time, packet, out_time, out_packet, FUZZ)
    except (LayoutError, DtypeError) as error:
        assert error.stage == "transpose" and error.rule and error.detail
        return
    assert params.out_rows <= params.in_cols
