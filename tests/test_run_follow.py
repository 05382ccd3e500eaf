"""``tcpdsl run`` on results its oracle once could not follow: a DM reshape (the same cells under other
layouts) and a vector pass over an axis its data is replicated on (the transformer's ``Dummy64``)."""

from __future__ import annotations

import importlib.util
import json
import textwrap
import types
from pathlib import Path

import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl.cli.main import main
from tcpdsl.harness.kernel_spec import random_case
from tcpdsl.harness.oracle import check

BODY = '''
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 64)
B = tcp.axis("B", 8)
C = tcp.axis("C", 8)
H = tcp.axis("H", 64)
Dummy64 = tcp.axis("Dummy64", 64)
Chip = m["1"]
Cluster = m["1 # 2"]
Flat = tcp.DmTensor[tcp.bf16, Chip, Cluster, m["1 # 256"], m["A"]]
Grid = tcp.DmTensor[tcp.bf16, Chip, Cluster, m["1 # 256"], m["B, C"]]
Hidden = tcp.HbmTensor[tcp.bf16, Chip, m["H"]]
Spread = tcp.DmTensor[tcp.bf16, Chip, Cluster, m["Dummy64, 1 # 4"], m["H"]]
dev = tcp.Device()


@tcp.kernel
def relabel(x: Flat) -> Grid:
    """The 64 values of A read as an 8 x 8 grid of B and C."""
    return x.reshape(chip=Chip, cluster=Cluster, slice=m["1 # 256"], element=m["B, C"])


@tcp.kernel
def shifted(h: Hidden) -> Spread:
    """h + 1.5 on every slice: the move to DM repeats h over the 64 groups of Dummy64."""
    x = h.to_dm(cluster=Cluster, slice=m["Dummy64, 1 # 4"], element=m["H"])
    return (
        dev.main.begin(x.view())
        .fetch(out_time=m["H / 16"], out_packet=m["H % 16"])
        .fetch_cast(tcp.f32)
        .collect(out_time=m["H / 8"], out_packet=m["H % 8"])
        .vector_init()
        .vector_intra_slice_tag(tcp.TagMode.ZERO)
        .vector_clip(tcp.ClipBinaryOpF32.ADD, 1.5)
        .vector_final()
        .cast(tcp.bf16, out_packet=m["H % 8 # 16"])
        .commit_trim(out_packet=m["H % 8"])
        .commit(element=m["H"])
    )
'''


def module(tmp_path: Path) -> tuple[Path, types.ModuleType]:
    path = tmp_path / "follow.py"
    path.write_text(textwrap.dedent(BODY), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("run_follow_kernels", path)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return path, loaded


@pytest.mark.parametrize("evaluator", ["fused", "simulate"])
def test_both_pass_against_the_oracle(tmp_path: Path, evaluator: str, capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = module(tmp_path)
    status = main(["run", str(path), "--json", "--evaluator", evaluator, "--timeout", "0"])
    results = {r["kernel"]: r for r in json.loads(capsys.readouterr().out)["results"]}
    assert status == 0
    assert {name: (r["status"], r["skipped"]) for name, r in results.items()} == {
        "relabel": ("PASS", None), "shifted": ("PASS", None),
    }


def test_a_reshape_is_expected_to_hold_the_tensors_cells_under_its_new_layouts(tmp_path: Path) -> None:
    _, kernels = module(tmp_path)
    case = random_case(kernels.relabel, seed=5)
    flat = np.asarray(case.logical["x"].values)
    verdict = check(kernels.relabel(**case.inputs))
    assert verdict.axes == ("B", "C")
    assert np.array_equal(verdict.expected, flat.reshape(8, 8))  # A = 8 B + C


def test_a_pass_sees_the_same_values_along_an_axis_its_data_lacks(tmp_path: Path) -> None:
    _, kernels = module(tmp_path)
    case = random_case(kernels.shifted, seed=5)
    hidden = np.asarray(case.logical["h"].values, dtype=np.float64)
    with tcp.evaluator("fused"):
        verdict = check(kernels.shifted(**case.inputs))
    assert verdict.passed
    assert verdict.axes == ("H",)  # the result keeps the axes of its data
    assert np.allclose(np.asarray(verdict.expected, dtype=np.float64), hidden + 1.5, rtol=2**-7, atol=0)
