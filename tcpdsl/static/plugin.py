"""The mypy plugin object: which hook serves which full name, and the cache key of the plugin's logic."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import ClassVar, Final

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

from tcpdsl.static.annotations import analyze_literal, analyze_tensor
from tcpdsl.static.calls import axis_call, outer_signature, stage_call, tensor_call
from tcpdsl.static.declarations import axis_declaration
from tcpdsl.static.names import AXIS_FUNCTIONS, LITERAL_NAMES, STAGE_METHODS, TENSOR_CLASSES
from tcpdsl.verify.stage import Stage

# The packages whose code decides the plugin's verdicts: any change to them invalidates cached results.
_LOGIC: Final = ("syntax", "algebra", "verify", "static")


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
        }
        self._method_hooks: dict[str, Callable[[MethodContext], Type]] = {
            name: partial(stage_call, method=stage) for name, stage in STAGE_METHODS.items()
        }

    def get_type_analyze_hook(self, fullname: str) -> Callable[[AnalyzeTypeContext], Type] | None:
        return self._type_hooks.get(fullname)

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        return self._function_hooks.get(fullname)

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        return self._method_hooks.get(fullname)

    def get_method_signature_hook(self, fullname: str) -> Callable[[MethodSigContext], FunctionLike] | None:
        return outer_signature if STAGE_METHODS.get(fullname) is Stage.CONTRACT_OUTER else None

    def get_dynamic_class_hook(self, fullname: str) -> Callable[[DynamicClassDefContext], None] | None:
        return axis_declaration if fullname in AXIS_FUNCTIONS else None

    def report_config_data(self, ctx: ReportConfigContext) -> dict[str, str]:
        del ctx
        return dict(self._config)
