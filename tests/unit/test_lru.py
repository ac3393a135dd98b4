"""``LruMap``: never more than its capacity, the least recently used dropped first."""

from __future__ import annotations

import pytest

from ucma.errors import ConfigError
from ucma.lru import LruMap


def test_it_never_holds_more_than_its_capacity() -> None:
    evicted: list[tuple[int, str]] = []
    m: LruMap[int, str] = LruMap(3, lambda k, v: evicted.append((k, v)))
    for i in range(100):
        m[i] = str(i)
        assert len(m) <= 3
    assert sorted(m) == [97, 98, 99]
    assert evicted == [(i, str(i)) for i in range(97)]


def test_reads_and_writes_keep_an_entry_and_membership_does_not() -> None:
    m: LruMap[str, int] = LruMap(2)
    m["a"], m["b"] = 1, 2
    assert m["a"] == 1  # a is now the most recent
    m["c"] = 3
    assert "b" not in m and dict(m) == {"a": 1, "c": 3}
    assert m.get("a") == 1
    assert "c" in m  # does not refresh c
    m["d"] = 4
    assert sorted(m) == ["a", "d"]
    assert m.setdefault("a", 9) == 1 and m.setdefault("e", 5) == 5
    assert sorted(m) == ["a", "e"]
    assert m.pop("a") == 1 and m.pop("a", None) is None
    m.clear()
    assert len(m) == 0 and m.get("e") is None


@pytest.mark.parametrize("capacity", [0, -1, 1.5, True, "3"])
def test_a_capacity_must_be_a_positive_integer(capacity: object) -> None:
    with pytest.raises(ConfigError, match="capacity"):
        LruMap(capacity)  # type: ignore[arg-type]
