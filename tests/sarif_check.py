"""The fields the SARIF 2.1.0 schema requires of what ``tcpdsl check --format sarif`` writes.

A hand-written subset of the schema (the test runs offline): every object it produces is checked
for the properties the schema marks required, the enumerations and minimum values it uses, and
that each result's ruleIndex points at its rule.
"""

from __future__ import annotations

from typing import Any

LEVELS = {"none", "note", "warning", "error"}


def _message(message: Any, where: str) -> list[str]:
    if not isinstance(message, dict) or not ("text" in message or "id" in message):
        return [f"{where}: a message needs text or id"]
    return []


def _text(value: Any, where: str) -> list[str]:
    """A multiformatMessageString: text required."""
    return [] if isinstance(value, dict) and isinstance(value.get("text"), str) else [f"{where}: needs text"]


def sarif_problems(log: Any) -> list[str]:
    """Every way ``log`` misses a required field of SARIF 2.1.0 (empty when it has them all)."""
    if not isinstance(log, dict) or log.get("version") != "2.1.0" or not isinstance(log.get("runs"), list):
        return ["log: needs version 2.1.0 and a runs array"]
    problems: list[str] = []
    for r, run in enumerate(log["runs"]):
        driver = run.get("tool", {}).get("driver") if isinstance(run, dict) else None
        if not isinstance(driver, dict) or not isinstance(driver.get("name"), str):
            problems.append(f"runs[{r}]: needs tool.driver.name")
            continue
        rules = driver.get("rules", [])
        for i, rule in enumerate(rules):
            if not isinstance(rule.get("id"), str):
                problems.append(f"rules[{i}]: needs an id")
            for key in ("shortDescription", "fullDescription", "help"):
                if key in rule:
                    problems += _text(rule[key], f"rules[{i}].{key}")
        for i, result in enumerate(run.get("results", [])):
            where = f"runs[{r}].results[{i}]"
            problems += _message(result.get("message"), where)
            if result.get("level", "warning") not in LEVELS:
                problems.append(f"{where}: level {result.get('level')!r}")
            index = result.get("ruleIndex")
            if index is not None and (index < 0 or index >= len(rules) or rules[index]["id"] != result.get("ruleId")):
                problems.append(f"{where}: ruleIndex {index} does not point at rule {result.get('ruleId')}")
            for location in result.get("locations", []):
                physical = location.get("physicalLocation", {})
                if "artifactLocation" in physical and not isinstance(physical["artifactLocation"].get("uri"), str):
                    problems.append(f"{where}: artifactLocation needs a uri")
                region = physical.get("region", {})
                for key in ("startLine", "startColumn"):
                    if key in region and (not isinstance(region[key], int) or region[key] < 1):
                        problems.append(f"{where}: region.{key} must be an integer from 1")
    return problems
