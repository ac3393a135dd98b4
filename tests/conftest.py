"""Shared fixtures: the anyio backend, a network guard, the real embedder, engines.

The network guard makes any socket connection to a non-loopback address fail
the test: the suite must run offline (DESIGN.md quality bars).

The engines of ``memory`` and ``sync_memory`` keep their store where ``database``
says: a fresh SQLite file, or, when ``UCMA_TEST_POSTGRES_URL`` names a PostgreSQL
server's database (``make test-postgres`` starts one with scripts/postgres.py), a
fresh database of their own on that server, so the engine's tests run on both
backends.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from ucma.embeddings import LocalEmbedder

_real_connect = socket.socket.connect


def _guarded_connect(self: socket.socket, address: object) -> None:
    if self.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
        host = str(address[0])
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if not loopback:
            raise RuntimeError(f"test tried to reach the network: {address!r}")
    _real_connect(self, address)  # type: ignore[arg-type]


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbedder:
    """The real packaged model, loaded once for the whole run."""
    embedder = LocalEmbedder()
    embedder.load()
    return embedder


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


POSTGRES_URL = "UCMA_TEST_POSTGRES_URL"
"""A PostgreSQL database URL; when set, engines of the fixtures below live on its server."""


@pytest.fixture
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str | Path]:
    """Where ``memory`` and ``sync_memory`` keep their store: the file ``db_path`` names,
    or a new PostgreSQL database (dropped afterwards) when ``UCMA_TEST_POSTGRES_URL`` is
    set and nothing the test uses looks at that file (asks for ``db_path``)."""
    admin = os.environ.get(POSTGRES_URL)
    if not admin or "db_path" in request.fixturenames:
        yield tmp_path / "memory.db"
        return
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    name = f"ucma_engine_{uuid.uuid4().hex[:16]}"
    info = conninfo_to_dict(admin)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield f"postgresql://{info.get('user', '')}@{info['host']}:{info['port']}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _engine_config(database: str | Path) -> Any:
    """The default configuration; a store without a local file gets a vault key."""
    from cryptography.fernet import Fernet

    from ucma.config import PrivacyConfig, UCMAConfig

    if isinstance(database, Path):
        return None
    return UCMAConfig(privacy=PrivacyConfig(vault_key=Fernet.generate_key().decode()))


@pytest.fixture
async def memory(database: str | Path, local_embedder: LocalEmbedder) -> AsyncIterator[object]:
    """An open AsyncMemory on a fresh store (``database``) with the real embedder."""
    from ucma.engine import AsyncMemory

    async with AsyncMemory(
        database, user_id="alice", embedder=local_embedder, config=_engine_config(database)
    ) as mem:
        yield mem


@pytest.fixture
def sync_memory(database: str | Path, local_embedder: LocalEmbedder) -> Iterator[object]:
    from ucma.sync import Memory

    with Memory(
        database, user_id="alice", embedder=local_embedder, config=_engine_config(database)
    ) as mem:
        yield mem


@pytest.fixture(scope="session")
def live_server() -> Iterator[Callable[..., AbstractContextManager[str]]]:
    """Run an ASGI app with uvicorn on a free loopback port for the length of a ``with``.

    Yields a function: ``with live_server(app, **uvicorn_options) as base_url: ...``. The
    server runs in a thread with its lifespan (unlike ASGI test transports) and is stopped
    at the end.
    """
    import threading

    import uvicorn

    @contextmanager
    def serve(app: object, **options: Any) -> Iterator[str]:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="on", **options)  # type: ignore[arg-type]
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True
            thread.join(timeout=15)
            sock.close()

    yield serve
