"""The learning loop end to end on a real SQLite file with the real embedder."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from ucma.engine import AsyncMemory
from ucma.errors import (
    NotFoundError,
    OutcomeAlreadyRecorded,
    OutcomeWindowClosed,
    ValidationError,
)
from ucma.types import Scope

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

DAY = 86_400.0


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def clocked(db_path: Path, local_embedder):
    clock = Clock()
    async with AsyncMemory(db_path, user_id="alice", embedder=local_embedder, clock=clock) as mem:
        yield mem, clock


async def redis_memory(mem: AsyncMemory) -> str:
    """Seed 003's example memory: base salience 0.6, situational (level 2)."""
    lesson = await mem.learn(
        "Redis works well for the caching layer of this project", impact_score=0.6
    )
    assert lesson.temporal_level == 2
    assert lesson.base_salience == pytest.approx(0.6)
    return lesson.id


async def test_seed_worked_example_end_to_end(memory: AsyncMemory) -> None:
    redis = await redis_memory(memory)
    other = (await memory.observe("We discussed the caching layer on Monday")).id
    result = await memory.recall("caching layer")
    assert result.retrieval_id is not None
    trace = await memory.decide(
        [redis, other],
        [0.8, 0.2],
        decision_type="recommendation",
        summary="Suggested Redis for new caching layer",
        confidence=0.8,
        alternatives_count=2,
        retrieval_id=result.retrieval_id,
    )
    assert trace.memory_scores == pytest.approx({redis: 0.8, other: 0.2})
    report = await memory.outcome(trace.id, 0.8, "user_accepted", "worked well")
    update = next(u for u in report.updates if u.memory_id == redis)
    assert update.delta == pytest.approx(0.032)
    assert update.reason == "positive_outcome"
    stored = await memory.get(redis)
    assert stored.outcome_adjustment == pytest.approx(0.032)
    assert stored.effective_salience == pytest.approx(0.632)
    # The lesson was part of the decision: applied once and validated (seed 000).
    assert report.learnings == [redis]
    assert stored.application_count == 1
    assert stored.validated is True
    assert stored.confidence == pytest.approx(0.6)
    assert (await memory.trace(trace.id)).outcome_quality == pytest.approx(0.8)
    assert [u.delta for u in await memory.salience_history(redis)] == pytest.approx([0.032])


async def test_outcome_after_the_window_is_refused(clocked) -> None:
    mem, clock = clocked
    redis = await redis_memory(mem)
    late = await mem.decide([redis], summary="Suggested Redis")
    on_time = await mem.decide([redis], summary="Suggested Redis again")
    clock.now += 7 * DAY - 60
    await mem.outcome(on_time.id, 0.5, "task_completed")
    clock.now += 120
    with pytest.raises(OutcomeWindowClosed, match="7 days"):
        await mem.outcome(late.id, 0.8, "task_completed")
    assert (await mem.trace(late.id)).outcome_observed is False
    assert len(await mem.salience_history(redis)) == 1


async def test_second_outcome_is_refused_and_changes_nothing(memory: AsyncMemory) -> None:
    redis = await redis_memory(memory)
    trace = await memory.decide([redis], summary="Suggested Redis")
    await memory.outcome(trace.id, -0.5, "user_rejected")
    before = (await memory.get(redis)).outcome_adjustment
    with pytest.raises(OutcomeAlreadyRecorded):
        await memory.outcome(trace.id, 1.0, "user_accepted")
    assert (await memory.get(redis)).outcome_adjustment == before
    assert before == pytest.approx(-0.5 * 1.0 * 0.1 * 0.5)


async def test_bad_decisions_and_outcomes_are_refused(memory: AsyncMemory) -> None:
    redis = await redis_memory(memory)
    with pytest.raises(NotFoundError) as missing:
        await memory.decide([redis, "ep_missing"], summary="x")
    assert missing.value.memory_id == "ep_missing"
    with pytest.raises(NotFoundError):
        await memory.decide([redis], summary="x", retrieval_id="ret_unknown")
    with pytest.raises(ValidationError):
        await memory.decide([redis], [0.5, 0.5], summary="x")
    with pytest.raises(ValidationError):
        await memory.decide([], summary="x")
    with pytest.raises(NotFoundError):
        await memory.decide([redis], summary="x", user_id="bob")
    trace = await memory.decide([redis], summary="x")
    for quality, signal in ((1.5, "user_accepted"), (0.5, "user_happy"), (True, "task_failed")):
        with pytest.raises(ValidationError):
            await memory.outcome(trace.id, quality, signal)
    with pytest.raises(NotFoundError):
        await memory.outcome("trc_unknown", 0.5, "task_completed")
    with pytest.raises(NotFoundError):
        await memory.outcome(trace.id, 0.5, "task_completed", user_id="bob")


async def test_procedure_statistics_follow_outcomes(memory: AsyncMemory) -> None:
    proc = await memory.add_procedure("Deploy", "Run the canary release first")
    for quality in (0.8, -0.8, 1.0):
        trace = await memory.decide([proc.id], summary="deployed with the canary")
        report = await memory.outcome(trace.id, quality, "task_completed")
        assert report.procedures == [proc.id]
    stored = await memory.get(proc.id)
    assert stored.execution_count == 3
    assert stored.success_rate == pytest.approx(2 / 3)
    # Procedures are level 2: three updates of +-0.05 x quality.
    assert stored.outcome_adjustment == pytest.approx(0.05 * (0.8 - 0.8 + 1.0))


async def test_replay_equals_live_state(memory: AsyncMemory) -> None:
    ids = [
        (await memory.observe(f"Advice {i}: restart the cache server on failure {i}")).id
        for i in range(4)
    ]
    lesson = await redis_memory(memory)
    for n in range(12):
        chosen = [ids[n % 4], lesson] if n % 3 else [ids[n % 4]]
        trace = await memory.decide(chosen, summary=f"decision {n}")
        await memory.outcome(trace.id, 0.9 if n % 2 else -0.7, "agent_feedback")
    await memory.delete(ids[0])
    await memory.assert_fact("order 7", "status", "shipped")
    result = await memory.assert_fact_detailed("order 7", "status", "delivered")
    for conflict in result.conflicts:
        if conflict.disambiguation_required:
            await memory.resolve_conflict(conflict.id, "delivered")
    projection = await memory.replay()
    assert projection.matches_live, projection.mismatches
    assert ids[0] not in projection.adjustments
    assert projection.adjustments[ids[1]] != 0.0
    types = [e.type for e in await memory.events()]
    for expected in (
        "memory.stored",
        "decision.tracked",
        "outcome.observed",
        "salience.adjusted",
        "memory.deleted",
        "conflict.detected",
        "conflict.resolved",
        "fact.superseded",
    ):
        assert expected in types


async def test_events_are_ordered_per_scope_and_immutable(memory: AsyncMemory, db_path) -> None:
    tea = await memory.observe("Alice likes green tea")
    await memory.observe("Bob likes coffee", user_id="bob")
    await memory.recall("green tea")
    walk = await memory.observe("Alice walks to work")
    alice = await memory.events()
    bob = await memory.events(user_id="bob")
    assert [e.seq for e in alice] == list(range(1, len(alice) + 1))
    assert [e.seq for e in bob] == list(range(1, len(bob) + 1))
    assert {e.user_id for e in alice} == {"alice"} and {e.user_id for e in bob} == {"bob"}
    # observe stores the episode and, in the same transaction, the fact it asserts and
    # the opinion a stated preference forms.
    assert [(e.type, e.payload.get("kind")) for e in alice] == [
        ("memory.stored", "episodic"),
        ("memory.stored", "semantic"),
        ("opinion.formed", None),
        ("memory.retrieved", None),
        ("memory.stored", "episodic"),  # "walks to work" asserts no fact
    ]
    assert [e.payload.get("memory_id") for e in alice[::4]] == [tea.id, walk.id]
    assert alice[2].payload["opinion"]["memory_id"] == tea.id
    fact = await memory.get(alice[1].payload["memory_id"])
    assert fact.content == "Alice likes green tea" and fact.source_episode_ids == [tea.id]
    assert [(e.type, e.payload.get("kind")) for e in bob] == [
        ("memory.stored", "episodic"),
        ("memory.stored", "semantic"),
        ("opinion.formed", None),
    ]
    assert [e.seq for e in await memory.events(after_seq=4)] == [5]
    with closing(sqlite3.connect(db_path)) as conn:
        with pytest.raises(sqlite3.DatabaseError, match="immutable"):
            conn.execute("UPDATE events SET type = 'x'")
        with pytest.raises(sqlite3.DatabaseError, match="immutable"):
            conn.execute("DELETE FROM events")


async def test_event_backlog_and_cursor(memory: AsyncMemory) -> None:
    await memory.observe("first memory of alice")
    await memory.observe("first memory of bob", user_id="bob")
    backlog = await memory.event_backlog("test")
    assert [e.position for e in backlog] == sorted(e.position for e in backlog)
    assert {e.user_id for e in backlog} == {"alice", "bob"}
    await memory.acknowledge_events("test", backlog[0].position)
    assert [e.id for e in await memory.event_backlog("test")] == [e.id for e in backlog[1:]]
    await memory.acknowledge_events("test", 0)  # never moves backwards
    assert len(await memory.event_backlog("test")) == len(backlog) - 1


async def test_causal_analysis_and_patterns(memory: AsyncMemory) -> None:
    good = [
        (await memory.observe(f"Pin the test database snapshot to fix flaky tests, case {i}")).id
        for i in range(2)
    ]
    bad = (await memory.observe("Rerun the failing tests until they pass")).id
    traces = []
    for n in range(4):
        t = await memory.decide([good[n % 2], bad], [0.9, 0.1], summary="fixed flaky tests")
        await memory.outcome(t.id, 0.9, "task_completed")
        traces.append(t)
    for _ in range(3):
        t = await memory.decide([bad], summary="fixed flaky tests")
        await memory.outcome(t.id, -0.8, "task_failed")
        traces.append(t)
    influence = {m.memory_id: m for m in await memory.memory_influence(min_decisions=2)}
    assert influence[good[0]].verdict == "helpful"
    assert influence[bad].verdict == "misleading"
    assert influence[bad].decisions == 7
    report = await memory.counterfactuals(traces[-1].id)
    assert report.alternatives
    assert report.alternatives[0].outcome_difference == pytest.approx(1.7)
    assert set(report.missing) <= set(good) and report.missing
    with pytest.raises(ValidationError):
        await memory.counterfactuals((await memory.decide([bad], summary="open")).id)
    memory.config = memory.config.__class__(
        patterns=memory.config.patterns.__class__(min_decisions=2)
    )
    patterns = await memory.extract_patterns()
    assert len(patterns) == 1
    assert sorted(patterns[0].memory_ids) == sorted(good)
    assert patterns[0].mean_quality == pytest.approx(0.9)
    assert "snapshot" in patterns[0].terms


async def test_share_patterns_refuses_below_thresholds(memory: AsyncMemory) -> None:
    tip = (await memory.observe("Pin the test database snapshot to fix flaky tests")).id
    for _ in range(3):
        t = await memory.decide([tip], summary="fixed flaky tests")
        await memory.outcome(t.id, 0.9, "task_completed")
    report = await memory.share_patterns(seed=1)
    assert report.shared == []
    assert report.refused == ["pattern seen in 3 decisions; sharing needs at least 100 instances"]


def test_scope_type_is_reused() -> None:
    assert Scope("alice").agent_id == "default"
