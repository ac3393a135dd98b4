"""The pure parts of strategies: the Wilson lower bound, scores, grounding in facts,
generalising preconditions, and rule distillation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ucma.errors import ProviderError
from ucma.paradigms.distillation import distill_by_rules, parse_distilled
from ucma.paradigms.procedural import generalise, ground, strategy_score, wilson_lower_bound
from ucma.types import Condition, ProcedureType, RiskLevel


def test_one_success_in_one_ranks_below_45_in_50() -> None:
    assert wilson_lower_bound(1, 1) == pytest.approx(0.2065, abs=1e-4)
    assert wilson_lower_bound(45, 50) == pytest.approx(0.7864, abs=1e-4)
    assert strategy_score(0.8, wilson_lower_bound(45, 50)) > strategy_score(
        0.8, wilson_lower_bound(1, 1)
    )


def test_nothing_tried_has_no_evidence() -> None:
    assert wilson_lower_bound(0, 0) == 0.0
    assert strategy_score(0.6, 0.0) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="successes"):
        wilson_lower_bound(3, 2)


@given(st.integers(0, 200), st.integers(1, 200))
def test_lower_bound_is_below_the_rate_and_grows_with_evidence(successes: int, extra: int) -> None:
    trials = successes + extra
    bound = wilson_lower_bound(successes, trials)
    assert 0.0 <= bound <= successes / trials
    # The same rate measured on ten times the trials is trusted more.
    assert wilson_lower_bound(10 * successes, 10 * trials) >= bound - 1e-12


def test_grounding_sorts_conditions_by_current_facts() -> None:
    facts = {("results list", "layout"): ["paginated"], ("user", "likes"): ["tea"]}
    conditions = [
        Condition("Results list", "layout", "Paginated"),  # met, case-insensitively
        Condition("results list", "layout", "single page"),  # functional: contradicted
        Condition("user", "likes", "coffee"),  # multi-valued: unknown, not contradicted
        Condition("site", "auth", "token"),  # nothing known
    ]
    grounding = ground(
        conditions,
        lambda s, p: facts.get((s.lower(), p), []),
        lambda predicate: predicate == "layout",
    )
    assert grounding.met == (conditions[0],)
    assert grounding.contradicted == (conditions[1],)
    assert grounding.unknown == (conditions[2], conditions[3])
    assert grounding.verdict == "contradicted"
    assert ground([], lambda s, p: [], lambda p: True).verdict == "met"


def test_generalising_keeps_what_held_both_times() -> None:
    kept = [Condition("site", "pagination", "links"), Condition("site", "login", "optional")]
    new = [Condition("Site", "pagination", "links"), Condition("site", "login", "required")]
    assert generalise(kept, new) == [kept[0]]


def test_rules_keep_the_strategy_of_a_success_and_the_pitfall_of_a_failure() -> None:
    context = [Condition("site", "pagination", "links")]
    [strategy] = distill_by_rules(
        "Collect the reviews", ["follow the next links", "parse the items"], True, None, context
    )
    assert strategy.procedure_type is ProcedureType.STRATEGY
    assert strategy.title == "follow the next links then parse the items"
    assert [s.description for s in strategy.steps] == ["follow the next links", "parse the items"]
    assert strategy.preconditions == tuple(context)
    [pitfall] = distill_by_rules(
        "Collect the reviews",
        ["log in", "download the dump", "parse the items"],
        False,
        "'download the dump' failed: request rejected",
        context,
    )
    assert pitfall.procedure_type is ProcedureType.PITFALL
    assert [(s.description, s.action_type) for s in pitfall.steps] == [
        ("download the dump", "avoid")
    ]
    assert pitfall.failure_modes == ("'download the dump' failed: request rejected",)
    assert pitfall.risk_level is RiskLevel.HIGH
    # Without a step named in the reason, the last step is the one that failed.
    [last] = distill_by_rules("t", ["a step", "another step"], False, "it broke")
    assert last.steps[0].description == "another step"


def test_an_llm_answer_is_checked_whole() -> None:
    items = parse_distilled(
        [
            {"title": "t1", "description": "d", "steps": ["a"]},
            {"title": "t2", "description": "d", "steps": ["b"], "risk_level": "medium"},
            {"title": "t3", "description": "d", "steps": ["c"]},
            {"title": "t4", "description": "d", "steps": ["d"]},
        ],
        True,
    )
    assert [i.title for i in items] == ["t1", "t2", "t3"]  # at most three
    assert items[1].risk_level is RiskLevel.MEDIUM
    for bad in ([], [{"title": "t", "description": "d", "steps": []}], [{"steps": ["a"]}], "x"):
        with pytest.raises(ProviderError):
            parse_distilled(bad, False)
