"""The world-model and self-model tools through the SDK's client in process: descriptions
an agent can act on, and answers matching the engine's."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from tests.mcp.conftest import call

from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.mcp import create_mcp_server, fixed_scope
from ucma.mcp.predictive_tools import PREDICTIVE_TOOL_NAMES

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


async def test_predictive_tools(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    async with (
        AsyncMemory(tmp_path / "ucma.db", embedder=local_embedder) as memory,
        Client(create_mcp_server(memory, fixed_scope("alice"))) as client,
    ):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name in PREDICTIVE_TOOL_NAMES:
            assert hasattr(AsyncMemory, name), name
            assert len(tools[name].description or "") > 30, name
        for name in ("simulate", "introspect", "should_attempt", "transitions", "competences"):
            assert tools[name].annotations.read_only_hint is True, name

        for outcome in ("saved", "saved", "conflict error"):
            seen = await call(
                client,
                "observe_transition",
                action="save the draft",
                outcome=outcome,
                context={"offline": False},
            )
        assert seen["outcome"] == "conflict error" and seen["errors"] == 2
        predicted = await call(
            client, "simulate", action="save the draft", context={"offline": False}
        )
        assert predicted["predicted"] == "saved"
        assert predicted == (await memory.simulate("save the draft", {"offline": False},
                                                   user_id="alice")).to_dict()  # fmt: skip
        listed = await call(client, "transitions", action="save the draft")
        assert len(listed["results"]) == 2

        await call(client, "record_competence", capability="sql", success=True, predicted=0.9)
        await call(
            client,
            "record_competence",
            capability="sql",
            success=False,
            failure_reason="recursive queries",
        )
        [sql] = (await call(client, "competences"))["results"]
        assert (sql["attempts"], sql["successes"]) == (2, 1)
        answer = await call(client, "introspect", task="Am I good at SQL queries?")
        assert answer["capability"] == "sql" and answer["sample_size"] == 2
        advice = await call(client, "should_attempt", task="Write a recursive SQL query")
        assert advice["failure_modes_applied"] == ["recursive queries"]
        assert advice["decision"] == "ask_for_help"
        assert (await call(client, "learning_priorities"))["results"] == []

        refused = await client.call_tool(
            "record_competence", {"capability": "sql", "success": True, "failure_reason": "x"}
        )
        assert refused.is_error and "failed attempt only" in str(refused.content)
