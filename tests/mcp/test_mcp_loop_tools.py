"""The tools for knowledge, the learning loop and a memory's life, through the SDK's
client in process: descriptions an agent can act on, read-only hints where nothing
changes, and each tool answering what its Python method of the same name returns."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from tests.mcp.conftest import call

from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.mcp import create_mcp_server, fixed_scope
from ucma.mcp.knowledge_tools import KNOWLEDGE_TOOL_NAMES
from ucma.mcp.loop_tools import LOOP_TOOL_NAMES

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

NOTE = "The staging database listens on port 5433 since the upgrade."


async def test_descriptions_and_hints(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    async with (
        AsyncMemory(tmp_path / "ucma.db", embedder=local_embedder) as memory,
        Client(create_mcp_server(memory, fixed_scope("alice"))) as client,
    ):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name in (*KNOWLEDGE_TOOL_NAMES, *LOOP_TOOL_NAMES):
        assert hasattr(AsyncMemory, name), name
        assert len(tools[name].description or "") > 60, name
    for name in LOOP_TOOL_NAMES:
        assert tools[name].annotations.read_only_hint is True, name
    for name in ("validate_learning", "clear_review", "link"):
        assert tools[name].annotations.read_only_hint is False, name
    described = {name: (tool.description or "").lower() for name, tool in tools.items()}
    assert "clear_review" in described["review_flags"]
    assert "changes nothing" in described["replay"]
    assert "epoch seconds" in described["episodes_between"]


async def test_the_tools_answer_what_the_engine_holds(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with (
        AsyncMemory(tmp_path / "ucma.db", embedder=local_embedder) as memory,
        Client(create_mcp_server(memory, fixed_scope("alice"))) as client,
    ):
        first = (await call(client, "add", messages=NOTE))["results"][0]["id"]
        await call(client, "add", messages=NOTE)  # merged: a source and a duplicate
        other = (await call(client, "add", messages="Deploys are frozen on Fridays."))["results"][
            0
        ]["id"]

        sources = await call(client, "sources", memory_id=first)
        assert all(s["at_iso"].endswith("Z") for s in sources["sources"])
        assert len(sources["sources"]) == len(await memory.sources(first, user_id="alice"))
        duplicates = await call(client, "duplicates")
        assert [d["existing_id"] for d in duplicates["results"]] == [first]
        kept = await call(client, "retention", memory_id=first)
        assert kept["retention"] == round(await memory.retention(first, user_id="alice"), 4)

        edge = await call(client, "link", source_id=first, target_id=other, edge_type="caused")
        assert (edge["source_id"], edge["target_id"]) == (first, other)
        assert isinstance((await call(client, "context"))["context"], str)
        period = await call(client, "episodes_between", start=0, end=4_000_000_000)
        assert {first, other} <= {e["id"] for e in period["results"]}

        lesson = await call(
            client, "learn", insight="Check the port before a staging deploy.",
            applicability=["deploy"], evidence_ids=[first],
        )  # fmt: skip
        found = await call(client, "find_learnings", tags=["deploy"], min_confidence=0.0)
        assert [r["id"] for r in found["results"]] == [lesson["id"]]
        validated = await call(client, "validate_learning", learning_id=lesson["id"], success=True)
        assert validated["id"] == lesson["id"]

        for value in ("Thursday", "Friday"):
            await call(
                client, "assert_fact", subject="Zephyr", predicate="deploy_day", object=value
            )
        await call(client, "assert_fact", subject="Zephyr", predicate="works_at",
                   object="Acme")  # fmt: skip
        history = await call(client, "fact_history", subject="Zephyr", predicate="deploy_day")
        assert {f["object"] for f in history["facts"]} == {"Thursday", "Friday"}
        reached = await call(client, "traverse", entity="Zephyr", max_hops=2)
        assert "Acme" in {f["object"] for f in reached["facts"]}
        assert isinstance((await call(client, "review_flags"))["results"], list)
        cleared = await call(client, "clear_review", memory_id=first)
        assert cleared == {"memory_id": first, "cleared": 0}

        decided = await call(client, "decide", memory_ids=[first], summary="Used port 5433")
        decision = decided["decision_id"]
        await call(client, "outcome", decision_id=decision, quality=0.9,
                   signal="user_accepted")  # fmt: skip
        assert (await call(client, "trace", decision_id=decision))["id"] == decision
        assert [t["id"] for t in (await call(client, "traces"))["results"]] == [decision]
        assert isinstance(await call(client, "counterfactuals", decision_id=decision), dict)
        influence = await call(client, "memory_influence", min_decisions=1)
        assert first in {i["memory_id"] for i in influence["results"]}
        changes = await call(client, "salience_history", memory_id=first)
        assert [u["trace_id"] for u in changes["salience_history"]] == [decision]
        events = await call(client, "events", types=["outcome.observed"])
        assert len(events["results"]) == 1
        replayed = await call(client, "replay")
        assert replayed["matches_live"] is True and replayed["mismatches"] == {}
        assert isinstance((await call(client, "extract_patterns"))["patterns"], list)

        missing = await client.call_tool("retention", {"memory_id": "ep_missing"})
        assert missing.is_error
        assert "not_found" in missing.content[0].text  # type: ignore[union-attr]
