"""tcp.search: every plan it returns runs correctly, is ranked by the cost model, and honours its options."""

from __future__ import annotations

import io
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tcpdsl as tcp
from tcpdsl.algebra import Digit, PaddingKind, parse
from tcpdsl.cli.run import load
from tcpdsl.harness.kernel_spec import kernels_in
from tcpdsl.harness.run import run_kernel
from tcpdsl.planner import Plan, Plans, engine
from tcpdsl.planner.layout import Group, Layout
from tcpdsl.planner.placement import oriented, placement
from tcpdsl.planner.progress import Progress
from tcpdsl.planner.ranking import branch_rank
from tcpdsl.verify import check_pairing

SMALL = {
    "ab,cb->ac": {"A": 32, "B": 32, "C": 8},
    "ngd,tnd->ngt": {"N": 4, "G": 2, "D": 64, "T": 64},
    "mvk,mnk->mvn": {"M": 4, "V": 8, "N": 8, "K": 32},
    "mp,np->mpn": {"M": 4, "N": 8, "P": 16},
    "a,a->": {"A": 256},
    "ab,b->a": {"A": 64, "B": 32},
    "h,lh->l": {"H": 128, "L": 96},
    "tk,nk->tn": {"T": 10, "K": 27, "N": 7},  # odd sizes: zero-padded flits, padded lanes
}


def _operands(einsum: str, sizes: dict[str, int], seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x_axes, w_axes = einsum.split("->")[0].split(",")

    def draw(axes: str) -> np.ndarray:
        values = rng.standard_normal([sizes[a.upper()] for a in axes])
        return values.astype(ml_dtypes.bfloat16).astype(np.float64)  # exactly representable in bf16

    return draw(x_axes), draw(w_axes)


def _agrees(plan: Plan, einsum: str, x: np.ndarray, w: np.ndarray) -> None:
    expected = np.einsum(einsum, x, w)
    got = plan.run(x, w)
    assert got.shape == expected.shape
    scale = np.einsum(einsum, np.abs(x), np.abs(w))
    assert np.all(np.abs(got - expected) <= 1e-5 * scale + 1e-30)


@pytest.mark.parametrize("einsum", sorted(SMALL))
def test_every_plan_computes_the_einsum(einsum: str) -> None:
    sizes = SMALL[einsum]
    plans = tcp.search(einsum, sizes, top=3)
    assert 1 <= len(plans) <= 3
    x, w = _operands(einsum, sizes)
    for plan in plans:
        _agrees(plan, einsum, x, w)


@st.composite
def _einsums(draw: st.DrawFn) -> tuple[str, dict[str, int]]:
    """A random two-operand einsum: up to two axes of each role, small sizes, any axis orders."""
    letters = iter(draw(st.permutations("abcdefgh")))
    roles = {role: [next(letters) for _ in range(draw(st.integers(0, 2)))] for role in ("k", "b", "m", "n")}
    stream = draw(st.permutations(roles["k"] + roles["b"] + roles["m"]))
    weight = draw(st.permutations(roles["k"] + roles["b"] + roles["n"]))
    out = draw(st.permutations(roles["b"] + roles["m"] + roles["n"]))
    sizes = {a.upper(): draw(st.sampled_from([1, 2, 3, 4, 6, 8, 16, 32])) for a in (*stream, *weight)}
    return f"{''.join(stream)},{''.join(weight)}->{''.join(out)}", sizes


@settings(max_examples=12, deadline=None)
@given(problem=_einsums(), streamed=st.sampled_from(["first", "second"]))
def test_random_einsums_run_to_the_einsum(problem: tuple[str, dict[str, int]], streamed: str) -> None:
    # Differential: whatever plan the search returns computes numpy's einsum.
    einsum, sizes = problem
    plans = tcp.search(einsum, sizes, top=1, streamed=streamed)  # type: ignore[arg-type]
    x, w = _operands(einsum, sizes)
    _agrees(plans[0], einsum, x, w)


@settings(max_examples=12, deadline=None)
@given(problem=_einsums(), inputs=st.sampled_from([None, ("hbm", "hbm"), ("dm", "dm")]))
def test_bounds_never_exceed_the_plans_they_bound(problem: tuple[str, dict[str, int]], inputs: tuple[str, str] | None) -> None:
    # Law: branch and bound drops a branch only when its bound beats the plans in hand, so every
    # plan costs at least its grid's bound and its branch's (split reductions and input moves
    # included); else "exhausted" would hide better plans.
    _bounded(*problem, inputs)


@pytest.mark.parametrize(
    ("einsum", "sizes", "inputs"),
    [
        ("k,nk->n", {"K": 32768, "N": 8}, None),
        ("th,lh->tl", {"T": 16, "H": 1024, "L": 64}, ("hbm", "hbm")),
        ("h,qh->q", {"H": 1024, "Q": 2048}, ({"Slice": "Q / 32, 1 # 4", "Cluster": "1 # 2"}, "dm")),
    ],
)
def test_bounds_never_exceed_split_plans(einsum: str, sizes: dict[str, int], inputs: object) -> None:
    assert any(p.problem.split for p in _bounded(einsum, sizes, inputs))


def _bounded(einsum: str, sizes: dict[str, int], inputs: object) -> Plans:
    plans = tcp.search(einsum, sizes, top=8, inputs=inputs)  # type: ignore[arg-type]
    for plan in plans:
        c = plan.chain.reduced.candidate
        where = oriented(plan.problem, placement(plan.problem, inputs))
        assert plan.whole.total_cycles >= c.grid.bound
        assert plan.whole.total_cycles >= branch_rank(plan.problem, c.grid, c.packing, c.lane, (plan.mode,), where)[0]
    return plans


def test_plans_come_best_first_with_consistent_figures() -> None:
    plans = tcp.search("th,lh->tl", {"T": 64, "H": 256, "L": 96}, top=5)
    cycles = [p.cycles for p in plans]
    assert cycles == sorted(cycles)
    for p in plans:
        # the weights load first, then the contraction streams; its commit never outlasts the Lane Folder
        # (a split reduction's inter-slice reduce follows the contraction, docs/search.md §5)
        reduce = p.breakdown.get("vector_final", 0)
        assert p.cycles == p.breakdown["weight DMA"] + p.breakdown["TRF load"] + p.cost.total_cycles + reduce
        assert 0 < p.mac_utilisation <= 1
        assert p.accumulator_use == p.accumulator_cells / 1024
    assert [p.rank for p in plans] == list(range(1, len(plans) + 1))


def test_the_best_plan_counts_the_whole_kernel() -> None:
    # A split reduction: L / 24 over both clusters' 64 slices and H / 256 over 4 slices each, so each
    # of 512 slices holds 24 x 256 bf16 weights (12 KiB) and no weight twice. The weight DMA moves
    # 6 MiB at the HBM's 1024 B a cycle, plus 500 to start; the sub context loads 12 KiB into the TRF
    # 8 bytes a cycle. All 256 rows of T stream, 24 Outer packets each (8 lanes, 3 groups of L, 8 of
    # H), plus the adder tree (5); the vector engine then adds the 4 slices' 768 result packets
    # (768 cycles, 4 of ring) before their commit.
    plans = tcp.search("th,lh->tl", {"T": 256, "H": 1024, "L": 3072}, top=1)
    assert plans.exhausted
    best = plans[0]
    assert (best.layouts.slice, best.layouts.cluster, best.trf_bytes) == ("L / 24 % 64, H / 256", "L / 1536", 24 * 256 * 2)
    assert best.layouts.out_slice == "L / 24 % 64, 1 # 4" and best.problem.split == {"H": 4}
    assert best.breakdown["weight DMA"] == 3072 * 1024 * 2 // 1024 + 500
    assert best.breakdown["TRF load"] == 24 * 256 * 2 // 8
    assert best.cost.total_cycles == 256 * 24 + 5 + 3
    assert best.breakdown["vector_final"] == 256 * 3 + 4
    assert best.cycles == 6644 + 1536 + 6152 + 772
    # without splitting H (the best plan before split reductions were in the space): L / 12 over 256
    # slices and T over both clusters, 12 MiB of weights (each twice) and 128 rows of 64 flits
    assert best.cycles < 12788 + 3072 + 8199


def test_an_odd_contracted_axis_is_padded_with_zeros() -> None:
    # 27 has no factor of two. Padded with zeros to 32 it fills two whole flits; unpadded, its
    # largest divisor below a 16-element flit fills 9 cells of three (K % 9 #{0} 16), which costs
    # more and still ranks among the plans.
    plans = tcp.search("tk,nk->tn", {"T": 10, "K": 27, "N": 7}, top=8)
    best = plans[0]
    assert (best.layouts.stream_packet, best.layouts.element) == ("K #{0} 32 % 16", "K #{0} 32")
    assert best.layouts.stream_time == "T % 5, K #{0} 32 / 16"
    partial = [p for p in plans if p.layouts.stream_packet == "K % 9 #{0} 16"]
    assert partial and partial[0].layouts.stream_time.endswith("K / 9")
    assert best.cost.total_cycles == 16 < partial[0].cost.total_cycles == 21


def test_a_contracted_axis_of_whole_flits_is_not_padded() -> None:
    # 48 bf16 cells are three whole flits: exact packets fill them, so no plan pads K.
    plans = tcp.search("tk,nk->tn", {"T": 16, "K": 48, "N": 8}, top=8)
    assert not any("#{0}" in text for p in plans for text in vars(p.layouts).values() if isinstance(text, str))
    assert not any(p.problem.zero_padded for p in plans)


def test_a_contracted_axis_padded_to_whole_flits_runs_on_both_evaluators(tmp_path: Path) -> None:
    # K = 999 fills 9 cells of each flit unpadded: 111 flits per row, 450 contraction cycles. Padded
    # with zeros to 1008 it takes 63 full flits per row (4 rows of T: 252 packets, a depth-4 tree,
    # one drain): 258 cycles; K = 1024 needs 256 flits to load and ranks below it.
    sizes = {"T": 32, "K": 999, "N": 8}
    plans = tcp.search("tk,nk->tn", sizes, top=2)
    best = plans[0]
    assert best.layouts.stream_packet == "K #{0} 1008 % 16"
    assert (best.layouts.stream_time, best.layouts.element) == ("T % 4, K #{0} 1008 / 16", "K #{0} 1008")
    assert best.cost.total_cycles == 252 + 5 + 1
    assert best.source().count('K = tcp.axis("K", 999)') == 1
    x, w = _operands("tk,nk->tn", sizes, seed=7)
    _agrees(best, "tk,nk->tn", x, w)
    path = tmp_path / "padded_k.py"
    path.write_text(best.source("padded_k"), encoding="utf-8")
    (spec,) = kernels_in(load(path, 0))
    for evaluator in ("fused", "simulate"):
        result = run_kernel(spec, path, seed=3, evaluator=evaluator)
        assert result.passed, result.error
        assert result.cost is not None and result.cost.total_cycles == best.cost.total_cycles


def test_either_operand_may_stream() -> None:
    einsum, sizes = "th,lh->tl", {"T": 8, "H": 64, "L": 256}
    second = tcp.search(einsum, sizes, top=2, streamed="second")
    assert all(p.streamed == 1 for p in second)
    x, w = _operands(einsum, sizes, seed=3)
    _agrees(second[0], einsum, x, w)
    either = tcp.search(einsum, sizes, top=4, streamed="either")
    first = tcp.search(einsum, sizes, top=1)
    assert either[0].cycles == min(first[0].cycles, second[0].cycles)


def test_fixed_layouts_are_kept() -> None:
    fixed = {"Chip": "1", "Cluster": "1 # 2", "mode": tcp.LaneMode.SEQUENTIAL}
    plans = tcp.search("ab,cb->ac", {"A": 32, "B": 32, "C": 8}, top=3, fixed=fixed)
    for p in plans:
        assert p.layouts.cluster == "1 # 2"
        assert p.mode is tcp.LaneMode.SEQUENTIAL
    free = tcp.search("ab,cb->ac", {"A": 32, "B": 32, "C": 8}, top=1)
    assert free[0].cycles <= plans[0].cycles


def test_topology_bounds_the_grid() -> None:
    sizes = {"H": 1024, "Q": 2048}
    one_pe = tcp.search("h,qh->q", sizes, top=1, topology=tcp.Topology(chips=1, pes=1))
    assert one_pe[0].layouts.cluster == "1"
    two_chips = tcp.search("h,qh->q", sizes, top=1, topology=tcp.Topology(chips=2))
    assert two_chips[0].cycles <= tcp.search("h,qh->q", sizes, top=1)[0].cycles
    x, w = _operands("h,qh->q", sizes)
    _agrees(two_chips[0], "h,qh->q", x, w)


def test_integer_plans_are_exact() -> None:
    sizes = {"A": 16, "B": 64, "C": 8}
    plans = tcp.search("ab,cb->ac", sizes, stream=tcp.i8, weights=tcp.i9, top=2)
    rng = np.random.default_rng(1)
    x = rng.integers(-128, 128, (16, 64))
    w = rng.integers(-256, 256, (8, 64))
    for p in plans:
        assert np.array_equal(p.run(x, w), np.einsum("ab,cb->ac", x, w))


@pytest.mark.parametrize(
    ("einsum", "sizes"),
    [
        ("abf,bhfac->hcb", {"A": 32, "B": 1, "F": 16, "H": 12, "C": 1}),  # axes of size 1 in every role
        ("hc,h->c", {"H": 1, "C": 3}),  # a scalar weight
        ("a,a->", {"A": 1}),  # scalars only
    ],
)
def test_axes_of_size_one_are_carried_through(einsum: str, sizes: dict[str, int]) -> None:
    x, w = _operands(einsum, sizes, seed=4)
    for plan in tcp.search(einsum, sizes, top=2):
        _agrees(plan, einsum, x, w)


def test_run_checks_the_operand_shapes() -> None:
    plan = tcp.search("ab,cb->ac", {"A": 8, "B": 32, "C": 8}, top=1)[0]
    with pytest.raises(tcp.LayoutError) as info:
        plan.run(np.zeros((8, 32)), np.zeros((32, 8)))
    assert info.value.rule == "ShapeMismatch" and "operand 2" in str(info.value)


def test_progress_draws_only_when_enabled_and_erases_itself() -> None:
    quiet = io.StringIO()
    bar = Progress(None, quiet)  # StringIO is no terminal: off by default
    bar.started -= 10
    bar.update(0.5, 10, 70)
    assert quiet.getvalue() == ""
    shown = io.StringIO()
    bar = Progress(True, shown)
    bar.update(0.5, 10, 70)
    assert shown.getvalue() == ""  # nothing during the first moments of a search
    bar.started -= 10
    bar.update(0.5, 10, 70)
    drawn = shown.getvalue()
    assert drawn.startswith("\r[" + "#" * 12 + "." * 12 + "]  50%  10 chains, best 70 cycles")
    bar.close()
    assert shown.getvalue().endswith("\r" + " " * (len(drawn) - 1) + "\r")


# -- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("einsum", "sizes", "rule", "words"),
    [
        ("ab,cb", {"A": 2, "B": 2, "C": 2}, "Einsum", "one '->'"),
        ("ab,cb,db->ac", {"A": 2, "B": 2, "C": 2, "D": 2}, "Einsum", "exactly two"),
        ("aa,ab->b", {"A": 2, "B": 2}, "Einsum", "diagonal"),
        ("ab,cb->ad", {"A": 2, "B": 2, "C": 2, "D": 2}, "Einsum", "neither operand"),
        ("ab,cb->c", {"A": 2, "B": 2, "C": 2}, "OneSidedSum", "axis A is summed"),
        ("ab,cb->ac", {"A": 2, "B": 2}, "Sizes", "axis C"),
        ("ab,cb->ac", {"A": 2, "B": 2, "C": 2, "Z": 3}, "Sizes", "Z"),
        ("ab,cb->ac", {"A": 2, "B": 0, "C": 2}, "Sizes", "positive"),
    ],
)
def test_malformed_problems_name_the_rule(einsum: str, sizes: dict[str, int], rule: str, words: str) -> None:
    with pytest.raises(tcp.LayoutError) as info:
        tcp.search(einsum, sizes)
    assert (info.value.stage, info.value.rule) == ("search", rule)
    assert words in str(info.value)


def test_a_refused_dtype_pair_is_the_multipliers_error() -> None:
    with pytest.raises(tcp.DtypeError) as info:
        tcp.search("ab,cb->ac", {"A": 8, "B": 32, "C": 8}, stream=tcp.i8, weights=tcp.bf16)
    with pytest.raises(tcp.DtypeError) as direct:
        check_pairing("i8", "bf16")
    assert str(info.value) == str(direct.value)


def test_a_contracted_axis_too_big_for_the_trf_is_named() -> None:
    # 32784 = 16 x 2049 cells are whole flits, so not padded, but no two slices can share them in
    # whole flits each: no split either, and 65568 bytes overflow one TRF
    with pytest.raises(tcp.LayoutError) as info:
        tcp.search("h,h->", {"H": 32784})
    error = info.value
    assert (error.stage, error.rule) == ("to_trf", "ExceedsCapacity")
    assert "H=32784" in error.detail and "65568 bytes" in error.detail
    assert "tile" in error.hint


def test_a_contracted_axis_too_big_for_one_trf_is_split_over_slices() -> None:
    # 65536 bf16 cells are 128 KiB, twice one TRF: split over slices, each holds a share
    plans = tcp.search("h,h->", {"H": 65536}, top=1)
    best = plans[0]
    assert best.problem.split and best.layouts.slice.endswith(f"H / {65536 // best.problem.split['H']}")
    x, w = _operands("h,h->", {"H": 65536}, seed=5)
    _agrees(best, "h,h->", x, w)


def test_weights_too_big_for_every_grid_are_named() -> None:
    # L is in both operands (a batch axis): no tile of the weights alone can be cut from it
    with pytest.raises(tcp.LayoutError) as info:
        tcp.search("lh,lh->l", {"H": 4096, "L": 8192}, topology=tcp.Topology(pes=1))
    assert (info.value.stage, info.value.rule) == ("to_trf", "ExceedsCapacity")
    assert "64 slices" in info.value.detail


def test_the_reference_grid_can_be_fixed() -> None:
    # The reference's q projection pads Slice inside (`Q / 32, 1 # 4`), where the search would
    # write `Q / 32 # 256`; fixed, it plans the hand-written kernel's whole-kernel cycles exactly
    # (docs/cost-model.md): 64 slices on 4 PEs' DMA engines, 64 KiB of TRF each.
    plans = tcp.search("h,qh->q", {"H": 1024, "Q": 2048}, fixed={"slice": "Q / 32, 1 # 4", "cluster": "1 # 2"}, top=1)
    best = plans[0]
    assert (best.layouts.slice, best.layouts.cluster) == ("Q / 32, 1 # 4", "1 # 2")
    assert best.cycles == 12925 and best.trf_bytes == 65536
    assert 'Slice = m["Q / 32, 1 # 4"]' in best.source()
    x, w = _operands("h,qh->q", {"H": 1024, "Q": 2048}, seed=4)
    _agrees(best, "h,qh->q", x, w)


def test_a_grid_pin_nothing_matches_is_reported() -> None:
    with pytest.raises(tcp.LayoutError) as info:
        tcp.search("ab,cb->ac", {"A": 32, "B": 32, "C": 8}, fixed={"Cluster": "1 # 2", "Slice": "A % 16 # 64"})
    assert info.value.rule == "FixedGrid"


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"top": 0}, "top="),
        ({"budget": -1}, "budget="),
        ({"budget": float("nan")}, "budget="),
        ({"streamed": "both"}, "streamed="),
        ({"streamed": ["first"]}, "streamed="),
        ({"fixed": {"Time": "1"}}, "cannot fix 'Time'"),
        ({"fixed": {"mode": "Interleaved"}}, "LaneMode"),
        ({"topology": 4}, "Topology"),
        ({"stream": "bf17"}, "stream="),
    ],
)
def test_bad_options_are_layout_errors(options: dict[str, object], words: str) -> None:
    with pytest.raises(tcp.LayoutError) as info:
        tcp.search("ab,cb->ac", {"A": 8, "B": 32, "C": 8}, **options)  # type: ignore[arg-type]
    assert words in str(info.value)


def test_no_time_is_a_budget_error() -> None:
    with pytest.raises(tcp.LayoutError) as info:
        tcp.search("th,lh->tl", {"T": 256, "H": 1024, "L": 3072}, budget=1e-9)
    assert info.value.rule == "Budget"


def test_a_search_stopped_by_its_budget_returns_what_it_found(monkeypatch: pytest.MonkeyPatch) -> None:
    # The clock runs out as soon as one plan is in hand.
    monkeypatch.setattr(engine._Search, "out_of_time", lambda self: bool(self.kept))
    plans = tcp.search("ab,cb->ac", {"A": 32, "B": 32, "C": 8}, top=3)
    assert not plans.exhausted and len(plans) >= 1
    assert "stopped by the time budget" in repr(plans)


# -- layouts -------------------------------------------------------------------------------------


def test_layout_text_parses_to_the_digits_it_names() -> None:
    layout = Layout.of(Digit("L", 3072, 8, 3), Digit("H", 1024, 1, 1024))
    assert layout.text() == "L / 8 % 3, H"
    outer, inner = layout.split(16) or (None, None)
    assert outer is not None and inner is not None
    assert (outer.text(), inner.text()) == ("L / 8 % 3, H / 16", "H % 16")
    assert outer.mapping.pair(inner.mapping) == layout.mapping
    assert Layout.of(Digit("L", 3072, 1, 6)).padded(8).text() == "L % 6 # 8"
    assert Layout().padded(2).text() == "1 # 2"
    assert Layout.of(Digit("L", 3072, 1, 6)).split(4) is None


_AXES = {"A": 24, "B": 16, "C": 7}


@st.composite
def _layouts(draw: st.DrawFn) -> Layout:
    """Digits of distinct axes (each a contiguous piece of its axis), some padded, in any order."""
    parts: list[Digit | Group] = []
    for axis in draw(st.permutations(sorted(_AXES))):
        size = _AXES[axis]
        if not draw(st.booleans()):
            continue
        stride = draw(st.sampled_from([d for d in range(1, size + 1) if size % d == 0]))
        count = draw(st.sampled_from([c for c in range(1, size // stride + 1) if (size // stride) % c == 0]))
        digit = Digit(axis, size, stride, count)
        if draw(st.booleans()):
            kind = draw(st.sampled_from([PaddingKind.TOP, PaddingKind.ZERO]))
            parts.append(Group((digit,), count * draw(st.integers(1, 3)), kind))
        else:
            parts.append(digit)
    return Layout.of(*parts)


@settings(max_examples=150, deadline=None)
@given(layout=_layouts())
def test_a_layout_builds_the_mapping_its_text_parses_to(layout: Layout) -> None:
    # Law: the mapping the search checks is the one its emitted text names.
    assert layout.mapping == parse(layout.text(), _AXES)
    assert layout.mapping.size == layout.size


@settings(max_examples=150, deadline=None)
@given(layout=_layouts(), cut=st.integers(1, 64))
def test_a_split_layout_pairs_back_to_itself(layout: Layout, cut: int) -> None:
    # Law: split is exact where it succeeds; the mapping algebra's split_at agrees with it.
    halves = layout.split(cut)
    if halves is None:
        return
    outer, inner = halves
    assert inner.size == cut and outer.size * cut == layout.size
    assert outer.mapping.pair(inner.mapping) == layout.mapping
    assert (outer.mapping, inner.mapping) == layout.mapping.split_at(cut)

# -- where the operands are ------------------------------------------------------------------------


def test_inputs_say_where_the_operands_are_and_the_plan_pays_their_moves() -> None:
    einsum, sizes = "h,qh->q", {"H": 1024, "Q": 2048}
    default = tcp.search(einsum, sizes, top=1)[0]
    # by default the stream is in DM and the weights in HBM: 4 MiB at 1024 B a cycle, plus 500
    assert "stream DMA" not in default.breakdown and default.breakdown["weight DMA"] == 4096 + 500
    both = tcp.search(einsum, sizes, top=1, inputs=("hbm", "hbm"))[0]
    # a stream from HBM favours a deeper split of H (32 slices of 32 cells): 64 bytes into each of
    # 512 slices, 32 KiB at 1024 B a cycle, plus 500
    assert both.layouts.slice == "Q / 128 % 8, H / 32" and both.breakdown["stream DMA"] == 32 + 500
    assert both.cycles == 6222 > default.cycles
    resident = tcp.search(einsum, sizes, top=1, inputs=("dm", "dm"))[0]
    assert resident.breakdown["weight DMA"] == 0
    assert resident.cycles == default.cycles - 4596
    elsewhere = tcp.search(einsum, sizes, top=1, inputs=({"slice": "Q / 32, 1 # 4", "Cluster": "1 # 2"}, "hbm"))[0]
    # the stream sits on another grid: moved DM to DM (serial reads and writes) over 8 engines, 32
    # cells of H (64 bytes) into each of 512 slices
    assert elsewhere.layouts.slice == "Q / 128 % 8, H / 32"
    assert elsewhere.breakdown["stream move"] == 500 + 2 * (512 * 64 // 8 // 256)


@pytest.mark.parametrize(
    ("inputs", "words"),
    [
        ("hbm", "one place per einsum operand"),
        (("hbm",), "one place per einsum operand"),
        (("ssd", "hbm"), 'place of operand 1 must be "hbm", "dm" or a grid dict'),
        (("dm", {"Time": "H"}), "inputs= grid of operand 2 names 'Time'"),
    ],
)
def test_inputs_that_name_no_place_are_refused(inputs: object, words: str) -> None:
    with pytest.raises(tcp.LayoutError) as info:
        tcp.search("h,qh->q", {"H": 64, "Q": 64}, inputs=inputs)  # type: ignore[arg-type]
    assert (info.value.stage, info.value.rule) == ("search", "Option")
    assert words in info.value.detail
