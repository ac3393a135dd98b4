"""Fixtures of the storage conformance suite.

The suite is written once against the ABCs of ``ucma.storage.base`` and runs
on every backend: each is a ``Backend`` subclass and an entry in ``BACKENDS``.
Tests reach a backend only through ``Storage``, except ``Backend.raw`` for
looking at the schema itself (migrations table, orphan rows), in SQL both
backends understand.

PostgreSQL joins when ``UCMA_TEST_POSTGRES_URL`` names a server's database
(``make test-postgres`` starts one with scripts/postgres.py and sets it): each
test then gets a database of its own, created from that URL and dropped after.
"""

from __future__ import annotations

import math
import os
import sqlite3
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ucma.storage.base import Storage
from ucma.storage.sqlite import SQLiteStorage
from ucma.storage.sqlite.schema import migrations
from ucma.types import (
    Episode,
    Fact,
    Learning,
    LearningType,
    Procedure,
    ProcedureStatus,
    ProcedureStep,
    Provenance,
    Scope,
    Tier,
    fact_id_for,
)

DIMENSION = 8
T0 = 1_699_999_200.0  # an exact hour boundary (bucket start), 2023-11-14 22:00 UTC


class Backend(ABC):
    """One database that tests can open (and reopen) as ``Storage`` objects."""

    vector_tables: tuple[str, ...] = ()
    """Tables holding vectors apart from ``memories`` (rows a delete must take along)."""

    def __init__(self) -> None:
        self._opened: list[Storage] = []

    def open(self, *, dimension: int = DIMENSION) -> Storage:
        """A new ``Storage`` on the same database; closed at teardown."""
        storage = self._open(dimension)
        self._opened.append(storage)
        return storage

    @abstractmethod
    def _open(self, dimension: int) -> Storage: ...

    @abstractmethod
    def raw(self, sql: str) -> list[tuple[Any, ...]]:
        """Run one SQL statement outside UCMA (schema inspection only)."""

    @abstractmethod
    def migration_versions(self) -> list[int]:
        """The schema migrations the backend's code holds, in order."""

    def close_all(self) -> None:
        for storage in self._opened:
            storage.close()


class SQLiteBackend(Backend):
    vector_tables = ("vectors",)

    def __init__(self, tmp_path: Path) -> None:
        super().__init__()
        self.path = tmp_path / "ucma.db"

    def _open(self, dimension: int) -> Storage:
        return SQLiteStorage(self.path, dimension=dimension)

    def raw(self, sql: str) -> list[tuple[Any, ...]]:
        with closing(sqlite3.connect(self.path)) as conn, conn:
            return conn.execute(sql).fetchall()

    def migration_versions(self) -> list[int]:
        return [m.version for m in migrations]


class PostgresBackend(Backend):
    """A new database on the server of ``UCMA_TEST_POSTGRES_URL`` for each test."""

    def __init__(self, tmp_path: Path) -> None:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        super().__init__()
        self._psycopg = psycopg
        self._admin = os.environ[POSTGRES_URL]
        self.name = f"ucma_test_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self._admin, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {self.name}")
        info = conninfo_to_dict(self._admin)
        info["dbname"] = self.name
        dsn = make_conninfo(**info)
        user = info.get("user", "")
        self.url = f"postgresql://{user}@{info.get('host')}:{info.get('port')}/{self.name}"
        self._dsn = dsn

    def _open(self, dimension: int) -> Storage:
        from ucma.storage.postgres import PostgresStorage

        return PostgresStorage(self.url, dimension=dimension, pool_size=2)

    def raw(self, sql: str) -> list[tuple[Any, ...]]:
        with self._psycopg.connect(self._dsn, autocommit=True) as conn:
            cursor = conn.execute(sql)
            return cursor.fetchall() if cursor.description is not None else []

    def migration_versions(self) -> list[int]:
        from ucma.storage.postgres.schema import MIGRATIONS

        return [m.version for m in MIGRATIONS]

    def close_all(self) -> None:
        super().close_all()
        with self._psycopg.connect(self._admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {self.name} WITH (FORCE)")


POSTGRES_URL = "UCMA_TEST_POSTGRES_URL"
"""The environment variable naming a PostgreSQL database the suite may create databases
next to (``make test-postgres`` sets it); without it the suite runs on SQLite only."""

BACKENDS: dict[str, type[Backend]] = {"sqlite": SQLiteBackend}
if os.environ.get(POSTGRES_URL):
    BACKENDS["postgres"] = PostgresBackend


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    db = BACKENDS[request.param](tmp_path)
    try:
        yield db
    finally:
        db.close_all()


@pytest.fixture
def storage(backend: Backend) -> Storage:
    return backend.open()


@pytest.fixture
def postgres(tmp_path: Path) -> Iterator[PostgresBackend]:
    """A new PostgreSQL database, for the tests of that backend alone (they skip
    without ``UCMA_TEST_POSTGRES_URL``)."""
    backend = PostgresBackend(tmp_path)
    try:
        yield backend
    finally:
        backend.close_all()


class Make:
    """Records with every field set away from its default, and unit vectors."""

    t0 = T0

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self._rng = np.random.default_rng(20240501)
        self._count = 0

    def _next(self) -> int:
        self._count += 1
        return self._count

    # -- vectors ---------------------------------------------------------------

    def vector(self) -> np.ndarray:
        v = self._rng.standard_normal(self.dimension).astype(np.float32)
        return v / np.linalg.norm(v)

    def vectors(self, n: int) -> np.ndarray:
        return np.stack([self.vector() for _ in range(n)]) if n else np.empty((0, self.dimension))

    def axis(self, i: int, cosine: float = 1.0, other: int | None = None) -> np.ndarray:
        """Unit vector with ``cosine`` similarity to axis ``i`` (rest along ``other``)."""
        v = np.zeros(self.dimension, dtype=np.float32)
        v[i] = cosine
        if cosine < 1.0:
            v[(i + 1) % self.dimension if other is None else other] = math.sqrt(1 - cosine**2)
        return v

    # -- records ---------------------------------------------------------------

    def _common(self, scope: Scope, prefix: str, overrides: dict[str, Any]) -> dict[str, Any]:
        n = self._next()
        fields: dict[str, Any] = {
            "id": f"{prefix}-{n:05d}",
            "user_id": scope.user_id,
            "agent_id": scope.agent_id,
            "content": f"{prefix} number {n} about café résumé 🎉",
            "provenance": Provenance.USER_STATED,
            "temporal_level": 3,
            "base_salience": 0.1 + n / 1000.0,
            "outcome_adjustment": -0.125,
            "created_at": T0 + n + 0.25,
            "updated_at": T0 + n + 0.5,
            "access_count": 4,
            "last_accessed": T0 + n + 0.75,
            "archived_at": None,
            "metadata": {
                "n": n,
                "ratio": 1 / 3,
                "nested": {"ok": True, "none": None},
                "list": [1, 2.5, "ü"],
            },
        }
        fields.update(overrides)
        return fields

    def episode(self, scope: Scope, **overrides: Any) -> Episode:
        fields = self._common(scope, "ep", overrides)
        # One session per episode unless a test groups them: the keyword context
        # field (the preceding episode of the session) then stays empty.
        fields.setdefault("session_id", f"session-{fields['id']}")
        fields.setdefault("timestamp", fields["created_at"])
        fields.setdefault("source", "assistant")
        fields.setdefault("participants", ["user", "assistant", "Zoë"])
        fields.setdefault("tags", ["billing", "urgent"])
        fields.setdefault("summary", "a short summary")
        fields.setdefault("tier", Tier.MEDIUM_TERM)
        return Episode(**fields)

    def fact(
        self,
        scope: Scope,
        subject: str = "Alice",
        predicate: str = "likes",
        object_: str = "green tea",
        **overrides: Any,
    ) -> Fact:
        overrides.setdefault("id", fact_id_for(scope, subject, predicate, object_))
        overrides.setdefault("content", f"{subject} {predicate} {object_}")
        fields = self._common(scope, "fact", overrides)
        fields.setdefault("confidence", 0.85)
        fields.setdefault("source_episode_ids", ["ep-1", "ep-2"])
        fields.setdefault("reinforcement_count", 2)
        fields.setdefault("last_verified", T0 + 100.5)
        fields.setdefault("valid_from", T0 - 86400.0)
        fields.setdefault("valid_until", T0 + 86400.0)
        return Fact(subject=subject, predicate=predicate, object=object_, **fields)

    def procedure(self, scope: Scope, **overrides: Any) -> Procedure:
        fields = self._common(scope, "proc", overrides)
        fields.setdefault("name", "Refund an order")
        fields.setdefault("description", "How to refund a paid order")
        fields.setdefault("trigger_tags", ["Refund", "billing", "refund"])
        fields.setdefault(
            "steps",
            [
                ProcedureStep(
                    description="look up the order",
                    action_type="tool_call",
                    action_spec={"tool": "orders.get", "args": {"id": "{order_id}"}},
                    success_criteria="order found",
                    on_failure="abort",
                    max_retries=1,
                ),
                ProcedureStep(description="issue the refund"),
            ],
        )
        fields.setdefault("status", ProcedureStatus.ACTIVE)
        fields.setdefault("success_rate", 0.75)
        fields.setdefault("execution_count", 12)
        fields.setdefault("last_used", T0 + 50.0)
        return Procedure(**fields)

    def learning(self, scope: Scope, **overrides: Any) -> Learning:
        fields = self._common(scope, "learn", overrides)
        fields.setdefault("learning_type", LearningType.FAILURE_ANALYSIS)
        fields.setdefault("title", "Check the timezone first")
        fields.setdefault("evidence", ["ep-7", "ep-9"])
        fields.setdefault("applicability", ["Scheduling", "calendar"])
        fields.setdefault("confidence", 0.65)
        fields.setdefault("impact_score", 0.9)
        fields.setdefault("last_applied", T0 + 70.0)
        fields.setdefault("application_count", 3)
        fields.setdefault("validated", True)
        return Learning(**fields)


@pytest.fixture
def make() -> Make:
    return Make(DIMENSION)
