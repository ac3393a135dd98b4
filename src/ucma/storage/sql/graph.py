"""``GraphStore`` over SQL: one node per memory, typed weighted directed edges.

Nodes are written by the typed stores' ``add`` (one ``graph_nodes`` row per
memory, PageRank 0.0 until computed). Edges reference ``memories(id)`` with
``ON DELETE CASCADE`` at both ends, so deleting a memory removes its edges.
A scope's edges are those whose source belongs to it; ``add_edges`` only
accepts edges whose two ends are memories of that scope.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ucma.storage.base import GraphStore
from ucma.storage.sql.codec import real
from ucma.storage.sql.connection import Database, one
from ucma.types import GraphEdge, Scope

__all__ = ["SqlGraphStore"]

_UPSERT_EDGE = """
INSERT INTO graph_edges (source_id, target_id, edge_type, weight, created_at)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT (source_id, target_id, edge_type)
DO UPDATE SET weight = excluded.weight, created_at = excluded.created_at
"""
_EDGE_COLUMNS = "e.source_id, e.target_id, e.edge_type, e.weight, e.created_at"


class SqlGraphStore(GraphStore):
    def __init__(self, db: Database) -> None:
        self._db = db
        self._sql = db.dialect
        self._edge_order = f" ORDER BY e.{db.dialect.row_order('graph_edges')}"

    def add_edges(self, scope: Scope, edges: Sequence[GraphEdge]) -> int:
        edges = list(edges)
        if not edges:
            return 0
        ends = {edge.source_id for edge in edges} | {edge.target_id for edge in edges}
        with self._db.write() as conn:
            known = {
                row[0]
                for row in conn.execute(
                    f"SELECT id FROM memories WHERE {self._sql.ids_in_scope()}",
                    (self._sql.bind_list(ends), scope.user_id, scope.agent_id),
                )
            }
            rows = [
                (
                    e.source_id,
                    e.target_id,
                    e.edge_type,
                    real(e.weight, "weight"),
                    real(e.created_at, "created_at"),
                )
                for e in edges
                if e.source_id in known and e.target_id in known
            ]
            conn.executemany(_UPSERT_EDGE, rows)
        return len(rows)

    def edges_from(self, scope: Scope, node_id: str) -> list[GraphEdge]:
        return self._edges(
            f"SELECT {_EDGE_COLUMNS} FROM graph_edges e JOIN memories m ON m.id = e.source_id"
            " WHERE e.source_id = ? AND m.user_id = ? AND m.agent_id = ?" + self._edge_order,
            (node_id, scope.user_id, scope.agent_id),
        )

    def edges_to(self, scope: Scope, node_id: str) -> list[GraphEdge]:
        return self._edges(
            f"SELECT {_EDGE_COLUMNS} FROM graph_edges e JOIN memories m ON m.id = e.target_id"
            " WHERE e.target_id = ? AND m.user_id = ? AND m.agent_id = ?" + self._edge_order,
            (node_id, scope.user_id, scope.agent_id),
        )

    def all_edges(self, scope: Scope) -> list[GraphEdge]:
        return self._edges(
            f"SELECT {_EDGE_COLUMNS} FROM memories m JOIN graph_edges e ON e.source_id = m.id"
            " WHERE m.user_id = ? AND m.agent_id = ?" + self._edge_order,
            (scope.user_id, scope.agent_id),
        )

    def _edges(self, sql: str, params: Sequence[object]) -> list[GraphEdge]:
        with self._db.read() as conn:
            return [GraphEdge(*row) for row in conn.execute(sql, params)]

    def node_ids(self, scope: Scope, *, include_archived: bool = False) -> list[str]:
        archived = "" if include_archived else " AND m.archived_at IS NULL"
        with self._db.read() as conn:
            return [
                row[0]
                for row in conn.execute(
                    "SELECT n.memory_id FROM memories m JOIN graph_nodes n ON n.memory_id = m.id"
                    f" WHERE m.user_id = ? AND m.agent_id = ?{archived} ORDER BY m.seq",
                    (scope.user_id, scope.agent_id),
                )
            ]

    def set_pagerank(self, scope: Scope, scores: Mapping[str, float]) -> None:
        """Store scores of nodes of ``scope``; other ids are ignored, and nodes
        missing from ``scores`` keep their previous value."""
        if not scores:
            return
        with self._db.write() as conn:
            conn.executemany(
                """
                UPDATE graph_nodes SET pagerank = ?
                WHERE memory_id = (
                    SELECT id FROM memories WHERE id = ? AND user_id = ? AND agent_id = ?
                )
                """,
                [
                    (real(score, "pagerank"), node_id, scope.user_id, scope.agent_id)
                    for node_id, score in scores.items()
                ],
            )

    def pagerank(self, scope: Scope, node_ids: Sequence[str]) -> dict[str, float]:
        """Scores of the nodes of ``scope`` among ``node_ids``; unknown ids are absent."""
        if not node_ids:
            return {}
        with self._db.read() as conn:
            found: dict[str, float] = dict(
                conn.execute(
                    "SELECT n.memory_id, n.pagerank"
                    " FROM memories m JOIN graph_nodes n ON n.memory_id = m.id"
                    f" WHERE {self._sql.ids_in_scope(table='m')}",
                    (self._sql.bind_list(dict.fromkeys(node_ids)), scope.user_id, scope.agent_id),
                ).fetchall()
            )
        return {node_id: found[node_id] for node_id in node_ids if node_id in found}

    def stats(self, scope: Scope) -> dict[str, int]:
        """Live (not archived) nodes, and edges whose two ends are live."""
        params = (scope.user_id, scope.agent_id)
        with self._db.read() as conn:
            (nodes,) = one(
                conn.execute(
                    """
                SELECT count(*) FROM memories m JOIN graph_nodes n ON n.memory_id = m.id
                WHERE m.user_id = ? AND m.agent_id = ? AND m.archived_at IS NULL
                """,
                    params,
                )
            )
            (edges,) = one(
                conn.execute(
                    """
                SELECT count(*)
                FROM memories s
                    JOIN graph_edges e ON e.source_id = s.id
                    JOIN memories t ON t.id = e.target_id
                WHERE s.user_id = ? AND s.agent_id = ?
                    AND s.archived_at IS NULL AND t.archived_at IS NULL
                """,
                    params,
                )
            )
        return {"node_count": nodes, "edge_count": edges}
