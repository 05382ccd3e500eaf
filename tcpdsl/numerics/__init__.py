"""The numbers below the typed tensors: scalars and casts, logical tensors, placement, the lazy chain."""
