"""The second keyword field of an episode: its session's preceding episode and its date.

A reply often shares no words with the question later asked about it ("How did
the support group go?" / "So powerful, I cried."), but the turn it answers
does; and questions name days ("in May 2023") that turns never spell out. So
each episode's ``search_context`` holds the content of the episode before it
in the same session (by timestamp, at insertion time) and its date in words,
in UTC. The field is weighted below the episode's own content (``keywords``).

An episode inserted before existing ones of its session does not rewrite the
context of its successors: the context is what preceded an episode when it
was recorded, which is also what an imported history reproduces.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime

from ucma.types import Episode

__all__ = ["backfill_contexts", "date_words", "episode_contexts"]

MAX_PREVIOUS_CHARS = 2_000

_PREVIOUS = """
SELECT m.content FROM episodes t JOIN memories m ON m.seq = t.seq
WHERE t.user_id = ? AND t.agent_id = ? AND t.session_id = ? AND t.timestamp <= ?
ORDER BY t.timestamp DESC, t.seq DESC LIMIT 1
"""


def date_words(timestamp: float) -> str:
    """ "8 May 2023" for a timestamp (UTC); empty when out of the calendar's range."""
    try:
        day = datetime.fromtimestamp(timestamp, UTC)
    except (OverflowError, OSError, ValueError):
        return ""
    return f"{day.day} {day:%B} {day.year}"


def _context(previous: str | None, timestamp: float) -> str:
    parts = [previous[:MAX_PREVIOUS_CHARS]] if previous else []
    date = date_words(timestamp)
    if date:
        parts.append(date)
    return "\n".join(parts)


def episode_contexts(conn: sqlite3.Connection, episodes: Sequence[Episode]) -> list[str]:
    """Contexts for a batch about to be inserted, in the batch's order.

    Within the batch, episodes of one session follow each other by timestamp
    (batch order breaks ties); the first of each session looks up its
    predecessor among the stored episodes.
    """
    order = sorted(
        range(len(episodes)),
        key=lambda i: (
            episodes[i].user_id,
            episodes[i].agent_id,
            episodes[i].session_id,
            episodes[i].timestamp,
            i,
        ),
    )
    contexts = [""] * len(episodes)
    previous_key: tuple[str, str, str] | None = None
    previous_content: str | None = None
    for i in order:
        episode = episodes[i]
        key = (episode.user_id, episode.agent_id, episode.session_id)
        if key != previous_key:
            row = conn.execute(_PREVIOUS, (*key, float(episode.timestamp))).fetchone()
            previous_content = row[0] if row else None
            previous_key = key
        contexts[i] = _context(previous_content, episode.timestamp)
        previous_content = episode.content
    return contexts


def backfill_contexts(conn: sqlite3.Connection) -> None:
    """Set the context of every stored episode (used once, by migration 5)."""
    rows = conn.execute(
        """
        SELECT t.seq, t.user_id, t.agent_id, t.session_id, t.timestamp, m.content
        FROM episodes t JOIN memories m ON m.seq = t.seq
        ORDER BY t.user_id, t.agent_id, t.session_id, t.timestamp, t.seq
        """
    ).fetchall()
    updates = []
    previous_key = None
    previous_content: str | None = None
    for seq, user_id, agent_id, session_id, timestamp, content in rows:
        key = (user_id, agent_id, session_id)
        if key != previous_key:
            previous_key, previous_content = key, None
        updates.append((_context(previous_content, timestamp), seq))
        previous_content = content
    conn.executemany("UPDATE memories SET search_context = ? WHERE seq = ?", updates)
