"""Closing and reopening keeps everything; schema version and dimension checks."""

from __future__ import annotations

import numpy as np
import pytest

from ucma.errors import MigrationError, StorageError
from ucma.types import GraphEdge, LearningType, MemoryKind, RetentionInfo, Scope, Tier

ALICE = Scope("alice", "assistant")
BOB = Scope("bob", "assistant")


def populate(storage, make):
    """Every kind, index and side table, in two scopes; returns what to check."""
    short = make.episode(
        ALICE, tier=Tier.SHORT_TERM, content="the kettle broke on monday", timestamp=make.t0 + 10
    )
    medium = make.episode(ALICE, tier=Tier.MEDIUM_TERM, timestamp=make.t0 + 3 * 86400)
    archived = make.episode(ALICE, archived_at=make.t0 + 5, timestamp=make.t0 + 20)
    storage.episodes.add(
        [short, medium, archived], np.stack([make.axis(0), make.axis(1), make.axis(2)])
    )
    fact = make.fact(ALICE, "Alice", "owns", "Kettle")
    fact2 = make.fact(ALICE, "kettle", "made_by", "Acme")
    storage.facts.add(fact, make.axis(3))
    storage.facts.add(fact2, make.vector())
    procedure = make.procedure(ALICE)
    storage.procedures.add(procedure, make.vector())
    learning = make.learning(ALICE, learning_type=LearningType.USER_PREFERENCE)
    storage.learnings.add(learning, make.vector())
    bob_episode = make.episode(BOB)
    storage.episodes.add([bob_episode], make.vectors(1))
    edges = [
        GraphEdge(short.id, fact.id, "mentions", 0.5, make.t0),
        GraphEdge(fact.id, fact2.id, "related", 0.25, make.t0 + 1),
        GraphEdge(procedure.id, learning.id, "derived_from", 1.0, make.t0 + 2),
    ]
    assert storage.graph.add_edges(ALICE, edges) == 3
    storage.graph.set_pagerank(ALICE, {short.id: 0.125, fact.id: 0.375})
    states = [RetentionInfo(short.id, 1.5, make.t0, 2), RetentionInfo(fact.id, 30.0, make.t0, 0)]
    storage.retention.put_many(ALICE, states)
    cached = {"h1": make.vector(), "h2": make.vector()}
    storage.embedding_cache.put_embeddings("model-a", cached)
    storage.memories.touch(ALICE, [short.id], now=make.t0 + 99)
    return {
        "records": [short, medium, archived, fact, fact2, procedure, learning],
        "bob": bob_episode,
        "edges": edges,
        "states": states,
        "cached": cached,
    }


def snapshot(storage, make, data):
    """Everything observable about the populated database."""
    short, medium, archived, fact, fact2, procedure, learning = data["records"]
    ids = [r.id for r in data["records"]]
    return {
        "records": storage.memories.get_many(ALICE, ids),
        "bob": storage.memories.get_many(BOB, [data["bob"].id]),
        "list": storage.memories.list(ALICE, include_archived=True),
        "count": storage.memories.count(ALICE),
        "scopes": sorted(storage.memories.scopes(), key=lambda s: s.user_id),
        "edges": storage.graph.all_edges(ALICE),
        "edges_to": storage.graph.edges_to(ALICE, fact2.id),
        "nodes": storage.graph.node_ids(ALICE, include_archived=True),
        "pagerank": storage.graph.pagerank(ALICE, ids),
        "retention": storage.retention.get_many(ALICE, ids),
        "cache": {
            k: v.tolist()
            for k, v in storage.embedding_cache.get_embeddings("model-a", ["h1", "h2"]).items()
        },
        "about": storage.facts.about(ALICE, "KETTLE"),
        "traverse": storage.facts.traverse(ALICE, "alice", 2),
        "tags": storage.procedures.find_by_tags(ALICE, ["refund"]),
        "relevant": storage.learnings.relevant(ALICE, ["calendar"]),
        "keyword": [i for i, _ in storage.memories.keyword_search(ALICE, ["kettle"], 10)],
        "vector": storage.memories.vector_search(ALICE, make.axis(0), 1),
        "vector_fact": storage.memories.vector_search(
            ALICE, make.axis(3), 1, kinds=[MemoryKind.SEMANTIC]
        ),
        "vectors": {k: v.tolist() for k, v in storage.memories.vectors(ALICE, ids).items()},
        "time_range": storage.episodes.time_range(ALICE, make.t0, make.t0 + 4 * 86400),
        "expired": storage.episodes.expired_short_term(ALICE, make.t0 + 86400),
        "session": storage.episodes.session(ALICE, "session-1"),
        "stats": [
            storage.episodes.stats(ALICE),
            storage.facts.stats(ALICE),
            storage.procedures.stats(ALICE),
            storage.learnings.stats(ALICE),
            storage.graph.stats(ALICE),
        ],
    }


def test_reopen_keeps_every_kind_index_and_state(backend, make) -> None:
    first = backend.open()
    data = populate(first, make)
    before = snapshot(first, make, data)
    first.close()

    reopened = backend.open()
    after = snapshot(reopened, make, data)
    assert after == before
    # and the values are the ones written, not just stable
    short, medium, archived, fact, fact2, procedure, learning = data["records"]
    assert after["records"][medium.id] == medium
    assert after["records"][short.id].access_count == short.access_count + 1
    assert after["edges"] == data["edges"]
    assert after["pagerank"][short.id] == 0.125 and after["pagerank"][medium.id] == 0.0
    assert list(after["retention"].values()) == data["states"]
    assert after["cache"] == {k: v.tolist() for k, v in data["cached"].items()}
    assert {f.id for f in after["about"]} == {fact.id, fact2.id}
    assert [f.id for f in after["traverse"]] == [fact.id, fact2.id]
    assert after["tags"] == [procedure] and after["relevant"] == [learning]
    assert set(after["keyword"]) == {short.id, fact.id, fact2.id}
    assert after["vector"][0][0] == short.id
    assert after["vector_fact"][0][0] == fact.id
    assert [e.id for e in after["time_range"]] == [short.id, medium.id]
    assert [e.id for e in after["expired"]] == [short.id]


def test_reopen_then_write_more(backend, make) -> None:
    first = backend.open()
    first.episodes.add([make.episode(ALICE)], make.vectors(1))
    first.close()
    second = backend.open()
    second.episodes.add([make.episode(ALICE)], make.vectors(1))
    assert second.memories.count(ALICE)[MemoryKind.EPISODIC] == 2


def test_dimension_mismatch_on_reopen_is_refused(backend, make) -> None:
    backend.open().close()
    with pytest.raises(StorageError, match="dimension"):
        backend.open(dimension=make.dimension * 2)
    assert backend.open().memories.count(ALICE)[MemoryKind.EPISODIC] == 0


def test_migrations_are_recorded_once(backend) -> None:
    backend.open().close()
    rows = backend.raw("SELECT version, name, applied_at FROM migrations ORDER BY version")
    versions = [r[0] for r in rows]
    # Versions are contiguous from 1: every migration the code holds, once, in order.
    assert versions == backend.migration_versions() == list(range(1, len(versions) + 1))
    assert all(r[1] and r[2] > 0 for r in rows)
    backend.open().close()
    backend.open().close()
    assert backend.raw("SELECT version, name, applied_at FROM migrations ORDER BY version") == rows


def test_database_newer_than_the_code_is_refused(backend) -> None:
    backend.open().close()
    backend.raw("INSERT INTO migrations (version, name, applied_at) VALUES (9999, 'future', 0)")
    with pytest.raises(MigrationError, match="9999"):
        backend.open()


def test_closed_storage_refuses_every_call(backend, make) -> None:
    storage = backend.open()
    episode = make.episode(ALICE)
    storage.episodes.add([episode], make.vectors(1))
    storage.close()
    storage.close()  # idempotent
    calls = [
        lambda: storage.memories.get(ALICE, episode.id),
        lambda: storage.memories.list(ALICE),
        lambda: storage.memories.vector_search(ALICE, make.vector(), 3),
        lambda: storage.memories.keyword_search(ALICE, ["x"], 3),
        lambda: storage.episodes.add([make.episode(ALICE)], make.vectors(1)),
        lambda: storage.facts.about(ALICE, "x"),
        lambda: storage.graph.all_edges(ALICE),
        lambda: storage.retention.get_many(ALICE, [episode.id]),
        lambda: storage.embedding_cache.get_embeddings("m", ["h"]),
        lambda: storage.transaction().__enter__(),
    ]
    for call in calls:
        with pytest.raises(StorageError):
            call()
