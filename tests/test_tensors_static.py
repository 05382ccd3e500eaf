"""The typestate and dtype pairings of the tensor classes, as plain mypy sees them (no plugin)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from mypy_runner import run_mypy

PROBE = textwrap.dedent(
    '''
    import tcpdsl as tcp
    from tcpdsl import m

    A = tcp.axis("A", 32)
    B = tcp.axis("B", 32)
    C = tcp.axis("C", 8)
    Chip = m["1"]
    Cluster = m["1 # 2"]
    Slice = m["1 # 256"]

    Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
    Bf = tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["C"], m["B"]]
    Ints = tcp.TrfTensor[tcp.i8, Chip, Cluster, Slice, m["C"], m["B"]]
    I4 = tcp.CollectTensor[tcp.i4, Chip, Cluster, Slice, m["A"], m["B"]]
    I5 = tcp.TrfTensor[tcp.i5, Chip, Cluster, Slice, m["C"], m["B"]]
    I9 = tcp.CollectTensor[tcp.i9, Chip, Cluster, Slice, m["A"], m["B"]]
    I8 = tcp.TrfTensor[tcp.i8, Chip, Cluster, Slice, m["C"], m["B"]]
    Narrow = tcp.TrfTensor[tcp.bf16, Chip, m["1"], Slice, m["C"], m["B"]]


    def order(x: Stream) -> None:
        x.contract_packet(out_packet=m["1"])  # order


    def pairing(x: Stream, w: Ints) -> None:
        x.contract_outer(w, out_time=m["A"], out_packet=m["B"])  # pairing


    def grid(x: Stream, w: Narrow) -> None:
        x.contract_outer(w, out_time=m["A"], out_packet=m["B"])  # grid


    def fine(x: Stream, w: Bf, y: I4, v: I5, z: I9, u: I8) -> None:
        reveal_type(x.contract_outer(w, out_time=m["A"], out_packet=m["B"]))  # bf16
        reveal_type(y.contract_outer(v, out_time=m["A"], out_packet=m["B"]))  # int4
        reveal_type(z.contract_outer(u, out_time=m["A"], out_packet=m["B"]).contract_packet(out_packet=m["1"]))  # int8
    '''
)


def _mypy(tmp_path: Path) -> list[str]:
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    out = run_mypy([str(probe)], plugin=False, cache_name="tcpdsl-plain-mypy-cache")
    return [line.split("probe.py:", 1)[1] for line in out if "probe.py:" in line]


def _line(marker: str) -> int:
    for number, text in enumerate(PROBE.splitlines(), start=1):
        if text.endswith(f"# {marker}"):
            return number
    raise AssertionError(marker)


def test_plain_mypy_sees_typestate_pairings_and_grid(tmp_path: Path) -> None:
    lines = _mypy(tmp_path)
    by_line = {int(line.split(":", 1)[0]): line for line in lines}
    assert 'has no attribute "contract_packet"  [attr-defined]' in by_line[_line("order")]
    pairing = by_line[_line("pairing")]
    assert "TrfTensor[i8," in pairing and 'expected "TrfTensor[bf16,' in pairing
    grid = by_line[_line("grid")]
    assert "Literal['1'], Literal['1 # 256']" in grid and "[arg-type]" in grid
    bf16 = "ContractOuterTensor[tcpdsl.numerics.scalars.f32, tcpdsl.numerics.scalars.bf16, Literal['1']"
    assert bf16 in by_line[_line("bf16")]
    assert "ContractOuterTensor[tcpdsl.numerics.scalars.i32, tcpdsl.numerics.scalars.i4," in by_line[_line("int4")]
    assert "ContractPacketTensor[tcpdsl.numerics.scalars.i32, Literal['1']" in by_line[_line("int8")]
    errors = [line for line in lines if ": error:" in line]
    assert len(errors) == 3, "\n".join(lines)
