"""The results of ``tcpdsl run`` as a JUnit XML report, the form CI systems show as test cases
(docs/ci.md): one ``testcase`` per kernel, example ``main()`` or module that did not import."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import PurePath

from tcpdsl.harness.report import KernelResult, RunSummary, render_result

# XML 1.0 has no way to write these characters, even escaped; a kernel's output may hold them.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


def _classname(file: str) -> str:
    """``examples/matmul.py`` as ``examples.matmul``: readers split class names on dots."""
    path = PurePath(file)
    return ".".join(part for part in path.with_suffix("").parts if part not in ("/", "\\")) or file


def _case(result: KernelResult) -> ET.Element:
    case = ET.Element("testcase", {
        "classname": _text(_classname(result.file)), "name": _text(result.name),
        "file": _text(result.file), "time": f"{result.seconds:.4f}",
    })
    if result.skipped is not None:
        ET.SubElement(case, "skipped", {"message": _text(result.skipped)})
    elif not result.passed:
        message = (result.error or "failed").splitlines()[0]
        failure = ET.SubElement(case, "failure", {"message": _text(message), "type": result.kind})
        failure.text = _text(render_result(result))
    if result.output:
        ET.SubElement(case, "system-out").text = _text(result.output)
    return case


def junit_xml(summary: RunSummary) -> str:
    """The JUnit XML document of ``summary``: one test suite holding a test case per result."""
    counts = {
        "tests": str(len(summary.results)), "failures": str(summary.failed), "errors": "0",
        "skipped": str(summary.skipped), "time": f"{sum(r.seconds for r in summary.results):.4f}",
    }
    root = ET.Element("testsuites", {"name": "tcpdsl run", **counts})
    suite = ET.SubElement(root, "testsuite", {"name": f"tcpdsl run (evaluator {summary.evaluator}, seed {summary.seed})", **counts})
    properties = ET.SubElement(suite, "properties")
    for name, value in (("seed", str(summary.seed)), ("evaluator", summary.evaluator)):
        ET.SubElement(properties, "property", {"name": name, "value": value})
    suite.extend(_case(result) for result in summary.results)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
