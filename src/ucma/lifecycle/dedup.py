"""De-duplication on write (seed 003 R4).

Before a batch of episodes is stored, each one's vector is compared with the
scope's most recent live episodes (``EpisodicConfig.duplicate_window`` of
them: repeats arrive close together, and a bounded window keeps the write
path's cost independent of the store's size) and with the earlier items of
the same batch, in two matrix products for the whole batch. One
more than ``duplicate_similarity`` (0.95 cosine) similar to an episode of the
same kind and scope is not stored: the existing episode is reinforced instead

- access: one more access, ``last_accessed`` now;
- stability: an Ebbinghaus review with the spacing effect (decay clock reset);
- sources: the attempt is appended to the episode's source list;

and the attempt is logged (``LifecycleStore.duplicates``) and written to the
episode's history as a ``merged`` event, in the same transaction as the rest
of the batch.

One guard beyond R4: two texts whose values differ are never duplicates,
however similar their embeddings: numbers ("standup 3" and "standup 4", "at 3
pm" and "at 4 pm"; sentence embeddings barely see digits) and names written
with a capital inside a sentence ("Tomás does climbing on Thursdays these
days" and "... on Fridays ...", 0.95 cosine: a change, not a repeat).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ucma.memory.retention import reviewed
from ucma.storage.base import Storage
from ucma.types import (
    DuplicateAttempt,
    HistoryEntry,
    MemoryKind,
    MemorySource,
    Scope,
)

__all__ = ["Duplicate", "find_duplicates", "merge_duplicates", "values_of"]

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# A capitalised word after another word of its sentence: a name, a day, a place.
_NAME = re.compile(r"(?<=[\w,;:'’)] )(?!I\b)[^\W\d_][^\W_]*", re.UNICODE)


def values_of(text: str) -> Counter[str]:
    """The values a text mentions, as a multiset: its numbers and the words it
    capitalises inside a sentence (folded to lower case)."""
    names = [w.lower() for w in _NAME.findall(text) if w[0].isupper()]
    return Counter(_NUMBER.findall(text)) + Counter(names)


@dataclass(frozen=True, slots=True)
class Duplicate:
    """Item ``index`` of a batch is a near-copy of ``existing_id``."""

    index: int
    attempted_id: str
    existing_id: str
    similarity: float
    content: str
    source: str


def find_duplicates(
    storage: Storage,
    scope: Scope,
    ids: Sequence[str],
    contents: Sequence[str],
    sources: Sequence[str],
    vectors: np.ndarray,
    threshold: float,
    kind: MemoryKind = MemoryKind.EPISODIC,
    window: int = 5_000,
) -> list[Duplicate]:
    """Batch items more than ``threshold`` similar to one of the scope's latest
    ``window`` live memories of ``kind`` or to an earlier kept item of the batch
    (storage thread; call it before the write transaction opens, so searches
    use the vector cache)."""
    if threshold > 1.0 or len(ids) == 0:
        return []
    matrix = np.asarray(vectors, dtype=np.float32)
    stored = storage.memories.vector_search_latest(
        scope, matrix, 3, window=window, kinds=[kind], min_score=threshold
    )
    close_ids = {h for hits in stored for h, score in hits if score > threshold}
    records = storage.memories.get_many(scope, list(close_ids)) if close_ids else {}
    within = matrix @ matrix.T
    # Best similarity to any earlier item of the batch: most items have none close.
    earlier = np.tril(within, -1).max(axis=1) if len(ids) > 1 else np.zeros(1)
    found: list[Duplicate] = []
    kept: list[int] = []
    for i, memory_id in enumerate(ids):
        best_id, best = None, threshold
        values = values_of(contents[i])
        for hit_id, score in stored[i]:
            record = records.get(hit_id)
            if score > best and record is not None and values_of(record.content) == values:
                best_id, best = hit_id, float(score)
                break
        if kept and earlier[i] > best:
            similarities = within[i, kept]
            for j in np.argsort(-similarities):
                if float(similarities[j]) <= best:
                    break
                if values_of(contents[kept[j]]) == values:
                    best_id, best = ids[kept[j]], float(similarities[j])
                    break
        if best_id is None:
            kept.append(i)
        else:
            found.append(Duplicate(i, memory_id, best_id, float(best), contents[i], sources[i]))
    return found


def merge_duplicates(
    storage: Storage, scope: Scope, duplicates: Sequence[Duplicate], now: float, boost_base: float
) -> None:
    """Reinforce each duplicate's existing memory (storage thread; joins the
    caller's transaction, which must already hold the batch's new memories)."""
    if not duplicates:
        return
    with storage.transaction():
        for dup in duplicates:
            storage.memories.touch(scope, [dup.existing_id], now)
            state = storage.retention.get_many(scope, [dup.existing_id]).get(dup.existing_id)
            if state is not None:
                storage.retention.put_many(scope, [reviewed(state, now, boost_base)])
            storage.lifecycle.add_sources(
                scope, dup.existing_id, [MemorySource(dup.attempted_id, dup.source, now)]
            )
            storage.lifecycle.log_duplicate(
                scope,
                DuplicateAttempt(dup.existing_id, dup.content, dup.similarity, dup.source, now),
            )
            storage.lifecycle.add_history(
                scope,
                [
                    HistoryEntry(
                        dup.existing_id,
                        "merged",
                        now,
                        {
                            "attempted_id": dup.attempted_id,
                            "content": dup.content,
                            "similarity": round(dup.similarity, 6),
                            "source": dup.source,
                        },
                    )
                ],
            )
