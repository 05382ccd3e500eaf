"""The reference's ``vrf_add_segmented`` end to end: i32 ``[A=128, B=512]`` over Slice ``A / 2 # 64``, ``B``
in the vector register file, two commit segments ``A % 2 = 1 #{!} 2``, on both evaluators."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import tcpdsl as tcp

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "vrf_add_segmented.py"


def _load() -> types.ModuleType:
    found = sys.modules.get("examples_vrf_add_segmented")
    if found is not None:
        return found
    spec = importlib.util.spec_from_file_location("examples_vrf_add_segmented", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("evaluator", ["fused", "simulate"])
def test_each_segment_adds_the_vrf_row(evaluator: str) -> None:
    ex = _load()
    rng = np.random.default_rng(42)
    lhs = rng.integers(-(2**31), 2**31, size=(128, 512), dtype=np.int64).astype(np.int32)
    rhs = rng.integers(-(2**31), 2**31, size=512, dtype=np.int64).astype(np.int32)
    with tcp.evaluator(evaluator):
        out = ex.vrf_add_segmented(ex.Lhs(tcp.Tensor(lhs, (ex.A, ex.B))), ex.Rhs(tcp.Tensor(rhs, (ex.B,))))
        assert repr(out) == '<DmTensor[i32, m["1"], m["1"], m["A / 2"], m["A % 2, B"]]>'  # A / 2 is 64 already
        got = out.to_tensor().to_numpy("A B")
        physical = out.physical()  # [Chip, Cluster, Slice, Element]
    # AddFxp wraps: both segments of every slice are written, each row plus the same VRF row.
    expected = ((lhs.astype(np.int64) + rhs + 2**31) % 2**32 - 2**31).astype(np.int32)
    assert np.array_equal(got, expected)
    assert np.array_equal(physical[0, 0, 5, 512:], expected[11])  # slice 5, segment A % 2 = 1


def test_the_run_report_lists_one_pass_per_segment() -> None:
    # The result is the DMA copy both segments wrote into: no stage table, so each pass has its line.
    result = tcp.try_kernel(_load().vrf_add_segmented)
    assert result.status == "PASS" and result.stages == ()
    assert [(p.steps, p.cycles, p.latency, p.in_table) for p in result.passes] == [(4, 64, 1, False)] * 2
    assert [line for line in str(result).splitlines() if line.startswith("  vector pass")] == [
        "  vector pass 1: 4 steps, 64 cycles streaming, 1 cycles latency",
        "  vector pass 2: 4 steps, 64 cycles streaming, 1 cycles latency",
    ]
