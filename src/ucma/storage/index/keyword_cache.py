"""One scope's keyword index in memory: BM25 over two fields with numpy.

Why not FTS5: its BM25 has fixed parameters (k1 = 1.2, b = 0.75), its
statistics (document count, lengths, document frequencies) are global to the
table, so one tenant's text changes another's ranking, and a query walks the
postings of every scope before the scope filter applies: on a 100,000-memory
scope of everyday words one recall spent ~75 ms there. Here every scope has
its own postings and statistics, and a query touches only its terms' postings.

Text analysis (``analyze``): lower case, words of letters and digits,
diacritics folded, English Snowball stems (``snowballstemmer``), so "watched"
finds "watch". Stems are cached. Each exact identifier (an email, URL, code or
id, see ``ucma.identifiers``) is also a term of its own, whole and lower-cased
(not stemmed), so "wendy@post.dev" matches itself above "liam@post.dev" while
its parts still match. Query terms go through the same analysis. Nothing here
is persisted: the index is rebuilt from the table, so a change of analysis
applies to existing stores as they load.

Scoring is BM25F in its simple form (Robertson et al. 2004): a term's
frequency in the content and, weighted by ``context_weight``, in the
context field are each length-normalised (``b``) and summed before the
saturation (``k1``); ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))`` over the
scope's live rows. A match only in a field of weight 0 scores 0.

Rows are positions shared with ``ScopeVectors`` (the same rows in the same
order; compaction keeps them aligned). Each term's postings are chunks of
(position, content count, context count) arrays appended per batch and merged
when read. A deleted row keeps its postings until compaction but is masked
out of scores and statistics; a row whose content changes is re-indexed in
place.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
import snowballstemmer

from ucma.identifiers import identifiers
from ucma.storage.base import Bm25

__all__ = ["ScopeTerms", "analyze"]

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STEMS: dict[str, str] = {}
_MAX_STEMS = 500_000
_local = threading.local()  # a Snowball stemmer keeps state while it works: one per thread


def _stem(word: str) -> str:
    """Stem of a lower-case word, remembered (the stemmer is pure Python)."""
    if word.isdigit():
        return word
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = snowballstemmer.stemmer("english")
    if not word.isascii():
        folded = unicodedata.normalize("NFKD", word)
        folded = "".join(ch for ch in folded if not unicodedata.combining(ch)) or word
        stem = stemmer.stemWord(folded)
    else:
        stem = stemmer.stemWord(word)
    if len(_STEMS) >= _MAX_STEMS:
        _STEMS.clear()
    _STEMS[word] = stem
    return str(stem)


def analyze(text: str) -> list[str]:
    """The index terms of ``text``: its words' stems in order (repeats kept),
    then its identifiers whole."""
    stems = _STEMS
    lowered = text.lower()
    terms = [stems.get(word) or _stem(word) for word in _WORD.findall(lowered)]
    terms.extend(identifiers(lowered))
    return terms


class _Batch:
    """Postings of rows being indexed, as flat columns (term id, position, count
    in the content, count in the context)."""

    __slots__ = ("around", "own", "positions", "terms")

    def __init__(self) -> None:
        self.terms: list[int] = []
        self.positions: list[int] = []
        self.own: list[int] = []
        self.around: list[int] = []


class _Postings:
    """One term's postings: appended chunks, merged into one array on read."""

    __slots__ = ("_chunks",)

    def __init__(self) -> None:
        self._chunks: list[np.ndarray] = []  # rows of (position, content tf, context tf)

    def add(self, rows: np.ndarray) -> None:
        self._chunks.append(rows)

    def arrays(self) -> np.ndarray:
        if len(self._chunks) != 1:
            merged = np.concatenate(self._chunks) if self._chunks else np.empty((0, 3), np.int32)
            self._chunks = [merged]
        return self._chunks[0]

    def replace(self, rows: np.ndarray) -> None:
        self._chunks = [rows]


class ScopeTerms:
    """Postings and field lengths of one scope's rows, by row position."""

    def __init__(self) -> None:
        self.vocabulary: dict[str, int] = {}
        self._postings: list[_Postings] = []
        self.n = 0
        self._lengths = np.zeros((0, 2), dtype=np.float32)  # content, context
        self._rewrites = 0
        self._stats_key: tuple[int, int, int] | None = None
        self._stats: tuple[int, np.ndarray] = (0, np.ones(2))

    # -- growth ------------------------------------------------------------------

    def append(self, texts: Sequence[tuple[str, str]]) -> None:
        """Index rows ``n .. n + len(texts) - 1``: (content, context) each."""
        first = self.n
        self._reserve(first + len(texts))
        batch = _Batch()
        for offset, (content, context) in enumerate(texts):
            self._index_row(first + offset, content, context, batch)
        self.n = first + len(texts)
        self._flush(batch)

    def _index_row(self, position: int, content: str, context: str, batch: _Batch) -> None:
        own, around = Counter(analyze(content)), Counter(analyze(context))
        # First-appearance order, not a set's: term ids, and so the order scores
        # are summed in, must not depend on the process's string hashing.
        terms = list(dict.fromkeys([*own, *around]))
        vocabulary = self.vocabulary
        for term in terms:
            if term not in vocabulary:
                vocabulary[term] = len(self._postings)
                self._postings.append(_Postings())
        batch.terms.extend([vocabulary[term] for term in terms])
        batch.positions.extend([position] * len(terms))
        batch.own.extend([own[term] for term in terms])
        batch.around.extend([around[term] for term in terms])
        self._lengths[position] = (own.total(), around.total())

    def _flush(self, batch: _Batch) -> None:
        """One chunk per term of the batch, cut from one sorted array."""
        if not batch.terms:
            return
        term_ids = np.array(batch.terms, dtype=np.int64)
        rows = np.array([batch.positions, batch.own, batch.around], dtype=np.int32).T
        order = np.argsort(term_ids, kind="stable")
        term_ids, rows = term_ids[order], rows[order]
        starts = np.flatnonzero(np.diff(term_ids, prepend=-1))
        ends = np.append(starts[1:], len(term_ids))
        for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
            self._postings[int(term_ids[start])].add(rows[start:end])

    def _reserve(self, needed: int) -> None:
        capacity = len(self._lengths)
        if needed > capacity:
            grown = np.zeros((max(needed, 2 * capacity, 1024), 2), dtype=np.float32)
            grown[: self.n] = self._lengths[: self.n]
            self._lengths = grown

    # -- changes -----------------------------------------------------------------

    def retext(self, position: int, old: tuple[str, str], new: tuple[str, str]) -> None:
        """Re-index the row at ``position`` whose (content, context) was ``old``."""
        for term in {*analyze(old[0]), *analyze(old[1])}:
            term_id = self.vocabulary.get(term)
            if term_id is not None:
                rows = self._postings[term_id].arrays()
                self._postings[term_id].replace(rows[rows[:, 0] != position])
        batch = _Batch()
        self._index_row(position, *new, batch)
        self._flush(batch)
        self._rewrites += 1

    def compact(self, keep: np.ndarray) -> None:
        """Keep the rows at positions ``keep`` (ascending), renumbered from 0."""
        new_position = np.full(self.n, -1, dtype=np.int64)
        new_position[keep] = np.arange(len(keep))
        for postings in self._postings:
            rows = postings.arrays()
            if rows.size:
                mapped = new_position[rows[:, 0]]
                kept = rows[mapped >= 0].copy()
                kept[:, 0] = mapped[mapped >= 0]
                postings.replace(kept)
        self._lengths = self._lengths[keep].copy()
        self.n = len(keep)
        self._stats_key = None

    # -- search ------------------------------------------------------------------

    def scores(
        self,
        terms: Iterable[str],
        live: np.ndarray | None,
        visible: np.ndarray | None,
        params: Bm25,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Positions and scores in (0, 1] of the rows matching any term, among
        the ``visible`` ones (None: all). ``live`` marks the rows the
        statistics count, the ones not deleted (None: all).

        A score is the row's BM25F divided by the most the query's terms allow
        (each term's idf times ``k1 + 1``, a term no live row holds counting
        with document frequency 0): the share of the query's information the
        row matches. A row sharing only a common word with the query scores
        little however small the scope, and a score means the same thing in
        every scope and for every query."""
        tokens = list(dict.fromkeys(t for word in terms for t in analyze(word)))
        empty = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
        total, average = self._statistics(live)
        if not tokens or total == 0:
            return empty
        k1, b, weight = params.k1, params.b, params.context_weight
        lengths = self._lengths
        summed = np.zeros(self.n, dtype=np.float64)
        most = 0.0
        for token in tokens:
            term_id = self.vocabulary.get(token)
            rows = self._postings[term_id].arrays() if term_id is not None else None
            position = rows[:, 0] if rows is not None and rows.size else None
            if position is None:
                df = 0
            else:
                df = len(position) if live is None else int(np.count_nonzero(live[position]))
            idf = math.log(1.0 + (total - df + 0.5) / (df + 0.5))
            most += idf * (k1 + 1.0)
            if position is None or df == 0:
                continue
            frequency = rows[:, 1] / (1.0 - b + b * lengths[position, 0] / average[0])
            if weight > 0:
                frequency += weight * rows[:, 2] / (1.0 - b + b * lengths[position, 1] / average[1])
            # Positions are unique within a term's postings, so += adds each once.
            summed[position] += idf * frequency * (k1 + 1.0) / (frequency + k1)
        if visible is not None:
            summed[~visible] = 0.0
        matched = np.flatnonzero(summed > 0)
        return matched, summed[matched] / most

    def _statistics(self, live: np.ndarray | None) -> tuple[int, np.ndarray]:
        """Number of live rows and their mean field lengths, kept until rows
        are added, removed or rewritten."""
        key = (self.n, -1 if live is None else int(np.count_nonzero(live)), self._rewrites)
        if self._stats_key != key:
            lengths = self._lengths[: self.n] if live is None else self._lengths[: self.n][live]
            total = len(lengths)
            average = lengths.mean(axis=0) if total else np.zeros(2)
            self._stats = (total, np.maximum(average, 1e-9))
            self._stats_key = key
        return self._stats
