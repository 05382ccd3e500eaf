"""The stream back and the memory windows as typed stages, on both evaluators: the tier-A reference cases of
fetch -> (fetch_cast) -> collect -> (cast) -> commit_trim -> commit / commit_view, to_vrf, and tiles
(docs/stage-rules.md §4.1, §4.4-4.8; docs/runtime.md §4)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.numerics.scalars import cast

A = tcp.axis("A", 4096)
B = tcp.axis("B", 8)
X = tcp.axis("X", 32)
R = tcp.axis("R", 8)
K = tcp.axis("K", 32)
D = tcp.axis("D", 64)
N = tcp.axis("N", 8)
M = tcp.axis("M", 16)

Chip, Cluster = m["1"], m["1 # 2"]
dev = tcp.Device()


@pytest.fixture(params=["fused", "simulate"])
def evaluator(request: pytest.FixtureRequest) -> Iterator[str]:
    with tcp.evaluator(request.param):
        yield request.param


def ramp_i8() -> np.ndarray:
    """The reference's ramp: ``(a * 8 + b) as i8``."""
    raw = (np.arange(4096)[:, None] * 8 + np.arange(8)[None, :]) % 256
    return np.where(raw > 127, raw - 256, raw)


# -- section 1: round trips ------------------------------------------------------------------------------
def test_fetch_commit_simple(evaluator: str) -> None:
    """i8 [A=4096, B=8] in DM over Slice A / 16; fetched 64 bytes at a time, widened to i32 and committed."""
    x = ramp_i8()
    dm = tcp.DmTensor[tcp.i8, Chip, Cluster, m["A / 16"], m["A / 8 % 2, A % 8, B"]](tcp.Tensor(x, "A B"))
    fetched = dev.main.begin(dm.view()).fetch(out_time=m["A / 8 % 2"], out_packet=m["A % 8, B"])
    params = fetched.flow.steps[-1].params
    assert (params.read_size, params.read_bytes) == (32, 32.0)
    widened = fetched.fetch_cast(tcp.i32)
    assert widened.flow.steps[-1].params.read_size == 8  # one read casts into one flit of i32
    out = (widened.collect(out_time=m["A / 8 % 2, A % 8"], out_packet=m["B"])
           .commit_trim(out_packet=m["B"])
           .commit(element=m["A / 8 % 2, A % 8, B"]))
    assert isinstance(out, tcp.DmTensor[tcp.i32, Chip, Cluster, m["A / 16"], m["A % 16, B"]])
    values = out.to_tensor().to_numpy("B A")
    assert values.dtype == np.int32 and np.array_equal(values, x.T)


def test_identity_fetch_cast_round_trip(evaluator: str) -> None:
    """valid_cluster_size / valid_slice_size: i8 [A=8, B=32] on Slice `1 # 256`, an identity fetch_cast."""
    P, Q = tcp.axis("P", 8), tcp.axis("Q", 32)
    x = np.random.default_rng(0).integers(-128, 128, (8, 32))
    dm = tcp.DmTensor[tcp.i8, Chip, Cluster, m["1 # 256"], m["P, Q"]](tcp.Tensor(x, [P, Q]))
    out = (dev.main.begin(dm.view()).fetch(out_time=m["P"], out_packet=m["Q"]).fetch_cast(tcp.i8)
           .collect(out_time=m["P"], out_packet=m["Q"]).commit_trim(out_packet=m["Q"]).commit(element=m["P, Q"]))
    assert np.array_equal(out.to_tensor().to_numpy("P Q"), x)


def test_widen_bf16_then_narrow_back(evaluator: str) -> None:
    """The fetch adapter's bf16 -> f32 (exact) and f32 -> bf16 (RNGD: subnormals flush, NaN canonical)."""
    x = np.random.default_rng(1).standard_normal((4096, 8)).astype(np.float32)
    x[0, :4] = [1e-40, -1e-40, np.nan, 3.0e38]
    dm = tcp.DmTensor[tcp.bf16, Chip, Cluster, m["A / 16"], m["A / 8 % 2, A % 8, B"]](tcp.Tensor(x, "A B"))
    f32 = (dev.main.begin(dm.view()).fetch(out_time=m["A / 8 % 2"], out_packet=m["A % 8, B"]).fetch_cast(tcp.f32)
           .collect(out_time=m["A / 8 % 2, A % 8"], out_packet=m["B"]).commit_trim(out_packet=m["B"])
           .commit(element=m["A / 8 % 2, A % 8, B"]))
    expected = cast(x, "bf16")
    assert np.array_equal(f32.to_tensor().to_numpy("A B"), expected.astype(np.float32), equal_nan=True)
    assert f32.to_tensor().to_numpy("A B")[0, 0] == 0.0  # the subnormal flushed on the way into DM
    bits = f32.to_tensor().to_numpy("A B").view(np.uint32)[0, 2]
    assert bits == 0x7FC00000  # the canonical NaN, widened


# -- tiles and views ---------------------------------------------------------------------------------------
def test_swap_halves(evaluator: str) -> None:
    """bf16 [A=8, X=32]: the two read tiles `X = 16 # 32` written into the other half (Ar start counts elements)."""
    Ar = tcp.axis("Ar", 8)
    Dm = tcp.DmTensor[tcp.bf16, Chip, Cluster, m["1 # 256"], m["Ar, X"]]
    x = np.random.default_rng(2).standard_normal((8, 32)).astype(np.float32)
    src, dst = Dm(tcp.Tensor(x, [Ar, X])), Dm(tcp.Tensor(np.zeros((8, 32)), [Ar, X]))
    for start, other in ((0, 16), (16, 0)):
        read = src.view().tile(start, index=m["X"], len=16, element=m["Ar, X = 16 # 32"])
        write = dst.view_mut().tile(other, index=m["X"], len=16, element=m["Ar, X = 16 #{!} 32"])
        (dev.main.begin(read).fetch(out_time=m["Ar"], out_packet=m["X = 16"])
         .collect(out_time=m["Ar"], out_packet=m["X = 16"]).commit_trim(out_packet=m["X = 16"]).commit_view(write))
    expected = cast(x, "bf16")
    assert np.array_equal(dst.to_tensor().to_numpy("Ar X"), np.concatenate([expected[:, 16:], expected[:, :16]], 1))


def test_tile_window_commit(evaluator: str) -> None:
    """f32 D=64: the read tile `D = 32 # 64` at 0 copied into the write tile `D = 32 #{!} 64` at 32;
    the write tile's Bottom padding (the first half) is never written."""
    Dm = tcp.DmTensor[tcp.f32, Chip, m["1"], m["1 # 64"], m["D"]]
    x = np.arange(64, dtype=np.float32)
    src, dst = Dm(tcp.Tensor(x, [D])), Dm(tcp.Tensor(np.full(64, -1.0), [D]))
    read = src.view().tile(0, index=m["D"], len=32, element=m["D = 32 # 64"])
    write = dst.view_mut().tile(32, index=m["D"], len=32, element=m["D = 32 #{!} 64"])
    stream = (dev.main.begin(read).fetch(out_time=m["1"], out_packet=m["D = 32"]).fetch_cast(tcp.f32)
              .collect(out_time=m["D = 32 / 8"], out_packet=m["D = 32 % 8"]))
    written = stream.commit_trim(out_packet=m["D = 32 % 8"]).commit_view(write)
    assert written is dst
    assert np.array_equal(dst.to_tensor().to_numpy("D"), np.concatenate([np.full(32, -1.0), x[:32]]))


def test_tile_rules() -> None:
    Dm = tcp.DmTensor[tcp.f32, Chip, m["1"], m["1 # 64"], m["D"]]
    view = Dm(tcp.Tensor(np.zeros(64), [D])).view()
    with pytest.raises(tcp.LayoutError, match=r"tile: the window's Element must be D % 32 # 64, got D % 32 #\{!\} 64") as info:
        view.tile(0, index=m["D"], len=32, element=m["D = 32 #{!} 64"])
    assert (info.value.stage, info.value.rule) == ("tile", "UnexpectedView")
    with pytest.raises(tcp.LayoutError) as info:
        view.tile(40, index=m["D"], len=32, element=m["D = 32 # 64"])
    assert (info.value.stage, info.value.rule) == ("tile", "Start")


# -- section 4: to_vrf --------------------------------------------------------------------------------------
def test_to_vrf_at_capacity(evaluator: str) -> None:
    """i32 A=2048 (8192 bytes) on sub: F[1][A] -> FC(i32) -> C[A / 8][A % 8] -> to_vrf(A)."""
    Vc = tcp.axis("Vc", 2048)
    x = np.arange(2048) - 1024
    dm = tcp.DmTensor[tcp.i32, Chip, Cluster, m["1 # 256"], m["Vc"]](tcp.Tensor(x, [Vc]))
    vrf = (dev.sub.begin(dm.view()).fetch(out_time=m["1"], out_packet=m["Vc"]).fetch_cast(tcp.i32)
           .collect(out_time=m["Vc / 8"], out_packet=m["Vc % 8"]).to_vrf(element=m["Vc"]))
    assert vrf.flow.steps[-1].params.bytes == 8192
    assert np.array_equal(vrf.to_tensor().to_numpy("Vc"), x)


def test_to_vrf_over_capacity() -> None:
    Vo = tcp.axis("Vo", 4096)
    dm = tcp.DmTensor[tcp.i32, Chip, Cluster, m["1 # 256"], m["Vo"]](tcp.Tensor(np.zeros(4096), [Vo]))
    collected = dev.sub.begin(dm.view()).fetch(out_time=m["1"], out_packet=m["Vo"]).collect(
        out_time=m["Vo / 8"], out_packet=m["Vo % 8"])
    with pytest.raises(tcp.LayoutError, match="to_vrf: VRF data of 16384 bytes") as info:
        collected.to_vrf(element=m["Vo"])
    assert (info.value.stage, info.value.rule) == ("to_vrf", "ExceedsCapacity")


# -- section 6: cast and the commit adapter -----------------------------------------------------------------
def test_cast_i32_to_i8(evaluator: str) -> None:
    """The reference book's `cast_i32_to_i8`: i32 [B=4][A=8] -> i8 `A # 32`, wrapping."""
    Bq, Aq = tcp.axis("Bq", 4), tcp.axis("Aq", 8)
    x = np.arange(32).reshape(4, 8) * 37 - 500
    s = tcp.CollectTensor[tcp.i32, Chip, Cluster, m["1 # 256"], m["Bq"], m["Aq"]](dev.main, tcp.Tensor(x, [Bq, Aq]))
    out = s.cast(tcp.i8, out_packet=m["Aq # 32"])
    assert np.array_equal(out.to_tensor().to_numpy("Bq Aq"), cast(x, "i8"))
    committed = out.commit_trim(out_packet=m["Aq"]).commit(element=m["Bq, Aq"])
    assert np.array_equal(committed.to_tensor().to_numpy("Bq Aq"), cast(x, "i8"))


def test_cast_padded_and_packet_mismatch() -> None:
    """The reference book's `cast_padded`: i32 `A = 4 # 8` -> i8 `A = 4 # 32`; any other packet is refused."""
    Ap = tcp.axis("Ap", 4)
    s = tcp.CollectTensor[tcp.i32, Chip, Cluster, m["1 # 256"], m["1"], m["Ap # 8"]](dev.main, tcp.Tensor(np.arange(4), [Ap]))
    assert np.array_equal(s.cast(tcp.i8, out_packet=m["Ap # 32"]).to_tensor().to_numpy("Ap"), np.arange(4))
    with pytest.raises(tcp.LayoutError) as info:
        s.cast(tcp.i8, out_packet=m["Ap #{0} 32"])
    assert (info.value.stage, info.value.rule) == ("cast", "PacketMismatch")
    with pytest.raises(tcp.DtypeError, match="cast: the cast engine has no i32 to f32 cast") as dinfo:
        s.cast(tcp.f32, out_packet=m["Ap # 8"])
    assert dinfo.value.rule == "Pair"


def test_cast_f32_to_bf16_then_commit(evaluator: str) -> None:
    """The reference book's `cast_commit`: f32 [M=16][N=8] -> bf16 `N # 16` -> trim `N` -> commit `[M, N # 16]`."""
    x = np.random.default_rng(3).standard_normal((16, 8)).astype(np.float32)
    x[0, 0], x[0, 1] = 1e-39, np.nan
    s = tcp.CollectTensor[tcp.f32, Chip, Cluster, m["1 # 256"], m["M"], m["N"]](dev.main, tcp.Tensor(x, [M, N]))
    out = s.cast(tcp.bf16, out_packet=m["N # 16"]).commit_trim(out_packet=m["N"]).commit(element=m["M, N # 16"])
    got = out.to_tensor().to_numpy("M N")
    assert np.array_equal(got, cast(x, "bf16"), equal_nan=True)
    assert got[0, 0] == 0 and got.view(np.uint16)[0, 1] == 0x7FC0


@pytest.mark.parametrize(("dtype", "packet", "trimmed"), [
    (tcp.i8, "N # 32", "N"), (tcp.i8, "N # 32", "N # 16"), (tcp.i8, "N # 32", "N # 32"), (tcp.i8, "N # 32", "N # 8"),
    (tcp.bf16, "N # 16", "N"), (tcp.bf16, "N # 16", "N = 4"), (tcp.f32, "N", "N"),
])
def test_commit_trim_valid(dtype: type, packet: str, trimmed: str) -> None:
    """std commit_adapter.rs `valid::*`: full, partial and no trims, and a resize to the first values."""
    s = tcp.CollectTensor[dtype, Chip, Cluster, m["1 # 256"], m["1"], m[packet]](dev.main, tcp.Tensor(np.arange(8), [N]))
    out = s.commit_trim(out_packet=m[trimmed])
    assert out.layout["Packet"] == m[trimmed]


def test_commit_trim_rules() -> None:
    s = tcp.CollectTensor[tcp.i8, Chip, Cluster, m["1 # 256"], m["1"], m["N # 32"]](dev.main, tcp.Tensor(np.arange(8), [N]))
    with pytest.raises(tcp.LayoutError, match=r"commit_trim: the trimmed packet must be 8, 16, 24 or 32 bytes, got 4 bytes") as info:
        s.commit_trim(out_packet=m["N = 4"])
    assert (info.value.stage, info.value.rule) == ("commit_trim", "Width")
    with pytest.raises(tcp.LayoutError) as info:
        s.commit_trim(out_packet=m["N # 40"])
    assert (info.value.stage, info.value.rule) == ("commit_trim", "Width")


def test_commit_rules() -> None:
    s = tcp.CollectTensor[tcp.f32, Chip, Cluster, m["1 # 256"], m["M"], m["N"]](dev.main, tcp.Tensor(np.zeros((16, 8)), [M, N]))
    trimmed = s.commit_trim(out_packet=m["N"])
    for element, rule, text in [
        ("N, M", "StrideAlign", "commit: writing [M][N] into Element N, M strides 4 bytes per step (16 steps)"),
        ("M, N, 2", "Unwritten", "commit: the stream [M][N] leaves Element M, N, 2 partly unwritten"),
        ("M", "Unwritable", "commit: the stream [M][N] holds N (digit of stride 1, 8 values), which Element M cannot"),
    ]:
        with pytest.raises(tcp.LayoutError) as info:
            trimmed.commit(element=m[element])
        assert (info.value.stage, info.value.rule) == ("commit", rule) and text in str(info.value)


def test_a_contraction_wrapped_fetch_to_commit(evaluator: str) -> None:
    """i8_contract: the stream and weights fetched from DM with identity fetch_casts; the i32 result trimmed to
    R and committed."""
    Ac = tcp.axis("Ac", 8)
    rng = np.random.default_rng(4)
    x, w = rng.integers(-128, 128, (8, 32)), rng.integers(-128, 128, (8, 32))
    Sl = m["Ac # 64"]
    xs = tcp.DmTensor[tcp.i8, Chip, Cluster, Sl, m["K"]](tcp.Tensor(x, [Ac, K]))
    ws = tcp.DmTensor[tcp.i8, Chip, Cluster, Sl, m["R, K"]](tcp.Tensor(w, [R, K]))
    stream = (dev.main.begin(xs.view()).fetch(out_time=m["1"], out_packet=m["K"]).fetch_cast(tcp.i8)
              .collect(out_time=m["1"], out_packet=m["K"]))
    trf = (dev.sub.begin(ws.view()).fetch(out_time=m["R"], out_packet=m["K"]).fetch_cast(tcp.i8)
           .collect(out_time=m["R"], out_packet=m["K"]).to_trf(lane=m["R"], element=m["K"]))
    result = (stream.contract_outer(trf, out_time=m["1"], out_packet=m["K"])
              .contract_packet(out_packet=m["1"])
              .contract_time(out_time=m["1"])
              .contract_lane(out_time=m["1"], out_packet=m["R"]))
    out = result.commit_trim(out_packet=m["R"]).commit(element=m["R"])
    assert np.array_equal(out.to_tensor().to_numpy("Ac R"), x @ w.T)


H = tcp.axis("H", 16)
Stream16 = tcp.CollectTensor[tcp.bf16, Chip, Cluster, m["1 # 256"], m["M"], m["H"]]
Weights16 = tcp.CollectTensor[tcp.bf16, Chip, Cluster, m["1 # 256"], m["N"], m["H"]]


@tcp.kernel
def narrowed_matmul(x: Stream16, w: Weights16) -> object:
    trf = w.to_trf(lane=m["N"], element=m["H"])
    result = (x.contract_outer(trf, out_time=m["M"], out_packet=m["H"])
              .contract_packet(out_packet=m["1"])
              .contract_time(out_time=m["M"])
              .contract_lane(out_time=m["M"], out_packet=m["N"]))
    return result.cast(tcp.bf16, out_packet=m["N # 16"]).commit_trim(out_packet=m["N"]).commit(element=m["M, N # 16"])


@pytest.mark.parametrize("name", ["fused", "simulate"])
def test_the_harness_checks_a_narrowed_contraction_and_reports_each_engine(name: str) -> None:
    result = tcp.try_kernel(narrowed_matmul, seed=5, evaluator=name)
    assert result.status == "PASS", str(result)
    text = str(result)
    for stage in ("contract_lane", "cast", "commit_trim", "commit", "write_bytes 16"):
        assert stage in text, text
    assert "(bf16 -> bf16)" in text.splitlines()[0]


def test_explain_lists_each_engine_with_its_cycles_and_a_total() -> None:
    s = tcp.CollectTensor[tcp.f32, Chip, Cluster, m["1 # 256"], m["M"], m["N"]](dev.main, tcp.Tensor(np.zeros((16, 8)), [M, N]))
    text = s.cast(tcp.bf16, out_packet=m["N # 16"]).commit_trim(out_packet=m["N"]).commit(element=m["M, N # 16"]).explain()
    assert text.splitlines()[1:] == [
        "  cast -> Time M | Packet N # 16 (bf16): 16 cycles; valid 8, out_elements 16",
        "  commit_trim -> Time M | Packet N (bf16): 16 cycles",
        "  commit -> Element M, N # 16 (bf16): 16 cycles; time_entries 16:16, packet_entries 8:1, valid_bytes 16, "
        "write_bytes 16, time_size 16",
        "  total: 16 cycles per slice",
    ]


def test_commit_cast_and_relu(evaluator: str) -> None:
    """The commit adapter's f32 -> bf16 with a 32-byte trimmed packet; the relu variant clamps first."""
    x = np.random.default_rng(6).standard_normal((16, 8)).astype(np.float32)
    s = tcp.CollectTensor[tcp.f32, Chip, Cluster, m["1 # 256"], m["M"], m["N"]](dev.main, tcp.Tensor(x, [M, N]))
    trimmed = s.commit_trim(out_packet=m["N"])
    plain = trimmed.commit_cast(tcp.bf16).commit(element=m["M, N"])
    relu = trimmed.commit_cast_relu(tcp.bf16).commit(element=m["M, N"])
    assert np.array_equal(plain.to_tensor().to_numpy("M N"), cast(x, "bf16"))
    assert np.array_equal(relu.to_tensor().to_numpy("M N"), cast(np.maximum(x, 0), "bf16"))


def test_commit_cast_rules() -> None:
    s = tcp.CollectTensor[tcp.i32, Chip, Cluster, m["1 # 256"], m["M"], m["N"]](dev.main, tcp.Tensor(np.zeros((16, 8)), [M, N]))
    with pytest.raises(tcp.DtypeError, match="commit_cast: the commit adapter casts only f32 to bf16, got i32 to i8") as info:
        s.commit_trim(out_packet=m["N"]).commit_cast(tcp.i8)
    assert info.value.rule == "Pair"
    f = tcp.CollectTensor[tcp.f32, Chip, Cluster, m["1 # 256"], m["M"], m["N"]](dev.sub, tcp.Tensor(np.zeros((16, 8)), [M, N]))
    stream = dev.sub.begin(f.commit_trim(out_packet=m["N"]).commit(element=m["M, N"]).view()).fetch(
        out_time=m["M"], out_packet=m["N"]).collect(out_time=m["M"], out_packet=m["N"])
    with pytest.raises(tcp.DtypeError, match="only the main context casts in the commit adapter, got sub") as info:
        stream.commit_trim(out_packet=m["N"]).commit_cast(tcp.bf16)
    assert info.value.rule == "MainOnly"


def test_commit_view_bottom_pad(evaluator: str) -> None:
    """f32 [T=512, Q % 56 = 8] on Slice `T / 32 # 256`, committed into the write tile `[T % 32, Q = 8 #{!} 56]`
    of a wider tensor: the 48 values of Q outside the tile are never written."""
    T, Q = tcp.axis("T", 512), tcp.axis("Q", 56)
    Slice = m["T / 32 # 256"]
    x = np.random.default_rng(7).standard_normal((512, 8)).astype(np.float32)
    src = tcp.DmTensor[tcp.f32, Chip, Cluster, Slice, m["T % 32, Q = 8"]](tcp.Tensor(x, m["T, Q = 8"]))
    dst = tcp.DmTensor[tcp.f32, Chip, Cluster, Slice, m["T % 32, Q"]](tcp.Tensor(np.full((512, 56), -1.0), [T, Q]))
    window = dst.view_mut().tile(0, index=m["Q"], len=8, element=m["T % 32, Q = 8 #{!} 56"])
    (dev.main.begin(src.view()).fetch(out_time=m["T % 32"], out_packet=m["Q = 8"])
     .collect(out_time=m["T % 32"], out_packet=m["Q = 8"]).commit_trim(out_packet=m["Q = 8"]).commit_view(window))
    got = dst.to_tensor().to_numpy("T Q")
    assert np.array_equal(got[:, :8], x) and np.all(got[:, 8:] == -1)


@pytest.mark.parametrize(("time", "trimmed", "element", "axes"), [
    ("Ai", "Ni", "Ai, Ni", "Ai Ni"),  # full_trim_then_commit
    ("Ai", "Ni # 16", "Ai, Ni # 16", "Ai Ni"),  # partial_trim_then_commit
    ("Ai, Bi", "Ni", "Bi, Ai, Ni", "Ai Bi Ni"),  # time_transpose
    ("Ai, Ci # 8", "Ni", "Ai, Ci # 8, Ni", "Ai Ci Ni"),  # time padding landing in DM padding
])
def test_commit_unit_cases(evaluator: str, time: str, trimmed: str, element: str, axes: str) -> None:
    """std commit.rs: i8 packets `N # 32` (N=8, A=4, B=3, C=4) trimmed and committed, on both evaluators."""
    Ai, Bi, Ci, Ni = tcp.axis("Ai", 4), tcp.axis("Bi", 3), tcp.axis("Ci", 4), tcp.axis("Ni", 8)  # named in m[...]
    sizes = {"Ai": 4, "Bi": 3, "Ci": 4, "Ni": 8}
    shape = tuple(sizes[a] for a in axes.split())
    x = np.arange(int(np.prod(shape))).reshape(shape) % 100
    s = tcp.CollectTensor[tcp.i8, Chip, Cluster, m["1 # 256"], m[time], m["Ni # 32"]](dev.main, tcp.Tensor(x, axes))
    out = s.commit_trim(out_packet=m[trimmed]).commit(element=m[element])
    assert np.array_equal(out.to_tensor().to_numpy(axes), x)


def test_book_register_stores(evaluator: str) -> None:
    """The register files chapter: i8 B=32 fetched into the TRF, i32 B=64 stored into the VRF."""
    Bt, Bv, Lt = tcp.axis("Bt", 32), tcp.axis("Bv", 64), tcp.axis("Lt", 8)
    w = np.random.default_rng(8).integers(-128, 128, (8, 32))
    dm = tcp.DmTensor[tcp.i8, Chip, Cluster, m["1 # 256"], m["Lt, Bt"]](tcp.Tensor(w, [Lt, Bt]))
    trf = (dev.sub.begin(dm.view()).fetch(out_time=m["Lt"], out_packet=m["Bt"])
           .collect(out_time=m["Lt"], out_packet=m["Bt"]).to_trf(lane=m["Lt"], element=m["Bt"]))
    assert np.array_equal(trf.to_tensor().to_numpy("Lt Bt"), w)
    v = np.arange(64) * 3
    ints = tcp.DmTensor[tcp.i32, Chip, Cluster, m["1 # 256"], m["Bv"]](tcp.Tensor(v, [Bv]))
    vrf = (dev.sub.begin(ints.view()).fetch(out_time=m["Bv / 8"], out_packet=m["Bv % 8"])
           .collect(out_time=m["Bv / 8"], out_packet=m["Bv % 8"]).to_vrf(element=m["Bv"]))
    assert vrf.flow.steps[-1].params.bytes == 256
    assert np.array_equal(vrf.to_tensor().to_numpy("Bv"), v)


Xs = tcp.axis("Xs", 32)
Halves = tcp.DmTensor[tcp.bf16, Chip, Cluster, m["1 # 256"], m["M, Xs"]]


@tcp.kernel
def swap_halves(src: Halves, dst: Halves) -> object:
    for start, other in ((0, 16), (16, 0)):
        read = src.view().tile(start, index=m["Xs"], len=16, element=m["M, Xs % 16 # 32"])
        write = dst.view_mut().tile(other, index=m["Xs"], len=16, element=m["M, Xs % 16 #{!} 32"])
        (dev.main.begin(read).fetch(out_time=m["M"], out_packet=m["Xs % 16"])
         .collect(out_time=m["M"], out_packet=m["Xs % 16"]).commit_trim(out_packet=m["Xs % 16"]).commit_view(write))
    return dst


@pytest.mark.parametrize("name", ["fused", "simulate"])
def test_the_oracle_follows_tiles_and_writes_into_windows(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert tcp.try_kernel(swap_halves, seed=1, evaluator=name).status == "PASS"
    import tcpdsl.evaluate.fused as fused
    import tcpdsl.tensors.stream as stream

    # Every write lands in the other half: in the buffers the simulator moves, and in the fused
    # evaluator's write of the logical values (a slice of them, or a planned scatter).
    shifted = stream.write_window
    monkeypatch.setattr(stream, "write_window", lambda parent, written, element, offset, mapping: shifted(
        parent, written, element, 16 - offset, mapping))
    planned = fused.written_values
    monkeypatch.setattr(fused, "written_values", lambda *args: planned(*args[:7], 16 - args[7], args[8]))
    boxed = fused.box_written
    monkeypatch.setattr(fused, "box_written", lambda *args: boxed(*args[:7], 16 - args[7]))
    broken = tcp.try_kernel(swap_halves, seed=1, evaluator=name)
    assert broken.status == "FAIL" and "result differs from the oracle" in str(broken)
