"""The stage table is the one list of stage facts: the runtime classes, the facade stub, the plugin's
hooks and docs/stage-rules.md all agree with it (docs/architecture.md, "Adding a stage")."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from tcpdsl.static.names import STAGE_METHODS, TENSOR_CLASSES, fullname
from tcpdsl.tensors.back import CastTensor, CommitCastTensor, CommitTrimTensor, TransposeTensor
from tcpdsl.tensors.device import TensorUnit
from tcpdsl.tensors.front import BeginTensor, FetchCastTensor, FetchTensor
from tcpdsl.tensors.memory import DmTensor, DmView, DmViewMut, HbmTensor, HbmView, HbmViewMut, VrfTensor
from tcpdsl.tensors.results import ContractOuterTensor, ContractPacketTensor, ContractTensor, ContractTimeTensor
from tcpdsl.tensors.sources import CollectTensor, TrfTensor
from tcpdsl.tensors.switched import SwitchTensor
from tcpdsl.verify.families import FAMILIES, VECTOR_FAMILIES, Family
from tcpdsl.tensors import vector
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.stages import STAGES

ROOT = Path(__file__).resolve().parent.parent
CLASSES: dict[Family, type] = {
    cls.__tcp_family__: cls
    for cls in (
        CollectTensor, TrfTensor, ContractOuterTensor, ContractPacketTensor, ContractTimeTensor, ContractTensor,
        DmTensor, HbmTensor, DmView, DmViewMut, HbmView, HbmViewMut, VrfTensor, BeginTensor, FetchTensor, FetchCastTensor, CastTensor,
        CommitTrimTensor, CommitCastTensor, SwitchTensor, TransposeTensor, *(getattr(vector, f.name) for f in VECTOR_FAMILIES.values()),
    )
}
# Classes whose methods a row names by StageRow.method_of instead of by its receiver family.
OWNERS: dict[str, type] = {"TuContext": TensorUnit}


def method_class(row_owner: str | None, family: Family) -> type:
    return OWNERS[row_owner] if row_owner is not None else CLASSES[family]
# Keyword arguments of a runtime method that are not stage arguments.
RUNTIME_ONLY = {
    Stage.CONTRACT_LANE: ("evaluator",),
    # An argument mode only says which inputs an op reads: the evaluators use it, no rule does.
    **{stage: ("mode",) for stage in (
        Stage.VECTOR_LOGIC, Stage.VECTOR_FXP, Stage.VECTOR_FP_BINARY, Stage.VECTOR_FP_TERNARY, Stage.VECTOR_FP_DIV,
        Stage.VECTOR_CLIP,
    )},
}


def test_every_stage_has_one_row_and_every_family_a_class() -> None:
    assert set(STAGES) == set(Stage) and len(STAGES) == len(Stage)
    assert all(row.stage is stage for stage, row in STAGES.items())
    assert set(CLASSES) == set(FAMILIES.values())


def test_each_class_has_exactly_the_methods_of_its_stages() -> None:
    """The typestate: a tensor class has the methods of the stages that may follow it, and no other."""
    for family, cls in CLASSES.items():
        methods = {name for name in dir(cls) if name in set(Stage)}
        own = {str(row.stage) for row in STAGES.values() if family in row.receivers and row.method_of is None}
        assert methods == own, family.name
    for owner, cls in OWNERS.items():
        methods = {name for name in dir(cls) if name in set(Stage)}
        assert methods == {str(row.stage) for row in STAGES.values() if row.method_of == owner}, owner


def test_runtime_methods_take_the_arguments_of_their_row() -> None:
    for row in STAGES.values():
        for family in row.receivers:
            signature = inspect.signature(getattr(method_class(row.method_of, family), row.stage))
            params = list(signature.parameters.values())[1:]  # after self
            positional = [p.name for p in params if p.kind is not inspect.Parameter.KEYWORD_ONLY]
            keywords = [p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]
            receiver = ["view"] if row.method_of is not None else []  # begin(view): the receiver is passed
            assert positional == [*receiver, *row.positional, *(name for name, _ in row.operands)], row.stage
            assert keywords == [*row.keywords, *RUNTIME_ONLY.get(row.stage, ())], row.stage
            returned = str(signature.return_annotation)
            assert returned.split("[")[0] == row.returns(family).name, (row.stage, returned)


def test_the_facade_stub_exports_each_class_from_where_the_plugin_looks() -> None:
    stub = (ROOT / "stubs" / "tcpdsl" / "__init__.pyi").read_text()
    for family in FAMILIES.values():
        module, name = fullname(family).rsplit(".", 1)
        assert f"from {module} import {name} as {name}\n" in stub, family.name


def test_the_plugin_hooks_every_method_of_the_table() -> None:
    expected = {
        f"{fullname(f) if row.method_of is None else _qualified(OWNERS[row.method_of])}.{row.stage}": row.stage
        for row in STAGES.values()
        for f in row.receivers
    }
    assert STAGE_METHODS == expected
    assert set(TENSOR_CLASSES.values()) == set(FAMILIES.values())


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def test_each_row_names_the_section_of_its_rules() -> None:
    rules = (ROOT / "docs" / "stage-rules.md").read_text()
    headings = dict(re.findall(r"^## (\d+(?:\.\d+)*) (.*)$", rules, re.MULTILINE))
    for row in STAGES.values():
        assert f"`{row.stage}`" in headings.get(row.section, ""), (row.stage, row.section)
