"""The procedural benchmark's world (bench/procedural.py) keeps its rules to itself: what
the agent reads (task text, facts, error messages) never states which action works."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parents[2] / "bench" / "procedural.py"
_SPEC = importlib.util.spec_from_file_location("bench_procedural", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
world = importlib.util.module_from_spec(_SPEC)
sys.modules["bench_procedural"] = world  # dataclasses resolve their module by name
_SPEC.loader.exec_module(world)


def test_the_task_set_is_large_enough_and_spread_over_the_domains() -> None:
    tasks = world.make_tasks(360, 1)
    assert len(tasks) == 360
    assert len({t.domain.name for t in tasks}) == len(world.DOMAINS) >= 5


def test_what_the_agent_reads_names_no_action_and_no_rule() -> None:
    for task in world.make_tasks(360, 2):
        actions = world.World.actions(task.domain)
        readable = [task.text.lower(), *(f["object"] for f in task.facts())]
        for action in actions:
            assert not any(action in text for text in readable)
        for action in actions:
            success, reason = world.World.attempt(task, action)
            if success:
                continue
            # The error names the step that failed and a symptom, never another action.
            assert reason is not None and reason.startswith(f"'{action}' failed: ")
            assert not any(other in reason for other in actions if other != action)


def test_every_situation_has_exactly_the_actions_its_hidden_rules_allow() -> None:
    for task in world.make_tasks(120, 3):
        working = [a for a in world.World.actions(task.domain) if world.World.attempt(task, a)[0]]
        locked = task.restrictive and task.third_restrictive
        assert working == (
            [task.domain.careful]
            if locked
            else [task.domain.specific[task.first], task.domain.shortcut]
        )
