"""The whole-kernel model: weight DMA, TRF load, commit and moves (docs/cost-model.md, "The whole kernel")."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.algebra import parse
from tcpdsl.cost import (
    dm_move_cycles,
    dma_engines,
    result_commit_cycles,
    trf_load_cycles,
    weight_dma_cycles,
)

Q = {"Q": 2048}


def test_a_full_trf_takes_8192_cycles_to_load_whatever_the_dtype() -> None:
    # the sub context reads 8 bytes a cycle: 64 KiB in 8192 reads
    for dtype in ("bf16", "i8", "f8e4m3", "i4"):
        assert trf_load_cycles(65536, dtype) == 8192
    assert trf_load_cycles(9, "bf16") == 2  # a partial read still takes its cycle


def test_one_dma_engine_per_occupied_pe() -> None:
    one = parse("1", {})
    # 64 live slices, one every 4: they sit on 4 PEs of 64 slices each
    assert dma_engines(one, parse("1 # 2", {}), parse("Q / 32, 1 # 4", Q)) == 4
    # the same 64 slices packed together sit on one PE
    assert dma_engines(one, parse("1 # 2", {}), parse("1 # 4, Q / 32", Q)) == 1
    # both clusters and all 256 slices: 8 PEs
    assert dma_engines(one, parse("Q / 1024", Q), parse("Q / 4 % 256", Q)) == 8


def test_the_weight_dma_is_an_engine_command_or_the_hbm_floor() -> None:
    four_mib = 4 * 1024 * 1024
    # on one engine: 16384 requests of 256 bytes after the 500-cycle start
    assert weight_dma_cycles(four_mib // 64, 64, engines=1) == 500 + 16384
    # on 8 engines the HBM's 1024 bytes a cycle bind first
    assert weight_dma_cycles(four_mib // 512, 512, engines=8) == 500 + 4096
    # two chips have two HBMs
    assert weight_dma_cycles(four_mib // 1024, 1024, engines=16, chips=2) == 500 + 2048
    assert weight_dma_cycles(0, 512, engines=8) == 0


@given(st.integers(1, 1 << 16), st.integers(1, 512), st.integers(1, 8))
def test_more_engines_never_load_slower(trf_bytes: int, slices: int, engines: int) -> None:
    # the search bounds a grid's load with the most engines it could use (docs/search.md §4)
    assert weight_dma_cycles(trf_bytes, slices, engines + 1) <= weight_dma_cycles(trf_bytes, slices, engines)


def test_commit_and_moves() -> None:
    assert result_commit_cycles(32) == 32  # one 32-byte write per result packet
    # DM to DM serialises reads and writes: 64 KiB over 4 engines is 64 requests each, twice
    assert dm_move_cycles(1024, 64, engines=4) == 500 + 2 * 64


def test_narrowing_a_result_for_the_next_kernel_costs_no_more_than_committing_it() -> None:
    # A chain's kernel hands its f32 result to the next one as bf16: the commit adapter narrows it
    # while writing (commit_cast), one packet a cycle like the commit, so the whole-kernel commit
    # figure holds for it too: 16 result packets, 16 cycles either way.
    M, N = tcp.axis("M", 16), tcp.axis("N", 8)
    grid = (m["1"], m["1 # 2"], m["1 # 256"])
    result = tcp.CollectTensor[tcp.f32, grid[0], grid[1], grid[2], m["M"], m["N"]](
        tcp.Device().main, tcp.Tensor(np.zeros((16, 8)), [M, N])
    )
    trimmed = result.commit_trim(out_packet=m["N"])
    plain = trimmed.commit(element=m["M, N"]).explain()
    narrowed = trimmed.commit_cast(tcp.bf16).commit(element=m["M, N"]).explain()
    assert plain.splitlines()[-1] == narrowed.splitlines()[-1] == "  total: 16 cycles per slice"
    assert "commit_cast -> Time M | Packet N (bf16): 16 cycles" in narrowed
    assert result_commit_cycles(16) == 16
