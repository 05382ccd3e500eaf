"""Full names of the runtime objects the plugin recognises: the tensor classes, their stage methods, axes."""

from __future__ import annotations

from typing import Final

from tcpdsl.verify.families import COLLECT, FAMILIES, TRF, Family
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


SOURCE_FAMILIES: Final = frozenset({COLLECT, TRF})


def fullname(family: Family) -> str:
    """Where the runtime defines a family's class."""
    return f"{SOURCES_MODULE if family in SOURCE_FAMILIES else RESULTS_MODULE}.{family.name}"


TENSOR_CLASSES: Final = {fullname(f): f for f in FAMILIES.values()}

# Stage methods, from the stage table: "<defining class>.<method>" -> the stage.
STAGE_METHODS: Final[dict[str, Stage]] = {
    f"{fullname(family)}.{row.stage}": row.stage for row in STAGES.values() for family in row.receivers
}
