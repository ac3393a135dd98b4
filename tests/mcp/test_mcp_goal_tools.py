"""The goal tools through the SDK's client in process: descriptions an agent can act on,
and a goal's life from add_goal to pursue_goal, with suspension and resumption."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from tests.mcp.conftest import call

from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.mcp import create_mcp_server, fixed_scope
from ucma.mcp.goal_tools import GOAL_TOOL_NAMES

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


async def test_goal_tools(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    async with (
        AsyncMemory(tmp_path / "ucma.db", embedder=local_embedder) as memory,
        Client(create_mcp_server(memory, fixed_scope("alice"))) as client,
    ):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name in GOAL_TOOL_NAMES:
            assert hasattr(AsyncMemory, name), name
            assert len(tools[name].description or "") > 30, name
        for name in ("get_goal", "goals", "get_active_goals", "anticipate"):
            assert tools[name].annotations.read_only_hint is True, name

        goal = await call(
            client,
            "add_goal",
            description="Book flights and reserve a hotel for the Lisbon conference",
            priority=0.9,
        )
        parts = (await call(client, "decompose_goal", goal_id=goal["id"]))["results"]
        assert [p["description"] for p in parts] == [
            "Book flights for the Lisbon conference",
            "Reserve a hotel for the Lisbon conference",
        ]
        await call(client, "update_progress", goal_id=parts[0]["id"], progress=1.0)
        assert (await call(client, "get_goal", goal_id=goal["id"]))["progress"] == 0.5
        active = (await call(client, "get_active_goals"))["results"]
        assert [g["id"] for g in active] == [goal["id"], parts[1]["id"]]

        await call(client, "add", messages="The Lisbon conference was called off.")
        suspended = (await call(client, "goals", status="suspended"))["results"]
        assert {g["id"] for g in suspended} == {goal["id"], parts[1]["id"]}
        resumed = await call(client, "resume_goal", goal_id=goal["id"])
        assert resumed["status"] == "active" and resumed["accepted"]

        gaps = await call(client, "anticipate", goal_id=goal["id"])
        assert "knowledge: hotel" in gaps["gaps"]
        plan = await call(client, "pursue_goal", goal_id=goal["id"])
        assert [s["goal"]["id"] for s in plan["steps"]] == [parts[1]["id"]]
        assert (await call(client, "abandon_goal", goal_id=goal["id"]))["status"] == "abandoned"

        missing = await client.call_tool("get_goal", {"goal_id": "goal_missing"})
        assert missing.is_error
        both = await client.call_tool(
            "update_progress", {"goal_id": parts[1]["id"], "progress": 0.5, "delta": 0.1}
        )
        assert both.is_error
