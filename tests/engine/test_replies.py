"""What the user said comes before the assistant's reply to it (issue 12): a long reply
restating the user's message outranked the message itself, which holds the record."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ucma.config import RetrievalConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

CHAT = [
    ("user", "My flight to Oslo leaves at 6:40 on Friday and I still need to pack."),
    (
        "assistant",
        "For an early flight to Oslo on Friday, pack the night before: a warm coat, layers, "
        "gloves, your passport, chargers and a small bag of snacks for the flight. Check in "
        "online the evening before the flight and set two alarms so you reach the airport in "
        "time for a 6:40 departure; Oslo airport trains run early.",
    ),
    ("user", "I also want to see the Munch museum while I am there."),
    (
        "assistant",
        "The Munch museum is by the harbour; book a timed ticket online and plan two hours.",
    ),
]
QUESTION = "What time is my Oslo flight?"


async def _top_sources(db: Path, embedder: LocalEmbedder, question: str, **retrieval) -> list[str]:
    config = UCMAConfig(retrieval=dataclasses.replace(RetrievalConfig(), **retrieval))
    async with AsyncMemory(db, user_id="u", embedder=embedder, config=config) as mem:
        result = await mem.recall(question, limit=5)
        scores = [hit.score for hit in result.hits]
        assert scores == sorted(scores, reverse=True)
        return [hit.memory.source for hit in result.hits]


async def test_the_users_message_comes_before_the_reply_restating_it(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder) as mem:
        for source, text in CHAT:
            await mem.observe(text, source=source, session_id="trip")
    pair = await _top_sources(db_path, local_embedder, QUESTION, replies_after_others=False)
    assert pair[:2] == ["user", "assistant"]
    # Ranked by match alone, the longer reply leads.
    plain = await _top_sources(
        db_path,
        local_embedder,
        QUESTION,
        prompts_before_replies=False,
        replies_after_others=False,
    )
    assert plain[:2] == ["assistant", "user"]


async def test_a_reply_restating_a_found_message_goes_below_the_other_hits(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder) as mem:
        for source, text in CHAT:
            await mem.observe(text, source=source, session_id="trip")
    sources = await _top_sources(db_path, local_embedder, QUESTION)
    assert sources[0] == "user" and "user" in sources[1:]
    assert sources.index("assistant") > sources.index("user", 1)
    # Asked what the assistant said, its reply keeps its place after the message.
    asked = "What did you tell me to pack for my Oslo flight?"
    assert (await _top_sources(db_path, local_embedder, asked))[:2] == ["user", "assistant"]
    # Asked for advice anew, the reply is still what the message said at length.
    request = "How would you suggest I pack for my Oslo flight?"
    sources = await _top_sources(db_path, local_embedder, request)
    assert sources.index("assistant") > sources.index("user", 1)


async def test_a_short_reply_saying_something_new_keeps_its_place(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder) as mem:
        await mem.observe("The billing service deploy key rotates every 90 days.")
        await mem.observe("Deploys are frozen on Fridays.", source="assistant")
        for line in [
            "The deploy pipeline runs on GitHub Actions.",
            "Staging deploys need one code review.",
            "The release notes go out on Mondays.",
        ]:
            await mem.observe(line)
        hits = (await mem.recall("When is the deploy freeze?", limit=2)).hits
    assert "Deploys are frozen on Fridays." in [h.content for h in hits]
