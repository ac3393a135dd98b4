"""Fixtures for tests that run several ``ucma`` processes on one PostgreSQL database.

They need the server of ``UCMA_TEST_POSTGRES_URL`` (``make test-postgres`` starts one with
scripts/postgres.py and sets it) and are skipped without it: each test gets a database
of its own there, dropped afterwards.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import httpx
import pytest

POSTGRES_URL = "UCMA_TEST_POSTGRES_URL"
READY_SECONDS = 300.0
"""How long a starting ``ucma serve`` may take to answer (several load the model at once
on a busy machine)."""


@pytest.fixture
def postgres_database() -> Iterator[str]:
    """A new, empty database on the test server, as a ``postgresql://`` URL."""
    admin = os.environ.get(POSTGRES_URL)
    if not admin:
        pytest.skip(f"needs a PostgreSQL server: set {POSTGRES_URL} (make test-postgres)")
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    name = f"ucma_processes_{uuid.uuid4().hex[:16]}"
    info = conninfo_to_dict(admin)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield f"postgresql://{info.get('user', '')}@{info['host']}:{info['port']}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ucma_environment() -> dict[str, str]:
    """This interpreter's import path, and no ``UCMA_`` setting of the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("UCMA_")}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    return env


def ucma_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "ucma.cli.main", *args]


class UcmaProcess:
    """One ``python -m ucma.cli.main <args>`` process, its output in a log file."""

    def __init__(self, args: list[str], log: Path) -> None:
        self.log_path = log
        self._log: IO[bytes] = log.open("wb")
        self.process = subprocess.Popen(
            ucma_command(*args), stdout=self._log, stderr=subprocess.STDOUT, env=ucma_environment()
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def output(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL: the process dies at once, releasing nothing (a crash)."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=60)

    def stop(self, timeout: float = 120.0) -> int:
        """SIGTERM, then wait for the exit (SIGKILL after ``timeout``); the status (a
        server that shut down cleanly reports the signal again: -SIGTERM)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=60)
        self._log.close()
        return self.process.returncode


class Server(UcmaProcess):
    """``ucma serve --no-auth`` on a free loopback port."""

    def __init__(self, database: str, log: Path, *extra: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        super().__init__(
            ["serve", "--no-auth", "--database", database, "--port", str(self.port), *extra], log
        )

    def wait_ready(self, deadline: float) -> None:
        """Poll ``/v1/health`` until it answers (the process is starting), until
        ``deadline`` (``time.monotonic``)."""
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"ucma serve exited early:\n{self.output()}")
            try:
                if httpx.get(f"{self.base}/v1/health", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"ucma serve did not answer in time:\n{self.output()}")
            time.sleep(0.1)  # polling a process that is starting


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[list[UcmaProcess]]:
    """Processes a test starts (append them); each still running is stopped after it."""
    started: list[UcmaProcess] = []
    try:
        yield started
    finally:
        for process in started:
            process.stop()
