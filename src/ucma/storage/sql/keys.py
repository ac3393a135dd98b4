"""``KeyStore`` over SQL: the ``api_keys`` table (migration 4)."""

from __future__ import annotations

from ucma.errors import StorageError
from ucma.storage.base import KeyStore
from ucma.storage.sql.connection import Database, one
from ucma.types import ApiKey

__all__ = ["KEY_COLUMNS", "SqlKeyStore", "key_from_row"]

KEY_COLUMNS = "id, user_id, agent_id, label, created_at, revoked_at"


def key_from_row(row: tuple[object, ...]) -> ApiKey:
    key_id, user_id, agent_id, label, created_at, revoked_at = row
    return ApiKey(
        id=str(key_id),
        user_id=str(user_id),
        agent_id=None if agent_id is None else str(agent_id),
        label=None if label is None else str(label),
        created_at=float(created_at),  # type: ignore[arg-type]
        revoked_at=None if revoked_at is None else float(revoked_at),  # type: ignore[arg-type]
    )


class SqlKeyStore(KeyStore):
    def __init__(self, db: Database) -> None:
        self._db = db

    def add(self, key: ApiKey, token_hash: str) -> None:
        try:
            with self._db.write() as conn:
                conn.execute(
                    f"INSERT INTO api_keys ({KEY_COLUMNS}, token_hash)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        key.id,
                        key.user_id,
                        key.agent_id,
                        key.label,
                        key.created_at,
                        key.revoked_at,
                        token_hash,
                    ),
                )
        except StorageError as exc:
            if isinstance(exc.__cause__, self._db.dialect.unique_violation):
                raise StorageError(f"an API key with id {key.id!r} already exists") from exc
            raise

    def lookup(self, key_id: str) -> tuple[ApiKey, str] | None:
        with self._db.read() as conn:
            row = conn.execute(
                f"SELECT {KEY_COLUMNS}, token_hash FROM api_keys WHERE id = ?", (key_id,)
            ).fetchone()
        return None if row is None else (key_from_row(row[:-1]), str(row[-1]))

    def list(self, *, include_revoked: bool = False) -> list[ApiKey]:
        where = "" if include_revoked else " WHERE revoked_at IS NULL"
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {KEY_COLUMNS} FROM api_keys{where} ORDER BY created_at, id"
            ).fetchall()
        return [key_from_row(row) for row in rows]

    def revoke(self, key_id: str, now: float) -> ApiKey | None:
        with self._db.write() as conn:
            conn.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (now, key_id),
            )
            row = conn.execute(
                f"SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ?", (key_id,)
            ).fetchone()
        return None if row is None else key_from_row(row)

    def count(self, *, include_revoked: bool = False) -> int:
        where = "" if include_revoked else " WHERE revoked_at IS NULL"
        with self._db.read() as conn:
            return int(one(conn.execute(f"SELECT count(*) FROM api_keys{where}"))[0])
