"""One tenant's bad record never stops maintenance for the others: ``sleep_all``, the
gardener and the server's maintenance round go on past a failing scope, report it, and
try it again on the next round."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ucma.config import ConsolidationConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.lifecycle.clock import SimulatedClock
from ucma.lifecycle.consolidation import PHASES
from ucma.lifecycle.gardener import maintain

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

T0 = 1_700_000_000.0
OFF = UCMAConfig(consolidation=ConsolidationConfig(on_new_session="off"))


def set_metadata(path: Path, user_id: str, text: str) -> None:
    """Write a row the way a damaged file or an old bug would leave it."""
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memories SET metadata = ? WHERE user_id = ?", (text, user_id))


async def populated(path: Path, embedder: LocalEmbedder, clock: SimulatedClock) -> AsyncMemory:
    memory = AsyncMemory(path, embedder=embedder, clock=clock, config=OFF)
    await memory.__aenter__()
    for user in ("alice", "bob", "carol"):  # bob sorts between the other two
        await memory.observe_many(
            [f"Remember that {user} lives in Pune.", f"{user} prefers tea over coffee."],
            user_id=user,
        )
    clock.advance(days=3)  # the episodes are past their short-term lifetime (48 hours)
    return memory


async def test_sleep_all_goes_on_past_a_scope_whose_cycle_fails(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    path = tmp_path / "m.db"
    memory = await populated(path, local_embedder, SimulatedClock(T0))
    try:
        set_metadata(path, "bob", "{not json")
        reports = await memory.sleep_all()
        by_user = {r.user_id: r for r in reports}
        assert list(by_user) == ["alice", "bob", "carol"]
        assert by_user["bob"].error is not None and "JSONDecodeError" in by_user["bob"].error
        assert by_user["bob"].to_dict()["error"] == by_user["bob"].error
        for user in ("alice", "carol"):
            assert by_user[user].phases == list(PHASES) and by_user[user].error is None

        # Each cycle is recorded, the failed one with its error.
        [failed] = await memory.sleep_runs(user_id="bob")
        assert (failed.trigger, failed.error) == ("all_scopes", by_user["bob"].error)
        assert list(failed.phases) == by_user["bob"].phases
        [carols] = await memory.sleep_runs(user_id="carol")
        assert carols.error is None and carols.changes["compress"] == by_user["carol"].compress

        # A single scope's sleep still raises: the caller asked for that scope; the
        # failed cycle is recorded all the same.
        with pytest.raises(ValueError):
            await memory.sleep(user_id="bob")
        latest = (await memory.sleep_runs(user_id="bob", limit=1))[0]
        assert latest.trigger == "request" and "JSONDecodeError" in (latest.error or "")

        # Repaired, the scope is consolidated on the next run.
        set_metadata(path, "bob", "{}")
        again = {r.user_id: r for r in await memory.sleep_all()}
        assert again["bob"].error is None and again["bob"].phases == list(PHASES)
    finally:
        await memory.__aexit__(None, None, None)


async def test_a_maintenance_round_reports_the_failed_scope_and_retries_it(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    path = tmp_path / "m.db"
    clock = SimulatedClock(T0)
    memory = await populated(path, local_embedder, clock)
    try:
        set_metadata(path, "bob", "{not json")
        first = await maintain(memory)
        assert first.error is None
        assert first.failed_scopes == ["bob/default"]
        gardener = first.gardener
        # Jobs that read bob's records failed for bob alone and ran for the others.
        assert gardener.failed_scopes and all(
            set(scopes) == {"bob/default"} for scopes in gardener.failed_scopes.values()
        )
        assert set(gardener.failed) == set(gardener.failed_scopes)
        assert all("1 of 3 scopes failed" in text for text in gardener.failed.values())
        carol = {r.user_id: r for r in first.sleep}["carol"]
        assert carol.phases == list(PHASES)

        # The failed jobs stay due: the next round runs them again (and only them).
        set_metadata(path, "bob", "{}")
        second = await maintain(memory)
        assert second.failed_scopes == [] and second.error is None
        assert set(second.gardener.ran) == set(gardener.failed)
        assert all(summary["scopes"] == 3 for summary in second.gardener.ran.values())
    finally:
        await memory.__aexit__(None, None, None)
