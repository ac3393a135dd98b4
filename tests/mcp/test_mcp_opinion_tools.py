"""The opinion tools through the SDK's client in process: descriptions an agent can act
on, and answers matching the engine's."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from tests.mcp.conftest import call

from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.mcp import create_mcp_server, fixed_scope
from ucma.mcp.opinion_tools import OPINION_TOOL_NAMES

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


async def test_opinion_tools(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    async with (
        AsyncMemory(tmp_path / "ucma.db", embedder=local_embedder) as memory,
        Client(create_mcp_server(memory, fixed_scope("alice"))) as client,
    ):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name in OPINION_TOOL_NAMES:
            assert hasattr(AsyncMemory, name), name
            assert len(tools[name].description or "") > 30, name
        for name in ("find_opinion", "opinions", "opinions_below", "get_opinion"):
            assert tools[name].annotations.read_only_hint is True, name
        assert "add" in tools and "bank" in str(tools["add"].input_schema)

        await call(client, "add", messages="Alice prefers dark mode in every editor.")
        await call(client, "add", messages="Alice switched to light mode.")
        found = (await call(client, "find_opinion", topic="Alice's editor theme"))["opinion"]
        assert found["stance"] == "light mode"
        chain = await call(client, "opinion_history", opinion_id=found["id"])
        assert [o["stance"] for o in chain["results"]] == [
            "dark mode in every editor",
            "light mode",
        ]
        up = await call(client, "reinforce_opinion", opinion_id=found["id"], evidence="Again.")
        assert up["confidence"] == pytest.approx(0.7)
        down = await call(client, "weaken_opinion", opinion_id=found["id"], weight=1.0)
        assert down["confidence"] == pytest.approx(0.35)
        low = await call(client, "opinions_below", confidence=0.5)
        assert [o["id"] for o in low["results"]] == [found["id"]]
        kept = await call(
            client, "retain", text="Bob trusts the nightly build.", bank="opinion", topic="nightly"
        )
        assert kept["id"].startswith("ep_")
        listed = await call(client, "opinions")
        assert {o["topic"] for o in listed["results"]} >= {"nightly"}
        shown = await call(client, "get_opinion", opinion_id=found["id"])
        assert shown["id"] == found["id"]
        steered = await call(
            client, "add", messages="We freeze deploys on Fridays.", temporal_level=3, bank="world"
        )
        record = await memory.get(steered["results"][0]["id"], user_id="alice")
        assert record is not None and (record.temporal_level, record.bank.value) == (3, "world")
        missing = await client.call_tool("get_opinion", {"opinion_id": "op_missing"})
        assert missing.is_error
