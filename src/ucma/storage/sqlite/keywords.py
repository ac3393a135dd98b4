"""Keyword search: BM25 over ``memories_fts`` with a query no user text can steer.

The FTS5 MATCH expression is built here from plain terms: each term becomes
one double-quoted FTS5 string (internal double quotes doubled), and the
strings are joined with OR. Inside a string FTS5 recognises no operators,
column filters, prefixes or NEAR groups, so ``AND``, ``NEAR(``, ``*``,
``col:`` or a stray quote are just text that the tokenizer reduces to words
(or to nothing, which matches nothing). NUL bytes are replaced by spaces and
unencodable surrogates dropped before binding.

Scores are ``-bm25()``: FTS5's BM25 is negative with better matches lower,
and never zero for a match (its IDF has a small positive floor), so the
score is > 0 and higher is better.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ucma.errors import ValidationError
from ucma.storage.base import ScoredId
from ucma.types import MemoryKind, Scope

__all__ = ["match_expression", "search_keywords"]


def _clean(term: str) -> str:
    text = str(term).replace("\x00", " ")
    return text.encode("utf-8", "ignore").decode("utf-8")


def match_expression(terms: Sequence[str]) -> str | None:
    """The FTS5 query matching any of ``terms``, or None when no term has text."""
    quoted = []
    for term in dict.fromkeys(_clean(t) for t in terms):
        if term.strip():
            quoted.append('"' + term.replace('"', '""') + '"')
    return " OR ".join(quoted) if quoted else None


def search_keywords(
    conn: sqlite3.Connection,
    scope: Scope,
    terms: Sequence[str],
    k: int,
    *,
    kinds: Sequence[MemoryKind] | None,
    include_archived: bool,
    context_weight: float = 0.5,
) -> list[ScoredId]:
    expression = match_expression(terms)
    if expression is None or k <= 0:
        return []
    if not 0.0 <= context_weight <= 10.0:
        raise ValidationError(f"context_weight must be in [0, 10], got {context_weight}")
    sql = [
        """
        SELECT m.id, -bm25(memories_fts, 1.0, ?) AS score
        FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid
        WHERE memories_fts MATCH ? AND m.user_id = ? AND m.agent_id = ?
        """
    ]
    params: list[object] = [float(context_weight), expression, scope.user_id, scope.agent_id]
    if not include_archived:
        sql.append("AND m.archived_at IS NULL")
    if kinds is not None:
        values = sorted({MemoryKind(kind).value for kind in kinds})
        if not values:
            return []
        sql.append(f"AND m.kind IN ({', '.join('?' * len(values))})")
        params.extend(values)
    sql.append("ORDER BY score DESC, m.seq LIMIT ?")
    params.append(k)
    rows = conn.execute(" ".join(sql), params)
    # A match only in a zero-weight field scores 0: not a match for the caller.
    return [(memory_id, float(score)) for memory_id, score in rows if score > 0]
