"""Kernels as a user runs them, through the public API only, against numpy.

Each kernel is written the way the README writes one: axes, ``tcp.CollectTensor[...]`` and
``tcp.TrfTensor[...]`` types, a ``@tcp.kernel`` chaining the four stages. One *public call* wraps
the user's arrays in ``tcp.Tensor``, lays them out (``CollectTensor[...](dev.main, ...)``,
``TrfTensor[...](...)``), runs the kernel and reads the result with ``.to_tensor().to_numpy(...)``.
Its baseline quantizes the same arrays to the kernel's input dtype and calls
``np.einsum(..., optimize=True)`` (the integer kernel sums in float64, which is exact at these
sizes and is how numpy reaches BLAS for integers).

Printed, all from one run:

* per kernel, the medians of interleaved rounds (each round runs both, alternating which goes
  first) and the median of the per-round ratios public / baseline;
* the cold first call of each kernel, in a fresh interpreter (the kernel's types defined and numpy
  warmed by one baseline call, no kernel run yet), against the median warm call of that interpreter;
* peak traced memory (tracemalloc) of the cold call, a warm call and the baseline, each in a fresh
  interpreter;
* the stage-faithful simulator on the MLP at T = 8 (``with tcp.evaluator("simulate")``) against
  the fused evaluator on the same call.

Run: ``python benchmarks/bench_public.py [--rounds N] [--only NAME ...]``.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
from timing import interleaved, paired_ratio

import tcpdsl as tcp
from tcpdsl import m

Array = np.ndarray[Any, Any]
Call = Callable[[], Array]


@dataclass(frozen=True)
class Case:
    """A kernel with its data: the public call, the numpy baseline, and how many rounds to time."""

    name: str
    what: str
    public: Call
    baseline: Call
    rounds: int
    rtol: float  # results agree with the baseline within rtol * sum of |products| (0: exactly)


def _gaussian(shape: tuple[int, ...], seed: int, scale: float = 1.0) -> Array:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _quantized_einsum(spec: str, x: Array, w: Array, dtype: Any) -> Array:
    return np.einsum(spec, x.astype(dtype).astype(np.float32), w.astype(dtype).astype(np.float32), optimize=True)


def mlp(tokens: int, evaluator: str = "fused", zeros: float = 0.0) -> Case:
    """An MLP projection: 3072 outputs of 1024 features; the stream is broadcast to every slice.

    ``zeros`` is the share of exact zeros in both operands (ReLU outputs, pruned weights)."""
    T, H, L = tcp.axis("T", tokens), tcp.axis("H", 1024), tcp.axis("L", 3072)
    Chip, Cluster, Slice = m["1"], m["1 # 2"], m["L / 24 # 256"]
    Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["T, H / 16"], m["H % 16"]]
    Weights = tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["L % 8"], m["L / 8 % 3, H"]]
    Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["T, L / 8 % 3"], m["L % 8"]]
    outer_time, outer_packet = m["T, H / 32, L / 8 % 3"], m["H % 32"]
    kept, lanes, one = m["T, L / 8 % 3"], m["L % 8"], m["1"]

    @tcp.kernel
    def project(x: Stream, w: Weights) -> Out:
        return (
            x.contract_outer(w, out_time=outer_time, out_packet=outer_packet)
            .contract_packet(out_packet=one)
            .contract_time(out_time=kept)
            .contract_lane(out_time=kept, out_packet=lanes, evaluator=evaluator)
        )

    dev = tcp.Device()
    x, w = _gaussian((T.n, H.n), 1), _gaussian((L.n, H.n), 2, 1 / 32)
    if zeros:
        rng = np.random.default_rng(10)
        x[rng.random(x.shape) < zeros] = 0.0
        w[rng.random(w.shape) < zeros] = 0.0
    sizes = {"T": T.n, "H": H.n, "L": L.n}

    def public() -> Array:
        y = project(Stream(dev.main, tcp.Tensor(x, "T H", sizes=sizes)), Weights(tcp.Tensor(w, "L H", sizes=sizes)))
        return y.to_tensor().to_numpy("T L")

    name, what = f"mlp-T{tokens}", f"MLP T={tokens} H=1024 L=3072 bf16, stream broadcast over 128 slices"
    if zeros:
        name, what = f"{name}-zeros", f"{what}, {zeros:.0%} exact zeros"
    return Case(name, what,
                public, lambda: _quantized_einsum("th,lh->tl", x, w, ml_dtypes.bfloat16), 21, 1e-5)


def _gemm(dtype: Any, acc: Any, m_size: int, k_size: int, n_size: int) -> Callable[[Array, Array], Array]:
    """A GEMM whose TRF holds all of K: N over 128 slices and 8 lanes, one flit of K per Packet
    (16 bf16 or 32 8-bit elements) and two flits per 64-byte packet."""
    M, K, N = tcp.axis("M", m_size), tcp.axis("K", k_size), tcp.axis("N", n_size)
    flit = 256 // dtype.bits
    Chip, Cluster, Slice = m["1"], m["1 # 2"], m["N / 8"]
    Stream = tcp.CollectTensor[dtype, Chip, Cluster, Slice, m[f"M, K / {flit}"], m[f"K % {flit}"]]
    Weights = tcp.TrfTensor[dtype, Chip, Cluster, Slice, m["N % 8"], m["K"]]
    Out = tcp.ContractTensor[acc, Chip, Cluster, Slice, m["M"], m["N % 8"]]
    outer_time, outer_packet = m[f"M, K / {2 * flit}"], m[f"K % {2 * flit}"]
    rows, lanes, one = m["M"], m["N % 8"], m["1"]

    @tcp.kernel
    def matmul(x: Stream, w: Weights) -> Out:
        return (
            x.contract_outer(w, out_time=outer_time, out_packet=outer_packet)
            .contract_packet(out_packet=one)
            .contract_time(out_time=rows)
            .contract_lane(out_time=rows, out_packet=lanes)
        )

    dev = tcp.Device()
    sizes = {"M": M.n, "K": K.n, "N": N.n}

    def public(x: Array, w: Array) -> Array:
        y = matmul(Stream(dev.main, tcp.Tensor(x, "M K", sizes=sizes)), Weights(tcp.Tensor(w, "N K", sizes=sizes)))
        return y.to_tensor().to_numpy("M N")

    return public


def gemm() -> Case:
    public = _gemm(tcp.bf16, tcp.f32, 512, 4096, 1024)
    x, w = _gaussian((512, 4096), 3), _gaussian((1024, 4096), 4, 1 / 64)
    return Case("gemm", "GEMM M=512 K=4096 N=1024 bf16", lambda: public(x, w),
                lambda: _quantized_einsum("mk,nk->mn", x, w, ml_dtypes.bfloat16), 15, 1e-5)


def readme() -> Case:
    """The README's matmul (examples/matmul.py): weights loaded with to_trf, one slice of 256 used."""
    A, B, C = tcp.axis("A", 32), tcp.axis("B", 32), tcp.axis("C", 8)
    Chip, Cluster, Slice = m["1"], m["1 # 2"], m["1 # 256"]
    Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
    Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / 16"], m["B % 16"]]
    Out = tcp.ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]]
    lane, element, rows, whole, lanes, one = m["C"], m["B"], m["A"], m["B"], m["C"], m["1"]

    @tcp.kernel
    def matmul(x: Stream, w: Weights) -> Out:
        trf = w.to_trf(lane=lane, element=element)
        return (
            x.contract_outer(trf, out_time=rows, out_packet=whole)
            .contract_packet(out_packet=one)
            .contract_time(out_time=rows)
            .contract_lane(out_time=rows, out_packet=lanes, mode=tcp.LaneMode.INTERLEAVED)
        )

    dev = tcp.Device()
    x, w = _gaussian((A.n, B.n), 5), _gaussian((C.n, B.n), 6)
    sizes = {"A": A.n, "B": B.n, "C": C.n}

    def public() -> Array:
        y = matmul(Stream(dev.main, tcp.Tensor(x, "A B", sizes=sizes)), Weights(dev.sub, tcp.Tensor(w, "C B", sizes=sizes)))
        return y.to_tensor().to_numpy("A C")

    return Case("readme", "README matmul A=32 B=32 C=8 bf16", public,
                lambda: _quantized_einsum("ab,cb->ac", x, w, ml_dtypes.bfloat16), 301, 1e-5)


def int8() -> Case:
    public = _gemm(tcp.i8, tcp.i32, 256, 2048, 1024)
    rng = np.random.default_rng(7)
    x = rng.integers(-128, 128, (256, 2048), dtype=np.int8)
    w = rng.integers(-128, 128, (1024, 2048), dtype=np.int8)

    def baseline() -> Array:
        exact = np.einsum("mk,nk->mn", x.astype(np.float64), w.astype(np.float64), optimize=True)
        return exact.astype(np.int32)

    return Case("i8", "i8 -> i32 GEMM M=256 K=2048 N=1024 (baseline: exact sums via float64 BLAS)",
                lambda: public(x, w), baseline, 11, 0.0)


def fp8() -> Case:
    public = _gemm(tcp.f8e4m3, tcp.f32, 256, 2048, 1024)
    x, w = _gaussian((256, 2048), 8), _gaussian((1024, 2048), 9)
    return Case("f8", "f8e4m3 -> f32 GEMM M=256 K=2048 N=1024", lambda: public(x, w),
                lambda: _quantized_einsum("mk,nk->mn", x, w, ml_dtypes.float8_e4m3fn), 11, 1e-5)


CASES: dict[str, Callable[[], Case]] = {
    "mlp-T256": lambda: mlp(256), "mlp-T256-zeros": lambda: mlp(256, zeros=0.2), "gemm": gemm, "readme": readme, "i8": int8, "f8": fp8,
}


def _agree(case: Case) -> None:
    got, want = case.public().astype(np.float64), case.baseline().astype(np.float64)
    error = float(np.abs(got - want).max())
    bound = case.rtol * float(np.abs(want).max()) * 8 if case.rtol else 0.0
    if error > bound:
        raise SystemExit(f"{case.name}: the public call differs from the baseline by {error:.3g}")


def _size(count: float) -> str:
    return f"{count / (1 << 20):6.1f} MiB" if count >= 1 << 20 else f"{count / 1024:6.1f} KiB"


def _child(name: str, mode: str) -> None:
    """Run in a fresh interpreter: print one JSON object for the parent."""
    case = CASES[name]()
    if mode == "cold":
        case.baseline()  # numpy's own first-call costs (einsum's parser, BLAS threads) are not the kernel's
        start = time.perf_counter()
        case.public()
        cold = time.perf_counter() - start
        warm = []
        for _ in range(5):
            start = time.perf_counter()
            case.public()
            warm.append(time.perf_counter() - start)
        print(json.dumps({"cold": cold, "warm": statistics.median(warm)}))
        return
    peaks = {}
    for label, fn in (("cold", case.public), ("warm", case.public), ("baseline", case.baseline)):
        tracemalloc.start()
        fn()
        peaks[label] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    print(json.dumps(peaks))


def _in_child(name: str, mode: str) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--child", name, mode], capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _simulator(rounds: int) -> None:
    fused, simulated = mlp(8), mlp(8, "simulate")
    if not np.allclose(fused.public(), simulated.public(), rtol=1e-5, atol=1e-4):
        raise SystemExit("mlp-T8: the simulator and the fused evaluator disagree")
    times = interleaved({"simulate": simulated.public, "fused": fused.public}, rounds)
    print(f"\nsimulator, MLP T=8 through the public call: simulate {statistics.median(times['simulate']) * 1e3:.1f} ms, "
          f"fused {statistics.median(times['fused']) * 1e3:.2f} ms, ratio {paired_ratio(times, 'simulate', 'fused'):.1f}x "
          f"(target <= 20x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=0, help="rounds per kernel (default: per kernel)")
    parser.add_argument("--only", nargs="*", default=list(CASES), choices=list(CASES) + ["simulate"])
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return
    print("public call / (quantize, then np.einsum(optimize=True)); medians of interleaved rounds")
    header = f"{'kernel':10s} {'public':>10s} {'baseline':>10s} {'ratio':>7s} {'cold':>9s} {'warm':>9s} {'cold/warm':>9s} " \
             f"{'peak cold':>10s} {'peak warm':>10s} {'peak base':>10s} {'mem ratio':>9s}"
    rows = []
    for name in args.only:
        if name == "simulate":
            continue
        case = CASES[name]()
        _agree(case)
        times = interleaved({"public": case.public, "baseline": case.baseline}, args.rounds or case.rounds)
        cold = _in_child(name, "cold")
        memory = _in_child(name, "memory")
        rows.append(
            f"{name:10s} {statistics.median(times['public']) * 1e3:7.2f} ms {statistics.median(times['baseline']) * 1e3:7.2f} ms "
            f"{paired_ratio(times, 'public', 'baseline'):6.2f}x {cold['cold'] * 1e3:6.1f} ms {cold['warm'] * 1e3:6.1f} ms "
            f"{cold['cold'] / cold['warm']:8.1f}x {_size(memory['cold'])} {_size(memory['warm'])} "
            f"{_size(memory['baseline'])} {max(memory['cold'], memory['warm']) / memory['baseline']:8.1f}x"
        )
        print(f"  {name}: {case.what}", flush=True)
    print(header)
    for row in rows:
        print(row)
    print("targets: mlp-T256, mlp-T256-zeros and gemm ratio <= 1.2x, readme <= 5x, cold/warm <= 3x, mem ratio <= 4x")
    if "simulate" in args.only or args.only == list(CASES):
        _simulator(args.rounds or 5)


if __name__ == "__main__":
    main()
