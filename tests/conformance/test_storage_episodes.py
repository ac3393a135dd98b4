"""Episodic store: time ranges through hour buckets, expiry, sessions, stats."""

from __future__ import annotations

import dataclasses
import math

import pytest

from ucma.types import Scope, Tier

ALICE = Scope("alice", "assistant")
HOUR = 3600.0
DAY = 86400.0


@pytest.fixture
def timeline(storage, make):
    """Episodes on and around hour boundaries, over several days and both tiers."""
    t0 = make.t0
    offsets = {
        "before": -1.0,
        "start": 0.0,
        "mid": 1800.0,
        "edge": HOUR - 0.5,
        "next": HOUR,
        "next2": 2 * HOUR + 1,
        "day2": DAY + 5,
        "day3": 2 * DAY + 7 * HOUR,
        "week": 7 * DAY,
    }
    episodes = {}
    for i, (name, offset) in enumerate(offsets.items()):
        tier = Tier.SHORT_TERM if i % 2 == 0 else Tier.MEDIUM_TERM
        episodes[name] = make.episode(
            ALICE,
            id=f"ep-{name}",
            timestamp=t0 + offset,
            tier=tier,
            session_id="s-even" if i % 2 == 0 else "s-odd",
        )
    # inserted out of order: results must come back oldest first anyway
    storage.episodes.add(list(reversed(episodes.values())), make.vectors(len(episodes)))
    return episodes


def ids(episodes) -> list[str]:
    return [e.id for e in episodes]


def test_time_range_includes_both_bounds(storage, make, timeline) -> None:
    t0 = make.t0
    assert ids(storage.episodes.time_range(ALICE, t0, t0 + HOUR)) == [
        "ep-start",
        "ep-mid",
        "ep-edge",
        "ep-next",
    ]
    assert ids(storage.episodes.time_range(ALICE, t0 + 0.001, t0 + HOUR - 0.5)) == [
        "ep-mid",
        "ep-edge",
    ]
    assert ids(storage.episodes.time_range(ALICE, t0 - 1, t0 - 1)) == ["ep-before"]
    assert ids(storage.episodes.time_range(ALICE, t0 + 1, t0 + 1799)) == []


def test_time_range_spans_days_and_both_tiers(storage, make, timeline) -> None:
    t0 = make.t0
    got = storage.episodes.time_range(ALICE, t0 + HOUR, t0 + 3 * DAY)
    assert ids(got) == ["ep-next", "ep-next2", "ep-day2", "ep-day3"]
    assert {e.tier for e in got} == {Tier.SHORT_TERM, Tier.MEDIUM_TERM}
    everything = storage.episodes.time_range(ALICE, -math.inf, math.inf)
    assert ids(everything) == [e.id for e in sorted(timeline.values(), key=lambda e: e.timestamp)]
    assert everything[0] == timeline["before"]


def test_time_range_limit_and_empty_ranges(storage, make, timeline) -> None:
    t0 = make.t0
    assert ids(storage.episodes.time_range(ALICE, t0, t0 + 8 * DAY, limit=2)) == [
        "ep-start",
        "ep-mid",
    ]
    assert storage.episodes.time_range(ALICE, t0 + DAY, t0) == []
    assert storage.episodes.time_range(ALICE, t0, t0 + DAY, limit=0) == []
    assert storage.episodes.time_range(ALICE, t0 + 30 * DAY, t0 + 31 * DAY) == []


def test_time_range_excludes_archived_unless_asked(storage, make, timeline) -> None:
    t0 = make.t0
    storage.memories.set_archived(ALICE, ["ep-mid"], t0)
    assert ids(storage.episodes.time_range(ALICE, t0, t0 + HOUR - 0.5)) == ["ep-start", "ep-edge"]
    assert ids(storage.episodes.time_range(ALICE, t0, t0 + HOUR - 0.5, include_archived=True)) == [
        "ep-start",
        "ep-mid",
        "ep-edge",
    ]


def test_in_range_lists_the_ids_time_range_would_return(storage, make, timeline) -> None:
    t0 = make.t0
    storage.memories.set_archived(ALICE, ["ep-mid"], t0)
    for start, end in [(t0, t0 + HOUR), (-math.inf, math.inf), (t0 + HOUR, t0 + 3 * DAY)]:
        assert storage.episodes.in_range(ALICE, start, end, limit=100) == ids(
            storage.episodes.time_range(ALICE, start, end)
        )
    assert storage.episodes.in_range(ALICE, t0, t0 + 8 * DAY, limit=2) == ["ep-start", "ep-edge"]
    assert storage.episodes.in_range(ALICE, t0 + DAY, t0, limit=5) == []
    assert storage.episodes.in_range(ALICE, t0, t0 + DAY, limit=0) == []
    assert storage.episodes.in_range(ALICE, math.nan, t0, limit=5) == []


def test_time_range_follows_updated_timestamps(storage, make, timeline) -> None:
    moved = dataclasses.replace(timeline["week"], timestamp=make.t0 + 1000.0)
    storage.episodes.update(moved)
    assert "ep-week" in ids(storage.episodes.time_range(ALICE, make.t0, make.t0 + 1000.0))
    assert storage.episodes.time_range(ALICE, make.t0 + 6 * DAY, make.t0 + 8 * DAY) == []


def test_expired_short_term_counts_from_storage_not_event_time(storage, make) -> None:
    """The TTL runs from ``created_at``, strictly before the cutoff; the event
    ``timestamp`` only orders the result (oldest event first)."""
    t0 = make.t0

    def short(name: str, *, timestamp: float, created: float):
        return make.episode(
            ALICE,
            id=f"ep-{name}",
            timestamp=timestamp,
            created_at=created,
            updated_at=created,
            tier=Tier.SHORT_TERM,
        )

    episodes = [
        short("stored-early", timestamp=t0 + 50.0, created=t0),
        short("imported", timestamp=t0 - 400 * DAY, created=t0 + DAY),
        short("stored-late", timestamp=t0 - 10.0, created=t0 + 2 * DAY),
        short("at-cutoff", timestamp=t0 + 60.0, created=t0 + DAY - 1.0),
        make.episode(ALICE, id="ep-medium", timestamp=t0, created_at=t0, tier=Tier.MEDIUM_TERM),
    ]
    storage.episodes.add(episodes, make.vectors(len(episodes)))
    cutoff = t0 + DAY - 1.0
    assert ids(storage.episodes.expired_short_term(ALICE, cutoff)) == ["ep-stored-early"]
    assert ids(storage.episodes.expired_short_term(ALICE, cutoff + 0.001)) == [
        "ep-stored-early",
        "ep-at-cutoff",
    ]
    # Ordered by event time: the import about last year comes first once expired.
    assert ids(storage.episodes.expired_short_term(ALICE, t0 + 3 * DAY)) == [
        "ep-imported",
        "ep-stored-late",
        "ep-stored-early",
        "ep-at-cutoff",
    ]
    storage.memories.set_archived(ALICE, ["ep-stored-early"], t0)
    assert "ep-stored-early" not in ids(storage.episodes.expired_short_term(ALICE, t0 + DAY))
    assert storage.episodes.expired_short_term(ALICE, t0 - 10) == []


def test_session_returns_its_episodes_oldest_first(storage, timeline) -> None:
    odd = storage.episodes.session(ALICE, "s-odd")
    assert ids(odd) == ["ep-start", "ep-edge", "ep-next2", "ep-day3"]
    assert storage.episodes.session(ALICE, "no-such-session") == []
    # Its newest live episode: the latest timestamp (the last stored among equals).
    assert storage.episodes.last_of_session(ALICE, "s-odd") == "ep-day3"
    storage.memories.set_archived(ALICE, ["ep-day3"], 1.0)
    assert storage.episodes.last_of_session(ALICE, "s-odd") == "ep-next2"
    assert storage.episodes.last_of_session(ALICE, "no-such-session") is None


def test_stats_count_tiers_and_buckets(storage, make, timeline) -> None:
    assert storage.episodes.stats(ALICE) == {
        "short_term_count": 5,
        "medium_term_count": 4,
        "temporal_buckets": 7,  # before | start, mid, edge | next | next2 | day2 | day3 | week
    }
    storage.memories.delete(ALICE, "ep-week")
    assert storage.episodes.stats(ALICE)["temporal_buckets"] == 6
