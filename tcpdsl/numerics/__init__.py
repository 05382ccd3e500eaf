"""The numbers below the typed tensors: scalars and casts, logical tensors, placement, the lazy chain,
and the vector engine's arithmetic."""
