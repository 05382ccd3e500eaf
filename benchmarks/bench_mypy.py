"""Cost of the tcpdsl mypy plugin: mypy --strict over examples/ with and without it.

Every run is a fresh mypy process with an empty cache directory, alternating the two configurations so
that machine load affects both alike. Prints the median wall time of each and their ratio (target: the
plugin costs at most 1.5x). Usage: ``python benchmarks/bench_mypy.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_config(directory: Path, plugin: bool) -> Path:
    path = directory / ("with-plugin.ini" if plugin else "without-plugin.ini")
    lines = ["[mypy]", "strict = True", f"mypy_path = {ROOT / 'stubs'}"]
    if plugin:
        lines.append("plugins = tcpdsl.mypy_plugin")
    # tcpdsl's own modules are analysed in both configurations but judged by `make typecheck`, not here.
    lines += ["[mypy-tcpdsl.*]", "follow_imports = silent"]
    path.write_text("\n".join(lines) + "\n")
    return path


def one_run(config: Path, files: list[Path], scratch: Path) -> float:
    """Seconds for one mypy process over ``files`` with a fresh cache; fails loudly on any finding."""
    with tempfile.TemporaryDirectory(dir=scratch) as cache:
        command = [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", cache, *map(str, files)]
        start = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"mypy reported problems ({config.name}):\n{done.stdout}{done.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per configuration (default 3)")
    args = parser.parse_args()
    files = sorted((ROOT / "examples").glob("*.py"))
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        configs = {"without plugin": write_config(scratch, False), "with plugin": write_config(scratch, True)}
        times: dict[str, list[float]] = {name: [] for name in configs}
        for _ in range(args.runs):
            for name, config in configs.items():
                times[name].append(one_run(config, files, scratch))
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"mypy --strict over {len(files)} example modules, fresh cache, {args.runs} runs each")
    for name, median in medians.items():
        runs = ", ".join(f"{t:.2f}" for t in times[name])
        print(f"  {name:>15}: median {median:6.2f} s   (runs: {runs})")
    print(f"  ratio with/without plugin: {medians['with plugin'] / medians['without plugin']:.3f} (target <= 1.5)")


if __name__ == "__main__":
    main()
