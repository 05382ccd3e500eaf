"""Pictures of mappings: text cell and slot tables, and SVG drawings of cells and tensor layouts."""

from tcpdsl.pictures.drawing import axis_color, svg, tensor_svg
from tcpdsl.pictures.text import cell_table, slot_table

__all__ = ["axis_color", "cell_table", "slot_table", "svg", "tensor_svg"]
