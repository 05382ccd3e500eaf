"""The facade stub lists exactly the runtime facade's public names, each bound to the runtime object.

``python -m mypy.stubtest`` (see the project's test target) checks signatures; this test is the fast
guard, run by every pytest invocation.
"""

from __future__ import annotations

import ast
import importlib
import typing
from pathlib import Path

import tcpdsl

STUB = Path(__file__).resolve().parent.parent / "stubs" / "tcpdsl" / "__init__.pyi"


def stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text())


def stub_all() -> list[str]:
    for node in stub_tree().body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            value = ast.literal_eval(node.value)
            assert isinstance(value, list)
            return value
    raise AssertionError("the stub has no __all__")


def stub_imports() -> dict[str, tuple[str, str]]:
    """Public name -> (module, name there), for every ``from X import Y as Y`` / ``import X.Y as Y``."""
    found: dict[str, tuple[str, str]] = {}
    for node in stub_tree().body:
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            for alias in node.names:
                found[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                module, _, name = alias.name.rpartition(".")
                found[alias.asname or alias.name] = (module, name)
    return found


def test_stub_exports_the_runtime_names() -> None:
    assert sorted(stub_all()) == sorted(tcpdsl.__all__)


def test_every_stub_name_is_the_runtime_object() -> None:
    for public, (module, name) in stub_imports().items():
        if public == "m":
            assert (module, name) == ("typing", "Literal")  # checkers read m["..."] as a Literal type
            continue
        runtime = getattr(tcpdsl, public)
        source = importlib.import_module(module)
        expected = getattr(source, name) if hasattr(source, name) else importlib.import_module(f"{module}.{name}")
        assert runtime is expected, public


def test_no_module_getattr_in_the_stub() -> None:
    """A stub ``__getattr__`` would make every misspelt ``tcp.X`` an ``Any`` to checkers."""
    names = {n.name for n in stub_tree().body if isinstance(n, ast.FunctionDef)}
    assert "__getattr__" not in names
    assert typing.Literal is not tcpdsl.m  # the runtime m is the parser, only checkers see a Literal
