"""Issue 12: forgetting follows disuse since storing or last use, never the event's age.

Importing a conversation dated a year ago must not archive it at the next ``sleep()``
(it used to archive 2,291 of BEAM's 2,788 episodes); history left unused for months after
its import is still forgotten as before.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from ucma.config import ConsolidationConfig, EpisodicConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.lifecycle.clock import SimulatedClock

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

NOW = 1_760_000_000.0
DAY = 86_400.0
OFF = UCMAConfig(consolidation=ConsolidationConfig(on_new_session="off"))
CITIES = (
    "Lisbon", "Oslo", "Kyoto", "Quito", "Nairobi", "Tbilisi", "Hobart", "Tallinn", "Cusco",
    "Reykjavik", "Marrakesh", "Valparaiso", "Ljubljana", "Hanoi", "Bergen", "Zanzibar",
    "Krakow", "Tromso", "Cartagena", "Windhoek",
)  # fmt: skip
THINGS = (
    "a ceramic teapot", "a wool scarf", "a brass compass", "a jar of honey", "a linen shirt",
    "a carved spoon", "an old map", "a bag of coffee beans", "a leather notebook", "a kite",
)  # fmt: skip


def _history() -> list[tuple[str, str]]:
    """200 distinct trips a year old: (city, thing) pairs, one statement each."""
    return [
        (city, thing) for city, thing in itertools.islice(itertools.product(CITIES, THINGS), 200)
    ]


async def _import(memory: AsyncMemory) -> dict[tuple[str, str], str]:
    year_ago = NOW - 365 * DAY
    items = [
        {
            "content": f"On my trip to {city} I bought {thing} at the market there.",
            "timestamp": year_ago + n * 3600.0,
            "session_id": f"trip-{n // 20}",
        }
        for n, (city, thing) in enumerate(_history())
    ]
    results = await memory.observe_many(items)
    assert all(r.stored and r.merged_into is None for r in results)
    return {pair: r.id for pair, r in zip(_history(), results, strict=True)}


async def _live_ids(memory: AsyncMemory) -> set[str]:
    return {r.id for r in await memory.list(kind="episodic", limit=1000)}


async def test_history_imported_with_old_dates_survives_the_next_sleep(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = SimulatedClock(NOW)
    async with AsyncMemory(
        tmp_path / "import.db", user_id="u", embedder=local_embedder, clock=clock, config=OFF
    ) as memory:
        ids = await _import(memory)
        report = await memory.sleep()
        assert report.compress["archived"] == 0 and report.prune["archived"] == 0
        assert await _live_ids(memory) == set(ids.values())
        # Still searchable: each probe finds its trip among recall's top 10.
        for city, thing in [("Kyoto", "a kite"), ("Hobart", "a jar of honey"),
                            ("Windhoek", "an old map")]:  # fmt: skip
            result = await memory.recall(f"What did I buy in {city}?", limit=10)
            assert ids[(city, thing)] in [h.id for h in result.hits]
        # The event time is kept for ranking and time queries.
        record = await memory.get(ids[("Lisbon", "a ceramic teapot")])
        assert record.timestamp == pytest.approx(NOW - 365 * DAY)
        assert record.created_at == pytest.approx(NOW)


async def test_imported_history_left_unused_is_still_forgotten(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = SimulatedClock(NOW)
    async with AsyncMemory(
        tmp_path / "unused.db", user_id="u", embedder=local_embedder, clock=clock, config=OFF
    ) as memory:
        ids = await _import(memory)
        await memory.sleep()
        assert len(await _live_ids(memory)) == 200
        # Months of disuse since the import: the history goes, as a fresh one would.
        clock.advance(days=120)
        report = await memory.sleep()
        assert report.compress["archived"] + report.prune["archived"] == 200
        assert not await _live_ids(memory)
        archived = await memory.get(ids[("Kyoto", "a kite")])
        assert archived.archived_at == pytest.approx(clock.now())


async def test_forgetting_counts_disuse_from_storing_or_last_review(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    """The forgetting pass alone (compression off): a year-old event stored today is
    fresh, a review restarts its clock, and unreviewed ones go after weeks of disuse."""
    clock = SimulatedClock(NOW)
    prune_only = UCMAConfig(
        consolidation=ConsolidationConfig(on_new_session="off"),
        episodic=EpisodicConfig(short_term_ttl_hours=24.0 * 10_000),
    )
    async with AsyncMemory(
        tmp_path / "prune.db", user_id="u", embedder=local_embedder, clock=clock,
        config=prune_only,
    ) as memory:  # fmt: skip
        ids = await _import(memory)
        assert (await memory.sleep()).prune["archived"] == 0
        clock.advance(days=15)
        result = await memory.recall("What did I buy in Kyoto?", limit=10)
        reviewed = {h.id for h in result.hits}
        assert ids[("Kyoto", "a kite")] in reviewed
        clock.advance(days=15)
        report = await memory.sleep()
        live = await _live_ids(memory)
        assert reviewed <= live
        assert live == reviewed and report.prune["archived"] == 200 - len(reviewed)
