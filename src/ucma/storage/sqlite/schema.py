"""The SQLite schema, as migrations.

Layout (DESIGN.md "One place to search"):

- ``memories`` holds what every kind shares, one row per memory. Its integer
  ``seq`` (an AUTOINCREMENT rowid alias, so never reused and stable across
  VACUUM) is the key the internal indexes use: the typed tables, the vectors
  and the search cache. The public ``id`` is UNIQUE and is what the graph and
  retention tables reference. Every child row is removed by ``ON DELETE
  CASCADE``.
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
- ``api_keys`` (migration 4) holds the service's API keys: a sha256 of each token, never
  the token.
- ``vault`` (migration 9) holds the content guard's tokenised values per scope: the
  token, a keyed hash (blind index) and the original encrypted with the operator's key;
  ``vault_keys`` the fingerprint of that key.
- ``erasures`` (migration 10) logs each erasure of a person or a scope (counts only);
  while one is open inside its transaction, the event log may be redacted.
"""

from __future__ import annotations

import sqlite3

from ucma.storage.index.search_context import context_text
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


# -- migration 5: retrieval indexes (issue 3) --------------------------------
#
# ``memories.search_context`` is a second, lower-weight keyword field: for an
# episode, the preceding episode of its session and its date in words ("8 May
# 2023"), so a reply is found by the words of the question it answers and by
# the day it happened. ``known_participants`` is the set of names that were the
# source of, or took part in, an episode of a scope (never shrinks: a name
# stays recognisable after its episodes are deleted).

_FTS_COLUMNS = f"""
    CREATE VIRTUAL TABLE memories_fts USING fts5 (
        content,
        search_context,
        content = 'memories',
        content_rowid = 'seq',
        tokenize = '{FTS_TOKENIZER}'
    )
"""
_FTS_TRIGGERS = (
    """
    CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, content, search_context)
        VALUES (new.seq, new.content, new.search_context);
    END
    """,
    """
    CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, content, search_context)
        VALUES ('delete', old.seq, old.content, old.search_context);
    END
    """,
    """
    CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, search_context ON memories
    WHEN old.content IS NOT new.content OR old.search_context IS NOT new.search_context BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, content, search_context)
        VALUES ('delete', old.seq, old.content, old.search_context);
        INSERT INTO memories_fts (rowid, content, search_context)
        VALUES (new.seq, new.content, new.search_context);
    END
    """,
)


def backfill_contexts(conn: sqlite3.Connection) -> None:
    """Set the context of every stored episode (used once, by migration 5)."""
    rows = conn.execute(
        """
        SELECT t.seq, t.user_id, t.agent_id, t.session_id, t.timestamp, m.content
        FROM episodes t JOIN memories m ON m.seq = t.seq
        ORDER BY t.user_id, t.agent_id, t.session_id, t.timestamp, t.seq
        """
    ).fetchall()
    updates = []
    previous_key = None
    previous_content: str | None = None
    for seq, user_id, agent_id, session_id, timestamp, content in rows:
        key = (user_id, agent_id, session_id)
        if key != previous_key:
            previous_key, previous_content = key, None
        updates.append((context_text(previous_content, timestamp), seq))
        previous_content = content
    conn.executemany("UPDATE memories SET search_context = ? WHERE seq = ?", updates)


@migrations.migration(5)
def add_retrieval_indexes(conn: sqlite3.Connection) -> None:
    """Second keyword field (episode context) and the set of known participants."""
    for trigger in ("memories_fts_insert", "memories_fts_delete", "memories_fts_update"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("DROP TABLE memories_fts")
    conn.execute("ALTER TABLE memories ADD COLUMN search_context TEXT NOT NULL DEFAULT ''")
    backfill_contexts(conn)
    conn.execute(_FTS_COLUMNS)
    for trigger in _FTS_TRIGGERS:
        conn.execute(trigger)
    conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')")
    conn.execute(
        """
        CREATE TABLE known_participants (
            user_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            name_key TEXT NOT NULL,
            name TEXT NOT NULL,
            PRIMARY KEY (user_id, agent_id, name_key)
        ) WITHOUT ROWID
        """
    )
    conn.execute(
        """
        INSERT OR IGNORE INTO known_participants (user_id, agent_id, name_key, name)
        SELECT t.user_id, t.agent_id, lower(trim(p.value)), trim(p.value)
        FROM episodes t, json_each(json_insert(t.participants, '$[#]', t.source)) p
        WHERE trim(p.value) <> ''
        ORDER BY t.seq
        """
    )


_CONFLICT_SCHEMA = (
    # Record time of facts (DESIGN.md "Facts are bi-temporal"): a fact is believed
    # from recorded_at until superseded_at, then points to its replacement.
    "ALTER TABLE facts ADD COLUMN status TEXT NOT NULL DEFAULT 'active'",
    "ALTER TABLE facts ADD COLUMN recorded_at REAL",
    "ALTER TABLE facts ADD COLUMN superseded_at REAL",
    "ALTER TABLE facts ADD COLUMN superseded_by TEXT",
    "UPDATE facts SET recorded_at = (SELECT m.created_at FROM memories m WHERE m.seq = facts.seq)",
    """
    CREATE INDEX facts_current ON facts (user_id, agent_id, subject_key, predicate_key)
    WHERE superseded_at IS NULL
    """,
    # Seed 002: every conflict, its resolution and the user's choice.
    """
    CREATE TABLE conflicts (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        conflict_type TEXT NOT NULL
            CHECK (conflict_type IN ('value_mismatch', 'temporal', 'memory_vs_db')),
        subject TEXT NOT NULL,
        predicate TEXT NOT NULL,
        subject_key TEXT NOT NULL,
        predicate_key TEXT NOT NULL,
        existing_fact_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
        existing_value TEXT NOT NULL,
        existing_confidence REAL NOT NULL,
        new_fact_id TEXT REFERENCES memories (id) ON DELETE CASCADE,
        new_value TEXT NOT NULL,
        new_confidence REAL NOT NULL,
        resolution_strategy TEXT NOT NULL,
        action TEXT NOT NULL,
        chosen_value TEXT,
        explanation TEXT NOT NULL,
        status TEXT NOT NULL
            CHECK (status IN ('resolved', 'pending', 'user_resolved', 'obsolete')),
        detected_at REAL NOT NULL,
        resolved_at REAL,
        resolved_by TEXT,
        options TEXT NOT NULL DEFAULT '[]'
    )
    """,
    "CREATE INDEX conflicts_scope ON conflicts (user_id, agent_id, detected_at)",
    "CREATE INDEX conflicts_key ON conflicts (user_id, agent_id, subject_key, predicate_key)",
    "CREATE INDEX conflicts_status ON conflicts (user_id, agent_id, status)",
    "CREATE INDEX conflicts_existing ON conflicts (existing_fact_id)",
    "CREATE INDEX conflicts_new ON conflicts (new_fact_id)",
    # Dependency invalidation: memories whose premise was superseded.
    """
    CREATE TABLE review_flags (
        memory_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
        premise_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        conflict_id TEXT REFERENCES conflicts (id) ON DELETE SET NULL,
        reason TEXT NOT NULL,
        flagged_at REAL NOT NULL,
        cleared_at REAL
    )
    """,
    "CREATE INDEX review_flags_memory ON review_flags (memory_id, cleared_at)",
    "CREATE INDEX review_flags_premise ON review_flags (premise_id)",
    "CREATE INDEX review_flags_scope ON review_flags (user_id, agent_id, flagged_at)",
)


@migrations.migration(3)
def add_conflicts_and_record_time(conn: sqlite3.Connection) -> None:
    """Record time and status on facts, the conflicts table and review flags (issue 5)."""
    for statement in _CONFLICT_SCHEMA:
        conn.execute(statement)


# -- migration 6: the learning loop and the event log (issue 6) ---------------
#
# ``events`` is append-only: triggers refuse UPDATE and DELETE. ``position`` is
# the global order (what a publisher's cursor counts); ``seq`` is the order
# within one scope (UNIQUE, gap-free, computed as max + 1 inside the write
# transaction, so BEGIN IMMEDIATE serialises it). The memory lifecycle
# (stored, archived / restored, deleted) is logged by triggers on ``memories``,
# so every write path (observe, typed writes, facts, imports, the forgetting
# engine) appends its event in its own transaction without knowing about it.
# Decisions, outcomes, salience and conflicts are appended by the code that
# makes them (``ucma.events.log.record``), also inside the write transaction.

_NEXT_SEQ = (
    "(SELECT COALESCE(MAX(e.seq), 0) + 1 FROM events e "
    "WHERE e.user_id = {row}.user_id AND e.agent_id = {row}.agent_id)"
)
_EVENT_ID = "'evt_' || lower(hex(randomblob(16)))"
_WALL_CLOCK = "((julianday('now') - 2440587.5) * 86400.0)"

_LEARNING_SCHEMA = (
    """
    CREATE TABLE events (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        payload TEXT NOT NULL,
        occurred_at REAL NOT NULL,
        UNIQUE (user_id, agent_id, seq)
    )
    """,
    "CREATE INDEX events_type ON events (user_id, agent_id, type, seq)",
    """
    CREATE TRIGGER events_immutable_update BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'events are immutable'); END
    """,
    """
    CREATE TRIGGER events_immutable_delete BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'events are immutable'); END
    """,
    f"""
    CREATE TRIGGER memories_event_stored AFTER INSERT ON memories
    BEGIN
        INSERT INTO events (id, user_id, agent_id, seq, type, payload, occurred_at)
        VALUES ({_EVENT_ID}, NEW.user_id, NEW.agent_id, {_NEXT_SEQ.format(row="NEW")},
                'memory.stored',
                json_object('memory_id', NEW.id, 'kind', NEW.kind,
                            'temporal_level', NEW.temporal_level,
                            'base_salience', NEW.base_salience,
                            'outcome_adjustment', NEW.outcome_adjustment,
                            'content_chars', length(NEW.content)),
                NEW.created_at);
    END
    """,
    f"""
    CREATE TRIGGER memories_event_deleted AFTER DELETE ON memories
    BEGIN
        INSERT INTO events (id, user_id, agent_id, seq, type, payload, occurred_at)
        VALUES ({_EVENT_ID}, OLD.user_id, OLD.agent_id, {_NEXT_SEQ.format(row="OLD")},
                'memory.deleted', json_object('memory_id', OLD.id, 'kind', OLD.kind),
                {_WALL_CLOCK});
    END
    """,
    f"""
    CREATE TRIGGER memories_event_archived AFTER UPDATE OF archived_at ON memories
    WHEN OLD.archived_at IS NOT NEW.archived_at
    BEGIN
        INSERT INTO events (id, user_id, agent_id, seq, type, payload, occurred_at)
        VALUES ({_EVENT_ID}, NEW.user_id, NEW.agent_id, {_NEXT_SEQ.format(row="NEW")},
                CASE WHEN NEW.archived_at IS NULL THEN 'memory.restored'
                     ELSE 'memory.archived' END,
                json_object('memory_id', NEW.id, 'kind', NEW.kind),
                COALESCE(NEW.archived_at, {_WALL_CLOCK}));
    END
    """,
    # Where a publisher stopped: the last event position it had acknowledged.
    """
    CREATE TABLE event_cursors (
        name TEXT PRIMARY KEY,
        position INTEGER NOT NULL,
        updated_at REAL NOT NULL
    ) WITHOUT ROWID
    """,
    # Seed 003 "RETRIEVE": what each recall returned, so a trace can point at it.
    """
    CREATE TABLE retrievals (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        query_hash TEXT NOT NULL,
        memory_ids TEXT NOT NULL,
        scores TEXT NOT NULL,
        created_at REAL NOT NULL
    )
    """,
    "CREATE INDEX retrievals_scope ON retrievals (user_id, agent_id, created_at)",
    # Seed 003 DecisionTrace, with its outcome filled in once.
    """
    CREATE TABLE decision_traces (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        session_id TEXT,
        retrieval_id TEXT,
        memory_scores TEXT NOT NULL,
        decision_type TEXT NOT NULL,
        summary TEXT NOT NULL,
        confidence REAL NOT NULL,
        alternatives_count INTEGER NOT NULL,
        created_at REAL NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}',
        outcome_quality REAL,
        outcome_signal TEXT,
        outcome_feedback TEXT,
        outcome_at REAL
    )
    """,
    "CREATE INDEX decision_traces_scope ON decision_traces (user_id, agent_id, created_at)",
    # Memory -> decision links (seed 003 INFLUENCED); history survives a deleted memory.
    """
    CREATE TABLE trace_memories (
        trace_id TEXT NOT NULL REFERENCES decision_traces (id) ON DELETE CASCADE,
        memory_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        score REAL NOT NULL,
        PRIMARY KEY (trace_id, memory_id)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX trace_memories_memory ON trace_memories (user_id, agent_id, memory_id)",
    # Seed 003 SalienceUpdate: one row per memory per outcome.
    """
    CREATE TABLE salience_updates (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        trace_id TEXT NOT NULL REFERENCES decision_traces (id) ON DELETE CASCADE,
        memory_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        attribution REAL NOT NULL,
        raw_delta REAL NOT NULL,
        delta REAL NOT NULL,
        previous_adjustment REAL NOT NULL,
        new_adjustment REAL NOT NULL,
        reason TEXT NOT NULL,
        created_at REAL NOT NULL
    )
    """,
    "CREATE INDEX salience_updates_memory ON salience_updates (user_id, agent_id, memory_id)",
)


@migrations.migration(6)
def add_learning_loop_and_events(conn: sqlite3.Connection) -> None:
    """Event log with lifecycle triggers, publisher cursors, retrievals, decision
    traces, their memory links and salience updates (issue 6)."""
    for statement in _LEARNING_SCHEMA:
        conn.execute(statement)


# Migrations 2 and 3 are reserved for work on other branches; the runner applies
# every registered version that a file lacks, in order, so gaps are harmless.


@migrations.migration(4)
def create_api_keys(conn: sqlite3.Connection) -> None:
    """API keys of the service: sha256 of the token, never the token itself."""
    conn.execute(
        """
        CREATE TABLE api_keys (
            id TEXT PRIMARY KEY,
            token_hash TEXT NOT NULL UNIQUE,
            user_id TEXT NOT NULL,
            agent_id TEXT,
            label TEXT,
            created_at REAL NOT NULL,
            revoked_at REAL
        ) WITHOUT ROWID
        """
    )
    conn.execute("CREATE INDEX api_keys_created ON api_keys (created_at, id)")


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


@migrations.migration(7)
def drop_fts_index(conn: sqlite3.Connection) -> None:
    """Keyword search moved to the per-scope in-process cache (ucma.storage.index.keyword_cache):
    the FTS5 table and its triggers go, scope_versions counts text rewrites."""
    for trigger in ("memories_fts_insert", "memories_fts_delete", "memories_fts_update"):
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    conn.execute("DROP TABLE IF EXISTS memories_fts")
    # Of a scope's changes, how many rewrote a row's text: the cache can apply
    # its own rewrites, but reloads after another connection's.
    conn.execute("ALTER TABLE scope_versions ADD COLUMN rewrites INTEGER NOT NULL DEFAULT 0")


@migrations.migration(8)
def add_supersessions(conn: sqlite3.Connection) -> None:
    """Memories replaced as a whole (issue 12): an episode whose claims were all
    superseded, or that a later statement replaced directly. Facts keep their own
    ``superseded_by``; this table covers memories without one."""
    conn.execute(
        """
        CREATE TABLE supersessions (
            memory_id TEXT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
            user_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            superseded_by TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            superseded_at REAL NOT NULL,
            reason TEXT NOT NULL
        ) WITHOUT ROWID
        """
    )
    conn.execute("CREATE INDEX supersessions_by ON supersessions (superseded_by)")


@migrations.migration(9)
def add_vault(conn: sqlite3.Connection) -> None:
    """The content guard's vault (issue 13): per scope, each tokenised value's token,
    keyed hash and encrypted original; and the fingerprint of the key it was written
    with, so a wrong key is refused rather than starting a second, unreadable vault."""
    conn.execute(
        """
        CREATE TABLE vault (
            user_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            token TEXT NOT NULL,
            kind TEXT NOT NULL,
            digest TEXT NOT NULL,
            ciphertext BLOB NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (user_id, agent_id, token)
        ) WITHOUT ROWID
        """
    )
    conn.execute("CREATE UNIQUE INDEX vault_digest ON vault (user_id, agent_id, digest)")
    conn.execute("CREATE TABLE vault_keys (fingerprint TEXT PRIMARY KEY, created_at REAL NOT NULL)")


# -- migration 10: erasure (issue 13) -------------------------------------------
#
# Forgetting a person or a scope must reach the event log too, which is otherwise
# append-only. ``erasures`` records each erasure (what was targeted, when, the counts;
# never what was erased). While one is open (``finished_at`` NULL, only ever inside the
# erasing transaction, so no other connection sees it open) the immutability triggers
# let events be redacted or removed; at any other time they refuse as before.

_OPEN_ERASURE = "EXISTS (SELECT 1 FROM erasures WHERE finished_at IS NULL)"


@migrations.migration(10)
def add_erasures(conn: sqlite3.Connection) -> None:
    """The erasure log, and event immutability that yields to an open erasure only."""
    conn.execute(
        """
        CREATE TABLE erasures (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            target TEXT NOT NULL CHECK (target IN ('person', 'scope')),
            started_at REAL NOT NULL,
            finished_at REAL,
            counts TEXT NOT NULL DEFAULT '{}'
        )
        """
    )
    conn.execute("DROP TRIGGER events_immutable_update")
    conn.execute("DROP TRIGGER events_immutable_delete")
    conn.execute(
        f"""
        CREATE TRIGGER events_immutable_update BEFORE UPDATE ON events
        WHEN NOT {_OPEN_ERASURE}
        BEGIN SELECT RAISE(ABORT, 'events are immutable'); END
        """
    )
    conn.execute(
        f"""
        CREATE TRIGGER events_immutable_delete BEFORE DELETE ON events
        WHEN NOT {_OPEN_ERASURE}
        BEGIN SELECT RAISE(ABORT, 'events are immutable'); END
        """
    )


# -- migrations 11 and 12: banks and opinions (issue 15) ---------------------------


@migrations.migration(11)
def add_banks(conn: sqlite3.Connection) -> None:
    """Every memory carries a bank (seed 000's four networks). Existing rows take
    their kind's default (``ucma.types.DEFAULT_BANK``): episodes and procedures
    ``experience``, facts ``world``, lessons ``observation``."""
    conn.execute(
        "ALTER TABLE memories ADD COLUMN bank TEXT NOT NULL DEFAULT 'world' "
        "CHECK (bank IN ('world', 'experience', 'opinion', 'observation'))"
    )
    conn.execute(
        "UPDATE memories SET bank = CASE kind WHEN 'episodic' THEN 'experience' "
        "WHEN 'procedural' THEN 'experience' WHEN 'learning' THEN 'observation' "
        "ELSE 'world' END"
    )


@migrations.migration(12)
def add_opinions(conn: sqlite3.Connection) -> None:
    """Opinions (issue 15): a topic, a stance and a confidence per row, current or
    replaced (history); ``evidence`` is a JSON list. ``memory_id`` is the memory
    that states the opinion: deleting that memory leaves the opinion (its evidence
    keeps the text), so the id is not a foreign key."""
    conn.execute(
        """
        CREATE TABLE opinions (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            topic TEXT NOT NULL,
            topic_key TEXT NOT NULL,
            stance TEXT NOT NULL,
            stance_key TEXT NOT NULL,
            holder TEXT NOT NULL,
            holder_key TEXT NOT NULL,
            confidence REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
            status TEXT NOT NULL CHECK (status IN ('current', 'replaced')),
            evidence TEXT NOT NULL,
            memory_id TEXT,
            replaces TEXT,
            replaced_by TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        ) WITHOUT ROWID
        """
    )
    conn.execute("CREATE INDEX opinions_scope ON opinions (user_id, agent_id, status, confidence)")
    conn.execute("CREATE INDEX opinions_topic ON opinions (user_id, agent_id, topic_key)")
    conn.execute("CREATE INDEX opinions_memory ON opinions (user_id, agent_id, memory_id)")


# -- migration 13: strategies (issue 15) ------------------------------------------
#
# Strategies and pitfalls are procedures (one kind, one store): the columns below say
# which, in what domain, under which preconditions (JSON triples), at what risk, with the
# failure modes seen and the trajectories they were distilled from. ``success_count`` is
# the successes when applied, so statistics are counts, not a rounded mean.


@migrations.migration(13)
def add_strategy_columns(conn: sqlite3.Connection) -> None:
    """Strategy fields on procedures; existing procedures become workflows."""
    for column in (
        "procedure_type TEXT NOT NULL DEFAULT 'workflow'",
        "domain TEXT NOT NULL DEFAULT ''",
        "preconditions TEXT NOT NULL DEFAULT '[]'",
        "risk_level TEXT NOT NULL DEFAULT 'low'",
        "failure_modes TEXT NOT NULL DEFAULT '[]'",
        "source_trajectories TEXT NOT NULL DEFAULT '[]'",
        "success_count INTEGER NOT NULL DEFAULT 0",
    ):
        conn.execute(f"ALTER TABLE procedures ADD COLUMN {column}")
    conn.execute(
        "UPDATE procedures "
        "SET success_count = CAST(round(success_rate * execution_count) AS INTEGER)"
    )
    conn.execute("CREATE INDEX procedures_domain ON procedures (user_id, agent_id, domain)")


# -- migration 14: the world model and the self-model (issue 16) --------------------
#
# One row per transition (an action in a context led to an outcome, with its
# confirmations and errors) and one per capability of the self-model (attempts,
# successes, calibration bins, failure modes and the latest outcomes, as JSON).


@migrations.migration(14)
def add_world_and_self_models(conn: sqlite3.Connection) -> None:
    """Transitions and competences (seed 000's predictive paradigm). The keys are the
    case- and space-folded texts, unique with the scope."""
    conn.execute(
        """
        CREATE TABLE transitions (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            action TEXT NOT NULL,
            action_key TEXT NOT NULL,
            context TEXT NOT NULL,
            context_key TEXT NOT NULL,
            outcome TEXT NOT NULL,
            outcome_key TEXT NOT NULL,
            confirmations INTEGER NOT NULL CHECK (confirmations >= 0),
            errors INTEGER NOT NULL CHECK (errors >= 0),
            promoted_fact_id TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            UNIQUE (user_id, agent_id, action_key, context_key, outcome_key)
        ) WITHOUT ROWID
        """
    )
    conn.execute(
        """
        CREATE TABLE competences (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            capability TEXT NOT NULL,
            capability_key TEXT NOT NULL,
            attempts INTEGER NOT NULL CHECK (attempts >= 0),
            successes INTEGER NOT NULL CHECK (successes >= 0 AND successes <= attempts),
            predicted_count INTEGER NOT NULL CHECK (predicted_count >= 0),
            predicted_sum REAL NOT NULL,
            brier_sum REAL NOT NULL,
            bins TEXT NOT NULL,
            failure_modes TEXT NOT NULL,
            evidence TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            UNIQUE (user_id, agent_id, capability_key)
        ) WITHOUT ROWID
        """
    )
    # Forgetting a person deletes the transitions and competences that name them and
    # redacts the events that do; these events (ids only) tell replay they are gone.
    # A scope's erasure removes its events too, so it needs none.
    for table, event, key in (
        ("transitions", "world.transition_erased", "transition_id"),
        ("competences", "self.competence_erased", "competence_id"),
    ):
        conn.execute(
            f"""
            CREATE TRIGGER {table}_event_erased AFTER DELETE ON {table}
            WHEN EXISTS (SELECT 1 FROM erasures WHERE finished_at IS NULL AND target = 'person')
            BEGIN
                INSERT INTO events (id, user_id, agent_id, seq, type, payload, occurred_at)
                VALUES ({_EVENT_ID}, OLD.user_id, OLD.agent_id, {_NEXT_SEQ.format(row="OLD")},
                        '{event}', json_object('{key}', OLD.id), {_WALL_CLOCK});
            END
            """
        )


# -- migration 15: goals (issue 16) -----------------------------------------------


@migrations.migration(15)
def add_goals(conn: sqlite3.Connection) -> None:
    """Goals (seed 000's predictive paradigm): one row per goal or subgoal (``parent_id``
    points up, ``subgoals`` lists the children in order, JSON); ``blocking_on``,
    ``conflicts`` (the memories that contradict it) and ``accepted`` (memory ids the
    user resumed it despite) are JSON lists. Memory ids are not foreign keys: deleting
    a memory leaves the goal, and the next check reads memory as it is."""
    conn.execute(
        """
        CREATE TABLE goals (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            description TEXT NOT NULL,
            priority REAL NOT NULL CHECK (priority >= 0 AND priority <= 1),
            status TEXT NOT NULL
                CHECK (status IN ('active', 'suspended', 'completed', 'abandoned')),
            progress REAL NOT NULL CHECK (progress >= 0 AND progress <= 1),
            deadline REAL,
            parent_id TEXT,
            subgoals TEXT NOT NULL DEFAULT '[]',
            blocking_on TEXT NOT NULL DEFAULT '[]',
            conflicts TEXT NOT NULL DEFAULT '[]',
            accepted TEXT NOT NULL DEFAULT '[]',
            origin TEXT NOT NULL CHECK (origin IN ('user', 'steps', 'rules', 'strategy', 'llm')),
            last_worked REAL,
            completed_at REAL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        ) WITHOUT ROWID
        """
    )
    conn.execute("CREATE INDEX goals_scope ON goals (user_id, agent_id, status, priority)")


# -- migration 16: sleep runs (issue 18) --------------------------------------------
# (16 is reserved for work on another branch.)


@migrations.migration(16)
def add_sleep_runs(conn: sqlite3.Connection) -> None:
    """Every sleep cycle that ran for a scope (issue 18, the inspector's sleep view):
    why, when, how long, the phases that completed, what each changed (JSON: phase to
    counts), interrupted, and the error of a failed one. The store keeps a scope's
    newest runs only."""
    conn.execute(
        """
        CREATE TABLE sleep_runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            trigger TEXT NOT NULL,
            started_at REAL NOT NULL,
            seconds REAL NOT NULL CHECK (seconds >= 0),
            phases TEXT NOT NULL DEFAULT '[]',
            changes TEXT NOT NULL DEFAULT '{}',
            interrupted INTEGER NOT NULL DEFAULT 0 CHECK (interrupted IN (0, 1)),
            error TEXT
        )
        """
    )
    conn.execute("CREATE INDEX sleep_runs_scope ON sleep_runs (user_id, agent_id, id)")


@migrations.migration(17)
def add_leases(conn: sqlite3.Connection) -> None:
    """Named leases every process of the database shares (issue 17, ``ucma worker``):
    who consolidates a scope or forwards the event log right now, until when, and
    when that work was last finished."""
    conn.execute(
        """
        CREATE TABLE leases (
            name TEXT PRIMARY KEY,
            owner TEXT,
            expires_at REAL NOT NULL,
            claimed_at REAL,
            finished_at REAL,
            claims INTEGER NOT NULL DEFAULT 0 CHECK (claims >= 0)
        )
        """
    )
