"""Working memory: the LLM context window managed as three token-budgeted zones.

Zones, rendered in this order:

- ``system``: core instructions. Never evicted; an item that does not fit is rejected.
- ``active``: the current working content. Evicted by priority when space is needed.
- ``staging``: retrieved memories awaiting use. Evicted by priority when space is needed.

Eviction (seed 001): the victim is the item of the target zone with the lowest priority,
``importance * 0.7 + recency * 0.3`` with ``recency = 1 / (1 + hours since last access)``,
repeated until the new item fits. Ties go to the least recently accessed item, then the
oldest insertion, then the smallest id, so eviction is deterministic.

Guarantees the seed's version lacked:

- an item larger than its zone's whole budget is rejected before anything is evicted, and a
  rejected ``add`` changes nothing (evictions are planned first and applied only on success);
- updating an existing id in place re-checks the budget, including when the item moves to
  another zone, and keeps the usage accounting exact;
- callers receive frozen ``WorkingMemoryItem`` snapshots, so they cannot corrupt the accounting.

All methods are synchronous and guarded by a ``threading.Lock``: no I/O happens inside, so an
async caller can use them directly without blocking its event loop. ``count_tokens`` runs
outside the lock.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from ucma.errors import ValidationError

__all__ = [
    "IMPORTANCE_WEIGHT",
    "RECENCY_WEIGHT",
    "ZONES",
    "WorkingMemory",
    "WorkingMemoryItem",
    "eviction_priority",
]

logger = logging.getLogger(__name__)

ZONES: tuple[str, ...] = ("system", "active", "staging")
"""Zone names in render order."""

EVICTABLE_ZONES: frozenset[str] = frozenset({"active", "staging"})

IMPORTANCE_WEIGHT = 0.7
RECENCY_WEIGHT = 0.3
_SECONDS_PER_HOUR = 3600.0


def eviction_priority(importance: float, last_accessed: float, now: float) -> float:
    """Seed 001's eviction priority; the lowest value is evicted first.

    ``importance`` is in [0, 1]; timestamps are epoch seconds. An access time in the future
    (clock skew) counts as "just now" rather than producing a recency above 1.
    """
    hours = max(0.0, now - last_accessed) / _SECONDS_PER_HOUR
    recency = 1.0 / (1.0 + hours)
    return importance * IMPORTANCE_WEIGHT + recency * RECENCY_WEIGHT


@dataclass(frozen=True, slots=True)
class WorkingMemoryItem:
    """A snapshot of one item in the context window (timestamps in epoch seconds)."""

    item_id: str
    content: str
    zone: str
    token_count: int
    importance: float
    inserted_at: float
    last_accessed: float


Rewrite = Callable[[WorkingMemoryItem], Sequence[str] | None]
"""What ``render_context`` asks of each item: the lines standing for it, or None."""


def _check_zone(zone: object) -> str:
    if not isinstance(zone, str) or zone not in ZONES:
        raise ValidationError(f"unknown working-memory zone {zone!r}; use one of {list(ZONES)}")
    return zone


def _render_key(item: WorkingMemoryItem) -> tuple[float, float, str]:
    return (-item.importance, item.inserted_at, item.item_id)


class WorkingMemory:
    """Token-budgeted context window with the zones ``system``, ``active`` and ``staging``.

    ``budgets`` maps each of the three zones to a non-negative token budget (all three are
    required). ``count_tokens`` returns the token cost of a text. ``clock`` returns epoch
    seconds and drives recency; tests pass a fake one.
    """

    def __init__(
        self,
        budgets: Mapping[str, int],
        count_tokens: Callable[[str], int],
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not isinstance(budgets, Mapping):
            raise ValidationError("budgets must be a mapping of zone name to token budget")
        missing = [zone for zone in ZONES if zone not in budgets]
        unknown = sorted(str(zone) for zone in budgets if zone not in ZONES)
        if missing or unknown:
            raise ValidationError(
                f"budgets must name exactly the zones {list(ZONES)}; "
                f"missing {missing}, unknown {unknown}"
            )
        for zone in ZONES:
            budget = budgets[zone]
            if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
                raise ValidationError(
                    f"budget for zone {zone!r} must be an int >= 0, got {budget!r}"
                )
        if not callable(count_tokens):
            raise ValidationError("count_tokens must be a callable str -> int")
        self._budgets: dict[str, int] = {zone: budgets[zone] for zone in ZONES}
        self._count_tokens = count_tokens
        self._clock = clock
        self._items: dict[str, WorkingMemoryItem] = {}
        self._usage: dict[str, int] = dict.fromkeys(ZONES, 0)
        self._lock = threading.Lock()

    def _tokens(self, content: str) -> int:
        count = self._count_tokens(content)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValidationError(f"count_tokens must return an int >= 0, got {count!r}")
        return count

    def _plan_evictions(
        self, zone: str, needed: int, exclude: str, now: float
    ) -> list[WorkingMemoryItem] | None:
        """Victims to evict from ``zone`` so that ``needed`` more tokens fit, or None.

        ``exclude`` is the id being added or updated; it is never its own victim. Called with
        the lock held; changes nothing.
        """
        free = self._budgets[zone] - self._usage[zone]
        if needed <= free:
            return []
        if zone not in EVICTABLE_ZONES:
            return None
        candidates = sorted(
            (
                item
                for item in self._items.values()
                if item.zone == zone and item.item_id != exclude
            ),
            key=lambda item: (
                eviction_priority(item.importance, item.last_accessed, now),
                item.last_accessed,
                item.inserted_at,
                item.item_id,
            ),
        )
        victims: list[WorkingMemoryItem] = []
        for item in candidates:
            if needed <= free:
                break
            victims.append(item)
            free += item.token_count
        return victims if needed <= free else None

    def add(self, item_id: str, content: str, zone: str, importance: float) -> bool:
        """Put ``content`` in ``zone`` under ``item_id``; return whether it is now held.

        An existing id is updated in place (content, importance, zone; the access time is
        refreshed, the insertion time kept). Lower-priority items of the target zone are
        evicted if needed, never from ``system``. Returns False, changing nothing, when the
        item exceeds the zone's whole budget or the ``system`` zone is full. Raises
        ``ValidationError`` for an unknown zone, an empty id, or importance outside [0, 1].
        """
        _check_zone(zone)
        if not isinstance(item_id, str) or not item_id:
            raise ValidationError("item_id must be a non-empty string")
        if not isinstance(content, str):
            raise ValidationError(f"content must be a str, got {type(content).__name__}")
        if (
            isinstance(importance, bool)
            or not isinstance(importance, int | float)
            or not math.isfinite(importance)
            or not 0.0 <= importance <= 1.0
        ):
            raise ValidationError(f"importance must be a number in [0, 1], got {importance!r}")
        tokens = self._tokens(content)
        budget = self._budgets[zone]
        if tokens > budget:
            logger.warning(
                "working memory rejected %s: %d tokens exceed the %r zone budget of %d",
                item_id,
                tokens,
                zone,
                budget,
            )
            return False

        with self._lock:
            now = float(self._clock())
            old = self._items.get(item_id)
            freed_in_zone = old.token_count if old is not None and old.zone == zone else 0
            victims = self._plan_evictions(zone, tokens - freed_in_zone, item_id, now)
            if victims is None:
                logger.warning(
                    "working memory rejected %s: %d tokens do not fit the %r zone "
                    "(used %d of %d, zone not evictable)",
                    item_id,
                    tokens,
                    zone,
                    self._usage[zone],
                    budget,
                )
                return False
            for victim in victims:
                del self._items[victim.item_id]
                self._usage[victim.zone] -= victim.token_count
                logger.debug(
                    "working memory evicted %s from %r (importance %.2f)",
                    victim.item_id,
                    victim.zone,
                    victim.importance,
                )
            if old is not None:
                self._usage[old.zone] -= old.token_count
                item = replace(
                    old,
                    content=content,
                    zone=zone,
                    token_count=tokens,
                    importance=float(importance),
                    last_accessed=now,
                )
            else:
                item = WorkingMemoryItem(
                    item_id=item_id,
                    content=content,
                    zone=zone,
                    token_count=tokens,
                    importance=float(importance),
                    inserted_at=now,
                    last_accessed=now,
                )
            self._items[item_id] = item
            self._usage[zone] += tokens
        logger.debug(
            "working memory %s %s in %r (%d tokens, %d evicted)",
            "updated" if old is not None else "added",
            item_id,
            zone,
            tokens,
            len(victims),
        )
        return True

    def get(self, item_id: str) -> WorkingMemoryItem | None:
        """Return the item (after refreshing its access time), or None if it is not held."""
        with self._lock:
            item = self._items.get(item_id)
            if item is None:
                return None
            item = replace(item, last_accessed=float(self._clock()))
            self._items[item_id] = item
            return item

    def remove(self, item_id: str) -> bool:
        """Remove the item; return whether it was held."""
        with self._lock:
            item = self._items.pop(item_id, None)
            if item is None:
                return False
            self._usage[item.zone] -= item.token_count
            return True

    def clear_zone(self, zone: str) -> int:
        """Remove every item of ``zone`` (``system`` included: this is explicit, not eviction).

        Returns the number removed. Used by new sessions to empty ``active``.
        """
        _check_zone(zone)
        with self._lock:
            doomed = [item_id for item_id, item in self._items.items() if item.zone == zone]
            for item_id in doomed:
                del self._items[item_id]
            self._usage[zone] = 0
        logger.debug("working memory cleared %r (%d items)", zone, len(doomed))
        return len(doomed)

    def items(self, zone: str) -> list[WorkingMemoryItem]:
        """Items of ``zone`` in render order: importance descending, then insertion order."""
        _check_zone(zone)
        with self._lock:
            return sorted(
                (item for item in self._items.values() if item.zone == zone), key=_render_key
            )

    def render_context(self, rewrite: Rewrite | None = None) -> str:
        """The context text: zones in order system, active, staging; empty zones skipped.

        Items within a zone are joined by a newline, in ``items(zone)`` order; zones are
        separated by a blank line. Rendering does not count as an access.

        ``rewrite`` maps an item to the lines that stand for it now (None keeps its
        content, an empty list leaves it out): the engine replaces a staged memory that
        went stale by its current value. With a rewrite, a line already rendered is not
        repeated (compared without case, spacing or a final full stop), so each
        statement reaches the prompt once.
        """
        with self._lock:
            snapshot = list(self._items.values())
        sections = []
        seen: set[str] = set()
        for zone in ZONES:
            zone_items = sorted((item for item in snapshot if item.zone == zone), key=_render_key)
            lines: list[str] = []
            for item in zone_items:
                wanted = rewrite(item) if rewrite is not None else None
                if wanted is None and rewrite is None:
                    lines.append(item.content)
                    continue
                for line in [item.content] if wanted is None else wanted:
                    key = " ".join(line.lower().split()).rstrip(".")
                    if key and key not in seen:
                        seen.add(key)
                        lines.append(line)
            if lines:
                sections.append("\n".join(lines))
        return "\n\n".join(sections)

    def usage(self) -> dict[str, dict[str, float]]:
        """Per zone: ``used`` and ``budget`` in tokens, ``pct`` used (1 decimal, 0 if no budget)."""
        with self._lock:
            return {
                zone: {
                    "used": self._usage[zone],
                    "budget": self._budgets[zone],
                    "pct": (
                        round(100.0 * self._usage[zone] / self._budgets[zone], 1)
                        if self._budgets[zone]
                        else 0.0
                    ),
                }
                for zone in ZONES
            }

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._items

    def __len__(self) -> int:
        return len(self._items)
