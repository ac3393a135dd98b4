"""A keyword match counts by how related the memory is by meaning (issue 12): a long
reply holds most common words of any question, and on BEAM such replies, unrelated
by meaning, outranked the user's own statement of what was asked about."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ucma.config import RetrievalConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

STATEMENT = (
    "Keeping my web application safe matters to me, but never at the cost of a smooth "
    "sign-in for users."
)
GARDEN = (
    "Tomatoes want six hours of sun, deep watering twice a week and a stake by midsummer; "
    "basil likes the same bed, while mint belongs in a pot of its own because it spreads. "
    "Compost in autumn, mulch in spring, and rotate the beans with the squash each year. "
    "Slugs come out after rain, so check the lettuce at dusk and keep the paths clear. "
    "Sweet peas climb best on string, and the roses need feeding after the first flush. "
) * 4
# The question's words, said of something else at the end of a long reply.
REPLY = GARDEN + (
    "Looking back over the features we listed, here are the steps I would suggest you take "
    "for the app's onboarding: improve the colour palette, take the welcome tour out of the "
    "first screen, suggest a dark theme, improve the icons, and take a look at the font sizes. "
    "Looking at the features list again, the steps for the settings page are similar: improve "
    "the spacing, suggest shortcuts, and take the rarely used toggles into a submenu."
)
OTHERS = [
    "The bakery on Elm Street sells rye bread on Tuesdays.",
    "My cousin plays the cello in a community orchestra.",
    "We painted the garden fence green last spring.",
]
QUESTION = (
    "I'm looking to improve the security features of my app. What steps would you suggest I take?"
)


async def _first(db: Path, embedder: LocalEmbedder, retrieval: RetrievalConfig) -> str:
    config = UCMAConfig(retrieval=retrieval)
    async with AsyncMemory(db, user_id="u", embedder=embedder, config=config) as mem:
        result = await mem.recall(QUESTION, limit=3)
        return result.hits[0].content


async def test_shared_words_in_an_unrelated_reply_do_not_outrank_the_statement(
    db_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(db_path, user_id="u", embedder=local_embedder) as mem:
        for text in OTHERS:
            await mem.observe(text, source="user", session_id="a")
        await mem.observe(STATEMENT, source="user", session_id="b")
        await mem.observe(REPLY, source="assistant", session_id="c")
    assert await _first(db_path, local_embedder, RetrievalConfig()) == STATEMENT
    # Counted whole, the reply's shared words outrank the statement's meaning.
    unscaled = dataclasses.replace(RetrievalConfig(), keyword_cosine_ramp=None)
    assert await _first(db_path, local_embedder, unscaled) == REPLY
