"""The server's lifespan runs the same maintenance as ``ucma sleep`` + ``ucma gardener run``."""

from __future__ import annotations

import asyncio
import logging

import pytest

from ucma.config import RetrievalConfig, UCMAConfig
from ucma.engine import AsyncMemory
from ucma.providers.base import ExtractedFact, Providers
from ucma.providers.heuristics import ExtractiveSummarizer
from ucma.server import create_app

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


async def test_lifespan_runs_sleep_and_gardener(memory: AsyncMemory) -> None:
    await memory.observe("Remember that Ravi lives in Pune.")
    app = create_app(memory)
    async with app.router.lifespan_context(app):
        for _ in range(200):
            if await memory.facts_about("Ravi"):
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)
    assert [f.object for f in await memory.facts_about("Ravi")] == ["Pune"]
    # The scheduler already ran every gardener job: none is due now.
    report = await memory.run_gardener()
    assert not report.ran and set(report.skipped.values()) == {"not due"}


class RecordingExtractor:
    """A fact extractor other than the rules: sleep reads every new episode with it."""

    def __init__(self) -> None:
        self.read: list[str] = []

    async def extract_facts(self, content: str, **_: object) -> list[ExtractedFact]:
        self.read.append(content)
        return []


async def test_maintenance_can_be_turned_off(db_path, local_embedder) -> None:
    # observe itself writes the facts the rules read ("Ravi lives in Pune"), so a
    # sleep shows in what it does beyond them: it hands new episodes to a
    # configured extractor, and the gardener's jobs stop being due.
    extractor = RecordingExtractor()
    providers = Providers(ExtractiveSummarizer(), extractor)
    async with AsyncMemory(
        db_path, user_id="alice", embedder=local_embedder, providers=providers
    ) as memory:
        await memory.observe("Remember that Ravi lives in Pune.")
        app = create_app(memory, maintenance=False)
        async with app.router.lifespan_context(app):
            await asyncio.sleep(0.1)
        assert extractor.read == []  # no sleep ran
        report = await memory.run_gardener()  # nor any gardener job: all are due
        assert report.ran and "not due" not in report.skipped.values()


async def test_lifespan_prepares_the_search_of_large_scopes(
    db_path, local_embedder, caplog
) -> None:
    config = UCMAConfig(retrieval=RetrievalConfig(ann_threshold=40))
    caplog.set_level(logging.INFO, logger="ucma.storage.index.hnsw")
    async with AsyncMemory(db_path, embedder=local_embedder, config=config) as memory:
        await memory.observe_many(
            [f"Routine log line number {i} from the night shift." for i in range(60)],
            user_id="big",
        )
        await memory.observe("Ravi lives in Pune.", user_id="small")
        app = create_app(memory, maintenance=False)
        async with app.router.lifespan_context(app):
            for _ in range(200):  # nothing here searches: the lifespan builds it
                if any("HNSW index" in r.getMessage() for r in caplog.records):
                    break
                await asyncio.sleep(0.05)
        built = [r.getMessage() for r in caplog.records if "HNSW index" in r.getMessage()]
        assert len(built) == 1 and "user_id='big'" in built[0]
        status = await memory.prepare_search(user_id="big", wait=False)
        assert status["graph_rows"] == status["live_rows"] >= 40
        assert (await memory.prepare_search(user_id="small", wait=False))["graph_rows"] == 0
        assert await memory.prepare_large_scopes() == [
            {"user_id": "big", "agent_id": "default", **status}
        ]
