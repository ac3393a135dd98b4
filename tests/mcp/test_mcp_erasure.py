"""The ``forget_person`` MCP tool through the SDK's client, in process: it erases in the
call's scope only and reports the counts; vague identifiers come back as a tool error."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.mcp import create_mcp_server, fixed_scope

pytestmark = pytest.mark.anyio


async def test_forget_person_erases_in_the_callers_scope(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(tmp_path / "ucma.db", embedder=local_embedder) as memory:
        for user in ("alice", "bob"):
            await memory.observe("Priya Raman moved to Leeds in March.", user_id=user)
        kept = await memory.observe("The boiler service is due in May.", user_id="alice")
        server = create_mcp_server(memory, fixed_scope("alice"))
        async with Client(server) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert tools["forget_person"].annotations.destructive_hint is True
            result = await client.call_tool("forget_person", {"identifiers": ["Priya Raman"]})
            assert not result.is_error, result.content
            assert result.structured_content["counts"]["episodic"] == 1
            vague = await client.call_tool("forget_person", {"identifiers": ["P"]})
            assert vague.is_error and "validation_error" in vague.content[0].text
        left = await memory.list(user_id="alice")
        assert kept.id in {r.id for r in left}
        assert not any("Priya" in r.content for r in left)
        assert len(await memory.list(user_id="bob")) >= 1
