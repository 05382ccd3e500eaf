"""The facade stub names the runtime objects themselves, and hides nothing behind a ``__getattr__``.

``make stubtest`` checks that the stub and the runtime facade export the same names with the same
signatures; this test checks what stubtest cannot: that each re-exported name is the very object the
runtime facade gives.
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


def public_imports() -> dict[str, tuple[str, str]]:
    """Public name -> (module, name there), for every ``from X import Y as Y`` / ``import X.Y as Y``."""
    found: dict[str, tuple[str, str]] = {}
    for node in stub_tree().body:
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            for alias in node.names:
                if alias.asname is not None:
                    found[alias.asname] = (node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                module, _, name = alias.name.rpartition(".")
                found[alias.asname or alias.name] = (module, name)
    return found


def test_every_reexported_name_is_the_runtime_object() -> None:
    imports = public_imports()
    assert len(imports) >= 35
    for public, (module, name) in imports.items():
        if public == "m":
            assert (module, name) == ("typing", "Literal")  # checkers read m["..."] as a Literal type
            continue
        runtime = getattr(tcpdsl, public)
        source = importlib.import_module(module)
        expected = getattr(source, name) if hasattr(source, name) else importlib.import_module(f"{module}.{name}")
        assert runtime is expected, public


def test_functions_declared_in_the_stub_are_the_algebra_ones() -> None:
    """``equivalent`` and ``divide_exact`` are declared in the stub to take ``m[...]`` values."""
    declared = {n.name for n in stub_tree().body if isinstance(n, ast.FunctionDef)}
    assert declared == {"equivalent", "divide_exact"}
    algebra = importlib.import_module("tcpdsl.algebra")
    assert tcpdsl.equivalent is algebra.equivalent and tcpdsl.divide_exact is algebra.divide_exact


def test_no_module_getattr_in_the_stub() -> None:
    """A stub ``__getattr__`` would make every misspelt ``tcp.X`` an ``Any`` to checkers."""
    names = {n.name for n in stub_tree().body if isinstance(n, ast.FunctionDef)}
    assert "__getattr__" not in names
    assert typing.Literal is not tcpdsl.m  # the runtime m is the parser, only checkers see a Literal
