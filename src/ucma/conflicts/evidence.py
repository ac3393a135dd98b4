"""What an answer or an LLM context needs to know about retrieved memories beyond
their text, read from storage in one call on the storage thread.

For each retrieved memory:

- a fact: the facts now held for its (subject, predicate) when the predicate
  is functional (a superseded value is replaced by the current one), else the
  fact itself while it is current;
- an episode: the facts extracted from it (``derived_from`` edges); when one
  of them has since been superseded, the episode's text states a replaced
  value, so its current replacements and its still-current facts are listed
  in its place;
- for every fact listed: the first live episode it was extracted from (quoted
  when the fact does not make a clean sentence) and the value it replaced, if
  any (so the answer notes the change once).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ucma.conflicts.phrasing import is_stale
from ucma.conflicts.predicates import PredicateRegistry
from ucma.storage.base import Storage
from ucma.types import Episode, Fact, MemoryRecord, Scope

__all__ = ["Evidence", "gather_evidence"]

_DERIVED = "derived_from"


@dataclass(slots=True)
class Evidence:
    """Facts and episodes behind retrieved memories (see the module docstring).

    ``current`` maps a retrieved memory id to the current facts that stand for
    it; an episode appears there only when its text went stale. ``derived``
    maps an episode id to the current facts extracted from it. ``sources`` maps
    a fact id to its source episode; ``previous`` a current fact id to the
    value it replaced.
    """

    current: dict[str, list[Fact]] = field(default_factory=dict)
    derived: dict[str, list[Fact]] = field(default_factory=dict)
    sources: dict[str, Episode] = field(default_factory=dict)
    previous: dict[str, str] = field(default_factory=dict)

    def facts(self) -> list[Fact]:
        """Every current fact listed, each once, in first-seen order."""
        seen: dict[str, Fact] = {}
        for group in (*self.current.values(), *self.derived.values()):
            for fact in group:
                seen.setdefault(fact.id, fact)
        return list(seen.values())


def _current_values(
    storage: Storage, scope: Scope, fact: Fact, registry: PredicateRegistry, now: float
) -> list[Fact]:
    if registry.is_functional(fact.predicate):
        return [
            f
            for f in storage.facts.current(scope, fact.subject, fact.predicate)
            if not is_stale(f, now)
        ]
    return [] if is_stale(fact, now) else [fact]


def _previous_value(storage: Storage, scope: Scope, fact: Fact) -> str | None:
    """The value ``fact`` replaced: the version it superseded, else the latest
    version recorded before it that is no longer current and differs from it."""
    history = storage.facts.history(scope, fact.subject, fact.predicate)
    start = fact.recorded_at if fact.recorded_at is not None else fact.created_at
    own = fact.object.strip().lower()
    direct = [f for f in history if f.superseded_by == fact.id and f.object.strip().lower() != own]
    if direct:
        return direct[-1].object
    earlier = [
        f
        for f in history
        if not f.is_current
        and f.object.strip().lower() != own
        and (f.recorded_at if f.recorded_at is not None else f.created_at) <= start
    ]
    return earlier[-1].object if earlier else None


def gather_evidence(
    storage: Storage,
    scope: Scope,
    records: Sequence[MemoryRecord],
    registry: PredicateRegistry,
    now: float,
) -> Evidence:
    """Read the evidence for ``records`` (storage thread only)."""
    evidence = Evidence()
    for record in records:
        if isinstance(record, Fact):
            fact = storage.facts.get(scope, record.id) or record
            evidence.current[record.id] = _current_values(storage, scope, fact, registry, now)
        elif isinstance(record, Episode):
            edges = storage.graph.edges_to(scope, record.id)
            ids = [e.source_id for e in edges if e.edge_type == _DERIVED]
            found = storage.memories.get_many(scope, ids) if ids else {}
            derived = [m for m in found.values() if isinstance(m, Fact)]
            alive = [f for f in derived if not is_stale(f, now)]
            evidence.derived[record.id] = alive
            if len(alive) < len(derived):
                replacements: dict[str, Fact] = {f.id: f for f in alive}
                for old in derived:
                    if is_stale(old, now):
                        for f in _current_values(storage, scope, old, registry, now):
                            replacements.setdefault(f.id, f)
                evidence.current[record.id] = list(replacements.values())
    facts = evidence.facts()
    wanted = {f.id: f.source_episode_ids[0] for f in facts if f.source_episode_ids}
    episodes = storage.memories.get_many(scope, list(set(wanted.values()))) if wanted else {}
    for fact in facts:
        source = episodes.get(wanted.get(fact.id, ""))
        if isinstance(source, Episode) and source.archived_at is None:
            evidence.sources[fact.id] = source
        if registry.is_functional(fact.predicate):
            old = _previous_value(storage, scope, fact)
            if old is not None:
                evidence.previous[fact.id] = old
    return evidence
