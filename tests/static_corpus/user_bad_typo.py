"""Invalid: a misspelt tcp attribute."""

# runtime: attr-defined
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)


def main() -> object:
    return tcp.Tensr  # E: attr-defined # plain: attr-defined # pyright: reportAttributeAccessIssue


USED = (A, m)
