"""Axes and the two ways to write a mapping: ``m["..."]`` (lexical) and :func:`parse` (explicit).

``m["A, B / 16"]`` resolves bare names to :class:`Axis` objects bound in the scope that wrote the
expression (the calling frame's locals, then its module globals), so the same text works at module
level, in a function, and in an annotation evaluated later with the module's globals.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from collections.abc import Mapping as MappingABC
from types import CodeType, FrameType
from typing import Final, Generic, NamedTuple, TypeVar

from tcpdsl.algebra.build import MISSING, Bindings, bind, build
from tcpdsl.algebra.caches import register
from tcpdsl.algebra.nodes import MAPPING_STAGE, Mapping, Symbol
from tcpdsl.errors import LayoutError, MappingSyntaxError
from tcpdsl.frames import user_frame
from tcpdsl.syntax import is_axis_name, parse_expression
from tcpdsl.syntax.tree import Parsed

NameT = TypeVar("NameT", bound=str)
SizeT = TypeVar("SizeT", bound=int)

# Built mappings by (text, what its names resolved to); bounded so that generated texts cannot grow it forever.
_CACHE_LIMIT: Final = 16384
_built: dict[tuple[str, tuple[object, ...]], Mapping] = {}
register(_built.clear)
# A function's code object has the names it binds itself: any other name it reads is its module's global.
_OPTIMIZED: Final = 0x0001  # inspect.CO_OPTIMIZED, without importing inspect


class Axis(Symbol, Generic[NameT, SizeT]):
    """A declared axis: a name and a positive size. It is itself a one-axis mapping.

    Checkers see ``Axis[Literal["A"], Literal[32]]``; at run time it is a :class:`Symbol`.
    """

    __slots__ = ()

    name: NameT
    n: SizeT

    def __init__(self, name: NameT, size: SizeT) -> None:
        if not isinstance(name, str) or not is_axis_name(name):
            raise LayoutError(
                MAPPING_STAGE, "InvalidAxisName",
                f"axis name {name!r} is not an identifier starting with an uppercase ASCII letter",
                "use names such as A, Bat, L1 or K_16",
            )
        if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            raise LayoutError(
                MAPPING_STAGE, "InvalidAxisSize", f"axis {name} has size {size!r}; sizes are positive ints",
                "give the number of positions along the axis, e.g. axis(\"A\", 32)",
            )
        super().__init__(name, size)


def axis(name: NameT, size: SizeT) -> Axis[NameT, SizeT]:
    """Declare an axis. Bind it to a variable of the same name: ``A = axis("A", 32)``."""
    return Axis(name, size)


def parse(text: str, sizes: MappingABC[str, int], env: MappingABC[str, Mapping | int] | None = None) -> Mapping:
    """Parse ``text`` with explicit axis ``sizes``; ``env`` resolves ``{Name}`` escapes."""
    if type(sizes) is not dict or not (env is None or type(env) is dict):
        _check_scope(sizes, env)
    if type(text) is str:
        parsed = parse_expression(text)
        if not parsed.splice_names and not parsed.number_names:
            # The hit path: look the memo up by the sizes as given, before building scope and bindings.
            given = tuple(map(sizes.get, parsed.axis_names))
            try:
                found = _built.get((text, given))
            except TypeError:  # an unhashable size: the full path below refuses it
                found = None
            if found is not None:
                # A hit proves every size equal to a validated one, but True, 4.0 or np.int64(4) compare
                # equal too; only exact ints are sure to pass the validation skipped here.
                for size in given:
                    if type(size) is not int:
                        break
                else:
                    return found
        return _resolve(parsed, _ExplicitScope(sizes, env or {}))
    return _resolve(_parsed(text), _ExplicitScope(sizes, env or {}))


def _check_scope(sizes: object, env: object) -> None:
    """Refuse ``sizes`` or ``env`` that are not mappings (checked before the memo reads them)."""
    for what, given in (("sizes", sizes), ("env", {} if env is None else env)):
        if not isinstance(given, MappingABC):
            raise LayoutError(
                MAPPING_STAGE, "InvalidScope", f"parse() takes {what} as a dict, got {type(given).__name__}",
                'pass sizes such as {"A": 32} and an env such as {"Tile": m["A"], "N": 8}',
            )


class _MappingSyntax:
    """The run-time ``m``: ``m["A, B / 16"]`` is a :class:`Mapping` over the caller's axes."""

    __slots__ = ()

    def __getitem__(self, text: str) -> Mapping:
        caller = sys._getframe(1)
        if type(text) is str:
            # The hit path: the same text at the same call site, every axis it names still bound to the
            # same object in the same module globals (docs/mapping-language.md §1.1).
            site = _sites.get((text, id(caller.f_code)))
            if site is not None and site.globals is caller.f_globals and site.module is caller.f_globals.get(
                    "__name__"):
                names = site.globals
                for name, bound in site.axes:
                    if names.get(name) is not bound:
                        break
                else:
                    return site.mapping
        frame = user_frame()
        local_names, global_names = frame.f_locals, frame.f_globals
        if type(text) is str:
            parsed = parse_expression(text)
            if not parsed.splice_names and not parsed.number_names:
                # As in parse; an Axis validated its size when it was declared.
                given = _declared_sizes(parsed.axis_names, local_names, global_names)
                found = None if given is None else _built.get((text, given))
                if found is None:
                    found = _resolve(parsed, _FrameScope(local_names, global_names))
                if frame is caller:
                    _remember_site(text, parsed.axis_names, caller, found)
                return found
            return _resolve(parsed, _FrameScope(local_names, global_names))
        return _resolve(_parsed(text), _FrameScope(local_names, global_names))

    def __repr__(self) -> str:
        return "m"


m: Final = _MappingSyntax()


class _Site(NamedTuple):
    """What ``m[text]`` resolved to at one call site: the code that wrote it, the globals it ran in (and
    their module name, which makes the frame the user's), and the axis each name was bound to."""

    code: CodeType
    globals: dict[str, object]
    module: object
    axes: tuple[tuple[str, Axis[str, int]], ...]
    mapping: Mapping


# By (text, id of the code object); each entry holds its code object, so the id names it while it is kept.
_sites: dict[tuple[str, int], _Site] = {}
register(_sites.clear)


def _remember_site(text: str, names: tuple[str, ...], frame: FrameType, found: Mapping) -> None:
    """Remember ``m[text]`` written in ``frame``'s code when its names can only be module globals: the code
    is a function's and binds none of them itself (so no local, cell or free variable shadows them)."""
    code = frame.f_code
    if not code.co_flags & _OPTIMIZED:
        return
    own = (*code.co_varnames, *code.co_cellvars, *code.co_freevars)
    globals_ = frame.f_globals
    axes = []
    for name in names:
        bound = globals_.get(name)
        if name in own or not isinstance(bound, Axis) or bound.name != name:
            return
        axes.append((name, bound))
    if len(_sites) >= _CACHE_LIMIT:
        _sites.clear()
    _sites[(text, id(code))] = _Site(code, globals_, globals_.get("__name__"), tuple(axes), found)


def _parsed(text: object) -> Parsed:
    if not isinstance(text, str):
        raise MappingSyntaxError(
            f"A mapping expression is one string, not a {type(text).__name__}: write m[\"A, B\"]", repr(text), 0
        )
    return parse_expression(text)


def _declared_sizes(
    names: tuple[str, ...], local_names: MappingABC[str, object], global_names: MappingABC[str, object]
) -> tuple[int, ...] | None:
    """The sizes of the axes ``names`` as :class:`_FrameScope` resolves them, or None if one is not an axis."""
    sizes = []
    for name in names:
        found = local_names.get(name, MISSING)
        if found is MISSING:
            found = global_names.get(name, MISSING)
        if not isinstance(found, Axis) or found.name != name:
            return None
        sizes.append(found.n)
    return tuple(sizes)


def _resolve(parsed: Parsed, scope: _ExplicitScope | _FrameScope) -> Mapping:
    # The key of a text without escapes must equal the one the hit paths of parse and m[...] build.
    bindings = bind(parsed, scope)
    key = (parsed.text, bindings.cache_key())
    found = _built.get(key)
    if found is None:
        found = build(parsed, bindings)
        if len(_built) >= _CACHE_LIMIT:
            _built.clear()
        _built[key] = found
    return found


class _ExplicitScope:
    """Axis sizes from a dict (or an :class:`Axis` of the same name in ``env``); escapes from ``env``."""

    __slots__ = ("sizes", "env")

    def __init__(self, sizes: MappingABC[str, int], env: MappingABC[str, Mapping | int]) -> None:
        self.sizes = sizes
        self.env = env

    def axis_size(self, name: str) -> int | None:
        size = self.sizes.get(name)
        if size is None:
            declared = self.env.get(name)
            return declared.n if isinstance(declared, Axis) and declared.name == name else None
        if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            raise LayoutError(
                MAPPING_STAGE, "InvalidAxisSize", f"axis {name} has size {size!r}; sizes are positive ints",
                f"pass a positive int for {name}",
            )
        return size

    def value(self, name: str) -> object:
        return self.env.get(name, MISSING)

    def axis_names(self) -> Iterable[str]:
        return self.sizes.keys()


class _FrameScope:
    """Names as the writing code sees them: locals shadow module globals."""

    __slots__ = ("local_names", "global_names")

    def __init__(self, local_names: MappingABC[str, object], global_names: MappingABC[str, object]) -> None:
        self.local_names = local_names
        self.global_names = global_names

    def value(self, name: str) -> object:
        # ``.get`` rather than ``[]``: a namespace with ``__missing__`` must not invent a binding.
        found = self.local_names.get(name, MISSING)
        return self.global_names.get(name, MISSING) if found is MISSING else found

    def axis_size(self, name: str) -> int | None:
        found = self.value(name)
        if isinstance(found, Axis) and found.name == name:
            size: int = found.n
            return size
        return None

    def axis_names(self) -> Iterable[str]:
        for names in (self.local_names, self.global_names):
            for name, value in list(names.items()):
                if isinstance(value, Axis) and value.name == name:
                    yield name


def check_axis_sizes(layouts: Iterable[tuple[str, Mapping]]) -> None:
    """Mappings that meet must agree on the size of each axis they name.

    Two modules may each declare an axis of one name with its own size; a layout from one then meets
    a layout from the other in one call, where the same text means two different things.
    ``layouts`` are (what the mapping is, mapping) pairs, named in the message.
    """
    seen: dict[str, tuple[int, str]] = {}
    for where, mapping in layouts:
        for name, size in mapping.axis_sizes().items():
            first_size, first_where = seen.setdefault(name, (size, where))
            if first_size != size:
                raise LayoutError(
                    MAPPING_STAGE, "AxisSizeConflict",
                    f"axis {name} has size {first_size} in {first_where} and size {size} in {where} "
                    f"(declared twice, with two sizes)",
                    f"declare {name} once, in one module, and import it wherever it is used",
                )


__all__ = ["Axis", "Bindings", "axis", "check_axis_sizes", "m", "parse"]
