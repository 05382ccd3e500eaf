"""tcpdsl as users install it: a wheel, or an editable install, in a fresh virtual environment, used
from a project of its own.

Once per pytest run and install mode, tcpdsl is installed into a new venv in a temporary project
folder whose ``pyproject.toml`` holds exactly the setup the README gives users: a wheel built from
this tree, or this tree itself in editable mode. mypy --strict (with the plugin) and pyright strict
then check kernels there, and both modes must give the same diagnostics. Beside it, a second
project (tests/ci_project) runs what docs/ci.md documents: ``pytest --tcpdsl``,
``tcpdsl check --format sarif`` and the pre-commit hook.

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

from sarif_check import sarif_problems
from static_corpus.support import EXAMPLES, ROOT, once, run_directory

CI_PROJECT: Final = Path(__file__).resolve().parent / "ci_project"
INSTALLS: Final = ("wheel", "editable")

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


def run_replayed(x: npt.NDArray[np.float32], w: npt.NDArray[np.float32]) -> str:
    with tcp.replay() as log:
        run(x, w)
    return f"{log} ({sum(log.replayed.values())} replayed)"
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


def _build(project: Path, mode: str) -> None:
    venv = project / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    dev_site = next(p for p in sys.path if p.endswith("site-packages"))
    Path(site, "tcpdsl-test-dependencies.pth").write_text(dev_site + "\n")
    if mode == "wheel":
        wheels = project.parent / "wheels"
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(ROOT)],
            check=True, capture_output=True,
        )
        (target,) = wheels.glob("tcpdsl-*.whl")
        install = [str(target)]
    else:
        install = ["--editable", str(ROOT)]
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
         "--no-build-isolation", *install],
        check=True, capture_output=True,
    )
    (project / "pyproject.toml").write_text(README_SETUP + "\n" + PYRIGHT_SETUP)
    for example in EXAMPLES.glob("*.py"):
        shutil.copy(example, project / example.name)
    (project / "user_kernel.py").write_text(KERNEL)
    (project / "user_mistakes.py").write_text(MISTAKES)
    ci = project.parent / "ci"
    shutil.copytree(CI_PROJECT, ci, ignore=shutil.ignore_patterns("__pycache__"))
    (ci / "pyproject.toml").write_text(README_SETUP)


def _installed(tmp_path_factory: pytest.TempPathFactory, mode: str) -> Path:
    folder = run_directory(tmp_path_factory.getbasetemp()) / f"installed-{mode}" / "project"
    folder.mkdir(parents=True, exist_ok=True)
    once(folder.parent, "installed", lambda: _build(folder, mode))
    return folder


@pytest.fixture(scope="session", params=INSTALLS)
def project(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The user project with tcpdsl installed from a wheel, or editable (each built once per pytest run)."""
    return _installed(tmp_path_factory, request.param)


@pytest.fixture(scope="session")
def wheel_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _installed(tmp_path_factory, "wheel")


def _user_env(project: Path) -> dict[str, str]:
    """The environment of a user whose project venv is active."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "MYPY", "VIRTUAL_ENV"))}
    env["VIRTUAL_ENV"] = str(project / ".venv")
    env["PATH"] = f"{project / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_the_package_is_installed_with_its_static_view(wheel_project: Path) -> None:
    project = wheel_project
    python = project / ".venv" / "bin" / "python"
    where = subprocess.run(
        [str(python), "-c", "import tcpdsl; print(tcpdsl.__file__)"],
        cwd=project, env=_user_env(project), check=True, capture_output=True, text=True,
    ).stdout.strip()
    package = Path(where).parent
    assert package.parent.name == "site-packages", where  # installed, not this source tree
    assert (package / "__init__.pyi").read_text() == (ROOT / "stubs" / "tcpdsl" / "__init__.pyi").read_text()
    assert (package / "py.typed").exists()
    assert (package / "cli" / "stage-rules.markdown").read_text() == (ROOT / "docs" / "stage-rules.md").read_text()
    assert not (package.parent / "tcpdsl-stubs").exists()  # the wheel carries the stub once, inside the package


def test_the_editable_install_reads_this_tree_and_its_stub_package(tmp_path_factory: pytest.TempPathFactory) -> None:
    project = _installed(tmp_path_factory, "editable")
    python = project / ".venv" / "bin" / "python"
    where = subprocess.run(
        [str(python), "-c", "import tcpdsl; print(tcpdsl.__file__)"],
        cwd=project, env=_user_env(project), check=True, capture_output=True, text=True,
    ).stdout.strip()
    assert Path(where) == ROOT / "tcpdsl" / "__init__.py"
    stubs = ROOT / "tcpdsl-stubs"
    assert stubs.is_symlink() and stubs.resolve() == (ROOT / "stubs" / "tcpdsl").resolve()
    assert (stubs / "py.typed").read_text() == "partial\n"  # the other modules come from the package


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


def _ci_outcomes(output: str) -> set[str]:
    return {line.split(" - ")[0] for line in output.splitlines() if re.match(r"^(PASSED|FAILED|SKIPPED|ERROR) ", line)}


def test_pytest_runs_each_kernel_of_the_project(project: Path) -> None:
    ci = project.parent / "ci"
    done = subprocess.run(
        ["python", "-m", "pytest", "--tcpdsl", "kernels", "-rA", "-p", "no:cacheprovider"],
        cwd=ci, env=_user_env(project), capture_output=True, text=True,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    found = _ci_outcomes(done.stdout)
    assert {o for o in found if not o.startswith("SKIPPED")} == {
        "PASSED kernels/good.py::matmul",
        "FAILED kernels/narrow.py::narrow_packet",
        "FAILED kernels/wrong.py::off_by_one",
    }, done.stdout
    assert any(re.match(r"SKIPPED \[1\] kernels/skipped\.py:\d+: parameter factor of scaled", o) for o in found), done.stdout
    assert "2 failed, 1 passed, 1 skipped" in done.stdout


def _ci_mypy_cache(project: Path) -> str:
    """One mypy cache for the checks of the CI project and the pre-commit hook (a cold mypy takes long)."""
    return str(project.parent / "ci-mypy-cache")


def _ci_sarif(project: Path) -> tuple[int, str, str]:
    """``tcpdsl check --format sarif`` of the CI project's layout mistake, run once per pytest run
    (it also warms the mypy cache the pre-commit hook reads)."""
    saved = project.parent / "ci-check.json"

    def check() -> None:
        done = subprocess.run(
            ["tcpdsl", "check", "--format", "sarif", "kernels/narrow.py", "--", "--cache-dir", _ci_mypy_cache(project)],
            cwd=project.parent / "ci", env=_user_env(project), capture_output=True, text=True,
        )
        saved.write_text(json.dumps([done.returncode, done.stdout, done.stderr]))

    once(project.parent, "ci-sarif", check)
    status, stdout, stderr = json.loads(saved.read_text())
    return status, stdout, stderr


def test_check_writes_sarif_with_the_documented_help(wheel_project: Path) -> None:
    status, stdout, stderr = _ci_sarif(wheel_project)
    assert status == 1, stderr
    log = json.loads(stdout)
    assert sarif_problems(log) == []
    (run,) = log["runs"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in run["results"]] == [
        ("OutPacketFlits", _line((CI_PROJECT / "kernels" / "narrow.py").read_text(), "# OutPacketFlits"))
    ]
    (rule,) = run["tool"]["driver"]["rules"]
    assert '"OutPacket must be 1 or 2 flits (32 bytes each), got {bytes} bytes"' in rule["help"]["text"]


def _documented_pre_commit_config() -> str:
    found = re.search(r"```yaml\n(repos:\n.*?)```", (ROOT / "docs" / "ci.md").read_text(), re.DOTALL)
    assert found is not None, "docs/ci.md shows no .pre-commit-config.yaml"
    return found[1]


def _git(folder: Path, *args: str) -> str:
    who = {"GIT_AUTHOR_NAME": "user", "GIT_AUTHOR_EMAIL": "user@example.com"}
    env = {**os.environ, **who, "GIT_COMMITTER_NAME": "user", "GIT_COMMITTER_EMAIL": "user@example.com"}
    return subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True, text=True, env=env).stdout.strip()


def test_pre_commit_with_the_documented_config_offline(wheel_project: Path, tmp_path: Path) -> None:
    # the hook's repository: this tree's .pre-commit-hooks.yaml, cloned from a local path
    hooks = tmp_path / "tcpdsl-hooks"
    hooks.mkdir()
    shutil.copy(ROOT / ".pre-commit-hooks.yaml", hooks)
    _git(hooks, "init", "-q")
    _git(hooks, "add", ".")
    _git(hooks, "commit", "-q", "-m", "hooks")
    config = re.sub(r"repo: \S+", f"repo: {hooks}", _documented_pre_commit_config())
    config = re.sub(r"rev: \S+", f"rev: {_git(hooks, 'rev-parse', 'HEAD')}", config)
    user = tmp_path / "user"
    shutil.copytree(CI_PROJECT / "kernels", user, ignore=shutil.ignore_patterns("narrow.py", "__pycache__"))
    (user / "pyproject.toml").write_text(README_SETUP)
    (user / ".pre-commit-config.yaml").write_text(config)
    _git(user, "init", "-q")
    _git(user, "add", ".")
    _ci_sarif(wheel_project)  # a warm mypy cache
    env = _user_env(wheel_project)
    # offline: a download of any kind would fail
    env.update(PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), http_proxy="http://127.0.0.1:9",
               https_proxy="http://127.0.0.1:9", PIP_NO_INDEX="1", MYPY_CACHE_DIR=_ci_mypy_cache(wheel_project))
    clean = subprocess.run(["python", "-m", "pre_commit", "run", "--all-files"], cwd=user, env=env, capture_output=True, text=True)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert re.search(r"tcpdsl check\.+Passed", clean.stdout), clean.stdout
    shutil.copy(CI_PROJECT / "kernels" / "narrow.py", user)
    _git(user, "add", "narrow.py")
    flagged = subprocess.run(["python", "-m", "pre_commit", "run", "--all-files"], cwd=user, env=env, capture_output=True, text=True)
    assert flagged.returncode == 1, flagged.stdout + flagged.stderr
    assert re.search(r"tcpdsl check\.+Failed", flagged.stdout), flagged.stdout
    assert "narrow.py:" in flagged.stdout
    assert "[contract_outer] OutPacketFlits: OutPacket must be 1 or 2 flits" in flagged.stdout
