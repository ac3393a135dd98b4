"""Seed 000's conflict resolution matrix as synthesize applies it, pure: the outcome a
fact states, which facts contradict a prediction, the halving, the uncertainty caveat,
strategy ranking and the preference between disagreeing facts."""

from __future__ import annotations

from ucma.paradigms.predictive_records import Transition
from ucma.paradigms.synthesis import (
    contradicting_facts,
    fact_caveats,
    rank_strategies,
    stated_outcome,
    uncertainty_caveat,
    with_contradictions,
)
from ucma.paradigms.world_model import simulate
from ucma.types import Fact, Procedure, Provenance, StrategyMatch


def _fact(subject: str, predicate: str, obj: str, **fields: object) -> Fact:
    return Fact(
        id=f"fact_{subject}_{obj}",
        user_id="u",
        content=f"{subject} {predicate} {obj}",
        created_at=fields.pop("created_at", 1.0),  # type: ignore[arg-type]
        updated_at=1.0,
        subject=subject,
        predicate=predicate,
        object=obj,
        **fields,  # type: ignore[arg-type]
    )


def _prediction(outcome: str, times: int, **context: str):  # type: ignore[no-untyped-def]
    transition = Transition(
        id="tr_1",
        user_id="u",
        action="submit the form",
        context=dict(context),
        outcome=outcome,
        confirmations=times,
        created_at=1.0,
        updated_at=1.0,
    )
    return simulate("submit the form", dict(context), [transition])


def test_stated_outcome_reads_promoted_patterns_and_plain_facts() -> None:
    assert stated_outcome(_fact("a", "leads to", "error page when logged in = false")) == (
        "error page",
        {"logged in": "false"},
    )
    assert stated_outcome(_fact("a", "Results  In", "Error Page")) == ("error page", {})
    # "when" without conditions is part of the outcome.
    assert stated_outcome(_fact("a", "causes", "a pause when idle")) == ("a pause when idle", {})
    assert stated_outcome(_fact("a", "lives in", "Berlin")) is None


def test_only_a_current_fact_about_the_action_in_a_compatible_context_contradicts() -> None:
    prediction = _prediction("confirmation page", 10, **{"logged in": "true"})
    other = _fact("Submit the  form", "leads to", "error page")
    same = _fact("submit the form", "leads to", "confirmation page")
    elsewhere = _fact("submit the form", "leads to", "login prompt when logged in = false")
    there = _fact("submit the form", "leads to", "error page when logged in = true")
    unrelated = _fact("cancel the order", "leads to", "error page")
    gone = _fact("submit the form", "leads to", "timeout", superseded_at=2.0)
    found = contradicting_facts(prediction, [other, same, elsewhere, there, unrelated, gone])
    assert found == [other, there]
    lowered, caveats = with_contradictions(prediction, found)
    assert lowered.confidence == prediction.confidence * 0.5  # once, for two facts
    assert len(caveats) == 2 and set(caveats) <= set(lowered.caveats)
    assert with_contradictions(prediction, []) == (prediction, [])
    nothing = simulate("submit the form", {}, [])
    assert contradicting_facts(nothing, [other]) == []


def test_uncertainty_caveat() -> None:
    assert "seek more facts" in (uncertainty_caveat(_prediction("ok", 1), 0.3, 3) or "")
    assert uncertainty_caveat(_prediction("ok", 60), 0.3, 3) is None
    assert "no prediction" in (uncertainty_caveat(simulate("x", {}, []), 0.3, 3) or "")


def _match(pid: str, domain: str, runs: int, wins: int, relevance: float) -> StrategyMatch:
    procedure = Procedure(
        id=pid,
        user_id="u",
        content=pid,
        created_at=1.0,
        updated_at=1.0,
        name=pid,
        description=pid,
        domain=domain,
        execution_count=runs,
        success_count=wins,
    )
    return StrategyMatch(procedure, 0.5, relevance, 0.0, "unknown")


def test_strategies_rank_by_competence_times_success_rate_weak_at_half() -> None:
    matches = [
        _match("p_a", "sql", 4, 3, 0.9),  # 0.8 x 0.75 = 0.6, weak: 0.3
        _match("p_b", "email", 4, 2, 0.7),  # 0.9 x 0.5 = 0.45
        _match("p_c", "", 0, 0, 0.8),  # untried, no domain: 0.4 x 0.5 = 0.2
    ]
    competence = {"sql": 0.8, "email": 0.9}
    ranked = rank_strategies(matches, lambda d: competence.get(d or "", 0.4), ["SQL"])
    assert [(r.procedure_id, round(r.score, 6)) for r in ranked] == [
        ("p_b", 0.45),
        ("p_a", 0.3),
        ("p_c", 0.2),
    ]
    assert [r.deprioritised for r in ranked] == [False, True, False]
    assert ranked[2].domain is None and ranked[2].success_rate == 0.5


def test_disagreeing_facts_prefer_the_recent_unless_the_older_is_clearly_more_reliable() -> None:
    def functional(predicate: str) -> bool:
        return predicate == "lives in"

    old = _fact("Dana", "lives in", "Berlin", created_at=1.0)
    new = _fact("Dana", "lives in", "Munich", created_at=2.0, provenance=Provenance.INFERRED)
    [caveat] = fact_caveats([old, new], functional)
    assert "preferring 'Munich' (the more recent) over 'Berlin'" in caveat
    weak = _fact(
        "Dana", "lives in", "Munich", created_at=2.0, provenance=Provenance.GENERATED,
        confidence=0.6,
    )  # fmt: skip
    [caveat] = fact_caveats([old, weak], functional)
    assert "preferring 'Berlin' (older, but from a clearly more reliable source)" in caveat
    assert fact_caveats([old, _fact("Dana", "likes", "tea")], functional) == []
    assert fact_caveats([old, old], functional) == []
