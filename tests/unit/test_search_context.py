"""An episode's keyword context (``ucma.storage.index.search_context``): the preceding
turn of its session and its date, for a batch, with stored predecessors asked once per
session."""

from __future__ import annotations

from ucma.storage.index.search_context import (
    MAX_PREVIOUS_CHARS,
    SessionKey,
    context_text,
    date_words,
    episode_contexts,
)
from ucma.types import Episode

MAY_8 = 1_683_547_200.0  # 2023-05-08 12:00 UTC


def episode(content: str, session: str, timestamp: float, user: str = "alice") -> Episode:
    return Episode(
        id=f"ep_{content}",
        user_id=user,
        content=content,
        created_at=timestamp,
        session_id=session,
        timestamp=timestamp,
    )


def test_date_words_and_the_context_text() -> None:
    assert date_words(MAY_8) == "8 May 2023"
    assert date_words(1e300) == ""
    assert context_text(None, MAY_8) == "8 May 2023"
    assert context_text("How did the support group go?", MAY_8) == (
        "How did the support group go?\n8 May 2023"
    )
    assert context_text("x" * (MAX_PREVIOUS_CHARS + 50), 1e300) == "x" * MAX_PREVIOUS_CHARS


def test_a_batch_follows_its_sessions_by_time_and_asks_the_store_once_per_session() -> None:
    asked: list[tuple[SessionKey, float]] = []
    stored = {("alice", "default", "s1"): "stored turn of s1"}

    def stored_previous(key: SessionKey, timestamp: float) -> str | None:
        asked.append((key, timestamp))
        return stored.get(key)

    batch = [
        episode("s1 second", "s1", MAY_8 + 60),
        episode("s2 only", "s2", MAY_8),
        episode("s1 first", "s1", MAY_8),
        episode("s1 tie", "s1", MAY_8 + 60),
        episode("bob s1", "s1", MAY_8, user="bob"),
    ]
    contexts = episode_contexts(batch, stored_previous)
    assert contexts == [
        "s1 first\n8 May 2023",
        "8 May 2023",
        "stored turn of s1\n8 May 2023",
        "s1 second\n8 May 2023",
        "8 May 2023",
    ]
    assert sorted(asked) == [
        (("alice", "default", "s1"), MAY_8),
        (("alice", "default", "s2"), MAY_8),
        (("bob", "default", "s1"), MAY_8),
    ]
