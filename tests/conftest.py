"""Shared fixtures: the anyio backend, a network guard, the real embedder, engines.

The network guard makes any socket connection to a non-loopback address fail
the test: the suite must run offline (DESIGN.md quality bars).
"""

from __future__ import annotations

import ipaddress
import socket
import time
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


@pytest.fixture
async def memory(db_path: Path, local_embedder: LocalEmbedder) -> AsyncIterator[object]:
    """An open AsyncMemory on a fresh SQLite file with the real embedder."""
    from ucma.engine import AsyncMemory

    async with AsyncMemory(db_path, user_id="alice", embedder=local_embedder) as mem:
        yield mem


@pytest.fixture
def sync_memory(db_path: Path, local_embedder: LocalEmbedder) -> Iterator[object]:
    from ucma.sync import Memory

    with Memory(db_path, user_id="alice", embedder=local_embedder) as mem:
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
