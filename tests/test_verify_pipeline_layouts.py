"""The pure layer end to end: the layouts of the reference's fetch and commit kernels, stage after stage."""

from __future__ import annotations

from tcpdsl.algebra import parse
from tcpdsl.verify.collect import verify_collect
from tcpdsl.verify.commit import verify_commit, verify_commit_trim
from tcpdsl.verify.fetch import verify_begin, verify_fetch
from tcpdsl.verify.fetch_adapter import verify_fetch_cast
from tcpdsl.verify.dma import verify_to_dm, verify_to_hbm
from tcpdsl.verify.memory import Tier, check_dm_tensor
from tcpdsl.verify.sequencer import Entry
from tcpdsl.verify.to_vrf import verify_to_vrf
from tcpdsl.verify.views import verify_tile


def test_valid_cluster_and_slice_size() -> None:
    # i8 [A = 8, B = 32] on Slice 1 # 256: F[A][B] -> fetch_cast(i8) -> C[A][B] -> CT[B] -> commit -> to_hbm_view.
    ax = {"A": 8, "B": 32}

    def m(t: str):  # type: ignore[no-untyped-def]
        return parse(t, ax)

    chip, cluster, slice_ = m("1"), m("1 # 2"), m("1 # 256")
    dm = verify_to_dm("i8", source=Tier(chip, m("A, B")), cluster=cluster, slice_=slice_, element=m("A, B"))
    assert dm.tail == 256
    verify_begin("i8", chip=chip, cluster=cluster, slice_=slice_, element=m("A, B"))
    f = verify_fetch("i8", cluster=cluster, slice_=slice_, time=m("1"), packet=m("A, B"), out_time=m("A"),
                     out_packet=m("B"), cast_to_bits=verify_fetch_cast("i8", "i8"))
    assert f.read_size == 32
    assert verify_collect("i8", cluster=cluster, slice_=slice_, time=m("A"), packet=m("B"), out_time=m("A"),
                          out_packet=m("B")).flits == 1
    assert verify_commit_trim("i8", packet=m("B"), out_packet=m("B")) == 32
    verify_commit("i8", time=m("A"), packet=m("B"), element=m("A, B"))
    back = verify_to_hbm("i8", source=Tier(chip, m("A, B"), cluster, slice_), element=m("A, B"), view=True)
    assert back.tail == 256


def test_fetch_commit_simple() -> None:
    ax = {"A": 4096, "B": 8}

    def m(t: str):  # type: ignore[no-untyped-def]
        return parse(t, ax)

    chip, cluster, slice_, el = m("1"), m("1 # 2"), m("A / 16"), m("A / 8 % 2, A % 8, B")
    verify_to_dm("i8", source=Tier(chip, m("A, B")), cluster=cluster, slice_=slice_, element=el)
    f = verify_fetch("i8", cluster=cluster, slice_=slice_, time=m("1"), packet=el, out_time=m("A / 8 % 2"),
                     out_packet=m("A % 8, B"), cast_to_bits=verify_fetch_cast("i8", "i32"))
    assert f.read_size == 8
    c = verify_collect("i32", cluster=cluster, slice_=slice_, time=m("A / 8 % 2"), packet=m("A % 8, B"),
                       out_time=m("A / 8 % 2, A % 8"), out_packet=m("B"))
    assert c.flits == 8
    assert verify_commit_trim("i32", packet=m("B"), out_packet=m("B")) == 32
    verify_commit("i32", time=m("A / 8 % 2, A % 8"), packet=m("B"), element=el)
    assert check_dm_tensor("i32", chip=chip, cluster=cluster, slice_=slice_, element=el) == 512


def test_to_vrf_at_capacity_on_sub() -> None:
    # i32 A = 2048 on sub: F[1][A] -> fetch_cast(i32) -> C[A / 8][A % 8] -> to_vrf(A).
    ax = {"A": 2048}

    def m(t: str):  # type: ignore[no-untyped-def]
        return parse(t, ax)

    one, cluster, slice_ = m("1"), m("1 # 2"), m("1 # 256")
    f = verify_fetch("i32", cluster=cluster, slice_=slice_, time=one, packet=m("A"), out_time=one, out_packet=m("A"),
                     context="sub", cast_to_bits=verify_fetch_cast("i32", "i32"))
    assert f.read_size == 2  # 8 bytes of i32
    verify_collect("i32", cluster=cluster, slice_=slice_, time=one, packet=m("A"), out_time=m("A / 8"),
                   out_packet=m("A % 8"))
    assert verify_to_vrf("i32", time=m("A / 8"), packet=m("A % 8"), element=m("A")).bytes == 8192


def test_tile_window_commit() -> None:
    # f32 D = 64: read tile D = 32 # 64 at 0 -> F[1][D = 32] -> C[D = 32 / 8][D = 32 % 8] -> CT -> commit_view
    # into the write tile D = 32 #{!} 64 at 32.
    ax = {"D": 64}

    def m(t: str):  # type: ignore[no-untyped-def]
        return parse(t, ax)

    one, cluster, slice_ = m("1"), m("1"), m("1 # 64")
    read = verify_tile(m("D"), start=0, index=m("D"), len_=32, element=m("D = 32 # 64"), write=False)
    verify_fetch("f32", cluster=cluster, slice_=slice_, time=one, packet=read, out_time=one, out_packet=m("D = 32"))
    verify_collect("f32", cluster=cluster, slice_=slice_, time=one, packet=m("D = 32"), out_time=m("D = 32 / 8"),
                   out_packet=m("D = 32 % 8"))
    verify_commit_trim("f32", packet=m("D = 32 % 8"), out_packet=m("D = 32 % 8"))
    write = verify_tile(m("D"), start=32, index=m("D"), len_=32, element=m("D = 32 #{!} 64"), write=True)
    verify_commit("f32", time=m("D = 32 / 8"), packet=m("D = 32 % 8"), element=write, view=True)


def test_vrf_add_segmented() -> None:
    # i32 [A = 128, B = 512] on Slice A / 2 # 64; the VRF operand B broadcast over the slices by the DMA;
    # each half of A % 2 fetched from a read tile and committed into a write tile.
    ax = {"A": 128, "B": 512}

    def m(t: str):  # type: ignore[no-untyped-def]
        return parse(t, ax)

    chip, cluster, slice_ = m("1"), m("1"), m("A / 2 # 64")
    rhs = verify_to_dm("i32", source=Tier(chip, m("B")), cluster=cluster, slice_=slice_, element=m("B"))
    assert rhs.entries == (Entry(64, 0), Entry(512, 1))
    verify_to_dm("i32", source=Tier(chip, m("A, B")), cluster=cluster, slice_=slice_, element=m("A % 2, B"))
    assert verify_to_vrf("i32", time=m("B / 8"), packet=m("B % 8"), element=m("B")).bytes == 2048
    read = verify_tile(m("A % 2, B"), start=1, index=m("A % 2"), len_=1, element=m("A % 2 = 1 # 2, B"), write=False)
    write = verify_tile(m("A % 2, B"), start=1, index=m("A % 2"), len_=1, element=m("A % 2 = 1 #{!} 2, B"),
                        write=True)
    f = verify_fetch("i32", cluster=cluster, slice_=slice_, time=m("1"), packet=read, out_time=m("A % 2 = 1"),
                     out_packet=m("B"))
    assert f.read_size == 8
    verify_collect("i32", cluster=cluster, slice_=slice_, time=m("A % 2 = 1"), packet=m("B"),
                   out_time=m("A % 2 = 1, B / 8"), out_packet=m("B % 8"))
    c = verify_commit("i32", time=m("A % 2 = 1, B / 8"), packet=m("B % 8"), element=write, view=True)
    assert c.time_entries == (Entry(64, 8),)
