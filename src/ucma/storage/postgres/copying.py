"""What ``ucma.storage.migrate`` needs of a PostgreSQL store beyond the storage
interfaces and what both backends share (``ucma.storage.sql.copying``): events written
as they are, with the lifecycle triggers held off while records are copied in.

Copied records would otherwise log themselves again (``memory.stored`` and
``memory.archived``): the triggers are disabled inside the caller's transaction
(``ALTER TABLE``, which the tables' owner may run; it locks ``memories`` until the
transaction ends) and enabled again before it commits, so a rollback restores them
with everything else. Events keep their positions (``OVERRIDING SYSTEM VALUE``), the
position sequence and each scope's stream are moved past them, so later appends
continue both orders.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ucma.events.log import Event
from ucma.storage.migrate import EVENT_COLUMNS, LIFECYCLE_TRIGGERS, event_row
from ucma.storage.postgres.storage import PostgresStorage
from ucma.storage.sql.copying import SqlCopying

__all__ = ["PostgresCopying", "copying"]


class PostgresCopying(SqlCopying):
    """``ucma.storage.migrate.Copying`` over one PostgreSQL store."""

    def __init__(self, storage: PostgresStorage) -> None:
        super().__init__(storage._db)

    @contextmanager
    def unlogged(self) -> Iterator[None]:
        with self._db.write() as conn:
            for name in LIFECYCLE_TRIGGERS:
                conn.execute(f"ALTER TABLE memories DISABLE TRIGGER {name}")
            yield
            for name in LIFECYCLE_TRIGGERS:
                conn.execute(f"ALTER TABLE memories ENABLE TRIGGER {name}")

    def put_events(self, events: Sequence[Event]) -> None:
        if not events:
            return
        with self._db.write() as conn:
            conn.executemany(
                f"INSERT INTO events ({EVENT_COLUMNS}) OVERRIDING SYSTEM VALUE "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [event_row(e) for e in events],
            )
            last: dict[tuple[str, str], int] = {}
            for e in events:
                key = (e.user_id, e.agent_id)
                last[key] = max(last.get(key, 0), e.seq)
            conn.executemany(
                "INSERT INTO event_streams AS s (user_id, agent_id, last_seq) "
                "VALUES (?, ?, ?) ON CONFLICT (user_id, agent_id) "
                "DO UPDATE SET last_seq = GREATEST(s.last_seq, EXCLUDED.last_seq)",
                [(user, agent, seq) for (user, agent), seq in last.items()],
            )
            conn.execute(
                "SELECT setval(pg_get_serial_sequence('events', 'position'), "
                "GREATEST((SELECT max(position) FROM events), 1))"
            )


def copying(storage: object) -> PostgresCopying:
    """The hook ``ucma.storage.migrate`` looks up by the store's URL scheme."""
    if not isinstance(storage, PostgresStorage):
        raise TypeError(f"not a PostgreSQL store: {type(storage).__name__}")
    return PostgresCopying(storage)
