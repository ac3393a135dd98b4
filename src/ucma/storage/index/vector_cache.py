"""One scope's rows in memory: exact top-k cosine search and BM25F keyword
search with numpy.

Rows are kept in ``seq`` order with their id, kind code, archived flag and a
liveness flag (a deleted row is only marked dead until the next compaction).
The float32 matrix is stored in blocks: appending never copies what is
already loaded (a 100,000 x 384 matrix is 150 MB). An exact search is
matrix @ vector over the blocks (in single-threaded slices) and
``np.argpartition``; given a scope's HNSW graph (hnsw.py), a search re-scores
the graph's proposals and scans only the rows newer than the graph.

The rows' text is indexed by ``keyword_cache.ScopeTerms`` at the same
positions. This module holds no SQL; a backend keeps it in step with its database
(SQLite: ``ucma.storage.sqlite.vectors.VectorIndex``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ucma.storage.base import Bm25, ScoredId
from ucma.storage.index.hnsw import HnswIndex
from ucma.storage.index.keyword_cache import ScopeTerms
from ucma.types import MemoryKind

__all__ = [
    "BLOCK_ROWS",
    "FIRST_TAIL_ROWS",
    "KIND_CODES",
    "KIND_CODE_BY_VALUE",
    "SCORE_ROWS",
    "ScopeVectors",
    "kind_filter",
]

KIND_CODES = {kind: code for code, kind in enumerate(MemoryKind)}
"""Each kind's small-integer code in ``ScopeVectors.kinds``."""
KIND_CODE_BY_VALUE = {kind.value: code for kind, code in KIND_CODES.items()}


def kind_filter(kinds: Sequence[MemoryKind] | None) -> np.ndarray | None:
    """The codes of a search's kind filter (None: every kind)."""
    if kinds is None:
        return None
    return np.array(sorted({KIND_CODES[MemoryKind(kind)] for kind in kinds}), dtype=np.int8)


BLOCK_ROWS = 4096
"""Rows per appendable block; larger appends become blocks of their own."""

FIRST_TAIL_ROWS = 16
"""Rows of a scope's first tail (see ``ScopeVectors._make_room``)."""

SCORE_ROWS = 1024
"""Rows per matrix-vector product when scoring (see ``ScopeVectors.scores``)."""


class ScopeVectors:
    """The committed rows of one scope at ``version`` of its change counter:
    vectors, text postings, and each row's id, kind and flags."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.version = -1
        self.rewrites = 0
        self.n = 0
        self.dead = 0
        self.ids: list[str] = []
        self._blocks: list[np.ndarray] = []
        self._tail = np.empty((0, dimension), dtype=np.float32)
        self._tail_n = 0
        self.seqs = np.empty(0, dtype=np.int64)
        self.kinds = np.empty(0, dtype=np.int8)
        self.archived = np.empty(0, dtype=bool)
        self.alive = np.empty(0, dtype=bool)
        # None in a vector-only view (``fork``).
        self.terms: ScopeTerms | None = ScopeTerms()
        self._where: dict[str, int] | None = None  # id -> position, built on first use

    @property
    def max_seq(self) -> int:
        return int(self.seqs[self.n - 1]) if self.n else 0

    @property
    def live_count(self) -> int:
        return self.n - self.dead

    @property
    def vector_bytes(self) -> int:
        """Bytes the vectors take, the tail's unused room included."""
        return sum(block.nbytes for block in self._blocks) + self._tail.nbytes

    # -- growth ------------------------------------------------------------------

    def _reserve(self, needed: int) -> None:
        capacity = self.seqs.shape[0]
        if needed <= capacity:
            return
        capacity = max(needed, 2 * capacity, 1024)
        for name in ("seqs", "kinds", "archived", "alive"):
            old = getattr(self, name)
            new = np.empty(capacity, dtype=old.dtype)
            new[: self.n] = old[: self.n]
            setattr(self, name, new)

    def _seal_tail(self) -> None:
        if self._tail_n:
            rows = self._tail[: self._tail_n]
            self._blocks.append(rows if 2 * self._tail_n >= len(self._tail) else rows.copy())
        self._tail = np.empty((0, self.dimension), dtype=np.float32)
        self._tail_n = 0

    def _make_room(self, count: int) -> None:
        """Room in the tail for ``count`` (< ``BLOCK_ROWS``) more rows. A first tail
        starts at ``FIRST_TAIL_ROWS`` and doubles up to a block, so a small scope
        costs kilobytes rather than a whole block (6 MB at 384 dimensions): each
        tenant's scope has a cache of its own (and a fork's tail, its transaction's
        rows). A full block-sized tail becomes a block."""
        needed = self._tail_n + count
        capacity = len(self._tail)
        if needed <= capacity:
            return
        if needed <= BLOCK_ROWS and capacity < BLOCK_ROWS:
            grown = np.empty(
                (min(BLOCK_ROWS, max(needed, 2 * capacity, FIRST_TAIL_ROWS)), self.dimension),
                dtype=np.float32,
            )
            grown[: self._tail_n] = self._tail[: self._tail_n]
            self._tail = grown
            return
        self._seal_tail()
        self._tail = np.empty((BLOCK_ROWS, self.dimension), dtype=np.float32)

    def append(
        self,
        seqs: np.ndarray,
        ids: Sequence[str],
        kinds: np.ndarray,
        archived: np.ndarray,
        matrix: np.ndarray,
        texts: Sequence[tuple[str, str]],
    ) -> None:
        """Add rows with seqs larger than any held, with their (content, context)
        texts; large matrices are kept, not copied."""
        count = len(ids)
        if count == 0:
            return
        if self.n and int(seqs[0]) <= self.max_seq:
            raise ValueError("rows must be appended in seq order")
        if len(texts) != count:
            raise ValueError("one (content, context) pair per row")
        if self.terms is not None:
            self.terms.append(texts)
        if count >= BLOCK_ROWS:
            self._seal_tail()
            self._blocks.append(matrix)
        else:
            self._make_room(count)
            self._tail[self._tail_n : self._tail_n + count] = matrix
            self._tail_n += count
        self._reserve(self.n + count)
        end = self.n + count
        self.seqs[self.n : end] = seqs
        self.kinds[self.n : end] = kinds
        self.archived[self.n : end] = archived
        self.alive[self.n : end] = True
        if self._where is not None:
            self._where.update(zip(ids, range(self.n, end), strict=True))
        self.ids.extend(ids)
        self.n = end

    def fork(self) -> ScopeVectors:
        """A vector-only copy to change without touching this one (a writing
        transaction's view of its own rows): the rows held are shared, the tail's as
        one more block (rows held are never written again; this cache appends past
        them), and the copy appends to a small tail of its own; the text postings are
        left out, so ``keyword_search`` on it raises. Costs the ids and flags, not the
        matrix: copying the tail (up to 6 MB) was most of an observation's search for
        the statements it revises."""
        view = ScopeVectors(self.dimension)
        view.version, view.rewrites = self.version, self.rewrites
        view.n, view.dead = self.n, self.dead
        view.ids = list(self.ids)
        view._blocks = (
            [*self._blocks, self._tail[: self._tail_n]] if self._tail_n else list(self._blocks)
        )
        view._tail = np.empty((FIRST_TAIL_ROWS, self.dimension), dtype=np.float32)
        view._tail_n = 0
        for name in ("seqs", "kinds", "archived", "alive"):
            setattr(view, name, getattr(self, name)[: self.n].copy())
        view.terms = None
        return view

    # -- changes -----------------------------------------------------------------

    def _positions(self, seqs: Sequence[int] | np.ndarray) -> np.ndarray:
        """Row positions of the given seqs that are held alive."""
        wanted = np.asarray(seqs, dtype=np.int64)
        if wanted.size == 0 or self.n == 0:
            return np.empty(0, dtype=np.int64)
        held = self.seqs[: self.n]
        pos = np.searchsorted(held, wanted)
        pos = pos[pos < self.n]
        pos = pos[np.isin(held[pos], wanted)]
        return pos[self.alive[pos]]

    def remove(self, seqs: Sequence[int] | np.ndarray) -> None:
        pos = self._positions(seqs)
        self.alive[pos] = False
        self.dead += int(pos.size)
        self._maybe_compact()

    def set_archived(self, seqs: Sequence[int] | np.ndarray, archived: bool) -> None:
        self.archived[self._positions(seqs)] = archived

    def retext(self, seq: int, old: tuple[str, str], new: tuple[str, str]) -> None:
        """The row ``seq``'s (content, context) changed from ``old`` to ``new``."""
        if self.terms is None:
            return
        for position in self._positions([seq]):
            self.terms.retext(int(position), old, new)

    def keep_only(self, seqs: np.ndarray) -> None:
        """Mark dead every held row whose seq is not in ``seqs``."""
        held = self.seqs[: self.n]
        present = np.isin(held, seqs)
        gone = self.alive[: self.n] & ~present
        self.alive[: self.n] &= present
        self.dead += int(gone.sum())
        self._maybe_compact()

    def set_archived_exactly(self, archived_seqs: np.ndarray) -> None:
        """Held rows are archived if and only if their seq is in ``archived_seqs``."""
        self.archived[: self.n] = np.isin(self.seqs[: self.n], archived_seqs)

    def _maybe_compact(self) -> None:
        if self.dead > 256 and self.dead * 4 > self.n:
            self.compact()

    def compact(self) -> None:
        """Drop dead rows, block by block."""
        self._seal_tail()
        alive = self.alive[: self.n]
        blocks: list[np.ndarray] = []
        start = 0
        for block in self._blocks:
            end = start + len(block)
            keep = alive[start:end]
            if keep.all():
                blocks.append(block)
            elif keep.any():
                blocks.append(block[keep])
            start = end
        keep_rows = np.flatnonzero(alive)
        if self.terms is not None:
            self.terms.compact(keep_rows)
        self._where = None
        self.ids = [self.ids[i] for i in keep_rows]
        for name in ("seqs", "kinds", "archived", "alive"):
            setattr(self, name, getattr(self, name)[keep_rows].copy())
        self._blocks = blocks
        self.n, self.dead = int(keep_rows.size), 0

    # -- search ------------------------------------------------------------------

    def scores(self, query: np.ndarray, start: int = 0) -> np.ndarray:
        """Dot products with ``query`` of every held row (dead ones included) from
        position ``start`` on.

        Computed in slices of ``SCORE_ROWS``: OpenBLAS runs larger products on
        several threads, and on a busy two-core machine a descheduled BLAS
        thread stalls a search for 100+ ms; slices this small stay on one
        thread and stream the matrix at memory speed (100,000 x 384 in ~6 ms).
        """
        scores = np.empty(self.n - start, dtype=np.float32)
        offset = 0
        for block in self._all_blocks():
            first = max(start - offset, 0)
            for row in range(first, len(block), SCORE_ROWS):
                rows = block[row : row + SCORE_ROWS]
                at = offset + row - start
                np.matmul(rows, query, out=scores[at : at + len(rows)])
            offset += len(block)
        return scores

    def _all_blocks(self) -> list[np.ndarray]:
        """The sealed blocks and the filled part of the tail, in row order."""
        return [*self._blocks, self._tail[: self._tail_n]]

    def _gather(self, positions: np.ndarray) -> np.ndarray:
        """The vectors at these held positions, in their order (a copy)."""
        blocks = self._all_blocks()
        starts = np.cumsum([0, *(len(b) for b in blocks)])
        which = np.searchsorted(starts, positions, side="right") - 1
        out = np.empty((len(positions), self.dimension), dtype=np.float32)
        for block_index in np.unique(which):
            here = which == block_index
            out[here] = blocks[block_index][positions[here] - starts[block_index]]
        return out

    def rows(self, memory_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Copies of the vectors of the live rows with these ids, in their order."""
        if self._where is None:
            self._where = {memory_id: i for i, memory_id in enumerate(self.ids)}
        found = [
            (memory_id, position)
            for memory_id in memory_ids
            if (position := self._where.get(memory_id)) is not None and self.alive[position]
        ]
        vectors = self._gather(np.array([p for _, p in found], dtype=np.int64))
        return {memory_id: vectors[i] for i, (memory_id, _) in enumerate(found)}

    def snapshot(self) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
        """The row matrices, seqs and liveness flags as held now, for a reader on
        another thread: rows already held are never written again (appends go past
        them, compaction builds new arrays); copy the flags before the next change."""
        return self._all_blocks(), self.seqs[: self.n], self.alive[: self.n]

    def _covered(self, graph: HnswIndex) -> int:
        """How many held rows the graph covers: those with seq up to ``graph.max_seq``."""
        return int(np.searchsorted(self.seqs[: self.n], graph.max_seq, side="right"))

    def graph_coverage(self, graph: HnswIndex) -> tuple[int, int]:
        """How many held rows the graph covers, and how many of those are alive."""
        split = self._covered(graph)
        dead = int(np.count_nonzero(~self.alive[:split])) if self.dead else 0
        return split, split - dead

    def _latest_rows(self, count: int) -> tuple[int, np.ndarray]:
        """The first position and the matrix of the last ``count`` held rows."""
        parts: list[np.ndarray] = []
        wanted = min(count, self.n)
        for block in reversed(self._all_blocks()):
            if wanted <= 0:
                break
            take = block[max(0, len(block) - wanted) :]
            parts.append(take)
            wanted -= len(take)
        parts.reverse()
        rows = np.concatenate(parts) if parts else np.empty((0, self.dimension), np.float32)
        return self.n - len(rows), rows

    def search_latest(
        self,
        queries: np.ndarray,
        k: int,
        window: int,
        kind_codes: np.ndarray | None,
        min_score: float = -np.inf,
    ) -> list[list[ScoredId]]:
        """For each query row, the top ``k`` live, unarchived rows scoring at
        least ``min_score`` among the last ``window`` held (insertion order), best
        first: one matrix product for all."""
        if k <= 0 or self.n == 0 or len(queries) == 0:
            return [[] for _ in range(len(queries))]
        start, rows = self._latest_rows(window)
        mask = self.alive[start : self.n] & ~self.archived[start : self.n]
        if kind_codes is not None:
            allowed = np.zeros(len(MemoryKind), dtype=bool)
            allowed[kind_codes] = True
            mask &= allowed[self.kinds[start : self.n]]
        scores = rows @ queries.T  # (window, queries)
        scores[~mask] = -np.inf
        k = min(k, int(np.count_nonzero(mask)))
        found: list[list[ScoredId]] = [[] for _ in range(len(queries))]
        if k == 0:
            return found
        # Only queries with a row above ``min_score`` need their top k worked out.
        wanted = np.flatnonzero(scores.max(axis=0) >= min_score)
        if wanted.size == 0:
            return found
        columns = scores[:, wanted]
        top = np.argpartition(columns, len(columns) - k, axis=0)[len(columns) - k :]
        for column_index, query_index in enumerate(wanted):
            rows_top = top[:, column_index]
            column = columns[:, column_index]
            order = rows_top[np.argsort(-column[rows_top], kind="stable")]
            found[query_index] = [
                (self.ids[start + i], float(column[i])) for i in order if column[i] >= min_score
            ]
        return found

    def _visible(self, kind_codes: np.ndarray | None, include_archived: bool) -> np.ndarray | None:
        """Live rows passing the filters, or None when every row does."""
        n = self.n
        mask: np.ndarray | None = self.alive[:n] if self.dead else None
        if not include_archived and self.archived[:n].any():
            visible = ~self.archived[:n]
            mask = visible if mask is None else mask & visible
        if kind_codes is not None:
            allowed = np.zeros(len(MemoryKind), dtype=bool)
            allowed[kind_codes] = True
            wanted = allowed[self.kinds[:n]]
            mask = wanted if mask is None else mask & wanted
        return mask

    def keyword_search(
        self,
        terms: Sequence[str],
        k: int,
        kind_codes: np.ndarray | None,
        include_archived: bool,
        params: Bm25,
    ) -> list[ScoredId]:
        """Top ``k`` (id, BM25F score) among live rows passing the filters that
        match any of ``terms``, best first; ties go to the older row."""
        if self.terms is None:
            raise RuntimeError("a vector-only view (ScopeVectors.fork) has no keyword index")
        n = self.n
        if k <= 0 or n == 0:
            return []
        live = self.alive[:n] if self.dead else None
        visible = self._visible(kind_codes, include_archived)
        positions, scores = self.terms.scores(terms, live, visible, params)
        if len(positions) > k:
            # Everything scoring at least the k-th best, so ties at the cut are
            # settled by age like the others.
            kth = scores[np.argpartition(-scores, k - 1)[k - 1]]
            keep = scores >= kth
            positions, scores = positions[keep], scores[keep]
        order = np.lexsort((positions, -scores))[:k]
        return [(self.ids[positions[i]], float(scores[i])) for i in order]

    def search(
        self,
        query: np.ndarray,
        k: int,
        kind_codes: np.ndarray | None,
        include_archived: bool,
        graph: HnswIndex | None = None,
    ) -> list[ScoredId]:
        """Top ``k`` (id, cosine) among live rows passing the filters, best first;
        ties go to the older row. With a ``graph``, the rows it covers are searched
        through it (see ``_search_graph``) and the newer rows exactly."""
        n = self.n
        if k <= 0 or n == 0:
            return []
        mask = self._visible(kind_codes, include_archived)
        if graph is not None:
            found = self._search_graph(query, k, mask, graph)
            if found is not None:
                return found
        scores = self.scores(query)
        if mask is not None:
            k = min(k, int(np.count_nonzero(mask)))
            if k == 0:
                return []
            scores[~mask] = -np.inf  # below every real cosine, so never in the top k
        top = np.arange(n) if k >= n else np.argpartition(scores, n - k)[n - k :]
        return self._ranked(top, scores[top])

    def _ranked(self, positions: np.ndarray, scores: np.ndarray) -> list[ScoredId]:
        """(id, score) of these positions, best first, ties to the older row."""
        order = np.lexsort((positions, -scores))
        ids = self.ids
        ranked = scores[order].tolist()  # Python floats, as float() gives
        return [(ids[p], s) for p, s in zip(positions[order].tolist(), ranked, strict=True)]

    def _search_graph(
        self, query: np.ndarray, k: int, mask: np.ndarray | None, graph: HnswIndex
    ) -> list[ScoredId] | None:
        """Top ``k`` through the graph, or None when exact search must answer.

        The graph is asked for enough rows that ``k`` should pass the filters
        (over-fetch by the share of covered rows they hide); its proposals are
        re-scored exactly, rows newer than the graph are scanned exactly, and the
        two are merged. When filters hide most covered rows, or fewer than ``k``
        proposals survive them, exact search answers instead.
        """
        split = self._covered(graph)
        held = self.seqs[:split]
        visible = split if mask is None else int(np.count_nonzero(mask[:split]))
        if 2 * visible < split:
            return None
        wanted = min(k, visible)
        proposed = graph.nearest(query, k * split // max(visible, 1) + k // 4 + 8)
        positions = np.searchsorted(held, proposed)
        found = positions < split
        found[found] = held[positions[found]] == proposed[found]
        positions = positions[found]
        if mask is not None:
            positions = positions[mask[positions]]
        if positions.size < wanted:
            return None
        scores = self._gather(positions) @ query
        if split < self.n:
            tail = np.arange(split, self.n)
            tail_scores = self.scores(query, split)
            if mask is not None:
                tail, tail_scores = tail[mask[split:]], tail_scores[mask[split:]]
            positions = np.concatenate([positions, tail])
            scores = np.concatenate([scores, tail_scores])
        if positions.size > k:
            top = np.argpartition(-scores, k - 1)[:k]
            positions, scores = positions[top], scores[top]
        return self._ranked(positions, scores)
