"""The MCP tools through the SDK's own client: in process, over stdio (a ``ucma mcp``
subprocess) and over streamable HTTP (``ucma serve``'s app on a real uvicorn server)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, asynccontextmanager
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from tests.mcp.conftest import call

import ucma
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.mcp import TOOL_NAMES, create_mcp_server, fixed_scope
from ucma.server import create_app
from ucma.sync import Memory

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

LiveServer = Callable[[object], AbstractContextManager[str]]
FACT = "Alice's staging database moved to port 5433 after the upgrade."
QUERY = "which port does the staging database use?"


async def round_trip(client: Client) -> None:
    """List the tools, remember, then recall the memory."""
    names = {tool.name for tool in (await client.list_tools()).tools}
    assert set(TOOL_NAMES) <= names
    [stored] = (await call(client, "add", messages=FACT))["results"]
    assert stored["stored"] is True
    recalled = await call(client, "recall", query=QUERY, limit=3)
    assert recalled["results"][0]["id"] == stored["id"]
    assert "5433" in recalled["results"][0]["content"]
    assert 0 < recalled["results"][0]["confidence"] <= 1
    assert isinstance(recalled["low_confidence"], bool)
    assert recalled["retrieval_id"].startswith("ret_")


async def test_tools_in_process(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    async with AsyncMemory(tmp_path / "ucma.db", embedder=local_embedder) as memory:
        server = create_mcp_server(memory, fixed_scope("alice"))
        async with Client(server) as client:
            await round_trip(client)
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            for name in TOOL_NAMES:
                assert len(tools[name].description or "") > 40, name
            assert "low_confidence" in (tools["recall"].description or "")
            seed = await call(client, "search", query=QUERY)
            assert "5433" in seed["results"][0]["content"]
            await call(client, "add", messages="Alice's laptop is a ThinkPad X1.")

            fact = await call(
                client,
                "assert_fact",
                subject="staging database",
                predicate="listens on",
                object="port 5433",
            )
            found = await call(client, "facts", entity="Staging Database")
            assert [f["id"] for f in found["facts"]] == [fact["id"]]
            lesson = await call(
                client,
                "learn",
                insight="Check the port after upgrades.",
                evidence_ids=[seed["results"][0]["id"]],
                applicability=["postgres"],
                learning_type="failure_analysis",
            )
            assert lesson["id"].startswith("lrn_")
            recalled = await call(client, "recall", query=QUERY)
            decision = await call(
                client,
                "decide",
                memory_ids=[recalled["results"][0]["id"]],
                summary="Told the user to connect on port 5433",
                retrieval_id=recalled["retrieval_id"],
            )
            assert decision["decision_id"].startswith("trc_")
            judged = await call(
                client,
                "outcome",
                decision_id=decision["decision_id"],
                quality=0.9,
                signal="user_accepted",
            )
            assert judged["outcome_quality"] == 0.9 and judged["salience_updates"][0]["delta"] > 0
            twice = await client.call_tool(
                "outcome",
                {"decision_id": decision["decision_id"], "quality": 1, "signal": "task_completed"},
            )
            assert twice.is_error and "outcome_already_recorded" in twice.content[0].text
            seed_decision = await call(
                client, "decide", memory_ids=[fact["id"]], summary="Used the port fact"
            )
            assert seed_decision["decision_id"] != decision["decision_id"]

            # The agent restating a value later replaces its own earlier one (seed 002).
            await call(
                client, "assert_fact", subject="Gai", predicate="delivery_pref", object="Thursday"
            )
            updated = await call(
                client, "assert_fact", subject="Gai", predicate="delivery_pref", object="Friday"
            )
            assert updated["disambiguation_required"] is False
            assert [c["status"] for c in updated["conflicts"]] == ["resolved"]
            gai = await call(client, "facts", entity="Gai")
            assert [f["object"] for f in gai["facts"]] == ["Friday"]
            # Another source's value at about the same time is real ambiguity: ask the user.
            await memory.assert_fact(
                "Nightjar", "launch_day", "Tuesday", metadata={"source": "crm"}, user_id="alice"
            )
            disputed = await call(
                client, "assert_fact", subject="Nightjar", predicate="launch_day", object="Friday"
            )
            assert disputed["disambiguation_required"] is True
            nightjar = await call(client, "facts", entity="Nightjar")
            assert nightjar["disambiguation_required"]
            assert nightjar["options"] == ["Tuesday", "Friday"]
            assert nightjar["conflicts"][0]["status"] == "pending"

            health = await call(client, "health")
            assert health["status"] == "ok" and health["user_id"] == "alice"
            assert health["memories"]["episodic"] == 2

            bad = await client.call_tool("add", {"messages": "   "})
            assert bad.is_error and "content" in bad.content[0].text
            unknown = await client.call_tool("learn", {"insight": "x", "evidence_ids": ["ep_x"]})
            assert unknown.is_error
        stats = await memory.stats(user_id="alice")
        assert stats["memories"]["learning"] == 1


async def test_stdio_server_round_trip(tmp_path: Path) -> None:
    source = Path(ucma.__file__).resolve().parents[1]
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ucma.cli.main", "mcp", "--user", "alice", "--home", str(tmp_path)],
        env={"PYTHONPATH": str(source)},
    )
    async with Client(parameters, read_timeout_seconds=60) as client:
        await round_trip(client)
        health = await call(client, "health")
        assert (health["user_id"], health["agent_id"]) == ("alice", "default")
    with Memory(tmp_path / "ucma.db", embedder=LocalEmbedder()) as memory:
        assert memory.stats(user_id="alice")["memories"]["episodic"] == 1


@asynccontextmanager
async def keyed_client(url: str, token: str) -> AsyncIterator[Client]:
    """An MCP client over streamable HTTP sending ``token`` as its API key."""
    headers = {"authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        transport = streamable_http_client(f"{url}/mcp", http_client=http)
        async with Client(transport, read_timeout_seconds=60) as client:
            yield client


async def test_http_with_api_keys_and_tenant_isolation(
    tmp_path: Path, live_server: LiveServer
) -> None:
    with Memory(tmp_path / "ucma.db") as admin:
        _, alice_token = admin.create_key("alice")
        _, bob_token = admin.create_key("bob")
    app = create_app(home=tmp_path, require_keys=True, mcp=True)
    with live_server(app) as url:
        async with keyed_client(url, alice_token) as alice:
            await round_trip(alice)
            await call(
                alice, "assert_fact", subject="Nightjar", predicate="launches on", object="3 June"
            )
            health = await call(alice, "health")
            assert health["user_id"] == "alice"
            recalled = await call(alice, "recall", query=QUERY)
            decision = await call(
                alice,
                "decide",
                memory_ids=[recalled["results"][0]["id"]],
                summary="Used the staging port",
                retrieval_id=recalled["retrieval_id"],
            )

        async with keyed_client(url, bob_token) as bob:
            # Alice's ids in Bob's hands: unknown, and nothing changes.
            stolen = await bob.call_tool(
                "outcome",
                {"decision_id": decision["decision_id"], "quality": -1, "signal": "task_failed"},
            )
            assert stolen.is_error and "not_found" in stolen.content[0].text
            borrowed = await bob.call_tool(
                "decide",
                {"memory_ids": [recalled["results"][0]["id"]], "summary": "x"},
            )
            assert borrowed.is_error and "not_found" in borrowed.content[0].text

        async with keyed_client(url, bob_token) as bob:
            assert (await call(bob, "recall", query=QUERY))["results"] == []
            assert (await call(bob, "search", query="Nightjar launch"))["results"] == []
            assert (await call(bob, "facts", entity="Nightjar"))["facts"] == []
            health = await call(bob, "health")
            assert health["user_id"] == "bob" and sum(health["memories"].values()) == 0
            guessed = await bob.call_tool("learn", {"insight": "x", "evidence_ids": ["ep_x"]})
            assert guessed.is_error

        # No key, or a wrong one: refused before the MCP transport sees the request.
        async with httpx.AsyncClient(base_url=url) as plain:
            init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
            headers = {"accept": "application/json, text/event-stream"}
            for extra in ({}, {"authorization": "Bearer ucma_000000000000_" + "A" * 43}):
                response = await plain.post("/mcp", json=init, headers={**headers, **extra})
                assert response.status_code == 401
                assert response.json()["error"]["code"] == "unauthorized"

        async with keyed_client(url, alice_token) as alice:
            assert (await call(alice, "health"))["memories"]["episodic"] == 1
            assert [
                f["object"] for f in (await call(alice, "facts", entity="Nightjar"))["facts"]
            ] == ["3 June"]
            judged = await call(
                alice,
                "outcome",
                decision_id=decision["decision_id"],
                quality=0.5,
                signal="task_completed",
            )
            assert judged["outcome_quality"] == 0.5  # Bob's attempt did not record one


async def test_http_in_local_mode_takes_the_scope_from_headers(
    tmp_path: Path, live_server: LiveServer
) -> None:
    app = create_app(home=tmp_path, require_keys=False, mcp=True)
    with live_server(app) as url:
        for headers, user in (({"x-ucma-user-id": "carol"}, "carol"), ({}, None)):
            async with (
                httpx2.AsyncClient(headers=headers, timeout=60) as http,
                Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
            ):
                result = await client.call_tool("health", {})
                if user is None:
                    assert result.is_error and "missing_scope" in result.content[0].text
                else:
                    assert result.structured_content["user_id"] == user
