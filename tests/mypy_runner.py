"""Run mypy in-process with an explicit configuration, with or without the tcpdsl plugin.

An explicit config keeps the outcome independent of the project's own ``[tool.mypy]`` settings,
so a "no plugin" run really has no plugin.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parent.parent


def run_mypy(files: list[str], *, plugin: bool, cache_name: str) -> list[str]:
    """mypy --strict over ``files``; returns its output lines."""
    lines = ["[mypy]", f"mypy_path = {ROOT / 'stubs'}"]
    if plugin:
        lines.append("plugins = tcpdsl.mypy_plugin")
    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "mypy.ini"
        config.write_text("\n".join(lines) + "\n")
        cache = Path(tempfile.gettempdir()) / cache_name
        out, _, _ = api.run(
            ["--strict", "--config-file", str(config), "--cache-dir", str(cache), "--no-error-summary", *files]
        )
    return out.splitlines()
