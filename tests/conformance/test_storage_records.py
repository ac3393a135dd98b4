"""Round trips, catalog operations and updates of every kind of record."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ucma.errors import NotFoundError, UCMAError, ValidationError
from ucma.types import (
    Episode,
    Fact,
    Learning,
    LearningType,
    MemoryKind,
    Procedure,
    ProcedureStatus,
    ProcedureStep,
    Provenance,
    Scope,
    Tier,
)

ALICE = Scope("alice", "assistant")


def add_one_of_each(storage, make, scope=ALICE):
    episode = make.episode(scope)
    fact = make.fact(scope)
    procedure = make.procedure(scope)
    learning = make.learning(scope)
    storage.episodes.add([episode], make.vectors(1))
    storage.facts.add(fact, make.vector())
    storage.procedures.add(procedure, make.vector())
    storage.learnings.add(learning, make.vector())
    return episode, fact, procedure, learning


def test_every_kind_round_trips_every_field(storage, make) -> None:
    records = add_one_of_each(storage, make)
    typed_get = [
        storage.episodes.get,
        storage.facts.get,
        storage.procedures.get,
        storage.learnings.get,
    ]
    for record, get in zip(records, typed_get, strict=True):
        assert get(ALICE, record.id) == record
        assert storage.memories.get(ALICE, record.id) == record
        assert type(storage.memories.get(ALICE, record.id)) is type(record)


def test_enums_floats_and_json_come_back_typed(storage, make) -> None:
    episode, fact, procedure, learning = add_one_of_each(storage, make)
    got = storage.episodes.get(ALICE, episode.id)
    assert isinstance(got.provenance, Provenance) and got.provenance is Provenance.USER_STATED
    assert got.tier is Tier.MEDIUM_TERM
    assert got.base_salience == episode.base_salience  # exact, not approx
    assert got.metadata == episode.metadata and got.metadata["ratio"] == 1 / 3
    assert got.participants == ["user", "assistant", "Zoë"]
    assert storage.procedures.get(ALICE, procedure.id).status is ProcedureStatus.ACTIVE
    steps = storage.procedures.get(ALICE, procedure.id).steps
    assert [type(s) for s in steps] == [ProcedureStep, ProcedureStep]
    assert steps[0].action_spec == {"tool": "orders.get", "args": {"id": "{order_id}"}}
    got_learning = storage.learnings.get(ALICE, learning.id)
    assert got_learning.learning_type is LearningType.FAILURE_ANALYSIS
    assert got_learning.validated is True
    assert storage.facts.get(ALICE, fact.id).valid_until == fact.valid_until


def test_defaults_and_nones_round_trip(storage, make) -> None:
    episode = Episode(
        id="bare",
        user_id="alice",
        agent_id="assistant",
        content="x",
        created_at=1.0,
        session_id="s",
        timestamp=2.0,
    )
    storage.episodes.add([episode], make.vectors(1))
    assert storage.episodes.get(ALICE, "bare") == episode
    procedure = make.procedure(ALICE, steps=[], trigger_tags=[], last_used=None, metadata={})
    storage.procedures.add(procedure, make.vector())
    assert storage.procedures.get(ALICE, procedure.id) == procedure


def test_returned_records_are_fresh_copies(storage, make) -> None:
    _, _, procedure, _ = add_one_of_each(storage, make)
    got = storage.procedures.get(ALICE, procedure.id)
    got.steps.append(ProcedureStep(description="extra"))
    got.metadata["n"] = -1
    got.trigger_tags.clear()
    assert storage.procedures.get(ALICE, procedure.id) == procedure
    assert storage.procedures.get(ALICE, procedure.id) is not storage.procedures.get(
        ALICE, procedure.id
    )


def test_typed_get_of_another_kind_is_none(storage, make) -> None:
    episode, fact, _, _ = add_one_of_each(storage, make)
    assert storage.facts.get(ALICE, episode.id) is None
    assert storage.episodes.get(ALICE, fact.id) is None
    assert storage.memories.get(ALICE, "nope") is None


def test_get_many_is_typed_and_skips_unknown_ids(storage, make) -> None:
    records = add_one_of_each(storage, make)
    ids = [r.id for r in records]
    got = storage.memories.get_many(ALICE, [ids[3], "missing", ids[0], ids[1], ids[2], ids[0]])
    assert set(got) == set(ids)
    for record in records:
        assert got[record.id] == record and type(got[record.id]) is type(record)
    assert storage.memories.get_many(ALICE, []) == {}


def test_list_orders_by_creation_then_id_and_filters(storage, make) -> None:
    same_time = make.t0 + 5000.0
    late = make.episode(ALICE, created_at=same_time + 1)
    b = make.episode(ALICE, id="b-same", created_at=same_time)
    a = make.episode(ALICE, id="a-same", created_at=same_time)
    early = make.fact(ALICE, created_at=1.0)
    archived = make.learning(ALICE, archived_at=make.t0)
    storage.episodes.add([late, b, a], make.vectors(3))
    storage.facts.add(early, make.vector())
    storage.learnings.add(archived, make.vector())
    assert [r.id for r in storage.memories.list(ALICE)] == [early.id, "a-same", "b-same", late.id]
    assert [r.id for r in storage.memories.list(ALICE, kind=MemoryKind.EPISODIC)] == [
        "a-same",
        "b-same",
        late.id,
    ]
    assert [r.id for r in storage.memories.list(ALICE, limit=2, offset=1)] == ["a-same", "b-same"]
    assert storage.memories.list(ALICE, limit=0) == []
    with_archived = storage.memories.list(ALICE, include_archived=True)
    assert archived.id in [r.id for r in with_archived]
    assert storage.memories.list(ALICE, kind=MemoryKind.LEARNING) == []
    assert storage.memories.list(ALICE, kind=MemoryKind.LEARNING, include_archived=True) == [
        archived
    ]
    # In the order the store received them (an export's order), paged the same way.
    received = [late.id, "b-same", "a-same", early.id, archived.id]
    assert [
        r.id for r in storage.memories.list(ALICE, include_archived=True, in_insertion_order=True)
    ] == received
    assert [
        r.id for r in storage.memories.list(ALICE, limit=2, offset=1, in_insertion_order=True)
    ] == received[1:3]


def test_count_has_every_kind(storage, make) -> None:
    assert storage.memories.count(ALICE) == dict.fromkeys(MemoryKind, 0)
    storage.episodes.add([make.episode(ALICE) for _ in range(3)], make.vectors(3))
    storage.facts.add(make.fact(ALICE, archived_at=make.t0), make.vector())
    assert storage.memories.count(ALICE) == {
        MemoryKind.EPISODIC: 3,
        MemoryKind.SEMANTIC: 0,
        MemoryKind.PROCEDURAL: 0,
        MemoryKind.LEARNING: 0,
    }
    assert storage.memories.count(ALICE, include_archived=True)[MemoryKind.SEMANTIC] == 1


def test_touch_counts_one_access_per_id(storage, make) -> None:
    episode, fact, _, _ = add_one_of_each(storage, make)
    storage.memories.touch(ALICE, [episode.id, fact.id, episode.id, "unknown"], now=123.5)
    got = storage.memories.get(ALICE, episode.id)
    assert got.access_count == episode.access_count + 1
    assert got.last_accessed == 123.5
    assert storage.memories.get(ALICE, fact.id).access_count == fact.access_count + 1
    storage.memories.touch(ALICE, [], now=1.0)


def test_set_salience_overwrites_the_pair(storage, make) -> None:
    _, fact, _, _ = add_one_of_each(storage, make)
    storage.memories.set_salience(ALICE, fact.id, base_salience=0.9, outcome_adjustment=0.05)
    got = storage.facts.get(ALICE, fact.id)
    assert (got.base_salience, got.outcome_adjustment) == (0.9, 0.05)
    with pytest.raises(NotFoundError) as raised:
        storage.memories.set_salience(ALICE, "unknown", base_salience=0.1, outcome_adjustment=0)
    assert raised.value.memory_id == "unknown"


def test_archive_and_restore(storage, make) -> None:
    episode, fact, _, _ = add_one_of_each(storage, make)
    storage.memories.set_archived(ALICE, [episode.id, fact.id, "unknown"], 777.0)
    assert storage.memories.get(ALICE, episode.id).archived_at == 777.0  # get finds archived
    assert storage.memories.count(ALICE)[MemoryKind.EPISODIC] == 0
    storage.memories.set_archived(ALICE, [episode.id], None)
    assert storage.memories.get(ALICE, episode.id).archived_at is None
    assert storage.memories.count(ALICE)[MemoryKind.EPISODIC] == 1
    assert storage.memories.get(ALICE, fact.id).archived_at == 777.0


def test_scopes_lists_every_scope_with_records(storage, make) -> None:
    assert storage.memories.scopes() == []
    bob = Scope("bob", "assistant")
    planner = Scope("alice", "planner")
    storage.episodes.add([make.episode(ALICE), make.episode(bob)], make.vectors(2))
    storage.facts.add(make.fact(planner), make.vector())
    assert sorted(storage.memories.scopes(), key=lambda s: (s.user_id, s.agent_id)) == [
        ALICE,
        planner,
        bob,
    ]


def test_update_episode_persists_changes_and_reindexes(storage, make) -> None:
    episode = make.episode(ALICE, content="the invoice was late")
    storage.episodes.add([episode], make.vectors(1))
    changed = dataclasses.replace(
        episode,
        content="the parcel arrived damaged",
        tier=Tier.SHORT_TERM,
        summary=None,
        tags=["shipping"],
        participants=["user"],
        metadata={"v": 2},
        base_salience=0.99,
        outcome_adjustment=0.01,
        temporal_level=2,
        updated_at=make.t0 + 9999,
        timestamp=episode.timestamp + 7200,
    )
    storage.episodes.update(changed)
    got = storage.episodes.get(ALICE, episode.id)
    assert got == dataclasses.replace(
        changed, access_count=episode.access_count, last_accessed=episode.last_accessed
    )
    assert storage.memories.keyword_search(ALICE, ["invoice"], 5) == []
    assert [i for i, _ in storage.memories.keyword_search(ALICE, ["parcel"], 5)] == [episode.id]
    assert storage.episodes.time_range(ALICE, changed.timestamp, changed.timestamp) == [got]


def test_update_fact_procedure_learning(storage, make) -> None:
    _, fact, procedure, learning = add_one_of_each(storage, make)
    fact2 = dataclasses.replace(
        fact,
        confidence=0.95,
        source_episode_ids=["ep-3"],
        reinforcement_count=3,
        last_verified=5.0,
        valid_until=None,
    )
    storage.facts.update(fact2)
    assert storage.facts.get(ALICE, fact.id) == fact2

    procedure2 = dataclasses.replace(
        procedure,
        status=ProcedureStatus.DEPRECATED,
        success_rate=0.1,
        execution_count=40,
        steps=[ProcedureStep(description="only step", action_spec={"x": [1]})],
        trigger_tags=["returns"],
    )
    storage.procedures.update(procedure2)
    assert storage.procedures.get(ALICE, procedure.id) == procedure2
    procedure3 = dataclasses.replace(procedure2, status=ProcedureStatus.ACTIVE)
    storage.procedures.update(procedure3)
    assert storage.procedures.find_by_tags(ALICE, ["refund"]) == []
    assert storage.procedures.find_by_tags(ALICE, ["RETURNS"]) == [procedure3]

    learning2 = dataclasses.replace(
        learning, confidence=0.99, validated=False, application_count=9, applicability=["travel"]
    )
    storage.learnings.update(learning2)
    assert storage.learnings.get(ALICE, learning.id) == learning2
    assert storage.learnings.relevant(ALICE, ["calendar"]) == []
    assert storage.learnings.relevant(ALICE, ["Travel"]) == [learning2]


def test_update_of_unknown_record_raises_not_found(storage, make) -> None:
    with pytest.raises(NotFoundError):
        storage.episodes.update(make.episode(ALICE))
    with pytest.raises(NotFoundError):
        storage.facts.update(make.fact(ALICE))
    with pytest.raises(NotFoundError):
        storage.procedures.update(make.procedure(ALICE))
    with pytest.raises(NotFoundError):
        storage.learnings.update(make.learning(ALICE))
    episode = make.episode(ALICE)
    storage.episodes.add([episode], make.vectors(1))
    impostor = make.learning(ALICE, id=episode.id)  # same id, other kind
    with pytest.raises(NotFoundError):
        storage.learnings.update(impostor)


def test_bad_vectors_are_rejected_and_nothing_is_written(storage, make) -> None:
    episodes = [make.episode(ALICE), make.episode(ALICE)]
    with pytest.raises(ValidationError):
        storage.episodes.add(episodes, make.vectors(1))
    with pytest.raises(ValidationError):
        storage.episodes.add(episodes, np.ones((2, make.dimension + 1), dtype=np.float32))
    with pytest.raises(ValidationError):
        storage.facts.add(make.fact(ALICE), np.full(make.dimension, np.nan))
    assert storage.memories.count(ALICE, include_archived=True) == dict.fromkeys(MemoryKind, 0)
    storage.episodes.add([], make.vectors(0))


def test_duplicate_id_fails_and_rolls_back_the_whole_batch(storage, make) -> None:
    first = make.episode(ALICE)
    storage.episodes.add([first], make.vectors(1))
    batch = [make.episode(ALICE), make.episode(ALICE, id=first.id)]
    with pytest.raises(ValidationError, match="already in use"):
        storage.episodes.add(batch, make.vectors(2))
    assert storage.memories.get(ALICE, batch[0].id) is None
    assert storage.memories.count(ALICE)[MemoryKind.EPISODIC] == 1


def test_wrong_record_type_is_a_validation_error(storage, make) -> None:
    with pytest.raises(ValidationError):
        storage.episodes.add([make.fact(ALICE)], make.vectors(1))  # type: ignore[list-item]
    with pytest.raises(ValidationError):
        storage.facts.add(make.learning(ALICE), make.vector())  # type: ignore[arg-type]
    with pytest.raises(UCMAError):
        storage.episodes.add([make.episode(ALICE, tier="eternal")], make.vectors(1))


def test_records_are_the_declared_classes(storage, make) -> None:
    records = add_one_of_each(storage, make)
    classes = {type(r) for r in storage.memories.list(ALICE)}
    assert classes == {Episode, Fact, Procedure, Learning}
    assert {r.kind for r in records} == set(MemoryKind)


def test_nan_and_infinite_timestamps_are_rejected(storage, make) -> None:
    nan = float("nan")
    with pytest.raises(ValidationError):
        storage.episodes.add([make.episode(ALICE, timestamp=float("inf"))], make.vectors(1))
    with pytest.raises(ValidationError):
        storage.episodes.add([make.episode(ALICE, updated_at=nan)], make.vectors(1))
    with pytest.raises(ValidationError):
        storage.facts.add(make.fact(ALICE, confidence=nan), make.vector())
    assert storage.memories.count(ALICE, include_archived=True) == dict.fromkeys(MemoryKind, 0)
    episode = make.episode(ALICE)
    storage.episodes.add([episode], make.vectors(1))
    with pytest.raises(ValidationError):
        storage.memories.set_archived(ALICE, [episode.id], nan)
    with pytest.raises(ValidationError):
        storage.memories.set_salience(ALICE, episode.id, base_salience=nan, outcome_adjustment=0)
    assert storage.memories.get(ALICE, episode.id) == episode
    fact = make.fact(ALICE, valid_until=float("inf"))  # open-ended validity is fine
    storage.facts.add(fact, make.vector())
    assert storage.facts.get(ALICE, fact.id) == fact
