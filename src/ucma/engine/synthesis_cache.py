"""``synthesize``'s per-scope cache (seed 000's caching strategy): the scope's current
opinions (preferences, read on every query), its active goals, its competences (the
self-model) and the strategies ranked for its recent tasks, each with the vectors it
is compared with. World facts and predictions are not cached ("too diverse",
"context-dependent"): recall and ``simulate`` run every time.

**Invalidation.** Every write of UCMA appends events in its own transaction, whatever
path made it (an engine method, an import, an erasure's triggers, another process on
the same file). Each entry is kept with a token: the ids of the scope's newest events
of the types that change what it holds (``Storage.events.latest``, one index seek per
type). A read first takes the current token, then the entry only if its token is the
same; otherwise it reads storage again and keeps that under the token taken before the
read, so a write landing between the two makes the entry stale, never wrong.

Bounded: the engine keeps one ``ScopeCache`` per recent scope (``LruMap`` of
``LimitsConfig.max_scopes_in_memory``), each with its three scope-wide entries and
at most ``SynthesisConfig.strategy_tasks`` tasks' strategies.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ucma.events.log import EventType
from ucma.lru import LruMap

__all__ = ["WATCHED", "Part", "ScopeCache", "part_token"]

_MEMORY_CHANGES = (
    EventType.MEMORY_STORED,
    EventType.MEMORY_DELETED,
    EventType.MEMORY_ARCHIVED,
    EventType.MEMORY_RESTORED,
    EventType.MEMORY_UPDATED,
    EventType.MEMORY_SUPERSEDED,
)


class Part(StrEnum):
    """What the cache holds, each invalidated by its own event types."""

    PREFERENCES = "preferences"
    GOALS = "goals"
    COMPETENCES = "competences"
    STRATEGIES = "strategies"


_EVENTS: dict[Part, tuple[str, ...]] = {
    # Opinions change only through opinion events; the statement memories they are
    # compared by can be deleted, archived or rewritten.
    Part.PREFERENCES: (
        EventType.OPINION_FORMED,
        EventType.OPINION_REINFORCED,
        EventType.OPINION_WEAKENED,
        EventType.OPINION_REPLACED,
        EventType.MEMORY_DELETED,
        EventType.MEMORY_ARCHIVED,
        EventType.MEMORY_RESTORED,
        EventType.MEMORY_UPDATED,
    ),
    Part.GOALS: (
        EventType.GOAL_ADDED,
        EventType.GOAL_DECOMPOSED,
        EventType.GOAL_PROGRESSED,
        EventType.GOAL_SUSPENDED,
        EventType.GOAL_RESUMED,
        EventType.GOAL_ABANDONED,
        EventType.GOAL_WORKED,
    ),
    Part.COMPETENCES: (
        EventType.ATTEMPT_RECORDED,
        EventType.FAILURE_MODE_RECORDED,
        EventType.COMPETENCE_IMPORTED,
        EventType.COMPETENCE_ERASED,
    ),
    # A ranking reads the procedures and their statistics, and the facts that ground
    # their preconditions: any memory written, a procedure's outcome or status, a
    # strategy learned or merged, a fact superseded or a conflict settled.
    Part.STRATEGIES: (
        *_MEMORY_CHANGES,
        EventType.PROCEDURE_OUTCOME,
        EventType.PROCEDURE_STATUS_CHANGED,
        EventType.STRATEGY_LEARNED,
        EventType.STRATEGY_MERGED,
        EventType.FACT_SUPERSEDED,
        EventType.CONFLICT_RESOLVED,
    ),
}

WATCHED: tuple[str, ...] = tuple(dict.fromkeys(str(t) for types in _EVENTS.values() for t in types))
"""Every event type some part watches, in the order ``part_token`` reads them."""
_POSITION = {kind: i for i, kind in enumerate(WATCHED)}


def part_token(latest: tuple[str | None, ...], part: Part) -> tuple[str | None, ...]:
    """A part's token from ``Storage.events.latest(scope, WATCHED)``."""
    return tuple(latest[_POSITION[str(t)]] for t in _EVENTS[part])


@dataclass(slots=True)
class _Entry:
    token: tuple[str | None, ...]
    value: Any


class ScopeCache:
    """One scope's entries: the scope-wide parts, and the strategies of its recent
    tasks (keyed by the task's text)."""

    __slots__ = ("_tasks", "_wide")

    def __init__(self, strategy_tasks: int) -> None:
        self._wide: dict[Part, _Entry] = {}
        self._tasks: LruMap[str, _Entry] = LruMap(strategy_tasks)

    def get(self, part: Part, token: tuple[str | None, ...], key: str = "") -> Any | None:
        """The value kept under ``token``, or None (missing, or stale and dropped)."""
        entries: MutableMapping[Any, _Entry] = (
            self._tasks if part is Part.STRATEGIES else self._wide
        )
        slot: Any = key if part is Part.STRATEGIES else part
        entry = entries.get(slot)
        if entry is None:
            return None
        if entry.token != token:
            entries.pop(slot, None)
            return None
        return entry.value

    def put(self, part: Part, token: tuple[str | None, ...], value: Any, key: str = "") -> None:
        if part is Part.STRATEGIES:
            self._tasks[key] = _Entry(token, value)
        else:
            self._wide[part] = _Entry(token, value)

    def __len__(self) -> int:
        return len(self._wide) + len(self._tasks)
