"""The mypy plugin object: which hook serves which full name, and the cache key of the plugin's logic."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import ClassVar, Final

from mypy.nodes import TypeInfo, TypeVarExpr
from mypy.options import Options
from mypy.plugin import (
    AnalyzeTypeContext,
    DynamicClassDefContext,
    FunctionContext,
    MethodContext,
    MethodSigContext,
    Plugin,
    ReportConfigContext,
)
from mypy.types import FunctionLike, Type

from tcpdsl.static.annotations import analyze_literal, analyze_tensor, analyze_type_variable
from tcpdsl.static.calls import axis_call, outer_signature, stage_call, stash_signature, tensor_call
from tcpdsl.static.declarations import axis_declaration
from tcpdsl.static.logical import logical_tensor_call
from tcpdsl.static.names import AXIS_FUNCTIONS, LITERAL_NAMES, LOGICAL_TENSOR, STAGE_METHODS, TENSOR_CLASSES
from tcpdsl.static.operands import family_of
from tcpdsl.verify.stage import Stage

# The packages whose code decides the plugin's verdicts: any change to them invalidates cached results.
_LOGIC: Final = ("syntax", "algebra", "verify", "static")
_STAGE_NAMES: Final = frozenset(Stage)


def logic_digest() -> str:
    """A digest of the grammar, algebra, verifier and plugin sources."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for package in _LOGIC:
        for path in sorted((root / package).glob("*.py")):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class TcpdslPlugin(Plugin):
    """Mapping texts, constructor constraints and stage rules, checked with the runtime's own code."""

    # Set by the entry module: the versions that key mypy's cache.
    version: ClassVar[str] = "unknown"

    def __init__(self, options: Options) -> None:
        super().__init__(options)
        self._config = {"tcpdsl": self.version, "logic": logic_digest()}
        # mypy asks for hooks by full name for every type, call and method it meets: one lookup each.
        self._type_hooks: dict[str, Callable[[AnalyzeTypeContext], Type]] = {
            **dict.fromkeys(LITERAL_NAMES, analyze_literal),
            **{name: partial(analyze_tensor, cls=cls) for name, cls in TENSOR_CLASSES.items()},
        }
        self._function_hooks: dict[str, Callable[[FunctionContext], Type]] = {
            **dict.fromkeys(AXIS_FUNCTIONS, axis_call),
            **dict.fromkeys(TENSOR_CLASSES, tensor_call),
            LOGICAL_TENSOR: logical_tensor_call,
        }
        self._method_hooks: dict[str, Callable[[MethodContext], Type]] = {
            name: partial(stage_call, method=stage) for name, stage in STAGE_METHODS.items()
        }
        # Type variables being analysed by mypy alone, after the plugin's note (no hook for them then).
        self._plain: set[str] = set()

    def get_type_analyze_hook(self, fullname: str) -> Callable[[AnalyzeTypeContext], Type] | None:
        hook = self._type_hooks.get(fullname)
        if hook is None and fullname not in self._plain:
            bound = self._tensor_bound(fullname)
            if bound is not None:
                return partial(analyze_type_variable, bound=bound, plain=partial(self._analysed_plainly, fullname))
        return hook

    def _tensor_bound(self, fullname: str) -> str | None:
        """The tensor class a type variable named ``fullname`` is bound to (through a subclass or not)."""
        sym = self.lookup_fully_qualified(fullname) if self._modules is not None else None
        node = sym.node if sym is not None else None
        found = family_of(node.upper_bound) if isinstance(node, TypeVarExpr) else None
        return found[1].name if found is not None else None

    @contextmanager
    def _analysed_plainly(self, fullname: str) -> Iterator[None]:
        """Within the block, the type variable ``fullname`` is analysed by mypy alone."""
        self._plain.add(fullname)
        try:
            yield
        finally:
            self._plain.discard(fullname)

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        return self._function_hooks.get(fullname)

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        return self._method_hooks.get(self._defining(fullname))

    def get_method_signature_hook(self, fullname: str) -> Callable[[MethodSigContext], FunctionLike] | None:
        stage = STAGE_METHODS.get(self._defining(fullname))
        if stage is Stage.CONTRACT_OUTER:
            return outer_signature
        return stash_signature if stage is not None and stage.startswith("vector_") else None

    def _defining(self, fullname: str) -> str:
        """``<class>.<method>`` named by the class that defines the method.

        mypy names a method by the receiver's class: a stage called on a subclass of a tensor type is
        ``<subclass>.<stage>``, and is the tensor class's stage unless the subclass overrides it.
        """
        if fullname in self._method_hooks:
            return fullname
        owner, _, method = fullname.rpartition(".")
        if method not in _STAGE_NAMES:
            return fullname
        sym = self.lookup_fully_qualified(owner) if owner and self._modules is not None else None
        info = sym.node if sym is not None else None
        defining = info.get_containing_type_info(method) if isinstance(info, TypeInfo) else None
        return f"{defining.fullname}.{method}" if defining is not None else fullname

    def get_dynamic_class_hook(self, fullname: str) -> Callable[[DynamicClassDefContext], None] | None:
        return axis_declaration if fullname in AXIS_FUNCTIONS else None

    def report_config_data(self, ctx: ReportConfigContext) -> dict[str, str]:
        del ctx
        return dict(self._config)
