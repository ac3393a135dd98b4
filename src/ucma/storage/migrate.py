"""Copying a whole store into another, across backends: ``ucma migrate SOURCE TARGET``.

``migrate("sqlite:///memory.db", "postgresql://...")`` (and back, or SQLite to SQLite)
copies every scope of the source, found among its memories and its events, through the
storage interfaces (``ucma.storage.base``), ids unchanged:

- memories in the order the source received them, every field, with their vectors,
  retention states, history, sources and archive times;
- the graph's edges and importance, decisions (with their outcomes, salience updates and
  the retrievals they name), conflicts (resolved ones as resolved), review flags (cleared
  ones too), supersessions, opinions, the world model's transitions and the self-model's
  competences, goals, vault entries (sealed as they are: the target is opened with the
  source's vault key), sleep runs, duplicate attempts and abstraction marks;
- the names the scope's episodes ever had (those of deleted episodes too);
- the event log, event by event (id, position, seq, type, payload, time), and the
  publishers' cursors, so a forwarder carries on where it stopped;
- API keys (their token hashes) and the vault key's fingerprint.

The vault's originals stay sealed with the source's vault key, so the target must be
opened with that key: a SQLite source's key file (``<file>.vault-key``) is copied beside
a SQLite target that has none (a target key file holding another key is refused before
anything is copied); for a database server the report names the key file whose key the
target's processes need (``UCMA_VAULT_KEY``). A source opened with ``UCMA_VAULT_KEY``
keeps needing it.

Not copied: the embedding cache (queries' vectors and memories' name-free ones,
retrieval/name_free.py: refilled on use), co-retrieval counts not yet consumed by
a sleep (reading them would consume the source's), the gardener's job schedule and the
records of past erasures.

What the storage interfaces cannot do, each backend's ``copying`` module does (looked up
by URL scheme like the backend itself, ``ucma.storage.location.BACKENDS``): write events
as they are, hold off the lifecycle events a copied record would otherwise log again,
add participant names and list the publishers' cursors.

Progress is kept in the target, as event cursors named ``ucma.migrate.<source>.<step>``
(``<source>`` a hash of the source's address: a file's absolute path, a server's URL
with any password left out): per scope, how
many memories are copied and whether the rest of the scope is; then the last event
position copied; then whether the store-wide records are. Each batch is written in one
transaction together with its step's cursor, so an interrupted migration (a crash, Ctrl-C)
resumes after the last batch that committed and never writes a record twice. A target
that holds memories, events or keys and no such cursor of this source is refused
(``TargetNotEmptyError``). Keep writers off the source while it is copied: a memory written
into an already-copied page is not seen. At the end the counts of memories per scope and
of events are compared (``StorageError`` when they differ).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ucma.errors import StorageError, TargetNotEmptyError, ValidationError
from ucma.events.log import Event
from ucma.privacy.vault import default_key_path, load_or_create_key
from ucma.storage.base import Storage
from ucma.storage.location import BACKENDS, StorageLocation, open_storage, parse_location
from ucma.types import Episode, Fact, Learning, Procedure, ReviewFlag, Scope

__all__ = [
    "CURSORS_SQL",
    "CURSOR_PREFIX",
    "EVENT_COLUMNS",
    "LIFECYCLE_TRIGGERS",
    "Copying",
    "MigrationReport",
    "Progress",
    "copy_store",
    "event_row",
    "migrate",
    "source_name",
]

#: Event cursors of migrations in progress or done start with this.
CURSOR_PREFIX = "ucma.migrate."
#: Memories (or events) per batch, one transaction each.
BATCH = 500
#: Most records of one kind read from a scope (decisions, conflicts, flags ...).
_ALL = 1_000_000_000

#: The triggers that log a memory's insert and archive as events, on every backend
#: (``Copying.unlogged`` holds them off).
LIFECYCLE_TRIGGERS = ("memories_event_stored", "memories_event_archived")
#: The publishers' cursors, in SQL every backend understands (``Copying.cursors``).
CURSORS_SQL = "SELECT name, position, updated_at FROM event_cursors ORDER BY name"
#: An event as a row, in the order of its columns the backends' ``put_events`` insert.
EVENT_COLUMNS = "position, id, user_id, agent_id, seq, type, payload, occurred_at"

Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)``, in units of memories, events and scopes."""


class Copying(Protocol):
    """What a migration needs of a backend beyond ``Storage`` (its ``copying`` module)."""

    def unlogged(self) -> AbstractContextManager[None]:
        """Inside a transaction: records inserted or archived log no lifecycle event."""

    def put_events(self, events: Sequence[Event]) -> None:
        """Write events as they are (ids, positions, seqs), inside a transaction."""

    def cursors(self) -> list[tuple[str, int, float]]:
        """Every publisher cursor: (name, position, updated_at), by name."""

    def put_participants(self, scope: Scope, names: Sequence[str]) -> None:
        """Add names to the scope's known participants (``EpisodicStore.participants``:
        every name its episodes ever had, deleted ones' too), inside a transaction."""


@dataclass(frozen=True, slots=True)
class MigrationReport:
    """What a migration copied (this run and earlier runs of it together)."""

    source: str
    target: str
    scopes: int
    memories: int
    events: int
    resumed: bool
    vault_key_file: str | None = None
    """The source's vault key file when the target cannot keep a copy beside it (a
    database server): its processes need that key (``UCMA_VAULT_KEY``)."""


def migrate(
    source: str | os.PathLike[str] | StorageLocation,
    target: str | os.PathLike[str] | StorageLocation,
    *,
    dimension: int,
    batch: int = BATCH,
    progress: Progress | None = None,
) -> MigrationReport:
    """Copy the store at ``source`` into the one at ``target`` (paths or URLs, any
    backends); resumes an earlier interrupted run. ``dimension`` is the width of the
    stores' vectors (the embedding model's). See the module's documentation."""
    src = source if isinstance(source, StorageLocation) else parse_location(source)
    dst = target if isinstance(target, StorageLocation) else parse_location(target)
    if (src.scheme, src.url) == (dst.scheme, dst.url) or (
        src.path is not None and dst.path is not None and _same_file(src, dst)
    ):
        raise ValidationError("the source and the target of a migration are the same store")
    with ExitStack() as stack:
        source_storage = open_storage(src, dimension=dimension)
        stack.callback(source_storage.close)
        target_storage = open_storage(dst, dimension=dimension)
        stack.callback(target_storage.close)
        report = copy_store(
            source_storage,
            target_storage,
            source_copying=copying_for(src, source_storage),
            target_copying=copying_for(dst, target_storage),
            name=source_name(src),
            target_name=str(dst),
            batch=batch,
            progress=progress,
            prepare=lambda: _carry_vault_key(src, dst),
        )
    return report


def _carry_vault_key(source: StorageLocation, target: StorageLocation) -> str | None:
    """Copy a SQLite source's vault key file beside a SQLite target; the source's key
    file when the target is a server (None when the source has none)."""
    if source.path is None:
        return None
    key_file = default_key_path(source.path)
    if not key_file.is_file():
        return None
    if target.path is None:
        return str(key_file)
    key = key_file.read_bytes().strip()
    target_key = default_key_path(target.path)
    if load_or_create_key(target_key, key) != key:
        raise ValidationError(
            f"{target_key} holds another vault key than {key_file}: the copied vault would "
            "not open; remove it (an empty target needs none) and run again"
        )
    return None


def source_name(location: StorageLocation) -> str:
    """The source as its migrations know it: a file by its absolute path (however it
    was spelled), a server by its URL without the password."""
    if location.path is not None:
        return f"sqlite:///{location.path.resolve()}"
    return str(location)


def _same_file(a: StorageLocation, b: StorageLocation) -> bool:
    assert a.path is not None and b.path is not None
    return a.path.resolve() == b.path.resolve()


def copying_for(location: StorageLocation, storage: Storage) -> Copying:
    """The ``copying`` hook of the backend ``location`` names, over ``storage``."""
    module = importlib.import_module(f"{BACKENDS[location.scheme]}.copying")
    found: Copying = module.copying(storage)
    return found


def copy_store(
    source: Storage,
    target: Storage,
    *,
    source_copying: Copying,
    target_copying: Copying,
    name: str,
    target_name: str = "target",
    batch: int = BATCH,
    progress: Progress | None = None,
    prepare: Callable[[], str | None] | None = None,
) -> MigrationReport:
    """Copy every scope, the event log and the store-wide records of ``source`` into
    ``target``; ``name`` identifies the source in the target's progress cursors
    (``source_name``).
    ``prepare`` runs once the target is known to be empty or an earlier run, before
    anything is written; what it returns is the report's ``vault_key_file``."""
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ValidationError(f"batch must be a positive integer, got {batch!r}")
    run = _Run(source, target, source_copying, target_copying, name, batch)
    resumed = run.check_target(target_name)
    key_file = prepare() if prepare is not None else None
    run.start()
    scopes, events = run.survey()
    counts = {
        scope: sum(source.memories.count(scope, include_archived=True).values()) for scope in scopes
    }
    total = sum(counts.values()) + events + len(scopes)
    done = 0

    def advance(units: int) -> None:
        nonlocal done
        done += units
        if progress is not None:
            progress(done, total)

    advance(0)
    for scope in scopes:
        run.copy_memories(scope, advance)
        run.copy_scope_records(scope)
        advance(1)
    run.copy_events(advance)
    run.copy_store_records()
    run.verify(counts, events)
    return MigrationReport(
        name, target_name, len(scopes), sum(counts.values()), events, resumed, key_file
    )


def event_row(event: Event) -> tuple[object, ...]:
    """The values of ``EVENT_COLUMNS`` for one event (its payload as the backends store
    it: JSON text)."""
    payload = json.dumps(event.payload, ensure_ascii=False)
    return (event.position, event.id, event.user_id, event.agent_id, event.seq, event.type,
            payload, event.occurred_at)  # fmt: skip


def _scope_key(scope: Scope) -> str:
    key = f"{scope.user_id}\x1f{scope.agent_id}".encode()
    return hashlib.sha256(key).hexdigest()[:16]


class _Run:
    """One migration: the two stores, the cursor names of its steps, the copying."""

    def __init__(
        self,
        source: Storage,
        target: Storage,
        source_copying: Copying,
        target_copying: Copying,
        name: str,
        batch: int,
    ) -> None:
        self.source = source
        self.target = target
        self.source_copying = source_copying
        self.target_copying = target_copying
        self.batch = batch
        self.prefix = f"{CURSOR_PREFIX}{hashlib.sha256(name.encode()).hexdigest()[:16]}."

    # -- progress in the target ------------------------------------------------------

    def step(self, name: str) -> int:
        return self.target.events.cursor(self.prefix + name)

    def mark(self, name: str, value: int) -> None:
        """Inside the batch's transaction: the step has reached ``value``."""
        self.target.events.set_cursor(self.prefix + name, value, time.time())

    def check_target(self, target_name: str) -> bool:
        """True when the target holds an earlier run of this migration;
        TargetNotEmptyError when it holds anything else."""
        source_key = self.source.vault.key_fingerprint()
        target_key = self.target.vault.key_fingerprint()
        if None not in (source_key, target_key) and source_key != target_key:
            raise ValidationError(
                f"{target_name} was opened with another vault key than the source's: the "
                "copied vault would not open; migrate into a database no one has opened"
            )
        if self.step("started"):
            return True
        target = self.target
        if (
            target.memories.scopes()
            or target.events.after(0, 1)
            or target.keys.count(include_revoked=True)
        ):
            raise TargetNotEmptyError(
                f"{target_name} already holds data that is not an earlier run of this "
                "migration; migrate into an empty database"
            )
        return False

    def start(self) -> None:
        if not self.step("started"):
            with self.target.transaction():
                self.mark("started", 1)

    # -- what the source holds -------------------------------------------------------

    def survey(self) -> tuple[list[Scope], int]:
        """Every scope of the source (with memories or events), ordered, and the number
        of its events."""
        scopes = set(self.source.memories.scopes())
        events = position = 0
        while page := self.source.events.after(position, 5000):
            scopes.update(Scope(e.user_id, e.agent_id) for e in page)
            events += len(page)
            position = page[-1].position
        return sorted(scopes, key=lambda s: (s.user_id, s.agent_id)), events

    # -- memories --------------------------------------------------------------------

    def copy_memories(self, scope: Scope, advance: Callable[[int], None]) -> None:
        step = f"memories.{_scope_key(scope)}"
        offset = self.step(step)
        advance(offset)
        source, target = self.source, self.target
        # Episodes facts were extracted from (the others wait for the next sleep).
        waiting = {e.id for e in source.lifecycle.unabstracted_episodes(scope, limit=_ALL)}
        while True:
            records = source.memories.list(
                scope,
                limit=self.batch,
                offset=offset,
                include_archived=True,
                in_insertion_order=True,
            )
            if not records:
                return
            ids = [r.id for r in records]
            vectors = source.memories.vectors(scope, ids)
            missing = [i for i in ids if i not in vectors]
            if missing:
                raise StorageError(f"memory {missing[0]} of {scope} has no vector")
            retention = source.retention.get_many(scope, ids)
            history = [e for i in ids for e in source.lifecycle.history(scope, i)]
            sources = {i: source.lifecycle.sources(scope, i) for i in ids}
            with target.transaction(), self.target_copying.unlogged():
                _add_records(target, records, vectors)
                for record in records:
                    if record.archived_at is not None:
                        target.memories.set_archived(scope, [record.id], record.archived_at)
                if retention:
                    target.retention.put_many(scope, list(retention.values()))
                target.lifecycle.add_history(scope, history)
                for memory_id, found in sources.items():
                    if found:
                        target.lifecycle.add_sources(scope, memory_id, found)
                abstracted = [
                    r.id for r in records if isinstance(r, Episode) and r.id not in waiting
                ]
                if abstracted:
                    target.lifecycle.mark_abstracted(scope, abstracted, time.time())
                offset += len(records)
                self.mark(step, offset)
            advance(len(records))

    # -- everything else of a scope --------------------------------------------------

    def copy_scope_records(self, scope: Scope) -> None:
        step = f"records.{_scope_key(scope)}"
        if self.step(step):
            return
        source, target = self.source, self.target
        with source.transaction():  # one consistent view of the scope's records
            edges = source.graph.all_edges(scope)
            nodes = source.graph.node_ids(scope, include_archived=True)
            importance = {k: v for k, v in source.graph.pagerank(scope, nodes).items() if v}
            traces = source.traces.list(scope, limit=_ALL)[::-1]  # oldest first
            retrievals = {
                t.retrieval_id: source.traces.get_retrieval(scope, t.retrieval_id)
                for t in traces
                if t.retrieval_id is not None
            }
            updates = source.traces.updates(scope)
            conflicts = source.conflicts.list(scope, limit=_ALL)[::-1]
            flags = source.conflicts.flags(scope, include_cleared=True, limit=_ALL)[::-1]
            supersessions = source.conflicts.supersessions(scope)
            opinions = source.opinions.list(scope, limit=_ALL)
            transitions = source.predictive.transitions(scope, limit=_ALL)
            competences = source.predictive.competences(scope, limit=_ALL)
            goals = source.goals.list(scope, limit=_ALL)
            vault = source.vault.entries(scope)
            sleep_runs = source.lifecycle.sleep_runs(scope, limit=_ALL)[::-1]
            duplicates = source.lifecycle.duplicates(scope, limit=_ALL)[::-1]
            participants = source.episodes.participants(scope)
        with target.transaction(), self.target_copying.unlogged():
            target.graph.add_edges(scope, edges)
            if importance:
                target.graph.set_pagerank(scope, importance)
            for retrieval in retrievals.values():
                if retrieval is not None:
                    target.traces.add_retrieval(retrieval)
            for trace in traces:
                target.traces.add(trace)  # its outcome with it
            target.traces.add_updates(scope, updates)
            for conflict in conflicts:
                target.conflicts.add(conflict)
                target.conflicts.update(conflict)
            _copy_flags(target, scope, flags)
            target.conflicts.supersede(scope, supersessions)
            target.opinions.put(opinions)
            target.predictive.put_transitions(transitions)
            target.predictive.put_competences(competences)
            target.goals.put(goals)
            if vault:
                target.vault.add(scope, vault)
            for run in sleep_runs:
                target.lifecycle.add_sleep_run(run, keep=len(sleep_runs))
            for attempt in duplicates:
                target.lifecycle.log_duplicate(scope, attempt)
            self.target_copying.put_participants(scope, participants)
            self.mark(step, 1)

    # -- the event log and the store-wide records ------------------------------------

    def copy_events(self, advance: Callable[[int], None]) -> None:
        position = self.step("events")
        if position:
            advance(sum(1 for _ in self._events(0, until=position)))
        for page in self._pages(position):
            with self.target.transaction():
                self.target_copying.put_events(page)
                self.mark("events", page[-1].position)
            advance(len(page))

    def _pages(self, position: int) -> Iterator[list[Event]]:
        while page := self.source.events.after(position, self.batch):
            yield page
            position = page[-1].position

    def _events(self, position: int, *, until: int) -> Iterator[Event]:
        for page in self._pages(position):
            for event in page:
                if event.position > until:
                    return
                yield event

    def copy_store_records(self) -> None:
        if self.step("store"):
            return
        source, target = self.source, self.target
        keys = []
        for key in source.keys.list(include_revoked=True):
            found = source.keys.lookup(key.id)
            if found is not None:
                keys.append(found)
        fingerprint = source.vault.key_fingerprint()
        cursors = [c for c in self.source_copying.cursors() if not c[0].startswith(CURSOR_PREFIX)]
        with target.transaction():
            for key, token_hash in keys:
                target.keys.add(key, token_hash)
                if key.revoked_at is not None:
                    target.keys.revoke(key.id, key.revoked_at)
            if fingerprint is not None and target.vault.key_fingerprint() is None:
                target.vault.set_key_fingerprint(fingerprint, time.time())
            for cursor_name, position, updated_at in cursors:
                target.events.set_cursor(cursor_name, position, updated_at)
            self.mark("store", 1)

    def verify(self, counts: dict[Scope, int], events: int) -> None:
        """StorageError unless the target holds as many memories per scope, and as
        many events, as the source did when the run began."""
        for scope, expected in counts.items():
            found = sum(self.target.memories.count(scope, include_archived=True).values())
            if found != expected:
                raise StorageError(
                    f"{scope} has {found} memories in the target, {expected} in the source: "
                    "the source changed during the migration"
                )
        copied = sum(len(page) for page in self._target_pages())
        if copied != events:
            raise StorageError(
                f"the target holds {copied} events, the source {events}: "
                "the source changed during the migration"
            )

    def _target_pages(self) -> Iterator[list[Event]]:
        position = 0
        while page := self.target.events.after(position, 5000):
            yield page
            position = page[-1].position


def _add_records(
    target: Storage, records: Sequence[object], vectors: dict[str, np.ndarray]
) -> None:
    """Insert records through their kinds' stores, episodes as one batch each run of
    them, keeping the order they came in."""
    pending: list[Episode] = []

    def flush() -> None:
        if pending:
            target.episodes.add(list(pending), np.stack([vectors[e.id] for e in pending]))
            pending.clear()

    for record in records:
        if isinstance(record, Episode):
            pending.append(record)
            continue
        flush()
        if isinstance(record, Fact):
            target.facts.add(record, vectors[record.id])
        elif isinstance(record, Procedure):
            target.procedures.add(record, vectors[record.id])
        elif isinstance(record, Learning):
            target.learnings.add(record, vectors[record.id])
        else:
            raise StorageError(f"unknown kind of memory: {type(record).__name__}")
    flush()


def _copy_flags(target: Storage, scope: Scope, flags: Sequence[ReviewFlag]) -> None:
    """Open the flags oldest first and clear them when the source did: clearing closes
    every open flag of a memory, as it did in the source."""
    steps: list[tuple[float, int, ReviewFlag]] = [(f.flagged_at, 0, f) for f in flags]
    steps += [(f.cleared_at, 1, f) for f in flags if f.cleared_at is not None]
    steps.sort(key=lambda s: (s[0], s[1]))
    for _, clear, flag in steps:
        if clear:
            assert flag.cleared_at is not None
            target.conflicts.clear_flags(scope, flag.memory_id, flag.cleared_at)
        else:
            target.conflicts.flag(scope, [flag])
