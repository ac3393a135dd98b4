"""KeyStore: API keys are stored with a token hash, listed, revoked and counted."""

from __future__ import annotations

import pytest

from ucma.errors import StorageError
from ucma.types import ApiKey

T0 = 1_700_000_000.0


def key(key_id: str, user: str = "alice", agent: str | None = None, at: float = T0) -> ApiKey:
    return ApiKey(id=key_id, user_id=user, agent_id=agent, label=f"label {key_id}", created_at=at)


def test_add_then_lookup_returns_the_key_and_its_hash(storage) -> None:
    stored = key("aaaaaaaaaaaa", agent="planner")
    storage.keys.add(stored, "h" * 64)
    assert storage.keys.lookup("aaaaaaaaaaaa") == (stored, "h" * 64)
    assert storage.keys.lookup("bbbbbbbbbbbb") is None


def test_ids_and_hashes_are_unique(storage) -> None:
    storage.keys.add(key("aaaaaaaaaaaa"), "1" * 64)
    with pytest.raises(StorageError):
        storage.keys.add(key("aaaaaaaaaaaa", user="bob"), "2" * 64)
    with pytest.raises(StorageError):
        storage.keys.add(key("cccccccccccc"), "1" * 64)
    assert storage.keys.count() == 1


def test_list_orders_by_creation_and_hides_revoked_keys(storage) -> None:
    storage.keys.add(key("bbbbbbbbbbbb", at=T0 + 1), "b" * 64)
    storage.keys.add(key("aaaaaaaaaaaa", user="bob", at=T0 + 2), "a" * 64)
    storage.keys.add(key("cccccccccccc", at=T0), "c" * 64)
    assert [k.id for k in storage.keys.list()] == ["cccccccccccc", "bbbbbbbbbbbb", "aaaaaaaaaaaa"]

    revoked = storage.keys.revoke("bbbbbbbbbbbb", T0 + 10)
    assert revoked is not None and revoked.revoked_at == T0 + 10 and revoked.revoked
    assert [k.id for k in storage.keys.list()] == ["cccccccccccc", "aaaaaaaaaaaa"]
    listed = storage.keys.list(include_revoked=True)
    assert [k.id for k in listed] == ["cccccccccccc", "bbbbbbbbbbbb", "aaaaaaaaaaaa"]
    assert storage.keys.count() == 2
    assert storage.keys.count(include_revoked=True) == 3


def test_revoke_keeps_the_first_time_and_unknown_ids_are_none(storage) -> None:
    storage.keys.add(key("aaaaaaaaaaaa"), "a" * 64)
    storage.keys.revoke("aaaaaaaaaaaa", T0 + 5)
    again = storage.keys.revoke("aaaaaaaaaaaa", T0 + 50)
    assert again is not None and again.revoked_at == T0 + 5
    assert storage.keys.lookup("aaaaaaaaaaaa")[0].revoked_at == T0 + 5
    assert storage.keys.revoke("zzzzzzzzzzzz", T0) is None


def test_keys_survive_reopening(backend) -> None:
    first = backend.open()
    first.keys.add(key("aaaaaaaaaaaa"), "a" * 64)
    first.close()
    assert backend.open().keys.lookup("aaaaaaaaaaaa") == (key("aaaaaaaaaaaa"), "a" * 64)
