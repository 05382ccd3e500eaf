"""One example module run in a child process under a time limit (docs/ci.md, "`tcpdsl run` in CI").

A module that loops forever at import, or a kernel that never returns, would hang the whole run.
So each module runs in a child forked from the runner: the child imports it, runs its kernels and
sends each event back through a pipe; the runner waits at most the time limit for the module as a
whole. When the limit passes, or the child dies, the runner kills the child's process group (the
child starts its own, so processes it started go too), reaps it, and reports a failure naming what
was running. Forking keeps the runner's loaded modules, so a child costs milliseconds, not a fresh
interpreter's start. Where processes cannot fork, modules run in the runner without a limit.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Final

from tcpdsl.harness.report import KernelResult

# What a module's run reports, in order: ("start", name) before each kernel or main(),
# ("result", KernelResult) after it, ("note", text) for a module with nothing to run.
Event = tuple[str, object]
Emit = Callable[[Event], None]
Body = Callable[[Emit], None]

CAN_FORK: Final = "fork" in multiprocessing.get_all_start_methods()
_REAP_SECONDS: Final = 5.0  # how long a child that said it is done may take to exit


def _child(body: Body, sender: Connection) -> None:
    os.setsid()  # a process group of its own, which the runner can kill whole
    body(sender.send)
    sender.send(("done", None))
    sender.close()


def _kill(process: multiprocessing.process.BaseProcess) -> None:
    """Kill the child and everything in its process group, and reap it."""
    if process.pid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    process.join()


def run_isolated(body: Body, emit: Emit, file: Path, limit: float) -> None:
    """Run ``body`` (a module's run, reporting through the emit it is given) in a child process,
    passing its events on to ``emit``; past ``limit`` seconds, or if the child dies, emit a
    failure for what was running instead."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(body, sender), daemon=True)
    running = ("(import)", "import")
    started = time.monotonic()
    deadline = started + limit
    process.start()
    sender.close()
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not receiver.poll(left):
                emit(("result", _stopped(file, running, started, f"timed out: {_what(running)} was still running when "
                                         f"the module reached its time limit of {limit:g} s (tcpdsl run --timeout); "
                                         "the rest of the module was not run")))
                return
            try:
                kind, value = receiver.recv()
            except EOFError:
                process.join(_REAP_SECONDS)
                emit(("result", _stopped(file, running, started, f"the module's process ended (exit status "
                                         f"{process.exitcode}) during {_what(running)}; the rest of the module was not run")))
                return
            if kind == "done":
                process.join(_REAP_SECONDS)
                return
            if kind == "start":
                running = (str(value), "main" if value == "main" else "kernel")
                started = time.monotonic()
            emit((kind, value))
    finally:
        receiver.close()
        _kill(process)


def _what(running: tuple[str, str]) -> str:
    name, kind = running
    return {"import": "its import", "main": "main()"}.get(kind, f"kernel {name}")


def _stopped(file: Path, running: tuple[str, str], started: float, error: str) -> KernelResult:
    name, kind = running
    return KernelResult(str(file), name, kind, passed=False, error=error, seconds=time.monotonic() - started)
