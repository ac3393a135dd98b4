"""The synthesize and post_interaction tools through the SDK's client in process:
descriptions an agent can act on, answers matching the engine's, errors as tool errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from tests.mcp.conftest import call

from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.mcp import create_mcp_server, fixed_scope
from ucma.mcp.synthesis_tools import SYNTHESIS_TOOL_NAMES
from ucma.serialization import synthesis_to_dict

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


async def test_synthesis_tools(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    async with (
        AsyncMemory(tmp_path / "ucma.db", embedder=local_embedder) as memory,
        Client(create_mcp_server(memory, fixed_scope("alice"))) as client,
    ):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name in SYNTHESIS_TOOL_NAMES:
            assert hasattr(AsyncMemory, name), name
            assert len(tools[name].description or "") > 100, name
        assert tools["synthesize"].annotations.read_only_hint is True
        assert tools["post_interaction"].annotations.read_only_hint is False

        learned = await call(
            client,
            "post_interaction",
            query="Draft the weekly report",
            response="Drafted it with the chart first.",
            success=False,
            capability="reports",
            failure_reason="the numbers were stale",
            trajectory=["pull the numbers", "draw the chart"],
            preferences=["I like reports that start with a chart."],
            domain="reports",
        )
        assert learned["failure_mode_added"] and learned["opinions"]
        assert learned["competence"]["failure_modes"][0]["mode"] == "the numbers were stale"

        found = await call(client, "synthesize", query="How should the weekly report look?",
                           task="draft the weekly report")  # fmt: skip
        engine = await memory.synthesize(
            "How should the weekly report look?", task="draft the weekly report", user_id="alice"
        )
        assert found["preferences"] == synthesis_to_dict(engine)["preferences"]
        assert found["competence"]["capability"] == "reports"
        assert "reports" in found["preferences"][0]["stance"]

        refused = await client.call_tool(
            "post_interaction",
            {"query": "x", "response": "y", "success": True, "failure_reason": "z"},
        )
        assert refused.is_error
        assert "failed interaction only" in refused.content[0].text  # type: ignore[union-attr]
