"""The record and upkeep tools through the SDK's client, in process: one name per
operation (no save under a search's name), descriptions an agent can act on, and each
tool doing what its Python method of the same name does."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from tests.mcp.conftest import call

from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.mcp import TOOL_NAMES, create_mcp_server, fixed_scope

pytestmark = pytest.mark.anyio


async def test_tool_names_and_descriptions_are_unambiguous(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with (
        AsyncMemory(tmp_path / "ucma.db", embedder=local_embedder) as memory,
        Client(create_mcp_server(memory, fixed_scope("alice"))) as client,
    ):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert sorted(tools) == sorted(TOOL_NAMES)
    assert not {"remember", "mind_remember", "mind_retrieve", "mind_decide", "mind_health"} & set(
        tools
    )
    for name, tool in tools.items():
        description = tool.description or ""
        assert len(description) > 40, name
        # Every tool is the engine method of the same name, or a documented one of three.
        assert hasattr(AsyncMemory, name) or name in {"facts", "health"}, name
    descriptions = {name: (tool.description or "").lower() for name, tool in tools.items()}
    assert descriptions["add"].startswith("save")
    assert descriptions["search"].startswith("find")
    assert "confirm" in descriptions["delete_all"]
    assert "previous and new" in descriptions["history"]
    assert "dry_run" in descriptions["forget"]
    for name in ("get", "get_all", "search", "history", "related", "find_procedures"):
        assert tools[name].annotations.read_only_hint is True, name
    for name in ("delete", "delete_all", "forget"):
        assert tools[name].annotations.destructive_hint is True, name
    recall = tools["recall"].input_schema["properties"]
    assert {"cascade", "confidence_threshold", "max_cascade_depth"} <= set(recall)
    add = tools["add"].input_schema["properties"]
    assert {"messages", "run_id", "metadata"} <= set(add)


async def test_records_through_the_tools(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    async with AsyncMemory(tmp_path / "ucma.db", embedder=local_embedder) as memory:
        server = create_mcp_server(memory, fixed_scope("alice"))
        async with Client(server) as client:
            chat = [
                {"role": "user", "content": "I moved my dentist appointment to Thursday."},
                {"role": "assistant", "content": "Noted: the dentist is on Thursday now."},
            ]
            added = await call(
                client, "add", messages=chat, run_id="errands", metadata={"topic": "health"}
            )
            ids = [r["id"] for r in added["results"]]
            assert len(ids) == 2 and all(r["stored"] for r in added["results"])
            assert (await memory.get(ids[1], user_id="alice")).source == "assistant"  # type: ignore[attr-defined]

            found = await call(client, "search", query="dentist", filters={"topic": "health"})
            assert {r["id"] for r in found["results"]} == set(ids)
            page = await call(client, "get_all", limit=1, run_id="errands")
            assert (page["total"], page["next_offset"], len(page["items"])) == (2, 1, 1)
            assert (await call(client, "get", memory_id=ids[0]))["metadata"]["run_id"] == "errands"

            updated = await call(
                client, "update", memory_id=ids[0], text="I moved my dentist appointment to Friday."
            )
            assert "Friday" in updated["content"]
            [change] = (await call(client, "history", memory_id=ids[0]))["history"]
            assert change["details"]["previous"] == chat[0]["content"]
            assert change["details"]["new"] == "I moved my dentist appointment to Friday."

            recalled = await call(
                client,
                "recall",
                query="when is the dentist?",
                cascade=False,
                confidence_threshold=0.9,
                max_cascade_depth=0,
            )
            assert recalled["searched_layers"][1:] == []
            related = await call(client, "related", memory_id=ids[0])
            assert ids[1] in {r["id"] for r in related["results"]}

            refused = await client.call_tool("delete_all", {"confirm": False})
            assert refused.is_error and "confirm" in refused.content[0].text
            await call(client, "delete", memory_id=ids[1])
            missing = await client.call_tool("get", {"memory_id": ids[1]})
            assert missing.is_error and "not_found" in missing.content[0].text
            gone = await call(client, "delete_all", confirm=True)
            assert gone["deleted"] >= 1
            assert (await call(client, "get_all"))["total"] == 0


async def test_conflicts_sessions_procedures_and_upkeep(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(tmp_path / "ucma.db", embedder=local_embedder) as memory:
        server = create_mcp_server(memory, fixed_scope("alice"))
        async with Client(server) as client:
            await memory.assert_fact(
                "Nightjar", "launch_day", "Tuesday", metadata={"source": "crm"}, user_id="alice"
            )
            disputed = await call(
                client, "assert_fact", subject="Nightjar", predicate="launch_day", object="Friday"
            )
            assert disputed["disambiguation_required"] is True
            [pending] = [c for c in disputed["conflicts"] if c["status"] == "pending"]
            settled = await call(
                client, "resolve_conflict", conflict_id=pending["id"], chosen_value="Friday"
            )
            assert settled["fact"]["object"] == "Friday"
            again = await client.call_tool(
                "resolve_conflict", {"conflict_id": pending["id"], "chosen_value": "Friday"}
            )
            assert again.is_error
            facts = await call(client, "facts", entity="Nightjar")
            assert [f["object"] for f in facts["facts"]] == ["Friday"]

            first = memory.session_id(user_id="alice")
            session = await call(client, "new_session")
            assert session["session_id"] != first

            procedure = await call(
                client,
                "add_procedure",
                name="Rotate the staging certificate",
                description="Renew and install the TLS certificate of staging.",
                steps=["Request a new certificate", "Install it", "Restart the proxy"],
                trigger_tags=["tls", "staging"],
            )
            found = await call(client, "find_procedures", tags=["tls"])
            assert [p["id"] for p in found["procedures"]] == [procedure["id"]]
            assert found["procedures"][0]["steps"][0] == "Request a new certificate"
            ran = await call(
                client, "record_procedure_outcome", procedure_id=procedure["id"], success=True
            )
            assert ran["success_rate"] == 1.0

            slept = await call(client, "sleep")
            assert isinstance(slept, dict) and slept
            dry = await call(client, "forget")
            assert isinstance(dry, dict)
        assert (await memory.get(procedure["id"], user_id="alice")).id == procedure["id"]
