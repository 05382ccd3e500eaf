"""The plugin checks every switch call as the runtime does: the reference's 25 invalid fixtures are each
refused at their call with their rule, its 11 valid ones accepted, and transposes are typed."""

from __future__ import annotations

from pathlib import Path

from static_corpus.support import corpus_report  # noqa: F401  (the corpus mypy run, as a fixture)
from static_corpus.support import error_keys
from test_static_plugin import cache, check, revealed  # noqa: F401  (cache: the plugin tests' fixture)
from test_verify_switch import FIXTURE, INVALID, VALID
from tcpdsl.verify.switch_config import SwitchConfig

HEADER = "import tcpdsl as tcp\nfrom tcpdsl import m\n" + "".join(
    f'{name} = tcp.axis("{name}", {size})\n' for name, size in FIXTURE.items()
)


def _call(index: int, config: SwitchConfig, slice_: str, time: str, out_slice: str, out_time: str) -> str:
    stream = f'tcp.FetchTensor[tcp.i8, m["1"], m["1 # 2"], m["{slice_}"], m["{time}"], m["B"]]'
    return (f"def k{index}(x: {stream}) -> None:\n"
            f'    x.switch(tcp.{config.text}, out_slice=m["{out_slice}"], out_time=m["{out_time}"])  # call\n')


def test_every_fixture_is_judged_at_its_call(tmp_path: Path, cache: Path) -> None:  # noqa: F811
    cases = [(c, rule) for *c, rule in INVALID] + [(c[:5], None) for c in VALID]
    body = HEADER + "".join(_call(i, *case) for i, (case, _) in enumerate(cases))
    found = check(tmp_path, cache, {"switches": body})
    lines = [n for n, text in enumerate(body.splitlines(), start=1) if text.endswith("# call")]
    expected = [(line, "tcpdsl-layout", rule) for line, (_, rule) in zip(lines, cases) if rule is not None]
    assert error_keys(found) == expected


def test_switch_and_transpose_results_are_typed(tmp_path: Path, cache: Path) -> None:  # noqa: F811
    body = HEADER + '''
def k(x: tcp.FetchTensor[tcp.i8, m["1"], m["1 # 2"], m["C"], m["A"], m["B"]]) -> None:
    s = x.switch(tcp.Broadcast1(slice1=4, slice0=4), out_slice=m["C / 16, 1 # 4, C % 4"], out_time=m["A, C / 4 % 4"])
    reveal_type(s)
def k2(r: tcp.CollectTensor[tcp.i8, m["1"], m["1 # 2"], m["C"], m["A"], m["B % 8 # 32"]]) -> None:
    reveal_type(r.transpose(out_time=m["B % 8"], out_packet=m["A # 32"]))
'''
    found = check(tmp_path, cache, {"typed": body})
    assert error_keys(found) == []
    types = list(revealed(found).values())
    grid = "Literal['1'], Literal['1 # 2']"
    assert types[0] == (f"tcpdsl.tensors.switched.SwitchTensor[tcpdsl.numerics.scalars.i8, {grid}, "
                        "Literal['C / 16, C % 4 # 16'], Literal['A, C / 4 % 4'], Literal['B']]")
    assert types[1] == (f"tcpdsl.tensors.back.TransposeTensor[tcpdsl.numerics.scalars.i8, {grid}, Literal['C'], "
                        "Literal['B % 8'], Literal['A # 32']]")
