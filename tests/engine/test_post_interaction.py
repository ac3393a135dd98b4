"""``post_interaction`` through the public API (seed 000's post-interaction learning;
issue 16): one call updates every paradigm, each change an event, all in one
transaction (a failure injected midway leaves nothing), then pattern promotion; typed
errors for bad input; replay equals live state."""

from __future__ import annotations

from typing import Any

import pytest

from ucma.engine import AsyncMemory
from ucma.errors import NotFoundError, ValidationError
from ucma.paradigms.goal_records import GoalStatus
from ucma.types import Bank, Episode, Procedure

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

QUERY = "Draft an email to the client about the delay"


async def _setup(memory: AsyncMemory) -> tuple[str, str]:
    """A strategy of the email domain and a goal; returns their ids."""
    learned = await memory.learn_from_trajectory(
        "draft an email to a client",
        ["read the thread", "state the ask first", "propose a date"],
        True,
        domain="email",
    )
    goal = await memory.add_goal("answer every client email this week")
    return learned.items[0].id, goal.id


async def test_one_call_updates_every_paradigm(memory: AsyncMemory) -> None:
    strategy_id, goal_id = await _setup(memory)
    before = (await memory.competences())[0]
    assert (before.capability, before.attempts) == ("email", 1)  # the trajectory's
    learned = await memory.post_interaction(
        QUERY,
        "Here is a short draft with the new date first.",
        success=True,
        quality=0.9,
        capability="email",
        predicted=0.7,
        action="send the draft",
        context={"recipient": "client"},
        strategy_id=strategy_id,
        trajectory=["read the thread", "state the new date first", "send it"],
        goal_id=goal_id,
        progress_delta=0.5,
        preferences=["I prefer short emails with the ask in the first line."],
        entities=["Acme Corp"],
        domain="email",
    )

    # Declarative: the experience, with the outcome should_attempt reads.
    experience = await memory.get(learned.experience_id)
    assert isinstance(experience, Episode) and experience.bank is Bank.EXPERIENCE
    assert experience.content == f"Handled query '{QUERY}': successful"
    assert experience.metadata["success"] is True and experience.metadata["quality"] == 0.9
    assert "Acme Corp" in experience.participants
    # ... and the stated preference, an opinion formed at 0.6.
    [opinion_id] = learned.opinions
    opinion = await memory.get_opinion(opinion_id)
    assert opinion.confidence == pytest.approx(0.6) and "short emails" in opinion.stance
    # Procedural: the used strategy's statistics, and what the trajectory taught.
    used = await memory.get(strategy_id)
    assert isinstance(used, Procedure)
    assert (used.execution_count, used.success_count) == (1, 1)
    assert learned.strategy_id == strategy_id and learned.strategies_extracted
    # Predictive: the world model, the self-model (one attempt, with its prediction)
    # and the goal.
    assert learned.transition is not None
    assert (learned.transition.action, learned.transition.outcome) == ("send the draft", "success")
    assert learned.transition.context == {"recipient": "client"}
    assert (await memory.simulate("send the draft", {"recipient": "client"})).predicted == (
        "success"
    )
    assert learned.competence is not None
    assert (learned.competence.attempts, learned.competence.successes) == (2, 2)
    assert learned.competence.predicted_count == 1
    assert learned.goal is not None and learned.goal.progress == pytest.approx(0.5)
    assert (await memory.get_goal(goal_id)).last_worked is not None
    assert not learned.failure_mode_added and learned.failure_experience_id is None

    # Each change an event, all of them reported.
    assert {
        "memory.stored",
        "opinion.formed",
        "procedure.outcome_recorded",
        "world.transition_observed",
        "self.attempt_recorded",
        "goal.progressed",
    } <= set(learned.events)
    assert {"strategy.learned", "strategy.merged"} & set(learned.events)
    logged = [e.type for e in await memory.events(limit=1000)]
    assert logged[-len(learned.events) :] == list(learned.events)
    assert (await memory.replay()).matches_live

    # The next should_attempt reads the experience.
    advice = await memory.should_attempt(QUERY, capability="email")
    assert advice.experiences_used == 1 and advice.inputs["past_success_rate"] == 1.0


async def test_a_success_that_reaches_one_completes_the_goal(memory: AsyncMemory) -> None:
    _, goal_id = await _setup(memory)
    failed = await memory.post_interaction(
        QUERY, "Draft.", success=False, goal_id=goal_id, progress_delta=1.0
    )
    assert failed.goal is not None and failed.goal.progress == 1.0
    assert failed.goal.status is GoalStatus.ACTIVE  # seed 000: completed on a success only
    done = await memory.post_interaction(
        QUERY, "Draft.", success=True, goal_id=goal_id, progress_delta=0.0
    )
    assert done.goal is not None and done.goal.status is GoalStatus.COMPLETED
    worked = await memory.add_goal("keep the inbox at zero")
    touched = await memory.post_interaction(QUERY, "Draft.", success=True, goal_id=worked.id)
    assert touched.goal is not None and touched.goal.progress == 0.0
    assert touched.goal.last_worked is not None and "goal.worked" in touched.events


async def test_a_novel_failure_mode_is_recorded_once(memory: AsyncMemory) -> None:
    first = await memory.post_interaction(
        QUERY,
        "The draft bounced.",
        success=False,
        capability="email",
        failure_reason="the attachment was too large",
    )
    assert first.failure_mode_added and first.failure_experience_id is not None
    record = await memory.get(first.failure_experience_id)
    assert record.content == "Discovered failure mode in email: the attachment was too large"
    assert record.base_salience == pytest.approx(0.8)
    assert first.transition is not None and first.transition.outcome == "failure"
    [mode] = first.competence.failure_modes if first.competence else []
    assert mode.mode == "the attachment was too large"
    again = await memory.post_interaction(
        QUERY,
        "It bounced again.",
        success=False,
        capability="email",
        failure_reason="The attachment was too  large",
    )
    assert not again.failure_mode_added and again.failure_experience_id is None
    assert again.competence is not None and again.competence.failure_modes[0].count == 2


async def test_preferences_move_existing_opinions(memory: AsyncMemory) -> None:
    formed = await memory.post_interaction(
        "Book my flight", "Booked.", success=True, preferences=["I prefer window seats."]
    )
    [opinion_id] = formed.opinions
    again = await memory.post_interaction(
        "Book my return flight", "Booked.", success=True, preferences=["I prefer window seats."]
    )
    assert again.opinions == (opinion_id,)
    assert (await memory.get_opinion(opinion_id)).confidence > 0.6


async def test_reliable_patterns_are_promoted_after_the_write(memory: AsyncMemory) -> None:
    promoted: list[str] = []
    for _ in range(12):
        learned = await memory.post_interaction(
            "Deploy the api", "Deployed.", success=True, action="deploy the api"
        )
        promoted += learned.promoted_fact_ids
    [fact_id] = promoted
    fact = await memory.get(fact_id)
    assert fact.content.startswith("deploy the api leads to success")


async def _failed_with_everything(memory: AsyncMemory, strategy_id: str, goal_id: str) -> None:
    """A failed interaction that touches every paradigm."""
    await memory.post_interaction(
        QUERY,
        "Draft.",
        success=False,
        capability="email",
        action="send the draft",
        strategy_id=strategy_id,
        trajectory=["read the thread", "send it"],
        failure_reason="the client never answers",
        goal_id=goal_id,
        progress_delta=0.5,
        preferences=["I prefer short emails."],
    )


async def _state(memory: AsyncMemory) -> dict[str, Any]:
    return {
        "events": [e.id for e in await memory.events(limit=10_000)],
        "memories": sorted(m.id for m in await memory.list(limit=10_000)),
        "transitions": [t.to_dict() for t in await memory.transitions()],
        "competences": [c.to_dict() for c in await memory.competences()],
        "goals": [(g.id, g.progress, g.status, g.last_worked) for g in await memory.goals()],
        "opinions": [(o.id, o.confidence) for o in await memory.opinions()],
    }


@pytest.mark.parametrize(
    ("store", "method"),
    [("predictive", "put_competences"), ("goals", "put"), ("predictive", "put_transitions")],
)
async def test_a_failure_midway_leaves_nothing(
    memory: AsyncMemory, monkeypatch: pytest.MonkeyPatch, store: str, method: str
) -> None:
    strategy_id, goal_id = await _setup(memory)
    await memory.retain("I prefer short emails.", bank="opinion")
    before = await _state(memory)
    storage = memory._storage  # the one seam: a write inside the transaction fails

    def fail(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(getattr(storage, store), method, fail)
    with pytest.raises(RuntimeError, match="disk on fire"):
        await _failed_with_everything(memory, strategy_id, goal_id)
    monkeypatch.undo()
    assert await _state(memory) == before
    used = await memory.get(strategy_id)
    assert isinstance(used, Procedure) and used.execution_count == 0
    assert not await memory.search("Handled query", limit=5)  # no vector left behind
    assert (await memory.replay()).matches_live
    # And the same call goes through once the store works.
    learned = await memory.post_interaction(QUERY, "Draft.", success=True, goal_id=goal_id)
    assert learned.goal is not None


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"query": ""}, ValidationError),
        ({"response": 5}, ValidationError),
        ({"success": "yes"}, ValidationError),
        ({"quality": 1.5}, ValidationError),
        ({"predicted": -0.1}, ValidationError),
        ({"failure_reason": "x"}, ValidationError),  # on a success
        ({"progress_delta": 0.5}, ValidationError),  # without a goal
        ({"goal_id": "goal_x", "progress_delta": 2.0}, ValidationError),
        ({"trajectory": "one string"}, ValidationError),
        ({"trajectory": []}, ValidationError),
        ({"preferences": "I prefer tea."}, ValidationError),
        ({"preferences": ["x"] * 21}, ValidationError),
        ({"context": {"a": float("inf")}}, ValidationError),
        ({"domain": ""}, ValidationError),
        ({"entities": [""]}, ValidationError),
        ({"strategy_id": "proc_missing"}, NotFoundError),
        ({"goal_id": "goal_missing"}, NotFoundError),
    ],
)
async def test_bad_input_is_a_typed_error_and_writes_nothing(
    memory: AsyncMemory, kwargs: dict[str, Any], error: type[Exception]
) -> None:
    before = await _state(memory)
    call: dict[str, Any] = {"query": QUERY, "response": "Draft.", "success": True, **kwargs}
    with pytest.raises(error):
        await memory.post_interaction(**call)
    assert await _state(memory) == before


async def test_what_it_learned_travels_in_export_and_import(
    memory: AsyncMemory, tmp_path: Any
) -> None:
    strategy_id, goal_id = await _setup(memory)
    await _failed_with_everything(memory, strategy_id, goal_id)
    path = tmp_path / "alice.jsonl"
    await memory.export_jsonl(path)
    await memory.import_jsonl(path, user_id="copy")

    def summary(state: dict[str, Any]) -> dict[str, Any]:
        return {
            "memories": len(state["memories"]),
            "transitions": sorted(
                (t["action"], t["outcome"], t["confirmations"]) for t in state["transitions"]
            ),
            "competences": sorted(
                (c["capability"], c["attempts"], c["successes"], len(c["failure_modes"]))
                for c in state["competences"]
            ),
            "goals": sorted((g[1], g[2]) for g in state["goals"]),
            "opinions": sorted(o[1] for o in state["opinions"]),
        }

    original = summary(await _state(memory))
    copied = summary(await _state(_Scoped(memory, "copy")))  # type: ignore[arg-type]
    assert copied == original
    assert (await memory.replay(user_id="copy")).matches_live


class _Scoped:
    """``memory`` with every call in another user's scope (for ``_state``)."""

    def __init__(self, memory: AsyncMemory, user_id: str) -> None:
        self._memory, self._user = memory, user_id

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._memory, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await method(*args, user_id=self._user, **kwargs)

        return call


def test_the_sync_memory_learns(sync_memory: Any) -> None:
    learned = sync_memory.post_interaction("Book a table", "Booked for two.", success=True)
    assert sync_memory.get(learned.experience_id).metadata["success"] is True
