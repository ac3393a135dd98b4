"""The lifecycle store: history, duplicates, sources, co-retrieval, marks, vitals, jobs,
sleep runs."""

from __future__ import annotations

import math
import random

import pytest

from ucma.config import ForgettingConfig
from ucma.lifecycle.forgetting import assess, forgetting_bound
from ucma.types import (
    DuplicateAttempt,
    HistoryEntry,
    MemoryKind,
    MemorySource,
    ProcedureStatus,
    RetentionInfo,
    Scope,
    SleepRun,
    Tier,
)

from .conftest import T0

ALICE = Scope("alice", "assistant")
BOB = Scope("bob", "assistant")


def test_history_is_scoped_ordered_and_outlives_the_memory(storage, make) -> None:
    episode = make.episode(ALICE)
    storage.episodes.add([episode], make.vectors(1))
    storage.lifecycle.add_history(
        ALICE,
        [
            HistoryEntry(episode.id, "merged", 10.0, {"similarity": 0.97, "note": "ü"}),
            HistoryEntry(episode.id, "archived", 11.0, {"reason": "retention"}),
        ],
    )
    assert [h.event for h in storage.lifecycle.history(ALICE, episode.id)] == [
        "merged",
        "archived",
    ]
    assert storage.lifecycle.history(ALICE, episode.id)[0].details == {
        "similarity": 0.97,
        "note": "ü",
    }
    assert storage.lifecycle.history(BOB, episode.id) == []
    storage.memories.delete(ALICE, episode.id)
    assert len(storage.lifecycle.history(ALICE, episode.id)) == 2


def test_duplicates_are_logged_newest_first(storage) -> None:
    for i in range(3):
        storage.lifecycle.log_duplicate(
            ALICE, DuplicateAttempt(f"ep-{i}", f"text {i}", 0.96 + i / 100, "user", float(i))
        )
    logged = storage.lifecycle.duplicates(ALICE, limit=2)
    assert [d.existing_id for d in logged] == ["ep-2", "ep-1"]
    assert logged[0].similarity == pytest.approx(0.98)
    assert storage.lifecycle.duplicates(BOB) == []


def test_sources_belong_to_a_live_memory_of_the_scope(storage, make) -> None:
    episode = make.episode(ALICE)
    storage.episodes.add([episode], make.vectors(1))
    storage.lifecycle.add_sources(ALICE, episode.id, [MemorySource("ep-x", "user", 5.0)])
    storage.lifecycle.add_sources(BOB, episode.id, [MemorySource("ep-y", "user", 6.0)])
    storage.lifecycle.add_sources(ALICE, "missing", [MemorySource("ep-z", "user", 7.0)])
    assert storage.lifecycle.sources(ALICE, episode.id) == [MemorySource("ep-x", "user", 5.0)]
    assert storage.lifecycle.sources(BOB, episode.id) == []


def test_co_retrievals_count_pairs_and_are_taken_once(storage) -> None:
    storage.lifecycle.record_co_retrieval(ALICE, ["b", "a", "c"], 1.0)
    storage.lifecycle.record_co_retrieval(ALICE, ["a", "b"], 2.0)
    storage.lifecycle.record_co_retrieval(BOB, ["a", "b"], 2.0)
    assert storage.lifecycle.take_co_retrievals(ALICE) == [
        ("a", "b", 2),
        ("a", "c", 1),
        ("b", "c", 1),
    ]
    assert storage.lifecycle.take_co_retrievals(ALICE) == []
    assert storage.lifecycle.take_co_retrievals(BOB) == [("a", "b", 1)]


def test_taking_co_retrievals_rolls_back_with_the_transaction(storage) -> None:
    storage.lifecycle.record_co_retrieval(ALICE, ["a", "b"], 1.0)
    with pytest.raises(RuntimeError), storage.transaction():
        storage.lifecycle.take_co_retrievals(ALICE)
        raise RuntimeError("interrupted")
    assert storage.lifecycle.take_co_retrievals(ALICE) == [("a", "b", 1)]


def test_unabstracted_episodes_skip_marked_and_archived(storage, make) -> None:
    episodes = [make.episode(ALICE, tier=Tier.SHORT_TERM) for _ in range(4)]
    storage.episodes.add(episodes, make.vectors(4))
    storage.lifecycle.mark_abstracted(ALICE, [episodes[0].id], 1.0)
    storage.lifecycle.mark_abstracted(BOB, [episodes[1].id], 1.0)
    storage.memories.set_archived(ALICE, [episodes[2].id], 1.0)
    found = storage.lifecycle.unabstracted_episodes(ALICE, limit=10)
    assert [e.id for e in found] == [episodes[1].id, episodes[3].id]
    assert [e.id for e in storage.lifecycle.unabstracted_episodes(ALICE, limit=1)] == [
        episodes[1].id
    ]


def test_vitals_describe_every_live_memory(storage, make) -> None:
    episode = make.episode(ALICE, tier=Tier.SHORT_TERM)
    fact = make.fact(ALICE, confidence=0.4)
    procedure = make.procedure(ALICE, status=ProcedureStatus.ACTIVE, success_rate=0.75)
    learning = make.learning(ALICE, confidence=0.7, validated=True)
    archived = make.episode(ALICE)
    storage.episodes.add([episode, archived], make.vectors(2))
    storage.facts.add(fact, make.vector())
    storage.procedures.add(procedure, make.vector())
    storage.learnings.add(learning, make.vector())
    storage.memories.set_archived(ALICE, [archived.id], 3.0)
    storage.retention.put_many(ALICE, [RetentionInfo(fact.id, 9.5, 100.0, 2)])
    storage.graph.set_pagerank(ALICE, {fact.id: 0.25})
    vitals = {v.memory_id: v for v in storage.lifecycle.vitals(ALICE)}
    assert set(vitals) == {episode.id, fact.id, procedure.id, learning.id}
    assert vitals[episode.id].tier == "short_term"
    assert vitals[episode.id].stability is None
    assert vitals[fact.id].kind is MemoryKind.SEMANTIC
    assert (vitals[fact.id].stability, vitals[fact.id].review_count) == (9.5, 2)
    assert vitals[fact.id].pagerank == 0.25
    assert vitals[fact.id].confidence == 0.4
    assert math.isclose(vitals[fact.id].effective_salience, fact.effective_salience)
    assert (vitals[procedure.id].status, vitals[procedure.id].success_rate) == ("active", 0.75)
    assert vitals[learning.id].validated and vitals[learning.id].confidence == 0.7
    assert storage.lifecycle.vitals(BOB) == []


def test_archived_before_lists_old_archives(storage, make) -> None:
    old, new = make.episode(ALICE), make.episode(ALICE)
    storage.episodes.add([old, new], make.vectors(2))
    storage.memories.set_archived(ALICE, [old.id], 10.0)
    storage.memories.set_archived(ALICE, [new.id], 20.0)
    assert storage.lifecycle.archived_before(ALICE, 15.0) == [old.id]
    assert storage.lifecycle.archived_before(ALICE, 20.0) == [old.id, new.id]
    assert storage.lifecycle.archived_before(BOB, 20.0) == []


def test_a_job_lock_is_exclusive_and_a_run_is_recorded(backend) -> None:
    first, second = backend.open(), backend.open()
    assert first.lifecycle.begin_job("daily", "p1", 100.0, due_before=100.0, lease_seconds=60)
    assert not second.lifecycle.begin_job("daily", "p2", 101.0, due_before=101.0, lease_seconds=60)
    first.lifecycle.finish_job("daily", "p1", 110.0, {"archived": 3})
    run = second.lifecycle.job_runs()["daily"]
    assert (run.last_run_at, run.last_summary, run.locked_by) == (110.0, {"archived": 3}, None)
    # Not due again: it ran after the due boundary.
    assert not second.lifecycle.begin_job("daily", "p2", 120.0, due_before=100.0, lease_seconds=60)
    assert second.lifecycle.begin_job("daily", "p2", 120.0, due_before=115.0, lease_seconds=60)
    second.lifecycle.abandon_job("daily", "p2")
    assert second.lifecycle.job_runs()["daily"].last_run_at == 110.0


def test_an_expired_lease_can_be_taken_over(storage) -> None:
    assert storage.lifecycle.begin_job("weekly", "dead", 0.0, due_before=0.0, lease_seconds=10)
    assert not storage.lifecycle.begin_job("weekly", "p2", 5.0, due_before=5.0, lease_seconds=10)
    assert storage.lifecycle.begin_job("weekly", "p2", 11.0, due_before=11.0, lease_seconds=10)
    storage.lifecycle.finish_job("weekly", "dead", 12.0, {})  # a stale owner records nothing
    assert storage.lifecycle.job_runs()["weekly"].last_run_at is None


def test_clean_orphans_removes_dangling_rows(backend, storage, make) -> None:
    episode, other = make.episode(ALICE), make.episode(ALICE)
    storage.episodes.add([episode, other], make.vectors(2))
    storage.lifecycle.record_co_retrieval(ALICE, [episode.id, other.id], 1.0)
    assert storage.lifecycle.clean_orphans()["co_retrievals"] == 0
    storage.memories.delete(ALICE, other.id)
    removed = storage.lifecycle.clean_orphans()
    assert removed["co_retrievals"] == 1
    assert storage.lifecycle.take_co_retrievals(ALICE) == []
    assert storage.memories.get(ALICE, episode.id) is not None


def _run(scope: Scope, started_at: float, **fields) -> SleepRun:
    return SleepRun(scope.user_id, scope.agent_id, "request", started_at, 0.5, **fields)


def test_sleep_runs_are_scoped_newest_first_and_bounded(storage) -> None:
    storage.lifecycle.add_sleep_run(
        _run(
            ALICE,
            10.0,
            phases=("compress", "prune"),
            changes={"compress": {"archived": 2, "threshold": 0.3}, "prune": {"purged": 0}},
        ),
        keep=3,
    )
    storage.lifecycle.add_sleep_run(
        _run(ALICE, 20.0, interrupted=True, error="abstract: ValueError: ü"), keep=3
    )
    storage.lifecycle.add_sleep_run(_run(BOB, 30.0), keep=3)
    newest, oldest = storage.lifecycle.sleep_runs(ALICE, limit=10)
    assert (newest.started_at, newest.interrupted, newest.error) == (
        20.0,
        True,
        "abstract: ValueError: ü",
    )
    assert oldest.phases == ("compress", "prune") and oldest.trigger == "request"
    assert oldest.changes == {"compress": {"archived": 2, "threshold": 0.3}, "prune": {"purged": 0}}
    assert newest.id > oldest.id > 0 and (oldest.user_id, oldest.agent_id) == ("alice", "assistant")
    assert [r.started_at for r in storage.lifecycle.sleep_runs(ALICE, limit=1, offset=1)] == [10.0]
    assert [r.started_at for r in storage.lifecycle.sleep_runs(BOB, limit=10)] == [30.0]
    # Only a scope's newest ``keep`` stay; another scope's are untouched.
    for at in (40.0, 50.0, 60.0):
        storage.lifecycle.add_sleep_run(_run(ALICE, at), keep=3)
    assert [r.started_at for r in storage.lifecycle.sleep_runs(ALICE, limit=10)] == [
        60.0,
        50.0,
        40.0,
    ]
    assert len(storage.lifecycle.sleep_runs(BOB, limit=10)) == 1


def test_the_forgetting_bound_keeps_every_memory_the_policy_forgets(storage, make) -> None:
    """The store's bound admits every memory ``assess`` forgets (at any moment, under
    either rule), and leaves out most of those it keeps."""
    rng = random.Random(18)
    fresh = []
    for n in range(240):
        fields = {
            "temporal_level": rng.choice((1, 2, 3, 4)),
            "base_salience": rng.uniform(-0.1, 1.1),
            "outcome_adjustment": rng.choice((0.0, rng.uniform(-0.3, 0.3))),
        }
        kind = n % 4
        if kind == 0:
            record = make.fact(ALICE, subject=f"s{n}", confidence=rng.uniform(0.01, 1.0), **fields)
            storage.facts.add(record, make.vector())
        elif kind == 1:
            record = make.procedure(
                ALICE, status=rng.choice(list(ProcedureStatus)), success_rate=rng.random(), **fields
            )
            storage.procedures.add(record, make.vector())
        elif kind == 2:
            record = make.learning(
                ALICE, confidence=rng.random(), validated=rng.random() < 0.5, **fields
            )
            storage.learnings.add(record, make.vector())
        else:
            record = make.episode(ALICE, **fields)
            storage.episodes.add([record], make.vectors(1))
        if n % 7:  # some memories never get a retention state
            stability = rng.choice((1e-9, 0.5, 3.0, 40.0, 400.0))
            reviewed = record.created_at + rng.choice((-5.0, 0.0, rng.uniform(0, 90 * 86_400.0)))
            storage.retention.put_many(ALICE, [RetentionInfo(record.id, stability, reviewed, 1)])
        fresh.append(record.id)
    storage.graph.set_pagerank(ALICE, {i: rng.choice((0.0, 0.5)) for i in fresh[::11]})
    every = storage.lifecycle.vitals(ALICE)
    config = ForgettingConfig()
    admitted_in_all = 0
    for days in (0.0, 1.0, 10.0, 60.0, 200.0, 2000.0):
        now = T0 + days * 86_400.0
        for rules in ({"retention"}, {"salience"}, {"retention", "salience"}, set()):
            forgotten = {
                v.memory_id
                for v in every
                if assess(v, now, config, node_count=len(every), rules=rules).forget
            }
            admitted = storage.lifecycle.vitals(ALICE, forgetting_bound(now, config, rules))
            assert forgotten <= {v.memory_id for v in admitted}, (days, rules)
            assert admitted == [v for v in every if v.memory_id in {a.memory_id for a in admitted}]
            admitted_in_all += len(admitted)
            if not rules:
                assert admitted == []
    assert 0 < admitted_in_all < 0.5 * len(every) * 24
    assert storage.lifecycle.vitals(BOB, forgetting_bound(T0 * 2, config)) == []
