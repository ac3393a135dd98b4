"""``OpinionStore``: scoped rows, the filters of ``list`` and ``current``."""

from __future__ import annotations

import pytest

from ucma.errors import ValidationError
from ucma.types import Opinion, OpinionStatus, Scope

ALICE = Scope("alice", "assistant")
BOB = Scope("bob", "assistant")


def _opinion(
    scope: Scope,
    key: str,
    *,
    memory_id: str | None,
    confidence: float = 0.6,
    status: OpinionStatus = OpinionStatus.CURRENT,
    at: float = 1.0,
) -> Opinion:
    return Opinion(
        id=f"op_{key}",
        user_id=scope.user_id,
        agent_id=scope.agent_id,
        topic=f"Topic {key}",
        stance=f"stance {key}",
        confidence=confidence,
        status=status,
        memory_id=memory_id,
        created_at=at,
        updated_at=at,
    )


def test_list_filters_by_status_confidence_and_stating_memory(storage) -> None:
    storage.opinions.put(
        [
            _opinion(ALICE, "a", memory_id="ep_1", at=1.0),
            _opinion(ALICE, "b", memory_id="ep_2", status=OpinionStatus.REPLACED, at=2.0),
            _opinion(ALICE, "c", memory_id=None, confidence=0.2, at=3.0),
            _opinion(BOB, "d", memory_id="ep_1", at=4.0),
        ]
    )
    every = storage.opinions.list(ALICE)
    assert [o.id for o in every] == ["op_c", "op_b", "op_a"]  # newest change first
    current = storage.opinions.list(ALICE, status=OpinionStatus.CURRENT)
    assert [o.id for o in current] == ["op_c", "op_a"]
    assert [o.id for o in storage.opinions.list(ALICE, below=0.5)] == ["op_c"]
    # By the memories stating them, whatever their status, in the scope only.
    stated = storage.opinions.list(ALICE, memory_ids=["ep_1", "ep_2", "ep_9"])
    assert [o.id for o in stated] == ["op_b", "op_a"]
    assert storage.opinions.list(ALICE, memory_ids=[]) == []
    assert [o.id for o in storage.opinions.current(ALICE, memory_ids=["ep_1", "ep_2"])] == ["op_a"]
    assert [o.id for o in storage.opinions.list(BOB, memory_ids=["ep_1"])] == ["op_d"]
    assert storage.opinions.get(BOB, "op_a") is None
    assert storage.opinions.count(ALICE) == 3


def test_an_id_held_by_another_scope_is_refused(storage) -> None:
    storage.opinions.put([_opinion(ALICE, "a", memory_id=None)])
    with pytest.raises(ValidationError):
        storage.opinions.put([_opinion(BOB, "a", memory_id=None)])
    assert storage.opinions.get(ALICE, "op_a") is not None
