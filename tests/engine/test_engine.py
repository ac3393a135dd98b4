"""AsyncMemory end to end on a real SQLite file with the real packaged model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import ValidationError
from ucma.types import Episode, Fact, Learning, MemoryKind, Procedure, ProcedureStatus, Tier

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

DAY = 86_400.0


async def test_observe_stores_an_episode_with_scope_session_and_salience(memory: AsyncMemory):
    obs = await memory.observe(
        "The deploy failed with a critical error in the payment service.",
        source="tool_result",
        metadata={"run": 7},
        tags=["deploy"],
    )
    assert obs.stored and obs.id.startswith("ep_")
    episode = await memory.get(obs.id)
    assert isinstance(episode, Episode)
    assert (episode.user_id, episode.agent_id) == ("alice", "default")
    assert episode.session_id == memory.session_id()
    assert episode.tier is Tier.SHORT_TERM
    assert episode.metadata == {"run": 7} and episode.tags == ["deploy"]
    assert episode.base_salience == pytest.approx(obs.importance)
    assert episode.participants == ["tool_result"]


async def test_observe_below_importance_threshold_is_not_stored(db_path: Path, local_embedder):
    from ucma.config import EpisodicConfig, UCMAConfig

    config = UCMAConfig(episodic=EpisodicConfig(min_importance_to_store=0.9))
    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder, config=config) as mem:
        obs = await mem.observe("ok")
        assert not obs.stored
        assert (await mem.stats())["memories"]["episodic"] == 0
        assert mem.sensory.total_ingested == 1


async def test_remember_ranks_related_memories_first(memory: AsyncMemory):
    await memory.observe_many(
        [
            "I baked banana bread with walnuts on Sunday.",
            "The JWT token expired after five minutes because of clock skew between servers.",
            "We adopted a golden retriever puppy named Max.",
        ]
    )
    hits = await memory.remember("authentication tokens expire too early")
    assert hits, "expected at least one hit"
    assert "clock skew" in hits[0].content
    assert hits[0].score >= hits[-1].score
    assert "cosine" in hits[0].channels


async def test_remember_counts_as_a_review(memory: AsyncMemory):
    obs = await memory.observe("Redis caching cut the API latency in half.")
    before = (await memory.get(obs.id)).access_count
    await memory.remember("redis caching latency")
    after = await memory.get(obs.id)
    assert after.access_count == before + 1
    assert after.last_accessed is not None
    assert memory.working_memory().items("staging")  # top hits are staged


async def test_repeated_fact_reinforces_instead_of_duplicating(memory: AsyncMemory):
    first = await memory.assert_fact("Michael", "uses", "FastAPI", confidence=0.7)
    second = await memory.assert_fact("michael", "USES", "fastapi")
    assert second.id == first.id
    assert second.confidence == pytest.approx(0.75)
    assert second.reinforcement_count == 1
    assert (await memory.stats())["memories"]["semantic"] == 1
    about = await memory.facts_about("FASTAPI")
    assert [f.id for f in about] == [first.id]


async def test_fact_traversal_is_multi_hop(memory: AsyncMemory):
    await memory.assert_fact("Michael", "builds", "Billing API")
    await memory.assert_fact("Billing API", "runs_on", "FastAPI")
    await memory.assert_fact("FastAPI", "written_in", "Python")
    reached = await memory.traverse("Michael", max_hops=3)
    assert [f.object for f in reached] == ["Billing API", "FastAPI", "Python"]
    assert [f.object for f in await memory.traverse("Michael", max_hops=1)] == ["Billing API"]


async def test_procedures_are_ordered_by_confidence_weighted_success(memory: AsyncMemory):
    proven = await memory.add_procedure(
        "Blue-green deploy",
        "Switch traffic after health checks pass",
        trigger_tags=["Deploy"],
        steps=[{"description": "run health checks"}],
        status=ProcedureStatus.ACTIVE,
    )
    lucky = await memory.add_procedure(
        "Deploy on Friday", "Push straight to production", trigger_tags=["deploy"]
    )
    for outcome in [True] * 9 + [False]:
        await memory.record_procedure_outcome(proven.id, outcome)
    await memory.record_procedure_outcome(lucky.id, True)  # 100% of one run
    found = await memory.find_procedures(["deploy"])
    assert [p.id for p in found] == [proven.id, lucky.id]
    assert found[0].success_rate == pytest.approx(0.9)
    assert found[0].steps[0].description == "run health checks"


async def test_learning_validation_is_asymmetric(memory: AsyncMemory):
    learning = await memory.learn(
        "Retry flaky tests once before failing the build.",
        learning_type="strategy_update",
        applicability=["ci"],
        confidence=0.5,
    )
    up = await memory.validate_learning(learning.id, True)
    assert up.confidence == pytest.approx(0.6) and up.validated
    down = await memory.validate_learning(learning.id, False)
    assert down.confidence == pytest.approx(0.45)
    assert down.application_count == 2
    assert [lr.id for lr in await memory.find_learnings(["CI"])] == [learning.id]


async def test_time_range_queries(memory: AsyncMemory):
    base = 1_700_000_000.0
    for day in range(5):
        await memory.observe(
            f"Daily standup number {day} about the migration project.", timestamp=base + day * DAY
        )
    found = await memory.episodes_between(base + DAY, base + 3 * DAY)
    assert [e.timestamp for e in found] == [base + DAY, base + 2 * DAY, base + 3 * DAY]
    hits = await memory.remember("standup", time_range=(base + 3 * DAY, base + 4 * DAY))
    assert {h.memory.timestamp for h in hits} <= {base + 3 * DAY, base + 4 * DAY}
    assert hits


async def test_learning_links_to_evidence_and_pagerank_ranks_the_hub(memory: AsyncMemory):
    a = await memory.observe("Users are logged out after five minutes.")
    b = await memory.observe("The servers' clocks differ by four minutes.")
    lesson = await memory.learn(
        "Check clock skew when JWT tokens expire early.", evidence_ids=[a.id, b.id]
    )
    related = await memory.related(lesson.id)
    assert {r.id for r, _, _ in related} == {a.id, b.id}
    scores = await memory.update_graph_importance()
    assert sum(scores.values()) == pytest.approx(1.0)
    assert scores[b.id] > scores[lesson.id]  # evidence receives rank from the lesson


async def test_close_and_reopen_keeps_everything(db_path: Path, local_embedder: LocalEmbedder):
    async with AsyncMemory(db_path, user_id="alice", embedder=local_embedder) as mem:
        obs = await mem.observe("Alice prefers dark roast coffee every morning.")
        fact = await mem.assert_fact("Alice", "prefers", "dark roast")
        proc = await mem.add_procedure("Brew coffee", "Grind, bloom, pour", trigger_tags=["coffee"])
        lesson = await mem.learn(
            "Grind fresh for better taste.", evidence_ids=[obs.id], applicability=["coffee"]
        )
        await mem.remember("coffee")
        before = {r.id: r for r in await mem.list(limit=100)}
        edges_before = await mem.related(lesson.id)
    async with AsyncMemory(db_path, user_id="alice", embedder=local_embedder) as mem:
        after = {r.id: r for r in await mem.list(limit=100)}
        assert after == before
        assert isinstance(after[fact.id], Fact) and isinstance(after[proc.id], Procedure)
        assert isinstance(after[lesson.id], Learning)
        assert await mem.related(lesson.id) == edges_before
        # (observe also read "Alice prefers dark roast coffee ..." as a fact of its own)
        assert fact.id in {f.id for f in await mem.facts_about("alice")}
        assert [p.id for p in await mem.find_procedures(["coffee"])] == [proc.id]
        hits = await mem.remember("morning coffee preference", include_graph_neighbors=False)
        # The observation, or the fact observe read from it, is found after reopening.
        found = {h.id for h in hits} | {
            source for h in hits for source in getattr(h.memory, "source_episode_ids", [])
        }
        assert obs.id in found


async def test_scopes_are_isolated(memory: AsyncMemory):
    mine = await memory.observe("Alice's secret project is called Nightingale.")
    await memory.observe("Bob's project is called Falcon.", user_id="bob")
    bob_hits = await memory.remember("secret project name", user_id="bob")
    assert mine.id not in {h.id for h in bob_hits}
    from ucma.errors import NotFoundError

    with pytest.raises(NotFoundError):
        await memory.get(mine.id, user_id="bob")
    with pytest.raises(NotFoundError):
        await memory.delete(mine.id, user_id="bob")
    assert (await memory.get(mine.id)).id == mine.id


async def test_export_import_round_trip(memory: AsyncMemory, tmp_path: Path, local_embedder):
    a = await memory.observe("The staging database lives on host db-2.")
    await memory.assert_fact("staging database", "hosted_on", "db-2", source_episode_ids=[a.id])
    await memory.learn("Always check which host staging uses.", evidence_ids=[a.id])
    out = tmp_path / "export.jsonl"
    assert await memory.export_jsonl(out) == 3
    assert len(out.read_text().splitlines()) == 1 + 3 + 2 + 3  # header, records, edges, retention
    async with AsyncMemory(tmp_path / "copy.db", user_id="alice", embedder=local_embedder) as copy:
        assert await copy.import_jsonl(out) == 3
        assert await copy.import_jsonl(out) == 0  # re-running resumes, never duplicates
        assert {r.id: r for r in await copy.list()} == {r.id: r for r in await memory.list()}
        lesson = next(r for r in await copy.list() if r.kind is MemoryKind.LEARNING)
        assert [r.id for r, _, _ in await copy.related(lesson.id)] == [a.id]
    with pytest.raises(ValidationError):
        await memory.export_jsonl(tmp_path / "missing-dir" / "x.jsonl")


async def test_vectors_are_the_models(memory: AsyncMemory, local_embedder: LocalEmbedder):
    vectors = await local_embedder.embed(
        ["a cat sat on the mat", "a kitten rested on a rug", "quarterly tax filing deadline"]
    )
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2]) + 0.2
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


async def test_delete_removes_the_memory_everywhere(memory: AsyncMemory):
    obs = await memory.observe("Temporary note about the quarterly report draft.")
    await memory.delete(obs.id)
    hits = await memory.remember("quarterly report draft")
    assert obs.id not in {h.id for h in hits}
    assert (await memory.stats())["memories"][MemoryKind.EPISODIC.value] == 0


async def test_query_vectors_come_from_the_persistent_cache_after_reopen(
    db_path: Path, local_embedder: LocalEmbedder
):
    async with AsyncMemory(db_path, user_id="alice", embedder=local_embedder) as mem:
        await mem.observe("Kafka consumers lag during the nightly batch.")
        await mem.remember("why do consumers lag at night?")
        assert mem._embedder.stats().computed == 1
    async with AsyncMemory(db_path, user_id="alice", embedder=local_embedder) as mem:
        await mem.remember("why do consumers lag at night?")
        stats = mem._embedder.stats()
        assert (stats.store_hits, stats.computed) == (1, 0)
