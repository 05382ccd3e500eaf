"""The search's targets: it matches or beats every README kernel, and its modules run and check unchanged."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

import tcpdsl as tcp
from tcpdsl.cli.main import main
from tcpdsl.cli.run import load
from tcpdsl.harness.run import run_kernel
from tcpdsl.cost import chain_cost, whole_chain_cost
from tcpdsl.planner import Plan
from tcpdsl.harness.kernel_spec import kernels_in, random_case

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# Each README kernel as the einsum its operands spell (the axes its layouts hold whole), with the
# cycles of its hand-written contraction, of its whole kernel (weight DMA, TRF load, contraction,
# commit) and of the best plan's whole kernel, as the cost model counts them per slice
# (docs/cost-model.md, "The whole kernel"). Every DMA command pays 500 cycles first, so small
# kernels differ mostly in their TRF loads and contractions.
README_KERNELS = {
    "matmul": ("ab,cb->ac", 70, 636, 524),
    "gemm": ("ik,jk->ij", 518, 2554, 1182),
    "gemv": ("ij,ij->i", 134, 2170, 1853),
    "dot_product": ("a,a->", 134, 1162, 597),
    "reduce_b": ("ab,b->a", 53, 577, 540),
    "bmatmul_k_in_time": ("mvk,mnk->mvn", 70, 890, 567),
    "bmatmul_m_in_time": ("vmk,vnk->vmn", 70, 666, 567),
    "bmatmul_v_in_time": ("mvk,mnk->mvn", 70, 666, 567),
    "lane_interleaved": ("mp,np->mpn", 85, 618, 517),
    "lane_sequential": ("mp,np->mnp", 101, 634, 517),
}


def _hand_written(name: str, index: int) -> tuple[int, int, dict[str, int], list[tuple[str, ...]]]:
    (kernel,) = kernels_in(load(EXAMPLES / f"{name}.py", 900 + index))
    case = random_case(kernel, 0)
    chain = kernel.function(**case.inputs).chain
    sizes = {a: t.sizes[a] for t in case.logical.values() for a in t.axes}
    contraction = chain_cost(chain).total_cycles
    return contraction, whole_chain_cost(chain).total_cycles, sizes, [t.axes for t in case.logical.values()]


@pytest.mark.parametrize(("index", "name"), list(enumerate(README_KERNELS)))
def test_the_best_plan_is_no_slower_than_the_readme_kernel(index: int, name: str) -> None:
    einsum, contraction_cycles, hand_cycles, plan_cycles = README_KERNELS[name]
    contraction, hand, sizes, operand_axes = _hand_written(name, index)
    letters = [tuple(c.upper() for c in part) for part in einsum.split("->")[0].split(",")]
    assert letters == operand_axes, "the einsum names the example's operands"
    assert (contraction, hand) == (contraction_cycles, hand_cycles)
    plans = tcp.search(einsum, sizes, top=1)
    assert plans.exhausted
    assert plans[0].cycles == plan_cycles <= hand


def _emit(plan: Plan, folder: Path, name: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(plan.source(name), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("einsum", "sizes", "options", "evaluator"),
    [
        ("ab,cb->ac", {"A": 32, "B": 32, "C": 8}, {}, "fused"),
        ("ik,jk->ij", {"I": 512, "J": 512, "K": 64}, {}, "fused"),
        ("th,lh->tl", {"T": 16, "H": 64, "L": 24}, {"streamed": "second"}, "fused"),
        ("h,qh->q", {"H": 64, "Q": 4096}, {"topology": tcp.Topology(chips=2)}, "fused"),
        ("ab,b->a", {"A": 64, "B": 32}, {"fixed": {"mode": tcp.LaneMode.SEQUENTIAL}}, "simulate"),
    ],
)
def test_tcpdsl_run_reports_the_plans_figures(
    einsum: str, sizes: dict[str, int], options: dict[str, object], evaluator: str, tmp_path: Path
) -> None:
    for plan in tcp.search(einsum, sizes, top=2, **options):  # type: ignore[arg-type]
        name = f"kernel_{uuid.uuid4().hex[:8]}"
        path = _emit(plan, tmp_path, name)
        (spec,) = kernels_in(load(path, 0))
        result = run_kernel(spec, path, seed=5, evaluator=evaluator)
        assert result.passed, result.error
        assert result.cost is not None
        assert result.cost.total_cycles == plan.cost.total_cycles  # the stage table's total: the contraction
        assert result.whole is not None and result.whole.total_cycles == plan.cycles  # and the whole kernel
        assert dict(result.whole.breakdown) == plan.breakdown
        assert f"  whole kernel: {plan.cycles} cycles per slice (weight DMA " in str(result)
        assert result.cost.mac_utilisation == plan.mac_utilisation
        assert result.cost.accumulator_use == plan.accumulator_use


def test_emitted_modules_type_check_with_the_plugin(tmp_path: Path, pytestconfig: pytest.Config) -> None:
    folder = tmp_path / f"plans_{uuid.uuid4().hex[:8]}"  # fresh module names: mypy's cache keys on paths
    plans = tcp.search("th,lh->tl", {"T": 256, "H": 1024, "L": 3072}, top=2)
    # K = 999 padded with zeros to 1008: its packet K #{0} 1008 % 16 must read back as a piece of
    # K #{0} 1008, not as the plain digit K = 16 of its canonical text (docs/search.md §5)
    padded = tcp.search("tk,nk->tn", {"T": 32, "K": 999, "N": 8}, top=2)
    assert all(plan.problem.zero_padded == {"K": 999} for plan in padded)
    assert 'm["K #{0} 1008 % 16"]' in padded[0].source()
    # a vocabulary zero-padded to whole tiles, with its tile loop
    (tiled,) = tcp.search("h,wh->w", {"H": 1024, "W": 4748}, topology=tcp.Topology(pes=1), top=1)
    assert tiled.tiling is not None and tiled.tiling.live == 4748
    folder.mkdir()
    for plan in plans:
        _emit(plan, folder, f"plan_{plan.rank}")
    for plan in padded:
        _emit(plan, folder, f"padded_{plan.rank}")
    _emit(tiled, folder, "tiled")
    assert pytestconfig.cache is not None
    cache = pytestconfig.cache.mkdir("tcpdsl-check-mypy")
    assert main(["check", str(folder), "--", "--strict", "--cache-dir", str(cache)]) == 0


# -- the command line ------------------------------------------------------------------------------


def test_plan_prints_a_ranked_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "ab,cb->ac", "A=32", "B=32", "C=8", "--top", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == 'plans for "ab,cb->ac" (A=32, B=32, C=8), bf16 x bf16 -> f32'
    assert out[1].split()[:4] == ["#", "cycles", "MAC", "util"]
    ranks = [line.split()[0] for line in out[2:5]]
    assert ranks == ["1", "2", "3"]
    # the whole kernel: 508 of weight DMA, 4 of TRF load, 8 contracting, 4 adding a split reduction's partial sums
    assert out[2].split()[1] == "524"
    assert out[5].startswith("searched ") and out[5].endswith("(space exhausted)")


def test_plan_json_and_emit_agree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "out"
    assert main(["plan", "h,qh->q", "H=1024", "Q=2048", "--top", "2", "--json", "--emit", str(folder), "--name", "proj"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["einsum"] == "h,qh->q" and data["exhausted"] is True
    assert [p["rank"] for p in data["plans"]] == [1, 2]
    first = data["plans"][0]
    assert first["file"] == str(folder / "proj_1.py")
    text = (folder / "proj_1.py").read_text()
    assert f'out_packet=m["{first["layouts"]["outer_packet"]}"]' in text
    assert "def proj_1(x: Stream, w: Weights) -> Out:" in text


@pytest.mark.parametrize(
    ("argv", "status", "words"),
    [
        (["plan", "ab,cb->ac", "A=32", "B=x"], 2, "NAME=SIZE"),
        (["plan", "th,lh->tl", "T=²", "H=32", "L=8"], 2, "sizes: expected NAME=SIZE with a positive integer size, got 'T=²'"),
        (["plan", "th,lh->tl", "T=8", "H=32", "L=8", "T=9"], 2, "sizes: axis T is given twice"),
        (["plan", "ab,cb->ac", "A=32", "B=32", "C=8", "--fix", "Cluster"], 2, "NAME=MAPPING"),
        (["plan", "ab,cb->ac", "A=32", "B=32", "C=8", "--fix", "mode=diagonal"], 2, "Interleaved or Sequential"),
        (["plan", "ab,cb->ac", "A=32", "B=32"], 1, "[search] Sizes: axis C"),
        (["plan", "ab,cb->ac", "A=8", "B=32", "C=8", "--dtype", "i8", "--weights", "bf16"], 1, "NoMultiplier"),
        (["plan", "ab,cb->ac", "A=8", "B=32", "C=8", "--name", "1st", "--emit", "x"], 1, "KernelName"),
    ],
)
def test_plan_errors_go_to_stderr(argv: list[str], status: int, words: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == status
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("tcpdsl plan: ") and words in err


# -- the reference transformer's kernels -----------------------------------------------------------

# hand-written and best-plan whole-kernel cycles per slice (docs/cost-model.md, docs/search.md §6)
REFERENCE_KERNELS = {
    "q projection": (12925, 5649),
    "p projection (k, v)": (10877, 3085),
    "o projection": (13053, 5653),
    "mlp up": (12892, 8219),
    "mlp down": (12986, 8221),
    "attention score": (3706, 1801),
    "attention weighted sum": (2074, 1802),
    "lm_head tile": (21051, 21051),
}


@pytest.mark.parametrize("name", list(REFERENCE_KERNELS))
def test_the_best_plan_is_no_slower_than_the_reference_kernel(name: str) -> None:
    bench = load(EXAMPLES.parent / "benchmarks" / "bench_search.py", 950)
    (einsum, sizes, kernel) = next((e, s, k) for n, e, s, k in bench.KERNELS if n == name)
    hand_cycles, plan_cycles = REFERENCE_KERNELS[name]
    assert bench.hand_written_cost(kernel, einsum, sizes).total_cycles == hand_cycles
    plans = tcp.search(einsum, sizes, top=1)
    assert plans.exhausted
    assert plans[0].cycles == plan_cycles <= hand_cycles
