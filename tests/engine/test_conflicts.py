"""Conflict resolution end to end: seed 002's examples, bi-temporal reads,
sources of truth, user choices, dependency invalidation, restart."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ucma.conflicts import SQLSourceOfTruth
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import NotFoundError, SourceOfTruthError, ValidationError
from ucma.types import (
    ConflictStatus,
    ConflictType,
    FactStatus,
    LearningType,
    ResolutionStrategy,
)

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

DAY = 86_400.0
GAI = "customer_gai_123"


def at(day: int, month: int = 10, year: int = 2024) -> float:
    return datetime(year, month, day, 9, tzinfo=UTC).timestamp()


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def open_memory(
    path: Path, embedder: LocalEmbedder, clock: Callable[[], float], **kwargs: object
) -> AsyncMemory:
    return AsyncMemory(path, user_id="ops", embedder=embedder, clock=clock, **kwargs)


def sales_db(path: Path, status: str) -> Path:
    """A real SQLite database of the user's, with seed 002's sales_orders table."""
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("CREATE TABLE IF NOT EXISTS sales_orders (id TEXT PRIMARY KEY, status TEXT)")
        conn.execute("INSERT OR REPLACE INTO sales_orders VALUES ('so_1001', ?)", (status,))
        conn.execute("INSERT OR REPLACE INTO sales_orders VALUES ('so_2002', 'packed')")
    return path


def orders_source(path: Path) -> SQLSourceOfTruth:
    return SQLSourceOfTruth.sqlite(
        path,
        {"status": "SELECT status FROM sales_orders WHERE id = :id"},
        subject_pattern=r"sales_order_(?P<id>so_\d+)",
        name="sales_db",
    )


# -- seed 002 example 1: memory vs database ------------------------------------------


async def test_seed_example_1_memory_vs_db_on_a_real_sales_database(
    tmp_path: Path, db_path: Path, local_embedder: LocalEmbedder
):
    shop = sales_db(tmp_path / "shop.db", "shipped")
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock, sources=[orders_source(shop)]) as mem:
        memory = await mem.assert_fact(
            "sales_order_so_1001", "status", "in_fulfillment", confidence=0.85
        )
        clock.now = at(3)
        answer = await mem.answer(
            "What is the status of sales_order_so_1001?", entity="sales_order_so_1001"
        )
        assert "Status is shipped (previously in_fulfillment)" in answer.response
        [conflict] = answer.conflicts
        assert conflict.conflict_type is ConflictType.MEMORY_VS_DB
        assert conflict.resolution_strategy is ResolutionStrategy.TRUST_DB
        assert (conflict.chosen_value, conflict.action) == ("shipped", "decay_memory")
        assert (conflict.existing_confidence, conflict.new_confidence) == (0.85, 1.0)
        assert conflict.resolved_by == "source:sales_db"
        payload = answer.to_dict()
        seed_keys = {"conflict_type", "subject", "predicate", "existing_value", "new_value"}
        seed_keys |= {"existing_confidence", "new_confidence", "resolution_strategy", "explanation"}
        assert seed_keys <= set(payload["conflicts_detected"][0])
        assert payload["conflicts_detected"][0]["explanation"] == (
            "Database is the authoritative source of truth. Memory has been marked for decay."
        )
        decayed = await mem.get(memory.id)
        assert decayed.status is FactStatus.CONFLICTED
        assert decayed.confidence == 0.425
        assert decayed.superseded_at == at(3) and decayed.valid_until == at(3)
        assert [f.object for f in answer.facts] == ["shipped"]

        # a later read sees the database value and the conflict, with no new conflict
        facts = await mem.facts_about("sales_order_so_1001")
        assert [(f.object, f.status) for f in facts] == [("shipped", FactStatus.ACTIVE)]
        assert [c.id for c in facts.conflicts] == [conflict.id]
        assert len(await mem.conflicts()) == 1
        # what memory believed before the read
        before = await mem.facts_about("sales_order_so_1001", as_of=at(2))
        assert [f.object for f in before] == ["in_fulfillment"]


async def test_source_of_truth_agreeing_missing_or_uncovered_changes_nothing(
    tmp_path: Path, db_path: Path, local_embedder: LocalEmbedder
):
    shop = sales_db(tmp_path / "shop.db", "shipped")
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock, sources=[orders_source(shop)]) as mem:
        await mem.assert_fact("sales_order_so_1001", "status", "shipped")
        await mem.assert_fact("sales_order_so_9999", "status", "open")  # no row in the db
        await mem.assert_fact("sales_order_so_1001", "carrier", "DHL")  # predicate not covered
        for entity in ("sales_order_so_1001", "sales_order_so_9999"):
            facts = await mem.facts_about(entity)
            assert all(f.status is FactStatus.ACTIVE for f in facts) and not facts.conflicts
        assert await mem.conflicts() == []


async def test_a_broken_source_fails_the_read_loudly(
    tmp_path: Path, db_path: Path, local_embedder: LocalEmbedder
):
    source = orders_source(tmp_path / "missing.db")
    async with open_memory(db_path, local_embedder, Clock(at(1))) as mem:
        mem.add_source_of_truth(source)
        await mem.assert_fact("sales_order_so_1001", "status", "open")
        with pytest.raises(SourceOfTruthError, match="sales_db"):
            await mem.facts_about("sales_order_so_1001")
        with pytest.raises(ValidationError):
            mem.add_source_of_truth("shop.db")  # type: ignore[arg-type]


# -- seed 002 example 2: newest, more confident, more reinforced ------------------


async def test_seed_example_2_supersedes_thursday_with_friday(
    db_path: Path, local_embedder: LocalEmbedder
):
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        thursday = await mem.assert_fact(GAI, "delivery_pref", "Thursday", confidence=0.70)
        thursday = await mem.assert_fact(GAI, "delivery_pref", "Thursday")  # 0.75, reinforced once
        clock.now = at(10)
        first = await mem.assert_fact_detailed(GAI, "delivery_pref", "Friday", confidence=0.75)
        assert first.disambiguation_required  # 0.75 vs 0.75, 9 days apart: not yet clear
        await mem.assert_fact(GAI, "delivery_pref", "Friday")  # 0.80, reinforced once
        final = await mem.assert_fact_detailed(GAI, "delivery_pref", "Friday")  # 0.85, twice
        assert (final.fact.confidence, final.fact.reinforcement_count) == pytest.approx((0.85, 2))
        [conflict] = final.conflicts
        assert conflict.chosen_value == "Friday"
        assert conflict.action == "supersede_old"
        assert conflict.status is ConflictStatus.RESOLVED
        old = await mem.get(thursday.id)
        assert old.status is FactStatus.SUPERSEDED
        assert old.superseded_by == final.fact.id
        assert final.fact.status is FactStatus.ACTIVE
        assert "Delivery preference is Friday (recently updated from Thursday)" in final.response
        assert [f.object for f in await mem.facts_about(GAI)] == ["Friday"]


# -- seed 002 example 3: ambiguous, ask the user -------------------------------------


async def test_seed_example_3_asks_the_user_then_applies_the_choice(
    db_path: Path, local_embedder: LocalEmbedder
):
    clock = Clock(at(5))
    async with open_memory(db_path, local_embedder, clock) as mem:
        await mem.assert_fact(GAI, "delivery_pref", "Thursday", confidence=0.70)
        await mem.assert_fact(GAI, "delivery_pref", "Thursday")
        thursday = await mem.assert_fact(GAI, "delivery_pref", "Thursday")  # 0.80, twice
        clock.now = at(8)
        await mem.assert_fact(GAI, "delivery_pref", "Friday", confidence=0.72)
        await mem.assert_fact(GAI, "delivery_pref", "Friday")
        result = await mem.assert_fact_detailed(GAI, "delivery_pref", "Friday")  # 0.82, twice
        [conflict] = result.conflicts
        assert conflict.resolution_strategy is ResolutionStrategy.ASK_USER
        assert conflict.action == "ask_user" and conflict.status is ConflictStatus.PENDING
        assert conflict.options == ["Thursday", "Friday"]
        payload = result.to_dict()
        assert payload["disambiguation_required"] is True
        assert payload["options"] == ["Thursday", "Friday"]
        context = payload["conflicts_detected"][0]["context"]
        assert context["thursday_confidence"] == pytest.approx(0.80)
        assert context["friday_confidence"] == pytest.approx(0.82)
        assert "Which is correct?" in payload["response"]
        current = await mem.facts_about(GAI)
        assert {(f.object, f.status) for f in current} == {
            ("Thursday", FactStatus.DISPUTED),
            ("Friday", FactStatus.DISPUTED),
        }
        assert [c.id for c in current.conflicts] == [conflict.id]
        answer = await mem.answer("Which day does Gai prefer for deliveries?", entity=GAI)
        assert answer.disambiguation_required and answer.options == ["Thursday", "Friday"]
        assert "I have conflicting information about delivery preference" in answer.response

        clock.now = at(9)
        chosen = await mem.resolve_conflict(conflict.id, "friday")
        assert chosen.fact.object == "Friday" and chosen.fact.status is FactStatus.ACTIVE
        assert chosen.fact.reinforcement_count == 3
        assert chosen.fact.confidence == pytest.approx(0.87)
        [done] = chosen.conflicts
        assert (done.status, done.chosen_value, done.resolved_by) == (
            ConflictStatus.USER_RESOLVED,
            "Friday",
            "user",
        )
        loser = await mem.get(thursday.id)
        assert loser.status is FactStatus.SUPERSEDED and loser.superseded_by == chosen.fact.id
        assert [f.object for f in await mem.facts_about(GAI)] == ["Friday"]

        with pytest.raises(ValidationError, match="already user_resolved"):
            await mem.resolve_conflict(conflict.id, "Thursday")
        with pytest.raises(NotFoundError):
            await mem.resolve_conflict("cfl_unknown", "Friday")


async def test_resolve_conflict_rejects_a_value_that_is_not_an_option(
    db_path: Path, local_embedder: LocalEmbedder
):
    clock = Clock(at(5))
    async with open_memory(db_path, local_embedder, clock) as mem:
        await mem.assert_fact(GAI, "delivery_pref", "Thursday")
        result = await mem.assert_fact_detailed(GAI, "delivery_pref", "Friday")
        [conflict] = result.conflicts
        with pytest.raises(ValidationError, match="not an option"):
            await mem.resolve_conflict(conflict.id, "Monday")
        assert (await mem.conflicts(status="pending"))[0].id == conflict.id


# -- the tree through the engine -----------------------------------------------------


async def test_a_weaker_new_value_is_recorded_but_not_adopted(
    db_path: Path, local_embedder: LocalEmbedder
):
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        held = await mem.assert_fact("Maria", "employer", "Acme", confidence=0.9)
        clock.now = at(2)
        result = await mem.assert_fact_detailed("Maria", "employer", "Globex", confidence=0.6)
        assert result.fact.status is FactStatus.CONFLICTED
        assert result.fact.confidence == pytest.approx(0.48)
        assert result.fact.superseded_by == held.id
        [conflict] = result.conflicts
        assert conflict.resolution_strategy is ResolutionStrategy.KEEP_HIGHEST_CONFIDENCE
        assert conflict.chosen_value == "Acme"
        assert "Employer stays Acme" in result.response
        assert [f.object for f in await mem.facts_about("Maria")] == ["Acme"]
        # it was never believed, at any moment
        assert [f.object for f in await mem.facts_about("Maria", as_of=at(2))] == ["Acme"]


async def test_as_of_answers_what_was_believed_along_a_timeline(
    db_path: Path, local_embedder: LocalEmbedder
):
    clock = Clock(at(1, 1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        berlin = await mem.assert_fact("Alice", "lives_in", "Berlin")
        clock.now = at(15, 2)
        paris = await mem.assert_fact("Alice", "lives_in", "Paris")
        clock.now = at(1, 5)
        london = await mem.assert_fact("Alice", "lives_in", "London")
        timeline = {
            at(31, 12, 2023): [],
            at(1, 1): ["Berlin"],
            at(14, 2): ["Berlin"],
            at(15, 2): ["Paris"],
            at(30, 4): ["Paris"],
            at(1, 5): ["London"],
            at(1, 9): ["London"],
        }
        for moment, expected in timeline.items():
            believed = await mem.facts_about("alice", as_of=moment)
            assert [f.object for f in believed] == expected, moment
        history = await mem.fact_history("Alice", "lives_in")
        assert [f.object for f in history] == ["Berlin", "Paris", "London"]
        assert [f.superseded_by for f in history] == [paris.id, london.id, None]
        assert history[0].valid_until == berlin.valid_from + (at(15, 2) - at(1, 1))
        assert {c.conflict_type for c in history.conflicts} == {ConflictType.TEMPORAL}
        everything = await mem.facts_about("alice", include_history=True)
        assert len(everything) == 3
        with pytest.raises(ValidationError):
            await mem.facts_about("alice", as_of=at(1, 5), include_history=True)


async def test_a_late_report_of_an_older_value_keeps_the_newer_one(
    db_path: Path, local_embedder: LocalEmbedder
):
    clock = Clock(at(1, 6))
    async with open_memory(db_path, local_embedder, clock) as mem:
        await mem.assert_fact("Alice", "lives_in", "Paris", valid_from=at(1, 5))
        clock.now = at(2, 6)
        late = await mem.assert_fact_detailed(
            "Alice", "lives_in", "Berlin", valid_from=at(1, 1), confidence=0.95
        )
        assert late.fact.status is FactStatus.SUPERSEDED
        assert late.fact.valid_until == at(1, 5)
        assert [f.object for f in await mem.facts_about("alice")] == ["Paris"]


async def test_a_value_that_comes_back_gets_a_new_version(
    db_path: Path, local_embedder: LocalEmbedder
):
    clock = Clock(at(1, 1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        first = await mem.assert_fact("ticket_42", "status", "open")
        clock.now = at(1, 3)
        await mem.assert_fact("ticket_42", "status", "closed")
        clock.now = at(1, 5)
        again = await mem.assert_fact("ticket_42", "status", "open")
        assert again.id != first.id and again.status is FactStatus.ACTIVE
        assert (await mem.get(first.id)).status is FactStatus.SUPERSEDED
        history = await mem.fact_history("ticket_42", "status")
        assert [f.object for f in history] == ["open", "closed", "open"]


async def test_multi_valued_predicates_and_unrelated_facts_are_untouched(
    db_path: Path, local_embedder: LocalEmbedder
):
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        tea = await mem.assert_fact("Alice", "likes", "green tea")
        coffee = await mem.assert_fact("Alice", "likes", "coffee", confidence=0.3)
        visited = [await mem.assert_fact("Alice", "visited", c) for c in ("Rome", "Oslo", "Lima")]
        bob = await mem.assert_fact("Bob", "lives_in", "Berlin")
        alice_city = await mem.assert_fact("Alice", "lives_in", "Berlin")
        clock.now = at(20, 12)
        await mem.assert_fact("Alice", "lives_in", "Madrid")
        for fact in (tea, coffee, bob, *visited):
            stored = await mem.get(fact.id)
            assert stored.status is FactStatus.ACTIVE and stored.superseded_at is None
            assert stored.confidence == fact.confidence
        assert (await mem.get(alice_city.id)).status is FactStatus.SUPERSEDED
        [conflict] = await mem.conflicts()
        assert conflict.existing_fact_id == alice_city.id
        assert await mem.review_flags() == []


# -- dependency invalidation ----------------------------------------------------------


async def test_a_conclusion_from_a_stale_premise_is_flagged_and_loses_rank(
    db_path: Path, local_embedder: LocalEmbedder
):
    clock = Clock(at(1))
    async with open_memory(db_path, local_embedder, clock) as mem:
        premise = await mem.assert_fact(GAI, "delivery_pref", "Thursday", confidence=0.9)
        # a derived fact (one hop) and a lesson drawn from it (two hops)
        window = await mem.assert_fact(
            GAI, "loading_dock_slot", "Wednesday evening", source_episode_ids=[premise.id]
        )
        stale = await mem.learn(
            "Book the Gai Media delivery trucks for Thursday morning runs",
            learning_type=LearningType.USER_PREFERENCE,
            evidence_ids=[window.id],
            impact_score=0.9,
            confidence=0.8,
        )
        # A little less relevant, so the lesson ranks first while its premise holds.
        rival = await mem.learn(
            "Gai Media deliveries can also go early in the week",
            learning_type=LearningType.USER_PREFERENCE,
            impact_score=0.5,
            confidence=0.8,
        )
        query = "when should we book the Gai Media delivery trucks"
        before = [h.id for h in await mem.remember(query, kinds=["learning"])]
        assert before.index(stale.id) < before.index(rival.id)

        clock.now = at(20, 11)  # 50 days later the customer changed their day
        change = await mem.assert_fact_detailed(GAI, "delivery_pref", "Monday")
        assert {f.memory_id for f in change.flagged} == {window.id, stale.id}
        assert all(f.premise_id == premise.id for f in change.flagged)
        assert {f.memory_id for f in await mem.review_flags()} == {window.id, stale.id}
        assert change.to_dict()["flagged_for_review"][0]["premise_id"] == premise.id

        hits = await mem.remember(query, kinds=["learning"])
        after = [h.id for h in hits]
        assert after.index(stale.id) > after.index(rival.id)
        assert next(h for h in hits if h.id == stale.id).needs_review

        answer = await mem.answer(query)
        assert any("premise that has changed" in c for c in answer.caveats)

        assert await mem.clear_review(stale.id) == 1
        restored = [h.id for h in await mem.remember(query, kinds=["learning"])]
        assert restored.index(stale.id) < restored.index(rival.id)
        with pytest.raises(NotFoundError):
            await mem.clear_review("lrn_missing")


# -- persistence ----------------------------------------------------------------------


async def test_conflicts_and_user_choices_survive_restart(
    db_path: Path, local_embedder: LocalEmbedder
):
    clock = Clock(at(5))
    async with open_memory(db_path, local_embedder, clock) as mem:
        await mem.assert_fact(GAI, "delivery_pref", "Thursday")
        [pending] = (await mem.assert_fact_detailed(GAI, "delivery_pref", "Friday")).conflicts
    async with open_memory(db_path, local_embedder, clock) as mem:
        [reloaded] = await mem.conflicts(status="pending")
        assert reloaded == pending
        await mem.resolve_conflict(pending.id, "Thursday")
    async with open_memory(db_path, local_embedder, clock) as mem:
        [resolved] = await mem.conflicts()
        assert resolved.status is ConflictStatus.USER_RESOLVED
        assert resolved.chosen_value == "Thursday"
        assert [f.object for f in await mem.facts_about(GAI)] == ["Thursday"]
        history = await mem.fact_history(GAI, "delivery_pref")
        assert [f.status for f in history] == [FactStatus.ACTIVE, FactStatus.SUPERSEDED]


def test_sync_memory_exposes_conflicts(db_path: Path, local_embedder: LocalEmbedder):
    from ucma.sync import Memory

    with Memory(db_path, user_id="ops", embedder=local_embedder) as mem:
        # Two sources at about the same time with the same confidence: ambiguous.
        mem.assert_fact(GAI, "delivery_pref", "Thursday", metadata={"source": "crm"})
        result = mem.assert_fact_detailed(
            GAI, "delivery_pref", "Friday", metadata={"source": "email"}
        )
        assert result.disambiguation_required
        chosen = mem.resolve_conflict(result.conflicts[0].id, "Friday")
        assert chosen.fact.object == "Friday"
        assert mem.conflicts()[0].status is ConflictStatus.USER_RESOLVED
