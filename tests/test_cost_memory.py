"""Cycle formulas of fetch, commit and DMA (docs/cost-model.md §4), pinned to the book's worked numbers."""

from __future__ import annotations

import pytest

from tcpdsl.algebra import parse
from tcpdsl.cost import DMA_STARTUP_CYCLES, commit_cycles, dma_cycles, dma_requests, fetch_cycles
from tcpdsl.verify.commit import verify_commit
from tcpdsl.verify.fetch import verify_fetch
from tcpdsl.verify.dma import verify_to_dm, verify_to_hbm
from tcpdsl.verify.memory import Tier

BATCH = {"N": 4, "C": 3, "H": 4, "W": 16}
PACKET = {"A": 3, "B": 5, "C": 2}


@pytest.mark.parametrize(
    ("out_time", "out_packet", "max_access", "read_size", "cycles"),
    [
        ("N, C, H", "W", 16, 16, 48),
        ("N, C, H / 2", "H % 2, W", 32, 32, 24),
        ("N, C", "H, W", 64, 64, 12),
        ("N", "C, H, W", 192, 64, 12),  # three 32-byte reads per packet
    ],
)
def test_fetch_batch_book_numbers(out_time: str, out_packet: str, max_access: int, read_size: int, cycles: int) -> None:
    # i4 [N, C, H, W] fetched with more and more of it in the packet.
    def m(t: str):  # type: ignore[no-untyped-def]
        return parse(t, BATCH)

    p = verify_fetch("i4", cluster=m("1 # 2"), slice_=m("1 # 256"), time=m("1"), packet=m("N, C, H, W"),
                     out_time=m(out_time), out_packet=m(out_packet))
    assert (p.max_access, p.read_size, fetch_cycles(p)) == (max_access, read_size, cycles)


@pytest.mark.parametrize(
    ("out_time", "out_packet", "cycles"),
    [("A, B", "C # 8", 15), ("A", "[B, C] # 16", 3), ("1", "[A, B, C] # 32", 1)],
)
def test_fetch_packet_book_numbers(out_time: str, out_packet: str, cycles: int) -> None:
    # 30 bytes of f8e4m3 [A, B, C]: padding the packet to 8, 16 or 32 bytes reads it in 15, 3 or 1 cycles.
    def m(t: str):  # type: ignore[no-untyped-def]
        return parse(t, PACKET)

    p = verify_fetch("f8e4m3", cluster=m("1 # 2"), slice_=m("1 # 256"), time=m("1"), packet=m("A, B, C"),
                     out_time=m(out_time), out_packet=m(out_packet))
    assert fetch_cycles(p) == cycles


def test_fetch_matrix_book_number() -> None:
    axes = {"A": 512, "B": 32}
    p = verify_fetch("i8", cluster=parse("1 # 2", axes), slice_=parse("1 # 256", axes), time=parse("1", axes),
                     packet=parse("A, B", axes), out_time=parse("A", axes), out_packet=parse("B", axes))
    assert fetch_cycles(p) == 512


def test_commit_cycles_main_and_sub() -> None:
    axes = {"A": 4, "N": 8}
    t, pk, el = parse("A", axes), parse("N", axes), parse("A, N", axes)
    main = verify_commit("i32", time=t, packet=pk, element=el)
    sub = verify_commit("i32", time=t, packet=pk, element=el, context="sub")
    assert (main.write_bytes, commit_cycles(main)) == (32, 4)  # one 32-byte write per packet
    assert (sub.write_bytes, commit_cycles(sub)) == (8, 16)  # four 8-byte writes per packet


def test_hbm_to_hbm_book_example() -> None:
    # 8 x 8 x 256 i8 relayout in HBM: runs of 256 bytes, 64 reads and 64 writes that serialise, + 500.
    axes = {"A": 8, "B": 8, "C": 256}
    src = Tier(parse("1", axes), parse("A, B, C", axes))
    p = verify_to_hbm("i8", source=src, element=parse("B, A, C", axes))
    assert (p.tail_bytes, dma_requests(p), dma_cycles(p)) == (256, 64, 628)


def test_hbm_to_dm_book_example() -> None:
    # 256^3 i8 from HBM into one cluster's 256 slices: 65 536 requests each way, pipelined, + 500.
    axes = {"A": 256, "B": 256, "C": 256}
    src = Tier(parse("1", axes), parse("A, B, C", axes))
    p = verify_to_dm("i8", source=src, cluster=parse("1", axes), slice_=parse("A", axes), element=parse("B, C", axes))
    assert (dma_requests(p), dma_cycles(p)) == (65536, 66036)


def test_dm_to_dm_book_example() -> None:
    # 256^3 i8 on 64 slices of one cluster, [A % 4, B, C] relaid out as [B, A % 4, C]: runs of 256 bytes,
    # 65 536 reads and 65 536 writes that serialise, + 500.
    axes = {"A": 256, "B": 256, "C": 256}
    src = Tier(parse("1", axes), parse("A % 4, B, C", axes), parse("1", axes), parse("A / 4", axes))
    p = verify_to_dm("i8", source=src, cluster=parse("1", axes), slice_=parse("A / 4", axes),
                     element=parse("B, A % 4, C", axes))
    assert (p.tail_bytes, dma_requests(p), dma_cycles(p)) == (256, 65536, 131072 + DMA_STARTUP_CYCLES)
