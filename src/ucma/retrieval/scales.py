"""Two clipped scales the retrieval maths shares. Pure functions."""

from __future__ import annotations

__all__ = ["ramp", "unit"]


def unit(value: float) -> float:
    """``value`` clipped to [0, 1]."""
    return max(0.0, min(1.0, value))


def ramp(value: float, low: float, high: float) -> float:
    """0 at ``low`` or below, 1 from ``high`` on, linear between; a step at ``low``
    when ``high`` is not above it."""
    if high <= low:
        return float(value >= low)
    return unit((value - low) / (high - low))
