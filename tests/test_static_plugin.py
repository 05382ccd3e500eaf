"""The plugin's machinery: result types, canonical layouts, robustness, caching, configuration."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from mypy.options import Options
from mypy.plugin import Plugin, ReportConfigContext

from static_corpus.support import ROOT, Diagnostic, corpus_cache, error_keys, run
from static_corpus.support import corpus_report  # the corpus mypy run, as a fixture
from tcpdsl import mypy_plugin
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.stages import STAGES
from tcpdsl.static.plugin import TcpdslPlugin, logic_digest
from tcpdsl.static.resolve import names_in

HEADER = '''
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A,B/16"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / 16"], m["B % 16"]]
'''
GRID = "Literal['1'], Literal['1 # 2'], Literal['1 # 256']"
F32 = "tcpdsl.numerics.scalars.f32"
BF16 = "tcpdsl.numerics.scalars.bf16"


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory, corpus_report: list[Diagnostic]) -> Path:
    """A private copy of the corpus run's cache: these runs re-check only their own small modules."""
    del corpus_report  # requested so that the corpus run (and its cache) is complete
    own = tmp_path_factory.mktemp("mypy-plugin")
    shutil.copytree(corpus_cache(tmp_path_factory.getbasetemp()), own, dirs_exist_ok=True)
    return own


def check(
    directory: Path, cache: Path, sources: dict[str, str], *, plugin: bool = True, extra: tuple[str, ...] = ()
) -> list[Diagnostic]:
    paths = []
    for name, text in sources.items():
        path = directory / f"{name}.py"
        path.write_text(textwrap.dedent(text))
        paths.append(path)
    diagnostics, report = run(paths, cache, plugin=plugin, numpy=plugin, extra=extra)
    assert "INTERNAL ERROR" not in report and "Traceback" not in report, report
    return diagnostics


def line_of(text: str, marker: str) -> int:
    """The 1-based line of the first line of ``text`` containing ``marker``."""
    return next(n for n, line in enumerate(text.splitlines(), start=1) if marker in line)


def revealed(diagnostics: list[Diagnostic]) -> dict[int, str]:
    prefix = "Revealed type is "
    return {d.line: d.message[len(prefix) :].strip('"') for d in diagnostics if d.message.startswith(prefix)}


def test_stage_results_are_computed(tmp_path: Path, cache: Path) -> None:
    body = HEADER + '''
def k(x: Stream, w: Weights) -> None:
    trf = w.to_trf(lane=m["C"], element=m["B"])
    outer = x.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
    packet = outer.contract_packet(out_packet=m["1"])
    out = packet.contract_time(out_time=m["A"]).contract_lane(out_time=m["A"], out_packet=m["C"])
    reveal_type(x)
    reveal_type(trf)
    reveal_type(outer)
    reveal_type(packet)
    reveal_type(out)
'''
    found = check(tmp_path, cache, {"results": body})
    assert error_keys(found) == []
    types = list(revealed(found).values())
    assert types == [
        f"tcpdsl.tensors.sources.CollectTensor[{BF16}, {GRID}, Literal['A, B / 16'], Literal['B % 16']]",
        f"tcpdsl.tensors.sources.TrfTensor[{BF16}, {GRID}, Literal['C'], Literal['B']]",
        f"tcpdsl.tensors.results.ContractOuterTensor[{F32}, {BF16}, {GRID}, Literal['C'], Literal['A'], Literal['B']]",
        f"tcpdsl.tensors.results.ContractPacketTensor[{F32}, {GRID}, Literal['C'], Literal['A'], Literal['1']]",
        f"tcpdsl.tensors.results.ContractTensor[{F32}, {GRID}, Literal['A'], Literal['C']]",
    ]


def test_integer_streams_accumulate_in_i32(tmp_path: Path, cache: Path) -> None:
    body = '''
import tcpdsl as tcp
from tcpdsl import m
A = tcp.axis("A", 8)
K = tcp.axis("K", 64)
R = tcp.axis("R", 8)
G = m["1"]
S = m["1 # 64"]
Stream = tcp.CollectTensor[tcp.i4, G, G, S, m["A"], m["K"]]
Weights = tcp.TrfTensor[tcp.i5, G, G, S, m["R"], m["K"]]
def k(x: Stream, w: Weights) -> None:
    reveal_type(x.contract_outer(w, out_time=m["A"], out_packet=m["K"]))
'''
    found = check(tmp_path, cache, {"ints": body})
    assert error_keys(found) == []
    (result,) = revealed(found).values()
    assert result.startswith("tcpdsl.tensors.results.ContractOuterTensor[tcpdsl.numerics.scalars.i32, tcpdsl.numerics.scalars.i4,")


def test_wrong_return_annotation_is_an_ordinary_error(tmp_path: Path, cache: Path) -> None:
    body = HEADER + '''
Bad = tcp.ContractOuterTensor[tcp.f32, tcp.bf16, Chip, Cluster, Slice, m["C"], m["A"], m["B / 16, B % 16"]]
Wrong = tcp.ContractOuterTensor[tcp.f32, tcp.bf16, Chip, Cluster, Slice, m["C"], m["A"], m["B % 16, B / 16"]]
def good(x: Stream, w: Weights) -> Bad:
    return x.contract_outer(w.to_trf(lane=m["C"], element=m["B"]), out_time=m["A"], out_packet=m["B"])
def bad(x: Stream, w: Weights) -> Wrong:
    return x.contract_outer(w.to_trf(lane=m["C"], element=m["B"]), out_time=m["A"], out_packet=m["B"])
'''
    found = check(tmp_path, cache, {"returns": body})
    assert error_keys(found) == [(line_of(body, "def bad") + 1, "return-value", None)]


def test_layouts_compare_by_canonical_text(tmp_path: Path, cache: Path) -> None:
    """With the plugin, ``A,B/16`` and ``A, B / 16`` are one type; plain checkers compare the texts as written."""
    body = '''
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Chip = m["1"]
Cluster = m["1#2"]
Slice = m["(1 # 256)"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["[A,B/16]"], m["B%16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C,B / 16,"], m["B % 16"]]
Out = tcp.ContractTensor[tcp.f32, m["1"], m["1 # 2"], m["1 # 256"], m["A, 1"], m["(C)"]]


def kernel(x: Stream, w: Weights) -> Out:
    trf = w.to_trf(lane=m["C"], element=m["B / 16, B % 16"])
    outer = x.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
    packet = outer.contract_packet(out_packet=m["1"])
    return packet.contract_time(out_time=m["A"]).contract_lane(out_time=m["A"], out_packet=m["C"])
'''
    assert error_keys(check(tmp_path, cache, {"spelling": body})) == []
    plain = check(tmp_path, cache, {"spelling": body}, plugin=False)
    assert error_keys(plain) == [(line_of(body, "return packet"), "return-value", None)]


def test_syntax_error_shows_the_caret(tmp_path: Path, cache: Path) -> None:
    body = HEADER + 'Lay = m["A, B // 2"]\n'
    found = check(tmp_path, cache, {"caret": body})
    line = line_of(body, "Lay =")
    errors = [d for d in found if d.severity == "error"]
    notes = [d.message for d in found if d.severity == "note" and d.line == line]
    assert [(d.line, d.code) for d in errors] == [(line, "tcpdsl-syntax")]
    column = check(tmp_path, cache, {"caret": body}, extra=("--show-column-numbers",))
    assert [(d.line, d.column) for d in column if d.severity == "error"] == [(line, 16)]  # the second "/"
    assert notes == ["  A, B // 2", "        ^"]


def test_local_mapping_is_noted_and_gives_any_layouts(tmp_path: Path, cache: Path) -> None:
    body = HEADER + '''
def k(x: Stream, w: Weights, lay: tcp.Mapping) -> None:
    trf = w.to_trf(lane=m["C"], element=m["B"])
    reveal_type(x.contract_outer(trf, out_time=lay, out_packet=m["B"]))
'''
    found = check(tmp_path, cache, {"local": body})
    assert error_keys(found) == []
    line = line_of(body, "reveal_type")
    notes = [d.message for d in found if d.line == line and d.severity == "note"]
    assert any(n.startswith("tcpdsl: the out_time mapping of contract_outer is computed") for n in notes)
    assert revealed(found)[line].endswith(f"{GRID}, Any, Any, Any]")


def test_subclass_receivers_are_checked_and_type_variables_noted(tmp_path: Path, cache: Path) -> None:
    """A subclass of a tensor type is checked as the type; mypy gives no hook for a call on a type variable."""
    body = HEADER + '''
from typing import TypeVar
class Rows(Stream): ...
S = TypeVar("S", bound=Stream)
R = TypeVar("R", bound=Rows)
N = TypeVar("N", bound=int)
def sub(x: Rows, w: Weights) -> None:
    reveal_type(x.contract_outer(w.to_trf(lane=m["C"], element=m["B"]), out_time=m["A"], out_packet=m["B % 8"]))
def bound(x: S, w: Weights) -> S:
    x.contract_outer(w.to_trf(lane=m["C"], element=m["B"]), out_time=m["A"], out_packet=m["B % 8"])
    return x
def subclass_bound(x: R) -> R:
    return x
def other(n: N) -> N:
    return n
'''
    found = check(tmp_path, cache, {"receivers": body})
    assert error_keys(found) == [(line_of(body, 'out_packet=m["B % 8"]'), "tcpdsl-layout", "OutPacketFlits")]
    notes = {d.line: d.message for d in found if d.severity == "note" and "type variable" in d.message}
    variable = "tcpdsl: a stage called on a value of type {}, a type variable bound to CollectTensor, reaches no plugin"
    assert sorted(notes) == [line_of(body, "def bound"), line_of(body, "def subclass_bound")]
    assert notes[line_of(body, "def bound")].startswith(variable.format("S"))
    assert notes[line_of(body, "def subclass_bound")].startswith(variable.format("R"))
    assert revealed(found)[line_of(body, "reveal_type")].startswith("tcpdsl.tensors.results.ContractOuterTensor[")


def test_stage_order_and_valid_kernels_without_the_plugin(tmp_path: Path, cache: Path) -> None:
    body = HEADER + '''
def k(x: Stream, w: Weights) -> object:
    trf = w.to_trf(lane=m["C"], element=m["B"])
    outer = x.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
    return outer.contract_packet(out_packet=m["1"]).contract_time(out_time=m["A"]).contract_lane(out_time=m["A"], out_packet=m["C"])
def order(x: Stream) -> object:
    return x.contract_packet(out_packet=m["1"])
'''
    found = check(tmp_path, cache, {"plain": body}, plugin=False)
    assert error_keys(found) == [(line_of(body, "x.contract_packet"), "attr-defined", None)]


def test_internal_failure_is_an_error_at_the_line(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("boom")

    monkeypatch.setitem(STAGES, Stage.CONTRACT_PACKET, dataclasses.replace(STAGES[Stage.CONTRACT_PACKET], compose=broken))
    body = HEADER + '''
def k(x: Stream, w: Weights) -> object:
    outer = x.contract_outer(w.to_trf(lane=m["C"], element=m["B"]), out_time=m["A"], out_packet=m["B"])
    return outer.contract_packet(out_packet=m["1"])
'''
    found = check(tmp_path, cache, {"internal": body})
    (error,) = [d for d in found if d.severity == "error"]
    assert (error.line, error.code) == (line_of(body, "outer.contract_packet"), "tcpdsl-internal")
    assert error.message == "tcpdsl plugin internal error: RuntimeError: boom"


@pytest.mark.parametrize(
    ("module", "name", "marker"),
    [
        ("tcpdsl.static.calls", "family_of", "x.contract_outer"),  # the contract_outer signature hook
        ("tcpdsl.static.calls", "declarations", "Extra = tcp.axis"),  # a module-level axis declaration
        ("tcpdsl.static.annotations", "check_type", "Typed = tcp.CollectTensor"),  # a tensor type
        ("tcpdsl.static.annotations", "build", "Lay = m["),  # a mapping alias
        ("tcpdsl.static.logical", "check_declared", "Logical = tcp.Tensor("),  # a logical tensor's axes
        ("tcpdsl.static.annotations", "unchecked", "def generic("),  # a type variable bound to a tensor type
    ],
)
def test_every_hook_turns_a_failure_into_an_error_at_its_line(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, module: str, name: str, marker: str
) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("boom")

    monkeypatch.setattr(f"{module}.{name}", broken)
    body = HEADER + '''
from typing import TypeVar
Extra = tcp.axis("Extra", 4)
Typed = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A"], m["B % 16"]]
Lay = m["A"]
Logical = tcp.Tensor([1.0], "A")
Generic = TypeVar("Generic", bound=Stream)
def generic(x: Generic) -> Generic:
    return x
def k(x: Stream, w: Weights) -> object:
    return x.contract_outer(w.to_trf(lane=m["C"], element=m["B"]), out_time=m["A"], out_packet=m["B"])
'''
    found = check(tmp_path, cache, {f"internal_{name}": body})
    internal = [(d.line, d.message) for d in found if d.code == "tcpdsl-internal"]
    assert line_of(body, marker) in {line for line, _ in internal}, found
    assert all(message == "tcpdsl plugin internal error: RuntimeError: boom" for _, message in internal)


def test_cached_axes_module_resolves_like_a_fresh_one(tmp_path: Path, cache: Path) -> None:
    axes = '''
import tcpdsl as tcp
from tcpdsl import m
A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)
Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]
'''
    user = '''
import tcpdsl as tcp
from cached_axes import A, B, C, Chip, Cluster, Slice
from tcpdsl import m
Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["C, B / 16"], m["B % 16"]]
def k(x: Stream, w: Weights) -> None:
    trf = w.to_trf(lane=m["C"], element=m["B"])
    x.contract_outer(trf, out_time=m["A"], out_packet=m["B / 2"])
'''
    first = check(tmp_path, cache, {"cached_axes": axes, "cached_user": user})
    second = check(tmp_path, cache, {"cached_axes": axes, "cached_user": user + "\n# edited\n"})
    expected = [(line_of(user, "B / 2"), "tcpdsl-layout", "FlitMismatch")]
    assert error_keys(first) == expected
    assert error_keys(second) == expected


def test_report_config_data_keys_the_cache() -> None:
    cls = mypy_plugin.plugin("2.4.1")
    assert issubclass(cls, Plugin) and issubclass(cls, TcpdslPlugin)
    data = cls(Options()).report_config_data(ReportConfigContext("kernel", "kernel.py", is_check=False))
    assert data == {"tcpdsl": cls.version, "logic": logic_digest()}
    assert cls.version.endswith(f"+plugin.{mypy_plugin.__version__}")
    assert len(data["logic"]) == 16 and int(data["logic"], 16) >= 0


@pytest.mark.parametrize(
    ("text", "axes", "escapes"),
    [
        ("A, B / 16", ["A", "B"], []),
        ("{Tile}, B # {N}", ["B"], ["Tile", "N"]),
        ("L1 # 256 / 32 % 4", ["L1"], []),
        ("1 #{0} 8, x", [], []),
    ],
)
def test_names_in(text: str, axes: list[str], escapes: list[str]) -> None:
    assert names_in(text) == (axes, escapes)


def test_the_plugin_loads_without_numpy() -> None:
    """mypy imports the plugin in every run: it must stay on the pure layers (no numpy, no beartype)."""
    code = "import sys, tcpdsl.mypy_plugin; print(sorted({'numpy', 'beartype'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_write_into_a_view_returns_the_tensor_behind_it(tmp_path: Path, cache: Path) -> None:
    # The composer checks the write against the view, but the method returns the written tensor, whose
    # Element the view's type does not carry: the declared DmTensor[..., Any], as at run time.
    body = '''
import tcpdsl as tcp
from tcpdsl import m
A = tcp.axis("A", 8)
X = tcp.axis("X", 32)
G = m["1"]
Src = tcp.DmTensor[tcp.bf16, G, m["1 # 2"], m["1 # 256"], m["A, X"]]
def k(dev: tcp.Device, x: Src) -> None:
    written = (dev.main.begin(x.view()).fetch(out_time=m["A"], out_packet=m["X"])
               .collect(out_time=m["A, X / 16"], out_packet=m["X % 16"]).commit_trim(out_packet=m["X % 16"])
               .commit_view(x.view_mut()))
    reveal_type(written)
'''
    found = check(tmp_path, cache, {"views": body})
    assert error_keys(found) == []
    (result,) = revealed(found).values()
    assert result == f"tcpdsl.tensors.memory.DmTensor[{BF16}, {GRID}, Any]"
