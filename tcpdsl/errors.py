"""The error hierarchy. Every error tcpdsl raises on purpose is a :class:`TcpError`."""

from __future__ import annotations


class TcpError(Exception):
    """Base class of every deliberate tcpdsl error."""


class MappingSyntaxError(TcpError, ValueError):
    """A malformed mapping expression. The message shows the text with a caret under the problem."""

    def __init__(self, reason: str, text: str, position: int) -> None:
        self.reason = reason
        self.text = text
        self.position = max(0, min(position, len(text)))
        caret = " " * self.position + "^"
        super().__init__(f"{reason}\n  {text}\n  {caret}")


class StageError(TcpError):
    """An error tied to a stage and a named rule; the message says what would fix it."""

    def __init__(self, stage: str, rule: str, message: str, hint: str = "") -> None:
        self.stage = stage
        self.rule = rule
        self.detail = message
        self.hint = hint
        text = f"[{stage}] {rule}: {message}"
        if hint:
            text += f"\n  hint: {hint}"
        super().__init__(text)


class LayoutError(StageError, ValueError):
    """A layout that breaks a rule: of the mapping algebra, a constructor, or a hardware stage.

    ``stage`` names the stage (``"contract_outer"``, ``"to_trf"``, ...), the tensor class for
    constructor constraints, or ``"mapping"`` for algebra errors. ``rule`` is the rule name in
    docs/stage-rules.md, e.g. ``"FlitMismatch"``.
    """


class DtypeError(StageError, TypeError):
    """A stream/weight dtype pair that the Multiplier has no MAC for, or a dtype a stage refuses."""
