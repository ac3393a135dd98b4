"""``LeaseStore`` over SQL: the ``leases`` table (SQLite migration 17, PostgreSQL 3).

A claim inserts the lease's row when it is new, then reads and updates it inside
one write transaction. On PostgreSQL the read locks the row ``FOR UPDATE SKIP
LOCKED``: a process that finds it locked by another one's claim moves on at once
instead of waiting. On SQLite the write transaction (``BEGIN IMMEDIATE``) holds the
file, so two processes claim one after the other. Either way two claims never both
succeed.
"""

from __future__ import annotations

import builtins
import math

from ucma.storage.base import LeaseRecord, LeaseStore, check_lease, lease_expiry
from ucma.storage.sql.connection import Database

__all__ = ["SqlLeaseStore"]

_COLUMNS = "name, owner, expires_at, claimed_at, finished_at, claims"


class SqlLeaseStore(LeaseStore):
    def __init__(self, db: Database) -> None:
        self._db = db
        self._skip_locked = db.dialect.skip_locked

    def claim(
        self,
        name: str,
        owner: str,
        now: float,
        *,
        lease_seconds: float,
        finished_before: float = math.inf,
    ) -> bool:
        expires = lease_expiry(name, owner, now, lease_seconds, finished_before)
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO leases (name, expires_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
                (name, -math.inf),
            )
            row = conn.execute(
                f"SELECT owner, expires_at, finished_at FROM leases WHERE name = ?"
                f"{self._skip_locked}",
                (name,),
            ).fetchone()
            if row is None:  # another process is claiming or releasing it right now
                return False
            holder, held_until, finished = row
            if holder not in (None, owner) and held_until > now:
                return False
            if finished is not None and finished > finished_before:
                return False
            conn.execute(
                "UPDATE leases SET owner = ?, expires_at = ?, claimed_at = ?,"
                " claims = claims + 1 WHERE name = ?",
                (owner, expires, float(now), name),
            )
        return True

    def renew(self, name: str, owner: str, now: float, *, lease_seconds: float) -> bool:
        expires = lease_expiry(name, owner, now, lease_seconds)
        with self._db.write() as conn:
            cursor = conn.execute(
                "UPDATE leases SET expires_at = ? WHERE name = ? AND owner = ?",
                (expires, name, owner),
            )
            return bool(cursor.rowcount == 1)

    def release(self, name: str, owner: str, now: float, *, finished: bool) -> None:
        at = check_lease(name, owner, now)
        with self._db.write() as conn:
            conn.execute(
                "UPDATE leases SET owner = NULL, expires_at = ?,"
                " finished_at = CASE WHEN ? THEN ? ELSE finished_at END"
                " WHERE name = ? AND owner = ?",
                (at, bool(finished), at, name, owner),
            )

    def list(self, prefix: str = "") -> builtins.list[LeaseRecord]:
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM leases WHERE substr(name, 1, ?) = ? ORDER BY name",
                (len(prefix), prefix),
            ).fetchall()
        return [
            LeaseRecord(
                name=str(name),
                owner=owner,
                expires_at=float(expires_at),
                claimed_at=claimed_at,
                finished_at=finished_at,
                claims=int(claims),
            )
            for name, owner, expires_at, claimed_at, finished_at, claims in rows
        ]
