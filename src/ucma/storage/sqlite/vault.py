"""``VaultStore`` over SQLite: the ``vault`` and ``vault_keys`` tables (migration 9)."""

from __future__ import annotations

from collections.abc import Sequence

from ucma.storage.base import VaultEntry, VaultStore
from ucma.storage.sqlite.connection import Database
from ucma.types import Scope

__all__ = ["SQLiteVaultStore"]

_CHUNK = 500  # bound parameters per statement


class SQLiteVaultStore(VaultStore):
    def __init__(self, db: Database) -> None:
        self._db = db

    def tokens_for(self, scope: Scope, digests: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        with self._db.read() as conn:
            for i in range(0, len(digests), _CHUNK):
                part = list(digests[i : i + _CHUNK])
                rows = conn.execute(
                    "SELECT digest, token FROM vault WHERE user_id = ? AND agent_id = ? "
                    f"AND digest IN ({','.join('?' * len(part))})",
                    (scope.user_id, scope.agent_id, *part),
                ).fetchall()
                found.update((str(d), str(t)) for d, t in rows)
        return found

    def taken(self, scope: Scope, tokens: Sequence[str]) -> set[str]:
        return set(self.get(scope, tokens))

    def add(self, scope: Scope, entries: Sequence[VaultEntry]) -> None:
        if not entries:
            return
        with self._db.write() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO vault (user_id, agent_id, token, kind, digest, "
                "ciphertext, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
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
        found: dict[str, VaultEntry] = {}
        with self._db.read() as conn:
            for i in range(0, len(tokens), _CHUNK):
                part = list(tokens[i : i + _CHUNK])
                rows = conn.execute(
                    "SELECT token, kind, digest, ciphertext, created_at FROM vault "
                    "WHERE user_id = ? AND agent_id = ? "
                    f"AND token IN ({','.join('?' * len(part))})",
                    (scope.user_id, scope.agent_id, *part),
                ).fetchall()
                for token, kind, digest, blob, created in rows:
                    found[str(token)] = VaultEntry(
                        str(token), str(kind), str(digest), bytes(blob), float(created)
                    )
        return found

    def count(self) -> int:
        with self._db.read() as conn:
            return int(conn.execute("SELECT count(*) FROM vault").fetchone()[0])

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
