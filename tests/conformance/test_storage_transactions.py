"""Transactions: all or nothing, nested blocks join, caches never run ahead."""

from __future__ import annotations

import pytest

from ucma.errors import StorageError, ValidationError
from ucma.types import GraphEdge, MemoryKind, RetentionInfo, Scope

ALICE = Scope("alice", "assistant")


class Boom(Exception):
    pass


def nothing_stored(storage, make, ids) -> bool:
    return (
        storage.memories.get_many(ALICE, ids) == {}
        and storage.memories.count(ALICE, include_archived=True) == dict.fromkeys(MemoryKind, 0)
        and storage.memories.keyword_search(ALICE, ["number"], 10) == []
        and storage.memories.vector_search(ALICE, make.vector(), 10) == []
        and storage.graph.all_edges(ALICE) == []
        and storage.retention.get_many(ALICE, ids) == {}
        and storage.embedding_cache.get_embeddings("m", ["h"]) == {}
    )


def write_everything(storage, make) -> list[str]:
    episode, fact = make.episode(ALICE), make.fact(ALICE)
    storage.episodes.add([episode], make.vectors(1))
    storage.facts.add(fact, make.vector())
    storage.procedures.add(make.procedure(ALICE), make.vector())
    storage.learnings.add(make.learning(ALICE), make.vector())
    storage.graph.add_edges(ALICE, [GraphEdge(episode.id, fact.id, "mentions")])
    storage.retention.put_many(ALICE, [RetentionInfo(episode.id, 1.0, 0.0)])
    storage.embedding_cache.put_embeddings("m", {"h": make.vector()})
    return [episode.id, fact.id]


def test_exception_mid_transaction_leaves_nothing(storage, make) -> None:
    storage.memories.vector_search(ALICE, make.vector(), 1)  # cache loaded before the write
    ids: list[str] = []
    with pytest.raises(Boom), storage.transaction():
        ids = write_everything(storage, make)
        raise Boom
    assert nothing_stored(storage, make, ids)


def test_committed_transaction_keeps_everything(storage, make) -> None:
    with storage.transaction():
        ids = write_everything(storage, make)
    assert set(storage.memories.get_many(ALICE, ids)) == set(ids)
    assert len(storage.memories.vector_search(ALICE, make.vector(), 10)) == 4


def test_nested_blocks_join_the_outer_transaction(storage, make) -> None:
    inner_episode = make.episode(ALICE)
    with pytest.raises(Boom), storage.transaction():
        with storage.transaction():
            storage.episodes.add([inner_episode], make.vectors(1))
        assert storage.memories.get(ALICE, inner_episode.id) is not None  # visible inside
        raise Boom
    assert storage.memories.get(ALICE, inner_episode.id) is None

    with storage.transaction(), storage.transaction(), storage.transaction():
        storage.episodes.add([inner_episode], make.vectors(1))
    assert storage.memories.get(ALICE, inner_episode.id) is not None


def test_exception_in_nested_block_rolls_back_everything(storage, make) -> None:
    outer, inner = make.episode(ALICE), make.episode(ALICE)
    with pytest.raises(Boom), storage.transaction():
        storage.episodes.add([outer], make.vectors(1))
        with storage.transaction():
            storage.episodes.add([inner], make.vectors(1))
            raise Boom
    assert storage.memories.get_many(ALICE, [outer.id, inner.id]) == {}


def test_a_swallowed_failure_still_dooms_the_transaction(storage, make) -> None:
    outer, inner = make.episode(ALICE), make.episode(ALICE)
    with pytest.raises(StorageError), storage.transaction():
        storage.episodes.add([outer], make.vectors(1))
        try:
            with storage.transaction():
                storage.episodes.add([inner], make.vectors(1))
                raise Boom
        except Boom:
            pass
    assert storage.memories.get_many(ALICE, [outer.id, inner.id]) == {}


def test_a_failed_write_inside_a_transaction_rolls_it_back(storage, make) -> None:
    existing = make.episode(ALICE)
    storage.episodes.add([existing], make.vectors(1))
    fresh = make.episode(ALICE)
    with pytest.raises(ValidationError, match="already in use"), storage.transaction():
        storage.episodes.add([fresh], make.vectors(1))
        storage.episodes.add([make.episode(ALICE, id=existing.id)], make.vectors(1))
    assert storage.memories.get(ALICE, fresh.id) is None
    assert storage.memories.get(ALICE, existing.id) == existing


def test_rollback_does_not_leave_search_caches_ahead(storage, make) -> None:
    kept = make.episode(ALICE, content="kept words")
    storage.episodes.add([kept], make.axis(0).reshape(1, -1))
    assert [i for i, _ in storage.memories.vector_search(ALICE, make.axis(0), 5)] == [kept.id]

    dropped = make.episode(ALICE, content="dropped words")
    with pytest.raises(Boom), storage.transaction():
        storage.episodes.add([dropped], make.axis(1).reshape(1, -1))
        storage.memories.set_archived(ALICE, [kept.id], 1.0)
        storage.memories.delete(ALICE, kept.id)
        # inside the transaction its own writes are visible
        hits = storage.memories.vector_search(ALICE, make.axis(1), 5, include_archived=True)
        assert [i for i, _ in hits] == [dropped.id]
        raise Boom

    assert [i for i, _ in storage.memories.vector_search(ALICE, make.axis(1), 5)] == [kept.id]
    assert storage.memories.keyword_search(ALICE, ["dropped"], 5) == []
    assert [i for i, _ in storage.memories.keyword_search(ALICE, ["kept"], 5)] == [kept.id]


def test_cache_follows_committed_transactions(storage, make) -> None:
    first = make.episode(ALICE)
    storage.episodes.add([first], make.axis(0).reshape(1, -1))
    storage.memories.vector_search(ALICE, make.axis(0), 5)
    second = make.episode(ALICE)
    with storage.transaction():
        storage.episodes.add([second], make.axis(1).reshape(1, -1))
        storage.memories.set_archived(ALICE, [first.id], 5.0)
    hits = storage.memories.vector_search(ALICE, make.axis(0), 5)
    assert [i for i, _ in hits] == [second.id]
    hits = storage.memories.vector_search(ALICE, make.axis(0), 5, include_archived=True)
    assert [i for i, _ in hits] == [first.id, second.id]
