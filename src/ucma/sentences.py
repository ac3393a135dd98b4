"""The sentences of a chat message, as the rules that read one statement at a time
split it (people, statements, recall's value test). Pure."""

from __future__ import annotations

import re

__all__ = ["sentences"]

# A sentence ends at . ! or ? before whitespace; a line break ends one too.
_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, empty ones left out."""
    return [s.strip() for s in _BREAK.split(text) if s.strip()]
