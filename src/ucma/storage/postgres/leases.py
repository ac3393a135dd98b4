"""``LeaseStore`` over PostgreSQL: the ``leases`` table (migration 2).

A claim locks the lease's row with ``SELECT ... FOR UPDATE SKIP LOCKED`` inside one
transaction: a process that finds the row locked by another one's claim moves on
at once instead of waiting for it, and two claims never both succeed.
"""

from __future__ import annotations

import builtins
import math

from ucma.storage.base import LeaseRecord, LeaseStore, check_lease, lease_expiry
from ucma.storage.postgres.connection import Database

__all__ = ["PostgresLeaseStore"]

_COLUMNS = "name, owner, expires_at, claimed_at, finished_at, claims"


class PostgresLeaseStore(LeaseStore):
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
            conn.execute(
                "INSERT INTO leases (name, expires_at) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (name, -math.inf),
            )
            row = conn.execute(
                "SELECT owner, expires_at, finished_at FROM leases WHERE name = %s"
                " FOR UPDATE SKIP LOCKED",
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
                "UPDATE leases SET owner = %s, expires_at = %s, claimed_at = %s,"
                " claims = claims + 1 WHERE name = %s",
                (owner, expires, float(now), name),
            )
        return True

    def renew(self, name: str, owner: str, now: float, *, lease_seconds: float) -> bool:
        expires = lease_expiry(name, owner, now, lease_seconds)
        with self._db.write() as conn:
            cursor = conn.execute(
                "UPDATE leases SET expires_at = %s WHERE name = %s AND owner = %s",
                (expires, name, owner),
            )
            return cursor.rowcount == 1

    def release(self, name: str, owner: str, now: float, *, finished: bool) -> None:
        at = check_lease(name, owner, now)
        with self._db.write() as conn:
            conn.execute(
                "UPDATE leases SET owner = NULL, expires_at = %s,"
                " finished_at = CASE WHEN %s THEN %s ELSE finished_at END"
                " WHERE name = %s AND owner = %s",
                (at, bool(finished), at, name, owner),
            )

    def list(self, prefix: str = "") -> builtins.list[LeaseRecord]:
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM leases WHERE left(name, %s) = %s ORDER BY name",
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
