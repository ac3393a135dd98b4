"""The pure goal rules: decomposition by the structure of a description, topics,
progress roll-up, and the contradiction rules, at their edges."""

from __future__ import annotations

import pytest

from ucma.paradigms.goal_conflicts import Statement, goal_conflicts
from ucma.paradigms.goal_records import Goal, GoalStatus
from ucma.paradigms.goals import decompose, rolled_up, topics
from ucma.types import Fact


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        (
            "Book flights, reserve a hotel and buy a rail pass for the Japan trip",
            [
                "Book flights for the Japan trip",
                "Reserve a hotel for the Japan trip",
                "Buy a rail pass for the Japan trip",
            ],
        ),
        ("First renew my passport, then book flights; finally pack", [
            "Renew my passport", "Book flights", "Pack"
        ]),
        ("1. Draft the report 2. Get feedback from Dana 3. Submit it", [
            "Draft the report", "Get feedback from Dana", "Submit it"
        ]),
        ("Plan the trip:\n- book flights\n- reserve a hotel", ["Book flights", "Reserve a hotel"]),
        (
            "Migrate the billing service to Postgres and decommission the MySQL cluster",
            ["Migrate the billing service to Postgres", "Decommission the MySQL cluster"],
        ),
        # One action on several things, or one action: no decomposition.
        ("Book flights and hotels", []),
        ("Write the thesis introduction and the methods chapter", []),
        ("Learn Spanish and Portuguese", []),
        ("Learn the cello", []),
    ],
)  # fmt: skip
def test_decomposition_follows_the_structure_of_the_text(
    description: str, expected: list[str]
) -> None:
    assert decompose(description) == expected


def test_topics_are_the_things_a_goal_refers_to() -> None:
    assert topics("Book a hotel in Lisbon for Dana's visit") == ["hotel", "Lisbon", "Dana"]
    assert topics("Book flights, reserve a hotel and buy a rail pass for the Japan trip") == [
        "flights",
        "hotel",
        "rail pass",
        "Japan trip",
    ]


def _goal(progress: float, status: GoalStatus = GoalStatus.ACTIVE) -> Goal:
    return Goal(
        id="g", user_id="u", description="x", progress=progress, status=status,
        created_at=0.0, updated_at=0.0,
    )  # fmt: skip


def test_roll_up_is_the_mean_of_the_subgoals_not_abandoned() -> None:
    assert rolled_up([_goal(1.0, GoalStatus.COMPLETED), _goal(0.5), _goal(0.0)]) == (
        pytest.approx(0.5),
        False,
    )
    done = rolled_up([_goal(1.0, GoalStatus.COMPLETED), _goal(0.2, GoalStatus.ABANDONED)])
    assert done == (1.0, True)
    assert rolled_up([_goal(0.3, GoalStatus.ABANDONED)]) == (0.0, False)


def _said(*texts: str) -> list[Statement]:
    return [Statement(f"m{i}", text, float(i)) for i, text in enumerate(texts)]


def _reasons(goal: str, *texts: str) -> list[tuple[str, str]]:
    return [(c.reason, c.memory_id) for c in goal_conflicts(goal, _said(*texts), [], now=10.0)]


def test_an_ending_contradicts_only_what_the_goal_is_about_until_it_is_revived() -> None:
    trip = "Book flights for the Japan trip"
    assert _reasons(trip, "We cancelled the Japan trip.") == [("ended", "m0")]
    assert _reasons(trip, "The Japan trip is on hold until autumn.") == [("ended", "m0")]
    assert _reasons(trip, "My dentist appointment got cancelled.") == []
    assert _reasons(trip, "The Japan trip was not cancelled after all.") == []
    assert _reasons(trip, "The Japan trip got cancelled.", "The Japan trip is back on.") == []
    # Accepted by the user: no longer counts.
    said = _said("We cancelled the Japan trip.")
    assert goal_conflicts(trip, said, [], now=10.0, accepted={"m0"}) == []
    assert _reasons("Cancel the gym membership", "I cancelled the gym membership.") == []


def test_a_retired_value_counts_for_the_goals_people_only() -> None:
    assert _reasons("Get promoted at Acme", "I left Acme last month.") == [("retired", "m0")]
    assert _reasons("Get promoted at Acme", "Omar left Acme last month.") == []
    assert _reasons("Visit Dana in Berlin", "Dana moved from Berlin to Munich.") == [
        ("retired", "m0")
    ]
    assert (
        _reasons(
            "Visit Dana in Berlin",
            "Dana moved from Berlin to Munich.",
            "Dana moved back to Berlin.",
        )
        == []
    )


def _fact(fid: str, obj: str, superseded: bool) -> Fact:
    return Fact(
        id=fid, user_id="u", content=f"Dana lives in {obj}", created_at=0.0, updated_at=0.0,
        subject="Dana", predicate="lives_in", object=obj,
        superseded_at=5.0 if superseded else None,
    )  # fmt: skip


def test_a_replaced_fact_the_goal_names_contradicts_it() -> None:
    old, new = _fact("f1", "Berlin", True), _fact("f2", "Munich", False)
    [conflict] = goal_conflicts("Visit Dana in Berlin", [], [old, new], now=10.0)
    assert (conflict.reason, conflict.memory_id) == ("changed", "f2")
    assert "Munich" in conflict.detail
    # Restated as current again: no conflict; a goal not about it: none either.
    again = _fact("f3", "Berlin", False)
    assert goal_conflicts("Visit Dana in Berlin", [], [old, new, again], now=10.0) == []
    assert goal_conflicts("Visit Omar in Berlin", [], [old, new], now=10.0) == []
