"""API keys take effect at once across processes: a real ``ucma serve`` subprocess, and the
CLI creating and revoking keys in other processes while it runs."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "ucma.cli.main"]


def cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UCMA_")}
    return subprocess.run(
        [*CLI, *args, "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=env,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``ucma serve`` on 127.0.0.1 with no keys yet; yields its base URL and home, once
    its health route answers."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("UCMA_")}
    server = subprocess.Popen(
        [*CLI, "serve", "--port", str(port), "--home", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:  # poll the health route until the service is up
            assert server.poll() is None, server.stderr.read().decode()  # type: ignore[union-attr]
            try:
                if httpx.get(f"{base}/v1/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "ucma serve did not answer"
            time.sleep(0.05)
        yield base, tmp_path
    finally:
        server.terminate()
        server.wait(timeout=30)
        server.stderr.close()  # type: ignore[union-attr]


def test_a_key_created_by_the_cli_is_required_on_the_next_request(
    served: tuple[str, Path],
) -> None:
    base, home = served
    with httpx.Client(base_url=base) as client:
        assert client.get("/v1/health").json()["auth"] == "local"
        assert client.get("/v1/stats", params={"user_id": "alice"}).status_code == 200

        created = cli("keys", "create", "--user", "alice", "--json", home=home)
        token = json.loads(created.stdout)["token"]

        refused = client.get("/v1/stats", params={"user_id": "alice"})
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "unauthorized"
        assert client.post("/mcp", json={}).status_code == 401
        assert client.get("/v1/health").json()["auth"] == "api_keys"
        keyed = client.get("/v1/stats", headers={"authorization": f"Bearer {token}"})
        assert keyed.status_code == 200 and keyed.json()["user_id"] == "alice"

        key_id = json.loads(created.stdout)["id"]
        cli("keys", "revoke", key_id, home=home)

        revoked = client.get("/v1/stats", headers={"authorization": f"Bearer {token}"})
        assert revoked.status_code == 401
        # The last key gone, the loopback service is back in local mode.
        assert client.get("/v1/stats", params={"user_id": "alice"}).status_code == 200
