"""Query router: a rule-based plan for each query, in microseconds (seed 001 ch. 19).

The router decides which retrieval modes a query needs before anything
expensive runs. Seed 001's classes are kept: temporal keywords route to the
temporal mode, "how to" questions and entity questions ("tell me about X")
to the structured mode, everything else to hybrid. Explicit arguments from
the caller (a mode, an entity, tags, a time range) always win over guesses.

This module returns a ``QueryPlan``; the seams for seed 004's seven query
classes and seed 003's parsed time expressions are the plan's fields.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ucma.retrieval.terms import keyword_terms
from ucma.types import MemoryKind, QueryMode

__all__ = ["QueryPlan", "route"]

_TEMPORAL_KEYWORDS: tuple[str, ...] = (
    "yesterday",
    "last week",
    "last session",
    "earlier today",
    "before",
    "after",
    "when did",
    "recently",
    "today",
    "ago",
    "previously",
    "last time",
    "a while ago",
    "the other day",
)
_PROCEDURAL_KEYWORDS: tuple[str, ...] = (
    "how to",
    "how do i",
    "how do you",
    "steps to",
    "procedure for",
    "workflow for",
    "process for",
    "guide to",
    "tutorial",
)
_ENTITY_PREFIXES: tuple[str, ...] = (
    "what do you know about",
    "tell me about",
    "what is",
    "who is",
    "facts about",
)
_TRAILING_PUNCTUATION = re.compile(r"[\s?.!,;:]+$")


def _has_phrase(text: str, phrase: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text) is not None


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """What to search for one query, and how."""

    text: str
    mode: QueryMode
    terms: list[str]
    entity: str | None = None
    tags: list[str] = field(default_factory=list)
    time_range: tuple[float, float] | None = None
    kinds: tuple[MemoryKind, ...] | None = None

    @property
    def runs_dense(self) -> bool:
        return self.mode in (QueryMode.SEMANTIC, QueryMode.HYBRID)

    @property
    def runs_keyword(self) -> bool:
        return self.mode in (QueryMode.HYBRID, QueryMode.STRUCTURED)


def classify(text: str) -> QueryMode:
    """Seed 001's heuristic classes, matched on whole words."""
    lower = text.lower().strip()
    if any(_has_phrase(lower, kw) for kw in _TEMPORAL_KEYWORDS):
        return QueryMode.TEMPORAL
    if any(_has_phrase(lower, kw) for kw in _PROCEDURAL_KEYWORDS):
        return QueryMode.STRUCTURED
    if lower.startswith(_ENTITY_PREFIXES):
        return QueryMode.STRUCTURED
    return QueryMode.HYBRID


def _entity_of(text: str) -> str | None:
    lower = text.lower().strip()
    for prefix in _ENTITY_PREFIXES:
        if lower.startswith(prefix):
            rest = _TRAILING_PUNCTUATION.sub("", text.strip()[len(prefix) :]).strip()
            for article in ("the ", "a ", "an "):
                if rest.lower().startswith(article):
                    rest = rest[len(article) :]
            return rest or None
    return None


def route(
    text: str,
    *,
    mode: QueryMode | None = None,
    entity: str | None = None,
    tags: Sequence[str] | None = None,
    time_range: tuple[float, float] | None = None,
    kinds: Sequence[MemoryKind] | None = None,
) -> QueryPlan:
    """Build the plan for ``text``; explicit arguments override the heuristics."""
    chosen = mode or classify(text)
    terms = keyword_terms(text)
    guessed_entity = entity or (_entity_of(text) if chosen is QueryMode.STRUCTURED else None)
    plan_tags = list(tags) if tags else []
    if not plan_tags and chosen is QueryMode.STRUCTURED and guessed_entity is None:
        plan_tags = terms  # "how to deploy fastapi" -> procedures tagged deploy / fastapi
    if time_range is not None and mode is None:
        chosen = QueryMode.TEMPORAL
    return QueryPlan(
        text=text,
        mode=chosen,
        terms=terms,
        entity=guessed_entity,
        tags=plan_tags,
        time_range=time_range,
        kinds=tuple(kinds) if kinds else None,
    )
