"""A procedure's status moves by evidence: draft -> active -> deprecated (issue 12).

Seed 001 chapter 14 defines the three statuses; ``ProcedureConfig`` says how many
runs and which success rates earn each. Every change is an event and a history entry.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ucma.config import ProcedureConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import ConfigError, NotFoundError
from ucma.types import ProcedureStatus

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


def _memory(path: Path, embedder: LocalEmbedder, **procedures: object) -> AsyncMemory:
    config = UCMAConfig(procedures=ProcedureConfig(**procedures))  # type: ignore[arg-type]
    return AsyncMemory(path, user_id="alice", embedder=embedder, config=config)


async def _run(memory: AsyncMemory, procedure_id: str, outcomes: list[bool]) -> list[str]:
    statuses = []
    for success in outcomes:
        procedure = await memory.record_procedure_outcome(procedure_id, success)
        statuses.append(procedure.status.value)
    return statuses


async def test_draft_becomes_active_after_enough_successful_runs(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with _memory(tmp_path / "m.db", local_embedder) as memory:
        proc = await memory.add_procedure(
            "Blue-green deploy", "Switch traffic after health checks pass", trigger_tags=["deploy"]
        )
        assert proc.status is ProcedureStatus.DRAFT
        # Four successes are not yet evidence (five runs needed), the fifth run decides.
        statuses = await _run(memory, proc.id, [True, True, False, True, True])
        assert statuses == ["draft"] * 4 + ["active"]
        stored = await memory.get(proc.id)
        assert stored.status is ProcedureStatus.ACTIVE
        [changed] = [h for h in await memory.history(proc.id) if h.event == "status_changed"]
        assert changed.details["from"] == "draft" and changed.details["to"] == "active"
        assert changed.details["execution_count"] == 5
        assert "0.80" in changed.details["reason"]
        events = await memory.events(types=["procedure.status_changed"])
        assert [(e.payload["memory_id"], e.payload["to"]) for e in events] == [(proc.id, "active")]
        assert len(await memory.events(types=["procedure.outcome_recorded"])) == 5


async def test_a_failing_procedure_is_deprecated_and_no_longer_found(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with _memory(tmp_path / "m.db", local_embedder) as memory:
        proc = await memory.add_procedure(
            "Deploy on Friday", "Push straight to production", trigger_tags=["deploy"]
        )
        statuses = await _run(memory, proc.id, [True] * 5 + [False] * 10)
        # Active at 5/5; stays active while the rate is between the bars (hysteresis);
        # deprecated once it falls below 0.3 (5 of 17 = 0.29).
        assert statuses[4] == "active"
        assert "deprecated" not in statuses
        statuses = await _run(memory, proc.id, [False, False])
        assert statuses == ["active", "deprecated"]
        assert await memory.find_procedures(["deploy"]) == []
        changes = [h.details["to"] for h in await memory.history(proc.id)]
        assert changes == ["active", "deprecated"]


async def test_a_mediocre_procedure_stays_draft(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with _memory(tmp_path / "m.db", local_embedder) as memory:
        proc = await memory.add_procedure("Rebase often", "Rebase the branch on main daily")
        statuses = await _run(memory, proc.id, [True, False] * 6)
        assert set(statuses) == {"draft"}
        assert await memory.events(types=["procedure.status_changed"]) == []


async def test_outcomes_of_decisions_move_the_status_too(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    async with _memory(tmp_path / "m.db", local_embedder, min_executions=2) as memory:
        proc = await memory.add_procedure("Warm the cache", "Prefetch the top pages after deploy")
        for _ in range(2):
            trace = await memory.decide([proc.id], summary="warmed the cache after deploy")
            await memory.outcome(trace.id, 0.8, "task_completed")
        stored = await memory.get(proc.id)
        assert (stored.execution_count, stored.status) == (2, ProcedureStatus.ACTIVE)
        [event] = await memory.events(types=["procedure.status_changed"])
        assert event.payload["to"] == "active"


async def test_thresholds_are_configurable_and_checked(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    with pytest.raises(ConfigError, match="deprecate_success_rate < activate_success_rate"):
        ProcedureConfig(activate_success_rate=0.3, deprecate_success_rate=0.5)
    with pytest.raises(ConfigError, match="min_executions"):
        ProcedureConfig(min_executions=0)
    loaded = UCMAConfig.from_dict({"procedures": {"min_executions": 3}})
    assert loaded.procedures.min_executions == 3
    async with _memory(tmp_path / "m.db", local_embedder, min_executions=1) as memory:
        proc = await memory.add_procedure("Ping on-call", "Page the on-call engineer")
        assert await _run(memory, proc.id, [False]) == ["deprecated"]
        # Evidence can bring it back: a recovered success rate makes it active again.
        statuses = await _run(memory, proc.id, [True] * 4)
        assert statuses == ["deprecated", "deprecated", "active", "active"]  # 1/2, 2/3, 3/4
        with pytest.raises(NotFoundError):
            await memory.record_procedure_outcome("proc_missing", True)
