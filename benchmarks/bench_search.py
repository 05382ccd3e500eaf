"""Layout search on the reference transformer's contractions: plan cycles against the hand-written ones.

For each contraction kernel of the reference's Qwen3 decode step (benchmarks/reference_kernels.py
holds its hand-written layouts), the hand-written kernel is built and run through the public API
and costed with the whole-kernel model (weight DMA, TRF load, contraction, commit:
docs/cost-model.md); ``tcp.search`` is then asked for the best plan of the same einsum at the same
sizes. Printed per kernel: the hand-written contraction alone, both whole-kernel cycle counts per
slice and their ratio (at most 1 means the search matched or beat the hand layout), whether the
search exhausted its space, the first search's time and the median of interleaved rounds, and the
best plan's layouts and breakdown (a split reduction's reduced Slice as ``OutSlice``, and its
inter-slice reduce as the ``vector pass`` row, docs/search.md §5). The last two rows have no
hand-written counterpart: the weighted sum written as the plain einsum ``ngt,tnd->ngd`` (the search
then chooses how to split the chunk over slices), and a GEMV with a long K and few outputs, where a
split reduction wins most.
"""

from __future__ import annotations

import statistics
import sys
import time
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import tcpdsl as tcp
from tcpdsl.cost import WholeKernelCost, whole_chain_cost
from tcpdsl.planner import Plans

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reference_kernels as ref  # noqa: E402  (the hand-written layouts next to this file)

ROUNDS = 3

# name, einsum, sizes, hand-written kernel (None: no counterpart)
KERNELS: list[tuple[str, str, dict[str, int], Callable[..., Any] | None]] = [
    ("q projection", "h,qh->q", {"H": 1024, "Q": 2048}, ref.proj_q),
    ("p projection (k, v)", "h,ph->p", {"H": 1024, "P": 1024}, ref.proj_p),
    ("o projection", "q,hq->h", {"Q": 2048, "H": 1024}, ref.proj_o),
    ("mlp up", "h,lh->l", {"H": 1024, "L": 3072}, ref.mlp_up),
    ("mlp gate", "h,lh->l", {"H": 1024, "L": 3072}, ref.mlp_up),
    ("mlp down", "l,hl->h", {"L": 3072, "H": 1024}, ref.mlp_down),
    ("attention score", "ngd,tnd->ngt", {"N": 8, "G": 2, "D": 128, "T": 512}, ref.attention_score),
    ("attention weighted sum", "ngus,usnd->nugd", {"N": 8, "G": 2, "U": 32, "S": 16, "D": 128}, ref.attention_weighted_sum),
    ("lm_head tile", "h,wh->w", {"H": 1024, "W": 8192}, ref.lm_head_tile),
    ("weighted sum, plain einsum", "ngt,tnd->ngd", {"N": 8, "G": 2, "T": 512, "D": 128}, None),
    ("GEMV, long K, 8 outputs", "k,nk->n", {"K": 32768, "N": 8}, None),
]


def hand_written_cost(kernel: Callable[..., Any], einsum: str, sizes: dict[str, int]) -> WholeKernelCost:
    """Build the kernel's inputs from random logical data, run it, and cost its whole kernel."""
    hints = typing.get_type_hints(kernel)
    operands = einsum.split("->")[0].split(",")
    rng = np.random.default_rng(0)
    device = tcp.Device()
    inputs = []
    for (name, hint), letters, context in zip(list(hints.items())[:2], operands, (device.main, device.sub)):
        axes = tuple(c.upper() for c in letters)
        data = rng.standard_normal(tuple(sizes[a] for a in axes))
        inputs.append(hint(context, tcp.Tensor(data, axes, sizes=sizes)))
    return whole_chain_cost(kernel(*inputs).chain)


def main() -> None:
    hand = {name: hand_written_cost(k, e, s) if k is not None else None for name, e, s, k in KERNELS}
    seconds: dict[str, list[float]] = {name: [] for name, *_ in KERNELS}
    plans: dict[str, Plans] = {}
    for _ in range(ROUNDS):
        for name, einsum, sizes, _kernel in KERNELS:
            start = time.perf_counter()
            plans[name] = tcp.search(einsum, sizes, top=1, budget=30.0)
            seconds[name].append(time.perf_counter() - start)

    header = ("kernel", "einsum", "hand contraction", "hand", "plan", "plan/hand", "exhausted", "first s", "median s")
    rows = [header]
    for name, einsum, _sizes, _kernel in KERNELS:
        best = plans[name][0]
        written = hand[name]
        contraction = str(written.contraction.total_cycles) if written else "-"
        total = str(written.total_cycles) if written else "-"
        ratio = f"{best.cycles / written.total_cycles:.3f}" if written else "-"
        rows.append((
            name, einsum, contraction, total, str(best.cycles), ratio, str(plans[name].exhausted),
            f"{seconds[name][0]:.3f}", f"{statistics.median(seconds[name]):.3f}",
        ))
    widths = [max(len(r[c]) for r in rows) for c in range(len(header))]
    print(f"layout search, best of top=1, {ROUNDS} interleaved rounds (whole-kernel cycles per slice)")
    for row in rows:
        print("  " + "  ".join(cell.rjust(w) if c >= 2 else cell.ljust(w) for c, (cell, w) in enumerate(zip(row, widths))))
    print("\nbest plans:")
    for name, *_ in KERNELS:
        t = plans[name][0].layouts
        reduced = f" | OutSlice {t.out_slice}" if t.out_slice else ""
        print(f"  {name}: Cluster {t.cluster} | Slice {t.slice} | Time {t.stream_time} | Packet {t.stream_packet}"
              f" | Lane {t.lane} | Element {t.element} | {t.mode.lower()}{reduced}")
    print("\nbreakdowns (hand / plan):")
    for name, *_ in KERNELS:
        written = hand[name]
        hand_text = ", ".join(f"{k} {v}" for k, v in written.breakdown) if written else "-"
        plan_text = ", ".join(f"{k} {v}" for k, v in plans[name][0].breakdown.items())
        print(f"  {name}:\n    hand: {hand_text}\n    plan: {plan_text}")


if __name__ == "__main__":
    main()
