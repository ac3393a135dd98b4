"""Keyword (BM25) and dense search: scores, filters, hostile input, cache freshness."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ucma.errors import ValidationError
from ucma.storage.base import Bm25
from ucma.types import MemoryKind, Scope

ALICE = Scope("alice", "assistant")
BOB = Scope("bob", "assistant")

HOSTILE_TERMS = [
    "NEAR(",
    "NEAR",
    "AND",
    "OR",
    "NOT",
    "*",
    "**",
    '"',
    '""',
    "'",
    "col:",
    "content:",
    "content:kettle",
    "^kettle",
    "kettle*",
    "(",
    ")",
    "()",
    "{",
    "}",
    "[",
    "]",
    "-",
    "+",
    ":",
    "\x00",
    "a\x00b",
    "kettle\x00",
    "🎉",
    "🎉kettle🎉",
    "\\",
    "%",
    "_",
    ";",
    "--",
    "/*",
    "*/",
    "' OR 1=1 --",
    '"); DROP TABLE memories; --',
    "NEAR(kettle tea, 2)",
    "kettle AND tea",
    "\ud800",
    "é",
    "\u200b",
    "\t\n",
    " ",
    "",
    "a" * 5000,
]


@pytest.fixture
def corpus(storage, make):
    texts = {
        "kettle": "the kettle broke and we bought a new kettle",
        "tea": "green tea with the kettle",
        "near": "we met near the station AND talked",
        "emoji": "party 🎉 tonight, naïve café",
        "other": "nothing relevant here",
    }
    records = {}
    for name, text in texts.items():
        records[name] = make.episode(ALICE, id=f"ep-{name}", content=text)
    storage.episodes.add(list(records.values()), make.vectors(len(records)))
    fact = make.fact(ALICE, "kettle", "is", "blue", id="fact-kettle")
    storage.facts.add(fact, make.vector())
    return records


def test_keyword_search_scores_are_positive_and_sorted(storage, corpus) -> None:
    hits = storage.memories.keyword_search(ALICE, ["kettle"], 10)
    assert {i for i, _ in hits} == {"ep-kettle", "ep-tea", "fact-kettle"}
    scores = [s for _, s in hits]
    assert all(isinstance(s, float) and s > 0 for s in scores)
    assert scores == sorted(scores, reverse=True)
    assert hits[0][0] in {"ep-kettle", "fact-kettle"}  # two mentions or a short text


def test_keyword_search_matches_any_term(storage, corpus) -> None:
    hits = storage.memories.keyword_search(ALICE, ["station", "party", "absent"], 10)
    assert {i for i, _ in hits} == {"ep-near", "ep-emoji"}
    assert storage.memories.keyword_search(ALICE, ["kettle"], 1)[0][0] in {
        "ep-kettle",
        "fact-kettle",
    }
    assert len(storage.memories.keyword_search(ALICE, ["kettle"], 2)) == 2


def test_keyword_search_filters_kinds_and_archived(storage, corpus) -> None:
    kinds = [MemoryKind.SEMANTIC]
    assert [i for i, _ in storage.memories.keyword_search(ALICE, ["kettle"], 10, kinds=kinds)] == [
        "fact-kettle"
    ]
    assert storage.memories.keyword_search(ALICE, ["kettle"], 10, kinds=[]) == []
    storage.memories.set_archived(ALICE, ["ep-kettle"], 1.0)
    assert "ep-kettle" not in [i for i, _ in storage.memories.keyword_search(ALICE, ["kettle"], 9)]
    assert "ep-kettle" in [
        i for i, _ in storage.memories.keyword_search(ALICE, ["kettle"], 9, include_archived=True)
    ]


def test_keyword_search_with_nothing_to_search(storage, corpus) -> None:
    assert storage.memories.keyword_search(ALICE, [], 10) == []
    assert storage.memories.keyword_search(ALICE, ["", "  ", "\x00"], 10) == []
    assert storage.memories.keyword_search(ALICE, ["kettle"], 0) == []


def test_keyword_operators_are_plain_words(storage, corpus) -> None:
    assert [i for i, _ in storage.memories.keyword_search(ALICE, ["NEAR("], 10)] == ["ep-near"]
    assert {i for i, _ in storage.memories.keyword_search(ALICE, ["AND"], 10)} == {
        "ep-kettle",
        "ep-near",
    }
    # No column filter: "content:kettle" is the two words.
    assert storage.memories.keyword_search(ALICE, ["content:kettle"], 10) == (
        storage.memories.keyword_search(ALICE, ["content", "kettle"], 10)
    )
    assert {i for i, _ in storage.memories.keyword_search(ALICE, ['"kettle"'], 10)} == {
        "ep-kettle",
        "ep-tea",
        "fact-kettle",
    }


def test_hostile_terms_never_raise(storage, corpus) -> None:
    for term in HOSTILE_TERMS:
        hits = storage.memories.keyword_search(ALICE, [term], 5)
        assert all(score > 0 for _, score in hits), term
    hits = storage.memories.keyword_search(ALICE, HOSTILE_TERMS, 50)
    assert "ep-kettle" in {i for i, _ in hits}


def test_arbitrary_terms_never_raise(storage, corpus) -> None:
    @settings(
        max_examples=150,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(st.lists(st.text(max_size=30), max_size=6))
    def check(terms: list[str]) -> None:
        hits = storage.memories.keyword_search(ALICE, terms, 5)
        assert len(hits) <= 5
        assert all(score > 0 for _, score in hits)

    check()


def test_vector_search_returns_top_k_best_first(storage, make) -> None:
    cosines = {"exact": 1.0, "close": 0.9, "mid": 0.5, "far": 0.1, "opposite": -0.8}
    episodes = [make.episode(ALICE, id=name) for name in cosines]
    vectors = np.stack(
        [
            make.axis(0, cos, other=1) if cos >= 0 else -make.axis(0, -cos, other=1)
            for cos in cosines.values()
        ]
    )
    storage.episodes.add(episodes, vectors)
    hits = storage.memories.vector_search(ALICE, make.axis(0), 3)
    assert [i for i, _ in hits] == ["exact", "close", "mid"]
    assert [s for _, s in hits] == pytest.approx([1.0, 0.9, 0.5], abs=1e-6)
    everything = storage.memories.vector_search(ALICE, make.axis(0), 100)
    assert [i for i, _ in everything] == list(cosines)
    assert everything[-1][1] == pytest.approx(-0.8, abs=1e-6)
    # the query need not be normalised
    assert storage.memories.vector_search(ALICE, 5 * make.axis(0), 1)[0][0] == "exact"
    assert storage.memories.vector_search(ALICE, make.axis(0), 0) == []


def test_vector_search_filters_kinds_and_archived(storage, make) -> None:
    episode, fact = make.episode(ALICE), make.fact(ALICE)
    procedure, learning = make.procedure(ALICE), make.learning(ALICE)
    storage.episodes.add([episode], make.axis(0).reshape(1, -1))
    storage.facts.add(fact, make.axis(0, 0.9))
    storage.procedures.add(procedure, make.axis(0, 0.8))
    storage.learnings.add(learning, make.axis(0, 0.7))
    query = make.axis(0)

    def search(**kwargs):
        return [i for i, _ in storage.memories.vector_search(ALICE, query, 10, **kwargs)]

    assert search() == [episode.id, fact.id, procedure.id, learning.id]
    assert search(kinds=[MemoryKind.SEMANTIC, MemoryKind.LEARNING]) == [fact.id, learning.id]
    assert search(kinds=[]) == []
    storage.memories.set_archived(ALICE, [episode.id, procedure.id], 3.0)
    assert search() == [fact.id, learning.id]
    assert search(include_archived=True) == [episode.id, fact.id, procedure.id, learning.id]
    assert search(kinds=[MemoryKind.PROCEDURAL], include_archived=True) == [procedure.id]
    storage.memories.set_archived(ALICE, [procedure.id], None)
    assert search() == [fact.id, procedure.id, learning.id]
    storage.memories.delete(ALICE, fact.id)
    assert search(include_archived=True) == [episode.id, procedure.id, learning.id]


def test_vector_search_rejects_bad_queries(storage, make) -> None:
    storage.episodes.add([make.episode(ALICE)], make.vectors(1))
    for query in (
        np.zeros(make.dimension),
        np.ones(make.dimension + 1),
        np.full(make.dimension, np.inf),
    ):
        with pytest.raises(ValidationError):
            storage.memories.vector_search(ALICE, query, 3)


def test_vectors_returns_the_stored_float32_vectors(storage, make) -> None:
    episodes = [make.episode(ALICE) for _ in range(3)]
    vectors = make.vectors(3).astype(np.float32)
    storage.episodes.add(episodes, vectors)
    got = storage.memories.vectors(ALICE, [episodes[2].id, "missing", episodes[0].id])
    assert list(got) == [episodes[2].id, episodes[0].id]
    assert got[episodes[2].id].dtype == np.float32
    np.testing.assert_array_equal(got[episodes[2].id], vectors[2])
    np.testing.assert_array_equal(got[episodes[0].id], vectors[0])


def test_a_second_connection_sees_every_write(backend, make) -> None:
    writer, reader = backend.open(), backend.open()
    first = make.episode(ALICE)
    writer.episodes.add([first], make.axis(0).reshape(1, -1))
    assert [i for i, _ in reader.memories.vector_search(ALICE, make.axis(0), 5)] == [first.id]

    second = make.episode(ALICE)
    writer.episodes.add([second], make.axis(1).reshape(1, -1))
    assert reader.memories.vector_search(ALICE, make.axis(1), 1)[0][0] == second.id

    writer.memories.set_archived(ALICE, [second.id], 1.0)
    assert [i for i, _ in reader.memories.vector_search(ALICE, make.axis(1), 5)] == [first.id]
    writer.memories.set_archived(ALICE, [second.id], None)
    writer.memories.delete(ALICE, first.id)
    assert [i for i, _ in reader.memories.vector_search(ALICE, make.axis(0), 5)] == [second.id]

    third = make.episode(ALICE)
    reader.episodes.add([third], make.axis(2).reshape(1, -1))  # and the other way round
    assert writer.memories.vector_search(ALICE, make.axis(2), 1)[0][0] == third.id
    assert reader.memories.vector_search(ALICE, make.axis(2), 1)[0][0] == third.id


def test_caches_agree_with_the_database_after_mixed_writes(backend, make) -> None:
    """Random inserts, deletes, archives and restores through two connections;
    every search must equal a brute-force search over what is stored."""
    a, b = backend.open(), backend.open()
    rng = np.random.default_rng(5)
    live: list[str] = []
    for step in range(60):
        writer = a if rng.random() < 0.5 else b
        action = rng.integers(0, 4) if live else 0
        if action == 0:
            batch = [make.episode(ALICE) for _ in range(int(rng.integers(1, 40)))]
            writer.episodes.add(batch, make.vectors(len(batch)))
            live += [e.id for e in batch]
        elif action == 1:
            victim = live.pop(int(rng.integers(0, len(live))))
            assert writer.memories.delete(ALICE, victim)
        else:
            chosen = list(rng.choice(live, size=min(len(live), 5), replace=False))
            writer.memories.set_archived(ALICE, chosen, 1.0 if action == 2 else None)
        if step % 3 == 0:
            query = make.vector()
            stored = a.memories.get_many(ALICE, live)
            visible = [i for i in live if stored[i].archived_at is None]
            vectors = a.memories.vectors(ALICE, visible)
            expected = sorted(visible, key=lambda i: -float(vectors[i] @ query))[:10]
            for storage in (a, b):
                got = [i for i, _ in storage.memories.vector_search(ALICE, query, 10)]
                assert got == expected


def test_many_deletes_keep_search_exact(storage, make) -> None:
    episodes = [make.episode(ALICE) for _ in range(700)]
    vectors = make.vectors(700)
    storage.episodes.add(episodes, vectors)
    storage.memories.vector_search(ALICE, make.vector(), 1)
    for episode in episodes[:600]:
        storage.memories.delete(ALICE, episode.id)
    query = make.vector()
    kept = {e.id: vectors[i] for i, e in enumerate(episodes) if i >= 600}
    expected = sorted(kept, key=lambda i: -float(kept[i] @ query))[:20]
    assert [i for i, _ in storage.memories.vector_search(ALICE, query, 20)] == expected
    assert len(storage.memories.vector_search(ALICE, query, 1000)) == 100


def test_keyword_context_field_holds_the_previous_turn_and_the_date(storage, make) -> None:
    t0 = 1_683_504_000.0  # 8 May 2023 00:00 UTC
    question = make.episode(
        ALICE,
        id="ep-q",
        session_id="chat",
        timestamp=t0 + 10,
        content="how did the support group go?",
    )
    answer = make.episode(
        ALICE,
        id="ep-a",
        session_id="chat",
        timestamp=t0 + 20,
        content="it was so powerful, I cried",
    )
    elsewhere = make.episode(
        ALICE,
        id="ep-x",
        session_id="other",
        timestamp=t0 + 30,
        content="the support group meets on Fridays",
    )
    # Inserted out of order: the context follows timestamps, not insertion order.
    storage.episodes.add([answer, elsewhere], make.vectors(2))
    storage.episodes.add([question], make.vectors(1))
    hits = storage.memories.keyword_search(ALICE, ["support", "group"], 10)
    ids = [i for i, _ in hits]
    assert set(ids) == {"ep-q", "ep-x"}  # the answer was stored before its question
    storage.episodes.add(
        [
            make.episode(
                ALICE,
                id="ep-a2",
                session_id="chat",
                timestamp=t0 + 40,
                content="yes, really moving",
            )
        ],
        make.vectors(1),
    )
    hits = dict(storage.memories.keyword_search(ALICE, ["powerful"], 10))
    assert set(hits) == {"ep-a", "ep-a2"}
    assert hits["ep-a"] > hits["ep-a2"]  # own words outweigh the context's
    own_words = Bm25(context_weight=0.0)
    assert storage.memories.keyword_search(ALICE, ["powerful"], 10, bm25=own_words) == [
        ("ep-a", hits["ep-a"])
    ]
    by_date = {i for i, _ in storage.memories.keyword_search(ALICE, ["may", "2023"], 10)}
    assert {"ep-q", "ep-a", "ep-x", "ep-a2"} <= by_date


def test_episode_neighbors_briefs_and_participants(storage, make) -> None:
    turns = [
        make.episode(
            ALICE,
            id=f"ep-{i}",
            session_id="chat",
            timestamp=100.0 + i,
            source="Caroline" if i % 2 else "Melanie",
            participants=[],
        )
        for i in range(6)
    ]
    storage.episodes.add(turns, make.vectors(len(turns)))
    storage.episodes.add(
        [make.episode(ALICE, id="ep-other", session_id="other", timestamp=103.5)],
        make.vectors(1),
    )
    near = storage.episodes.neighbors(ALICE, ["ep-3", "ep-0", "missing"], 2)
    assert near["ep-3"] == [("ep-2", -1), ("ep-4", 1), ("ep-1", -2), ("ep-5", 2)]
    assert near["ep-0"] == [("ep-1", 1), ("ep-2", 2)]
    assert "missing" not in near
    assert storage.episodes.neighbors(ALICE, ["ep-3"], 0) == {}
    same_time = [
        make.episode(ALICE, id=f"ep-t{i}", session_id="burst", timestamp=200.0 + (i > 2))
        for i in range(5)
    ]  # three turns in one second, then two in the next
    storage.episodes.add(same_time, make.vectors(5))
    assert storage.episodes.neighbors(ALICE, ["ep-t1"], 2)["ep-t1"] == [
        ("ep-t0", -1),
        ("ep-t2", 1),
        ("ep-t3", 2),
    ]
    assert storage.episodes.neighbors(ALICE, ["ep-t3"], 2)["ep-t3"] == [
        ("ep-t2", -1),
        ("ep-t4", 1),
        ("ep-t1", -2),
    ]
    storage.memories.set_archived(ALICE, ["ep-t2"], 1.0)  # archived turns are skipped
    assert storage.episodes.neighbors(ALICE, ["ep-t1"], 2)["ep-t1"] == [
        ("ep-t0", -1),
        ("ep-t3", 1),
        ("ep-t4", 2),
    ]
    assert storage.episodes.neighbors(ALICE, ["ep-t4"], 2)["ep-t4"] == [
        ("ep-t3", -1),
        ("ep-t1", -2),
    ]
    assert storage.episodes.neighbors(BOB, ["ep-3"], 2) == {}
    briefs = storage.episodes.briefs(ALICE, ["ep-1", "ep-other", "nope"])
    assert set(briefs) == {"ep-1", "ep-other"}
    assert briefs["ep-1"].session_id == "chat" and briefs["ep-1"].timestamp == 101.0
    assert briefs["ep-1"].participants == frozenset({"caroline"})
    names = storage.episodes.participants(ALICE)
    assert {"Caroline", "Melanie"} <= set(names)
    assert storage.episodes.participants(BOB) == []


def test_vector_search_latest_is_batched_and_bounded_to_the_newest(storage, make) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((6, make.dimension)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    episodes = [make.episode(ALICE, id=f"ep-w{i}") for i in range(6)]
    storage.episodes.add(episodes, vectors)
    found = storage.memories.vector_search_latest(ALICE, vectors[[0, 5]], 2, window=3)
    assert "ep-w0" not in {i for i, _ in found[0]}  # outside the newest three
    assert found[1][0][0] == "ep-w5" and found[1][0][1] == pytest.approx(1.0, abs=1e-5)
    assert all(len(hits) == 2 for hits in found)
    storage.memories.set_archived(ALICE, ["ep-w5"], 1.0)
    again = storage.memories.vector_search_latest(ALICE, vectors[[5]], 3, window=3)
    assert "ep-w5" not in {i for i, _ in again[0]}
    assert storage.memories.vector_search_latest(BOB, vectors[[0]], 2, window=3) == [[]]
    facts_only = storage.memories.vector_search_latest(
        ALICE, vectors[[0]], 2, window=6, kinds=[MemoryKind.SEMANTIC]
    )
    assert facts_only == [[]]


def test_vector_search_latest_inside_a_write_sees_its_rows_and_only_the_newest(
    storage, make
) -> None:
    rng = np.random.default_rng(11)
    vectors = rng.standard_normal((8, make.dimension)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    episodes = [make.episode(ALICE, id=f"ep-t{i}") for i in range(8)]
    storage.episodes.add(episodes[:6], vectors[:6])
    storage.memories.vector_search_latest(ALICE, vectors[[0]], 1, window=8)  # cache filled

    with pytest.raises(RuntimeError), storage.transaction():
        storage.episodes.add(episodes[6:], vectors[6:])
        storage.memories.set_archived(ALICE, ["ep-t5"], 1.0)
        found = storage.memories.vector_search_latest(ALICE, vectors, 8, window=4)
        raise RuntimeError("roll back")

    # The newest four as the transaction sees them: ep-t7 and ep-t6 (uncommitted),
    # ep-t5 (archived by it, so left out) and ep-t4; nothing older.
    assert {i for hits in found for i, _ in hits} == {"ep-t4", "ep-t6", "ep-t7"}
    assert found[7][0][0] == "ep-t7" and found[7][0][1] == pytest.approx(1.0, abs=1e-5)
    after = storage.memories.vector_search_latest(ALICE, vectors, 8, window=3)
    assert {i for hits in after for i, _ in hits} == {"ep-t3", "ep-t4", "ep-t5"}


def test_a_replaced_vector_is_what_every_connection_searches(backend, make) -> None:
    writer, reader = backend.open(), backend.open()
    moved, other = make.episode(ALICE), make.episode(ALICE)
    writer.episodes.add([moved, other], np.stack([make.axis(0), make.axis(1)]))
    for storage in (writer, reader):  # both caches loaded before the change
        assert storage.memories.vector_search(ALICE, make.axis(0), 1)[0][0] == moved.id
    with writer.transaction():
        assert writer.memories.replace_vector(ALICE, moved.id, make.axis(2))
    for storage in (writer, reader):
        assert storage.memories.vector_search(ALICE, make.axis(2), 1)[0][0] == moved.id
        # the old direction now finds the other record (cosine 0.44 against 0)
        assert storage.memories.vector_search(ALICE, make.axis(0, 0.9, 1), 1)[0][0] == other.id
        np.testing.assert_array_equal(
            storage.memories.vectors(ALICE, [moved.id])[moved.id], make.axis(2)
        )
    assert not writer.memories.replace_vector(BOB, moved.id, make.axis(3))
    assert not writer.memories.replace_vector(ALICE, "missing", make.axis(3))
    with pytest.raises(ValidationError):
        writer.memories.replace_vector(ALICE, moved.id, np.ones(make.dimension + 1))


class _Abandon(Exception):
    pass


def test_a_transaction_searches_its_own_writes_and_others_see_them_once_committed(
    backend, make
) -> None:
    storage, other = backend.open(), backend.open()
    first, second = make.episode(ALICE), make.episode(ALICE, content="a keyword here")
    storage.episodes.add([first, second], np.stack([make.axis(0), make.axis(1)]))
    assert storage.memories.vector_search(ALICE, make.axis(0), 1)[0][0] == first.id

    def latest(vector: np.ndarray, k: int = 4) -> list[str]:
        return [
            i
            for i, _ in storage.memories.vector_search_latest(ALICE, vector[None], k, window=10)[0]
        ]

    added = make.episode(ALICE, content="another keyword")
    with storage.transaction():
        storage.episodes.add([added], make.axis(2)[None])
        assert latest(make.axis(2))[0] == added.id
        # Changes after a first search are seen too, by vector and by keyword.
        storage.memories.set_archived(ALICE, [first.id], 1.0)
        assert first.id not in latest(make.axis(0))
        assert storage.memories.delete(ALICE, second.id)
        assert second.id not in latest(make.axis(1))
        found = storage.memories.keyword_search(ALICE, ["keyword"], 5)
        assert [i for i, _ in found] == [added.id]
        # Nothing uncommitted reaches another connection.
        assert other.memories.vector_search(ALICE, make.axis(2), 1)[0][0] != added.id
    for reader in (storage, other):
        assert reader.memories.vector_search(ALICE, make.axis(2), 1)[0][0] == added.id
        assert first.id not in [i for i, _ in reader.memories.vector_search(ALICE, make.axis(0), 3)]
    abandoned = make.episode(ALICE)
    with pytest.raises(_Abandon), storage.transaction():
        storage.episodes.add([abandoned], make.axis(3)[None])
        assert latest(make.axis(3))[0] == abandoned.id
        storage.memories.set_archived(ALICE, [added.id], 1.0)
        assert added.id not in latest(make.axis(2))
        raise _Abandon
    assert abandoned.id not in latest(make.axis(3))
    assert latest(make.axis(2))[0] == added.id  # the rolled-back archival left no trace
    assert abandoned.id not in [
        i for i, _ in storage.memories.vector_search(ALICE, make.axis(3), 3)
    ]
