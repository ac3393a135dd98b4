"""``SemanticStore`` over SQL: triples with an entity index on both ends.

``subject_key`` and ``object_key`` hold the entity names stripped and
lower-cased (the normalisation of ``fact_id_for``); the indexes
``facts_subject`` and ``facts_object`` are the entity index, so ``about`` is
two index lookups and each ``traverse`` hop one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ucma.storage.base import SemanticStore
from ucma.storage.sql.codec import fact_fields, key_of
from ucma.storage.sql.connection import Database, one
from ucma.storage.sql.memories import MemoryRows, check_kind, check_vector
from ucma.storage.sql.records import load_records
from ucma.types import Fact, MemoryKind, Scope

__all__ = ["SqlSemanticStore"]

_INSERT = """
INSERT INTO facts (
    seq, user_id, agent_id, subject, predicate, object, subject_key, predicate_key,
    object_key, confidence, source_episode_ids, reinforcement_count, last_verified,
    valid_from, valid_until, status, recorded_at, superseded_at, superseded_by
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
_UPDATE = """
UPDATE facts SET subject = ?, predicate = ?, object = ?, subject_key = ?, predicate_key = ?,
    object_key = ?, confidence = ?, source_episode_ids = ?, reinforcement_count = ?,
    last_verified = ?, valid_from = ?, valid_until = ?, status = ?, recorded_at = ?,
    superseded_at = ?, superseded_by = ?
WHERE seq = ?
"""
_LIVE = " AND m.archived_at IS NULL"
_CURRENT = " AND t.superseded_at IS NULL"
# Record time: believed at ? (a fact recorded before migration 3 counts from its creation).
_BELIEVED_AT = (
    " AND coalesce(t.recorded_at, m.created_at) <= ?"
    " AND (t.superseded_at IS NULL OR t.superseded_at > ?)"
)


class SqlSemanticStore(SemanticStore):
    def __init__(self, db: Database, rows: MemoryRows) -> None:
        self._db = db
        self._rows = rows
        self._sql = db.dialect

    def add(self, fact: Fact, vector: np.ndarray) -> None:
        check_kind([fact], Fact)
        matrix = check_vector(vector, self._rows.dimension)
        fields = fact_fields(fact)
        with self._db.write() as conn:
            (seq,) = self._rows.insert(conn, [fact], matrix)
            conn.execute(_INSERT, (seq, fact.user_id, fact.agent_id, *fields))

    def get(self, scope: Scope, fact_id: str) -> Fact | None:
        found = self._select(
            " WHERE m.id = ? AND m.user_id = ? AND m.agent_id = ?",
            (fact_id, scope.user_id, scope.agent_id),
        )
        return found[0] if found else None

    def update(self, fact: Fact) -> None:
        """Persist every field but identity (id, scope, created_at), access
        statistics and ``archived_at``, which have their own operations."""
        check_kind([fact], Fact)
        fields = fact_fields(fact)
        with self._db.write() as conn:
            seq = self._rows.update(conn, fact)
            conn.execute(_UPDATE, (*fields, seq))

    def about(
        self,
        scope: Scope,
        entity: str,
        *,
        include_archived: bool = False,
        as_of: float | None = None,
        include_superseded: bool = False,
    ) -> list[Fact]:
        key = key_of(entity)
        params: list[object] = [scope.user_id, scope.agent_id, key] * 2
        if as_of is not None:
            when = _BELIEVED_AT
            params += [as_of, as_of]
        else:
            when = "" if include_superseded else _CURRENT
        # Two entity-index lookups; a plain OR would let the planner scan the scope.
        return self._select(
            """
            WHERE t.seq IN (
                SELECT seq FROM facts WHERE user_id = ? AND agent_id = ? AND subject_key = ?
                UNION ALL
                SELECT seq FROM facts WHERE user_id = ? AND agent_id = ? AND object_key = ?
            )"""
            + ("" if include_archived else _LIVE)
            + when
            + " ORDER BY t.confidence DESC, coalesce(m.updated_at, m.created_at) DESC, m.seq DESC",
            params,
        )

    def current(self, scope: Scope, subject: str, predicate: str) -> list[Fact]:
        """Current (not superseded, not archived) values of one (subject, predicate),
        oldest record first."""
        return self._select(
            " WHERE t.user_id = ? AND t.agent_id = ? AND t.subject_key = ? AND t.predicate_key = ?"
            + _LIVE
            + _CURRENT
            + " ORDER BY coalesce(t.recorded_at, m.created_at), m.seq",
            (scope.user_id, scope.agent_id, key_of(subject), key_of(predicate)),
        )

    def history(self, scope: Scope, subject: str, predicate: str) -> list[Fact]:
        """Every version of one (subject, predicate), archived included, in record order."""
        return self._select(
            " WHERE t.user_id = ? AND t.agent_id = ? AND t.subject_key = ? AND t.predicate_key = ?"
            " ORDER BY coalesce(t.recorded_at, m.created_at), m.seq",
            (scope.user_id, scope.agent_id, key_of(subject), key_of(predicate)),
        )

    def traverse(self, scope: Scope, entity: str, max_hops: int = 3) -> list[Fact]:
        """Breadth first along subject -> object; within a hop, facts follow the
        order their subjects were discovered in, then insertion order."""
        start = key_of(entity)
        if max_hops < 1 or not start:
            return []
        visited = {start}
        frontier = [start]
        seen: set[str] = set()
        found: list[Fact] = []
        for _ in range(max_hops):
            position = {key: i for i, key in enumerate(frontier)}
            facts = self._select(
                " WHERE t.user_id = ? AND t.agent_id = ?"
                f" AND {self._sql.among('t.subject_key', 'text')}"
                + _LIVE
                + _CURRENT
                + " ORDER BY m.seq",
                (scope.user_id, scope.agent_id, self._sql.bind_list(frontier)),
            )
            facts.sort(key=lambda fact: position[key_of(fact.subject)])
            frontier = []
            for fact in facts:
                if fact.id in seen:
                    continue
                seen.add(fact.id)
                found.append(fact)
                target = key_of(fact.object)
                if target and target not in visited:
                    visited.add(target)
                    frontier.append(target)
            if not frontier:
                break
        return found

    def stats(self, scope: Scope) -> dict[str, int]:
        """Counts over live (not archived) facts, superseded versions included; an
        entity is a distinct key at either end."""
        params = (scope.user_id, scope.agent_id)
        live = (
            "FROM facts t JOIN memories m ON m.seq = t.seq "
            "WHERE t.user_id = ? AND t.agent_id = ? AND m.archived_at IS NULL"
        )
        with self._db.read() as conn:
            (facts,) = one(conn.execute(f"SELECT count(*) {live}", params))
            (entities,) = one(
                conn.execute(
                    f"SELECT count(*) FROM (SELECT t.subject_key {live} "
                    f"UNION SELECT t.object_key {live})",
                    params * 2,
                )
            )
        return {"fact_count": int(facts), "entity_count": int(entities)}

    def _select(self, where: str, params: Sequence[object]) -> list[Fact]:
        with self._db.read() as conn:
            return cast(list[Fact], load_records(conn, MemoryKind.SEMANTIC, where, params))
