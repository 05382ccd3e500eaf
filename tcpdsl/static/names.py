"""Full names of the runtime objects the plugin recognises: the tensor classes, their stage methods, axes."""

from __future__ import annotations

from typing import Final

from tcpdsl.verify.families import BEGIN, CAST, COLLECT, COMMIT_CAST, COMMIT_TRIM, DM, DM_VIEW, DM_VIEW_MUT, FAMILIES
from tcpdsl.verify.families import FETCH, FETCH_CAST, HBM, HBM_VIEW, HBM_VIEW_MUT, SWITCH, TRANSPOSE, TRF, VRF, Family
from tcpdsl.verify.families import VECTOR_FAMILIES
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.stages import STAGES

SOURCES_MODULE: Final = "tcpdsl.tensors.sources"
RESULTS_MODULE: Final = "tcpdsl.tensors.results"
SCALARS_MODULE: Final = "tcpdsl.numerics.scalars"
SCALAR_BASE: Final = f"{SCALARS_MODULE}.Scalar"
LOGICAL_TENSOR: Final = "tcpdsl.numerics.logical.Tensor"
AXIS_CLASS: Final = "tcpdsl.algebra.scope.Axis"
AXIS_FUNCTIONS: Final = frozenset({"tcpdsl.algebra.scope.axis", "tcpdsl.axis"})
LITERAL_NAMES: Final = frozenset({"typing.Literal", "typing_extensions.Literal"})
FACADE: Final = "tcpdsl"
MAPPING_FORM: Final = "m"
# The stash state a vector pass position has when its annotation leaves it out.
FRESH: Final = "tcpdsl.tensors.vector.Fresh"


# The module defining each family's class; the contraction results are in RESULTS_MODULE.
_MODULES: Final = {
    COLLECT: SOURCES_MODULE,
    TRF: SOURCES_MODULE,
    DM: "tcpdsl.tensors.memory",
    HBM: "tcpdsl.tensors.memory",
    HBM_VIEW: "tcpdsl.tensors.memory",
    HBM_VIEW_MUT: "tcpdsl.tensors.memory",
    DM_VIEW: "tcpdsl.tensors.memory",
    DM_VIEW_MUT: "tcpdsl.tensors.memory",
    VRF: "tcpdsl.tensors.memory",
    BEGIN: "tcpdsl.tensors.front",
    FETCH: "tcpdsl.tensors.front",
    FETCH_CAST: "tcpdsl.tensors.front",
    CAST: "tcpdsl.tensors.back",
    COMMIT_TRIM: "tcpdsl.tensors.back",
    SWITCH: "tcpdsl.tensors.switched",
    TRANSPOSE: "tcpdsl.tensors.back",
    COMMIT_CAST: "tcpdsl.tensors.back",
    **{family: "tcpdsl.tensors.vector" for family in VECTOR_FAMILIES.values()},
}
# Where stage methods that are not their receiver's are defined (StageRow.method_of).
_OWNERS: Final = {"TuContext": "tcpdsl.tensors.device.TensorUnit"}


def fullname(family: Family) -> str:
    """Where the runtime defines a family's class."""
    return f"{_MODULES.get(family, RESULTS_MODULE)}.{family.name}"


TENSOR_CLASSES: Final = {fullname(f): f for f in FAMILIES.values()}

# Stage methods, from the stage table: "<defining class>.<method>" -> the stage.
STAGE_METHODS: Final[dict[str, Stage]] = {
    f"{_OWNERS[row.method_of] if row.method_of else fullname(family)}.{row.stage}": row.stage
    for row in STAGES.values()
    for family in row.receivers
}
