"""Running kernels: random inputs, the oracle comparison and the report of ``tcpdsl run``."""
