"""MLP projection through the contraction engine: fused evaluator vs numpy, and the simulator.

The kernel projects 256 tokens of H = 1024 features onto L = 3072 outputs (bf16 in, f32 out).
Weights are spread over 128 slices (L / 24), 8 lanes (L % 8) and 3 TRF rows of 1024 elements
(L / 8 % 3; 48 KiB of TRF per slice); the stream of activations is broadcast to every slice and
sequenced over those 3 rows (TimeBroadcast). No layout in the chain carries padding.

Printed: the median time of the fused evaluator end to end (the user's f32 or bf16 arrays laid out,
run, logical result read back), of np.einsum (default and optimize=True) and np.matmul on the same
logical f32 operands, paired ratios between them, and the simulator's median MAC/s (on a smaller
token count) against the fused path's.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra.nodes import Mapping, pairs
from tcpdsl.algebra.scope import parse
from tcpdsl.evaluate.fused import FusedEvaluator
from tcpdsl.tensors.placement import to_logical
from tcpdsl.evaluate.simulate import SimulateEvaluator, macs
from tcpdsl.tensors.chain import Chain, Operand
from tcpdsl.tensors.scalars import cast
from tcpdsl.verify import (
    LaneMode,
    verify_contract_lane,
    verify_contract_outer,
    verify_contract_packet,
    verify_contract_time,
)

H, L = 1024, 3072
REPEATS = 7
ROUNDS = 21


def chain_for(stream: npt.NDArray[Any], weight: npt.NDArray[Any], tokens: int) -> Chain:
    sizes = {"T": tokens, "H": H, "L": L}

    def p(text: str) -> Mapping:
        return parse(text, sizes)

    chip, cluster, slice_ = p("1"), p("1"), p("L / 24")
    time_, packet, lane, element = p("T, H / 16"), p("H % 16"), p("L % 8"), p("L / 8 % 3, H")
    out_time, out_packet = p("T, H / 32, L / 8 % 3"), p("H % 32")
    outer = verify_contract_outer("bf16", "bf16", time=time_, packet=packet, lane=lane, element=element, out_time=out_time, out_packet=out_packet)
    out_packet2, out_time2 = p("1"), p("T, L / 8 % 3")
    out_time3, out_packet3 = p("T, L / 8 % 3"), p("L % 8")
    mode = LaneMode.INTERLEAVED
    return Chain(
        stream=Operand(cast(stream, "bf16"), ("T", "H"), "bf16", pairs([chip, cluster, slice_, time_, packet])),
        weight=Operand(cast(weight, "bf16"), ("L", "H"), "bf16", pairs([chip, cluster, slice_, lane, element])),
        acc=outer.accumulator, chip=chip, cluster=cluster, slice=slice_, lane=lane, time=time_, packet=packet,
        element=element, outer_time=out_time, outer_packet=out_packet, outer=outer,
        packet_out=out_packet2, packet_params=verify_contract_packet("bf16", packet=out_packet, out_packet=out_packet2),
        time_out=out_time2, time_params=verify_contract_time(time=out_time, out_time=out_time2),
        lane_time=out_time3, lane_packet=out_packet3, mode=mode,
        lane_params=verify_contract_lane(lane=lane, time=out_time2, packet=out_packet2, out_time=out_time3, out_packet=out_packet3, pre_reduce_time=out_time, mode=mode),
    )


def median_seconds(fn: Callable[[], object], repeats: int = REPEATS) -> float:
    fn()  # warm caches (plans, BLAS threads)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved(candidates: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    """Seconds of every candidate in each of ``rounds`` rounds. Each round runs every candidate once,
    starting one further along each time, so a shared, noisy machine slows all of them alike."""
    for fn in candidates.values():
        fn()  # warm caches (plans, BLAS threads)
    names = list(candidates)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            start = time.perf_counter()
            candidates[name]()
            times[name].append(time.perf_counter() - start)
    return times


def paired_ratio(times: dict[str, list[float]], name: str, base: str) -> float:
    """The median over rounds of ``name``'s time over ``base``'s time in the same round."""
    return statistics.median(a / b for a, b in zip(times[name], times[base], strict=True))


def main() -> None:
    rng = np.random.default_rng(0)
    tokens = 256
    x = cast(rng.standard_normal((tokens, H)), "bf16").astype(np.float32)
    w = cast(rng.standard_normal((L, H)) / 32, "bf16").astype(np.float32)
    x16, w16 = cast(x, "bf16"), cast(w, "bf16")
    fused = FusedEvaluator()

    def end_to_end(stream: npt.NDArray[Any], weight: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """Lay the user's arrays out (casting them to bf16 storage), run, read the logical result back."""
        chain = chain_for(stream, weight, tokens)
        return to_logical(fused.run(chain), chain.result_mapping(), ("T", "L"), (tokens, L))

    reference = np.einsum("th,lh->tl", x, w, optimize=True)
    scale = np.einsum("th,lh->tl", np.abs(x), np.abs(w), optimize=True)
    for result in (end_to_end(x, w), end_to_end(x16, w16)):
        assert np.all(np.abs(result - reference) <= 1e-5 * scale), "fused result differs from einsum"

    candidates: dict[str, Callable[[], object]] = {
        "fused, from f32 data": lambda: end_to_end(x, w),
        "fused, from bf16 data": lambda: end_to_end(x16, w16),
        "np.einsum": lambda: np.einsum("th,lh->tl", x, w),
        "np.einsum(optimize=True)": lambda: np.einsum("th,lh->tl", x, w, optimize=True),
        "np.matmul": lambda: np.matmul(x, w.T),
    }
    times = interleaved(candidates, ROUNDS)
    flops = 2 * tokens * H * L
    bases = ("np.einsum(optimize=True)", "np.einsum", "np.matmul")
    print(f"MLP projection T={tokens} H={H} L={L}, bf16 -> f32 on the same logical f32 operands: medians of "
          f"{ROUNDS} interleaved rounds;")
    print("a ratio is the median of per-round ratios. Fused runs count laying the user's arrays out (the cast "
          "to bf16 storage), the run and reading the logical result back.")
    print(f"  {'':26s} {'median':>10s} {'GFLOP/s':>8s}" + "".join(f"  / {b:>24s}" for b in bases))
    for name, seconds in times.items():
        median = statistics.median(seconds)
        ratios = "".join(f"  {paired_ratio(times, name, b):26.2f}x" for b in bases)
        print(f"  {name:26s} {median * 1e3:7.2f} ms {flops / median / 1e9:8.1f}{ratios}")
    ratio = paired_ratio(times, "fused, from f32 data", bases[0])
    print(f"  target: fused from f32 data within 1.5x of np.einsum(optimize=True): {ratio:.3f}x, "
          f"{'met' if ratio <= 1.5 else 'missed'}")

    sim_tokens = 8
    xs, simulator = x[:sim_tokens], SimulateEvaluator()
    sim_chain = chain_for(xs, w, sim_tokens)
    t_sim = median_seconds(lambda: simulator.run(sim_chain), repeats=3)
    t_fused_small = median_seconds(lambda: fused.run(sim_chain))
    work = macs(sim_chain)
    useful = sim_tokens * H * L
    print(f"simulator at T={sim_tokens}: {work:,} MACs (of which {useful:,} useful)")
    print(f"  simulate                {t_sim * 1e3:9.2f} ms  ({work / t_sim / 1e6:8.1f} MMAC/s)")
    print(f"  fused, same kernel      {t_fused_small * 1e3:9.2f} ms  ({useful / t_fused_small / 1e6:8.1f} MMAC/s)")
    print(f"  fused / simulate speed  {t_sim / t_fused_small:9.1f}x")


if __name__ == "__main__":
    main()
