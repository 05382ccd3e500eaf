"""Cost of the tcpdsl mypy plugin: mypy --strict with and without it, over examples/ and over the corpus.

Every run is a fresh mypy process with an empty cache directory, alternating the two configurations so
that machine load affects both alike. Prints the median wall time and the median CPU time (user + system,
of the mypy process) of each, and their ratios per file set (target: the plugin costs at most 1.2x). On
a machine shared with other work the CPU time is the steadier measure of the plugin's cost.
Usage: ``python benchmarks/bench_mypy.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "static_corpus"


def write_config(directory: Path, plugin: bool) -> Path:
    path = directory / ("with-plugin.ini" if plugin else "without-plugin.ini")
    lines = ["[mypy]", "strict = True", f"mypy_path = {ROOT / 'stubs'}"]
    if plugin:
        lines.append("plugins = tcpdsl.mypy_plugin")
    # tcpdsl's own modules are analysed in both configurations but judged by `make typecheck`, not here.
    lines += ["[mypy-tcpdsl.*]", "follow_imports = silent"]
    path.write_text("\n".join(lines) + "\n")
    return path


def one_run(config: Path, files: list[Path], scratch: Path, *, clean: bool) -> tuple[float, float]:
    """Wall and CPU seconds of one mypy process over ``files`` with a fresh cache.

    With ``clean`` any finding fails the benchmark; the corpus holds mistakes on purpose, so there
    only a crash does.
    """
    with tempfile.TemporaryDirectory(dir=scratch) as cache:
        command = [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", cache, *map(str, files)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, cwd=CORPUS, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode > 1 or "INTERNAL ERROR" in done.stdout + done.stderr or (clean and done.returncode != 0):
        raise SystemExit(f"mypy failed ({config.name}):\n{done.stdout}{done.stderr}")
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per configuration (default 3)")
    args = parser.parse_args()
    sets = {
        "examples": (sorted((ROOT / "examples").glob("*.py")), True),
        "corpus": (sorted(p for p in CORPUS.glob("*.py") if p.name != "support.py"), False),
    }
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        configs = {"without plugin": write_config(scratch, False), "with plugin": write_config(scratch, True)}
        for label, (files, clean) in sets.items():
            runs: dict[str, list[tuple[float, float]]] = {name: [] for name in configs}
            for _ in range(args.runs):
                for name, config in configs.items():
                    runs[name].append(one_run(config, files, scratch, clean=clean))
            print(f"mypy --strict over {len(files)} {label} modules, fresh cache, {args.runs} runs each")
            medians = {}
            for name, values in runs.items():
                wall, cpu = statistics.median(v[0] for v in values), statistics.median(v[1] for v in values)
                medians[name] = (wall, cpu)
                print(f"  {name:>15}: median wall {wall:6.2f} s, CPU {cpu:6.2f} s")
            wall_ratio = medians["with plugin"][0] / medians["without plugin"][0]
            cpu_ratio = medians["with plugin"][1] / medians["without plugin"][1]
            print(f"  ratio with/without plugin: wall {wall_ratio:.3f}, CPU {cpu_ratio:.3f} (target <= 1.2)")

if __name__ == "__main__":
    main()
