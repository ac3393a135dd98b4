"""The generic defaults of ``ucma.storage.base`` (methods a backend may leave to the ABC,
written over its other methods) answer exactly as the backend's own overrides do, on the
same data; listings are paged two rows at a time so the defaults cross page ends."""

from __future__ import annotations

import pytest
from tests.conformance.conftest import Make
from tests.conformance.test_storage_keys import key
from tests.conformance.test_storage_opinions import _opinion
from tests.conformance.test_storage_predictive import competence, transition

from ucma.paradigms.goal_records import Goal
from ucma.storage import base
from ucma.storage.base import (
    EpisodicStore,
    EventStore,
    GoalStore,
    KeyStore,
    MemoryCatalog,
    OpinionStore,
    PredictiveStore,
    Storage,
    VaultEntry,
    VaultStore,
)
from ucma.types import Bank, Scope

ALICE = Scope("alice", "assistant")
BOB = Scope("bob", "assistant")


@pytest.fixture(autouse=True)
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "_PAGE", 2)


def _goal(goal_id: str, scope: Scope = ALICE) -> Goal:
    return Goal(
        id=goal_id,
        user_id=scope.user_id,
        agent_id=scope.agent_id,
        description=f"goal {goal_id}",
        created_at=1.0,
        updated_at=1.0,
    )


def test_memory_defaults(storage: Storage, make: Make) -> None:
    episodes = [make.episode(ALICE) for _ in range(3)]
    storage.episodes.add(episodes, make.vectors(3))
    facts = [make.fact(ALICE, object_=f"tea {n}") for n in range(2)]
    for fact in facts:
        storage.facts.add(fact, make.vector())
    storage.episodes.add([make.episode(BOB)], make.vectors(1))
    storage.memories.set_archived(ALICE, [episodes[0].id], make.t0 + 99)
    storage.memories.set_bank(ALICE, [facts[0].id], Bank.OPINION)

    ids = [episodes[2].id, "nope", facts[1].id, episodes[0].id, episodes[2].id]
    assert MemoryCatalog.get_many(storage.memories, ALICE, ids) == (
        storage.memories.get_many(ALICE, ids)
    )
    assert MemoryCatalog.get_many(storage.memories, BOB, ids) == {}
    for scope in (ALICE, BOB, Scope("nobody", "assistant")):
        for include_archived in (False, True):
            for bank in (None, Bank.OPINION, Bank.EXPERIENCE):
                options = {"include_archived": include_archived, "bank": bank}
                assert MemoryCatalog.count(storage.memories, scope, **options) == (
                    storage.memories.count(scope, **options)
                ), (scope, options)


def test_episode_defaults(storage: Storage, make: Make) -> None:
    t0 = make.t0
    session = [
        make.episode(ALICE, session_id="s1", timestamp=t0 + n, created_at=t0 + n)
        for n in (3, 1, 2, 3)
    ]
    storage.episodes.add(session, make.vectors(4))
    storage.memories.set_archived(ALICE, [session[2].id], t0 + 50)
    for start, end, limit in ((t0, t0 + 10, 10), (t0, t0 + 10, 2), (t0 + 2, t0 + 2, 5)):
        assert EpisodicStore.in_range(storage.episodes, ALICE, start, end, limit=limit) == (
            storage.episodes.in_range(ALICE, start, end, limit=limit)
        )
    assert EpisodicStore.in_range(storage.episodes, ALICE, t0, t0 + 10, limit=0) == []
    for scope, session_id in ((ALICE, "s1"), (ALICE, "s2"), (BOB, "s1")):
        assert EpisodicStore.last_of_session(storage.episodes, scope, session_id) == (
            storage.episodes.last_of_session(scope, session_id)
        )
    assert storage.episodes.last_of_session(ALICE, "s1") == session[3].id


def test_event_key_vault_goal_opinion_and_predictive_defaults(storage: Storage, make: Make) -> None:
    storage.events.append(ALICE, "a.first", {"n": 1}, 1.0)
    storage.events.append(ALICE, "b.second", {"n": 2}, 2.0)
    storage.events.append(ALICE, "a.first", {"n": 3}, 3.0)
    types = ["a.first", "memory.stored", "b.second", "never"]
    assert EventStore.latest(storage.events, ALICE, types) == storage.events.latest(ALICE, types)
    assert EventStore.latest(storage.events, ALICE, []) == ()

    for n, user in enumerate(["alice", "bob", "carol"]):
        storage.keys.add(key(f"{n:012d}", user=user), f"{n}" * 64)
    storage.keys.revoke("000000000001", 5.0)
    for include_revoked in (False, True):
        assert KeyStore.count(storage.keys, include_revoked=include_revoked) == (
            storage.keys.count(include_revoked=include_revoked)
        )

    storage.vault.add(
        ALICE,
        [VaultEntry(f"<EMAIL_{n}>", "email", f"digest{n}", b"secret", 1.0) for n in range(3)],
    )
    tokens = ["<EMAIL_0>", "<EMAIL_9>", "<EMAIL_2>"]
    assert VaultStore.taken(storage.vault, ALICE, tokens) == {"<EMAIL_0>", "<EMAIL_2>"}
    assert VaultStore.taken(storage.vault, BOB, tokens) == set()

    storage.goals.put([_goal(f"goal_{n}") for n in range(5)] + [_goal("goal_bob", BOB)])
    for goal_id in ("goal_3", "goal_bob", "goal_none"):
        assert GoalStore.get(storage.goals, ALICE, goal_id) == storage.goals.get(ALICE, goal_id)
    assert GoalStore.count(storage.goals, ALICE) == storage.goals.count(ALICE) == 5

    storage.opinions.put(
        [_opinion(ALICE, str(n), memory_id=None) for n in range(5)]
        + [_opinion(BOB, "bob", memory_id=None)]
    )
    assert OpinionStore.count(storage.opinions, ALICE) == storage.opinions.count(ALICE) == 5

    storage.predictive.put_transitions(
        [transition(ALICE, n, f"outcome {n}", 1, 0) for n in range(3)]
    )
    storage.predictive.put_competences([competence(ALICE, f"skill {n}", 2, 1) for n in range(4)])
    for scope in (ALICE, BOB):
        assert PredictiveStore.count(storage.predictive, scope) == (storage.predictive.count(scope))
    assert storage.predictive.count(ALICE) == {"transitions": 3, "competences": 4}
