"""Scope isolation: another scope's records are invisible and untouchable, even by id."""

from __future__ import annotations

import dataclasses

import pytest

from ucma.errors import NotFoundError, ValidationError
from ucma.types import GraphEdge, MemoryKind, RetentionInfo, Scope

ALICE = Scope("alice", "assistant")
BOB = Scope("bob", "assistant")
ALICE_PLANNER = Scope("alice", "planner")  # same user, other agent: also another scope


@pytest.fixture(params=[BOB, ALICE_PLANNER], ids=["other-user", "other-agent"])
def other(request: pytest.FixtureRequest) -> Scope:
    return request.param


@pytest.fixture
def theirs(storage, make, other):
    """The other scope's records (one of each kind, with graph and retention state)."""
    episode = make.episode(
        other, content="secret kettle story", session_id="shared-session", timestamp=make.t0 + 10
    )
    fact = make.fact(other, "Kettle", "is", "Broken")
    procedure = make.procedure(other)
    learning = make.learning(other)
    storage.episodes.add([episode], make.axis(0).reshape(1, -1))
    storage.facts.add(fact, make.axis(0))
    storage.procedures.add(procedure, make.axis(0))
    storage.learnings.add(learning, make.axis(0))
    storage.graph.add_edges(other, [GraphEdge(episode.id, fact.id, "mentions")])
    storage.graph.set_pagerank(other, {episode.id: 0.5})
    storage.retention.put_many(other, [RetentionInfo(episode.id, 2.0, 1.0, 1)])
    return [episode, fact, procedure, learning]


def test_reads_never_return_another_scopes_records(storage, make, theirs) -> None:
    episode, fact, procedure, learning = theirs
    ids = [r.id for r in theirs]
    for record in theirs:
        assert storage.memories.get(ALICE, record.id) is None
    assert storage.episodes.get(ALICE, episode.id) is None
    assert storage.facts.get(ALICE, fact.id) is None
    assert storage.procedures.get(ALICE, procedure.id) is None
    assert storage.learnings.get(ALICE, learning.id) is None
    assert storage.memories.get_many(ALICE, ids) == {}
    assert storage.memories.list(ALICE, include_archived=True) == []
    assert storage.memories.count(ALICE, include_archived=True) == dict.fromkeys(MemoryKind, 0)
    assert storage.memories.vector_search(ALICE, make.axis(0), 10, include_archived=True) == []
    assert storage.memories.keyword_search(ALICE, ["kettle", "refund"], 10) == []
    assert storage.memories.vectors(ALICE, ids) == {}
    assert storage.episodes.time_range(ALICE, 0, 2 * make.t0, include_archived=True) == []
    assert storage.episodes.expired_short_term(ALICE, 2 * make.t0) == []
    assert storage.episodes.session(ALICE, "shared-session") == []
    assert storage.episodes.last_of_session(ALICE, "shared-session") is None
    assert storage.facts.about(ALICE, "kettle", include_archived=True) == []
    assert storage.facts.traverse(ALICE, "kettle") == []
    assert storage.procedures.find_by_tags(ALICE, ["refund", "billing"]) == []
    assert storage.learnings.relevant(ALICE, ["calendar"], min_confidence=0.0) == []
    assert storage.graph.all_edges(ALICE) == []
    assert storage.graph.edges_from(ALICE, episode.id) == []
    assert storage.graph.edges_to(ALICE, fact.id) == []
    assert storage.graph.node_ids(ALICE, include_archived=True) == []
    assert storage.graph.pagerank(ALICE, ids) == {}
    assert storage.retention.get_many(ALICE, ids) == {}
    assert storage.episodes.stats(ALICE) == {
        "short_term_count": 0,
        "medium_term_count": 0,
        "temporal_buckets": 0,
    }
    assert storage.facts.stats(ALICE) == {"fact_count": 0, "entity_count": 0}
    assert storage.procedures.stats(ALICE) == {"procedure_count": 0, "tag_count": 0}
    assert storage.learnings.stats(ALICE) == {"learning_count": 0, "applicability_tags": 0}
    assert storage.graph.stats(ALICE) == {"node_count": 0, "edge_count": 0}


def test_writes_by_id_cannot_touch_another_scopes_records(storage, make, other, theirs) -> None:
    episode, fact, procedure, learning = theirs
    ids = [r.id for r in theirs]
    before = storage.memories.get_many(other, ids)

    assert storage.memories.delete(ALICE, episode.id) is False
    storage.memories.touch(ALICE, ids, now=1.0)
    storage.memories.set_archived(ALICE, ids, 1.0)
    with pytest.raises(NotFoundError):
        storage.memories.set_salience(ALICE, fact.id, base_salience=0.0, outcome_adjustment=0.0)
    with pytest.raises(NotFoundError):
        storage.episodes.update(
            dataclasses.replace(
                episode, user_id=ALICE.user_id, agent_id=ALICE.agent_id, content="hijacked"
            )
        )
    with pytest.raises(NotFoundError):
        storage.facts.update(
            dataclasses.replace(
                fact, user_id=ALICE.user_id, agent_id=ALICE.agent_id, confidence=0.0
            )
        )
    with pytest.raises(NotFoundError):
        storage.procedures.update(
            dataclasses.replace(procedure, user_id=ALICE.user_id, agent_id=ALICE.agent_id, steps=[])
        )
    with pytest.raises(NotFoundError):
        storage.learnings.update(
            dataclasses.replace(
                learning, user_id=ALICE.user_id, agent_id=ALICE.agent_id, confidence=0.0
            )
        )
    storage.graph.set_pagerank(ALICE, {episode.id: 0.9})
    storage.retention.put_many(ALICE, [RetentionInfo(episode.id, 99.0, 99.0, 99)])

    assert storage.memories.get_many(other, ids) == before
    assert storage.graph.pagerank(other, [episode.id]) == {episode.id: 0.5}
    assert storage.retention.get_many(other, [episode.id]) == {
        episode.id: RetentionInfo(episode.id, 2.0, 1.0, 1)
    }
    assert len(storage.memories.vector_search(other, make.axis(0), 10)) == 4


def test_edges_touching_another_scope_are_skipped(storage, make, other, theirs) -> None:
    mine = make.episode(ALICE)
    storage.episodes.add([mine], make.vectors(1))
    episode = theirs[0]
    written = storage.graph.add_edges(
        ALICE,
        [
            GraphEdge(mine.id, episode.id, "mentions"),
            GraphEdge(episode.id, mine.id, "mentions"),
            GraphEdge(episode.id, theirs[1].id, "overwrite", 9.0),
            GraphEdge(mine.id, mine.id, "self"),
        ],
    )
    assert written == 1
    assert storage.graph.all_edges(ALICE) == [GraphEdge(mine.id, mine.id, "self")]
    assert storage.graph.all_edges(other) == [GraphEdge(episode.id, theirs[1].id, "mentions")]


def test_the_same_id_cannot_be_reused_by_another_scope(storage, make, other, theirs) -> None:
    # Ids are unique across the store; the collision fails instead of merging records.
    with pytest.raises(ValidationError, match="already in use") as raised:
        storage.episodes.add([make.episode(ALICE, id=theirs[0].id)], make.vectors(1))
    assert f"{other.user_id}'" not in str(raised.value)  # the holder is not revealed
    assert storage.memories.get(ALICE, theirs[0].id) is None


def test_fact_ids_differ_per_scope_for_the_same_triple(storage, make, other, theirs) -> None:
    mine = make.fact(ALICE, "Kettle", "is", "Broken")
    assert mine.id != theirs[1].id
    storage.facts.add(mine, make.vector())
    assert [f.id for f in storage.facts.about(ALICE, "kettle")] == [mine.id]
    assert [f.id for f in storage.facts.about(other, "kettle")] == [theirs[1].id]
