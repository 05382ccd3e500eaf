"""Invalid: an empty axis name is the runtime's InvalidAxisName, with no advice to bind it to a variable
of that name (mapping InvalidAxisName)."""

# runtime: mapping InvalidAxisName
import tcpdsl as tcp

Heads = tcp.axis("", 16)  # E: tcpdsl-layout InvalidAxisName


def main() -> None:
    print(Heads.size)
