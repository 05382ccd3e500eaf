"""``tcpdsl check``: its machine-readable formats, its exit codes and the paths it cannot check."""

from __future__ import annotations

import json
import os
import re
import uuid
from pathlib import Path

import pytest

from sarif_check import sarif_problems
from tcpdsl.cli.check import CLEAN, FINDINGS, USAGE_ERROR, findings, parse_output, unreadable
from tcpdsl.cli.findings import as_github, as_json, as_sarif
from tcpdsl.cli.main import main
from tcpdsl.cli.rule_help import parse, rule_help

MYPY_REPORT = (
    "k.py:19:12: error: [contract_outer] OutPacketFlits: OutPacket must be 1 or 2 flits (32 bytes each), "
    "got 16 bytes  [tcpdsl-layout]\n"
    "k.py:19:12: note:   hint: make OutPacket 16 or 32 elements of bf16 (OutPacket B % 8 has 8)\n"
    'k.py:25:5: error: Module has no attribute "CollectTensr"; maybe "CollectTensor"?  [attr-defined]\n'
)

GOOD_KERNEL = '''
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 4)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)
Stream = tcp.CollectTensor[tcp.bf16, m["1"], m["1 # 2"], m["1 # 256"], m["A, B / 16"], m["B % 16"]]
Weights = tcp.CollectTensor[tcp.bf16, m["1"], m["1 # 2"], m["1 # 256"], m["C, B / 16"], m["B % 16"]]


@tcp.kernel
def narrow_packet(x: Stream, w: Weights) -> object:
    trf = w.to_trf(lane=m["C"], element=m["B"])
    return x.contract_outer(trf, out_time=m["A"], out_packet=m["B"])
'''
BAD_KERNEL = GOOD_KERNEL.replace('out_packet=m["B"])', 'out_packet=m["B % 8"])')


def test_findings_carry_stage_rule_code_and_hint() -> None:
    first, second = findings(parse_output(MYPY_REPORT))
    assert (first.file, first.line, first.column, first.code) == ("k.py", 19, 12, "tcpdsl-layout")
    assert (first.stage, first.rule) == ("contract_outer", "OutPacketFlits")
    assert first.message == "OutPacket must be 1 or 2 flits (32 bytes each), got 16 bytes"
    assert first.notes == ("  hint: make OutPacket 16 or 32 elements of bf16 (OutPacket B % 8 has 8)",)
    assert (second.rule, second.code, second.rule_id, second.title) == (None, "attr-defined", "attr-defined", "mypy attr-defined")
    document = as_json([first, second], ["k.py"])
    assert document["errors"] == 2
    assert document["findings"][0]["notes"] == ["hint: make OutPacket 16 or 32 elements of bf16 (OutPacket B % 8 has 8)"]


def test_github_workflow_commands_escape_their_text() -> None:
    lines = as_github(findings(parse_output(MYPY_REPORT)))
    assert lines[0] == (
        "::error file=k.py,line=19,col=12,title=[contract_outer] OutPacketFlits::"
        "OutPacket must be 1 or 2 flits (32 bytes each), got 16 bytes%0A"
        "hint: make OutPacket 16 or 32 elements of bf16 (OutPacket B % 8 has 8)".replace("% 8", "%25 8")
    )
    assert lines[1].startswith("::error file=k.py,line=25,col=5,title=mypy attr-defined::Module has no attribute")
    odd = findings(parse_output("a,b:c.py:3:1: error: 100% wrong\n"))
    assert as_github(odd)[0] == "::error file=a%2Cb%3Ac.py,line=3,col=1,title=mypy error::100%25 wrong"


def test_sarif_has_the_required_fields_and_the_documented_help() -> None:
    log = as_sarif(findings(parse_output(MYPY_REPORT)), "0.1.0")
    assert sarif_problems(log) == []
    (run,) = log["runs"]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert set(rules) == {"OutPacketFlits", "attr-defined"}
    assert rules["OutPacketFlits"]["help"]["text"] == rule_help()["OutPacketFlits"].text
    assert "OutPacket must be 1 or 2 flits (32 bytes each), got {bytes} bytes" in rules["OutPacketFlits"]["help"]["text"]
    assert rules["OutPacketFlits"]["shortDescription"]["text"].startswith("the packet is built from whole flits")
    first = run["results"][0]
    assert first["ruleId"] == "OutPacketFlits" and first["level"] == "error"
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "k.py"},
        "region": {"startLine": 19, "startColumn": 12},
    }


def test_the_validator_catches_missing_fields() -> None:
    log = as_sarif(findings(parse_output(MYPY_REPORT)), "0.1.0")
    del log["runs"][0]["results"][0]["message"]
    log["runs"][0]["results"][1]["ruleIndex"] = 0
    assert sarif_problems(log) == [
        "runs[0].results[0]: a message needs text or id",
        "runs[0].results[1]: ruleIndex 0 does not point at rule attr-defined",
    ]
    assert sarif_problems({"version": "2.0.0", "runs": []}) == ["log: needs version 2.1.0 and a runs array"]


def test_every_documented_rule_has_help() -> None:
    reference = "#### `Aa`, `Bb`\n\n* Message: \"m\"\n* Means: it\n  means.\n* Fix: f.\n\n## next\n#### `Cc`\n\n* Message: \"only\"\n"
    helps = parse(reference)
    assert helps["Aa"] == helps["Bb"] and helps["Aa"].summary == "it means."
    assert helps["Aa"].text == '* Message: "m"\n* Means: it\n  means.\n* Fix: f.'
    assert helps["Cc"].summary == '"only"'
    assert {"OutPacketFlits", "StageOrder", "SliceMismatch", "PartialByte"} <= set(rule_help())


def _check(args: list[str], pytestconfig: pytest.Config) -> int:
    assert pytestconfig.cache is not None
    cache = pytestconfig.cache.mkdir("tcpdsl-check-mypy")
    return main(["check", *args, "--", "--cache-dir", str(cache)])


@pytest.mark.parametrize("form", ["json", "github", "sarif"])
def test_check_formats_on_a_real_kernel(
    form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], pytestconfig: pytest.Config
) -> None:
    bad = tmp_path / f"kernel_{uuid.uuid4().hex[:12]}.py"
    bad.write_text(BAD_KERNEL, encoding="utf-8")
    line = BAD_KERNEL.splitlines().index('    return x.contract_outer(trf, out_time=m["A"], out_packet=m["B % 8"])') + 1
    assert _check(["--format", form, str(bad)], pytestconfig) == 1
    out, err = capsys.readouterr()
    assert "tcpdsl check: 1 error in" in err
    if form == "github":
        column = BAD_KERNEL.splitlines()[line - 1].index("contract_outer") + 1
        assert out.startswith(f"::error file={bad},line={line},col={column},title=[contract_outer] OutPacketFlits::OutPacket must be")
        return
    document = json.loads(out)
    if form == "json":
        assert [(f["line"], f["rule"], f["code"]) for f in document["findings"]] == [(line, "OutPacketFlits", "tcpdsl-layout")]
    else:
        assert sarif_problems(document) == []
        assert [r["ruleId"] for r in document["runs"][0]["results"]] == ["OutPacketFlits"]


def test_a_clean_file_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str], pytestconfig: pytest.Config) -> None:
    good = tmp_path / f"kernel_{uuid.uuid4().hex[:12]}.py"
    good.write_text(GOOD_KERNEL, encoding="utf-8")
    assert _check(["--format", "sarif", str(good)], pytestconfig) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["runs"][0]["results"] == []
    assert "tcpdsl check: 0 errors in" in err


def test_paths_that_cannot_be_checked_are_named_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    latin = tmp_path / "latin.py"
    latin.write_bytes(b'name = "caf\xe9"\n')
    assert main(["check", str(latin)]) == 2
    err = capsys.readouterr().err
    assert f"tcpdsl check: {latin}: not Python source text: it is not UTF-8 and declares no encoding it is written in" in err
    assert "0 errors" not in err and "nothing checked, 1 bad path" in err

    declared = tmp_path / "declared.py"
    declared.write_bytes(b'# -*- coding: latin-1 -*-\nname = "caf\xe9"\n')
    assert unreadable(declared) == []

    loop = tmp_path / "loop"
    loop.mkdir()
    (loop / "kernel.py").write_text("x = 1\n", encoding="utf-8")
    os.symlink(loop, loop / "again")
    os.symlink(tmp_path / "b", tmp_path / "a")
    os.symlink(tmp_path / "a", tmp_path / "b")
    empty = tmp_path / "empty"
    (empty / ".venv").mkdir(parents=True)
    (empty / ".venv" / "latin.py").write_bytes(b'name = "caf\xe9"\n')  # hidden, as mypy hides it
    assert main(["check", str(loop), str(tmp_path / "a"), str(empty)]) == 2
    err = capsys.readouterr().err
    assert f"tcpdsl check: {loop / 'again'}: a symbolic link loop (it points at {loop}, a folder above it)" in err
    assert f"tcpdsl check: {tmp_path / 'a'}: a symbolic link that never resolves" in err
    assert f"tcpdsl check: {empty}: no Python files in this folder" in err
    assert "nothing checked, 3 bad paths" in err


def test_options_after_the_paths_are_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path), "--format", "json"]) == 2
    assert "options go before the paths, mypy's after --: --format" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["check", "--format", "xml", str(tmp_path)])
    assert stop.value.code == 2



def test_the_documented_ci_configurations_run_the_checks() -> None:
    yaml = pytest.importorskip("yaml")
    root = Path(__file__).resolve().parent.parent
    text = (root / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", text, re.DOTALL)]
    pre_commit = next(b for b in blocks if "repos" in b)
    (hook,) = yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [h["id"] for h in pre_commit["repos"][0]["hooks"]] == [hook["id"]] == ["tcpdsl-check"]
    assert (hook["entry"], hook["language"], hook["types"]) == ("tcpdsl check", "system", ["python"])
    github = next(b for b in blocks if "jobs" in b)
    runs = [step.get("run", "") for step in github["jobs"]["kernels"]["steps"]]
    gitlab = next(b for b in blocks if "kernels" in b and "script" in b["kernels"])
    for commands in (runs, gitlab["kernels"]["script"]):
        assert any(c.startswith("tcpdsl check ") for c in commands)
        assert any(c.startswith("pytest --tcpdsl kernels/") for c in commands)
    assert "tcpdsl check --format github kernels/" in runs
    assert any(c.startswith("tcpdsl check --format sarif kernels/ > tcpdsl.sarif") for c in runs)
    # the exit codes the table documents are the ones check returns
    assert (CLEAN, FINDINGS, USAGE_ERROR) == (0, 1, 2)
    for status, meaning in ((0, "clean"), (1, "findings"), (2, "usage or environment error")):
        assert re.search(rf"^\| {status} \| {meaning}", text, re.MULTILINE)
