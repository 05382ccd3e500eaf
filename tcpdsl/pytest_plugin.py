"""The pytest plugin: ``pytest --tcpdsl`` collects every ``@tcp.kernel`` and runs it as ``tcpdsl run`` does.

Registered through the ``pytest11`` entry point, so installing tcpdsl is enough. With ``--tcpdsl``
(or ``tcpdsl = true`` in the pytest configuration) every Python file under the given paths, test
file or not, is imported and each kernel it defines is an item ``path/to/file.py::kernel_name``:
PASS passes, FAIL fails with the kernel's stage report (and the first differing cells when the
result is wrong), SKIP is skipped with the reason. A file that fails to import is one collection
error. Files pytest collects itself (test files, files named on the command line) keep pytest's
import; their kernels come through ``pytest_pycollect_makeitem``. Nothing of tcpdsl beyond this
module is imported unless the plugin is on, so other test runs in the same environment start as
fast as before. docs/ci.md lists the options.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import importlib.util
import inspect
import io
import sys
import traceback
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import pytest

EVALUATORS: Final = {"fused": ("fused",), "simulate": ("simulate",), "both": ("fused", "simulate")}
# files whose import has another purpose: pytest's own, and a packaging script that runs on import
SKIPPED_NAMES: Final = ("conftest.py", "setup.py")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tcpdsl", "tcpdsl kernels")
    group.addoption(
        "--tcpdsl", action="store_true", default=False,
        help="collect every @tcp.kernel in the Python files under the given paths and run it against the oracle",
    )
    group.addoption(
        "--tcpdsl-evaluator", choices=tuple(EVALUATORS), default="fused",
        help="evaluate kernels with the fused fold, the stage-faithful simulator, or both (default fused)",
    )
    group.addoption("--tcpdsl-seed", type=int, default=0, help="seed of the kernels' random inputs (default 0)")
    parser.addini("tcpdsl", type="bool", default=False, help="collect and run @tcp.kernel functions, as --tcpdsl does")


def _enabled(config: pytest.Config) -> bool:
    return bool(config.getoption("tcpdsl") or config.getini("tcpdsl"))


def _test_module(file_path: Path, session: pytest.Session) -> bool:
    """Whether pytest's own collector imports ``file_path`` (a test file, or a file named on the command line)."""
    patterns = session.config.getini("python_files")
    return session.isinitpath(file_path) or any(fnmatch.fnmatch(file_path.name, pattern) for pattern in patterns)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not _enabled(parent.config) or file_path.suffix != ".py":
        return None
    if file_path.name in SKIPPED_NAMES or file_path.name.startswith(("_", ".")):
        return None
    if _test_module(file_path, parent.session):
        return None  # its kernels come through pytest_pycollect_makeitem, imported the way pytest imports it
    return KernelFile.from_parent(parent, path=file_path)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> pytest.Item | None:
    """A kernel defined in a module pytest collects itself (a kernel imported into it is collected where it is defined)."""
    if not isinstance(collector, pytest.Module) or not callable(obj) or not _enabled(collector.config):
        return None
    from tcpdsl.testing.kernels import defines_kernel

    if not defines_kernel(collector.module, obj):
        return None
    return KernelItem.from_parent(collector, name=name, kernel=obj)


@contextlib.contextmanager
def _importable_from(folder: Path) -> Iterator[None]:
    """Let the module import its sibling modules while it loads."""
    entry = str(folder)
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)


def _import(path: Path) -> types.ModuleType:
    """``path`` as a module of its own (a stable name per path: every xdist worker agrees on it)."""
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    name = f"_tcpdsl_kernels_{digest}_{path.stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # registered first, so annotations resolve against its globals
    try:
        with _importable_from(path.parent), contextlib.redirect_stdout(io.StringIO()):
            spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


class KernelFile(pytest.File):
    """A Python file, as the kernels it defines."""

    def collect(self) -> Iterator[pytest.Item]:
        from tcpdsl.testing.kernels import kernels_of

        try:
            module = _import(self.path)
        except (Exception, SystemExit) as error:  # a file that does not import is one collection error
            frames = traceback.extract_tb(error.__traceback__)
            mine = [f for f in frames if Path(f.filename) == self.path]
            where = f" (at line {mine[-1].lineno})" if mine else ""
            raise self.CollectError(f"{self.path.name} does not import{where}: {type(error).__name__}: {error}") from error
        for name, function in kernels_of(module):
            yield KernelItem.from_parent(self, name=name, kernel=function)


class KernelFailed(Exception):
    """A kernel that failed against the oracle, or raised, with its report."""


class KernelItem(pytest.Item):
    """One kernel, run on random inputs and compared with the oracle."""

    def __init__(self, *, kernel: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.kernel = kernel

    def runtest(self) -> None:
        import tcpdsl
        from tcpdsl.testing.cells import mismatch_report
        from tcpdsl.testing.kernels import rerun

        seed: int = self.config.getoption("tcpdsl_seed")
        for evaluator in EVALUATORS[self.config.getoption("tcpdsl_evaluator")]:
            result = tcpdsl.try_kernel(self.kernel, seed=seed, evaluator=evaluator)
            if result.status == "SKIP":
                # reported at the kernel, as a skip mark would be, rather than at this line
                raise pytest.skip.Exception(str(result.skipped), _use_item_location=True)
            if result.status == "FAIL":
                # the first line is what pytest's short summary shows
                first = (result.error or "failed").splitlines()[0]
                report = [f"FAIL ({evaluator}, seed {seed}): {first}", str(result)]
                if result.max_error is not None:  # it ran and was compared: a wrong result, so name its cells
                    report.append(mismatch_report(rerun(self.kernel, seed, evaluator)))
                raise KernelFailed("\n".join(report))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, KernelFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        code = getattr(inspect.unwrap(self.kernel), "__code__", None)
        line = code.co_firstlineno - 1 if code is not None else None
        return self.path, line, f"tcpdsl kernel {self.name}"
