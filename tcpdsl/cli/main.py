"""The ``tcpdsl`` command: ``run`` kernel examples, ``check`` them with mypy, ``explain`` a mapping,
``plan`` the best kernels for an einsum."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence

from tcpdsl import __version__
from tcpdsl.cli import check, explain, plan
from tcpdsl.cli import run as run_command


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tcpdsl",
        description="Write, check and run kernels for Tensor Contraction Processors.",
    )
    parser.add_argument("--version", action="version", version=f"tcpdsl {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    run_command.add_parser(commands)
    check.add_parser(commands)
    explain.add_parser(commands)
    plan.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    try:
        return _dispatch(argv)
    except BrokenPipeError:
        # the reader went away (``tcpdsl ... | head``): stop quietly, as other command-line tools do
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _dispatch(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    command: str | None = args.command
    if command == "run":
        return run_command.execute(args)
    if command == "check":
        return check.execute(args)
    if command == "explain":
        return explain.execute(args)
    if command == "plan":
        return plan.execute(args)
    parser.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
