"""The documentation stays true to the code: every stage rule the verifiers raise is documented
in docs/stage-rules.md under its name, with the fixed parts of its message word for word."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
VERIFY = ROOT / "tcpdsl" / "verify"
ERRORS = {"LayoutError", "DtypeError"}
# A message fragment shorter than this ("got ", " bytes") says nothing about the rule.
MIN_FRAGMENT = 12


@dataclass(frozen=True)
class Raised:
    """One ``LayoutError``/``DtypeError`` construction in the verifiers."""

    where: str
    rule: str | re.Pattern[str]
    fragments: tuple[str, ...]


def _argument(call: ast.Call, position: int, name: str) -> ast.expr | None:
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == name), None)


def _rule(node: ast.expr | None, where: str) -> str | re.Pattern[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = [re.escape(v.value) if isinstance(v, ast.Constant) else r"\w+" for v in node.values]
        return re.compile("".join(parts))
    raise AssertionError(f"{where}: write the rule name as a literal (or an f-string) so the docs can be checked")


def _fragments(node: ast.expr | None) -> tuple[str, ...]:
    """The literal parts of a message, split where values are formatted in."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        pieces = [node.value]
    elif isinstance(node, ast.JoinedStr):
        pieces = [v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    else:
        return ()
    return tuple(" ".join(p.split()) for p in pieces if len(p.strip()) >= MIN_FRAGMENT)


def raised_rules() -> list[Raised]:
    found = []
    for path in sorted(VERIFY.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ERRORS:
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                found.append(Raised(where, _rule(_argument(node, 1, "rule"), where),
                                    _fragments(_argument(node, 2, "message"))))
    return found


RAISED = raised_rules()
STAGE_RULES = (DOCS / "stage-rules.md").read_text(encoding="utf-8")
FLAT = " ".join(STAGE_RULES.split())
# Rule headings: "#### `Name`", several names on one heading, an optional "(in stage)" after.
DOCUMENTED = {name for line in STAGE_RULES.splitlines() if line.startswith("#### ")
              for name in re.findall(r"`(\w+)`", line.split(" (")[0])}


def test_the_verifiers_raise_many_rules() -> None:
    # Guards the scan itself: the verifiers hold dozens of rules.
    assert len(RAISED) >= 40
    assert len(DOCUMENTED) >= 40


@pytest.mark.parametrize("raised", RAISED, ids=[r.where for r in RAISED])
def test_every_rule_has_a_heading(raised: Raised) -> None:
    if isinstance(raised.rule, str):
        assert raised.rule in DOCUMENTED, f"{raised.where}: rule {raised.rule} has no '#### `{raised.rule}`' in docs/stage-rules.md"
    else:
        assert any(raised.rule.fullmatch(name) for name in DOCUMENTED), (
            f"{raised.where}: no rule heading in docs/stage-rules.md matches {raised.rule.pattern}"
        )


@pytest.mark.parametrize("raised", RAISED, ids=[r.where for r in RAISED])
def test_every_message_is_quoted(raised: Raised) -> None:
    for fragment in raised.fragments:
        assert fragment in FLAT, f"{raised.where}: docs/stage-rules.md does not quote the message text {fragment!r}"


def test_documented_rules_exist() -> None:
    # The other direction: a heading for a rule nobody raises is stale.
    names = {r.rule for r in RAISED if isinstance(r.rule, str)}
    patterns = [r.rule for r in RAISED if not isinstance(r.rule, str)]
    stale = {n for n in DOCUMENTED if n not in names and not any(p.fullmatch(n) for p in patterns)}
    assert stale == set()
