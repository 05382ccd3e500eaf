"""MLP projection through the contraction engine: fused evaluator vs numpy, and the simulator.

The kernel projects 256 tokens of H = 1024 features onto L = 3072 outputs (bf16 in, f32 out).
Weights are spread over 128 slices (L / 24), 8 lanes (L % 8) and 3 TRF rows of 1024 elements
(L / 8 % 3; 48 KiB of TRF per slice); the stream of activations is broadcast to every slice and
sequenced over those 3 rows (TimeBroadcast). No layout in the chain carries padding.

Printed: median end-to-end time of the fused evaluator (operands from logical arrays, run, logical
result read back), of np.einsum and np.matmul on the same logical f32 operands, their ratios, and
the simulator's median MAC/s (on a smaller token count) against the fused path's.
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
from tcpdsl.evaluate.layout import to_logical
from tcpdsl.evaluate.simulate import SimulateEvaluator, macs
from tcpdsl.tensors.carrier import Chain, Operand
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


def chain_for(stream: npt.NDArray[Any], weight: npt.NDArray[Any], tokens: int) -> Chain:
    sizes = {"T": tokens, "H": H, "L": L}

    def p(text: str) -> Mapping:
        return parse(text, sizes)

    chip, cluster, slice_ = p("1"), p("1"), p("L / 24")
    time_, packet, lane, element = p("T, H / 16"), p("H % 16"), p("L % 8"), p("L / 8 % 3, H")
    out_time, out_packet = p("T, H / 32, L / 8 % 3"), p("H % 32")
    outer = verify_contract_outer("bf16", "bf16", time_, packet, lane, element, out_time, out_packet)
    out_packet2, out_time2 = p("1"), p("T, L / 8 % 3")
    out_time3, out_packet3 = p("T, L / 8 % 3"), p("L % 8")
    mode = LaneMode.INTERLEAVED
    return Chain(
        stream=Operand(cast(stream, "bf16"), ("T", "H"), "bf16", pairs([chip, cluster, slice_, time_, packet])),
        weight=Operand(cast(weight, "bf16"), ("L", "H"), "bf16", pairs([chip, cluster, slice_, lane, element])),
        acc=outer.accumulator, chip=chip, cluster=cluster, slice=slice_, lane=lane, time=time_, packet=packet,
        element=element, outer_time=out_time, outer_packet=out_packet, outer=outer,
        packet_out=out_packet2, packet_params=verify_contract_packet("bf16", out_packet, out_packet2),
        time_out=out_time2, time_params=verify_contract_time(out_time, out_time2),
        lane_time=out_time3, lane_packet=out_packet3, mode=mode,
        lane_params=verify_contract_lane(lane, out_time2, out_packet2, out_time3, out_packet3, out_time, mode),
    )


def median_seconds(fn: Callable[[], object], repeats: int = REPEATS) -> float:
    fn()  # warm caches (plans, BLAS threads)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def paired(fn: Callable[[], object], base: Callable[[], object], repeats: int = 2 * REPEATS) -> tuple[float, float, float]:
    """Medians of ``fn`` and ``base`` timed alternately, and the median of their per-pair ratios
    (alternating keeps a shared, noisy machine from favouring either side)."""
    fn(), base()
    ours, theirs, ratios = [], [], []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        middle = time.perf_counter()
        base()
        end = time.perf_counter()
        ours.append(middle - start)
        theirs.append(end - middle)
        ratios.append((middle - start) / (end - middle))
    return statistics.median(ours), statistics.median(theirs), statistics.median(ratios)


def main() -> None:
    rng = np.random.default_rng(0)
    tokens = 256
    x = cast(rng.standard_normal((tokens, H)), "bf16").astype(np.float32)
    w = cast(rng.standard_normal((L, H)) / 32, "bf16").astype(np.float32)
    fused = FusedEvaluator()
    stored = chain_for(x, w, tokens)

    def end_to_end() -> npt.NDArray[Any]:
        chain = chain_for(x, w, tokens)
        return to_logical(fused.run(chain), chain.result_mapping(), ("T", "L"), (tokens, L))

    def run_and_read() -> npt.NDArray[Any]:
        return to_logical(fused.run(stored), stored.result_mapping(), ("T", "L"), (tokens, L))

    result = end_to_end()
    reference = np.einsum("th,lh->tl", x, w, optimize=True)
    scale = np.einsum("th,lh->tl", np.abs(x), np.abs(w), optimize=True)
    assert np.all(np.abs(result - reference) <= 1e-5 * scale), "fused result differs from einsum"

    def einsum() -> object:
        return np.einsum("th,lh->tl", x, w, optimize=True)

    def matmul() -> object:
        return np.matmul(x, w.T)

    t_fused, t_einsum, r_fused = paired(end_to_end, einsum)
    t_run, _, r_run = paired(run_and_read, einsum)
    _, t_matmul, r_matmul = paired(run_and_read, matmul)
    t_einsum_plain = median_seconds(lambda: np.einsum("th,lh->tl", x, w), repeats=3)
    flops = 2 * tokens * H * L
    print(f"MLP projection T={tokens} H={H} L={L}, bf16 -> f32 (medians; ratios are medians of paired runs)")
    print(f"  fused end to end        {t_fused * 1e3:9.2f} ms  ({flops / t_fused / 1e9:6.1f} GFLOP/s): cast the logical")
    print("                          f32 operands to bf16 storage, run, read the logical result back")
    print(f"  fused run + read back   {t_run * 1e3:9.2f} ms  ({flops / t_run / 1e9:6.1f} GFLOP/s): operands already in bf16")
    print(f"  np.einsum(optimize)     {t_einsum * 1e3:9.2f} ms   end to end / einsum = {r_fused:5.2f}x, "
          f"run / einsum = {r_run:5.2f}x (target <= 1.5x)")
    print(f"  np.matmul               {t_matmul * 1e3:9.2f} ms   run / matmul = {r_matmul:5.2f}x")
    print(f"  np.einsum (default)     {t_einsum_plain * 1e3:9.2f} ms   end to end / einsum = {t_fused / t_einsum_plain:5.2f}x")

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
