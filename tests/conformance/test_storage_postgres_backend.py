"""Behaviour specific to the PostgreSQL backend (not part of the ABC contract).

Keyword scores equal to the SQLite backend's on the same rows, the HNSW index of
large scopes, the per-scope event sequence under concurrent writers, the pool
across threads, URL and dimension checks. Runs when ``UCMA_TEST_POSTGRES_URL`` is
set (``make test-postgres``).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest
from tests.conformance.conftest import POSTGRES_URL, Make

from ucma.errors import StorageError, TransientStorageError, ValidationError
from ucma.storage.base import AnnSettings, Bm25, SearchIndexStatus
from ucma.storage.postgres import PostgresStorage
from ucma.storage.postgres.keywords import tsvector_literal
from ucma.storage.sqlite import SQLiteStorage
from ucma.types import MemoryKind, Scope

pytestmark = pytest.mark.skipif(not os.environ.get(POSTGRES_URL), reason=f"{POSTGRES_URL} unset")

ALICE = Scope("alice", "assistant")
BOB = Scope("bob", "assistant")
DIMENSION = 8

TEXTS = [
    "the kettle broke and we bought a new kettle",
    "green tea with the kettle, watching the rain",
    "we met near the station AND talked about trains",
    "party 🎉 tonight at the café, naïve but fun",
    "Write to wendy@post.dev about invoice INV-2024-0042",
    "liam@post.dev asked about the invoice too",
    "running shoes, ran a marathon, runs every morning",
    "nothing relevant here at all",
    "The support group meets on Fridays near the station",
    "kettle kettle kettle kettle kettle",
]
QUERIES = [
    ["kettle"],
    ["tea", "rain"],
    ["station", "trains", "absent"],
    ["wendy@post.dev"],
    ["invoice"],
    ["run"],
    ["cafe", "naive"],
    ["AND", "NEAR(", "content:kettle", '"'],
    ["support", "group", "may", "2023"],
]


def _fill(storage, make: Make) -> None:
    episodes = [
        make.episode(
            ALICE,
            id=f"ep-{i}",
            content=text,
            session_id="chat" if i < 5 else "other",
            timestamp=1_683_504_000.0 + i,
        )
        for i, text in enumerate(TEXTS)
    ]
    vectors = np.random.default_rng(7).standard_normal((len(TEXTS), DIMENSION))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    storage.episodes.add(episodes, vectors.astype(np.float32))
    storage.facts.add(make.fact(ALICE, "kettle", "is", "blue", id="fact-kettle"), vectors[0])
    storage.memories.set_archived(ALICE, ["ep-7"], 5.0)
    storage.memories.delete(ALICE, "ep-8")


def test_keyword_scores_equal_the_sqlite_backends(postgres, tmp_path: Path) -> None:
    """Same analysis, same statistics, same BM25F: the same ids and scores, in order."""
    sqlite = SQLiteStorage(tmp_path / "same.db", dimension=DIMENSION)
    pg = postgres.open()
    try:
        for storage in (sqlite, pg):
            _fill(storage, Make(DIMENSION))
        for params in (Bm25(), Bm25(k1=2.0, b=0.3, context_weight=0.0)):
            for terms in QUERIES:
                for archived in (False, True):
                    expected = sqlite.memories.keyword_search(
                        ALICE, terms, 20, include_archived=archived, bm25=params
                    )
                    found = pg.memories.keyword_search(
                        ALICE, terms, 20, include_archived=archived, bm25=params
                    )
                    assert [i for i, _ in found] == [i for i, _ in expected], terms
                    assert [s for _, s in found] == pytest.approx(
                        [s for _, s in expected], rel=1e-5
                    ), terms
        kinds = [MemoryKind.SEMANTIC]
        [(fact, score)] = pg.memories.keyword_search(ALICE, ["kettle"], 5, kinds=kinds)
        [(same, expected)] = sqlite.memories.keyword_search(ALICE, ["kettle"], 5, kinds=kinds)
        assert fact == same and score == pytest.approx(expected, rel=1e-5)
    finally:
        sqlite.close()


def test_keyword_statistics_are_per_scope(postgres) -> None:
    storage = postgres.open()
    make = Make(DIMENSION)
    storage.episodes.add([make.episode(ALICE, content="kettle and tea")], make.vectors(1))
    before = storage.memories.keyword_search(ALICE, ["kettle"], 5)
    storage.episodes.add(
        [make.episode(BOB, content=f"kettle number {i}") for i in range(30)], make.vectors(30)
    )
    assert storage.memories.keyword_search(ALICE, ["kettle"], 5) == before
    assert len(storage.memories.keyword_search(BOB, ["kettle"], 50)) == 30


def test_lexemes_are_quoted_and_frequencies_saturate() -> None:
    literal = tsvector_literal(["it's", "a\\b", "x", "x"], ["x", "y"])
    assert literal == "'it''s':1A 'a\\\\b':1A 'x':1A,2A,3B 'y':1B"
    assert tsvector_literal(["w"] * 300, ["w"] * 10).count("A") == 256
    assert tsvector_literal(["a" * 3000], []) == ""


def test_a_large_scope_gets_an_hnsw_index_that_agrees_with_exact_search(postgres) -> None:
    ann = AnnSettings(threshold=200, expansion_search=64)
    storage = PostgresStorage(postgres.url, dimension=DIMENSION, ann=ann, pool_size=2)
    try:
        make = Make(DIMENSION)
        vectors = make.vectors(400).astype(np.float32)
        storage.episodes.add([make.episode(ALICE) for _ in range(400)], vectors)
        small = [make.episode(BOB) for _ in range(20)]
        storage.episodes.add(small, make.vectors(20))
        queries = [make.vector() for _ in range(10)]
        exact = [storage.memories.vector_search(ALICE, q, 10) for q in queries]
        assert storage.memories.prepare_search(BOB) == SearchIndexStatus(20, 0, False)
        status = storage.memories.prepare_search(ALICE, wait=True)
        assert (status.live_rows, status.graph_rows, status.building) == (400, 400, False)
        assert postgres.raw(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'memories_embedding'"
        )[0][0].endswith(
            "USING hnsw (embedding vector_ip_ops) WITH (m='16', ef_construction='128')"
        )
        overlap = [
            len({i for i, _ in storage.memories.vector_search(ALICE, q, 10)} & {i for i, _ in e})
            for q, e in zip(queries, exact, strict=True)
        ]
        assert sum(overlap) >= 0.9 * 10 * len(queries)
        # The index serves every scope; another scope's rows never come back.
        found = storage.memories.vector_search(BOB, make.vector(), 50)
        assert {i for i, _ in found} == {e.id for e in small}
        # Archived rows are filtered, however the index is walked.
        storage.memories.set_archived(ALICE, [i for i, _ in exact[0]], 1.0)
        again = {i for i, _ in storage.memories.vector_search(ALICE, queries[0], 10)}
        assert len(again) == 10 and not again & {i for i, _ in exact[0]}
    finally:
        storage.close()


def test_concurrent_writers_get_a_gap_free_sequence_per_scope(postgres) -> None:
    stores = [postgres.open(), postgres.open()]
    errors: list[BaseException] = []

    def write(storage, n: int) -> None:
        make = Make(DIMENSION)
        try:
            for i in range(15):
                with storage.transaction():
                    storage.episodes.add([make.episode(ALICE, id=f"w{n}-{i}")], make.vectors(1))
                    storage.events.append(ALICE, "test.written", {"n": n, "i": i}, 1.0)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(stores[n % 2], n)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    events = stores[0].events.list(ALICE)
    assert [e.seq for e in events] == list(range(1, 4 * 15 * 2 + 1))
    # Each transaction's two events are adjacent: a scope's writers take turns.
    for stored, written in zip(events[::2], events[1::2], strict=True):
        assert stored.type == "memory.stored" and written.type == "test.written"
        assert stored.payload["memory_id"] == "w{n}-{i}".format(**written.payload)
    assert len({e.position for e in events}) == len(events)


def test_a_failed_statement_rolls_back_the_transaction_and_the_pool_recovers(postgres) -> None:
    storage = postgres.open()
    make = Make(DIMENSION)
    episode = make.episode(ALICE, id="dup")
    storage.episodes.add([episode], make.vectors(1))
    with pytest.raises(ValidationError, match="already in use"), storage.transaction():
        storage.episodes.add([make.episode(ALICE, id="fresh")], make.vectors(1))
        storage.episodes.add([make.episode(BOB, id="dup")], make.vectors(1))
    assert storage.memories.get(ALICE, "fresh") is None
    with pytest.raises(ValidationError):
        storage.episodes.add([make.episode(ALICE, content="nul \x00 byte")], make.vectors(1))
    for _ in range(5):  # every pooled connection is usable again
        storage.episodes.add([make.episode(ALICE)], make.vectors(1))
    assert storage.memories.count(ALICE)[MemoryKind.EPISODIC] == 6


def test_a_deadlock_is_a_transient_error_and_the_other_transaction_commits(postgres) -> None:
    """Two transactions updating two memories in opposite orders: PostgreSQL
    aborts one (a deadlock), which is reported as TransientStorageError (rolled
    back, safe to make again), and the other commits."""
    storage = postgres.open()
    make = Make(DIMENSION)
    episodes = [make.episode(ALICE, id="a"), make.episode(ALICE, id="b")]
    storage.episodes.add(episodes, make.vectors(2))
    both_hold_one = threading.Barrier(2)
    failures: list[BaseException] = []

    def update(first: str, second: str, salience: float) -> None:
        try:
            with storage.transaction():
                storage.memories.set_salience(
                    ALICE, first, base_salience=salience, outcome_adjustment=0.0
                )
                both_hold_one.wait()
                storage.memories.set_salience(
                    ALICE, second, base_salience=salience, outcome_adjustment=0.0
                )
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [
        threading.Thread(target=update, args=("a", "b", 0.2)),
        threading.Thread(target=update, args=("b", "a", 0.9)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(failures) == 1 and isinstance(failures[0], TransientStorageError), failures
    saliences = {storage.memories.get(ALICE, i).base_salience for i in ("a", "b")}
    assert len(saliences) == 1  # one transaction's writes, whole


def test_urls_and_dimensions_are_checked(postgres) -> None:
    postgres.open(dimension=DIMENSION).close()
    with pytest.raises(StorageError, match="8-dimensional"):
        postgres.open(dimension=4)
    with pytest.raises(ValidationError, match="postgresql://"):
        PostgresStorage("mysql://x/y", dimension=4)
    with pytest.raises(StorageError, match="127.0.0.1"):
        PostgresStorage("postgresql://nobody@127.0.0.1:1/none", dimension=4)
    storage = postgres.open()
    assert "closed" not in repr(storage) and "postgresql://" in repr(storage)
    storage.close()
    with pytest.raises(StorageError, match="closed"):
        storage.memories.count(ALICE)


def test_scrub_rewrites_the_tables(postgres) -> None:
    storage = postgres.open()
    make = Make(DIMENSION)
    storage.episodes.add([make.episode(ALICE, content="forget me")], make.vectors(1))
    storage.erasure.erase_scope(ALICE, 2.0)
    assert storage.erasure.scrub() == (True, True)
    assert storage.memories.scopes() == []
