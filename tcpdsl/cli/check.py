"""``tcpdsl check PATH [PATH ...]``: mypy with the tcpdsl plugin, each diagnostic shown under its source line.

When a tcpdsl diagnostic names a line holding ``m["..."]`` expressions, the one it is about is
underlined with carets: the argument its message names (``OutPacket`` is ``out_packet=``), else the
mapping its text quotes, else the first one from the reported column on.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

PLUGIN: Final = "tcpdsl.mypy_plugin"
CONFIG_NAMES: Final = ("mypy.ini", ".mypy.ini", "pyproject.toml", "setup.cfg")
DIAGNOSTIC: Final = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<severity>error|note|warning): (?P<text>.*)$")
MAPPING_LITERAL: Final = re.compile(r"""\bm\[\s*(?P<q>["'])(?P<expr>.*?)(?P=q)\s*\]""")
# The names the rule messages use for stage arguments (matched as whole words), and the keywords.
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
        usage="tcpdsl check [-h] PATH [PATH ...] [-- MYPY_OPTION ...]",
        description="Run mypy with the tcpdsl plugin on each PATH and show each diagnostic under its source line.",
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


def package_root() -> Path | None:
    """The folder holding the tcpdsl package when it is not an installed site package.

    mypy cannot follow the import hooks of an editable install, so it is told where the sources are,
    and where the static view of the facade is (``stubs/``; a wheel ships it inside the package).
    """
    root = Path(__file__).resolve().parents[2]
    if any(part in ("site-packages", "dist-packages") for part in root.parts):
        return None
    return root


def generated_config() -> str:
    lines = ["[mypy]", f"plugins = {PLUGIN}", "follow_imports = silent"]
    root = package_root()
    if root is not None:
        lines.append(f"mypy_path = {root / 'stubs'}, {root}")
    return "\n".join(lines) + "\n"


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


def execute(args: argparse.Namespace) -> int:
    words: list[str] = args.words
    split = words.index("--") if "--" in words else len(words)
    paths, extra = [Path(w) for w in words[:split]], words[split + 1 :]
    if not paths:
        print("tcpdsl check: name at least one file or directory to check", file=sys.stderr)
        return 2
    missing = [p for p in paths if not p.exists()]
    if missing:
        print(f"tcpdsl check: no such file or directory: {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    stdout, stderr, status = run_mypy(paths, extra)
    sources: dict[str, list[str]] = {}
    items = parse_output(stdout)
    errors = 0
    for index, item in enumerate(items):
        if isinstance(item, str):
            print(item)
            continue
        errors += item.severity == "error"
        print("\n".join(render(item, sources, _notes_after(items, index))))
    if stderr:
        print(stderr, file=sys.stderr, end="" if stderr.endswith("\n") else "\n")
    where = " ".join(map(str, paths))
    print(f"tcpdsl check: {errors} error{'s' if errors != 1 else ''} in {where}", file=sys.stderr)
    return status
