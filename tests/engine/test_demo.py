"""Seed 001's two-session JWT example on a real database with the packaged embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ucma.cli.main import app
from ucma.demo import CLOCK_SKEW_LEARNING, SESSION_1, run_demo
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.types import MemoryKind

pytestmark = pytest.mark.integration

CLOCK_SKEW_EPISODE = SESSION_1[1][0]


@pytest.mark.anyio
async def test_session_2_recalls_the_clock_skew_lesson(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with AsyncMemory(tmp_path / "demo.db", embedder=local_embedder) as memory:
        hits = await run_demo(memory)

    assert 1 <= len(hits) <= 5
    top = [(hit.kind, hit.content) for hit in hits[:3]]
    assert (MemoryKind.LEARNING, CLOCK_SKEW_LEARNING) in top, top
    assert (MemoryKind.EPISODIC, CLOCK_SKEW_EPISODE) in top, top
    # Facts read from session 1 restate its episodes: where both are found, the
    # episode (what was said, whole) stands in the fact's place, never both.
    shown = {hit.id for hit in hits}
    for hit in hits:
        if hit.kind is MemoryKind.SEMANTIC:
            assert not shown & set(hit.memory.source_episode_ids), hits
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)


def test_ucma_demo_command(tmp_path: Path) -> None:
    runner = CliRunner()
    database = tmp_path / "demo.db"
    result = runner.invoke(app, ["demo", "--db", str(database), "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["database"] == str(database)
    top = [(hit["kind"], hit["content"]) for hit in report["results"][:3]]
    assert ("learning", CLOCK_SKEW_LEARNING) in top, top

    table = runner.invoke(app, ["demo"], env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.stderr
    assert "What session 2 remembers" in table.stdout
    assert "clock skew" in table.stdout
