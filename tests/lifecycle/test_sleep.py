"""Sleep consolidation, de-duplication, interruption, the gardener's locks, the demo."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ucma.cli.main import app
from ucma.config import ConsolidationConfig, UCMAConfig
from ucma.demo import DEMO_AGENT, DEMO_USER, run_demo
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.lifecycle.clock import SimulatedClock
from ucma.sync import Memory
from ucma.types import Fact, MemoryKind, Provenance, Tier

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

T0 = 1_700_000_000.0
HOUR = 3600.0
OFF = UCMAConfig(consolidation=ConsolidationConfig(on_new_session="off"))


def _engine(path: Path, embedder: LocalEmbedder, clock: SimulatedClock, **kwargs) -> AsyncMemory:
    kwargs.setdefault("config", OFF)
    return AsyncMemory(path, user_id="alice", embedder=embedder, clock=clock, **kwargs)


async def test_near_duplicate_is_merged_with_visible_history(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = SimulatedClock(T0)
    async with _engine(tmp_path / "d.db", local_embedder, clock) as memory:
        first = await memory.observe("Remember that my gym locker code is 4512.")
        clock.advance(days=2)
        again = await memory.observe("Remember that my gym locker code is 4512!", source="Bob")
        other = await memory.observe("Remember that my gym locker code is 4513.")
        assert again.merged_into == first.id and again.id == first.id
        assert other.merged_into is None and other.id != first.id
        episodes = await memory.list(kind="episodic")
        assert sorted(e.id for e in episodes) == sorted([first.id, other.id])
        record = await memory.get(first.id)
        assert record.access_count == 1 and record.last_accessed == clock.now()
        history = await memory.history(first.id)
        assert [h.event for h in history] == ["merged"]
        assert history[0].details["similarity"] > 0.95
        assert history[0].details["content"] == "Remember that my gym locker code is 4512!"
        assert [(s.source, s.at) for s in await memory.sources(first.id)] == [("Bob", clock.now())]
        [logged] = await memory.duplicates()
        assert logged.existing_id == first.id and logged.similarity > 0.95
        # The merge counted as a review: the decay clock restarted, stability grew.
        assert await memory.retention(first.id) == pytest.approx(1.0)


async def test_duplicates_inside_one_batch_are_stored_once(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with _engine(tmp_path / "b.db", local_embedder, SimulatedClock(T0)) as memory:
        results = await memory.observe_many(
            ["The build server restarts every night.", "The build server restarts every night."]
        )
        assert results[1].merged_into == results[0].id
        assert len(await memory.list(kind="episodic")) == 1


async def test_sleep_compresses_abstracts_and_reinforces(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = SimulatedClock(T0)
    async with _engine(tmp_path / "s.db", local_embedder, clock) as memory:
        keep = await memory.observe("Remember that Dana works at Northwind Traders in Leeds.")
        noise = await memory.observe("ok", source="environment")
        noise2 = await memory.observe("Background sync ran for a while.", source="tool_result")
        assert noise.stored is False
        clock.advance(hours=49)
        fresh = await memory.observe("I prefer aisle seats on long flights.")
        # Two memories about Dana found together: the pair reinforce links.
        await memory.observe("Dana cycles to the Northwind office most days.")
        await memory.remember("Dana Northwind", limit=3)
        report = await memory.sleep()
        assert report.phases == ["compress", "abstract", "reinforce", "prune", "clean"]
        assert report.compress["expired"] == 2 and report.compress["promoted"] == 1
        promoted = await memory.get(keep.id)
        assert promoted.tier is Tier.MEDIUM_TERM and promoted.summary
        assert (await memory.get(noise2.id)).archived_at is not None
        assert (await memory.get(fresh.id)).tier is Tier.SHORT_TERM
        facts = {(f.subject, f.predicate, f.object): f for f in await memory.list(kind="semantic")}
        works = facts[("Dana", "works_at", "Northwind Traders in Leeds")]
        assert works.provenance is Provenance.INFERRED and works.source_episode_ids == [keep.id]
        assert ("user", "prefers", "aisle seats on long flights") in facts
        linked = await memory.related(works.id, edge_types=["derived_from"], max_hops=1)
        assert [r.id for r, _, _ in linked] == [keep.id]
        assert report.reinforce["pairs"] >= 1 and report.reinforce["nodes"] > 0
        # A second cycle finds nothing new to abstract (episodes are marked).
        again = await memory.sleep()
        assert again.abstract["episodes"] == 0


async def test_how_people_are_outlasts_a_sleep_that_many_expire_together(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    # Over 100 episodes expiring at once raise compression's bar to 0.7: passing
    # remarks go, statements of how someone is (which the rules may not read) stay.
    clock = SimulatedClock(T0)
    async with _engine(tmp_path / "s.db", local_embedder, clock) as memory:
        await memory.observe("My landlord Sofia has a dog called Clementine.")
        lasting = [
            await memory.observe(text)
            for text in (
                "A matcha latte is my go-to drink.",
                "Sofia can't be near bee stings, severe allergy.",
            )
        ]
        passing = await memory.observe_many(
            [f"Went for a walk along the river with Ingrid on day {day}." for day in range(120)]
        )
        clock.advance(hours=49)
        report = await memory.sleep()
        assert report.compress["expired"] >= 120
        assert [(await memory.get(o.id)).archived_at for o in lasting] == [None, None]
        archived = [(await memory.get(o.id)).archived_at for o in passing if o.stored]
        assert archived and None not in archived
        hits = await memory.recall("What does Sofia react badly to?")
        assert hits.hits[0].id == lasting[1].id


async def test_a_change_outlasts_a_sleep_that_many_expire_together(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    # A change said in passing scores as chatter; archived, it would leave the
    # value it replaced as the only one in search. The value it replaced goes.
    clock = SimulatedClock(T0)
    async with _engine(tmp_path / "s.db", local_embedder, clock) as memory:
        old = await memory.observe("My boss Omar runs 12 km most days.")
        clock.advance(days=30)
        new = await memory.observe("Omar went from 12 km to 10 km on daily runs.")
        passing = await memory.observe_many(
            [f"Went for a walk along the river with Ingrid on day {day}." for day in range(120)]
        )
        clock.advance(hours=49)
        report = await memory.sleep()
        assert report.compress["expired"] >= 120
        kept = await memory.get(new.id)
        assert kept.archived_at is None and kept.tier is Tier.MEDIUM_TERM
        [promoted] = [h for h in await memory.history(new.id) if h.event == "promoted"]
        assert promoted.details["replaces"] == [old.id]
        archived = [(await memory.get(o.id)).archived_at for o in passing if o.stored]
        assert archived and None not in archived
        runs = await memory.recall("How far does Omar jog?")
        assert runs.hits[0].id == new.id


async def test_a_fact_lasts_as_long_as_the_statement_it_was_read_from(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    # Read from a statement of how someone is (kept for months), the fact must not
    # be forgotten in weeks: without it the statement loses what ranked it first.
    clock = SimulatedClock(T0)
    async with _engine(tmp_path / "s.db", local_embedder, clock) as memory:
        said = await memory.observe("My best friend Felix works at Northwind Freight.")
        [fact] = await memory.list(kind="semantic")
        assert fact.object == "Northwind Freight"
        assert fact.temporal_level == (await memory.get(said.id)).temporal_level == 3
        clock.advance(days=90)
        await memory.sleep()
        assert (await memory.get(fact.id)).archived_at is None
        assert (await memory.get(said.id)).archived_at is None


async def test_interrupted_sleep_leaves_a_consistent_store_and_resumes(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = SimulatedClock(T0)
    async with _engine(tmp_path / "i.db", local_embedder, clock) as memory:
        for text in (
            "Remember that Priya lives in Porto.",
            "Remember that Priya works at Contoso.",
            "Remember that the release train leaves on Thursdays.",
        ):
            await memory.observe(text)
        await memory.remember("Priya", limit=3)
        clock.advance(hours=49)
        seen: list[str] = []

        def progress(phase: str, number: int, total: int) -> None:
            seen.append(phase)
            if phase == "abstract":
                memory.interrupt_consolidation()

        report = await memory.sleep(progress=progress)
        assert report.interrupted and report.phases == ["compress", "abstract"]
        assert seen == ["compress", "abstract"]
        storage = memory._storage
        assert storage is not None
        # Consistent: every fact links to live source episodes, no dangling rows.
        for fact in await memory.list(kind="semantic"):
            assert isinstance(fact, Fact)
            linked = await memory.related(fact.id, edge_types=["derived_from"], max_hops=1)
            assert sorted(r.id for r, _, _ in linked) == sorted(fact.source_episode_ids)
        assert not any(storage.lifecycle.clean_orphans().values())
        # Reinforcement did not run: the co-retrieval counts are still pending ...
        assert storage.lifecycle.take_co_retrievals(memory._scope(None, None))
        await memory.remember("Priya", limit=3)
        # ... and the next cycle picks up where this one stopped.
        resumed = await memory.sleep()
        assert resumed.phases[-1] == "clean" and not resumed.interrupted
        assert resumed.abstract["episodes"] == 0 and resumed.reinforce["pairs"] >= 1


async def test_new_session_consolidates(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    for mode in ("sync", "background"):
        config = UCMAConfig(consolidation=ConsolidationConfig(on_new_session=mode))
        path = tmp_path / f"{mode}.db"
        async with _engine(path, local_embedder, SimulatedClock(T0), config=config) as memory:
            await memory.observe("Remember that Omar lives in Cairo.")
            await memory.new_session()
            if mode == "background":
                task = memory.consolidation_task
                assert task is not None
                await asyncio.wait_for(task, 60)
            facts = await memory.facts_about("Omar")
            assert [(f.predicate, f.object) for f in facts] == [("lives_in", "Cairo")]
            [run] = await memory.sleep_runs()
            assert run.trigger == "new_session" and run.started_at == T0
            assert run.phases == ("compress", "abstract", "reinforce", "prune", "clean")


async def test_two_gardeners_at_once_run_each_job_once(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = SimulatedClock(T0)
    path = tmp_path / "g.db"
    async with (
        _engine(path, local_embedder, clock) as first,
        _engine(path, local_embedder, clock) as second,
    ):
        await first.observe("Remember that the staging database is rebuilt on Sundays.")
        reports = await asyncio.gather(first.run_gardener(), second.run_gardener())
        ran = [set(r.ran) for r in reports]
        assert ran[0] | ran[1] == {"decay", "consolidate", "prune", "identity"}
        assert not ran[0] & ran[1]
        for report in reports:
            assert set(report.ran) | set(report.skipped) == {
                "decay",
                "consolidate",
                "prune",
                "identity",
            }
        # Nothing is due again until its period has passed; then it runs once.
        assert not (await first.run_gardener()).ran
        clock.advance(days=1, seconds=1)
        again = await asyncio.gather(first.run_gardener(), second.run_gardener())
        assert sorted(name for r in again for name in r.ran) == ["decay"]
        # Catch-up after downtime: one run, the missed periods counted.
        clock.advance(days=5)
        late = await second.run_gardener()
        assert late.ran["decay"]["missed_periods"] == 4
        assert set(late.ran) == {"decay"}
        forced = await first.run_gardener("identity")
        assert set(forced.ran) == {"identity"}


def test_demo_facts_after_ucma_sleep(tmp_path: Path) -> None:
    runner = CliRunner()
    home = tmp_path / "home"
    result = runner.invoke(app, ["demo", "--home", str(home), "--json"])
    assert result.exit_code == 0, result.stderr
    result = runner.invoke(app, ["sleep", "--home", str(home), "--json"])
    assert result.exit_code == 0, result.stderr
    [report] = json.loads(result.stdout)
    assert report["phases"][-1] == "clean"
    with Memory(home / "ucma.db", user_id=DEMO_USER, agent_id=DEMO_AGENT) as memory:
        facts = [f for f in memory.list(kind=MemoryKind.SEMANTIC) if isinstance(f, Fact)]
        for term in ("Michael", "FastAPI", "JWT"):
            about = [f for f in facts if term.lower() in f"{f.subject} {f.object}".lower()]
            assert about, (term, [f.content for f in facts])
        assert any(f.subject == "Michael" for f in facts)
        for fact in facts:
            assert fact.provenance is Provenance.INFERRED
            assert fact.source_episode_ids
            linked = memory.related(fact.id, edge_types=["derived_from"], max_hops=1)
            assert sorted(r.id for r, _, _ in linked) == sorted(fact.source_episode_ids)
            assert all(r.kind is MemoryKind.EPISODIC for r, _, _ in linked)
    table = runner.invoke(app, ["sleep", "--home", str(home)], env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.stderr
    assert "Sleep cycle" in table.stdout and "michael/coding-assistant-001" in table.stdout


async def test_run_demo_then_sleep_in_process(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(tmp_path / "demo.db", embedder=local_embedder) as memory:
        await run_demo(memory)
        report = await memory.sleep(user_id=DEMO_USER, agent_id=DEMO_AGENT)
        # observe read every episode's claims already (the same rules sleep would apply)
        assert report.abstract["episodes"] == 0
        facts = await memory.facts_about("Michael", user_id=DEMO_USER, agent_id=DEMO_AGENT)
        assert {f.predicate for f in facts} >= {"building", "wants_to"}
