"""``tcpdsl explain "EXPR" --axes A=32,B=64 [--svg FILE]``: a mapping's canonical form and its cells."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tcpdsl.algebra import Index, Mapping, Pad, parse
from tcpdsl.errors import TcpError
from tcpdsl.pictures import cell_table, slot_table, svg

USAGE_ERROR = 2


class AxesError(ValueError):
    """A malformed ``--axes`` value."""


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "explain",
        help="show a mapping's canonical form, slots and cell table",
        description="Parse a mapping expression and print its canonical form, size, slots and cells.",
    )
    parser.add_argument("expr", metavar="EXPR", help='a mapping expression, e.g. "A, B / 16"')
    parser.add_argument("--axes", default="", metavar="A=32,B=64", help="axis sizes, comma separated")
    parser.add_argument("--svg", type=Path, metavar="FILE", help="also draw the cells to an SVG file")
    parser.add_argument("--columns", type=int, default=16, metavar="N", help="at most N cells per row (default 16)")
    parser.add_argument("--rows", type=int, default=64, metavar="N", help="elide the middle past N rows (default 64)")


def parse_axes(text: str, option: str = "--axes") -> dict[str, int]:
    """``"A=32,B=64"`` → ``{"A": 32, "B": 64}``; errors name ``option``, where the text came from."""
    sizes: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, eq, value = item.partition("=")
        name, value = name.strip(), value.strip()
        # isdigit alone takes digits such as ① or ², which int() refuses
        if not eq or not name or not (value.isascii() and value.isdigit()) or int(value) <= 0:
            raise AxesError(f"{option}: expected NAME=SIZE with a positive integer size, got {item!r}")
        if name in sizes:
            raise AxesError(f"{option}: axis {name} is given twice")
        sizes[name] = int(value)
    return sizes


def report(mapping: Mapping, expr: str, columns: int, rows: int) -> str:
    cells = [mapping.cell(i) for i in range(mapping.size)] if mapping.size <= 1 << 16 else None
    lines = [
        f"expression: {expr}",
        f"canonical:  {mapping}",
        f"size:       {mapping.size}" + (_census(cells) if cells is not None else ""),
        f"axes:       {_axes(mapping)}",
        "",
        "slots (innermost first):",
        slot_table(mapping),
        "",
        "cells:",
        cell_table(mapping, max_columns=columns, max_rows=rows),
    ]
    return "\n".join(lines)


def _census(cells: list[Any]) -> str:
    live = sum(isinstance(c, Index) for c in cells)
    pads = sum(isinstance(c, Pad) for c in cells)
    return f" ({live} live, {pads} padding)"


def _axes(mapping: Mapping) -> str:
    sizes = mapping.axis_sizes()
    return ", ".join(f"{name}={sizes[name]}" for name in mapping.axes) or "(none)"


def execute(args: argparse.Namespace) -> int:
    try:
        mapping = parse(args.expr, parse_axes(args.axes))
        text = report(mapping, args.expr, max(1, args.columns), max(2, args.rows))
        picture = svg(mapping, max_columns=max(1, args.columns), max_rows=max(2, args.rows)) if args.svg else None
    except (TcpError, AxesError) as error:
        print(f"tcpdsl explain: {error}", file=sys.stderr)
        return USAGE_ERROR
    print(text)
    if picture is not None:
        try:
            args.svg.write_text(picture, encoding="utf-8")
        except OSError as error:
            print(f"tcpdsl explain: cannot write {args.svg}: {error.strerror}", file=sys.stderr)
            return USAGE_ERROR
        print(f"\nwrote {args.svg}")
    return 0
