"""The documentation stays true to the code.

* Every stage rule the verifiers raise is documented in docs/stage-rules.md under its name, with the
  fixed parts of its message word for word.
* Code and docs cite only the project's own docs/, and every cited section exists.
"""

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


# -- citations ----------------------------------------------------------------------------------

# What code and docs may cite: the project's own docs, never an outside specification.
CITED_FROM = [ROOT / "tcpdsl", ROOT / "tests", ROOT / "benchmarks", ROOT / "examples", ROOT / "stubs", DOCS]
SUFFIXES = {".py", ".pyi", ".md"}
OUTSIDE = re.compile(r"engine ?§|engine spec|engine\.md|mx-ascend|tooling-notes|api\.md|/shared\b", re.IGNORECASE)
DOC_NAME = re.compile(r"docs/([\w-]+\.md)")
SECTION = re.compile(r"§(\d+(?:\.\d+)*)(?:\s*-\s*§?(\d+(?:\.\d+)*))?")
HEADING = re.compile(r"^#{1,6}\s+(\d+(?:\.\d+)*)\.?\s", re.MULTILINE)


def _citing_files() -> list[Path]:
    files = [p for base in CITED_FROM for p in base.rglob("*") if p.suffix in SUFFIXES and p.is_file()]
    files.append(ROOT / "README.md")
    return sorted(p for p in files if p != Path(__file__).resolve())


def _sections(doc: str) -> set[str]:
    path = DOCS / doc
    return set(HEADING.findall(path.read_text(encoding="utf-8"))) if path.exists() else set()


# A section binds to a docs/ file named just before it: either directly, or through a list of
# sections that follows the name ("docs/runtime.md §3.4, §3.5"), within one sentence. Otherwise, in
# a document it is the document's own section, and in code a section of the last docs/ file named.
NEAR = 40
SENTENCE_END = re.compile(r"\.\s|\n\s*\n")


def citations(path: Path) -> list[tuple[int, str, str]]:
    """``(line, doc, section)`` for every ``§`` in ``path`` (doc ``""``: none named before it)."""
    text = path.read_text(encoding="utf-8")
    own = path.name if path.parent == DOCS else ""
    tokens = sorted([(m.start(), m.end(), m.group(1), None) for m in DOC_NAME.finditer(text)]
                    + [(m.start(), m.end(), None, m) for m in SECTION.finditer(text)], key=lambda t: t[0])
    out: list[tuple[int, str, str]] = []
    doc, since, last = "", 0, ""
    for start, end, name, match in tokens:
        if name is not None:
            doc, since, last = name, end, name
            continue
        assert match is not None
        gap = text[since:start]
        bound = doc if doc and len(gap) <= NEAR and not SENTENCE_END.search(gap) else ""
        doc, since = (bound, end) if bound else ("", end)
        line = text.count("\n", 0, start) + 1
        out += [(line, bound or own or last, s) for s in match.groups() if s is not None]
    return out


CITING = _citing_files()


def test_citations_are_scanned() -> None:
    assert sum(len(citations(p)) for p in CITING) >= 40


@pytest.mark.parametrize("path", CITING, ids=[str(p.relative_to(ROOT)) for p in CITING])
def test_no_outside_specification_is_cited(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    found = [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in OUTSIDE.finditer(text)]
    assert not found, f"{path.relative_to(ROOT)} cites outside texts {found}: cite the docs/ file instead"


@pytest.mark.parametrize("path", CITING, ids=[str(p.relative_to(ROOT)) for p in CITING])
def test_every_cited_section_exists(path: Path) -> None:
    missing = []
    for line, doc, section in citations(path):
        if not doc:
            missing.append(f"line {line}: §{section} names no docs/ file")
        elif not (DOCS / doc).exists():
            missing.append(f"line {line}: docs/{doc} does not exist")
        elif section not in _sections(doc):
            missing.append(f"line {line}: docs/{doc} has no section {section}")
    assert not missing, f"{path.relative_to(ROOT)}: " + "; ".join(missing)
