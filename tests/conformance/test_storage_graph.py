"""Memory graph, retention state, embedding cache, and delete cascades."""

from __future__ import annotations

import numpy as np
import pytest

from ucma.types import GraphEdge, MemoryKind, RetentionInfo, Scope

ALICE = Scope("alice", "assistant")


@pytest.fixture
def nodes(storage, make):
    episode, fact = make.episode(ALICE), make.fact(ALICE)
    procedure, learning = make.procedure(ALICE), make.learning(ALICE)
    storage.episodes.add([episode], make.vectors(1))
    storage.facts.add(fact, make.vector())
    storage.procedures.add(procedure, make.vector())
    storage.learnings.add(learning, make.vector())
    return [episode.id, fact.id, procedure.id, learning.id]


def test_every_added_memory_is_a_node(storage, nodes) -> None:
    assert storage.graph.node_ids(ALICE) == nodes
    assert storage.graph.pagerank(ALICE, nodes) == dict.fromkeys(nodes, 0.0)
    storage.memories.set_archived(ALICE, [nodes[1]], 1.0)
    assert storage.graph.node_ids(ALICE) == [nodes[0], nodes[2], nodes[3]]
    assert storage.graph.node_ids(ALICE, include_archived=True) == nodes
    assert storage.graph.stats(ALICE) == {"node_count": 3, "edge_count": 0}


def test_edges_are_directed_typed_and_replaced(storage, nodes) -> None:
    e, f, p, learn = nodes
    edges = [
        GraphEdge(e, f, "mentions", 0.5, 10.0),
        GraphEdge(e, f, "supports", 0.25, 11.0),  # same ends, other type: a second edge
        GraphEdge(f, p, "related", 1.0, 12.0),
        GraphEdge(p, learn, "derived_from", 0.75, 13.0),
    ]
    assert storage.graph.add_edges(ALICE, edges) == 4
    assert storage.graph.edges_from(ALICE, e) == edges[:2]
    assert storage.graph.edges_to(ALICE, f) == edges[:2]
    assert storage.graph.edges_to(ALICE, e) == []
    assert storage.graph.all_edges(ALICE) == edges

    replacement = GraphEdge(e, f, "mentions", 0.9, 20.0)
    assert storage.graph.add_edges(ALICE, [replacement]) == 1
    from_e = storage.graph.edges_from(ALICE, e)
    assert replacement in from_e and edges[0] not in from_e and len(from_e) == 2
    assert storage.graph.stats(ALICE) == {"node_count": 4, "edge_count": 4}
    assert storage.graph.add_edges(ALICE, []) == 0


def test_edges_to_unknown_memories_are_skipped(storage, nodes) -> None:
    e, f, _, _ = nodes
    written = storage.graph.add_edges(
        ALICE,
        [
            GraphEdge(e, "ghost", "mentions"),
            GraphEdge("ghost", f, "mentions"),
            GraphEdge(e, f, "mentions"),
        ],
    )
    assert written == 1
    assert storage.graph.all_edges(ALICE) == [GraphEdge(e, f, "mentions")]


def test_pagerank_is_stored_per_node(storage, nodes) -> None:
    storage.graph.set_pagerank(ALICE, {nodes[0]: 0.4, nodes[2]: 0.1, "ghost": 0.5})
    assert storage.graph.pagerank(ALICE, [nodes[2], nodes[0], nodes[1], "ghost"]) == {
        nodes[2]: 0.1,
        nodes[0]: 0.4,
        nodes[1]: 0.0,
    }
    storage.graph.set_pagerank(ALICE, {nodes[0]: 0.2})
    assert storage.graph.pagerank(ALICE, [nodes[0], nodes[2]]) == {nodes[0]: 0.2, nodes[2]: 0.1}
    assert storage.graph.pagerank(ALICE, []) == {}


def test_graph_stats_count_edges_between_live_nodes(storage, nodes) -> None:
    e, f, p, _ = nodes
    storage.graph.add_edges(ALICE, [GraphEdge(e, f, "a"), GraphEdge(f, p, "b")])
    storage.memories.set_archived(ALICE, [p], 1.0)
    assert storage.graph.stats(ALICE) == {"node_count": 3, "edge_count": 1}


def test_retention_put_get_and_replace(storage, nodes) -> None:
    states = [RetentionInfo(nodes[0], 1.5, 100.0, 0), RetentionInfo(nodes[1], 7.0, 200.0, 3)]
    storage.retention.put_many(ALICE, states)
    assert storage.retention.get_many(ALICE, [nodes[1], nodes[0], nodes[2]]) == {
        nodes[1]: states[1],
        nodes[0]: states[0],
    }
    updated = RetentionInfo(nodes[0], 3.0, 300.0, 1)
    storage.retention.put_many(ALICE, [updated, RetentionInfo("ghost", 1.0, 1.0)])
    assert storage.retention.get_many(ALICE, [nodes[0], "ghost"]) == {nodes[0]: updated}
    assert storage.retention.get_many(ALICE, []) == {}
    storage.retention.put_many(ALICE, [])


def test_embedding_cache_round_trips_float32(storage, make) -> None:
    a, b = make.vector(), np.arange(384, dtype=np.float64) / 7
    storage.embedding_cache.put_embeddings("model-a", {"h1": a, "h2": b})
    storage.embedding_cache.put_embeddings("model-b", {"h1": -a})
    got = storage.embedding_cache.get_embeddings("model-a", ["h2", "h1", "missing"])
    assert set(got) == {"h1", "h2"}
    assert got["h1"].dtype == np.float32 and got["h2"].dtype == np.float32
    np.testing.assert_array_equal(got["h1"], a.astype(np.float32))
    np.testing.assert_array_equal(got["h2"], b.astype(np.float32))  # any dimension
    np.testing.assert_array_equal(
        storage.embedding_cache.get_embeddings("model-b", ["h1"])["h1"], -a
    )
    storage.embedding_cache.put_embeddings("model-a", {"h1": -a})
    np.testing.assert_array_equal(
        storage.embedding_cache.get_embeddings("model-a", ["h1"])["h1"], -a
    )
    got["h2"][0] = 99.0  # a fresh copy
    assert storage.embedding_cache.get_embeddings("model-a", ["h2"])["h2"][0] == 0.0
    assert storage.embedding_cache.get_embeddings("model-a", []) == {}


CHILD_TABLES = [
    "episodes",
    "facts",
    "procedures",
    "procedure_steps",
    "procedure_tags",
    "learnings",
    "learning_tags",
    "graph_nodes",
    "graph_edges",
    "retention",
]


def test_delete_cascades_everywhere(backend, make) -> None:
    storage = backend.open()
    episode = make.episode(ALICE, content="unique zebra")
    fact = make.fact(ALICE, "zebra", "is", "striped")
    procedure = make.procedure(ALICE, content="zebra procedure")
    learning = make.learning(ALICE, content="zebra lesson")
    storage.episodes.add([episode], make.axis(0).reshape(1, -1))
    storage.facts.add(fact, make.axis(0, 0.9))
    storage.procedures.add(procedure, make.axis(0, 0.8))
    storage.learnings.add(learning, make.axis(0, 0.7))
    ids = [episode.id, fact.id, procedure.id, learning.id]
    storage.graph.add_edges(ALICE, [GraphEdge(a, b, "link") for a in ids for b in ids if a != b])
    storage.retention.put_many(ALICE, [RetentionInfo(i, 1.0, 1.0) for i in ids])
    storage.memories.vector_search(ALICE, make.axis(0), 10)  # cache loaded before deletes

    assert storage.memories.delete(ALICE, episode.id) is True
    assert storage.memories.delete(ALICE, episode.id) is False
    assert storage.memories.get(ALICE, episode.id) is None
    assert episode.id not in [i for i, _ in storage.memories.keyword_search(ALICE, ["zebra"], 9)]
    assert episode.id not in [
        i for i, _ in storage.memories.vector_search(ALICE, make.axis(0), 9, include_archived=True)
    ]
    assert storage.memories.vectors(ALICE, [episode.id]) == {}
    assert storage.graph.edges_from(ALICE, episode.id) == []
    assert all(episode.id not in (e.source_id, e.target_id) for e in storage.graph.all_edges(ALICE))
    assert len(storage.graph.all_edges(ALICE)) == 6
    assert storage.retention.get_many(ALICE, [episode.id]) == {}
    assert storage.episodes.time_range(ALICE, 0, 2 * make.t0, include_archived=True) == []

    for memory_id in ids[1:]:
        assert storage.memories.delete(ALICE, memory_id)
    assert storage.facts.about(ALICE, "zebra", include_archived=True) == []
    assert storage.procedures.find_by_tags(ALICE, ["refund"]) == []
    assert storage.learnings.relevant(ALICE, ["calendar"], min_confidence=0) == []
    assert storage.memories.keyword_search(ALICE, ["zebra"], 9) == []
    assert storage.memories.vector_search(ALICE, make.axis(0), 9) == []
    assert storage.memories.count(ALICE, include_archived=True) == dict.fromkeys(MemoryKind, 0)
    assert storage.graph.stats(ALICE) == {"node_count": 0, "edge_count": 0}
    for table in [*CHILD_TABLES, *backend.vector_tables]:
        assert backend.raw(f"SELECT count(*) FROM {table}") == [(0,)], table
