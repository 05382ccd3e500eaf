"""Type-analysis hooks: mapping texts in annotations and aliases are resolved, validated and canonicalised.

``m["A,B/16"]`` becomes ``Literal['A, B / 16']`` (the canonical text ``str(mapping)``), so equal layouts are
equal types; a piece of a padded operand keeps its written text (:mod:`tcpdsl.static.literals`). A
tensor type whose parameters are all concrete is checked against its constructor constraints.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

from mypy import errorcodes
from mypy.nodes import Context, TypeAlias, TypeInfo
from mypy.plugin import AnalyzeTypeContext
from mypy.semanal import SemanticAnalyzer
from mypy.typeanal import TypeAnalyser
from mypy.types import AnyType, Instance, LiteralType, Type, TypeOfAny, UnboundType

from tcpdsl.algebra import Mapping
from tcpdsl.errors import TcpError
from tcpdsl.static.literals import type_text
from tcpdsl.static.phases import analyser, current_tree, semantic_env
from tcpdsl.static.report import inside_string, internal, report, unchecked
from tcpdsl.static.resolve import NotReady, Unknowable, build
from tcpdsl.static.scalars import scalar_name
from tcpdsl.static.texts import is_mapping_form, literal_text, raw_text
from tcpdsl.static.names import FRESH
from tcpdsl.verify.families import TYPESTATE, Family, check_type


def analyze_literal(ctx: AnalyzeTypeContext) -> Type:
    """``typing.Literal``: canonicalise when spelled as the facade's ``m``, else mypy's own analysis."""
    try:
        anal, sem = analyser(ctx.api)
        if len(ctx.type.args) == 1 and is_mapping_form(ctx.type.name, current_tree(sem)):
            text = raw_text(ctx.type.args[0])
            if text is not None:
                return _mapping_literal(anal, sem, text, ctx.type.args[0], ctx.context)
        return anal.analyze_literal_type(ctx.type)
    except Exception as exc:
        internal(ctx.api, exc, ctx.context)
        return AnyType(TypeOfAny.from_error)


def _mapping_literal(anal: TypeAnalyser, sem: SemanticAnalyzer, text: str, string: Context, where: Context) -> Type:
    try:
        mapping = build(text, sem.cur_mod_id, semantic_env(sem))
    except NotReady:
        sem.record_incomplete_ref()
        return AnyType(TypeOfAny.special_form)
    except Unknowable as unknown:
        unchecked(anal, f'the mapping m["{text}"] uses {unknown.name}, whose value is computed at run time', where, "it is Any here")
        return AnyType(TypeOfAny.special_form)
    except TcpError as error:
        report(anal, error, inside_string(error, string, where))
        return AnyType(TypeOfAny.from_error)
    return _literal(anal, type_text(mapping))


def _literal(anal: TypeAnalyser, text: str) -> LiteralType:
    return LiteralType(text, anal.named_type("builtins.str", []))


def analyze_tensor(ctx: AnalyzeTypeContext, cls: Family) -> Type:
    """A tensor class subscripted in a type: canonical mapping parameters and constructor constraints."""
    try:
        anal, sem = analyser(ctx.api)
        return _tensor(anal, sem, ctx.type, cls)
    except Exception as exc:
        internal(ctx.api, exc, ctx.context)
        return AnyType(TypeOfAny.from_error)


def _tensor(anal: TypeAnalyser, sem: SemanticAnalyzer, t: UnboundType, cls: Family) -> Type:
    sym = anal.lookup_qualified(t.name, t)
    info = sym.node if sym is not None else None
    if not isinstance(info, TypeInfo):
        return AnyType(TypeOfAny.from_error)
    extra = TYPESTATE.get(cls, 0)
    if not t.args:
        if anal.options.disallow_any_generics:
            anal.fail(f'Missing type parameters for generic type "{cls.name}"', t, code=errorcodes.TYPE_ARG)
        omitted = [AnyType(TypeOfAny.from_omitted_generics) for _ in range(len(cls.params) + extra)]
        return Instance(info, list(omitted), line=t.line, column=t.column)
    state: list[Type] = []
    if extra and len(t.args) == len(cls.params) + extra:
        state = [anal.analyze_type(arg) for arg in t.args[len(cls.params):]]
    elif extra and len(t.args) == len(cls.params):
        fresh = sem.named_type_or_none(FRESH)
        state = [fresh if fresh is not None else AnyType(TypeOfAny.special_form)]
    elif len(t.args) != len(cls.params):
        anal.fail(
            f'"{cls.name}" expects {len(cls.params)} type arguments ({", ".join(cls.params)}), but {len(t.args)} given',
            t,
            code=errorcodes.TYPE_ARG,
        )
        return AnyType(TypeOfAny.from_error)
    args: list[Type] = []
    dtypes: list[str] = []
    maps: list[Mapping] = []
    for param, arg in zip(cls.params, t.args[: len(cls.params)]):
        analyzed = anal.analyze_type(arg)
        if param in cls.dtypes:
            name = scalar_name(analyzed)
            if name is not None:
                dtypes.append(name)
            args.append(analyzed)
            continue
        text = literal_text(analyzed)
        mapping = _quiet_mapping(sem, text, _origin(anal, arg, sem.cur_mod_id)) if text is not None else None
        if mapping is None:
            args.append(analyzed)
            continue
        maps.append(mapping)
        args.append(_literal(anal, type_text(mapping)))
    if len(dtypes) + len(maps) == len(cls.params):
        try:
            check_type(cls, tuple(dtypes), tuple(maps))
        except TcpError as error:
            report(anal, error, t)
    return Instance(info, [*args, *state], line=t.line, column=t.column)


def _quiet_mapping(sem: SemanticAnalyzer, text: str, module: str) -> Mapping | None:
    """The mapping a parameter spells; errors in its text were reported where it was written."""
    try:
        return build(text, module, semantic_env(sem, local=module == sem.cur_mod_id))
    except NotReady:
        sem.record_incomplete_ref()
        return None
    except (TcpError, Unknowable):
        return None


def _origin(anal: TypeAnalyser, arg: Type, module: str) -> str:
    """The module whose globals resolve a parameter: the alias's own module when it names an alias."""
    if isinstance(arg, UnboundType) and not arg.args:
        sym = anal.lookup_qualified(arg.name, arg, suppress_errors=True)
        if sym is not None and isinstance(sym.node, TypeAlias):
            return sym.node.module
    return module


def analyze_type_variable(ctx: AnalyzeTypeContext, bound: str, plain: Callable[[], AbstractContextManager[None]]) -> Type:
    """A type variable bound to a tensor type, named in a type: a note, then mypy's own analysis.

    mypy calls no plugin hook for a method called on a value whose type is a type variable, so the
    stages called on it cannot be checked; the note says so where the variable is used.
    """
    try:
        anal, _ = analyser(ctx.api)
        name = ctx.type.name
        unchecked(
            anal,
            f"a stage called on a value of type {name}, a type variable bound to {bound}, reaches no plugin "
            "(mypy calls none for a method of a type variable)",
            ctx.context,
            f"the layouts of its result are Any; annotate the {bound} type, or a subclass of it, to have it checked",
        )
    except Exception as exc:
        internal(ctx.api, exc, ctx.context)
    with plain():
        return ctx.api.analyze_type(ctx.type)
