"""Seed 003 R4 at its boundary, on a real SQLite file with the packaged model: a pair
that differs in the one word that matters stays two memories, a restatement merges.

"deploy to staging failed" and "deploy to production failed" are close in embedding
space (cosine about 0.83 with the packaged model) and are two different incidents;
"Deploy to staging failed." is the first one again."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ucma.config import ConsolidationConfig, EpisodicConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

STAGING = "deploy to staging failed"
PRODUCTION = "deploy to production failed"
RESTATED = "Deploy to staging failed."


def config(duplicate_similarity: float = EpisodicConfig().duplicate_similarity) -> UCMAConfig:
    return UCMAConfig(
        episodic=EpisodicConfig(duplicate_similarity=duplicate_similarity),
        consolidation=ConsolidationConfig(on_new_session="off"),
    )


def cosine(embedder: LocalEmbedder, a: str, b: str) -> float:
    first, second = np.asarray(embedder.embed_sync([a, b]), dtype=np.float64)
    return float(first @ second / (np.linalg.norm(first) * np.linalg.norm(second)))


async def episodes(memory: AsyncMemory) -> list[str]:
    return sorted(m.content for m in await memory.list(kind="episodic"))


async def test_staging_and_production_stay_apart_and_a_restatement_merges(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(
        tmp_path / "d.db", user_id="alice", embedder=local_embedder, config=config()
    ) as memory:
        staging = await memory.observe(STAGING)
        production = await memory.observe(PRODUCTION)
        restated = await memory.observe(RESTATED)
        assert production.merged_into is None and production.id != staging.id
        assert restated.merged_into == staging.id
        assert await episodes(memory) == sorted([STAGING, PRODUCTION])
        assert [h.event for h in await memory.history(staging.id)] == ["merged"]
        assert await memory.history(production.id) == []


async def test_the_same_holds_within_one_batch(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(
        tmp_path / "b.db", user_id="alice", embedder=local_embedder, config=config()
    ) as memory:
        results = await memory.observe_many([STAGING, PRODUCTION, RESTATED])
        assert [r.merged_into for r in results] == [None, None, results[0].id]
        assert await episodes(memory) == sorted([STAGING, PRODUCTION])


@pytest.mark.parametrize(
    ("margin", "stored"),
    [(0.005, sorted([STAGING, PRODUCTION])), (-0.005, [STAGING])],
    ids=["threshold-just-above-the-pair", "threshold-just-below-the-pair"],
)
async def test_the_threshold_is_the_boundary(
    tmp_path: Path, local_embedder: LocalEmbedder, margin: float, stored: list[str]
) -> None:
    """With the threshold just above the pair's similarity they stay two memories;
    just below it, the second is merged into the first."""
    similarity = cosine(local_embedder, STAGING, PRODUCTION)
    assert 0.7 < similarity < EpisodicConfig().duplicate_similarity
    async with AsyncMemory(
        tmp_path / "t.db",
        user_id="alice",
        embedder=local_embedder,
        config=config(similarity + margin),
    ) as memory:
        staging = await memory.observe(STAGING)
        production = await memory.observe(PRODUCTION)
        assert production.merged_into == (None if len(stored) == 2 else staging.id)
        assert await episodes(memory) == stored
