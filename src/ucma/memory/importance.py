"""Heuristic importance of raw input: seed 001's offline classifier, as a pure function.

    score = source_weight * 0.5 + keyword_boost * 0.3 + length_factor * 0.2

- ``source_weight``: system 0.90, user 0.70, tool_result 0.50, environment 0.30, any other
  source 0.40. The source is compared after ``strip().lower()``, so "User" counts as "user".
- ``keyword_boost``: 0.10 for each distinct keyword of ``HIGH_IMPORTANCE_KEYWORDS`` present,
  capped at 0.30.
- ``length_factor``: ``min(len(content) / 500, 1)``, in characters.

The result is clamped to [0, 1] and rounded to 3 places. With these weights it lies in
[0.15, 0.74]; the clamp only matters if the constants are changed.

Content without substance scores 0, so ``observe`` never stores it (seed 001's importance
gate, seed 003 R3): a message whose every word is a stopword or a phatic word ("ok
thanks", "lol", "sounds good!", "haha nice", an emoji) says nothing to remember, and
stored it came back as the top hit of unrelated questions.

Deviation from the seed, on purpose: keywords match whole words, not substrings. The seed
tests ``kw in content.lower()``, which finds "error" in "terrors", "important" in
"unimportant", "must" in "mustard" and "never" in "nevertheless". Here the content is split
into words (runs of letters and digits; apostrophes and hyphens separate words) and a keyword
matches a word equal to it or to its plural with "s" or "es" ("errors", "warnings",
"deadlines", "successes"). Other inflections count only when the seed lists them as keywords
of their own ("failed" and "failure" beside "error", "decided", "completed", "fixed").
"""

from __future__ import annotations

import re
from types import MappingProxyType

from ucma.errors import ValidationError
from ucma.retrieval.terms import STOPWORDS

__all__ = [
    "DEFAULT_SOURCE_WEIGHT",
    "HIGH_IMPORTANCE_KEYWORDS",
    "KEYWORD_BOOST_CAP",
    "KEYWORD_COEFFICIENT",
    "KEYWORD_HIT_VALUE",
    "LENGTH_COEFFICIENT",
    "LENGTH_SATURATION_CHARS",
    "SOURCE_COEFFICIENT",
    "SOURCE_WEIGHTS",
    "PHATIC_WORDS",
    "classify_importance",
    "has_substance",
    "matched_keywords",
]

SOURCE_WEIGHTS: MappingProxyType[str, float] = MappingProxyType(
    {
        "system": 0.90,
        "user": 0.70,
        "tool_result": 0.50,
        "environment": 0.30,
    }
)
DEFAULT_SOURCE_WEIGHT = 0.40

HIGH_IMPORTANCE_KEYWORDS: frozenset[str] = frozenset(
    {
        "error", "failed", "failure", "critical", "important", "remember",
        "always", "never", "decided", "preference", "must", "required",
        "deadline", "urgent", "warning", "success", "completed", "fixed",
    }
)  # fmt: skip

#: Words of acknowledgement, greeting and laughter that carry no content of their own.
PHATIC_WORDS: frozenset[str] = frozenset(
    {
        "ok", "okay", "okey", "k", "kk", "alright", "allright", "right", "sure", "yes", "yeah",
        "yea", "yep", "yup", "ya", "no", "nope", "nah", "thanks", "thank", "thx", "ty", "tysm",
        "cheers", "welcome", "np", "please", "pls", "plz", "sorry", "lol", "lmao", "lmfao",
        "rofl", "haha", "hahaha", "hehe", "heh", "hah", "ha", "xd", "omg", "wow", "whoa", "oh",
        "ah", "ahh", "uh", "um", "umm", "hmm", "hm", "mhm", "huh", "meh", "yay", "woo",
        "woohoo", "ooh", "oops", "hi", "hello", "hey", "heya", "hiya", "yo", "bye", "goodbye",
        "cya", "later", "night", "morning", "evening", "afternoon", "good", "great", "nice",
        "cool", "awesome", "fine", "perfect", "sounds", "gotcha", "noted", "got", "understood",
        "agreed", "much", "lot", "lots", "appreciate", "appreciated", "again", "indeed",
        "totally", "absolutely", "definitely", "exactly", "true", "same", "lovely", "sweet",
        "neat",
    }
)  # fmt: skip

KEYWORD_HIT_VALUE = 0.10
KEYWORD_BOOST_CAP = 0.30
LENGTH_SATURATION_CHARS = 500

SOURCE_COEFFICIENT = 0.5
KEYWORD_COEFFICIENT = 0.3
LENGTH_COEFFICIENT = 0.2

_WORD = re.compile(r"[^\W_]+")
_PLURAL_SUFFIXES = ("es", "s")


def _keyword_of(word: str) -> str | None:
    if word in HIGH_IMPORTANCE_KEYWORDS:
        return word
    for suffix in _PLURAL_SUFFIXES:
        if word.endswith(suffix) and word[: -len(suffix)] in HIGH_IMPORTANCE_KEYWORDS:
            return word[: -len(suffix)]
    return None


def matched_keywords(content: str) -> frozenset[str]:
    """The distinct keywords of ``HIGH_IMPORTANCE_KEYWORDS`` that ``content`` contains."""
    if not isinstance(content, str):
        raise ValidationError(f"content must be a str, got {type(content).__name__}")
    found = (_keyword_of(word) for word in _WORD.findall(content.lower()))
    return frozenset(keyword for keyword in found if keyword is not None)


def has_substance(content: str) -> bool:
    """Whether ``content`` holds at least one word that is neither a stopword nor phatic."""
    words = _WORD.findall(content.lower().replace("’", "'"))
    return any(
        word not in PHATIC_WORDS and word not in STOPWORDS and not _laughter(word) for word in words
    )


def _laughter(word: str) -> bool:
    """ "hahahaha", "lololol", "hehehe": repeated laughter syllables."""
    return len(word) >= 4 and any(
        word == (unit * len(word))[: len(word)] for unit in ("ha", "he", "lo", "ah")
    )


def classify_importance(content: str, source: str) -> float:
    """Importance in [0, 1] of ``content`` received from ``source``, by seed 001's heuristic;
    0 for content without substance (``has_substance``).

    Deterministic, offline and O(len(content)). Raises ``ValidationError`` if either argument
    is not a string.
    """
    if not isinstance(source, str):
        raise ValidationError(f"source must be a str, got {type(source).__name__}")
    keywords = matched_keywords(content)
    if not has_substance(content):
        return 0.0
    source_weight = SOURCE_WEIGHTS.get(source.strip().lower(), DEFAULT_SOURCE_WEIGHT)
    keyword_boost = min(len(keywords) * KEYWORD_HIT_VALUE, KEYWORD_BOOST_CAP)
    length_factor = min(len(content) / LENGTH_SATURATION_CHARS, 1.0)
    score = (
        source_weight * SOURCE_COEFFICIENT
        + keyword_boost * KEYWORD_COEFFICIENT
        + length_factor * LENGTH_COEFFICIENT
    )
    return round(max(0.0, min(1.0, score)), 3)
