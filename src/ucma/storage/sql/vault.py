"""``VaultStore`` over SQL: the ``vault`` and ``vault_keys`` tables (migration 9)."""

from __future__ import annotations

from collections.abc import Sequence

from ucma.storage.base import VaultEntry, VaultStore
from ucma.storage.sql.connection import Database, one
from ucma.types import Scope

__all__ = ["SqlVaultStore"]


class SqlVaultStore(VaultStore):
    def __init__(self, db: Database) -> None:
        self._db = db
        self._sql = db.dialect

    def tokens_for(self, scope: Scope, digests: Sequence[str]) -> dict[str, str]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT digest, token FROM vault WHERE user_id = ? AND agent_id = ? "
                f"AND {self._sql.ids('digest')}",
                (scope.user_id, scope.agent_id, self._sql.bind_list(digests)),
            ).fetchall()
        return {str(d): str(t) for d, t in rows}

    def add(self, scope: Scope, entries: Sequence[VaultEntry]) -> None:
        if not entries:
            return
        with self._db.write() as conn:
            conn.executemany(
                "INSERT INTO vault (user_id, agent_id, token, kind, digest, ciphertext,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [
                    (
                        scope.user_id,
                        scope.agent_id,
                        e.token,
                        e.kind,
                        e.digest,
                        e.ciphertext,
                        e.created_at,
                    )
                    for e in entries
                ],
            )

    def get(self, scope: Scope, tokens: Sequence[str]) -> dict[str, VaultEntry]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT token, kind, digest, ciphertext, created_at FROM vault "
                f"WHERE user_id = ? AND agent_id = ? AND {self._sql.ids('token')}",
                (scope.user_id, scope.agent_id, self._sql.bind_list(tokens)),
            ).fetchall()
        return {
            str(token): VaultEntry(str(token), str(kind), str(digest), bytes(blob), float(created))
            for token, kind, digest, blob, created in rows
        }

    def count(self) -> int:
        with self._db.read() as conn:
            return int(one(conn.execute("SELECT count(*) FROM vault"))[0])

    def entries(self, scope: Scope) -> list[VaultEntry]:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT token, kind, digest, ciphertext, created_at FROM vault "
                "WHERE user_id = ? AND agent_id = ? ORDER BY created_at, token",
                (scope.user_id, scope.agent_id),
            ).fetchall()
        return [
            VaultEntry(str(token), str(kind), str(digest), bytes(blob), float(created))
            for token, kind, digest, blob, created in rows
        ]

    def key_fingerprint(self) -> str | None:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT fingerprint FROM vault_keys ORDER BY created_at LIMIT 1"
            ).fetchone()
        return None if row is None else str(row[0])

    def set_key_fingerprint(self, fingerprint: str, now: float) -> None:
        with self._db.write() as conn:
            if conn.execute("SELECT 1 FROM vault_keys LIMIT 1").fetchone() is None:
                conn.execute(
                    "INSERT INTO vault_keys (fingerprint, created_at) VALUES (?, ?)",
                    (fingerprint, now),
                )
