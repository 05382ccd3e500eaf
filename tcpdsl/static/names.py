"""Full names of the runtime objects the plugin recognises, and the parameter layout of each tensor class."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

TYPES_MODULE: Final = "tcpdsl.tensors.types"
SCALARS_MODULE: Final = "tcpdsl.tensors.scalars"
SCALAR_BASE: Final = f"{SCALARS_MODULE}.Scalar"
AXIS_CLASS: Final = "tcpdsl.algebra.scope.Axis"
AXIS_FUNCTIONS: Final = frozenset({"tcpdsl.algebra.scope.axis", "tcpdsl.axis"})
LITERAL_NAMES: Final = frozenset({"typing.Literal", "typing_extensions.Literal"})
FACADE: Final = "tcpdsl"
MAPPING_FORM: Final = "m"


@dataclass(frozen=True)
class TensorClass:
    """A tensor class: which of its type parameters are dtypes and which are mappings, by name."""

    name: str
    params: tuple[str, ...]
    dtypes: frozenset[str]

    @property
    def fullname(self) -> str:
        return f"{TYPES_MODULE}.{self.name}"


_PLACE: Final = ("chip", "cluster", "slice")

COLLECT: Final = TensorClass("CollectTensor", ("dtype", *_PLACE, "time", "packet"), frozenset({"dtype"}))
TRF: Final = TensorClass("TrfTensor", ("dtype", *_PLACE, "lane", "element"), frozenset({"dtype"}))
OUTER: Final = TensorClass(
    "ContractOuterTensor", ("acc", "storage", *_PLACE, "lane", "time", "packet"), frozenset({"acc", "storage"})
)
PACKET: Final = TensorClass("ContractPacketTensor", ("acc", *_PLACE, "lane", "time", "packet"), frozenset({"acc"}))
TIME: Final = TensorClass("ContractTimeTensor", ("acc", *_PLACE, "lane", "time", "packet"), frozenset({"acc"}))
CONTRACT: Final = TensorClass("ContractTensor", ("acc", *_PLACE, "time", "packet"), frozenset({"acc"}))

TENSOR_CLASSES: Final = {cls.fullname: cls for cls in (COLLECT, TRF, OUTER, PACKET, TIME, CONTRACT)}

# Stage methods: (defining class, method) -> the class the call returns.
STAGES: Final = {
    f"{COLLECT.fullname}.to_trf": TRF,
    f"{COLLECT.fullname}.contract_outer": OUTER,
    f"{OUTER.fullname}.contract_packet": PACKET,
    f"{PACKET.fullname}.contract_time": TIME,
    f"{TIME.fullname}.contract_lane": CONTRACT,
}
