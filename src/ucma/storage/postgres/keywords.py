"""Keyword search on PostgreSQL's full-text index: the SQLite backend's BM25F, in SQL.

Analysis is the one keyword search uses everywhere (``analyze``: lower case,
words of letters and digits, diacritics folded, English Snowball stems, and each
exact identifier whole), done in Python on both sides, so a store on PostgreSQL
ranks with the same terms as one on SQLite. A row's terms are stored as a
``tsvector`` built here, not by a text search configuration: each term is a
lexeme whose positions count its occurrences, weight A for the content and B for
the context field (``tf`` = number of positions of that weight). PostgreSQL keeps
at most 256 positions per lexeme, so a term's frequency in one row saturates
there (BM25's ``k1`` has long flattened it by then); lexemes longer than
PostgreSQL's limit are left out on both sides.

A query is a ``tsquery`` of its terms joined by ``|``, built as a literal with
every lexeme quoted, so no query text is ever parsed as tsquery syntax. The GIN
index on (user_id, agent_id, terms) finds the matching rows of the scope; the
scope's row count and field lengths come from ``keyword_stats`` (all rows,
archived included, like the SQLite cache's live rows); document frequencies are
counted per term through the same index. Scores are BM25F divided by the most the
query's terms allow, exactly as ``ucma.storage.index.keyword_cache`` computes
them; ties go to the older row.

Scoring reads every row holding a query term, so words most rows hold ("that",
"here") would make a search read most of the scope. ``common_terms`` sets them
aside: the rows holding a rarer term are scored first (over all the query's
terms), and when the k-th of them beats the most the common terms alone could
give, that is the exact answer (MaxScore pruning); otherwise all rows are scored.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from ucma.storage.base import Bm25, ScoredId
from ucma.storage.index.keyword_cache import analyze
from ucma.storage.postgres.connection import PgConnection
from ucma.types import Scope

__all__ = ["MAX_LEXEME_BYTES", "keyword_search", "row_terms", "tsvector_literal"]

MAX_LEXEME_BYTES = 2046
"""PostgreSQL's longest lexeme (2 KiB less one)."""
_MAX_POSITIONS = 256


def _usable(term: str) -> bool:
    return len(term.encode("utf-8")) <= MAX_LEXEME_BYTES


def _quote(term: str) -> str:
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(content_terms: Sequence[str], context_terms: Sequence[str]) -> str:
    """The ``tsvector`` of a row: each term with one position per occurrence, weight
    A in the content and B in the context (positions numbered per term)."""
    own = Counter(t for t in content_terms if _usable(t))
    around = Counter(t for t in context_terms if _usable(t))
    parts = []
    for term in dict.fromkeys([*own, *around]):
        a = min(own[term], _MAX_POSITIONS)
        b = min(around[term], _MAX_POSITIONS - a)
        positions = [f"{i}A" for i in range(1, a + 1)]
        positions += [f"{i}B" for i in range(a + 1, a + b + 1)]
        parts.append(_quote(term) + ":" + ",".join(positions))
    return " ".join(parts)


def row_terms(content: str, context: str) -> tuple[str, int, int]:
    """(tsvector literal, content length, context length) of a row's two fields."""
    own, around = analyze(content), analyze(context)
    return tsvector_literal(own, around), len(own), len(around)


_DOCUMENT_FREQUENCIES = """
SELECT (SELECT count(*) FROM memories m
        WHERE m.user_id = ? AND m.agent_id = ? AND m.terms @@ q.query::tsquery)
FROM unnest(?::text[]) WITH ORDINALITY AS q(query, n)
ORDER BY q.n
"""

_SEARCH = """
WITH hits AS (
    SELECT m.seq, m.id, m.terms, m.content_length, m.context_length
    FROM memories m
    WHERE m.user_id = :user AND m.agent_id = :agent AND m.terms @@ :query::tsquery
        {filters}
), scored AS (
    SELECT h.seq, h.id, sum(f.idf * f.freq * (:k1 + 1.0) / (f.freq + :k1)) AS score
    FROM hits h
    CROSS JOIN LATERAL (
        SELECT (:idfs::float8[])[array_position(:lexemes::text[], u.lexeme)] AS idf,
            coalesce(cardinality(array_positions(u.weights, 'A')), 0)
                / (1.0 - :b + :b * h.content_length / :avg_content)
            + :weight * coalesce(cardinality(array_positions(u.weights, 'B')), 0)
                / (1.0 - :b + :b * h.context_length / :avg_context) AS freq
        FROM unnest(h.terms) u
        WHERE u.lexeme = ANY(:lexemes::text[])
    ) f
    WHERE f.freq > 0
    GROUP BY h.seq, h.id
)
SELECT id, score / :most FROM scored WHERE score > 0
ORDER BY score DESC, seq
LIMIT :k
"""


def keyword_search(
    conn: PgConnection,
    scope: Scope,
    terms: Sequence[str],
    k: int,
    *,
    filters: str,
    filter_params: dict[str, object],
    params: Bm25,
) -> list[ScoredId]:
    """Top ``k`` (id, score) of the scope for ``terms``; ``filters`` is SQL written in
    this package over alias ``m`` (kinds, archived) with named parameters."""
    tokens = [t for t in dict.fromkeys(t for word in terms for t in analyze(word)) if _usable(t)]
    if not tokens or k <= 0:
        return []
    stats = conn.execute(
        "SELECT rows, content_length, context_length FROM keyword_stats "
        "WHERE user_id = ? AND agent_id = ?",
        (scope.user_id, scope.agent_id),
    ).fetchone()
    if stats is None or int(stats[0]) <= 0:
        return []
    total = int(stats[0])
    avg_content = max(int(stats[1]) / total, 1e-9)
    avg_context = max(int(stats[2]) / total, 1e-9)
    quoted = [_quote(t) for t in tokens]
    frequencies = [
        int(row[0])
        for row in conn.execute(
            _DOCUMENT_FREQUENCIES, (scope.user_id, scope.agent_id, quoted)
        ).fetchall()
    ]
    k1, b = params.k1, params.b
    idfs = [math.log(1.0 + (total - df + 0.5) / (df + 0.5)) for df in frequencies]
    most = sum(idf * (k1 + 1.0) for idf in idfs)
    present = [
        (t, q, idf) for t, q, idf, df in zip(tokens, quoted, idfs, frequencies, strict=True) if df
    ]
    if not present:
        return []
    query = {
        "lexemes": [t for t, _, _ in present],
        "idfs": [idf for _, _, idf in present],
        "user": scope.user_id,
        "agent": scope.agent_id,
        "k1": k1,
        "b": b,
        "weight": params.context_weight,
        "avg_content": avg_content,
        "avg_context": avg_context,
        "most": most,
        "k": int(k),
        **filter_params,
    }
    sql = _SEARCH.format(filters=filters)
    common = common_terms(
        [idf for _, _, idf in present],
        [df for df in frequencies if df],
        total,
        k1,
    )
    if common:
        # Rows holding only common terms can score at most ``ceiling``: once k rows
        # holding a rarer term score above it, those rows cannot be in the top k.
        rare = [q for i, (_, q, _) in enumerate(present) if i not in common]
        rows = conn.execute(sql, {**query, "query": " | ".join(rare)}).fetchall()
        ceiling = sum(present[i][2] * (k1 + 1.0) for i in common) / most
        if len(rows) == k and float(rows[-1][1]) * (1.0 - 1e-9) > ceiling:
            return [(str(row[0]), float(row[1])) for row in rows]
    rows = conn.execute(sql, {**query, "query": " | ".join(q for _, q, _ in present)}).fetchall()
    return [(str(row[0]), float(row[1])) for row in rows]


COMMON_SHARE = 0.05
"""A term held by more than this share of a scope's rows is common (see ``common_terms``)."""


def common_terms(
    idfs: Sequence[float], frequencies: Sequence[int], total: int, k1: float
) -> set[int]:
    """Indexes of the query's common terms: those held by more than ``COMMON_SHARE`` of
    the rows, lowest idf first, while the rest keep at least one term. A search first
    scores only the rows holding a rarer term; when its k-th score beats the most the
    common terms together can give (``idf * (k1 + 1)`` each), that is the answer, without
    reading the many rows that hold nothing but common words."""
    order = sorted(range(len(idfs)), key=lambda i: (idfs[i], i))
    common: set[int] = set()
    for i in order:
        if frequencies[i] <= COMMON_SHARE * total or len(common) == len(idfs) - 1:
            break
        common.add(i)
    return common
