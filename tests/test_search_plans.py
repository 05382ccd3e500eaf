"""Plans as the user holds them: tcp.Plan, the kernel names .source() accepts, and the user's axis names."""

from __future__ import annotations

import pytest

import tcpdsl as tcp
from tcpdsl.planner.plan import Plan

EINSUM = "th,lh->tl"
SIZES = {"T": 256, "H": 1024, "L": 3072}


@pytest.fixture(scope="module")
def plan() -> tcp.Plan:
    return tcp.search(EINSUM, SIZES, top=1)[0]


def test_plan_is_public(plan: tcp.Plan) -> None:
    assert tcp.Plan is Plan
    assert isinstance(plan, tcp.Plan)
    assert "Plan" in tcp.__all__


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("class", "'class' is not a Python identifier a function can take"),
        ("None", "'None' is not a Python identifier a function can take"),
        ("two words", "'two words' is not a Python identifier"),
        ("__name__", "'__name__' is a special name of Python"),
        ("Chip", "'Chip' is already a name of the plan's module"),
        ("tcp", "'tcp' is already a name of the plan's module"),
        ("T", "'T' is already a name of the plan's module"),
        (123, "the kernel name must be a string, got int"),
    ],
)
def test_source_refuses_a_name_its_module_cannot_define(plan: tcp.Plan, name: object, words: str) -> None:
    with pytest.raises(tcp.LayoutError) as info:
        plan.source(name)  # type: ignore[arg-type]
    assert (info.value.stage, info.value.rule) == ("search", "KernelName")
    assert words in info.value.detail


@pytest.mark.parametrize("name", [None, "match", "type", "_", "kernel_7", "Ünïcode"])
def test_source_compiles_for_every_accepted_name(plan: tcp.Plan, name: str | None) -> None:
    source = plan.source(name)
    compile(source, "<plan>", "exec")
    assert f"def {name or 'plan_1'}(x: Stream, w: Weights) -> Out:" in source
