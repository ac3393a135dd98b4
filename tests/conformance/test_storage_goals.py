"""GoalStore conformance: goals round-trip whole, list in the active order (priority,
then deadline with none last, then age) and by status, stay in their scope, and are
fresh copies; an id another scope holds is refused."""

from __future__ import annotations

import dataclasses

import pytest

from ucma.errors import ValidationError
from ucma.paradigms.goal_records import Goal, GoalConflict, GoalOrigin, GoalStatus
from ucma.storage.base import Storage
from ucma.types import Scope

ALICE = Scope("alice", "assistant")
BOB = Scope("bob", "assistant")


def _goal(goal_id: str, scope: Scope = ALICE, **fields: object) -> Goal:
    values: dict[str, object] = {"description": f"goal {goal_id}", "created_at": 1.0}
    values.update(fields)
    values["updated_at"] = values["created_at"]
    return Goal(id=goal_id, user_id=scope.user_id, agent_id=scope.agent_id, **values)


def test_a_goal_round_trips_whole(storage: Storage) -> None:
    goal = _goal(
        "goal_1",
        priority=0.7,
        status=GoalStatus.SUSPENDED,
        progress=0.25,
        deadline=99.5,
        parent_id="goal_0",
        subgoals=["goal_2", "goal_3"],
        blocking_on=["knowledge: hotel"],
        conflicts=[GoalConflict("ep_1", "The trip got cancelled.", "ended", "it ended")],
        accepted=["ep_0"],
        origin=GoalOrigin.RULES,
        last_worked=5.0,
        completed_at=None,
    )
    storage.goals.put([goal])
    found = storage.goals.get(ALICE, "goal_1")
    assert found == goal
    assert found is not goal
    found.subgoals.append("goal_9")  # a fresh copy: nothing stored changes
    assert storage.goals.get(ALICE, "goal_1") == goal
    assert storage.goals.get_many(ALICE, ["goal_1", "goal_nope"]) == {"goal_1": goal}
    assert storage.goals.count(ALICE) == 1
    moved = dataclasses.replace(goal, progress=0.5, status=GoalStatus.ACTIVE, conflicts=[])
    storage.goals.put([moved])
    assert storage.goals.get(ALICE, "goal_1") == moved and storage.goals.count(ALICE) == 1


def test_goals_list_in_the_active_order_and_by_status(storage: Storage) -> None:
    storage.goals.put(
        [
            _goal("low", priority=0.2, created_at=1.0),
            _goal("late", priority=0.9, deadline=300.0, created_at=2.0),
            _goal("soon", priority=0.9, deadline=100.0, created_at=3.0),
            _goal("open", priority=0.9, created_at=4.0),
            _goal("older-open", priority=0.9, created_at=0.5),
            _goal("done", priority=1.0, status=GoalStatus.COMPLETED, progress=1.0),
        ]
    )
    order = [g.id for g in storage.goals.list(ALICE, statuses=[GoalStatus.ACTIVE])]
    assert order == ["soon", "late", "older-open", "open", "low"]
    assert [g.id for g in storage.goals.list(ALICE, statuses=[GoalStatus.COMPLETED])] == ["done"]
    assert len(storage.goals.list(ALICE)) == 6
    assert storage.goals.list(ALICE, statuses=[]) == []
    page = storage.goals.list(ALICE, statuses=[GoalStatus.ACTIVE], limit=2, offset=1)
    assert [g.id for g in page] == ["late", "older-open"]


def test_goals_stay_in_their_scope(storage: Storage) -> None:
    storage.goals.put([_goal("goal_a")])
    assert storage.goals.get(BOB, "goal_a") is None
    assert storage.goals.get_many(BOB, ["goal_a"]) == {}
    assert storage.goals.list(BOB) == [] and storage.goals.count(BOB) == 0
    with pytest.raises(ValidationError, match="already in use"):
        storage.goals.put([_goal("goal_a", BOB, description="Bob's")])
    assert storage.goals.get(ALICE, "goal_a") == _goal("goal_a")


def test_out_of_range_values_are_refused(storage: Storage) -> None:
    for bad in (_goal("g", priority=1.5), _goal("g", progress=-0.1)):
        with pytest.raises(ValidationError):
            storage.goals.put([bad])
    assert storage.goals.count(ALICE) == 0
