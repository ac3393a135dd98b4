"""The world model and the self-model through the public API (seed 000's predictive
paradigm; issue 16): transitions learned from outcomes, simulate's honest uncertainty,
reliability moved by errors and confirmations, promotion to a world fact at the
threshold, introspection with calibration, should_attempt at the seed's thresholds,
learning priorities, events, replay, export and import."""

from __future__ import annotations

from pathlib import Path

import pytest

from ucma.config import PredictiveConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import SecretRefusedError, ValidationError
from ucma.paradigms.predictive_records import HelpDecision
from ucma.types import Fact

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


async def _observe(memory: AsyncMemory, outcome: str, times: int, **context: object) -> None:
    for _ in range(times):
        await memory.observe_transition("submit the form", outcome, context=context)


async def test_simulate_is_honest_with_few_observations_and_sure_with_many(
    memory: AsyncMemory,
) -> None:
    nothing = await memory.simulate("submit the form", {"logged in": True})
    assert nothing.predicted is None and nothing.confidence == 0.0
    assert nothing.unseen_probability == 1.0 and nothing.caveats

    await _observe(memory, "confirmation page", 1, **{"logged in": True})
    one = await memory.simulate("submit the form", {"logged in": True})
    assert one.predicted == "confirmation page"
    assert one.confidence == pytest.approx(2 / 3)  # uniform prior: seen once of {it, unseen}
    [only] = one.outcomes
    assert only.high - only.low > 0.6  # a wide interval says how little is known
    assert any("few observations" in c for c in one.caveats)

    await _observe(memory, "confirmation page", 39, **{"logged in": True})
    many = await memory.simulate("submit the form", {"logged in": True})
    assert many.confidence == pytest.approx(41 / 42)
    assert many.outcomes[0].high - many.outcomes[0].low < 0.1
    assert many.exact_support == 40 and not many.caveats
    assert [e.outcome for e in many.evidence] == ["confirmation page"]


async def test_contexts_condition_the_prediction(memory: AsyncMemory) -> None:
    await _observe(memory, "confirmation page", 6, **{"logged in": True})
    await _observe(memory, "login prompt", 6, **{"logged in": False})
    logged_in = await memory.simulate("submit the form", {"Logged In": "TRUE"})
    assert logged_in.predicted == "confirmation page"
    assert logged_in.probability_of("login prompt") == logged_in.unseen_probability
    logged_out = await memory.simulate("submit the form", {"logged in": False})
    assert logged_out.predicted == "login prompt"
    # A context saying more than any observed one: similar evidence counts in part.
    wider = await memory.simulate("submit the form", {"logged in": True, "cart": "full"})
    assert wider.predicted == "confirmation page" and wider.exact_support == 0
    assert 0 < wider.support < 6
    assert any("similar contexts" in c for c in wider.caveats)


async def test_reliability_falls_on_errors_and_rises_on_confirmations(
    memory: AsyncMemory,
) -> None:
    first = await memory.observe_transition("click buy", "order placed")
    assert (first.confirmations, first.errors) == (1, 0)
    assert first.reliability == pytest.approx(2 / 3)
    await memory.observe_transition("click buy", "payment declined")  # an error for the first
    [placed] = [t for t in await memory.transitions(action="click buy") if t.id == first.id]
    assert (placed.confirmations, placed.errors) == (1, 1)
    assert placed.reliability == pytest.approx(0.5)
    again = await memory.observe_transition("Click  BUY", "Order placed")
    assert again.id == first.id and (again.confirmations, again.errors) == (2, 1)
    assert again.reliability == pytest.approx(0.6)
    declined = [t for t in await memory.transitions() if t.outcome == "payment declined"]
    # Seen first after one other observation: born with one error, then another.
    assert (declined[0].confirmations, declined[0].errors) == (1, 2)


async def test_a_pattern_is_promoted_to_a_world_fact_at_the_threshold(
    memory: AsyncMemory,
) -> None:
    # Defaults: reliability above 0.9 after at least 10 observations.
    await _observe(memory, "confirmation page", 9, site="shop")
    [nine] = await memory.transitions()
    assert nine.reliability > 0.9 and nine.promoted_fact_id is None  # 9 < 10 observations
    assert not [e for e in await memory.events() if e.type == "world.pattern_promoted"]
    await _observe(memory, "confirmation page", 1, site="shop")
    [ten] = await memory.transitions()
    assert ten.promoted_fact_id is not None
    fact = await memory.get(ten.promoted_fact_id)
    assert isinstance(fact, Fact)
    assert (fact.subject, fact.predicate, fact.object) == (
        "submit the form",
        "leads to",
        "confirmation page when site = shop",
    )
    assert fact.confidence == pytest.approx(11 / 12)
    [event] = [e for e in await memory.events() if e.type == "world.pattern_promoted"]
    assert event.payload["transition_id"] == ten.id and event.payload["support"] == 10
    await _observe(memory, "confirmation page", 1, site="shop")  # promoted once only
    assert len([e for e in await memory.events() if e.type == "world.pattern_promoted"]) == 1
    assert (await memory.replay()).mismatches == {}


async def test_reliability_exactly_at_the_threshold_is_not_promoted(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    config = UCMAConfig(predictive=PredictiveConfig(promote_min_support=8))
    async with AsyncMemory(
        db_path, user_id="alice", embedder=local_embedder, config=config
    ) as memory:
        await _observe(memory, "saved", 8)  # (8 + 1) / (8 + 2) = 0.9: not above
        [at] = await memory.transitions()
        assert at.reliability == pytest.approx(0.9) and at.promoted_fact_id is None
        await _observe(memory, "saved", 1)  # 10 / 11 > 0.9
        [above] = await memory.transitions()
        assert above.promoted_fact_id is not None


async def test_decisions_and_outcomes_feed_both_models_without_extra_calls(
    memory: AsyncMemory,
) -> None:
    note = await memory.observe("The reporting database is PostgreSQL 16.")
    for quality, confidence in ((1.0, 0.9), (1.0, 0.9), (-1.0, 0.9), (1.0, 0.8)):
        trace = await memory.decide(
            [note.id],
            decision_type="sql_query",
            summary="wrote a reporting query",
            confidence=confidence,
            metadata={"capability": "sql", "context": {"database": "postgres"}},
        )
        report = await memory.outcome(trace.id, quality, "task_completed")
        assert report.transitions and report.competences
    [sql] = await memory.competences()
    assert (sql.capability, sql.attempts, sql.successes) == ("sql", 4, 3)
    assert sql.predicted_sum == pytest.approx(3.5)
    simulated = await memory.simulate("sql", {"database": "postgres"})
    assert simulated.predicted == "success"
    assert simulated.probability_of("success") == pytest.approx(4 / 7)  # (3+1)/(4+2+1)
    answer = await memory.introspect("Am I good at SQL queries?")
    assert answer.capability == "sql" and answer.source == "self_model"
    assert answer.sample_size == 4
    assert answer.estimated_accuracy == pytest.approx(4 / 6)
    assert answer.low < answer.estimated_accuracy < answer.high
    assert answer.mean_predicted == pytest.approx(0.875) and answer.actual_rate == 0.75
    # Three predictions in the 0.9 bin (2 of 3 came true), one in the 0.8 bin (it did).
    assert answer.calibration_error == pytest.approx(3 / 4 * (0.9 - 2 / 3) + 1 / 4 * 0.2)
    assert len(answer.evidence) == 4 and answer.evidence[-1].success
    # A neutral outcome says nothing about success.
    trace = await memory.decide([note.id], decision_type="sql", summary="a query")
    report = await memory.outcome(trace.id, 0.0, "agent_feedback")
    assert report.transitions == [] and report.competences == []
    assert (await memory.replay()).mismatches == {}


async def test_decide_refuses_malformed_prediction_metadata(memory: AsyncMemory) -> None:
    note = await memory.observe("The reporting database is PostgreSQL 16.")
    for metadata in (
        {"context": "postgres"},
        {"predicted_success": 1.5},
        {"capability": ""},
        {"context": {"a": "x", "A": "y"}},
    ):
        with pytest.raises(ValidationError):
            await memory.decide([note.id], summary="a query", metadata=metadata)
    assert await memory.traces() == []


async def test_trajectories_feed_competence_and_strategy_failures_feed_failure_modes(
    memory: AsyncMemory,
) -> None:
    await memory.learn_from_trajectory(
        "export the monthly report", ["open the report", "click export"], True, domain="reports"
    )
    learned = await memory.learn_from_trajectory(
        "export the yearly report",
        ["open the report", "click export"],
        False,
        "the export times out on large reports",
        domain="reports",
    )
    [reports] = await memory.competences()
    assert (reports.attempts, reports.successes) == (2, 1)
    assert [m.mode for m in reports.failure_modes] == ["the export times out on large reports"]
    strategy = next(p for p in learned.items if p.procedure_type.value == "pitfall")
    await memory.record_procedure_outcome(
        strategy.id, False, failure_reason="the export times out on large reports"
    )
    [reports] = await memory.competences()
    assert reports.attempts == 2 and reports.failure_modes[0].count == 2
    sim = await memory.simulate("reports")
    assert sim.probability_of("success") == pytest.approx(2 / 5)
    assert (await memory.replay()).mismatches == {}


async def test_introspect_without_evidence_says_so(memory: AsyncMemory) -> None:
    unknown = await memory.introspect("Can I fix a carburettor?")
    assert unknown.capability is None and unknown.source == "none"
    assert unknown.estimated_accuracy == 0.5 and unknown.sample_size == 0
    assert unknown.low == pytest.approx(0.025) and unknown.high == pytest.approx(0.975)
    assert unknown.caveats
    named = await memory.introspect("Can I fix a carburettor?", capability="engines")
    assert named.capability == "engines" and named.source == "none"


async def test_weak_domains_and_learning_priorities(memory: AsyncMemory) -> None:
    for success in (False, False, False, True, False):
        reason = None if success else "date arithmetic across time zones"
        await memory.record_competence("scheduling", success, failure_reason=reason)
    for _ in range(5):
        await memory.record_competence("sql", True)
    answer = await memory.introspect("Am I good at scheduling meetings?")
    assert answer.is_weak and answer.weak_domains == ("scheduling",)
    assert answer.estimated_accuracy == pytest.approx(2 / 7)
    [mode] = answer.known_failure_modes
    assert mode.count == 4
    priorities = await memory.learning_priorities()
    assert [(p.type, p.impact) for p in priorities] == [
        ("weak_domain", pytest.approx(5 / 7)),
        ("recurring_failure", pytest.approx(0.4)),
    ]
    assert "occurred 4 times" in priorities[1].description
    assert await memory.learning_priorities(limit=1) == priorities[:1]


async def test_should_attempt_follows_the_seed_formula(memory: AsyncMemory) -> None:
    # No evidence at all: every input is 0.5, so 0.5, which asks for help (not > 0.5).
    blank = await memory.should_attempt("Translate this contract into Finnish")
    assert blank.inputs == dict.fromkeys(blank.weights, 0.5)
    assert blank.score == 0.5 and blank.decision is HelpDecision.ASK_FOR_HELP
    # A strong record: competence 11/12, simulated 11/12 (from the same outcomes).
    for _ in range(10):
        await memory.record_competence("sql", True)
        await memory.observe_transition("sql", "success")
    strong = await memory.should_attempt("Write an SQL query for monthly revenue")
    assert strong.capability == "sql"
    expected = 0.30 * 11 / 12 + 0.25 * 0.5 + 0.25 * 0.5 + 0.20 * 11 / 12
    assert strong.score == pytest.approx(expected)
    assert strong.decision is HelpDecision.ATTEMPT_WITH_CAVEAT
    # A failure mode that applies to the task takes 0.1 off.
    await memory.record_competence("sql", False, failure_reason="recursive queries")
    risky = await memory.should_attempt("Write a recursive SQL query over the org chart")
    assert risky.failure_modes_applied == ("recursive queries",)
    assert risky.adjusted_score == pytest.approx(risky.score - 0.1)
    plain = await memory.should_attempt("Write an SQL query for monthly revenue")
    assert plain.failure_modes_applied == () and plain.adjusted_score == plain.score


async def test_should_attempt_reads_experiences_and_strategies(memory: AsyncMemory) -> None:
    for success in (True, True, True, False):
        await memory.retain(
            f"Exported the monthly sales report to PDF: {'worked' if success else 'failed'}",
            bank="experience",
        )
    baseline = await memory.should_attempt("Export the monthly sales report to PDF")
    assert baseline.experiences_used == 0  # retained text carries no success flag
    learned = await memory.learn_from_trajectory(
        "Export the monthly sales report to PDF",
        ["open the sales report", "choose PDF", "click export"],
        True,
        domain="reports",
    )
    [strategy] = learned.items
    months = ("January", "February", "March", "April")
    for month, success in zip(months, (True, True, True, False), strict=True):
        await memory.record_procedure_outcome(
            strategy.id, success, task=f"export the {month} sales report to PDF"
        )
    advice = await memory.should_attempt(
        "Export the monthly sales report to PDF", capability="reports"
    )
    assert advice.strategies_used == 1
    assert advice.inputs["strategy_success_rate"] == pytest.approx(0.75)
    # Each application became an experience with its success flag.
    assert advice.experiences_used == 4
    assert advice.inputs["past_success_rate"] == pytest.approx(0.75)
    assert advice.capability == "reports"
    assert advice.inputs["competence"] == pytest.approx(2 / 3)  # the trajectory: 1 of 1


async def test_bad_input_is_refused_and_nothing_is_written(memory: AsyncMemory) -> None:
    for call in (
        memory.observe_transition("", "x"),
        memory.observe_transition("a", "b", context={"k": ""}),
        memory.observe_transition("a", "b", context=["k"]),  # type: ignore[arg-type]
        memory.record_competence("sql", True, failure_reason="why"),
        memory.record_competence("sql", "yes"),  # type: ignore[arg-type]
        memory.record_competence("sql", True, predicted=1.2),
        memory.simulate("a", {"k": float("nan")}),
        memory.learning_priorities(limit=0),
    ):
        with pytest.raises(ValidationError):
            await call
    with pytest.raises(SecretRefusedError):
        await memory.observe_transition(
            "log in", "ok", context={"password": "sk-live-abcdef0123456789abcdef0123456789"}
        )
    assert await memory.transitions() == [] and await memory.competences() == []


async def test_scopes_do_not_see_each_other(memory: AsyncMemory) -> None:
    await memory.observe_transition("deploy", "green build")
    await memory.record_competence("deploys", True)
    assert await memory.transitions(user_id="bob") == []
    assert await memory.competences(user_id="bob") == []
    assert (await memory.simulate("deploy", user_id="bob")).predicted is None
    assert (await memory.introspect("deploys", user_id="bob")).source == "none"


async def test_export_then_import_reproduces_the_models(
    memory: AsyncMemory, tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    await _observe(memory, "confirmation page", 3, site="shop")
    await memory.observe_transition("submit the form", "error page", context={"site": "shop"})
    await memory.record_competence("sql", True, predicted=0.7)
    await memory.record_competence("sql", False, predicted=0.6, failure_reason="window functions")
    path = tmp_path / "export.jsonl"
    await memory.export_jsonl(path)
    async with AsyncMemory(tmp_path / "copy.db", user_id="carol", embedder=local_embedder) as other:
        await other.import_jsonl(path)
        mine = {(t.outcome, t.confirmations, t.errors) for t in await memory.transitions()}
        theirs = {(t.outcome, t.confirmations, t.errors) for t in await other.transitions()}
        assert mine == theirs == {("confirmation page", 3, 1), ("error page", 1, 3)}
        [copy] = await other.competences()
        [original] = await memory.competences()
        assert copy.to_dict() | {"id": "", "user_id": ""} == original.to_dict() | {
            "id": "",
            "user_id": "",
        }
        assert (await other.replay()).mismatches == {}
        await other.import_jsonl(path)  # again: nothing doubles
        assert len(await other.transitions()) == 2
        assert (await other.competences())[0].attempts == 2


async def test_an_outcome_that_fails_midway_leaves_nothing_half_written(
    memory: AsyncMemory,
) -> None:
    note = await memory.observe("The reporting database is PostgreSQL 16.")
    trace = await memory.decide(
        [note.id], decision_type="sql", summary="a query", metadata={"context": {"db": "pg"}}
    )
    events_before = len(await memory.events(limit=100_000))
    store = memory._storage.predictive  # type: ignore[union-attr]
    original = store.put_competences

    def fail(competences: object) -> None:  # after the transition and salience were written
        raise RuntimeError("disk unplugged")

    store.put_competences = fail  # type: ignore[method-assign]
    try:
        with pytest.raises(RuntimeError):
            await memory.outcome(trace.id, 1.0, "task_completed")
    finally:
        store.put_competences = original  # type: ignore[method-assign]
    assert not (await memory.trace(trace.id)).outcome_observed
    assert await memory.transitions() == [] and await memory.competences() == []
    assert await memory.salience_history(note.id) == []
    assert len(await memory.events(limit=100_000)) == events_before
    report = await memory.outcome(trace.id, 1.0, "task_completed")  # now it goes through
    assert report.transitions and report.competences
    assert (await memory.replay()).mismatches == {}


async def test_forgetting_a_person_erases_their_transitions_and_competences(
    memory: AsyncMemory,
) -> None:
    await memory.observe_transition("email Zephyrine the invoice", "paid within a week")
    await memory.observe_transition("email the team", "read")
    await memory.record_competence("Zephyrine's invoices", True)
    await memory.record_competence("sql", False, failure_reason="Zephyrine's schema is odd")
    await memory.record_competence("sql", True)  # an attempt whose event names nobody
    await memory.forget_person("Zephyrine")
    assert [t.action for t in await memory.transitions()] == ["email the team"]
    assert await memory.competences() == []
    kinds = {e.type for e in await memory.events(limit=10_000)}
    assert {"world.transition_erased", "self.competence_erased"} <= kinds
    assert (await memory.replay()).mismatches == {}
    await memory.forget_scope()
    assert await memory.transitions() == [] and await memory.events() == []


def test_the_sync_facade_has_the_predictive_operations(sync_memory: object) -> None:
    from ucma.sync import Memory

    assert isinstance(sync_memory, Memory)
    sync_memory.observe_transition("deploy", "green", context={"branch": "main"})
    assert sync_memory.simulate("deploy", {"branch": "main"}).predicted == "green"
    sync_memory.record_competence("deploys", True)
    assert sync_memory.introspect("deploys").sample_size == 1
    assert sync_memory.should_attempt("deploy main").decision.value == "attempt_with_caveat"
    assert sync_memory.learning_priorities() == []
    assert len(sync_memory.transitions()) == len(sync_memory.competences()) == 1


async def test_an_imported_context_passes_the_content_guard(
    memory: AsyncMemory, tmp_path: Path
) -> None:
    import json

    await memory.observe_transition("log in", "dashboard", context={"browser": "firefox"})
    path = tmp_path / "export.jsonl"
    await memory.export_jsonl(path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    [line] = [x for x in lines if x.get("type") == "transition"]
    line["transition"]["id"] = "tr_other"
    line["transition"]["outcome"] = "admin page"
    line["transition"]["context"] = {"token": "sk-live-abcdef0123456789abcdef0123456789"}
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(SecretRefusedError):
        await memory.import_jsonl(path, user_id="carol")
    assert await memory.transitions(user_id="carol") == []
