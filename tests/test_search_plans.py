"""Plans as the user holds them: tcp.Plan, the kernel names .source() accepts, and the user's axis names."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.cli.main import main
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
        ("OutSlice", "'OutSlice' is already a name of the plan's module"),  # a split reduction's reduced Slice
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


# -- the user's axis names -------------------------------------------------------------------------


def test_axes_name_the_einsum_letters_everywhere() -> None:
    plans = tcp.search("h,wh->w", {"H": 1024, "Wp": 8192}, axes={"w": "Wp"}, top=2)
    best = plans[0]
    # 16 MiB of weights over the HBM (1024 B a cycle, 500 to start), 32 KiB per slice into the TRF
    # (8 B a cycle), then 64 flits of H, the bf16 adder tree and two drained packets
    assert best.cycles == 16 * 1024 + 500 + 32 * 1024 // 8 + 64 + 5 + 2
    assert best.layouts.lane == "Wp % 8" and best.layouts.cluster == "Wp / 4096"
    source = best.source()
    assert 'Wp = tcp.axis("Wp", 8192)' in source and 'W = tcp.axis' not in source
    assert 'Plan 1 for the einsum "h,wh->w" (H=1024, Wp=8192)' in source
    rng = np.random.default_rng(3)
    x = rng.integers(-4, 5, 1024).astype(np.float64)
    w = rng.integers(-4, 5, (8192, 1024)).astype(np.float64)
    assert np.array_equal(best.run(x, w), w @ x)


def test_an_axis_object_brings_its_size() -> None:
    Wp = tcp.axis("Wp", 8192)
    by_object = tcp.search("h,wh->w", {"H": 1024}, axes={"W": Wp}, top=3)
    by_name = tcp.search("h,wh->w", {"H": 1024, "Wp": 8192}, axes={"w": "Wp"}, top=3)
    assert [p.layouts for p in by_object] == [p.layouts for p in by_name]


def test_renaming_a_letter_to_itself_changes_nothing() -> None:
    plain = tcp.search(EINSUM, SIZES, top=3)
    renamed = tcp.search(EINSUM, SIZES, top=3, axes={"t": "T", "h": "H", "l": "L"})
    assert [p.layouts for p in plain] == [p.layouts for p in renamed]


@pytest.mark.parametrize(
    ("axes", "sizes", "rule", "words"),
    [
        ({"q": "Q"}, {"H": 8, "W": 8}, "AxisName", "axes= renames 'q', which is no letter of the einsum"),
        ({"w": "wp"}, {"H": 8, "wp": 8}, "AxisName", "axes= names letter w 'wp', which is no axis name"),
        ({"w": 3}, {"H": 8}, "AxisName", "axes= names letter w 3, which is no axis name"),
        ({"w": "H"}, {"H": 8}, "AxisName", "axes= gives two einsum letters the name H"),
        ({"w": "Chip"}, {"H": 8, "Chip": 8}, "AxisName", "axis Chip has the name of a layout or type of the plan's module"),
        ({"w": "OutSlice"}, {"H": 8, "OutSlice": 8}, "AxisName", "axis OutSlice has the name of a layout or type"),
        ({"w": tcp.axis("Wp", 16)}, {"H": 8, "Wp": 6}, "Sizes", "axis Wp has size 16, so a tile of it cannot hold 6 cells"),
        ({"w": tcp.axis("Wp", 16)}, {"H": 8, "Wp": 32}, "Sizes", "axis Wp has size 16, so a tile of it cannot hold 32 cells"),
        ({"w": "Wp"}, {"H": 8, "W": 8}, "Sizes", "axis Wp of 'h,wh->w' has no size"),
        (["w"], {"H": 8}, "AxisName", "axes= must be a dict from einsum letters to axis names, got list"),
    ],
)
def test_bad_axis_names_are_refused(axes: object, sizes: dict[str, int], rule: str, words: str) -> None:
    with pytest.raises(tcp.LayoutError) as info:
        tcp.search("h,wh->w", sizes, axes=axes)  # type: ignore[arg-type]
    assert (info.value.stage, info.value.rule) == ("search", rule)
    assert words in info.value.detail


def test_the_command_line_names_axes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "plans"
    assert main(["plan", "h,wh->w", "H=1024", "Wp=8192", "--axis", "w=Wp", "--top", "1", "--emit", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.startswith('plans for "h,wh->w" (H=1024, Wp=8192)')
    assert 'Wp = tcp.axis("Wp", 8192)' in (folder / "plan_1.py").read_text()
    assert main(["plan", "h,wh->w", "H=64", "Wp=1024", "--axis", "w=Wp:4096", "--top", "1", "--emit", str(folder)]) == 0
    assert capsys.readouterr().out.startswith('plans for "h,wh->w" (H=64, Wp=1024 of 4096)')
    assert 'Wp = tcp.axis("Wp", 4096)' in (folder / "plan_1.py").read_text()


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ("w", "--axis: expected LETTER=NAME or LETTER=NAME:SIZE, e.g. w=Wp or w=Wp:4096, got 'w'"),
        ("w=Wp:x", "got 'w=Wp:x'"),
        ("w=Wp:0", "got 'w=Wp:0'"),
        ("w=wp:4096", "--axis: [mapping] InvalidAxisName: axis name 'wp' is not an identifier"),
    ],
)
def test_the_command_line_refuses_bad_axis_names(given: str, words: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "h,wh->w", "H=64", "Wp=1024", "--axis", given]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("tcpdsl plan: ") and words in err


def test_a_plan_for_a_tile_of_an_axis_object_runs_on_every_tile() -> None:
    H = tcp.axis("H", 64)  # noqa: F841  (tcp.Tensor(x, "H") finds it in this scope)
    Wp = tcp.axis("Wp", 4096)
    plan = tcp.search("h,wh->w", {"H": 64, "Wp": 1024}, axes={"w": Wp}, top=1)[0]
    # 512 slices of 2 lanes each hold 256 bytes: the TRF load of the whole kernel is smallest
    assert plan.layouts.cluster == "Wp / 512 % 2" and plan.layouts.lane == "Wp % 2"
    source = plan.source()
    assert 'Wp = tcp.axis("Wp", 4096)' in source
    assert 'Plan 1 for the einsum "h,wh->w" (H=64, Wp=1024 of 4096)' in source
    rng = np.random.default_rng(5)
    x = rng.integers(-3, 4, 64).astype(np.float64)
    w = rng.integers(-3, 4, (4096, 64)).astype(np.float64)
    assert np.array_equal(plan.run(x, w[1024:2048]), w[1024:2048] @ x)
    module: dict[str, object] = {}
    exec(compile(source, "<plan>", "exec"), module)
    kernel, stream, weights = (module[name] for name in ("plan_1", "Stream", "Weights"))
    device = tcp.Device()
    full, logits = tcp.Tensor(w, "Wp H"), tcp.Tensor(np.zeros(4096, np.float32), "Wp")
    for i in range(4):
        tile = full.tile(m["Wp / 1024"], i)
        part = kernel(stream(device.main, tcp.Tensor(x, "H")), weights(device.sub, tile))  # type: ignore[operator]
        logits.tile(m["Wp / 1024"], i).assign(part.to_tensor())
    assert np.array_equal(logits.to_numpy(), w @ x)
