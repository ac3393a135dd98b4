"""Migration 3 on a file written before it: facts get record time and stay current."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from ucma.storage.sqlite import SQLiteStorage
from ucma.storage.sqlite.schema import create_initial_schema, migrations
from ucma.types import FactStatus, Scope

ALICE = Scope("alice", "default")


def test_a_version_1_file_is_upgraded_with_record_time_from_creation(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(
            "CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
            " applied_at REAL NOT NULL)"
        )
        create_initial_schema(conn)
        conn.execute("INSERT INTO migrations VALUES (1, 'create_initial_schema', 1.0)")
        conn.execute("INSERT INTO settings VALUES ('embedding_dimension', '8')")
        conn.execute(
            "INSERT INTO memories (seq, id, kind, user_id, agent_id, content, provenance,"
            " temporal_level, base_salience, outcome_adjustment, created_at)"
            " VALUES (1, 'fact-old', 'semantic', 'alice', 'default', 'Alice lives in Oslo',"
            " 'user_stated', 3, 0.5, 0.0, 1234.5)"
        )
        conn.execute(
            "INSERT INTO facts (seq, user_id, agent_id, subject, predicate, object, subject_key,"
            " predicate_key, object_key, confidence, source_episode_ids, reinforcement_count)"
            " VALUES (1, 'alice', 'default', 'Alice', 'lives_in', 'Oslo', 'alice', 'lives_in',"
            " 'oslo', 0.8, '[]', 0)"
        )
    storage = SQLiteStorage(path, dimension=8)
    try:
        fact = storage.facts.get(ALICE, "fact-old")
        assert fact is not None
        assert (fact.status, fact.recorded_at, fact.superseded_at) == (
            FactStatus.ACTIVE,
            1234.5,
            None,
        )
        assert storage.facts.current(ALICE, "alice", "lives_in") == [fact]
        assert storage.facts.about(ALICE, "alice", as_of=1234.5) == [fact]
        assert storage.conflicts.list(ALICE) == []
    finally:
        storage.close()
    with closing(sqlite3.connect(path)) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM migrations ORDER BY version")]
    # Every registered migration was applied, in order (numbers are assigned in ranges,
    # so the registered ones need not be contiguous on every branch).
    assert versions == [m.version for m in migrations] and 3 in versions
