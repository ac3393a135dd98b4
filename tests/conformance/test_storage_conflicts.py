"""Conflict store, review flags and the bi-temporal fact reads, on every backend."""

from __future__ import annotations

import dataclasses

import pytest

from ucma.errors import NotFoundError, ValidationError
from ucma.types import (
    Conflict,
    ConflictStatus,
    ConflictType,
    FactStatus,
    ResolutionStrategy,
    ReviewFlag,
    Scope,
)

ALICE = Scope("alice", "assistant")
BOB = Scope("bob", "assistant")


def add_fact(storage, make, scope, obj, **fields):
    fact = make.fact(scope, "Order 7", "status", obj, **fields)
    storage.facts.add(fact, make.vector())
    return fact


def conflict_between(scope, old, new, n=1, **fields) -> Conflict:
    values = {
        "id": f"cfl-{n}",
        "user_id": scope.user_id,
        "agent_id": scope.agent_id,
        "conflict_type": ConflictType.VALUE_MISMATCH,
        "subject": old.subject,
        "predicate": old.predicate,
        "existing_fact_id": old.id,
        "existing_value": old.object,
        "existing_confidence": 0.8,
        "new_fact_id": new.id,
        "new_value": new.object,
        "new_confidence": 0.82,
        "resolution_strategy": ResolutionStrategy.ASK_USER,
        "action": "ask_user",
        "chosen_value": None,
        "explanation": "Ambiguous conflict - need user input ✓",
        "status": ConflictStatus.PENDING,
        "detected_at": 1000.0 + n,
        "options": [old.object, new.object],
    }
    values.update(fields)
    return Conflict(**values)


def test_fact_record_time_columns_round_trip(storage, make) -> None:
    fact = add_fact(
        storage,
        make,
        ALICE,
        "packed",
        status=FactStatus.CONFLICTED,
        recorded_at=50.0,
        superseded_at=75.5,
        superseded_by="fact-x",
    )
    assert storage.facts.get(ALICE, fact.id) == fact
    changed = dataclasses.replace(fact, status=FactStatus.SUPERSEDED, superseded_by="fact-y")
    storage.facts.update(changed)
    assert storage.facts.get(ALICE, fact.id) == changed


def test_about_returns_current_beliefs_history_or_beliefs_as_of(storage, make) -> None:
    old = add_fact(storage, make, ALICE, "packed", recorded_at=100.0, superseded_at=200.0)
    new = add_fact(storage, make, ALICE, "shipped", recorded_at=200.0)
    rejected = add_fact(storage, make, ALICE, "lost", recorded_at=150.0, superseded_at=150.0)
    assert [f.id for f in storage.facts.about(ALICE, "order 7")] == [new.id]
    history = {f.id for f in storage.facts.about(ALICE, "order 7", include_superseded=True)}
    assert history == {old.id, new.id, rejected.id}
    assert storage.facts.about(ALICE, "order 7", as_of=99.0) == []
    assert [f.id for f in storage.facts.about(ALICE, "order 7", as_of=100.0)] == [old.id]
    assert [f.id for f in storage.facts.about(ALICE, "order 7", as_of=150.0)] == [old.id]
    assert [f.id for f in storage.facts.about(ALICE, "order 7", as_of=200.0)] == [new.id]
    assert storage.facts.about(BOB, "order 7", as_of=200.0) == []


def test_as_of_counts_a_fact_without_recorded_at_from_its_creation(storage, make) -> None:
    fact = add_fact(storage, make, ALICE, "packed", created_at=300.0, recorded_at=None)
    assert storage.facts.about(ALICE, "order 7", as_of=299.0) == []
    assert [f.id for f in storage.facts.about(ALICE, "order 7", as_of=300.0)] == [fact.id]


def test_current_and_history_per_subject_and_predicate(storage, make) -> None:
    old = add_fact(storage, make, ALICE, "packed", recorded_at=1.0, superseded_at=2.0)
    new = add_fact(storage, make, ALICE, "shipped", recorded_at=2.0)
    other = make.fact(ALICE, "Order 7", "carrier", "DHL")
    storage.facts.add(other, make.vector())
    assert storage.facts.current(ALICE, " ORDER 7", "Status") == [new]
    assert [f.id for f in storage.facts.history(ALICE, "order 7", "status")] == [old.id, new.id]
    storage.memories.set_archived(ALICE, [new.id], 5.0)
    assert storage.facts.current(ALICE, "order 7", "status") == []
    assert len(storage.facts.history(ALICE, "order 7", "status")) == 2
    assert storage.facts.current(BOB, "order 7", "status") == []


def test_traverse_follows_current_facts_only(storage, make) -> None:
    add_fact(storage, make, ALICE, "packed", superseded_at=2.0)
    current = add_fact(storage, make, ALICE, "shipped")
    assert storage.facts.traverse(ALICE, "order 7") == [current]


def test_conflicts_round_trip_update_and_list(storage, make) -> None:
    old = add_fact(storage, make, ALICE, "Thursday")
    new = add_fact(storage, make, ALICE, "Friday")
    first = conflict_between(ALICE, old, new, 1)
    second = conflict_between(
        ALICE,
        old,
        new,
        2,
        status=ConflictStatus.RESOLVED,
        resolution_strategy=ResolutionStrategy.KEEP_NEWEST,
        chosen_value="Friday",
        resolved_at=1003.0,
        resolved_by="rule",
        options=[],
    )
    storage.conflicts.add(first)
    storage.conflicts.add(second)
    assert storage.conflicts.get(ALICE, first.id) == first
    assert storage.conflicts.get(BOB, first.id) is None
    assert storage.conflicts.list(ALICE) == [second, first]
    assert storage.conflicts.list(ALICE, status=ConflictStatus.PENDING) == [first]
    assert storage.conflicts.list(ALICE, subject="ORDER 7", predicate="status", limit=1) == [second]
    assert storage.conflicts.list(ALICE, subject="nobody") == []
    assert storage.conflicts.involving(ALICE, [new.id]) == [first, second]
    assert storage.conflicts.involving(BOB, [new.id]) == []
    resolved = dataclasses.replace(
        first,
        status=ConflictStatus.USER_RESOLVED,
        chosen_value="Thursday",
        action="user_choice",
        resolved_at=2000.0,
        resolved_by="user",
        existing_confidence=0.85,
        new_confidence=0.5,
    )
    storage.conflicts.update(resolved)
    assert storage.conflicts.get(ALICE, first.id) == resolved
    with pytest.raises(NotFoundError):
        storage.conflicts.update(dataclasses.replace(first, user_id="bob"))


def test_conflict_with_unknown_fact_or_duplicate_id_is_refused(storage, make) -> None:
    old = add_fact(storage, make, ALICE, "Thursday")
    new = add_fact(storage, make, ALICE, "Friday")
    ghost = dataclasses.replace(new, id="fact-missing")
    with pytest.raises(ValidationError):
        storage.conflicts.add(conflict_between(ALICE, old, ghost))
    storage.conflicts.add(conflict_between(ALICE, old, new))
    with pytest.raises(ValidationError):
        storage.conflicts.add(conflict_between(ALICE, old, new))
    assert len(storage.conflicts.list(ALICE)) == 1


def test_deleting_a_fact_deletes_its_conflicts_and_flags(storage, make) -> None:
    old = add_fact(storage, make, ALICE, "Thursday")
    new = add_fact(storage, make, ALICE, "Friday")
    lesson = make.learning(ALICE)
    storage.learnings.add(lesson, make.vector())
    storage.conflicts.add(conflict_between(ALICE, old, new))
    storage.conflicts.flag(ALICE, [ReviewFlag(lesson.id, old.id, "cfl-1", "premise changed", 5.0)])
    assert storage.memories.delete(ALICE, old.id)
    assert storage.conflicts.list(ALICE) == []
    assert storage.conflicts.flags(ALICE) == []


def test_review_flags_open_once_per_premise_and_clear(storage, make) -> None:
    premise = add_fact(storage, make, ALICE, "Thursday")
    other = add_fact(storage, make, ALICE, "Friday")
    lesson = make.learning(ALICE)
    storage.learnings.add(lesson, make.vector())
    flag = ReviewFlag(lesson.id, premise.id, None, "premise changed", 10.0)
    assert storage.conflicts.flag(ALICE, [flag, flag]) == 1
    assert storage.conflicts.flag(ALICE, [ReviewFlag(lesson.id, other.id, None, "b", 11.0)]) == 1
    assert storage.conflicts.flagged(ALICE, [lesson.id, premise.id])[lesson.id].premise_id == (
        other.id
    )
    assert storage.conflicts.flagged(BOB, [lesson.id]) == {}
    assert [f.flagged_at for f in storage.conflicts.flags(ALICE)] == [11.0, 10.0]
    assert storage.conflicts.clear_flags(ALICE, lesson.id, 20.0) == 2
    assert storage.conflicts.flagged(ALICE, [lesson.id]) == {}
    assert storage.conflicts.flags(ALICE) == []
    cleared = storage.conflicts.flags(ALICE, include_cleared=True)
    assert {f.cleared_at for f in cleared} == {20.0}
    assert storage.conflicts.flag(ALICE, [flag]) == 1  # a cleared flag can be raised again
    with pytest.raises(ValidationError):
        storage.conflicts.flag(ALICE, [ReviewFlag("nothing", premise.id, None, "x", 1.0)])


def test_conflicts_survive_reopening(backend, make) -> None:
    storage = backend.open()
    old = add_fact(storage, make, ALICE, "Thursday")
    new = add_fact(storage, make, ALICE, "Friday")
    conflict = conflict_between(ALICE, old, new)
    storage.conflicts.add(conflict)
    storage.close()
    reopened = backend.open()
    assert reopened.conflicts.get(ALICE, conflict.id) == conflict


def test_a_failed_transaction_writes_no_conflict(storage, make) -> None:
    old = add_fact(storage, make, ALICE, "Thursday")
    new = add_fact(storage, make, ALICE, "Friday")
    with pytest.raises(RuntimeError), storage.transaction():
        storage.conflicts.add(conflict_between(ALICE, old, new))
        raise RuntimeError("boom")
    assert storage.conflicts.list(ALICE) == []
