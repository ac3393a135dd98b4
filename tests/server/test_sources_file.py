"""Sources of truth attached to the service from a configuration file: memory-versus-
database conflicts for service users, and clear errors for a bad file."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import httpx
import pytest
from tests.server.conftest import BASE_URL

from ucma.conflicts.source_file import load_sources
from ucma.engine import AsyncMemory
from ucma.errors import ConfigError
from ucma.server import create_app

SOURCES = """
[[source]]
name = "sales_db"
url = "sqlite:///shop.db"
subject_pattern = "sales_order_(?P<id>so_\\\\d+)"
[source.queries]
status = "SELECT status FROM sales_orders WHERE id = :id"
"""


def _shop(folder: Path) -> Path:
    shop = folder / "shop.db"
    with closing(sqlite3.connect(shop)) as conn, conn:
        conn.execute("CREATE TABLE sales_orders (id TEXT PRIMARY KEY, status TEXT)")
        conn.execute("INSERT INTO sales_orders VALUES ('so_1001', 'in_fulfillment')")
    return shop


@pytest.mark.anyio
@pytest.mark.integration
async def test_a_service_with_a_sources_file_reports_memory_against_the_database(
    engine: AsyncMemory, tmp_path: Path
) -> None:
    _shop(tmp_path)
    (tmp_path / "sources.toml").write_text(SOURCES)
    app = create_app(
        engine, require_keys=False, mcp=False, sources=load_sources(tmp_path / "sources.toml")
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        user = {"user_id": "ops_manager"}
        fact = {"subject": "sales_order_so_1001", "predicate": "status", "object": "fulfilled"}
        stored = await client.post("/v1/facts", json={**user, **fact})
        assert stored.status_code == 201, stored.text
        response = await client.post(
            "/v1/chat",
            json={**user, "message": "Is SO-1001 complete?", "entity": "sales_order_so_1001"},
        )
    assert response.status_code == 200, response.text
    assert "in_fulfillment" in response.json()["response"]
    conflict = response.json()["conflicts_detected"][0]
    assert conflict["conflict_type"] == "memory_vs_db"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("this is = not toml [", "not valid TOML"),
        ("[other]\nx = 1", "[[source]]"),
        ('[[source]]\nname = "a"\nurl = "postgresql://h/db"\n[source.queries]\nx = "S"', "sqlite"),
        ('[[source]]\nname = "a"\nurl = "sqlite:///missing.db"\n[source.queries]\nx = "S"', "no "),
        ('[[source]]\nname = "a"\nurl = "sqlite:///shop.db"\n[source.queries]\n', "queries"),
        ('[[source]]\nname = "a"\nurl = "sqlite:///shop.db"\nport = 1', "unknown keys"),
        (
            '[[source]]\nname = "a"\nurl = "sqlite:///shop.db"\nsubject_pattern = "("\n'
            '[source.queries]\nx = "SELECT 1"',
            "subject_pattern",
        ),
    ],
)
def test_a_bad_sources_file_is_a_config_error_naming_the_problem(
    tmp_path: Path, text: str, message: str
) -> None:
    _shop(tmp_path)
    (tmp_path / "sources.toml").write_text(text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        load_sources(tmp_path / "sources.toml")
    with pytest.raises(ConfigError, match="cannot read"):
        load_sources(tmp_path / "absent.toml")
