"""Valid: mapping values passed to the algebra, as the API shows, and tcp.parse where attributes are read."""

# runtime: valid
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)

Tiled = m["A, B / 16, B % 16"]


def main() -> int:
    assert tcp.equivalent(m["A, B"], Tiled)
    assert tcp.equivalent(m["A, B"], m["A, B / 16, B % 16"])
    terms = tcp.divide_exact(m["A, B"], m["B"])
    layout = tcp.parse("A, B / 16", {"A": 32, "B": 32})
    assert layout.size == 64 and len(terms) == 1
    return layout.size + B.size
