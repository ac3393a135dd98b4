"""Splitting a long text into model windows: pure functions over character and token offsets.

MiniLM was trained on windows of 128 word pieces and reads a longer text worse, so a memory
longer than one window is embedded window by window and the window vectors are pooled into one
(see :class:`~ucma.embeddings.local.LocalEmbedder`). Windows end on sentence boundaries where
one lies in the second half of the window, and consecutive windows share up to ``overlap``
tokens (whole sentences where possible) so a fact cut at a boundary is still read whole once.

Everything here is pure and deterministic: the same text and tokenization give the same windows.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

__all__ = ["plan_windows", "sentence_starts", "token_boundaries"]

# A sentence ends at . ! ? (with closing quotes or brackets) before whitespace; a line break
# or a list marker starts a new unit too. The match's end is where the next unit begins.
_BREAK = re.compile(r"[.!?…]+[\"'”’)\]]*\s+|\n\s*")


def sentence_starts(text: str) -> list[int]:
    """Character offsets where a sentence or line of ``text`` begins, ascending; 0 first.

    A boundary follows sentence-final punctuation and whitespace, or a line break. Offsets
    at the very end of the text are left out (no sentence starts there).
    """
    starts = [0]
    for match in _BREAK.finditer(text):
        if 0 < match.end() < len(text):
            starts.append(match.end())
    return starts


def token_boundaries(token_starts: Sequence[int], char_starts: Sequence[int]) -> list[int]:
    """Token indices at which a sentence begins, ascending and unique.

    ``token_starts`` are the character offsets where each token starts (non-decreasing, as a
    tokenizer reports them); each sentence start maps to the first token at or after it.
    """
    found: list[int] = []
    for char in char_starts:
        index = bisect.bisect_left(token_starts, char)
        if index < len(token_starts) and (not found or index > found[-1]):
            found.append(index)
    return found


def plan_windows(
    n_tokens: int, boundaries: Sequence[int], window: int, overlap: int
) -> list[tuple[int, int]]:
    """Half-open token spans ``(start, end)`` covering ``range(n_tokens)`` in windows.

    A text of at most ``window`` tokens is one span. Otherwise each window holds at most
    ``window`` tokens and ends at the last sentence boundary in its second half (a hard cut
    where there is none); the next window starts at the first boundary within ``overlap``
    tokens before that end, or, after a hard cut, ``overlap`` tokens before it. The last
    window is extended backwards, to the earliest boundary that keeps it within ``window``,
    or to a full ``window`` when that would leave it shorter than half a window, so no text
    ends in a fragment that would weigh as much as a full window when pooled.
    Requires ``window >= 2`` and ``0 <= overlap < window // 2``; raises ValueError otherwise.
    """
    if window < 2 or not 0 <= overlap < window // 2:
        raise ValueError(f"need window >= 2 and 0 <= overlap < window // 2: {window}, {overlap}")
    if n_tokens <= window:
        return [(0, max(n_tokens, 0))]
    marks = sorted(b for b in set(boundaries) if 0 < b < n_tokens)
    spans: list[tuple[int, int]] = []
    start = 0
    while n_tokens - start > window:
        limit = start + window
        cut = _last_in(marks, start + window // 2 + 1, limit)
        end = cut if cut is not None else limit
        spans.append((start, end))
        resume = _first_in(marks, end - overlap, end)
        if resume is None:
            resume = end if cut is not None else end - overlap
        start = resume
    tail = _first_in(marks, n_tokens - window, start)
    if tail is None or n_tokens - tail < window // 2:
        tail = n_tokens - window
    spans.append((tail, n_tokens))
    return spans


def _last_in(marks: Sequence[int], low: int, high: int) -> int | None:
    """The largest mark in ``[low, high]``, or None."""
    index = bisect.bisect_right(marks, high)
    return marks[index - 1] if index and marks[index - 1] >= low else None


def _first_in(marks: Sequence[int], low: int, high: int) -> int | None:
    """The smallest mark in ``[low, high]``, or None."""
    index = bisect.bisect_left(marks, low)
    return marks[index] if index < len(marks) and marks[index] <= high else None
