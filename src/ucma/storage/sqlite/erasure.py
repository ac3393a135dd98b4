"""``ErasureStore`` over SQLite: forgetting a person or a scope, and scrubbing the files.

Which text lives where is written down here, table by table (``MEMORY_TEXTS``: text that
belongs to a memory, so a match erases the memory; ``CONTEXT_TEXTS``: an episode's keyword
context, which quotes its predecessor and is rewritten; ``RECORD_TEXTS``: records with
text of their own, erased on a match; ``MEMORY_REFERENCES``: records naming a memory by
id, erased with it). A test reads every TEXT column of the schema and fails on one this module does
not account for, so a new table cannot slip past an erasure.

An erasure runs in one transaction with ``secure_delete`` on (freed cells are zeroed);
event payloads are redacted while the ``erasures`` row it opens is unfinished (migration
10). ``scrub`` then checkpoints the write-ahead log into the file, rewrites the file
(``VACUUM``: no free page keeps an old row) and truncates the log, so no erased byte is
left in ``.db`` or ``-wal`` (the ``-shm`` index holds page numbers, never content).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager

from ucma.storage.base import ErasureStore
from ucma.storage.index.search_context import date_words
from ucma.storage.sqlite.codec import ids_param
from ucma.storage.sqlite.connection import Database, SQLiteConnection
from ucma.storage.sqlite.vectors import VectorIndex
from ucma.types import Scope

__all__ = [
    "CONTEXT_TEXTS",
    "MEMORY_REFERENCES",
    "MEMORY_TEXTS",
    "RECORD_TEXTS",
    "SCOPE_VERSION_FLOOR",
    "SQLiteErasureStore",
]

logger = logging.getLogger(__name__)

SCOPE_VERSION_FLOOR = "scope_version_floor"
"""``settings`` key: the highest change counter of an erased scope, so a scope written
again starts above it and no process's vector cache mistakes it for its old state."""

_SCOPE = "user_id = ? AND agent_id = ?"

MEMORY_TEXTS: dict[str, tuple[str, ...]] = {
    # table: text columns; each query returns (memory seq, *columns) for a scope.
    "memories": ("content", "metadata"),
    "episodes": ("session_id", "source", "participants", "tags", "summary"),
    "facts": (
        "subject",
        "predicate",
        "object",
        "subject_key",
        "predicate_key",
        "object_key",
        "source_episode_ids",
        "status",
        "superseded_by",
    ),
    "procedures": (
        "name",
        "description",
        "trigger_tags",
        "status",
        "domain",
        "preconditions",
        "failure_modes",
        "source_trajectories",
    ),
    "procedure_steps": (
        "description",
        "action_type",
        "action_spec",
        "success_criteria",
        "on_failure",
    ),
    "procedure_tags": ("tag_key",),
    "learnings": ("learning_type", "title", "evidence", "applicability"),
    "learning_tags": ("tag_key",),
    "memory_sources": ("reference", "source"),
}
_MEMORY_QUERIES = {
    "procedure_steps": (
        "SELECT s.seq, {columns} FROM procedure_steps s JOIN procedures p ON p.seq = s.seq "
        "WHERE p.user_id = ? AND p.agent_id = ?"
    ),
    "memory_sources": (
        "SELECT m.seq, {columns} FROM memory_sources s JOIN memories m ON m.id = s.memory_id "
        "WHERE m.user_id = ? AND m.agent_id = ?"
    ),
}

CONTEXT_TEXTS: dict[str, tuple[str, ...]] = {
    # A memory's keyword context holds its session's preceding episode: when only that
    # matches, the context is rewritten to the episode's date alone, the memory stays.
    "memories": ("search_context",),
}

RECORD_TEXTS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # table: (name in the report, key column, text columns)
    "conflicts": (
        "conflicts",
        "rowid",
        (
            "conflict_type",
            "subject",
            "predicate",
            "subject_key",
            "predicate_key",
            "existing_value",
            "new_value",
            "resolution_strategy",
            "action",
            "chosen_value",
            "explanation",
            "status",
            "resolved_by",
            "options",
        ),
    ),
    "review_flags": ("review_flags", "rowid", ("reason",)),
    "opinions": (
        "opinions",
        "id",
        ("topic", "topic_key", "stance", "stance_key", "holder", "holder_key", "evidence"),
    ),
    "transitions": (
        "transitions",
        "id",
        (
            "action",
            "action_key",
            "context",
            "context_key",
            "outcome",
            "outcome_key",
        ),
    ),
    "competences": (
        "competences",
        "id",
        ("capability", "capability_key", "bins", "failure_modes", "evidence"),
    ),
    "goals": ("goals", "id", ("description", "blocking_on", "conflicts")),
    "decision_traces": (
        "decisions",
        "rowid",
        (
            "session_id",
            "decision_type",
            "summary",
            "metadata",
            "outcome_signal",
            "outcome_feedback",
        ),
    ),
    "salience_updates": ("salience_updates", "rowid", ("reason",)),
    "memory_history": ("history", "rowid", ("event", "details")),
    "duplicate_attempts": ("duplicate_attempts", "rowid", ("content", "source")),
    "known_participants": ("participants", "name_key", ("name_key", "name")),
    "supersessions": ("supersessions", "memory_id", ("reason",)),
    "sleep_runs": ("sleep_runs", "id", ("error",)),
}

MEMORY_REFERENCES: tuple[tuple[str, str, str], ...] = (
    # (table, column holding a memory id, name in the report)
    ("memory_history", "memory_id", "history"),
    ("duplicate_attempts", "existing_id", "duplicate_attempts"),
    ("trace_memories", "memory_id", "decision_links"),
    ("salience_updates", "memory_id", "salience_updates"),
    ("co_retrievals", "first_id", "co_retrievals"),
    ("co_retrievals", "second_id", "co_retrievals"),
)

_REDACTED = json.dumps({"erased": True})
_KEEP_ON_SCOPE_ERASURE = frozenset({"api_keys"})


class SQLiteErasureStore(ErasureStore):
    def __init__(self, db: Database, index: VectorIndex) -> None:
        self._db = db
        self._index = index

    # -- a person ---------------------------------------------------------------

    def erase_matching(
        self,
        scope: Scope,
        matches: Callable[[str], bool],
        tokens: Sequence[str],
        now: float,
        tokens_in: Callable[[str], Iterable[str]] = lambda text: (),
    ) -> dict[str, int]:
        counts: Counter[str] = Counter()
        key = (scope.user_id, scope.agent_id)
        with self._secure_delete(), self._db.write() as conn:
            erasure = _open(conn, "person", now)
            seqs: set[int] = set()
            used_before: set[str] = set()
            for seq, values in _memory_texts(conn, key):
                used_before.update(_tokens(tokens_in, values))
                if seq not in seqs and _matches(matches, values):
                    seqs.add(seq)
            erased_ids = self._delete_memories(conn, scope, sorted(seqs), counts)
            counts["contexts_rewritten"] += self._rewrite_contexts(conn, scope, matches)
            if erased_ids:
                for table, column, name in MEMORY_REFERENCES:
                    counts[name] += conn.execute(
                        f"DELETE FROM {table} WHERE {column} IN (SELECT value FROM json_each(?)) "
                        f"AND +user_id = ? AND +agent_id = ?",
                        (ids_param(erased_ids), *key),
                    ).rowcount
            for table, (name, key_column, columns) in RECORD_TEXTS.items():
                doomed = []
                for row in conn.execute(
                    f"SELECT {key_column}, {', '.join(columns)} FROM {table} WHERE {_SCOPE}", key
                ):
                    used_before.update(_tokens(tokens_in, row[1:]))
                    if _matches(matches, row[1:]):
                        doomed.append(row[0])
                if doomed:
                    counts[name] += conn.execute(
                        f"DELETE FROM {table} WHERE {_SCOPE} AND "
                        f"{key_column} IN (SELECT value FROM json_each(?))",
                        (*key, json.dumps(doomed)),
                    ).rowcount
            redacted = [
                position
                for position, event_type, payload in conn.execute(
                    f"SELECT position, type, payload FROM events WHERE {_SCOPE}", key
                )
                if _matches(matches, (event_type, payload))
            ]
            if redacted:
                counts["events_redacted"] += conn.execute(
                    "UPDATE events SET payload = ? "
                    "WHERE position IN (SELECT value FROM json_each(?))",
                    (_REDACTED, json.dumps(redacted)),
                ).rowcount
            # Tokens only erased records used name what was erased too.
            orphans = used_before.difference(*_still_used(conn, key, tokens_in))
            doomed_tokens = sorted(set(tokens) | orphans)
            if doomed_tokens:
                counts["vault_entries"] += conn.execute(
                    f"DELETE FROM vault WHERE {_SCOPE} "
                    "AND token IN (SELECT value FROM json_each(?))",
                    (*key, ids_param(doomed_tokens)),
                ).rowcount
            counts["embedding_cache"] += conn.execute("DELETE FROM embedding_cache").rowcount
            _close(conn, erasure, now, counts)
        self._index.drop(scope)
        logger.info("erased %d records about a person in %s", sum(counts.values()), scope)
        return {name: n for name, n in counts.items() if n}

    def _delete_memories(
        self, conn: SQLiteConnection, scope: Scope, seqs: Sequence[int], counts: Counter[str]
    ) -> list[str]:
        if not seqs:
            return []
        rows = conn.execute(
            f"DELETE FROM memories WHERE seq IN (SELECT value FROM json_each(?)) AND {_SCOPE} "
            "RETURNING seq, id, kind",
            (json.dumps(list(seqs)), scope.user_id, scope.agent_id),
        ).fetchall()
        for _, _, kind in rows:
            counts[str(kind)] += 1
        self._index.removed(conn, scope, [int(r[0]) for r in rows])
        return [str(r[1]) for r in rows]

    def _rewrite_contexts(
        self, conn: SQLiteConnection, scope: Scope, matches: Callable[[str], bool]
    ) -> int:
        rows = conn.execute(
            "SELECT m.seq, m.content, m.search_context, e.timestamp FROM memories m "
            "LEFT JOIN episodes e ON e.seq = m.seq WHERE m.user_id = ? AND m.agent_id = ?",
            (scope.user_id, scope.agent_id),
        ).fetchall()
        rewritten = 0
        for seq, content, context, timestamp in rows:
            if not context or not matches(context):
                continue
            new = date_words(timestamp) if timestamp is not None else ""
            conn.execute("UPDATE memories SET search_context = ? WHERE seq = ?", (new, seq))
            self._index.retexted(conn, scope, int(seq), (content, context), (content, new))
            rewritten += 1
        return rewritten

    # -- a scope ----------------------------------------------------------------

    def erase_scope(self, scope: Scope, now: float) -> dict[str, int]:
        counts: Counter[str] = Counter()
        key = (scope.user_id, scope.agent_id)
        with self._secure_delete(), self._db.write() as conn:
            erasure = _open(conn, "scope", now)
            seqs = [
                int(r[0]) for r in conn.execute(f"SELECT seq FROM memories WHERE {_SCOPE}", key)
            ]
            self._delete_memories(conn, scope, seqs, counts)
            version = conn.execute(
                f"SELECT version FROM scope_versions WHERE {_SCOPE}", key
            ).fetchone()
            if version is not None:
                conn.execute(
                    "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE "
                    "SET value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))",
                    (SCOPE_VERSION_FLOOR, str(int(version[0]))),
                )
            for table in scoped_tables(conn):
                if table == "memories" or table in _KEEP_ON_SCOPE_ERASURE:
                    continue
                removed = conn.execute(f"DELETE FROM {table} WHERE {_SCOPE}", key).rowcount
                if table not in ("scope_versions",):
                    counts[RECORD_TEXTS.get(table, (table,))[0]] += removed
            counts["embedding_cache"] += conn.execute("DELETE FROM embedding_cache").rowcount
            _close(conn, erasure, now, counts)
        self._index.drop(scope)
        logger.info("erased scope %s: %d records", scope, sum(counts.values()))
        return {name: n for name, n in counts.items() if n}

    # -- the files --------------------------------------------------------------

    def scrub(self) -> tuple[bool, bool]:
        with self._db.exclusive() as conn:
            checkpointed = _checkpoint(conn)
            try:
                conn.execute("VACUUM")
                vacuumed = True
            except sqlite3.OperationalError as exc:  # busy, or a transaction open
                logger.warning("scrub: VACUUM of %s did not run: %s", self._db.path, exc)
                vacuumed = False
            checkpointed = _checkpoint(conn) and checkpointed
        return checkpointed, vacuumed

    @contextmanager
    def _secure_delete(self) -> Iterator[None]:
        with self._db.read() as conn:
            conn.execute("PRAGMA secure_delete = ON").fetchall()
            try:
                yield
            finally:
                conn.execute("PRAGMA secure_delete = OFF").fetchall()


def scoped_tables(conn: SQLiteConnection) -> list[str]:
    """Tables with ``user_id`` and ``agent_id`` columns, ``memories`` first."""
    tables = [
        str(name)
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
        )
    ]
    scoped = []
    for table in tables:
        columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if {"user_id", "agent_id"} <= columns:
            scoped.append(table)
    return sorted(scoped, key=lambda t: t != "memories")


def _memory_texts(
    conn: SQLiteConnection, key: tuple[str, str]
) -> Iterator[tuple[int, Sequence[object]]]:
    """(memory seq, text values) of every row of ``MEMORY_TEXTS`` in the scope."""
    for table, columns in MEMORY_TEXTS.items():
        query = _MEMORY_QUERIES.get(table, f"SELECT seq, {{columns}} FROM {table} WHERE {_SCOPE}")
        alias = "s." if table in _MEMORY_QUERIES else ""
        listed = ", ".join(alias + column for column in columns)
        for row in conn.execute(query.format(columns=listed), key):
            yield int(row[0]), row[1:]


def _still_used(
    conn: SQLiteConnection, key: tuple[str, str], tokens_in: Callable[[str], Iterable[str]]
) -> Iterator[set[str]]:
    for _, values in _memory_texts(conn, key):
        yield _tokens(tokens_in, values)
    for table, (_, _, columns) in RECORD_TEXTS.items():
        for row in conn.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE {_SCOPE}", key):
            yield _tokens(tokens_in, row)


def _tokens(tokens_in: Callable[[str], Iterable[str]], values: Sequence[object]) -> set[str]:
    return {t for v in values if isinstance(v, str) and "[" in v for t in tokens_in(v)}


def _matches(matches: Callable[[str], bool], values: Sequence[object]) -> bool:
    return any(isinstance(v, str) and v and matches(v) for v in values)


def _open(conn: SQLiteConnection, target: str, now: float) -> int:
    row = conn.execute(
        "INSERT INTO erasures (target, started_at) VALUES (?, ?) RETURNING id", (target, now)
    ).fetchone()
    return int(row[0])


def _close(conn: SQLiteConnection, erasure: int, now: float, counts: Counter[str]) -> None:
    conn.execute(
        "UPDATE erasures SET finished_at = ?, counts = ? WHERE id = ?",
        (now, json.dumps(dict(sorted((k, v) for k, v in counts.items() if v))), erasure),
    )


def _checkpoint(conn: SQLiteConnection) -> bool:
    try:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except sqlite3.OperationalError as exc:
        logger.warning("scrub: checkpoint failed: %s", exc)
        return False
    return int(busy) == 0
