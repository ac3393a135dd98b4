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

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from ucma.types import Episode

__all__ = ["MAX_PREVIOUS_CHARS", "SessionKey", "context_text", "date_words", "episode_contexts"]

MAX_PREVIOUS_CHARS = 2_000

SessionKey = tuple[str, str, str]
"""(user_id, agent_id, session_id)."""


def date_words(timestamp: float) -> str:
    """ "8 May 2023" for a timestamp (UTC); empty when out of the calendar's range."""
    try:
        day = datetime.fromtimestamp(timestamp, UTC)
    except (OverflowError, OSError, ValueError):
        return ""
    return f"{day.day} {day:%B} {day.year}"


def context_text(previous: str | None, timestamp: float) -> str:
    """The context of an episode at ``timestamp`` whose session's preceding episode
    is ``previous`` (None for the first)."""
    parts = [previous[:MAX_PREVIOUS_CHARS]] if previous else []
    date = date_words(timestamp)
    if date:
        parts.append(date)
    return "\n".join(parts)


def episode_contexts(
    episodes: Sequence[Episode], stored_previous: Callable[[SessionKey, float], str | None]
) -> list[str]:
    """Contexts for a batch about to be inserted, in the batch's order.

    Within the batch, episodes of one session follow each other by timestamp
    (batch order breaks ties); the first of each session takes its predecessor
    among the stored episodes from ``stored_previous(session key, timestamp)``: the
    content of the session's stored episode with the latest timestamp at or before
    it (the last stored on a tie), None when there is none.
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
            previous_content = stored_previous(key, float(episode.timestamp))
            previous_key = key
        contexts[i] = context_text(previous_content, episode.timestamp)
        previous_content = episode.content
    return contexts
