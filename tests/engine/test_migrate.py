"""``ucma.storage.migrate``: a store copied into another database and back holds the
same export of every scope (line for line, ordering aside), the same events (ids,
positions, seqs, payloads), API keys and cursors, also when each leg is interrupted
(between batches, and inside one) and resumed. The middle store is the ``database``
fixture's: a SQLite file, or PostgreSQL under ``make test-postgres``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from tests.engine.test_exchange_round_trip import populate as populate_scope

from ucma.config import PrivacyConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import StorageError, TargetNotEmptyError, ValidationError
from ucma.events.log import Event
from ucma.lifecycle.clock import SimulatedClock
from ucma.privacy.vault import default_key_path
from ucma.providers.base import Providers
from ucma.storage import open_storage, parse_location
from ucma.storage.migrate import Copying, copy_store, copying_for, migrate, source_name
from ucma.types import Scope

pytestmark = pytest.mark.anyio

VAULT_KEY = Fernet.generate_key().decode()
SCOPES = [Scope("maya", "default"), Scope("maya", "ops"), Scope("rui", "default")]


def config() -> UCMAConfig:
    """Every store of a migration opens with the source's vault key."""
    return UCMAConfig(privacy=PrivacyConfig(vault_key=VAULT_KEY))


async def populate(memory: AsyncMemory, clock: SimulatedClock) -> None:
    """Records of every kind in three scopes, with what hangs off them: the exchange
    round trip's scope (``populate_scope``: episodes, facts with conflicts, procedures,
    strategies, opinions, lessons, a decision with its outcome, edges, graph
    importance, vault entries), then goals, the world and self models, a duplicate,
    an archived memory, a sleep, two more scopes and API keys."""
    ids = await populate_scope(memory, clock)
    await memory.observe("I love the trams but the hills are brutal on my bike.")  # again
    await memory.add_goal("Get Portuguese to B1 by December", priority=0.8)
    await memory.observe_transition("press deploy", "site is down", context={"canary": False})
    await memory.record_competence("sql queries", True, predicted=0.6)
    await memory.archive(ids["procedure"])
    await memory.sleep()
    gone = await memory.observe("Zoltan dropped by to say hello.", source="Zoltan")
    await memory.delete(gone.id)  # its speaker stays a known participant
    await memory.observe("Maya booked a window seat to Porto.", agent_id="ops")
    await memory.learn("Porto trains leave from Campanha.", agent_id="ops")
    await memory.observe("Rui teaches on Tuesdays and Thursdays.", user_id="rui")
    await memory.create_key("maya", label="laptop")
    revoked, _ = await memory.create_key("rui")
    await memory.revoke_key(revoked.id)


class SleepModel:
    """Stands for a language model that reads episodes at sleep: observe then leaves
    them waiting for the next sleep (not abstracted), which no test here runs."""

    async def summarize(self, *args: object, **kwargs: object) -> str:
        raise AssertionError("no sleep runs here")

    async def extract_facts(self, *args: object, **kwargs: object) -> list[object]:
        raise AssertionError("no sleep runs here")


async def snapshot(database: str | Path, embedder: LocalEmbedder) -> dict[str, Any]:
    """What must survive a migration: each scope's export lines (sorted), its events,
    and the API keys."""
    found: dict[str, Any] = {}
    async with AsyncMemory(database, config=config(), embedder=embedder) as memory:
        for scope in SCOPES:
            lines = [
                line
                async for line in memory.export_lines(
                    user_id=scope.user_id, agent_id=scope.agent_id
                )
            ]
            events = await memory.events(
                limit=100_000, user_id=scope.user_id, agent_id=scope.agent_id
            )
            found[f"{scope.user_id}/{scope.agent_id}"] = {
                "export": sorted(lines),
                "events": [e.to_dict() for e in events],
            }
        found["keys"] = [asdict(k) for k in await memory.list_keys(include_revoked=True)]
    with open_storage(database, dimension=384) as storage:  # what no export carries
        for scope in SCOPES:
            ids = [r.id for r in storage.memories.list(scope, limit=1000, include_archived=True)]
            found[f"{scope.user_id}/{scope.agent_id}"]["beside"] = {
                "vault": storage.vault.entries(scope),
                "sleep_runs": storage.lifecycle.sleep_runs(scope, limit=100),
                "duplicates": storage.lifecycle.duplicates(scope, limit=100),
                "sources": {i: storage.lifecycle.sources(scope, i) for i in ids},
                "waiting": storage.lifecycle.unabstracted_episodes(scope, limit=1000),
                "participants": storage.episodes.participants(scope),
            }
        found["vault_key"] = storage.vault.key_fingerprint()
    return found


class Interrupt(Exception):
    """Stands for Ctrl-C or a crash in the middle of a migration."""


def interrupted_after(units: int) -> Any:
    """A progress callback that stops the run once ``units`` are done."""

    def progress(done: int, total: int) -> None:
        assert done <= total
        if done >= units:
            raise Interrupt

    return progress


class FailingEvents:
    """A target's ``Copying`` whose second batch of events fails after it is written:
    its transaction must leave nothing behind."""

    def __init__(self, inner: Copying) -> None:
        self.inner = inner
        self.calls = 0

    def unlogged(self) -> AbstractContextManager[None]:
        return self.inner.unlogged()

    def put_events(self, events: Sequence[Event]) -> None:
        self.inner.put_events(events)
        self.calls += 1
        if self.calls == 2:
            raise Interrupt

    def cursors(self) -> list[tuple[str, int, float]]:
        return self.inner.cursors()

    def put_participants(self, scope: Scope, names: Sequence[str]) -> None:
        self.inner.put_participants(scope, names)


def migrate_interrupted(source: str, target: str) -> None:
    """Migrate in small batches, stopped twice (between batches, inside one), then
    resumed to the end."""
    with pytest.raises(Interrupt):
        migrate(source, target, dimension=384, batch=4, progress=interrupted_after(9))
    src, dst = parse_location(source), parse_location(target)
    with (
        open_storage(src, dimension=384) as a,
        open_storage(dst, dimension=384) as b,
        pytest.raises(Interrupt),
    ):
        copy_store(
            a,
            b,
            source_copying=copying_for(src, a),
            target_copying=FailingEvents(copying_for(dst, b)),
            name=source_name(src),
            batch=4,
        )
    report = migrate(source, target, dimension=384, batch=4)
    assert report.resumed
    assert report.scopes == len(SCOPES)


def url(database: str | Path) -> str:
    return str(database)


async def test_a_round_trip_through_another_database_keeps_every_record_and_event(
    tmp_path: Path, database: str | Path, local_embedder: LocalEmbedder
) -> None:
    clock = SimulatedClock()
    source = tmp_path / "source.db"
    async with AsyncMemory(
        source, user_id="maya", config=config(), embedder=local_embedder, clock=clock
    ) as memory:
        await populate(memory, clock)
    model = SleepModel()
    async with AsyncMemory(
        source,
        config=config(),
        embedder=local_embedder,
        clock=clock,
        providers=Providers(summarizer=model, fact_extractor=model),
    ) as memory:
        await memory.observe("Maya is flying to Porto on Friday.", user_id="maya")
    with open_storage(source, dimension=384) as storage:
        storage.events.set_cursor("nats", 5, 1_700_000_000.0)
    before = await snapshot(source, local_embedder)
    assert all(before[f"{s.user_id}/{s.agent_id}"]["events"] for s in SCOPES)
    kinds = {line.split('"', 4)[3] for line in before["maya/default"]["export"]}
    assert {"memory", "retention", "edge", "history", "decision", "conflict"} <= kinds
    assert {"opinion", "goal", "transition", "competence", "pagerank"} <= kinds
    beside = before["maya/default"]["beside"]
    assert beside["vault"] and beside["sleep_runs"] and beside["duplicates"]
    assert any(beside["sources"].values()) and beside["waiting"]
    assert "Zoltan" in beside["participants"]
    assert any('"archived_at": null' not in line for line in before["maya/default"]["export"])

    migrate_interrupted(str(source), url(database))
    assert await snapshot(database, local_embedder) == before
    back = tmp_path / "back.db"
    migrate_interrupted(url(database), f"sqlite:///{back}")
    assert await snapshot(back, local_embedder) == before

    with open_storage(back, dimension=384) as storage:
        assert storage.events.cursor("nats") == 5
        assert storage.vault.key_fingerprint() is not None
    # Both copies go on where the source stopped: new events follow every order.
    await assert_continues(back, before, local_embedder)
    await assert_continues(database, before, local_embedder)


async def assert_continues(
    database: str | Path, before: dict[str, Any], embedder: LocalEmbedder
) -> None:
    last = before["maya/default"]["events"][-1]["seq"]
    newest = max(e["position"] for s in before.values() if "events" in s for e in s["events"])
    async with AsyncMemory(database, config=config(), embedder=embedder) as memory:
        await memory.observe("Maya moved to Porto.", user_id="maya")
        events = await memory.events(after_seq=last, user_id="maya")
    assert "memory.stored" in [e.type for e in events]
    assert [e.seq for e in events] == list(range(last + 1, last + 1 + len(events)))
    assert min(e.position for e in events) > newest


async def test_a_target_holding_other_data_is_refused_untouched(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    source, other = tmp_path / "source.db", tmp_path / "other.db"
    async with AsyncMemory(source, config=config(), embedder=local_embedder) as memory:
        await memory.observe("Maya's email is maya@example.org.", user_id="maya")
    async with AsyncMemory(other, config=config(), embedder=local_embedder) as memory:
        await memory.observe("Rui teaches Portuguese.", user_id="rui")
    with open_storage(other, dimension=384) as storage:
        events = storage.events.after(0, 100)
    assert events
    with pytest.raises(TargetNotEmptyError, match="already holds data"):
        migrate(source, other, dimension=384)
    with open_storage(other, dimension=384) as storage:
        assert storage.memories.scopes() == [Scope("rui", "default")]
        assert storage.events.after(0, 100) == events
        assert copying_for(parse_location(other), storage).cursors() == []
    opened = tmp_path / "opened.db"  # empty, but its vault has another key
    other_key = UCMAConfig(privacy=PrivacyConfig(vault_key=Fernet.generate_key().decode()))
    async with AsyncMemory(opened, config=other_key, embedder=local_embedder) as memory:
        await memory.observe("Ana's email is ana.ribeiro@example.org.", user_id="ana")
        await memory.forget_scope(user_id="ana")
    with pytest.raises(ValidationError, match="another vault key"):
        migrate(source, opened, dimension=384)
    with pytest.raises(ValidationError, match="same store"):
        migrate(source, f"sqlite:///{source}", dimension=384)
    with pytest.raises(StorageError):
        migrate(source, tmp_path / "new.db", dimension=8)  # the source's vectors are wider


async def test_a_sqlite_copy_gets_the_vault_key_file_it_needs(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    source, target, other = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "c.db"
    async with AsyncMemory(source, embedder=local_embedder) as memory:  # key file beside it
        await memory.observe("Ana's email is ana.ribeiro@example.org.", user_id="maya")
        [record] = await memory.list(kind="episodic", user_id="maya")
        [token] = re.findall(r"\[email_[0-9a-f]+\]", record.content)
    key = default_key_path(source).read_bytes()
    default_key_path(other).write_bytes(Fernet.generate_key() + b"\n")
    with pytest.raises(ValidationError, match="another vault key"):
        migrate(source, other, dimension=384)
    with open_storage(other, dimension=384) as storage:
        assert copying_for(parse_location(other), storage).cursors() == []

    report = migrate(source, target, dimension=384)
    assert report.vault_key_file is None  # copied beside the target
    assert default_key_path(target).read_bytes() == key
    async with AsyncMemory(target, embedder=local_embedder) as memory:
        assert await memory.reveal(token, user_id="maya") == "ana.ribeiro@example.org"
