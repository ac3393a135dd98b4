"""The PostgreSQL backend's in-process search copies follow every process's commits.

Two ``PostgresStorage`` objects on one database (two pools, as two processes would
have): whatever one commits, a search through the other finds at once, whatever the
change (insert, archive, restore, text rewrite, new vector, delete, erasure), and rows
committed out of seq order too. Inside a transaction the server answers, so a
transaction finds its own rows and they never reach a copy. The server's answers equal
the copies'. Runs when ``UCMA_TEST_POSTGRES_URL`` is set (``make test-postgres``).
"""

from __future__ import annotations

import os
import threading
from dataclasses import replace

import numpy as np
import pytest
from tests.conformance.conftest import POSTGRES_URL, Make

from ucma.storage.postgres import PostgresStorage
from ucma.types import Scope

pytestmark = pytest.mark.skipif(not os.environ.get(POSTGRES_URL), reason=f"{POSTGRES_URL} unset")

ALICE = Scope("alice", "assistant")
DIMENSION = 8


@pytest.fixture
def pair(postgres):
    """A reader and a writer: two storages with pools of their own on one database."""
    reader = PostgresStorage(postgres.url, dimension=DIMENSION, pool_size=2)
    writer = PostgresStorage(postgres.url, dimension=DIMENSION, pool_size=2)
    try:
        yield reader, writer
    finally:
        writer.close()
        reader.close()


def _ids(found) -> list[str]:
    return [memory_id for memory_id, _ in found]


def _fill(storage: PostgresStorage, make: Make, count: int = 30) -> None:
    storage.episodes.add(
        [make.episode(ALICE, content=f"ordinary line {i} about the weather") for i in range(count)],
        make.vectors(count),
    )


def test_a_write_through_one_storage_is_found_through_the_other_at_once(pair) -> None:
    reader, writer = pair
    make = Make(DIMENSION)
    _fill(writer, make)
    assert reader.memories.keyword_search(ALICE, ["kettle"], 5) == []  # the copy is loaded
    target = make.axis(2)
    before = _ids(reader.memories.vector_search(ALICE, target, 3))

    kettle = make.episode(ALICE, id="ep-kettle", content="the kettle broke on Tuesday")
    writer.episodes.add([kettle], target[None])
    assert _ids(reader.memories.keyword_search(ALICE, ["kettle"], 5)) == ["ep-kettle"]
    assert _ids(reader.memories.vector_search(ALICE, target, 3))[0] == "ep-kettle"

    writer.memories.set_archived(ALICE, ["ep-kettle"], 10.0)
    assert reader.memories.keyword_search(ALICE, ["kettle"], 5) == []
    assert _ids(reader.memories.keyword_search(ALICE, ["kettle"], 5, include_archived=True)) == [
        "ep-kettle"
    ]
    assert _ids(reader.memories.vector_search(ALICE, target, 3)) == before
    writer.memories.set_archived(ALICE, ["ep-kettle"], None)
    assert _ids(reader.memories.keyword_search(ALICE, ["kettle"], 5)) == ["ep-kettle"]

    writer.episodes.update(replace(kettle, content="the teapot broke on Tuesday"))
    assert reader.memories.keyword_search(ALICE, ["kettle"], 5) == []
    assert _ids(reader.memories.keyword_search(ALICE, ["teapot"], 5)) == ["ep-kettle"]

    writer.memories.replace_vector(ALICE, "ep-kettle", make.axis(5))
    vectors = reader.memories.vectors(ALICE, ["ep-kettle"])  # before the copy catches up
    assert np.allclose(vectors["ep-kettle"], make.axis(5))
    assert _ids(reader.memories.vector_search(ALICE, make.axis(5), 1)) == ["ep-kettle"]
    assert "ep-kettle" not in _ids(reader.memories.vector_search(ALICE, target, 3))
    assert np.allclose(reader.memories.vectors(ALICE, ["ep-kettle"])["ep-kettle"], make.axis(5))

    writer.memories.delete(ALICE, "ep-kettle")
    assert reader.memories.keyword_search(ALICE, ["teapot"], 5) == []
    assert "ep-kettle" not in _ids(reader.memories.vector_search(ALICE, make.axis(5), 40))


def test_an_erased_scope_written_again_is_not_mistaken_for_its_old_state(pair) -> None:
    reader, writer = pair
    make = Make(DIMENSION)
    writer.episodes.add([make.episode(ALICE, content="secret kettle")], make.vectors(1))
    assert len(reader.memories.keyword_search(ALICE, ["kettle"], 5)) == 1
    writer.erasure.erase_scope(ALICE, 5.0)
    writer.episodes.add([make.episode(ALICE, id="ep-new", content="a new kettle")], make.vectors(1))
    assert _ids(reader.memories.keyword_search(ALICE, ["kettle"], 5)) == ["ep-new"]
    assert reader.memories.keyword_search(ALICE, ["secret"], 5) == []


def test_rows_committed_out_of_seq_order_are_found(pair, postgres, monkeypatch) -> None:
    """A writer holding an earlier seq commits after one holding a later seq: the
    reader, which has seen the later row, finds the earlier one too."""
    import ucma.storage.postgres.memories as memories_module

    reader, writer = pair
    make = Make(DIMENSION)
    _fill(writer, make, 5)
    reader.memories.keyword_search(ALICE, ["ordinary"], 5)
    seq_taken, go_on = threading.Event(), threading.Event()
    terms_of = memories_module.row_terms

    def held_back(content: str, context: str):  # between taking the seq and inserting
        if threading.current_thread().name == "late":
            seq_taken.set()
            assert go_on.wait(30)
        return terms_of(content, context)

    monkeypatch.setattr(memories_module, "row_terms", held_back)
    late = make.episode(ALICE, id="ep-late", content="late kettle")
    vector = make.vectors(1)
    thread = threading.Thread(target=lambda: writer.episodes.add([late], vector), name="late")
    thread.start()
    try:
        assert seq_taken.wait(30)
        other = make.episode(ALICE, id="ep-early", content="early kettle")
        reader.episodes.add([other], make.vectors(1))
        assert _ids(reader.memories.keyword_search(ALICE, ["kettle"], 5)) == ["ep-early"]
    finally:
        go_on.set()
        thread.join(30)
    found = _ids(reader.memories.keyword_search(ALICE, ["kettle"], 5))
    assert sorted(found) == ["ep-early", "ep-late"]
    seqs = dict(postgres.raw("SELECT id, seq FROM memories WHERE id LIKE 'ep-%'"))
    assert seqs["ep-late"] < seqs["ep-early"]  # the case this test is about happened


def test_a_transaction_finds_its_own_rows_and_they_never_reach_a_copy(pair) -> None:
    reader, writer = pair
    make = Make(DIMENSION)
    _fill(writer, make, 5)
    writer.memories.keyword_search(ALICE, ["kettle"], 5)
    with pytest.raises(RuntimeError), writer.transaction():
        writer.episodes.add(
            [make.episode(ALICE, id="ep-own", content="own kettle")], make.vectors(1)
        )
        assert _ids(writer.memories.keyword_search(ALICE, ["kettle"], 5)) == ["ep-own"]
        assert (
            _ids(writer.memories.vector_search(ALICE, make.vectors(1)[0], 10)).count("ep-own") == 1
        )
        raise RuntimeError("roll back")
    assert writer.memories.keyword_search(ALICE, ["kettle"], 5) == []
    assert reader.memories.keyword_search(ALICE, ["kettle"], 5) == []


def test_the_copy_answers_as_the_server_does(pair) -> None:
    reader, writer = pair
    make = Make(DIMENSION)
    texts = ["kettle and tea", "tea in the rain", "kettle kettle", "a station near the rain"]
    writer.episodes.add(
        [make.episode(ALICE, content=text) for text in texts * 5], make.vectors(len(texts) * 5)
    )
    writer.memories.set_archived(ALICE, [writer.memories.list(ALICE)[0].id], 3.0)
    queries = make.vectors(4)
    for terms in (["kettle"], ["tea", "rain"], ["station", "absent"]):
        for archived in (False, True):
            copy = reader.memories.keyword_search(ALICE, terms, 10, include_archived=archived)
            with reader.transaction():
                server = reader.memories.keyword_search(ALICE, terms, 10, include_archived=archived)
            assert _ids(copy) == _ids(server)
            assert [s for _, s in copy] == pytest.approx([s for _, s in server], rel=1e-5)
    for query in queries:
        copy = reader.memories.vector_search(ALICE, query, 7)
        with reader.transaction():
            server = reader.memories.vector_search(ALICE, query, 7)
        assert _ids(copy) == _ids(server)
        assert [s for _, s in copy] == pytest.approx([s for _, s in server], abs=1e-5)
    assert np.isfinite([s for _, s in copy]).all()
    ids = [record.id for record in writer.memories.list(ALICE, include_archived=True)][:6]
    copy_vectors = reader.memories.vectors(ALICE, [*ids, "absent"])
    with reader.transaction():
        server_vectors = reader.memories.vectors(ALICE, [*ids, "absent"])
    assert list(copy_vectors) == list(server_vectors) == ids
    for memory_id in ids:
        assert np.array_equal(copy_vectors[memory_id], server_vectors[memory_id])
