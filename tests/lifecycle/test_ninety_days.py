"""Done-when 1: ninety simulated days through the engine, with the gardener on schedule.

The two level-1 memories are reminders: a statement of a lasting attribute ("the spare
key is under the flowerpot") is read as a fact and decays at level 3."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ucma.config import ConsolidationConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import NotFoundError
from ucma.lifecycle.clock import SimulatedClock
from ucma.memory.retention import DECAY_RATES
from ucma.types import Scope

pytestmark = [pytest.mark.anyio, pytest.mark.integration, pytest.mark.slow]

T0 = 1_700_000_000.0
REINFORCED = "Remember to water the basil on the balcony before the heatwave."
UNREINFORCED = "Remember to ask the dentist about the loose filling next time."
LEVEL_2 = "Remember that I am working on the new budget project with the finance team."
LEVEL_3 = "Remember that I usually take the early train to the office on Mondays."
ACTIVITIES = ("walked", "cycled", "swam", "rowed")


def _decay(start: float, end: float) -> float:
    return 1.0 - end / start


async def test_ninety_days_of_decay_reinforcement_archive_and_purge(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = SimulatedClock(T0)
    config = UCMAConfig(consolidation=ConsolidationConfig(on_new_session="off"))
    async with AsyncMemory(
        tmp_path / "ninety.db", user_id="alice", embedder=local_embedder, clock=clock, config=config
    ) as memory:
        ids = {}
        for name, text in (
            ("reinforced", REINFORCED),
            ("unreinforced", UNREINFORCED),
            ("level2", LEVEL_2),
            ("level3", LEVEL_3),
        ):
            ids[name] = (await memory.observe(text)).id
        identity = await memory.assert_fact(
            "alice", "prefers", "green tea", content="Alice always prefers green tea."
        )
        ids["level4"] = identity.id
        levels = {name: (await memory.get(i)).temporal_level for name, i in ids.items()}
        assert levels == {
            "reinforced": 1,
            "unreinforced": 1,
            "level2": 2,
            "level3": 3,
            "level4": 4,
        }
        # Outcomes drove the identity memory's salience to the floor: R21 would prune it,
        # but level 4 is never pruned automatically.
        storage = memory._storage
        assert storage is not None
        storage.memories.set_salience(
            Scope("alice"), identity.id, base_salience=0.02, outcome_adjustment=0.0
        )

        start = {name: await memory.retention(i) for name, i in ids.items()}
        measured: dict[int, float] = {}
        sizes = []
        archived_seen = False
        for day in range(1, 91):
            clock.advance(days=1)
            await memory.observe_many(
                [
                    f"On day {day} I {ACTIVITIES[day % 4]} {day * 3 + k} laps before lunch."
                    for k in range(3)
                ]
            )
            report = await memory.run_gardener()
            assert not report.failed, report.failed
            if day == 1:
                now = await memory.retention(ids["unreinforced"])
                measured[1] = _decay(start["unreinforced"], now)
            if day == 7:
                measured[2] = _decay(start["level2"], await memory.retention(ids["level2"]))
            if day == 30:
                measured[3] = _decay(start["level3"], await memory.retention(ids["level3"]))
            if day == 90:
                ninety = _decay(start["level4"], await memory.retention(ids["level4"]))
                measured[4] = 1.0 - (1.0 - ninety) ** (365.0 / 90.0)  # per year
            if day % 10 == 0:
                hits = await memory.remember(
                    "when should the basil be watered", limit=1, kinds=["episodic"]
                )
                assert [h.id for h in hits] == [ids["reinforced"]]
            stats = await memory.stats()
            sizes.append(sum(stats["memories"].values()))
            unreinforced = await _record_or_none(memory, ids["unreinforced"])
            archived = unreinforced is not None and unreinforced.archived_at is not None
            if archived and not archived_seen:
                archived_seen = True
                hits = await memory.remember("what to ask the dentist", limit=10)
                assert ids["unreinforced"] not in {h.id for h in hits}
                export = tmp_path / "export.jsonl"
                await memory.export_jsonl(export)
                assert ids["unreinforced"] in export.read_text()
                lines = [json.loads(line) for line in export.read_text().splitlines()]
                assert any(ids["unreinforced"] in json.dumps(line) for line in lines)

        # Per-level decay within 10 % of seed 003 R19.
        for level, (_, rate) in DECAY_RATES.items():
            assert measured[level] == pytest.approx(rate, rel=0.10), (level, measured)

        # The reinforced twin outlived the unreinforced one, which was archived
        # (absent from recall, present in export) and purged after 30 days.
        assert archived_seen
        assert (await memory.get(ids["reinforced"])).archived_at is None
        with pytest.raises(NotFoundError):
            await memory.get(ids["unreinforced"])
        events = [h.event for h in await memory.history(ids["unreinforced"])]
        assert events[-2:] == ["archived", "purged"]
        archived_at = (await memory.history(ids["unreinforced"]))[-2].at
        purged_at = (await memory.history(ids["unreinforced"]))[-1].at
        assert purged_at - archived_at >= 30 * 86_400.0

        # Level 4 never pruned, even with salience below R21's threshold.
        assert (await memory.get(ids["level4"])).archived_at is None
        dry = await memory.forget(dry_run=True)
        assert ids["level4"] not in {v.memory_id for v in dry.archived}

        # The store stays bounded: the last month is no bigger than the first.
        assert max(sizes[60:]) <= max(sizes[:30]) + 10, sizes


async def _record_or_none(memory: AsyncMemory, memory_id: str):
    try:
        return await memory.get(memory_id)
    except NotFoundError:
        return None
