"""The stream front as typed stages: ``dev.main.begin(dm.view()) -> fetch -> collect`` on both evaluators
(docs/stage-rules.md §4.3-4.5, docs/runtime.md §4)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.numerics.scalars import cast

A = tcp.axis("A", 16)
B = tcp.axis("B", 64)
C = tcp.axis("C", 8)
K = tcp.axis("K", 32)

Chip, Cluster, Slice = m["1"], m["1"], m["A # 64"]
Dm = tcp.DmTensor[tcp.bf16, Chip, Cluster, Slice, m["B"]]
dev = tcp.Device()


@pytest.fixture(params=["fused", "simulate"])
def evaluator(request: pytest.FixtureRequest) -> Iterator[str]:
    with tcp.evaluator(request.param):
        yield request.param


def data(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((16, 64)).astype(np.float32)


def test_dm_round_trip(evaluator: str) -> None:
    x = data()
    d = Dm(tcp.Tensor(x, "A B"))
    assert np.array_equal(d.to_tensor().to_numpy("A B"), cast(x, "bf16"))


def test_begin_fetch_collect_keeps_every_value(evaluator: str) -> None:
    x = data()
    begun = dev.main.begin(Dm(tcp.Tensor(x, "A B")).view())
    assert repr(begun) == '<BeginTensor[bf16, m["1"], m["1"], m["A # 64"], m["1"], m["B"]]>'
    fetched = begun.fetch(out_time=m["B / 16"], out_packet=m["B % 16"])
    c = fetched.collect(out_time=m["B / 16"], out_packet=m["B % 16"])
    assert isinstance(c, tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["B / 16"], m["B % 16"]])
    assert np.array_equal(c.to_tensor().to_numpy("A B"), cast(x, "bf16"))
    assert c.physical().shape == (1, 1, 64, 4, 16)


def test_a_collected_stream_feeds_the_contraction_chain(evaluator: str) -> None:
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((16, 32)).astype(np.float32), rng.standard_normal((8, 32)).astype(np.float32)
    dm = tcp.DmTensor[tcp.bf16, Chip, Cluster, Slice, m["K"]](tcp.Tensor(x, "A K"))
    stream = (dev.main.begin(dm.view())
              .fetch(out_time=m["K / 16"], out_packet=m["K % 16"])
              .collect(out_time=m["K / 16"], out_packet=m["K % 16"]))
    trf = tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["C"], m["K"]](tcp.Tensor(w, "C K"))
    out = (stream.contract_outer(trf, out_time=m["1"], out_packet=m["K"])
           .contract_packet(out_packet=m["1"])
           .contract_time(out_time=m["1"])
           .contract_lane(out_time=m["1"], out_packet=m["C"]))
    expected = cast(x, "bf16").astype(np.float64) @ cast(w, "bf16").astype(np.float64).T
    assert np.allclose(out.to_tensor().to_numpy("A C"), expected, rtol=1e-5, atol=1e-4)


def test_a_fetch_reads_the_sub_context_in_eight_bytes() -> None:
    fetched = dev.sub.begin(Dm(tcp.Tensor(data(), "A B")).view()).fetch(out_time=m["B / 16"], out_packet=m["B % 16"])
    assert fetched.flow.steps[-1].params.read_size == 4  # 8 bytes of bf16
    main = dev.main.begin(Dm(tcp.Tensor(data(), "A B")).view()).fetch(out_time=m["B / 16"], out_packet=m["B % 16"])
    assert main.flow.steps[-1].params.read_size == 16  # 32 bytes: the packet is contiguous in DM


def test_fetch_rules_at_run_time() -> None:
    begun = dev.main.begin(Dm(tcp.Tensor(data(), "A B")).view())
    with pytest.raises(tcp.LayoutError, match=r"fetch: the stream \[B / 16\]\[C\] holds C, which DM B does not hold") as info:
        begun.fetch(out_time=m["B / 16"], out_packet=m["C"])
    assert (info.value.stage, info.value.rule) == ("fetch", "Unreadable")
    with pytest.raises(tcp.LayoutError) as info:
        begun.fetch(out_time=m["B / 32"], out_packet=m["B % 16"])
    assert (info.value.stage, info.value.rule) == ("fetch", "Unread")


def test_collect_rules_at_run_time() -> None:
    fetched = dev.main.begin(Dm(tcp.Tensor(data(), "A B")).view()).fetch(out_time=m["B / 8"], out_packet=m["B % 8"])
    with pytest.raises(tcp.LayoutError) as info:
        fetched.collect(out_time=m["B / 8"], out_packet=m["B % 8"])
    assert (info.value.stage, info.value.rule) == ("collect", "OutputNotOneFlit")
    c = fetched.collect(out_time=m["B / 8"], out_packet=m["B % 8 # 16"])
    assert np.array_equal(c.to_tensor().to_numpy("A B"), cast(data(), "bf16"))


def test_positions_have_only_their_next_methods() -> None:
    begun = dev.main.begin(Dm(tcp.Tensor(data(), "A B")).view())
    assert not hasattr(begun, "collect") and not hasattr(begun, "contract_outer")
    fetched = begun.fetch(out_time=m["B / 16"], out_packet=m["B % 16"])
    assert not hasattr(fetched, "fetch") and not hasattr(fetched, "to_trf")


def test_begin_takes_a_view() -> None:
    with pytest.raises(tcp.LayoutError, match="begin takes a view of a DM tensor, got ndarray"):
        dev.main.begin(data())  # type: ignore[arg-type]



Other = tcp.DmTensor[tcp.bf16, Chip, Cluster, Slice, m["B / 2"]]


@tcp.kernel
def fetch_all(x: Dm) -> tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["B / 16"], m["B % 16"]]:
    return (dev.main.begin(x.view()).fetch(out_time=m["B / 16"], out_packet=m["B % 16"])
            .collect(out_time=m["B / 16"], out_packet=m["B % 16"]))


def test_kernel_annotations_with_memory_types_are_checked() -> None:
    assert isinstance(fetch_all(Dm(tcp.Tensor(data(), "A B"))), tcp.CollectTensor)
    with pytest.raises(tcp.TcpError, match="DmTensor"):
        fetch_all(Other(tcp.Tensor(data()[:, ::2], m["A, B / 2"])))  # type: ignore[arg-type]
