"""tcpdsl as users install it: a wheel in a fresh virtual environment, checked from a project of its own.

Once per pytest run a wheel is built from this tree and installed, not editable, into a new venv in
a temporary project folder whose ``pyproject.toml`` holds exactly the setup the README gives users.
mypy --strict (with the plugin) and pyright strict then check kernels there: the installed package,
not this source tree, is what they read.

The venv gets the wheel alone (``--no-deps``); its dependencies (numpy, mypy, ...) come from the
development venv through a ``.pth`` line, so the test needs no network and uses the same versions.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Final

import pytest

from static_corpus.support import EXAMPLES, ROOT, once, run_directory

# The user setup of README.md ("Check kernels before running them"), byte for byte.
README_SETUP: Final = '[tool.mypy]\nplugins = ["tcpdsl.mypy_plugin"]\n'
PYRIGHT_SETUP: Final = '[tool.pyright]\ntypeCheckingMode = "strict"\n'

KERNEL: Final = '''
import numpy as np
import numpy.typing as npt
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = tcp.TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["C"], m["B"]]


def run(x: npt.NDArray[np.float32], w: npt.NDArray[np.float32]) -> float:
    dev = tcp.Device(tcp.Topology(chips=1, pes=8))
    out = (
        Stream(dev.main, tcp.Tensor(x, "A B"))
        .contract_outer(Weights(tcp.Tensor(w, "C B")), out_time=m["A"], out_packet=m["B"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A"], out_packet=m["C"])
    )
    got = out.to_tensor().to_numpy("A C")
    np.testing.assert_allclose(got, x @ w.T, rtol=1e-2)
    return float(np.abs(got - np.einsum("ab,cb->ac", x, w)).max())
'''

MISTAKES: Final = '''
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Stream = tcp.CollectTensr[tcp.bf16, m["1"], m["1 # 2"], m["1 # 256"], m["A, B / 16"], m["B % 16"]]  # misspelt
Good = tcp.CollectTensor[tcp.bf16, m["1"], m["1 # 2"], m["1 # 256"], m["A, B / 16"], m["B % 16"]]
Weights = tcp.TrfTensor[tcp.bf16, m["1"], m["1 # 2"], m["1 # 256"], m["C"], m["B"]]


def kernel(x: Good, w: Weights) -> object:
    return (
        x.contract_outer(w, out_time=m["A"], out_packet=m["B"])
        .contract_time(out_time=m["A"])  # out of order
    )


def flits(x: Good, w: Weights) -> object:
    return x.contract_outer(w, out_time=m["A"], out_packet=m["B % 8"])  # flits
'''


def _line(text: str, marker: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), start=1) if marker in line)


def _build(project: Path) -> None:
    wheels = project.parent / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(ROOT)],
        check=True, capture_output=True,
    )
    (wheel,) = wheels.glob("tcpdsl-*.whl")
    venv = project / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True, capture_output=True,
    )
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    dev_site = next(p for p in sys.path if p.endswith("site-packages"))
    Path(site, "tcpdsl-test-dependencies.pth").write_text(dev_site + "\n")
    (project / "pyproject.toml").write_text(README_SETUP + "\n" + PYRIGHT_SETUP)
    for example in EXAMPLES.glob("*.py"):
        shutil.copy(example, project / example.name)
    (project / "user_kernel.py").write_text(KERNEL)
    (project / "user_mistakes.py").write_text(MISTAKES)


@pytest.fixture(scope="session")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The user project with tcpdsl installed from a wheel (built once per pytest run)."""
    folder = run_directory(tmp_path_factory.getbasetemp()) / "installed" / "project"
    folder.mkdir(parents=True, exist_ok=True)
    once(folder.parent, "installed", lambda: _build(folder))
    return folder


def _user_env(project: Path) -> dict[str, str]:
    """The environment of a user whose project venv is active."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "MYPY", "VIRTUAL_ENV"))}
    env["VIRTUAL_ENV"] = str(project / ".venv")
    env["PATH"] = f"{project / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_the_package_is_installed_with_its_static_view(project: Path) -> None:
    python = project / ".venv" / "bin" / "python"
    where = subprocess.run(
        [str(python), "-c", "import tcpdsl; print(tcpdsl.__file__)"],
        cwd=project, env=_user_env(project), check=True, capture_output=True, text=True,
    ).stdout.strip()
    package = Path(where).parent
    assert package.parent.name == "site-packages", where  # installed, not this source tree
    assert (package / "__init__.pyi").read_text() == (ROOT / "stubs" / "tcpdsl" / "__init__.pyi").read_text()
    assert (package / "py.typed").exists()


def test_readme_gives_the_setup_the_test_uses() -> None:
    assert README_SETUP in (ROOT / "README.md").read_text()
    assert README_SETUP in (ROOT / "docs" / "static-checking.md").read_text()


def test_mypy_strict_with_the_plugin_in_the_user_project(project: Path) -> None:
    done = subprocess.run(
        ["python", "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir", str(project.parent / "mypy-cache"), "."],
        cwd=project, env=_user_env(project), capture_output=True, text=True,
    )
    assert "INTERNAL ERROR" not in done.stdout + done.stderr, done.stderr
    found = sorted(
        (name, int(line), code)
        for name, line, code in re.findall(r"^(\w+)\.py:(\d+): error: .*\[([\w-]+)\]$", done.stdout, re.MULTILINE)
    )
    assert found == [
        ("user_mistakes", _line(MISTAKES, "# misspelt"), "attr-defined"),
        ("user_mistakes", _line(MISTAKES, "# out of order"), "attr-defined"),
        ("user_mistakes", _line(MISTAKES, "# flits"), "tcpdsl-layout"),
    ], done.stdout


def test_pyright_strict_in_the_user_project(project: Path) -> None:
    pyright = Path(sys.executable).parent / "pyright"
    done = subprocess.run(
        [str(pyright), "--outputjson", "."], cwd=project, env=_user_env(project), capture_output=True, text=True,
    )
    report = json.loads(done.stdout)
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    found = {(Path(d["file"]).stem, d["range"]["start"]["line"] + 1, d.get("rule")) for d in errors}
    # Each mistake is an attribute error at its line; strict mode adds its reportUnknown* consequences.
    expected = {
        ("user_mistakes", _line(MISTAKES, "# misspelt"), "reportAttributeAccessIssue"),
        ("user_mistakes", _line(MISTAKES, "# out of order"), "reportAttributeAccessIssue"),
    }
    primary = {f for f in found if not str(f[2]).startswith("reportUnknown")}
    assert primary == expected, textwrap.indent(done.stdout, "  ")
    assert {f[0] for f in found} == {"user_mistakes"}, textwrap.indent(done.stdout, "  ")
