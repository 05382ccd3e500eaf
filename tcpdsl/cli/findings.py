"""The findings of ``tcpdsl check`` as data: JSON, GitHub Actions workflow commands and SARIF 2.1.0.

A finding is one mypy error with the notes mypy attaches to it (a tcpdsl rule's hint is such a
note). A tcpdsl error reads ``[stage] Rule: message``; its rule is the rule of docs/stage-rules.md,
and any other error is named by its mypy error code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from tcpdsl.cli.rule_help import rule_help

CODE: Final = re.compile(r"^(?P<text>.*?)  \[(?P<code>[\w-]+)\]$")
RULE: Final = re.compile(r"^\[(?P<stage>\w+)\] (?P<rule>\w+): (?P<message>.*)$", re.DOTALL)
SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"


@dataclass(frozen=True)
class Finding:
    """One error: where, what (stage and rule for a tcpdsl rule), and its notes."""

    file: str
    line: int
    column: int | None
    code: str | None
    stage: str | None
    rule: str | None
    message: str
    notes: tuple[str, ...]

    @classmethod
    def of(cls, file: str, line: int, column: int | None, text: str, notes: tuple[str, ...]) -> Finding:
        coded = CODE.match(text)
        body, code = (coded["text"], coded["code"]) if coded else (text, None)
        ruled = RULE.match(body)
        if ruled is None:
            return cls(file, line, column, code, None, None, body, notes)
        return cls(file, line, column, code, ruled["stage"], ruled["rule"], ruled["message"], notes)

    @property
    def rule_id(self) -> str:
        """The rule name for a tcpdsl rule, else the mypy error code."""
        return self.rule or self.code or "mypy"

    @property
    def title(self) -> str:
        return f"[{self.stage}] {self.rule}" if self.rule else f"mypy {self.code or 'error'}"

    @property
    def full_message(self) -> str:
        return "\n".join([self.message, *(note.strip() for note in self.notes)])

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "code": self.code,
            "stage": self.stage,
            "rule": self.rule,
            "message": self.message,
            "notes": [note.strip() for note in self.notes],
        }


def as_json(findings: list[Finding], paths: list[str]) -> dict[str, Any]:
    return {"paths": paths, "errors": len(findings), "findings": [f.to_json() for f in findings]}


def _escape(text: str, *, property_value: bool = False) -> str:
    """Text as a workflow command carries it: ``%``, newlines (and in properties ``:`` and ``,``) escaped."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_value else text


def as_github(findings: list[Finding]) -> list[str]:
    """One ``::error`` workflow command per finding, which GitHub Actions shows on the line."""
    lines = []
    for f in findings:
        where = f"file={_escape(f.file, property_value=True)},line={f.line}"
        if f.column is not None:
            where += f",col={f.column}"
        lines.append(f"::error {where},title={_escape(f.title, property_value=True)}::{_escape(f.full_message)}")
    return lines


def _uri(file: str) -> str:
    path = Path(file)
    return path.as_posix() if not path.is_absolute() else path.as_uri()


def _rule_descriptor(rule_id: str, is_tcpdsl: bool) -> dict[str, Any]:
    help_entry = rule_help().get(rule_id) if is_tcpdsl else None
    if help_entry is not None:
        return {
            "id": rule_id,
            "name": rule_id,
            "shortDescription": {"text": help_entry.summary},
            "help": {"text": help_entry.text, "markdown": help_entry.text},
        }
    text = f"mypy error code {rule_id}" if not is_tcpdsl else f"tcpdsl rule {rule_id}"
    return {"id": rule_id, "name": rule_id, "shortDescription": {"text": text}, "help": {"text": text}}


def as_sarif(findings: list[Finding], version: str) -> dict[str, Any]:
    """A SARIF 2.1.0 log of one run; each rule carries its help text from docs/stage-rules.md."""
    rule_ids = list(dict.fromkeys(f.rule_id for f in findings))
    tcpdsl_rules = {f.rule_id for f in findings if f.rule}
    results = []
    for f in findings:
        region: dict[str, int] = {"startLine": f.line}
        if f.column is not None:
            region["startColumn"] = f.column
        results.append(
            {
                "ruleId": f.rule_id,
                "ruleIndex": rule_ids.index(f.rule_id),
                "level": "error",
                "message": {"text": f"{f.title}: {f.full_message}"},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(f.file)}, "region": region}}],
            }
        )
    driver = {
        "name": "tcpdsl",
        "version": version,
        "rules": [_rule_descriptor(rule_id, rule_id in tcpdsl_rules) for rule_id in rule_ids],
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{"tool": {"driver": driver}, "results": results}]}
