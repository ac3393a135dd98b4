"""The SQLite erasure accounts for every text column of the schema: a new table or
column holding text must be added to ``ucma.storage.sql.erasure`` (searched, or
listed here as holding no personal data), so an erasure cannot miss it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ucma.storage.sql.erasure import (
    CONTEXT_TEXTS,
    MEMORY_REFERENCES,
    MEMORY_TEXTS,
    RECORD_TEXTS,
)
from ucma.storage.sqlite import SQLiteStorage
from ucma.storage.sqlite.erasure import scoped_tables

#: Text columns that hold ids, hashes, enumerations, scope names or operator data.
NOT_PERSONAL = {
    "memories": {"id", "kind", "user_id", "agent_id", "provenance", "bank"},
    "episodes": {"user_id", "agent_id", "tier"},
    "facts": {"user_id", "agent_id"},
    "procedures": {"user_id", "agent_id", "procedure_type", "risk_level"},
    "procedure_tags": {"user_id", "agent_id"},
    "learnings": {"user_id", "agent_id"},
    "learning_tags": {"user_id", "agent_id"},
    "memory_sources": {"memory_id"},
    "conflicts": {"id", "user_id", "agent_id", "existing_fact_id", "new_fact_id"},
    "review_flags": {"memory_id", "premise_id", "user_id", "agent_id", "conflict_id"},
    "decision_traces": {"id", "user_id", "agent_id", "retrieval_id", "memory_scores"},
    "salience_updates": {"trace_id", "memory_id", "user_id", "agent_id"},
    "memory_history": {"user_id", "agent_id", "memory_id"},
    "duplicate_attempts": {"user_id", "agent_id", "existing_id"},
    "known_participants": {"user_id", "agent_id"},
    "supersessions": {"memory_id", "user_id", "agent_id", "superseded_by"},
    # Counts and phase names only; an error's text is searched (RECORD_TEXTS).
    "sleep_runs": {"user_id", "agent_id", "trigger", "phases", "changes"},
    "opinions": {"id", "user_id", "agent_id", "status", "memory_id", "replaces", "replaced_by"},
    "transitions": {"id", "user_id", "agent_id", "promoted_fact_id"},
    "competences": {"id", "user_id", "agent_id"},
    "goals": {"id", "user_id", "agent_id", "status", "parent_id", "subgoals", "accepted", "origin"},
    "trace_memories": {"trace_id", "memory_id", "user_id", "agent_id"},
    "co_retrievals": {"user_id", "agent_id", "first_id", "second_id"},
    "retrievals": {"id", "user_id", "agent_id", "query_hash", "memory_ids", "scores"},
    "events": {"id", "user_id", "agent_id", "type"},
    "vault": {"user_id", "agent_id", "token", "kind", "digest"},
    "scope_versions": {"user_id", "agent_id"},
    "graph_nodes": {"memory_id"},
    "graph_edges": {"source_id", "target_id", "edge_type"},
    "retention": {"memory_id"},
    "abstracted_episodes": {"memory_id"},
    "embedding_cache": {"model", "text_hash"},
    # Database-wide administration, not about anyone a memory names.
    "api_keys": {"id", "token_hash", "user_id", "agent_id", "label"},
    "settings": {"key", "value"},
    "migrations": {"name"},
    "gardener_jobs": {"job", "last_summary", "locked_by"},
    # Work names (a scope's appears as a digest, never its ids) and process names.
    "leases": {"name", "owner"},
    "event_cursors": {"name"},
    "vault_keys": {"fingerprint"},
    "erasures": {"target", "counts"},
}
#: Searched outside the registers: event payloads are redacted on a match.
SEARCHED_ELSEWHERE = {"events": {"payload"}}


def test_every_text_column_is_searched_or_known_to_hold_no_personal_data(
    tmp_path: Path,
) -> None:
    SQLiteStorage(tmp_path / "s.db", dimension=4).close()
    conn = sqlite3.connect(tmp_path / "s.db")
    try:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        covered: dict[str, set[str]] = {}
        for register in (MEMORY_TEXTS, CONTEXT_TEXTS, SEARCHED_ELSEWHERE):
            for table, columns in register.items():
                covered.setdefault(table, set()).update(columns)
        for table, (_, _, columns) in RECORD_TEXTS.items():
            covered.setdefault(table, set()).update(columns)
        unaccounted = []
        for table in tables:
            for _, column, kind, *_ in conn.execute(f"PRAGMA table_info({table})"):
                if kind != "TEXT":
                    continue
                if column not in covered.get(table, set()) | NOT_PERSONAL.get(table, set()):
                    unaccounted.append(f"{table}.{column}")
        assert unaccounted == []
        # Every table keyed by scope is emptied by a scope erasure (keys excepted).
        assert "vault" in scoped_tables(conn) and "events" in scoped_tables(conn)
        assert all(table in tables for table, _, _ in MEMORY_REFERENCES)
    finally:
        conn.close()
