"""``synthesize`` through the public API (seed 000's response synthesis; issue 16): every
paradigm's part for one query, each row of the conflict resolution matrix it applies,
the per-scope cache invalidated by every write that changes what it holds, and typed
errors for bad input."""

from __future__ import annotations

import json

import pytest

from ucma.engine import AsyncMemory
from ucma.errors import ScopeError, ValidationError
from ucma.paradigms.synthesis import CONTRADICTED_FACTOR, WEAK_FACTOR
from ucma.serialization import synthesis_to_dict

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

FORM = "submit the order form"


async def _observe(memory: AsyncMemory, outcome: str, times: int, **context: object) -> None:
    for _ in range(times):
        await memory.observe_transition(FORM, outcome, context=context)


async def test_a_fact_that_contradicts_the_prediction_halves_its_confidence(
    memory: AsyncMemory,
) -> None:
    await _observe(memory, "confirmation page", 12, **{"logged in": True})
    plain = await memory.synthesize("What will happen if I submit the order form?", action=FORM)
    simulated = await memory.simulate(FORM)
    assert plain.prediction is not None and plain.prediction.predicted == "confirmation page"
    assert plain.prediction.confidence == pytest.approx(simulated.confidence)
    assert not any("conflict with known fact" in c for c in plain.caveats)

    await memory.assert_fact(FORM, "leads to", "error page when logged in = true")
    found = await memory.synthesize("What will happen if I submit the order form?", action=FORM)
    assert found.prediction is not None
    assert found.prediction.confidence == pytest.approx(simulated.confidence * CONTRADICTED_FACTOR)
    [caveat] = [c for c in found.caveats if "conflict with known fact" in c]
    assert "error page" in caveat
    assert caveat in found.prediction.caveats  # the prediction carries it too

    # A fact about another context, or one that agrees, is no contradiction.
    other = await memory.synthesize(
        "What will happen if I submit the order form?",
        action=FORM,
        context={"logged in": False},
    )
    assert not any("conflict with known fact" in c for c in other.caveats)


async def test_a_fact_agreeing_with_the_prediction_changes_nothing(memory: AsyncMemory) -> None:
    await _observe(memory, "confirmation page", 12)
    await memory.assert_fact(FORM, "leads to", "confirmation page")
    found = await memory.synthesize("What happens if I submit it?", action=FORM)
    assert found.prediction is not None
    assert found.prediction.confidence == pytest.approx((await memory.simulate(FORM)).confidence)


async def test_an_uncertain_prediction_says_to_widen_and_seek_facts(memory: AsyncMemory) -> None:
    await _observe(memory, "confirmation page", 1)
    few = await memory.synthesize("What will happen if I submit the order form?", action=FORM)
    [caveat] = [c for c in few.caveats if "uncertain prediction" in c]
    assert "seek more facts" in caveat
    await _observe(memory, "confirmation page", 39)
    many = await memory.synthesize("What will happen if I submit the order form?", action=FORM)
    assert not any("uncertain prediction" in c for c in many.caveats)
    never = await memory.synthesize("What will happen if I cancel?", action="cancel the order")
    assert never.prediction is not None and never.prediction.predicted is None
    assert any("seek facts" in c for c in never.caveats)


async def _two_strategies(memory: AsyncMemory) -> None:
    await memory.learn_from_trajectory(
        "export the quarterly report as a pdf",
        ["open the report", "print to pdf", "attach it"],
        True,
        domain="reporting",
    )
    await memory.learn_from_trajectory(
        "export the quarterly report as a spreadsheet",
        ["open the report", "download the csv", "open it in a spreadsheet"],
        True,
        domain="spreadsheets",
    )


async def test_a_strategy_of_a_weak_domain_is_deprioritised(memory: AsyncMemory) -> None:
    await _two_strategies(memory)
    for success in (True, False, False, False, False, False):
        await memory.record_competence("reporting", success)
    for success in (True, True, True, True, True, False):
        await memory.record_competence("spreadsheets", success)
    found = await memory.synthesize(
        "How do I export the quarterly report?", task="export the quarterly report"
    )
    by_domain = {s.domain: s for s in found.strategies if s.kind == "strategy"}
    weak, strong = by_domain["reporting"], by_domain["spreadsheets"]
    assert weak.deprioritised and not strong.deprioritised
    assert weak.score == pytest.approx(weak.competence * weak.success_rate * WEAK_FACTOR)
    assert strong.score == pytest.approx(strong.competence * strong.success_rate)
    # Beta(1, 1) means; each trajectory counted one successful attempt of its domain.
    assert weak.competence == pytest.approx(3 / 9)  # 2 of 7
    assert strong.competence == pytest.approx(7 / 9)  # 6 of 7
    assert found.strategies.index(strong) < found.strategies.index(weak)
    assert any("deprioritised" in c and "reporting" in c for c in found.caveats)


async def test_strategies_rank_by_competence_times_success_rate(memory: AsyncMemory) -> None:
    await _two_strategies(memory)
    strategies = {
        m.procedure.domain: m.procedure
        for m in await memory.strategies_for("export the quarterly report", limit=10)
        if not m.is_pitfall
    }
    # The pdf route worked 1 time in 4, the spreadsheet route 3 in 4: success rate
    # decides between domains of the same (unmeasured) competence.
    for domain, wins in (("reporting", 1), ("spreadsheets", 3)):
        for n in range(4):
            await memory.record_procedure_outcome(strategies[domain].id, n < wins)
    found = await memory.synthesize(
        "How do I export the quarterly report?", task="export the quarterly report"
    )
    ranked = [s for s in found.strategies if s.kind == "strategy"]
    assert [s.domain for s in ranked] == ["spreadsheets", "reporting"]
    assert [s.success_rate for s in ranked] == [0.75, 0.25]
    for s in ranked:
        assert s.score == pytest.approx(s.competence * s.success_rate)
        assert not s.deprioritised
    # Competence moves the order: the spreadsheet domain turns out weak.
    for _ in range(6):
        await memory.record_competence("spreadsheets", False)
    again = await memory.synthesize(
        "How do I export the quarterly report?", task="export the quarterly report"
    )
    assert [s.domain for s in again.strategies if s.kind == "strategy"] == [
        "reporting",
        "spreadsheets",
    ]


async def test_two_current_facts_that_disagree_name_the_one_to_prefer(
    memory: AsyncMemory,
) -> None:
    # Same time, other sources, similar confidence: the conflict rules ask the user
    # and both stay current (disputed); synthesis says which to go by meanwhile.
    await memory.assert_fact("Dana", "lives in", "Berlin", provenance="user_stated")
    await memory.assert_fact("Dana", "lives in", "Munich", provenance="inferred")
    assert len([f for f in await memory.facts_about("Dana") if f.is_current]) == 2
    newer = await memory.synthesize("Where does Dana live?")
    [caveat] = [c for c in newer.caveats if "facts disagree" in c]
    assert "preferring 'Munich' (the more recent) over 'Berlin'" in caveat

    # The newer value from a clearly less reliable source (generated text at 0.8
    # against a statement at 0.9): the older one is preferred.
    await memory.assert_fact("Omar", "works at", "Acme", provenance="user_stated", confidence=0.9)
    await memory.assert_fact("Omar", "works at", "Globex", provenance="generated", confidence=0.8)
    reliable = await memory.synthesize("Where does Omar work?")
    [caveat] = [c for c in reliable.caveats if "Omar works at" in c]
    assert "preferring 'Acme' (older, but from a clearly more reliable source)" in caveat

    # Settled by the rules (a stated change): one current fact, nothing to say.
    await memory.assert_fact("Lea", "lives in", "Oslo")
    await memory.assert_fact("Lea", "lives in", "Bergen")
    settled = await memory.synthesize("Where does Lea live?")
    assert not any("Lea lives in" in c for c in settled.caveats)


async def test_parts_follow_the_router_and_the_named_task(memory: AsyncMemory) -> None:
    await memory.observe("I prefer green tea in the afternoon.")
    await memory.record_competence("sql queries", True)
    good_at = await memory.synthesize("Am I good at SQL queries?")
    assert good_at.paradigms == ("declarative", "predictive")
    assert good_at.competence is not None and good_at.competence.capability == "sql queries"
    assert good_at.advice is not None and good_at.strategies == ()
    await memory.observe("The team lunch is on Fridays at noon in the rooftop cafe.")
    what = await memory.synthesize("When is the team lunch?")
    assert "declarative" in what.paradigms and what.competence is None and what.advice is None
    assert "rooftop" in what.facts[0].content and what.preferences == ()
    how = await memory.synthesize("How do I brew tea in the afternoon?")
    assert "declarative" not in how.paradigms and how.facts == ()
    assert [p.stance for p in how.preferences] == ["green tea in the afternoon"]
    widest = await memory.synthesize("When is the team lunch?", limit=100)
    assert widest.facts and len(widest.facts) <= 100
    helped = await memory.synthesize("What do I like to drink?", task="make tea")
    assert helped.paradigms == ("declarative", "procedural", "predictive")
    assert helped.task == "make tea" and helped.competence is not None
    assert json.loads(json.dumps(synthesis_to_dict(helped)))["task"] == "make tea"


async def test_writes_invalidate_the_cache(memory: AsyncMemory) -> None:
    query = "What should I drink this afternoon?"
    first = await memory.synthesize(query, task="pick a drink")
    assert first.preferences == () and first.goals == () and not first.cached
    again = await memory.synthesize(query, task="pick a drink")
    assert again.cached  # nothing written since: served from the scope's cache

    formed = await memory.retain("I prefer green tea in the afternoon.", bank="opinion")
    after_opinion = await memory.synthesize(query, task="pick a drink")
    [held] = after_opinion.preferences
    assert "green tea" in held.stance and held.memory_id == formed.id

    stronger = await memory.reinforce_opinion(held.id)
    reinforced = await memory.synthesize(query, task="pick a drink")
    assert reinforced.preferences[0].confidence == pytest.approx(stronger.confidence)
    assert stronger.confidence > held.confidence

    goal = await memory.add_goal("drink more tea and less coffee in the afternoon")
    with_goal = await memory.synthesize(query, task="pick a drink")
    assert [g.id for g in with_goal.goals] == [goal.id]
    await memory.update_progress(goal.id, progress=1.0)  # completed: no longer active
    assert (await memory.synthesize(query, task="pick a drink")).goals == ()

    before = await memory.synthesize(query, task="pick a drink")
    assert before.competence is not None and before.competence.source == "none"
    await memory.record_competence("pick a drink", True)
    measured = await memory.synthesize(query, task="pick a drink")
    assert measured.competence is not None and measured.competence.source == "self_model"

    assert not [s for s in measured.strategies if s.kind == "strategy"]
    await memory.learn_from_trajectory(
        "pick a drink", ["check the time", "boil water", "brew green tea"], True, domain="drinks"
    )
    learned = await memory.synthesize(query, task="pick a drink")
    assert [s.domain for s in learned.strategies if s.kind == "strategy"] == ["drinks"]

    current = stronger
    while current.id == held.id:  # evidence against it until it is replaced
        current = await memory.weaken_opinion(
            held.id, weight=1.0, stance="black coffee in the afternoon"
        )
    replaced = await memory.synthesize(query, task="pick a drink")
    assert [p.stance for p in replaced.preferences] == ["black coffee in the afternoon"]


async def test_what_synthesize_returns_is_the_callers_own(memory: AsyncMemory) -> None:
    await memory.retain("I prefer green tea in the afternoon.", bank="opinion")
    first = await memory.synthesize("What should I drink?")
    first.preferences[0].stance = "changed by the caller"
    second = await memory.synthesize("What should I drink?")
    assert second.cached and "green tea" in second.preferences[0].stance


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"query": ""}, ValidationError),
        ({"query": "   "}, ValidationError),
        ({"query": 3}, ValidationError),
        ({"query": "x", "limit": 0}, ValidationError),
        ({"query": "x", "limit": 101}, ValidationError),
        ({"query": "x", "task": ""}, ValidationError),
        ({"query": "x", "action": "a" * 501}, ValidationError),
        ({"query": "x", "context": ["not", "a", "mapping"]}, ValidationError),
        ({"query": "x", "context": {"k": float("nan")}}, ValidationError),
    ],
)
async def test_bad_input_is_a_typed_error(
    memory: AsyncMemory, kwargs: dict[str, object], error: type[Exception]
) -> None:
    with pytest.raises(error):
        await memory.synthesize(**kwargs)  # type: ignore[arg-type]


async def test_a_scope_is_required(db_path: object, local_embedder: object) -> None:
    async with AsyncMemory(db_path, embedder=local_embedder) as memory:  # type: ignore[arg-type]
        with pytest.raises(ScopeError):
            await memory.synthesize("anything")


def test_the_sync_memory_synthesizes(sync_memory: object) -> None:
    sync_memory.observe("I prefer window seats on long flights.")  # type: ignore[attr-defined]
    found = sync_memory.synthesize("Which seat do I like on flights?")  # type: ignore[attr-defined]
    assert found.preferences and "window" in found.preferences[0].stance
