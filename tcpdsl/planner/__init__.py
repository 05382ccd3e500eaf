"""Layout search: the best valid kernels for a two-operand einsum, found and written out.

Layer: above the evaluators (docs/architecture.md). The search itself reads only the algebra, the
chain composer and verifiers (:mod:`tcpdsl.verify`) and the cost model (:mod:`tcpdsl.cost`);
``Plan.run`` executes a plan through the public tensor API, which needs the evaluators. The
search space and what it leaves out are described in docs/search.md.
"""

from __future__ import annotations

from tcpdsl.planner.api import search
from tcpdsl.planner.plan import Plan, Plans

__all__ = ["Plan", "Plans", "search"]
