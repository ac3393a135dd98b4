"""Goals through the public API (seed 000's predictive paradigm; issue 16): lifecycle,
decomposition, progress roll-up, the active order, suspension when plain observed text
contradicts a goal and resumption when it no longer does, anticipate, pursue_goal
(composition pattern 2), events, replay, export and import, bad input and scopes."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import NotFoundError, SecretRefusedError, ValidationError
from ucma.paradigms.goal_records import GoalOrigin, GoalStatus
from ucma.providers.base import Providers
from ucma.providers.openai import OpenAIChatProvider
from ucma.providers.testing import FAKE_BASE_URL, FakeOpenAIServer

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

TRIP = "Book flights, reserve a hotel and buy a rail pass for the Japan trip"
DAY = 86_400.0


async def test_lifecycle_decomposition_roll_up_and_completion(memory: AsyncMemory) -> None:
    goal = await memory.add_goal(TRIP, priority=0.8)
    assert (goal.status, goal.progress, goal.subgoals, goal.origin) == (
        GoalStatus.ACTIVE,
        0.0,
        [],
        GoalOrigin.USER,
    )
    subgoals = await memory.decompose_goal(goal.id)
    assert [s.description for s in subgoals] == [
        "Book flights for the Japan trip",
        "Reserve a hotel for the Japan trip",
        "Buy a rail pass for the Japan trip",
    ]
    assert {(s.parent_id, s.priority, s.origin) for s in subgoals} == {
        (goal.id, 0.8, GoalOrigin.RULES)
    }
    # Decomposed once: asking again returns the same subgoals.
    assert [s.id for s in await memory.decompose_goal(goal.id)] == [s.id for s in subgoals]
    flights, hotel, rail = subgoals
    await memory.update_progress(flights.id, progress=1.0)
    await memory.update_progress(hotel.id, delta=0.5)
    parent = await memory.get_goal(goal.id)
    assert parent.progress == pytest.approx(0.5)  # (1 + 0.5 + 0) / 3
    assert (await memory.get_goal(flights.id)).status is GoalStatus.COMPLETED
    with pytest.raises(ValidationError, match="progress comes from"):
        await memory.update_progress(goal.id, progress=0.9)
    await memory.abandon_goal(rail.id)  # no longer counts
    assert (await memory.get_goal(goal.id)).progress == pytest.approx(0.75)
    done = await memory.update_progress(hotel.id, delta=0.5)
    assert done.status is GoalStatus.COMPLETED
    parent = await memory.get_goal(goal.id)
    assert (parent.status, parent.progress) == (GoalStatus.COMPLETED, 1.0)
    assert parent.completed_at is not None and parent.last_worked is not None
    with pytest.raises(ValidationError, match="completed"):
        await memory.update_progress(hotel.id, delta=-0.5)
    # Every change is an event, and the events alone rebuild the goals.
    kinds = [e.type for e in await memory.events() if e.type.startswith("goal.")]
    assert kinds[:5] == ["goal.added"] * 4 + ["goal.decomposed"]
    assert "goal.abandoned" in kinds and kinds.count("goal.progressed") >= 4
    assert (await memory.replay()).mismatches == {}


async def test_a_subgoal_added_by_id_joins_its_parent(memory: AsyncMemory) -> None:
    goal = await memory.add_goal("Write the thesis")
    first = await memory.add_goal("Write the introduction", parent_id=goal.id)
    await memory.update_progress(first.id, progress=1.0)
    assert (await memory.get_goal(goal.id)).status is GoalStatus.COMPLETED
    second_goal = await memory.add_goal("Run the experiments")
    await memory.add_goal("Collect the data", parent_id=second_goal.id)
    with pytest.raises(ValidationError, match="already has subgoals"):
        await memory.decompose_goal(second_goal.id, steps=["a", "b"])
    with pytest.raises(NotFoundError):
        await memory.add_goal("Orphan", parent_id="goal_nope")


async def test_active_goals_by_priority_then_deadline(memory: AsyncMemory) -> None:
    now = memory.clock()
    low = await memory.add_goal("Tidy the garage", priority=0.2)
    late = await memory.add_goal("File the tax return", priority=0.9, deadline=now + 30 * DAY)
    soon = await memory.add_goal("Renew the passport", priority=0.9, deadline=now + 3 * DAY)
    open_ended = await memory.add_goal("Learn the cello", priority=0.9)
    assert [g.id for g in await memory.get_active_goals()] == [
        soon.id,
        late.id,
        open_ended.id,
        low.id,
    ]
    await memory.abandon_goal(late.id)
    assert late.id not in [g.id for g in await memory.get_active_goals()]
    assert [g.id for g in await memory.goals(status="abandoned")] == [late.id]


async def test_decomposition_by_steps_by_strategy_or_whole(memory: AsyncMemory) -> None:
    stepped = await memory.add_goal("Launch the newsletter")
    parts = await memory.decompose_goal(stepped.id, steps=["Pick a name", "Write issue one"])
    assert [(p.description, p.origin) for p in parts] == [
        ("Pick a name", GoalOrigin.STEPS),
        ("Write issue one", GoalOrigin.STEPS),
    ]
    # No structure in the text: procedural memory's strategy gives the steps.
    await memory.learn_from_trajectory(
        "Back up the orders database",
        ["stop the writers", "run pg_dump", "copy the dump off site"],
        True,
    )
    backup = await memory.add_goal("Back up the orders database")
    parts = await memory.decompose_goal(backup.id)
    assert [p.description for p in parts] == [
        "stop the writers",
        "run pg_dump",
        "copy the dump off site",
    ]
    assert {p.origin for p in parts} == {GoalOrigin.STRATEGY}
    # Neither structure nor strategy: the goal stays whole.
    whole = await memory.add_goal("Learn the cello")
    assert await memory.decompose_goal(whole.id) == []
    assert (await memory.get_goal(whole.id)).subgoals == []


async def test_a_configured_llm_decomposes_instead_of_the_rules(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    server = FakeOpenAIServer()
    llm = OpenAIChatProvider(
        model="small", api_key="test", base_url=FAKE_BASE_URL, http_client=server.async_client()
    )
    providers = Providers(summarizer=llm, fact_extractor=llm, decomposer=llm)
    path = tmp_path / "m.db"
    async with AsyncMemory(
        path, user_id="alice", embedder=local_embedder, providers=providers
    ) as memory:
        goal = await memory.add_goal("Learn the cello")
        server.queue_chat(
            json.dumps({"subgoals": ["Rent a cello"]}),  # too few: retried
            json.dumps({"subgoals": ["Rent a cello", "Find a teacher", "Practise daily"]}),
        )
        parts = await memory.decompose_goal(goal.id)
        assert [p.description for p in parts] == [
            "Rent a cello",
            "Find a teacher",
            "Practise daily",
        ]
        assert {p.origin for p in parts} == {GoalOrigin.LLM}
        assert "Learn the cello" in server.chat_requests[-1].body["messages"][1]["content"]


async def test_a_goal_contradicted_by_observed_text_is_suspended_and_resumed(
    memory: AsyncMemory,
) -> None:
    goal = await memory.add_goal(TRIP)
    subgoals = await memory.decompose_goal(goal.id)
    cancelled = await memory.observe(
        "Heads up: the Japan trip got cancelled because of the typhoon."
    )
    suspended = await memory.get_goal(goal.id)
    assert suspended.status is GoalStatus.SUSPENDED
    [conflict] = suspended.conflicts
    assert (conflict.memory_id, conflict.reason) == (cancelled.id, "ended")
    assert "cancelled" in conflict.text
    # Its subgoals are part of it: suspended with it, and no longer active.
    assert {(await memory.get_goal(s.id)).status for s in subgoals} == {GoalStatus.SUSPENDED}
    assert await memory.get_active_goals() == []
    assert {g.id for g in await memory.goals(status="suspended")} == {
        goal.id,
        *(s.id for s in subgoals),
    }
    # An unrelated cancellation changes nothing.
    await memory.observe("My dentist appointment got cancelled.")
    assert [c.memory_id for c in (await memory.get_goal(goal.id)).conflicts] == [cancelled.id]
    # Memory no longer contradicts it: resumed.
    await memory.observe("Good news: the Japan trip is back on for May!")
    resumed = await memory.get_goal(goal.id)
    assert (resumed.status, resumed.conflicts) == (GoalStatus.ACTIVE, [])
    assert len(await memory.get_active_goals()) == 4
    kinds = [e.type for e in await memory.events() if e.type.startswith("goal.")]
    assert kinds.count("goal.suspended") == 4 and kinds.count("goal.resumed") == 4
    assert (await memory.replay()).mismatches == {}


async def test_a_changed_fact_or_a_retired_value_suspends_the_goal_that_relies_on_it(
    memory: AsyncMemory,
) -> None:
    visit = await memory.add_goal("Visit Dana in Berlin")
    promotion = await memory.add_goal("Get promoted at Acme")
    await memory.observe("Dana lives in Berlin.")
    await memory.observe("I work at Acme as a data engineer.")
    assert {g.id for g in await memory.get_active_goals()} == {visit.id, promotion.id}
    await memory.observe("Dana lives in Munich now.")
    [changed] = (await memory.get_goal(visit.id)).conflicts
    assert changed.reason == "changed" and "Munich" in changed.detail
    left = await memory.observe("I left Acme last month and joined Globex.")
    conflicts = (await memory.get_goal(promotion.id)).conflicts
    assert left.id in {c.memory_id for c in conflicts}
    # Someone else leaving Acme is about someone else.
    other = await memory.add_goal("Get a referral at Initech for Omar's cousin")
    await memory.observe("Priya left Initech in March.")
    assert (await memory.get_goal(other.id)).status is GoalStatus.ACTIVE
    # Dana moving back ends the conflict.
    await memory.observe("Dana moved back to Berlin this week.")
    assert (await memory.get_goal(visit.id)).status is GoalStatus.ACTIVE


async def test_the_user_resumes_a_suspended_goal_and_a_new_contradiction_suspends_it_again(
    memory: AsyncMemory,
) -> None:
    goal = await memory.add_goal("Ship the mobile app by March")
    first = await memory.observe("We scrapped the mobile app to focus on the web.")
    assert (await memory.get_goal(goal.id)).status is GoalStatus.SUSPENDED
    with pytest.raises(ValidationError, match="not suspended"):
        await memory.resume_goal((await memory.add_goal("Water the plants")).id)
    resumed = await memory.resume_goal(goal.id)
    assert (resumed.status, resumed.accepted) == (GoalStatus.ACTIVE, [first.id])
    await memory.observe("Note: the office plants are fine.")  # a later check keeps it active
    assert (await memory.get_goal(goal.id)).status is GoalStatus.ACTIVE
    later = await memory.observe("The board shelved the mobile app again today.")
    suspended = await memory.get_goal(goal.id)
    assert [c.memory_id for c in suspended.conflicts] == [later.id]


async def test_a_goal_added_against_known_facts_starts_suspended(memory: AsyncMemory) -> None:
    await memory.observe("The Lisbon conference was called off.")
    goal = await memory.add_goal("Prepare slides for the Lisbon conference")
    assert goal.status is GoalStatus.SUSPENDED and goal.conflicts[0].reason == "ended"
    # A goal to end something is not contradicted by it ending.
    ending = await memory.add_goal("Cancel the gym membership")
    await memory.observe("I cancelled the gym membership today.")
    assert (await memory.get_goal(ending.id)).status is GoalStatus.ACTIVE


async def test_anticipate_finds_knowledge_and_skill_gaps(memory: AsyncMemory) -> None:
    goal = await memory.add_goal("Migrate the billing service to Postgres")
    gaps = await memory.anticipate(goal.id)
    assert {g.topic for g in gaps.knowledge_gaps} == {"billing service", "Postgres"}
    [skill] = gaps.skill_gaps
    assert (skill.reason, skill.goal_id, skill.estimate.strategy_id) == (
        "no_strategy",
        goal.id,
        None,
    )
    # Memory learns about both things and a strategy for the task: no gaps left.
    await memory.observe("The billing service runs on MySQL 5.7 and handles 40 requests a second.")
    await memory.observe("Postgres 16 is the company standard for new databases.")
    [strategy] = (
        await memory.learn_from_trajectory(
            "Migrate the billing service to Postgres",
            ["dump the schema", "convert types", "replay writes"],
            True,
        )
    ).items
    gaps = await memory.anticipate(goal.id)
    assert gaps.knowledge_gaps == [] and gaps.skill_gaps == []
    assert set(gaps.known) == {"billing service", "Postgres"}
    [estimate] = gaps.skills
    assert (estimate.strategy_id, estimate.samples, estimate.rate) == (strategy.id, 0, None)
    # A strategy that mostly failed is a weak skill.
    for success in (False, False, True, False):
        await memory.record_procedure_outcome(strategy.id, success)
    [weak] = (await memory.anticipate(goal.id)).skill_gaps
    assert weak.reason == "weak" and weak.estimate.rate == pytest.approx(0.25)
    assert weak.estimate.samples == 4 and 0 <= weak.estimate.lower_bound < 0.25


async def test_pursue_goal_plans_steps_with_strategies_and_records_what_blocks(
    memory: AsyncMemory,
) -> None:
    await memory.learn_from_trajectory(
        "Book flights for the Japan trip",
        ["compare fares", "book the cheapest refundable fare"],
        True,
    )
    await memory.observe(
        "Our Japan trip runs from 3 to 17 May; flights from Lisbon must be refundable."
    )
    goal = await memory.add_goal(TRIP, priority=0.7)
    plan = await memory.pursue_goal(goal.id)
    assert [s.goal.description for s in plan.steps] == [
        "Book flights for the Japan trip",
        "Reserve a hotel for the Japan trip",
        "Buy a rail pass for the Japan trip",
    ]
    flights, hotel, rail = plan.steps
    assert flights.strategy_steps == ["compare fares", "book the cheapest refundable fare"]
    assert flights.achievable and flights in plan.achievable
    assert hotel.strategy_id is None and not hotel.achievable
    assert "knowledge: hotel" in hotel.blocked_by
    assert any(b.startswith("skill: Reserve a hotel") for b in hotel.blocked_by)
    assert "knowledge: rail pass" in rail.blocked_by
    assert plan.goal.blocking_on == plan.anticipation.all_gaps()
    assert "knowledge: Japan trip" not in plan.goal.blocking_on  # memory knows it
    stored = await memory.get_goal(goal.id)
    assert stored.last_worked == plan.goal.last_worked and stored.blocking_on
    assert (await memory.replay()).mismatches == {}


async def test_bad_input_is_refused_and_nothing_is_written(memory: AsyncMemory) -> None:
    with pytest.raises(ValidationError, match="priority"):
        await memory.add_goal("Renew the passport", priority=1.5)
    with pytest.raises(ValidationError, match="deadline"):
        await memory.add_goal("Renew the passport", deadline=float("nan"))
    with pytest.raises(ValidationError):
        await memory.add_goal("   ")
    with pytest.raises(SecretRefusedError):
        await memory.add_goal("Rotate the key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD")
    assert await memory.goals() == []
    goal = await memory.add_goal("Renew the passport")
    with pytest.raises(ValidationError, match="exactly one"):
        await memory.update_progress(goal.id, progress=0.5, delta=0.1)
    with pytest.raises(ValidationError, match="delta"):
        await memory.update_progress(goal.id, delta=2.0)
    with pytest.raises(ValidationError, match="steps"):
        await memory.decompose_goal(goal.id, steps=[])
    with pytest.raises(ValidationError, match="status"):
        await memory.goals(status="dreaming")
    with pytest.raises(NotFoundError):
        await memory.get_goal("goal_unknown")
    assert (await memory.get_goal(goal.id)).progress == 0.0
    assert [e.type for e in await memory.events() if e.type.startswith("goal.")] == ["goal.added"]


async def test_goals_are_scoped(memory: AsyncMemory) -> None:
    goal = await memory.add_goal("Renew the passport")
    for call in (
        memory.get_goal(goal.id, user_id="mallory"),
        memory.update_progress(goal.id, progress=1.0, user_id="mallory"),
        memory.decompose_goal(goal.id, steps=["x", "y"], user_id="mallory"),
        memory.anticipate(goal.id, user_id="mallory"),
        memory.resume_goal(goal.id, user_id="mallory"),
    ):
        with pytest.raises(NotFoundError):
            await call
    assert await memory.get_active_goals(user_id="mallory") == []
    assert (await memory.get_goal(goal.id)).progress == 0.0


async def test_export_then_import_reproduces_the_goals(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(tmp_path / "a.db", user_id="alice", embedder=local_embedder) as memory:
        goal = await memory.add_goal(TRIP, priority=0.6, deadline=memory.clock() + DAY)
        [first, *_] = await memory.decompose_goal(goal.id)
        await memory.update_progress(first.id, progress=0.5)
        await memory.observe("The Japan trip got cancelled.")
        originals = await memory.goals()
        lines = [line async for line in memory.export_lines()]
    async with AsyncMemory(tmp_path / "b.db", user_id="alice", embedder=local_embedder) as copy:
        await copy.import_lines(lines)
        assert sorted(await copy.goals(), key=lambda g: g.id) == sorted(
            originals, key=lambda g: g.id
        )
        assert (await copy.replay()).mismatches == {}
        await copy.import_lines(lines)  # again: nothing new
        assert len(await copy.goals()) == len(originals)
    async with AsyncMemory(tmp_path / "c.db", user_id="bob", embedder=local_embedder) as other:
        await other.import_lines(lines)  # another scope: new ids, links followed
        moved = {g.description: g for g in await other.goals()}
        parent = moved[TRIP]
        assert parent.id != goal.id
        by_id = {g.id: g for g in originals}
        old_order = by_id[goal.id].subgoals
        assert [moved[by_id[i].description].id for i in old_order] == parent.subgoals
        assert all(moved[g.description].parent_id == parent.id for g in originals if g.parent_id)
        [was] = by_id[goal.id].conflicts
        assert [c.text for c in parent.conflicts] == [was.text]
        assert parent.conflicts[0].memory_id != was.memory_id


async def test_recall_reports_the_paradigms_its_query_needs(memory: AsyncMemory) -> None:
    await memory.observe("I prefer Portuguese for the user interface.")
    result = await memory.recall("Help me complete my project", explain=True)
    assert result.paradigms == ("declarative", "procedural", "predictive")
    assert result.explanation["paradigms"] == list(result.paradigms)
    asked = await memory.recall("What is the user's preferred language?")
    assert asked.paradigms == ("declarative",)


async def test_anticipate_reads_the_self_model_when_it_has_attempts_of_the_task(
    memory: AsyncMemory,
) -> None:
    goal = await memory.add_goal("Write the SQL queries for the revenue report")
    # Neither attempts nor a strategy: a skill gap from the strategies' side.
    [gap] = (await memory.anticipate(goal.id)).skill_gaps
    assert (gap.reason, gap.estimate.source) == ("no_strategy", "strategies")
    # Attempts of the capability the task names: the self-model answers, and a good
    # record is no gap even without a strategy.
    for success in (True, True, True, True, False):
        await memory.record_competence("sql queries", success)
    gaps = await memory.anticipate(goal.id)
    assert gaps.skill_gaps == []
    [estimate] = gaps.skills
    assert (estimate.source, estimate.samples, estimate.strategy_id) == ("self_model", 5, None)
    assert estimate.rate == pytest.approx(0.8)
    introspection = await memory.introspect(goal.description)
    assert estimate.lower_bound == pytest.approx(introspection.low) and introspection.low > 0
    # More failures make it weak, by the self-model's count.
    for _ in range(7):
        await memory.record_competence("sql queries", False)
    [weak] = (await memory.anticipate(goal.id)).skill_gaps
    assert (weak.reason, weak.estimate.source, weak.estimate.samples) == (
        "weak",
        "self_model",
        12,
    )
    assert weak.estimate.rate == pytest.approx(4 / 12)


async def test_gaps_that_block_active_goals_are_learning_priorities(
    memory: AsyncMemory,
) -> None:
    for _ in range(5):
        await memory.record_competence("scheduling", False)
    trip = await memory.add_goal(TRIP, priority=0.9)
    hotel_only = await memory.add_goal("Reserve a hotel for the Japan trip", priority=0.3)
    # Goals not pursued yet block nothing known.
    assert [p.type for p in await memory.learning_priorities()] == ["weak_domain"]
    plan = await memory.pursue_goal(trip.id)
    await memory.pursue_goal(hotel_only.id)
    priorities = await memory.learning_priorities(limit=100)
    goal_gaps = {p.source["gap"]: p for p in priorities if p.type == "goal_gap"}
    assert set(goal_gaps) == set(plan.goal.blocking_on) | set(
        (await memory.get_goal(hotel_only.id)).blocking_on
    )
    hotel = goal_gaps["knowledge: hotel"]
    assert hotel.impact == pytest.approx(0.9)  # the more important goal it blocks
    assert set(hotel.source["goal_ids"]) == {trip.id, hotel_only.id}
    assert priorities == sorted(priorities, key=lambda p: -p.impact)
    # An abandoned goal blocks nothing.
    await memory.abandon_goal(trip.id)
    await memory.abandon_goal(hotel_only.id)
    assert [p.type for p in await memory.learning_priorities()] == ["weak_domain"]


async def test_replay_names_a_goal_and_a_competence_changed_without_their_events(
    memory: AsyncMemory,
) -> None:
    goal = await memory.add_goal("Renew the passport before the Japan trip")
    competence = await memory.record_competence("paperwork", True)
    assert (await memory.replay()).mismatches == {}
    storage = await memory._ready()
    with storage.transaction():  # writes that forget their events
        storage.goals.put([replace(goal, progress=0.4)])
        storage.predictive.put_competences([replace(competence, attempts=3, successes=3)])
    mismatches = (await memory.replay()).mismatches
    assert set(mismatches) == {goal.id, competence.id}
    assert (mismatches[goal.id].field, mismatches[goal.id].live) == ("progress", 0.4)
    assert (mismatches[competence.id].field, mismatches[competence.id].replayed) == (
        "attempts",
        1,
    )
