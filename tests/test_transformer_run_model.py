"""The end-to-end driver's comparison (examples/transformer/run_model.py): one decoder step through the kernels,
the token in KV chunk 1, within the reference's tolerances of the float64 model at every boundary, on both
evaluators. The final layer's 19 tiles are left to the driver itself (seconds on the fused evaluator, which
``tcpdsl run`` drives in test_examples.py; minutes on the simulator); its kernels are checked tile by tile in
test_transformer_lm_head.py."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

import tcpdsl as tcp
from test_transformer_vector import FOLDER, MODEL

H = tcp.axis("H", 1024)  # the example's axes, declared where this module names them
N = tcp.axis("N", 8)
G = tcp.axis("G", 2)
D = tcp.axis("D", 128)

sys.path.insert(0, str(FOLDER))  # the driver imports its sibling kernels by plain name
import run_model as RUN  # noqa: E402

BOUNDARIES = ["projection q", "projection k row", "projection v row", "attention (two chunks)", "decoder stream"]


@pytest.fixture(scope="module")
def case() -> Any:
    return RUN.Case.draw()


@pytest.fixture(scope="module")
def want(case: Any) -> Any:
    return RUN.expected_step(case)


@pytest.mark.parametrize("evaluator", ["fused", "simulate"])
def test_every_boundary_of_the_step_is_within_the_reference_tolerance(case: Any, want: Any, evaluator: str) -> None:
    got = RUN.kernel_step(case, evaluator)
    rows = RUN.compare_step(got, want)
    assert [row.boundary for row in rows] == BOUNDARIES
    assert all(row.passed for row in rows), "\n".join(map(str, rows))
    # The kernels round where the model does not, so every boundary differs a little, and by far less than
    # the reference allows (test_transformer_decoder.py checks that the step's change is the model's).
    assert all(0 < row.error < row.tolerance.abs / 4 for row in rows), "\n".join(map(str, rows))
    # The token's key row is rotated (RoPE at position 700) and normed, not a copy of a cache row.
    chunk, row = divmod(RUN.POSITION, MODEL.REFERENCE.T)
    assert (chunk, row) == (1, 188)
    assert not np.array_equal(got.k_row, case.cache.k[chunk, row])


def test_a_row_outside_its_tolerance_fails_and_says_so() -> None:
    row = RUN.Row.of("logits (real vocabulary)", np.array([1.0, 0.2]), np.array([0.5, 0.2]), MODEL.LOGITS)
    assert (row.error, row.passed) == (0.5, False)
    assert str(row) == "logits (real vocabulary)     0.50000  0.08 + 0.08 |e| FAIL"
    assert RUN.HEADER == "boundary                   max error  tolerance       verdict"
