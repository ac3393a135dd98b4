"""``LeaseStore`` over SQLite: the ``leases`` table (migration 17).

A claim is a read and an update inside one ``BEGIN IMMEDIATE`` transaction, so
two processes on the same file claim one after the other, never both at once.
"""

from __future__ import annotations

import builtins
import math

from ucma.storage.base import LeaseRecord, LeaseStore, check_lease, lease_expiry
from ucma.storage.sqlite.connection import Database

__all__ = ["SQLiteLeaseStore"]

_COLUMNS = "name, owner, expires_at, claimed_at, finished_at, claims"


class SQLiteLeaseStore(LeaseStore):
    def __init__(self, db: Database) -> None:
        self._db = db

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
            row = conn.execute(
                "SELECT owner, expires_at, finished_at FROM leases WHERE name = ?", (name,)
            ).fetchone()
            if row is not None:
                holder, held_until, finished = row
                if holder not in (None, owner) and held_until > now:
                    return False
                if finished is not None and finished > finished_before:
                    return False
            conn.execute(
                "INSERT INTO leases (name, owner, expires_at, claimed_at, claims)"
                " VALUES (?, ?, ?, ?, 1) ON CONFLICT (name) DO UPDATE SET"
                " owner = excluded.owner, expires_at = excluded.expires_at,"
                " claimed_at = excluded.claimed_at, claims = leases.claims + 1",
                (name, owner, expires, now),
            )
        return True

    def renew(self, name: str, owner: str, now: float, *, lease_seconds: float) -> bool:
        expires = lease_expiry(name, owner, now, lease_seconds)
        with self._db.write() as conn:
            cursor = conn.execute(
                "UPDATE leases SET expires_at = ? WHERE name = ? AND owner = ?",
                (expires, name, owner),
            )
            return cursor.rowcount == 1

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
