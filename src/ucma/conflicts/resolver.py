"""ConflictResolver: applies the decision tree to storage, atomically.

Runs on the engine's storage thread; every public method is one storage
transaction, so a conflict, the facts it changes, and the review flags it
raises are written together or not at all. The decisions themselves come
from the pure ``resolution`` module; this class only reads the beliefs,
applies the verdict and records it.

What happens to the sides of a conflict:

- winner: stays (or becomes) ``active`` and current;
- loser, ``supersede_old`` / ``replace``: status ``superseded``; record time
  ends now (``superseded_at``) and points to the winner (``superseded_by``);
  its valid time ends where the winner's begins when the winner is newer;
- loser, ``decay_lower`` / ``decay_memory``: status ``conflicted``, confidence
  times the seed's factor (0.8, or 0.5 against a source of truth), record time
  ends now, points to the winner;
- ``ask_user``: both sides ``disputed`` and current; the conflict is
  ``pending`` until ``resolve`` (the user's choice: winner reinforced, loser
  superseded) or until a later reinforcement makes the tree decide.

Every loser's dependents (memories with a ``derived_from`` edge to it, or
that it ``supports``, transitively up to ``review_max_hops``) are flagged for
review. A pending conflict whose side stops being current becomes
``obsolete``.

Episodes follow their claims: when a retired fact was read from episodes
(``derived_from`` edges), each of those episodes none of whose facts is
current any more is recorded as wholly superseded (``Supersession``, event
``memory.superseded``) by the episode the winning fact came from. An episode
with one current claim left ("Dana lives in Boston and works at Acme" after
"Dana moved to Denver") stays. Facts whose valid time ended before a new
value begins are history, not rivals: they never conflict with it.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Sequence

from ucma.config import ConflictConfig
from ucma.conflicts.predicates import PredicateRegistry
from ucma.conflicts.reports import FactAssertion
from ucma.conflicts.resolution import Belief, Decision, Side, decide_memory_vs_db
from ucma.conflicts.resolution import decide_value_mismatch as decide
from ucma.conflicts.statements import says_only
from ucma.errors import ConflictNotPending, NotFoundError, ValidationError
from ucma.events.log import EventType, record
from ucma.memory_ids import new_memory_id
from ucma.storage.base import Storage, Supersession
from ucma.types import (
    FACT_ID_PREFIX,
    Conflict,
    ConflictStatus,
    ConflictType,
    Episode,
    Fact,
    FactStatus,
    GraphEdge,
    Hit,
    Provenance,
    ResolutionStrategy,
    RetentionInfo,
    ReviewFlag,
    Scope,
    fact_id_for,
)

__all__ = ["ConflictResolver", "SourceMismatch", "belief", "facts_read_from", "read_from"]

logger = logging.getLogger(__name__)

DEPENDENCY_EDGES = ("derived_from", "supports")


def _log_conflict(
    storage: Storage, scope: Scope, kind: EventType, conflict: Conflict, now: float
) -> None:
    record(
        storage,
        scope,
        kind,
        {
            "conflict_id": conflict.id,
            "conflict_type": conflict.conflict_type.value,
            "existing_fact_id": conflict.existing_fact_id,
            "new_fact_id": conflict.new_fact_id,
            "strategy": conflict.resolution_strategy.value,
            "status": conflict.status.value,
            "chosen_value": conflict.chosen_value,
            "resolved_by": conflict.resolved_by,
        },
        now,
    )


def _log_superseded(
    storage: Storage,
    scope: Scope,
    loser: Fact,
    conflict_id: str | None,
    now: float,
    reason: str | None = None,
) -> None:
    payload: dict[str, object] = {
        "memory_id": loser.id,
        "superseded_by": loser.superseded_by,
        "status": loser.status.value,
        "conflict_id": conflict_id,
    }
    if reason is not None:
        payload["reason"] = reason
    record(storage, scope, EventType.FACT_SUPERSEDED, payload, now)


def _ended(fact: Fact, by: str, until: float, now: float) -> Fact:
    """``fact`` superseded by the memory ``by`` and valid until ``until``."""
    return dataclasses.replace(
        fact,
        status=FactStatus.SUPERSEDED,
        superseded_at=now,
        superseded_by=by,
        valid_until=until,
        updated_at=now,
    )


def _key(text: str) -> str:
    return text.strip().lower()


def facts_read_from(storage: Storage, scope: Scope, episode_id: str) -> list[Fact]:
    """The facts read from the episode (its ``derived_from`` edges), current or not."""
    return [fact for fact, _ in read_from(storage, scope, episode_id)]


def read_from(storage: Storage, scope: Scope, episode_id: str) -> list[tuple[Fact, GraphEdge]]:
    """Each fact read from the episode, current or not, with its ``derived_from`` edge."""
    edges = {
        e.source_id: e
        for e in storage.graph.edges_to(scope, episode_id)
        if e.edge_type == "derived_from"
    }
    found = storage.memories.get_many(scope, list(edges))
    return [(m, edges[i]) for i, m in found.items() if isinstance(m, Fact)]


# First-hand statements (the user's own, or what was observed) over inferences
# over generated text: what "an equally reliable source" compares.
_RELIABILITY = {
    Provenance.USER_STATED: 2,
    Provenance.OBSERVED: 2,
    Provenance.INFERRED: 1,
    Provenance.GENERATED: 0,
}


def belief(fact: Fact) -> Belief:
    """The tree's view of a fact; its time is when the information dates from.

    Its source is ``metadata["source"]`` (who said it: the speaker of the episode
    it was read from, or what a caller names), else its provenance. A fact read
    from an episode is as reliable as that episode (``metadata["evidence"]``, a
    provenance), and says it is a change when ``metadata["change"]`` is true.
    """
    when = fact.valid_from if fact.valid_from is not None else fact.recorded_at
    meta = fact.metadata or {}
    source = meta.get("source")
    try:
        evidence = Provenance(meta.get("evidence", fact.provenance))
    except ValueError:
        evidence = fact.provenance
    return Belief(
        fact.object,
        fact.confidence,
        fact.reinforcement_count,
        when if when is not None else fact.created_at,
        source=str(source) if isinstance(source, str) and source else fact.provenance.value,
        reliability=_RELIABILITY.get(evidence, 0),
        change=meta.get("change") is True,
    )


def _rivals(current: Sequence[Fact], fact: Fact) -> list[Fact]:
    """Current values that ``fact`` contradicts: not those whose valid time ended
    before it begins (they are history of an earlier time, not rivals)."""
    start = fact.valid_from if fact.valid_from is not None else fact.created_at
    return [c for c in current if c.valid_until is None or c.valid_until > start]


@dataclasses.dataclass(frozen=True, slots=True)
class SourceMismatch:
    """A current fact whose source of truth holds another value.

    ``replacement`` is the fact to insert for the source's value (already
    embedded as ``vector``) unless memory holds that value already.
    """

    fact_id: str
    source_name: str
    value: str
    replacement: Fact
    vector: object


class ConflictResolver:
    """Storage-thread side of conflict resolution; see the module docstring."""

    def __init__(self, config: ConflictConfig, registry: PredicateRegistry) -> None:
        self.config = config
        self.registry = registry

    # -- assertions --------------------------------------------------------------

    def assert_fact(
        self,
        storage: Storage,
        scope: Scope,
        fact: Fact,
        vector: object,
        sources: Sequence[str],
        edge_weight: float,
        retention: RetentionInfo,
        now: float,
        aliases: Sequence[str] = (),
    ) -> FactAssertion:
        """Reinforce the current fact with the same triple, or insert ``fact``
        and resolve it against the current values of its (subject, predicate).
        ``aliases`` are other names of the same subject ("Dana" for "Dana
        Whitfield") whose current values are the same person's."""
        with storage.transaction():
            found = storage.memories.get_many(scope, list(sources))
            for memory_id in sources:
                if memory_id not in found:
                    raise NotFoundError("memory", memory_id)
            current = self._current(storage, scope, fact.subject, fact.predicate, aliases)
            same = [c for c in current if _key(c.object) == _key(fact.object)]
            if same:
                return self._reinforce(storage, scope, same[0], sources, edge_weight, now)
            fact = self._fresh_id(storage, scope, fact)
            functional = self.registry.is_functional(fact.predicate)
            others = _rivals(current, fact) if functional else []
            decisions = [(o, decide(belief(o), belief(fact), self.config)) for o in others]
            lost = next(((o, d) for o, d in decisions if d.winner == Side.EXISTING), None)
            if lost is not None:
                decisions = [lost]  # the new value is not adopted; nothing else changes
            storage.facts.add(fact, vector)  # type: ignore[arg-type]
            storage.retention.put_many(scope, [dataclasses.replace(retention, memory_id=fact.id)])
            if sources:
                storage.graph.add_edges(
                    scope,
                    [GraphEdge(fact.id, s, "derived_from", edge_weight, now) for s in sources],
                )
            result = FactAssertion(fact)
            for other, decision in decisions:
                conflict = self._conflict(scope, other, fact, decision, now)
                self._apply(storage, scope, conflict, decision, now, result)
            self._retire_pending(storage, scope, [o.id for o, _ in decisions], now, result)
            stored = storage.facts.get(scope, fact.id)
            result.fact = stored if stored is not None else fact
            return result

    def _reinforce(
        self,
        storage: Storage,
        scope: Scope,
        target: Fact,
        sources: Sequence[str],
        edge_weight: float,
        now: float,
    ) -> FactAssertion:
        fact = target.reinforced(sources, now)
        storage.facts.update(fact)
        if sources:
            storage.graph.add_edges(
                scope, [GraphEdge(fact.id, s, "derived_from", edge_weight, now) for s in sources]
            )
        result = FactAssertion(fact)
        for pending in self._pending(storage, scope, fact.id):
            self._reevaluate(storage, scope, pending, now, result)
        refreshed = storage.facts.get(scope, fact.id)
        result.fact = refreshed if refreshed is not None else fact
        return result

    @staticmethod
    def _current(
        storage: Storage, scope: Scope, subject: str, predicate: str, aliases: Sequence[str]
    ) -> list[Fact]:
        current = storage.facts.current(scope, subject, predicate)
        for alias in aliases:
            if _key(alias) != _key(subject):
                current += storage.facts.current(scope, alias, predicate)
        return current

    def retract(
        self,
        storage: Storage,
        scope: Scope,
        subject: str,
        predicate: str,
        value: str,
        by: str,
        now: float,
        aliases: Sequence[str] = (),
    ) -> list[Fact]:
        """A statement ``by`` (a memory id) says (subject, predicate, value) no
        longer holds ("Dana no longer likes coffee"): the current facts with that
        value end (valid until now, superseded, pointing to ``by``), their
        dependents are flagged and their episodes settled. Returns them retired."""
        retired: list[Fact] = []
        with storage.transaction():
            for fact in self._current(storage, scope, subject, predicate, aliases):
                if _key(fact.object) != _key(value):
                    continue
                until = now if fact.valid_until is None else min(fact.valid_until, now)
                gone = _ended(fact, by, max(until, fact.valid_from or until), now)
                storage.facts.update(gone)
                _log_superseded(storage, scope, gone, None, now, reason="retracted")
                result = FactAssertion(gone)
                result.flagged += self._flag_dependents(storage, scope, gone, None, now)
                self._retire_pending(storage, scope, [gone.id], now, result)
                self._settle_episodes(storage, scope, gone, by, now)
                retired.append(gone)
        return retired

    def _reevaluate(
        self, storage: Storage, scope: Scope, conflict: Conflict, now: float, result: FactAssertion
    ) -> None:
        """Run the tree again on a pending conflict whose side was reinforced."""
        existing = storage.facts.get(scope, conflict.existing_fact_id)
        new = storage.facts.get(scope, conflict.new_fact_id or "")
        if existing is None or new is None or not (existing.is_current and new.is_current):
            return
        decision = decide(belief(existing), belief(new), self.config)
        if decision.asks_user:
            # Still undecided: the question shown to the user carries today's confidences.
            refreshed = dataclasses.replace(
                conflict,
                existing_confidence=existing.confidence,
                new_confidence=new.confidence,
                explanation=decision.rationale,
            )
            storage.conflicts.update(refreshed)
            result.conflicts.append(refreshed)
            return
        updated = dataclasses.replace(
            conflict,
            conflict_type=decision.conflict_type,
            resolution_strategy=decision.strategy,
            action=decision.action,
            chosen_value=decision.chosen_value,
            explanation=f"{decision.rationale} (decided after reinforcement)",
            status=ConflictStatus.RESOLVED,
            resolved_at=now,
            resolved_by="rule",
        )
        self._apply(storage, scope, updated, decision, now, result, add=False)

    # -- user choice ---------------------------------------------------------------

    def resolve(
        self, storage: Storage, scope: Scope, conflict_id: str, chosen_value: str, now: float
    ) -> FactAssertion:
        """Apply the user's choice to a pending conflict: winner reinforced,
        loser superseded, the conflict marked ``user_resolved``."""
        with storage.transaction():
            conflict = storage.conflicts.get(scope, conflict_id)
            if conflict is None:
                raise NotFoundError("conflict", conflict_id)
            if conflict.status is not ConflictStatus.PENDING:
                raise ConflictNotPending(
                    f"conflict {conflict_id!r} is already {conflict.status.value} "
                    f"(chosen value {conflict.chosen_value!r}); only pending conflicts can be "
                    "resolved"
                )
            options = {_key(o): o for o in conflict.options}
            if _key(chosen_value) not in options:
                raise ValidationError(
                    f"chosen_value {chosen_value!r} is not an option of conflict "
                    f"{conflict_id!r}; choose one of {conflict.options}"
                )
            sides = [storage.facts.get(scope, conflict.existing_fact_id)]
            sides.append(storage.facts.get(scope, conflict.new_fact_id or ""))
            facts = [f for f in sides if f is not None]
            if len(facts) < 2:
                return self._resolve_statements(
                    storage, scope, conflict, options[_key(chosen_value)], now
                )
            winner = next(f for f in facts if _key(f.object) == _key(chosen_value))
            loser = next(f for f in facts if f.id != winner.id)
            winner = winner.reinforced([], now)
            storage.facts.update(winner)
            loser = self._retire(loser, winner, FactStatus.SUPERSEDED, 1.0, now)
            storage.facts.update(loser)
            updated = dataclasses.replace(
                conflict,
                action="user_choice",
                chosen_value=winner.object,
                explanation=f"{conflict.explanation}. The user chose '{winner.object}'",
                status=ConflictStatus.USER_RESOLVED,
                resolved_at=now,
                resolved_by="user",
            )
            storage.conflicts.update(updated)
            _log_superseded(storage, scope, loser, updated.id, now)
            _log_conflict(storage, scope, EventType.CONFLICT_RESOLVED, updated, now)
            result = FactAssertion(winner, [updated])
            result.flagged += self._flag_dependents(storage, scope, loser, updated.id, now)
            self._retire_pending(storage, scope, [loser.id], now, result)
            self._settle_episodes(storage, scope, loser, winner.id, now)
            self._settle(storage, scope, winner.id)
            refreshed = storage.facts.get(scope, winner.id)
            result.fact = refreshed if refreshed is not None else winner
            return result

    def _resolve_statements(
        self, storage: Storage, scope: Scope, conflict: Conflict, chosen: str, now: float
    ) -> FactAssertion:
        """The user's answer to a conflict between statements (episodes, recorded
        when a change could replace either of two older statements): choosing
        the newer statement supersedes the older one; choosing the older keeps it."""
        sides = storage.memories.get_many(
            scope, [conflict.existing_fact_id, conflict.new_fact_id or ""]
        )
        old, new = sides.get(conflict.existing_fact_id), sides.get(conflict.new_fact_id or "")
        if old is None or new is None:
            raise NotFoundError("memory", conflict.existing_fact_id if old is None else "new")
        keep_new = _key(chosen) == _key(conflict.new_value)
        updated = dataclasses.replace(
            conflict,
            action="user_choice",
            chosen_value=chosen,
            explanation=f"{conflict.explanation}. The user chose '{chosen}'",
            status=ConflictStatus.USER_RESOLVED,
            resolved_at=now,
            resolved_by="user",
        )
        storage.conflicts.update(updated)
        _log_conflict(storage, scope, EventType.CONFLICT_RESOLVED, updated, now)
        if keep_new:
            reason = f"the user chose the later statement (conflict {conflict.id})"
            self._supersede_memory(storage, scope, old.id, new.id, reason, now)
        # ``fact`` is the statement the user chose; it is an episode, not a fact.
        return FactAssertion(new if keep_new else old, [updated])  # type: ignore[arg-type]

    # -- whole memories ----------------------------------------------------------------

    @staticmethod
    def _supersede_memory(
        storage: Storage, scope: Scope, memory_id: str, by: str, reason: str, now: float
    ) -> None:
        storage.conflicts.supersede(scope, [Supersession(memory_id, by, now, reason)])
        record(
            storage,
            scope,
            EventType.MEMORY_SUPERSEDED,
            {"memory_id": memory_id, "superseded_by": by, "reason": reason},
            now,
        )

    def supersede_statement(
        self, storage: Storage, scope: Scope, old: Episode, new: Episode, reason: str, now: float
    ) -> None:
        """A later statement replaces an older one directly (no claim was read
        from it): recorded and logged; the facts read from the old statement
        alone end with it (valid until the new one was said, superseded by it)."""
        with storage.transaction():
            self._supersede_memory(storage, scope, old.id, new.id, reason, now)
            self._end_read_from(storage, scope, old, new, now)

    def _end_read_from(
        self, storage: Storage, scope: Scope, old: Episode, new: Episode, now: float
    ) -> None:
        """Retire the current inferred facts whose every source episode is
        superseded now that ``old`` is: "user's phone is iPhone 15" must not
        outlive "I have an iPhone 15" once "Switched to a OnePlus 11" replaced it."""
        read = [
            edge.source_id
            for edge in storage.graph.edges_to(scope, old.id)
            if edge.edge_type == "derived_from" and edge.source_id.startswith(FACT_ID_PREFIX)
        ]
        for fact_id in read:
            fact = storage.facts.get(scope, fact_id)
            if fact is None or not fact.is_current or fact.provenance is not Provenance.INFERRED:
                continue
            others = [s for s in fact.source_episode_ids if s != old.id]
            if others and len(storage.conflicts.superseded(scope, others)) < len(others):
                continue  # another statement still says it
            start = fact.valid_from if fact.valid_from is not None else fact.created_at
            gone = _ended(fact, new.id, max(new.timestamp, start), now)
            storage.facts.update(gone)
            _log_superseded(storage, scope, gone, None, now, reason="its statement was replaced")
            self._flag_dependents(storage, scope, gone, None, now)

    def ask_between_statements(
        self, storage: Storage, scope: Scope, old: Episode, new: Episode, reason: str, now: float
    ) -> Conflict:
        """Record that ``new`` may replace ``old`` but another older statement is
        as plausible: a pending conflict asks the user instead of guessing."""
        conflict = Conflict(
            id=f"cfl_{uuid.uuid4().hex}",
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            conflict_type=ConflictType.VALUE_MISMATCH,
            subject=new.source,
            predicate="statement",
            existing_fact_id=old.id,
            existing_value=old.content,
            existing_confidence=1.0,
            new_fact_id=new.id,
            new_value=new.content,
            new_confidence=1.0,
            resolution_strategy=ResolutionStrategy.ASK_USER,
            action="ask_user",
            chosen_value=None,
            explanation=f"Ambiguous change - need user input: {reason}",
            status=ConflictStatus.PENDING,
            detected_at=now,
            resolved_at=None,
            resolved_by=None,
            options=[old.content, new.content],
        )
        with storage.transaction():
            storage.conflicts.add(conflict)
            _log_conflict(storage, scope, EventType.CONFLICT_DETECTED, conflict, now)
        return conflict

    def _settle_episodes(
        self, storage: Storage, scope: Scope, loser: Fact, winner_id: str, now: float
    ) -> None:
        """Each episode ``loser`` was read from none of whose facts is current any
        more, and that says nothing but their values, is wholly superseded, by the
        episode the winner was read from (or the winner itself when it was not read
        from one). One that says more ("Jordan lives in Lisbon. Also: Jordan listens
        to flamenco nonstop.") stands, to be replaced in part
        (``supersession.replace_in_part``)."""
        sources = dict.fromkeys(loser.source_episode_ids)
        sources.update(
            (e.target_id, None)
            for e in storage.graph.edges_from(scope, loser.id)
            if e.edge_type == "derived_from"
        )
        if not sources:
            return
        winner = storage.memories.get(scope, winner_id) if winner_id else None
        by = winner_id
        if isinstance(winner, Fact) and winner.source_episode_ids:
            by = winner.source_episode_ids[0]
        found = storage.memories.get_many(scope, list(sources))
        for episode in found.values():
            if not isinstance(episode, Episode) or episode.id == by or not by:
                continue
            facts = facts_read_from(storage, scope, episode.id)
            if (
                facts
                and not any(f.is_current for f in facts)
                and says_only(episode.content, [f.object for f in facts])
            ):
                reason = (
                    f"every claim of it was replaced; last '{loser.subject} "
                    f"{loser.predicate} {loser.object}'"
                )
                self._supersede_memory(storage, scope, episode.id, by, reason, now)

    # -- sources of truth ------------------------------------------------------------

    def apply_sources(
        self,
        storage: Storage,
        scope: Scope,
        mismatches: Sequence[SourceMismatch],
        retention: RetentionInfo,
        now: float,
    ) -> FactAssertion | None:
        """Record memory_vs_db conflicts: the source's value is used (stored as a
        fact unless memory holds it), the memory is conflicted and decays.
        Returns None when nothing was left to change (another read did it)."""
        result: FactAssertion | None = None
        with storage.transaction():
            for mismatch in mismatches:
                memory = storage.facts.get(scope, mismatch.fact_id)
                if memory is None or not memory.is_current:
                    continue
                if _key(memory.object) == _key(mismatch.value):
                    continue
                current = storage.facts.current(scope, memory.subject, memory.predicate)
                held = [c for c in current if _key(c.object) == _key(mismatch.value)]
                if held:
                    winner = dataclasses.replace(
                        held[0], last_verified=now, status=FactStatus.ACTIVE, updated_at=now
                    )
                    storage.facts.update(winner)
                else:
                    winner = self._fresh_id(storage, scope, mismatch.replacement)
                    storage.facts.add(winner, mismatch.vector)  # type: ignore[arg-type]
                    storage.retention.put_many(
                        scope, [dataclasses.replace(retention, memory_id=winner.id)]
                    )
                decision = decide_memory_vs_db(belief(memory), mismatch.value, self.config)
                conflict = dataclasses.replace(
                    self._conflict(scope, memory, winner, decision, now),
                    new_confidence=self.config.source_confidence,
                    resolved_by=f"source:{mismatch.source_name}",
                )
                if result is None:
                    result = FactAssertion(winner)
                self._apply(storage, scope, conflict, decision, now, result)
                self._retire_pending(storage, scope, [memory.id], now, result)
        return result

    # -- reads ---------------------------------------------------------------------

    @staticmethod
    def touching(
        storage: Storage,
        scope: Scope,
        facts: Sequence[Fact],
        moment: float | None,
        detected: Sequence[Conflict],
    ) -> list[Conflict]:
        """Conflicts involving ``facts`` plus those just ``detected``, oldest
        first; with ``moment``, only those detected by then."""
        found = {c.id: c for c in storage.conflicts.involving(scope, [f.id for f in facts])}
        found.update((c.id, c) for c in detected)
        listed = sorted(found.values(), key=lambda c: (c.detected_at, c.id))
        return [c for c in listed if moment is None or c.detected_at <= moment]

    def current_facts(self, storage: Storage, scope: Scope, hits: Sequence[Hit]) -> list[Fact]:
        """Current facts behind retrieved ones: a superseded fact of a functional
        predicate is replaced by the value(s) now held."""
        found: dict[str, Fact] = {}
        for hit in hits:
            if not isinstance(hit.memory, Fact):
                continue
            fact = storage.facts.get(scope, hit.id) or hit.memory
            if self.registry.is_functional(fact.predicate):
                for current in storage.facts.current(scope, fact.subject, fact.predicate):
                    found.setdefault(current.id, current)
            elif fact.is_current:
                found.setdefault(fact.id, fact)
        return list(found.values())

    def source_fact(
        self, scope: Scope, memory: Fact, source: str, value: str, text: str, now: float
    ) -> Fact:
        """The fact recording a source of truth's value, to replace ``memory``'s."""
        return Fact(
            id=fact_id_for(scope, memory.subject, memory.predicate, value),
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            content=text,
            provenance=Provenance.OBSERVED,
            temporal_level=memory.temporal_level,
            base_salience=memory.base_salience,
            created_at=now,
            updated_at=now,
            metadata={"source_of_truth": source},
            subject=memory.subject,
            predicate=memory.predicate,
            object=value,
            confidence=self.config.source_confidence,
            last_verified=now,
            valid_from=now,
            recorded_at=now,
        )

    # -- shared steps --------------------------------------------------------------

    def _conflict(
        self, scope: Scope, existing: Fact, new: Fact, decision: Decision, now: float
    ) -> Conflict:
        pending = decision.asks_user
        return Conflict(
            id=f"cfl_{uuid.uuid4().hex}",
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            conflict_type=decision.conflict_type,
            subject=existing.subject,
            predicate=existing.predicate,
            existing_fact_id=existing.id,
            existing_value=existing.object,
            existing_confidence=existing.confidence,
            new_fact_id=new.id,
            new_value=new.object,
            new_confidence=new.confidence,
            resolution_strategy=decision.strategy,
            action=decision.action,
            chosen_value=decision.chosen_value,
            explanation=decision.rationale,
            status=ConflictStatus.PENDING if pending else ConflictStatus.RESOLVED,
            detected_at=now,
            resolved_at=None if pending else now,
            resolved_by=None if pending else "rule",
            options=[existing.object, new.object] if pending else [],
        )

    def _apply(
        self,
        storage: Storage,
        scope: Scope,
        conflict: Conflict,
        decision: Decision,
        now: float,
        result: FactAssertion,
        *,
        add: bool = True,
    ) -> None:
        """Record ``conflict`` and write its decision to both (stored) sides: the
        loser is retired and its dependents flagged, or both become disputed."""
        if add:
            storage.conflicts.add(conflict)
            _log_conflict(storage, scope, EventType.CONFLICT_DETECTED, conflict, now)
        else:
            storage.conflicts.update(conflict)
        result.conflicts.append(conflict)
        existing = storage.facts.get(scope, conflict.existing_fact_id)
        new = storage.facts.get(scope, conflict.new_fact_id or "")
        if existing is None or new is None:
            raise NotFoundError("fact", conflict.existing_fact_id if existing is None else "new")
        if decision.asks_user:
            for side in (existing, new):
                storage.facts.update(dataclasses.replace(side, status=FactStatus.DISPUTED))
            return
        winner, loser = (new, existing) if decision.winner == Side.NEW else (existing, new)
        loser = self._lose(loser, winner, decision, now)
        storage.facts.update(loser)
        _log_superseded(storage, scope, loser, conflict.id, now)
        _log_conflict(storage, scope, EventType.CONFLICT_RESOLVED, conflict, now)
        self._settle(storage, scope, winner.id)
        result.flagged += self._flag_dependents(storage, scope, loser, conflict.id, now)
        self._settle_episodes(storage, scope, loser, winner.id, now)

    def _lose(self, loser: Fact, winner: Fact, decision: Decision, now: float) -> Fact:
        status = decision.loser_status or FactStatus.SUPERSEDED
        return self._retire(loser, winner, status, decision.loser_confidence_factor, now)

    @staticmethod
    def _retire(loser: Fact, winner: Fact, status: FactStatus, factor: float, now: float) -> Fact:
        valid_until = loser.valid_until
        if status is FactStatus.SUPERSEDED or winner.metadata.get("source_of_truth"):
            start = winner.valid_from if winner.valid_from is not None else now
            own = loser.valid_from if loser.valid_from is not None else loser.created_at
            if start > own and (valid_until is None or valid_until > start):
                valid_until = start
        return dataclasses.replace(
            loser,
            status=status,
            confidence=loser.confidence * factor,
            superseded_at=now,
            superseded_by=winner.id,
            valid_until=valid_until,
            updated_at=now,
        )

    def _settle(self, storage: Storage, scope: Scope, fact_id: str) -> None:
        """A disputed fact with no pending conflict left becomes active again."""
        fact = storage.facts.get(scope, fact_id)
        if fact is None or fact.status is not FactStatus.DISPUTED or not fact.is_current:
            return
        if not self._pending(storage, scope, fact_id):
            storage.facts.update(dataclasses.replace(fact, status=FactStatus.ACTIVE))

    @staticmethod
    def _pending(storage: Storage, scope: Scope, fact_id: str) -> list[Conflict]:
        return [
            c
            for c in storage.conflicts.involving(scope, [fact_id])
            if c.status is ConflictStatus.PENDING
        ]

    def _retire_pending(
        self,
        storage: Storage,
        scope: Scope,
        fact_ids: Sequence[str],
        now: float,
        result: FactAssertion,
    ) -> None:
        """Pending conflicts with a side that stopped being current are obsolete."""
        for conflict in storage.conflicts.involving(scope, fact_ids):
            if conflict.status is not ConflictStatus.PENDING:
                continue
            sides = [conflict.existing_fact_id, conflict.new_fact_id or ""]
            facts = storage.memories.get_many(scope, sides)
            if all(isinstance(f, Fact) and f.is_current for f in facts.values()):
                continue
            updated = dataclasses.replace(
                conflict,
                status=ConflictStatus.OBSOLETE,
                resolved_at=now,
                resolved_by="rule",
                explanation=f"{conflict.explanation}; overtaken by a later value",
            )
            storage.conflicts.update(updated)
            _log_conflict(storage, scope, EventType.CONFLICT_RESOLVED, updated, now)
            result.conflicts.append(updated)
            for side in sides:
                self._settle(storage, scope, side)

    def _flag_dependents(
        self, storage: Storage, scope: Scope, premise: Fact, conflict_id: str | None, now: float
    ) -> list[ReviewFlag]:
        """Flag what was derived from (or supported by) ``premise``, transitively."""
        reason = (
            f"premise '{premise.subject} {premise.predicate} {premise.object}' is "
            f"{premise.status.value}; replaced by {premise.superseded_by}"
        )
        seen = {premise.id, premise.superseded_by or ""}
        frontier = [premise.id]
        flags: list[ReviewFlag] = []
        for _hop in range(self.config.review_max_hops):
            following: list[str] = []
            for node in frontier:
                dependents = [
                    e.source_id
                    for e in storage.graph.edges_to(scope, node)
                    if e.edge_type == "derived_from"
                ] + [
                    e.target_id
                    for e in storage.graph.edges_from(scope, node)
                    if e.edge_type == "supports"
                ]
                for memory_id in dependents:
                    if memory_id in seen:
                        continue
                    seen.add(memory_id)
                    following.append(memory_id)
                    flags.append(ReviewFlag(memory_id, premise.id, conflict_id, reason, now))
            frontier = following
            if not frontier:
                break
        if flags:
            storage.conflicts.flag(scope, flags)
            logger.info("flagged %d memories for review after %s changed", len(flags), premise.id)
        return flags

    @staticmethod
    def _fresh_id(storage: Storage, scope: Scope, fact: Fact) -> Fact:
        """The deterministic id names the first version of a triple; a triple
        that comes back after being superseded gets a new id for its new row."""
        if storage.memories.get(scope, fact.id) is None:
            return fact
        return dataclasses.replace(fact, id=new_memory_id("fact", scope))
