"""Axes and layouts shared by several corpus kernels (imported, not checked on its own)."""

import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

StreamTime = m["A, B / 16"]
WeightTime = m["C, B / 16"]
Flit = m["B % 16"]
OutTime = m["A"]
Lanes = m["C"]
Packet = m["B"]
Reduced = m["1"]
