"""One recall on a storage thread: anchor, cascade, explanation; then its record.

The engine validates the call, builds the ``QueryPlan`` and embeds the query
(and a time anchor's event phrase); ``run_recall`` does the reading in one
pass over the storage: resolves "before/after/during <event>" to a time range
by finding the event, runs the cascade over the layers and explains what it
did. ``record_recall`` then writes, in one transaction, the retrieval as a
review of what it returned (access counts, retention), the co-retrieval
counts, and the retrieval under its id with a ``memory.retrieved`` event. The
engine queues it behind the answer (``EngineBase._queue``), so a read does not
wait for its bookkeeping and every later storage call sees it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ucma.config import UCMAConfig
from ucma.learning.decisions import record_retrieval
from ucma.learning.records import Retrieval
from ucma.retrieval.cascade import RecallResult, cascade
from ucma.retrieval.retriever import Retriever, record_access
from ucma.retrieval.router import Layer, QueryPlan
from ucma.retrieval.terms import keyword_terms
from ucma.storage.base import Storage
from ucma.types import Hit, MemoryKind, Scope

__all__ = ["RecallRequest", "record_recall", "run_recall"]

_DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class RecallRequest:
    limit: int
    cascade: bool
    threshold: float
    max_depth: int
    include_graph_neighbors: bool = True
    min_importance: float = 0.0
    layer: Layer | None = None
    explain: bool = False
    include_superseded: bool = False
    retrieval_id: str | None = None
    """When set, the recall is recorded under this id with a ``memory.retrieved`` event."""


def _resolve_anchor(
    retriever: Retriever, scope: Scope, plan: QueryPlan, anchor_vector: np.ndarray | None
) -> QueryPlan:
    """Turn "before the trip" into a time range around the best-matching episode."""
    anchor = plan.time_anchor
    if anchor is None or plan.time_range is not None:
        return plan
    probe = dataclasses.replace(
        plan,
        terms=keyword_terms(anchor.event),
        entities=[],
        tags=[],
        time_range=None,
        time_anchor=None,
        kinds=(MemoryKind.EPISODIC,),
    )
    found = retriever.search(
        scope,
        probe,
        anchor_vector,
        layer=Layer.EPISODIC,
        limit=1,
        include_graph_neighbors=False,
        scan_vectors=False,  # the event's words find it; its cosine ranks the finds
    )
    if not found:
        return plan
    moment = found[0].memory.timestamp  # type: ignore[attr-defined]
    if anchor.relation == "before":
        window = (0.0, moment)
    elif anchor.relation == "after":
        window = (moment, max(moment, plan.reference_time))
    else:
        window = (moment - _DAY, moment + _DAY)
    return dataclasses.replace(plan, time_range=window)


def run_recall(
    storage: Storage,
    config: UCMAConfig,
    scope: Scope,
    plan: QueryPlan,
    vector: np.ndarray | None,
    request: RecallRequest,
    *,
    now: float,
    anchor_vector: np.ndarray | None = None,
    name_free: Mapping[str, float] | None = None,
    conditions: Mapping[str, float] | None = None,
) -> RecallResult:
    """``name_free``: memories' cosines with the query without the people it
    names (``name_free.py``), mixed into their dense scores; ``conditions``:
    standing instructions' cosines between the query and the requests they apply
    to (``directives.py``), a floor under their dense scores."""
    retriever = Retriever(storage, config, name_free=name_free, conditions=conditions)
    plan = _resolve_anchor(retriever, scope, plan, anchor_vector)

    def search(layer: Layer, k: int, deep: bool) -> list[Hit]:
        return retriever.search(
            scope,
            plan,
            vector,
            layer=layer,
            limit=k,
            include_graph_neighbors=request.include_graph_neighbors,
            min_importance=request.min_importance,
            deep=deep,
            include_superseded=request.include_superseded,
        )

    primary = request.layer or plan.layer
    hits, path = cascade(
        search,
        primary,
        request.limit,
        enabled=request.cascade,
        threshold=request.threshold,
        max_depth=request.max_depth,
        config=config.cascade,
    )
    explanation: dict[str, object] = {}
    if request.explain:
        explanation = {
            "query_class": plan.query_class.value,
            "paradigms": [p.value for p in plan.paradigms],
            "mode": plan.mode.value,
            "primary_layer": primary.value,
            "terms": plan.terms,
            "entities": plan.entities,
            "tags": plan.tags,
            "time_range": list(plan.time_range) if plan.time_range else None,
            "time_anchor": dataclasses.asdict(plan.time_anchor) if plan.time_anchor else None,
            "reference_time": plan.reference_time,
            "fusion": config.retrieval.fusion,
            "ranking": config.retrieval.ranking,
            "channel_weights": dict(config.retrieval.channel_weights),
            "hits": [
                {
                    "id": h.id,
                    "layer": h.layer,
                    "score": h.score,
                    "relevance": h.relevance,
                    "channels": dict(h.channels),
                    "confidence": h.confidence.to_dict() if h.confidence else None,
                }
                for h in hits
            ],
        }
    return RecallResult(
        query=plan.text,
        query_class=plan.query_class.value,
        hits=hits,
        cascade_path=path,
        low_confidence=path.final_confidence < request.threshold,
        explanation=explanation,
        retrieval_id=request.retrieval_id,
        paradigms=tuple(p.value for p in plan.paradigms),
    )


def record_recall(
    storage: Storage,
    config: UCMAConfig,
    scope: Scope,
    result: RecallResult,
    *,
    now: float,
) -> None:
    """What a recall leaves behind, in one transaction (see the module docstring)."""
    hits = result.hits
    with storage.transaction():
        if config.retrieval.reinforce_on_retrieval and hits:
            record_access(
                storage, scope, [h.id for h in hits], now, config.forgetting.stability_boost_base
            )
        # Hebbian reinforcement (issue 4): memories retrieved together are counted
        # here; the sleep cycle turns the counts into co_retrieved edge weight.
        together = [h.id for h in hits[: config.consolidation.co_retrieval_top_k]]
        if len(together) > 1:
            storage.lifecycle.record_co_retrieval(scope, together, now)
        if result.retrieval_id is not None:
            record_retrieval(
                storage,
                Retrieval(
                    result.retrieval_id,
                    scope.user_id,
                    scope.agent_id,
                    hashlib.sha256(result.query.encode("utf-8")).hexdigest()[:32],
                    [h.id for h in hits],
                    [float(h.score) for h in hits],
                    now,
                ),
            )
