"""The calls agent developers know from other memory libraries, over the engine's own.

=====================================  =================================================
call                                   what it is
=====================================  =================================================
``add(messages or text, run_id=...)``  ``observe_many``: each chat message observed with its
                                       role as source, in order, in one session
``search(query, filters=...)``         ``remember``; with filters, the matching memories
                                       ranked by meaning (see ``search``)
``get(memory_id)``                     the engine's ``get``
``get_all(filters=..., offset=...)``   ``list`` with a total: a ``MemoryPage``
``update(memory_id, text)``            a new version of the text, re-embedded; the old
                                       text goes to ``history``, the log gets an event
``delete(memory_id)``                  the engine's ``delete``
``delete_all(confirm=True)``           ``delete`` of every memory of a scope (or of a run,
                                       or of those matching filters) in one transaction
``history(memory_id)``                 the engine's ``history``: ``updated`` entries carry
                                       ``previous`` and ``new`` text
=====================================  =================================================

``run_id`` tags, it does not isolate: memories of a run live in the scope of their
``user_id`` / ``agent_id`` (so ``search`` without a run finds them too), carry
``metadata["run_id"]``, and the run's messages form one session (its id is the run id).
``search``, ``get_all`` and ``delete_all`` take ``run_id`` as a shorthand for the filter
``{"run_id": ...}``.

Filters are equality on metadata keys: ``{"topic": "billing", "priority": 2}`` matches a
memory whose metadata has both values (a missing key never matches; ``1`` does not
equal ``True``). Facts, procedures and lessons the engine derives carry no caller
metadata, so a filter selects what was added or observed with it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ucma.engine.base import EngineBase, _enum
from ucma.errors import NotFoundError, ValidationError
from ucma.events.log import EventType, record
from ucma.storage.base import Storage
from ucma.types import (
    Bank,
    Episode,
    HistoryEntry,
    Hit,
    Learning,
    MemoryKind,
    MemoryPage,
    MemoryRecord,
    Observation,
    Scope,
)
from ucma.validation import (
    check_content,
    check_id,
    check_limit,
    check_metadata,
    check_offset,
    check_query,
)

__all__ = ["Conventions", "matches_filters"]

logger = logging.getLogger(__name__)

MAX_PAGE = 1000
"""The largest page ``get_all`` returns."""

MAX_FILTER_KEYS = 20

_MESSAGE_KEYS = frozenset({"role", "content", "name"})
_SCAN_PAGE = 1000
_UPDATABLE = (Episode, Learning)


class Conventions(EngineBase):
    """add, search, get_all, update, delete_all (``get``, ``delete`` and ``history`` are
    the engine's own methods under the same names)."""

    async def add(
        self,
        messages: str | Mapping[str, Any] | Sequence[str | Mapping[str, Any]],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        content_type: str | None = None,
        temporal_level: int | None = None,
        salience: float | None = None,
        bank: Bank | str | None = None,
    ) -> list[Observation]:
        """Add a conversation (or one text) to memory: one observation per message.

        ``messages`` is a string, one chat message, or a list of them
        (``[{"role": "user", "content": "..."}, ...]``; a message may also carry a
        ``name``, the speaker, kept as its participant). Each is observed with its role
        as source, in order, in one session: the run's when ``run_id`` is given, else
        the scope's current one. ``metadata`` goes on every message's memory (with
        ``run_id``, when given). Written whole or not at all, through the same
        validation, content guard, de-duplication and conflict checks as ``observe``.
        Returns one ``Observation`` per message (stored, merged or skipped).
        ``content_type``, ``temporal_level``, ``salience`` and ``bank`` steer the store
        step of every message as ``observe``'s do (seed 003 R1, R2).
        """
        limits = self.config.limits
        extra = check_metadata(metadata, limits)
        session: str | None = None
        if run_id is not None:
            session = check_id(run_id, "run_id")
            if extra.get("run_id", session) != session:
                raise ValidationError("metadata['run_id'] differs from run_id; pass one of them")
            extra["run_id"] = session
        items = []
        for message in _messages(messages):
            item: dict[str, Any] = {"content": message["content"], "source": message["role"]}
            if message.get("name") is not None:
                item["participants"] = [message["name"]]
            if extra:
                item["metadata"] = dict(extra)
            if session is not None:
                item["session_id"] = session
            for name, value in (
                ("content_type", content_type),
                ("temporal_level", temporal_level),
                ("salience", salience),
                ("bank", bank),
            ):
                if value is not None:
                    item[name] = value
            items.append(item)
        observations: list[Observation] = await self.observe_many(  # type: ignore[attr-defined]
            items, user_id=user_id, agent_id=agent_id
        )
        return observations

    async def search(
        self,
        query: str,
        *,
        filters: Mapping[str, Any] | None = None,
        run_id: str | None = None,
        limit: int | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        **options: Any,
    ) -> list[Hit]:
        """Memories relevant to ``query``, best first.

        Without filters this is ``remember`` (the hybrid search of every kind; further
        keyword ``options`` are ``remember``'s: kinds, tags, entity, time_range ...).
        With ``filters`` (or ``run_id``), every memory of the scope whose metadata
        matches is ranked by the cosine similarity of its text to the query, exactly:
        a matching memory is never missed because others ranked higher. Hits then carry
        ``source="filtered"`` and the cosine as ``score`` and ``relevance``; memories
        that newer ones replaced are left out, as in ``remember``.
        """
        wanted = _filters(filters, run_id)
        if not wanted:
            hits: list[Hit] = await self.remember(  # type: ignore[attr-defined]
                query, limit=limit, user_id=user_id, agent_id=agent_id, **options
            )
            return hits
        if options:
            raise ValidationError(
                f"with filters, search takes query, filters, run_id and limit; "
                f"not {sorted(options)}"
            )
        scope = self._scope(user_id, agent_id)
        cfg = self.config
        text = check_query(query, cfg.limits)
        text = await self._tokenise_query(scope, text)  # type: ignore[attr-defined]
        count = check_limit(
            limit if limit is not None else cfg.retrieval.max_results,
            cfg.retrieval.max_results_limit,
        )
        storage = await self._ready()
        [vector] = await self._embed_queries([text])
        now = self._clock()
        found = await self._run(_ranked, storage, scope, wanted, vector, count, now)
        logger.info("search: %d filtered hits (user=%s)", len(found), scope.user_id)
        return found

    async def get_all(
        self,
        *,
        filters: Mapping[str, Any] | None = None,
        run_id: str | None = None,
        kind: MemoryKind | str | None = None,
        limit: int = 100,
        offset: int = 0,
        include_archived: bool = False,
        bank: Bank | str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> MemoryPage:
        """One page of the scope's memories, oldest first, with the total: never cut
        short without saying so. ``page.next_offset`` (None on the last page) is the
        ``offset`` of the next call; ``filters`` / ``run_id`` as in ``search``;
        ``kind`` and ``bank`` keep one kind, one bank. At most 1000 records a page."""
        scope = self._scope(user_id, agent_id)
        wanted = _filters(filters, run_id)
        size = check_limit(limit, MAX_PAGE)
        check_offset(offset)
        chosen = _enum(MemoryKind, kind, "kind") if kind is not None else None
        in_bank = _enum(Bank, bank, "bank") if bank is not None else None
        storage = await self._ready()

        def read() -> MemoryPage:
            if wanted:
                every = _matching(storage, scope, wanted, chosen, include_archived, in_bank)
                return MemoryPage(every[offset : offset + size], len(every), offset, size)
            with storage.transaction():  # one state for the page and its total
                counts = storage.memories.count(
                    scope, include_archived=include_archived, bank=in_bank
                )
                total = counts[chosen] if chosen is not None else sum(counts.values())
                items = storage.memories.list(
                    scope,
                    kind=chosen,
                    limit=size,
                    offset=offset,
                    include_archived=include_archived,
                    bank=in_bank,
                )
            return MemoryPage(items, total, offset, size)

        return await self._run(read)

    async def update(
        self,
        memory_id: str,
        text: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> MemoryRecord:
        """Replace a memory's text: a new version, re-embedded, so search finds it by
        the new words. The previous and new text go to ``history(memory_id)`` (event
        ``updated``, with its version number: the first text is version 1) and the
        event log records ``memory.updated``. Unchanged text changes nothing.

        Episodes (what was added or observed) and lessons can be updated. A fact
        changes by asserting its new value (``assert_fact``), which keeps the old one in
        the fact's history and checks it for conflicts; facts already read from an
        episode's old text keep their own history. The content guard applies as to
        every write: a refused text raises and leaves the memory as it was.
        """
        scope = self._scope(user_id, agent_id)
        key = check_id(memory_id)
        new_text = check_content(text, self.config.limits, "text")
        storage = await self._ready()
        current = await self._run(storage.memories.get, scope, key)
        if current is None:
            raise NotFoundError("memory", key)
        _check_updatable(current)
        new_text = await self._guard_text(scope, new_text, "text")  # type: ignore[attr-defined]
        if new_text == current.content:
            return current
        [vector] = await self._embed([new_text])
        now = self._clock()
        updated = await self._run(_write_update, storage, scope, key, new_text, vector, now)
        logger.info("update: %s (user=%s)", key, scope.user_id)
        return updated

    async def delete_all(
        self,
        *,
        confirm: bool = False,
        filters: Mapping[str, Any] | None = None,
        run_id: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> int:
        """Delete every memory of the scope (archived ones too), or of a run, or those
        whose metadata matches ``filters``, in one transaction; returns how many.

        ``confirm=True`` is required: without it nothing is deleted and
        ``ValidationError`` says so. Each deletion is ``delete``'s: the event log
        records ``memory.deleted``, and history (with earlier texts of updated
        memories) stays. To erase a scope for good, history, events and stored
        personal values included, use ``forget_scope``.
        """
        scope = self._scope(user_id, agent_id)
        wanted = _filters(filters, run_id)
        if confirm is not True:
            what = "the matching memories" if wanted else "every memory of the scope"
            raise ValidationError(f"delete_all removes {what}; pass confirm=True to go ahead")
        storage = await self._ready()

        def delete() -> int:
            with storage.transaction():
                ids = [r.id for r in _matching(storage, scope, wanted, None, include_archived=True)]
                return sum(storage.memories.delete(scope, memory_id) for memory_id in ids)

        deleted = await self._run(delete)
        logger.info("delete_all: %d memories (user=%s)", deleted, scope.user_id)
        return deleted


def matches_filters(metadata: Mapping[str, Any], filters: Mapping[str, Any]) -> bool:
    """Whether ``metadata`` holds every key of ``filters`` with an equal value (a
    boolean equals only a boolean; 1 and 1.0 are equal)."""
    for key, value in filters.items():
        if key not in metadata:
            return False
        held = metadata[key]
        if isinstance(held, bool) != isinstance(value, bool) or held != value:
            return False
    return True


def _messages(
    messages: str | Mapping[str, Any] | Sequence[str | Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """The messages as {"role", "content"[, "name"]} dicts, checked."""
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, Mapping):
        messages = [messages]
    if isinstance(messages, bytes) or not isinstance(messages, Sequence):
        raise ValidationError(
            'messages must be a text or a list of {"role": ..., "content": ...} messages'
        )
    if not messages:
        raise ValidationError("messages must not be empty")
    checked = []
    for i, message in enumerate(messages):
        if isinstance(message, str):
            checked.append({"role": "user", "content": message})
            continue
        if not isinstance(message, Mapping):
            raise ValidationError(
                f"messages[{i}] must be a text or a mapping with role and content, "
                f"got {type(message).__name__}"
            )
        unknown = set(message) - _MESSAGE_KEYS
        if unknown:
            raise ValidationError(
                f"messages[{i}] has unknown keys {sorted(map(str, unknown))}; "
                "a message has role, content and optionally name"
            )
        role = message.get("role")
        if not isinstance(role, str) or not role.strip() or len(role) > 256:
            raise ValidationError(f"messages[{i}].role must be a non-empty string, e.g. 'user'")
        name = message.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ValidationError(f"messages[{i}].name must be a non-empty string")
        if not isinstance(message.get("content"), str):
            raise ValidationError(f"messages[{i}].content must be a string")
        checked.append(dict(message))
    return checked


def _filters(filters: Mapping[str, Any] | None, run_id: str | None) -> dict[str, Any]:
    """Checked filters, with ``run_id`` as the filter it stands for."""
    if filters is None:
        wanted: dict[str, Any] = {}
    elif not isinstance(filters, Mapping):
        raise ValidationError(f"filters must be a mapping, got {type(filters).__name__}")
    else:
        wanted = dict(filters)
    if len(wanted) > MAX_FILTER_KEYS:
        raise ValidationError(f"at most {MAX_FILTER_KEYS} filter keys")
    for key, value in wanted.items():
        if not isinstance(key, str) or not key:
            raise ValidationError("filter keys must be non-empty strings (metadata keys)")
        if value is not None and not isinstance(value, str | int | float | bool):
            raise ValidationError(
                f"filter {key!r} must be a string, number, boolean or null (equality on "
                f"metadata), got {type(value).__name__}"
            )
    if run_id is not None:
        run = check_id(run_id, "run_id")
        if wanted.get("run_id", run) != run:
            raise ValidationError("filters['run_id'] differs from run_id; pass one of them")
        wanted["run_id"] = run
    return wanted


def _matching(
    storage: Storage,
    scope: Scope,
    wanted: Mapping[str, Any],
    kind: MemoryKind | None,
    include_archived: bool,
    bank: Bank | None = None,
) -> list[MemoryRecord]:
    """Every record of the scope (of ``kind``) whose metadata matches, oldest first
    (storage thread; read a page at a time, all of it)."""
    found: list[MemoryRecord] = []
    offset = 0
    with storage.transaction():  # one state for the whole scan
        while True:
            page = storage.memories.list(
                scope,
                kind=kind,
                limit=_SCAN_PAGE,
                offset=offset,
                include_archived=include_archived,
                bank=bank,
            )
            found += [r for r in page if matches_filters(r.metadata, wanted)]
            if len(page) < _SCAN_PAGE:
                return found
            offset += _SCAN_PAGE


def _ranked(
    storage: Storage,
    scope: Scope,
    wanted: Mapping[str, Any],
    vector: np.ndarray,
    count: int,
    now: float,
) -> list[Hit]:
    """The matching, current memories by cosine to ``vector``, best first."""
    records = {r.id: r for r in _matching(storage, scope, wanted, None, False)}
    replaced = storage.conflicts.superseded(scope, list(records), at=now)
    ids = [memory_id for memory_id in records if memory_id not in replaced]
    vectors = storage.memories.vectors(scope, ids)
    query = np.asarray(vector, dtype=np.float32)
    scored = sorted(
        ((float(vectors[i] @ query), i) for i in ids if i in vectors),
        key=lambda pair: (-pair[0], pair[1]),
    )
    return [
        Hit(records[i], score, score, "filtered", channels={"dense": score})
        for score, i in scored[:count]
    ]


def _check_updatable(record: MemoryRecord) -> None:
    if isinstance(record, _UPDATABLE):
        return
    if record.kind is MemoryKind.SEMANTIC:
        raise ValidationError(
            f"{record.id} is a fact: assert its new value with assert_fact (the old value "
            "stays in the fact's history, and conflicts are checked)"
        )
    raise ValidationError(
        f"{record.id} is a procedure: record a new one with add_procedure and delete this one"
    )


def _write_update(
    storage: Storage, scope: Scope, memory_id: str, text: str, vector: np.ndarray, now: float
) -> MemoryRecord:
    """The new version, its vector, the history entry and the event, in one transaction."""
    with storage.transaction():
        current = storage.memories.get(scope, memory_id)
        if current is None:  # deleted meanwhile
            raise NotFoundError("memory", memory_id)
        version = 2 + sum(
            1 for h in storage.lifecycle.history(scope, memory_id) if h.event == "updated"
        )
        if isinstance(current, Episode):
            updated: MemoryRecord = replace(current, content=text, summary=None, updated_at=now)
            storage.episodes.update(updated)  # type: ignore[arg-type]
        elif isinstance(current, Learning):
            updated = replace(current, content=text, updated_at=now)
            storage.learnings.update(updated)
        else:  # the kind changed under the same id: refuse as update() does
            _check_updatable(current)
            raise AssertionError("unreachable")
        storage.memories.replace_vector(scope, memory_id, vector)
        details = {"previous": current.content, "new": text, "version": version}
        storage.lifecycle.add_history(scope, [HistoryEntry(memory_id, "updated", now, details)])
        record(
            storage,
            scope,
            EventType.MEMORY_UPDATED,
            {"memory_id": memory_id, "kind": current.kind.value, "version": version},
            now,
        )
    return updated
