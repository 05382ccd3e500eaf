"""What each mypy phase offers the plugin: the modules, the current module, deferral and dependencies.

The plugin interfaces mypy documents are narrower than the objects it passes; the few extra attributes
the plugin needs are read here, in one place, with their types checked.
"""

from __future__ import annotations

from collections.abc import Mapping as MappingOf

from mypy.checker import TypeChecker
from mypy.nodes import MypyFile, TypeInfo
from mypy.plugin import CheckerPluginInterface, TypeAnalyzerPluginInterface
from mypy.semanal import SemanticAnalyzer
from mypy.server.trigger import make_trigger
from mypy.typeanal import TypeAnalyser
from mypy.types import Instance, Type

from tcpdsl.static.bindings import LocalScope
from tcpdsl.static.resolve import Env


class PhaseError(Exception):
    """mypy passed an object the plugin does not know how to read (a mypy version it does not support)."""


def analyser(api: TypeAnalyzerPluginInterface) -> tuple[TypeAnalyser, SemanticAnalyzer]:
    if not isinstance(api, TypeAnalyser) or not isinstance(api.api, SemanticAnalyzer):
        raise PhaseError(f"unexpected type analyser {type(api).__name__}")
    return api, api.api


def semantic_env(sem: SemanticAnalyzer, *, local: bool = True) -> Env:
    """Resolution during semantic analysis: missing names defer until mypy's final iteration.

    With ``local``, the bindings of the function whose body is being analysed come first.
    """

    def depend(fullname: str) -> None:
        sem.add_plugin_dependency(make_trigger(fullname))

    scope = _body_scope(sem) if local else None
    return Env(sem.modules, sem.final_iteration, depend, sem.is_incomplete_namespace, scope=scope)


def _body_scope(sem: SemanticAnalyzer) -> LocalScope | None:
    """The function whose body holds what is being analysed (not one whose signature is)."""
    if not sem.locals or sem.locals[-1] is None:
        return None
    for function in reversed(sem.function_stack):
        if sem.saved_locals.get(function) is sem.locals[-1]:
            return LocalScope(function)
    return None


def current_tree(sem: SemanticAnalyzer) -> MypyFile:
    return sem.modules[sem.cur_mod_id]


def checker(api: CheckerPluginInterface) -> TypeChecker:
    if not isinstance(api, TypeChecker):
        raise PhaseError(f"unexpected checker {type(api).__name__}")
    return api


def checker_env(chk: TypeChecker, *, types: bool = False) -> Env:
    """Resolution while type checking: every module is analysed, so a missing name is final.

    The bindings of the function being checked come first; ``types`` reads the text of a tensor type.
    """

    def depend(fullname: str) -> None:
        del fullname

    def incomplete(module: str) -> bool:
        del module
        return False

    function = chk.scope.current_function()
    scope = LocalScope(function) if function is not None else None
    return Env(chk.modules, True, depend, incomplete, scope=scope, types=types)


def instance(modules: MappingOf[str, MypyFile], fullname: str, args: list[Type]) -> Instance:
    """``fullname[args]`` for a class of any loaded module (mypy's own helper wants a package attribute path)."""
    module, _, name = fullname.rpartition(".")
    tree = modules.get(module)
    sym = tree.names.get(name) if tree is not None else None
    if sym is None or not isinstance(sym.node, TypeInfo):
        raise PhaseError(f"{fullname} is not loaded")
    return Instance(sym.node, args)
