"""``tcpdsl plan "th,lh->tl" T=256 H=1024 L=3072``: the best kernels for an einsum, as a table or JSON.

``--emit DIR`` writes each plan as a kernel module that ``tcpdsl check`` and ``tcpdsl run`` take
unchanged. The table goes to stdout, the progress bar and errors to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Final

from tcpdsl.algebra import Axis
from tcpdsl.cli.explain import AxesError, parse_axes
from tcpdsl.harness.report import table
from tcpdsl.errors import TcpError
from tcpdsl.planner import Plan, Plans, search
from tcpdsl.planner.plan import sizes_text
from tcpdsl.tensors.device import Topology
from tcpdsl.verify import ACCUMULATOR, BITS, LaneMode

USAGE_ERROR: Final = 2
ORIENTATIONS: Final = ("first", "second", "either")


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "plan",
        help="find the best valid kernels for an einsum",
        description="Search the layouts of a two-operand einsum for the kernels with the fewest estimated cycles "
        "and print them ranked, or write them as kernel modules.",
    )
    parser.add_argument("einsum", metavar="EINSUM", help='two operands and the result, e.g. "th,lh->tl"')
    parser.add_argument("sizes", metavar="AXIS=SIZE", nargs="+", help="the size of every axis, e.g. T=256 H=1024")
    parser.add_argument("--dtype", default="bf16", choices=sorted(ACCUMULATOR), help="stream dtype (default bf16)")
    parser.add_argument("--weights", choices=sorted(BITS), metavar="DTYPE", help="TRF dtype (default: --dtype)")
    parser.add_argument("--top", type=int, default=5, metavar="K", help="how many plans (default 5)")
    parser.add_argument("--budget", type=float, default=5.0, metavar="SECONDS", help="time budget (default 5)")
    parser.add_argument("--streamed", choices=ORIENTATIONS, default="first", help="which operand streams (default first)")
    parser.add_argument("--fix", action="append", default=[], metavar="NAME=MAPPING",
                        help='fix a layout, e.g. --fix "Cluster=1 # 2" (Chip, Cluster, Slice, Lane, mode)')
    parser.add_argument("--axis", action="append", default=[], metavar="LETTER=NAME",
                        help="name an einsum letter's axis, e.g. --axis w=Wp (then give Wp=SIZE); "
                        "w=Wp:4096 declares Wp with 4096 cells, so that Wp=1024 is a tile of it")
    parser.add_argument("--chips", type=int, default=1, metavar="N", help="chips of the device (default 1)")
    parser.add_argument("--pes", type=int, default=8, metavar="N", help="processing elements per chip (default 8)")
    parser.add_argument("--emit", type=Path, metavar="DIR", help="write each plan as DIR/<name>_<rank>.py")
    parser.add_argument("--name", default="plan", help="kernel name prefix for --emit (default plan)")
    parser.add_argument("--json", action="store_true", help="print the plans as JSON")
    parser.add_argument("--progress", action="store_true", help="draw a progress bar even when stderr is no terminal")


def _fixed(items: list[str]) -> dict[str, str | LaneMode]:
    fixed: dict[str, str | LaneMode] = {}
    modes = {mode.value.lower(): mode for mode in LaneMode}
    for item in items:
        name, eq, text = (part.strip() for part in item.partition("="))
        if not eq or not name or not text:
            raise AxesError(f"--fix: expected NAME=MAPPING, e.g. \"Cluster=1 # 2\", got {item!r}")
        if name == "mode":
            if text.lower() not in modes:
                raise AxesError(f"--fix: mode is Interleaved or Sequential, got {text!r}")
            fixed[name] = modes[text.lower()]
        else:
            fixed[name] = text
    return fixed


def _names(items: list[str]) -> dict[str, str | Axis[Any, Any]]:
    """``w=Wp`` names letter w's axis Wp; ``w=Wp:4096`` declares Wp with 4096 cells, so that its
    size among the sizes may be a tile of it."""
    names: dict[str, str | Axis[Any, Any]] = {}
    for item in items:
        letter, eq, name = (part.strip() for part in item.partition("="))
        name, colon, size = (part.strip() for part in name.partition(":"))
        whole = size.isascii() and size.isdigit() and int(size) > 0
        if not eq or not letter or not name or (colon and not whole):
            raise AxesError(f"--axis: expected LETTER=NAME or LETTER=NAME:SIZE, e.g. w=Wp or w=Wp:4096, got {item!r}")
        try:
            names[letter] = Axis(name, int(size)) if colon else name
        except TcpError as error:
            raise AxesError(f"--axis: {error}") from None
    return names


def _row(plan: Plan) -> tuple[str, ...]:
    t = plan.layouts
    return (
        str(plan.rank), str(plan.cycles), f"{100 * plan.mac_utilisation:.1f}%",
        f"{plan.accumulator_cells} ({100 * plan.accumulator_use:.1f}%)", t.chip, t.cluster, t.slice,
        f"{t.stream_time} | {t.stream_packet}", f"{t.lane} | {t.element}", plan.mode.value,
    )


def render(plans: Plans, emitted: list[Path]) -> str:
    """The ranked table, the search's effort, and the files written."""
    first = plans[0].problem
    lines = [
        f'plans for "{first.einsum}" ({sizes_text(first)}), {first.stream_dtype} x {first.weight_dtype} -> '
        f"{first.accumulator}"
    ]
    header = ("#", "cycles", "MAC util", "accumulator", "Chip", "Cluster", "Slice", "Time | Packet", "Lane | Element", "mode")
    lines += table([header, *map(_row, plans)], frozenset({0, 1, 2, 3}))
    state = "space exhausted" if plans.exhausted else "stopped by the time budget: better plans may exist"
    lines.append(f"searched {plans.chains} chains in {plans.seconds:.2f} s ({state})")
    lines += [f"wrote {path}" for path in emitted]
    return "\n".join(lines)


def execute(args: argparse.Namespace) -> int:
    try:
        sizes = parse_axes(",".join(args.sizes), "sizes")
        fixed = _fixed(args.fix)
        names = _names(args.axis)
    except AxesError as error:
        print(f"tcpdsl plan: {error}", file=sys.stderr)
        return USAGE_ERROR
    try:
        plans = search(
            args.einsum, sizes, stream=args.dtype, weights=args.weights or args.dtype, top=args.top,
            streamed=args.streamed, fixed=fixed, topology=Topology(chips=args.chips, pes=args.pes),
            budget=args.budget, progress=True if args.progress else None, axes=names,
        )
        emitted = _emit(plans, args.emit, args.name) if args.emit is not None else []
    except TcpError as error:
        print(f"tcpdsl plan: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"tcpdsl plan: cannot write the modules: {error}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(_json(plans, emitted), indent=2))
    else:
        print(render(plans, emitted))
    return 0


def _emit(plans: Plans, folder: Path, prefix: str) -> list[Path]:
    modules = {folder / f"{prefix}_{plan.rank}.py": plan.source(f"{prefix}_{plan.rank}") for plan in plans}
    folder.mkdir(parents=True, exist_ok=True)
    for path, text in modules.items():
        path.write_text(text, encoding="utf-8")
    return list(modules)


def _json(plans: Plans, emitted: list[Path]) -> dict[str, Any]:
    first = plans[0].problem
    files: list[str | None] = [str(p) for p in emitted] or [None] * len(plans)
    return {
        "einsum": first.einsum,
        "sizes": {a: first.extent(a) for a in first.sizes},  # a split axis whole, not one slice's share
        "stream": first.stream_dtype,
        "weights": first.weight_dtype,
        "accumulator": first.accumulator,
        "exhausted": plans.exhausted,
        "seconds": round(plans.seconds, 4),
        "chains": plans.chains,
        "plans": [{**plan.summary(), "file": file} for plan, file in zip(plans, files)],
    }
