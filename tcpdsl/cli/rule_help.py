"""The help text of each stage rule, read from the rule reference that ships with the package.

``tcpdsl/cli/stage-rules.markdown`` is a link to docs/stage-rules.md (a wheel holds a copy), so the text
a code-scanning tool shows next to a finding is the documented one, written once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Final

HEADING: Final = re.compile(r"^#### (?P<names>.+)$", re.MULTILINE)
NAME: Final = re.compile(r"`(\w+)`")
BULLET: Final = re.compile(r"^\* (?P<label>\w+): (?P<text>.*?)(?=^\* |\Z)", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class RuleHelp:
    """A rule's one-line summary and its whole documented entry (message, meaning, fix)."""

    summary: str
    text: str


def parse(reference: str) -> dict[str, RuleHelp]:
    """Each ``#### `Rule` `` entry of the reference by rule name; the entry runs to the next heading."""
    headings = list(HEADING.finditer(reference))
    found: dict[str, RuleHelp] = {}
    for index, heading in enumerate(headings):
        end = headings[index + 1].start() if index + 1 < len(headings) else len(reference)
        body = reference[heading.end() : end]
        body = re.split(r"^#", body, maxsplit=1, flags=re.MULTILINE)[0].strip()
        # the meaning sums a rule up best; an entry without one is summed up by its message
        bullets = {bullet["label"]: bullet["text"] for bullet in BULLET.finditer(body)}
        summary = " ".join(bullets.get("Means", bullets.get("Message", body)).split())
        for name in NAME.findall(heading["names"]):
            found[name] = RuleHelp(summary, body)
    return found


@cache
def rule_help() -> dict[str, RuleHelp]:
    """The shipped rule reference, parsed (empty if the package was installed without it)."""
    reference = resources.files("tcpdsl.cli").joinpath("stage-rules.markdown")
    if not reference.is_file():
        return {}
    return parse(reference.read_text(encoding="utf-8"))
