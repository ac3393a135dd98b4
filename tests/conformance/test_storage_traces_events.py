"""TraceStore and EventStore, on every backend."""

from __future__ import annotations

import time

import pytest

from ucma.errors import NotFoundError, ValidationError
from ucma.learning.records import DecisionTrace, OutcomeSignal, Retrieval, SalienceUpdate
from ucma.paradigms.predictive_records import Transition
from ucma.types import Bank, Scope

ALICE = Scope("alice", "assistant")
BOB = Scope("bob", "assistant")


def trace(scope: Scope, n: int, scores: dict[str, float], **fields) -> DecisionTrace:
    values = {
        "id": f"trc-{n}",
        "user_id": scope.user_id,
        "agent_id": scope.agent_id,
        "session_id": "ses-1",
        "memory_scores": scores,
        "decision_type": "recommendation",
        "summary": f"decision {n} ✓",
        "confidence": 0.7,
        "alternatives_count": 2,
        "created_at": 1000.0 + n,
        "metadata": {"n": n},
    }
    values.update(fields)
    return DecisionTrace(**values)


def test_trace_round_trip_and_single_outcome(storage) -> None:
    storage.traces.add_retrieval(Retrieval("ret-1", "alice", "assistant", "h", ["m1"], [0.5], 9.0))
    assert storage.traces.get_retrieval(ALICE, "ret-1").memory_ids == ["m1"]
    assert storage.traces.get_retrieval(BOB, "ret-1") is None
    original = trace(ALICE, 1, {"m1": 0.75, "m2": 0.25}, retrieval_id="ret-1")
    storage.traces.add(original)
    assert storage.traces.get(ALICE, "trc-1") == original
    assert storage.traces.get(BOB, "trc-1") is None
    with pytest.raises(ValidationError):
        storage.traces.add(original)
    storage.traces.set_outcome(
        ALICE,
        "trc-1",
        quality=-0.5,
        signal=OutcomeSignal.TASK_FAILED,
        feedback="no",
        observed_at=1100.0,
    )
    done = storage.traces.get(ALICE, "trc-1")
    assert (done.outcome_quality, done.outcome_signal, done.outcome_at) == (
        -0.5,
        OutcomeSignal.TASK_FAILED,
        1100.0,
    )
    with pytest.raises(ValidationError):
        storage.traces.set_outcome(
            ALICE,
            "trc-1",
            quality=1.0,
            signal=OutcomeSignal.USER_ACCEPTED,
            feedback=None,
            observed_at=1200.0,
        )
    with pytest.raises(NotFoundError):
        storage.traces.set_outcome(
            BOB,
            "trc-1",
            quality=1.0,
            signal=OutcomeSignal.USER_ACCEPTED,
            feedback=None,
            observed_at=1200.0,
        )
    assert storage.traces.get(ALICE, "trc-1").outcome_quality == -0.5


def test_trace_listing_and_memory_links(storage) -> None:
    storage.traces.add(trace(ALICE, 1, {"m1": 1.0}))
    storage.traces.add(trace(ALICE, 2, {"m1": 0.5, "m2": 0.5}, decision_type="action"))
    storage.traces.add(trace(BOB, 3, {"m1": 1.0}))
    storage.traces.set_outcome(
        ALICE,
        "trc-2",
        quality=0.8,
        signal=OutcomeSignal.TASK_COMPLETED,
        feedback=None,
        observed_at=2000.0,
    )
    assert [t.id for t in storage.traces.list(ALICE)] == ["trc-2", "trc-1"]
    assert [t.id for t in storage.traces.list(ALICE, observed=True)] == ["trc-2"]
    assert [t.id for t in storage.traces.list(ALICE, observed=False)] == ["trc-1"]
    assert [t.id for t in storage.traces.list(ALICE, decision_type="action")] == ["trc-2"]
    assert [t.id for t in storage.traces.involving(ALICE, ["m2"])] == ["trc-2"]
    assert [t.id for t in storage.traces.involving(ALICE, ["m1"])] == ["trc-1", "trc-2"]


def test_salience_updates_round_trip(storage) -> None:
    storage.traces.add(trace(ALICE, 1, {"m1": 1.0}))
    update = SalienceUpdate("m1", "trc-1", 1.0, 0.08, 0.08, 0.0, 0.08, "positive_outcome", 5.0)
    storage.traces.add_updates(ALICE, [update])
    assert storage.traces.updates(ALICE) == [update]
    assert storage.traces.updates(ALICE, memory_id="m1") == [update]
    assert storage.traces.updates(ALICE, trace_id="trc-x") == []
    assert storage.traces.updates(BOB) == []


def test_events_are_numbered_per_scope(storage) -> None:
    a1 = storage.events.append(ALICE, "x.one", {"k": "ü"}, 1.0)
    b1 = storage.events.append(BOB, "x.one", {}, 2.0)
    a2 = storage.events.append(ALICE, "x.two", {"n": [1, 2]}, 3.0)
    assert (a1.seq, b1.seq, a2.seq) == (1, 1, 2)
    assert a1.position < b1.position < a2.position
    assert storage.events.list(ALICE) == [a1, a2]
    assert storage.events.list(ALICE, after_seq=1) == [a2]
    assert storage.events.list(ALICE, types=["x.two"]) == [a2]
    assert storage.events.list(ALICE, limit=1) == [a1]
    assert storage.events.after(a1.position, 10) == [b1, a2]


def test_latest_names_the_newest_event_of_each_type(storage) -> None:
    assert storage.events.latest(ALICE, ["x.one", "x.two"]) == (None, None)
    assert storage.events.latest(ALICE, []) == ()
    a1 = storage.events.append(ALICE, "x.one", {}, 1.0)
    storage.events.append(BOB, "x.two", {}, 2.0)
    assert storage.events.latest(ALICE, ["x.one", "x.two"]) == (a1.id, None)
    a2 = storage.events.append(ALICE, "x.one", {}, 3.0)
    a3 = storage.events.append(ALICE, "x.two", {}, 4.0)
    assert storage.events.latest(ALICE, ["x.two", "x.one"]) == (a3.id, a2.id)


def test_memory_lifecycle_is_logged_by_the_backend(storage, make) -> None:
    episode = make.episode(ALICE)
    storage.episodes.add([episode], make.vectors(1))
    storage.memories.set_archived(ALICE, [episode.id], 5000.0)
    storage.memories.set_archived(ALICE, [episode.id], None)
    storage.memories.delete(ALICE, episode.id)
    events = storage.events.list(ALICE)
    assert [e.type for e in events] == [
        "memory.stored",
        "memory.archived",
        "memory.restored",
        "memory.deleted",
    ]
    stored = events[0].payload
    assert stored["memory_id"] == episode.id
    assert stored["outcome_adjustment"] == episode.outcome_adjustment
    assert stored["temporal_level"] == episode.temporal_level
    assert [e.seq for e in events] == [1, 2, 3, 4]


def test_events_roll_back_with_their_transaction(storage, make) -> None:
    with pytest.raises(RuntimeError), storage.transaction():
        storage.events.append(ALICE, "x.lost", {}, 1.0)
        storage.episodes.add([make.episode(ALICE)], make.vectors(1))
        raise RuntimeError("boom")
    assert storage.events.list(ALICE) == []
    assert storage.events.append(ALICE, "x.kept", {}, 2.0).seq == 1


def test_cursors_only_move_forward(storage, backend) -> None:
    assert storage.events.cursor("pub") == 0
    storage.events.set_cursor("pub", 7, 1.0)
    storage.events.set_cursor("pub", 3, 2.0)
    assert storage.events.cursor("pub") == 7
    assert backend.open().events.cursor("pub") == 7


def test_the_backend_appends_exactly_the_documented_lifecycle_events(storage, make) -> None:
    """What ``EventStore``'s docstring promises, write by write (a second backend
    must produce the same log)."""
    first, second = make.episode(ALICE), make.episode(ALICE)
    storage.episodes.add([first, second], make.vectors(2))
    fact, procedure, learning = make.fact(ALICE), make.procedure(ALICE), make.learning(ALICE)
    storage.facts.add(fact, make.vector())
    storage.procedures.add(procedure, make.vector())
    storage.learnings.add(learning, make.vector())
    stored = storage.events.list(ALICE)
    records = [first, second, fact, procedure, learning]
    assert [(e.type, e.occurred_at) for e in stored] == [
        ("memory.stored", r.created_at) for r in records
    ]
    # Salience values as SQLite's JSON writes reals: to 15 significant digits.
    for event, record in zip(stored, records, strict=True):
        assert event.payload == {
            "memory_id": record.id,
            "kind": record.kind.value,
            "temporal_level": record.temporal_level,
            "base_salience": pytest.approx(record.base_salience, rel=1e-14),
            "outcome_adjustment": pytest.approx(record.outcome_adjustment, rel=1e-14),
            "content_chars": len(record.content),
        }

    # Changes of content, salience, bank and access append nothing.
    first.content = "a new text for the first episode"
    storage.episodes.update(first)
    storage.memories.set_salience(ALICE, fact.id, base_salience=0.9, outcome_adjustment=0.1)
    storage.memories.set_bank(ALICE, [fact.id], Bank.OPINION)
    storage.memories.touch(ALICE, [first.id, fact.id], make.t0 + 100)
    assert len(storage.events.list(ALICE)) == len(records)

    storage.memories.set_archived(ALICE, [first.id, fact.id], 5000.0)
    storage.memories.set_archived(ALICE, [first.id], 5000.0)  # unchanged: no event
    storage.memories.set_archived(ALICE, [first.id], 6000.0)
    before = time.time()
    storage.memories.set_archived(ALICE, [first.id], None)
    storage.memories.delete(ALICE, second.id)
    after = time.time()
    events = storage.events.list(ALICE, after_seq=len(records))
    assert [(e.type, e.payload) for e in events] == [
        ("memory.archived", {"memory_id": first.id, "kind": "episodic"}),
        ("memory.archived", {"memory_id": fact.id, "kind": "semantic"}),
        ("memory.archived", {"memory_id": first.id, "kind": "episodic"}),
        ("memory.restored", {"memory_id": first.id, "kind": "episodic"}),
        ("memory.deleted", {"memory_id": second.id, "kind": "episodic"}),
    ]
    assert [e.occurred_at for e in events[:3]] == [5000.0, 5000.0, 6000.0]
    assert all(before - 1 <= e.occurred_at <= after + 1 for e in events[3:])
    assert [e.seq for e in storage.events.list(ALICE)] == list(range(1, len(records) + 6))
    assert storage.events.list(BOB) == []


def test_erasures_redact_log_and_remove_events(storage, make) -> None:
    greta = make.episode(ALICE, content="Greta Lindqvist flies to Oslo")
    storage.episodes.add([greta, make.episode(ALICE)], make.vectors(2))
    storage.events.append(ALICE, "note.added", {"text": "call Greta Lindqvist"}, 1.0)
    kept = storage.events.append(ALICE, "note.added", {"text": "water the plants"}, 2.0)
    storage.predictive.put_transitions(
        [
            Transition(
                id="tr-greta",
                user_id=ALICE.user_id,
                agent_id=ALICE.agent_id,
                action="email Greta Lindqvist",
                context={},
                outcome="reply",
                confirmations=1,
                errors=0,
                created_at=1.0,
                updated_at=1.0,
            )
        ]
    )
    storage.episodes.add([make.episode(BOB, content="Greta Lindqvist")], make.vectors(1))
    count = len(storage.events.list(ALICE))

    storage.erasure.erase_matching(ALICE, lambda text: "Greta" in text, [], 9.0)
    events = storage.events.list(ALICE)
    new = events[count:]
    assert sorted((e.type, tuple(e.payload.items())) for e in new) == [
        ("memory.deleted", (("memory_id", greta.id), ("kind", "episodic"))),
        ("world.transition_erased", (("transition_id", "tr-greta"),)),
    ]
    redacted = [e for e in events[:count] if e.payload == {"erased": True}]
    assert [e.type for e in redacted] == ["note.added"]
    assert storage.events.list(ALICE, types=["note.added"])[1] == kept
    assert [e.seq for e in events] == list(range(1, len(events) + 1))

    storage.erasure.erase_scope(ALICE, 10.0)
    assert storage.events.list(ALICE) == []
    assert [e.type for e in storage.events.list(BOB)] == ["memory.stored"]
