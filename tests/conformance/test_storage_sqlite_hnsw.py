"""Approximate dense search of the SQLite backend: HNSW graphs for large scopes.

Each test opens the file twice: ``ann`` with a small threshold (so a few
hundred rows get a graph) and ``exact`` with graphs off, the reference every
approximate answer is compared with.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ucma.errors import ValidationError
from ucma.storage.base import AnnSettings
from ucma.storage.index import hnsw
from ucma.storage.sqlite import SQLiteStorage
from ucma.types import Episode, Fact, MemoryKind, Scope

ALICE = Scope("alice", "assistant")
BOB = Scope("bob", "assistant")
DIMENSION = 24
SETTINGS = AnnSettings(threshold=400, tail_rows=40, tail_fraction=0.05)


class Rows:
    """Episodes with random unit vectors, numbered across the test."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(7)
        self.count = 0

    def vectors(self, n: int) -> np.ndarray:
        v = self.rng.standard_normal((n, DIMENSION)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def add(self, storage: SQLiteStorage, n: int, scope: Scope = ALICE) -> list[str]:
        episodes = []
        for _ in range(n):
            self.count += 1
            episodes.append(
                Episode(
                    id=f"ep-{self.count:05d}",
                    user_id=scope.user_id,
                    agent_id=scope.agent_id,
                    content=f"turn {self.count}",
                    created_at=float(self.count),
                    session_id="s",
                    timestamp=float(self.count),
                )
            )
        storage.episodes.add(episodes, self.vectors(n))
        return [e.id for e in episodes]


@pytest.fixture
def rows() -> Rows:
    return Rows()


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[SQLiteStorage, SQLiteStorage]]:
    path = tmp_path / "ucma.db"
    ann = SQLiteStorage(path, dimension=DIMENSION, ann=SETTINGS)
    exact = SQLiteStorage(path, dimension=DIMENSION, ann=AnnSettings(threshold=0))
    yield ann, exact
    ann.close()
    exact.close()


def overlap(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> float:
    return len({i for i, _ in got} & {i for i, _ in want}) / max(len(want), 1)


def assert_close_to_exact(
    ann: SQLiteStorage, exact: SQLiteStorage, queries: np.ndarray, k: int = 10, **filters
) -> None:
    """Approximate answers hold at least 95% of the exact top k on average, and
    every cosine they report is the exact one, best first."""
    shares = []
    for query in queries:
        got = ann.memories.vector_search(ALICE, query, k, **filters)
        want = exact.memories.vector_search(ALICE, query, k, **filters)
        assert len(got) == len(want)
        scores = [s for _, s in got]
        assert scores == sorted(scores, reverse=True)
        stored = ann.memories.vectors(ALICE, [i for i, _ in got])
        for memory_id, score in got:
            assert score == pytest.approx(float(stored[memory_id] @ query), abs=1e-5)
        shares.append(overlap(got, want))
    assert np.mean(shares) >= 0.95


def test_small_scopes_stay_exact(stores, rows) -> None:
    ann, _ = stores
    rows.add(ann, 399)
    status = ann.memories.prepare_search(ALICE, wait=True)
    assert (status.live_rows, status.graph_rows, status.building) == (399, 0, False)


def test_a_large_scope_gets_a_graph_that_agrees_with_exact_search(stores, rows) -> None:
    ann, exact = stores
    rows.add(ann, 600)
    rows.add(ann, 50, BOB)
    status = ann.memories.prepare_search(ALICE, wait=True)
    assert (status.live_rows, status.graph_rows, status.building) == (600, 600, False)
    assert ann.memories.prepare_search(BOB).graph_rows == 0  # per scope
    assert_close_to_exact(ann, exact, rows.vectors(40))
    # A stored vector is found at cosine 1 through the graph.
    target = "ep-00123"
    query = ann.memories.vectors(ALICE, [target])[target]
    assert ann.memories.vector_search(ALICE, query, 1)[0] == (target, pytest.approx(1.0))
    assert [i for i, _ in ann.memories.vector_search(BOB, query, 100)] == [
        i for i, _ in exact.memories.vector_search(BOB, query, 100)
    ]


def test_rows_newer_than_the_graph_are_searched_exactly_until_it_is_extended(stores, rows) -> None:
    ann, exact = stores
    rows.add(ann, 600)
    ann.memories.prepare_search(ALICE, wait=True)
    newest = rows.add(ann, 30)  # fewer than tail_rows: no extension is due
    status = ann.memories.prepare_search(ALICE, wait=True)
    assert (status.live_rows, status.graph_rows) == (630, 600)
    for memory_id in newest:
        query = ann.memories.vectors(ALICE, [memory_id])[memory_id]
        assert ann.memories.vector_search(ALICE, query, 1)[0][0] == memory_id
    assert_close_to_exact(ann, exact, rows.vectors(20))
    rows.add(ann, 60)  # now past tail_rows: the graph is extended
    status = ann.memories.prepare_search(ALICE, wait=True)
    assert (status.live_rows, status.graph_rows) == (690, 690)
    assert_close_to_exact(ann, exact, rows.vectors(20))


def test_deleted_and_archived_rows_are_never_returned(stores, rows) -> None:
    ann, exact = stores
    ids = rows.add(ann, 600)
    ann.memories.prepare_search(ALICE, wait=True)
    vectors = ann.memories.vectors(ALICE, ids[:20])
    for memory_id in ids[:10]:
        assert ann.memories.delete(ALICE, memory_id)
    ann.memories.set_archived(ALICE, ids[10:20], 5.0)
    for memory_id in ids[:20]:
        hits = [i for i, _ in ann.memories.vector_search(ALICE, vectors[memory_id], 10)]
        assert memory_id not in hits
    archived = ann.memories.vector_search(ALICE, vectors[ids[15]], 1, include_archived=True)
    assert archived[0][0] == ids[15]
    assert_close_to_exact(ann, exact, rows.vectors(20))
    assert_close_to_exact(ann, exact, rows.vectors(10), include_archived=True)


def test_a_graph_of_mostly_deleted_rows_is_rebuilt(stores, rows) -> None:
    ann, exact = stores
    ids = rows.add(ann, 900)
    ann.memories.prepare_search(ALICE, wait=True)
    for memory_id in ids[:200]:
        ann.memories.delete(ALICE, memory_id)
    status = ann.memories.prepare_search(ALICE, wait=True)
    assert (status.live_rows, status.graph_rows) == (700, 700)
    assert_close_to_exact(ann, exact, rows.vectors(20))


def test_filters_that_hide_most_rows_fall_back_to_exact_search(stores, rows) -> None:
    ann, exact = stores
    rows.add(ann, 600)
    facts = [
        Fact(
            id=f"fact-{i}",
            user_id=ALICE.user_id,
            agent_id=ALICE.agent_id,
            content=f"fact {i}",
            created_at=1.0,
            subject=f"s{i}",
            predicate="is",
            object="o",
        )
        for i in range(5)
    ]
    fact_vectors = rows.vectors(5)
    for fact, vector in zip(facts, fact_vectors, strict=True):
        ann.facts.add(fact, vector)
    ann.memories.prepare_search(ALICE, wait=True)
    for query in rows.vectors(10):
        got = ann.memories.vector_search(ALICE, query, 3, kinds=[MemoryKind.SEMANTIC])
        want = exact.memories.vector_search(ALICE, query, 3, kinds=[MemoryKind.SEMANTIC])
        assert got == want


def test_a_graph_outlives_a_reload_of_the_cache(stores, rows) -> None:
    ann, exact = stores
    ids = rows.add(ann, 600)
    ann.memories.prepare_search(ALICE, wait=True)
    record = exact.memories.get(ALICE, ids[0])
    exact.episodes.update(dataclasses.replace(record, content="rewritten"))
    status = ann.memories.prepare_search(ALICE)
    assert (status.graph_rows, status.building) == (600, False)
    assert_close_to_exact(ann, exact, rows.vectors(10))


def test_closing_stops_a_build_and_a_failed_build_leaves_search_exact(
    tmp_path: Path, rows, monkeypatch
) -> None:
    path = tmp_path / "ucma.db"
    storage = SQLiteStorage(path, dimension=DIMENSION, ann=SETTINGS)
    rows.add(storage, 3000)
    assert storage.memories.prepare_search(ALICE).building
    storage.close()  # joins the builder, which stops at its next chunk

    def broken(self):
        raise MemoryError("no room for a graph")

    monkeypatch.setattr(hnsw.HnswBuilder, "_new_graph", broken)
    storage = SQLiteStorage(path, dimension=DIMENSION, ann=SETTINGS)
    exact = SQLiteStorage(path, dimension=DIMENSION, ann=AnnSettings(threshold=0))
    try:
        status = storage.memories.prepare_search(ALICE, wait=True)
        assert (status.graph_rows, status.building) == (0, False)
        query = rows.vectors(1)[0]
        assert storage.memories.vector_search(ALICE, query, 10) == (
            exact.memories.vector_search(ALICE, query, 10)
        )
    finally:
        storage.close()
        exact.close()


@pytest.mark.parametrize(
    "fields",
    [
        {"threshold": -1},
        {"connectivity": 1},
        {"expansion_search": 0},
        {"tail_fraction": 0.0},
        {"tail_rows": -5},
    ],
)
def test_ann_settings_are_validated(fields) -> None:
    with pytest.raises(ValidationError):
        AnnSettings(**fields)
