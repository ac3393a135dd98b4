"""The SQLite schema, as migrations.

Layout (DESIGN.md "One place to search"):

- ``memories`` holds what every kind shares, one row per memory. Its integer
  ``seq`` (an AUTOINCREMENT rowid alias, so never reused and stable across
  VACUUM) is the key the internal indexes use: the typed tables, the vectors
  and the FTS5 index. The public ``id`` is UNIQUE and is what the graph and
  retention tables reference. Every child row is removed by ``ON DELETE
  CASCADE``; the FTS index is kept in step by triggers, in the same
  transaction as the write.
- Typed tables (``episodes``, ``facts``, ``procedures`` + ``procedure_steps``
  + ``procedure_tags``, ``learnings`` + ``learning_tags``) repeat ``user_id``
  and ``agent_id`` (a memory never changes scope) so every scoped lookup is
  one index range: hour buckets, sessions, tiers, entity keys, tags, types.
- ``memories_fts`` is an external-content FTS5 table over ``memories.content``.
  Tokenizer ``porter unicode61 remove_diacritics 2``: chat text is English
  first, and stemming lets "running" find "runs"; unicode61 folds case and
  diacritics ("cafe" finds "café") for the other languages users mix in.
- ``vectors`` holds float32 blobs keyed by ``seq``; ``scope_versions`` counts
  the writes that change what dense search can return, per scope, so every
  connection can tell when its in-process vector cache is stale.
- ``settings`` records the embedding dimension the file was created with.
"""

from __future__ import annotations

import sqlite3

from ucma.storage.sqlite.migrations import Migrations

__all__ = ["FTS_TOKENIZER", "migrations"]

FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"

migrations = Migrations()

_INITIAL_SCHEMA = (
    """
    CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE memories (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL
            CHECK (kind IN ('episodic', 'semantic', 'procedural', 'learning')),
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        content TEXT NOT NULL,
        provenance TEXT NOT NULL,
        temporal_level INTEGER NOT NULL,
        base_salience REAL NOT NULL,
        outcome_adjustment REAL NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL,
        access_count INTEGER NOT NULL DEFAULT 0,
        last_accessed REAL,
        archived_at REAL,
        metadata TEXT NOT NULL DEFAULT '{}'
    )
    """,
    "CREATE INDEX memories_scope_kind ON memories (user_id, agent_id, kind, created_at, id)",
    "CREATE INDEX memories_scope_created ON memories (user_id, agent_id, created_at, id)",
    # Rows of a scope in seq order (the rowid ends every index): the vector cache
    # reads new rows as a rowid range and checks deletions without touching rows.
    "CREATE INDEX memories_scope_seq ON memories (user_id, agent_id)",
    """
    CREATE INDEX memories_scope_archived ON memories (user_id, agent_id)
    WHERE archived_at IS NOT NULL
    """,
    f"""
    CREATE VIRTUAL TABLE memories_fts USING fts5 (
        content,
        content = 'memories',
        content_rowid = 'seq',
        tokenize = '{FTS_TOKENIZER}'
    )
    """,
    """
    CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
    END
    """,
    """
    CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, content)
        VALUES ('delete', old.seq, old.content);
    END
    """,
    """
    CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories
    WHEN old.content IS NOT new.content BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, content)
        VALUES ('delete', old.seq, old.content);
        INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
    END
    """,
    """
    CREATE TABLE vectors (
        seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
        vector BLOB NOT NULL
    )
    """,
    """
    CREATE TABLE scope_versions (
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        PRIMARY KEY (user_id, agent_id)
    ) WITHOUT ROWID
    """,
    # -- episodic: two tiers, hour buckets --------------------------------
    """
    CREATE TABLE episodes (
        seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        timestamp REAL NOT NULL,
        bucket INTEGER NOT NULL,
        source TEXT NOT NULL,
        participants TEXT NOT NULL,
        tags TEXT NOT NULL,
        summary TEXT,
        tier TEXT NOT NULL
    )
    """,
    "CREATE INDEX episodes_bucket ON episodes (user_id, agent_id, bucket, timestamp)",
    "CREATE INDEX episodes_session ON episodes (user_id, agent_id, session_id, timestamp)",
    "CREATE INDEX episodes_tier ON episodes (user_id, agent_id, tier, timestamp)",
    # -- semantic: triples with an entity index on both ends ---------------
    """
    CREATE TABLE facts (
        seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        subject TEXT NOT NULL,
        predicate TEXT NOT NULL,
        object TEXT NOT NULL,
        subject_key TEXT NOT NULL,
        predicate_key TEXT NOT NULL,
        object_key TEXT NOT NULL,
        confidence REAL NOT NULL,
        source_episode_ids TEXT NOT NULL,
        reinforcement_count INTEGER NOT NULL,
        last_verified REAL,
        valid_from REAL,
        valid_until REAL
    )
    """,
    "CREATE INDEX facts_subject ON facts (user_id, agent_id, subject_key, predicate_key)",
    "CREATE INDEX facts_object ON facts (user_id, agent_id, object_key)",
    # -- procedural: ordered steps, trigger-tag index ----------------------
    """
    CREATE TABLE procedures (
        seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        name TEXT NOT NULL,
        description TEXT NOT NULL,
        trigger_tags TEXT NOT NULL,
        status TEXT NOT NULL,
        success_rate REAL NOT NULL,
        execution_count INTEGER NOT NULL,
        last_used REAL
    )
    """,
    "CREATE INDEX procedures_status ON procedures (user_id, agent_id, status)",
    """
    CREATE TABLE procedure_steps (
        seq INTEGER NOT NULL REFERENCES procedures (seq) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        description TEXT NOT NULL,
        action_type TEXT NOT NULL,
        action_spec TEXT NOT NULL,
        success_criteria TEXT NOT NULL,
        on_failure TEXT NOT NULL,
        max_retries INTEGER NOT NULL,
        PRIMARY KEY (seq, position)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE procedure_tags (
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        tag_key TEXT NOT NULL,
        seq INTEGER NOT NULL REFERENCES procedures (seq) ON DELETE CASCADE,
        PRIMARY KEY (user_id, agent_id, tag_key, seq)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX procedure_tags_seq ON procedure_tags (seq)",
    # -- learnings: applicability and type indexes --------------------------
    """
    CREATE TABLE learnings (
        seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        learning_type TEXT NOT NULL,
        title TEXT NOT NULL,
        evidence TEXT NOT NULL,
        applicability TEXT NOT NULL,
        confidence REAL NOT NULL,
        impact_score REAL NOT NULL,
        last_applied REAL,
        application_count INTEGER NOT NULL,
        validated INTEGER NOT NULL
    )
    """,
    "CREATE INDEX learnings_type ON learnings (user_id, agent_id, learning_type, confidence)",
    """
    CREATE TABLE learning_tags (
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        tag_key TEXT NOT NULL,
        seq INTEGER NOT NULL REFERENCES learnings (seq) ON DELETE CASCADE,
        PRIMARY KEY (user_id, agent_id, tag_key, seq)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX learning_tags_seq ON learning_tags (seq)",
    # -- memory graph --------------------------------------------------------
    """
    CREATE TABLE graph_nodes (
        memory_id TEXT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
        pagerank REAL NOT NULL DEFAULT 0.0
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE graph_edges (
        source_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
        target_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
        edge_type TEXT NOT NULL,
        weight REAL NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (source_id, target_id, edge_type)
    )
    """,
    "CREATE INDEX graph_edges_target ON graph_edges (target_id)",
    # -- retention and the embedding cache -----------------------------------
    """
    CREATE TABLE retention (
        memory_id TEXT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
        stability REAL NOT NULL,
        last_reviewed REAL NOT NULL,
        review_count INTEGER NOT NULL
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE embedding_cache (
        model TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (model, text_hash)
    ) WITHOUT ROWID
    """,
)


@migrations.migration(1)
def create_initial_schema(conn: sqlite3.Connection) -> None:
    """Every table, index and trigger of the first release."""
    for statement in _INITIAL_SCHEMA:
        conn.execute(statement)


_LIFECYCLE_SCHEMA = (
    # History outlives its memory (no foreign key): a purged memory's story stays readable.
    """
    CREATE TABLE memory_history (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        event TEXT NOT NULL,
        at REAL NOT NULL,
        details TEXT NOT NULL DEFAULT '{}'
    )
    """,
    "CREATE INDEX memory_history_memory ON memory_history (user_id, agent_id, memory_id, id)",
    """
    CREATE TABLE duplicate_attempts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        existing_id TEXT NOT NULL,
        content TEXT NOT NULL,
        similarity REAL NOT NULL,
        source TEXT NOT NULL,
        at REAL NOT NULL
    )
    """,
    "CREATE INDEX duplicate_attempts_scope ON duplicate_attempts (user_id, agent_id, id)",
    """
    CREATE TABLE memory_sources (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        memory_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
        reference TEXT NOT NULL,
        source TEXT NOT NULL,
        at REAL NOT NULL
    )
    """,
    "CREATE INDEX memory_sources_memory ON memory_sources (memory_id, id)",
    # Pairs are stored once (first_id < second_id); rows are consumed by consolidation.
    """
    CREATE TABLE co_retrievals (
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        first_id TEXT NOT NULL,
        second_id TEXT NOT NULL,
        count INTEGER NOT NULL,
        last_at REAL NOT NULL,
        PRIMARY KEY (user_id, agent_id, first_id, second_id)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE abstracted_episodes (
        memory_id TEXT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
        at REAL NOT NULL
    ) WITHOUT ROWID
    """,
    # Database-wide: one gardener schedule for every process on the file.
    """
    CREATE TABLE gardener_jobs (
        job TEXT PRIMARY KEY,
        last_run_at REAL,
        last_summary TEXT NOT NULL DEFAULT '{}',
        locked_by TEXT,
        lock_expires_at REAL
    ) WITHOUT ROWID
    """,
)


@migrations.migration(2)
def create_lifecycle_tables(conn: sqlite3.Connection) -> None:
    """Issue 4: memory history, duplicate log, source lists, co-retrieval counts,
    abstraction marks and the gardener's job table."""
    for statement in _LIFECYCLE_SCHEMA:
        conn.execute(statement)
