"""``ErasureStore`` over SQL: forgetting a person or a scope.

Which text lives where is written down here, table by table (``MEMORY_TEXTS``: text that
belongs to a memory, so a match erases the memory; ``CONTEXT_TEXTS``: an episode's keyword
context, which quotes its predecessor and is rewritten; ``RECORD_TEXTS``: records with
text of their own, erased on a match; ``MEMORY_REFERENCES``: records naming a memory by
id, erased with it). A test reads every TEXT column of the schema and fails on one this
module does not account for, so a new table cannot slip past an erasure.

An erasure runs in one transaction; event payloads are redacted while the ``erasures``
row it opens is unfinished (each backend's ``events`` trigger). What each backend adds
(SQLite: ``secure_delete`` and its search cache; PostgreSQL: the keyword ``tsvector``;
the catalog of scoped tables; ``scrub``, which rewrites the files) is in its
``erasure.py``.
"""

from __future__ import annotations

import json
import logging
from abc import abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext

from ucma.storage.base import ErasureStore
from ucma.storage.index.search_context import date_words
from ucma.storage.sql.connection import Connection, Database, one
from ucma.types import Scope

__all__ = [
    "CONTEXT_TEXTS",
    "MEMORY_REFERENCES",
    "MEMORY_TEXTS",
    "RECORD_TEXTS",
    "ROW_ORDER",
    "SqlErasureStore",
]

logger = logging.getLogger(__name__)

_SCOPE = "user_id = ? AND agent_id = ?"

ROW_ORDER = "(row order)"
"""A ``RECORD_TEXTS`` key column: the table's insertion-order column (``Dialect.row_order``)."""

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
        ROW_ORDER,
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
    "review_flags": ("review_flags", ROW_ORDER, ("reason",)),
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
        ROW_ORDER,
        (
            "session_id",
            "decision_type",
            "summary",
            "metadata",
            "outcome_signal",
            "outcome_feedback",
        ),
    ),
    "salience_updates": ("salience_updates", "id", ("reason",)),
    "memory_history": ("history", "id", ("event", "details")),
    "duplicate_attempts": ("duplicate_attempts", "id", ("content", "source")),
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


class SqlErasureStore(ErasureStore):
    """The erasures; a backend's subclass says what else a change of rows means."""

    not_counted: frozenset[str] = frozenset()
    """Scoped bookkeeping tables a scope erasure empties without reporting them."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._sql = db.dialect

    # -- what each backend adds ---------------------------------------------------

    @abstractmethod
    def scoped_tables(self, conn: Connection) -> list[str]:
        """Tables with ``user_id`` and ``agent_id`` columns, ``memories`` first."""

    def _erasing(self) -> AbstractContextManager[object]:
        """Held around an erasure's transaction."""
        return nullcontext()

    def _removed(self, conn: Connection, scope: Scope, seqs: Sequence[int]) -> None:
        """Memory rows ``seqs`` of ``scope`` were deleted in this transaction."""

    def _set_context(
        self, conn: Connection, scope: Scope, seq: int, content: str, old: str, new: str
    ) -> None:
        """Rewrite the keyword context of memory row ``seq`` from ``old`` to ``new``."""
        conn.execute("UPDATE memories SET search_context = ? WHERE seq = ?", (new, seq))

    def _scope_erasing(self, conn: Connection, scope: Scope) -> None:
        """``scope``'s memories are gone; its other scoped rows are next."""

    def _erased(self, scope: Scope) -> None:
        """An erasure in ``scope`` committed."""

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
        sql = self._sql
        with self._erasing(), self._db.write() as conn:
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
                        f"DELETE FROM {table} WHERE {sql.ids_in_scope(column)}",
                        (sql.bind_list(erased_ids), *key),
                    ).rowcount
            for table, (name, key_column, columns) in RECORD_TEXTS.items():
                if key_column == ROW_ORDER:
                    key_column = sql.row_order(table)
                doomed = []
                for row in conn.execute(
                    f"SELECT {key_column}, {', '.join(columns)} FROM {table} WHERE {_SCOPE}", key
                ).fetchall():
                    used_before.update(_tokens(tokens_in, row[1:]))
                    if _matches(matches, row[1:]):
                        doomed.append(row[0])
                if doomed:
                    counts[name] += conn.execute(
                        f"DELETE FROM {table} WHERE {_SCOPE} AND {sql.among(key_column, '')}",
                        (*key, sql.bind_list(doomed)),
                    ).rowcount
            redacted = [
                position
                for position, event_type, payload in conn.execute(
                    f"SELECT position, type, payload FROM events WHERE {_SCOPE}", key
                ).fetchall()
                if _matches(matches, (event_type, payload))
            ]
            if redacted:
                counts["events_redacted"] += conn.execute(
                    f"UPDATE events SET payload = ? WHERE {sql.among('position', 'bigint')}",
                    (_REDACTED, sql.bind_list(redacted)),
                ).rowcount
            # Tokens only erased records used name what was erased too.
            orphans = used_before.difference(*_still_used(conn, key, tokens_in))
            doomed_tokens = sorted(set(tokens) | orphans)
            if doomed_tokens:
                counts["vault_entries"] += conn.execute(
                    f"DELETE FROM vault WHERE {_SCOPE} AND {sql.ids('token')}",
                    (*key, sql.bind_list(doomed_tokens)),
                ).rowcount
            counts["embedding_cache"] += conn.execute("DELETE FROM embedding_cache").rowcount
            _close(conn, erasure, now, counts)
        self._erased(scope)
        logger.info("erased %d records about a person in %s", sum(counts.values()), scope)
        return {name: n for name, n in counts.items() if n}

    def _delete_memories(
        self, conn: Connection, scope: Scope, seqs: Sequence[int], counts: Counter[str]
    ) -> list[str]:
        if not seqs:
            return []
        rows = conn.execute(
            f"DELETE FROM memories WHERE {self._sql.among('seq', 'bigint')} AND {_SCOPE} "
            "RETURNING seq, id, kind",
            (self._sql.bind_list(seqs), scope.user_id, scope.agent_id),
        ).fetchall()
        for _, _, kind in rows:
            counts[str(kind)] += 1
        self._removed(conn, scope, [int(r[0]) for r in rows])
        return [str(r[1]) for r in rows]

    def _rewrite_contexts(
        self, conn: Connection, scope: Scope, matches: Callable[[str], bool]
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
            self._set_context(conn, scope, int(seq), content, context, new)
            rewritten += 1
        return rewritten

    # -- a scope ----------------------------------------------------------------

    def erase_scope(self, scope: Scope, now: float) -> dict[str, int]:
        counts: Counter[str] = Counter()
        key = (scope.user_id, scope.agent_id)
        with self._erasing(), self._db.write() as conn:
            erasure = _open(conn, "scope", now)
            seqs = [
                int(r[0])
                for r in conn.execute(f"SELECT seq FROM memories WHERE {_SCOPE}", key).fetchall()
            ]
            self._delete_memories(conn, scope, seqs, counts)
            self._scope_erasing(conn, scope)
            for table in self.scoped_tables(conn):
                if table == "memories" or table in _KEEP_ON_SCOPE_ERASURE:
                    continue
                removed = conn.execute(f"DELETE FROM {table} WHERE {_SCOPE}", key).rowcount
                if table not in self.not_counted:
                    counts[RECORD_TEXTS.get(table, (table,))[0]] += removed
            counts["embedding_cache"] += conn.execute("DELETE FROM embedding_cache").rowcount
            _close(conn, erasure, now, counts)
        self._erased(scope)
        logger.info("erased scope %s: %d records", scope, sum(counts.values()))
        return {name: n for name, n in counts.items() if n}


def _memory_texts(conn: Connection, key: tuple[str, str]) -> Iterator[tuple[int, Sequence[object]]]:
    """(memory seq, text values) of every row of ``MEMORY_TEXTS`` in the scope."""
    for table, columns in MEMORY_TEXTS.items():
        query = _MEMORY_QUERIES.get(table, f"SELECT seq, {{columns}} FROM {table} WHERE {_SCOPE}")
        alias = "s." if table in _MEMORY_QUERIES else ""
        listed = ", ".join(alias + column for column in columns)
        for row in conn.execute(query.format(columns=listed), key).fetchall():
            yield int(row[0]), row[1:]


def _still_used(
    conn: Connection, key: tuple[str, str], tokens_in: Callable[[str], Iterable[str]]
) -> Iterator[set[str]]:
    for _, values in _memory_texts(conn, key):
        yield _tokens(tokens_in, values)
    for table, (_, _, columns) in RECORD_TEXTS.items():
        for row in conn.execute(
            f"SELECT {', '.join(columns)} FROM {table} WHERE {_SCOPE}", key
        ).fetchall():
            yield _tokens(tokens_in, row)


def _tokens(tokens_in: Callable[[str], Iterable[str]], values: Sequence[object]) -> set[str]:
    return {t for v in values if isinstance(v, str) and "[" in v for t in tokens_in(v)}


def _matches(matches: Callable[[str], bool], values: Sequence[object]) -> bool:
    return any(isinstance(v, str) and v and matches(v) for v in values)


def _open(conn: Connection, target: str, now: float) -> int:
    row = one(
        conn.execute(
            "INSERT INTO erasures (target, started_at) VALUES (?, ?) RETURNING id", (target, now)
        )
    )
    return int(row[0])


def _close(conn: Connection, erasure: int, now: float, counts: Counter[str]) -> None:
    conn.execute(
        "UPDATE erasures SET finished_at = ?, counts = ? WHERE id = ?",
        (now, json.dumps(dict(sorted((k, v) for k, v in counts.items() if v))), erasure),
    )
