"""tcp.search_chain: a sequence of kernels planned as a whole, moves between them paid for."""

from __future__ import annotations

import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl.planner.sequence import move_cycles


def _alone(einsum: str, sizes: dict[str, int]) -> tcp.Plan:
    names = set(einsum.split("->")[0].replace(",", "").upper())
    return tcp.search(einsum, {a: n for a, n in sizes.items() if a in names}, top=1)[0]


def test_a_projection_feeding_attention_is_planned_as_a_whole() -> None:
    sizes = {"H": 1024, "N": 8, "G": 2, "D": 128, "T": 512}
    chain = tcp.search_chain(["h,ngdh->ngd", "ngd,tnd->ngt"], sizes, budget=120)
    projection, score = chain.kernels
    assert chain.exhausted
    assert [p.problem.einsum for p in chain.kernels] == ["h,ngdh->ngd", "ngd,tnd->ngt"]
    assert chain.cycles == projection.cycles + score.cycles + sum(chain.moves)
    # the score's grid spreads T, which the projection's result does not, and the projection splits
    # H, which leaves its result in one slice of every 4: the score's stream is moved DM to DM
    # into every slice before it runs, 2 x 64 bf16 cells (256 bytes) into each of 512 slices over
    # 8 engines, reads and writes in turn: 500 + 2 x 64 requests of 256 bytes
    assert projection.layouts.out_slice == "D % 64, 1 # 4" and score.problem.split == {"D": 2}
    assert chain.moves == (move_cycles(projection, score),) == (500 + 2 * 512 * 256 // 8 // 256,)
    assert (chain.cycles, projection.cycles, score.cycles) == (8078, 5649, 1801)
    greedy = _alone("h,ngdh->ngd", sizes), _alone("ngd,tnd->ngt", sizes)
    assert chain.cycles <= greedy[0].cycles + greedy[1].cycles + move_cycles(*greedy)
    assert chain.summary()["kernels"][1]["move"] == 628


def test_a_chain_tries_contracted_axes_padded_with_zeros() -> None:
    # K = 999 fills no whole flit: padded with zeros to 1008, the first kernel streams 63 full flits
    # a row (258 cycles of contraction where the part-filled flits take 450), as tcp.search plans it
    # alone, and the module still takes the 999-cell operands.
    sizes = {"T": 32, "K": 999, "N": 8, "M": 16}
    chain = tcp.search_chain(["tk,nk->tn", "tn,mn->tm"], sizes, budget=120)
    first, second = chain.kernels
    assert chain.exhausted
    assert first.problem.zero_padded == {"K": 999} and first.layouts.element == "K #{0} 1008"
    assert first.cost.total_cycles == 258 and first.cycles == _alone("tk,nk->tn", sizes).cycles
    assert chain.cycles == first.cycles + second.cycles + sum(chain.moves) == 2297
    rng = np.random.default_rng(2)
    x, w = rng.integers(-3, 4, (32, 999)).astype(np.float64), rng.integers(-3, 4, (8, 999)).astype(np.float64)
    assert np.array_equal(first.run(x, w), x @ w.T)


def test_the_move_is_the_whole_kernel_models_stream_move() -> None:
    # The chain's move is the figure the whole-kernel model gives the next kernel when inputs= puts
    # its stream on the previous result's grid (the projection's reduced Slice): one formula.
    projection = _alone("h,ngdh->ngd", {"H": 1024, "N": 8, "G": 2, "D": 128})
    score = _alone("ngd,tnd->ngt", {"N": 8, "G": 2, "D": 128, "T": 512})
    p, s = projection.layouts, score.layouts
    placed = tcp.search(
        "ngd,tnd->ngt", {"N": 8, "G": 2, "D": 128, "T": 512}, top=1,
        fixed={"Chip": s.chip, "Cluster": s.cluster, "Slice": s.slice},
        inputs=({"Chip": p.chip, "Cluster": p.cluster, "Slice": p.out_slice}, "hbm"),
    )[0]
    assert placed.layouts == s
    assert placed.breakdown["stream move"] == placed.cycles - score.cycles == move_cycles(projection, score) == 628


def test_a_chain_can_keep_its_result_in_place() -> None:
    # Spread over T alone, the first kernel leaves each slice the rows of T the second streams:
    # no move, and both kernels cost more alone than the pair of best plans, which must move.
    sizes = {"T": 4096, "B": 32, "C": 32, "D": 32}
    chain = tcp.search_chain(["tb,cb->tc", "tc,dc->td"], sizes, budget=120)
    assert chain.moves == (0,) and chain.exhausted
    first, second = chain.kernels
    assert first.layouts.slice == second.layouts.slice == "T / 64 % 32 # 64"
    greedy = _alone("tb,cb->tc", sizes), _alone("tc,dc->td", sizes)
    alone = greedy[0].cycles + greedy[1].cycles + move_cycles(*greedy)
    assert (chain.cycles, alone) == (2548, 4136)


@pytest.mark.parametrize(
    ("einsums", "rule", "words"),
    [
        (["h,lh->l", "h,hl->l"], "ChainLink", "'h,hl->l' does not stream the result of 'h,lh->l' (axes 'l', got 'h')"),
        ([], "Option", "a non-empty list of einsums"),
        ("h,lh->l", "Option", "a non-empty list of einsums"),
    ],
)
def test_a_chain_that_does_not_link_is_refused(einsums: object, rule: str, words: str) -> None:
    with pytest.raises(tcp.LayoutError) as info:
        tcp.search_chain(einsums, {"H": 64, "L": 64})  # type: ignore[arg-type]
    assert (info.value.stage, info.value.rule) == ("search", rule)
    assert words in info.value.detail
