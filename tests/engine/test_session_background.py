"""``new_session()`` returns at once and consolidates in the background (issue 12).

The fact extractor below waits on an event, so each test decides exactly when the
background cycle may proceed: no sleeps, no timing assumptions.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from ucma.config import ConsolidationConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import ProviderError
from ucma.lifecycle.clock import SimulatedClock
from ucma.providers.base import ExtractedFact, Providers
from ucma.providers.heuristics import ExtractiveSummarizer, RuleFactExtractor

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

T0 = 1_700_000_000.0


class GatedExtractor:
    """The rule extractor, held at ``gate`` until the test opens it."""

    def __init__(self, *, fail: bool = False) -> None:
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()
        self.seen: list[str] = []
        self.fail = fail
        self._rules = RuleFactExtractor()

    async def extract_facts(
        self, content: str, *, speaker: str = "user", reference_time: float | None = None
    ) -> list[ExtractedFact]:
        self.seen.append(content)
        self.entered.set()
        await self.gate.wait()
        if self.fail:
            raise ProviderError("the extractor's model is unavailable")
        return await self._rules.extract_facts(
            content, speaker=speaker, reference_time=reference_time
        )


def _memory(path: Path, embedder: LocalEmbedder, extractor: GatedExtractor) -> AsyncMemory:
    return AsyncMemory(
        path,
        user_id="alice",
        embedder=embedder,
        clock=SimulatedClock(T0),
        providers=Providers(ExtractiveSummarizer(), extractor),
    )


def test_background_is_the_default() -> None:
    assert ConsolidationConfig().on_new_session == "background"
    assert UCMAConfig().consolidation.on_new_session == "background"


async def test_new_session_returns_before_consolidation_finishes(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    extractor = GatedExtractor()
    async with _memory(tmp_path / "m.db", local_embedder, extractor) as memory:
        await memory.observe("Remember that Omar lives in Cairo.")
        first = memory.session_id()
        second = await memory.new_session()
        assert second != first and memory.session_id() == second
        task = memory.consolidation_task
        assert task is not None and not task.done()
        await extractor.entered.wait()
        # observe already read the statement's claim with the rules; the cycle's
        # extractor is still held at its gate, so the cycle is not done.
        assert not task.done()
        extractor.gate.set()
        report = await task
        assert report is not None and report.phases[-1] == "clean"
        facts = await memory.facts_about("Omar")
        assert [(f.predicate, f.object) for f in facts] == [("lives_in", "Cairo")]


async def test_a_second_new_session_during_a_cycle_is_coalesced_not_lost(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    extractor = GatedExtractor()
    async with _memory(tmp_path / "m.db", local_embedder, extractor) as memory:
        await memory.observe("Remember that Omar lives in Cairo.")
        await memory.new_session()
        task = memory.consolidation_task
        await extractor.entered.wait()
        await memory.observe("Remember that Priya lives in Lisbon.")
        await memory.new_session()
        assert memory.consolidation_task is task  # no second task for the scope
        extractor.gate.set()
        await task
        # The rerun after the first cycle abstracted the episode stored during it.
        assert extractor.seen == [
            "Remember that Omar lives in Cairo.",
            "Remember that Priya lives in Lisbon.",
        ]
        assert [f.object for f in await memory.facts_about("Priya")] == ["Lisbon"]


async def test_sleep_waits_for_the_background_cycle_of_its_scope(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    extractor = GatedExtractor()
    async with _memory(tmp_path / "m.db", local_embedder, extractor) as memory:
        await memory.observe("Remember that Omar lives in Cairo.")
        await memory.new_session()
        task = memory.consolidation_task
        assert task is not None
        await extractor.entered.wait()
        sleeping = asyncio.ensure_future(memory.sleep())
        extractor.gate.set()
        report = await sleeping
        assert task.done()  # the manual cycle ran after the background one ...
        assert report.abstract["episodes"] == 0  # ... so it found nothing left to do
        assert extractor.seen == ["Remember that Omar lives in Cairo."]


async def test_a_failed_background_cycle_is_logged_and_raised_when_awaited(
    tmp_path: Path, local_embedder: LocalEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    extractor = GatedExtractor(fail=True)
    extractor.gate.set()
    with caplog.at_level(logging.ERROR, logger="ucma.engine.lifecycle"):
        async with _memory(tmp_path / "m.db", local_embedder, extractor) as memory:
            await memory.observe("Remember that Omar lives in Cairo.")
            await memory.new_session()
            task = memory.consolidation_task
            assert task is not None
            with pytest.raises(ProviderError, match="unavailable"):
                await task
    [logged] = [r for r in caplog.records if "background consolidation" in r.getMessage()]
    assert "failed" in logged.getMessage() and logged.exc_info is not None


async def test_close_lets_a_running_cycle_stop_cleanly(
    tmp_path: Path, local_embedder: LocalEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    extractor = GatedExtractor()
    memory = _memory(tmp_path / "m.db", local_embedder, extractor)
    await memory.observe("Remember that Omar lives in Cairo.")
    await memory.new_session()
    task = memory.consolidation_task
    assert task is not None
    await extractor.entered.wait()
    # close() is scheduled before the extractor wakes (asyncio runs ready callbacks in
    # order), so it sets the interrupt while the abstract phase is still in progress.
    closing = asyncio.ensure_future(memory.close())
    extractor.gate.set()
    await closing
    assert task.done() and not task.cancelled()
    report = task.result()
    assert report is not None and report.interrupted
    assert report.phases == ["compress", "abstract"]  # stopped after the phase it was in
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    # What the cycle committed is there when the database is opened again.
    async with AsyncMemory(tmp_path / "m.db", user_id="alice", embedder=local_embedder) as again:
        assert [f.object for f in await again.facts_about("Omar")] == ["Cairo"]


async def test_close_cancels_a_cycle_whose_provider_never_answers(
    tmp_path: Path, local_embedder: LocalEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    extractor = GatedExtractor()  # its gate never opens
    memory = AsyncMemory(
        tmp_path / "m.db",
        user_id="alice",
        embedder=local_embedder,
        clock=SimulatedClock(T0),
        providers=Providers(ExtractiveSummarizer(), extractor),
        config=UCMAConfig(consolidation=ConsolidationConfig(close_timeout_seconds=0.0)),
    )
    kept = await memory.observe("Remember that Omar lives in Cairo.")
    await memory.new_session()
    task = memory.consolidation_task
    assert task is not None
    await extractor.entered.wait()
    await memory.close()
    assert task.cancelled()
    assert any("did not stop in time" in r.getMessage() for r in caplog.records)
    async with AsyncMemory(tmp_path / "m.db", user_id="alice", embedder=local_embedder) as again:
        assert (await again.get(kept.id)).content == "Remember that Omar lives in Cairo."
