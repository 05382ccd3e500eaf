"""Numerics of the engines outside the contraction chain, on numpy arrays with the RNGD rules."""
