"""The engine's in-process state is bounded however many scopes callers name
(``LimitsConfig.max_scopes_in_memory``), and a scope whose state was dropped behaves as
after a restart: it recalls what it stored, a named session goes on where it was, and its
next observation without a session starts a new one."""

from __future__ import annotations

from pathlib import Path

import pytest

from ucma.config import ConsolidationConfig, LimitsConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.lifecycle.clock import SimulatedClock

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

CAP = 3
FACTS = [
    "The {agent} team deploys on Tuesdays.",
    "The {agent} team keeps its backups for nine days.",
]


def config() -> UCMAConfig:
    return UCMAConfig(
        limits=LimitsConfig(max_scopes_in_memory=CAP),
        consolidation=ConsolidationConfig(on_new_session="sync"),
    )


def scope_maps(memory: AsyncMemory) -> dict[str, int]:
    """Sizes of every map the engine and its storage keep by scope."""
    index = memory._storage._index  # type: ignore[union-attr]
    return {
        "working": len(memory._working),
        "sessions": len(memory._sessions),
        "last_episode": len(memory._last_episode),
        "names": len(memory._names),
        "instructions": len(memory._instructions),
        "cycle_locks": len(memory._cycle_locks),
        "consolidations": len(memory._consolidations),
        "vector_caches": len(index._scopes),
        "graphs": len(index._graphs),
    }


async def test_maps_stay_within_the_cap_and_every_scope_still_recalls(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    agents = [f"agent{i}" for i in range(4 * CAP)]
    async with AsyncMemory(
        tmp_path / "m.db", user_id="ana", embedder=local_embedder, config=config()
    ) as memory:
        first_sessions = {}
        for agent in agents:
            first_sessions[agent] = memory.session_id(agent_id=agent)
            for fact in FACTS:
                await memory.observe(fact.format(agent=agent), agent_id=agent)
            await memory.remember("When does the team deploy?", agent_id=agent)
            memory.working_memory(agent_id=agent)
            await memory.sleep(agent_id=agent)
            await memory.new_session(agent_id=agent)
            assert all(size <= CAP for size in scope_maps(memory).values()), scope_maps(memory)
        assert scope_maps(memory)["cycle_locks"] == 0
        # The first agents' state was dropped long ago; what they stored was not.
        for agent in agents:
            mine = await memory.remember(
                f"How long does the {agent} team keep backups?", agent_id=agent
            )
            assert mine[0].content == FACTS[1].format(agent=agent)
        # A dropped scope's next observation without a session opens a new one.
        assert memory.session_id(agent_id=agents[0]) != first_sessions[agents[0]]
        assert all(size <= CAP for size in scope_maps(memory).values())


async def test_a_named_session_goes_on_after_its_scope_was_dropped(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = SimulatedClock()
    async with AsyncMemory(
        tmp_path / "m.db", user_id="ana", embedder=local_embedder, config=config(), clock=clock
    ) as memory:
        before = await memory.observe(
            "I booked the train to Porto for Friday.", session_id="ses_trip"
        )
        for i in range(2 * CAP):  # other scopes push ana/default's state out
            await memory.observe(f"Note {i} about the garden shed.", agent_id=f"other{i}")
        assert ("ana", "ses_trip") not in {(s.user_id, k) for s, k in memory._last_episode}
        clock.advance(seconds=60)
        after = await memory.observe("The hotel in Porto is near the river.", session_id="ses_trip")
        linked = await memory.related(before.id, edge_types=["followed_by"], max_hops=1)
        assert [record.id for record, _, _ in linked] == [after.id]
