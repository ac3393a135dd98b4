"""Cascading recall (seed 004): when the primary layer is not confident, ask more.

``cascade`` searches the query class's primary layer; while its confidence
(``layer_confidence``: the first result's, or a lower one's discounted by rank)
stays below the threshold and the depth limit allows, it searches
the next secondary layer in seed 004's precedence with a 3k over-fetch, merges
everything and keeps the top k. The path it took is returned as a
``CascadePath`` (seed 004's ``cascade_path``).

A secondary layer looks where the primary did not (the search callback's
``deep`` flag: archived memories and graph neighbours two hops away), so
the cascade can add what the first look missed rather than re-reading a
subset of it. The merge keeps each memory once, at its best ranking score
times its layer's weight (1 for the primary layer,
then ``secondary_layer_weights``): seed 004's composite ``0.5 * confidence +
0.3 * layer weight + 0.2 * recency`` re-ranked the primary's own results by
age and raw similarity, and on LoCoMo a recall that cascaded ranked worse
than the plain search it wrapped.

Final confidence is ``0.7 * primary + 0.3 * mean(secondary)`` (seed 004's
composite; its worked examples print numbers no single formula reproduces, so
the stated formula wins), or the best confidence among the merged results
when that is higher: a cascade that found a good answer the primary layer
missed is as sure as that answer, not 0.3 of it. A result whose final confidence is below the
threshold carries ``low_confidence``: the caller may abstain rather than use
weak memories. The search itself is injected, so this module is pure.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from ucma.config import CascadeConfig
from ucma.retrieval.router import Layer
from ucma.types import Hit

__all__ = ["PRECEDENCE", "CascadePath", "RecallResult", "cascade", "layer_confidence", "merge"]

#: Seed 004's layer precedence for cascade selection.
PRECEDENCE: dict[Layer, tuple[Layer, ...]] = {
    Layer.SEMANTIC: (Layer.EPISODIC, Layer.GRAPH, Layer.PROCEDURAL),
    Layer.EPISODIC: (Layer.SEMANTIC, Layer.GRAPH),
    Layer.PROCEDURAL: (Layer.EPISODIC, Layer.SEMANTIC),
    Layer.PROSPECTIVE: (Layer.PROCEDURAL, Layer.SEMANTIC),
    Layer.GRAPH: (Layer.SEMANTIC, Layer.EPISODIC),
    Layer.META: (Layer.SEMANTIC, Layer.GRAPH),
    Layer.PLANNING: (Layer.SEMANTIC, Layer.PROCEDURAL),
}

Search = Callable[[Layer, int, bool], list[Hit]]
"""``search(layer, k, deep)``: the layer's best k hits; ``deep`` for a cascade step."""


@dataclass(slots=True)
class CascadePath:
    primary_layer: str
    primary_confidence: float
    cascaded_to: list[str] = field(default_factory=list)
    cascade_confidences: list[float] = field(default_factory=list)
    final_confidence: float = 0.0
    cascade_trigger: str = ""
    merge_strategy: str = "none"
    depth: int = 0

    def to_dict(self) -> dict[str, object]:
        return {
            "primary_layer": self.primary_layer,
            "primary_confidence": round(self.primary_confidence, 4),
            "cascaded_to": list(self.cascaded_to),
            "cascade_confidences": [round(c, 4) for c in self.cascade_confidences],
            "final_confidence": round(self.final_confidence, 4),
            "cascade_trigger": self.cascade_trigger,
            "merge_strategy": self.merge_strategy,
            "depth": self.depth,
        }


@dataclass(slots=True)
class RecallResult:
    """What ``recall`` found, how, and how sure it is.

    ``low_confidence`` is True when even after the cascade the final
    confidence is below the threshold: the hits are the best there is, not
    good evidence, and a caller may prefer to say it does not know.
    """

    query: str
    query_class: str
    hits: list[Hit]
    cascade_path: CascadePath
    low_confidence: bool
    explanation: dict[str, object] = field(default_factory=dict)
    retrieval_id: str | None = None
    """Id of the stored record of this recall (its memory ids and scores);
    pass it to ``decide`` so the decision trace points at what was retrieved."""
    paradigms: tuple[str, ...] = ()
    """Seed 000's paradigms the query needs (declarative, procedural, predictive)."""

    @property
    def confidence(self) -> float:
        return self.cascade_path.final_confidence


def layer_confidence(hits: Sequence[Hit], rank_discount: float) -> float:
    """A layer's confidence: the best of its results' overall confidences, each
    discounted by ``rank_discount`` per rank below the first (0 when empty). How
    sure the answer ranked first is, and a little of how sure the next ones are:
    seed 004 reads the first alone (``results[layer][0]``; a discount of 0)."""
    return max(
        (
            h.confidence.overall * rank_discount**rank
            for rank, h in enumerate(hits)
            if h.confidence is not None
        ),
        default=0.0,
    )


def merge(pools: Sequence[tuple[float, Sequence[Hit]]], k: int) -> list[Hit]:
    """Every result scored by its ranking score times its layer's weight; each
    memory once (its best); top k, as copies: the pools' hits keep their scores,
    so the cascade's next depth weighs them once again, not twice. The first
    pool keeps its own order ahead of equal scores."""
    best: dict[str, tuple[float, int, Hit]] = {}
    order = 0
    for weight, hits in pools:
        for hit in hits:
            score = hit.score * weight
            current = best.get(hit.id)
            if current is None or score > current[0]:
                best[hit.id] = (score, order, hit)
            order += 1
    ranked = sorted(best.values(), key=lambda item: (-item[0], item[1]))
    return [replace(hit, score=score) for score, _, hit in ranked[:k]]


def cascade(
    search: Search,
    primary: Layer,
    k: int,
    *,
    enabled: bool,
    threshold: float,
    max_depth: int,
    config: CascadeConfig,
) -> tuple[list[Hit], CascadePath]:
    """Search ``primary``, then cascade as the module docstring describes."""
    hits = search(primary, k, False)
    primary_confidence = layer_confidence(hits, config.confidence_rank_discount)
    path = CascadePath(primary.value, primary_confidence, final_confidence=primary_confidence)
    if not enabled:
        path.cascade_trigger = "cascade disabled"
        return hits, path
    if primary_confidence >= threshold:
        path.cascade_trigger = f"confidence {primary_confidence:.2f} >= threshold {threshold:.2f}"
        return hits, path
    path.cascade_trigger = f"confidence {primary_confidence:.2f} < threshold {threshold:.2f}"
    pools: list[tuple[float, Sequence[Hit]]] = [(1.0, hits)]
    weights = config.secondary_layer_weights
    secondaries = PRECEDENCE[primary][:max_depth]
    merged = hits
    for depth, layer in enumerate(secondaries, start=1):
        found = search(layer, k * config.overfetch_factor, True)
        path.cascaded_to.append(layer.value)
        path.cascade_confidences.append(layer_confidence(found, config.confidence_rank_discount))
        pools.append((weights[min(depth - 1, len(weights) - 1)], found))
        merged = merge(pools, k)
        path.depth = depth
        path.final_confidence = max(
            config.primary_weight * primary_confidence
            + config.secondary_weight * statistics.fmean(path.cascade_confidences),
            layer_confidence(merged, config.confidence_rank_discount),
        )
        path.merge_strategy = "confidence_weighted"
        if path.final_confidence >= threshold:
            break
    return merged, path
