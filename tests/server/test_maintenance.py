"""The server's lifespan runs the same maintenance as ``ucma sleep`` + ``ucma gardener run``."""

from __future__ import annotations

import asyncio

import pytest

from ucma.engine import AsyncMemory
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


async def test_maintenance_can_be_turned_off(memory: AsyncMemory) -> None:
    await memory.observe("Remember that Ravi lives in Pune.")
    app = create_app(memory, maintenance=False)
    async with app.router.lifespan_context(app):
        await asyncio.sleep(0.1)
    assert await memory.facts_about("Ravi") == []
