"""``ErasureStore`` over PostgreSQL: forgetting a person or a scope, and scrubbing.

Which text lives where is the SQLite backend's account (``ucma.storage.sqlite.erasure``:
``MEMORY_TEXTS``, ``CONTEXT_TEXTS``, ``RECORD_TEXTS``, ``MEMORY_REFERENCES``; the tables
and columns are the same), with PostgreSQL's row keys where SQLite used ``rowid``. An
erasure runs in one transaction; event payloads are redacted while the ``erasures`` row
it opens is unfinished (the ``events_immutable`` trigger, schema.py). ``scrub`` then
rewrites every table (``VACUUM FULL``: the old files, dead rows included, are deleted)
and checkpoints; PostgreSQL recycles its write-ahead log on its own schedule, and
archived WAL or base backups are the operator's to expire.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence

import psycopg

from ucma.storage.base import ErasureStore
from ucma.storage.index.search_context import date_words
from ucma.storage.postgres.connection import Database, PgConnection
from ucma.storage.postgres.keywords import row_terms
from ucma.storage.sql.connection import one
from ucma.storage.sqlite.erasure import MEMORY_REFERENCES, MEMORY_TEXTS
from ucma.storage.sqlite.erasure import RECORD_TEXTS as SQLITE_RECORD_TEXTS
from ucma.types import Scope

__all__ = ["RECORD_TEXTS", "PostgresErasureStore", "scoped_tables"]

logger = logging.getLogger(__name__)

_SCOPE = "user_id = ? AND agent_id = ?"
_ROW_KEYS = {
    "conflicts": "row_seq",
    "review_flags": "row_seq",
    "decision_traces": "row_seq",
    "salience_updates": "id",
    "memory_history": "id",
    "duplicate_attempts": "id",
}
RECORD_TEXTS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    table: (name, _ROW_KEYS.get(table, key), columns)
    for table, (name, key, columns) in SQLITE_RECORD_TEXTS.items()
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
_REDACTED = json.dumps({"erased": True})
# Kept by a scope's erasure: administration, and the bookkeeping rows a trigger or the
# erasure itself already emptied (keyword statistics, the event sequence).
_KEEP_ON_SCOPE_ERASURE = frozenset({"api_keys"})
_NOT_COUNTED = frozenset({"keyword_stats", "event_streams"})


class PostgresErasureStore(ErasureStore):
    def __init__(self, db: Database) -> None:
        self._db = db

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
        with self._db.write() as conn:
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
                        f"DELETE FROM {table} WHERE {column} = ANY(?::text[]) AND {_SCOPE}",
                        (erased_ids, *key),
                    ).rowcount
            for table, (name, key_column, columns) in RECORD_TEXTS.items():
                doomed = []
                for row in conn.execute(
                    f"SELECT {key_column}, {', '.join(columns)} FROM {table} WHERE {_SCOPE}", key
                ).fetchall():
                    used_before.update(_tokens(tokens_in, row[1:]))
                    if _matches(matches, row[1:]):
                        doomed.append(row[0])
                if doomed:
                    counts[name] += conn.execute(
                        f"DELETE FROM {table} WHERE {_SCOPE} AND {key_column} = ANY(?)",
                        (*key, doomed),
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
                    "UPDATE events SET payload = ? WHERE position = ANY(?::bigint[])",
                    (_REDACTED, redacted),
                ).rowcount
            # Tokens only erased records used name what was erased too.
            orphans = used_before.difference(*_still_used(conn, key, tokens_in))
            doomed_tokens = sorted(set(tokens) | orphans)
            if doomed_tokens:
                counts["vault_entries"] += conn.execute(
                    f"DELETE FROM vault WHERE {_SCOPE} AND token = ANY(?::text[])",
                    (*key, doomed_tokens),
                ).rowcount
            counts["embedding_cache"] += conn.execute("DELETE FROM embedding_cache").rowcount
            _close(conn, erasure, now, counts)
        logger.info("erased %d records about a person in %s", sum(counts.values()), scope)
        return {name: n for name, n in counts.items() if n}

    def _delete_memories(
        self, conn: PgConnection, scope: Scope, seqs: Sequence[int], counts: Counter[str]
    ) -> list[str]:
        if not seqs:
            return []
        rows = conn.execute(
            f"DELETE FROM memories WHERE seq = ANY(?::bigint[]) AND {_SCOPE} "
            "RETURNING seq, id, kind",
            (list(seqs), scope.user_id, scope.agent_id),
        ).fetchall()
        for _, _, kind in rows:
            counts[str(kind)] += 1
        return [str(r[1]) for r in rows]

    def _rewrite_contexts(
        self, conn: PgConnection, scope: Scope, matches: Callable[[str], bool]
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
            conn.execute(
                "UPDATE memories SET search_context = ?, terms = ?::tsvector,"
                " content_length = ?, context_length = ? WHERE seq = ?",
                (new, *row_terms(content, new), seq),
            )
            rewritten += 1
        return rewritten

    # -- a scope ----------------------------------------------------------------

    def erase_scope(self, scope: Scope, now: float) -> dict[str, int]:
        counts: Counter[str] = Counter()
        key = (scope.user_id, scope.agent_id)
        with self._db.write() as conn:
            erasure = _open(conn, "scope", now)
            seqs = [
                int(r[0])
                for r in conn.execute(f"SELECT seq FROM memories WHERE {_SCOPE}", key).fetchall()
            ]
            self._delete_memories(conn, scope, seqs, counts)
            for table in scoped_tables(conn):
                if table == "memories" or table in _KEEP_ON_SCOPE_ERASURE:
                    continue
                removed = conn.execute(f"DELETE FROM {table} WHERE {_SCOPE}", key).rowcount
                if table not in _NOT_COUNTED:
                    counts[RECORD_TEXTS.get(table, (table,))[0]] += removed
            counts["embedding_cache"] += conn.execute("DELETE FROM embedding_cache").rowcount
            _close(conn, erasure, now, counts)
        logger.info("erased scope %s: %d records", scope, sum(counts.values()))
        return {name: n for name, n in counts.items() if n}

    # -- the files --------------------------------------------------------------

    def scrub(self) -> tuple[bool, bool]:
        """Rewrite every table of the store (``VACUUM FULL``), then ``CHECKPOINT``
        (which needs a superuser or the ``pg_checkpoint`` role)."""
        with self._db.read() as conn:
            tables = [
                str(row[0])
                for row in conn.execute(
                    "SELECT c.relname FROM pg_class c"
                    " WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace"
                    " ORDER BY c.relname"
                ).fetchall()
            ]
            try:
                for table in tables:
                    conn.execute(f"VACUUM FULL {table}")
                vacuumed = True
            except psycopg.Error as exc:  # a lock held by another session, or no privilege
                logger.warning("scrub: VACUUM FULL did not run: %s", exc)
                vacuumed = False
            try:
                conn.execute("CHECKPOINT")
                checkpointed = True
            except psycopg.Error as exc:
                logger.warning("scrub: CHECKPOINT did not run: %s", exc)
                checkpointed = False
        return checkpointed, vacuumed


def scoped_tables(conn: PgConnection) -> list[str]:
    """Tables with ``user_id`` and ``agent_id`` columns, ``memories`` first."""
    rows = conn.execute(
        """
        SELECT table_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND column_name IN ('user_id', 'agent_id')
        GROUP BY table_name HAVING count(*) = 2 ORDER BY table_name
        """
    ).fetchall()
    return sorted((str(row[0]) for row in rows), key=lambda t: t != "memories")


def _memory_texts(
    conn: PgConnection, key: tuple[str, str]
) -> Iterator[tuple[int, Sequence[object]]]:
    """(memory seq, text values) of every row of ``MEMORY_TEXTS`` in the scope."""
    for table, columns in MEMORY_TEXTS.items():
        query = _MEMORY_QUERIES.get(table, f"SELECT seq, {{columns}} FROM {table} WHERE {_SCOPE}")
        alias = "s." if table in _MEMORY_QUERIES else ""
        listed = ", ".join(alias + column for column in columns)
        for row in conn.execute(query.format(columns=listed), key).fetchall():
            yield int(row[0]), row[1:]


def _still_used(
    conn: PgConnection, key: tuple[str, str], tokens_in: Callable[[str], Iterable[str]]
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


def _open(conn: PgConnection, target: str, now: float) -> int:
    row = one(
        conn.execute(
            "INSERT INTO erasures (target, started_at) VALUES (?, ?) RETURNING id", (target, now)
        )
    )
    return int(row[0])


def _close(conn: PgConnection, erasure: int, now: float, counts: Counter[str]) -> None:
    conn.execute(
        "UPDATE erasures SET finished_at = ?, counts = ? WHERE id = ?",
        (now, json.dumps(dict(sorted((k, v) for k, v in counts.items() if v))), erasure),
    )
