"""Resolution through symbol tables builds exactly the mapping the runtime builds from the same text.

The symbol tables here are built by hand (no mypy run): module globals holding axes typed
``Axis[Literal[name], Literal[size]]`` (what the plugin gives ``tcp.axis`` calls), a mapping alias
an int constant and a variable holding an axis of another name; another module that imports them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mypy.nodes import GDEF, Block, ClassDef, ImportFrom, MypyFile, SymbolTable, SymbolTableNode, TypeAlias, TypeInfo
from mypy.nodes import Var
from mypy.types import Instance, LiteralType

from tcpdsl.algebra import Mapping, axis, parse
from tcpdsl.errors import TcpError
from tcpdsl.static.names import AXIS_CLASS
from tcpdsl.static.resolve import Env, NotReady, build, names_in

SIZES = {"A": 4, "B": 8, "C": 16}


def info(fullname: str) -> TypeInfo:
    module, _, name = fullname.rpartition(".")
    defn = ClassDef(name, Block([]))
    defn.fullname = fullname
    return TypeInfo(SymbolTable(), defn, module)


STR = Instance(info("builtins.str"), [])
INT = Instance(info("builtins.int"), [])
AXIS = info(AXIS_CLASS)


def axis_var(module: str, variable: str, name: str, size: int) -> SymbolTableNode:
    var = Var(variable, Instance(AXIS, [LiteralType(name, STR), LiteralType(size, INT)]))
    var._fullname = f"{module}.{variable}"
    return SymbolTableNode(GDEF, var)


def module(fullname: str, axes: dict[str, int], aliases: dict[str, str], constants: dict[str, int]) -> MypyFile:
    tree = MypyFile([], [])
    tree._fullname = fullname
    tree.names = SymbolTable()
    for name, size in axes.items():
        tree.names[name] = axis_var(fullname, name, name, size)
    for name, text in aliases.items():
        tree.names[name] = SymbolTableNode(GDEF, TypeAlias(LiteralType(text, STR), f"{fullname}.{name}", fullname, 1, 0))
    for name, value in constants.items():
        var = Var(name, INT)
        var._fullname = f"{fullname}.{name}"
        var.final_value = value
        tree.names[name] = SymbolTableNode(GDEF, var)
    return tree


DECLARING = module("shapes", SIZES, {"Tile": "A, B"}, {"N": 4})
DECLARING.names["Bee"] = axis_var("shapes", "Bee", "B", 8)  # a variable holding an axis of another name
SHARED = ("A", "B", "C", "Tile", "N", "Bee")
USING = module("kernel", {}, {}, {})
USING.names.update({name: DECLARING.names[name] for name in SHARED})
USING.imports.append(ImportFrom("shapes", 0, [(n, None) for n in SHARED]))


def env(final: bool = True, incomplete: bool = False) -> Env:
    return Env({"shapes": DECLARING, "kernel": USING}, final, lambda name: None, lambda module: incomplete)


def outcome(make: Callable[[], Mapping]) -> tuple[str, str]:
    """What building gives: the canonical text, or the error class and first message line."""
    try:
        return ("ok", str(make()))
    except TcpError as error:
        return (type(error).__name__, str(error).splitlines()[0])


def runtime(text: str) -> Mapping:
    return parse(text, SIZES, {"Tile": parse("A, B", SIZES), "N": 4, "Bee": axis("B", 8)})


TOKENS = st.sampled_from(
    ["A", "B", "C", "Z", "Tile", "N", "Bee", "{Tile}", "{N}", "{Bee}", "{Nope}", "1", "2", "3", "4", "8", "16",
     ",", "/", "%", "=", "#", "#{0}", "#{!}", "(", ")", "[", "]", " "]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(TOKENS, max_size=12).map(" ".join))
def test_symbol_tables_build_what_the_runtime_builds(text: str) -> None:
    for where in ("shapes", "kernel"):
        assert outcome(lambda: build(text, where, env())) == outcome(lambda: runtime(text)), (where, text)


@given(st.text())
def test_names_in_never_fails(text: str) -> None:
    axes, escapes = names_in(text)
    assert all(name[0].isupper() for name in axes)
    assert all(f"{name}" in text for name in escapes)


def test_escapes_resolve_in_the_alias_module() -> None:
    assert str(build("{Tile}, C / {N}", "kernel", env())) == str(runtime("A, B, C / 4"))


def test_type_texts_find_axes_only_in_imported_modules() -> None:
    """A tensor type's text names axes of the module it was written in: found through imports, nowhere else."""
    bare = module("bare", {}, {}, {})
    bare.imports.append(ImportFrom("shapes", 0, [("Tile", None)]))
    unrelated = module("unrelated", {"K": 4}, {}, {})
    world = Env({"shapes": DECLARING, "bare": bare, "unrelated": unrelated}, True, lambda name: None, lambda m: False)
    types = replace(world, types=True)
    assert str(build("A, B / 2", "bare", types)) == str(runtime("A, B / 2"))
    with pytest.raises(TcpError):
        build("A, B / 2", "bare", world)  # written in bare: only its own globals
    with pytest.raises(TcpError):
        build("K", "bare", types)  # declared in a module bare does not import


def test_missing_names_defer_until_the_namespace_is_complete() -> None:
    with pytest.raises(NotReady):
        build("Later", "kernel", env(final=False, incomplete=True))
    assert outcome(lambda: build("Later", "kernel", env(final=False)))[0] == "LayoutError"
    assert outcome(lambda: build("Later", "kernel", env(final=True, incomplete=True)))[0] == "LayoutError"
