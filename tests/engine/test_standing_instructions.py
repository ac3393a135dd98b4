"""Standing instructions come back for the requests they govern (issue 12): "Whenever we
talk about travel plans, list every price in euros ..." is found for "Could you sketch
a three-day itinerary for Porto?", which shares none of its words, through observe and
recall alone."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ucma.config import RetrievalConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

INSTRUCTION = (
    "Whenever we talk about travel plans, list every price in euros and round totals to "
    "whole numbers, since my card is billed in euros."
)
REQUESTS = [
    "Can you plan a trip to Lisbon for me?",
    "Could you sketch a three-day itinerary for Porto?",
    "What would a long weekend in Seville look like?",
]
CHAT = [
    ("user", "I booked the dentist for Thursday at nine."),
    (
        "assistant",
        "Here is a packing list for a weekend away: comfortable shoes, a light jacket, "
        "a phone charger, an umbrella, your passport and a reusable water bottle.",
    ),
    ("user", "My sister Ines is visiting in May and loves Italian food."),
    (
        "assistant",
        "For a weekend in a city, plan one museum, one long walk and one good dinner a "
        "day; book popular sights ahead and keep an evening free.",
    ),
    ("user", "The quarterly report is due on the 30th."),
    (
        "assistant",
        "A weekend itinerary works best with the hotel near the old town, so you can "
        "walk to dinner and back without a taxi.",
    ),
]


async def _store(memory: AsyncMemory, instruction_last: bool = False) -> str:
    instruction_id = ""
    turns = [*CHAT, ("user", INSTRUCTION)] if instruction_last else [("user", INSTRUCTION), *CHAT]
    for source, text in turns:
        observed = await memory.observe(text, source=source)
        if text == INSTRUCTION:
            instruction_id = observed.id
    return instruction_id


def _config(directives: bool) -> UCMAConfig:
    return UCMAConfig(
        retrieval=dataclasses.replace(RetrievalConfig(), directive_conditions=directives)
    )


async def _ranks(
    db: Path, embedder: LocalEmbedder, instruction: str, directives: bool
) -> list[int]:
    """The instruction's rank for each request (10 when it is not in the top 10)."""
    ranks = []
    async with AsyncMemory(db, user_id="u", embedder=embedder, config=_config(directives)) as mem:
        for request in REQUESTS:
            ids = [hit.id for hit in (await mem.recall(request, limit=10)).hits]
            ranks.append(ids.index(instruction) if instruction in ids else 10)
    return ranks


async def test_an_instruction_comes_back_for_the_requests_it_governs(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder) as mem:
        instruction = await _store(mem)
    # Read by what it is about ("travel plans"), the instruction ranks higher for every
    # request; read by its words alone (prices, euros), the travel advice outranks it.
    read = await _ranks(db_path, local_embedder, instruction, directives=True)
    unread = await _ranks(db_path, local_embedder, instruction, directives=False)
    assert read[0] == 0
    assert all(with_ < without for with_, without in zip(read, unread, strict=True)), (read, unread)


async def test_an_instruction_observed_after_the_first_recall_counts_too(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder) as mem:
        await mem.observe("I booked the dentist for Thursday at nine.")
        await mem.recall(REQUESTS[0])  # reads the scope's instructions: none yet
        instruction = await _store(mem, instruction_last=True)
        result = await mem.recall(REQUESTS[0], limit=10)
        assert result.hits[0].id == instruction
