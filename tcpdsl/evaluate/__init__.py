"""Evaluators of contraction chains, chosen by name in :mod:`tcpdsl.evaluate.backend`.

* ``fused`` (the default): the fold of docs/runtime.md §3.4 as one BLAS-backed contraction.
* ``simulate``: every stage on physical buffers, with Top padding poisoned.
"""

from __future__ import annotations

from tcpdsl.evaluate.fused import FusedEvaluator, fold
from tcpdsl.evaluate.simulate import SimulateEvaluator, StageBuffer, macs, trace

__all__ = ["FusedEvaluator", "SimulateEvaluator", "StageBuffer", "fold", "macs", "trace"]
