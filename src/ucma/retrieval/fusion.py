"""Fusing the ranked lists of several retrieval channels into one score per memory.

Pure functions over ``{channel: {memory_id: score}}`` where each channel's
scores are its own (cosine, BM25, a flag ...), higher is better.

- ``rrf``: seed 003's reciprocal rank fusion, ``sum_c w_c / (k + rank_c)``.
  Ranks only: robust to incomparable scales, blind to how much better the
  first hit is than the tenth.
- ``score_fusion``: each channel's scores normalised to [0, 1] over the
  channel's own candidates, then a weighted sum. Keeps the margins that RRF
  throws away; on LoCoMo it beat RRF at k = 60 by a wide margin
  (docs/retrieval.md has the numbers).

Normalisations: ``none`` keeps a score already in [0, 1] (cosine), clipped;
``max`` divides by the channel's best score (a flag channel stays at 1.0);
``minmax`` maps the channel's worst returned candidate to 0 and its best to 1.
With fewer than ``MINMAX_MIN_SAMPLE`` candidates the worst of them says
nothing about the score distribution (of two good matches, minmax would zero
one), so ``minmax`` then falls back to ``max``.
A memory missing from a channel gets 0 from it.
"""

from __future__ import annotations

from collections.abc import Mapping

from ucma.retrieval.scales import ramp

__all__ = [
    "FUSION_METHODS",
    "MINMAX_MIN_SAMPLE",
    "normalise",
    "rrf",
    "score_fusion",
    "weighed_by_meaning",
]

FUSION_METHODS = ("score", "rrf")
MINMAX_MIN_SAMPLE = 5


def normalise(
    scores: Mapping[str, float], method: str = "minmax", *, floor: float = 0.0
) -> dict[str, float]:
    """Scores mapped to [0, 1]; see the module docstring for the methods. With
    ``max``, the divisor is at least ``floor``: scores already on an absolute
    scale are lifted to the best one only when that one is good enough."""
    if not scores:
        return {}
    top = max(scores.values())
    if method == "none":
        return {key: max(0.0, min(1.0, value)) for key, value in scores.items()}
    if method == "minmax" and len(scores) < MINMAX_MIN_SAMPLE:
        method = "max"
    if method == "max":
        divisor = max(top, floor)
        if divisor <= 0:
            return dict.fromkeys(scores, 0.0)
        return {key: max(0.0, value / divisor) for key, value in scores.items()}
    if method == "minmax":
        low = min(scores.values())
        if top - low <= 1e-12:
            return dict.fromkeys(scores, 1.0 if top > 0 else 0.0)
        return {key: (value - low) / (top - low) for key, value in scores.items()}
    raise ValueError(f"unknown normalisation {method!r}; use 'max' or 'minmax'")


def weighed_by_meaning(
    keyword: Mapping[str, float], cosines: Mapping[str, float], low: float, high: float
) -> dict[str, float]:
    """Keyword scores scaled by how related each memory is by meaning: times 0 at a
    cosine of ``low`` or less, 1 from ``high`` on, linear between (a memory
    without a cosine counts as unrelated). Shared words in a text unrelated to the
    query are coincidence: a long reply holds most common words of any question."""
    if high <= low:
        raise ValueError("the cosine ramp needs low < high")
    return {key: value * ramp(cosines.get(key, low), low, high) for key, value in keyword.items()}


def score_fusion(
    channels: Mapping[str, Mapping[str, float]],
    weights: Mapping[str, float],
    *,
    method: str = "minmax",
    methods: Mapping[str, str] | None = None,
    floors: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Weighted sum of normalised channel scores; channels without a weight count 0.
    ``methods`` overrides the normalisation per channel, ``floors`` gives the
    ``max`` normalisation's floor per channel."""
    fused: dict[str, float] = {}
    for channel, scores in channels.items():
        weight = weights.get(channel, 0.0)
        if weight <= 0:
            continue
        chosen = (methods or {}).get(channel, method)
        floor = (floors or {}).get(channel, 0.0)
        for key, value in normalise(scores, chosen, floor=floor).items():
            fused[key] = fused.get(key, 0.0) + weight * value
    return fused


def rrf(
    channels: Mapping[str, Mapping[str, float]],
    weights: Mapping[str, float],
    *,
    k: float = 60.0,
) -> dict[str, float]:
    """Reciprocal rank fusion; ties within a channel share the better rank order
    by id so results are deterministic."""
    if k < 0:
        raise ValueError("rrf k must be >= 0")
    fused: dict[str, float] = {}
    for channel, scores in channels.items():
        weight = weights.get(channel, 0.0)
        if weight <= 0:
            continue
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        for rank, (key, _) in enumerate(ranked, start=1):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return fused
