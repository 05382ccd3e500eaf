"""``tcpdsl check PATH [PATH ...]``: mypy with the tcpdsl plugin, each diagnostic shown under its source line.

``--format`` also gives the findings as JSON, GitHub Actions workflow commands or SARIF 2.1.0
(docs/ci.md). The exit status is 0 when the paths are clean, 1 when mypy reports an error, and 2
for a usage or environment error: no path, a path that does not exist or cannot be read as Python
source (not UTF-8, a symbolic link loop, a folder without Python files), or mypy unable to run.

When a tcpdsl diagnostic names a line holding ``m["..."]`` expressions, the one it is about is
underlined with carets: the argument its message names (``OutPacket`` is ``out_packet=``), else the
mapping its text quotes, else the first one from the reported column on.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from tcpdsl import __version__
from tcpdsl.cli.findings import Finding, as_github, as_json, as_sarif

PLUGIN: Final = "tcpdsl.mypy_plugin"
CONFIG_NAMES: Final = ("mypy.ini", ".mypy.ini", "pyproject.toml", "setup.cfg")
DIAGNOSTIC: Final = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<severity>error|note|warning): (?P<text>.*)$")
MAPPING_LITERAL: Final = re.compile(r"""\bm\[\s*(?P<q>["'])(?P<expr>.*?)(?P=q)\s*\]""")
# The names the rule messages use for stage arguments (matched as whole words), and the keywords.
FORMATS: Final = ("text", "json", "github", "sarif")
CLEAN, FINDINGS, USAGE_ERROR = 0, 1, 2
ROLES: Final = {
    "OutPacket": "out_packet",
    "OutTime": "out_time",
    "Element": "element",
    "Lane": "lane",
}


@dataclass(frozen=True)
class Diagnostic:
    """One mypy output line that names a source position."""

    file: str
    line: int
    column: int | None
    severity: str
    text: str


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "check",
        help="type-check kernels with mypy and the tcpdsl plugin",
        usage="tcpdsl check [-h] [--format {text,json,github,sarif}] PATH [PATH ...] [-- MYPY_OPTION ...]",
        description="Run mypy with the tcpdsl plugin on each PATH and show each diagnostic under its source line.",
        epilog="exit status: 0 clean, 1 findings, 2 usage or environment errors",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="text (default), json, github (GitHub Actions workflow commands) or sarif (SARIF 2.1.0)",
    )
    parser.add_argument(
        "words",
        metavar="PATH [PATH ...] [-- MYPY_OPTION ...]",
        nargs=argparse.REMAINDER,
        help="files or directories to check, then further mypy options after --",
    )


def find_config(path: Path) -> Path | None:
    """The nearest mypy configuration above ``path`` that already enables the plugin."""
    start = path.resolve()
    for folder in [start, *start.parents] if start.is_dir() else start.parents:
        for name in CONFIG_NAMES:
            candidate = folder / name
            if candidate.is_file() and PLUGIN in candidate.read_text(encoding="utf-8", errors="replace"):
                return candidate
    return None


def parse_output(stdout: str) -> list[Diagnostic | str]:
    """mypy's report, each line a Diagnostic when it names a position, else kept as text."""
    out: list[Diagnostic | str] = []
    for line in stdout.splitlines():
        match = DIAGNOSTIC.match(line)
        if match is None:
            out.append(line)
            continue
        col = match["col"]
        out.append(Diagnostic(match["file"], int(match["line"]), int(col) if col else None, match["severity"], match["text"]))
    return out


def underline(source: str, diagnostic: Diagnostic, context: str = "") -> str | None:
    """Carets under the ``m["..."]`` a tcpdsl diagnostic is about, or under the reported column.

    For a tcpdsl error the mapping is found by the stage argument the message names (``OutPacket``
    → ``out_packet=``), else by the mapping text it quotes (``context`` adds the notes that follow
    it), else as the first one at or after the column. Other errors get a caret at their column.
    """
    literals = list(MAPPING_LITERAL.finditer(source))
    col = diagnostic.column - 1 if diagnostic.column is not None else None
    chosen = next((lit for lit in literals if col is not None and lit.start() <= col < lit.end()), None)
    if chosen is None and diagnostic.text.startswith("[") and literals:
        chosen = _by_role(source, literals, diagnostic.text) or _by_text(literals, diagnostic.text + "\n" + context)
        if chosen is None and col is not None:
            chosen = next((lit for lit in literals if lit.start() >= col), None)
    if chosen is not None:
        return " " * chosen.start() + "^" * (chosen.end() - chosen.start())
    if col is not None:
        return " " * col + "^"
    return None


def _by_role(source: str, literals: list[re.Match[str]], text: str) -> re.Match[str] | None:
    """The literal passed as the stage argument the message names first (OutPacket, Element, ...)."""
    named = sorted((text.find(role), keyword) for role, keyword in ROLES.items() if re.search(rf"\b{role}\b", text))
    for _, keyword in named:
        for lit in literals:
            if re.search(rf"\b{keyword}\s*=\s*$", source[: lit.start()]):
                return lit
    return None


def _by_text(literals: list[re.Match[str]], text: str) -> re.Match[str] | None:
    """The literal whose mapping text the message quotes (longest first, as whole words)."""
    for lit in sorted(literals, key=lambda lit: -len(lit["expr"])):
        expr = " ".join(lit["expr"].split())
        if expr and re.search(rf"(?<![\w]){re.escape(expr)}(?![\w])", text):
            return lit
    return None


def render(diagnostic: Diagnostic, sources: dict[str, list[str]], context: str = "") -> list[str]:
    """The diagnostic, then (for errors) its source line with carets under the offending part."""
    where = f"{diagnostic.file}:{diagnostic.line}" + (f":{diagnostic.column}" if diagnostic.column else "")
    lines = [f"{where}: {diagnostic.severity}: {diagnostic.text}"]
    if diagnostic.severity == "note":
        return lines
    if diagnostic.file not in sources:
        try:
            sources[diagnostic.file] = Path(diagnostic.file).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            sources[diagnostic.file] = []
    text = sources[diagnostic.file]
    if 0 < diagnostic.line <= len(text):
        source = text[diagnostic.line - 1]
        indent = len(source) - len(source.lstrip())
        lines.append("    " + source[indent:])
        marks = underline(source, diagnostic, context)
        if marks is not None:
            lines.append("    " + marks[indent:])
    return lines


def generated_config() -> str:
    return "\n".join(["[mypy]", f"plugins = {PLUGIN}", "follow_imports = silent"]) + "\n"


def run_mypy(paths: list[Path], extra: list[str]) -> tuple[str, str, int]:
    from mypy import api

    options = [*map(str, paths), "--show-column-numbers", "--no-error-summary", "--hide-error-context", *extra]
    config = find_config(paths[0])
    if config is not None:
        return api.run(["--config-file", str(config), *options])
    with tempfile.TemporaryDirectory(prefix="tcpdsl-check-") as folder:
        generated = Path(folder) / "mypy.ini"
        generated.write_text(generated_config(), encoding="utf-8")
        return api.run(["--config-file", str(generated), *options])


def _notes_after(items: list[Diagnostic | str], index: int) -> str:
    """The text of the notes mypy attaches to the diagnostic at ``index`` (same file and line)."""
    head = items[index]
    notes = []
    for item in items[index + 1 :]:
        if not isinstance(item, Diagnostic) or item.severity != "note" or isinstance(head, str):
            break
        if (item.file, item.line) != (head.file, head.line):
            break
        notes.append(item.text)
    return "\n".join(notes)


def unreadable(path: Path) -> list[str]:
    """Why ``path`` cannot be checked, one message per bad file or folder (empty when it can).

    mypy takes such paths for a crash of its own or for an empty folder; saying which path is bad
    and why lets the user fix it.
    """
    if not path.exists():
        loop = path.is_symlink()
        return [f"{path}: {'a symbolic link that never resolves' if loop else 'no such file or directory'}"]
    if path.is_file():
        return _undecodable(path)
    problems: list[str] = []
    sources = 0
    for folder, folders, files in os.walk(path):
        here = Path(folder)
        folders[:] = [name for name in folders if not _skipped(name)]
        files = [name for name in files if not _skipped(name)]
        for name in list(folders):
            child = here / name
            if child.is_symlink():
                folders.remove(name)  # not walked into, since a loop would never end
                try:
                    target = child.resolve(strict=True)
                except (OSError, RuntimeError):
                    problems.append(f"{child}: a symbolic link that never resolves")
                    continue
                if target == here.resolve() or target in here.resolve().parents:
                    problems.append(f"{child}: a symbolic link loop (it points at {target}, a folder above it)")
        for name in files:
            if name.endswith((".py", ".pyi")):
                sources += 1
                problems += _undecodable(here / name)
    if sources == 0 and not problems:
        problems.append(f"{path}: no Python files in this folder")
    return problems


def _skipped(name: str) -> bool:
    """The names mypy leaves out when it walks a folder (hidden ones, caches, installed packages)."""
    return name.startswith(".") or name in ("__pycache__", "site-packages", "node_modules")


def _undecodable(file: Path) -> list[str]:
    """A message when ``file`` is no Python source text in its declared encoding (UTF-8 by default)."""
    try:
        with tokenize.open(file) as source:
            source.read()
    except (SyntaxError, UnicodeDecodeError) as error:
        return [f"{file}: not Python source text: it is not UTF-8 and declares no encoding it is written in ({error})"]
    except OSError as error:
        return [f"{file}: cannot be read ({error.strerror or error})"]
    return []


def findings(items: list[Diagnostic | str]) -> list[Finding]:
    """Every error of mypy's report, with the notes attached to it."""
    out = []
    for index, item in enumerate(items):
        if isinstance(item, Diagnostic) and item.severity == "error":
            notes = tuple(_notes_after(items, index).splitlines())
            out.append(Finding.of(item.file, item.line, item.column, item.text, notes))
    return out


def execute(args: argparse.Namespace) -> int:
    words: list[str] = args.words
    split = words.index("--") if "--" in words else len(words)
    paths, extra = [Path(w) for w in words[:split]], words[split + 1 :]
    if not paths:
        print("tcpdsl check: name at least one file or directory to check", file=sys.stderr)
        return USAGE_ERROR
    options = [str(p) for p in paths if str(p).startswith("-")]
    if options:
        print(f"tcpdsl check: options go before the paths, mypy's after --: {' '.join(options)}", file=sys.stderr)
        return USAGE_ERROR
    problems = [problem for path in paths for problem in unreadable(path)]
    if problems:
        for problem in problems:
            print(f"tcpdsl check: {problem}", file=sys.stderr)
        print(f"tcpdsl check: nothing checked, {len(problems)} bad path{'s' if len(problems) != 1 else ''}", file=sys.stderr)
        return USAGE_ERROR
    stdout, stderr, status = run_mypy(paths, extra)
    items = parse_output(stdout)
    found = findings(items)
    where = " ".join(map(str, paths))
    if args.format == "text":
        _print_text(items)
    elif status != USAGE_ERROR:
        if args.format == "json":
            print(json.dumps(as_json(found, [str(p) for p in paths]), indent=2))
        elif args.format == "github":
            print("\n".join(as_github(found)))
        else:
            print(json.dumps(as_sarif(found, __version__), indent=2))
    if stderr:
        print(stderr, file=sys.stderr, end="" if stderr.endswith("\n") else "\n")
    if status == USAGE_ERROR:
        if args.format != "text":
            print(stdout, file=sys.stderr, end="")
        print(f"tcpdsl check: mypy could not check {where}", file=sys.stderr)
        return USAGE_ERROR
    errors = len(found)
    print(f"tcpdsl check: {errors} error{'s' if errors != 1 else ''} in {where}", file=sys.stderr)
    return FINDINGS if errors or status else CLEAN


def _print_text(items: list[Diagnostic | str]) -> None:
    sources: dict[str, list[str]] = {}
    for index, item in enumerate(items):
        if isinstance(item, str):
            print(item)
        else:
            print("\n".join(render(item, sources, _notes_after(items, index))))
