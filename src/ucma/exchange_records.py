"""The records an export carries beside memories: decisions with their outcomes and
salience updates, conflicts, review flags, supersessions, memory history and graph
importance (``ucma.exchange`` carries memories, vectors, retention and edges).

Lines (after the memories and edges of ``ucma.exchange``)::

    {"type": "history", "memory_id": ..., "event": ..., "at": ..., "details": {...}}
    {"type": "decision", "trace": {...DecisionTrace.to_dict...}, "updates": [...]}
    {"type": "conflict", "conflict": {...}}
    {"type": "review_flag", "flag": {...}}
    {"type": "supersession", "memory_id": ..., "superseded_by": ..., ...}
    {"type": "pagerank", "scores": {memory id: score}}
    {"type": "opinion", "opinion": {...opinion_to_dict...}}
    {"type": "transition", "transition": {...Transition.to_dict...}}
    {"type": "competence", "competence": {...Competence.to_dict...}}
    {"type": "goal", "goal": {...goal_to_dict...}}

Transitions and competences (the world model and the self-model) keep the scope's own:
one with the id, or the key (action, context and outcome; capability), of a record the
scope holds is skipped, so an import adds what the scope has not learned without
counting any observation twice.

On import, references to memories follow their records (``ScopeIds.reference``).
Decision, conflict, opinion and goal ids are kept only when the caller's scope already holds that
record (then it is skipped, so re-importing changes nothing); any other gets an id
derived from the scope and the original (``foreign_id``), so an import never takes
or tests an id another scope may hold. A record whose memories are not in the scope
(a conflict about a fact that was not exported) is skipped. Everything is written in
one transaction after the memories; functions taking a ``Storage`` run on the storage
thread.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ucma.errors import ValidationError
from ucma.events.log import EventType, record
from ucma.learning.records import DecisionTrace, OutcomeSignal, SalienceUpdate
from ucma.memory_ids import foreign_id
from ucma.paradigms.goal_records import Goal
from ucma.paradigms.predictive_records import (
    Competence,
    Transition,
    competence_from_dict,
    transition_from_dict,
)
from ucma.paradigms.world_model import context_key, normal
from ucma.serialization import goal_from_dict, goal_to_dict, opinion_from_dict, opinion_to_dict
from ucma.storage.base import Storage, Supersession
from ucma.types import (
    Conflict,
    ConflictStatus,
    ConflictType,
    HistoryEntry,
    Opinion,
    ResolutionStrategy,
    ReviewFlag,
    Scope,
)

__all__ = [
    "RECORD_TYPES",
    "ScopeRecords",
    "export_history",
    "export_records",
    "write_records",
]

RECORD_TYPES = frozenset(
    {
        "history",
        "decision",
        "conflict",
        "review_flag",
        "supersession",
        "pagerank",
        "opinion",
        "transition",
        "competence",
        "goal",
    }
)
#: Most decisions, conflicts or flags one export carries (newest kept).
MAX_RECORDS = 1_000_000


def _line(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False) + "\n"


def _plain(value: Any) -> Any:
    return value.value if hasattr(value, "value") and not isinstance(value, str | int) else value


# ------------------------------------------------------------------------------- export


def export_history(storage: Storage, scope: Scope, memory_ids: Iterable[str]) -> list[str]:
    """History lines of the given memories (one page of an export)."""
    return [
        _line({"type": "history", **dataclasses.asdict(entry)})
        for memory_id in memory_ids
        for entry in storage.lifecycle.history(scope, memory_id)
    ]


def export_records(storage: Storage, scope: Scope) -> list[str]:
    """Decision, conflict, review-flag, supersession and graph-importance lines."""
    with storage.transaction():
        traces = storage.traces.list(scope, limit=MAX_RECORDS)
        updates = {t.id: storage.traces.updates(scope, trace_id=t.id) for t in traces}
        conflicts = storage.conflicts.list(scope, limit=MAX_RECORDS)
        flags = storage.conflicts.flags(scope, include_cleared=True, limit=MAX_RECORDS)
        supersessions = storage.conflicts.supersessions(scope)
        nodes = storage.graph.node_ids(scope, include_archived=True)
        pagerank = {k: v for k, v in storage.graph.pagerank(scope, nodes).items() if v}
        opinions = storage.opinions.list(scope, limit=MAX_RECORDS)
        transitions = storage.predictive.transitions(scope, limit=MAX_RECORDS)
        competences = storage.predictive.competences(scope, limit=MAX_RECORDS)
        goals = storage.goals.list(scope, limit=MAX_RECORDS)
    lines = []
    for trace in reversed(traces):  # oldest first
        data = trace.to_dict()
        data.pop("outcome_observed", None)
        lines.append(
            _line(
                {
                    "type": "decision",
                    "trace": data,
                    "updates": [u.to_dict() for u in updates[trace.id]],
                }
            )
        )
    for conflict in reversed(conflicts):
        data = {k: _plain(v) for k, v in dataclasses.asdict(conflict).items()}
        lines.append(_line({"type": "conflict", "conflict": data}))
    for flag in reversed(flags):
        lines.append(_line({"type": "review_flag", "flag": dataclasses.asdict(flag)}))
    for entry in supersessions:
        lines.append(_line({"type": "supersession", **dataclasses.asdict(entry)}))
    if pagerank:
        lines.append(_line({"type": "pagerank", "scores": pagerank}))
    for opinion in sorted(opinions, key=lambda o: (o.created_at, o.id)):
        lines.append(_line({"type": "opinion", "opinion": opinion_to_dict(opinion)}))
    for transition in sorted(transitions, key=lambda t: (t.created_at, t.id)):
        lines.append(_line({"type": "transition", "transition": transition.to_dict()}))
    for competence in sorted(competences, key=lambda c: (c.created_at, c.id)):
        lines.append(_line({"type": "competence", "competence": competence.to_dict()}))
    for goal in sorted(goals, key=lambda g: (g.created_at, g.id)):
        lines.append(_line({"type": "goal", "goal": goal_to_dict(goal)}))
    return lines


# ------------------------------------------------------------------------------- import


@dataclass
class ScopeRecords:
    """Record lines read from an import, parsed; written by ``write_records``."""

    history: list[HistoryEntry] = field(default_factory=list)
    decisions: list[tuple[DecisionTrace, list[SalienceUpdate]]] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    flags: list[ReviewFlag] = field(default_factory=list)
    supersessions: list[Supersession] = field(default_factory=list)
    pagerank: dict[str, float] = field(default_factory=dict)
    opinions: list[Opinion] = field(default_factory=list)
    transitions: list[Transition] = field(default_factory=list)
    competences: list[Competence] = field(default_factory=list)
    goals: list[Goal] = field(default_factory=list)

    def read(self, kind: str, line: dict[str, Any]) -> None:
        """Parse one line of ``kind`` (in ``RECORD_TYPES``); TypeError / ValueError /
        ValidationError when it is malformed (the reader names the line)."""
        if kind == "history":
            entry = HistoryEntry(**line)
            if not isinstance(entry.details, dict):
                raise ValidationError("history details must be an object")
            self.history.append(entry)
        elif kind == "decision":
            data = dict(line["trace"])
            data.pop("outcome_observed", None)
            if data.get("outcome_signal") is not None:
                data["outcome_signal"] = OutcomeSignal(data["outcome_signal"])
            trace = DecisionTrace(**data)
            if not isinstance(trace.memory_scores, dict):
                raise ValidationError("a decision's memory_scores must be an object")
            updates = [SalienceUpdate(**u) for u in line.get("updates", [])]
            self.decisions.append((trace, updates))
        elif kind == "conflict":
            data = dict(line["conflict"])
            data["conflict_type"] = ConflictType(data["conflict_type"])
            data["resolution_strategy"] = ResolutionStrategy(data["resolution_strategy"])
            data["status"] = ConflictStatus(data["status"])
            self.conflicts.append(Conflict(**data))
        elif kind == "review_flag":
            self.flags.append(ReviewFlag(**line["flag"]))
        elif kind == "supersession":
            self.supersessions.append(Supersession(**line))
        elif kind == "pagerank":
            scores = line["scores"]
            if not isinstance(scores, dict):
                raise ValidationError("pagerank scores must be an object")
            self.pagerank.update({str(k): float(v) for k, v in scores.items()})
        elif kind == "opinion":
            data = line["opinion"]
            if not isinstance(data, dict):
                raise ValidationError("an opinion line holds an object")
            self.opinions.append(opinion_from_dict(data))
        elif kind == "transition":
            self.transitions.append(transition_from_dict(line["transition"]))
        elif kind == "competence":
            self.competences.append(competence_from_dict(line["competence"]))
        elif kind == "goal":
            data = line["goal"]
            if not isinstance(data, dict):
                raise ValidationError("a goal line holds an object")
            self.goals.append(goal_from_dict(data))
        else:  # pragma: no cover - the reader only passes RECORD_TYPES
            raise ValidationError(f"unknown record type {kind!r}")


def write_records(
    storage: Storage, scope: Scope, records: ScopeRecords, reference: Any
) -> dict[str, int]:
    """Write the records into ``scope`` in one transaction; ``reference`` maps a memory
    id of the file to its id in the scope. Returns how many of each were written."""
    written = dict.fromkeys(("history", "decisions", "conflicts", "review_flags"), 0)
    written |= {"supersessions": 0, "pagerank": 0, "opinions": 0}
    written |= {"transitions": 0, "competences": 0, "goals": 0}
    with storage.transaction():
        memory_ids = {reference(i) for i in _referenced(records)}
        present = set(storage.memories.get_many(scope, sorted(memory_ids)))

        history = [
            dataclasses.replace(e, memory_id=reference(e.memory_id))
            for e in records.history
            if reference(e.memory_id) in present
        ]
        known = {
            (e.memory_id, e.event, e.at)
            for memory_id in {h.memory_id for h in history}
            for e in storage.lifecycle.history(scope, memory_id)
        }
        history = [h for h in history if (h.memory_id, h.event, h.at) not in known]
        storage.lifecycle.add_history(scope, history)
        written["history"] = len(history)

        for trace, updates in records.decisions:
            if storage.traces.get(scope, trace.id) is not None:
                continue
            new_id = foreign_id(trace.id, scope, "trc")
            if storage.traces.get(scope, new_id) is not None:
                continue
            scores = {reference(k): v for k, v in trace.memory_scores.items()}
            moved = dataclasses.replace(
                trace,
                id=new_id,
                user_id=scope.user_id,
                agent_id=scope.agent_id,
                memory_scores=scores,
                retrieval_id=None,
            )
            storage.traces.add(moved)
            storage.traces.add_updates(
                scope,
                [
                    dataclasses.replace(u, trace_id=new_id, memory_id=reference(u.memory_id))
                    for u in updates
                ],
            )
            written["decisions"] += 1

        conflict_ids: dict[str, str] = {}
        for conflict in records.conflicts:
            if storage.conflicts.get(scope, conflict.id) is not None:
                conflict_ids[conflict.id] = conflict.id
                continue
            new_id = foreign_id(conflict.id, scope, "cfl")
            conflict_ids[conflict.id] = new_id
            existing = reference(conflict.existing_fact_id)
            new_fact = reference(conflict.new_fact_id) if conflict.new_fact_id else None
            if existing not in present or (new_fact is not None and new_fact not in present):
                continue
            if storage.conflicts.get(scope, new_id) is not None:
                continue
            storage.conflicts.add(
                dataclasses.replace(
                    conflict,
                    id=new_id,
                    user_id=scope.user_id,
                    agent_id=scope.agent_id,
                    existing_fact_id=existing,
                    new_fact_id=new_fact,
                )
            )
            written["conflicts"] += 1

        flags = [
            dataclasses.replace(
                f,
                memory_id=reference(f.memory_id),
                premise_id=reference(f.premise_id),
                conflict_id=conflict_ids.get(f.conflict_id) if f.conflict_id else None,
            )
            for f in records.flags
        ]
        flags = [f for f in flags if f.memory_id in present and f.premise_id in present]
        open_flags = [f for f in flags if f.cleared_at is None]
        written["review_flags"] = storage.conflicts.flag(scope, open_flags) if open_flags else 0

        supersessions = [
            dataclasses.replace(
                s, memory_id=reference(s.memory_id), superseded_by=reference(s.superseded_by)
            )
            for s in records.supersessions
        ]
        supersessions = [
            s for s in supersessions if s.memory_id in present and s.superseded_by in present
        ]
        storage.conflicts.supersede(scope, supersessions)
        written["supersessions"] = len(supersessions)

        scores = {reference(k): v for k, v in records.pagerank.items()}
        scores = {k: v for k, v in scores.items() if k in present}
        if scores:
            storage.graph.set_pagerank(scope, scores)
        written["pagerank"] = len(scores)
        written["opinions"] = _write_opinions(storage, scope, records.opinions, reference, present)
        written["transitions"] = _write_transitions(storage, scope, records.transitions)
        written["competences"] = _write_competences(storage, scope, records.competences)
        written["goals"] = _write_goals(storage, scope, records.goals, reference)
    return written


def _write_transitions(storage: Storage, scope: Scope, transitions: list[Transition]) -> int:
    """Transitions the scope has not learned, under ids derived from the originals, each
    logged as ``world.transition_imported`` with its state. The fact a transition was
    promoted to is not carried (its id is the exporting scope's); the scope promotes it
    again when it observes the pattern."""
    held = {
        (normal(t.action), context_key(t.context), normal(t.outcome))
        for t in storage.predictive.transitions(scope, limit=MAX_RECORDS)
    }
    new: list[Transition] = []
    for t in transitions:
        key = (normal(t.action), context_key(t.context), normal(t.outcome))
        new_id = foreign_id(t.id, scope, "tr")
        if key in held or storage.predictive.get_transition(scope, new_id) is not None:
            continue
        held.add(key)
        new.append(
            dataclasses.replace(
                t,
                id=new_id,
                user_id=scope.user_id,
                agent_id=scope.agent_id,
                promoted_fact_id=None,
            )
        )
    storage.predictive.put_transitions(new)
    for transition in new:
        record(
            storage,
            scope,
            EventType.TRANSITION_IMPORTED,
            {"transition": transition.to_dict()},
            transition.updated_at,
        )
    return len(new)


def _write_competences(storage: Storage, scope: Scope, competences: list[Competence]) -> int:
    """Competences of capabilities the scope has no record of, logged as
    ``self.competence_imported`` with their state."""
    new: list[Competence] = []
    for c in competences:
        if storage.predictive.get_competence(scope, c.capability) is not None:
            continue
        if any(normal(n.capability) == normal(c.capability) for n in new):
            continue
        new.append(
            dataclasses.replace(
                c,
                id=foreign_id(c.id, scope, "cap"),
                user_id=scope.user_id,
                agent_id=scope.agent_id,
            )
        )
    storage.predictive.put_competences(new)
    for competence in new:
        record(
            storage,
            scope,
            EventType.COMPETENCE_IMPORTED,
            {"competence": competence.to_dict()},
            competence.updated_at,
        )
    return len(new)


def _write_opinions(
    storage: Storage,
    scope: Scope,
    opinions: list[Opinion],
    reference: Any,
    present: set[str],
) -> int:
    """Opinions into ``scope``: one the scope holds already is skipped; any other gets
    an id derived from the scope and the original, with its links (``replaces``,
    ``replaced_by``) and its memories following. Each written opinion is logged as
    ``opinion.formed`` with its state, so the event log rebuilds it."""
    ids = {
        o.id: o.id
        if storage.opinions.get(scope, o.id) is not None
        else foreign_id(o.id, scope, "op")
        for o in opinions
    }

    def memory(memory_id: str | None) -> str | None:
        if memory_id is None:
            return None
        moved = reference(memory_id)
        return moved if moved in present else None

    new = [
        dataclasses.replace(
            o,
            id=ids[o.id],
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            memory_id=memory(o.memory_id),
            replaces=ids.get(o.replaces, o.replaces) if o.replaces else None,
            replaced_by=ids.get(o.replaced_by, o.replaced_by) if o.replaced_by else None,
            evidence=[dataclasses.replace(e, memory_id=memory(e.memory_id)) for e in o.evidence],
        )
        for o in opinions
        if storage.opinions.get(scope, ids[o.id]) is None
    ]
    storage.opinions.put(new)
    for opinion in new:
        record(
            storage,
            scope,
            EventType.OPINION_FORMED,
            {"opinion": opinion_to_dict(opinion), "imported": True},
            opinion.updated_at,
        )
    return len(new)


def _write_goals(storage: Storage, scope: Scope, goals: list[Goal], reference: Any) -> int:
    """Goals into ``scope``: one the scope holds already is skipped; any other gets an
    id derived from the scope and the original, with its links (``parent_id``,
    ``subgoals``) following and the memories it names (conflicts, accepted) mapped
    like every reference. Each written goal is logged as ``goal.added`` with its
    state, so the event log rebuilds it."""
    ids = {
        g.id: g.id
        if storage.goals.get(scope, g.id) is not None
        else foreign_id(g.id, scope, "goal")
        for g in goals
    }
    new = [
        dataclasses.replace(
            g,
            id=ids[g.id],
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            parent_id=ids.get(g.parent_id, g.parent_id) if g.parent_id else None,
            subgoals=[ids.get(i, i) for i in g.subgoals],
            conflicts=[
                dataclasses.replace(c, memory_id=reference(c.memory_id)) for c in g.conflicts
            ],
            accepted=[reference(i) for i in g.accepted],
        )
        for g in goals
        if storage.goals.get(scope, ids[g.id]) is None
    ]
    storage.goals.put(new)
    for goal in new:
        record(
            storage,
            scope,
            EventType.GOAL_ADDED,
            {"goal": goal_to_dict(goal), "imported": True},
            goal.updated_at,
        )
    return len(new)


def _referenced(records: ScopeRecords) -> set[str]:
    ids: set[str] = {e.memory_id for e in records.history}
    for conflict in records.conflicts:
        ids.add(conflict.existing_fact_id)
        if conflict.new_fact_id:
            ids.add(conflict.new_fact_id)
    for flag in records.flags:
        ids.update((flag.memory_id, flag.premise_id))
    for entry in records.supersessions:
        ids.update((entry.memory_id, entry.superseded_by))
    for opinion in records.opinions:
        ids.update(e.memory_id for e in opinion.evidence if e.memory_id)
        if opinion.memory_id:
            ids.add(opinion.memory_id)
    ids.update(records.pagerank)
    return ids
