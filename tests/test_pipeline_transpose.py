"""The transpose engine as a typed stage, from a collected stream and from a contraction result, on both
evaluators (docs/stage-rules.md §5.2, docs/runtime.md §3.10)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import tcpdsl as tcp
from test_verify_transpose import BOOK, UNIT, UNIT_CASES
from tcpdsl import m
from tcpdsl.numerics.placement import plan
from tcpdsl.numerics.scalars import cast
from tcpdsl.numerics.transfer import to_physical

C = tcp.axis("C", 8)
E = tcp.axis("E", 8)
F = tcp.axis("F", 8)
K = tcp.axis("K", 32)
N = tcp.axis("N", 2)
A = tcp.axis("A", 16)

Chip, Cluster, Slice = m["1"], m["1 # 2"], m["A # 64"]
Rows = tcp.CollectTensor[tcp.i8, Chip, Cluster, Slice, m["C, F"], m["E # 32"]]
dev = tcp.Device()


@pytest.fixture(params=["fused", "simulate"])
def evaluator(request: pytest.FixtureRequest) -> Iterator[str]:
    with tcp.evaluator(request.param):
        yield request.param


def ints(*shape: int) -> np.ndarray:
    return np.random.default_rng(3).integers(-128, 128, size=shape).astype(np.int8)


def test_a_collected_stream_transposes_its_rows_and_columns(evaluator: str) -> None:
    """The reference's ``transpose_basic``: i8 ``[C, F][E # 32] -> [C, E][F # 32]``."""
    x = ints(16, 8, 8, 8)
    s = Rows(dev.main, tcp.Tensor(x, "A C E F"))
    t = s.transpose(out_time=m["C, E"], out_packet=m["F # 32"])
    assert repr(t) == '<TransposeTensor[i8, m["1"], m["1 # 2"], m["A # 64"], m["C, E"], m["F # 32"]]>'
    assert np.array_equal(t.to_tensor().to_numpy("A C E F"), x)
    physical = t.physical()  # [Chip, Cluster, Slice, Time, Packet]
    assert np.array_equal(physical[0, 0, 3, 2 * 8 + 5, :8], x[3, 2, 5, :])


def test_a_fetched_stream_transposes(evaluator: str) -> None:
    x = ints(16, 8, 8)
    dm = tcp.DmTensor[tcp.i8, Chip, Cluster, Slice, m["F, E"]](tcp.Tensor(x, "A F E"))
    c = (dev.main.begin(dm.view()).fetch(out_time=m["F"], out_packet=m["E # 32"])
         .collect(out_time=m["F"], out_packet=m["E # 32"]))
    t = c.transpose(out_time=m["E"], out_packet=m["F # 32"])
    assert np.array_equal(t.to_tensor().to_numpy("A F E"), x)


def test_a_contraction_result_transposes_in_f32(evaluator: str) -> None:
    """Two rows of f32 accumulators (the widest a 32-bit transpose takes) become eight columns of two."""
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((16, 2, 32)).astype(np.float32), rng.standard_normal((8, 32)).astype(np.float32)
    stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["N, K / 16"], m["K % 16"]](
        dev.main, tcp.Tensor(x, "A N K"))
    trf = tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["C"], m["K"]](tcp.Tensor(w, "C K"))
    out = (stream.contract_outer(trf, out_time=m["N, K / 32"], out_packet=m["K % 32"])
           .contract_packet(out_packet=m["1"])
           .contract_time(out_time=m["N"])
           .contract_lane(out_time=m["N"], out_packet=m["C"]))
    t = out.transpose(out_time=m["C"], out_packet=m["N # 8"])
    assert repr(t) == '<TransposeTensor[f32, m["1"], m["1 # 2"], m["A # 64"], m["C"], m["N # 8"]]>'
    expected = np.einsum("ank,ck->anc", cast(x, "bf16").astype(np.float64), cast(w, "bf16").astype(np.float64))
    assert np.allclose(t.to_tensor().to_numpy("A N C"), expected, rtol=1e-5, atol=1e-4)
    assert np.array_equal(t.to_tensor().to_numpy("A N C"), out.to_tensor().to_numpy("A N C"))


# The unit cases whose layouts a logical array over their axes fills (no packed pairs).
RUNNABLE = [c for c in UNIT_CASES if c[1] in ("i8", "bf16") and "(" not in c[2]]


def test_most_unit_cases_run() -> None:
    assert len(RUNNABLE) == 16


@pytest.mark.parametrize("name, dtype, time, packet, out_time, out_packet, derived", RUNNABLE,
                         ids=[c[0] for c in RUNNABLE])
def test_the_reference_unit_cases_run(evaluator: str, name: str, dtype: str, time: str, packet: str, out_time: str,
                                      out_packet: str, derived: tuple[int, ...]) -> None:
    p = lambda text: tcp.parse(text, UNIT)  # noqa: E731
    layout = tcp.parse(f"{time}, {packet}", UNIT)
    sizes = layout.axis_sizes()
    axes = " ".join(sorted(sizes))
    x = np.random.default_rng(5).integers(-100, 100, size=[sizes[a] for a in sorted(sizes)]).astype(np.float32)
    scalar = tcp.i8 if dtype == "i8" else tcp.bf16
    s = tcp.CollectTensor[scalar, Chip, m["1"], m["1 # 64"], p(time), p(packet)](  # type: ignore[valid-type]
        dev.main, tcp.Tensor(x, axes, sizes=sizes))
    t = s.transpose(out_time=p(out_time), out_packet=p(out_packet))
    params = t.flow.steps[-1].params
    assert (params.in_rows, params.in_cols, params.packets_per_col, params.out_rows, params.iterations) == derived
    # Every live cell of the output, a cut one included, holds the element its layout names.
    expected = to_physical(cast(x, dtype), tuple(sorted(sizes)), t.mapping)
    live = plan(t.mapping).live
    assert np.array_equal(t.physical().reshape(-1)[live], expected[live])


def test_transpose_rules_at_run_time() -> None:
    s = Rows(dev.main, tcp.Tensor(ints(16, 8, 8, 8), "A C E F"))
    with pytest.raises(tcp.LayoutError) as caught:
        s.transpose(out_time=m["E, C"], out_packet=m["F # 32"])
    assert (caught.value.stage, caught.value.rule) == ("transpose", "CannotPlaceInRows")
    assert caught.value.detail == ("transpose: cannot place in_rows in Time (C, F) consistently with OutTime (E, C) | "
                                   "OutPacket (F # 32)")
    with pytest.raises(tcp.LayoutError) as caught:
        s.transpose(out_time=m["C, E"], out_packet=m["F # 16"])
    assert (caught.value.stage, caught.value.rule) == ("transpose", "OutputPacketSize")


def test_a_transposed_stream_goes_on_to_the_commit_only() -> None:
    s = Rows(dev.main, tcp.Tensor(ints(16, 8, 8, 8), "A C E F"))
    t = s.transpose(out_time=m["C, E"], out_packet=m["F # 32"])
    assert not hasattr(t, "transpose") and not hasattr(t, "contract_outer") and not hasattr(t, "collect")
    assert hasattr(t, "commit_trim")


SCALARS = {"i4": tcp.i4, "i8": tcp.i8, "bf16": tcp.bf16, "f32": tcp.f32}


@pytest.mark.parametrize("dtype, sizes, time, packet, out_time, out_packet, derived, cycles", BOOK)
def test_the_books_transposes_run_and_report_their_cycles(evaluator: str, dtype: str, sizes: dict[str, int], time: str,
                                                         packet: str, out_time: str, out_packet: str,
                                                         derived: tuple[int, ...], cycles: int) -> None:
    p = lambda text: tcp.parse(text, sizes)  # noqa: E731
    axes = tuple(sorted(sizes))
    x = np.random.default_rng(6).integers(-8, 8, size=[sizes[a] for a in axes]).astype(np.float32)
    s = tcp.CollectTensor[SCALARS[dtype], Chip, m["1"], m["1 # 256"], p(time), p(packet)](  # type: ignore[valid-type]
        dev.main, tcp.Tensor(x, " ".join(axes), sizes=sizes))
    t = s.transpose(out_time=p(out_time), out_packet=p(out_packet))
    assert np.array_equal(t.to_tensor().to_numpy(" ".join(axes)), x)
    assert t.explain().splitlines()[1].startswith(f"  transpose -> Time {out_time} | Packet {out_packet} ({dtype}): "
                                                  f"{cycles} cycles; ")


Columns = tcp.CollectTensor[tcp.i32, Chip, Cluster, Slice, m["N"], m["C # 8"]]


@tcp.kernel
def add_then_transpose(x: Columns) -> object:
    final = x.vector_init().vector_intra_slice_tag(tcp.TagMode.ZERO).vector_fxp(tcp.FxpBinaryOp.ADD_FXP, 5).vector_final()
    return final.transpose(out_time=m["C"], out_packet=m["N # 8"])


def test_a_vector_pass_result_transposes(evaluator: str) -> None:
    """A pass's result (i32 at Way8) goes to the transpose engine as a collected stream would."""
    x = np.random.default_rng(5).integers(-1000, 1000, size=(16, 2, 8)).astype(np.int32)
    t = add_then_transpose(Columns(dev.main, tcp.Tensor(x, "A N C")))
    assert repr(t) == '<TransposeTensor[i32, m["1"], m["1 # 2"], m["A # 64"], m["C"], m["N # 8"]]>'
    assert np.array_equal(t.to_tensor().to_numpy("A N C"), x + 5)
    assert np.array_equal(t.physical()[0, 0, 7, 3, :2], x[7, :, 3] + 5)
    result = tcp.try_kernel(add_then_transpose, evaluator=evaluator)
    assert (result.status, result.max_error) == ("PASS", 0.0), result.error
    assert [row.stage for row in result.stages] == ["vector_final", "transpose"]
