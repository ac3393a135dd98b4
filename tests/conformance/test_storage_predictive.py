"""PredictiveStore (the world model's transitions, the self-model's competences), on
every backend: round trips, keys folded for case and spacing, ordering, promotion
candidates, scope isolation and refusals."""

from __future__ import annotations

import pytest

from ucma.errors import ValidationError
from ucma.paradigms.predictive_records import (
    Competence,
    CompetenceEvidence,
    FailureMode,
    Transition,
)
from ucma.storage.base import Storage
from ucma.types import Scope

ALICE = Scope("alice", "assistant")
BOB = Scope("bob", "assistant")


def transition(scope: Scope, n: int, outcome: str, c: int, e: int, **context: str) -> Transition:
    return Transition(
        id=f"tr-{scope.user_id}-{n}",
        user_id=scope.user_id,
        agent_id=scope.agent_id,
        action="Submit  the form",
        context=dict(context),
        outcome=outcome,
        confirmations=c,
        errors=e,
        created_at=1000.0 + n,
        updated_at=1000.0 + n,
    )


def competence(scope: Scope, name: str, attempts: int, successes: int) -> Competence:
    return Competence(
        id=f"cap-{scope.user_id}-{name}",
        user_id=scope.user_id,
        agent_id=scope.agent_id,
        capability=name,
        attempts=attempts,
        successes=successes,
        predicted_count=1,
        predicted_sum=0.7,
        brier_sum=0.09,
        bins=[[1.0, 0.7, 1.0]],
        failure_modes=[FailureMode("recursive queries ✓", 2, 1.0, 2.0)],
        evidence=[CompetenceEvidence(True, 0.7, "caller", None, 2.0)],
        created_at=1.0,
        updated_at=2.0,
    )


def test_transitions_round_trip_and_are_read_by_folded_keys(storage: Storage) -> None:
    shop = transition(ALICE, 1, "confirmation page", 9, 1, **{"Site": "Shop"})
    error = transition(ALICE, 2, "error page", 1, 9, site="shop")
    other = transition(ALICE, 3, "login prompt", 4, 0)
    storage.predictive.put_transitions([shop, error, other])
    assert storage.predictive.get_transition(ALICE, shop.id) == shop
    found = storage.predictive.transitions(
        ALICE, action="submit the FORM", context={"site ": " SHOP"}
    )
    assert [t.id for t in found] == [shop.id, error.id]  # most observed, then most confirmed
    assert len(storage.predictive.transitions(ALICE, action="submit the form")) == 3
    assert storage.predictive.transitions(ALICE, limit=1, offset=1)[0].id == error.id
    assert storage.predictive.count(ALICE) == {"transitions": 3, "competences": 0}


def test_promotion_candidates_need_support_and_reliability(storage: Storage) -> None:
    storage.predictive.put_transitions(
        [
            transition(ALICE, 1, "a", 10, 0),  # 11/12, support 10
            transition(ALICE, 2, "b", 9, 0),  # 10/11, support 9
            transition(ALICE, 3, "c", 8, 0, k="v"),  # 9/10: not above 0.9
        ]
    )
    assert [t.outcome for t in storage.predictive.promotable(ALICE, 0.9, 9)] == ["a", "b"]
    assert [t.outcome for t in storage.predictive.promotable(ALICE, 0.9, 10)] == ["a"]
    assert storage.predictive.promotable(ALICE, 0.9, 8)[-1].outcome == "b"
    promoted = transition(ALICE, 1, "a", 10, 0)
    promoted.promoted_fact_id = "fact_1"
    storage.predictive.put_transitions([promoted])
    assert [t.outcome for t in storage.predictive.promotable(ALICE, 0.9, 9)] == ["b"]


def test_competences_round_trip_by_folded_capability(storage: Storage) -> None:
    sql, tea = competence(ALICE, "SQL  queries", 4, 3), competence(ALICE, "tea", 9, 1)
    storage.predictive.put_competences([sql, tea])
    assert storage.predictive.get_competence(ALICE, "sql queries") == sql
    assert [c.capability for c in storage.predictive.competences(ALICE)] == ["tea", "SQL  queries"]
    updated = competence(ALICE, "SQL  queries", 5, 4)
    storage.predictive.put_competences([updated])
    assert storage.predictive.get_competence(ALICE, "SQL queries") == updated


def test_scopes_are_apart_and_bad_records_are_refused(storage: Storage) -> None:
    storage.predictive.put_transitions([transition(ALICE, 1, "a", 1, 0)])
    storage.predictive.put_competences([competence(ALICE, "sql", 1, 1)])
    assert storage.predictive.get_transition(BOB, "tr-alice-1") is None
    assert storage.predictive.transitions(BOB) == [] and storage.predictive.competences(BOB) == []
    assert storage.predictive.get_competence(BOB, "sql") is None
    stolen = transition(ALICE, 1, "a", 5, 0)
    stolen.user_id = "bob"
    with pytest.raises(ValidationError):
        storage.predictive.put_transitions([stolen])  # an id held by another scope
    twin = transition(ALICE, 9, "A", 1, 0)  # the same action, context and outcome
    with pytest.raises(ValidationError):
        storage.predictive.put_transitions([twin])
    with pytest.raises(ValidationError):
        storage.predictive.put_competences([competence(ALICE, "other", 1, 2)])
    with pytest.raises(ValidationError):
        storage.predictive.put_transitions([transition(ALICE, 5, "x", -1, 0)])
    assert storage.predictive.get_transition(ALICE, "tr-alice-1").confirmations == 1  # type: ignore[union-attr]
