"""The text a mapping's ``Literal`` type holds: its canonical text, unless reading that back loses padding.

Types hold layouts as text, and the plugin builds the mapping again from the text wherever a stage
reads it. The canonical text ``str(mapping)`` makes equal layouts equal types, and it reads back
to the same cells; but a piece of a padded sub-expression whose own cells are all live is written
as a plain digit (``K #{0} 1008 % 16`` is ``K = 16`` for K = 999), and a digit no longer pools with
the other pieces of that sub-expression when a stage pairs layouts (docs/mapping-language.md
§1.8): ``K #{0} 1008 / 16`` and ``K = 16`` together are not ``K #{0} 1008``. Such a mapping keeps
its written text, which builds back exactly the tree the run-time stage sees.
"""

from __future__ import annotations

from tcpdsl.algebra import Broadcast, Mapping, Modulo, Padding, Pair, Resize, Stride, StructKey, Symbol


def type_text(mapping: Mapping) -> str:
    """The text of ``mapping`` in a type: canonical when that keeps every padded piece's operand."""
    canonical = mapping.normalize()
    if _padded_operands(mapping) <= _padded_operands(canonical):
        return canonical.text
    return mapping.text


def _padded_operands(node: Mapping) -> set[StructKey]:
    """The sub-expressions an operator reads as operands (no bare axis or broadcast) that hold padding."""
    if isinstance(node, Pair):
        return _padded_operands(node.left) | _padded_operands(node.right)
    if isinstance(node, (Stride, Modulo, Resize, Padding)):
        found = _padded_operands(node.inner)
        if not isinstance(node.inner, (Symbol, Broadcast)) and _padded(node.inner):
            found.add(StructKey(node.inner))
        return found
    return set()


def _padded(node: Mapping) -> bool:
    if isinstance(node, Padding):
        return True
    if isinstance(node, Pair):
        return _padded(node.left) or _padded(node.right)
    return isinstance(node, (Stride, Modulo, Resize)) and _padded(node.inner)
