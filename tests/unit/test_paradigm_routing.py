"""Seed 000's routing examples: every row of its table is a case, through the router's
plan (``route``), plus other wordings of each kind of question."""

from __future__ import annotations

import pytest

from ucma.retrieval.paradigms import Paradigm, paradigms_of
from ucma.retrieval.router import route

D, P, F = Paradigm.DECLARATIVE, Paradigm.PROCEDURAL, Paradigm.PREDICTIVE
NOW = 1_700_000_000.0

SEED_TABLE = [
    ("What is the user's preferred language?", {D}),  # fact retrieval
    ("How do I navigate paginated results?", {P}),  # strategy retrieval
    ("What will happen if I submit this form?", {F}),  # outcome simulation
    ("Help me complete my project", {D, P, F}),  # facts + strategies + goals
    ("Am I good at SQL queries?", {F, D}),  # self-model + evidence
    ("What did we discuss yesterday?", {D}),  # experience retrieval
]

# The same rules on other wordings of each kind of question.
MORE = [
    ("Where does Dana live now?", {D}),
    ("Which theme does Alice prefer?", {D}),
    ("What are the steps to deploy the billing service?", {P}),
    ("Walk me through rotating the API keys", {P}),
    ("Will the build pass if I upgrade numpy?", {F}),
    ("What happens if the payment times out?", {F}),
    ("Should I take the offer from Globex?", {F}),
    ("How far along is my thesis goal?", {F}),
    ("Can you handle Kubernetes deployments?", {F, D}),
    ("What are my weaknesses when writing tests?", {F, D}),
    ("Let's migrate the database to Postgres", {D, P, F}),
    ("I need to renew my passport before the Japan trip", {D, P, F}),
    ("quantum entanglement", {D, P, F}),  # nothing recognisable: all three
]


@pytest.mark.parametrize(("query", "expected"), SEED_TABLE + MORE)
def test_each_query_routes_to_its_paradigms(query: str, expected: set[Paradigm]) -> None:
    plan = route(query, reference_time=NOW)
    assert set(plan.paradigms) == expected
    # A stable order, declarative first, for explanations and comparisons.
    assert list(plan.paradigms) == [p for p in (D, P, F) if p in expected]


def test_a_known_name_is_a_fact_lookup_cue() -> None:
    query = "Will Dana like the new office?"
    assert set(paradigms_of(query)) == {F}
    assert set(route(query, reference_time=NOW, known_entities=["Dana"]).paradigms) == {D, F}
