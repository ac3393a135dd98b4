"""Working memory: budgets, eviction by priority, update in place, rendering."""

import pytest

from ucma.errors import ValidationError
from ucma.memory.working import WorkingMemory, eviction_priority

HOUR = 3600.0


class FakeClock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, hours: float) -> None:
        self.now += hours * HOUR


def words(text: str) -> int:
    return len(text.split())


def make(system: int = 10, active: int = 10, staging: int = 10, clock: FakeClock | None = None):
    clock = clock or FakeClock()
    memory = WorkingMemory(
        {"system": system, "active": active, "staging": staging}, words, clock=clock
    )
    return memory, clock


def held(memory: WorkingMemory, zone: str) -> list[str]:
    return [item.item_id for item in memory.items(zone)]


def test_priority_formula() -> None:
    assert eviction_priority(1.0, 0.0, 0.0) == pytest.approx(1.0)
    assert eviction_priority(0.5, 0.0, 3 * HOUR) == pytest.approx(0.35 + 0.3 / 4)
    # an access time in the future counts as now
    assert eviction_priority(0.0, 10 * HOUR, 0.0) == pytest.approx(0.3)


def test_evicts_lowest_priority_first() -> None:
    memory, _ = make(active=9)
    assert memory.add("low", "a b c", "active", 0.2)
    assert memory.add("mid", "d e f", "active", 0.5)
    assert memory.add("high", "g h i", "active", 0.9)

    assert memory.add("new", "j k l", "active", 0.4)
    assert sorted(held(memory, "active")) == ["high", "mid", "new"]

    assert memory.add("big", "1 2 3 4 5 6", "active", 0.1)
    # "new" (0.4) and "mid" (0.5) go; "high" survives; the newcomer is never its own victim
    assert sorted(held(memory, "active")) == ["big", "high"]
    assert memory.usage()["active"]["used"] == 9


def test_recency_can_outweigh_importance() -> None:
    memory, clock = make(active=4)
    memory.add("stale", "a b", "active", 0.6)
    clock.advance(10)
    memory.add("fresh", "c d", "active", 0.5)
    # stale: 0.42 + 0.3/11 = 0.447; fresh: 0.35 + 0.3 = 0.65
    assert memory.add("x", "e f", "active", 0.9)
    assert sorted(held(memory, "active")) == ["fresh", "x"]

    memory, clock = make(active=4)
    memory.add("stale", "a b", "active", 0.6)
    clock.advance(10)
    memory.add("fresh", "c d", "active", 0.5)
    clock.advance(10)
    assert memory.get("stale") is not None  # the touch makes it the fresher one
    assert memory.add("x", "e f", "active", 0.9)
    assert sorted(held(memory, "active")) == ["stale", "x"]


def test_equal_priorities_evict_deterministically() -> None:
    memory, _ = make(active=2)
    memory.add("b", "one", "active", 0.5)
    memory.add("a", "two", "active", 0.5)
    memory.add("x", "three", "active", 0.5)  # same clock: equal priority, smallest id goes
    assert sorted(held(memory, "active")) == ["b", "x"]


def test_system_zone_is_never_evicted() -> None:
    memory, _ = make(system=4, active=2)
    assert memory.add("rules", "a b c", "system", 0.1)
    assert not memory.add("more", "d e", "system", 1.0)
    assert held(memory, "system") == ["rules"]
    assert memory.usage()["system"]["used"] == 3

    assert memory.add("work", "x y", "active", 0.1)
    assert memory.add("work2", "z w", "active", 0.1)
    assert held(memory, "system") == ["rules"]
    assert memory.add("fits", "d", "system", 0.5)
    assert memory.usage()["system"]["used"] == 4


def test_oversize_item_is_rejected_without_side_effects() -> None:
    memory, clock = make(active=5)
    memory.add("a", "one two", "active", 0.1)
    memory.add("b", "three four", "active", 0.1)
    before = (memory.items("active"), memory.usage(), memory.render_context())
    clock.advance(1)

    assert not memory.add("huge", "1 2 3 4 5 6", "active", 1.0)
    assert not memory.add("a", "1 2 3 4 5 6", "active", 1.0)  # oversize update keeps the old
    assert (memory.items("active"), memory.usage(), memory.render_context()) == before
    assert "huge" not in memory


def test_update_in_place_keeps_accounting_exact() -> None:
    memory, clock = make(active=6, staging=4)
    memory.add("a", "one two three", "active", 0.3)
    inserted = memory.items("active")[0].inserted_at
    clock.advance(1)
    assert memory.add("a", "one two three four five", "active", 0.7)
    item = memory.items("active")[0]
    assert (item.content, item.token_count, item.importance) == ("one two three four five", 5, 0.7)
    assert item.inserted_at == inserted
    assert item.last_accessed == clock.now
    assert memory.usage()["active"]["used"] == 5
    assert len(memory) == 1

    # growing within a full zone frees its own old tokens first and evicts only what it must
    memory.add("b", "x", "active", 0.1)
    assert memory.add("a", "1 2 3 4 5 6", "active", 0.7)
    assert held(memory, "active") == ["a"]
    assert memory.usage()["active"]["used"] == 6

    # moving zones
    memory.add("s", "p q", "staging", 0.9)
    assert memory.add("a", "m n", "staging", 0.2)
    assert memory.usage()["active"]["used"] == 0
    assert memory.usage()["staging"]["used"] == 4
    assert held(memory, "staging") == ["s", "a"]

    # a move that cannot fit leaves the item where it was
    memory.add("rules", "r r r r r r r r r r", "system", 1.0)
    assert not memory.add("a", "m n", "system", 0.2)
    assert held(memory, "staging") == ["s", "a"]
    assert memory.usage()["system"]["used"] == 10


def test_get_touches_and_remove() -> None:
    memory, clock = make()
    memory.add("a", "one", "active", 0.5)
    clock.advance(2)
    item = memory.get("a")
    assert item is not None and item.last_accessed == clock.now
    assert memory.get("missing") is None
    assert memory.remove("a")
    assert not memory.remove("a")
    assert memory.usage()["active"]["used"] == 0


def test_render_order_and_empty_zones_skipped() -> None:
    memory, _ = make()
    memory.add("s2", "second rule", "staging", 0.2)
    memory.add("a1", "low work", "active", 0.1)
    memory.add("a2", "high work", "active", 0.9)
    memory.add("a3", "tied work", "active", 0.1)
    assert memory.render_context() == "high work\nlow work\ntied work\n\nsecond rule"

    memory.add("sys", "be kind", "system", 0.5)
    assert memory.render_context() == "be kind\n\nhigh work\nlow work\ntied work\n\nsecond rule"
    assert WorkingMemory({"system": 1, "active": 1, "staging": 1}, words).render_context() == ""


def test_clear_zone_and_usage() -> None:
    memory, _ = make(system=10, active=8, staging=0)
    memory.add("a", "one two", "active", 0.5)
    memory.add("b", "three four", "active", 0.5)
    memory.add("s", "rule", "system", 0.5)
    assert memory.usage() == {
        "system": {"used": 1, "budget": 10, "pct": 10.0},
        "active": {"used": 4, "budget": 8, "pct": 50.0},
        "staging": {"used": 0, "budget": 0, "pct": 0.0},
    }
    assert memory.clear_zone("active") == 2
    assert memory.clear_zone("active") == 0
    assert memory.usage()["active"]["used"] == 0
    assert held(memory, "system") == ["s"]
    assert memory.clear_zone("system") == 1


def test_invalid_arguments_raise_validation_error() -> None:
    memory, _ = make()
    with pytest.raises(ValidationError):
        memory.add("a", "x", "scratch", 0.5)
    with pytest.raises(ValidationError):
        memory.clear_zone("scratch")
    with pytest.raises(ValidationError):
        memory.items("scratch")
    for importance in (-0.1, 1.5, float("nan"), True):
        with pytest.raises(ValidationError):
            memory.add("a", "x", "active", importance)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        memory.add("", "x", "active", 0.5)
    with pytest.raises(ValidationError):
        WorkingMemory({"system": 1, "active": 1}, words)
    with pytest.raises(ValidationError):
        WorkingMemory({"system": 1, "active": 1, "staging": 1, "extra": 1}, words)
    with pytest.raises(ValidationError):
        WorkingMemory({"system": 1, "active": -1, "staging": 1}, words)
    broken = WorkingMemory({"system": 1, "active": 1, "staging": 1}, lambda text: -1)
    with pytest.raises(ValidationError):
        broken.add("a", "x", "active", 0.5)
    assert len(memory) == 0
