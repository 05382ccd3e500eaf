"""Every documented kernel (those of examples/), stage by stage, from constructors to contract_lane."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tcpdsl.algebra import Mapping, parse
from tcpdsl.errors import LayoutError
from tcpdsl.verify import (
    LaneMode,
    check_collect_tensor,
    check_contract_tensor,
    check_contract_outer_tensor,
    check_contract_packet_tensor,
    check_trf_tensor,
    verify_contract_lane,
    verify_contract_outer,
    verify_contract_packet,
    verify_contract_time,
    verify_to_trf,
)

I = LaneMode.INTERLEAVED
S = LaneMode.SEQUENTIAL


@dataclass(frozen=True)
class Outer:
    read_size: int
    packet_broadcast: int
    pack_size: int
    time_broadcast: str
    # (OutTime factor, count, Element stride) outermost first; stride 0 is a broadcast.
    sequencing: tuple[tuple[str, int, int], ...]


@dataclass(frozen=True)
class Kernel:
    name: str
    axes: dict[str, int]
    time: str
    packet: str
    lane: str
    element: str
    out_time: str
    out_packet: str
    outer: Outer
    cluster: str = "1 # 2"
    slice_: str = "1 # 256"
    out_packet2: str | None = None  # None: the documented example stops after contract_outer
    depth: int = 0
    out_time2: str = ""
    out_time3: str = ""
    out_packet3: str = ""
    mode: LaneMode = I
    inner_time: int = 1
    cells: int = 0
    trf_collect: tuple[str, str] | None = None


BMATMUL = {"V": 32, "M": 32, "N": 8, "K": 32}
KERNELS = [
    Kernel(
        "bmatmul_k_in_time", BMATMUL, "V / 16, K", "1 # 16", "N", "K", "V / 16, K", "1 # 16",
        Outer(1, 16, 1, "1", (("V / 16", 2, 0), ("K", 32, 1))),
        cluster="M / 16", slice_="M % 16, V % 16", out_packet2="1", depth=0, out_time2="V / 16",
        out_time3="V / 16", out_packet3="N", mode=I, inner_time=1, cells=8,
        trf_collect=("N, K / 16", "K % 16"),
    ),
    Kernel(
        "bmatmul_m_in_time", BMATMUL, "M, K / 16", "K % 16", "N", "K", "M", "K",
        Outer(32, 1, 2, "1", (("M", 32, 0),)),
        cluster="V / 16", slice_="V % 16 # 256", out_packet2="1", depth=5, out_time2="M",
        out_time3="M", out_packet3="N", mode=I, inner_time=1, cells=8,
        trf_collect=("N, K / 16", "K % 16"),
    ),
    Kernel(
        "bmatmul_v_in_time", BMATMUL, "V, K / 16", "K % 16", "N", "K", "V", "K",
        Outer(32, 1, 2, "1", (("V", 32, 0),)),
        cluster="M / 16", slice_="M % 16 # 256", out_packet2="1", depth=5, out_time2="V",
        out_time3="V", out_packet3="N", mode=I, inner_time=1, cells=8,
    ),
    Kernel(
        "stream_adapter_example", {"M": 32, "N": 8, "K": 16, "L": 2, "B": 5}, "M, L", "K", "N", "B, L, K", "M, B",
        "L, K", Outer(32, 1, 2, "B", (("M", 32, 0), ("B", 5, 32))),
    ),
    Kernel(
        "trf_sequencer_full_read", {"M": 32, "N": 8, "K": 32}, "M, K / 16", "K % 16", "N", "K", "M", "K",
        Outer(32, 1, 2, "1", (("M", 32, 0),)),
    ),
    Kernel(
        "trf_sequencer_partial_read", {"M": 32, "N": 8, "K": 16, "L": 2, "O": 2}, "O, M, L", "K", "N", "O, K",
        "O, M", "L, K", Outer(16, 2, 2, "1", (("O", 2, 16), ("M", 32, 0))),
    ),
    Kernel(
        "matmul", {"A": 32, "B": 32, "C": 8}, "A, B / 16", "B % 16", "C", "B", "A", "B",
        Outer(32, 1, 2, "1", (("A", 32, 0),)),
        out_packet2="1", depth=5, out_time2="A", out_time3="A", out_packet3="C", mode=I, inner_time=1, cells=8,
    ),
    Kernel(
        "reduce_b", {"A": 2048, "B": 32}, "B / 16, A % 8", "B % 16", "1", "B", "B / 16, A % 8", "B % 16",
        Outer(16, 1, 1, "1", (("B / 16", 2, 16), ("A % 8", 8, 0))),
        slice_="A / 8", out_packet2="1", depth=4, out_time2="A % 8", out_time3="A % 8", out_packet3="1 # 8",
        mode=S, inner_time=8, cells=256,
    ),
    Kernel(
        "lane_interleaved", {"N": 8, "M": 4, "P": 16}, "M", "P", "N", "P", "M", "P",
        Outer(16, 1, 1, "1", (("M", 4, 0),)),
        out_packet2="P", depth=0, out_time2="M", out_time3="M, P", out_packet3="N", mode=I, inner_time=1, cells=128,
    ),
    Kernel(
        "lane_sequential", {"N": 8, "M": 4, "P": 16}, "M", "P", "N", "P", "M", "P",
        Outer(16, 1, 1, "1", (("M", 4, 0),)),
        out_packet2="P", depth=0, out_time2="M", out_time3="M, N, P / 8", out_packet3="P % 8", mode=S,
        inner_time=1, cells=256,
    ),
    Kernel(
        "dot_product", {"A": 2048}, "A / 16", "A % 16", "1", "A", "A / 32", "A % 32",
        Outer(32, 1, 2, "1", (("A / 32", 64, 32),)),
        out_packet2="1", depth=5, out_time2="1", out_time3="1", out_packet3="1 # 8", mode=I, inner_time=1, cells=8,
        trf_collect=("1, A / 16", "A % 16"),
    ),
    Kernel(
        "gemv", {"I": 256, "J": 2048}, "J / 16", "J % 16", "1", "J", "J / 32", "J % 32",
        Outer(32, 1, 2, "1", (("J / 32", 64, 32),)),
        slice_="I", out_packet2="1", depth=5, out_time2="1", out_time3="1", out_packet3="1 # 8", mode=I,
        inner_time=1, cells=8, trf_collect=("J / 16", "J % 16"),
    ),
    Kernel(
        "gemm", {"I": 512, "J": 512, "K": 64}, "I % 32, J / 8 % 4, K / 16", "K % 16", "J % 8", "J / 8 % 4, K",
        "I % 32, J / 8 % 4, K / 32", "K % 32",
        Outer(32, 1, 2, "1", (("I % 32", 32, 0), ("J / 8 % 4, K / 32", 8, 32))),
        slice_="I / 32, J / 32", out_packet2="1", depth=5, out_time2="I % 32, J / 8 % 4",
        out_time3="I % 32, J / 8 % 4", out_packet3="J % 8", mode=I, inner_time=1, cells=8,
        trf_collect=("J % 8, J / 8 % 4, K / 16", "K % 16"),
    ),
]


def parser(axes: dict[str, int]) -> Callable[[str], Mapping]:
    return lambda text: parse(text, axes)


@pytest.mark.parametrize("kernel", KERNELS, ids=[k.name for k in KERNELS])
def test_kernel_stage_by_stage(kernel: Kernel) -> None:
    p = parser(kernel.axes)
    chip, cluster, slice_ = p("1"), p(kernel.cluster), p(kernel.slice_)
    time, packet, lane, element = p(kernel.time), p(kernel.packet), p(kernel.lane), p(kernel.element)
    out_time, out_packet = p(kernel.out_time), p(kernel.out_packet)

    check_collect_tensor("bf16", chip=chip, cluster=cluster, slice_=slice_, time=time, packet=packet)
    check_trf_tensor("bf16", chip=chip, cluster=cluster, slice_=slice_, lane=lane, element=element)
    if kernel.trf_collect is not None:
        trf_time, trf_packet = p(kernel.trf_collect[0]), p(kernel.trf_collect[1])
        check_collect_tensor("bf16", chip=chip, cluster=cluster, slice_=slice_, time=trf_time, packet=trf_packet)
        trf = verify_to_trf("bf16", time=trf_time, packet=trf_packet, lane=lane, element=element)
        assert trf.bytes_per_lane == 2 * element.size

    check_contract_outer_tensor("bf16", chip=chip, cluster=cluster, slice_=slice_, lane=lane, time=out_time, packet=out_packet)
    outer = verify_contract_outer("bf16", "bf16", time=time, packet=packet, lane=lane, element=element, out_time=out_time, out_packet=out_packet)
    assert outer.accumulator == "f32"
    assert (outer.read_size, outer.packet_broadcast, outer.pack_size) == (
        kernel.outer.read_size,
        kernel.outer.packet_broadcast,
        kernel.outer.pack_size,
    )
    assert outer.lane_broadcast == lane.size
    assert outer.time_broadcast == p(kernel.outer.time_broadcast)
    assert outer.wide_read == (outer.read_size == 32)
    got = [(e.time, e.count, e.stride) for e in outer.sequencing]
    assert got == [(p(t), c, s) for t, c, s in kernel.outer.sequencing]

    if kernel.out_packet2 is None:
        return
    out_packet2 = p(kernel.out_packet2)
    check_contract_packet_tensor(chip=chip, cluster=cluster, slice_=slice_, lane=lane, time=out_time, packet=out_packet2)
    assert verify_contract_packet("bf16", packet=out_packet, out_packet=out_packet2).depth == kernel.depth

    out_time2 = p(kernel.out_time2)
    check_contract_packet_tensor(chip=chip, cluster=cluster, slice_=slice_, lane=lane, time=out_time2, packet=out_packet2, stage="ContractTimeTensor")
    verify_contract_time(time=out_time, out_time=out_time2)

    out_time3, out_packet3 = p(kernel.out_time3), p(kernel.out_packet3)
    check_contract_tensor("f32", chip=chip, cluster=cluster, slice_=slice_, time=out_time3, packet=out_packet3)
    params = verify_contract_lane(lane=lane, time=out_time2, packet=out_packet2, out_time=out_time3, out_packet=out_packet3, pre_reduce_time=out_time, mode=kernel.mode)
    assert (params.inner_time, params.cells) == (kernel.inner_time, kernel.cells)


def test_register_files_i8_example() -> None:
    sizes = {"B": 32}
    one, b = parse("1", sizes), parse("B", sizes)
    check_collect_tensor("i8", chip=one, cluster=parse("1 # 2", sizes), slice_=parse("1 # 256", sizes), time=one, packet=b)
    params = verify_to_trf("i8", time=one, packet=b, lane=one, element=b)
    assert (params.bytes_per_lane, params.total_bytes) == (32, 32)


def test_pure_broadcast_tiling_axis_in_no_operand() -> None:
    # OutTime's innermost tiling factor T names an axis of neither operand: a plain broadcast.
    sizes = {"M": 32, "N": 8, "K": 32, "T": 3}
    p = parser(sizes)
    outer = verify_contract_outer("bf16", "bf16", time=p("M, K / 16"), packet=p("K % 16"), lane=p("N"), element=p("K"), out_time=p("M, T"), out_packet=p("K"))
    assert outer.time_broadcast == p("T")
    assert [(e.time, e.count, e.stride) for e in outer.sequencing] == [(p("M, T"), 96, 0)]


def test_transposed_tiling_walks_element_in_any_order() -> None:
    # Element [T, V, E] walked by OutTime [A, V, T]: every Element / ReadSize factor appears, out of order.
    sizes = {"A": 4, "V": 2, "T": 4, "E": 32, "N": 8}
    p = parser(sizes)
    outer = verify_contract_outer("bf16", "bf16", time=p("A, E / 16"), packet=p("E % 16"), lane=p("N"), element=p("T, V, E"), out_time=p("A, V, T"), out_packet=p("E"))
    assert outer.time_broadcast == p("V, T")
    assert [(e.time, e.count, e.stride) for e in outer.sequencing] == [
        (p("A"), 4, 0),
        (p("V"), 2, 32),
        (p("T"), 4, 64),
    ]


def test_tiling_axis_not_innermost_is_refused() -> None:
    # The broadcast (tiling) factor must sit innermost in OutTime; outermost it cannot split off.
    sizes = {"M": 32, "N": 8, "K": 32, "T": 3}
    p = parser(sizes)
    with pytest.raises(LayoutError) as info:
        verify_contract_outer("bf16", "bf16", time=p("M, K / 16"), packet=p("K % 16"), lane=p("N"), element=p("K"), out_time=p("T, M"), out_packet=p("K"))
    assert (info.value.stage, info.value.rule) == ("contract_outer", "OutTimeMismatch")


def test_weight_without_the_contracted_axis_is_refused() -> None:
    # Engine Part 5 #2: the reference accepts a TRF whose Element is not walked by OutTime; tcpdsl does not.
    sizes = {"M": 32, "N": 8, "K": 32, "R": 4}
    p = parser(sizes)
    with pytest.raises(LayoutError) as info:
        verify_contract_outer("bf16", "bf16", time=p("M, K / 16"), packet=p("K % 16"), lane=p("N"), element=p("R, K"), out_time=p("M"), out_packet=p("K"))
    assert (info.value.stage, info.value.rule) == ("contract_outer", "ElementNotSequenced")
